//! Whether a call runs the translator's fused kernels (`crate::fuse`), and how many steps per
//! launch: the model's prediction of the whole run, single-step against each fused form, with
//! every form's kernels timed on the same slab of the call's arrays.
//!
//! A fused form moves fewer bytes per step through device memory, but it recomputes halo
//! points, holds level buffers (less room for chunks) and its steps come in groups; which of
//! these wins depends on the program, the shape and the device, so the tuner measures rather
//! than assumes. Only calls long enough for the marching kernels' shape to be tuned
//! ([`super::MARCH_TUNE_POINTS`]) and predicted to run [`WEIGH_SECONDS`] are considered:
//! timing a fused form costs a compile and a short run; the forms are timed shallowest
//! first, and a deeper one only while the shallower beat single steps.

use crate::plan::PlanOptions;
use crate::program::Program;
use crate::settled::Settled;

/// A fused form is taken only when its predicted run is at most this share of the single-step
/// one: the slab's rates carry a few percent of noise, and a tie is not worth the level
/// buffers.
pub const FUSE_MARGIN: f64 = 0.95;

/// Runs predicted shorter than this (single steps) are not weighed: weighing copies a slab of
/// up to [`SLAB_BYTES`] and runs it once per form (Himeno at 512x512x768 on the H100: 6.2 s
/// with the fused forms' first compiles, 2.0-2.2 s with the PTX on disk, before the forms were
/// compiled side by side to machine code and timed in one run each), which should stay within
/// a few percent of the run. A later process with the rates on disk pays nothing.
pub const WEIGH_SECONDS: f64 = 60.0;

