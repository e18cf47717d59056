//! Wavefront tiling over random programs: asymmetric reaches, several nests per step, swaps,
//! scratch arrays, point statements, reductions, rims, 2D and 3D, f32 and f64.
//!
//! For each program the plan is race free, computes every point of every step exactly once (the
//! chunks' planes of each kernel invocation tile its nest range, and the kernel points equal the
//! serial loop's), moves each array across the link once per block, and the CPU and shuffled
//! executors equal a serial interpreter of the same program bit for bit (reductions within the
//! rounding of the summation order).

mod common;

use ndarray::{ArrayD, IxDyn};
use pacc_runtime::exec::cpu::{self, Order};
use pacc_runtime::exec::{CpuKernels, GridElem, KernelFrame};
use pacc_runtime::host::{host_array, host_array_mut};
use pacc_runtime::plan::{self, race, OpKind, PlanOptions, Scheme};
use pacc_runtime::program::*;
use pacc_runtime::rng::SplitMix64;
use pacc_runtime::{BackendChoice, Invocation, Options};
use std::collections::HashMap;
use std::ops::{Add, Mul};
use std::sync::Arc;

trait Val: GridElem + Add<Output = Self> + Mul<Output = Self> + std::fmt::Debug {
    fn of(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn bits(self) -> u64;
}

impl Val for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Val for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// One nest: writes `write` at the centre from reads `(array, back, fwd, inner)`: axis-0
/// offsets `-back`, 0 and `+fwd`, and `+-inner` on the inner axes (`back < 0`: only `+fwd`).
#[derive(Clone, Debug)]
struct Nest {
    write: usize,
    reads: Vec<(usize, i64, i64, i64)>,
    /// Axis-0 range `lo0 .. n0 - hi0`.
    lo0: i64,
    hi0: i64,
    /// Inner axes `margin .. n - margin` (0: whole planes).
    margin: i64,
    reduce: bool,
}

#[derive(Clone, Debug)]
struct PointStmt {
    write: usize,
    reads: Vec<usize>,
    at: [usize; 3],
}

#[derive(Clone, Copy, Debug)]
enum Stmt {
    Nest(usize),
    Point(usize),
    Swap(usize, usize),
}

#[derive(Clone, Debug)]
struct Spec {
    ndim: usize,
    narrays: usize,
    nests: Vec<Nest>,
    points: Vec<PointStmt>,
    stmts: Vec<Stmt>,
    roles: Vec<Role>,
    shape: Vec<usize>,
}

/// Whether the block of `k` steps from step `first` touches physical array `a` first by a nest
/// writing every point of every plane, in serial order: its old values are never needed.
fn overwritten(s: &Spec, prog: &Program, first: usize, k: usize, a: usize) -> bool {
    let mut bind = pacc_runtime::binding::binding_at(prog, first);
    for _ in 0..k {
        for st in &s.stmts {
            match *st {
                Stmt::Nest(n) => {
                    let nd = &s.nests[n];
                    if nd.reads.iter().any(|r| bind[r.0] == a) {
                        return false;
                    }
                    if bind[nd.write] == a {
                        return nd.lo0 == 0 && nd.hi0 == 0 && nd.margin == 0;
                    }
                }
                Stmt::Point(q) => {
                    let pt = &s.points[q];
                    if bind[pt.write] == a || pt.reads.iter().any(|&r| bind[r] == a) {
                        return false;
                    }
                }
                Stmt::Swap(x, y) => bind.swap(x, y),
            }
        }
    }
    false
}

fn random_spec(r: &mut SplitMix64) -> Spec {
    let mut pick = |n: i64| (r.next_u64() % n as u64) as i64;
    let ndim = 2 + pick(2) as usize;
    let narrays = 2 + pick(3) as usize;
    let mut nests = Vec::new();
    let mut points = Vec::new();
    let mut stmts = Vec::new();
    for _ in 0..1 + pick(3) {
        if pick(5) == 0 {
            let write = pick(narrays as i64) as usize;
            let reads = (0..narrays).filter(|_| pick(2) == 0).collect();
            points.push(PointStmt {
                write,
                reads,
                at: [0; 3],
            });
            stmts.push(Stmt::Point(points.len() - 1));
            continue;
        }
        let write = pick(narrays as i64) as usize;
        let margin = pick(2);
        let mut reads = Vec::new();
        for a in 0..narrays {
            if a == write {
                if pick(2) == 0 {
                    reads.push((a, 0, 0, 0)); // the centre only: no race
                }
            } else if pick(5) < 3 {
                // Asymmetric; back < 0: only one plane ahead is read (a negative backward reach).
                let back = pick(5) - 1;
                if back < 0 {
                    reads.push((a, back, 1 + pick(3), 0));
                } else {
                    reads.push((a, back, pick(5), pick(margin + 1)));
                }
            }
        }
        let reach_lo = reads.iter().map(|r| r.1).max().unwrap_or(0).max(0);
        let reach_hi = reads.iter().map(|r| r.2).max().unwrap_or(0).max(0);
        nests.push(Nest {
            write,
            reads,
            lo0: reach_lo + pick(2),
            hi0: reach_hi + pick(2),
            margin,
            reduce: pick(3) == 0,
        });
        stmts.push(Stmt::Nest(nests.len() - 1));
    }
    let mut written: Vec<bool> = (0..narrays)
        .map(|a| nests.iter().any(|n| n.write == a) || points.iter().any(|p| p.write == a))
        .collect();
    let mut swapped = vec![false; narrays];
    if pick(10) < 7 {
        let a = pick(narrays as i64) as usize;
        let b = (a + 1 + pick(narrays as i64 - 1) as usize) % narrays;
        if written[a] || written[b] {
            stmts.push(Stmt::Swap(a, b));
            written[a] = true;
            written[b] = true;
            swapped[a] = true;
            swapped[b] = true;
        }
    }
    let roles = (0..narrays)
        .map(|a| {
            if !written[a] {
                Role::Input
            } else if !swapped[a] && first_access_writes(&nests, &points, &stmts, a) && pick(2) == 0
            {
                Role::Scratch
            } else {
                Role::InOut
            }
        })
        .collect();
    let lo = nests.iter().map(|n| n.lo0 + n.hi0).max().unwrap_or(0) as usize;
    let shape = if ndim == 3 {
        vec![
            lo + 4 + pick(20) as usize,
            3 + pick(4) as usize,
            3 + pick(4) as usize,
        ]
    } else {
        vec![lo + 4 + pick(36) as usize, 3 + pick(8) as usize]
    };
    for p in &mut points {
        p.at = [
            pick(shape[0] as i64) as usize,
            pick(shape[1] as i64) as usize,
            shape.get(2).map_or(0, |&n| pick(n as i64) as usize),
        ];
    }
    Spec {
        ndim,
        narrays,
        nests,
        points,
        stmts,
        roles,
        shape,
    }
}

/// Whether `a` may be scratch: a step's first access to it is a nest writing it, and every read
/// of it lies inside what that nest writes (else a step would read values an earlier step left,
/// which a scratch array does not keep across blocks).
fn first_access_writes(nests: &[Nest], points: &[PointStmt], stmts: &[Stmt], a: usize) -> bool {
    if points.iter().any(|p| p.write == a || p.reads.contains(&a)) {
        return false;
    }
    let Some(w) = stmts.iter().find_map(|s| match *s {
        Stmt::Nest(n) if nests[n].write == a || nests[n].reads.iter().any(|r| r.0 == a) => {
            Some(&nests[n])
        }
        _ => None,
    }) else {
        return false;
    };
    if w.write != a || w.reads.iter().any(|r| r.0 == a) {
        return false;
    }
    nests.iter().all(|n| {
        n.reads
            .iter()
            .filter(|r| r.0 == a)
            .all(|&(_, back, fwd, inner)| {
                n.lo0 - back.max(0) >= w.lo0
                    && n.hi0 - fwd.max(0) >= w.hi0
                    && n.margin - inner >= w.margin
            })
    })
}

fn program(s: &Spec, elem: Elem) -> Program {
    let ax = |lo: i64, hi: i64| AxisRange {
        lo: Bound::start(lo),
        hi: Bound::end(-hi),
    };
    let kernels = s
        .nests
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut ranges = vec![ax(n.margin, n.margin); s.ndim];
            ranges[0] = ax(n.lo0, n.hi0);
            KernelDecl {
                name: format!("k{i}"),
                ranges,
                reads: n
                    .reads
                    .iter()
                    .map(|&(array, back, fwd, inner)| {
                        let mut lo = vec![-inner; s.ndim];
                        let mut hi = vec![inner; s.ndim];
                        // A read of one plane ahead only has a negative backward reach.
                        lo[0] = if back >= 0 { -back } else { fwd };
                        hi[0] = fwd.max(0);
                        ReadDecl { array, lo, hi }
                    })
                    .collect(),
                writes: vec![n.write],
                reductions: if n.reduce { vec![i] } else { vec![] },
                launch: Default::default(),
                guarded: Vec::new(),
            }
        })
        .collect();
    Program {
        name: "random".into(),
        ndim: s.ndim,
        arrays: (0..s.narrays)
            .map(|a| ArrayDecl {
                name: format!("a{a}"),
                elem,
                role: s.roles[a],
            })
            .collect(),
        reductions: (0..s.nests.len())
            .map(|i| ReductionDecl {
                name: format!("r{i}"),
                op: ReduceOp::Sum,
                elem: Elem::F64,
            })
            .collect(),
        kernels,
        points: s
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| PointDecl {
                name: format!("p{i}"),
                array: p.write,
                // The statement updates its array, as `a[..] += ..` does.
                reads: p
                    .reads
                    .iter()
                    .copied()
                    .chain((!p.reads.contains(&p.write)).then_some(p.write))
                    .collect(),
            })
            .collect(),
        step: s
            .stmts
            .iter()
            .map(|st| match *st {
                Stmt::Nest(n) => Stage::Kernel(n),
                Stmt::Point(p) => Stage::Point(p),
                Stmt::Swap(a, b) => Stage::Swap(a, b),
            })
            .collect(),
        halo: 4,
        ..Default::default()
    }
}

