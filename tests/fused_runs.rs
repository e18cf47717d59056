//! Fused runs (`Options::fuse`): s steps per kernel launch equal the serial function bit for bit
//! on the CPU backend and the shuffled executor, for every scheme and several chunk counts and
//! blocking depths (the CPU runs a fused group nest by nest on private copies; the GPU runs the
//! generated fused kernel, `tests/fused_kernels.rs`); a request the program or the call cannot
//! honour is a typed error naming the setting, before any data is touched. Besides the models,
//! the programs of `tests/common` (asymmetric reaches, a read-only array read diagonally, a sum
//! over every step, two f64 nests, 2D, an f64 source term) on shapes no tile divides, also in
//! chunks thinner than the planes one fused launch reads beyond its own.

mod common;

use common::{asym3d, diag3d, differing, field3, fused_reach, kick3d, noise, rot3, row2d, skew3d};
use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::{BackendChoice, Error, Options, Report, Scheme};

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
        assert_eq!(
            (differing(&p, &sp), differing(&q, &sc)),
            (0, 0),
            "propagate {c:?}"
        );
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
        assert_eq!(
            (differing(&p, &qp), differing(&q, &qc)),
            (0, 0),
            "sponge {c:?}"
        );
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
        assert_eq!(differing(&g.p, &s.p), 0, "himeno p {c:?}");
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
        assert_eq!(
            (differing(&a, &sa), differing(&b, &sb)),
            (0, 0),
            "laplace2d {c:?}"
        );
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

/// Chunks of one or two planes, fewer than a fused launch reads beyond its output planes (and
/// a block of two launches reads twice as far): region sharing forwards planes through several
/// chunks, the wavefront's staircase spans several. Direct mapping cannot keep them that thin
/// (the planner takes fewer chunks) but runs with as many as it can.
fn thin_combos() -> Vec<(BackendChoice, usize, usize, Scheme, usize)> {
    let mut v = Vec::new();
    for s in [2, 3] {
        for scheme in [Scheme::RegionSharing, Scheme::Wavefront] {
            v.push((BackendChoice::Cpu, 30, s, scheme, s));
            v.push((BackendChoice::Cpu, 30, 2 * s, scheme, s));
        }
        v.push((BackendChoice::Cpu, 12, s, Scheme::DirectMap, s));
    }
    v.push((BackendChoice::Shuffled(5), 30, 6, Scheme::Wavefront, 3));
    v.push((BackendChoice::Shuffled(13), 30, 4, Scheme::RegionSharing, 2));
    v
}

fn all_combos() -> impl Iterator<Item = ((BackendChoice, usize, usize, Scheme, usize), bool)> {
    combos()
        .into_iter()
        .map(|c| (c, false))
        .chain(thin_combos().into_iter().map(|c| (c, true)))
}

/// Step counts for the programs of `tests/common`: 2 and 4 groups of 3 steps, 3 and 6 groups
/// of 2 (the names end bound to the buffers as the serial loop leaves them however many groups
/// run).
const STEPS: [usize; 2] = [6, 12];

/// The report of a fused run of `s` steps per launch: it says so, and where `thin` (region
/// sharing and the wavefront) the planner kept the chunks asked for, some of them thinner than
/// what one launch reads beyond its planes.
fn check_report(
    r: &Report,
    c: &(BackendChoice, usize, usize, Scheme, usize),
    program: &pacc::Program,
    thin: bool,
) {
    let s = c.4;
    assert!(
        r.adjustments
            .iter()
            .any(|a| a.contains(&format!("fused: {s} steps per launch"))),
        "{c:?}: {:?}",
        r.adjustments
    );
    if thin && c.3 != Scheme::DirectMap {
        assert_eq!(r.chunks, c.1, "{c:?}: {:?}", r.adjustments);
        let reach = fused_reach(program, s);
        assert!(
            r.shape[0] / r.chunks < reach,
            "{c:?}: chunks of {} planes, reach {reach}",
            r.shape[0] / r.chunks
        );
    }
}

