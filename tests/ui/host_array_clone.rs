// Nor is a writable description `Clone`: see host_array_copy.rs.
use ndarray::Array3;
use pacc::runtime::host::host_array_mut;

fn main() {
    let mut a = Array3::<f32>::zeros((4, 4, 4));
    let h = host_array_mut(&mut a, "a").unwrap();
    let _both = vec![h.clone(), h];
}
