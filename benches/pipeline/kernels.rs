//! Hand-written programs with the structure the translator emits for the two benchmark models
//! (`src/models/acoustic.rs::propagate_sponge`, `src/models/himeno.rs::jacobi`): the same
//! arrays, scalars, kernels, point statement and stages, with CUDA kernels following the ABI of
//! `docs/internals.md` §3. Used when the generated programs are not available (`--kernels hand`).

use pacc_runtime::program::*;

fn range(lo: i64) -> AxisRange {
    AxisRange {
        lo: Bound::start(lo),
        hi: Bound::end(-lo),
    }
}

fn arr(name: &str, role: Role) -> ArrayDecl {
    ArrayDecl {
        name: name.into(),
        elem: Elem::F32,
        role,
    }
}

fn f32s(name: &str) -> ScalarDecl {
    ScalarDecl {
        name: name.into(),
        ty: ScalarType::F32,
    }
}

const ACOUSTIC_CU: &str = r#"
#define IDX(zz, yy, xx) ((((zz) - base) * n1 + (yy)) * n2 + (xx))
extern "C" __global__ void pacc_propagate_sponge_k0(long long z0, long long z1, long long own0,
    long long own1, long long base, long long n0, long long n1, long long n2, long long t,
    float* prev, float* cur, float* vel, float* damp,
    float c0, float c1, float c2, float c3, float c4, float dx2, const float* wavelet) {
    long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long z = z0 + blockIdx.z;
    if (z < z1 && z >= 4 && z < n0 - 4 && y >= 4 && y < n1 - 4 && x >= 4 && x < n2 - 4) {
        float u = cur[IDX(z, y, x)];
        float lap = 3.0f * c0 * u
            + c1 * (cur[IDX(z - 1, y, x)] + cur[IDX(z + 1, y, x)] + cur[IDX(z, y - 1, x)]
                  + cur[IDX(z, y + 1, x)] + cur[IDX(z, y, x - 1)] + cur[IDX(z, y, x + 1)])
            + c2 * (cur[IDX(z - 2, y, x)] + cur[IDX(z + 2, y, x)] + cur[IDX(z, y - 2, x)]
                  + cur[IDX(z, y + 2, x)] + cur[IDX(z, y, x - 2)] + cur[IDX(z, y, x + 2)])
            + c3 * (cur[IDX(z - 3, y, x)] + cur[IDX(z + 3, y, x)] + cur[IDX(z, y - 3, x)]
                  + cur[IDX(z, y + 3, x)] + cur[IDX(z, y, x - 3)] + cur[IDX(z, y, x + 3)])
            + c4 * (cur[IDX(z - 4, y, x)] + cur[IDX(z + 4, y, x)] + cur[IDX(z, y - 4, x)]
                  + cur[IDX(z, y + 4, x)] + cur[IDX(z, y, x - 4)] + cur[IDX(z, y, x + 4)]);
        float e = damp[IDX(z, y, x)];
        prev[IDX(z, y, x)] = (2.0f * u - (1.0f - e) * prev[IDX(z, y, x)] + vel[IDX(z, y, x)] * lap) / (1.0f + e);
    }
}
extern "C" __global__ void pacc_propagate_sponge_p0(long long base, long long n0, long long n1,
    long long n2, long long t, long long i0, long long i1, long long i2,
    float* prev, float* cur, float* vel, float* damp,
    float c0, float c1, float c2, float c3, float c4, float dx2, const float* wavelet) {
    prev[IDX(i0, i1, i2)] = prev[IDX(i0, i1, i2)] + vel[IDX(i0, i1, i2)] * dx2 * wavelet[t];
}
"#;

/// `propagate_sponge`: prev, cur, vel, damp; 25-point update of prev from cur; source point;
/// swap(prev, cur).
pub fn acoustic() -> Program {
    let center = |a: usize| ReadDecl {
        array: a,
        lo: vec![0; 3],
        hi: vec![0; 3],
    };
    Program {
        name: "propagate_sponge".into(),
        ndim: 3,
        arrays: vec![
            arr("prev", Role::InOut),
            arr("cur", Role::InOut),
            arr("vel", Role::Input),
            arr("damp", Role::Input),
        ],
        scalars: ["c0", "c1", "c2", "c3", "c4", "dx2"]
            .iter()
            .map(|n| f32s(n))
            .collect(),
        slices: vec![SliceDecl {
            name: "wavelet".into(),
            elem: Elem::F32,
            reads: Vec::new(),
        }],
        kernels: vec![KernelDecl {
            name: "pacc_propagate_sponge_k0".into(),
            ranges: vec![range(4); 3],
            reads: vec![
                center(0),
                ReadDecl {
                    array: 1,
                    lo: vec![-4; 3],
                    hi: vec![4; 3],
                },
                center(2),
                center(3),
            ],
            writes: vec![0],
            reductions: vec![],
            launch: Default::default(),
            guarded: Vec::new(),
        }],
        points: vec![PointDecl {
            name: "pacc_propagate_sponge_p0".into(),
            array: 0,
            reads: vec![0, 2],
        }],
        step: vec![Stage::Kernel(0), Stage::Point(0), Stage::Swap(0, 1)],
        halo: 4,
        cuda_source: ACOUSTIC_CU.into(),
        ..Default::default()
    }
}

