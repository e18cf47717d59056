//! In-core kernel benchmark: the translator's marching kernels against its plain
//! one-thread-per-point kernels, for the three models, on arrays resident on the GPU.
//!
//! ```text
//! cargo bench --bench kernels -- --json benches/results/kernels.json
//! ```
//!
//! Each model runs through its generated `run` with one chunk and one block of all the steps
//! (so the arrays cross the link once each way, untimed), once per kernel form from the same
//! initial arrays. The figure is the kernels' event time per step from the run's report.
//! Bandwidth counts each model's compulsory bytes per point (every array read once and written
//! once per step; the cache and the halo traffic are the kernel's problem) and is set against
//! the device-to-device copy bandwidth measured in the same run, read plus write. The two forms
//! must produce the same bits (FMA contraction off), which the run checks and reports.

use clap::Parser;
use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc_runtime::exec::cuda;
use pacc_runtime::{BackendChoice, KernelForm, Options, Report};
use serde::Serialize;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "In-core kernel benchmark: marching vs plain generated kernels")]
struct Cli {
    /// Acoustic (`propagate`) cube side.
    #[arg(long, default_value_t = 768)]
    acoustic: usize,
    /// Acoustic with the absorbing layer (`propagate_sponge`, 4 arrays) cube side.
    #[arg(long, default_value_t = 512)]
    sponge: usize,
    /// Himeno (`jacobi`) shape I,J,K.
    #[arg(long, default_value = "512,512,768")]
    himeno: String,
    /// Laplace 2D (`jacobi`) square side.
    #[arg(long, default_value_t = 16384)]
    laplace: usize,
    /// Steps of the 3D models.
    #[arg(long, default_value_t = 20)]
    steps3d: usize,
    /// Iterations of the 2D model.
    #[arg(long, default_value_t = 200)]
    steps2d: usize,
    /// Models to run (comma separated): acoustic, sponge, himeno, laplace2d.
    #[arg(long, default_value = "acoustic,himeno,laplace2d")]
    only: String,
    /// Marching variants to measure besides the default, separated by `;`, each in
    /// `PACC_MARCH` syntax (e.g. `bx=64,by=8,unroll=2`), plus `pad=0` for device rows as long
    /// as the host's (`Options::row_padding(false)`; rows are padded to 128 bytes otherwise)
    /// and `fuse=N` for the fused kernel of N steps per launch (`Options::fuse`; the steps must
    /// be a multiple of N).
    #[arg(long, default_value = "")]
    variants: String,
    /// Also measure the codec kernels (encode and decode throughput, bits against the CPU codec)
    /// on a cube of this side: zfp at rates 8, 16 and 24 (f32) and 16 (f64), f16 (f32); 0: skip.
    #[arg(long, default_value_t = 0)]
    codec: usize,
    /// Write the results as JSON here.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Ignored (cargo bench passes it).
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Serialize)]
struct Row {
    model: &'static str,
    shape: Vec<usize>,
    form: String,
    steps: usize,
    differing_from_plain: usize,
    points_per_step: u64,
    bytes_per_point: u64,
    seconds_per_step: f64,
    gpoints_per_s: f64,
    gbytes_per_s: f64,
    fraction_of_dtod: f64,
    /// Form and resources of each kernel as compiled (form, block, registers, shared memory,
    /// blocks per SM).
    kernels: Vec<pacc_runtime::KernelStats>,
}

#[derive(Serialize)]
struct Out {
    device: String,
    dtod_gbytes_per_s: f64,
    rows: Vec<Row>,
    codec: Vec<cuda::CodecRates>,
}

/// The options of one measured run: in core, one block, the kernel form, padded rows or not,
/// steps per launch (fused kernels; 0: single-step kernels).
#[derive(Clone, Copy)]
struct Form {
    kernels: KernelForm,
    pad: bool,
    fuse: usize,
}

fn opts(steps: usize, form: Form) -> Options {
    let o = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(1)
        .block_steps(steps.max(1))
        .kernel_form(form.kernels)
        .row_padding(form.pad);
    if form.fuse > 1 {
        o.fuse(form.fuse)
    } else {
        o
    }
}

