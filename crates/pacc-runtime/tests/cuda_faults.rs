//! Injected faults and concurrent runs on the CUDA executor (docs/internals.md §5), with the
//! hand-written heat program of `tests/cuda_exec.rs`. A fault before the first write-back leaves
//! the arrays exactly as passed; after it, `Error::Failed` says how many steps are complete and
//! (unless torn) the arrays hold exactly the serial state after that many steps. Every test
//! prints `skipping: <reason>` and passes where no device is.
#![cfg(feature = "cuda")]

use ndarray::Array3;
use pacc_runtime::exec::cuda;
use pacc_runtime::exec::CpuKernels;
use pacc_runtime::fault::{self, Site};
use pacc_runtime::host::{host_array, host_array_mut, host_slice};
use pacc_runtime::plan::{self, PlanOptions, Scheme};
use pacc_runtime::program::*;
use pacc_runtime::{Error, HostArray, Invocation, Options, ScalarValue};
use std::collections::HashMap;

macro_rules! need_device {
    () => {
        match cuda::available() {
            Ok(d) => d,
            Err(reason) => {
                println!("skipping: {reason}");
                return;
            }
        }
    };
}

fn full(ndim: usize, h: i64) -> Vec<AxisRange> {
    vec![
        AxisRange {
            lo: Bound::start(h),
            hi: Bound::end(-h)
        };
        ndim
    ]
}

// ---------------------------------------------------------------------------------------------
// 3D: 7-point heat step with a read-only coefficient, the time index, a swap, a reset sum
// reduction and a point statement reading a slice.
//   for t in t0..t0+steps { s = 0; for z,y,x in 1..n-1 { b = a + c*k*(sum6 - 6a) + 0.001*t; s += b }
//                            swap(a, b); a[[pz,py,px]] += w[t & 3] }

