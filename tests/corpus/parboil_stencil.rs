//! Parboil's `stencil` (Stratton et al., "Parboil: a revised benchmark suite for scientific
//! and commercial throughput computing", UIUC IMPACT-12-01, 2012): an iterative Jacobi solver
//! of the 3D heat equation, the 7-point stencil `Anext = c1 * (sum of the six neighbours) -
//! c0 * A0` over the interior, the two grids exchanged each iteration. Its reference code is
//! C over a flat array indexed `i + nx * (j + ny * k)`, so its loops run `i` (x) outermost
//! and `k` (z) innermost; written over an `Array3` indexed `[[k, j, i]]` it keeps that order.
//!
//! Forms: x-outermost loops (`for i { for j { for k { a[[k, j, i]] } } }`), extents bound
//! from `dim()` in z, y, x order, f32 scalars, a swap.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[pacc::pipeline]
pub fn stencil(a0: &mut Array3<f32>, anext: &mut Array3<f32>, c0: f32, c1: f32, iterations: usize) {
    let (nz, ny, nx) = a0.dim();
    for _t in 0..iterations {
        for i in 1..nx - 1 {
            for j in 1..ny - 1 {
                for k in 1..nz - 1 {
                    anext[[k, j, i]] = (a0[[k + 1, j, i]]
                        + a0[[k - 1, j, i]]
                        + a0[[k, j + 1, i]]
                        + a0[[k, j - 1, i]]
                        + a0[[k, j, i + 1]]
                        + a0[[k, j, i - 1]])
                        * c1
                        - a0[[k, j, i]] * c0;
                }
            }
        }
        std::mem::swap(a0, anext);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (18, 12, 134) } else { (14, 9, 12) };
    let (mut a, mut b) = (f3::<f32>(n, 0.0), f3::<f32>(n, 0.0));
    let ((), rep) = call!(
        stencil(&mut a, &mut b, 1.0 / 6.0, 1.0 / 6.0 / 6.0, STEPS),
        o
    );
    Ok((Outcome::new().array("a0", &a).array("anext", &b), rep))
}

pub fn case() -> Case {
    Case {
        name: "parboil_stencil",
        program: stencil::program,
        go,
    }
}
