//! The tuner: chooses the chunk count and the temporal blocking depth of a run from a
//! performance model.
//!
//! * [`model`]: pure. Predicts a plan's time from its byte and point counts and the machine's
//!   [`Rates`]; [`choose`] searches the candidates. No device, no executor.
//! * [`measure`]: what needs no device (host copy rate, the timing slab's depth).
//! * [`Probe`]: what a backend's device measures: link and kernel rates (the kernel rates by
//!   running the backend's executor on a small slab of the call's arrays), free device memory.
//!   The CUDA backend's probe is `exec::cuda::CudaProbe`; the functions here work through the
//!   trait, so a new backend is tuned by implementing it.
//!
//! On a backend with a probe, `run` calls [`auto_plan_options`] when neither the options nor the
//! directive fix both the chunk count and the block steps; explicit values are kept and only
//! the free ones are tuned. When the options name no scheme, the tuner picks it too, among
//! [`AUTO_SCHEMES`].
//!
//! [`compression`] decides whether compressing pays (the codec's speed against the link it
//! saves); [`host_path`] whether a call page-locks the caller's arrays or bounces through
//! pinned rings.
//!
//! On long runs, [`fusion`] weighs the translator's fused kernels (several steps per launch)
//! against single steps, each form timed on the same slab and predicted by the model.
//!
//! Before that, on long runs, [`auto_march`] picks the marching kernels' compile-time shape
//! (registers against occupancy, see [`MarchTuning::candidates`]) by timing each candidate.
//!
//! Every hook reads the call's settings as the session resolved them ([`Settled`]), never the
//! options.

pub mod compression;
pub mod fusion;
pub mod host_path;
pub mod measure;
pub mod model;
mod probe;
pub mod search;

pub use measure::{host_copy_rate, measure_host_copy_rate, slab_planes};
pub use model::{
    fastest_kernels, plane_points, plane_rate, predict, roofline_rates, useful_points, Candidate,
    LinkRates, Prediction, Rates, TuneChoice, TuneInputs, KERNEL_BANDWIDTH_SHARE,
};
pub use probe::Probe;
pub use search::{block_step_candidates, choose, choose_scheme, AUTO_SCHEMES, RESIDENT_MARGIN};

pub use crate::settled::Fixed;

use crate::invocation::Invocation;
use crate::march::MarchTuning;
use crate::plan::PlanOptions;
use crate::program::Program;
use crate::settled::Settled;

/// Kernel points of a call below which timing kernel shapes costs more than it can save: about
/// a second of kernels on an H100, against a compile (side by side) and a short run per candidate.
pub const MARCH_TUNE_POINTS: u64 = 100_000_000_000;

/// `run`'s hook for the marching kernels' compile-time shape, when neither the options nor
/// `PACC_MARCH` fix it: on a call of at least [`MARCH_TUNE_POINTS`] kernel points, the
/// fastest of [`pick_march`]. `None`: keep the settled shape.
pub fn auto_march(
    probe: &dyn Probe,
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
) -> (Option<MarchTuning>, Option<String>) {
    if !tunes_march(program, inv) {
        return (None, None);
    }
    pick_march(probe, program, inv, settled)
}

/// Whether a call is long enough for [`auto_march`] to time kernel shapes.
fn tunes_march(program: &Program, inv: &Invocation<'_>) -> bool {
    useful_points(program, inv.arrays[0].shape(), inv.steps) >= MARCH_TUNE_POINTS
}

/// The compile-time shapes [`pick_march`] times: [`MarchTuning::candidates`] for the program's
/// marching block and forms; `None` where no kernel marches or the settled form is not the
/// marching one.
fn march_candidates(program: &Program, settled: &Settled) -> Option<Vec<MarchTuning>> {
    use crate::options::KernelForm;
    use crate::program::Launch;
    let block = program.kernels.iter().find_map(|k| match k.launch {
        Launch::Marching { block } => Some(block),
        Launch::PerPoint | Launch::Fused { .. } => None,
    });
    let block = block.filter(|_| settled.cuda.kernel_form == KernelForm::Marching)?;
    let src = &program.cuda_source;
    let (forms, rows) = (MarchTuning::stage_forms(src), MarchTuning::row_forms(src));
    Some(MarchTuning::candidates(
        block,
        forms,
        rows,
        MarchTuning::vector_forms(src),
    ))
}

