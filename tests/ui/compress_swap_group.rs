use ndarray::Array2;

#[pacc::pipeline(compress(prev = 16))]
fn f(prev: &mut Array2<f32>, cur: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = cur.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                prev[[y, x]] = 0.5 * (cur[[y - 1, x]] + cur[[y + 1, x]]) - prev[[y, x]];
            }
        }
        std::mem::swap(prev, cur);
    }
}

fn main() {}