thread_local! {
    /// Set by [`weigh_every_call`].
    static EVERY_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes this thread's calls weigh fusion whatever their length until the guard drops, as a
/// call over [`WEIGH_SECONDS`] would: for the GPU tests, whose calls are far shorter than a
/// weighing is worth. Test-only.
#[doc(hidden)]
pub fn weigh_every_call() -> WeighGuard {
    EVERY_CALL.with(|c| c.set(true));
    WeighGuard(std::marker::PhantomData)
}

/// Ends [`weigh_every_call`] when dropped.
#[doc(hidden)]
#[must_use = "weighing every call ends when the guard is dropped"]
pub struct WeighGuard(std::marker::PhantomData<*const ()>);

impl Drop for WeighGuard {
    fn drop(&mut self) {
        let _ = EVERY_CALL.try_with(|c| c.set(false));
    }
}

/// Whether [`weigh_every_call`] holds on this thread.
fn weighs_every_call() -> bool {
    EVERY_CALL.with(|c| c.get())
}

/// The predicted length from which a call is weighed ([`WEIGH_SECONDS`], 0 under
/// [`weigh_every_call`]).
fn weigh_from() -> f64 {
    match weighs_every_call() {
        true => 0.0,
        false => WEIGH_SECONDS,
    }
}

/// How far the tuner's default slab may misjudge a run's time against the fusion slab's
/// deeper one, when deciding that a run is too short to weigh fusion at all.
const SLAB_SLACK: f64 = 2.0;

/// Slab planes the forms are timed on: enough for the widest fused reach and for marching
/// segments of a realistic length, without copying more than [`SLAB_BYTES`].
pub const SLAB_PLANES: usize = 64;

/// The most bytes the timing slab copies out of the call's arrays.
pub const SLAB_BYTES: usize = 1 << 30;

/// A fused form's vector blocks timed, the default first (`FusedDecl::vector_blocks`): which is
/// fastest differs by stencil and device (`propagate` fused 2 at 512³ on an H200: 8x48 102.7,
/// 16x24 98.8, 8x32 81.6 Gpt/s; the hand probe on an H100 preferred 16x24), and every block
/// more costs a compile (side by side with the others) and a slab run.
pub const BLOCK_TRIALS: usize = 3;

/// The variants of fused program `fp` the tuner times: its vector form with each of its first
/// [`BLOCK_TRIALS`] blocks, or `fp` alone where it has one block or none, or where the caller's
/// march settings ask for the one-column form (`vx=1`).
pub fn block_variants(fp: &Program, settled: &Settled) -> Vec<(Option<[u32; 2]>, Program)> {
    let blocks = (fp.fusion.active.as_ref()).map_or(Vec::new(), |a| a.decl.vector_blocks.clone());
    // An unreadable `PACC_MARCH` fails every form's compile, which the fusion note reports.
    let vector = settled.cuda.march.get().map_or(true, |t| t.vector());
    if blocks.len() < 2 || !vector {
        return vec![(blocks.first().copied().filter(|_| vector), fp.clone())];
    }
    (blocks.into_iter().take(BLOCK_TRIALS))
        .map(|b| (Some(b), crate::fuse::with_vector_block(fp, b)))
        .collect()
}

/// The fused step counts worth timing for a call of `steps` steps: forms the translator
/// generated that the call can run (a multiple of the group, no checkpoints or compression;
/// [`crate::fuse::refuse`] is the rule).
pub fn candidates(
    program: &Program,
    steps: usize,
    settled: &Settled,
    compressed: bool,
) -> Vec<usize> {
    let allowed = |s: usize| {
        crate::fuse::refuse(program, steps, s, String::new(), settled, compressed).is_ok()
    };
    (program.fusion.kernels.iter())
        .map(|k| k.steps)
        .filter(|&s| s > 1 && allowed(s))
        .collect()
}

/// The planes of the slab every form is timed on: [`SLAB_PLANES`], or more where the widest
/// fused group reaches further, or fewer where the planes are large (at least what the widest
/// reach needs), and never more than the call has.
pub fn slab_planes(program: &Program, shape: &[usize], steps: &[usize]) -> usize {
    let halo = steps.iter().max().copied().unwrap_or(1) * program.halo;
    let need = super::measure::reach_planes(halo);
    let plane: usize = shape[1..].iter().product();
    let twins: usize = (program.fusion.kernels.iter())
        .flat_map(|k| &k.outputs)
        .map(|&a| program.arrays[a].elem.size())
        .max()
        .unwrap_or(0);
    let bytes = plane * (program.arrays.iter().map(|a| a.elem.size()).sum::<usize>() + twins);
    let fits = SLAB_BYTES / bytes.max(1);
    SLAB_PLANES.min(fits).max(need).min(shape[0])
}

/// The step count to fuse, from the single-step run's predicted seconds and each fused form's
/// `(steps per launch, predicted seconds)`: the fastest form that beats single steps by
/// [`FUSE_MARGIN`], else `None`.
pub fn pick(single: f64, fused: &[(usize, f64)]) -> Option<usize> {
    fused
        .iter()
        .filter(|(_, t)| t.is_finite() && *t <= FUSE_MARGIN * single)
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|&(s, _)| s)
}

pub use weigh::auto_fuse;

/// The fused form the tuner picked: steps per launch, the vector form's block where it timed
/// several ([`crate::fuse::with_vector_block`]), and the plan options (block steps in groups).
#[derive(Clone, Debug)]
pub struct Picked {
    pub steps: usize,
    pub block: Option<[u32; 2]>,
    pub popts: PlanOptions,
}

mod weigh {
    use super::{block_variants, Picked};
    use super::{candidates, pick, slab_planes, weigh_from, weighs_every_call};
    use super::{FUSE_MARGIN, SLAB_SLACK};
    use crate::error::Error;
    use crate::invocation::Invocation;
    use crate::plan::PlanOptions;
    use crate::program::{FusionError, Program};
    use crate::settled::Settled;
    use crate::tune::{
        plane_rate, tuned_choice, useful_points, Fixed, Probe, TuneChoice, MARCH_TUNE_POINTS,
    };

    /// One form's prediction: steps per launch (1: single step), the model's choice, the
    /// kernels' points per second per time step on the slab.
    struct Form {
        steps: usize,
        /// The vector form's block, where the form is timed by block.
        block: Option<[u32; 2]>,
        choice: TuneChoice,
        rate: f64,
    }

