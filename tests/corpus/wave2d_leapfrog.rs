//! The 2D scalar wave equation u_tt = c^2 (u_xx + u_yy) by the textbook leapfrog scheme
//! (second order in time and space; e.g. LeVeque, "Finite Difference Methods for Ordinary and
//! Partial Differential Equations", 2007, and Langtangen & Linge, "Finite Difference Computing
//! with PDEs", 2017, §2.11): three time levels, the new one from the current and the previous,
//! a point source added each step, then the levels rotated (previous <- current <- new).
//!
//! Forms: three levels rotated by two swaps, a Courant number computed from f32 parameters
//! before the time loop, a source wavelet indexed by the time variable at a point given as
//! parameters, the 5-point Laplacian bound by `let`.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn leapfrog(
    u_prev: &mut Array2<f32>,
    u: &mut Array2<f32>,
    u_next: &mut Array2<f32>,
    source: &[f32],
    sy: usize,
    sx: usize,
    c: f32,
    dt: f32,
    dx: f32,
    nt: usize,
) {
    let (ny, nx) = u.dim();
    let r = c * dt / dx;
    let r2 = r * r;
    for n in 0..nt {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let lap =
                    u[[j - 1, i]] + u[[j + 1, i]] + u[[j, i - 1]] + u[[j, i + 1]] - 4.0 * u[[j, i]];
                u_next[[j, i]] = 2.0 * u[[j, i]] - u_prev[[j, i]] + r2 * lap;
            }
        }
        u_next[[sy, sx]] += dt * dt * source[n];
        std::mem::swap(u_prev, u);
        std::mem::swap(u, u_next);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (34, 150) } else { (23, 21) };
    let (mut p, mut c, mut x) = (f2::<f32>(n, 0.1), f2::<f32>(n, 0.2), f2::<f32>(n, 0.0));
    let source: Vec<f32> = (0..STEPS).map(|t| 1.0 - 0.3 * t as f32).collect();
    let (sy, sx) = (n.0 / 2, n.1 / 3);
    let ((), rep) = call!(
        leapfrog(&mut p, &mut c, &mut x, &source, sy, sx, 1.0, 0.05, 0.1, STEPS),
        o
    );
    let out = Outcome::new().array("u_prev", &p).array("u", &c);
    Ok((out.array("u_next", &x), rep))
}

pub fn case() -> Case {
    Case {
        name: "wave2d_leapfrog",
        program: leapfrog::program,
        go,
    }
}
