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

/// Whole grid: the edge reads guarded (planes, rows) and clamped (columns).
#[pacc::pipeline]
fn heat_guarded(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = t.dim();
    for _s in 0..steps {
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let c = t[[z, y, x]];
                    let b = if z > 0 { t[[z - 1, y, x]] } else { c };
                    let a = if z + 1 < nz { t[[z + 1, y, x]] } else { c };
                    let n = if y > 0 { t[[z, y - 1, x]] } else { c };
                    let s = if y + 1 < ny { t[[z, y + 1, x]] } else { c };
                    let e = t[[z, y, (x + 1).min(nx - 1)]];
                    let w = t[[z, y, x.max(1) - 1]];
                    u[[z, y, x]] = c + 0.1 * (a + b + n + s + e + w - 6.0 * c);
                }
            }
        }
        std::mem::swap(t, u);
    }
}

/// The same stencil over the interior only (the boundary keeps its values).
#[pacc::pipeline]
fn heat_interior(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = t.dim();
    for _s in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let c = t[[z, y, x]];
                    u[[z, y, x]] = c + 0.1
                        * (t[[z - 1, y, x]]
                            + t[[z + 1, y, x]]
                            + t[[z, y - 1, x]]
                            + t[[z, y + 1, x]]
                            + t[[z, y, x + 1]]
                            + t[[z, y, x - 1]]
                            - 6.0 * c);
                }
            }
        }
        std::mem::swap(t, u);
    }
}

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
    let points = (n * n * n * steps) as f64;
    let rate = |name: &str, f: &dyn Fn(&mut Array3<f32>, &mut Array3<f32>) -> Report| {
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
    let g = rate("guarded", &|t, u| {
        heat_guarded::run(t, u, steps, &opts)
            .map(|(_, r)| r)
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let i = rate("interior", &|t, u| {
        heat_interior::run(t, u, steps, &opts)
            .map(|(_, r)| r)
            .unwrap_or_else(|e| panic!("{e}"))
    });
    println!("guarded / interior (kernel rates): {:.3}", g / i);
}
