// A slice description is raw memory too: no struct literal outside the runtime.
use pacc::runtime::program::Elem;
use pacc::runtime::HostSlice;

fn main() {
    let _s = HostSlice {
        ptr: 64 as *const u8,
        elem: Elem::F32,
        len: 1 << 20,
    };
}
