//! Fidelity of on-the-fly compression: compressed runs against an uncompressed run, sampled every
//! N steps, for the 3D acoustic model and the 2D Gray-Scott model (two coupled fields).
//!
//! ```text
//! cargo run --release --example fidelity -- --json fidelity.json --svg fidelity.svg  # + fidelity.png
//! ```
//!
//! Every run (the uncompressed reference and one per `--rates` entry, all arrays compressed at
//! that rate with `compress_all`) advances in segments of `--every` steps, one call of the
//! generated `run` per segment with the same chunks and block steps; after each segment the
//! compressed runs are compared with the reference at the same step (`pacc::fidelity::compare`:
//! max and mean pointwise relative error, relative L2 error). A call loads raw arrays and writes
//! raw results, so each array is encoded and decoded (one lossy round trip) at the block
//! boundaries inside a segment: blocks per segment - 1 round trips per segment.

use clap::Parser;
use pacc::fidelity::{compare, Errors};
use pacc::models::acoustic::{self, propagate, HALO};
use pacc::models::grayscott;
use pacc::{BackendChoice, Options, Report, Scheme};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    about = "Fidelity of zfp compression: compressed runs against an uncompressed run, \
             acoustic (3D) and Gray-Scott (2D, two coupled fields)"
)]
struct Cli {
    /// Total time steps of every run.
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// Compare every N steps (each segment of N steps is one pipelined call).
    #[arg(long, default_value_t = 50, value_name = "N")]
    every: usize,
    /// Compression rates in bits per value, comma-separated (2D f32 arrays need multiples of 4
    /// below 32; 3D ones whole numbers from 1 to 31).
    #[arg(long, default_value = "8,12,16,24", value_name = "R,R,..")]
    rates: String,
    /// Which models to run, comma-separated: acoustic, grayscott.
    #[arg(long, default_value = "acoustic,grayscott", value_name = "M,M")]
    models: String,
    /// Points per side of the acoustic model's cubic grid.
    #[arg(long, default_value_t = 96, value_name = "N")]
    size_3d: usize,
    /// Points per side of the Gray-Scott model's square grid.
    #[arg(long, default_value_t = 256, value_name = "N")]
    size_2d: usize,
    /// Chunks of the outermost axis.
    #[arg(long, default_value_t = 4)]
    chunks: usize,
    /// Time steps per block (default: --every / 5, so each segment has 5 blocks).
    #[arg(long)]
    block_steps: Option<usize>,
    /// Backend: auto (CUDA when a device is present, else the CPU backend), cuda, cpu or
    /// shuffled[:SEED].
    #[arg(long, default_value = "auto")]
    backend: String,
    /// The codec: zfp (any rate the rules allow) or f16 (rate 16, f32 only).
    #[arg(long, default_value = "zfp")]
    codec: pacc::runtime::codec::CodecKind,
    #[arg(long, default_value = Scheme::DEFAULT.name(), help = scheme_help())]
    scheme: String,
    /// Floor of the pointwise relative error's denominator, as a fraction of the reference
    /// field's largest magnitude: e_i = |a_i - b_i| / max(|b_i|, FLOOR * max|b|).
    #[arg(long, default_value_t = pacc::fidelity::DEFAULT_FLOOR_FRACTION)]
    floor: f64,
    /// Write every sample as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write a plot of the relative L2 error against the step (SVG) to this file, and as PNG
    /// beside it (the same name ending in `.png`).
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
}

/// The schemes that can compress.
fn compressing() -> String {
    Scheme::names_where(|s| s.transfers().can_compress())
}

/// Why `--scheme` is refused when it cannot compress.
fn cannot_compress(scheme: Scheme) -> String {
    format!("--scheme {scheme} cannot compress; use {}", compressing())
}

/// `--scheme`'s help: the schemes that can compress, and the ones that cannot.
fn scheme_help() -> String {
    let cannot = Scheme::names_where(|s| !s.transfers().can_compress());
    format!(
        "How data moves: {} ({cannot} cannot compress)",
        compressing()
    )
}

/// Prints `error: msg` and exits with status 2.
fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

/// One compared field at one sample.
#[derive(Clone, Debug)]
struct Sample {
    step: usize,
    field: &'static str,
    errors: Errors,
}

