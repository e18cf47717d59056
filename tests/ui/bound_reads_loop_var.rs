use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 0..y + 1 {
                a[[y, x]] = b[[y, x]];
            }
        }
    }
    let _ = nx;
}

fn main() {}