/// The value nest `n` computes at a point; `get(array, dz, dy, dx)` reads at an offset. Shared
/// by the serial interpreter and the kernels so both evaluate the same expression.
fn nest_value<T: Val>(s: &Spec, n: usize, t: i64, get: impl Fn(usize, i64, i64, i64) -> T) -> T {
    let mut v = T::of(1e-3 * t as f64 + 0.01 * n as f64);
    let mut w = 0.5;
    let mut add = |x: T| {
        v = v + x * T::of(w);
        w *= 0.5;
    };
    for &(a, back, fwd, inner) in &s.nests[n].reads {
        if back >= 0 {
            add(get(a, 0, 0, 0));
        }
        if back > 0 {
            add(get(a, -back, 0, 0));
        }
        if fwd > 0 {
            add(get(a, fwd, 0, 0));
        }
        if inner > 0 {
            add(get(a, 0, -inner, 0));
            add(get(a, 0, inner, 0));
            if s.ndim == 3 {
                add(get(a, 0, 0, inner));
            }
        }
    }
    v
}

fn point_value<T: Val>(s: &Spec, p: usize, t: i64, get: impl Fn(usize) -> T) -> T {
    let mut v = get(s.points[p].write) * T::of(0.5) + T::of(0.25 + 1e-3 * t as f64);
    for &r in &s.points[p].reads {
        v = v + get(r) * T::of(0.125);
    }
    v
}

