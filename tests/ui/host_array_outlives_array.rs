// A description borrows its array: it cannot outlive it.
use ndarray::Array3;
use pacc::runtime::host::host_array_mut;

fn main() {
    let h = {
        let mut a = Array3::<f32>::zeros((4, 4, 4));
        host_array_mut(&mut a, "a").unwrap()
    };
    println!("{:?}", h.shape());
}
