//! Linear advection in 1D by the Lax-Wendroff scheme (Lax & Wendroff, "Systems of
//! conservation laws", CPAM 1960; e.g. LeVeque 2002, §6.1): second order in space and time,
//! `u[i] - nu/2 (u[i+1] - u[i-1]) + nu^2/2 (u[i+1] - 2 u[i] + u[i-1])`, over the interior
//! `1..=n - 2` with fixed end values, the two arrays exchanged each step.
//!
//! Forms: 1D arrays, the length a local bound from `len()`, an inclusive range
//! (`1..=n - 2`), `let` of the two coefficients before the time loop, f64.

use crate::harness::{f1, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array1;

#[pacc::pipeline]
pub fn lax_wendroff(u: &mut Array1<f64>, un: &mut Array1<f64>, nu: f64, nt: usize) {
    let n = u.len();
    let half_nu = 0.5 * nu;
    let half_nu2 = 0.5 * nu * nu;
    for _n in 0..nt {
        for i in 1..=n - 2 {
            un[i] = u[i] - half_nu * (u[i + 1] - u[i - 1])
                + half_nu2 * (u[i + 1] - 2.0 * u[i] + u[i - 1]);
        }
        std::mem::swap(u, un);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { 500 } else { 67 };
    let (mut u, mut v) = (f1::<f64>(n, 1.0), f1::<f64>(n, 1.0));
    let ((), rep) = call!(lax_wendroff(&mut u, &mut v, 0.6, STEPS), o);
    Ok((Outcome::new().array("u", &u).array("un", &v), rep))
}

pub fn case() -> Case {
    Case {
        name: "lax_wendroff_1d",
        program: lax_wendroff::program,
        go,
    }
}
