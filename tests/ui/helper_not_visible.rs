use ndarray::Array2;

fn advance(dst: &mut Array2<f32>, src: &Array2<f32>) {
    dst.assign(src);
}

// `advance` is a sibling of the pipeline: its body is out of the macro's sight.
#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    for _t in 0..steps {
        advance(b, a);
        std::mem::swap(a, b);
    }
}

fn main() {}
