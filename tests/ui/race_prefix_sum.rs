use ndarray::Array2;

// A running sum along x: a recurrence, not a stencil.
#[pacc::pipeline]
fn prefix(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 1..nx {
                a[[y, x]] = a[[y, x - 1]] + b[[y, x]];
            }
        }
    }
}

fn main() {}