/// A variant's `PACC_MARCH` part, whether it pads rows (`pad=0` turns padding off) and its
/// steps per launch (`fuse=N`: the fused kernel).
fn split_variant(v: &str) -> (String, bool, usize) {
    let mut pad = true;
    let mut fuse = 0;
    let march: Vec<&str> = v
        .split(',')
        .filter(|item| match item.trim() {
            "pad=0" => {
                pad = false;
                false
            }
            "pad=1" => false,
            f if f.starts_with("fuse=") => {
                fuse = f["fuse=".len()..]
                    .parse()
                    .unwrap_or_else(|e| fail(format!("{f}: {e}")));
                false
            }
            _ => true,
        })
        .collect();
    (march.join(","), pad, fuse)
}

fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1)
}

fn diff3(a: &Array3<f32>, b: &Array3<f32>) -> usize {
    a.iter()
        .zip(b.iter())
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
}

/// Runs `f` with the plain kernels, then with the marching kernels in each variant (`""` is the
/// translator's default); returns the labelled reports and the elements in which each marching
/// run differs from the plain one.
fn forms<S: Clone>(
    state: &S,
    variants: &[String],
    mut f: impl FnMut(&mut S, Form) -> Report,
    diff: impl Fn(&S, &S) -> usize,
) -> Vec<(String, Report, usize)> {
    let mut plain = state.clone();
    let plain_form = Form {
        kernels: KernelForm::Plain,
        pad: true,
        fuse: 0,
    };
    let rp = f(&mut plain, plain_form);
    let mut out = vec![("plain".to_string(), rp, 0)];
    for v in variants {
        let (march, pad, fuse) = split_variant(v);
        // SAFETY (set_var): the benchmark is single-threaded while it sets the variable.
        std::env::set_var("PACC_MARCH", march);
        let mut m = state.clone();
        let form = Form {
            kernels: KernelForm::Marching,
            pad,
            fuse,
        };
        let r = f(&mut m, form);
        let label = if v.is_empty() {
            "marching".to_string()
        } else {
            format!("marching {v}")
        };
        out.push((label, r, diff(&plain, &m)));
    }
    std::env::remove_var("PACC_MARCH");
    out
}

fn row(
    model: &'static str,
    shape: &[usize],
    form: String,
    r: &Report,
    points: u64,
    bytes: u64,
    dtod: f64,
) -> Row {
    let s = r.stages.kernel / r.steps.max(1) as f64;
    let gb = points as f64 * bytes as f64 / s / 1e9;
    Row {
        model,
        shape: shape.to_vec(),
        form,
        steps: r.steps,
        differing_from_plain: 0,
        points_per_step: points,
        bytes_per_point: bytes,
        seconds_per_step: s,
        gpoints_per_s: points as f64 / s / 1e9,
        gbytes_per_s: gb,
        fraction_of_dtod: gb * 1e9 / dtod,
        kernels: r.kernels.clone(),
    }
}

/// The acoustic model on an `n`-cube (`propagate`, or `propagate_sponge` with a 20-plane
/// absorbing layer) in every form. Read-only arrays live outside the state the forms clone.
fn acoustic_forms(
    n: usize,
    steps: usize,
    sponge: bool,
    variants: &[String],
) -> Vec<(String, Report, usize)> {
    let shape = (n, n, n);
    let vel = Array3::from_elem(shape, acoustic::courant2(2000.0, 0.001, 10.0));
    let damp = sponge.then(|| acoustic::sponge(shape, 20, 0.05));
    let wavelet = acoustic::ricker(15.0, 0.001, steps);
    let c = n / 2;
    forms(
        &wavefield(shape),
        variants,
        |s, form| {
            let o = opts(steps, form);
            let r = match &damp {
                Some(d) => acoustic::propagate_sponge::run(
                    &mut s.0, &mut s.1, &vel, d, &wavelet, c, c, c, 100.0, steps, &o,
                ),
                None => acoustic::propagate::run(
                    &mut s.0, &mut s.1, &vel, &wavelet, c, c, c, 100.0, steps, &o,
                ),
            };
            r.unwrap_or_else(|e| fail(e)).1
        },
        |a, b| diff3(&a.0, &b.0) + diff3(&a.1, &b.1),
    )
}

/// The two time levels of a wavefield (equal at the start).
fn wavefield(shape: (usize, usize, usize)) -> (Array3<f32>, Array3<f32>) {
    let u = Array3::from_shape_fn(shape, |(z, y, x)| {
        ((z * 7 + y * 3 + x * 11) % 17) as f32 * 1e-3
    });
    (u.clone(), u)
}

