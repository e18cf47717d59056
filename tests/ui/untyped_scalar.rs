use ndarray::Array2;

fn coefficient() -> f32 {
    0.25
}

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    let c = coefficient();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                a[[y, x]] = c * b[[y, x]];
            }
        }
    }
}

fn main() {}
