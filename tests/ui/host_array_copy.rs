// A writable description stands for the `&mut` borrow it was made from: it is not `Copy`, so
// one borrow cannot become two writable descriptions (two runs at once on one array, each
// believing it has the array to itself).
use ndarray::Array3;
use pacc::runtime::host::host_array_mut;

fn main() {
    let mut a = Array3::<f32>::zeros((4, 4, 4));
    let h = host_array_mut(&mut a, "a").unwrap();
    let copy = h;
    let _both = vec![h, copy];
}