#[test]
fn fused_asymmetric_reaches_with_a_read_only_array_and_sums_equal_serial() {
    let n = (37, 29, 45);
    let c: Array3<f32> = field3(n, 0.5);
    for steps in STEPS {
        let (mut sa, mut sb) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
        let want = skew3d::serial(&mut sa, &mut sb, &c, steps);
        for (o, thin) in all_combos() {
            let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
            let (got, rep) = skew3d::run(&mut a, &mut b, &c, steps, &opts(&o))
                .unwrap_or_else(|e| panic!("{o:?}: {e}"));
            check_report(&rep, &o, skew3d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "skew3d, {steps} steps, {o:?}");
            // The serial sum adds 300 000 f32 values in one order, the fused run in another.
            assert!(
                ((got - want) / want).abs() < 1e-3,
                "{steps} steps, {o:?}: sum {got} vs {want}"
            );
        }
    }
}

#[test]
fn a_program_reading_a_point_it_wrote_has_no_fused_form_and_says_why() {
    // asym3d sums `b` at its point after storing it: the single-step kernels serve it.
    let why = "reads an array at its point after writing it";
    let n = (13, 11, 17);
    let c: Array3<f32> = field3(n, 0.5);
    for s in [2, 3] {
        let e = asym3d::program().fusion.get(s).unwrap_err();
        assert!(e.contains(why), "{e}");
        assert!(!asym3d::CUDA_SOURCE.contains(&format!("pacc_asym3d_f{s}")));
        let (a0, b0) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let o = Options::new().backend(BackendChoice::Cpu).chunks(3).fuse(s);
        match asym3d::run(&mut a, &mut b, &c, 6, &o) {
            Err(
                e @ Error::Setting {
                    setting: "fuse", ..
                },
            ) => {
                let m = e.to_string();
                assert!(m.contains(why), "{m}");
                assert!(m.contains(&format!("no kernel fusing {s} steps")), "{m}");
            }
            other => panic!("s = {s}: {other:?}"),
        }
        assert_eq!((&a, &b), (&a0, &b0), "s = {s}: the arrays were touched");
    }
}

#[test]
fn fused_f64_diagonals_and_a_copy_nest_equal_serial() {
    let n = (31, 23, 37);
    for steps in STEPS {
        let (mut sp, mut sw) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
        diag3d::serial(&mut sp, &mut sw, steps);
        for (o, thin) in all_combos() {
            let (mut p, mut w) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
            let ((), rep) = diag3d::run(&mut p, &mut w, steps, &opts(&o))
                .unwrap_or_else(|e| panic!("{o:?}: {e}"));
            check_report(&rep, &o, diag3d::program(), thin);
            let d = (differing(&p, &sp), differing(&w, &sw));
            assert_eq!(d, (0, 0), "diag3d, {steps} steps, {o:?}");
        }
    }
}

#[test]
fn fused_f64_source_term_equals_serial_on_the_first_a_middle_and_the_last_plane() {
    let n = (37, 21, 29);
    let m = Array3::from_shape_fn(n, |(z, y, x)| {
        0.02 + ((z + 2 * y + 3 * x) % 7) as f64 * 0.01
    });
    let w: Vec<f64> = (0..12).map(|t| 0.5 + 0.25 * t as f64).collect();
    let (u0, v0) = (field3::<f64>(n, 0.0), field3::<f64>(n, 0.3));
    for (sz, sy, sx) in [(2, 5, 7), (19, 10, 13), (35, 18, 2)] {
        for steps in STEPS {
            let (mut su, mut sv) = (u0.clone(), v0.clone());
            kick3d::serial(&mut su, &mut sv, &m, &w, sz, sy, sx, steps);
            for (o, thin) in all_combos() {
                let (mut u, mut v) = (u0.clone(), v0.clone());
                let ((), rep) = kick3d::run(&mut u, &mut v, &m, &w, sz, sy, sx, steps, &opts(&o))
                    .unwrap_or_else(|e| panic!("{o:?}: {e}"));
                check_report(&rep, &o, kick3d::program(), thin);
                let d = (differing(&u, &su), differing(&v, &sv));
                assert_eq!(d, (0, 0), "kick3d at plane {sz}, {steps} steps, {o:?}");
            }
        }
    }
}