    /// `run`'s hook, on a backend with a [`Probe`] when the options leave fusion free: the fused form
    /// to run (its steps per launch and plan options, block steps in groups) when the model
    /// predicts it beats single steps, and a note for the report whenever fusion was weighed.
    /// `base` holds the planner settings the single-step run resolved, `settled.fixed` what the
    /// caller fixed of them.
    pub fn auto_fuse(
        probe: &dyn Probe,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        base: &PlanOptions,
    ) -> (Option<Picked>, Option<String>) {
        let shape = inv.arrays[0].shape();
        let long =
            weighs_every_call() || useful_points(program, shape, inv.steps) >= MARCH_TUNE_POINTS;
        if !settled.fusion_free || !long {
            return (None, None);
        }
        let steps = candidates(program, inv.steps, settled, base.compresses());
        if steps.is_empty() {
            return (None, None);
        }
        if clearly_short(probe, program, inv, settled, base) {
            return (None, None);
        }
        let began = std::time::Instant::now();
        let planes = slab_planes(program, shape, &steps);
        let single = match form(probe, program, inv, settled, base, 1, planes) {
            Ok(f) => f,
            Err(e) => return (None, Some(format!("fusion not weighed ({e})"))),
        };
        if single.choice.predicted_seconds < weigh_from() {
            return (None, None);
        }
        // Every fused form and block at once: the longest compile instead of their sum.
        type Variants = Vec<(Option<[u32; 2]>, Program)>;
        let fused: Vec<(usize, Result<Variants, FusionError>)> = (steps.iter())
            .map(|&s| {
                (
                    s,
                    crate::fuse::program(program, s).map(|p| block_variants(&p, settled)),
                )
            })
            .collect();
        let ahead: Vec<(&Program, &Settled)> = (fused.iter())
            .filter_map(|(_, v)| v.as_ref().ok())
            .flat_map(|v| v.iter().map(|(_, p)| (p, settled)))
            .collect();
        probe.compile_ahead(&ahead);
        // Deeper groups recompute more halo: time the next one only while fusing deeper pays.
        let mut forms: Vec<Form> = Vec::new();
        let mut skipped = Vec::new();
        let mut best = single.choice.predicted_seconds;
        for (i, (s, variants)) in fused.into_iter().enumerate() {
            let f = (variants.map_err(|e| Error::Internal(e.to_string())))
                .and_then(|v| fastest_block(probe, v, inv, settled, base, s, planes));
            let t = match f {
                Ok(f) => {
                    let t = f.choice.predicted_seconds;
                    forms.push(f);
                    t
                }
                Err(e) => {
                    skipped.push(format!("fused {s} failed ({e})"));
                    f64::INFINITY
                }
            };
            if t > FUSE_MARGIN * best {
                let rest = steps[i + 1..]
                    .iter()
                    .map(|d| format!("fused {d} not timed"));
                skipped.extend(rest);
                break;
            }
            best = t;
        }
        let times: Vec<(usize, f64)> = (forms.iter())
            .map(|f| (f.steps, f.choice.predicted_seconds))
            .collect();
        let chosen = pick(single.choice.predicted_seconds, &times);
        let spent = began.elapsed().as_secs_f64();
        let note = note(&single, &forms, &skipped, chosen, planes, spent);
        let picked = chosen.and_then(|s| forms.into_iter().find(|f| f.steps == s));
        (
            picked.map(|f| Picked {
                steps: f.steps,
                block: f.block,
                popts: f.choice.plan_options(base),
            }),
            Some(note),
        )
    }

    /// The fastest of a fused form's block variants ([`block_variants`]), each timed on the
    /// slab; an error only when every variant failed.
    fn fastest_block(
        probe: &dyn Probe,
        variants: Vec<(Option<[u32; 2]>, Program)>,
        inv: &Invocation<'_>,
        settled: &Settled,
        base: &PlanOptions,
        s: usize,
        planes: usize,
    ) -> Result<Form, Error> {
        let mut best: Option<Form> = None;
        let mut last_err = None;
        for (block, fp) in variants {
            match form(probe, &fp, inv, settled, base, s, planes) {
                Ok(f) => {
                    let f = Form { block, ..f };
                    let faster = |b: &Form| f.choice.predicted_seconds < b.choice.predicted_seconds;
                    if best.as_ref().is_none_or(faster) {
                        best = Some(f);
                    }
                }
                Err(e) => last_err = Some(e),
            }
        }
        best.ok_or_else(|| last_err.unwrap_or_else(|| Error::Internal("no fused variant".into())))
    }

