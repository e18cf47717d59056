//! The configurations run side by side: one table, [`CONFIGS`], in the order they run. Adding a
//! configuration is one row here (its name for `--configs`, whether it needs the GPU, its colour
//! in the plots, and the function that runs it: one of those below, or a new one beside them).

use crate::bench::Bench;
use crate::gpu;
use crate::results::{finish, gb, GridPoint, Measurement, TunerResult};
use pacc_runtime::cosched::CoSchedule;
use pacc_runtime::plan::{PlanOptions, Scheme};
use pacc_runtime::program::{Program, Role};
use std::time::Instant;

pub struct Config {
    /// The name `--configs` takes and the results show.
    pub name: &'static str,
    /// Needs the GPU: skipped without one; runs while the arrays are page-locked.
    pub gpu: bool,
    /// Colour of its bars in the plots (RGB).
    pub color: (u8, u8, u8),
    /// Runs it on the bench's program and size, adding a measurement or saying why not.
    pub run: fn(&mut Bench),
}

/// Every configuration, in the order they run (the grid search after region-sharing, whose
/// tuned choice it judges; the CPU configuration last, after the GPU side is released).
pub const CONFIGS: &[Config] = &[
    Config {
        name: "default",
        gpu: true,
        color: (0x17, 0xbe, 0xcf),
        run: run_default,
    },
    Config {
        name: "region-sharing",
        gpu: true,
        color: (0x1f, 0x77, 0xb4),
        run: |b| run_tuned(b, "region-sharing", Scheme::RegionSharing, Vec::new(), true),
    },
    Config {
        name: "wavefront",
        gpu: true,
        color: (0xd6, 0x27, 0x28),
        run: |b| run_tuned(b, "wavefront", Scheme::Wavefront, Vec::new(), true),
    },
    Config {
        name: "wavefront-staircase",
        gpu: true,
        color: (0x8c, 0x56, 0x4b),
        run: |b| {
            run_tuned(
                b,
                "wavefront-staircase",
                Scheme::Wavefront,
                Vec::new(),
                false,
            )
        },
    },
    Config {
        name: "wavefront-compressed",
        gpu: true,
        color: (0xff, 0x98, 0x96),
        run: run_wavefront_compressed,
    },
    Config {
        name: "direct-map",
        gpu: true,
        color: (0x6b, 0xae, 0xd6),
        run: |b| run_tuned(b, "direct-map", Scheme::DirectMap, Vec::new(), true),
    },
    Config {
        name: "compressed",
        gpu: true,
        color: (0xbc, 0xbd, 0x22),
        run: run_compressed,
    },
    Config {
        name: "staged-copy",
        gpu: true,
        color: (0x9e, 0xca, 0xe1),
        run: |b| run_tuned(b, "staged-copy", Scheme::StagedCopy, Vec::new(), true),
    },
    Config {
        name: "in-core",
        gpu: true,
        color: (0x2c, 0xa0, 0x2c),
        run: run_in_core,
    },
    Config {
        name: "um",
        gpu: true,
        color: (0xff, 0x7f, 0x0e),
        run: |b| run_um(b, "um", false),
    },
    Config {
        name: "um-prefetch",
        gpu: true,
        color: (0xff, 0xbb, 0x78),
        run: |b| run_um(b, "um-prefetch", true),
    },
    Config {
        name: "grid",
        gpu: true,
        color: (0xbc, 0xbd, 0x22),
        run: run_grid,
    },
    Config {
        name: "cpu",
        gpu: false,
        color: (0x7f, 0x7f, 0x7f),
        run: run_cpu,
    },
];

/// The colour of a measured configuration (`compressed-16` is `compressed`'s).
pub fn color_of(config: &str) -> (u8, u8, u8) {
    let exact = CONFIGS.iter().find(|c| config == c.name);
    exact
        .or_else(|| (CONFIGS.iter()).find(|c| config.starts_with(&format!("{}-", c.name))))
        .map_or((0xbc, 0xbd, 0x22), |c| c.color)
}

