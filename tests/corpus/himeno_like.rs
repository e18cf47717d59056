//! A Himeno-like Poisson relaxation (after the RIKEN Himeno benchmark's published description:
//! Jacobi iteration of a 19-point pressure equation with mixed-derivative terms, a boundary
//! mask, a residual sum `gosa`, and the new values copied back after each sweep). The grid
//! sizes are the program's `imax`, `jmax`, `kmax` parameters, as in the benchmark; the
//! coefficients other than the diagonal scale `a3` are constants given as scalars.
//!
//! Forms: loop bounds from three `usize` parameters (`1..imax - 1`), a tuple parameter of
//! coefficients unpacked before the time loop, a sum reduction reset every iteration, a copy
//! nest, 19 reads including the twelve diagonals, f32.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn jacobi(
    p: &mut Array3<f32>,
    wrk2: &mut Array3<f32>,
    a3: &Array3<f32>,
    bnd: &Array3<f32>,
    wrk1: &Array3<f32>,
    imax: usize,
    jmax: usize,
    kmax: usize,
    coef: (f32, f32, f32),
    omega: f32,
    nn: usize,
) -> f32 {
    let (a, b, c) = coef;
    let mut gosa: f32 = 0.0;
    for _n in 0..nn {
        gosa = 0.0;
        for i in 1..imax - 1 {
            for j in 1..jmax - 1 {
                for k in 1..kmax - 1 {
                    let s0 = a * (p[[i + 1, j, k]] + p[[i, j + 1, k]] + p[[i, j, k + 1]])
                        + b * (p[[i + 1, j + 1, k]] - p[[i + 1, j - 1, k]] - p[[i - 1, j + 1, k]]
                            + p[[i - 1, j - 1, k]])
                        + b * (p[[i, j + 1, k + 1]] - p[[i, j - 1, k + 1]] - p[[i, j + 1, k - 1]]
                            + p[[i, j - 1, k - 1]])
                        + b * (p[[i + 1, j, k + 1]] - p[[i - 1, j, k + 1]] - p[[i + 1, j, k - 1]]
                            + p[[i - 1, j, k - 1]])
                        + c * (p[[i - 1, j, k]] + p[[i, j - 1, k]] + p[[i, j, k - 1]])
                        + wrk1[[i, j, k]];
                    let ss = (s0 * a3[[i, j, k]] - p[[i, j, k]]) * bnd[[i, j, k]];
                    gosa += ss * ss;
                    wrk2[[i, j, k]] = p[[i, j, k]] + omega * ss;
                }
            }
        }
        for i in 1..imax - 1 {
            for j in 1..jmax - 1 {
                for k in 1..kmax - 1 {
                    p[[i, j, k]] = wrk2[[i, j, k]];
                }
            }
        }
    }
    gosa
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (17, 13, 133) } else { (14, 9, 11) };
    let (mut p, mut wrk2) = (f3::<f32>(n, 0.0), f3::<f32>(n, 0.0));
    let a3 = f3::<f32>(n, 1.0 / 6.0) * 0.2;
    let bnd = f3::<f32>(n, 1.0).mapv(|v: f32| if v > 1.4 { 0.0 } else { 1.0 });
    let wrk1 = f3::<f32>(n, 0.0) * 0.01;
    let (gosa, rep) = call!(
        jacobi(
            &mut p,
            &mut wrk2,
            &a3,
            &bnd,
            &wrk1,
            n.0,
            n.1,
            n.2,
            (1.0, 0.01, 1.0),
            0.8,
            STEPS
        ),
        o
    );
    let out = Outcome::new().array("p", &p).array("wrk2", &wrk2);
    Ok((out.sum("gosa", gosa as f64), rep))
}

pub fn case() -> Case {
    Case {
        name: "himeno_like",
        program: jacobi::program,
        go,
    }
}
