//! The fused-run comparisons both backends make (`fused_runs.rs` on the CPU, `fused_kernels.rs`
//! on a CUDA device): each body runs a program in s steps per launch under the [`Suite`]'s
//! settings and wants the serial function's bits, and a report that says the fused form ran.

use super::{
    ahead2d, asym3d, diag3d, differing, field3, fused_reach, kick3d, noise, rot3, row2d, skew3d,
};
use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::runtime::{BackendChoice, Error, Options, Report, Scheme};
use pacc_translate::codegen::fuse::FUSE_STEPS;

/// Which backend a suite runs, and so how its report shows a fused run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Cpu,
    Cuda,
}

/// The settings of one fused run.
#[derive(Clone, Copy, Debug)]
pub struct Combo {
    pub backend: BackendChoice,
    pub chunks: usize,
    /// Group steps per block, in original steps.
    pub block_steps: usize,
    /// `None`: the planner's choice.
    pub scheme: Option<Scheme>,
    /// Steps per launch.
    pub fuse: usize,
    /// The one-column-per-thread fused form (`vx=1`), not the vector form.
    pub scalar: bool,
}

impl Combo {
    pub fn new(
        backend: BackendChoice,
        chunks: usize,
        block_steps: usize,
        scheme: Scheme,
        fuse: usize,
    ) -> Combo {
        Combo {
            backend,
            chunks,
            block_steps,
            scheme: Some(scheme),
            fuse,
            scalar: false,
        }
    }

    /// These settings with the one-column-per-thread fused form.
    pub fn scalar(self) -> Combo {
        Combo {
            scalar: true,
            ..self
        }
    }

    pub fn options(&self) -> Options {
        let o = Options::new()
            .backend(self.backend)
            .chunks(self.chunks)
            .block_steps(self.block_steps)
            .fuse(self.fuse);
        let o = if self.scalar {
            let t = pacc::runtime::MarchTuning::parse("vx=1").expect("a march setting");
            o.march(t)
        } else {
            o
        };
        match self.scheme {
            Some(s) => o.scheme(s),
            None => o,
        }
    }
}

/// The shapes each comparison runs on (the device suite's are wider, to span several thread
/// blocks).
pub struct Shapes {
    pub acoustic: (usize, usize, usize),
    pub acoustic_source: (usize, usize, usize),
    pub himeno: (usize, usize, usize),
    pub laplace2d: (usize, usize),
    pub row2d: (usize, usize),
    /// The 3D and the 2D programs of the any-number-of-groups comparison.
    pub groups3d: (usize, usize, usize),
    pub groups2d: (usize, usize),
}

/// One backend's settings for the shared comparisons.
pub struct Suite {
    pub target: Target,
    pub backend: BackendChoice,
    /// The settings every comparison runs.
    pub combos: Vec<Combo>,
    /// Chunks of one or two planes, thinner than what one launch reads beyond its output
    /// planes: run on the programs of `tests/common`, whose reports must keep those chunks.
    pub thin: Vec<Combo>,
    /// The settings of the any-number-of-groups comparison, for `s` steps per launch.
    pub group_combos: fn(usize) -> Vec<Combo>,
    pub shapes: Shapes,
    /// Which of Himeno's `b0`, `b1`, `b2` get noise (the rest stay 0).
    pub himeno_noisy_b: [usize; 2],
    /// Steps per launch whose acoustic runs must take the fused vector form (unless a combo
    /// asks for the one-column form).
    pub acoustic_vector: &'static [usize],
}

/// Step counts for the programs of `tests/common`: 2 and 4 groups of 3 steps, 3 and 6 groups
/// of 2 (the names end bound to the buffers as the serial loop leaves them however many groups
/// run).
pub const STEPS: [usize; 2] = [6, 12];

impl Suite {
    /// The result of running `f` with `c`'s options; an error (a missing device included)
    /// fails the test.
    pub fn run<R>(&self, c: &Combo, f: impl FnOnce(&Options) -> Result<R, Error>) -> R {
        f(&c.options()).unwrap_or_else(|e| panic!("{c:?}: {e}"))
    }

