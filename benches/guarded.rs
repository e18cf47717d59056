//! The same 7-point stencil written whole-grid with guarded edge reads and as an interior-only
//! nest, timed in one call on the CUDA backend (issue 49 item 2: the guarded form's rate over
//! the interior form's, target >= 0.95).
//!
//! `cargo bench --bench guarded -- [N] [STEPS]` (default 512 and 20); prints both rates in
//! points x steps per second and their ratio. Without a CUDA device it says so and measures
//! nothing.

use ndarray::Array3;
use pacc::runtime::{BackendChoice, Options, Report};
use std::time::Instant;

#[path = "../tests/programs/heat7.rs"]
mod heat7;

use heat7::{heat_guarded, heat_interior};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(512);
    let steps = args.get(1).copied().unwrap_or(20);
    if let Err(reason) = pacc_runtime::exec::cuda::available() {
        println!("no CUDA device ({reason}): nothing measured");
        return;
    }
    // In core, as the kernels bench: one chunk and one block of all the steps, so the arrays
    // cross the link once each way; the rate is the kernels' event time from the report.
    let opts = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(1)
        .block_steps(steps.max(1));
    let t0 = Array3::from_shape_fn((n, n, n), |(z, y, x)| {
        ((z * 7 + y * 13 + x * 3) % 29) as f32
    });
    // Each form's rate over the points it updates: the interior form leaves the boundary out.
    let rate =
        |name: &str, side: usize, f: &dyn Fn(&mut Array3<f32>, &mut Array3<f32>) -> Report| {
            let points = (side * side * side * steps) as f64;
            let (mut t, mut u) = (t0.clone(), t0.clone());
            f(&mut t, &mut u); // warm-up: compiles, tunes, allocates
            let start = Instant::now();
            let r = f(&mut t, &mut u);
            let wall = points / start.elapsed().as_secs_f64() / 1e9;
            let kernel = points / r.stages.kernel / 1e9;
            let forms: Vec<String> = r.kernels.iter().map(|k| format!("{k:?}")).collect();
            println!(
            "{name}: kernels {kernel:.1} Gpt/s, whole call {wall:.1} Gpt/s ({n}^3, {steps} steps)"
        );
            println!("  {name} kernels: {}", forms.join("; "));
            kernel
        };
    let g = rate("guarded", n, &|t, u| {
        heat_guarded::run(t, u, steps, &opts)
            .map(|(_, r)| r)
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let i = rate("interior", n - 2, &|t, u| {
        heat_interior::run(t, u, steps, &opts)
            .map(|(_, r)| r)
            .unwrap_or_else(|e| panic!("{e}"))
    });
    println!("guarded / interior (kernel rates): {:.3}", g / i);
}
