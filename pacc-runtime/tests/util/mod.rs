//! Helpers for the checkpoint, fault and concurrency tests: temporary directories and the three
//! hand-written programs of `common` behind one interface.
#![allow(dead_code)]

use crate::common::*;
use ndarray::{Array2, Array3};
use pacc_runtime::exec::CpuKernels;
use pacc_runtime::program::Program;
use pacc_runtime::{run, Error, Invocation, Options, RunOutput};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A fresh directory under the system's temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pacc-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 3D f64, reach r, swap every step, sum + max reductions.
    Stencil(usize),
    /// 2D f32, two kernels, reset + sum and min reductions.
    TwoKernel,
    /// 3D f64 with a point source, a read-only input and a slice; swap every step.
    Source,
}

/// The arrays of a call, physical order (argument positions).
#[derive(Clone, Debug, PartialEq)]
pub enum Arrays {
    F64(Array3<f64>, Array3<f64>),
    F32(Array2<f32>, Array2<f32>),
}

impl Arrays {
    /// Bit patterns of every array, argument order.
    pub fn bits(&self) -> Vec<Vec<u64>> {
        match self {
            Arrays::F64(a, b) => vec![bits3(a), bits3(b)],
            Arrays::F32(a, b) => vec![
                bits2(a).into_iter().map(u64::from).collect(),
                bits2(b).into_iter().map(u64::from).collect(),
            ],
        }
    }
}

/// One test problem: a program, its initial data, and how to call it.
pub struct Case {
    pub kind: Kind,
    pub shape: Vec<usize>,
    pub seed: u64,
    pub vel: Array3<f64>,
    pub wavelet: Vec<f64>,
    pub src: [usize; 3],
}

pub const T0_SOURCE: i64 = 2;

impl Case {
    pub fn new(kind: Kind, shape: &[usize], seed: u64) -> Case {
        let s3 = |s: &[usize]| [s[0], s[1], s.get(2).copied().unwrap_or(1)];
        Case {
            kind,
            shape: shape.to_vec(),
            seed,
            vel: random3(s3(shape), seed ^ 4),
            wavelet: (0..400).map(|i| (i as f64 * 0.7).sin()).collect(),
            src: [shape[0] / 2, 1, 1],
        }
    }

    pub fn program(&self) -> Program {
        let mut p = match self.kind {
            Kind::Stencil(r) => stencil_program(r),
            Kind::TwoKernel => two_kernel_program(),
            Kind::Source => source_program(),
        };
        p.cuda_source = match self.kind {
            Kind::Stencil(r) => format!("#define R {r}\n{STENCIL_CU}"),
            Kind::Source => SOURCE_CU.into(),
            Kind::TwoKernel => String::new(),
        };
        p
    }

    pub fn initial(&self) -> Arrays {
        let s = &self.shape;
        match self.kind {
            Kind::Stencil(_) | Kind::Source => Arrays::F64(
                random3([s[0], s[1], s[2]], self.seed),
                random3([s[0], s[1], s[2]], self.seed ^ 1),
            ),
            Kind::TwoKernel => Arrays::F32(
                random2_f32([s[0], s[1]], self.seed),
                random2_f32([s[0], s[1]], self.seed ^ 2),
            ),
        }
    }

    /// Calls `run` on `arrays` (updated in place, physical order: no swap replay).
    pub fn run(
        &self,
        arrays: &mut Arrays,
        steps: usize,
        opts: &Options,
    ) -> Result<RunOutput, Error> {
        self.run_slow(arrays, steps, opts, None)
    }

    /// As [`Case::run`], with a kernel that sleeps `slow` per plane.
    pub fn run_slow(
        &self,
        arrays: &mut Arrays,
        steps: usize,
        opts: &Options,
        slow: Option<Duration>,
    ) -> Result<RunOutput, Error> {
        let prog = self.program();
        let mut inv: Invocation<'_> = match (self.kind, arrays) {
            (Kind::Stencil(r), Arrays::F64(a, b)) => stencil_invocation(a, b, r, 0.3, -1, steps),
            (Kind::TwoKernel, Arrays::F32(u, w)) => {
                two_kernel_invocation(u, w, 0.1, 0, steps, (3.0, 0.5), 1.0)
            }
            (Kind::Source, Arrays::F64(c, n)) => source_invocation(
                c,
                n,
                &self.vel,
                self.src,
                0.75,
                &self.wavelet,
                T0_SOURCE,
                steps,
            ),
            _ => unreachable!(),
        };
        if let Some(d) = slow {
            let (mut kernels, points) = inv.cpu.into_parts();
            let k = kernels.remove(0);
            kernels.insert(
                0,
                Box::new(move |f, z, red| {
                    std::thread::sleep(d);
                    k(f, z, red)
                }),
            );
            // SAFETY: the first kernel sleeps, then does what it did; the others are unchanged,
            // and they met the contract for this program.
            inv.cpu = unsafe { CpuKernels::new(kernels, points) };
        }
        run(&prog, inv, opts)
    }

    /// The serial reference after `steps` steps, physical order (the reference swaps its
    /// variables, so they are swapped back `steps` times).
    pub fn reference(&self, steps: usize) -> (Arrays, Vec<f64>) {
        let mut arrays = self.initial();
        let red = match (self.kind, &mut arrays) {
            (Kind::Stencil(r), Arrays::F64(a, b)) => {
                let (e, p) = stencil_reference(a, b, r, 0.3, -1, steps, STENCIL_INIT);
                replay(a, b, steps);
                vec![e, p]
            }
            (Kind::TwoKernel, Arrays::F32(u, w)) => {
                let (c, l) = two_kernel_reference(u, w, 0.1, 0, steps, (3.0, 0.5), 1.0);
                vec![c as f64, l as f64]
            }
            (Kind::Source, Arrays::F64(c, n)) => {
                source_reference(
                    c,
                    n,
                    &self.vel,
                    self.src,
                    0.75,
                    &self.wavelet,
                    T0_SOURCE,
                    steps,
                );
                replay(c, n, steps);
                vec![]
            }
            _ => unreachable!(),
        };
        (arrays, red)
    }
}

