//! 1D grids (`Array1` and its views: 2D programs of shape `[n, 1]`, planes of one point,
//! chunked along the one axis) and 1D series read as slices: every scheme, several chunk counts
//! and blocking depths, the shuffled executor and fused runs equal the serial function bit for
//! bit. The CUDA comparison needs a device: ignored by a plain `cargo test`.

mod common;
mod gpu;

use common::differing;
use ndarray::{Array1, Array2, ArrayView1, ArrayViewMut1};
use pacc::runtime::{BackendChoice, Error, Options, Scheme};

/// The brief's heat equation, with a forcing series read at the time step, a point source,
/// a maximum and `u[[i - 1]]` beside `u[i]`.
#[pacc::pipeline]
fn heat1d(
    u: &mut Array1<f64>,
    v: &mut Array1<f64>,
    f: &Array1<f64>,
    alpha: f64,
    steps: usize,
) -> f64 {
    let n = u.len();
    let mut peak = f64::NEG_INFINITY;
    for t in 0..steps {
        for i in 1..n - 1 {
            let w = u[i] + alpha * (u[[i - 1]] - 2.0 * u[i] + u[i + 1]);
            v[i] = w;
            peak = peak.max(w);
        }
        std::mem::swap(u, v);
        u[[n / 2]] += f[t];
    }
    peak
}

/// Views, a reach of 3 on one side, a read-only grid (the coefficients) and `dim()`.
#[pacc::pipeline]
fn skew1d<'a>(
    mut a: ArrayViewMut1<'a, f32>,
    mut b: ArrayViewMut1<'a, f32>,
    c: ArrayView1<'a, f32>,
    steps: usize,
) {
    let n = a.dim();
    for _ in 0..steps {
        for i in 3..n - 1 {
            b[i] = c[i] * a[i - 3] + 0.5 * a[i + 1] - 0.25 * a[i];
        }
        std::mem::swap(&mut a, &mut b);
    }
}

/// A 2D grid beside a 1D series of another length, read at the row and the step.
#[pacc::pipeline]
fn forced2d(a: &mut Array2<f64>, b: &mut Array2<f64>, g: &Array1<f64>, steps: usize) {
    let (ny, nx) = a.dim();
    for t in 0..steps {
        for y in 1..ny - 1 {
            for x in 0..nx {
                b[[y, x]] = 0.5 * (a[[y - 1, x]] + a[[y + 1, x]]) + g[y] * g[[t]];
            }
        }
        std::mem::swap(a, b);
    }
}

fn wave(n: usize, k: f64) -> Array1<f64> {
    Array1::from_shape_fn(n, |i| ((i * 7) % 23) as f64 * 0.1 + k)
}

/// Every scheme with several chunk counts and depths, on the CPU backend and the shuffled
/// executor, then fused runs of 2 and 3 steps.
fn settings() -> Vec<Options> {
    let mut all = Vec::new();
    for scheme in Scheme::ALL {
        for (chunks, depth) in [(1, 1), (3, 2), (7, 4), (40, 3)] {
            for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(chunks as u64)] {
                all.push(
                    Options::new()
                        .backend(backend)
                        .scheme(scheme)
                        .chunks(chunks)
                        .block_steps(depth),
                );
            }
        }
    }
    all
}

fn fused_settings() -> Vec<Options> {
    let mut all = Vec::new();
    for scheme in [
        Scheme::RegionSharing,
        Scheme::Wavefront,
        Scheme::DirectMap,
        Scheme::StagedCopy,
    ] {
        for s in [2, 3] {
            for (chunks, backend) in [
                (1, BackendChoice::Cpu),
                (5, BackendChoice::Cpu),
                (4, BackendChoice::Shuffled(3)),
            ] {
                all.push(
                    Options::new()
                        .backend(backend)
                        .scheme(scheme)
                        .chunks(chunks)
                        .block_steps(2 * s)
                        .fuse(s),
                );
            }
        }
    }
    all
}

