//! The 5-point Laplace solver of PACC's Figure 3.2: Jacobi iterations on a 2D grid with fixed
//! (Dirichlet) boundary values, ping-ponging between two arrays.

use ndarray::Array2;

/// `iterations` Jacobi sweeps of Laplace's equation. Each sweep writes the average of the four
/// neighbours of every interior point of `a` into `b`, then the two arrays swap roles, so after
/// the call `a` holds the newest iterate. Boundary rows and columns are never written: give both
/// arrays the same boundary values (see [`init`]).
#[pacc::pipeline]
pub fn jacobi(a: &mut Array2<f32>, b: &mut Array2<f32>, iterations: usize) {
    let (ny, nx) = a.dim();
    for _it in 0..iterations {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
            }
        }
        std::mem::swap(a, b);
    }
}

/// The problem of the example: a plate at 0 whose first row (y = 0) is held at `hot`. Returns
/// `(a, b)`, both carrying the boundary values.
pub fn init(ny: usize, nx: usize, hot: f32) -> (Array2<f32>, Array2<f32>) {
    let mut a = Array2::<f32>::zeros((ny, nx));
    a.row_mut(0).fill(hot);
    let b = a.clone();
    (a, b)
}

/// Mean value of the grid, accumulated in f64 (the example's figure of merit).
pub fn mean(a: &Array2<f32>) -> f64 {
    a.iter().map(|&v| v as f64).sum::<f64>() / a.len().max(1) as f64
}
