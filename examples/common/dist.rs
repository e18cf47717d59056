//! The examples' distributed mode (feature `mpi`): started under `mpirun`, each rank runs its
//! slab through the generated `run_distributed`; rank 0 prints the report and the checks.

use pacc::runtime::dist::mpi::traits::{
    Communicator as _, CommunicatorCollectives as _, Root as _,
};
use pacc::runtime::dist::{mpi, Communicator};

/// Whether this process was started by an MPI launcher (then the examples run distributed).
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// MPI, initialized once for the example's lifetime.
pub fn init() -> mpi::environment::Universe {
    mpi::initialize().unwrap_or_else(|| super::fail("MPI was already initialized"))
}

/// The pipeline options of every rank, read once MPI runs (each rank has its own `PACC_*`
/// variables) and agreed on: an error on one rank (`PACC_CHUNKS=abc`) is an error on every
/// rank (the others get "rank N failed: <its message>"), so that none waits for a rank that
/// gave up.
pub fn options(
    world: &Communicator,
    pipe: &super::PipelineArgs,
) -> Result<pacc::Options, pacc::Error> {
    // The environment's errors as they are (`options()` has them as text), then the flags'.
    let mine = pacc::Options::from_env().and_then(|_| pipe.options().map_err(pacc::Error::Option));
    pacc::runtime::dist::agree(world, mine)
}

/// Reports an error that every rank got: rank 0 prints it (another rank's failure arrives
/// there as "rank N failed: <its message>"), and so does a rank whose own step failed.
pub fn report_error(world: &Communicator, e: &pacc::Error) {
    let own = !matches!(
        e,
        pacc::Error::Dist(pacc::runtime::DistError::RankFailed { .. })
    );
    if world.rank() == 0 || own {
        eprintln!("error (rank {} of {}): {e}", world.rank(), world.size());
    }
}

/// The sum of every rank's `x`, added in rank order on every rank (so all ranks agree).
pub fn sum_in_rank_order(world: &Communicator, x: f64) -> f64 {
    let mut all = vec![0.0f64; world.size() as usize];
    world.all_gather_into(&x, &mut all[..]);
    all.iter().sum()
}

/// Rank 0's verdict, on every rank (so that every rank exits with the same status).
pub fn verdict(world: &Communicator, ok: bool) -> bool {
    let mut v = u8::from(ok);
    world.process_at_rank(0).broadcast_into(&mut v);
    v == 1
}

/// Whether this is rank 0 (which prints).
pub fn root(world: &Communicator) -> bool {
    world.rank() == 0
}

/// The number of ranks.
pub fn ranks(world: &Communicator) -> usize {
    world.size() as usize
}
