use ndarray::Array3;

#[pacc::pipeline(halo = 1)]
fn f(a: &mut Array3<f32>, b: &Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 2..nz - 2 {
            for y in 2..ny - 2 {
                for x in 2..nx - 2 {
                    a[[z, y, x]] = b[[z + 2, y, x]] + b[[z, y - 1, x]];
                }
            }
        }
    }
}

fn main() {}
