//! 3D acoustic wave propagation (2nd order in time, 8th order in space) with a Ricker source,
//! run through the pipeline: the main example.
//!
//! ```text
//! cargo run --release --example acoustic -- --size 128 --steps 200 --verify
//! ```
//!
//! It runs on the GPU when there is one, otherwise on the CPU backend, and says which. The figure
//! of merit is the L2 norm of the newest wavefield.

mod common;

use clap::Parser;
use common::{diff, fail, json_summary, parse_list, PipelineArgs, Verifier};
use pacc::models::acoustic::{self, propagate, propagate_sponge, HALO};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(about = "3D acoustic wave propagation (8th order in space), through pacc's pipeline")]
struct Cli {
    /// Grid points per side of a cubic domain.
    #[arg(long, default_value_t = 128)]
    size: usize,
    /// Domain shape Z,Y,X (Z is split into chunks); overrides --size.
    #[arg(long, value_name = "Z,Y,X")]
    shape: Option<String>,
    /// Time steps.
    #[arg(long, default_value_t = 200)]
    steps: usize,
    /// Grid spacing (m), the same on every axis.
    #[arg(long, default_value_t = 10.0)]
    dx: f64,
    /// Time step (s).
    #[arg(long, default_value_t = 0.001)]
    dt: f64,
    /// Velocity (m/s) of a uniform medium, or of the top layer with --layers.
    #[arg(long, default_value_t = 2000.0)]
    velocity: f64,
    /// Layered medium: this many horizontal layers of equal thickness along Z, velocities rising
    /// linearly from --velocity to --vmax (0 or 1: uniform).
    #[arg(long, default_value_t = 0)]
    layers: usize,
    /// Velocity (m/s) of the bottom layer with --layers.
    #[arg(long, default_value_t = 4000.0)]
    vmax: f64,
    /// Peak frequency (Hz) of the Ricker source.
    #[arg(long, default_value_t = 15.0)]
    f0: f64,
    /// Source point Z,Y,X (default: the centre).
    #[arg(long, value_name = "Z,Y,X")]
    source: Option<String>,
    /// Width (points) of an absorbing sponge along every face (0: none, the faces reflect).
    #[arg(long, default_value_t = 0)]
    sponge: usize,
    /// Damping at the outer edge of the sponge (e = gamma dt / 2).
    #[arg(long, default_value_t = 0.1)]
    sponge_strength: f32,
    /// Write the middle Z slice of the newest wavefield as a PNG (blue - white - red).
    #[arg(long, value_name = "FILE.png")]
    snapshot: Option<PathBuf>,
    /// Start from a deterministic pseudo-random field of this amplitude in both time levels
    /// (inside the zero frame) instead of rest, so every plane carries data; for checking large
    /// runs plane by plane.
    #[arg(long, value_name = "AMPLITUDE")]
    init_noise: Option<f32>,
    /// After the run, run again from the same start with D chunks and K block steps, and compare
    /// every plane of both wavefields exactly (by 64-bit hashes, so it needs no second copy of
    /// the arrays: the check for runs too large to verify against the serial function).
    #[arg(long, value_name = "D,K")]
    compare_with: Option<String>,
    #[command(flatten)]
    pipe: PipelineArgs,
}

/// Both time levels at rest, or filled with reproducible noise inside the zero frame.
fn initial_field(
    shape: (usize, usize, usize),
    noise: Option<f32>,
    seed: u64,
) -> ndarray::Array3<f32> {
    let mut a = ndarray::Array3::<f32>::zeros(shape);
    if noise.is_some() {
        reset_field(&mut a, noise, seed);
    }
    a
}

