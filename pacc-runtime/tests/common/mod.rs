//! Hand-written test programs (what the translator would emit), their CPU closures, independent
//! serial references, and a naive hand-made planner that does not depend on `plan::build`.
#![allow(dead_code)]

use ndarray::{Array2, Array3};
use pacc_runtime::exec::{CpuKernels, KernelFrame};
use pacc_runtime::host::{host_array, host_array_mut, host_slice};
use pacc_runtime::plan::{BlockGeom, ChunkGeom, HostSide, Op, OpKind, Plan, Scheme};
use pacc_runtime::program::*;
use pacc_runtime::rng::SplitMix64;
use pacc_runtime::{HostArray, Invocation, ScalarValue};
use std::ops::Range;

// ------------------------------------------------------------------------------------------------
// Deterministic data

/// Values in `[-1, 1)`.
pub fn random3(shape: [usize; 3], seed: u64) -> Array3<f64> {
    let mut r = SplitMix64(seed);
    Array3::from_shape_simple_fn((shape[0], shape[1], shape[2]), || r.signed_unit())
}

/// Values in `[-1, 1)`.
pub fn random2_f32(shape: [usize; 2], seed: u64) -> Array2<f32> {
    let mut r = SplitMix64(seed);
    Array2::from_shape_simple_fn((shape[0], shape[1]), || r.signed_unit() as f32)
}

pub fn bits3(a: &Array3<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

pub fn bits2(a: &Array2<f32>) -> Vec<u32> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn full(lo: i64, hi_from_end: i64) -> AxisRange {
    AxisRange {
        lo: Bound::start(lo),
        hi: Bound::end(hi_from_end),
    }
}

fn array(name: &str, elem: Elem, role: Role) -> ArrayDecl {
    ArrayDecl {
        name: name.into(),
        elem,
        role,
    }
}

fn empty_program(name: &str, ndim: usize) -> Program {
    Program {
        name: name.into(),
        ndim,
        ..Default::default()
    }
}

// ------------------------------------------------------------------------------------------------
// (a) 3D stencil of reach r along every axis: b = f(a), then swap(a, b).

pub fn stencil_program(r: usize) -> Program {
    let ri = r as i64;
    let mut p = empty_program("stencil3d", 3);
    p.arrays = vec![
        array("a", Elem::F64, Role::InOut),
        array("b", Elem::F64, Role::InOut),
    ];
    p.scalars = vec![ScalarDecl {
        name: "c".into(),
        ty: ScalarType::F64,
    }];
    p.reductions = vec![
        ReductionDecl {
            name: "energy".into(),
            op: ReduceOp::Sum,
            elem: Elem::F64,
        },
        ReductionDecl {
            name: "peak".into(),
            op: ReduceOp::Max,
            elem: Elem::F64,
        },
    ];
    p.kernels = vec![KernelDecl {
        name: "pacc_stencil3d_k0".into(),
        ranges: vec![full(ri, -ri); 3],
        reads: vec![ReadDecl {
            array: 0,
            lo: vec![-ri; 3],
            hi: vec![ri; 3],
        }],
        writes: vec![1],
        reductions: vec![0, 1],
        launch: Default::default(),
        guarded: Vec::new(),
    }];
    p.step = vec![Stage::Kernel(0), Stage::Swap(0, 1)];
    p.halo = r;
    p
}

/// The update of one point; `a(dz, dy, dx)` reads `a` at an offset. Shared by the closure and the
/// reference so that both evaluate the same expression in the same order.
#[inline(always)]
pub fn stencil_point(r: usize, c: f64, t: i64, a: impl Fn(isize, isize, isize) -> f64) -> f64 {
    let mut v = c * a(0, 0, 0);
    for d in 1..=r as isize {
        let w = 1.0 / (d as f64 + 1.5);
        v += w * (a(-d, 0, 0) + a(d, 0, 0));
        v += (0.5 * w) * (a(0, -d, 0) - a(0, d, 0));
        v += (0.25 * w) * (a(0, 0, -d) + a(0, 0, d));
    }
    v * 0.5 + 1e-3 * t as f64
}

pub fn stencil_reference(
    a: &mut Array3<f64>,
    b: &mut Array3<f64>,
    r: usize,
    c: f64,
    t0: i64,
    steps: usize,
    init: (f64, f64),
) -> (f64, f64) {
    let (mut energy, mut peak) = init;
    let (nz, ny, nx) = a.dim();
    for step in 0..steps {
        let t = t0 + step as i64;
        for z in r..nz - r {
            for y in r..ny - r {
                for x in r..nx - r {
                    let v = stencil_point(r, c, t, |dz, dy, dx| {
                        a[[
                            (z as isize + dz) as usize,
                            (y as isize + dy) as usize,
                            (x as isize + dx) as usize,
                        ]]
                    });
                    b[[z, y, x]] = v;
                    energy += v * v;
                    peak = peak.max(v);
                }
            }
        }
        std::mem::swap(a, b);
    }
    (energy, peak)
}

pub const STENCIL_INIT: (f64, f64) = (2.5, -10.0);

pub fn stencil_invocation<'a>(
    a: &'a mut Array3<f64>,
    b: &'a mut Array3<f64>,
    r: usize,
    c: f64,
    t0: i64,
    steps: usize,
) -> Invocation<'a> {
    let arrays = vec![
        host_array_mut(a, "a").unwrap(),
        host_array_mut(b, "b").unwrap(),
    ];
    stencil_invocation_raw(arrays, r, c, t0, steps)
}