#[test]
fn fused_2d_asymmetric_rows_equal_serial() {
    let n = (41, 29);
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x * 11) % 23) as f32 * 0.05);
    for steps in STEPS {
        let (mut sa, mut sb) = (init.clone(), Array2::<f32>::zeros(n));
        row2d::serial(&mut sa, &mut sb, steps);
        for (o, thin) in all_combos() {
            let (mut a, mut b) = (init.clone(), Array2::<f32>::zeros(n));
            let ((), rep) = row2d::run(&mut a, &mut b, steps, &opts(&o))
                .unwrap_or_else(|e| panic!("{o:?}: {e}"));
            check_report(&rep, &o, row2d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "row2d, {steps} steps, {o:?}");
        }
    }
}

#[test]
fn fused_runs_of_any_number_of_groups_leave_the_names_as_serial() {
    // One swap per step: an odd group (3 steps) exchanges the names, so the buffers a group
    // writes alternate; 1 to 5 groups, in core and in several chunks and blocks.
    let n = (17, 11, 13);
    let init = Array2::from_shape_fn((23, 19), |(y, x)| ((y * 5 + x * 11) % 23) as f32 * 0.05);
    let c: Array3<f32> = field3(n, 0.5);
    for s in [2, 3] {
        for groups in 1..=5 {
            let steps = s * groups;
            let (mut sa, mut sb) = (init.clone(), Array2::<f32>::zeros(init.dim()));
            row2d::serial(&mut sa, &mut sb, steps);
            let (mut ta, mut tb) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
            skew3d::serial(&mut ta, &mut tb, &c, steps);
            for (d, k) in [(1, 12), (3, s), (4, 2 * s)] {
                let o = Options::new()
                    .backend(BackendChoice::Cpu)
                    .chunks(d)
                    .block_steps(k)
                    .fuse(s);
                let (mut a, mut b) = (init.clone(), Array2::<f32>::zeros(init.dim()));
                row2d::run(&mut a, &mut b, steps, &o).unwrap();
                let got = (differing(&a, &sa), differing(&b, &sb));
                assert_eq!(
                    got,
                    (0, 0),
                    "row2d, s = {s}, {steps} steps, {d} chunks, {k}"
                );
                let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
                skew3d::run(&mut a, &mut b, &c, steps, &o).unwrap();
                let got = (differing(&a, &ta), differing(&b, &tb));
                assert_eq!(
                    got,
                    (0, 0),
                    "skew3d, s = {s}, {steps} steps, {d} chunks, {k}"
                );
            }
        }
    }
}

#[test]
fn three_rotating_levels_fuse_three_steps_and_say_why_not_two() {
    let n = (19, 13, 17);
    let lv = |k: f32| field3::<f32>(n, k);
    // After two steps `next` names the array that was `cur`, which two steps do not write.
    let e = rot3::program().fusion.get(2).unwrap_err();
    assert!(e.contains("`next` naming the array that was `cur`"), "{e}");
    let (mut p, mut c, mut x) = (lv(0.0), lv(0.3), lv(0.7));
    let o = Options::new().backend(BackendChoice::Cpu).fuse(2);
    match rot3::run(&mut p, &mut c, &mut x, 6, &o) {
        Err(
            e @ Error::Setting {
                setting: "fuse", ..
            },
        ) => assert!(
            e.to_string().contains("which the 2 steps do not write"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!((&p, &c, &x), (&lv(0.0), &lv(0.3), &lv(0.7)));
    // Three steps bring every name back to its array.
    for steps in [3, 6, 9, 12] {
        let (mut sp, mut sc, mut sx) = (lv(0.0), lv(0.3), lv(0.7));
        rot3::serial(&mut sp, &mut sc, &mut sx, steps);
        for (d, k, scheme) in [
            (1, 12, Scheme::RegionSharing),
            (3, 3, Scheme::Wavefront),
            (10, 6, Scheme::RegionSharing),
        ] {
            let o = Options::new()
                .backend(BackendChoice::Cpu)
                .chunks(d)
                .block_steps(k)
                .scheme(scheme)
                .fuse(3);
            let (mut p, mut c, mut x) = (lv(0.0), lv(0.3), lv(0.7));
            rot3::run(&mut p, &mut c, &mut x, steps, &o).unwrap();
            let got = (differing(&p, &sp), differing(&c, &sc), differing(&x, &sx));
            assert_eq!(got, (0, 0, 0), "{steps} steps, {d} chunks, {k}, {scheme:?}");
        }
    }
}
