//! What a program compiles to: its source with the compile-time shape's macros (and a fused
//! run's), and the forms a tuner will time compiled ahead, side by side.

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

/// Starts compiling, before the context exists, the modules runs of each `(program, settings)`
/// pair will load first, and pacc's internal kernels ([`super::cubin::start_early`]).
pub(crate) fn start_early(forms: &[(&Program, &CudaSettings)]) -> super::cubin::Early {
    let internal = (
        "pacc_internal".into(),
        device::INTERNAL_SOURCE.into(),
        false,
    );
    let mine = forms.iter().filter_map(|(program, cuda)| {
        let tuning = cuda.march.get().ok()?;
        Some((program.name.clone(), source(program, &tuning), cuda.fma))
    });
    super::cubin::start_early(std::iter::once(internal).chain(mine).collect())
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
