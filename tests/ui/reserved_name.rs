use ndarray::Array2;

// `__opts` is the generated `run`'s options parameter: without the check, rustc reported a
// duplicate parameter inside the expansion.
#[pacc::pipeline]
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, __opts: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..__opts {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = a[[y - 1, x]] + a[[y, x]];
            }
        }
        std::mem::swap(a, b);
    }
}

fn main() {}