/// The inner points of nest `n` in one plane: `(y, x)` (x = 0 in 2D).
fn inner_points(s: &Spec, n: usize) -> Vec<(usize, usize)> {
    let m = s.nests[n].margin as usize;
    let ys = m..s.shape[1] - m;
    if s.ndim == 2 {
        return ys.map(|y| (y, 0)).collect();
    }
    let xs = m..s.shape[2] - m;
    ys.flat_map(|y| xs.clone().map(move |x| (y, x))).collect()
}

fn axis0(s: &Spec, n: usize) -> std::ops::Range<usize> {
    let nd = &s.nests[n];
    nd.lo0 as usize..s.shape[0] - nd.hi0 as usize
}

fn idx(s: &Spec, z: usize, y: usize, x: usize) -> usize {
    if s.ndim == 3 {
        (z * s.shape[1] + y) * s.shape[2] + x
    } else {
        z * s.shape[1] + y
    }
}

fn off(z: usize, d: i64) -> usize {
    (z as i64 + d) as usize
}

/// The serial loop on physical arrays (swaps rebind names, data stays). Returns the sums.
fn serial<T: Val>(s: &Spec, a: &mut [Vec<T>], steps: usize) -> Vec<f64> {
    let mut bind: Vec<usize> = (0..s.narrays).collect();
    let mut sums = vec![0.0f64; s.nests.len()];
    for t in 0..steps {
        for st in &s.stmts {
            match *st {
                Stmt::Swap(x, y) => bind.swap(x, y),
                Stmt::Point(p) => {
                    let [z, y, x] = s.points[p].at;
                    let i = idx(s, z, y, x);
                    let v = point_value(s, p, t as i64, |r| a[bind[r]][i]);
                    a[bind[s.points[p].write]][i] = v;
                }
                Stmt::Nest(n) => {
                    let mut out = Vec::new();
                    for z in axis0(s, n) {
                        for (y, x) in inner_points(s, n) {
                            let v = nest_value(s, n, t as i64, |arr, dz, dy, dx| {
                                a[bind[arr]][idx(s, off(z, dz), off(y, dy), off(x, dx))]
                            });
                            out.push((idx(s, z, y, x), v));
                        }
                    }
                    for (i, v) in out {
                        a[bind[s.nests[n].write]][i] = v;
                        if s.nests[n].reduce {
                            sums[n] += v.to_f64();
                        }
                    }
                }
            }
        }
    }
    sums
}