/// `settled` with each of `tunings` in turn.
fn with_each(settled: &Settled, tunings: &[MarchTuning]) -> Vec<Settled> {
    (tunings.iter())
        .map(|&c| {
            let mut s = settled.clone();
            s.cuda.march = c.into();
            s
        })
        .collect()
}

/// The settings of the forms a call compiles first, for a backend to compile them before it
/// is ready to run anything: the candidates [`auto_march`] will time where it will (`free_march`:
/// neither the options nor `PACC_MARCH` fix the shape), else the settled form.
pub fn first_forms(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    free_march: bool,
) -> Vec<Settled> {
    // A fused run compiles its fused program, which the tuner has not chosen yet.
    if settled.fuse.is_some() {
        return Vec::new();
    }
    let timed = (free_march && tunes_march(program, inv))
        .then(|| march_candidates(program, settled))
        .flatten();
    match timed {
        Some(c) => with_each(settled, &c),
        None => vec![settled.clone()],
    }
}

/// Times every [`MarchTuning::candidates`] on a slab of the call's arrays and returns the
/// fastest, with a note for the report (`None`: the kernels have no marching form, or none
/// of the candidates ran).
pub fn pick_march(
    probe: &dyn Probe,
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
) -> (Option<MarchTuning>, Option<String>) {
    let shape = inv.arrays[0].shape();
    let Some(candidates) = march_candidates(program, settled) else {
        return (None, None);
    };
    let forms = MarchTuning::stage_forms(&program.cuda_source);
    let vector = MarchTuning::vector_forms(&program.cuda_source);
    let began = std::time::Instant::now();
    let each = with_each(settled, &candidates);
    let pairs: Vec<_> = each.iter().map(|s| (program, s)).collect();
    probe.compile_ahead(&pairs);
    let timed = probe.march_candidates(program, inv, settled, &candidates);
    let spent = began.elapsed().as_secs_f64();
    let rates: Vec<Vec<f64>> = timed.iter().map(|(_, r)| r.clone()).collect();
    let Some(best) = fastest_kernels(program, shape, &rates) else {
        let note = "kernel shape not tuned: no candidate compiled and ran; using the defaults";
        return (None, Some(note.into()));
    };
    let rate = |r: &Vec<f64>| plane_rate(program, shape, r);
    let (t, r) = &timed[best];
    let default = timed.iter().find(|(c, _)| *c == MarchTuning::default());
    let name = match t.describe() {
        d if d.is_empty() => "the default".to_string(),
        d => d,
    };
    let form = match forms {
        _ if vector && t.vector() => "vector form (4 points along x per thread)",
        None => "L1 form (no nest has in-plane reads to stage)",
        Some(d) if t.stage.map_or(d, |s| s == 1) => {
            "staged form (in-plane reads from shared memory)"
        }
        Some(_) => "L1 form (in-plane reads through the cache)",
    };
    let note = format!(
        "kernel shape: {name}, {form}, {:.1} Gpt/s on a slab of the arrays{}; {} candidates \
         compiled side by side and each timed once compiled, in {:.2} s",
        rate(r) / 1e9,
        default.map_or(String::new(), |(_, d)| format!(
            " (default {:.1})",
            rate(d) / 1e9
        )),
        candidates.len(),
        spent
    );
    (Some(*t), Some(note))
}

