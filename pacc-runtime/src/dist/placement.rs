//! Where a distributed run's slabs live: the ranks agree, before any array exists, whether
//! every rank keeps its slab where it computes for the whole run (resident, the halos
//! exchanged inside the run) or runs each block on its host arrays (the host exchange).

use super::comm::{agree, Communicator};
use super::resident::{self, PeerRates};
use super::slab::{block_steps, split, Slab};
use crate::error::{DistError, Error};
use crate::exec::backend::{self, Backend};
use crate::options::{HaloMode, Options};
use crate::program::Program;
use crate::tune::TuneInputs;
use mpi::traits::Communicator as _;

/// What the ranks agreed on.
pub(super) enum Placement {
    /// Every rank keeps its slab where it computes: this rank's slab, its depth chosen.
    Resident(Slab),
    /// The host exchange, although resident runs were allowed: why, and whether every rank
    /// could relay it through NCCL (each has a GPU of its own and the library).
    Host(String, bool),
    /// The host exchange, as asked (`PACC_HALO=host`, or the CPU backend by default).
    Asked,
}

/// What would carry a resident run's exchanges on this rank.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Carrier {
    /// The CPU backend's buffers, through host MPI.
    Mpi = 1,
    /// Device memory, through NCCL.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Nccl = 2,
}

/// See the module documentation. Collective.
pub(super) fn decide(
    comm: &Communicator,
    program: &Program,
    global: &[usize],
    steps: usize,
    opts: &Options,
    inputs: Option<&TuneInputs>,
) -> Result<Placement, Error> {
    let here = carrier(opts, inputs);
    let code = here.as_ref().map_or(0, |c| *c as i32);
    let (lo, hi) = super::comm::min_max(comm, code, "agreeing where the slabs stay")?;
    let forced = matches!(opts.halo, HaloMode::Device | HaloMode::Relay);
    // Every rank has NCCL and a GPU of its own (the codes agree): relay as asked.
    if opts.halo == HaloMode::Relay && lo == hi && here == Ok(Carrier::Nccl) {
        return Ok(Placement::Host("PACC_HALO=relay asks for it".into(), true));
    }
    if lo == 0 || lo != hi {
        let why = match (&here, lo == hi) {
            (Err(w), _) => w.to_string(),
            (Ok(_), true) => "another rank cannot keep its slab where it computes".into(),
            (Ok(_), false) => "the ranks run on different backends".into(),
        };
        if forced {
            let mine = Err(DistError::DeviceHalo {
                mode: mode_name(opts.halo),
                needs: match opts.halo {
                    HaloMode::Relay => "every rank to have a GPU of its own and NCCL",
                    _ => "every rank to keep its slab where it computes",
                },
                why: why.clone(),
            });
            agree(comm, mine.map_err(Error::from))?;
        }
        return Ok(match here {
            Err(w) if !forced && w.asked() => Placement::Asked,
            _ => Placement::Host(why, false),
        });
    }
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    let fixed = crate::config::Fixed::of(program, opts).block_steps;
    let n0 = global.first().copied().unwrap_or(0);
    let ks = match (fixed, &here) {
        (Some(k), _) => vec![k],
        (None, Ok(Carrier::Mpi)) => vec![block_steps(program, n0, steps, opts)],
        (None, _) => crate::tune::block_step_candidates(steps),
    };
    let seconds: Vec<f64> = match (&here, inputs) {
        (Ok(Carrier::Nccl), Some(t)) => {
            let peer = PeerRates::default();
            let c = resident::costs(program, global, steps, ranks, rank, t, &peer, &ks);
            c.iter().map(|c| c.seconds).collect()
        }
        // The CPU backend's buffers are host memory: nothing to fit, nothing to time.
        _ => vec![0.0; ks.len()],
    };
    let worst = super::comm::all_max(comm, &seconds, "agreeing on the halo depth")?;
    let slowest: Vec<(usize, f64)> = ks.iter().copied().zip(worst).collect();
    let Some(k) = super::tune::agree(&slowest) else {
        let why = "a rank's window does not fit its GPU at any halo depth".to_string();
        if forced {
            let mine = Err(DistError::DeviceHalo {
                mode: "device",
                needs: "every rank's window to fit its GPU",
                why: why.clone(),
            });
            agree(comm, mine.map_err(Error::from))?;
        }
        return Ok(Placement::Host(why, here == Ok(Carrier::Nccl)));
    };
    let o = Options {
        block_steps: Some(k),
        ..opts.clone()
    };
    let mut slab = split(program, global, steps, ranks, &o)?.swap_remove(rank);
    slab.resident = true;
    slab.tuner = Some(note(
        here.unwrap_or(Carrier::Mpi),
        &slowest,
        k,
        fixed.is_some(),
    ));
    Ok(Placement::Resident(slab))
}