fn closures<T: Val>(s: Arc<Spec>) -> CpuKernels<'static> {
    let kernels = (0..s.nests.len())
        .map(|n| {
            let s = s.clone();
            let f = move |f: &KernelFrame<'_>, z: usize, red: &mut [f64]| {
                let g = |a: usize| f.arrays[a].grid::<T>();
                let get = |a: usize, z: usize, y: usize, x: usize| {
                    if s.ndim == 3 {
                        g(a).get3(z, y, x)
                    } else {
                        g(a).get2(z, y)
                    }
                };
                for (y, x) in inner_points(&s, n) {
                    let v = nest_value(&s, n, f.t, |arr, dz, dy, dx| {
                        get(arr, off(z, dz), off(y, dy), off(x, dx))
                    });
                    let w = g(s.nests[n].write);
                    if s.ndim == 3 {
                        w.set3(z, y, x, v)
                    } else {
                        w.set2(z, y, v)
                    }
                    if s.nests[n].reduce {
                        red[0] += v.to_f64();
                    }
                }
            };
            Box::new(f) as Box<pacc_runtime::exec::CpuKernelFn<'static>>
        })
        .collect();
    let points = (0..s.points.len())
        .map(|p| {
            let s = s.clone();
            let f = move |f: &KernelFrame<'_>| {
                let [z, y, x] = s.points[p].at;
                let g = |a: usize| f.arrays[a].grid::<T>();
                let get = |a: usize| {
                    if s.ndim == 3 {
                        g(a).get3(z, y, x)
                    } else {
                        g(a).get2(z, y)
                    }
                };
                let v = point_value(&s, p, f.t, get);
                let w = g(s.points[p].write);
                if s.ndim == 3 {
                    w.set3(z, y, x, v)
                } else {
                    w.set2(z, y, v)
                }
            };
            Box::new(f) as Box<pacc_runtime::exec::CpuPointFn<'static>>
        })
        .collect();
    // SAFETY: the closures compute what the spec's program declares: each writes only the plane
    // (or point) it is handed, and reads within the declared offsets.
    unsafe { CpuKernels::new(kernels, points) }
}

fn data<T: Val>(s: &Spec, seed: u64) -> Vec<Vec<T>> {
    let n: usize = s.shape.iter().product();
    let mut r = SplitMix64(seed);
    (0..s.narrays)
        .map(|_| (0..n).map(|_| T::of(r.signed_unit())).collect())
        .collect()
}

