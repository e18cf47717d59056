//! PolyBench/C's `jacobi-2d` (Pouchet, PolyBench 4.2): on an `n` x `n` grid each time step
//! computes `B` as 0.2 times the 5-point sum of `A` over the interior, then `A` from `B` the
//! same way: two nests per step, no swap.
//!
//! Forms: a square grid whose extent is one `n: usize` parameter bounding both axes, inclusive
//! ranges (`1..=n - 2`), two nests per step, f64.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[pacc::pipeline]
pub fn kernel_jacobi_2d(tsteps: usize, n: usize, a: &mut Array2<f64>, b: &mut Array2<f64>) {
    for _t in 0..tsteps {
        for i in 1..=n - 2 {
            for j in 1..=n - 2 {
                b[[i, j]] = 0.2
                    * (a[[i, j]] + a[[i, j - 1]] + a[[i, j + 1]] + a[[i + 1, j]] + a[[i - 1, j]]);
            }
        }
        for i in 1..=n - 2 {
            for j in 1..=n - 2 {
                a[[i, j]] = 0.2
                    * (b[[i, j]] + b[[i, j - 1]] + b[[i, j + 1]] + b[[i + 1, j]] + b[[i - 1, j]]);
            }
        }
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { 140 } else { 23 };
    let (mut a, mut b) = (f2::<f64>((n, n), 2.0), f2::<f64>((n, n), 3.0));
    let ((), rep) = call!(kernel_jacobi_2d(STEPS, n, &mut a, &mut b), o);
    Ok((Outcome::new().array("A", &a).array("B", &b), rep))
}

pub fn case() -> Case {
    Case {
        name: "jacobi_2d",
        program: kernel_jacobi_2d::program,
        go,
    }
}
