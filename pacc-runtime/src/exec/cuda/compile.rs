//! What a program compiles to: its source with the compile-time shape's macros (and a fused
//! run's), and the forms a tuner will time compiled ahead, side by side.

use super::device;
use super::launch;
use crate::error::Error;
use crate::options::Options;
use crate::program::Program;

/// Compiles, side by side, the program modules that runs of each `(program, options)` pair
/// will ask for ([`device::compile_ahead`]). Nothing is run; a form that does not compile is
/// left for its run to report.
pub(super) fn ahead(forms: &[(&Program, &Options)]) -> Result<(), Error> {
    let info = super::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let sources: Vec<(String, String, bool)> = forms
        .iter()
        .filter_map(|(program, opts)| {
            let tuning = crate::config::march(opts).ok()?;
            Some((
                program.name.clone(),
                source(program, &tuning),
                opts.cuda.fma,
            ))
        })
        .collect();
    device::compile_ahead(&ctx, &sources);
    Ok(())
}

/// The program's source as compiled: the shape's macros, and for a fused run the group's
/// step count (`PACC_FUSE`, which compiles its kernel), the block it is launched with, and no
/// vector forms (it launches none).
pub(super) fn source(program: &Program, tuning: &launch::MarchTuning) -> String {
    let src = tuning.source(&program.cuda_source);
    match &program.fusion.active {
        Some(a) => {
            let [bx, by] = a.decl.block;
            format!(
                "#define PACC_FUSE {}\n#define PACC_FBX {bx}\n#define PACC_FBY {by}\n\
                 #define PACC_VX 1\n{src}",
                a.decl.steps
            )
        }
        None => src.into_owned(),
    }
}
