//! Random programs under random options, run by the shuffled executor (every operation in a
//! random order the plan's dependencies allow) and compared with a serial interpreter of the
//! same program bit for bit.
//!
//! A program is one or two nests per step over 2D or 3D f64 arrays: each nest writes one level
//! from weighted reads of the other at random offsets (asymmetric along every axis), of a
//! read-only coefficient array and of its own point, over the interior its reach leaves; the
//! step ends with a swap of the levels or with a second nest writing back. Its fused forms (2
//! and 3 steps per launch) read as far as the group's steps together reach. The options draw
//! the scheme, the chunks, the block steps, the fused group and the executor's seed, so the
//! dependencies of every tiling, with and without the twins of a fused run, meet an order
//! nobody planned. The review of 2026-12-02 found fused direct-map and staged-copy runs wrong
//! in 143 of 144 such orders, with `plan::race::check` passing.

use pacc_runtime::exec::{CpuKernelFn, CpuKernels, KernelFrame};
use pacc_runtime::host::host_array_mut;
use pacc_runtime::program::*;
use pacc_runtime::{BackendChoice, Invocation, Options, Scheme};
use proptest::prelude::*;

/// One weighted read: `weight * array[p + offset]`.
#[derive(Clone, Debug)]
struct Term {
    array: usize,
    offset: [i64; 3],
    weight: f64,
}

/// A nest writing `write` at every point of its interior: the sum of its terms in order.
#[derive(Clone, Debug)]
struct Nest {
    write: usize,
    terms: Vec<Term>,
    /// Planes/rows/columns left untouched below and above along each axis.
    margin: [[i64; 2]; 3],
}

#[derive(Clone, Debug)]
struct Gen {
    ndim: usize,
    nests: Vec<Nest>,
    /// Whether the step ends with `swap(u0, u1)` (else a second nest writes `u0` back).
    swap: bool,
}

const U0: usize = 0;
const U1: usize = 1;
const C: usize = 2;

impl Gen {
    fn shape(&self, n: [usize; 3]) -> Vec<usize> {
        n[..self.ndim].to_vec()
    }

    fn program(&self) -> Program {
        let array = |name: &str, role| ArrayDecl {
            name: name.into(),
            elem: Elem::F64,
            role,
        };
        let kernels: Vec<KernelDecl> = (self.nests.iter().enumerate())
            .map(|(i, n)| n.decl(i, self.ndim))
            .collect();
        let mut step: Vec<Stage> = (0..kernels.len()).map(Stage::Kernel).collect();
        if self.swap {
            step.push(Stage::Swap(U0, U1));
        }
        let halo = (self.nests.iter().flat_map(|n| &n.terms))
            .flat_map(|t| t.offset)
            .map(|o| o.unsigned_abs() as usize)
            .max()
            .unwrap_or(0);
        let mut p = Program {
            name: "random".into(),
            ndim: self.ndim,
            arrays: vec![
                array("u0", Role::InOut),
                array("u1", Role::InOut),
                array("c", Role::Input),
            ],
            kernels,
            step,
            halo,
            ..Default::default()
        };
        p.fusion.kernels = [2, 3].map(|s| self.fused(s)).to_vec();
        p
    }

    /// The group of `s` steps: it writes both levels, and reads each array as far as the
    /// steps' reaches add up (a bound the executor may exceed in what it loads, never fall
    /// short of).
    fn fused(&self, s: usize) -> FusedDecl {
        let mut reach = [[0i64; 2]; 3];
        for n in &self.nests {
            for (a, r) in reach.iter_mut().enumerate() {
                let lo = n.terms.iter().map(|t| -t.offset[a]).max().unwrap_or(0);
                let hi = n.terms.iter().map(|t| t.offset[a]).max().unwrap_or(0);
                r[0] += lo.max(0) * s as i64;
                r[1] += hi.max(0) * s as i64;
            }
        }
        let reads = [U0, U1, C].map(|array| ReadDecl {
            array,
            lo: (0..self.ndim).map(|a| -reach[a][0]).collect(),
            hi: (0..self.ndim).map(|a| reach[a][1]).collect(),
        });
        FusedDecl {
            name: format!("random_f{s}"),
            steps: s,
            outputs: vec![U0, U1],
            reads: reads.to_vec(),
            block: [32, 8],
            halo: [[0, 0], [0, 0]],
            vector_blocks: vec![],
            events: vec![],
            points: vec![],
            invocations: vec![],
        }
    }
}