/// One pipeline run at the tuner's choice for `scheme` (or `--at`), compressing per `compress`
/// (empty: nothing). Compression is invisible to the tuner, so a compressed run uses the choice
/// for the uncompressed scheme and has no prediction. `ring: false` copies the wavefront's
/// read-only arrays with the staircase (`PACC_RING=0`) at the same chunks and block steps.
fn run_tuned(b: &mut Bench, name: &str, scheme: Scheme, compress: Vec<Option<f64>>, ring: bool) {
    let g = b.gpu.as_ref().expect("GPU configurations run with a GPU");
    let host = (scheme.transfers().stages_through_pinned_buffers()).then_some(g.staging_budget);
    let predicted = compress.iter().all(Option::is_none);
    let c = match g.choose(&b.w, b.steps, scheme, host, b.args.at_pair()) {
        Ok(c) => c,
        Err(e) => return println!("{name}: the tuner found nothing: {e}"),
    };
    b.reinit();
    let po = PlanOptions {
        chunks: c.chunks,
        block_steps: c.block_steps,
        scheme,
        buffer_sets: c.buffer_sets,
        compress,
        codec: b.args.codec,
        read_only_ring: ring,
    };
    let g = b.gpu.as_ref().expect("still there");
    let inputs = predicted.then_some(&g.inputs);
    let decided = (!predicted).then(|| gpu::decision(&b.w, &po, b.steps, &g.inputs));
    let m =
        gpu::run_plan(&mut b.w, name, &po, b.steps, b.args.fma, &g.link, inputs).map(|mut m| {
            if predicted {
                m.predicted_seconds = Some(c.predicted_seconds);
            }
            m.notes
                .extend(decided.map(|d| d.unwrap_or_else(|e| format!("tuner: {e}"))));
            m
        });
    b.record(name, m);
}

/// What a call with no options runs: the tuner's chunks, depth and scheme (among
/// `tune::AUTO_SCHEMES`), the way `run` plans it.
fn run_default(b: &mut Bench) {
    let g = b.gpu.as_ref().expect("GPU configurations run with a GPU");
    let c = match g.choose_default(&b.w, b.steps) {
        Ok(c) => c,
        Err(e) => return println!("default: the tuner found nothing: {e}"),
    };
    b.reinit();
    let po = c.plan_options(&PlanOptions::default());
    let g = b.gpu.as_ref().expect("still there");
    let m =
        gpu::run_plan(&mut b.w, "default", &po, b.steps, b.args.fma, &g.link, None).map(|mut m| {
            m.predicted_seconds = Some(c.predicted_seconds);
            m
        });
    b.record("default", m);
}

/// Region sharing with `--compress-arrays` (default: every array the caller gets back) kept
/// compressed on the host at `--compress-rate` with `--codec`.
fn run_compressed(b: &mut Bench) {
    run_compressed_as(b, "compressed", Scheme::RegionSharing);
}

/// The wavefront with the arrays of the `compressed` configuration compressed.
fn run_wavefront_compressed(b: &mut Bench) {
    run_compressed_as(b, "wavefront-compressed", Scheme::Wavefront);
}

