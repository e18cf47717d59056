//! The 5-point Laplace (Jacobi) solver of PACC's Figure 3.2, run through the pipeline.
//!
//! ```text
//! cargo run --release --example laplace2d -- --size 2048 --steps 1000 --verify
//! ```
//!
//! A square plate at 0 with its first row held at `--hot`; the figure of merit is the mean value
//! of the grid after the sweeps.

mod common;

use clap::Parser;
use common::{diff, fail, json_summary, PipelineArgs, Verifier};
use pacc::models::laplace2d::{self, jacobi};

#[derive(Parser, Debug)]
#[command(about = "5-point Laplace (Jacobi) solver on a 2D grid, through pacc's pipeline")]
struct Cli {
    /// Grid points per side (sets both --ny and --nx).
    #[arg(long, default_value_t = 1024)]
    size: usize,
    /// Rows (the axis split into chunks); overrides --size.
    #[arg(long)]
    ny: Option<usize>,
    /// Columns; overrides --size.
    #[arg(long)]
    nx: Option<usize>,
    /// Jacobi sweeps.
    #[arg(long, alias = "iterations", default_value_t = 1000)]
    steps: usize,
    /// Value held on the first row.
    #[arg(long, default_value_t = 1.0)]
    hot: f32,
    #[command(flatten)]
    pipe: PipelineArgs,
}

fn main() {
    let cli = Cli::parse();
    let opts = cli.pipe.options().unwrap_or_else(|e| fail(e));
    let ny = cli.ny.unwrap_or(cli.size);
    let nx = cli.nx.unwrap_or(cli.size);
    if ny < 3 || nx < 3 {
        fail("the grid needs at least 3x3 points");
    }
    let arrays = 2 * (1 + usize::from(cli.pipe.verify));
    common::check_host_memory("laplace2d", arrays, ny.saturating_mul(nx), 4);
    let (mut a, mut b) = laplace2d::init(ny, nx, cli.hot);
    let inputs = cli.pipe.verify.then(|| (a.clone(), b.clone()));

    println!("laplace2d: {ny}x{nx} grid, {} sweeps", cli.steps);
    let ((), report) = jacobi::run(&mut a, &mut b, cli.steps, &opts).unwrap_or_else(|e| fail(e));
    print!("{report}");
    let mean = laplace2d::mean(&a);
    println!("mean value: {mean:.9}");

    let mut verified = None;
    if let Some((mut sa, mut sb)) = inputs {
        let mut v = Verifier::new(&report, cli.pipe.tolerance);
        jacobi::serial(&mut sa, &mut sb, cli.steps);
        v.array("a", diff(&a, &sa));
        v.array("b", diff(&b, &sb));
        v.finish();
        verified = Some(v.ok);
    }
    if cli.pipe.json {
        println!(
            "{}",
            json_summary(
                "laplace2d",
                &report,
                "mean",
                mean,
                verified,
                serde_json::json!({})
            )
        );
    }
    if verified == Some(false) {
        std::process::exit(1);
    }
}