impl Nest {
    fn decl(&self, i: usize, ndim: usize) -> KernelDecl {
        let mut arrays: Vec<usize> = self.terms.iter().map(|t| t.array).collect();
        arrays.sort_unstable();
        arrays.dedup();
        let reads = (arrays.into_iter())
            .map(|array| {
                let offs = || self.terms.iter().filter(move |t| t.array == array);
                ReadDecl {
                    array,
                    lo: (0..ndim)
                        .map(|a| offs().map(|t| t.offset[a]).min().unwrap())
                        .collect(),
                    hi: (0..ndim)
                        .map(|a| offs().map(|t| t.offset[a]).max().unwrap())
                        .collect(),
                }
            })
            .collect();
        KernelDecl {
            name: format!("k{i}"),
            ranges: (0..ndim)
                .map(|a| AxisRange {
                    lo: Bound::start(self.margin[a][0]),
                    hi: Bound::end(-self.margin[a][1]),
                })
                .collect(),
            reads,
            writes: vec![self.write],
            reductions: vec![],
            launch: Default::default(),
            guarded: Vec::new(),
        }
    }

    /// The interior along axis `a` of extent `n`.
    fn range(&self, a: usize, n: usize) -> std::ops::Range<usize> {
        self.margin[a][0] as usize..n - self.margin[a][1] as usize
    }

    /// The value at point `p` (one index per axis), each read through `get`, in term order.
    fn value(&self, p: [usize; 3], get: impl Fn(usize, [usize; 3]) -> f64) -> f64 {
        let mut v = 0.0;
        for t in &self.terms {
            let q = [0, 1, 2].map(|a| (p[a] as i64 + t.offset[a]) as usize);
            v += t.weight * get(t.array, q);
        }
        v
    }
}

/// Index of point `p` in a row-major array of shape `n` (`ndim` axes).
fn flat(p: [usize; 3], n: &[usize]) -> usize {
    match n.len() {
        2 => p[0] * n[1] + p[1],
        _ => (p[0] * n[1] + p[1]) * n[2] + p[2],
    }
}

/// The interior points of `nest` in plane `z` (`z` any plane for `lo..hi` of axis 0).
fn plane_points(nest: &Nest, z: usize, n: &[usize]) -> Vec<[usize; 3]> {
    let ys = nest.range(1, n[1]);
    match n.len() {
        2 => ys.map(|y| [z, y, 0]).collect(),
        _ => {
            let xs = nest.range(2, n[2]);
            ys.flat_map(|y| xs.clone().map(move |x| [z, y, x]))
                .collect()
        }
    }
}

/// The program as the serial loop runs it, on buffers the names point to.
fn serial(g: &Gen, bufs: &mut [Vec<f64>; 3], n: &[usize], steps: usize) {
    let mut name = [U0, U1, C];
    for _ in 0..steps {
        for nest in &g.nests {
            let zs = nest.range(0, n[0]);
            for z in zs {
                for p in plane_points(nest, z, n) {
                    let v = nest.value(p, |a, q| bufs[name[a]][flat(q, n)]);
                    bufs[name[nest.write]][flat(p, n)] = v;
                }
            }
        }
        if g.swap {
            name.swap(U0, U1);
        }
    }
}

/// The nests as CPU kernels: plane `z` through the frame's grids (the same arithmetic, in
/// the same order, as [`serial`]).
fn kernels<'a>(g: &Gen, n: &[usize]) -> CpuKernels<'a> {
    let kernels = (g.nests.iter().cloned())
        .map(|nest| {
            let n = n.to_vec();
            let k: Box<CpuKernelFn<'a>> =
                Box::new(move |f: &KernelFrame<'_>, z: usize, _red: &mut [f64]| {
                    let grids: Vec<_> = f.arrays.iter().map(|v| v.grid::<f64>()).collect();
                    let get = |a: usize, q: [usize; 3]| match n.len() {
                        2 => grids[a].get2(q[0], q[1]),
                        _ => grids[a].get3(q[0], q[1], q[2]),
                    };
                    if !nest.range(0, n[0]).contains(&z) {
                        return;
                    }
                    for p in plane_points(&nest, z, &n) {
                        let v = nest.value(p, get);
                        match n.len() {
                            2 => grids[nest.write].set2(p[0], p[1], v),
                            _ => grids[nest.write].set3(p[0], p[1], p[2], v),
                        }
                    }
                });
            k
        })
        .collect();
    // SAFETY: each closure writes plane `z` of its nest's array inside the nest's interior and
    // reads the terms' offsets, which `Nest::decl` declares; the program has no CUDA code.
    unsafe { CpuKernels::new(kernels, vec![]) }
}

/// Offsets reaching 2 along the chunked axis, 1 along the others (so that a fused group's
/// reach, up to 6 columns each side, stays inside the rows the shapes draw).
fn offset() -> impl Strategy<Value = [i64; 3]> {
    [-2i64..=2, -1..=1, -1..=1]
}

