use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    let mut t = 0;
    while t < steps {
        for y in 0..ny {
            for x in 0..nx {
                b[[y, x]] = a[[y, x]] * 0.5;
            }
        }
        std::mem::swap(a, b);
        t += 2;
    }
}

fn main() {}