/// `config` with the compressed arrays, once per `--codec-grids` entry.
fn run_compressed_as(b: &mut Bench, config: &str, scheme: Scheme) {
    let rate = b.args.compress_rate;
    let compress = compressed_arrays(&b.w.program, b.args.compress_arrays.as_deref(), rate);
    let grids: Vec<Option<CoSchedule>> = match &b.args.codec_grids {
        Some(g) => g.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    for g in grids {
        *gpu::CODEC_GRID.lock().unwrap_or_else(|e| e.into_inner()) = g;
        let at = g.map_or(String::new(), |g| format!("@{g}"));
        let name = format!("{config}-{}{at}", codec_rate(b));
        run_tuned(b, &name, scheme, compress.clone(), true);
    }
    *gpu::CODEC_GRID.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The compressed configurations' name suffix: the rate (zfp, as before), or codec and rate.
fn codec_rate(b: &Bench) -> String {
    let (codec, rate) = (b.args.codec, b.args.compress_rate);
    if codec == pacc_runtime::codec::CodecKind::Zfp {
        rate.to_string()
    } else {
        format!("{codec}-{rate}")
    }
}

/// Per physical array: the rate of the `compressed` configuration (`names`, or every array the
/// caller gets back).
fn compressed_arrays(program: &Program, names: Option<&[String]>, rate: f64) -> Vec<Option<f64>> {
    program
        .arrays
        .iter()
        .map(|a| {
            let on = match names {
                Some(n) => n.iter().any(|x| x == &a.name),
                // Every array the caller gets back (swapped arrays are written too).
                None => a.role == Role::InOut,
            };
            on.then_some(rate)
        })
        .collect()
}

/// The same kernels with everything resident: 1 chunk, 1 buffer set, block steps = steps,
/// counting the initial upload and the final download.
fn run_in_core(b: &mut Bench) {
    let g = b.gpu.as_ref().expect("GPU configurations run with a GPU");
    let need = b.res.array_bytes + (256 << 20);
    if need > g.budget {
        let why = format!(
            "in-core: {:.1} GB of arrays do not fit in {:.1} GB of free device memory (out of core)",
            gb(b.res.array_bytes),
            gb(g.budget)
        );
        return b.skip(why);
    }
    b.reinit();
    let po = PlanOptions {
        chunks: 1,
        block_steps: b.steps,
        scheme: Scheme::RegionSharing,
        buffer_sets: 1,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let g = b.gpu.as_ref().expect("still there");
    let (link, inputs) = (g.link, g.inputs.clone());
    let predicted = g.predict_in_core(&b.w, b.steps);
    let m = gpu::run_plan(
        &mut b.w,
        "in-core",
        &po,
        b.steps,
        b.args.fma,
        &link,
        Some(&inputs),
    );
    let m = m.map(|mut m| {
        m.predicted_seconds = predicted;
        m.notes.push(
            "1 chunk, 1 buffer set, block steps = steps: upload, all steps resident, download"
                .into(),
        );
        m
    });
    b.record("in-core", m);
}

/// The arrays in managed memory, the same kernels over the whole domain every step, without or
/// with `cuMemPrefetchAsync` (only where the arrays fit in free device memory).
fn run_um(b: &mut Bench, name: &str, prefetch: bool) {
    if let Err(why) = gpu::managed_fits(b.res.array_bytes) {
        return b.skip(format!("{name}: skipped: {why}"));
    }
    b.reinit();
    let link = b
        .gpu
        .as_ref()
        .expect("GPU configurations run with a GPU")
        .link;
    let m = gpu::run_um(&mut b.w, prefetch, b.steps, b.args.fma, &link);
    b.record(name, m);
}

/// Region sharing and the wavefront over a grid of chunks x block steps, with the in-core run
/// as one more point when it was measured, and the default configuration (else the tuned
/// region sharing) against the best of them.
fn run_grid(b: &mut Bench) {
    let steps = b.steps;
    let (dc, kc) = b.model.grid_defaults(b.size, b.args.quick);
    let dl = b.args.grid_chunks.clone().unwrap_or(dc);
    let kl = b.args.grid_steps.clone().unwrap_or(kc);
    for scheme in b.args.grid_schemes.clone() {
        println!("grid search, {scheme}, {steps} steps: chunks {dl:?} x block steps {kl:?}");
        for &k in kl.iter().filter(|&&k| k <= steps) {
            for &d in &dl {
                if let Some(p) = grid_point(b, scheme, d, k) {
                    b.res.grid.push(p);
                }
            }
        }
    }
    if let Some(m) = b.configs.iter().find(|m| m.config == "in-core") {
        b.res.grid.push(GridPoint {
            scheme: "in-core".into(),
            chunks: m.chunks,
            block_steps: m.block_steps,
            per_step: m.per_step,
            predicted_per_step: m.predicted_seconds.unwrap_or(f64::NAN) / steps as f64,
        });
    }
    judge_against_grid(b);
}

/// The default configuration's (else the tuned region sharing's) ratio to the grid's best.
fn judge_against_grid(b: &mut Bench) {
    let steps = b.steps;
    let best = (b.res.grid.iter())
        .min_by(|a, b| a.per_step.total_cmp(&b.per_step))
        .cloned();
    let judged = (b.configs.iter())
        .find(|m| m.config == "default")
        .or_else(|| b.configs.iter().find(|m| m.config == "region-sharing"));
    if let (Some(best), Some(m)) = (best, judged) {
        let ratio = m.per_step / best.per_step;
        b.res.tuner = Some(TunerResult {
            config: m.config.clone(),
            scheme: m.scheme.clone(),
            chunks: m.chunks,
            block_steps: m.block_steps,
            predicted_per_step: m.predicted_seconds.unwrap_or(f64::NAN) / steps as f64,
            measured_per_step: m.per_step,
            grid_best_scheme: best.scheme.clone(),
            grid_best_chunks: best.chunks,
            grid_best_steps: best.block_steps,
            grid_best_per_step: best.per_step,
            ratio_to_best: ratio,
            within_10_percent: ratio <= 1.10,
            within_5_percent: ratio <= 1.05,
        });
    }
}

/// One point of the grid search, if it can be planned and runs at `d` chunks.
fn grid_point(b: &mut Bench, scheme: Scheme, d: usize, k: usize) -> Option<GridPoint> {
    let steps = b.steps;
    let g = b.gpu.as_ref().expect("GPU configurations run with a GPU");
    let Some(c) = g.choice_at(&b.w, steps, scheme, (d, k)) else {
        println!("  d={d:<3} k={k:<3} does not fit / cannot be planned; skipped");
        return None;
    };
    let (pred, sets) = (c.predicted_seconds, c.buffer_sets);
    let po = PlanOptions {
        chunks: d,
        block_steps: k,
        scheme,
        buffer_sets: sets,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let link = g.link;
    match gpu::run_plan(&mut b.w, "grid", &po, steps, b.args.fma, &link, None) {
        Ok(m) if m.chunks != d => {
            println!(
                "  d={d:<3} k={k:<3} re-planned to {} chunks; skipped",
                m.chunks
            );
            None
        }
        Ok(m) => {
            println!(
                "  d={d:<3} k={k:<3} {:>9.5} s/step (predicted {:.5}){}",
                m.per_step,
                pred / steps as f64,
                match sets == scheme.buffer_sets() {
                    true => String::new(),
                    false => format!(", {sets} buffer sets"),
                }
            );
            Some(GridPoint {
                scheme: scheme.to_string(),
                chunks: d,
                block_steps: k,
                per_step: m.per_step,
                predicted_per_step: pred / steps as f64,
            })
        }
        Err(e) => {
            println!("  d={d:<3} k={k:<3} failed: {e}");
            None
        }
    }
}

/// Hand-written rayon loops over planes on all cores (the OpenMP baseline): `--cpu-steps`
/// steps (default: the GPU steps in core, 1 out of core; all of them when verifying).
fn run_cpu(b: &mut Bench) {
    let default = if b.size == "ooc" { 1 } else { b.steps };
    let cpu_steps = if b.verify {
        b.steps
    } else {
        b.args.cpu_steps.unwrap_or(default)
    };
    b.reinit();
    let t = Instant::now();
    b.w.cpu_steps(cpu_steps);
    let mut m = Measurement {
        config: "cpu".into(),
        chunks: 1,
        block_steps: cpu_steps,
        steps: cpu_steps,
        seconds: t.elapsed().as_secs_f64(),
        notes: vec![format!(
            "hand-written rayon loops over planes, {} threads",
            rayon::current_num_threads()
        )],
        ..Default::default()
    };
    finish(&mut m, None);
    b.record("cpu", Ok(m));
}

/// Verification: every configuration's checksum against the first one's.
pub fn compare_checksums(configs: &mut [Measurement]) {
    let Some(r) = configs.first().map(|m| m.checksum.unwrap_or(0.0)) else {
        return;
    };
    if configs.len() < 2 {
        return;
    }
    for m in configs.iter_mut() {
        let Some(c) = m.checksum else { continue };
        let rel = (c - r).abs() / r.abs().max(1e-30);
        let ok = rel < 1e-4;
        m.notes.push(format!(
            "checksum {c:.9e} vs the first configuration's {r:.9e}: rel. diff {rel:.1e} {}",
            if ok { "(agree)" } else { "(DISAGREE)" }
        ));
        if !ok {
            println!(
                "WARNING: {} disagrees with the first configuration: rel {rel:.2e}",
                m.config
            );
        }
    }
}
