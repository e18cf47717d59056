//! Random programs (the translator's fuzz generator, `pacc-translate/tests/progen`), compiled
//! as ordinary Rust (`fused_random_gpu/cases.rs`, written by `regenerate_gpu_cases` in
//! `pacc-translate/tests/fused_random.rs`) and run fused against their untranslated serial
//! function, every array bit for bit (FMA off): on the GPU, the fused CUDA kernels the shared
//! emitter wrote; on the CPU backend, the fused run's plan (whose kernels are the original
//! nests' closures). The emulated comparisons of `fused_random.rs` check the fused kernels
//! against the plain ones, which the same emitter wrote; these check both against serial.

mod gpu;

use ndarray::{Array, Array2, Array3, Dimension};
use pacc::prelude::*;

#[allow(unused_imports)]
use ndarray::{ArrayView2, ArrayView3, ArrayViewMut2, ArrayViewMut3, Axis};

#[path = "fused_random_gpu/cases.rs"]
mod cases;

/// A start in [0.5, 1.5): no zeros to divide by, deterministic per array.
fn value(seed: usize, i: usize) -> f64 {
    let mut x = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64;
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    0.5 + (x % 1_000_003) as f64 / 1_000_003.0
}

trait Elem: Copy + std::fmt::Debug {
    fn of(v: f64) -> Self;
    fn same(self, o: Self) -> bool;
}

impl Elem for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn same(self, o: Self) -> bool {
        self.to_bits() == o.to_bits() || (self.is_nan() && o.is_nan())
    }
}

impl Elem for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn same(self, o: Self) -> bool {
        self.to_bits() == o.to_bits() || (self.is_nan() && o.is_nan())
    }
}

fn arr3<T: Elem>(shape: (usize, usize, usize), seed: usize) -> Array3<T> {
    let mut i = 0;
    Array3::from_shape_simple_fn(shape, || {
        i += 1;
        T::of(value(seed, i))
    })
}

fn arr2<T: Elem>(shape: (usize, usize), seed: usize) -> Array2<T> {
    let mut i = 0;
    Array2::from_shape_simple_fn(shape, || {
        i += 1;
        T::of(value(seed, i))
    })
}

fn vec_of<T: Elem>(n: usize, seed: usize) -> Vec<T> {
    (0..n).map(|i| T::of(value(seed, i))).collect()
}

fn same<T: Elem, D: Dimension>(what: &str, got: &Array<T, D>, want: &Array<T, D>) {
    let bad = got.iter().zip(want).filter(|(a, b)| !a.same(**b)).count();
    assert_eq!(bad, 0, "{what}: {bad} elements differ from serial");
}

/// A call's result: reductions sum in another order on the GPU, so floats agree to rounding.
trait Close: Copy + std::fmt::Debug {
    fn close(self, o: Self) -> bool;
}

impl Close for () {
    fn close(self, _: Self) -> bool {
        true
    }
}

impl Close for f32 {
    fn close(self, o: Self) -> bool {
        self.same(o) || (self - o).abs() <= 1e-4 * o.abs().max(1.0)
    }
}

impl Close for f64 {
    fn close(self, o: Self) -> bool {
        self.same(o) || (self - o).abs() <= 1e-9 * o.abs().max(1.0)
    }
}

fn close<T: Close>(what: &str, got: T, want: T) {
    assert!(got.close(want), "{what}: returned {got:?}, serial {want:?}");
}

/// One case's comparison, with the backend's options.
type Check = fn(&Options);

/// Enough random programs that a regression in what the translator accepts shows.
const FLOOR: usize = 8;

#[test]
fn random_programs_fused_on_the_cpu_backend_equal_serial() {
    assert!(cases::CASES.len() >= FLOOR, "{} cases", cases::CASES.len());
    let opts = Options::new().backend(BackendChoice::Cpu);
    for (name, check) in cases::CASES {
        eprintln!("{name}");
        check(&opts);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn random_programs_fused_on_the_gpu_equal_serial() {
    let dev = gpu::device();
    println!("device: {dev}");
    assert!(cases::CASES.len() >= FLOOR, "{} cases", cases::CASES.len());
    let opts = Options::new().backend(BackendChoice::Cuda);
    // The fused vector form (each case's default where its program has one), then the
    // one-column form.
    let scalar = opts
        .clone()
        .march(pacc::runtime::MarchTuning::parse("vx=1").expect("a march setting"));
    for (name, check) in cases::CASES {
        println!("{name}");
        check(&opts);
        println!("{name}, one column per thread");
        check(&scalar);
    }
}
