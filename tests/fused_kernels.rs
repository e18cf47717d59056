//! The generated fused kernels on a CUDA device (`Options::fuse`): s steps per launch give the
//! serial function's bits for the models (a source term, a reduction reset every step, two
//! nests, 2D), in core and out of core with region sharing and the wavefront, on shapes no tile
//! divides, and the report names the fused form. So do the programs of `tests/common`
//! (asymmetric reaches, a read-only array read diagonally, a sum over every step, two f64 nests,
//! 2D, an f64 source term), also in chunks thinner than what one launch reads beyond its planes.
//! Skips, saying why, where there is no device.

mod common;

use common::{asym3d, diag3d, differing, field3, fused_reach, kick3d, noise, rot3, row2d, skew3d};
use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::runtime::{BackendChoice, Error, Options, Report, Scheme};

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
        assert_eq!(
            (differing(&p, &sp), differing(&q, &sc)),
            (0, 0),
            "propagate {c:?}"
        );
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
        assert_eq!(
            (differing(&p, &qp), differing(&q, &qc)),
            (0, 0),
            "sponge {c:?}"
        );
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
        assert_eq!(differing(&g.p, &s.p), 0, "himeno p {c:?}");
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
        assert_eq!(
            (differing(&a, &sa), differing(&b, &sb)),
            (0, 0),
            "laplace2d {c:?}"
        );
    }
}

/// `combos()` and chunks of one or two planes, thinner than what one launch reads beyond its
/// output planes (a block of one launch and of two), with region sharing and the wavefront.
fn all_combos() -> impl Iterator<Item = ((usize, usize, Scheme, usize), bool)> {
    let thin = [2, 3].into_iter().flat_map(|s| {
        [
            (30, s, Scheme::RegionSharing, s),
            (30, 2 * s, Scheme::RegionSharing, s),
            (30, s, Scheme::Wavefront, s),
            (30, 2 * s, Scheme::Wavefront, s),
        ]
    });
    combos()
        .into_iter()
        .map(|c| (c, false))
        .chain(thin.map(|c| (c, true)))
}

/// Step counts for the programs of `tests/common`: 2 and 4 groups of 3 steps, 3 and 6 groups
/// of 2.
const STEPS: [usize; 2] = [6, 12];

/// The fused form ran, and where `thin` the planner kept chunks thinner than the group's reach.
fn check_report(
    r: &Report,
    c: &(usize, usize, Scheme, usize),
    program: &pacc::Program,
    thin: bool,
) {
    fused_form(r);
    if thin {
        assert_eq!(r.chunks, c.0, "{c:?}: {:?}", r.adjustments);
        let reach = fused_reach(program, c.3);
        assert!(r.shape[0] / r.chunks < reach, "{c:?}: reach {reach}");
    }
}

#[test]
fn fused_asymmetric_reaches_and_sums_on_cuda_equal_serial() {
    let n = (37, 29, 45);
    let c: Array3<f32> = field3(n, 0.5);
    for steps in STEPS {
        let (mut sa, mut sb) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
        let want = skew3d::serial(&mut sa, &mut sb, &c, steps);
        for (o, thin) in all_combos() {
            let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
            let Some((got, rep)) = on_cuda(|| skew3d::run(&mut a, &mut b, &c, steps, &opts(&o)))
            else {
                return;
            };
            check_report(&rep, &o, skew3d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "skew3d, {steps} steps, {o:?}");
            // Each point's value counted once: in its own segment, chunk and output tile.
            assert!(
                ((got - want) / want).abs() < 1e-3,
                "{steps} steps, {o:?}: sum {got} vs {want}"
            );
        }
    }
    // asym3d reads `b` at its point after storing it: no fused form, and the run says why.
    let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
    for s in [2, 3] {
        match asym3d::run(
            &mut a,
            &mut b,
            &c,
            6,
            &opts(&(3, 6, Scheme::RegionSharing, s)),
        ) {
            Err(
                e @ Error::Setting {
                    setting: "fuse", ..
                },
            ) => {
                let m = e.to_string();
                assert!(
                    m.contains("reads an array at its point after writing it"),
                    "{m}"
                );
            }
            Err(Error::NoCuda { reason, .. }) => {
                eprintln!("skipping the fused-kernel comparison: {reason}");
                return;
            }
            other => panic!("s = {s}: {other:?}"),
        }
    }
}

#[test]
fn fused_f64_diagonals_and_a_copy_nest_on_cuda_equal_serial() {
    let n = (31, 23, 37);
    for steps in STEPS {
        let (mut sp, mut sw) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
        diag3d::serial(&mut sp, &mut sw, steps);
        for (o, thin) in all_combos() {
            let (mut p, mut w) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
            let Some(((), rep)) = on_cuda(|| diag3d::run(&mut p, &mut w, steps, &opts(&o))) else {
                return;
            };
            check_report(&rep, &o, diag3d::program(), thin);
            let d = (differing(&p, &sp), differing(&w, &sw));
            assert_eq!(d, (0, 0), "diag3d, {steps} steps, {o:?}");
        }
    }
}