    /// Whether the single-step run, predicted from the rates the tuner already has (its own
    /// slab's, no new one), is far below [`super::WEIGH_SECONDS`]: a slab of the fusion's depth only
    /// to find that out cost 2.3 s of a 9 s run's set-up (sponge 1600³, fresh H200).
    fn clearly_short(
        probe: &dyn Probe,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        base: &PlanOptions,
    ) -> bool {
        let shape = inv.arrays[0].shape();
        let fixed = settled.fixed;
        (probe.inputs(program, inv, settled))
            .and_then(|t| tuned_choice(program, shape, inv.steps, settled, base, fixed, t))
            .is_ok_and(|c| c.predicted_seconds * SLAB_SLACK < weigh_from())
    }

    /// Times `program` (single step, or a fused run's program of `s` steps per launch) on the
    /// slab and asks the model for its whole run.
    fn form(
        probe: &dyn Probe,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        base: &PlanOptions,
        s: usize,
        planes: usize,
    ) -> Result<Form, Error> {
        let shape = inv.arrays[0].shape();
        let t = probe.inputs_at(program, inv, settled, planes)?;
        let rate = plane_rate(program, shape, &t.rates.kernel_rate) * s as f64;
        let fixed = Fixed {
            block_steps: settled.fixed.block_steps.map(|k| k.div_ceil(s)),
            ..settled.fixed
        };
        let choice = tuned_choice(program, shape, inv.steps / s, settled, base, fixed, t)?;
        Ok(Form {
            steps: s,
            block: None,
            choice,
            rate,
        })
    }

    fn note(
        single: &Form,
        forms: &[Form],
        failed: &[String],
        chosen: Option<usize>,
        planes: usize,
        spent: f64,
    ) -> String {
        let one = |f: &Form| {
            let name = match (f.steps, f.block) {
                (1, _) => "single step".to_string(),
                (s, Some([bx, by])) => format!("fused {s} (vector form, block {bx}x{by})"),
                (s, None) => format!("fused {s}"),
            };
            format!(
                "{name} {:.3} s ({:.1} Gpt/s per step, {} chunks x {} {})",
                f.choice.predicted_seconds,
                f.rate / 1e9,
                f.choice.chunks,
                f.choice.block_steps,
                if f.steps == 1 { "steps" } else { "groups" }
            )
        };
        let all: Vec<String> = std::iter::once(single)
            .chain(forms)
            .map(one)
            .chain(failed.iter().cloned())
            .collect();
        let verdict = match chosen {
            Some(s) => format!("running fused {s}"),
            None => format!(
                "keeping single steps (a fused form must be predicted {:.0}% faster)",
                (1.0 / FUSE_MARGIN - 1.0) * 100.0
            ),
        };
        format!(
            "fusion: predicted {} (kernels timed on a slab of {planes} planes; weighing took {spent:.2} s); {verdict}",
            all.join(", ")
        )
    }
}

#[cfg(test)]
mod tests_support {
    use crate::program::fixtures::one_kernel;
    use crate::program::{FusedDecl, Program, Role};

