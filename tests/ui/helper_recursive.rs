use ndarray::Array2;

#[pacc::stencils]
mod sim {
    use ndarray::Array2;

    fn down(v: f32) -> f32 {
        up(v * 0.5)
    }

    fn up(v: f32) -> f32 {
        down(v + 1.0)
    }

    #[pacc::pipeline]
    pub fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
        let (ny, nx) = a.dim();
        for _t in 0..steps {
            for y in 0..ny {
                for x in 0..nx {
                    b[[y, x]] = down(a[[y, x]]);
                }
            }
            std::mem::swap(a, b);
        }
    }
}

fn main() {
    let _ = Array2::<f32>::zeros((2, 2));
}
