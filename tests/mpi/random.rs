//! Random stencil programs (what the translator would emit, built by hand), their CPU closures
//! and a plain serial driver that walks the time loop plane by plane over the whole arrays.
//!
//! A program has 2 or 3 f64 arrays and 1 to 3 kernels; each kernel writes one array, reading
//! it at its centre and others at asymmetric axis-0 offsets (-2..=2) and +-1 on the inner
//! axes; optionally a point statement, a swap of arrays 0 and 1, a sum and a max reduction
//! with an optional reset. Kernel bodies use the global plane index and the global extent, so
//! a rank that handed them local indices would fail the comparison.

use pacc::runtime::exec::{BufView, CpuKernelFn, CpuKernels, CpuPointFn, KernelFrame};
use pacc::runtime::program::{
    ArrayDecl, AxisRange, Bound, Elem, KernelDecl, PointDecl, ReadDecl, ReduceOp, ReductionDecl,
    ResetDecl, Role, Stage,
};
use pacc::runtime::rng::SplitMix64;
use pacc::runtime::{HostArray, Invocation, Program};
use std::sync::Arc;

#[derive(Clone, Debug)]
struct KSpec {
    write: usize,
    /// (array, axis-0 lo, axis-0 hi) of the other arrays read.
    reads: Vec<(usize, i64, i64)>,
    coef: f64,
}

/// A random program with everything needed to call it.
#[derive(Clone, Debug)]
pub struct Case {
    pub program: Program,
    pub shape: [usize; 3],
    pub steps: usize,
    pub point: Option<[usize; 3]>,
    pub reset: f64,
    kernels: Vec<KSpec>,
}

pub fn case(seed: u64, min_planes: usize) -> Case {
    let mut g = SplitMix64(seed);
    let narrays = 2 + g.below(2) as usize;
    let nkernels = 1 + g.below(3) as usize;
    let mut kernels = Vec::new();
    for _ in 0..nkernels {
        let write = g.below(narrays as u64) as usize;
        let mut reads = Vec::new();
        for a in (0..narrays).filter(|&a| a != write) {
            if g.below(3) > 0 {
                reads.push((a, g.range(-2, 0), g.range(0, 2)));
            }
        }
        kernels.push(KSpec {
            write,
            reads,
            coef: 0.3 + 0.4 * g.unit(),
        });
    }
    let swap = g.below(2) == 0;
    let reduce = g.below(3) > 0;
    let reset = g.below(2) == 0;
    let shape = [
        min_planes + g.below(12) as usize,
        5 + g.below(3) as usize,
        5 + g.below(4) as usize,
    ];
    let point = (g.below(2) == 0).then(|| {
        [
            g.below(shape[0] as u64) as usize,
            1 + g.below(shape[1] as u64 - 2) as usize,
            1 + g.below(shape[2] as u64 - 2) as usize,
        ]
    });
    let steps = 1 + g.below(9) as usize;
    let program = describe(&kernels, narrays, swap, reduce, reset, point.is_some());
    Case {
        program,
        shape,
        steps,
        point,
        reset: 0.25,
        kernels,
    }
}

fn describe(
    kernels: &[KSpec],
    narrays: usize,
    swap: bool,
    reduce: bool,
    reset: bool,
    point: bool,
) -> Program {
    let mut step = Vec::new();
    if reduce && reset {
        step.push(Stage::Reset(0));
    }
    let decls: Vec<KernelDecl> = kernels
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let mut reads = vec![ReadDecl {
                array: s.write,
                lo: vec![0, 0, 0],
                hi: vec![0, 0, 0],
            }];
            reads.extend(s.reads.iter().map(|&(a, lo, hi)| ReadDecl {
                array: a,
                lo: vec![lo, -1, -1],
                hi: vec![hi, 1, 1],
            }));
            let back = s.reads.iter().map(|r| -r.1).max().unwrap_or(0);
            let fwd = s.reads.iter().map(|r| r.2).max().unwrap_or(0);
            step.push(Stage::Kernel(k));
            KernelDecl {
                name: format!("k{k}"),
                ranges: vec![
                    AxisRange {
                        lo: Bound::start(back),
                        hi: Bound::end(-fwd),
                    },
                    AxisRange {
                        lo: Bound::start(1),
                        hi: Bound::end(-1),
                    },
                    AxisRange {
                        lo: Bound::start(1),
                        hi: Bound::end(-1),
                    },
                ],
                reads,
                writes: vec![s.write],
                reductions: if reduce && k == 0 { vec![0, 1] } else { vec![] },
                launch: Default::default(),
                guarded: Vec::new(),
            }
        })
        .collect();
    if point {
        step.push(Stage::Point(0));
    }
    if swap {
        step.push(Stage::Swap(0, 1));
    }
    let mut p = Program {
        name: "random".into(),
        ndim: 3,
        arrays: (0..narrays)
            .map(|a| ArrayDecl {
                name: format!("a{a}"),
                elem: Elem::F64,
                role: Role::Input,
            })
            .collect(),
        reductions: if reduce {
            vec![
                ReductionDecl {
                    name: "sum".into(),
                    op: ReduceOp::Sum,
                    elem: Elem::F64,
                },
                ReductionDecl {
                    name: "peak".into(),
                    op: ReduceOp::Max,
                    elem: Elem::F64,
                },
            ]
        } else {
            vec![]
        },
        resets: if reduce && reset {
            vec![ResetDecl { reduction: 0 }]
        } else {
            vec![]
        },
        kernels: decls,
        points: if point {
            vec![PointDecl {
                name: "p0".into(),
                array: 0,
                reads: vec![0],
            }]
        } else {
            vec![]
        },
        step,
        halo: 2,
        ..Default::default()
    };
    let written: Vec<bool> = (0..narrays)
        .map(|a| p.is_written(a) || (swap && a < 2 && (p.is_written(0) || p.is_written(1))))
        .collect();
    for (d, w) in p.arrays.iter_mut().zip(written) {
        if w {
            d.role = Role::InOut;
        }
    }
    p
}