    /// A one-kernel program the translator fused `steps` steps of, for each of `steps`.
    pub(super) fn fusable(steps: &[usize]) -> Program {
        let arrays = [("a", Role::InOut), ("b", Role::InOut)];
        let mut p = one_kernel("p", &arrays, &[(0, 1)], 1, 1);
        for &s in steps {
            p.fusion.kernels.push(FusedDecl {
                name: format!("p_f{s}"),
                steps: s,
                outputs: vec![0],
                reads: p.kernels[0].reads.clone(),
                block: [32, 8],
                halo: [[s as u32; 2]; 2],
                vector_blocks: vec![],
                events: vec![],
                points: vec![],
                invocations: vec![],
            });
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::fusable;
    use super::*;

    #[test]
    fn candidates_are_the_generated_forms_the_call_can_run() {
        let p = fusable(&[2, 3]);
        let o = Settled::default();
        assert_eq!(candidates(&p, 12, &o, false), vec![2, 3]);
        assert_eq!(
            candidates(&p, 8, &o, false),
            vec![2],
            "8 is no multiple of 3"
        );
        assert!(candidates(&p, 12, &o, true).is_empty(), "compressed runs");
        let ck = Settled {
            durable: true,
            ..o.clone()
        };
        assert!(candidates(&p, 12, &ck, false).is_empty(), "checkpoints");
        assert!(candidates(&fusable(&[]), 12, &o, false).is_empty());
    }

    #[test]
    fn a_fused_form_must_beat_single_steps_by_the_margin() {
        assert_eq!(pick(1.0, &[(2, 0.96)]), None);
        assert_eq!(pick(1.0, &[(2, 0.94)]), Some(2));
        assert_eq!(pick(1.0, &[(2, 0.90), (3, 0.80)]), Some(3));
        assert_eq!(
            pick(1.0, &[(2, 0.80), (3, 0.80)]),
            Some(2),
            "a tie goes to fewer"
        );
        assert_eq!(pick(1.0, &[(2, f64::INFINITY), (3, f64::NAN)]), None);
        assert_eq!(pick(1.0, &[]), None);
    }

    #[test]
    fn the_slab_covers_the_widest_reach_and_stays_within_its_bytes() {
        let p = fusable(&[2, 3]);
        // 3 arrays' worth of 256x256 f32 planes: 768 KiB a plane, 64 planes fit.
        assert_eq!(slab_planes(&p, &[512, 256, 256], &[2, 3]), 64);
        assert_eq!(
            slab_planes(&p, &[40, 256, 256], &[2, 3]),
            40,
            "the call's planes"
        );
        // 2048x2048 planes: 48 MiB each, 21 fit; the reach needs 4 * 3 + 8 = 20.
        assert_eq!(slab_planes(&p, &[512, 2048, 2048], &[2, 3]), 21);
        assert_eq!(
            slab_planes(&p, &[512, 8192, 8192], &[2, 3]),
            20,
            "the reach wins"
        );
    }
}

#[cfg(test)]
mod weighing {
    use super::tests_support::fusable;
    use super::*;
    use crate::plan::{PlanOptions, Scheme};
    use crate::tune::fake::FakeDevice;

    /// Planner settings that fix neither chunks nor block steps for the tuner.
    fn base() -> PlanOptions {
        PlanOptions {
            chunks: 4,
            block_steps: 8,
            scheme: Scheme::RegionSharing,
            buffer_sets: 2,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        }
    }

    /// A call that names the scheme (region sharing) and leaves fusion to the tuner.
    fn region_sharing() -> Settled {
        Settled {
            scheme_fixed: true,
            ..Settled::default()
        }
    }

    /// What `auto_fuse` times for a 256³ call of 6114 steps (10^11 points, long enough to
    /// weigh) on a device running its kernels at `rate`: the slab depths asked for.
    fn weighed(rate: f64) -> (Vec<usize>, Option<String>) {
        let program = fusable(&[2, 3]);
        let base = base();
        let probe = FakeDevice::new(rate);
        let settled = region_sharing();
        let (_, note) = crate::invocation::fixtures::zeros(2, [256; 3], 6114, |inv| {
            // Neither the options nor the program fix chunks or block steps.
            auto_fuse(&probe, &program, inv, &settled, &base)
        });
        let slabs = (probe.asked().iter())
            .filter_map(|a| a.strip_prefix("inputs ")?.parse().ok())
            .collect();
        (slabs, note)
    }

    #[test]
    fn the_fused_vector_forms_blocks_are_timed_and_the_fastest_is_picked() {
        let blocks = [[8, 48], [16, 24], [8, 32], [16, 16]];
        let mut program = fusable(&[2]);
        program.fusion.kernels[0].vector_blocks = blocks.to_vec();
        let base = base();
        // The second block runs the fused kernels 3x faster than the others, which run as
        // fast as single steps: the fused form wins only with it.
        let probe = FakeDevice::new(1e9).with_block_rates(&[([16, 24], 3.0)]);
        let settled = region_sharing();
        let (picked, note) = crate::invocation::fixtures::zeros(2, [256; 3], 6114, |inv| {
            auto_fuse(&probe, &program, inv, &settled, &base)
        });
        let picked = picked.expect("the fused form with the fast block");
        assert_eq!((picked.steps, picked.block), (2, Some([16, 24])));
        let note = note.unwrap();
        assert!(
            note.contains("fused 2 (vector form, block 16x24)"),
            "{note}"
        );
        // The first BLOCK_TRIALS blocks, each compiled ahead with the others and timed once.
        let timed: Vec<String> = (probe.asked().iter())
            .filter_map(|a| a.strip_prefix("block ").map(String::from))
            .collect();
        assert_eq!(timed, ["8x48", "16x24", "8x32"]);
        assert_eq!(BLOCK_TRIALS, 3);
        // The run launches the picked block: the fused program carries it first.
        let fused = crate::fuse::program(&program, 2).unwrap();
        let chosen = crate::fuse::with_vector_block(&fused, [16, 24]);
        let decl = &chosen.fusion.active.as_ref().unwrap().decl;
        assert_eq!(decl.vector_blocks, [[16, 24], [8, 48], [8, 32], [16, 16]]);
        assert!(matches!(
            chosen.kernels[0].launch,
            crate::program::Launch::Fused {
                vector: Some([16, 24]),
                ..
            }
        ));
        // Asking for the one-column form (`vx=1`) times the program as it is, once.
        let mut scalar = settled.clone();
        scalar.cuda.march = crate::march::MarchTuning::parse("vx=1").unwrap().into();
        let variants = block_variants(&fused, &scalar);
        assert_eq!(variants.len(), 1);
        assert_eq!(variants[0].0, None);
    }

    #[test]
    fn a_run_the_tuners_rates_predict_short_is_not_weighed_on_a_slab_of_its_own() {
        let default_slab = crate::tune::slab_planes(&fusable(&[2, 3]), 256);
        let fusion_slab = slab_planes(&fusable(&[2, 3]), &[256, 256, 256], &[2, 3]);
        assert_ne!(default_slab, fusion_slab);
        // 10^11 points at 10^13 per second: 0.01 s, far below WEIGH_SECONDS.
        let (slabs, note) = weighed(1e13);
        assert_eq!(
            slabs,
            [default_slab],
            "only the rates the tuner has: {note:?}"
        );
        assert_eq!(note, None);
        // At 10^9 per second the run takes 100 s: every form is timed on the fusion's slab.
        let (slabs, note) = weighed(1e9);
        assert_eq!(slabs[0], default_slab);
        assert!(slabs[1..].iter().all(|&p| p == fusion_slab), "{slabs:?}");
        assert!(
            slabs.len() >= 3,
            "single steps and at least one fused form: {slabs:?}"
        );
        assert!(note.unwrap().starts_with("fusion: predicted"));
    }

    #[test]
    fn weighing_every_call_weighs_a_short_one_until_the_guard_drops() {
        // 10^11 points at 10^13 per second: far too short to weigh, and weighed under the hook.
        assert_eq!(weighed(1e13).1, None);
        let guard = weigh_every_call();
        let note = weighed(1e13).1.expect("weighed");
        assert!(note.starts_with("fusion: predicted single step"), "{note}");
        // A call far below MARCH_TUNE_POINTS too.
        let program = fusable(&[2]);
        let (_, note) = crate::invocation::fixtures::zeros(2, [32; 3], 12, |inv| {
            auto_fuse(
                &FakeDevice::new(1e13),
                &program,
                inv,
                &region_sharing(),
                &base(),
            )
        });
        assert!(note.is_some_and(|n| n.contains("fused 2")));
        drop(guard);
        assert_eq!(weighed(1e13).1, None);
    }
}
