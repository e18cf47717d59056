// The closures of a run cannot be put together in safe code by a struct literal either: the
// fields are private, and the unsafe `CpuKernels::new` is the only way in.
use pacc::runtime::exec::{CpuKernelFn, CpuKernels, KernelFrame};

fn main() {
    let k: Box<CpuKernelFn<'_>> = Box::new(|_: &KernelFrame<'_>, _: usize, _: &mut [f64]| {});
    let _cpu = CpuKernels {
        kernels: vec![k],
        points: vec![],
    };
}