/// Bit patterns of reductions.
pub fn red_bits(r: &[f64]) -> Vec<u64> {
    r.iter().map(|v| v.to_bits()).collect()
}

/// Whether the tests run on CUDA (`PACC_TEST_BACKEND=cuda`; the two-kernel program has no CUDA
/// source and is left out there).
pub fn on_cuda() -> bool {
    test_backend() == pacc_runtime::BackendChoice::Cuda
}

/// CUDA C of `stencil_program(R)` (contract §3), the same expression order as `stencil_point`.
const STENCIL_CU: &str = r#"
#define A(zz, yy, xx) a_0[(((zz) - base) * n1 + (yy)) * n2 + (xx)]
extern "C" __global__ void pacc_stencil3d_k0(long long z0, long long z1, long long own0,
    long long own1, long long base, long long n0, long long n1, long long n2, long long t,
    double* a_0, double* a_1, double s_0, double* red_0, double* red_1) {
    long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long z = z0 + blockIdx.z;
    double e = 0.0, m = __longlong_as_double(0xfff0000000000000ULL);
    if (z < z1 && z >= R && z < n0 - R && y >= R && y < n1 - R && x >= R && x < n2 - R) {
        double v = s_0 * A(z, y, x);
        for (int d = 1; d <= R; d++) {
            double w = 1.0 / ((double)d + 1.5);
            v += w * (A(z - d, y, x) + A(z + d, y, x));
            v += (0.5 * w) * (A(z, y - d, x) - A(z, y + d, x));
            v += (0.25 * w) * (A(z, y, x - d) + A(z, y, x + d));
        }
        v = v * 0.5 + 1e-3 * (double)t;
        a_1[((z - base) * n1 + y) * n2 + x] = v;
        if (z >= own0 && z < own1) { e = v * v; m = v; }
    }
    __shared__ double se[1024];
    __shared__ double sm[1024];
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int nt = blockDim.x * blockDim.y;
    se[tid] = e; sm[tid] = m;
    __syncthreads();
    for (int w = 1; w < nt; w *= 2) {
        if (tid % (2 * w) == 0 && tid + w < nt) {
            se[tid] += se[tid + w];
            sm[tid] = fmax(sm[tid], sm[tid + w]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        long long b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        red_0[b] = se[0];
        red_1[b] = sm[0];
    }
}
"#;

/// CUDA C of `source_program()`, the same expression order as `wave_point`.
const SOURCE_CU: &str = r#"
#define I3(zz, yy, xx) ((((zz) - base) * n1 + (yy)) * n2 + (xx))
extern "C" __global__ void pacc_source3d_k0(long long z0, long long z1, long long own0,
    long long own1, long long base, long long n0, long long n1, long long n2, long long t,
    double* a_0, double* a_1, double* a_2, unsigned long long s_0, double s_1,
    const double* sl_0) {
    long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    long long z = z0 + blockIdx.z;
    if (z < z1 && z >= 1 && z < n0 - 1 && y >= 1 && y < n1 - 1 && x >= 1 && x < n2 - 1) {
        double c = a_0[I3(z, y, x)];
        double lap = a_0[I3(z - 1, y, x)] + a_0[I3(z + 1, y, x)] + a_0[I3(z, y - 1, x)]
            + a_0[I3(z, y + 1, x)] + a_0[I3(z, y, x - 1)] + a_0[I3(z, y, x + 1)] - 6.0 * c;
        double v = a_2[I3(z, y, x)];
        a_1[I3(z, y, x)] = 2.0 * c - a_1[I3(z, y, x)] + v * v * 0.05 * lap;
    }
}
extern "C" __global__ void pacc_source3d_p0(long long base, long long n0, long long n1,
    long long n2, long long t, long long i0, long long i1, long long i2,
    double* a_0, double* a_1, double* a_2, unsigned long long s_0, double s_1,
    const double* sl_0) {
    a_1[I3(i0, i1, i2)] = a_1[I3(i0, i1, i2)] + sl_0[t] * s_1;
}
"#;

/// The backend the tests run on: the CPU backend, or CUDA when `PACC_TEST_BACKEND=cuda` (for
/// running `tests/checkpoint.rs` on the GPU machine).
pub fn test_backend() -> pacc_runtime::BackendChoice {
    match std::env::var("PACC_TEST_BACKEND").as_deref() {
        Ok("cuda") => pacc_runtime::BackendChoice::Cuda,
        _ => pacc_runtime::BackendChoice::Cpu,
    }
}

/// Options for the test backend (see [`test_backend`]) with the given geometry.
pub fn cpu(chunks: usize, block_steps: usize) -> Options {
    Options::new()
        .backend(test_backend())
        .chunks(chunks)
        .block_steps(block_steps)
}