const HEAT_CU: &str = r#"
#define I3(zz, yy, xx) ((((zz) - base) * n1 + (yy)) * n2 + (xx))
extern "C" __global__ void pacc_heat_k0(long long z0, long long z1, long long own0, long long own1,
    long long base, long long n0, long long n1, long long n2, long long t,
    float* a_0, float* a_1, const float* a_2, float s_0, const float* sl_0, double* red_0) {
    long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long z = z0 + blockIdx.z;
    float acc = 0.0f;
    if (z < z1 && z >= 1 && z < n0 - 1 && y >= 1 - PER && y < n1 - 1 + PER && x >= 1 - PER && x < n2 - 1 + PER) {
        long long ym = (y + n1 - 1) % n1, yp = (y + 1) % n1, xm = (x + n2 - 1) % n2, xp = (x + 1) % n2;
        float c = a_0[I3(z, y, x)];
        float v = c + s_0 * a_2[I3(z, y, x)] * (a_0[I3(z - 1, y, x)] + a_0[I3(z + 1, y, x)]
            + a_0[I3(z, ym, x)] + a_0[I3(z, yp, x)] + a_0[I3(z, y, xm)] + a_0[I3(z, y, xp)]
            - 6.0f * c) + 0.001f * (float)t;
        a_1[I3(z, y, x)] = v;
        if (z >= own0 && z < own1) { acc = v; }
    }
    __shared__ float sh[1024];
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int nt = blockDim.x * blockDim.y;
    sh[tid] = acc;
    __syncthreads();
    for (int w = 1; w < nt; w *= 2) {
        if (tid % (2 * w) == 0 && tid + w < nt) { sh[tid] += sh[tid + w]; }
        __syncthreads();
    }
    if (tid == 0) { red_0[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = (double)sh[0]; }
}
extern "C" __global__ void pacc_heat_p0(long long base, long long n0, long long n1, long long n2,
    long long t, long long i0, long long i1, long long i2,
    float* a_0, float* a_1, const float* a_2, float s_0, const float* sl_0) {
    a_0[I3(i0, i1, i2)] = a_0[I3(i0, i1, i2)] + sl_0[t & 3];
}
"#;

/// Inner axes: periodic (the kernel writes whole planes) or interior only (`1..n-1`, which
/// leaves each plane's rim unwritten).
fn heat_program() -> Program {
    heat_program_with(true)
}

fn heat_program_with(periodic: bool) -> Program {
    let h = if periodic { 0 } else { 1 };
    let f = |name: &str, role| ArrayDecl {
        name: name.into(),
        elem: Elem::F32,
        role,
    };
    Program {
        name: "heat".into(),
        ndim: 3,
        arrays: vec![
            f("a", Role::InOut),
            f("b", Role::InOut),
            f("k", Role::Input),
        ],
        scalars: vec![ScalarDecl {
            name: "c".into(),
            ty: ScalarType::F32,
        }],
        slices: vec![SliceDecl {
            name: "w".into(),
            elem: Elem::F32,
        }],
        reductions: vec![ReductionDecl {
            name: "s".into(),
            op: ReduceOp::Sum,
            elem: Elem::F32,
        }],
        resets: vec![ResetDecl { reduction: 0 }],
        kernels: vec![KernelDecl {
            name: "pacc_heat_k0".into(),
            ranges: vec![full(1, 1)[0], full(1, h)[0], full(1, h)[0]],
            reads: vec![
                ReadDecl {
                    array: 0,
                    lo: vec![-1, -h, -h],
                    hi: vec![1, h, h],
                },
                ReadDecl {
                    array: 2,
                    lo: vec![0; 3],
                    hi: vec![0; 3],
                },
            ],
            writes: vec![1],
            reductions: vec![0],
        }],
        points: vec![PointDecl {
            name: "pacc_heat_p0".into(),
            array: 0,
            reads: vec![0],
        }],
        step: vec![
            Stage::Reset(0),
            Stage::Kernel(0),
            Stage::Swap(0, 1),
            Stage::Point(0),
        ],
        halo: 1,
        default_chunks: None,
        default_block_steps: None,
        cuda_source: format!("#define PER {}\n{HEAT_CU}", periodic as i32),
    }
}

const W: [f32; 4] = [0.5, -0.25, 1.0, 0.125];
const C: f32 = 0.1;
const T0: i64 = 3;

fn heat_inputs(shape: (usize, usize, usize)) -> [Array3<f32>; 3] {
    let a = Array3::from_shape_fn(shape, |(z, y, x)| {
        ((z * 7 + y * 3 + x * 11) % 17) as f32 * 0.25 - 1.0
    });
    let b = Array3::from_shape_fn(shape, |(z, y, x)| ((z + y + x) % 5) as f32 * 0.5);
    let k = Array3::from_shape_fn(shape, |(z, y, x)| 0.5 + ((z * y + x) % 3) as f32 * 0.25);
    [a, b, k]
}

/// The serial function, on physical arrays with a name binding (swap = rebinding).
fn heat_serial(arr: &mut [Array3<f32>; 3], steps: usize, p: [usize; 3]) -> f32 {
    heat_serial_with(true, arr, steps, p)
}

fn heat_serial_with(
    periodic: bool,
    arr: &mut [Array3<f32>; 3],
    steps: usize,
    p: [usize; 3],
) -> f32 {
    let (n0, n1, n2) = arr[0].dim();
    let h = if periodic { 0 } else { 1 };
    let mut bind = [0usize, 1];
    let mut s = 0f32;
    for st in 0..steps {
        let t = T0 + st as i64;
        s = 0.0;
        let (ai, bi) = (bind[0], bind[1]);
        let a = arr[ai].clone();
        for z in 1..n0 - 1 {
            for y in h..n1 - h {
                for x in h..n2 - h {
                    let (ym, yp, xm, xp) = (
                        (y + n1 - 1) % n1,
                        (y + 1) % n1,
                        (x + n2 - 1) % n2,
                        (x + 1) % n2,
                    );
                    let c = a[[z, y, x]];
                    let v = c
                        + C * arr[2][[z, y, x]]
                            * (a[[z - 1, y, x]]
                                + a[[z + 1, y, x]]
                                + a[[z, ym, x]]
                                + a[[z, yp, x]]
                                + a[[z, y, xm]]
                                + a[[z, y, xp]]
                                - 6.0 * c)
                        + 0.001 * (t as f32);
                    arr[bi][[z, y, x]] = v;
                    s += v;
                }
            }
        }
        bind.swap(0, 1);
        let pa = &mut arr[bind[0]];
        pa[p] += W[(t & 3) as usize];
    }
    s
}

fn heat_invocation<'a>(arrays: Vec<HostArray>, p: [usize; 3], steps: usize) -> Invocation<'a> {
    Invocation {
        arrays,
        scalars: vec![ScalarValue::F32(C)],
        slices: vec![host_slice(&W[..])],
        points: vec![p.iter().map(|&v| v as i64).collect()],
        t0: T0,
        steps,
        reduction_init: vec![0.0],
        reset_values: vec![0.0],
        cpu: CpuKernels {
            kernels: vec![],
            points: vec![],
        },
    }
}

fn plan_for(
    p: &Program,
    shape: &[usize],
    steps: usize,
    points: &[usize],
    d: usize,
    k: usize,
    s: Scheme,
) -> plan::Plan {
    plan::build(
        p,
        shape,
        steps,
        points,
        &PlanOptions {
            chunks: d,
            block_steps: k,
            scheme: s,
            buffer_sets: 3,
        },
    )
    .unwrap_or_else(|e| panic!("plan {s} d={d} k={k}: {e}"))
}

fn assert_bits_eq3(got: &Array3<f32>, want: &Array3<f32>, what: &str) {
    let bad = got
        .iter()
        .zip(want.iter())
        .enumerate()
        .find(|(_, (g, w))| g.to_bits() != w.to_bits());
    if let Some((i, (g, w))) = bad {
        let n = got
            .iter()
            .zip(want.iter())
            .filter(|(g, w)| g.to_bits() != w.to_bits())
            .count();
        panic!("{what}: {n} elements differ; first at flat index {i}: got {g}, want {w}");
    }
}

const SHAPE: (usize, usize, usize) = (16, 9, 33);
const STEPS: usize = 5;
const PT: [usize; 3] = [7, 4, 20];

/// The serial physical arrays after `steps` steps.
fn serial_after(steps: usize) -> [Array3<f32>; 3] {
    let mut a = heat_inputs(SHAPE);
    heat_serial(&mut a, steps, PT);
    a
}

fn run_heat(arrays: &mut [Array3<f32>; 3], plan: &plan::Plan) -> Result<f64, Error> {
    let [a, b, k] = arrays;
    let host = vec![
        host_array_mut(a, "a").unwrap(),
        host_array_mut(b, "b").unwrap(),
        host_array(&*k, "k").unwrap(),
    ];
    let inv = heat_invocation(host, PT, STEPS);
    cuda::execute(&heat_program(), plan, &inv, &Options::default()).map(|o| o.reductions[0])
}

fn same_bits(x: &[Array3<f32>; 3], y: &[Array3<f32>; 3]) -> bool {
    x.iter()
        .zip(y)
        .all(|(a, b)| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits()))
}