pub fn stencil_invocation_raw<'a>(
    arrays: Vec<HostArray<'a>>,
    r: usize,
    c: f64,
    t0: i64,
    steps: usize,
) -> Invocation<'a> {
    let kernel = move |f: &KernelFrame<'_>, z: usize, red: &mut [f64]| {
        let a = f.arrays[0].grid::<f64>();
        let b = f.arrays[1].grid::<f64>();
        let (ny, nx) = (f.shape[1], f.shape[2]);
        let (mut energy, mut peak) = (0.0f64, f64::NEG_INFINITY);
        for y in r..ny - r {
            for x in r..nx - r {
                let v = stencil_point(r, c, f.t, |dz, dy, dx| {
                    a.get3(
                        (z as isize + dz) as usize,
                        (y as isize + dy) as usize,
                        (x as isize + dx) as usize,
                    )
                });
                b.set3(z, y, x, v);
                energy += v * v;
                peak = peak.max(v);
            }
        }
        red[0] = energy;
        red[1] = peak;
    };
    Invocation {
        arrays,
        scalars: vec![ScalarValue::F64(c)],
        slices: vec![],
        points: vec![],
        t0,
        steps,
        reduction_init: vec![STENCIL_INIT.0, STENCIL_INIT.1],
        reset_values: vec![],
        // SAFETY: the closures compute what the program above declares: each writes only the
        // plane it is handed, inside the kernel's ranges, and reads within the declared offsets.
        cpu: unsafe { CpuKernels::new(vec![Box::new(kernel)], vec![]) },
    }
}

// ------------------------------------------------------------------------------------------------
// (b) 2D, f32, two kernels: w = smooth(u) (w scratch); u += lap(w) with a sum reduction (reset to
// `reset` every step) and a min reduction (never reset).

pub fn two_kernel_program() -> Program {
    let mut p = empty_program("two_kernel2d", 2);
    p.arrays = vec![
        array("u", Elem::F32, Role::InOut),
        array("w", Elem::F32, Role::Scratch),
    ];
    p.scalars = vec![ScalarDecl {
        name: "k".into(),
        ty: ScalarType::F32,
    }];
    p.reductions = vec![
        ReductionDecl {
            name: "change".into(),
            op: ReduceOp::Sum,
            elem: Elem::F32,
        },
        ReductionDecl {
            name: "lowest".into(),
            op: ReduceOp::Min,
            elem: Elem::F32,
        },
    ];
    p.resets = vec![ResetDecl { reduction: 0 }];
    p.kernels = vec![
        KernelDecl {
            name: "pacc_two_kernel2d_k0".into(),
            ranges: vec![full(1, -1), full(1, -1)],
            reads: vec![ReadDecl {
                array: 0,
                lo: vec![-1, -1],
                hi: vec![1, 1],
            }],
            writes: vec![1],
            reductions: vec![],
            launch: Default::default(),
            guarded: Vec::new(),
        },
        KernelDecl {
            name: "pacc_two_kernel2d_k1".into(),
            ranges: vec![full(2, -2), full(2, -2)],
            reads: vec![
                ReadDecl {
                    array: 0,
                    lo: vec![0, 0],
                    hi: vec![0, 0],
                },
                ReadDecl {
                    array: 1,
                    lo: vec![-1, -1],
                    hi: vec![1, 1],
                },
            ],
            writes: vec![0],
            reductions: vec![0, 1],
            launch: Default::default(),
            guarded: Vec::new(),
        },
    ];
    p.step = vec![Stage::Reset(0), Stage::Kernel(0), Stage::Kernel(1)];
    p.halo = 1;
    p
}

