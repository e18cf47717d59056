//! The tuner: chooses the chunk count and the temporal blocking depth of a run from a
//! performance model.
//!
//! * [`model`]: pure. Predicts a plan's time from its byte and point counts and the machine's
//!   [`Rates`]; [`choose`] searches the candidates. No device, no executor.
//! * [`measure`]: the hardware side. Link and kernel rates (the kernel rates by running the
//!   CUDA executor on a small slab of the call's arrays), free device memory, host copy rate.
//!
//! On the CUDA backend, `run` calls [`auto_plan_options`] when neither the options nor the
//! directive fix both the chunk count and the block steps; explicit values are kept and only
//! the free ones are tuned. When the options name no scheme, the tuner picks it too, among
//! [`AUTO_SCHEMES`].

pub mod measure;
pub mod model;

pub use measure::measure_host_copy_rate;
#[cfg(feature = "cuda")]
pub use measure::{link_rates, measure_inputs, measure_kernel_rates, measure_link};
pub use model::{
    choose, choose_scheme, plane_points, predict, useful_points, Candidate, LinkRates, Prediction,
    Rates, TuneChoice, TuneInputs, AUTO_SCHEMES,
};

use crate::plan::PlanOptions;
use crate::program::Program;

#[cfg(not(feature = "cuda"))]
/// Without the CUDA feature there is nothing to tune: the options are returned as they are.
pub fn auto_plan_options(
    _program: &Program,
    _inv: &crate::invocation::Invocation<'_>,
    _opts: &crate::options::Options,
    base: PlanOptions,
) -> (PlanOptions, Option<String>) {
    (base, None)
}

/// `run`'s hook: on the CUDA backend, tunes whichever of chunks and block steps neither the
/// options nor the directive fix. Returns the options to plan with and a note for the
/// report. If measuring fails, keeps `base` and says why.
#[cfg(feature = "cuda")]
pub fn auto_plan_options(
    program: &Program,
    inv: &crate::invocation::Invocation<'_>,
    opts: &crate::options::Options,
    base: PlanOptions,
) -> (PlanOptions, Option<String>) {
    use crate::plan::Scheme;
    use std::sync::OnceLock;
    let fixed = crate::config::Fixed::of(program, opts);
    let (fixed_c, fixed_k) = (fixed.chunks, fixed.block_steps);
    if (fixed_c.is_some() && fixed_k.is_some()) || inv.steps == 0 {
        return (base, None);
    }
    let shape = inv.arrays[0].shape().to_vec();
    let r = measure_inputs(program, inv, opts).and_then(|mut t| {
        t.scheme = base.scheme;
        t.buffer_sets = base.buffer_sets;
        if base.scheme == Scheme::StagedCopy {
            static HOST: OnceLock<f64> = OnceLock::new();
            t.rates.host_copy_rate = *HOST.get_or_init(|| measure_host_copy_rate(256 << 20));
        }
        t.chunks = fixed_c;
        t.block_steps = fixed_k;
        match opts.scheme {
            Some(_) => choose(program, &shape, inv.steps, &t),
            None => choose_scheme(program, &shape, inv.steps, &t, &AUTO_SCHEMES),
        }
    });
    match r {
        Ok(c) => (
            PlanOptions {
                chunks: c.chunks,
                block_steps: c.block_steps,
                scheme: c.scheme,
                ..base
            },
            Some(c.summary()),
        ),
        Err(e) => (
            base,
            Some(format!("tuner skipped ({e}); using the default options")),
        ),
    }
}
