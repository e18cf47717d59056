// Gauss-Seidel relaxation of the 2D Poisson equation, updating `u` in place: each point reads
// the neighbours above and to the left that the same sweep has already updated. Not a parallel
// stencil; a swap would make it Jacobi, another algorithm, so the refusal must not offer one.
use ndarray::Array2;

#[pacc::pipeline]
fn gauss_seidel(u: &mut Array2<f64>, f: &Array2<f64>, h2: f64, sweeps: usize) {
    let (ny, nx) = u.dim();
    for _sweep in 0..sweeps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                u[[y, x]] = 0.25 * (u[[y - 1, x]] + u[[y + 1, x]] + u[[y, x - 1]] + u[[y, x + 1]] - h2 * f[[y, x]]);
            }
        }
    }
}

fn main() {}
