//! The annotated stencil functions behind the examples (`examples/*.rs` are thin command-line
//! front ends), kept in the library so that tests and `pacc expand src/models/<file>.rs` see the
//! very same code.
//!
//! - [`laplace2d::jacobi`]: 5-point Laplace (Jacobi) solver on a 2D grid.
//! - [`acoustic::propagate`] / [`acoustic::propagate_sponge`]: 3D acoustic wave propagation,
//!   2nd order in time, 8th order in space, Ricker source, optional absorbing sponge.
//! - [`himeno::jacobi`]: the RIKEN Himeno benchmark's 19-point Jacobi sweep.

pub mod acoustic;
pub mod himeno;
pub mod laplace2d;

// TEMPORARY stand-ins for what `#[pacc::pipeline]` generates (`f::serial`, `f::run`), so the
// examples and tests compile against the contract while the translator is being written. They
// run the serial function for `BackendChoice::Serial` and refuse every other backend. Removed
// when the macro lands.
pub(crate) fn standin_run<R>(
    name: &str,
    shape: &[usize],
    steps: usize,
    opts: &pacc_runtime::Options,
    f: impl FnOnce() -> R,
) -> Result<(R, pacc_runtime::Report), pacc_runtime::Error> {
    if opts.backend != pacc_runtime::BackendChoice::Serial {
        return Err(pacc_runtime::Error::Option(format!(
            "`{name}`: the pipeline translator has not landed yet; only the serial backend runs"
        )));
    }
    let program = pacc_runtime::Program {
        name: name.into(),
        ndim: shape.len(),
        arrays: vec![],
        scalars: vec![],
        slices: vec![],
        reductions: vec![],
        resets: vec![],
        kernels: vec![],
        points: vec![],
        step: vec![],
        halo: 0,
        default_chunks: None,
        default_block_steps: None,
        cuda_source: String::new(),
    };
    let t = std::time::Instant::now();
    let r = f();
    Ok((
        r,
        pacc_runtime::Report::serial(&program, shape, steps, t.elapsed()),
    ))
}
