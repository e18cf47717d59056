use ndarray::Array2;

struct Solver;

impl Solver {
    #[pacc::pipeline]
    fn step(&self, a: &mut Array2<f32>, steps: usize) {
        let (ny, nx) = a.dim();
        for _t in 0..steps {
            for y in 0..ny {
                for x in 0..nx {
                    a[[y, x]] *= 0.5;
                }
            }
        }
    }
}

fn main() {}
