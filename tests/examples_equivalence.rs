//! Every pipelined example function, run on the CPU backend and on the shuffled executor for
//! several chunk counts, blocking depths and schemes, equals its `::serial` original bit for bit
//! (arrays); reduction values agree within the rounding of a different summation order.

use ndarray::{Array2, Array3};
use pacc::models::{acoustic, grayscott, himeno, laplace2d};
use pacc::runtime::rng::Lcg64;
use pacc::{BackendChoice, Options, Scheme};

/// Deterministic pseudo-random values in [lo, hi).
fn noise(seed: u64, lo: f32, hi: f32) -> impl FnMut() -> f32 {
    let mut g = Lcg64::new(seed);
    move || g.uniform(lo, hi)
}

fn backends() -> [BackendChoice; 3] {
    [
        BackendChoice::Cpu,
        BackendChoice::Shuffled(1),
        BackendChoice::Shuffled(0xdead_beef),
    ]
}

/// (chunks, block_steps, scheme) combinations every function is run with.
fn combos() -> Vec<(usize, usize, Scheme)> {
    let mut v = Vec::new();
    for scheme in Scheme::ALL {
        for (d, k) in [(1, 1), (1, 3), (3, 1), (3, 2), (4, 3)] {
            v.push((d, k, scheme));
        }
    }
    v
}

fn opts(backend: BackendChoice, d: usize, k: usize, scheme: Scheme) -> Options {
    Options::new()
        .backend(backend)
        .chunks(d)
        .block_steps(k)
        .scheme(scheme)
}

fn same_bits<D: ndarray::Dimension>(
    what: &str,
    got: &ndarray::Array<f32, D>,
    want: &ndarray::Array<f32, D>,
) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let bad = got
        .iter()
        .zip(want.iter())
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    if bad > 0 {
        let (idx, (g, w)) = got
            .indexed_iter()
            .zip(want.iter())
            .map(|((i, g), w)| (i, (*g, *w)))
            .find(|(_, (g, w))| g.to_bits() != w.to_bits())
            .unwrap();
        panic!("{what}: {bad} elements differ from the serial function; first at {idx:?}: {g:e} vs {w:e}");
    }
}

#[test]
fn laplace2d_equals_serial() {
    let (ny, nx, iters) = (37, 29, 11);
    let mut r = noise(7, 0.0, 1.0);
    let a0 = Array2::from_shape_fn((ny, nx), |_| r());
    let b0 = a0.clone();
    let (mut sa, mut sb) = (a0.clone(), b0.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, iters);
    for backend in backends() {
        for (d, k, scheme) in combos() {
            let what = format!("laplace2d {backend:?} chunks {d} block_steps {k} {scheme}");
            let (mut a, mut b) = (a0.clone(), b0.clone());
            let ((), report) =
                laplace2d::jacobi::run(&mut a, &mut b, iters, &opts(backend, d, k, scheme))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_ne!(report.backend, "serial", "{what}");
            same_bits(&format!("{what}: a"), &a, &sa);
            same_bits(&format!("{what}: b"), &b, &sb);
        }
    }
}

/// A run of more blocks than one plan holds runs in segments of one plan each
/// (`PlanOptions::segment_steps`), with the serial result on every scheme.
#[test]
fn a_run_longer_than_one_plan_equals_serial() {
    let (ny, nx) = (14, 9);
    let iters = pacc::runtime::plan::MAX_PLANNED_BLOCKS + 7;
    let mut r = noise(5, 0.0, 1.0);
    let a0 = Array2::from_shape_fn((ny, nx), |_| r());
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, iters);
    for scheme in Scheme::ALL {
        let what = format!("laplace2d {iters} steps {scheme}");
        let (mut a, mut b) = (a0.clone(), a0.clone());
        let o = opts(BackendChoice::Cpu, 3, 1, scheme);
        let ((), report) = laplace2d::jacobi::run(&mut a, &mut b, iters, &o)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(report.steps, iters, "{what}");
        same_bits(&format!("{what}: a"), &a, &sa);
        same_bits(&format!("{what}: b"), &b, &sb);
    }
}