/// One run (the reference: `rate` None) and what it measured.
struct RunLog {
    rate: Option<f64>,
    seconds: f64,
    link_bytes: u64,
    link_bytes_raw: u64,
    samples: Vec<Sample>,
}

impl RunLog {
    fn new(rate: Option<f64>) -> RunLog {
        RunLog {
            rate,
            seconds: 0.0,
            link_bytes: 0,
            link_bytes_raw: 0,
            samples: Vec::new(),
        }
    }

    fn add(&mut self, r: &Report) {
        self.seconds += r.wall_seconds;
        self.link_bytes += r.link_bytes();
        self.link_bytes_raw += r.link_bytes_raw();
    }

    fn ratio(&self) -> f64 {
        if self.link_bytes == 0 {
            1.0
        } else {
            self.link_bytes_raw as f64 / self.link_bytes as f64
        }
    }
}

/// What one model's study produced.
struct ModelLog {
    model: &'static str,
    shape: Vec<usize>,
    fields: Vec<&'static str>,
    params: serde_json::Value,
    backend: String,
    device: Option<String>,
    chunks: usize,
    block_steps: usize,
    /// (segment steps, blocks) of every segment, as the reports say.
    segments: Vec<(usize, usize)>,
    adjustments: Vec<String>,
    runs: Vec<RunLog>,
}

impl ModelLog {
    fn round_trips(&self) -> usize {
        self.segments.iter().map(|(_, b)| b.saturating_sub(1)).sum()
    }
}

/// Segment lengths: `every` steps each, the last one shorter if `every` does not divide `steps`.
fn segments(steps: usize, every: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut done = 0;
    while done < steps {
        let n = every.min(steps - done);
        v.push(n);
        done += n;
    }
    v
}

struct Setup {
    steps: usize,
    every: usize,
    block_steps: usize,
    scheme: Scheme,
    rates: Vec<f64>,
    opts: Options,
    floor: f64,
}

impl Setup {
    /// Blocks in a full segment of `every` steps.
    fn blocks(&self) -> usize {
        self.every.div_ceil(self.block_steps)
    }

    fn opts(&self, rate: Option<f64>) -> Options {
        match rate {
            None => self.opts.clone().no_compression(),
            // Every array the host keeps, inputs included (the docs' fidelity figures).
            Some(r) => (self.opts.clone().compress_all(r).compress_inputs(true))
                .compress_when(pacc::runtime::CompressWhen::Always),
        }
    }
}

/// Records the first report's configuration and checks that every run uses the same.
fn note_report(log: &mut ModelLog, seg: usize, first_run: bool, r: &Report, seg_steps: usize) {
    if first_run {
        if seg == 0 {
            log.backend = r.backend.clone();
            log.device = r.device.clone();
            log.chunks = r.chunks;
            log.block_steps = r.block_steps;
        }
        for a in &r.adjustments {
            if !log.adjustments.contains(a) {
                log.adjustments.push(a.clone());
            }
        }
        let k = r.block_steps.max(1);
        log.segments.push((seg_steps, seg_steps.div_ceil(k)));
    }
}

