// A host array description made up in safe code would let a run write anywhere.
use pacc::runtime::program::Elem;
use pacc::runtime::HostArray;

fn main() {
    let _a = HostArray {
        ptr: 64 as *mut u8,
        elem: Elem::F32,
        shape: [4, 4, 4],
        ndim: 3,
        writable: true,
    };
}