#[inline(always)]
pub fn smooth_point(t: i64, u: impl Fn(isize, isize) -> f32) -> f32 {
    0.5 * u(0, 0) + 0.125 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1)) + 1e-3 * (t as f32)
}

#[inline(always)]
pub fn update_point(k: f32, u: f32, w: impl Fn(isize, isize) -> f32) -> f32 {
    u + k * (w(-1, 0) + w(1, 0) + w(0, -1) + w(0, 1) - 4.0 * w(0, 0))
}

/// Returns (change, lowest) as the serial function leaves them.
pub fn two_kernel_reference(
    u: &mut Array2<f32>,
    w: &mut Array2<f32>,
    k: f32,
    t0: i64,
    steps: usize,
    init: (f32, f32),
    reset: f32,
) -> (f32, f32) {
    let (ny, nx) = u.dim();
    let (mut change, mut lowest) = init;
    for step in 0..steps {
        let t = t0 + step as i64;
        change = reset;
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                w[[y, x]] = smooth_point(t, |dy, dx| {
                    u[[(y as isize + dy) as usize, (x as isize + dx) as usize]]
                });
            }
        }
        for y in 2..ny - 2 {
            for x in 2..nx - 2 {
                let v = update_point(k, u[[y, x]], |dy, dx| {
                    w[[(y as isize + dy) as usize, (x as isize + dx) as usize]]
                });
                change += (v - u[[y, x]]).abs();
                lowest = lowest.min(v);
                u[[y, x]] = v;
            }
        }
    }
    (change, lowest)
}

pub fn two_kernel_invocation<'a>(
    u: &'a mut Array2<f32>,
    w: &'a mut Array2<f32>,
    k: f32,
    t0: i64,
    steps: usize,
    init: (f32, f32),
    reset: f32,
) -> Invocation<'a> {
    let k0 = move |f: &KernelFrame<'_>, y: usize, _red: &mut [f64]| {
        let u = f.arrays[0].grid::<f32>();
        let w = f.arrays[1].grid::<f32>();
        let nx = f.shape[1];
        for x in 1..nx - 1 {
            let v = smooth_point(f.t, |dy, dx| {
                u.get2((y as isize + dy) as usize, (x as isize + dx) as usize)
            });
            w.set2(y, x, v);
        }
    };
    let k1 = move |f: &KernelFrame<'_>, y: usize, red: &mut [f64]| {
        let u = f.arrays[0].grid::<f32>();
        let w = f.arrays[1].grid::<f32>();
        let nx = f.shape[1];
        let mut change = 0.0f32;
        let mut lowest = f32::INFINITY;
        for x in 2..nx - 2 {
            let v = update_point(k, u.get2(y, x), |dy, dx| {
                w.get2((y as isize + dy) as usize, (x as isize + dx) as usize)
            });
            change += (v - u.get2(y, x)).abs();
            lowest = lowest.min(v);
            u.set2(y, x, v);
        }
        red[0] = change as f64;
        red[1] = lowest as f64;
    };
    Invocation {
        arrays: vec![
            host_array_mut(u, "u").unwrap(),
            host_array_mut(w, "w").unwrap(),
        ],
        scalars: vec![ScalarValue::F32(k)],
        slices: vec![],
        points: vec![],
        t0,
        steps,
        reduction_init: vec![init.0 as f64, init.1 as f64],
        reset_values: vec![reset as f64],
        // SAFETY: the closures compute what the program above declares: each writes only the
        // plane it is handed, inside the kernel's ranges, and reads within the declared offsets.
        cpu: unsafe { CpuKernels::new(vec![Box::new(k0), Box::new(k1)], vec![]) },
    }
}