fn acoustic_study(s: &Setup, n: usize) -> ModelLog {
    let shape = (n, n, n);
    let (dx, dt, f0, vtop, vbottom, layers) = (10.0, 0.001, 15.0, 2000.0, 4000.0, 4);
    let vel = acoustic::layered_vel(shape, layers, vtop, vbottom, dt, dx);
    let wavelet = acoustic::ricker(f0, dt, s.steps);
    let dx2 = (dx * dx) as f32;
    let (sz, sy, sx) = (n / 2, n / 2, n / 2);
    println!(
        "acoustic: {n}^3 grid, {layers} layers {vtop}..{vbottom} m/s, dx {dx} m, dt {dt} s \
         (Courant {:.3}), Ricker {f0} Hz at the centre, reflecting faces; compared: cur (the \
         newest wavefield)",
        vbottom * dt / dx
    );
    let mut log = ModelLog {
        model: "acoustic",
        shape: vec![n, n, n],
        fields: vec!["cur"],
        params: serde_json::json!({
            "dx": dx, "dt": dt, "f0": f0, "layers": layers, "v_top": vtop, "v_bottom": vbottom,
            "source": [sz, sy, sx], "compressed_arrays": ["prev", "cur", "vel"],
        }),
        backend: String::new(),
        device: None,
        chunks: 0,
        block_steps: 0,
        segments: Vec::new(),
        adjustments: Vec::new(),
        runs: Vec::new(),
    };
    let rates: Vec<Option<f64>> = std::iter::once(None)
        .chain(s.rates.iter().map(|&r| Some(r)))
        .collect();
    let mut state: Vec<(ndarray::Array3<f32>, ndarray::Array3<f32>)> = rates
        .iter()
        .map(|_| (ndarray::Array3::zeros(shape), ndarray::Array3::zeros(shape)))
        .collect();
    log.runs = rates.iter().map(|&r| RunLog::new(r)).collect();
    let mut done = 0;
    for (seg, len) in segments(s.steps, s.every).into_iter().enumerate() {
        for (i, rate) in rates.iter().enumerate() {
            let (prev, cur) = &mut state[i];
            let ((), r) = propagate::run(
                prev,
                cur,
                &vel,
                &wavelet[done..],
                sz,
                sy,
                sx,
                dx2,
                len,
                &s.opts(*rate),
            )
            .unwrap_or_else(|e| fail(format!("acoustic, {}: {e}", rate_name(*rate))));
            note_report(&mut log, seg, i == 0, &r, len);
            log.runs[i].add(&r);
        }
        done += len;
        let reference = &state[0].1;
        for ((_, cur), run) in state.iter().zip(log.runs.iter_mut()).skip(1) {
            let e = compare(cur, reference, s.floor);
            run.samples.push(Sample {
                step: done,
                field: "cur",
                errors: e,
            });
        }
        progress(&log, done);
    }
    log
}

fn grayscott_study(s: &Setup, n: usize) -> ModelLog {
    let p = grayscott::DEFAULT;
    let seed = 1;
    println!(
        "grayscott: {n}^2 grid, Du {} Dv {} F {} k {} dt {}, seeded square in the middle \
         (seed {seed}); compared: u and v",
        p.du, p.dv, p.f, p.k, p.dt
    );
    let mut log = ModelLog {
        model: "grayscott",
        shape: vec![n, n],
        fields: vec!["u", "v"],
        params: serde_json::json!({
            "du": p.du, "dv": p.dv, "f": p.f, "k": p.k, "dt": p.dt, "seed": seed,
            "compressed_arrays": ["u", "v", "u2", "v2"],
        }),
        backend: String::new(),
        device: None,
        chunks: 0,
        block_steps: 0,
        segments: Vec::new(),
        adjustments: Vec::new(),
        runs: Vec::new(),
    };
    let rates: Vec<Option<f64>> = std::iter::once(None)
        .chain(s.rates.iter().map(|&r| Some(r)))
        .collect();
    let mut state: Vec<_> = rates.iter().map(|_| grayscott::init(n, n, seed)).collect();
    log.runs = rates.iter().map(|&r| RunLog::new(r)).collect();
    let mut done = 0;
    for (seg, len) in segments(s.steps, s.every).into_iter().enumerate() {
        for (i, rate) in rates.iter().enumerate() {
            let (u, v, u2, v2) = &mut state[i];
            let ((), r) = grayscott::step::run(
                u,
                v,
                u2,
                v2,
                p.du,
                p.dv,
                p.f,
                p.k,
                p.dt,
                len,
                &s.opts(*rate),
            )
            .unwrap_or_else(|e| fail(format!("grayscott, {}: {e}", rate_name(*rate))));
            note_report(&mut log, seg, i == 0, &r, len);
            log.runs[i].add(&r);
        }
        done += len;
        let (u_ref, v_ref) = (&state[0].0, &state[0].1);
        for ((u, v, _, _), run) in state.iter().zip(log.runs.iter_mut()).skip(1) {
            let eu = compare(u, u_ref, s.floor);
            let ev = compare(v, v_ref, s.floor);
            run.samples.push(Sample {
                step: done,
                field: "u",
                errors: eu,
            });
            run.samples.push(Sample {
                step: done,
                field: "v",
                errors: ev,
            });
        }
        progress(&log, done);
    }
    log
}

/// One line per sample on standard error, so a long run shows it is alive.
fn progress(log: &ModelLog, step: usize) {
    let mut line = format!("  {} step {step}:", log.model);
    for run in &log.runs[1..] {
        for smp in run.samples.iter().filter(|x| x.step == step) {
            let _ = write!(
                line,
                " {}@{}={:.2e}",
                smp.field,
                rate_name(run.rate),
                smp.errors.rel_l2
            );
        }
    }
    eprintln!("{line}");
}