/// The name `PACC_HALO` takes for a forcing mode.
fn mode_name(m: HaloMode) -> &'static str {
    match m {
        HaloMode::Relay => "relay",
        _ => "device",
    }
}

/// The report's line on the placement.
fn note(carrier: Carrier, slowest: &[(usize, f64)], k: usize, fixed: bool) -> String {
    let how = match carrier {
        Carrier::Nccl => "each rank's slab stays on its GPU; halos go GPU to GPU through NCCL",
        Carrier::Mpi => "each rank's slab stays in the CPU backend's buffers; halos through MPI",
    };
    let ks: Vec<String> = (slowest.iter())
        .filter(|(_, s)| s.is_finite() && *s > 0.0)
        .map(|(k, s)| format!("k{k} {s:.3} s"))
        .collect();
    match (fixed, ks.is_empty()) {
        (false, false) => format!(
            "{how} every {k} steps (the slowest rank's predicted run: {})",
            ks.join(", ")
        ),
        _ => format!("{how} every {k} steps"),
    }
}

fn chosen(opts: &Options) -> Result<Backend, Error> {
    backend::choose(opts.backend, Some(opts.source_of("backend")))
}

/// Why this rank could not keep its slab where it computes for a resident run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum NoCarrier {
    /// The caller asked for the host exchange.
    #[error("PACC_HALO=host asks for it")]
    Asked,
    /// The CPU backend, which keeps its slab in host memory unless asked.
    #[error("the CPU backend exchanges through host memory unless PACC_HALO=device")]
    HostBackend,
    /// No backend could be chosen (its error).
    #[error("{0}")]
    Backend(String),
    /// The NCCL library is missing.
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    NoNccl(#[from] super::nccl::NcclMissing),
    /// Ranks share a GPU, and NCCL needs one per rank.
    #[cfg(feature = "cuda")]
    #[error("{sharing} ranks share each GPU, and NCCL needs a GPU of its own for every rank")]
    SharedGpu { sharing: usize },
    /// The GPU's memory, which the window must fit, could not be measured.
    #[cfg(feature = "cuda")]
    #[error("the GPU's memory could not be measured")]
    Unmeasured,
    /// This build has no CUDA backend.
    #[cfg(not(feature = "cuda"))]
    #[error(transparent)]
    NoCuda(#[from] backend::CudaUnavailable),
}

impl NoCarrier {
    /// Whether the host exchange is what the call asked for rather than a fallback: the
    /// halo option says so, or the CPU backend runs (or none could be chosen, which the run
    /// reports itself).
    fn asked(&self) -> bool {
        matches!(
            self,
            NoCarrier::Asked | NoCarrier::HostBackend | NoCarrier::Backend(_)
        )
    }
}

/// What would carry this rank's exchanges in a resident run; why none would.
fn carrier(opts: &Options, inputs: Option<&TuneInputs>) -> Result<Carrier, NoCarrier> {
    if opts.halo == HaloMode::Host {
        return Err(NoCarrier::Asked);
    }
    match chosen(opts).map_err(|e| NoCarrier::Backend(e.to_string()))? {
        Backend::Cpu(_) if opts.halo == HaloMode::Device => Ok(Carrier::Mpi),
        Backend::Cpu(_) => Err(NoCarrier::HostBackend),
        Backend::Cuda => nccl_carrier(inputs),
    }
}

#[cfg(feature = "cuda")]
fn nccl_carrier(inputs: Option<&TuneInputs>) -> Result<Carrier, NoCarrier> {
    super::nccl::available()?;
    let devices = crate::exec::cuda::available().map_or(1, |d| d.count);
    let sharing = super::ranks_per_device(devices);
    if sharing > 1 {
        return Err(NoCarrier::SharedGpu { sharing });
    }
    inputs.map(|_| Carrier::Nccl).ok_or(NoCarrier::Unmeasured)
}

#[cfg(not(feature = "cuda"))]
fn nccl_carrier(_inputs: Option<&TuneInputs>) -> Result<Carrier, NoCarrier> {
    Err(backend::CudaUnavailable::NotBuilt.into())
}