/// Calls `hook(t, global plane)` before each plane a kernel computes (a test's way to stop a
/// rank mid-run).
pub type Hook = Arc<dyn Fn(i64, usize) + Send + Sync>;

/// The CPU closures of `c`.
pub fn closures<'a>(c: &Case, hook: Option<Hook>) -> CpuKernels<'a> {
    let kernels = c
        .kernels
        .iter()
        .map(|s| {
            let s = s.clone();
            let hook = hook.clone();
            let f: Box<CpuKernelFn<'a>> = Box::new(move |fr: &KernelFrame<'_>, z, red| {
                if let Some(h) = &hook {
                    h(fr.t, z);
                }
                plane(&s, fr, z, red)
            });
            f
        })
        .collect();
    let points = c
        .point
        .iter()
        .map(|&[z, y, x]| {
            let f: Box<CpuPointFn<'a>> = Box::new(move |fr: &KernelFrame<'_>| {
                let g = fr.arrays[0].grid::<f64>();
                g.set3(z, y, x, g.get3(z, y, x) * 0.5 + 1.0);
            });
            f
        })
        .collect();
    // SAFETY: the closures compute what the case's program declares: each writes only the plane
    // (or point) it is handed, and reads within the declared offsets.
    unsafe { CpuKernels::new(kernels, points) }
}

fn plane(s: &KSpec, fr: &KernelFrame<'_>, z: usize, red: &mut [f64]) {
    let (n0, ny, nx) = (fr.shape[0], fr.shape[1], fr.shape[2]);
    let w = fr.arrays[s.write].grid::<f64>();
    let (mut sum, mut peak) = (0.0f64, f64::NEG_INFINITY);
    for y in 1..ny - 1 {
        for x in 1..nx - 1 {
            let mut v =
                s.coef * w.get3(z, y, x) + 1e-3 * fr.t as f64 + 1e-4 * z as f64 - 1e-5 * n0 as f64;
            for &(a, lo, hi) in &s.reads {
                let g = fr.arrays[a].grid::<f64>();
                for d in lo..=hi {
                    v += g.get3((z as i64 + d) as usize, y, x) / (3.0 + d.abs() as f64);
                }
                v += 0.05 * (g.get3(z, y - 1, x) + g.get3(z, y + 1, x))
                    - 0.05 * (g.get3(z, y, x - 1) - g.get3(z, y, x + 1));
            }
            let v = v * 0.4;
            w.set3(z, y, x, v);
            sum += v;
            peak = peak.max(v);
        }
    }
    if !red.is_empty() {
        red[0] = sum;
        red[1] = peak;
    }
}

/// The time variable's value at the first step.
const T0: i64 = 3;

/// The reductions' values before the time loop.
fn reduction_init(c: &Case) -> Vec<f64> {
    [0.5, -1e300][..c.program.reductions.len()].to_vec()
}

/// The invocation of `c` on `arrays` (whole or a rank's window).
pub fn invocation<'a>(c: &Case, arrays: Vec<HostArray<'a>>, hook: Option<Hook>) -> Invocation<'a> {
    Invocation {
        arrays,
        scalars: vec![],
        slices: vec![],
        points: c
            .point
            .iter()
            .map(|p| p.iter().map(|&i| i as i64).collect())
            .collect(),
        t0: T0,
        steps: c.steps,
        reduction_init: reduction_init(c),
        reset_values: c.program.resets.iter().map(|_| c.reset).collect(),
        cpu: closures(c, hook),
    }
}

/// The serial loop over whole arrays (physical order), plane by plane; returns the reductions.
pub fn serial(c: &Case, arrays: &[HostArray]) -> Vec<f64> {
    let cpu = closures(c, None);
    let p = &c.program;
    let mut binding: Vec<usize> = (0..p.arrays.len()).collect();
    let mut value = reduction_init(c);
    let n0 = c.shape[0];
    for step in 0..c.steps {
        let views: Vec<BufView> = binding
            .iter()
            // SAFETY: whole f64 arrays of the case's shape, borrowed by the caller; the serial
            // loop runs one kernel at a time on this thread.
            .map(|&b| unsafe {
                let inner = [c.shape[1], c.shape[2]];
                BufView::from_raw_parts(arrays[b].ptr(), Elem::F64, 0, n0, inner, 3)
            })
            .collect();
        let frame = KernelFrame {
            arrays: &views,
            t: T0 + step as i64,
            shape: &c.shape,
        };
        for stage in &p.step {
            match *stage {
                Stage::Kernel(k) => {
                    let r = p.kernels[k].ranges[0];
                    let (mut sum, mut peak) = (0.0f64, f64::NEG_INFINITY);
                    for z in r.lo.eval(n0) as usize..r.hi.eval(n0) as usize {
                        let mut red = [0.0, f64::NEG_INFINITY];
                        let red = &mut red[..p.kernels[k].reductions.len()];
                        (cpu.kernels()[k])(&frame, z, red);
                        if !red.is_empty() {
                            sum += red[0];
                            peak = peak.max(red[1]);
                        }
                    }
                    if !p.kernels[k].reductions.is_empty() {
                        value[0] += sum;
                        value[1] = value[1].max(peak);
                    }
                }
                Stage::Point(i) => (cpu.points()[i])(&frame),
                Stage::Swap(a, b) => binding.swap(a, b),
                Stage::Reset(_) => value[0] = c.reset,
            }
        }
    }
    value
}
