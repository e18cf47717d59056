use ndarray::{Array2, Array3};

#[pacc::pipeline]
fn f(a: &mut Array3<f32>, b: &Array2<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    a[[z, y, x]] = b[[y, x]];
                }
            }
        }
    }
}

fn main() {}