#[test]
fn grayscott_equals_serial() {
    let (ny, nx, steps) = (34, 23, 9);
    // The classic start plus noise everywhere inside, so every point of both fields matters.
    let (mut u0, mut v0, _, _) = grayscott::init(ny, nx, 3);
    let mut r = noise(13, -0.05, 0.05);
    for y in 1..ny - 1 {
        for x in 1..nx - 1 {
            u0[[y, x]] += r();
            v0[[y, x]] += r().abs();
        }
    }
    let p = grayscott::DEFAULT;
    let run_serial = || {
        let (mut u, mut v, mut u2, mut v2) = (u0.clone(), v0.clone(), u0.clone(), v0.clone());
        grayscott::step::serial(
            &mut u, &mut v, &mut u2, &mut v2, p.du, p.dv, p.f, p.k, p.dt, steps,
        );
        (u, v, u2, v2)
    };
    let (su, sv, su2, sv2) = run_serial();
    for backend in backends() {
        for (d, k, scheme) in combos() {
            let what = format!("grayscott {backend:?} chunks {d} block_steps {k} {scheme}");
            let (mut u, mut v, mut u2, mut v2) = (u0.clone(), v0.clone(), u0.clone(), v0.clone());
            let ((), report) = grayscott::step::run(
                &mut u,
                &mut v,
                &mut u2,
                &mut v2,
                p.du,
                p.dv,
                p.f,
                p.k,
                p.dt,
                steps,
                &opts(backend, d, k, scheme),
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_ne!(report.backend, "serial", "{what}");
            same_bits(&format!("{what}: u"), &u, &su);
            same_bits(&format!("{what}: v"), &v, &sv);
            same_bits(&format!("{what}: u2"), &u2, &su2);
            same_bits(&format!("{what}: v2"), &v2, &sv2);
        }
    }
}

/// A random wavefield (zero in the 4-point frame), a random medium and a source.
struct Wave {
    prev: Array3<f32>,
    cur: Array3<f32>,
    vel: Array3<f32>,
    damp: Array3<f32>,
    wavelet: Vec<f32>,
}

fn wave(shape: (usize, usize, usize), steps: usize) -> Wave {
    let h = acoustic::HALO;
    let inside = |z: usize, y: usize, x: usize| {
        z >= h && y >= h && x >= h && z < shape.0 - h && y < shape.1 - h && x < shape.2 - h
    };
    let mut r = noise(3, -1.0, 1.0);
    let mut field = || {
        Array3::from_shape_fn(shape, |(z, y, x)| {
            let v = r();
            if inside(z, y, x) {
                v
            } else {
                0.0
            }
        })
    };
    let prev = field();
    let cur = field();
    let mut r = noise(5, 0.01, 0.2);
    Wave {
        prev,
        cur,
        vel: Array3::from_shape_fn(shape, |_| r()),
        damp: acoustic::sponge(shape, 5, 0.1),
        wavelet: acoustic::ricker(25.0, 0.002, steps),
    }
}

#[test]
fn acoustic_equals_serial() {
    let shape = (48, 17, 19);
    let steps = 7;
    let w = wave(shape, steps);
    let dx2 = 100.0f32;
    // One source in the middle of a chunk, one on the first plane of a chunk of 3.
    for src in [(24, 8, 9), (16, 5, 12)] {
        let (sz, sy, sx) = src;
        let (mut sp, mut sc) = (w.prev.clone(), w.cur.clone());
        acoustic::propagate::serial(&mut sp, &mut sc, &w.vel, &w.wavelet, sz, sy, sx, dx2, steps);
        for backend in backends() {
            for (d, k, scheme) in combos() {
                let what =
                    format!("acoustic src {src:?} {backend:?} chunks {d} block_steps {k} {scheme}");
                let (mut p, mut c) = (w.prev.clone(), w.cur.clone());
                let o = opts(backend, d, k, scheme);
                let ((), report) = acoustic::propagate::run(
                    &mut p, &mut c, &w.vel, &w.wavelet, sz, sy, sx, dx2, steps, &o,
                )
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_ne!(report.backend, "serial", "{what}");
                same_bits(&format!("{what}: cur"), &c, &sc);
                same_bits(&format!("{what}: prev"), &p, &sp);
            }
        }
    }
}

#[test]
fn acoustic_sponge_equals_serial() {
    let shape = (40, 21, 18);
    let steps = 6;
    let w = wave(shape, steps);
    let (sz, sy, sx) = (20, 10, 9);
    let dx2 = 25.0f32;
    let (mut sp, mut sc) = (w.prev.clone(), w.cur.clone());
    acoustic::propagate_sponge::serial(
        &mut sp, &mut sc, &w.vel, &w.damp, &w.wavelet, sz, sy, sx, dx2, steps,
    );
    for backend in backends() {
        for (d, k, scheme) in combos() {
            let what = format!("acoustic sponge {backend:?} chunks {d} block_steps {k} {scheme}");
            let (mut p, mut c) = (w.prev.clone(), w.cur.clone());
            let o = opts(backend, d, k, scheme);
            acoustic::propagate_sponge::run(
                &mut p, &mut c, &w.vel, &w.damp, &w.wavelet, sz, sy, sx, dx2, steps, &o,
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            same_bits(&format!("{what}: cur"), &c, &sc);
            same_bits(&format!("{what}: prev"), &p, &sp);
        }
    }
}

#[test]
fn himeno_equals_serial() {
    let shape = (20, 12, 14);
    let iters = 5;
    let mut h0 = himeno::Himeno::new(shape);
    // Perturb the coefficients so that every array matters.
    let mut r = noise(11, -0.05, 0.05);
    for a in [&mut h0.b0, &mut h0.b1, &mut h0.b2, &mut h0.wrk1] {
        a.mapv_inplace(|v| v + r());
    }
    let mut s = h0.clone();
    let sgosa = s.serial(iters);
    for backend in backends() {
        for (d, k, scheme) in combos() {
            let what = format!("himeno {backend:?} chunks {d} block_steps {k} {scheme}");
            let mut h = h0.clone();
            let (gosa, report) = h
                .run(iters, &opts(backend, d, k, scheme))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_ne!(report.backend, "serial", "{what}");
            same_bits(&format!("{what}: p"), &h.p, &s.p);
            let rel = ((gosa - sgosa) / sgosa).abs() as f64;
            assert!(
                rel <= himeno::gosa_tolerance(shape),
                "{what}: gosa {gosa:e} vs serial {sgosa:e} (rel {rel:e})"
            );
        }
    }
}

/// The compression forms the README shows, on the acoustic model (whose `prev` and `cur` trade
/// places, so they must be compressed together): each runs, compresses, and stays within the
/// codec's error of serial. (`PACC_COMPRESS=prev=16,cur=16` fills the same option.)
#[test]
fn the_readmes_compression_forms_run_on_the_acoustic_model() {
    let shape = (40, 16, 16);
    let steps = 6;
    let w = wave(shape, steps);
    let (sz, sy, sx, dx2) = (20, 8, 8, 100.0f32);
    let (mut sp, mut sc) = (w.prev.clone(), w.cur.clone());
    acoustic::propagate::serial(&mut sp, &mut sc, &w.vel, &w.wavelet, sz, sy, sx, dx2, steps);
    let cpu = || {
        Options::new()
            .backend(BackendChoice::Cpu)
            .chunks(2)
            .block_steps(2)
    };
    let forms = [
        (
            "compress(prev, cur)",
            cpu().compress("prev", 16.0).compress("cur", 16.0),
        ),
        ("compress_all", cpu().compress_all(16.0)),
    ];
    for (what, o) in forms {
        let (mut p, mut c) = (w.prev.clone(), w.cur.clone());
        let ((), report) = acoustic::propagate::run(
            &mut p, &mut c, &w.vel, &w.wavelet, sz, sy, sx, dx2, steps, &o,
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(report.compression_ratio() > 1.1, "{what}: {report}");
        let err = c
            .iter()
            .zip(&sc)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(err < 1e-3, "{what}: max error {err}");
    }
    // One of the pair alone is refused, saying why.
    let (mut p, mut c) = (w.prev.clone(), w.cur.clone());
    let e = acoustic::propagate::run(
        &mut p,
        &mut c,
        &w.vel,
        &w.wavelet,
        sz,
        sy,
        sx,
        dx2,
        steps,
        &cpu().compress("cur", 16.0),
    )
    .unwrap_err();
    assert!(e.to_string().contains("prev"), "{e}");
}
