//! The hand-written 3D heat program (7-point stencil, read-only coefficient, time index, swap,
//! reset sum, point source reading a slice) and its serial reference, shared by the CUDA
//! executor's tests (`cuda_exec.rs`) and its fault-injection tests (`cuda_faults.rs`).
#![allow(dead_code, unused_macros)]

use ndarray::Array3;
use pacc_runtime::exec::CpuKernels;
use pacc_runtime::host::host_slice;
use pacc_runtime::plan::{self, PlanOptions, Scheme};
use pacc_runtime::program::*;
use pacc_runtime::{HostArray, Invocation, ScalarValue};
/// The device a test needs. Tests that need one are `#[ignore = "needs a CUDA device"]`, so
/// `cargo test` counts them as ignored where there is none; run with `--include-ignored`
/// without a device, they fail here instead of passing having checked nothing.
macro_rules! need_device {
    () => {
        cuda::available().unwrap_or_else(|reason| {
            panic!(
                "this test needs a CUDA device ({reason}); run it on the GPU machine with \
                 --include-ignored"
            )
        })
    };
}

pub fn full(ndim: usize, h: i64) -> Vec<AxisRange> {
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

pub const HEAT_CU: &str = r#"
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
pub fn heat_program() -> Program {
    heat_program_with(true)
}

pub fn heat_program_with(periodic: bool) -> Program {
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
            reads: Vec::new(),
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
            launch: Default::default(),
            guarded: Vec::new(),
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
        cuda_source: format!("#define PER {}\n{HEAT_CU}", periodic as i32),
        ..Default::default()
    }
}

pub const W: [f32; 4] = [0.5, -0.25, 1.0, 0.125];
pub const C: f32 = 0.1;
pub const T0: i64 = 3;

pub fn heat_inputs(shape: (usize, usize, usize)) -> [Array3<f32>; 3] {
    let a = Array3::from_shape_fn(shape, |(z, y, x)| {
        ((z * 7 + y * 3 + x * 11) % 17) as f32 * 0.25 - 1.0
    });
    let b = Array3::from_shape_fn(shape, |(z, y, x)| ((z + y + x) % 5) as f32 * 0.5);
    let k = Array3::from_shape_fn(shape, |(z, y, x)| 0.5 + ((z * y + x) % 3) as f32 * 0.25);
    [a, b, k]
}

/// The serial function, on physical arrays with a name binding (swap = rebinding).
pub fn heat_serial(arr: &mut [Array3<f32>; 3], steps: usize, p: [usize; 3]) -> f32 {
    heat_serial_with(true, arr, steps, p)
}

pub fn heat_serial_with(
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

pub fn heat_invocation<'a>(
    arrays: Vec<HostArray<'a>>,
    p: [usize; 3],
    steps: usize,
) -> Invocation<'a> {
    Invocation {
        arrays,
        scalars: vec![ScalarValue::F32(C)],
        slices: vec![host_slice(&W[..])],
        points: vec![p.iter().map(|&v| v as i64).collect()],
        t0: T0,
        steps,
        reduction_init: vec![0.0],
        reset_values: vec![0.0],
        // SAFETY: no closures (the run is on the device); the heat program's CUDA code
        // accesses what it declares.
        cpu: unsafe { CpuKernels::new(vec![], vec![]) },
    }
}

pub fn plan_for(
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
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        },
    )
    .unwrap_or_else(|e| panic!("plan {s} d={d} k={k}: {e}"))
}

pub fn assert_bits_eq3(got: &Array3<f32>, want: &Array3<f32>, what: &str) {
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