// ------------------------------------------------------------------------------------------------
// (c) 3D wave-like update with a point source: nxt = g(cur, nxt) over the interior (reach 1);
// nxt[[sz, sy, sx]] += wavelet[t] * amp; swap(cur, nxt). `sz` is a scalar of the program.

pub fn source_program() -> Program {
    let mut p = empty_program("source3d", 3);
    p.arrays = vec![
        array("cur", Elem::F64, Role::InOut),
        array("nxt", Elem::F64, Role::InOut),
        array("vel", Elem::F64, Role::Input),
    ];
    p.scalars = vec![
        ScalarDecl {
            name: "sz".into(),
            ty: ScalarType::Usize,
        },
        ScalarDecl {
            name: "amp".into(),
            ty: ScalarType::F64,
        },
    ];
    p.slices = vec![SliceDecl {
        name: "wavelet".into(),
        elem: Elem::F64,
        reads: Vec::new(),
    }];
    p.kernels = vec![KernelDecl {
        name: "pacc_source3d_k0".into(),
        ranges: vec![full(1, -1); 3],
        reads: vec![
            ReadDecl {
                array: 0,
                lo: vec![-1, -1, -1],
                hi: vec![1, 1, 1],
            },
            ReadDecl {
                array: 1,
                lo: vec![0, 0, 0],
                hi: vec![0, 0, 0],
            },
            ReadDecl {
                array: 2,
                lo: vec![0, 0, 0],
                hi: vec![0, 0, 0],
            },
        ],
        writes: vec![1],
        reductions: vec![],
        launch: Default::default(),
        guarded: Vec::new(),
    }];
    p.points = vec![PointDecl {
        name: "pacc_source3d_p0".into(),
        array: 1,
        reads: vec![1],
    }];
    p.step = vec![Stage::Kernel(0), Stage::Point(0), Stage::Swap(0, 1)];
    p.halo = 1;
    p
}

#[inline(always)]
pub fn wave_point(v: f64, nxt: f64, cur: impl Fn(isize, isize, isize) -> f64) -> f64 {
    let lap =
        cur(-1, 0, 0) + cur(1, 0, 0) + cur(0, -1, 0) + cur(0, 1, 0) + cur(0, 0, -1) + cur(0, 0, 1)
            - 6.0 * cur(0, 0, 0);
    2.0 * cur(0, 0, 0) - nxt + v * v * 0.05 * lap
}

#[allow(clippy::too_many_arguments)]
pub fn source_reference(
    cur: &mut Array3<f64>,
    nxt: &mut Array3<f64>,
    vel: &Array3<f64>,
    src: [usize; 3],
    amp: f64,
    wavelet: &[f64],
    t0: i64,
    steps: usize,
) {
    let (nz, ny, nx) = cur.dim();
    for step in 0..steps {
        let t = t0 + step as i64;
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let v = wave_point(vel[[z, y, x]], nxt[[z, y, x]], |dz, dy, dx| {
                        cur[[
                            (z as isize + dz) as usize,
                            (y as isize + dy) as usize,
                            (x as isize + dx) as usize,
                        ]]
                    });
                    nxt[[z, y, x]] = v;
                }
            }
        }
        nxt[src] += wavelet[t as usize] * amp;
        std::mem::swap(cur, nxt);
    }
}

