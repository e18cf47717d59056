//! Helpers for the checkpoint, fault and concurrency tests: temporary directories and the three
//! hand-written programs of `common` behind one interface.
#![allow(dead_code)]

use crate::common::*;
use ndarray::{Array2, Array3};
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
        match self.kind {
            Kind::Stencil(r) => stencil_program(r),
            Kind::TwoKernel => two_kernel_program(),
            Kind::Source => source_program(),
        }
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
            let k = inv.cpu.kernels.remove(0);
            inv.cpu.kernels.insert(
                0,
                Box::new(move |f, z, red| {
                    std::thread::sleep(d);
                    k(f, z, red)
                }),
            );
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
