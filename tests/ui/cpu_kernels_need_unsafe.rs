// User closures reach a run only through the unsafe `CpuKernels::new`. This kernel adds to one
// element from every plane's call: the threads computing different planes share the grid and
// would race on it, which no check of the run can see.
use ndarray::Array2;
use pacc::models::laplace2d::jacobi;
use pacc::runtime::exec::{CpuKernelFn, CpuKernels, KernelFrame};
use pacc::runtime::host::host_array_mut;
use pacc::runtime::{Invocation, Options};

fn main() {
    let (mut a, mut b) = (Array2::<f32>::zeros((64, 64)), Array2::<f32>::zeros((64, 64)));
    let racy: Box<CpuKernelFn<'_>> =
        Box::new(|f: &KernelFrame<'_>, _plane: usize, _red: &mut [f64]| {
            let g = f.arrays[1].grid::<f32>();
            g.set2(1, 1, g.get2(1, 1) + 1.0);
        });
    let inv = Invocation {
        arrays: vec![
            host_array_mut(&mut a, "a").unwrap(),
            host_array_mut(&mut b, "b").unwrap(),
        ],
        scalars: vec![],
        slices: vec![],
        points: vec![],
        t0: 0,
        steps: 10,
        reduction_init: vec![],
        reset_values: vec![],
        cpu: CpuKernels::new(vec![racy], vec![]),
    };
    let _ = pacc::runtime::run(jacobi::program(), inv, &Options::default());
}
