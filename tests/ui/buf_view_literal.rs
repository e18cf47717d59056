// Kernels read and write through a buffer view: no struct literal outside the runtime.
use pacc::runtime::exec::BufView;
use pacc::runtime::program::Elem;

fn main() {
    let v = BufView {
        ptr: 64 as *mut u8,
        elem: Elem::F32,
        base: 0,
        planes: 4,
        inner: [4, 4],
        ndim: 3,
    };
    println!("{}", v.grid::<f32>().get3(0, 0, 0));
}
