// A recurrence along an axis: the running (prefix) sum of `q` along each row, recomputed every
// step, each point from the one just computed to its left. Sequential along x, so refused, and
// the refusal says it is a recurrence rather than suggesting a swap.
use ndarray::Array2;

#[pacc::pipeline]
fn running_sum(c: &mut Array2<f32>, q: &Array2<f32>, steps: usize) {
    let (ny, nx) = c.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 1..nx {
                c[[y, x]] = c[[y, x - 1]] + q[[y, x]];
            }
        }
    }
}

fn main() {}
