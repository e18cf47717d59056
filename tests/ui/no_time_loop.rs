use ndarray::Array2;

#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &Array2<f32>) {
    let (ny, nx) = a.dim();
    let _ = (ny, nx, b);
}

fn main() {}