#[test]
fn fused_f64_source_term_on_cuda_equals_serial() {
    let n = (37, 21, 29);
    let m = Array3::from_shape_fn(n, |(z, y, x)| {
        0.02 + ((z + 2 * y + 3 * x) % 7) as f64 * 0.01
    });
    let w: Vec<f64> = (0..12).map(|t| 0.5 + 0.25 * t as f64).collect();
    let (u0, v0) = (field3::<f64>(n, 0.0), field3::<f64>(n, 0.3));
    // The source on the first plane the nest writes, in the middle, on the last one.
    for (sz, sy, sx) in [(2, 5, 7), (19, 10, 13), (35, 18, 2)] {
        for steps in STEPS {
            let (mut su, mut sv) = (u0.clone(), v0.clone());
            kick3d::serial(&mut su, &mut sv, &m, &w, sz, sy, sx, steps);
            for (o, thin) in all_combos() {
                let (mut u, mut v) = (u0.clone(), v0.clone());
                let Some(((), rep)) =
                    on_cuda(|| kick3d::run(&mut u, &mut v, &m, &w, sz, sy, sx, steps, &opts(&o)))
                else {
                    return;
                };
                check_report(&rep, &o, kick3d::program(), thin);
                let d = (differing(&u, &su), differing(&v, &sv));
                assert_eq!(d, (0, 0), "kick3d at plane {sz}, {steps} steps, {o:?}");
            }
        }
    }
}

#[test]
fn fused_2d_asymmetric_rows_on_cuda_equal_serial() {
    // Rows wider than two of the block's output tiles, and no whole number of them.
    let n = (41, 1030);
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x * 11) % 23) as f32 * 0.05);
    for steps in STEPS {
        let (mut sa, mut sb) = (init.clone(), Array2::<f32>::zeros(n));
        row2d::serial(&mut sa, &mut sb, steps);
        for (o, thin) in all_combos() {
            let (mut a, mut b) = (init.clone(), Array2::<f32>::zeros(n));
            let Some(((), rep)) = on_cuda(|| row2d::run(&mut a, &mut b, steps, &opts(&o))) else {
                return;
            };
            check_report(&rep, &o, row2d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "row2d, {steps} steps, {o:?}");
        }
    }
}

#[test]
fn fused_runs_on_cuda_of_any_number_of_groups_leave_the_names_as_serial() {
    // One swap per step (an odd group exchanges the names) and three rotating levels (three
    // steps bring them back; two do not fuse): 1 to 5 groups.
    let n = (19, 13, 37);
    let lv = |k: f32| field3::<f32>(n, k);
    let c: Array3<f32> = field3(n, 0.5);
    for s in [2, 3] {
        for groups in 1..=5 {
            let steps = s * groups;
            let (mut ta, mut tb) = (lv(0.0), Array3::<f32>::zeros(n));
            skew3d::serial(&mut ta, &mut tb, &c, steps);
            let (mut sp, mut sc, mut sx) = (lv(0.0), lv(0.3), lv(0.7));
            rot3::serial(&mut sp, &mut sc, &mut sx, steps);
            for o in [
                (1, 12, Scheme::RegionSharing, s),
                (3, 2 * s, Scheme::Wavefront, s),
            ] {
                let (mut a, mut b) = (lv(0.0), Array3::<f32>::zeros(n));
                let Some((_, rep)) = on_cuda(|| skew3d::run(&mut a, &mut b, &c, steps, &opts(&o)))
                else {
                    return;
                };
                fused_form(&rep);
                let d = (differing(&a, &ta), differing(&b, &tb));
                assert_eq!(d, (0, 0), "skew3d, {steps} steps, {o:?}");
                let (mut p, mut q, mut x) = (lv(0.0), lv(0.3), lv(0.7));
                match (s, rot3::run(&mut p, &mut q, &mut x, steps, &opts(&o))) {
                    (3, Ok(((), rep))) => {
                        fused_form(&rep);
                        let d = (differing(&p, &sp), differing(&q, &sc), differing(&x, &sx));
                        assert_eq!(d, (0, 0, 0), "rot3, {steps} steps, {o:?}");
                    }
                    (
                        2,
                        Err(
                            e @ Error::Setting {
                                setting: "fuse", ..
                            },
                        ),
                    ) => assert!(e.to_string().contains("do not write"), "{e}"),
                    (_, other) => panic!("rot3, {steps} steps, {o:?}: {other:?}"),
                }
            }
        }
    }
}