fn rate_name(rate: Option<f64>) -> String {
    match rate {
        None => "uncompressed".into(),
        Some(r) => format!("rate {r}"),
    }
}

fn parse_rates(s: &str, models: &[&str]) -> Result<Vec<f64>, String> {
    let mut v = Vec::new();
    for p in s.split(',') {
        let p = p.trim();
        let r: f64 = p
            .parse()
            .map_err(|_| format!("--rates: `{p}` is not a number (expected e.g. 8,12,16,24)"))?;
        if !(r.is_finite() && r.fract() == 0.0 && (1.0..32.0).contains(&r)) {
            return Err(format!(
                "--rates: {p} is not a whole number of bits per value from 1 to 31 (the arrays \
                 are f32)"
            ));
        }
        if models.contains(&"grayscott") && r as u32 % 4 != 0 {
            return Err(format!(
                "--rates: {p} is not a multiple of 4, which 2D arrays need (each zfp block of \
                 4x4 values must fill whole 64-bit words); use 8, 12, 16, 20, 24 or 28, or run \
                 only --models acoustic"
            ));
        }
        if v.contains(&r) {
            return Err(format!("--rates: {p} is given twice"));
        }
        v.push(r);
    }
    Ok(v)
}

fn parse_models(s: &str) -> Result<Vec<&'static str>, String> {
    let mut v = Vec::new();
    for p in s.split(',') {
        let m = match p.trim() {
            "acoustic" => "acoustic",
            "grayscott" | "gray-scott" => "grayscott",
            other => {
                return Err(format!(
                    "--models: unknown model `{other}` (expected acoustic, grayscott)"
                ))
            }
        };
        if !v.contains(&m) {
            v.push(m);
        }
    }
    Ok(v)
}

/// The command line checked before anything runs (bad values, sizes and unwritable outputs
/// exit with a message): the run's settings and the models to study.
fn checked(cli: &Cli) -> (Setup, Vec<&'static str>) {
    if cli.steps == 0 {
        fail("--steps must be at least 1");
    }
    if cli.every == 0 {
        fail("--every must be at least 1");
    }
    let every = cli.every.min(cli.steps);
    let block_steps = cli.block_steps.unwrap_or((every / 5).max(1));
    if block_steps == 0 {
        fail("--block-steps must be at least 1");
    }
    if cli.chunks == 0 {
        fail("--chunks must be at least 1");
    }
    if !(cli.floor.is_finite() && cli.floor >= 0.0) {
        fail(format!(
            "--floor must be a finite number >= 0, got {}",
            cli.floor
        ));
    }
    let models = parse_models(&cli.models).unwrap_or_else(|e| fail(e));
    // Refuse bad sizes and unwritable outputs before anything runs.
    if models.contains(&"acoustic") && cli.size_3d <= 2 * HALO {
        fail(format!(
            "--size-3d: the acoustic grid needs more than {} points per side (a zero frame of \
             {HALO} planes on each face), got {}",
            2 * HALO,
            cli.size_3d
        ));
    }
    if models.contains(&"grayscott") && cli.size_2d < 3 {
        fail(format!(
            "--size-2d: the Gray-Scott grid needs at least 3 points per side, got {}",
            cli.size_2d
        ));
    }
    for (flag, path) in [("--json", &cli.json), ("--svg", &cli.svg)] {
        if let Some(p) = path {
            std::fs::File::create(p)
                .unwrap_or_else(|e| fail(format!("{flag} {}: {e}", p.display())));
        }
    }
    let rates = parse_rates(&cli.rates, &models).unwrap_or_else(|e| fail(e));
    let backend: BackendChoice = cli
        .backend
        .parse()
        .unwrap_or_else(|e| fail(format!("--backend: {e}")));
    if backend == BackendChoice::Serial {
        fail("--backend serial does not compress; use auto, cuda, cpu or shuffled[:SEED]");
    }
    let scheme: Scheme = cli
        .scheme
        .parse()
        .unwrap_or_else(|e| fail(format!("--scheme: {e}")));
    if !scheme.transfers().can_compress() {
        fail(cannot_compress(scheme));
    }
    let setup = Setup {
        steps: cli.steps,
        every,
        block_steps,
        scheme,
        rates,
        opts: Options::new()
            .backend(backend)
            .chunks(cli.chunks)
            .block_steps(block_steps)
            .scheme(scheme)
            .codec(cli.codec),
        floor: cli.floor,
    };
    if setup.blocks() < 2 {
        eprintln!(
            "warning: --block-steps {block_steps} >= --every {every}: each segment is one block, \
             so nothing is ever compressed"
        );
    }
    (setup, models)
}

