//! SHOC's Stencil2D (Danalis et al., "The Scalable HeterOgeneous Computing benchmark suite",
//! GPGPU 2010): a 9-point weighted average over the interior of a 2D matrix, the centre, the
//! four cardinal neighbours and the four diagonal ones each with their own weight, iterated
//! with the old and new matrices exchanged.
//!
//! Forms: extents from `nrows()` / `ncols()`, f64 weights passed as parameters, grouped sums
//! bound by `let`, diagonal reads, a swap of the two matrices.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[pacc::pipeline]
pub fn stencil2d(
    data: &mut Array2<f64>,
    scratch: &mut Array2<f64>,
    w_center: f64,
    w_cardinal: f64,
    w_diagonal: f64,
    iters: usize,
) {
    let rows = data.nrows();
    let cols = data.ncols();
    for _iter in 0..iters {
        for i in 1..rows - 1 {
            for j in 1..cols - 1 {
                let cardinal =
                    data[[i - 1, j]] + data[[i + 1, j]] + data[[i, j - 1]] + data[[i, j + 1]];
                let diagonal = data[[i - 1, j - 1]]
                    + data[[i - 1, j + 1]]
                    + data[[i + 1, j - 1]]
                    + data[[i + 1, j + 1]];
                scratch[[i, j]] =
                    w_center * data[[i, j]] + w_cardinal * cardinal + w_diagonal * diagonal;
            }
        }
        std::mem::swap(data, scratch);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (30, 140) } else { (22, 19) };
    let (mut data, mut scratch) = (f2::<f64>(n, 0.0), f2::<f64>(n, 0.0));
    let ((), rep) = call!(
        stencil2d(&mut data, &mut scratch, 0.25, 0.15, 0.0375, STEPS),
        o
    );
    Ok((
        Outcome::new()
            .array("data", &data)
            .array("scratch", &scratch),
        rep,
    ))
}

pub fn case() -> Case {
    Case {
        name: "shoc_stencil2d",
        program: stencil2d::program,
        go,
    }
}