#[allow(clippy::too_many_arguments)]
pub fn source_invocation<'a>(
    cur: &'a mut Array3<f64>,
    nxt: &'a mut Array3<f64>,
    vel: &'a Array3<f64>,
    src: [usize; 3],
    amp: f64,
    wavelet: &'a [f64],
    t0: i64,
    steps: usize,
) -> Invocation<'a> {
    let k0 = move |f: &KernelFrame<'_>, z: usize, _red: &mut [f64]| {
        let cur = f.arrays[0].grid::<f64>();
        let nxt = f.arrays[1].grid::<f64>();
        let vel = f.arrays[2].grid::<f64>();
        let (ny, nx) = (f.shape[1], f.shape[2]);
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let v = wave_point(vel.get3(z, y, x), nxt.get3(z, y, x), |dz, dy, dx| {
                    cur.get3(
                        (z as isize + dz) as usize,
                        (y as isize + dy) as usize,
                        (x as isize + dx) as usize,
                    )
                });
                nxt.set3(z, y, x, v);
            }
        }
    };
    let [sz, sy, sx] = src;
    let p0 = move |f: &KernelFrame<'_>| {
        let nxt = f.arrays[1].grid::<f64>();
        nxt.set3(
            sz,
            sy,
            sx,
            nxt.get3(sz, sy, sx) + wavelet[f.t as usize] * amp,
        );
    };
    Invocation {
        arrays: vec![
            host_array_mut(cur, "cur").unwrap(),
            host_array_mut(nxt, "nxt").unwrap(),
            host_array(vel, "vel").unwrap(),
        ],
        scalars: vec![ScalarValue::Usize(sz), ScalarValue::F64(amp)],
        slices: vec![host_slice(wavelet)],
        points: vec![vec![sz as i64, sy as i64, sx as i64]],
        t0,
        steps,
        reduction_init: vec![],
        reset_values: vec![],
        // SAFETY: the closures compute what the program above declares: each writes only the
        // plane it is handed, inside the kernel's ranges, and reads within the declared offsets.
        cpu: unsafe { CpuKernels::new(vec![Box::new(k0)], vec![Box::new(p0)]) },
    }
}

// ------------------------------------------------------------------------------------------------
// Helpers

/// Replays the wrapper's swaps: `swap_replays` times `std::mem::swap(x, y)`.
pub fn replay<T>(x: &mut T, y: &mut T, times: usize) {
    for _ in 0..times {
        std::mem::swap(x, y);
    }
}

/// Relative closeness for reductions.
pub fn close(got: f64, want: f64, rel: f64) -> bool {
    got == want || (got - want).abs() <= rel * want.abs().max(1e-30)
}

/// Two overlapping standard-layout views into one array (for the overlap test): planes
/// `0..n` and `1..n + 1`. Safe code cannot make them (the two mutable borrows conflict); a
/// caller of the unsafe constructor can, and the run must refuse them.
pub fn overlapping_views(big: &mut Array3<f64>, n: usize) -> (HostArray<'_>, HostArray<'_>) {
    let (n0, ny, nx) = big.dim();
    assert!(n < n0);
    let p = big.as_mut_ptr();
    let at = |plane: usize| {
        // SAFETY: planes `plane..plane + n` lie inside `big`, which stays borrowed (and
        // untouched otherwise) while the descriptions live; the overlap is the point.
        unsafe {
            HostArray::from_raw_parts(
                p.add(plane * ny * nx) as *mut u8,
                Elem::F64,
                &[n, ny, nx],
                true,
            )
        }
        .unwrap()
    };
    (at(0), at(1))
}

// ------------------------------------------------------------------------------------------------
// A naive planner, independent of `plan::build`: no temporal blocking (one step per stage), each
// chunk loads its owned planes plus the kernel's reach of every array, computes, writes its
// computed planes back. Chunk c uses buffer set c and stream c; every stage waits for the
// previous one. Independent chunks run in any order under the shuffled executor.