fn check_heat(opts: &Options, steps: usize) {
    let n = 101;
    let f = Array1::from_shape_fn(steps, |t| 0.01 * t as f64);
    let (mut su, mut sv) = (wave(n, 0.5), wave(n, 0.0));
    let want = heat1d::serial(&mut su, &mut sv, &f, 0.2, steps);
    let (mut u, mut v) = (wave(n, 0.5), wave(n, 0.0));
    let (got, report) = heat1d::run(&mut u, &mut v, &f, 0.2, steps, opts)
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    // A fused run says so (the CPU backend among its adjustments).
    if let (Some(s), BackendChoice::Cpu) = (opts.fuse, opts.backend) {
        let said = format!("fused: {s} steps per launch");
        assert!(
            report.adjustments.iter().any(|a| a.contains(&said)),
            "{opts:?}: {:?}",
            report.adjustments
        );
    }
    assert_eq!(got.to_bits(), want.to_bits(), "{opts:?}");
    assert_eq!((differing(&u, &su), differing(&v, &sv)), (0, 0), "{opts:?}");
}

fn check_skew(opts: &Options, steps: usize) {
    let n = 77;
    let c = Array1::from_shape_fn(n, |i| 0.5 + (i % 5) as f32 * 0.1);
    let a0 = Array1::from_shape_fn(n, |i| ((i * 3) % 11) as f32);
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    skew1d::serial(sa.view_mut(), sb.view_mut(), c.view(), steps);
    let (mut a, mut b) = (a0.clone(), a0.clone());
    skew1d::run(a.view_mut(), b.view_mut(), c.view(), steps, opts)
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    // The views swap inside the function only: the arrays hold what the serial run left.
    assert_eq!((differing(&a, &sa), differing(&b, &sb)), (0, 0), "{opts:?}");
}

fn check_forced(opts: &Options, steps: usize) {
    let (ny, nx) = (47, 9);
    let g = Array1::from_shape_fn(ny.max(steps), |i| 1.0 / (1 + i) as f64);
    let a0 = Array2::from_shape_fn((ny, nx), |(y, x)| (y * nx + x) as f64 * 0.01);
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    forced2d::serial(&mut sa, &mut sb, &g, steps);
    let (mut a, mut b) = (a0.clone(), a0.clone());
    forced2d::run(&mut a, &mut b, &g, steps, opts).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    assert_eq!((differing(&a, &sa), differing(&b, &sb)), (0, 0), "{opts:?}");
}

#[test]
fn heat1d_equals_serial() {
    for o in settings() {
        check_heat(&o, 9);
    }
}

#[test]
fn views_and_a_one_sided_reach_equal_serial() {
    for o in settings() {
        check_skew(&o, 7);
    }
}

#[test]
fn a_series_beside_a_2d_grid_equals_serial() {
    for o in settings() {
        check_forced(&o, 6);
    }
}

/// A 1D program has no fused form yet (its fused CUDA did not compile on the H200): a fused
/// request is refused as the `fuse` setting, before the arrays are touched.
#[test]
fn fused_1d_runs_are_refused_before_the_arrays_are_touched() {
    assert!(heat1d::program().fusion.kernels.is_empty());
    for o in fused_settings() {
        let n = 31;
        let f = Array1::from_shape_fn(12, |t| 0.01 * t as f64);
        let (mut u, mut v) = (wave(n, 0.5), wave(n, 0.0));
        let e = heat1d::run(&mut u, &mut v, &f, 0.2, 12, &o).unwrap_err();
        assert!(
            matches!(&e, Error::Setting { setting, .. } if *setting == "fuse"),
            "{o:?}: {e}"
        );
        assert_eq!(
            (differing(&u, &wave(n, 0.5)), differing(&v, &wave(n, 0.0))),
            (0, 0)
        );
    }
}

/// A series shorter than its reads is refused before the run, as a short slice is.
#[test]
fn a_short_series_is_refused() {
    let n = 20;
    let f = Array1::zeros(3);
    let (mut u, mut v) = (wave(n, 0.5), wave(n, 0.0));
    let e = heat1d::run(
        &mut u,
        &mut v,
        &f,
        0.2,
        5,
        &Options::new().backend(BackendChoice::Cpu),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::SliceTooShort { name, .. } if name == "f"),
        "{e}"
    );
    assert_eq!(differing(&u, &wave(n, 0.5)), 0);
}

/// On a CUDA device: the generated kernels of the 1D programs.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_1d_equals_serial() {
    gpu::device();
    for (chunks, depth) in [(1, 1), (3, 2), (8, 4)] {
        for scheme in Scheme::ALL {
            let o = Options::new()
                .backend(BackendChoice::Cuda)
                .scheme(scheme)
                .chunks(chunks)
                .block_steps(depth);
            check_heat(&o, 9);
            check_skew(&o, 7);
            check_forced(&o, 6);
        }
    }
}
