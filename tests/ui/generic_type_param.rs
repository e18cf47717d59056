use ndarray::Array2;

// A type parameter is refused; a lifetime parameter would be accepted.
#[pacc::pipeline]
fn smooth<'a, T: Copy>(a: &'a mut Array2<f32>, b: &'a mut Array2<f32>, steps: usize, _tag: T) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = 0.5 * (a[[y - 1, x]] + a[[y + 1, x]]);
            }
        }
        std::mem::swap(a, b);
    }
}

fn main() {}