/// The command and what the study compares, before the first run.
fn print_intro(cli: &Cli, setup: &Setup, command: &str) {
    let (every, block_steps, blocks) = (setup.every, setup.block_steps, setup.blocks());
    println!("fidelity: {command}");
    println!(
        "{} steps, sampled every {every} steps ({} segments, one pipelined call each), {} \
         chunks, {block_steps} block steps, scheme {}, rates {:?} bits per value \
         (compress_all: every array the host keeps between blocks)",
        setup.steps,
        segments(setup.steps, every).len(),
        cli.chunks,
        setup.scheme,
        setup.rates
    );
    println!(
        "each call starts from raw arrays and ends with raw results, so a full segment of {every} \
         steps is {blocks} block(s) and {} lossy round trip(s) (encode + decode) of each array",
        blocks.saturating_sub(1)
    );
    println!(
        "pointwise relative error: |a - b| / max(|b|, {:e} * max|b|), b the uncompressed run",
        setup.floor
    );
}

/// `--json` and `--svg`.
fn write_outputs(cli: &Cli, logs: &[ModelLog], setup: &Setup, command: &str) {
    if let Some(path) = &cli.json {
        let j = to_json(logs, setup, command);
        let text = serde_json::to_string_pretty(&j).unwrap_or_else(|e| fail(e));
        std::fs::write(path, text + "\n")
            .unwrap_or_else(|e| fail(format!("--json {}: {e}", path.display())));
        println!("JSON written to {}", path.display());
    }
    if let Some(path) = &cli.svg {
        let written = plot(logs, setup, path)
            .unwrap_or_else(|e| fail(format!("--svg {}: {e}", path.display())));
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        println!("plot written to {}", names.join(" and "));
    }
}

fn main() {
    let cli = Cli::parse();
    let (setup, models) = checked(&cli);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    print_intro(&cli, &setup, &command);

    let started = Instant::now();
    let mut logs = Vec::new();
    for m in &models {
        let log = match *m {
            "acoustic" => acoustic_study(&setup, cli.size_3d),
            _ => grayscott_study(&setup, cli.size_2d),
        };
        print_model(&log, &setup);
        logs.push(log);
    }
    print_summary(&logs);
    println!("total wall time {:.1} s", started.elapsed().as_secs_f64());
    write_outputs(&cli, &logs, &setup, &command);
}

fn print_model(log: &ModelLog, s: &Setup) {
    println!();
    println!(
        "== {} {} on {}{}: {} chunks, {} block steps, {} lossy round trips of each array in {} \
         steps",
        log.model,
        log.shape
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("x"),
        log.backend,
        log.device
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default(),
        log.chunks,
        log.block_steps,
        log.round_trips(),
        s.steps
    );
    for a in &log.adjustments {
        println!("   adjusted: {a}");
    }
    for run in &log.runs {
        println!(
            "   {:<13} {:>8.2} s, {:>6.2}x fewer bytes over the link than raw",
            rate_name(run.rate),
            run.seconds,
            run.ratio()
        );
    }
    println!(
        "{:>6} {:>5} {:>5} {:>11} {:>11} {:>11} {:>11}",
        "step", "field", "rate", "max rel", "mean rel", "rel L2", "maxabs/max"
    );
    let steps: Vec<usize> = log.runs.get(1).map_or(Vec::new(), |r| {
        let mut v: Vec<usize> = r.samples.iter().map(|x| x.step).collect();
        v.dedup();
        v
    });
    for step in steps {
        for field in &log.fields {
            for run in &log.runs[1..] {
                for smp in run
                    .samples
                    .iter()
                    .filter(|x| x.step == step && x.field == *field)
                {
                    let e = &smp.errors;
                    println!(
                        "{:>6} {:>5} {:>5} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e}",
                        step,
                        field,
                        run.rate.unwrap_or(0.0),
                        e.max_rel,
                        e.mean_rel,
                        e.rel_l2,
                        e.max_abs_over_max
                    );
                }
            }
        }
    }
}

