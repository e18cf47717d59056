//! Fused runs (`Options::fuse`): s steps per kernel launch equal the serial function bit for bit
//! on the CPU backend and the shuffled executor, for every scheme and several chunk counts and
//! blocking depths (the CPU runs a fused group nest by nest on private copies; the GPU runs the
//! generated fused kernel, `tests/fused_kernels.rs`); a request the program or the call cannot
//! honour is a typed error naming the setting, before any data is touched.

use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::{BackendChoice, Error, Options, Scheme};

fn noise(seed: u64, lo: f32, hi: f32) -> impl FnMut() -> f32 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// (backend, chunks, group steps per block (in original steps), scheme, steps per launch).
fn combos() -> Vec<(BackendChoice, usize, usize, Scheme, usize)> {
    let mut v = Vec::new();
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
        for (d, k) in [(1, 12), (3, 4), (4, 6)] {
            for s in [2, 3] {
                v.push((BackendChoice::Cpu, d, k, scheme, s));
            }
        }
    }
    v.push((BackendChoice::Shuffled(7), 3, 6, Scheme::Wavefront, 2));
    v.push((BackendChoice::Shuffled(11), 3, 6, Scheme::RegionSharing, 3));
    v
}

fn opts(c: &(BackendChoice, usize, usize, Scheme, usize)) -> Options {
    Options::new()
        .backend(c.0)
        .chunks(c.1)
        .block_steps(c.2)
        .scheme(c.3)
        .fuse(c.4)
}

fn bits<D: ndarray::Dimension>(
    got: &ndarray::Array<f32, D>,
    want: &ndarray::Array<f32, D>,
) -> usize {
    got.iter()
        .zip(want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count()
}

#[test]
fn fused_acoustic_with_a_source_equals_serial() {
    let shape = (45, 18, 21);
    let steps = 12;
    let mut r = noise(3, -1.0, 1.0);
    let h = acoustic::HALO;
    let field = |r: &mut dyn FnMut() -> f32| {
        Array3::from_shape_fn(shape, |(z, y, x)| {
            let v = r();
            let inside =
                z >= h && y >= h && x >= h && z < shape.0 - h && y < shape.1 - h && x < shape.2 - h;
            if inside {
                v
            } else {
                0.0
            }
        })
    };
    let (p0, c0) = (field(&mut r), field(&mut r));
    let mut rv = noise(5, 0.01, 0.2);
    let vel = Array3::from_shape_fn(shape, |_| rv());
    let damp = acoustic::sponge(shape, 5, 0.1);
    let w = acoustic::ricker(25.0, 0.002, steps);
    let (sz, sy, sx) = (22, 9, 10);
    let (mut sp, mut sc) = (p0.clone(), c0.clone());
    acoustic::propagate::serial(&mut sp, &mut sc, &vel, &w, sz, sy, sx, 100.0, steps);
    let (mut qp, mut qc) = (p0.clone(), c0.clone());
    acoustic::propagate_sponge::serial(&mut qp, &mut qc, &vel, &damp, &w, sz, sy, sx, 100.0, steps);
    for c in combos() {
        let (mut p, mut q) = (p0.clone(), c0.clone());
        let ((), rep) = acoustic::propagate::run(
            &mut p,
            &mut q,
            &vel,
            &w,
            sz,
            sy,
            sx,
            100.0,
            steps,
            &opts(&c),
        )
        .unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert_eq!((bits(&p, &sp), bits(&q, &sc)), (0, 0), "propagate {c:?}");
        assert!(
            rep.adjustments
                .iter()
                .any(|a| a.contains(&format!("fused: {} steps per launch", c.4))),
            "{c:?}: {:?}",
            rep.adjustments
        );
        let (mut p, mut q) = (p0.clone(), c0.clone());
        acoustic::propagate_sponge::run(
            &mut p,
            &mut q,
            &vel,
            &damp,
            &w,
            sz,
            sy,
            sx,
            100.0,
            steps,
            &opts(&c),
        )
        .unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert_eq!((bits(&p, &qp), bits(&q, &qc)), (0, 0), "sponge {c:?}");
    }
}

#[test]
fn fused_himeno_equals_serial_with_its_reduction() {
    let shape = (33, 17, 20);
    let iters = 12;
    let mut h = himeno::Himeno::new(shape);
    let mut r = noise(9, 0.0, 0.02);
    h.b0.mapv_inplace(|_| r());
    h.b1.mapv_inplace(|_| r());
    let mut s = h.clone();
    let want = s.serial(iters);
    for c in combos() {
        let mut g = h.clone();
        let (got, _) = g
            .run(iters, &opts(&c))
            .unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert_eq!(bits(&g.p, &s.p), 0, "himeno p {c:?}");
        // The last iteration's gosa, summed in another order.
        assert!(
            ((got - want) / want).abs() < 1e-4,
            "{c:?}: gosa {got} vs {want}"
        );
    }
}

#[test]
fn fused_laplace2d_equals_serial() {
    let (ny, nx, iters) = (41, 29, 12);
    let mut r = noise(7, 0.0, 1.0);
    let a0 = Array2::from_shape_fn((ny, nx), |_| r());
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, iters);
    for c in combos() {
        let (mut a, mut b) = (a0.clone(), a0.clone());
        laplace2d::jacobi::run(&mut a, &mut b, iters, &opts(&c))
            .unwrap_or_else(|e| panic!("{c:?}: {e}"));
        assert_eq!((bits(&a, &sa), bits(&b, &sb)), (0, 0), "laplace2d {c:?}");
    }
}

#[test]
fn a_fused_request_the_call_cannot_honour_is_refused_before_any_data_is_touched() {
    let (ny, nx) = (20, 16);
    let a0 = Array2::from_shape_fn((ny, nx), |(y, x)| (y * 3 + x) as f32);
    let cases: Vec<(usize, Options, &str)> = vec![
        (
            7,
            Options::new().backend(BackendChoice::Cpu).fuse(2),
            "groups of 2, and the call has 7",
        ),
        (
            8,
            Options::new().backend(BackendChoice::Cpu).fuse(4),
            "no kernel fusing 4 steps",
        ),
        (
            8,
            Options::new()
                .backend(BackendChoice::Cpu)
                .fuse(2)
                .checkpoint(std::env::temp_dir().join("pacc-fused-refused"), 1),
            "checkpoints",
        ),
        (
            8,
            Options::new()
                .backend(BackendChoice::Cpu)
                .fuse(2)
                .compress_all(16.0)
                .block_steps(2),
            "compress",
        ),
    ];
    for (steps, o, why) in cases {
        let (mut a, mut b) = (a0.clone(), a0.clone());
        match laplace2d::jacobi::run(&mut a, &mut b, steps, &o) {
            Err(
                e @ Error::Setting {
                    setting: "fuse", ..
                },
            ) => {
                let m = e.to_string();
                assert!(m.contains(why), "{m}");
                assert!(m.contains("Options::fuse"), "{m}");
            }
            other => panic!("{why}: {other:?}"),
        }
        assert_eq!((&a, &b), (&a0, &a0), "{why}: the arrays were touched");
    }
}
