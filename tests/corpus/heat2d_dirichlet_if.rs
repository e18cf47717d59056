//! Explicit 2D heat equation (FTCS, forward time, centred space; e.g. Morton & Mayers 2005,
//! §3.1) with fixed (Dirichlet) edge values, written the way many teaching codes write it: one
//! nest over the whole grid, the update inside an `if` that excludes the edge cells, which copy
//! their old value in the `else`. The largest change of the last step is returned, as a
//! convergence check would read it.
//!
//! Forms: a whole-grid nest (`0..ny`, `0..nx`) with an `if` around the update whose condition
//! keeps every offset read inside the grid (`y > 0 && y < ny - 1 && ..`), an `else` writing
//! the same array, a `max` reduction reset every step, f32, a swap.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[pacc::pipeline]
pub fn ftcs(t: &mut Array2<f32>, t_new: &mut Array2<f32>, r: f32, steps: usize) -> f32 {
    let (ny, nx) = t.dim();
    let mut max_change: f32 = 0.0;
    for _n in 0..steps {
        max_change = 0.0;
        for y in 0..ny {
            for x in 0..nx {
                if y > 0 && y < ny - 1 && x > 0 && x < nx - 1 {
                    let v = t[[y, x]]
                        + r * (t[[y - 1, x]] + t[[y + 1, x]] + t[[y, x - 1]] + t[[y, x + 1]]
                            - 4.0 * t[[y, x]]);
                    t_new[[y, x]] = v;
                    max_change = max_change.max((v - t[[y, x]]).abs());
                } else {
                    t_new[[y, x]] = t[[y, x]];
                }
            }
        }
        std::mem::swap(t, t_new);
    }
    max_change
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (30, 139) } else { (22, 23) };
    let (mut t, mut u) = (f2::<f32>(n, 10.0), f2::<f32>(n, 0.0));
    let (change, rep) = call!(ftcs(&mut t, &mut u, 0.2, STEPS), o);
    let out = Outcome::new().array("t", &t).array("t_new", &u);
    Ok((out.exact("max_change", change), rep))
}

pub fn case() -> Case {
    Case {
        name: "heat2d_dirichlet_if",
        program: ftcs::program,
        go,
    }
}
