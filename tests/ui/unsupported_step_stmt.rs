use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for t in 0..steps {
        let s = t as f32 * 0.5;
        for y in 0..ny {
            for x in 0..nx {
                a[[y, x]] = b[[y, x]] * s;
            }
        }
    }
}

fn main() {}
