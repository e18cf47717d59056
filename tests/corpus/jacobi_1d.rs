//! PolyBench/C's `jacobi-1d` (Pouchet, PolyBench 4.2): two arrays of `n` values, each time
//! step `B[i] = 0.33333 * (A[i-1] + A[i] + A[i+1])` over the interior and then the same from
//! `B` back into `A`: two nests per step, no swap.
//!
//! Forms: 1D arrays (`&mut Array1<f64>`, `a[i]`), the extent an `n: usize` parameter
//! (`for i in 1..n - 1`), two nests per step, f64.

use crate::harness::{f1, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array1;

#[pacc::pipeline]
pub fn kernel_jacobi_1d(tsteps: usize, n: usize, a: &mut Array1<f64>, b: &mut Array1<f64>) {
    for _t in 0..tsteps {
        for i in 1..n - 1 {
            b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1]);
        }
        for i in 1..n - 1 {
            a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1]);
        }
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { 400 } else { 61 };
    let (mut a, mut b) = (f1::<f64>(n, 2.0), f1::<f64>(n, 3.0));
    let ((), rep) = call!(kernel_jacobi_1d(STEPS, n, &mut a, &mut b), o);
    Ok((Outcome::new().array("A", &a).array("B", &b), rep))
}

pub fn case() -> Case {
    Case {
        name: "jacobi_1d",
        program: kernel_jacobi_1d::program,
        go,
    }
}
