//! Distributed runs (feature `mpi`): one slab of axis-0 planes per MPI rank. The split, the
//! local problem and the distributed tuner's model ([`tune`]) are plain code, built without the
//! feature too (their tests run everywhere); everything that talks MPI needs it.
//!
//! Rank r holds only its [`Slab`]: the planes it owns plus deep halos. Every block of k time
//! steps starts with one nonblocking exchange of the halos (`k x reach` planes from each
//! neighbour), then the rank runs the single-node pipeline (any scheme, CPU or CUDA backend) on
//! its window; reductions count owned planes and are combined across ranks in rank order, so
//! results do not depend on timing. Kernels and point statements see global indices.
//!
//! Generated modules call `dist::run` from their `run_distributed` entry point (see the root
//! crate's `__if_mpi!`). See `docs/internals.md` and ../shared/DESIGN.md "Distributed runs".

#[cfg(feature = "mpi")]
mod arrays;
#[cfg(all(feature = "mpi", feature = "cuda"))]
mod beside;
#[cfg(feature = "mpi")]
mod checkpoint;
#[cfg(feature = "mpi")]
mod comm;
#[cfg(all(feature = "mpi", feature = "cuda"))]
mod device;
mod local;
#[cfg(all(feature = "mpi", feature = "cuda"))]
mod nccl;
#[cfg(feature = "mpi")]
mod peers;
#[cfg(feature = "mpi")]
mod placement;
pub mod resident;
#[cfg(feature = "mpi")]
mod session;
mod slab;
pub mod tune;
#[cfg(feature = "mpi")]
mod wait;

#[cfg(feature = "mpi")]
pub use arrays::{gather, window};
#[cfg(feature = "mpi")]
pub use comm::Communicator;
#[cfg(feature = "mpi")]
pub use mpi;
#[cfg(feature = "mpi")]
pub use session::run;
#[cfg(feature = "mpi")]
pub use wait::DEFAULT_MPI_TIMEOUT;

/// Every rank's `Ok` if `r` is `Ok` on every rank of `comm`; else an error on every rank: a
/// failing rank gets its own, the others [`DistError::RankFailed`] with the lowest failing
/// rank's message, and a rank that does not answer within the timeout
/// ([`DEFAULT_MPI_TIMEOUT`]) is named by a [`DistError::NoAnswer`]. Collective: for steps that
/// can fail on some ranks only, such as reading the options from the environment (one rank's
/// bad `PACC_*` variable must stop every rank, not leave them waiting for it).
///
/// [`DistError::RankFailed`]: crate::error::DistError::RankFailed
/// [`DistError::NoAnswer`]: crate::error::DistError::NoAnswer
#[cfg(feature = "mpi")]
pub fn agree<T>(
    comm: &Communicator,
    r: Result<T, crate::error::Error>,
) -> Result<T, crate::error::Error> {
    comm::agree(comm, r)
}
pub use slab::{block_steps, links, reach_per_step, split, Slab};

/// This rank's slab of `global` for a run of `steps` steps: [`split`] over the communicator's
/// size, picked by its rank. The block steps (and with them the halos' depth) come from the
/// options or the directive; else, on the CUDA backend, from the distributed tuner; else from
/// the default. Collective: every rank calls it with the same arguments.
///
/// The ranks also agree here whether their slabs stay on their GPUs for the whole run, with
/// the halos exchanged GPU to GPU through NCCL ([`Slab::resident`]; see
/// [`HaloMode`](crate::options::HaloMode)): on the CUDA backend when every rank has a GPU of
/// its own, NCCL loads and the windows fit; then the depth comes from [`resident::costs`]. Else
/// every block runs the single-node pipeline on host arrays ([`slab_tuned`]).
#[cfg(feature = "mpi")]
pub fn slab(
    comm: &Communicator,
    program: &crate::program::Program,
    global: &[usize],
    steps: usize,
    opts: &crate::options::Options,
) -> Result<Slab, crate::error::Error> {
    use mpi::traits::Communicator as _;
    let _patience = wait::Patience::set(opts.mpi_timeout);
    // One rank at a time: ranks sharing a device would otherwise time the link against each
    // other (and then count the sharing twice). Every rank takes part in every collective
    // step whatever its options say, so that ranks that disagree get an error, not a hang.
    let mut inputs = None;
    for r in 0..comm.size() {
        if r == comm.rank() {
            inputs = measured_inputs(program, opts);
        }
        comm::barrier(comm, "the ranks measuring their devices in turn")?;
    }
    let placement = placement::decide(comm, program, global, steps, opts, inputs.as_ref())?;
    if let placement::Placement::Resident(slab) = placement {
        return Ok(slab);
    }
    let fixed = crate::config::Fixed::of(program, opts)
        .block_steps
        .is_some();
    let inputs = inputs.filter(|_| !fixed);
    let relay = matches!(placement, placement::Placement::Host(_, true));
    let rates = match relay {
        true => tune::DistRates::relayed(),
        false => tune::DistRates::default(),
    };
    let mut slab = slab_tuned(comm, program, global, steps, opts, inputs.as_ref(), &rates)?;
    slab.relay = relay;
    if let placement::Placement::Host(why, _) = placement {
        let how = match relay {
            true => "relayed GPU to GPU through NCCL",
            false => "through host MPI",
        };
        let note = format!("halos in host memory between blocks, {how}: {why}");
        slab.tuner = Some(slab.tuner.map_or(note.clone(), |t| format!("{t}; {note}")));
    }
    Ok(slab)
}

