//! PolyBench/C's `fdtd-2d` (Pouchet, PolyBench 4.2): the 2D finite-difference time-domain
//! method for Maxwell's equations (Yee 1966, TE mode): each step sets the first row of `ey`
//! to the source value `_fict_[t]`, then updates `ey` from the difference of `hz` along i,
//! `ex` from its difference along j, and `hz` from the curl of the new `ex` and `ey`.
//!
//! Forms: `nx`, `ny: usize` parameters as bounds, a one-loop nest over a row of a 2D array
//! indexed with a literal (`ey[[0, j]] = fict[t]`, a time-indexed 1D read), three full nests
//! per step with different ranges (`1..nx`, `1..ny`, `0..nx - 1`), forward and backward reads,
//! f64, no swap.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn kernel_fdtd_2d(
    tmax: usize,
    nx: usize,
    ny: usize,
    ex: &mut Array2<f64>,
    ey: &mut Array2<f64>,
    hz: &mut Array2<f64>,
    fict: &[f64],
) {
    for t in 0..tmax {
        for j in 0..ny {
            ey[[0, j]] = fict[t];
        }
        for i in 1..nx {
            for j in 0..ny {
                ey[[i, j]] = ey[[i, j]] - 0.5 * (hz[[i, j]] - hz[[i - 1, j]]);
            }
        }
        for i in 0..nx {
            for j in 1..ny {
                ex[[i, j]] = ex[[i, j]] - 0.5 * (hz[[i, j]] - hz[[i, j - 1]]);
            }
        }
        for i in 0..nx - 1 {
            for j in 0..ny - 1 {
                hz[[i, j]] =
                    hz[[i, j]] - 0.7 * (ex[[i, j + 1]] - ex[[i, j]] + ey[[i + 1, j]] - ey[[i, j]]);
            }
        }
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let (nx, ny) = if wide { (30, 140) } else { (20, 25) };
    let (mut ex, mut ey, mut hz) = (
        f2::<f64>((nx, ny), 0.0),
        f2::<f64>((nx, ny), 0.1),
        f2::<f64>((nx, ny), 0.2),
    );
    let fict: Vec<f64> = (0..STEPS).map(|t| t as f64).collect();
    let ((), rep) = call!(
        kernel_fdtd_2d(STEPS, nx, ny, &mut ex, &mut ey, &mut hz, &fict),
        o
    );
    let out = Outcome::new().array("ex", &ex).array("ey", &ey);
    Ok((out.array("hz", &hz), rep))
}

pub fn case() -> Case {
    Case {
        name: "fdtd_2d",
        program: kernel_fdtd_2d::program,
        go,
    }
}