/// Fault positions tried per site: every one of the first few, then sparser, until a run
/// succeeds (the site has fewer hits than that).
fn positions() -> impl Iterator<Item = usize> {
    (0..4).chain([5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987])
}

#[test]
fn every_fault_site_keeps_its_promise() {
    let dev = need_device!();
    println!("device: {dev}");
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    let initial = heat_inputs(SHAPE);
    let mut reference: HashMap<usize, [Array3<f32>; 3]> = HashMap::new();
    let sites = [
        Site::Alloc,
        Site::Compile,
        Site::HtoD,
        Site::DtoD,
        Site::HostCopy,
        Site::Kernel,
        Site::Point,
        Site::DtoH,
    ];
    let mut fired: HashMap<Site, usize> = HashMap::new();
    let mut outcomes = [0usize; 3]; // untouched, consistent, torn
    for scheme in Scheme::ALL {
        let plan = plan_for(&prog, &shape, STEPS, &[PT[0]], 3, 2, scheme);
        // The run without faults equals the serial function.
        let mut x = heat_inputs(SHAPE);
        run_heat(&mut x, &plan).unwrap_or_else(|e| panic!("{scheme} without faults: {e}"));
        assert!(
            same_bits(&x, &serial_after(STEPS)),
            "{scheme} without faults"
        );
        for site in sites {
            for nth in positions() {
                let mut x = heat_inputs(SHAPE);
                let r = {
                    let _f = fault::inject(site, nth);
                    run_heat(&mut x, &plan)
                };
                let e = match r {
                    Ok(_) => {
                        // No such hit: the run is complete and correct.
                        assert!(
                            same_bits(&x, &serial_after(STEPS)),
                            "{scheme} {site:?} #{nth}"
                        );
                        break;
                    }
                    Err(e) => e,
                };
                *fired.entry(site).or_default() += 1;
                let ctx = format!("{scheme} {site:?} #{nth}: {e}");
                assert!(
                    matches!(e.cause(), Error::Fault { site: s, index, .. } if *s == site && *index == nth),
                    "{ctx}"
                );
                match e.progress() {
                    None => {
                        assert!(!matches!(e, Error::Failed { .. }), "{ctx}");
                        assert!(same_bits(&x, &initial), "touched: {ctx}");
                        outcomes[0] += 1;
                    }
                    Some(p) if !p.torn => {
                        assert!(p.steps_complete <= STEPS, "{ctx}");
                        let want = reference
                            .entry(p.steps_complete)
                            .or_insert_with(|| serial_after(p.steps_complete));
                        assert!(
                            same_bits(&x, want),
                            "not the state after {} steps: {ctx}",
                            p.steps_complete
                        );
                        outcomes[1] += 1;
                    }
                    Some(p) => {
                        assert!(p.steps_complete < STEPS, "{ctx}");
                        outcomes[2] += 1;
                    }
                }
                println!(
                    "{scheme} {site:?} #{nth}: {}",
                    match e.progress() {
                        None => "untouched".to_string(),
                        Some(p) => format!(
                            "failed after {} steps ({} blocks){}",
                            p.steps_complete,
                            p.blocks_complete,
                            if p.torn { ", torn" } else { "" }
                        ),
                    }
                );
            }
        }
    }
    for site in [
        Site::Alloc,
        Site::Compile,
        Site::HtoD,
        Site::HostCopy,
        Site::Kernel,
        Site::Point,
        Site::DtoH,
    ] {
        assert!(
            fired.get(&site).copied().unwrap_or(0) > 0,
            "{site:?} never fired"
        );
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    println!("cuda faults: {outcomes:?} (untouched, consistent, torn); per site {fired:?}");
}

/// Four threads run at once, sharing one read-only array (page-locked by each run's
/// registration): CUDA runs are serialized, and every result equals the serial function.
#[test]
fn concurrent_runs_sharing_a_read_only_array() {
    let _dev = need_device!();
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    let want = serial_after(STEPS);
    let k = heat_inputs(SHAPE)[2].clone();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let (k, prog, want) = (&k, &prog, &want);
                s.spawn(move || {
                    for rep in 0..3 {
                        let scheme = Scheme::ALL[(t + rep) % 3];
                        let plan = plan_for(prog, &shape, STEPS, &[PT[0]], 1 + t % 3, 2, scheme);
                        let [mut a, mut b, _] = heat_inputs(SHAPE);
                        let arrays = vec![
                            host_array_mut(&mut a, "a").unwrap(),
                            host_array_mut(&mut b, "b").unwrap(),
                            host_array(k, "k").unwrap(),
                        ];
                        let inv = heat_invocation(arrays, PT, STEPS);
                        cuda::execute(prog, &plan, &inv, &Options::default())
                            .unwrap_or_else(|e| panic!("thread {t} run {rep} {scheme}: {e}"));
                        assert_bits_eq3(&a, &want[0], &format!("thread {t} run {rep} a"));
                        assert_bits_eq3(&b, &want[1], &format!("thread {t} run {rep} b"));
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    assert_bits_eq3(&k, &want[2], "shared k");
    println!("4 threads x 3 runs sharing `k`: all equal the serial function");
}
