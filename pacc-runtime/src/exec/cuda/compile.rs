//! What a program compiles to: its source with the compile-time shape's macros (and a fused
//! run's); the forms a call loads first compiled before the context exists, and those a tuner
//! will time compiled ahead, side by side.

use super::cubin;
use super::device::{self, Module};
use super::launch;
use crate::error::Error;
use crate::options::KernelForm;
use crate::program::{Program, VECTOR_WIDTH};
use crate::settled::CudaSettings;
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// Starts compiling, side by side on threads of their own, the modules that runs of each
/// `(program, settings)` pair will load ([`guarded_module`]: a form the occupancy guard
/// replaces compiles its replacement on the same thread), and pacc's internal kernels, which
/// every run loads. Returns at once: a run that loads one of them waits for its compile only
/// (`cubin::code`), so the tuner times each form as soon as it is ready while the others
/// still compile. [`wait_ahead`] joins the threads. A form that does not compile (an
/// unreadable `PACC_MARCH` among them) is left for its run to report.
pub(super) fn ahead(forms: &[(&Program, &CudaSettings)]) -> Result<(), Error> {
    let info = super::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let jobs: Vec<Option<(Program, CudaSettings)>> = std::iter::once(None)
        .chain(
            forms
                .iter()
                .map(|(p, c)| Some(((*p).clone(), (*c).clone()))),
        )
        .collect();
    let spawned = std::thread::Builder::new()
        .name("pacc-compile".into())
        .spawn(move || {
            device::side_by_side(&jobs, |job| {
                let _ = match job {
                    None => internal(&ctx).map(drop),
                    Some((program, cuda)) => guarded_module(&ctx, program, cuda).map(drop),
                };
            })
        });
    if let Ok(h) = spawned {
        pending().push(h);
    }
    Ok(())
}

/// The threads of [`ahead`] not joined yet.
fn pending() -> std::sync::MutexGuard<'static, Vec<std::thread::JoinHandle<()>>> {
    static PENDING: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
        std::sync::Mutex::new(Vec::new());
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits for every compile [`ahead`] started: the tuner does before it is done, so that no
/// compile outlives it.
pub(super) fn wait_ahead() {
    let threads: Vec<_> = pending().drain(..).collect();
    for t in threads {
        let _ = t.join();
    }
}

/// Threads compiling before the context exists ([`start_early`]); joined when dropped.
pub(crate) struct Early(Option<std::thread::JoinHandle<()>>);

impl Drop for Early {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// Starts compiling, on threads of their own, the modules runs of `program` with each of
/// `settings()` will load first, and pacc's internal kernels, when this process has not
/// created the device's context yet (later calls find their modules loaded, and `settings` is
/// not asked for). A process's first CUDA call creates the context (0.1-0.3 s on an H200
/// after the driver's start) and then compiles the program (0.2-0.9 s a form); NVRTC needs
/// only the device's architecture, which the driver tells without a context, so the two
/// overlap, and the run's load waits for the compile (`cubin::code`). Starting 0.2 s sooner,
/// from NVML's answer before `cuInit` returns, changed no first-process time
/// (`benches/results/2026-11-28-h200-verify-fused/`, call 6): what a process's first call
/// still waits for is the machine's measurements, which the rate cache keeps. Nothing is
/// reported: a form that does not compile is compiled again, and its error reported, by the
/// run that loads it.
pub(crate) fn start_early(
    program: &Program,
    settings: impl FnOnce() -> Vec<CudaSettings>,
) -> Early {
    if device::probed() {
        return Early(None);
    }
    let internal = (
        "pacc_internal".to_string(),
        device::INTERNAL_SOURCE.to_string(),
        false,
    );
    let mine = settings().into_iter().filter_map(|cuda| {
        let tuning = cuda.march.get().ok()?;
        Some((program.name.clone(), source(program, &tuning), cuda.fma))
    });
    let forms: Vec<(String, String, bool)> = std::iter::once(internal).chain(mine).collect();
    let spawned = std::thread::Builder::new()
        .name("pacc-compile".into())
        .spawn(move || {
            let Some(cc) = device::capability_without_context() else {
                return;
            };
            device::side_by_side(&forms, |(program, source, fma)| {
                cubin::code(&cubin::Job::new(cc, source, *fma), program, source);
            });
        });
    Early(spawned.ok())
}

/// pacc's own kernels (`device::INTERNAL_SOURCE`), compiled once per process.
pub(super) fn internal(ctx: &Arc<CudaContext>) -> Result<Arc<Module>, Error> {
    device::module(ctx, "pacc_internal", device::INTERNAL_SOURCE, false)
}

/// The module a run of `program` with `cuda` loads, the tuning it was compiled with, and the
/// occupancy guard's note where the guard replaced the settled tuning
/// ([`launch::occupancy_guard`]).
pub(super) fn guarded_module(
    ctx: &Arc<CudaContext>,
    program: &Program,
    cuda: &CudaSettings,
) -> Result<(Arc<Module>, launch::MarchTuning, Option<String>), Error> {
    let tuning = cuda.march.get()?;
    let module = device::module(ctx, &program.name, &source(program, &tuning), cuda.fma)?;
    if cuda.kernel_form == KernelForm::Marching {
        if let Some((t, why)) = launch::occupancy_guard(&module, program, &tuning)? {
            let guarded = device::module(ctx, &program.name, &source(program, &t), cuda.fma)?;
            return Ok((guarded, t, Some(why)));
        }
    }
    Ok((module, tuning, None))
}

/// The program's source as compiled: the shape's macros, and for a fused run the group's
/// step count (`PACC_FUSE`, which compiles its kernels), the blocks they are launched with, no
/// single-step vector forms (it launches none) and the fused vector form where the tuning asks
/// for vector forms.
pub(super) fn source(program: &Program, tuning: &launch::MarchTuning) -> String {
    let src = tuning.source(&program.cuda_source);
    match &program.fusion.active {
        Some(a) => {
            let [bx, by] = a.decl.block;
            let vector = match a.decl.vector_block() {
                Some([vbx, vby]) if tuning.vector() => format!(
                    "#define PACC_FVX {VECTOR_WIDTH}\n#define PACC_FVBX {vbx}\n#define PACC_FVBY {vby}\n"
                ),
                _ => "#define PACC_FVX 1\n".into(),
            };
            format!(
                "#define PACC_FUSE {}\n#define PACC_FBX {bx}\n#define PACC_FBY {by}\n\
                 #define PACC_VX 1\n{vector}{src}",
                a.decl.steps
            )
        }
        None => src.into_owned(),
    }
}
