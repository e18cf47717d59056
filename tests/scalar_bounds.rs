//! Loop bounds that are expressions (docs/internals.md §1, "Loop bounds"): a usize parameter
//! (`1..n - 1`), locals computed before the time loop (`lo..hi`), another axis's extent
//! (`1..nz - 1` on the y loop), `1..=ny - 2`, `r..ny - r`, `(nx / 4)..nx - 1`, `0..nx.min(hi)`
//! and nests of one step with different ranges equal the serial function bit for bit on the CPU
//! backend and the shuffled executor, every scheme, single steps and fused 2 and 3; on a CUDA
//! device too (ignored without one). A range that would leave the arrays is a typed error
//! naming the nest, the axis and the values, before any data is touched.

mod gpu;

use ndarray::{Array2, Array3};
use pacc::runtime::plan::PlanError;
use pacc::runtime::{BackendChoice, Error, Options, Report, Scheme};

/// 3D: the z loop runs to a parameter, the y loop to another axis's extent, the x loop from a
/// quotient; the second nest's ranges differ from the first's (`0..n - 1`, `1..nx`).
#[pacc::pipeline]
pub fn param3d(
    a: &mut Array3<f32>,
    b: &mut Array3<f32>,
    c: &mut Array3<f32>,
    n: usize,
    steps: usize,
) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 1..n - 1 {
            for y in 1..nz - 1 {
                for x in (nx / 4)..nx - 1 {
                    b[[z, y, x]] = 0.3 * a[[z, y, x]]
                        + 0.1 * (a[[z - 1, y, x]] + a[[z + 1, y, x]] + a[[z, y - 1, x]])
                        + 0.1 * (a[[z, y + 1, x]] + a[[z, y, x - 1]] + a[[z, y, x + 1]])
                        + 0.05 * c[[z, y, x]];
                }
            }
        }
        for z in 0..n - 1 {
            for y in 0..ny {
                for x in 1..nx {
                    c[[z, y, x]] = 0.5 * b[[z + 1, y, x - 1]] + 0.25;
                }
            }
        }
        std::mem::swap(a, b);
    }
}

/// 2D: locals before the time loop, an inclusive range, expressions of a parameter and `min`;
/// the two nests' x ranges differ.
#[pacc::pipeline]
pub fn locals2d(
    u: &mut Array2<f64>,
    v: &mut Array2<f64>,
    w: &mut Array2<f64>,
    r: usize,
    steps: usize,
) {
    let (ny, nx) = u.dim();
    let hi = nx - 1;
    let lo: usize = r;
    for _t in 0..steps {
        for y in 1..=ny - 2 {
            for x in lo..hi {
                v[[y, x]] = 0.25 * (u[[y - 1, x]] + u[[y + 1, x]] + u[[y, x - 1]] + u[[y, x + 1]])
                    + 0.125 * w[[y, x]];
            }
        }
        for y in r..ny - r {
            for x in 0..nx.min(hi) {
                w[[y, x]] = 0.5 * v[[y, x + 1]] - 0.25;
            }
        }
        std::mem::swap(u, v);
    }
}

/// A loop bound read from a parameter with nothing else to check it: `0..m` writes plane
/// `m - 1`, which must exist.
#[pacc::pipeline]
pub fn write_to(a: &mut Array2<f32>, b: &mut Array2<f32>, m: usize, steps: usize) {
    let (_ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 0..m {
            for x in 1..nx - 1 {
                b[[y, x]] = a[[y, x - 1]] + a[[y, x + 1]];
            }
        }
        std::mem::swap(a, b);
    }
}

fn field3(n: (usize, usize, usize), k: f32) -> Array3<f32> {
    Array3::from_shape_fn(n, |(z, y, x)| ((z * 7 + y * 3 + x) as f32 * 0.37 + k).sin())
}

fn field2(n: (usize, usize), k: f64) -> Array2<f64> {
    Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x) as f64 * 0.29 + k).cos())
}

fn same<D: ndarray::Dimension>(
    got: &ndarray::Array<f32, D>,
    want: &ndarray::Array<f32, D>,
) -> bool {
    got.iter()
        .zip(want)
        .all(|(g, w)| g.to_bits() == w.to_bits())
}

fn same64<D: ndarray::Dimension>(
    got: &ndarray::Array<f64, D>,
    want: &ndarray::Array<f64, D>,
) -> bool {
    got.iter()
        .zip(want)
        .all(|(g, w)| g.to_bits() == w.to_bits())
}

/// Every scheme with several chunk counts and blocking depths, single steps and fused 2 and 3
/// steps per launch, on `backend`; the shuffled executor on every scheme too.
fn settings(backend: BackendChoice) -> Vec<Options> {
    let mut all = Vec::new();
    for scheme in Scheme::ALL {
        for (chunks, k) in [(1, 6), (3, 2), (4, 6)] {
            for fuse in [1, 2, 3] {
                let o = Options::new()
                    .backend(backend)
                    .chunks(chunks)
                    .block_steps(k);
                all.push(o.scheme(scheme).fuse(fuse));
            }
        }
    }
    if backend == BackendChoice::Cpu {
        for (i, scheme) in Scheme::ALL.into_iter().enumerate() {
            for fuse in [1, 2, 3] {
                let o = Options::new().backend(BackendChoice::Shuffled((3 * i + fuse) as u64));
                all.push(o.chunks(3).block_steps(2 * fuse).scheme(scheme).fuse(fuse));
            }
        }
    }
    all
}

/// A fused setting ran fused (the report says so), a single-step one did not.
fn check_fused(r: &Report, o: &Options) {
    if let Some(s) = o.fuse.filter(|&s| s > 1) {
        let note = format!("fused: {s} steps per launch");
        assert!(
            r.adjustments.iter().any(|a| a.contains(&note)),
            "{o:?}: {:?}",
            r.adjustments
        );
    }
}