const HIMENO_CU: &str = r#"
#define IDX(zz, yy, xx) ((((zz) - base) * n1 + (yy)) * n2 + (xx))
extern "C" __global__ void pacc_jacobi_k0(long long z0, long long z1, long long own0,
    long long own1, long long base, long long n0, long long n1, long long n2, long long t,
    float* p, float* a0, float* a1, float* a2, float* a3, float* b0, float* b1, float* b2,
    float* c0, float* c1, float* c2, float* bnd, float* wrk1, float* wrk2, float omega,
    double* red_0) {
    long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long i = z0 + blockIdx.z;
    float acc = 0.0f;
    if (i < z1 && i >= 1 && i < n0 - 1 && j >= 1 && j < n1 - 1 && k >= 1 && k < n2 - 1) {
        long long c = IDX(i, j, k);
        float s0 = a0[c] * p[IDX(i + 1, j, k)] + a1[c] * p[IDX(i, j + 1, k)] + a2[c] * p[IDX(i, j, k + 1)]
            + b0[c] * (p[IDX(i + 1, j + 1, k)] - p[IDX(i + 1, j - 1, k)] - p[IDX(i - 1, j + 1, k)] + p[IDX(i - 1, j - 1, k)])
            + b1[c] * (p[IDX(i, j + 1, k + 1)] - p[IDX(i, j - 1, k + 1)] - p[IDX(i, j + 1, k - 1)] + p[IDX(i, j - 1, k - 1)])
            + b2[c] * (p[IDX(i + 1, j, k + 1)] - p[IDX(i - 1, j, k + 1)] - p[IDX(i + 1, j, k - 1)] + p[IDX(i - 1, j, k - 1)])
            + c0[c] * p[IDX(i - 1, j, k)] + c1[c] * p[IDX(i, j - 1, k)] + c2[c] * p[IDX(i, j, k - 1)]
            + wrk1[c];
        float ss = (s0 * a3[c] - p[c]) * bnd[c];
        if (i >= own0 && i < own1) { acc = ss * ss; }
        wrk2[c] = p[c] + omega * ss;
    }
    __shared__ float sh[32];
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int o = 16; o > 0; o >>= 1) { acc += __shfl_down_sync(0xffffffffu, acc, o); }
    if ((tid & 31) == 0) { sh[tid >> 5] = acc; }
    __syncthreads();
    if (tid < 32) {
        int nw = (blockDim.x * blockDim.y + 31) >> 5;
        float v = tid < nw ? sh[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) { v += __shfl_down_sync(0xffffffffu, v, o); }
        if (tid == 0) { red_0[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = (double)v; }
    }
}
extern "C" __global__ void pacc_jacobi_k1(long long z0, long long z1, long long own0,
    long long own1, long long base, long long n0, long long n1, long long n2, long long t,
    float* p, float* a0, float* a1, float* a2, float* a3, float* b0, float* b1, float* b2,
    float* c0, float* c1, float* c2, float* bnd, float* wrk1, float* wrk2, float omega) {
    long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long i = z0 + blockIdx.z;
    if (i < z1 && i >= 1 && i < n0 - 1 && j >= 1 && j < n1 - 1 && k >= 1 && k < n2 - 1) {
        p[IDX(i, j, k)] = wrk2[IDX(i, j, k)];
    }
}
"#;

pub const HIMENO_ARRAYS: [&str; 14] = [
    "p", "a0", "a1", "a2", "a3", "b0", "b1", "b2", "c0", "c1", "c2", "bnd", "wrk1", "wrk2",
];

/// Himeno `jacobi`: 14 arrays; k0 computes wrk2 and the gosa sum from p (19 points); k1 copies
/// wrk2 into p; gosa reset each sweep.
pub fn himeno() -> Program {
    let center = |a: usize| ReadDecl {
        array: a,
        lo: vec![0; 3],
        hi: vec![0; 3],
    };
    let mut reads = vec![ReadDecl {
        array: 0,
        lo: vec![-1; 3],
        hi: vec![1; 3],
    }];
    reads.extend((1..13).map(center));
    Program {
        name: "jacobi".into(),
        ndim: 3,
        arrays: HIMENO_ARRAYS
            .iter()
            .enumerate()
            .map(|(i, n)| {
                arr(
                    n,
                    match i {
                        0 => Role::InOut,
                        13 => Role::Scratch,
                        _ => Role::Input,
                    },
                )
            })
            .collect(),
        scalars: vec![f32s("omega")],
        reductions: vec![ReductionDecl {
            name: "gosa".into(),
            op: ReduceOp::Sum,
            elem: Elem::F32,
        }],
        resets: vec![ResetDecl { reduction: 0 }],
        kernels: vec![
            KernelDecl {
                name: "pacc_jacobi_k0".into(),
                ranges: vec![range(1); 3],
                reads,
                writes: vec![13],
                reductions: vec![0],
                launch: Default::default(),
                guarded: Vec::new(),
            },
            KernelDecl {
                name: "pacc_jacobi_k1".into(),
                ranges: vec![range(1); 3],
                reads: vec![center(13)],
                writes: vec![0],
                reductions: vec![],
                launch: Default::default(),
                guarded: Vec::new(),
            },
        ],
        step: vec![Stage::Reset(0), Stage::Kernel(0), Stage::Kernel(1)],
        halo: 1,
        cuda_source: HIMENO_CU.into(),
        ..Default::default()
    }
}