/// A smooth wave with a little roughness, like a wavefield.
fn field(n: usize, z: usize, y: usize, x: usize) -> f64 {
    let k = std::f64::consts::TAU / n as f64;
    (k * 3.0 * x as f64).sin() * (k * 2.0 * y as f64).cos() * (k * z as f64 + 0.3).sin()
        + 1e-3 * (((z * 131 + y * 71 + x * 17) % 97) as f64 / 97.0 - 0.5)
}

fn codec_rates(n: usize) -> Vec<cuda::CodecRates> {
    use pacc_runtime::codec::CodecKind::{Zfp, F16};
    let shape = [n, n, n];
    let f32s = Array3::from_shape_fn((n, n, n), |(z, y, x)| field(n, z, y, x) as f32);
    let mut out = Vec::new();
    let data = f32s
        .as_slice()
        .unwrap_or_else(|| fail("array not contiguous"));
    for (codec, rate) in [(Zfp, 8.0), (Zfp, 16.0), (Zfp, 24.0), (F16, 16.0)] {
        out.push(cuda::measure_codec(codec, data, &shape, rate, 5).unwrap_or_else(|e| fail(e)));
    }
    drop(f32s);
    let m = n * 4 / 5;
    let f64s = Array3::from_shape_fn((m, m, m), |(z, y, x)| field(m, z, y, x));
    let data = f64s
        .as_slice()
        .unwrap_or_else(|| fail("array not contiguous"));
    let f64_rates = cuda::measure_codec(Zfp, data, &[m, m, m], 16.0, 5);
    out.push(f64_rates.unwrap_or_else(|e| fail(e)));
    println!(
        "\n{:<5} {:<16} {:<4} {:>5} {:>12} {:>12} {:>6} {:>10} {:>10}",
        "codec",
        "shape",
        "elem",
        "rate",
        "encode GB/s",
        "decode GB/s",
        "ratio",
        "rel. L2",
        "= CPU bits"
    );
    for c in &out {
        println!(
            "{:<5} {:<16} {:<4} {:>5} {:>12.0} {:>12.0} {:>6.1} {:>10.2e} {:>10}",
            c.codec,
            format!("{:?}", c.shape),
            c.elem,
            c.rate,
            c.encode_bytes_per_s / 1e9,
            c.decode_bytes_per_s / 1e9,
            c.ratio,
            c.rel_l2_error,
            c.matches_cpu
        );
    }
    out
}

/// The translator's default variant (`""`) and every variant of `--variants`.
fn variants(spec: &str) -> Vec<String> {
    std::iter::once(String::new())
        .chain(
            spec.split(';')
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.trim().to_string()),
        )
        .collect()
}

/// Himeno on the `--himeno` grid in every form.
fn himeno_forms(cli: &Cli, variants: &[String]) -> (Vec<usize>, Vec<(String, Report, usize)>) {
    let dims: Vec<usize> = cli
        .himeno
        .split(',')
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|e| fail(format!("--himeno: {e}")))
        })
        .collect();
    if dims.len() != 3 {
        fail("--himeno takes I,J,K");
    }
    let steps = cli.steps3d;
    let h = himeno::Himeno::new((dims[0], dims[1], dims[2]));
    let runs = forms(
        &h,
        variants,
        |s, form| {
            s.run(steps, &opts(steps, form))
                .unwrap_or_else(|e| fail(e))
                .1
        },
        |a, b| diff3(&a.p, &b.p) + diff3(&a.wrk2, &b.wrk2),
    );
    (dims, runs)
}

/// Laplace 2D on an `n`-square in every form.
fn laplace_forms(n: usize, steps: usize, variants: &[String]) -> Vec<(String, Report, usize)> {
    let init: (Array2<f32>, Array2<f32>) = laplace2d::init(n, n, 1.0);
    forms(
        &init,
        variants,
        |s, form| {
            laplace2d::jacobi::run(&mut s.0, &mut s.1, steps, &opts(steps, form))
                .unwrap_or_else(|e| fail(e))
                .1
        },
        |a, b| {
            a.0.iter()
                .zip(b.0.iter())
                .chain(a.1.iter().zip(b.1.iter()))
                .filter(|(x, y)| x.to_bits() != y.to_bits())
                .count()
        },
    )
}