fn param3d_matches(backend: BackendChoice) {
    // nz < ny: the y loop runs to the z extent.
    let shape = (14, 20, 23);
    let steps = 6;
    for n in [12, 14, 2] {
        let (mut sa, mut sb, mut sc) = (field3(shape, 0.0), field3(shape, 1.0), field3(shape, 2.0));
        param3d::serial(&mut sa, &mut sb, &mut sc, n, steps);
        for o in settings(backend) {
            let (mut a, mut b, mut c) =
                (field3(shape, 0.0), field3(shape, 1.0), field3(shape, 2.0));
            let ((), r) = param3d::run(&mut a, &mut b, &mut c, n, steps, &o)
                .unwrap_or_else(|e| panic!("n = {n}, {o:?}: {e}"));
            check_fused(&r, &o);
            assert!(
                same(&a, &sa) && same(&b, &sb) && same(&c, &sc),
                "param3d n = {n}, {o:?}"
            );
        }
    }
}

fn locals2d_matches(backend: BackendChoice) {
    let shape = (31, 26);
    let steps = 6;
    for r in [1, 3, 14] {
        let (mut su, mut sv, mut sw) = (field2(shape, 0.0), field2(shape, 1.0), field2(shape, 2.0));
        locals2d::serial(&mut su, &mut sv, &mut sw, r, steps);
        for o in settings(backend) {
            let (mut u, mut v, mut w) =
                (field2(shape, 0.0), field2(shape, 1.0), field2(shape, 2.0));
            let ((), rep) = locals2d::run(&mut u, &mut v, &mut w, r, steps, &o)
                .unwrap_or_else(|e| panic!("r = {r}, {o:?}: {e}"));
            check_fused(&rep, &o);
            assert!(
                same64(&u, &su) && same64(&v, &sv) && same64(&w, &sw),
                "locals2d r = {r}, {o:?}"
            );
        }
    }
}

#[test]
fn a_parameter_another_axis_and_a_quotient_bound_3d_nests() {
    param3d_matches(BackendChoice::Cpu);
}

#[test]
fn locals_inclusive_ranges_and_min_bound_2d_nests() {
    locals2d_matches(BackendChoice::Cpu);
}

#[test]
fn the_program_counts_bounds_from_scalars() {
    let p = param3d::program();
    let k0 = &p.kernels[0].ranges;
    let name = |b: pacc::runtime::program::Bound| match b.base {
        pacc::runtime::program::Base::Scalar(s) => p.scalars[s].name.clone(),
        other => format!("{other:?}"),
    };
    // `1..n - 1`, `1..nz - 1`, `(nx / 4)..nx - 1`.
    assert_eq!((name(k0[0].hi), k0[0].hi.offset), ("n".to_string(), -1));
    assert_eq!((name(k0[1].hi), k0[1].hi.offset), ("nz".to_string(), -1));
    assert!(name(k0[2].lo).starts_with("__pacc_"), "{}", name(k0[2].lo));
    assert_eq!(k0[2].hi, pacc::runtime::program::Bound::end(-1));
    let l = locals2d::program();
    // `1..=ny - 2` is `1..ny - 1`, the form `1..ny - 1` takes.
    assert_eq!(
        l.kernels[0].ranges[0].hi,
        pacc::runtime::program::Bound::end(-1)
    );
    assert!(l.has_scalar_bounds());
}

#[test]
fn a_range_outside_the_arrays_is_a_typed_error_before_any_data_is_touched() {
    let (mut a, mut b) = (
        Array2::<f32>::ones((16, 12)),
        Array2::<f32>::zeros((16, 12)),
    );
    let o = Options::new().backend(BackendChoice::Cpu).chunks(2);
    let e = write_to::run(&mut a, &mut b, 17, 4, &o).unwrap_err();
    match &e {
        Error::Plan(PlanError::TooSmall {
            nest: 0,
            axis: 0,
            lo: 0,
            hi: 17,
            extent: 16,
            ..
        }) => {}
        other => panic!("{other}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("runs 0..17") && msg.contains("extent along axis 0 is 16"),
        "{msg}"
    );
    assert!(a.iter().all(|&v| v == 1.0) && b.iter().all(|&v| v == 0.0));
    // In range, and an empty range (as in Rust, nothing runs): the serial results.
    for m in [16, 0] {
        let (mut sa, mut sb) = (
            Array2::<f32>::ones((16, 12)),
            Array2::<f32>::zeros((16, 12)),
        );
        write_to::serial(&mut sa, &mut sb, m, 4);
        let (mut a, mut b) = (
            Array2::<f32>::ones((16, 12)),
            Array2::<f32>::zeros((16, 12)),
        );
        write_to::run(&mut a, &mut b, m, 4, &o).unwrap();
        assert!(same(&a, &sa) && same(&b, &sb), "m = {m}");
    }
    // A read past the end through a scalar bound: `1..n - 1` with n = 16 reads plane 15 of 14.
    let shape = (14, 20, 23);
    let (mut a, mut b, mut c) = (field3(shape, 0.0), field3(shape, 1.0), field3(shape, 2.0));
    let e = param3d::run(&mut a, &mut b, &mut c, 16, 2, &o).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("runs 1..15") && msg.contains("0..=15"),
        "{msg}"
    );
    assert!(same(&a, &field3(shape, 0.0)) && same(&c, &field3(shape, 2.0)));
}

#[test]
#[ignore = "needs a CUDA device"]
fn cuda_runs_scalar_bounds_bit_for_bit() {
    gpu::device();
    param3d_matches(BackendChoice::Cuda);
    locals2d_matches(BackendChoice::Cuda);
}
