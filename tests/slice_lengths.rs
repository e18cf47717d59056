//! Slices shorter than the time loop reads: every backend refuses the call with a typed error
//! before it touches the arrays (the CPU closures would panic indexing the slice, a CUDA kernel
//! would read past its device copy). The CUDA case needs a device: ignored by a plain
//! `cargo test`.

mod gpu;

use ndarray::Array3;
use pacc::runtime::{BackendChoice, Error, Options};

/// A damped update reading `damp[z]` in the nest, then `w[t + 1]` added at one point.
#[pacc::pipeline]
fn damped(
    u: &mut Array3<f32>,
    v: &mut Array3<f32>,
    damp: &[f32],
    w: &[f32],
    src: (usize, usize, usize),
    steps: usize,
) {
    let (nz, ny, nx) = u.dim();
    let (sz, sy, sx) = src;
    for t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    v[[z, y, x]] = damp[z] * (u[[z - 1, y, x]] + u[[z + 1, y, x]]) * 0.5
                        + 0.1 * u[[z, y - 1, x]];
                }
            }
        }
        v[[sz, sy, sx]] += w[t + 1];
        std::mem::swap(u, v);
    }
}

const SHAPE: (usize, usize, usize) = (9, 6, 5);

fn start() -> (Array3<f32>, Array3<f32>) {
    let u = Array3::from_shape_fn(SHAPE, |(z, y, x)| (z * 7 + y * 3 + x) as f32 * 0.01);
    (u.clone(), u * 0.5)
}

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| 0.1 * i as f32 + 0.3).collect()
}

/// With `run`: the error for `damp` of `damp_len` and `w` of `w_len` elements over 10 steps,
/// after checking that the arrays are as passed.
fn refused(backend: BackendChoice, damp_len: usize, w_len: usize) -> Error {
    let (mut u, mut v) = start();
    let (u0, v0) = (u.clone(), v.clone());
    let opts = Options::new().backend(backend).chunks(2).block_steps(3);
    let (damp, w) = (values(damp_len), values(w_len));
    let e = damped::run(&mut u, &mut v, &damp, &w, (4, 3, 2), 10, &opts).unwrap_err();
    assert_eq!((u, v), (u0, v0), "{backend:?}: the arrays were touched");
    e
}

/// `w[t + 1]` for `t` in 0..10 reads w[1..=10]; `damp[z]` for `z` in 1..8 reads damp[1..=7].
fn short_slices_are_refused(backend: BackendChoice) {
    let e = refused(backend, 8, 3);
    assert!(
        matches!(&e, Error::SliceTooShort { name, len: 3, first: 1, last: 10, .. } if name == "w"),
        "{e:?}"
    );
    assert!(e.to_string().contains("pass at least 11 elements"), "{e}");
    let e = refused(backend, 7, 11);
    assert!(
        matches!(&e, Error::SliceTooShort { name, len: 7, first: 1, last: 7, .. } if name == "damp"),
        "{e:?}"
    );
    // Long enough: the run goes ahead (on the CPU with the serial function's bits; a device's
    // arithmetic may differ in the last digits).
    let (mut u, mut v) = start();
    let (mut su, mut sv) = start();
    let (damp, w) = (values(8), values(11));
    damped::serial(&mut su, &mut sv, &damp, &w, (4, 3, 2), 10);
    let opts = Options::new().backend(backend).chunks(2).block_steps(3);
    damped::run(&mut u, &mut v, &damp, &w, (4, 3, 2), 10, &opts).expect("long enough");
    if backend == BackendChoice::Cpu {
        assert_eq!((u, v), (su, sv));
    } else {
        let most = (u - su).iter().fold(0f32, |m, d| m.max(d.abs()));
        assert!(most < 1e-4, "{backend:?}: differs from serial by {most}");
    }
}

#[test]
fn a_short_slice_is_a_typed_error_on_the_cpu() {
    short_slices_are_refused(BackendChoice::Cpu);
    // Through `try_run` (options from the environment; the only test here that sets it).
    std::env::set_var("PACC_BACKEND", "cpu");
    let (mut u, mut v) = start();
    let (u0, v0) = (u.clone(), v.clone());
    let (damp, w) = (values(8), values(3));
    let e = damped::try_run(&mut u, &mut v, &damp, &w, (4, 3, 2), 10).unwrap_err();
    assert!(matches!(&e, Error::SliceTooShort { last: 10, .. }), "{e:?}");
    assert_eq!((u, v), (u0, v0), "try_run touched the arrays");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_short_slice_is_a_typed_error_on_cuda() {
    gpu::device();
    short_slices_are_refused(BackendChoice::Cuda);
}