pub fn naive_plan(
    program: &Program,
    shape: &[usize],
    steps: usize,
    chunks: usize,
    points: &[usize],
) -> Plan {
    let n0 = shape[0];
    let narrays = program.arrays.len();
    let owned: Vec<Range<usize>> = (0..chunks)
        .map(|c| c * n0 / chunks..(c + 1) * n0 / chunks)
        .collect();
    let mut ops: Vec<Op> = Vec::new();
    let mut binding: Vec<usize> = (0..narrays).collect();
    let mut prev_tails: Vec<usize> = Vec::new();
    let mut buffer_planes = 1;
    for step in 0..steps {
        for stage in &program.step {
            match *stage {
                Stage::Kernel(k) => {
                    let decl = &program.kernels[k];
                    let zlo = decl.ranges[0].lo.eval(n0).max(0) as usize;
                    let zhi = decl.ranges[0].hi.eval(n0).max(0) as usize;
                    let back = decl
                        .reads
                        .iter()
                        .map(|r| -r.lo[0])
                        .max()
                        .unwrap_or(0)
                        .max(0) as usize;
                    let fwd = decl.reads.iter().map(|r| r.hi[0]).max().unwrap_or(0).max(0) as usize;
                    let mut tails = Vec::new();
                    for (c, own) in owned.iter().enumerate() {
                        let planes = own.start.max(zlo)..own.end.min(zhi).max(own.start.max(zlo));
                        let window = own.start.saturating_sub(back)..(own.end + fwd).min(n0);
                        buffer_planes = buffer_planes.max(window.len());
                        let base = window.start;
                        let mut first = true;
                        let mut push = |kind: OpKind, ops: &mut Vec<Op>| {
                            let deps = if first { prev_tails.clone() } else { vec![] };
                            first = false;
                            ops.push(Op {
                                kind,
                                stream: c,
                                deps,
                                block: step,
                                chunk: c,
                            });
                        };
                        for a in 0..narrays {
                            push(
                                OpKind::HtoD {
                                    array: a,
                                    set: c,
                                    base,
                                    planes: window.clone(),
                                    from: HostSide::User,
                                },
                                &mut ops,
                            );
                        }
                        push(
                            OpKind::Kernel {
                                kernel: k,
                                set: c,
                                base,
                                step,
                                planes: planes.clone(),
                                owned: own.clone(),
                                args: binding.clone(),
                                ring_base: None,
                            },
                            &mut ops,
                        );
                        for &w in &decl.writes {
                            push(
                                OpKind::DtoH {
                                    array: binding[w],
                                    set: c,
                                    base,
                                    planes: planes.clone(),
                                    to: HostSide::User,
                                },
                                &mut ops,
                            );
                        }
                        tails.push(ops.len() - 1);
                    }
                    prev_tails = tails;
                }
                Stage::Point(p) => {
                    let plane = points[p];
                    let phys = binding[program.points[p].array];
                    let mut deps = prev_tails.clone();
                    for a in 0..narrays {
                        ops.push(Op {
                            kind: OpKind::HtoD {
                                array: a,
                                set: 0,
                                base: plane,
                                planes: plane..plane + 1,
                                from: HostSide::User,
                            },
                            stream: 0,
                            deps: std::mem::take(&mut deps),
                            block: step,
                            chunk: 0,
                        });
                    }
                    ops.push(Op {
                        kind: OpKind::Point {
                            point: p,
                            set: 0,
                            base: plane,
                            step,
                            plane,
                            args: binding.clone(),
                            ring_base: None,
                        },
                        stream: 0,
                        deps: vec![],
                        block: step,
                        chunk: 0,
                    });
                    ops.push(Op {
                        kind: OpKind::DtoH {
                            array: phys,
                            set: 0,
                            base: plane,
                            planes: plane..plane + 1,
                            to: HostSide::User,
                        },
                        stream: 0,
                        deps: vec![],
                        block: step,
                        chunk: 0,
                    });
                    prev_tails = vec![ops.len() - 1];
                }
                Stage::Swap(a, b) => binding.swap(a, b),
                Stage::Reset(_) => {}
            }
        }
    }
    let plane_len: usize = shape[1..].iter().product();
    Plan {
        shape: shape.to_vec(),
        steps,
        scheme: Scheme::DirectMap,
        chunks,
        requested_chunks: chunks,
        block_steps: 1,
        adjustments: vec![],
        buffer_sets: chunks,
        buffer_planes,
        plane_len,
        elem_sizes: program.arrays.iter().map(|a| a.elem.size()).collect(),
        streams: chunks,
        blocks: (0..steps)
            .map(|s| BlockGeom {
                first_step: s,
                steps: 1,
                chunks: owned
                    .iter()
                    .enumerate()
                    .map(|(c, o)| ChunkGeom {
                        owned: o.clone(),
                        window: o.clone(),
                        set: c,
                    })
                    .collect(),
            })
            .collect(),
        ops,
        final_binding: binding,
        compression: Vec::new(),
        ring: None,
    }
}
