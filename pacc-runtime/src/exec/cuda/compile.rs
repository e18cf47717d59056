//! What a program compiles to: its source with the compile-time shape's macros (and a fused
//! run's), and the forms a tuner will time compiled ahead, side by side.

use super::device;
use super::launch;
use crate::error::Error;
use crate::program::{Program, VECTOR_WIDTH};
use crate::settled::CudaSettings;

/// Compiles, side by side, the program modules that runs of each `(program, settings)` pair
/// will ask for ([`device::compile_ahead`]). Nothing is run; a form that does not compile (an
/// unreadable `PACC_MARCH` among them) is left for its run to report.
pub(super) fn ahead(forms: &[(&Program, &CudaSettings)]) -> Result<(), Error> {
    let info = super::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let sources: Vec<(String, String, bool)> = forms
        .iter()
        .filter_map(|(program, cuda)| {
            let tuning = cuda.march.get().ok()?;
            Some((program.name.clone(), source(program, &tuning), cuda.fma))
        })
        .collect();
    device::compile_ahead(&ctx, &sources);
    Ok(())
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
