//! A 27-point Laplacian smoother in 3D: the compact isotropic stencil (weights for the centre,
//! the 6 faces, 12 edges and 8 corners of the 3x3x3 cube summing to zero; e.g. the
//! "27-point stencil" benchmark of Datta et al., "Stencil computation optimization and
//! auto-tuning on state-of-the-art multicore architectures", SC 2008), applied as a damped
//! Jacobi step `b = a + omega * lap(a)` over the interior. The weights sit in a table in the
//! function, each class of neighbours gathered in a `let mut` accumulator.
//!
//! Forms: an in-function table (`let w = [..]` before the time loop) indexed by literals in
//! the kernel (`w[1]`), `let mut` accumulators (`faces += ..`), every one of the 26
//! neighbours, f64, a swap.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[pacc::pipeline]
pub fn smooth27(a: &mut Array3<f64>, b: &mut Array3<f64>, omega: f64, sweeps: usize) {
    let (nz, ny, nx) = a.dim();
    // centre, face, edge, corner
    let w = [-128.0 / 30.0, 14.0 / 30.0, 3.0 / 30.0, 1.0 / 30.0];
    for _s in 0..sweeps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let mut faces = a[[z - 1, y, x]] + a[[z + 1, y, x]];
                    faces += a[[z, y - 1, x]] + a[[z, y + 1, x]];
                    faces += a[[z, y, x - 1]] + a[[z, y, x + 1]];
                    let mut edges = a[[z - 1, y - 1, x]] + a[[z - 1, y + 1, x]];
                    edges += a[[z + 1, y - 1, x]] + a[[z + 1, y + 1, x]];
                    edges += a[[z - 1, y, x - 1]] + a[[z - 1, y, x + 1]];
                    edges += a[[z + 1, y, x - 1]] + a[[z + 1, y, x + 1]];
                    edges += a[[z, y - 1, x - 1]] + a[[z, y - 1, x + 1]];
                    edges += a[[z, y + 1, x - 1]] + a[[z, y + 1, x + 1]];
                    let mut corners = a[[z - 1, y - 1, x - 1]] + a[[z - 1, y - 1, x + 1]];
                    corners += a[[z - 1, y + 1, x - 1]] + a[[z - 1, y + 1, x + 1]];
                    corners += a[[z + 1, y - 1, x - 1]] + a[[z + 1, y - 1, x + 1]];
                    corners += a[[z + 1, y + 1, x - 1]] + a[[z + 1, y + 1, x + 1]];
                    let lap = w[0] * a[[z, y, x]] + w[1] * faces + w[2] * edges + w[3] * corners;
                    b[[z, y, x]] = a[[z, y, x]] + omega * lap;
                }
            }
        }
        std::mem::swap(a, b);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (16, 12, 135) } else { (13, 10, 11) };
    let (mut a, mut b) = (f3::<f64>(n, 0.0), f3::<f64>(n, 0.0));
    let ((), rep) = call!(smooth27(&mut a, &mut b, 0.1, STEPS), o);
    Ok((Outcome::new().array("a", &a).array("b", &b), rep))
}

pub fn case() -> Case {
    Case {
        name: "laplacian27",
        program: smooth27::program,
        go,
    }
}