/// `run`'s hook: on a backend with a [`Probe`], tunes whichever of chunks and block steps the
/// caller did not fix (`settled.fixed`). Returns the options to plan with and a note for the
/// report. If measuring fails, keeps `base` and says why.
pub fn auto_plan_options(
    probe: &dyn Probe,
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    base: PlanOptions,
) -> (PlanOptions, Option<String>) {
    let fixed = settled.fixed;
    if (fixed.chunks.is_some() && fixed.block_steps.is_some()) || inv.steps == 0 {
        return (base, None);
    }
    let shape = inv.arrays[0].shape();
    let r = (probe.inputs(program, inv, settled))
        .and_then(|t| tuned_choice(program, shape, inv.steps, settled, &base, fixed, t));
    match r {
        Ok(c) => (c.plan_options(&base), Some(c.summary())),
        Err(e) => (
            base,
            Some(format!("tuner skipped ({e}); using the default options")),
        ),
    }
}

/// `run`'s hook after the tuner: under [`CompressWhen::Auto`](crate::options::CompressWhen),
/// keeps the compression `popts` asks for only where [`compression::decide`] predicts that it
/// pays (the codec timed once per process); returns the reason for the report. If weighing
/// fails, compresses as asked and says why.
pub fn auto_compression(
    probe: &dyn Probe,
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    popts: &mut PlanOptions,
) -> Option<String> {
    use crate::options::CompressWhen;
    popts.compress.iter().position(Option::is_some)?;
    if settled.compress_when == CompressWhen::Always || inv.steps == 0 {
        return None;
    }
    let shape = inv.arrays[0].shape();
    let points: Vec<usize> = inv.points.iter().map(|p| p[0] as usize).collect();
    let decided = probe.inputs(program, inv, settled).and_then(|t| {
        let codec = codec_speeds(probe, program, popts)?;
        let d = compression::decide(program, shape, inv.steps, &points, popts, &t.rates, &codec)?;
        Ok(d)
    });
    match decided {
        Ok(d) => {
            popts.compress = d.compress;
            Some(d.reason)
        }
        Err(e) => Some(format!(
            "compressed as asked: the tuner could not weigh compression ({e}); PACC_COMPRESS_WHEN=always skips weighing"
        )),
    }
}

/// The codec's speed for each physical array at its element type and rate (timed once per
/// distinct pair; arrays not compressed get the first compressed one's, never read).
pub fn codec_speeds(
    probe: &dyn Probe,
    program: &Program,
    popts: &PlanOptions,
) -> Result<Vec<compression::CodecSpeed>, crate::error::Error> {
    let mut timed: Vec<((crate::program::Elem, u64), compression::CodecSpeed)> = Vec::new();
    let mut speeds = Vec::with_capacity(program.arrays.len());
    for (a, array) in program.arrays.iter().enumerate() {
        let Some(rate) = popts.compress.get(a).copied().flatten() else {
            speeds.push(None);
            continue;
        };
        let key = (array.elem, rate.to_bits());
        let speed = match timed.iter().find(|(k, _)| *k == key) {
            Some((_, s)) => *s,
            None => {
                let s = probe.codec_rates(popts.codec, array.elem, rate)?;
                timed.push((key, s));
                s
            }
        };
        speeds.push(Some(speed));
    }
    // Arrays that are not compressed are never coded: any speed stands in for theirs.
    let any = timed.first().map_or(
        compression::CodecSpeed {
            encode: 1.0,
            decode: 1.0,
        },
        |t| t.1,
    );
    Ok(speeds.into_iter().map(|s| s.unwrap_or(any)).collect())
}