    /// The report shows the fused form ran: the CPU backend notes it among its adjustments,
    /// the CUDA backend names the form of every kernel (the vector form where the program has
    /// one and the settings allow it, the one-column form where they ask for it).
    pub fn check_fused(&self, r: &Report, c: &Combo) {
        match self.target {
            Target::Cpu => assert!(
                r.adjustments
                    .iter()
                    .any(|a| a.contains(&format!("fused: {} steps per launch", c.fuse))),
                "{c:?}: {:?}",
                r.adjustments
            ),
            Target::Cuda => {
                assert!(
                    (r.kernels.iter())
                        .all(|k| k.form == "fused" || (!c.scalar && k.form == "fused-vector")),
                    "{c:?}: {:?}",
                    r.kernels
                );
                // Each says what its blocks computed: a warp pays for every lane it runs.
                assert!(
                    (r.kernels.iter()).all(|k| k.fused.is_some_and(|w| w.evaluations > 0.0
                        && w.lanes >= w.evaluations - 1e-9
                        && w.planes > 0.0)),
                    "{c:?}: {:?}",
                    r.kernels
                );
            }
        }
    }

    /// The acoustic run took the fused vector form where the suite wants it.
    pub fn check_vector(&self, r: &Report, c: &Combo) {
        if !c.scalar && self.acoustic_vector.contains(&c.fuse) {
            assert!(
                r.kernels.iter().all(|k| k.form == "fused-vector"),
                "{c:?}: {:?}",
                r.kernels
            );
        }
    }

    /// [`Suite::check_fused`], and where `thin` (region sharing and the wavefront) the planner
    /// kept the chunks asked for, some of them thinner than what one launch reads beyond its
    /// planes. Direct mapping cannot keep them that thin (the planner takes fewer chunks).
    pub fn check_report(&self, r: &Report, c: &Combo, program: &pacc::Program, thin: bool) {
        self.check_fused(r, c);
        if thin && c.scheme != Some(Scheme::DirectMap) {
            assert_eq!(r.chunks, c.chunks, "{c:?}: {:?}", r.adjustments);
            let reach = fused_reach(program, c.fuse);
            assert!(
                r.shape[0] / r.chunks < reach,
                "{c:?}: chunks of {} planes, reach {reach}",
                r.shape[0] / r.chunks
            );
        }
    }

    /// `combos` (not thin) and then `thin`.
    pub fn all_combos(&self) -> impl Iterator<Item = (Combo, bool)> + '_ {
        (self.combos.iter().map(|&c| (c, false))).chain(self.thin.iter().map(|&c| (c, true)))
    }
}

/// The acoustic model with its source term, with and without the sponge.
pub fn acoustic_with_a_source(suite: &Suite) {
    let shape = suite.shapes.acoustic;
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
    let (sz, sy, sx) = suite.shapes.acoustic_source;
    let (mut sp, mut sc) = (p0.clone(), c0.clone());
    acoustic::propagate::serial(&mut sp, &mut sc, &vel, &w, sz, sy, sx, 100.0, steps);
    let (mut qp, mut qc) = (p0.clone(), c0.clone());
    acoustic::propagate_sponge::serial(&mut qp, &mut qc, &vel, &damp, &w, sz, sy, sx, 100.0, steps);
    for c in &suite.combos {
        let (mut p, mut q) = (p0.clone(), c0.clone());
        let ((), rep) = suite.run(c, |o| {
            acoustic::propagate::run(&mut p, &mut q, &vel, &w, sz, sy, sx, 100.0, steps, o)
        });
        suite.check_fused(&rep, c);
        suite.check_vector(&rep, c);
        assert_eq!(
            (differing(&p, &sp), differing(&q, &sc)),
            (0, 0),
            "propagate {c:?}"
        );
        let (mut p, mut q) = (p0.clone(), c0.clone());
        let ((), rep) = suite.run(c, |o| {
            acoustic::propagate_sponge::run(
                &mut p, &mut q, &vel, &damp, &w, sz, sy, sx, 100.0, steps, o,
            )
        });
        suite.check_fused(&rep, c);
        assert_eq!(
            (differing(&p, &qp), differing(&q, &qc)),
            (0, 0),
            "sponge {c:?}"
        );
    }
}

