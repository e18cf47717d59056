use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, k: usize, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 2..ny - 2 {
            for x in 0..nx {
                a[[y, x]] = b[[y + k, x]];
            }
        }
    }
}

fn main() {}