/// The model's choice for a call of `steps` steps of `program` with measured inputs `t`: the
/// free ones of chunks and block steps (`fixed` holds the others), and the scheme unless the
/// caller named it (`base` holds the planner's other settings).
pub(crate) fn tuned_choice(
    program: &Program,
    shape: &[usize],
    steps: usize,
    settled: &Settled,
    base: &PlanOptions,
    fixed: Fixed,
    mut t: TuneInputs,
) -> Result<TuneChoice, crate::error::Error> {
    use std::sync::OnceLock;
    t.scheme = base.scheme;
    if base.scheme.transfers().stages_through_pinned_buffers() {
        static HOST: OnceLock<f64> = OnceLock::new();
        t.rates.host_copy_rate = *HOST.get_or_init(|| {
            use crate::memcopy::{STAGE_PIECE, STAGE_STORES};
            measure_host_copy_rate(256 << 20, STAGE_PIECE, STAGE_STORES)
        });
    }
    t.chunks = fixed.chunks;
    t.block_steps = fixed.block_steps;
    t.read_only_ring = base.read_only_ring;
    match settled.scheme_fixed {
        true => choose(program, shape, steps, &t),
        false => choose_scheme(program, shape, steps, &t, &AUTO_SCHEMES),
    }
}

#[cfg(test)]
mod fake;

#[cfg(test)]
mod tests {
    use super::fake::FakeDevice;
    use super::*;
    use crate::program::{fixtures::one_kernel, Launch, Role};

    #[test]
    fn every_march_candidate_is_compiled_at_once_before_any_is_timed() {
        let mut program = one_kernel(
            "p",
            &[("a", Role::InOut), ("b", Role::InOut)],
            &[(1, 1)],
            0,
            1,
        );
        program.kernels[0].launch = Launch::Marching { block: [32, 8] };
        let probe = FakeDevice::new(1e9);
        let (chosen, note) = crate::invocation::fixtures::zeros(2, [16, 8, 8], 10, |inv| {
            pick_march(&probe, &program, inv, &Settled::default())
        });
        let candidates = MarchTuning::candidates([32, 8], None, false, false);
        assert!(candidates.len() > 1);
        let each: Vec<_> = candidates.iter().map(|&c| Some(c)).collect();
        assert_eq!(
            probe.asked(),
            [
                format!("compile {each:?}"),
                format!("time {}", candidates.len())
            ]
        );
        assert_eq!(chosen, candidates.last().copied());
        let note = note.unwrap();
        assert!(
            note.contains(&format!(
                "{} candidates compiled side by side and each timed once compiled, in",
                candidates.len()
            )),
            "{note}"
        );
    }

    #[test]
    fn the_first_forms_are_the_timed_candidates_of_long_calls_and_the_settled_form_else() {
        let mut program = one_kernel(
            "p",
            &[("a", Role::InOut), ("b", Role::InOut)],
            &[(1, 1)],
            0,
            1,
        );
        program.kernels[0].launch = Launch::Marching { block: [32, 8] };
        let settled = Settled::default();
        let candidates = MarchTuning::candidates([32, 8], None, false, false);
        let marches = |forms: Vec<Settled>| -> Vec<Option<MarchTuning>> {
            forms.iter().map(|s| s.cuda.march.get().ok()).collect()
        };
        // About 2 x 10^11 points: long enough to time kernel shapes.
        let long = crate::invocation::fixtures::zeros(2, [100, 100, 100], 200_000, |inv| {
            (
                first_forms(&program, inv, &settled, true),
                first_forms(&program, inv, &settled, false),
            )
        });
        let each: Vec<_> = candidates.iter().map(|&c| Some(c)).collect();
        assert_eq!(marches(long.0), each);
        assert_eq!(marches(long.1), vec![settled.cuda.march.get().ok()]);
        let short = crate::invocation::fixtures::zeros(2, [16, 8, 8], 10, |inv| {
            first_forms(&program, inv, &settled, true)
        });
        assert_eq!(marches(short), vec![settled.cuda.march.get().ok()]);
        let fused = Settled {
            fuse: Some(2),
            ..Settled::default()
        };
        let none = crate::invocation::fixtures::zeros(2, [16, 8, 8], 10, |inv| {
            first_forms(&program, inv, &fused, true)
        });
        assert!(none.is_empty());
    }
}
