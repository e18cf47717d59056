use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                a[[y + 1, x]] = b[[y, x]];
            }
        }
    }
}

fn main() {}
