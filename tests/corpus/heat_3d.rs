//! PolyBench/C's `heat-3d` (Pouchet, PolyBench 4.2): on an `n`^3 grid each time step computes
//! `B` from `A` as the sum over the three axes of 0.125 times the second difference plus the
//! centre, then `A` from `B` the same way: two nests per step, no swap.
//!
//! Forms: the extent one `n: usize` parameter bounding all three axes (`1..n - 1`), two nests
//! per step, f64.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[pacc::pipeline]
pub fn kernel_heat_3d(tsteps: usize, n: usize, a: &mut Array3<f64>, b: &mut Array3<f64>) {
    for _t in 1..=tsteps {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                for k in 1..n - 1 {
                    b[[i, j, k]] = 0.125
                        * (a[[i + 1, j, k]] - 2.0 * a[[i, j, k]] + a[[i - 1, j, k]])
                        + 0.125 * (a[[i, j + 1, k]] - 2.0 * a[[i, j, k]] + a[[i, j - 1, k]])
                        + 0.125 * (a[[i, j, k + 1]] - 2.0 * a[[i, j, k]] + a[[i, j, k - 1]])
                        + a[[i, j, k]];
                }
            }
        }
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                for k in 1..n - 1 {
                    a[[i, j, k]] = 0.125
                        * (b[[i + 1, j, k]] - 2.0 * b[[i, j, k]] + b[[i - 1, j, k]])
                        + 0.125 * (b[[i, j + 1, k]] - 2.0 * b[[i, j, k]] + b[[i, j - 1, k]])
                        + 0.125 * (b[[i, j, k + 1]] - 2.0 * b[[i, j, k]] + b[[i, j, k - 1]])
                        + b[[i, j, k]];
                }
            }
        }
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { 70 } else { 13 };
    let (mut a, mut b) = (f3::<f64>((n, n, n), 1.0), f3::<f64>((n, n, n), 1.0));
    let ((), rep) = call!(kernel_heat_3d(STEPS, n, &mut a, &mut b), o);
    Ok((Outcome::new().array("A", &a).array("B", &b), rep))
}

pub fn case() -> Case {
    Case {
        name: "heat_3d",
        program: kernel_heat_3d::program,
        go,
    }
}