/// Every model of `--only` in every form, one row per run.
fn measure_models(cli: &Cli, variants: &[String], dtod: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut push = |model: &'static str, shape: &[usize], runs, pts, bytes| {
        for (label, r, d) in runs {
            let mut row = row(model, shape, label, &r, pts, bytes, dtod);
            row.differing_from_plain = d;
            rows.push(row);
        }
    };
    let only: Vec<&str> = cli.only.split(',').collect();
    if only.contains(&"acoustic") {
        let n = cli.acoustic;
        let runs = acoustic_forms(n, cli.steps3d, false, variants);
        push("acoustic", &[n, n, n], runs, ((n - 8) as u64).pow(3), 16);
    }
    if only.contains(&"sponge") {
        let n = cli.sponge;
        let runs = acoustic_forms(n, cli.steps3d, true, variants);
        // prev, cur, vel, damp read, prev written.
        push("sponge", &[n, n, n], runs, ((n - 8) as u64).pow(3), 20);
    }
    if only.contains(&"himeno") {
        let (dims, runs) = himeno_forms(cli, variants);
        let pts = dims.iter().map(|&v| (v - 2) as u64).product();
        // jacobi: 13 arrays read, wrk2 written (56 B); the copy: wrk2 read, p written (8 B).
        push("himeno", &dims, runs, pts, 64);
    }
    if only.contains(&"laplace2d") {
        let n = cli.laplace;
        let runs = laplace_forms(n, cli.steps2d, variants);
        push("laplace2d", &[n, n], runs, ((n - 2) as u64).pow(2), 8);
    }
    rows
}

fn print_rows(rows: &[Row]) {
    println!(
        "\n{:<10} {:<16} {:<34} {:>9} {:>7} {:>6} {:>7} {:>7}  first kernel: form, block, regs, shared B, blocks/SM[, fused: evaluations (along z), lanes per point-step]",
        "model", "shape", "kernels", "ms/step", "Gpt/s", "GB/s", "of D2D", "differ"
    );
    for r in rows {
        let k = r.kernels.first().map_or(String::new(), |k| {
            let fused = k.fused.map_or(String::new(), |w| {
                format!(" {:.2} ({:.2}x) {:.2}", w.evaluations, w.planes, w.lanes)
            });
            format!(
                "{} {}x{} {} {} {}{fused}",
                k.form, k.block[0], k.block[1], k.registers, k.shared_bytes, k.blocks_per_sm
            )
        });
        println!(
            "{:<10} {:<16} {:<34} {:>9.3} {:>7.1} {:>6.0} {:>6.1}% {:>7}  {k}",
            r.model,
            format!("{:?}", r.shape),
            r.form,
            r.seconds_per_step * 1e3,
            r.gpoints_per_s,
            r.gbytes_per_s,
            100.0 * r.fraction_of_dtod,
            r.differing_from_plain
        );
    }
    println!("(differ: elements whose bits differ from the plain kernels' result)");
}

fn main() {
    let cli = Cli::parse();
    if let Err(reason) = cuda::available() {
        println!("no CUDA device ({reason}): the kernel benchmark needs a GPU; nothing measured");
        return;
    }
    let dtod = cuda::measure_dtod(2 << 30, 10).unwrap_or_else(|e| fail(e));
    let device = cuda::available()
        .map(|d| d.name.clone())
        .unwrap_or_default();
    println!(
        "{device}: device-to-device copy {:.0} GB/s (read + write)",
        dtod / 1e9
    );
    let variants = variants(&cli.variants);
    let t = Instant::now();
    let rows = measure_models(&cli, &variants, dtod);
    print_rows(&rows);
    let mut out = Out {
        device,
        dtod_gbytes_per_s: dtod / 1e9,
        rows,
        codec: Vec::new(),
    };
    if cli.codec > 0 {
        out.codec = codec_rates(cli.codec);
    }
    println!("({:.0} s in all)", t.elapsed().as_secs_f64());
    if let Some(p) = &cli.json {
        let s = serde_json::to_string_pretty(&out).unwrap_or_else(|e| fail(e));
        std::fs::write(p, s).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
    }
}
