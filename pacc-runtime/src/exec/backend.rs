//! Which executor a call runs on: the [`BackendChoice`] resolved against what this machine has
//! (shared by the session, `crate::run`, and distributed runs, `crate::dist`).

use crate::error::Error;
use crate::exec::cpu::{CpuExecutor, Order};
use crate::exec::Executor;
use crate::options::BackendChoice;
use crate::tune::Probe;
#[cfg(not(feature = "cuda"))]
use crate::{invocation::Invocation, plan::Plan, program::Program, settled::Settled};

/// The backend a call runs on, once the choice is resolved against what this machine has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    Cpu(Order),
    Cuda,
}

impl Backend {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Cpu(order) => CpuExecutor { order }.name(),
            Backend::Cuda => "cuda",
        }
    }

    /// What the tuner times kernels and transfers with on this backend (the kernels' shape,
    /// the chunks and scheme, fusion); `None`: the backend runs with the defaults (the CPU
    /// backend, whose kernels are closures the tuner's device model does not describe).
    pub(crate) fn probe(self) -> Option<&'static dyn Probe> {
        match self {
            Backend::Cpu(_) => None,
            #[cfg(feature = "cuda")]
            Backend::Cuda => Some(&crate::exec::cuda::CudaProbe),
            #[cfg(not(feature = "cuda"))]
            Backend::Cuda => None,
        }
    }

    /// The executor that runs this backend's plans. Only reached for `Cuda` when
    /// [`cuda_available`] said yes.
    pub(crate) fn executor(self) -> Box<dyn Executor> {
        match self {
            Backend::Cpu(order) => Box::new(CpuExecutor { order }),
            #[cfg(feature = "cuda")]
            Backend::Cuda => Box::new(crate::exec::cuda::CudaExecutor),
            #[cfg(not(feature = "cuda"))]
            Backend::Cuda => Box::new(NoCuda),
        }
    }
}

/// Stands in for the CUDA executor in builds without the `cuda` feature (never chosen there:
/// [`cuda_available`] says no).
#[cfg(not(feature = "cuda"))]
struct NoCuda;

#[cfg(not(feature = "cuda"))]
impl Executor for NoCuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn execute_with(
        &self,
        _: &Program,
        _: &Plan,
        _: &Invocation<'_>,
        _: &Settled,
        _: Option<&dyn crate::exec::Peers>,
    ) -> Result<crate::exec::Executed, Error> {
        Err(Error::no_cuda(CudaUnavailable::NotBuilt.to_string(), None))
    }
}

/// Compiles started before the backend is chosen (`compile_early`); joined when dropped.
pub(crate) struct EarlyCompile {
    #[cfg(feature = "cuda")]
    _threads: Option<crate::exec::cuda::EarlyCompile>,
}

/// Where `choice` may run on CUDA, starts compiling `forms()` (the settings each of the call's
/// first compiles asks for, `crate::tune::first_forms`) while the CUDA context is being
/// created: NVRTC needs only the device's architecture. `forms` is asked only when there is
/// something to compile. On the CPU, or in a build without CUDA, nothing.
pub(crate) fn compile_early(
    choice: BackendChoice,
    program: &crate::program::Program,
    forms: impl FnOnce() -> Vec<crate::settled::Settled>,
) -> EarlyCompile {
    #[cfg(feature = "cuda")]
    {
        let cuda = matches!(choice, BackendChoice::Cuda | BackendChoice::Auto);
        let settings = || forms().into_iter().map(|s| s.cuda).collect();
        EarlyCompile {
            _threads: cuda.then(|| crate::exec::cuda::compile_early(program, settings)),
        }
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (choice, program, forms);
        EarlyCompile {}
    }
}

/// The backend for `choice`; `from` names where the choice came from (for the error when CUDA
/// was asked for and is not there).
pub(crate) fn choose(choice: BackendChoice, from: Option<String>) -> Result<Backend, Error> {
    Ok(match choice {
        BackendChoice::Serial => {
            return Err(Error::Internal(
                "the serial backend is run by the generated wrapper, not by `pacc::runtime::run`"
                    .into(),
            ))
        }
        BackendChoice::Cpu => Backend::Cpu(Order::Submission),
        BackendChoice::Shuffled(seed) => Backend::Cpu(Order::Shuffled(seed)),
        BackendChoice::Cuda => {
            cuda_available().map_err(|reason| Error::no_cuda(reason.to_string(), from))?;
            Backend::Cuda
        }
        BackendChoice::Auto => match cuda_available() {
            Ok(()) => Backend::Cuda,
            Err(reason) => {
                announce_cpu_fallback(&reason);
                Backend::Cpu(Order::Submission)
            }
        },
    })
}

/// Why the CUDA backend cannot run here: the build (rebuild with the `cuda` feature) or the
/// machine (a library, a device, the driver).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CudaUnavailable {
    #[cfg(not(feature = "cuda"))]
    #[error("pacc was built without the `cuda` feature")]
    NotBuilt,
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Machine(#[from] crate::exec::cuda::Unavailable),
}

/// Whether the CUDA backend can run here (`Ok`), else why not.
#[cfg(not(feature = "cuda"))]
fn cuda_available() -> Result<(), CudaUnavailable> {
    Err(CudaUnavailable::NotBuilt)
}

/// Whether the CUDA backend can run here (`Ok`), else why not.
#[cfg(feature = "cuda")]
fn cuda_available() -> Result<(), CudaUnavailable> {
    crate::exec::cuda::available()?;
    Ok(())
}

/// Says once per process that `auto` fell back to the CPU backend.
fn announce_cpu_fallback(reason: &CudaUnavailable) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| eprintln!("pacc: no CUDA device ({reason}); running on the CPU backend"));
}