/// Final-step errors per model, field and rate, and the growth of the L2 error from the first
/// sample to the last.
fn print_summary(logs: &[ModelLog]) {
    println!();
    println!("== summary: errors at the last step, and growth of rel L2 from the first sample");
    println!(
        "{:<10} {:>5} {:>5} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7}",
        "model",
        "field",
        "rate",
        "step",
        "max rel",
        "mean rel",
        "rel L2",
        "maxabs/max",
        "L2 first",
        "growth"
    );
    for log in logs {
        for field in &log.fields {
            for run in &log.runs[1..] {
                let mine: Vec<&Sample> = run.samples.iter().filter(|x| x.field == *field).collect();
                let (Some(first), Some(last)) = (mine.first(), mine.last()) else {
                    continue;
                };
                let e = &last.errors;
                println!(
                    "{:<10} {:>5} {:>5} {:>6} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>7.2}",
                    log.model,
                    field,
                    run.rate.unwrap_or(0.0),
                    last.step,
                    e.max_rel,
                    e.mean_rel,
                    e.rel_l2,
                    e.max_abs_over_max,
                    first.errors.rel_l2,
                    e.rel_l2 / first.errors.rel_l2
                );
            }
        }
    }
}

fn num(x: f64) -> serde_json::Value {
    // JSON has no infinity: write it as a string.
    if x.is_finite() {
        serde_json::json!(x)
    } else {
        serde_json::json!(x.to_string())
    }
}

fn to_json(logs: &[ModelLog], s: &Setup, command: &str) -> serde_json::Value {
    let models: Vec<_> = logs
        .iter()
        .map(|log| {
            let runs: Vec<_> = log
                .runs
                .iter()
                .map(|run| {
                    let samples: Vec<_> = run
                        .samples
                        .iter()
                        .map(|x| {
                            serde_json::json!({
                                "step": x.step,
                                "field": x.field,
                                "max_rel": num(x.errors.max_rel),
                                "mean_rel": num(x.errors.mean_rel),
                                "rel_l2": num(x.errors.rel_l2),
                                "max_abs_over_max": num(x.errors.max_abs_over_max),
                                "ref_max": num(x.errors.ref_max),
                            })
                        })
                        .collect();
                    serde_json::json!({
                        "rate": run.rate,
                        "wall_seconds": run.seconds,
                        "link_bytes": run.link_bytes,
                        "link_bytes_raw": run.link_bytes_raw,
                        "compression_ratio": run.ratio(),
                        "samples": samples,
                    })
                })
                .collect();
            serde_json::json!({
                "model": log.model,
                "shape": log.shape,
                "fields": log.fields,
                "params": log.params,
                "backend": log.backend,
                "device": log.device,
                "chunks": log.chunks,
                "block_steps": log.block_steps,
                "segments": log.segments.iter().map(|(n, b)| serde_json::json!({"steps": n, "blocks": b})).collect::<Vec<_>>(),
                "lossy_round_trips": log.round_trips(),
                "adjustments": log.adjustments,
                "runs": runs,
            })
        })
        .collect();
    serde_json::json!({
        "study": "fidelity of on-the-fly zfp compression against an uncompressed run",
        "command": command,
        "steps": s.steps,
        "every": s.every,
        "rates": s.rates,
        "floor_fraction": s.floor,
        "metrics": {
            "max_rel": "max_i |a_i - b_i| / max(|b_i|, floor_fraction * max|b|)",
            "mean_rel": "mean over all points of the same",
            "rel_l2": "||a - b||_2 / ||b||_2",
            "max_abs_over_max": "max_i |a_i - b_i| / max|b|",
        },
        "models": models,
    })
}

// ---- the plot -------------------------------------------------------------------------------

const COLORS: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Dash patterns (dash, gap in pixels) telling models and fields apart; `None`: solid.
const DASHES: [Option<(u32, u32)>; 4] = [None, Some((7, 4)), Some((2, 3)), Some((12, 4))];

/// One line of the plot: a model's field at one rate.
struct Line {
    name: String,
    color: RGBColor,
    dash: Option<(u32, u32)>,
    points: Vec<(f64, f64)>,
}

