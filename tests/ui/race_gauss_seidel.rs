use ndarray::Array2;

// An in-place Gauss-Seidel sweep: each point reads neighbours the sweep already updated.
#[pacc::pipeline]
fn gs(u: &mut Array2<f64>, f: &Array2<f64>, sweeps: usize) {
    let (ny, nx) = u.dim();
    for _s in 0..sweeps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                u[[y, x]] = 0.25 * (u[[y - 1, x]] + u[[y + 1, x]] + u[[y, x - 1]] + u[[y, x + 1]] - f[[y, x]]);
            }
        }
    }
}

fn main() {}
