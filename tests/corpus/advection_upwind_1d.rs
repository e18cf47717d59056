//! Linear advection u_t + a u_x = 0 in 1D by the first-order upwind scheme (Courant, Isaacson
//! & Rees 1952; e.g. LeVeque, "Finite Volume Methods for Hyperbolic Problems", 2002, §4.8):
//! for a > 0 each cell takes `u[i] - nu * (u[i] - u[i-1])` with the Courant number
//! `nu = a dt / dx`; the inflow cell keeps its value. The scheme is written with a new array
//! and the two exchanged, and reports the largest value after the last step (upwinding is
//! monotone, so it never exceeds the initial maximum).
//!
//! Forms: 1D arrays (`&mut Array1<f64>`, `u[i]`), the length from `u.len()`, a one-sided
//! read, the Courant number computed from parameters, a `max` reduction, a swap, f64.

use crate::harness::{f1, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array1;

#[pacc::pipeline]
pub fn upwind(
    u: &mut Array1<f64>,
    u_new: &mut Array1<f64>,
    a: f64,
    dt: f64,
    dx: f64,
    nt: usize,
) -> f64 {
    let n = u.len();
    let nu = a * dt / dx;
    let mut peak = f64::NEG_INFINITY;
    for _step in 0..nt {
        peak = f64::NEG_INFINITY;
        for i in 1..n {
            let v = u[i] - nu * (u[i] - u[i - 1]);
            u_new[i] = v;
            peak = peak.max(v);
        }
        std::mem::swap(u, u_new);
    }
    peak
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { 500 } else { 73 };
    let (mut u, mut v) = (f1::<f64>(n, 0.0), f1::<f64>(n, 0.0));
    let (peak, rep) = call!(upwind(&mut u, &mut v, 1.0, 0.04, 0.1, STEPS), o);
    let out = Outcome::new().array("u", &u).array("u_new", &v);
    Ok((out.exact("peak", peak), rep))
}

pub fn case() -> Case {
    Case {
        name: "advection_upwind_1d",
        program: upwind::program,
        go,
    }
}
