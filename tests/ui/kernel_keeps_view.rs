// A kernel closure cannot keep a view of a chunk buffer, or a grid over one, past its call:
// the executors free the buffers after the run. The closure type is higher-ranked over the
// frame's lifetime, so what it borrows from a frame cannot go into anything that outlives it
// (here a captured list; the same holds for a static, a channel or a spawned thread).
use pacc::runtime::exec::{BufView, CpuKernelFn, CpuKernels, Grid, KernelFrame};
use std::sync::Mutex;

fn main() {
    let views: Mutex<Vec<BufView<'static>>> = Mutex::new(Vec::new());
    let grids: Mutex<Vec<Grid<'static, f32>>> = Mutex::new(Vec::new());
    let keep_view: Box<CpuKernelFn<'_>> =
        Box::new(|f: &KernelFrame<'_>, _plane: usize, _red: &mut [f64]| {
            views.lock().unwrap().push(f.arrays[0]);
        });
    let keep_grid: Box<CpuKernelFn<'_>> =
        Box::new(|f: &KernelFrame<'_>, _plane: usize, _red: &mut [f64]| {
            grids.lock().unwrap().push(f.arrays[0].grid::<f32>());
        });
    // SAFETY: not what this case is about: even inside `unsafe`, the lifetimes refuse it.
    let _cpu = unsafe { CpuKernels::new(vec![keep_view, keep_grid], vec![]) };
}
