use ndarray::Array2;

const W: [f32; 3] = [0.25, 0.5, 0.25];

// A module-level table: the macro sees only the function.
#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 1..nx - 1 {
                b[[y, x]] = W[0] * a[[y, x - 1]] + W[1] * a[[y, x]] + W[2] * a[[y, x + 1]];
            }
        }
        std::mem::swap(a, b);
    }
}

fn main() {}
