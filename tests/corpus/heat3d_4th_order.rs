//! Explicit 3D heat equation with the fourth-order 13-point Laplacian (the central difference
//! -1/12, 4/3, -5/2, 4/3, -1/12 along each axis; e.g. Fornberg, "Generation of finite
//! difference formulas on arbitrarily spaced grids", Math. Comp. 1988), forward Euler in time:
//! two ghost planes on every side, the update accumulated term by term in a `let mut`.
//!
//! Forms: a reach of 2, coefficients unpacked from a tuple before the time loop, a `let mut`
//! accumulator built with `+=` in the kernel, f32, a swap.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[pacc::pipeline]
pub fn heat13(t: &mut Array3<f32>, t_new: &mut Array3<f32>, alpha: f32, steps: usize) {
    let (nz, ny, nx) = t.dim();
    let (c0, c1, c2): (f32, f32, f32) = (-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0);
    for _step in 0..steps {
        for k in 2..nz - 2 {
            for j in 2..ny - 2 {
                for i in 2..nx - 2 {
                    let mut lap = 3.0 * c0 * t[[k, j, i]];
                    lap += c1 * (t[[k - 1, j, i]] + t[[k + 1, j, i]]);
                    lap += c1 * (t[[k, j - 1, i]] + t[[k, j + 1, i]]);
                    lap += c1 * (t[[k, j, i - 1]] + t[[k, j, i + 1]]);
                    lap += c2 * (t[[k - 2, j, i]] + t[[k + 2, j, i]]);
                    lap += c2 * (t[[k, j - 2, i]] + t[[k, j + 2, i]]);
                    lap += c2 * (t[[k, j, i - 2]] + t[[k, j, i + 2]]);
                    t_new[[k, j, i]] = t[[k, j, i]] + alpha * lap;
                }
            }
        }
        std::mem::swap(t, t_new);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (22, 14, 136) } else { (17, 10, 11) };
    let (mut t, mut u) = (f3::<f32>(n, 0.0), f3::<f32>(n, 0.0));
    let ((), rep) = call!(heat13(&mut t, &mut u, 0.05, STEPS), o);
    Ok((Outcome::new().array("t", &t).array("t_new", &u), rep))
}

pub fn case() -> Case {
    Case {
        name: "heat3d_4th_order",
        program: heat13::program,
        go,
    }
}
