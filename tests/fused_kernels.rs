//! The generated fused kernels on a CUDA device (`Options::fuse`): s steps per launch give the
//! serial function's bits for the models (a source term, a reduction reset every step, two
//! nests, 2D), in core and out of core with region sharing and the wavefront, on shapes no tile
//! divides, and the report names the fused form. Skips, saying why, where there is no device.

use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::runtime::{BackendChoice, Error, Options, Report, Scheme};

fn noise(seed: u64, lo: f32, hi: f32) -> impl FnMut() -> f32 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// (chunks, block steps, scheme, steps per launch): in core, region sharing, the wavefront.
fn combos() -> Vec<(usize, usize, Scheme, usize)> {
    let mut v = Vec::new();
    for s in [2, 3] {
        v.push((1, 12, Scheme::RegionSharing, s));
        v.push((3, 6, Scheme::RegionSharing, s));
        v.push((3, 6, Scheme::Wavefront, s));
    }
    v
}

fn opts(c: &(usize, usize, Scheme, usize)) -> Options {
    Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(c.0)
        .block_steps(c.1)
        .scheme(c.2)
        .fuse(c.3)
}

fn on_cuda<R>(f: impl FnOnce() -> Result<R, Error>) -> Option<R> {
    match f() {
        Ok(r) => Some(r),
        Err(Error::NoCuda { reason, .. }) => {
            eprintln!("skipping the fused-kernel comparison: {reason}");
            None
        }
        Err(e) => panic!("{e}"),
    }
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

fn fused_form(r: &Report) {
    assert!(
        r.kernels.iter().all(|k| k.form == "fused"),
        "{:?}",
        r.kernels
    );
}

#[test]
fn fused_acoustic_on_cuda_equals_serial() {
    let shape = (45, 38, 71);
    let steps = 12;
    let h = acoustic::HALO;
    let mut r = noise(3, -1.0, 1.0);
    let mut field = || {
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
    let (p0, c0) = (field(), field());
    let mut rv = noise(5, 0.01, 0.2);
    let vel = Array3::from_shape_fn(shape, |_| rv());
    let damp = acoustic::sponge(shape, 5, 0.1);
    let w = acoustic::ricker(25.0, 0.002, steps);
    let (sz, sy, sx) = (21, 17, 30);
    let (mut sp, mut sc) = (p0.clone(), c0.clone());
    acoustic::propagate::serial(&mut sp, &mut sc, &vel, &w, sz, sy, sx, 100.0, steps);
    let (mut qp, mut qc) = (p0.clone(), c0.clone());
    acoustic::propagate_sponge::serial(&mut qp, &mut qc, &vel, &damp, &w, sz, sy, sx, 100.0, steps);
    for c in combos() {
        let (mut p, mut q) = (p0.clone(), c0.clone());
        let Some(((), rep)) = on_cuda(|| {
            acoustic::propagate::run(
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
        }) else {
            return;
        };
        fused_form(&rep);
        assert_eq!((bits(&p, &sp), bits(&q, &sc)), (0, 0), "propagate {c:?}");
        let (mut p, mut q) = (p0.clone(), c0.clone());
        let Some(((), rep)) = on_cuda(|| {
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
        }) else {
            return;
        };
        fused_form(&rep);
        assert_eq!((bits(&p, &qp), bits(&q, &qc)), (0, 0), "sponge {c:?}");
    }
}

#[test]
fn fused_himeno_on_cuda_equals_serial_with_its_reduction() {
    let shape = (33, 29, 70);
    let iters = 12;
    let mut h = himeno::Himeno::new(shape);
    let mut r = noise(9, 0.0, 0.02);
    h.b0.mapv_inplace(|_| r());
    h.b2.mapv_inplace(|_| r());
    let mut s = h.clone();
    let want = s.serial(iters);
    for c in combos() {
        let mut g = h.clone();
        let Some((got, rep)) = on_cuda(|| g.run(iters, &opts(&c))) else {
            return;
        };
        fused_form(&rep);
        assert_eq!(bits(&g.p, &s.p), 0, "himeno p {c:?}");
        assert!(
            ((got - want) / want).abs() < 1e-4,
            "{c:?}: gosa {got} vs {want}"
        );
    }
}

#[test]
fn fused_laplace2d_on_cuda_equals_serial() {
    let (ny, nx, iters) = (61, 300, 12);
    let mut r = noise(7, 0.0, 1.0);
    let a0 = Array2::from_shape_fn((ny, nx), |_| r());
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, iters);
    for c in combos() {
        let (mut a, mut b) = (a0.clone(), a0.clone());
        let Some(((), rep)) = on_cuda(|| laplace2d::jacobi::run(&mut a, &mut b, iters, &opts(&c)))
        else {
            return;
        };
        fused_form(&rep);
        assert_eq!((bits(&a, &sa), bits(&b, &sb)), (0, 0), "laplace2d {c:?}");
    }
}