/// Terms reading `from` at random offsets, maybe the coefficients and the nest's own point.
fn terms(from: usize, write: usize) -> impl Strategy<Value = Vec<Term>> {
    let reads = prop::collection::vec(offset(), 1..5);
    (reads, any::<bool>(), any::<bool>(), 1u32..8).prop_map(move |(offs, c, own, w)| {
        let k = offs.len() as f64 + 2.0;
        let mut t: Vec<Term> = (offs.into_iter().enumerate())
            .map(|(i, offset)| Term {
                array: from,
                offset,
                weight: (1.0 + (i as f64 + w as f64) / 16.0) / k,
            })
            .collect();
        if c {
            t.push(Term {
                array: C,
                offset: [0; 3],
                weight: 0.25 / k,
            });
        }
        if own {
            t.push(Term {
                array: write,
                offset: [0; 3],
                weight: 0.5 / k,
            });
        }
        t
    })
}

/// The margins that keep every read of `terms` inside the arrays, plus up to one more.
fn nest(write: usize, terms: Vec<Term>, extra: [[i64; 2]; 3]) -> Nest {
    let mut margin = [[0i64; 2]; 3];
    for (a, m) in margin.iter_mut().enumerate() {
        let lo = terms.iter().map(|t| -t.offset[a]).max().unwrap_or(0).max(0);
        let hi = terms.iter().map(|t| t.offset[a]).max().unwrap_or(0).max(0);
        *m = [lo + extra[a][0], hi + extra[a][1]];
    }
    Nest {
        write,
        terms,
        margin,
    }
}

fn margins() -> impl Strategy<Value = [[i64; 2]; 3]> {
    [[0i64..2, 0..2], [0..2, 0..2], [0..2, 0..2]]
}

fn gen() -> impl Strategy<Value = Gen> {
    (
        2usize..=3,
        any::<bool>(),
        terms(U0, U1),
        terms(U1, U0),
        margins(),
        margins(),
    )
        .prop_map(|(ndim, swap, t1, t0, m1, m0)| {
            let flat = |mut t: Vec<Term>| {
                for term in &mut t {
                    if ndim == 2 {
                        term.offset[2] = 0;
                    }
                }
                t
            };
            let mut nests = vec![nest(U1, flat(t1), m1)];
            if !swap {
                nests.push(nest(U0, flat(t0), m0));
            }
            Gen { ndim, nests, swap }
        })
}

fn scheme() -> impl Strategy<Value = Scheme> {
    prop_oneof![
        Just(Scheme::RegionSharing),
        Just(Scheme::Wavefront),
        Just(Scheme::DirectMap),
        Just(Scheme::StagedCopy),
    ]
}

fn field(len: usize, seed: u64) -> Vec<f64> {
    let mut r = pacc_runtime::rng::SplitMix64(seed);
    (0..len).map(|_| r.unit() * 2.0 - 1.0).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_in_any_valid_order_equal_serial(
        g in gen(),
        n in [26usize..40, 15usize..19, 14usize..18],
        scheme in scheme(),
        chunks in 1usize..=4,
        block_steps in 1usize..=6,
        fuse in prop_oneof![Just(1usize), Just(2), Just(3)],
        groups in 1usize..=4,
        seed in any::<u64>(),
    ) {
        let shape = g.shape(n);
        let len: usize = shape.iter().product();
        let steps = fuse * groups;
        let init = [field(len, seed), field(len, seed ^ 1), field(len, seed ^ 2)];
        let mut want = init.clone();
        serial(&g, &mut want, &shape, steps);

        let program = g.program();
        let mut got = init.clone();
        let opts = Options::new()
            .backend(BackendChoice::Shuffled(seed))
            .scheme(scheme)
            .chunks(chunks)
            .block_steps(block_steps * fuse)
            .fuse(fuse);
        let [u0, u1, c] = &mut got;
        let mut a0 = ndarray::ArrayD::from_shape_vec(shape.clone(), std::mem::take(u0)).unwrap();
        let mut a1 = ndarray::ArrayD::from_shape_vec(shape.clone(), std::mem::take(u1)).unwrap();
        let mut ac = ndarray::ArrayD::from_shape_vec(shape.clone(), std::mem::take(c)).unwrap();
        let inv = Invocation {
            arrays: vec![
                host_array_mut(&mut a0, "u0").unwrap(),
                host_array_mut(&mut a1, "u1").unwrap(),
                host_array_mut(&mut ac, "c").unwrap().read_only(),
            ],
            scalars: vec![],
            slices: vec![],
            points: vec![],
            t0: 0,
            steps,
            reduction_init: vec![],
            reset_values: vec![],
            cpu: kernels(&g, &shape),
        };
        let at = format!("{scheme} d{chunks} k{} fuse {fuse}, {steps} steps, shape {shape:?}", block_steps * fuse);
        let out = pacc_runtime::run(&program, inv, &opts);
        prop_assert!(out.is_ok(), "{at}: {:?}", out.err());
        for (k, (a, w)) in [a0, a1, ac].iter().zip(&want).enumerate() {
            let wrong = a.iter().zip(w).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
            prop_assert_eq!(wrong, 0, "{}: array {} differs from serial", at, k);
        }
    }
}
