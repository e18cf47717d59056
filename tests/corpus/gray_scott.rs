//! Gray-Scott reaction-diffusion (Gray & Scott, Chem. Eng. Sci. 1983; Pearson, "Complex
//! patterns in a simple system", Science 1993): two species, u fed at rate F and v removed at
//! rate F + k, reacting as u + 2v -> 3v, each diffusing with its own rate, integrated by forward
//! Euler with the 5-point Laplacian. The grid's edges are zero-flux: a missing neighbour is the
//! cell itself, written once with a guard and once with a clamp. The concentrations are kept
//! in [0, 1] with `f32::clamp`, as interactive versions do to stay stable at large steps.
//!
//! Forms: a whole-grid nest with guarded (`if y > 0 { u[[y - 1, x]] } else { uc }`) and
//! clamped (`u[[(y + 1).min(ny - 1), x]]`) neighbours, a tuple `let` of the two centre values,
//! a kernel helper function nested in the annotated function (`fn laplacian(..) -> f32`),
//! `f32::clamp`, one nest writing two arrays and two swaps, f32.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn gray_scott(
    u: &mut Array2<f32>,
    v: &mut Array2<f32>,
    u_next: &mut Array2<f32>,
    v_next: &mut Array2<f32>,
    du: f32,
    dv: f32,
    feed: f32,
    kill: f32,
    dt: f32,
    steps: usize,
) {
    fn laplacian(c: f32, n: f32, s: f32, w: f32, e: f32) -> f32 {
        n + s + w + e - 4.0 * c
    }

    let (ny, nx) = u.dim();
    for _step in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                let (uc, vc) = (u[[y, x]], v[[y, x]]);
                let un = if y > 0 { u[[y - 1, x]] } else { uc };
                let us = u[[(y + 1).min(ny - 1), x]];
                let uw = if x > 0 { u[[y, x - 1]] } else { uc };
                let ue = u[[y, (x + 1).min(nx - 1)]];
                let vn = if y > 0 { v[[y - 1, x]] } else { vc };
                let vs = v[[(y + 1).min(ny - 1), x]];
                let vw = if x > 0 { v[[y, x - 1]] } else { vc };
                let ve = v[[y, (x + 1).min(nx - 1)]];
                let uvv = uc * vc * vc;
                let du_dt = du * laplacian(uc, un, us, uw, ue) - uvv + feed * (1.0 - uc);
                let dv_dt = dv * laplacian(vc, vn, vs, vw, ve) + uvv - (feed + kill) * vc;
                u_next[[y, x]] = (uc + dt * du_dt).clamp(0.0, 1.0);
                v_next[[y, x]] = f32::clamp(vc + dt * dv_dt, 0.0, 1.0);
            }
        }
        std::mem::swap(u, u_next);
        std::mem::swap(v, v_next);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (33, 137) } else { (21, 26) };
    let (mut u, mut v) = (f2::<f32>(n, 0.1), f2::<f32>(n, 0.05));
    let (mut un, mut vn) = (f2::<f32>(n, 0.0), f2::<f32>(n, 0.0));
    let ((), rep) = call!(
        gray_scott(&mut u, &mut v, &mut un, &mut vn, 0.16, 0.08, 0.035, 0.065, 1.0, STEPS),
        o
    );
    let out = Outcome::new().array("u", &u).array("v", &v);
    Ok((out.array("u_next", &un).array("v_next", &vn), rep))
}

pub fn case() -> Case {
    Case {
        name: "gray_scott",
        program: gray_scott::program,
        go,
    }
}