/// Himeno: a reduction reset every step and a copy nest.
pub fn himeno_with_its_reduction(suite: &Suite) {
    let iters = 12;
    let mut h = himeno::Himeno::new(suite.shapes.himeno);
    let mut r = noise(9, 0.0, 0.02);
    for b in suite.himeno_noisy_b {
        let b = match b {
            0 => &mut h.b0,
            1 => &mut h.b1,
            _ => &mut h.b2,
        };
        b.mapv_inplace(|_| r());
    }
    let mut s = h.clone();
    let want = s.serial(iters);
    for c in &suite.combos {
        let mut g = h.clone();
        let (got, rep) = suite.run(c, |o| g.run(iters, o));
        suite.check_fused(&rep, c);
        assert_eq!(differing(&g.p, &s.p), 0, "himeno p {c:?}");
        // The last iteration's gosa, summed in another order.
        assert!(
            ((got - want) / want).abs() < 1e-4,
            "{c:?}: gosa {got} vs {want}"
        );
    }
}

/// The 2D Laplace model.
pub fn laplace2d(suite: &Suite) {
    let iters = 12;
    let mut r = noise(7, 0.0, 1.0);
    let a0 = Array2::from_shape_fn(suite.shapes.laplace2d, |_| r());
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, iters);
    for c in &suite.combos {
        let (mut a, mut b) = (a0.clone(), a0.clone());
        let ((), rep) = suite.run(c, |o| laplace2d::jacobi::run(&mut a, &mut b, iters, o));
        suite.check_fused(&rep, c);
        assert_eq!(
            (differing(&a, &sa), differing(&b, &sb)),
            (0, 0),
            "laplace2d {c:?}"
        );
    }
}

/// `skew3d`: asymmetric reaches, a read-only array read diagonally and sums over every step;
/// then `asym3d`, which reads `b` at its point after storing it: no fused form, and the run
/// says why.
pub fn asymmetric_reaches_and_sums(suite: &Suite) {
    let n = (37, 29, 45);
    let c: Array3<f32> = field3(n, 0.5);
    for steps in STEPS {
        let (mut sa, mut sb) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
        let want = skew3d::serial(&mut sa, &mut sb, &c, steps);
        for (o, thin) in suite.all_combos() {
            let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
            let (got, rep) = suite.run(&o, |op| skew3d::run(&mut a, &mut b, &c, steps, op));
            suite.check_report(&rep, &o, skew3d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "skew3d, {steps} steps, {o:?}");
            // The serial sum adds 300 000 f32 values in one order, the fused run in another;
            // each point's value counted once: in its own segment, chunk and output tile.
            assert!(
                ((got - want) / want).abs() < 1e-3,
                "{steps} steps, {o:?}: sum {got} vs {want}"
            );
        }
    }
    let (mut a, mut b) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
    for s in FUSE_STEPS {
        let o = Combo::new(suite.backend, 3, 6, Scheme::RegionSharing, s);
        match asym3d::run(&mut a, &mut b, &c, 6, &o.options()) {
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
            other => panic!("s = {s}: {other:?}"),
        }
    }
}

/// `diag3d`: f64 diagonals in every plane pair and a copy nest.
pub fn f64_diagonals_and_a_copy_nest(suite: &Suite) {
    let n = (31, 23, 37);
    for steps in STEPS {
        let (mut sp, mut sw) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
        diag3d::serial(&mut sp, &mut sw, steps);
        for (o, thin) in suite.all_combos() {
            let (mut p, mut w) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
            let ((), rep) = suite.run(&o, |op| diag3d::run(&mut p, &mut w, steps, op));
            suite.check_report(&rep, &o, diag3d::program(), thin);
            let d = (differing(&p, &sp), differing(&w, &sw));
            assert_eq!(d, (0, 0), "diag3d, {steps} steps, {o:?}");
        }
    }
}

/// `kick3d`: an f64 source term on the first plane the nest writes, in the middle, and on the
/// last one.
pub fn f64_source_term(suite: &Suite) {
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
            for (o, thin) in suite.all_combos() {
                let (mut u, mut v) = (u0.clone(), v0.clone());
                let ((), rep) = suite.run(&o, |op| {
                    kick3d::run(&mut u, &mut v, &m, &w, sz, sy, sx, steps, op)
                });
                suite.check_report(&rep, &o, kick3d::program(), thin);
                let d = (differing(&u, &su), differing(&v, &sv));
                assert_eq!(d, (0, 0), "kick3d at plane {sz}, {steps} steps, {o:?}");
            }
        }
    }
}

