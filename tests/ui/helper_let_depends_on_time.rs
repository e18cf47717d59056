use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    fn ramp(dst: &mut Array2<f32>, src: &Array2<f32>, ny: usize, nx: usize, t: usize) {
        let w = t as f32 * 0.1;
        for y in 0..ny {
            for x in 0..nx {
                dst[[y, x]] = src[[y, x]] + w;
            }
        }
    }
    for t in 0..steps {
        ramp(b, a, ny, nx, t);
        std::mem::swap(a, b);
    }
}

fn main() {}