/// Runs the program on copies of `a0` through `go` (given the invocation), returning the arrays
/// and the reductions.
fn run_with<T: Val>(
    s: &Arc<Spec>,
    a0: &[Vec<T>],
    steps: usize,
    go: impl FnOnce(Invocation<'_>) -> Vec<f64>,
) -> (Vec<Vec<T>>, Vec<f64>) {
    let mut arrs: Vec<ArrayD<T>> = a0
        .iter()
        .map(|v| ArrayD::from_shape_vec(IxDyn(&s.shape), v.clone()).unwrap())
        .collect();
    let arrays = arrs
        .iter_mut()
        .enumerate()
        .map(|(a, x)| {
            if s.roles[a] == Role::Input {
                host_array(x, "in").unwrap()
            } else {
                host_array_mut(x, "out").unwrap()
            }
        })
        .collect();
    let inv = Invocation {
        arrays,
        scalars: vec![],
        slices: vec![],
        points: s
            .points
            .iter()
            .map(|p| p.at[..s.ndim].iter().map(|&i| i as i64).collect())
            .collect(),
        t0: 0,
        steps,
        reduction_init: vec![0.0; s.nests.len()],
        reset_values: vec![],
        cpu: closures::<T>(s.clone()),
    };
    let reductions = go(inv);
    let got = arrs
        .into_iter()
        .map(|a| a.into_raw_vec_and_offset().0)
        .collect();
    (got, reductions)
}

fn run_pipeline<T: Val>(
    s: &Arc<Spec>,
    prog: &Program,
    a0: &[Vec<T>],
    steps: usize,
    opts: &Options,
) -> (Vec<Vec<T>>, Vec<f64>) {
    run_with(s, a0, steps, |inv| {
        let out = pacc_runtime::run(prog, inv, opts).unwrap_or_else(|e| panic!("{e}"));
        out.reductions
    })
}

/// `plan` itself on the CPU executor in a shuffled order.
fn run_plan<T: Val>(
    s: &Arc<Spec>,
    prog: &Program,
    a0: &[Vec<T>],
    plan: &plan::Plan,
    seed: u64,
) -> (Vec<Vec<T>>, Vec<f64>) {
    run_with(s, a0, plan.steps, |inv| {
        let out = cpu::execute(prog, plan, &inv, Order::Shuffled(seed));
        out.unwrap_or_else(|e| panic!("{e}")).reductions
    })
}

fn bits<T: Val>(a: &[Vec<T>]) -> Vec<Vec<u64>> {
    a.iter()
        .map(|v| v.iter().map(|x| x.bits()).collect())
        .collect()
}

/// The plan's properties: race free, every point of every step once, link bytes, and against
/// the same plan without the ring ([`check_ring`]). Returns the plan.
fn check_plan(
    s: &Spec,
    prog: &Program,
    (steps, chunks, k, sets): (usize, usize, usize, usize),
    what: &str,
) -> plan::Plan {
    let opts = PlanOptions {
        chunks,
        block_steps: k,
        scheme: Scheme::Wavefront,
        buffer_sets: sets,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let pts: Vec<usize> = s.points.iter().map(|p| p.at[0]).collect();
    let build = |o: &PlanOptions| {
        plan::build(prog, &s.shape, steps, &pts, o).unwrap_or_else(|e| panic!("{what}: {e}"))
    };
    let p = build(&opts);
    race::check(prog, &p).unwrap_or_else(|e| panic!("{what}: {e}"));
    let staircase = build(&PlanOptions {
        read_only_ring: false,
        ..opts.clone()
    });
    race::check(prog, &staircase).unwrap_or_else(|e| panic!("{what}: {e}"));
    check_ring(s, &p, &staircase, what);
    // Each (step, kernel): the chunks' planes tile the nest's axis-0 range; reductions count
    // exactly the computed planes.
    let mut planes: HashMap<(usize, usize), Vec<std::ops::Range<usize>>> = HashMap::new();
    let mut point_runs: HashMap<(usize, usize), usize> = HashMap::new();
    let mut kernel_points = 0usize;
    for op in &p.ops {
        match &op.kind {
            OpKind::Kernel {
                kernel,
                step,
                planes: pl,
                owned,
                ..
            } => {
                assert_eq!(owned, pl, "{what}: reductions count the computed planes");
                kernel_points += pl.len() * inner_points(s, *kernel).len();
                planes.entry((*step, *kernel)).or_default().push(pl.clone());
            }
            OpKind::Point { point, step, .. } => {
                *point_runs.entry((*step, *point)).or_default() += 1
            }
            _ => {}
        }
    }
    let per_step: usize = (0..s.nests.len())
        .map(|n| axis0(s, n).len() * inner_points(s, n).len())
        .sum();
    assert_eq!(
        kernel_points,
        steps * per_step,
        "{what}: kernel points = serial points"
    );
    for t in 0..steps {
        for n in 0..s.nests.len() {
            let mut v = planes.remove(&(t, n)).unwrap_or_default();
            v.sort_by_key(|r| r.start);
            let mut at = axis0(s, n).start;
            for r in &v {
                assert_eq!(r.start, at, "{what}: step {t} kernel {n} planes {v:?}");
                at = r.end;
            }
            if !axis0(s, n).is_empty() {
                assert_eq!(
                    at,
                    axis0(s, n).end,
                    "{what}: step {t} kernel {n} planes {v:?}"
                );
            }
        }
        for q in 0..s.points.len() {
            assert_eq!(
                point_runs.get(&(t, q)),
                Some(&1),
                "{what}: point {q} step {t}"
            );
        }
    }
    // Link bytes: per block, every array that is read or returned is loaded once (all n0
    // planes) and every returned array written back once; so bytes_htod = blocks x the loaded
    // arrays' bytes and bytes_dtoh = blocks x the returned arrays' bytes. An array in a ring
    // that holds the whole axis stays there after block 0, and one the block first touches by
    // writing every point of every plane is not loaded at all.
    let returned = plan::returned_arrays(prog);
    let n0 = s.shape[0];
    let resident = |a: usize| p.in_ring(a) && p.ring.as_ref().is_some_and(|r| r.planes == n0);
    let plane_bytes = (p.plane_len * prog.arrays[0].elem.size()) as u64;
    let (mut htod, mut dtoh) = (0u64, 0u64);
    for b in 0..p.blocks.len() {
        for (a, &ret) in returned.iter().enumerate() {
            let read = prog
                .kernels
                .iter()
                .any(|k| k.reads.iter().any(|r| r.array == a))
                || prog.points.iter().any(|q| q.reads.contains(&a));
            let in_block = k.min(steps - b * k);
            let fresh = overwritten(s, prog, b * k, in_block, a);
            let load = if (read || ret) && !(b > 0 && resident(a)) && !fresh {
                n0
            } else {
                0
            };
            let store = if ret { n0 } else { 0 };
            assert_eq!(
                p.planes_htod(b, a),
                load,
                "{what}: block {b} array {a} loads"
            );
            assert_eq!(
                p.planes_dtoh(b, a),
                store,
                "{what}: block {b} array {a} stores"
            );
            htod += load as u64 * plane_bytes;
            dtoh += store as u64 * plane_bytes;
        }
    }
    assert_eq!(p.bytes_htod(), htod, "{what}");
    assert_eq!(p.bytes_dtoh(), dtoh, "{what}");
    let totals = p.totals(prog);
    assert_eq!(totals.kernel_points as usize, steps * per_step, "{what}");
    assert_eq!(totals.serial_points as usize, steps * per_step, "{what}");
    p
}

/// The ring (`on`) against the staircase alone (`off`): exactly the arrays that are read and
/// never written go to the ring; the kernels are the same; no more bytes cross the link or
/// HBM and no more device memory is used; the ring's arrays are loaded into the ring only,
/// each plane at most once per block, and copied only inside it.
fn check_ring(s: &Spec, on: &plan::Plan, off: &plan::Plan, what: &str) {
    let read = |a: usize| {
        s.nests.iter().any(|n| n.reads.iter().any(|r| r.0 == a))
            || s.points.iter().any(|p| p.reads.contains(&a))
    };
    let ro: Vec<bool> = (0..s.narrays)
        .map(|a| s.roles[a] == Role::Input && read(a))
        .collect();
    let got: Vec<bool> = (0..s.narrays).map(|a| on.in_ring(a)).collect();
    assert_eq!(got, ro, "{what}: the ring's arrays");
    assert_eq!(on.ring.is_some(), ro.contains(&true), "{what}");
    assert!(off.ring.is_none(), "{what}");
    let kernels = |p: &plan::Plan| -> Vec<_> {
        (p.ops.iter())
            .filter_map(|o| match &o.kind {
                OpKind::Kernel {
                    kernel,
                    step,
                    planes,
                    args,
                    ..
                } => Some((
                    o.block,
                    o.chunk,
                    *kernel,
                    *step,
                    planes.clone(),
                    args.clone(),
                )),
                _ => None,
            })
            .collect()
    };
    assert!(
        kernels(on) == kernels(off),
        "{what}: the ring changes no kernel"
    );
    assert!(on.bytes_htod() <= off.bytes_htod(), "{what}");
    assert_eq!(on.bytes_dtoh(), off.bytes_dtoh(), "{what}");
    assert!(on.bytes_dtod() <= off.bytes_dtod(), "{what}");
    assert!(on.device_bytes() <= off.device_bytes(), "{what}");
    let Some(ring) = &on.ring else { return };
    let mut loaded: HashMap<(usize, usize), Vec<std::ops::Range<usize>>> = HashMap::new();
    for op in &on.ops {
        match &op.kind {
            OpKind::HtoD {
                array, set, planes, ..
            } if ro[*array] => {
                assert_eq!(*set, ring.set, "{what}: {op:?}");
                let l = loaded.entry((op.block, *array)).or_default();
                let twice = l
                    .iter()
                    .any(|r| r.start < planes.end && planes.start < r.end);
                assert!(!twice, "{what}: block {} loads {planes:?} again", op.block);
                l.push(planes.clone());
            }
            OpKind::DtoD {
                array,
                from_set,
                to_set,
                ..
            } if ro[*array] => assert!(*from_set == ring.set && *to_set == ring.set, "{what}"),
            _ => {}
        }
    }
}

fn random_case<T: Val>(seed: u64) -> (bool, bool) {
    let mut r = SplitMix64(seed);
    let s = Arc::new(random_spec(&mut r));
    let mut pick = |n: u64| (r.next_u64() % n) as usize;
    let (steps, k) = (1 + pick(9), 1 + pick(5));
    let chunks = (1 + pick(6)).min(s.shape[0]);
    let prog = program(&s, <T as GridElem>::ELEM);
    let what = format!("seed {seed}: steps {steps} k {k} chunks {chunks} {s:?}");
    check_plan(&s, &prog, (steps, chunks, k, 3), &what);
    // Two buffer sets: a ring of two windows, which moves its planes back often.
    let tight = check_plan(&s, &prog, (steps, chunks, k, 2), &what);
    let a0 = data::<T>(&s, seed);
    let mut want = a0.clone();
    let sums = serial(&s, &mut want, steps);
    for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(seed)] {
        let o = Options::new()
            .backend(backend)
            .chunks(chunks)
            .block_steps(k)
            .scheme(Scheme::Wavefront);
        let (mut got, red) = run_pipeline(&s, &prog, &a0, steps, &o);
        // Scratch arrays' final contents are not returned.
        for a in 0..s.narrays {
            if s.roles[a] == Role::Scratch {
                got[a] = want[a].clone();
            }
        }
        assert!(
            bits(&got) == bits(&want),
            "{what} ({backend:?}): pipeline != serial"
        );
        for (n, (&g, &w)) in red.iter().zip(&sums).enumerate() {
            let tol = 1e-9 * (1.0 + w.abs()) * if T::ELEM == Elem::F32 { 1e3 } else { 1.0 };
            assert!((g - w).abs() <= tol, "{what}: reduction {n}: {g} vs {w}");
        }
    }
    let (mut got, _) = run_plan(&s, &prog, &a0, &tight, seed);
    for a in 0..s.narrays {
        if s.roles[a] == Role::Scratch {
            got[a] = want[a].clone();
        }
    }
    assert!(
        bits(&got) == bits(&want),
        "{what} (two sets): pipeline != serial"
    );
    ring_seen(&tight)
}

/// Whether a plan's ring moved planes back to slot 0, and whether it held the whole axis.
fn ring_seen(p: &plan::Plan) -> (bool, bool) {
    let Some(r) = &p.ring else {
        return (false, false);
    };
    let moved =
        (p.ops.iter()).any(|o| matches!(o.kind, OpKind::DtoD { to_set, .. } if to_set == r.set));
    (moved, r.planes == p.shape[0])
}

/// The random cases exercise both kinds of ring: one that moves its planes back and one that
/// holds the whole axis.
fn ring_kinds_seen(seen: &[(bool, bool)]) {
    let moved = seen.iter().filter(|s| s.0).count();
    let whole = seen.iter().filter(|s| s.1).count();
    assert!(
        moved >= 5 && whole >= 5,
        "rings that move: {moved}, whole: {whole}"
    );
}

#[test]
fn random_programs_equal_serial_f64() {
    let seen: Vec<(bool, bool)> = (0..150).map(random_case::<f64>).collect();
    ring_kinds_seen(&seen);
}

#[test]
fn random_programs_equal_serial_f32() {
    let seen: Vec<(bool, bool)> = (500..650).map(random_case::<f32>).collect();
    ring_kinds_seen(&seen);
}

/// Ancestors of op `i` (dependencies and stream order, transitively).
fn ancestors(p: &plan::Plan, i: usize) -> Vec<bool> {
    let mut prev_on_stream = vec![None; p.ops.len()];
    let mut last: HashMap<usize, usize> = HashMap::new();
    for (j, op) in p.ops.iter().enumerate() {
        prev_on_stream[j] = last.insert(op.stream, j);
    }
    let mut seen = vec![false; p.ops.len()];
    let mut stack = vec![i];
    while let Some(j) = stack.pop() {
        for &d in p.ops[j].deps.iter().chain(prev_on_stream[j].iter()) {
            if !seen[d] {
                seen[d] = true;
                stack.push(d);
            }
        }
    }
    seen
}

/// Blocks chain without draining: block 1's first chunk does not wait for block 0's last
/// operation, because it needs only planes that block 0's first chunks already wrote back.
#[test]
fn blocks_do_not_drain() {
    let mut r = SplitMix64(1);
    let s = loop {
        let s = random_spec(&mut r);
        // A leapfrog-like program: some nest reads at a distance, a swap.
        if s.nests.iter().any(|n| n.reads.iter().any(|x| x.1 > 0))
            && s.stmts.iter().any(|x| matches!(x, Stmt::Swap(..)))
        {
            break Spec {
                shape: if s.ndim == 3 {
                    vec![96, 4, 4]
                } else {
                    vec![96, 4]
                },
                ..s
            };
        }
    };
    let prog = program(&s, Elem::F64);
    let opts = PlanOptions {
        chunks: 8,
        block_steps: 2,
        scheme: Scheme::Wavefront,
        buffer_sets: 3,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let pts: Vec<usize> = s.points.iter().map(|p| p.at[0]).collect();
    let p = plan::build(&prog, &s.shape, 6, &pts, &opts).unwrap();
    race::check(&prog, &p).unwrap();
    let last0 = p.ops.iter().rposition(|o| o.block == 0).unwrap();
    let free = p
        .ops
        .iter()
        .enumerate()
        .filter(|(i, o)| {
            o.block == 1 && matches!(o.kind, OpKind::Kernel { .. }) && !ancestors(&p, *i)[last0]
        })
        .count();
    assert!(
        free > 0,
        "every kernel of block 1 waits for block 0's last operation: {s:?}"
    );
}

#[test]
fn leapfrog_skews_four_planes_per_step() {
    // The acoustic step: prev = f(cur +-4, prev, vel); swap(prev, cur).
    let s = Spec {
        ndim: 3,
        narrays: 3,
        nests: vec![Nest {
            write: 0,
            reads: vec![(1, 4, 4, 1), (0, 0, 0, 0), (2, 0, 0, 0)],
            lo0: 4,
            hi0: 4,
            margin: 1,
            reduce: false,
        }],
        points: vec![],
        stmts: vec![Stmt::Nest(0), Stmt::Swap(0, 1)],
        roles: vec![Role::InOut, Role::InOut, Role::Input],
        shape: vec![128, 6, 6],
    };
    let prog = program(&s, Elem::F32);
    let opts = PlanOptions {
        chunks: 4,
        block_steps: 5,
        scheme: Scheme::Wavefront,
        buffer_sets: 3,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let p = plan::build(&prog, &s.shape, 10, &[], &opts).unwrap();
    race::check(&prog, &p).unwrap();
    // Chunk 1 of block 0: step t computes [32 - 4t, 64 - 4t); it holds from 32 - 16 - 4 (the
    // last step's start minus the backward reach) to 64 + 4 (beta: the first step reads 4 planes
    // past the boundary).
    let c = &p.blocks[0].chunks[1];
    assert_eq!(c.window, 12..68);
    assert_eq!(c.owned, 16..48);
    let planes: Vec<_> = p
        .ops
        .iter()
        .filter(|o| o.block == 0 && o.chunk == 1)
        .filter_map(|o| match &o.kind {
            OpKind::Kernel { planes, .. } => Some(planes.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(planes, vec![32..64, 28..60, 24..56, 20..52, 16..48]);
    // The widest window: 32 planes + 16 of skew + 4 back + 4 ahead.
    assert_eq!(p.buffer_planes, 56);
}
