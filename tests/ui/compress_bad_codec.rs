use ndarray::Array2;

#[pacc::pipeline(compress(a = 16, codec = lz4))]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                a[[y, x]] = b[[y, x]];
            }
        }
    }
}

#[pacc::pipeline(compress(a = 8, codec = f16))]
fn g(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                a[[y, x]] = b[[y, x]];
            }
        }
    }
}

fn main() {}
