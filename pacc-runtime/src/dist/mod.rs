//! Distributed runs (feature `mpi`): one slab of axis-0 planes per MPI rank.
//!
//! Rank r holds only its [`Slab`]: the planes it owns plus deep halos. Every block of k time
//! steps starts with one nonblocking exchange of the halos (`k x reach` planes from each
//! neighbour), then the rank runs the single-node pipeline (any scheme, CPU or CUDA backend) on
//! its window; reductions count owned planes and are combined across ranks in rank order, so
//! results do not depend on timing. Kernels and point statements see global indices.
//!
//! Generated modules call [`run`] from their `run_distributed` entry point (see the root
//! crate's `__if_mpi!`). See `docs/internals.md` and ../shared/DESIGN.md "Distributed runs".

mod arrays;
mod checkpoint;
mod comm;
mod local;
mod session;
mod slab;

pub use arrays::{gather, window};
pub use comm::Communicator;
pub use mpi;
pub use session::run;
pub use slab::{block_steps, reach_per_step, split, Slab};

/// This rank's slab of `global` for a run of `steps` steps: [`split`] over the communicator's
/// size, picked by its rank.
pub fn slab(
    comm: &Communicator,
    program: &crate::program::Program,
    global: &[usize],
    steps: usize,
    opts: &crate::options::Options,
) -> Result<Slab, crate::error::Error> {
    use mpi::traits::Communicator as _;
    let mut all = split(program, global, steps, comm.size() as usize, opts)?;
    Ok(all.swap_remove(comm.rank() as usize))
}

/// The GPU a rank uses: its rank among the ranks of its node (`OMPI_COMM_WORLD_LOCAL_RANK`,
/// `MPI_LOCALRANKID` or `SLURM_LOCALID`), modulo the device count (applied by the executor).
pub fn local_rank() -> usize {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
    .unwrap_or(0)
}
