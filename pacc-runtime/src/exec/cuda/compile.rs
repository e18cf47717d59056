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

/// Compiles, side by side, the modules that runs of each `(program, settings)` pair will
/// load ([`guarded_module`]: a form the occupancy guard replaces compiles its replacement on
/// the same thread), and pacc's internal kernels, which every run loads. Nothing is run; a
/// form that does not compile (an unreadable `PACC_MARCH` among them) is left for its run to
/// report.
pub(super) fn ahead(forms: &[(&Program, &CudaSettings)]) -> Result<(), Error> {
    let info = super::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let jobs: Vec<Option<&(&Program, &CudaSettings)>> = std::iter::once(None)
        .chain(forms.iter().map(Some))
        .collect();
    device::side_by_side(&jobs, |job| {
        let _ = match job {
            None => internal(&ctx).map(drop),
            Some((program, cuda)) => guarded_module(&ctx, program, cuda).map(drop),
        };
    });
    Ok(())
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
