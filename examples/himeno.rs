//! The RIKEN Himeno benchmark (19-point Jacobi sweeps of a Poisson equation), run through the
//! pipeline.
//!
//! ```text
//! cargo run --release --example himeno -- --size m --iterations 100 --verify
//! ```
//!
//! Grid sizes and initialisation are the original's (`himenoBMTxpa.c`); so is the output. The
//! figure of merit is gosa, the sum of squared residuals of the last sweep.

mod common;

use clap::Parser;
use common::{diff, fail, json_summary, parse_list, PipelineArgs, Verifier};
use pacc::models::himeno::{self, c_exp, Himeno};

#[derive(Parser, Debug)]
#[command(about = "The RIKEN Himeno benchmark through pacc's pipeline")]
struct Cli {
    /// Grid size: xs (32x32x64), s (64x64x128), m (128x128x256), l (256x256x512),
    /// xl (512x512x1024).
    #[arg(long, default_value = "s")]
    size: String,
    /// A custom grid I,J,K (I is split into chunks); overrides --size.
    #[arg(long, value_name = "I,J,K")]
    grid: Option<String>,
    /// Jacobi sweeps.
    #[arg(long, alias = "steps", default_value_t = 100)]
    iterations: usize,
    /// The original's timed calibration: 3 rehearsal sweeps, then as many sweeps as fit in this
    /// many seconds, continuing from the rehearsal's state (overrides --iterations).
    #[arg(long, value_name = "SECONDS")]
    calibrate: Option<f64>,
    #[command(flatten)]
    pipe: PipelineArgs,
}

fn main() {
    let cli = Cli::parse();
    let opts = cli.pipe.options().unwrap_or_else(|e| fail(e));
    let shape = match &cli.grid {
        Some(g) => {
            let v = parse_list::<usize>(g, 3, "--grid").unwrap_or_else(|e| fail(e));
            (v[0], v[1], v[2])
        }
        None => himeno::grid(&cli.size).unwrap_or_else(|| {
            fail(format!(
                "unknown size `{}`; expected xs, s, m, l, xl, or --grid I,J,K",
                cli.size
            ))
        }),
    };
    if shape.0.min(shape.1).min(shape.2) < 3 {
        fail("every axis of the grid needs at least 3 points");
    }
    let (mimax, mjmax, mkmax) = shape;
    println!("mimax = {mimax} mjmax = {mjmax} mkmax = {mkmax}");
    println!(
        "imax = {} jmax = {} kmax ={}",
        mimax - 1,
        mjmax - 1,
        mkmax - 1
    );
    // Himeno's 14 arrays, twice with --verify.
    let points = shape.0.saturating_mul(shape.1).saturating_mul(shape.2);
    common::check_host_memory("himeno", 14 * (1 + usize::from(cli.pipe.verify)), points, 4);
    let mut h = Himeno::try_new(shape).unwrap_or_else(|e| fail(e));
    let flop = himeno::flops_per_sweep(shape);

    let mut nn = cli.iterations;
    if let Some(target) = cli.calibrate {
        let rehearsal = 3;
        println!(" Start rehearsal measurement process.");
        println!(" Measure the performance in {rehearsal} times.\n");
        let (gosa, r) = h.run(rehearsal, &opts).unwrap_or_else(|e| fail(e));
        let cpu = r.wall_seconds;
        println!(
            " MFLOPS: {:.6} time(s): {cpu:.6} {}\n",
            flop * rehearsal as f64 / cpu * 1e-6,
            c_exp(gosa as f64)
        );
        nn = ((target / (cpu / 3.0)) as usize).max(1);
        println!(" Now, start the actual measurement process.");
        println!(" The loop will be excuted in {nn} times\n");
    }

    let before = cli.pipe.verify.then(|| h.clone());
    let (gosa, report) = h.run(nn, &opts).unwrap_or_else(|e| fail(e));
    let cpu = report.wall_seconds;
    let mflops = if cpu > 0.0 {
        flop * nn as f64 / cpu * 1e-6
    } else {
        0.0
    };
    println!(" Loop executed for {nn} times");
    println!(" Gosa : {} ", c_exp(gosa as f64));
    println!(" MFLOPS measured : {mflops:.6}\tcpu : {cpu:.6}");
    print!("{report}");

    let mut verified = None;
    if let Some(mut s) = before {
        let mut v = Verifier::new(&report, cli.pipe.tolerance);
        let sgosa = s.serial(nn);
        v.array("p", diff(&h.p, &s.p));
        // gosa is an f32 sum over the grid: a different summation order rounds differently.
        v.value(
            "gosa",
            gosa as f64,
            sgosa as f64,
            himeno::gosa_tolerance(shape),
        );
        v.finish();
        verified = Some(v.ok);
    }
    if cli.pipe.json {
        println!(
            "{}",
            json_summary(
                "himeno",
                &report,
                "gosa",
                gosa as f64,
                verified,
                serde_json::json!({ "iterations": nn, "mflops": mflops }),
            )
        );
    }
    if verified == Some(false) {
        std::process::exit(1);
    }
}