/// Overwrites `a` with [`initial_field`]'s values, in place and in parallel (a second copy of
/// a 30 GB wavefield may not fit in host memory).
fn reset_field(a: &mut ndarray::Array3<f32>, noise: Option<f32>, seed: u64) {
    use rayon::prelude::*;
    let (nz, ny, nx) = a.dim();
    let plane = ny * nx;
    let slice = a
        .as_slice_mut()
        .expect("the example's arrays are contiguous");
    slice.par_chunks_mut(plane).enumerate().for_each(|(z, p)| {
        p.fill(0.0);
        let Some(amp) = noise else { return };
        if z < HALO || z + HALO >= nz {
            return;
        }
        for y in HALO..ny - HALO {
            for x in HALO..nx - HALO {
                let i = ((z * ny + y) * nx + x) as u64;
                let h = splitmix(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                p[y * nx + x] = amp * ((h >> 40) as f32 / (1u64 << 24) as f32 - 0.5);
            }
        }
    });
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A 64-bit FNV-1a hash of every plane's bits, computed in parallel.
fn plane_hashes(a: &ndarray::Array3<f32>) -> Vec<u64> {
    use rayon::prelude::*;
    let plane = a.shape()[1] * a.shape()[2];
    let slice = a.as_slice().expect("pipelined arrays are contiguous");
    slice
        .par_chunks(plane)
        .map(|p| {
            p.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                (h ^ v.to_bits() as u64).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect()
}

fn main() {
    let cli = Cli::parse();
    let opts = cli.pipe.options().unwrap_or_else(|e| fail(e));
    let shape = match &cli.shape {
        Some(s) => {
            let v = parse_list::<usize>(s, 3, "--shape").unwrap_or_else(|e| fail(e));
            (v[0], v[1], v[2])
        }
        None => (cli.size, cli.size, cli.size),
    };
    let (nz, ny, nx) = shape;
    if nz.min(ny).min(nx) <= 2 * HALO {
        fail(format!(
            "every axis needs more than {} points (the zero frame is {HALO} planes on each face)",
            2 * HALO
        ));
    }
    let src = match &cli.source {
        Some(s) => parse_list::<usize>(s, 3, "--source").unwrap_or_else(|e| fail(e)),
        None => vec![nz / 2, ny / 2, nx / 2],
    };
    for (a, (&i, n)) in src.iter().zip([nz, ny, nx]).enumerate() {
        if i < HALO || i >= n - HALO {
            fail(format!(
                "--source: index {i} on axis {a} lies in the zero frame; use {HALO}..{}",
                n - HALO
            ));
        }
    }
    let layered = cli.layers > 1;
    let vtop = cli.velocity;
    let vbottom = if layered { cli.vmax } else { cli.velocity };
    let courant = vtop.max(vbottom) * cli.dt / cli.dx;
    let limit = acoustic::stability_limit();
    if courant > limit {
        fail(format!(
            "unstable: the Courant number v dt / dx = {courant:.4} exceeds {limit:.4} for this \
             scheme; lower --dt or the velocity, or raise --dx"
        ));
    }

    let vel = acoustic::layered_vel(shape, cli.layers, vtop, vbottom, cli.dt, cli.dx);
    let wavelet = acoustic::ricker(cli.f0, cli.dt, cli.steps);
    let dx2 = (cli.dx * cli.dx) as f32;
    let damp = (cli.sponge > 0).then(|| acoustic::sponge(shape, cli.sponge, cli.sponge_strength));
    let mut prev = initial_field(shape, cli.init_noise, 1);
    let mut cur = initial_field(shape, cli.init_noise, 2);
    let (sz, sy, sx) = (src[0], src[1], src[2]);
    let second = cli.compare_with.as_deref().map(|s| {
        let v = parse_list::<usize>(s, 2, "--compare-with").unwrap_or_else(|e| fail(e));
        (v[0], v[1])
    });

    println!(
        "acoustic: {nz}x{ny}x{nx} grid, {} steps, dx {} m, dt {} s, {}, Courant {courant:.3} \
         (limit {limit:.3}), Ricker {} Hz at ({sz},{sy},{sx}), {}",
        cli.steps,
        cli.dx,
        cli.dt,
        if layered {
            format!("{} layers {vtop}..{vbottom} m/s", cli.layers)
        } else {
            format!("v = {vtop} m/s")
        },
        cli.f0,
        match cli.sponge {
            0 => "no sponge".to_string(),
            w => format!("sponge {w} points"),
        }
    );

    let run = |prev: &mut ndarray::Array3<f32>,
               cur: &mut ndarray::Array3<f32>,
               opts: &pacc::Options| match &damp {
        None => propagate::run(prev, cur, &vel, &wavelet, sz, sy, sx, dx2, cli.steps, opts),
        Some(d) => propagate_sponge::run(
            prev, cur, &vel, d, &wavelet, sz, sy, sx, dx2, cli.steps, opts,
        ),
    };
    let ((), report) = run(&mut prev, &mut cur, &opts).unwrap_or_else(|e| fail(e));
    print!("{report}");
    let norm = acoustic::l2_norm(&cur);
    println!("L2 norm of the newest wavefield: {norm:.9e}");

    if let Some(path) = &cli.snapshot {
        acoustic::write_png(path, &cur, nz / 2).unwrap_or_else(|e| fail(e));
        println!(
            "snapshot of slice z = {} written to {}",
            nz / 2,
            path.display()
        );
    }

    let mut verified = None;
    if let Some((d, k)) = second {
        let first = (plane_hashes(&prev), plane_hashes(&cur));
        reset_field(&mut prev, cli.init_noise, 1);
        reset_field(&mut cur, cli.init_noise, 2);
        let opts2 = opts.clone().chunks(d).block_steps(k);
        let ((), report2) = run(&mut prev, &mut cur, &opts2).unwrap_or_else(|e| fail(e));
        print!("second run: {report2}");
        let again = (plane_hashes(&prev), plane_hashes(&cur));
        let differ = |a: &[u64], b: &[u64]| a.iter().zip(b).filter(|(x, y)| x != y).count();
        let (dp, dc) = (differ(&first.0, &again.0), differ(&first.1, &again.1));
        let same = dp == 0 && dc == 0;
        println!(
            "compare with {d} chunks, {k} block steps: {} of {nz} planes differ in prev, {} in cur: {}",
            dp,
            dc,
            if same { "identical" } else { "MISMATCH" }
        );
        verified = Some(same);
    }
    if cli.pipe.verify {
        let mut v = Verifier::new(&report, cli.pipe.tolerance);
        let mut sprev = initial_field(shape, cli.init_noise, 1);
        let mut scur = initial_field(shape, cli.init_noise, 2);
        match &damp {
            None => propagate::serial(
                &mut sprev, &mut scur, &vel, &wavelet, sz, sy, sx, dx2, cli.steps,
            ),
            Some(d) => propagate_sponge::serial(
                &mut sprev, &mut scur, &vel, d, &wavelet, sz, sy, sx, dx2, cli.steps,
            ),
        }
        v.array("cur", diff(&cur, &scur));
        v.array("prev", diff(&prev, &sprev));
        v.finish();
        verified = Some(v.ok && verified.unwrap_or(true));
    }
    if cli.pipe.json {
        println!(
            "{}",
            json_summary(
                "acoustic",
                &report,
                "l2_norm",
                norm,
                verified,
                serde_json::json!({ "source": src, "sponge": cli.sponge, "layers": cli.layers }),
            )
        );
    }
    if verified == Some(false) {
        std::process::exit(1);
    }
}