/// The lines: one per model/field/rate, colour by rate, dash pattern by model/field; only the
/// points a log axis can show.
fn lines(logs: &[ModelLog], s: &Setup) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut series = 0;
    for log in logs {
        for field in &log.fields {
            let dash = DASHES[series % DASHES.len()];
            series += 1;
            for run in &log.runs[1..] {
                let rate = run.rate.unwrap_or(0.0);
                let ci = s.rates.iter().position(|&r| r == rate).unwrap_or(0);
                lines.push(Line {
                    name: format!("{} {} rate {}", log.model, field, rate),
                    color: COLORS[ci % COLORS.len()],
                    dash,
                    points: run
                        .samples
                        .iter()
                        .filter(|x| x.field == *field && x.errors.rel_l2.is_finite())
                        .filter(|x| x.errors.rel_l2 > 0.0)
                        .map(|x| (x.step as f64, x.errors.rel_l2))
                        .collect(),
                });
            }
        }
    }
    lines
}

/// Relative L2 error against the step, log y axis, as SVG to `path` and PNG beside it (same
/// name, `.png`); the files written. Text is drawn with the DejaVu font compiled in.
fn plot(logs: &[ModelLog], s: &Setup, path: &Path) -> Result<Vec<PathBuf>, String> {
    for (style, bytes) in [
        (FontStyle::Normal, dejavu::sans::regular()),
        (FontStyle::Bold, dejavu::sans::bold()),
    ] {
        plotters::style::register_font("sans-serif", style, bytes)
            .map_err(|_| "the bundled DejaVu font does not load".to_string())?;
    }
    let lines = lines(logs, s);
    let png = path.with_extension("png");
    let size = (1000, 560);
    draw(
        SVGBackend::new(path, size).into_drawing_area(),
        logs,
        s,
        &lines,
    )?;
    draw(
        BitMapBackend::new(&png, size).into_drawing_area(),
        logs,
        s,
        &lines,
    )?;
    Ok(vec![path.to_path_buf(), png])
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    logs: &[ModelLog],
    s: &Setup,
    lines: &[Line],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing the plot: {e}");
    root.fill(&WHITE).map_err(e)?;
    let backend = logs.first().map(|l| l.backend.as_str()).unwrap_or("");
    let title = format!("Compressed vs uncompressed run: relative L2 error ({backend} backend)");
    let root = root
        .titled(
            &title,
            ("sans-serif", 16).into_font().style(FontStyle::Bold),
        )
        .map_err(e)?;
    let sub: Vec<String> = logs
        .iter()
        .map(|l| {
            let shape: Vec<String> = l.shape.iter().map(|n| n.to_string()).collect();
            format!(
                "{} {} ({} round trips)",
                l.model,
                shape.join("x"),
                l.round_trips()
            )
        })
        .collect();
    let root = root
        .titled(
            &sub.join(", "),
            ("sans-serif", 12)
                .into_font()
                .color(&RGBColor(0x44, 0x44, 0x44)),
        )
        .map_err(e)?;
    let vals = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let vmax = vals.clone().fold(f64::MIN_POSITIVE, f64::max);
    let vmin = vals.fold(vmax, f64::min);
    let lo = 10f64.powf(vmin.log10().floor());
    let hi = 10f64.powf(vmax.log10().ceil()).max(lo * 10.0);
    let caption = format!(
        "time step (sampled every {} steps, one pipelined call each; colour: rate in bits per \
         value, dash: model and field)",
        s.every
    );
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..s.steps as f64, (lo..hi).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(caption)
        .y_desc("relative L2 error ||a - b|| / ||b||")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    for l in lines {
        let style = l.color.stroke_width(2);
        let drawn = match l.dash {
            None => chart.draw_series(LineSeries::new(l.points.iter().copied(), style)),
            Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(
                l.points.iter().copied(),
                dash,
                gap,
                style,
            )),
        };
        let (color, dash) = (l.color, l.dash);
        drawn
            .map_err(e)?
            .label(l.name.as_str())
            .legend(move |(x, y)| {
                let style = color.stroke_width(2);
                match dash {
                    None => PathElement::new(vec![(x, y), (x + 30, y)], style).into_dyn(),
                    Some((d, g)) => {
                        DashedPathElement::new(vec![(x, y), (x + 30, y)], d, g, style).into_dyn()
                    }
                }
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}
