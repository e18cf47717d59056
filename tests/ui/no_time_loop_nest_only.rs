use ndarray::Array2;

// The only top-level loop is the stencil's own outer loop: there is no time loop.
#[pacc::pipeline]
fn jacobi(next: &mut Array2<f32>, cur: &Array2<f32>) {
    let (ny, nx) = cur.dim();
    for y in 1..ny - 1 {
        for x in 1..nx - 1 {
            next[[y, x]] = 0.25 * (cur[[y - 1, x]] + cur[[y + 1, x]] + cur[[y, x - 1]] + cur[[y, x + 1]]);
        }
    }
}

fn main() {}