/// [`slab`] with this rank's model inputs given (`None`: this rank has none, e.g. no device;
/// its costs count as unknown). Unless the options or the directive fix the block steps, every
/// rank predicts its run at each candidate depth ([`tune::rank_costs`]), the ranks take the
/// element-wise maximum (the slowest rank's time), and all pick its minimum ([`tune::agree`]).
/// When no rank could predict anything the default depth stays. Collective.
#[cfg(feature = "mpi")]
pub fn slab_tuned(
    comm: &Communicator,
    program: &crate::program::Program,
    global: &[usize],
    steps: usize,
    opts: &crate::options::Options,
    inputs: Option<&crate::tune::TuneInputs>,
    rates: &tune::DistRates,
) -> Result<Slab, crate::error::Error> {
    use mpi::traits::Communicator as _;
    let _patience = wait::Patience::set(opts.mpi_timeout);
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    let fixed = crate::config::Fixed::of(program, opts)
        .block_steps
        .is_some();
    let mut o = opts.clone();
    let mut note = None;
    // The same candidates on every rank (they depend on the steps only); a rank that does not
    // tune contributes infinite costs, and every rank takes part in the reduction.
    let ks = crate::tune::block_step_candidates(steps);
    let tunes = !fixed && steps > 0 && global.first().is_some_and(|&n| n >= ranks);
    let mine = inputs
        .filter(|_| tunes)
        .map(|t| tune::rank_costs(program, global, steps, ranks, rank, opts, t, rates, &ks));
    let seconds: Vec<f64> = match &mine {
        Some(c) => c.iter().map(|c| c.seconds).collect(),
        None => vec![f64::INFINITY; ks.len()],
    };
    let worst = comm::all_max(comm, &seconds, "agreeing on the halo depth")?;
    let slowest: Vec<(usize, f64)> = ks.iter().copied().zip(worst).collect();
    if let Some(k) = tune::agree(&slowest).filter(|_| tunes) {
        o.block_steps = Some(k);
        let mine = mine.and_then(|c| c.into_iter().find(|c| c.block_steps == k));
        note = mine.map(|mine| {
            tune::DistChoice {
                block_steps: k,
                slowest,
                mine,
            }
            .summary()
        });
    }
    let mut all = split(program, global, steps, ranks, &o)?;
    let mut slab = all.swap_remove(rank);
    slab.tuner = note;
    Ok(slab)
}

/// This rank's model inputs on the CUDA backend: the measured link and free device memory,
/// kernel rates from the memory traffic ([`crate::tune::roofline_rates`]: no rank has its
/// arrays yet to time the kernels on), all shared with the other ranks on the same device.
/// It also measures the host's copy rate, which the executor keeps for later.
/// `None` on the CPU backend (which no tuner plans for) or when the device cannot be asked.
#[cfg(all(feature = "mpi", feature = "cuda"))]
pub(crate) fn measured_inputs(
    program: &crate::program::Program,
    opts: &crate::options::Options,
) -> Option<crate::tune::TuneInputs> {
    use crate::exec::cuda;
    use crate::options::BackendChoice;
    if !matches!(opts.backend, BackendChoice::Auto | BackendChoice::Cuda) {
        return None;
    }
    cuda::prefer_device(local_rank());
    let info = cuda::available().ok()?;
    let link = crate::exec::cuda::link_rates().ok()?;
    let budget = cuda::device_memory_budget().ok()?;
    let dtod = crate::tune::Rates::new(link, Vec::new()).dtod_rate;
    let rates = crate::tune::roofline_rates(program, dtod);
    let inputs = crate::tune::TuneInputs::new(link, rates, budget);
    // The host's copy rate, which the executor prices registering against bouncing with, is
    // taken here too, in the ranks' turns: two ranks measuring at once each saw part of the
    // memory system (22 GB/s against 38-53 alone, two H200s) and page-locked 47 GB for 5 s
    // where bouncing was cheaper (`benches/results/2026-11-28-h200x2-strong/`).
    crate::tune::host_copy_rate();
    Some(tune::shared_inputs(&inputs, ranks_per_device(info.count)))
}

#[cfg(all(feature = "mpi", not(feature = "cuda")))]
pub(crate) fn measured_inputs(
    _program: &crate::program::Program,
    _opts: &crate::options::Options,
) -> Option<crate::tune::TuneInputs> {
    None
}

/// How many ranks of this node share each GPU: the node's ranks (`OMPI_COMM_WORLD_LOCAL_SIZE`,
/// `MPI_LOCALNRANKS` or `SLURM_NTASKS_PER_NODE`; 1 if none is set) over `devices`, rounded up.
pub fn ranks_per_device(devices: usize) -> usize {
    let local = [
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "MPI_LOCALNRANKS",
        "SLURM_NTASKS_PER_NODE",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok())
    .unwrap_or(1);
    local.div_ceil(devices.max(1)).max(1)
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
