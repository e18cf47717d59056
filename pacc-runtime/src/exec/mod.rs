//! Executors: run a [`crate::plan::Plan`] on some hardware, behind one interface
//! ([`Executor`]) that the CPU backend ([`cpu::CpuExecutor`]) and the CUDA backend
//! (`cuda::CudaExecutor`, feature `cuda`) implement and the session (`crate::run`) calls.

pub(crate) mod backend;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
mod fused;
mod peers;
pub mod reduce;
mod tracker;

pub use crate::frame::{
    reduction_identity, BufView, CpuKernelFn, CpuKernels, CpuPointFn, Grid, GridElem, KernelFrame,
};
#[cfg(feature = "mpi")]
pub(crate) use peers::transfers as halo_transfers;
pub use peers::{Gate, Peers, Transfer};
pub use tracker::{writes_user_array, Tracker};

use crate::error::Result;
use crate::invocation::Invocation;
use crate::plan::Plan;
use crate::program::Program;
use crate::report::Report;
use crate::settled::Settled;

/// What executing a plan gives back besides the host arrays it updated in place.
#[derive(Debug)]
pub struct Executed {
    /// Final value of each reduction (f64 holding the reduction's own type exactly).
    pub reductions: Vec<f64>,
    /// What the run did: geometry, bytes moved, seconds per stage.
    pub report: Report,
}

/// A backend that runs plans.
///
/// Contract (`docs/internals.md` §4, §5): before touching any data the executor runs
/// [`crate::validate::execution`]; it calls the fault hook ([`crate::fault::hit`]) before each
/// allocation, compile and plan operation, from the calling thread; an error after the first
/// write-back to the user's arrays comes back as [`crate::Error::Failed`] (see [`Tracker`]);
/// reductions combine chunks' partials in chunk order, steps in order.
pub trait Executor {
    /// The backend's name in reports: "cpu", "shuffled" or "cuda".
    fn name(&self) -> &'static str;

    /// Runs `plan` for `program` with the call's resolved settings (`settled`: the session
    /// resolves them, an executor applies no precedence of its own); the invocation's host
    /// arrays are read and written in place. A plan with halo exchanges
    /// ([`crate::plan::exchange`]) needs `peers` to carry them out; without, its first exchange
    /// is an error.
    fn execute_with(
        &self,
        program: &Program,
        plan: &Plan,
        inv: &Invocation<'_>,
        settled: &Settled,
        peers: Option<&dyn Peers>,
    ) -> Result<Executed>;

    /// [`Executor::execute_with`] for a plan without halo exchanges.
    fn execute(
        &self,
        program: &Program,
        plan: &Plan,
        inv: &Invocation<'_>,
        settled: &Settled,
    ) -> Result<Executed> {
        self.execute_with(program, plan, inv, settled, None)
    }
}