/// `row2d`: 2D, asymmetric reads along x.
pub fn asymmetric_rows_2d(suite: &Suite) {
    let n = suite.shapes.row2d;
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x * 11) % 23) as f32 * 0.05);
    for steps in STEPS {
        let (mut sa, mut sb) = (init.clone(), Array2::<f32>::zeros(n));
        row2d::serial(&mut sa, &mut sb, steps);
        for (o, thin) in suite.all_combos() {
            let (mut a, mut b) = (init.clone(), Array2::<f32>::zeros(n));
            let ((), rep) = suite.run(&o, |op| row2d::run(&mut a, &mut b, steps, op));
            suite.check_report(&rep, &o, row2d::program(), thin);
            let d = (differing(&a, &sa), differing(&b, &sb));
            assert_eq!(d, (0, 0), "row2d, {steps} steps, {o:?}");
        }
    }
}

/// Two 2D nests reading only forward (`ahead2d`): the second could compute a row below a
/// chunk's planes from rows inside it, outside what the group holds.
pub fn forward_reads_2d(suite: &Suite) {
    let n = suite.shapes.row2d;
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 7 + x * 3) % 19) as f64 * 0.1);
    for steps in STEPS {
        let (mut su, mut sv) = (init.clone(), init.clone());
        ahead2d::serial(&mut su, &mut sv, steps);
        for (o, thin) in suite.all_combos() {
            let (mut u, mut v) = (init.clone(), init.clone());
            let ((), rep) = suite.run(&o, |op| ahead2d::run(&mut u, &mut v, steps, op));
            suite.check_report(&rep, &o, ahead2d::program(), thin);
            let d = (differing(&u, &su), differing(&v, &sv));
            assert_eq!(d, (0, 0), "ahead2d, {steps} steps, {o:?}");
        }
    }
}

/// 1 to 5 groups of `s` steps leave the names bound as the serial loop does: one swap per step
/// (`row2d`, `skew3d`: an odd group exchanges the names, so the buffers a group writes
/// alternate) and three rotating levels (`rot3`: three steps bring them back; two do not fuse).
pub fn any_number_of_groups(suite: &Suite) {
    let n = suite.shapes.groups3d;
    let lv = |k: f32| field3::<f32>(n, k);
    let init = Array2::from_shape_fn(suite.shapes.groups2d, |(y, x)| {
        ((y * 5 + x * 11) % 23) as f32 * 0.05
    });
    let c: Array3<f32> = field3(n, 0.5);
    for s in FUSE_STEPS {
        for groups in 1..=5 {
            let steps = s * groups;
            let (mut ra, mut rb) = (init.clone(), Array2::<f32>::zeros(init.dim()));
            row2d::serial(&mut ra, &mut rb, steps);
            let (mut ta, mut tb) = (lv(0.0), Array3::<f32>::zeros(n));
            skew3d::serial(&mut ta, &mut tb, &c, steps);
            let (mut sp, mut sc, mut sx) = (lv(0.0), lv(0.3), lv(0.7));
            rot3::serial(&mut sp, &mut sc, &mut sx, steps);
            for o in (suite.group_combos)(s) {
                let (mut a, mut b) = (init.clone(), Array2::<f32>::zeros(init.dim()));
                let ((), rep) = suite.run(&o, |op| row2d::run(&mut a, &mut b, steps, op));
                suite.check_fused(&rep, &o);
                let d = (differing(&a, &ra), differing(&b, &rb));
                assert_eq!(d, (0, 0), "row2d, {steps} steps, {o:?}");
                let (mut a, mut b) = (lv(0.0), Array3::<f32>::zeros(n));
                let (_, rep) = suite.run(&o, |op| skew3d::run(&mut a, &mut b, &c, steps, op));
                suite.check_fused(&rep, &o);
                let d = (differing(&a, &ta), differing(&b, &tb));
                assert_eq!(d, (0, 0), "skew3d, {steps} steps, {o:?}");
                let (mut p, mut q, mut x) = (lv(0.0), lv(0.3), lv(0.7));
                match (s, rot3::run(&mut p, &mut q, &mut x, steps, &o.options())) {
                    (3, Ok(((), rep))) => {
                        suite.check_fused(&rep, &o);
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
