// The guard of `lock_host` borrows the arrays: an array cannot be dropped (or written) while
// its memory stays registered, so the registration never outlives the memory.
use ndarray::Array3;
use pacc::runtime::exec::cuda::lock_host;
use pacc::runtime::host::host_array;

fn main() {
    let a = Array3::<f32>::zeros((4, 4, 4));
    let lock = lock_host(&[host_array(&a, "a").unwrap()]).unwrap();
    drop(a);
    println!("{} bytes", lock.bytes);
}
