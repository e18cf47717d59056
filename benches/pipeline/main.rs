//! The benchmark program (issue 4): the acoustic model (25-point, 4 arrays) and the Himeno
//! benchmark (19-point, 14 arrays) in every configuration side by side, in one process:
//!
//! * `region-sharing` (pacc's default: direct mapping + sharing), `direct-map`, `staged-copy`
//!   (PACC's original scheme), each at the tuner's choice of chunks and block steps for that
//!   scheme;
//! * `in-core`: the same kernels with everything resident (a plan of 1 chunk, 1 buffer set and
//!   block steps = steps), counting the initial upload and the final download;
//! * `um` / `um-prefetch`: the arrays in managed memory, the same kernels over the whole domain
//!   every step, without / with `cuMemPrefetchAsync` (only where the arrays fit in free device
//!   memory);
//! * `cpu`: hand-written rayon loops over planes on all cores (the OpenMP baseline);
//! * a grid search of region-sharing over chunks x block steps, against the tuner's pick.
//!
//! Every GPU configuration is shown against its floor: the bytes it moves over the link divided
//! by the link rates measured at the start of the same run (both directions at once where
//! transfers overlap). Without a GPU only the CPU configuration runs, and the program says so.
//!
//! `cargo bench --bench pipeline -- --help` lists the options; the README's "Benchmarks" section
//! says how the committed results were made.

mod kernels;
mod svg;

use clap::Parser;
use pacc_runtime::exec::CpuKernels;
use pacc_runtime::invocation::{HostArray, HostSlice, Invocation, ScalarValue};
use pacc_runtime::plan::{self, PlanOptions, Scheme};
use pacc_runtime::program::{Elem, Program, Role, ScalarType};
use pacc_runtime::report::StageTimes;
use pacc_runtime::tune::{self, LinkRates, TuneInputs};
use pacc_runtime::Options;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Parser, Debug, Clone)]
#[command(about = "pacc pipeline benchmark: every configuration against the link floor")]
struct Args {
    /// acoustic, himeno or all.
    #[arg(long, default_value = "all")]
    program: String,
    /// Comma-separated sizes: presets `small`, `incore`, `ooc` (out of core, > 90 GB of arrays),
    /// or explicit `NZxNYxNX`. Default: `incore,ooc` with a GPU, `small` without.
    #[arg(long)]
    size: Option<String>,
    /// Time steps of the GPU configurations (default per program and size).
    #[arg(long)]
    steps: Option<usize>,
    /// Time steps of the CPU configuration (default: the GPU steps at in-core sizes, 1 out of core).
    #[arg(long)]
    cpu_steps: Option<usize>,
    /// Comma-separated configurations: region-sharing, direct-map, staged-copy, in-core, um,
    /// um-prefetch, cpu, grid (default: all).
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// Grid-search chunk counts (comma-separated; default per size).
    #[arg(long, value_delimiter = ',')]
    grid_chunks: Option<Vec<usize>>,
    /// Grid-search block steps (comma-separated; default per size).
    #[arg(long, value_delimiter = ',')]
    grid_steps: Option<Vec<usize>>,
    /// Where to write the JSON (default `benches/results/<date>-<device>.json`); the SVG plots go
    /// beside it (`<stem>-time.svg`, `<stem>-stages.svg`).
    #[arg(long)]
    json: Option<String>,
    /// Smaller grid and fewer steps.
    #[arg(long)]
    quick: bool,
    /// Kernels: `generated` (the translator's, from `pacc::models`) or `hand` (hand-written
    /// with the same structure).
    #[arg(long, default_value = "auto")]
    kernels: String,
    /// The `compressed` configuration: region sharing at the tuner's chunks and block steps for
    /// plain region sharing, with these arrays kept compressed on the host (default: every
    /// array the step writes) ...
    #[arg(long, value_delimiter = ',')]
    compress_arrays: Option<Vec<String>>,
    /// Run region-sharing, direct-map and compressed at these chunks and block steps (`D,K`)
    /// instead of the tuner's choice.
    #[arg(long, value_delimiter = ',')]
    at: Option<Vec<usize>>,
    /// ... at this rate (bits per value).
    #[arg(long, default_value_t = 16.0)]
    compress_rate: f64,
    /// Let NVRTC contract multiply-adds (pacc's default is off).
    #[arg(long)]
    fma: bool,
    /// Form of the generated kernels: `marching` (pacc's default) or `plain` (one thread per
    /// point), to show what the kernels do to the pipeline.
    #[arg(long, default_value = "marching")]
    kernel_form: String,
    /// Compare the final arrays of every configuration (re-initialising before each); default
    /// on for sizes under 20 GB of arrays.
    #[arg(long)]
    verify: Option<bool>,
    /// Host memory (GiB) the benchmark may use for arrays plus staging buffers.
    #[arg(long, default_value_t = 110.0)]
    max_host_gib: f64,
    /// Check the hand-written CPU configuration against the models' serial functions at the
    /// given size (default 48^3 / 40x40x72), bit for bit, and exit.
    #[arg(long)]
    check_serial: bool,
    /// Only re-render the table and plots from an earlier JSON file.
    #[arg(long)]
    from_json: Option<String>,
    /// Print the tuner's choices for every scheme from assumed rates (H100 link figures, 50
    /// Gpt/s kernels, 78 GB of device memory) without running anything.
    #[arg(long)]
    plan_only: bool,
    #[arg(long, hide = true)]
    bench: bool,
}

/// The kernel form every GPU configuration runs (`--kernel-form`), set once in `main`.
static KERNEL_FORM: std::sync::OnceLock<pacc_runtime::KernelForm> = std::sync::OnceLock::new();

fn run_options(fma: bool) -> Options {
    Options::default()
        .fma(fma)
        .kernel_form(KERNEL_FORM.get().copied().unwrap_or_default())
}

// ------------------------------------------------------------------------------------------------
// Workloads

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
enum Model {
    Acoustic,
    Himeno,
}

impl Model {
    fn name(self) -> &'static str {
        match self {
            Model::Acoustic => "acoustic",
            Model::Himeno => "himeno",
        }
    }
    fn preset(self, p: &str) -> Option<[usize; 3]> {
        Some(match (self, p) {
            (Model::Acoustic, "small") => [64, 64, 64],
            (Model::Acoustic, "incore") => [820, 820, 820],
            (Model::Acoustic, "ooc") => [1800, 1800, 1800],
            (Model::Himeno, "small") => [64, 64, 128],
            (Model::Himeno, "incore") => [512, 512, 1024],
            (Model::Himeno, "ooc") => [1200, 1200, 1200],
            _ => return None,
        })
    }
}

/// Host arrays, by physical index (program order).
struct Workload {
    model: Model,
    program: Program,
    kernels: &'static str,
    shape: [usize; 3],
    data: Vec<Vec<f32>>,
    wavelet: Vec<f32>,
    src: [usize; 3],
}

const ACOUSTIC_C: [f32; 5] = [
    -205.0 / 72.0,
    8.0 / 5.0,
    -1.0 / 5.0,
    8.0 / 315.0,
    -1.0 / 560.0,
];
const DX2: f32 = 100.0;
const OMEGA: f32 = 0.8;

/// Fills `v` in parallel by planes (first touch spread over all cores), allocating it only if
/// it does not hold `shape` yet: re-initialising keeps the same memory, so page-locking done
/// once stays valid.
fn par_fill(v: &mut Vec<f32>, shape: [usize; 3], f: impl Fn(usize, usize, usize) -> f32 + Sync) {
    let n = shape.iter().product::<usize>();
    if v.len() != n {
        *v = Vec::with_capacity(n);
        // SAFETY: every element is written below before being read.
        unsafe { v.set_len(n) };
    }
    let plane = shape[1] * shape[2];
    v.par_chunks_mut(plane).enumerate().for_each(|(z, p)| {
        for y in 0..shape[1] {
            for x in 0..shape[2] {
                p[y * shape[2] + x] = f(z, y, x);
            }
        }
    });
}

/// The translator's program for the model (`#[pacc::pipeline]` on `src/models/*.rs`).
fn generated_program(model: Model) -> Option<Program> {
    Some(match model {
        Model::Acoustic => pacc::models::acoustic::propagate_sponge::program().clone(),
        Model::Himeno => pacc::models::himeno::jacobi::program().clone(),
    })
}

impl Workload {
    fn new(model: Model, shape: [usize; 3], kernels: &str, steps: usize) -> Workload {
        let generated = if kernels == "hand" {
            None
        } else {
            generated_program(model)
        };
        let (program, kernels) = match generated {
            Some(p) => (p, "generated"),
            None => (
                match model {
                    Model::Acoustic => kernels::acoustic(),
                    Model::Himeno => kernels::himeno(),
                },
                "hand-written",
            ),
        };
        let wavelet: Vec<f32> = (0..steps.max(1) + 1)
            .map(|n| {
                let r = std::f64::consts::PI * 0.05 * (n as f64 - 20.0);
                ((1.0 - 2.0 * r * r) * (-r * r).exp()) as f32
            })
            .collect();
        let mut w = Workload {
            model,
            program,
            kernels,
            shape,
            data: Vec::new(),
            wavelet,
            src: [shape[0] / 2, shape[1] / 2, shape[2] / 2],
        };
        w.data = (0..w.program.arrays.len()).map(|_| Vec::new()).collect();
        w.init();
        w
    }

    fn phys(&self, name: &str) -> usize {
        self.program
            .array_index(name)
            .unwrap_or_else(|| panic!("program has no array `{name}`"))
    }

    /// (Re)initialises every array in parallel.
    fn init(&mut self) {
        let s = self.shape;
        let names: Vec<String> = self.program.arrays.iter().map(|a| a.name.clone()).collect();
        for (i, name) in names.iter().enumerate() {
            let v = &mut self.data[i];
            match (self.model, name.as_str()) {
                (Model::Acoustic, "prev") | (Model::Acoustic, "cur") => {
                    let off = if name == "cur" { 1 } else { 0 };
                    par_fill(v, s, move |z, y, x| {
                        ((z * 7 + y * 3 + x * 11 + off) % 17) as f32 * 1e-3
                    })
                }
                (Model::Acoustic, "vel") => par_fill(v, s, move |z, _, _| {
                    0.05 + 0.1 * (z * 4 / s[0]) as f32 / 4.0
                }),
                (Model::Acoustic, "damp") => {
                    let width = 16usize;
                    par_fill(v, s, move |z, y, x| {
                        let d =
                            |i: usize, n: usize| i.saturating_sub(4).min((n - 5).saturating_sub(i));
                        let d = d(z, s[0]).min(d(y, s[1])).min(d(x, s[2]));
                        if d >= width {
                            0.0
                        } else {
                            let q = (width - d) as f32 / width as f32;
                            0.2 * q * q
                        }
                    })
                }
                (Model::Himeno, "p") => {
                    let denom = ((s[0] - 1) * (s[0] - 1)) as f32;
                    par_fill(v, s, move |i, _, _| (i * i) as f32 / denom)
                }
                (Model::Himeno, n) => {
                    let c = match n {
                        "a0" | "a1" | "a2" | "c0" | "c1" | "c2" | "bnd" => 1.0,
                        "a3" => (1.0f64 / 6.0) as f32,
                        _ => 0.0,
                    };
                    par_fill(v, s, move |_, _, _| c)
                }
                (m, n) => panic!("{m:?} has no array {n}"),
            }
        }
    }

    fn array_bytes(&self) -> u64 {
        self.data.iter().map(|v| v.len() as u64 * 4).sum()
    }

    fn host_arrays(&mut self) -> Vec<HostArray> {
        let shape = self.shape;
        self.program
            .arrays
            .iter()
            .zip(self.data.iter_mut())
            .map(|(d, v)| HostArray {
                ptr: v.as_mut_ptr() as *mut u8,
                elem: Elem::F32,
                shape,
                ndim: 3,
                writable: d.role != Role::Input,
            })
            .collect()
    }

    fn scalar(&self, name: &str, ty: ScalarType) -> ScalarValue {
        let v: f64 = match name {
            "c0" => ACOUSTIC_C[0] as f64,
            "c1" => ACOUSTIC_C[1] as f64,
            "c2" => ACOUSTIC_C[2] as f64,
            "c3" => ACOUSTIC_C[3] as f64,
            "c4" => ACOUSTIC_C[4] as f64,
            "dx2" => DX2 as f64,
            "sz" => self.src[0] as f64,
            "sy" => self.src[1] as f64,
            "sx" => self.src[2] as f64,
            "omega" => OMEGA as f64,
            "nz" | "ni" => self.shape[0] as f64,
            "ny" | "nj" => self.shape[1] as f64,
            "nx" | "nk" => self.shape[2] as f64,
            other => panic!("the benchmark does not know the scalar `{other}`"),
        };
        match ty {
            ScalarType::F32 => ScalarValue::F32(v as f32),
            ScalarType::F64 => ScalarValue::F64(v),
            ScalarType::I32 => ScalarValue::I32(v as i32),
            ScalarType::I64 => ScalarValue::I64(v as i64),
            ScalarType::U32 => ScalarValue::U32(v as u32),
            ScalarType::U64 => ScalarValue::U64(v as u64),
            ScalarType::Usize => ScalarValue::Usize(v as usize),
            ScalarType::Isize => ScalarValue::Isize(v as isize),
            ScalarType::Bool => ScalarValue::Bool(v != 0.0),
        }
    }

    /// The call as a generated wrapper would make it (CPU closures are placeholders: the CPU
    /// configuration is hand-written below).
    fn invocation(&mut self, steps: usize) -> Invocation<'static> {
        let arrays = self.host_arrays();
        let p = &self.program;
        let scalars = p
            .scalars
            .iter()
            .map(|s| self.scalar(&s.name, s.ty))
            .collect();
        let slices = p
            .slices
            .iter()
            .map(|_| HostSlice {
                ptr: self.wavelet.as_ptr() as *const u8,
                elem: Elem::F32,
                len: self.wavelet.len(),
            })
            .collect();
        let points = p
            .points
            .iter()
            .map(|_| self.src.iter().map(|&i| i as i64).collect())
            .collect();
        Invocation {
            arrays,
            scalars,
            slices,
            points,
            t0: 0,
            steps,
            reduction_init: vec![0.0; p.reductions.len()],
            reset_values: vec![0.0; p.resets.len()],
            cpu: CpuKernels {
                kernels: p
                    .kernels
                    .iter()
                    .map(|_| {
                        Box::new(
                            |_: &pacc_runtime::exec::KernelFrame<'_>, _: usize, _: &mut [f64]| {
                                unreachable!("the benchmark never runs pacc's CPU backend")
                            },
                        ) as Box<pacc_runtime::exec::CpuKernelFn<'static>>
                    })
                    .collect(),
                points: p
                    .points
                    .iter()
                    .map(|_| {
                        Box::new(|_: &pacc_runtime::exec::KernelFrame<'_>| {
                            unreachable!("the benchmark never runs pacc's CPU backend")
                        }) as Box<pacc_runtime::exec::CpuPointFn<'static>>
                    })
                    .collect(),
            },
        }
    }

    /// Sum and sum of squares over the arrays the caller gets back (InOut), in f64.
    fn checksum(&self) -> f64 {
        self.program
            .arrays
            .iter()
            .zip(&self.data)
            .filter(|(d, _)| d.role == Role::InOut)
            .map(|(_, v)| {
                v.par_chunks(1 << 20)
                    .map(|c| {
                        c.iter()
                            .map(|&x| x as f64 + (x as f64) * (x as f64))
                            .sum::<f64>()
                    })
                    .sum::<f64>()
            })
            .sum()
    }

    /// Bytes of the arrays whose results the caller needs (InOut).
    fn output_bytes(&self) -> u64 {
        self.program
            .arrays
            .iter()
            .zip(&self.data)
            .filter(|(d, _)| d.role == Role::InOut)
            .map(|(_, v)| v.len() as u64 * 4)
            .sum()
    }

    // ---- The CPU configuration: hand-written rayon loops over planes. ----

    fn cpu_steps(&mut self, steps: usize) {
        match self.model {
            Model::Acoustic => self.cpu_acoustic(steps),
            Model::Himeno => {
                for _ in 0..steps {
                    self.cpu_himeno_sweep();
                }
            }
        }
    }

    fn cpu_acoustic(&mut self, steps: usize) {
        let [nz, ny, nx] = self.shape;
        let plane = ny * nx;
        let (ip, ic, iv, id) = (
            self.phys("prev"),
            self.phys("cur"),
            self.phys("vel"),
            self.phys("damp"),
        );
        let mut bind = [ip, ic];
        let c = ACOUSTIC_C;
        for t in 0..steps {
            let (wp, rc) = (bind[0], bind[1]);
            let cur_ptr = self.data[rc].as_ptr() as usize;
            let vel: &[f32] = &self.data[iv];
            let damp: &[f32] = &self.data[id];
            let vel_ptr = vel.as_ptr() as usize;
            let damp_ptr = damp.as_ptr() as usize;
            let total = nz * plane;
            let prev = &mut self.data[wp];
            prev.par_chunks_mut(plane).enumerate().for_each(|(z, pp)| {
                if z < 4 || z >= nz - 4 {
                    return;
                }
                // SAFETY: cur, vel and damp are other arrays than prev, read only here.
                let cur = unsafe { std::slice::from_raw_parts(cur_ptr as *const f32, total) };
                let vel = unsafe { std::slice::from_raw_parts(vel_ptr as *const f32, total) };
                let damp = unsafe { std::slice::from_raw_parts(damp_ptr as *const f32, total) };
                for y in 4..ny - 4 {
                    let row = z * plane + y * nx;
                    for x in 4..nx - 4 {
                        let i = row + x;
                        let u = cur[i];
                        let mut lap = 3.0 * c[0] * u;
                        for (m, cm) in c.iter().enumerate().skip(1) {
                            let dz = m * plane;
                            let dy = m * nx;
                            lap += cm
                                * (cur[i - dz]
                                    + cur[i + dz]
                                    + cur[i - dy]
                                    + cur[i + dy]
                                    + cur[i - m]
                                    + cur[i + m]);
                        }
                        let e = damp[i];
                        let o = i - z * plane;
                        pp[o] = (2.0 * u - (1.0 - e) * pp[o] + vel[i] * lap) / (1.0 + e);
                    }
                }
            });
            let [sz, sy, sx] = self.src;
            let si = (sz * ny + sy) * nx + sx;
            let add = self.data[iv][si] * DX2 * self.wavelet[t.min(self.wavelet.len() - 1)];
            self.data[wp][si] += add;
            bind.swap(0, 1);
        }
    }

    fn cpu_himeno_sweep(&mut self) -> f32 {
        let [ni, nj, nk] = self.shape;
        let plane = nj * nk;
        let total = ni * plane;
        let ptr = |s: &Self, n: &str| s.data[s.phys(n)].as_ptr() as usize;
        let names = kernels::HIMENO_ARRAYS;
        let ptrs: Vec<usize> = names[..13].iter().map(|n| ptr(self, n)).collect();
        let iw = self.phys("wrk2");
        let omega = OMEGA;
        let gosa: f32 = self.data[iw]
            .par_chunks_mut(plane)
            .enumerate()
            .map(|(i, w2)| {
                if i < 1 || i >= ni - 1 {
                    return 0.0f32;
                }
                // SAFETY: the 13 arrays read here are distinct from wrk2, the one written.
                let g =
                    |a: usize| unsafe { std::slice::from_raw_parts(ptrs[a] as *const f32, total) };
                let (p, a0, a1, a2, a3) = (g(0), g(1), g(2), g(3), g(4));
                let (b0, b1, b2, c0, c1, c2) = (g(5), g(6), g(7), g(8), g(9), g(10));
                let (bnd, wrk1) = (g(11), g(12));
                let mut gosa = 0.0f32;
                for j in 1..nj - 1 {
                    for k in 1..nk - 1 {
                        let c = (i * nj + j) * nk + k;
                        let (di, dj) = (plane, nk);
                        let s0 = a0[c] * p[c + di]
                            + a1[c] * p[c + dj]
                            + a2[c] * p[c + 1]
                            + b0[c]
                                * (p[c + di + dj] - p[c + di - dj] - p[c - di + dj]
                                    + p[c - di - dj])
                            + b1[c]
                                * (p[c + dj + 1] - p[c - dj + 1] - p[c + dj - 1] + p[c - dj - 1])
                            + b2[c]
                                * (p[c + di + 1] - p[c - di + 1] - p[c + di - 1] + p[c - di - 1])
                            + c0[c] * p[c - di]
                            + c1[c] * p[c - dj]
                            + c2[c] * p[c - 1]
                            + wrk1[c];
                        let ss = (s0 * a3[c] - p[c]) * bnd[c];
                        gosa += ss * ss;
                        w2[c - i * plane] = p[c] + omega * ss;
                    }
                }
                gosa
            })
            .sum();
        let w2p = self.data[iw].as_ptr() as usize;
        let ip = self.phys("p");
        self.data[ip]
            .par_chunks_mut(plane)
            .enumerate()
            .for_each(|(i, pp)| {
                if i < 1 || i >= ni - 1 {
                    return;
                }
                // SAFETY: wrk2 is another array than p.
                let w2 = unsafe { std::slice::from_raw_parts(w2p as *const f32, total) };
                for j in 1..nj - 1 {
                    let o = j * nk;
                    pp[o + 1..o + nk - 1]
                        .copy_from_slice(&w2[i * plane + o + 1..i * plane + o + nk - 1]);
                }
            });
        gosa
    }
}

// ------------------------------------------------------------------------------------------------
// Results

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct Stages {
    htod: f64,
    dtoh: f64,
    dtod: f64,
    kernel: f64,
    host_copy: f64,
    #[serde(default)]
    encode: f64,
    #[serde(default)]
    decode: f64,
}

impl From<&StageTimes> for Stages {
    fn from(s: &StageTimes) -> Self {
        Stages {
            htod: s.htod,
            dtoh: s.dtoh,
            dtod: s.dtod,
            kernel: s.kernel,
            encode: s.encode,
            decode: s.decode,
            host_copy: s.host_copy,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct Measurement {
    config: String,
    chunks: usize,
    block_steps: usize,
    steps: usize,
    /// Measured seconds of the run (GPU: first op to last op, from events; excludes planning,
    /// allocation and page-locking, reported separately).
    seconds: f64,
    per_step: f64,
    bytes_htod: u64,
    bytes_dtoh: u64,
    bytes_dtod: u64,
    /// Bytes over the link per second of the run.
    link_gbps: f64,
    /// Bytes over the link / measured link rates (s).
    floor_seconds: f64,
    /// floor / time.
    efficiency: f64,
    /// Busy time per stage, summed over streams (they overlap).
    stages: Stages,
    /// Tuner's prediction for this configuration (s), if any.
    predicted_seconds: Option<f64>,
    /// The model's link time (bytes / measured rates) and kernel time (points computed /
    /// slab-measured rate) of the plan that ran, in seconds for the whole run.
    #[serde(default)]
    model_link_seconds: f64,
    #[serde(default)]
    model_kernel_seconds: f64,
    /// Kernel points computed / points the serial loop computes (redundant halo work).
    #[serde(default)]
    redundancy: f64,
    device_bytes: u64,
    setup_seconds: f64,
    checksum: Option<f64>,
    notes: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct GridPoint {
    chunks: usize,
    block_steps: usize,
    per_step: f64,
    predicted_per_step: f64,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct TunerResult {
    chunks: usize,
    block_steps: usize,
    predicted_per_step: f64,
    measured_per_step: f64,
    grid_best_chunks: usize,
    grid_best_steps: usize,
    grid_best_per_step: f64,
    /// measured(tuned) / measured(grid best).
    ratio_to_best: f64,
    within_10_percent: bool,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct Target {
    what: String,
    want: String,
    got: String,
    met: bool,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct RunResult {
    program: String,
    kernels: String,
    size: String,
    shape: Vec<usize>,
    arrays: usize,
    array_bytes: u64,
    steps: usize,
    init_seconds: f64,
    register_seconds: Option<f64>,
    kernel_rates: Vec<f64>,
    #[serde(default)]
    host_copy_gbps: f64,
    configs: Vec<Measurement>,
    grid: Vec<GridPoint>,
    tuner: Option<TunerResult>,
    /// speedup[a][b] = time per step of b / time per step of a.
    speedups: BTreeMap<String, BTreeMap<String, f64>>,
    targets: Vec<Target>,
    skipped: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct Link {
    htod_gbps: f64,
    dtoh_gbps: f64,
    both_gbps: f64,
    buffer_bytes: usize,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct Output {
    device: String,
    date: String,
    command: String,
    host_threads: usize,
    gpu: bool,
    note: String,
    link: Option<Link>,
    runs: Vec<RunResult>,
}

fn link_of(l: &Link) -> LinkRates {
    LinkRates {
        htod: l.htod_gbps * 1e9,
        dtoh: l.dtoh_gbps * 1e9,
        both: l.both_gbps * 1e9,
        bytes: l.buffer_bytes,
    }
}

fn finish(m: &mut Measurement, link: Option<&LinkRates>) {
    m.per_step = m.seconds / m.steps.max(1) as f64;
    let bytes = (m.bytes_htod + m.bytes_dtoh) as f64;
    if m.seconds > 0.0 {
        m.link_gbps = bytes / m.seconds / 1e9;
    }
    if let Some(l) = link {
        if bytes > 0.0 {
            m.floor_seconds = l.seconds(m.bytes_htod, m.bytes_dtoh);
            m.efficiency = m.floor_seconds / m.seconds;
        }
    }
}

// ------------------------------------------------------------------------------------------------
// GPU configurations

#[cfg(feature = "cuda")]
mod gpu {
    use super::*;
    use pacc_runtime::exec::cuda;

    pub fn available() -> Result<String, String> {
        cuda::available().map(|d| d.name)
    }

    pub fn link() -> Result<LinkRates, String> {
        tune::measure_link(256 << 20, 5).map_err(|e| e.to_string())
    }

    pub struct Lock(#[allow(dead_code)] cuda::HostLock);

    pub fn lock(w: &mut Workload) -> Result<(Lock, f64), String> {
        let arrays = w.host_arrays();
        let l = cuda::lock_host(&arrays).map_err(|e| e.to_string())?;
        let s = l.seconds;
        Ok((Lock(l), s))
    }

    pub fn budget() -> Result<u64, String> {
        cuda::device_memory_budget().map_err(|e| e.to_string())
    }

    pub fn kernel_rates(w: &mut Workload, fma: bool) -> Result<Vec<f64>, String> {
        let inv = w.invocation(2);
        tune::measure_kernel_rates(&w.program, &inv, &run_options(fma)).map_err(|e| e.to_string())
    }

    /// One pacc run of `plan_opts`; the measurement of what ran.
    pub fn run_plan(
        w: &mut Workload,
        name: &str,
        po: &PlanOptions,
        steps: usize,
        fma: bool,
        link: &LinkRates,
        inputs: Option<&TuneInputs>,
    ) -> Result<Measurement, String> {
        let points: Vec<usize> = w.program.points.iter().map(|_| w.src[0]).collect();
        let plan =
            plan::build(&w.program, &w.shape, steps, &points, po).map_err(|e| e.to_string())?;
        let inv = w.invocation(steps);
        let out =
            cuda::execute(&w.program, &plan, &inv, &run_options(fma)).map_err(|e| e.to_string())?;
        let pred = inputs.map(|i| tune::predict(&w.program, &out.plan, &i.rates));
        let useful = tune::useful_points(&w.program, &w.shape, steps);
        let r = &out.report;
        let span = r
            .timeline
            .iter()
            .map(|e| e.start_us + e.dur_us)
            .fold(0.0f64, f64::max)
            * 1e-6;
        let mut m = Measurement {
            config: name.into(),
            chunks: out.plan.chunks,
            block_steps: out.plan.block_steps,
            steps,
            seconds: if span > 0.0 {
                span
            } else {
                r.wall_seconds - r.stages.setup - r.stages.register
            },
            bytes_htod: r.bytes_htod,
            bytes_dtoh: r.bytes_dtoh,
            bytes_dtod: r.bytes_dtod,
            stages: (&r.stages).into(),
            device_bytes: r.device_bytes,
            setup_seconds: r.stages.setup + r.stages.register,
            notes: r.adjustments.clone(),
            ..Default::default()
        };
        if let Some(p) = pred {
            m.model_link_seconds = p.link_seconds;
            m.model_kernel_seconds = p.kernel_seconds;
            m.redundancy = p.kernel_points as f64 / useful.max(1) as f64;
        }
        finish(&mut m, Some(link));
        Ok(m)
    }

    pub fn managed_fits(bytes: u64) -> Result<(), String> {
        cuda::managed_fits(bytes)
    }

    pub fn run_um(
        w: &mut Workload,
        prefetch: bool,
        steps: usize,
        fma: bool,
        link: &LinkRates,
    ) -> Result<Measurement, String> {
        let inv = w.invocation(steps);
        let o = cuda::run_managed(&w.program, &inv, &run_options(fma), prefetch)
            .map_err(|e| e.to_string())?;
        let mut m = Measurement {
            config: if prefetch { "um-prefetch" } else { "um" }.into(),
            chunks: 1,
            block_steps: steps,
            steps,
            seconds: o.seconds,
            bytes_htod: o.managed_bytes,
            bytes_dtoh: w.output_bytes(),
            stages: Stages {
                htod: o.prefetch_in_seconds,
                dtoh: o.back_seconds,
                kernel: o.kernel_seconds,
                ..Default::default()
            },
            device_bytes: o.managed_bytes,
            setup_seconds: o.setup_seconds,
            notes: vec![if prefetch {
                "bytes: every array prefetched in, outputs prefetched back; htod/dtoh = prefetch times".into()
            } else {
                "bytes: pages migrate on demand (every array in, outputs back, as counted); kernel time includes page faults; dtoh = host touching the outputs".into()
            }],
            ..Default::default()
        };
        finish(&mut m, Some(link));
        Ok(m)
    }
}

#[cfg(not(feature = "cuda"))]
mod gpu {
    use super::*;
    pub fn available() -> Result<String, String> {
        Err("built without the `cuda` feature".into())
    }
    pub fn link() -> Result<LinkRates, String> {
        Err("no GPU".into())
    }
    pub struct Lock;
    pub fn lock(_: &mut Workload) -> Result<(Lock, f64), String> {
        Err("no GPU".into())
    }
    pub fn budget() -> Result<u64, String> {
        Err("no GPU".into())
    }
    pub fn kernel_rates(_: &mut Workload, _: bool) -> Result<Vec<f64>, String> {
        Err("no GPU".into())
    }
    pub fn run_plan(
        _: &mut Workload,
        _: &str,
        _: &PlanOptions,
        _: usize,
        _: bool,
        _: &LinkRates,
        _: Option<&TuneInputs>,
    ) -> Result<Measurement, String> {
        Err("no GPU".into())
    }
    pub fn managed_fits(_: u64) -> Result<(), String> {
        Err("no GPU".into())
    }
    pub fn run_um(
        _: &mut Workload,
        _: bool,
        _: usize,
        _: bool,
        _: &LinkRates,
    ) -> Result<Measurement, String> {
        Err("no GPU".into())
    }
}

// ------------------------------------------------------------------------------------------------
// Driver

fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                })
        })
        .map(|kb| kb * 1024)
        .unwrap_or(u64::MAX)
}

fn gb(b: u64) -> f64 {
    b as f64 / 1e9
}

/// The tuner's choice, or `--at D,K` (then without a prediction).
fn fixed(mut c: tune::TuneChoice, at: Option<&[usize]>) -> tune::TuneChoice {
    if let Some(&[d, k]) = at {
        c.chunks = d;
        c.block_steps = k;
        c.predicted_seconds = f64::NAN;
    }
    c
}

/// Per physical array: the rate of the `compressed` configuration (`names`, or every array the
/// caller gets back).
fn compressed_arrays(program: &Program, names: Option<&[String]>, rate: f64) -> Vec<Option<f64>> {
    program
        .arrays
        .iter()
        .map(|a| {
            let on = match names {
                Some(n) => n.iter().any(|x| x == &a.name),
                // Every array the caller gets back (swapped arrays are written too).
                None => a.role == Role::InOut,
            };
            on.then_some(rate)
        })
        .collect()
}

fn has(args: &Args, c: &str) -> bool {
    args.configs
        .as_ref()
        .is_none_or(|v| v.iter().any(|x| x == c || x == "all"))
}

fn default_steps(model: Model, size: &str, quick: bool) -> usize {
    let s = match (model, size) {
        (Model::Acoustic, "ooc") => 16,
        (Model::Himeno, "ooc") => 32,
        (Model::Acoustic, _) => 16,
        (Model::Himeno, _) => 32,
    };
    if quick {
        s / 2
    } else {
        s
    }
}

fn grid_defaults(model: Model, size: &str, quick: bool) -> (Vec<usize>, Vec<usize>) {
    match (size, quick) {
        ("ooc", false) => match model {
            Model::Acoustic => (vec![4, 8, 16], vec![4, 8, 16]),
            Model::Himeno => (vec![8, 16, 32], vec![8, 16, 32]),
        },
        ("ooc", true) => match model {
            Model::Acoustic => (vec![8, 16], vec![4, 8]),
            Model::Himeno => (vec![8, 16], vec![8, 16]),
        },
        (_, false) => (vec![2, 4, 8, 16], vec![2, 4, 8, 16]),
        (_, true) => (vec![4, 8], vec![4, 8]),
    }
}

#[allow(clippy::too_many_arguments)]
fn bench_one(
    args: &Args,
    model: Model,
    size: &str,
    shape: [usize; 3],
    link: Option<&LinkRates>,
    out: &mut Output,
) {
    let steps = args
        .steps
        .unwrap_or_else(|| default_steps(model, size, args.quick));
    let nbytes_est = shape.iter().product::<usize>() as u64
        * 4
        * match model {
            Model::Acoustic => 4,
            Model::Himeno => 14,
        };
    let mut res = RunResult {
        program: model.name().into(),
        size: size.into(),
        shape: shape.to_vec(),
        steps,
        ..Default::default()
    };
    let host_limit = (args.max_host_gib * (1u64 << 30) as f64) as u64;
    let avail = mem_available();
    if nbytes_est + (2 << 30) > host_limit.min(avail) {
        let why = format!(
            "{} {size} {:?}: {:.1} GB of arrays do not fit the host memory allowed ({:.1} GB, {:.1} GB available); skipped",
            model.name(),
            shape,
            gb(nbytes_est),
            gb(host_limit),
            gb(avail)
        );
        println!("{why}");
        res.skipped.push(why);
        out.runs.push(res);
        return;
    }
    let verify = args.verify.unwrap_or(nbytes_est < 20_000_000_000);
    let t = Instant::now();
    let mut w = Workload::new(model, shape, &args.kernels, steps);
    res.init_seconds = t.elapsed().as_secs_f64();
    res.kernels = format!("{}, {} form", w.kernels, args.kernel_form);
    res.arrays = w.program.arrays.len();
    res.array_bytes = w.array_bytes();
    println!(
        "\n=== {} ({} kernels), {size} {:?}: {} arrays, {:.2} GB; {} steps; initialised in {:.1} s{}",
        model.name(),
        w.kernels,
        shape,
        res.arrays,
        gb(res.array_bytes),
        steps,
        res.init_seconds,
        if verify { "; verifying results" } else { "" }
    );
    {
        // The call must satisfy the program (types, counts) before any configuration runs.
        let inv = w.invocation(steps);
        if let Err(e) = pacc_runtime::run::validate(&w.program, &inv) {
            println!("the benchmark's call does not match the program: {e}");
            res.skipped.push(format!("invalid call: {e}"));
            out.runs.push(res);
            return;
        }
    }
    let reinit = |w: &mut Workload| {
        if verify {
            w.init();
        }
    };
    let fma = args.fma;
    let mut configs: Vec<Measurement> = Vec::new();

    if let Some(link) = link {
        let lock = match gpu::lock(&mut w) {
            Ok((l, s)) => {
                res.register_seconds = Some(s);
                println!("page-locked the arrays in {s:.2} s (once, kept for every run)");
                Some(l)
            }
            Err(e) => {
                res.skipped.push(format!(
                    "page-locking failed ({e}); runs register themselves"
                ));
                None
            }
        };
        let rates = match gpu::kernel_rates(&mut w, fma) {
            Ok(r) => r,
            Err(e) => {
                println!("kernel rate measurement failed: {e}");
                res.skipped.push(format!("kernel rates: {e}"));
                out.runs.push(res);
                return;
            }
        };
        res.kernel_rates = rates.clone();
        println!(
            "kernel rates (slab): {}",
            rates
                .iter()
                .map(|r| format!("{:.1} Gpt/s", r / 1e9))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let budget = gpu::budget().unwrap_or(0);
        let mut inputs = TuneInputs::new(*link, rates, budget);
        inputs.rates.host_copy_rate = tune::measure_host_copy_rate(1 << 30);
        res.host_copy_gbps = inputs.rates.host_copy_rate / 1e9;
        println!(
            "host memcpy (parallel, 4 MiB pieces): {:.1} GB/s",
            res.host_copy_gbps
        );
        inputs.point_planes = w.program.points.iter().map(|_| w.src[0]).collect();
        let prog = w.program.clone();
        let wshape = w.shape;
        let tuned = |scheme: Scheme, host: Option<u64>| {
            let mut i = inputs.clone();
            i.scheme = scheme;
            i.host_memory = host;
            tune::choose(&prog, &wshape, steps, &i)
        };
        let predict_for = |scheme: Scheme, d: usize, k: usize| -> Option<f64> {
            let mut i = inputs.clone();
            i.scheme = scheme;
            i.chunks = Some(d);
            i.block_steps = Some(k);
            tune::choose(&prog, &wshape, steps, &i)
                .ok()
                .map(|c| c.predicted_seconds)
        };
        // Pinned staging for staged-copy: what the host has left beside the arrays.
        let staging_budget = avail
            .saturating_sub(res.array_bytes)
            .saturating_sub(12 << 30)
            .min(16 << 30);

        // One configuration at the tuner's choice for `scheme` (or `--at`), compressing per
        // `compress` (empty: nothing). Compression is invisible to the tuner, so a compressed
        // run uses the choice for the uncompressed scheme and has no prediction.
        let run_scheme = |w: &mut Workload,
                          name: &str,
                          scheme: Scheme,
                          compress: Vec<Option<f64>>,
                          configs: &mut Vec<Measurement>| {
            let host = (scheme == Scheme::StagedCopy).then_some(staging_budget);
            let predicted = compress.iter().all(Option::is_none);
            match tuned(scheme, host).map(|c| fixed(c, args.at.as_deref())) {
                Ok(c) => {
                    reinit(w);
                    let po = PlanOptions {
                        chunks: c.chunks,
                        block_steps: c.block_steps,
                        scheme,
                        buffer_sets: 3,
                        compress,
                    };
                    let inputs = predicted.then_some(&inputs);
                    match gpu::run_plan(w, name, &po, steps, fma, link, inputs) {
                        Ok(mut m) => {
                            if predicted {
                                m.predicted_seconds = Some(c.predicted_seconds);
                            }
                            if verify {
                                m.checksum = Some(w.checksum());
                            }
                            println!("{}", line(&m));
                            configs.push(m);
                        }
                        Err(e) => println!("{name}: failed: {e}"),
                    }
                }
                Err(e) => println!("{name}: the tuner found nothing: {e}"),
            }
        };
        if has(args, "region-sharing") {
            let rs = Scheme::RegionSharing;
            run_scheme(&mut w, "region-sharing", rs, Vec::new(), &mut configs);
        }
        if has(args, "direct-map") {
            run_scheme(
                &mut w,
                "direct-map",
                Scheme::DirectMap,
                Vec::new(),
                &mut configs,
            );
        }
        if has(args, "compressed") {
            let rate = args.compress_rate;
            let compress = compressed_arrays(&w.program, args.compress_arrays.as_deref(), rate);
            let name = format!("compressed-{rate}");
            run_scheme(&mut w, &name, Scheme::RegionSharing, compress, &mut configs);
        }
        if has(args, "staged-copy") {
            run_scheme(
                &mut w,
                "staged-copy",
                Scheme::StagedCopy,
                Vec::new(),
                &mut configs,
            );
        }
        if has(args, "in-core") {
            let po = PlanOptions {
                chunks: 1,
                block_steps: steps,
                scheme: Scheme::RegionSharing,
                buffer_sets: 1,
                compress: Vec::new(),
            };
            let need = res.array_bytes + (256 << 20);
            if need > budget {
                let why = format!(
                    "in-core: {:.1} GB of arrays do not fit in {:.1} GB of free device memory (out of core)",
                    gb(res.array_bytes),
                    gb(budget)
                );
                println!("{why}");
                res.skipped.push(why);
            } else {
                reinit(&mut w);
                match gpu::run_plan(&mut w, "in-core", &po, steps, fma, link, Some(&inputs)) {
                    Ok(mut m) => {
                        m.predicted_seconds = predict_for_incore(&w, steps, &inputs);
                        m.notes.push("1 chunk, 1 buffer set, block steps = steps: upload, all steps resident, download".into());
                        if verify {
                            m.checksum = Some(w.checksum());
                        }
                        println!("{}", line(&m));
                        configs.push(m);
                    }
                    Err(e) => println!("in-core: failed: {e}"),
                }
            }
        }
        for (name, prefetch) in [("um", false), ("um-prefetch", true)] {
            if !has(args, name) {
                continue;
            }
            match gpu::managed_fits(res.array_bytes) {
                Err(why) => {
                    let why = format!("{name}: skipped: {why}");
                    println!("{why}");
                    res.skipped.push(why);
                }
                Ok(()) => {
                    reinit(&mut w);
                    match gpu::run_um(&mut w, prefetch, steps, fma, link) {
                        Ok(mut m) => {
                            if verify {
                                m.checksum = Some(w.checksum());
                            }
                            println!("{}", line(&m));
                            configs.push(m);
                        }
                        Err(e) => println!("{name}: failed: {e}"),
                    }
                }
            }
        }
        if has(args, "grid") {
            let (dc, kc) = grid_defaults(model, size, args.quick);
            let dl = args.grid_chunks.clone().unwrap_or(dc);
            let kl = args.grid_steps.clone().unwrap_or(kc);
            println!(
                "grid search, region-sharing, {steps} steps: chunks {dl:?} x block steps {kl:?}"
            );
            for &k in &kl {
                if k > steps {
                    continue;
                }
                for &d in &dl {
                    let po = PlanOptions {
                        chunks: d,
                        block_steps: k,
                        scheme: Scheme::RegionSharing,
                        buffer_sets: 3,
                        compress: Vec::new(),
                    };
                    let pred = predict_for(Scheme::RegionSharing, d, k);
                    let Some(pred) = pred else {
                        println!("  d={d:<3} k={k:<3} does not fit / cannot be planned; skipped");
                        continue;
                    };
                    match gpu::run_plan(&mut w, "grid", &po, steps, fma, link, None) {
                        Ok(m) => {
                            if m.chunks != d {
                                println!(
                                    "  d={d:<3} k={k:<3} re-planned to {} chunks; skipped",
                                    m.chunks
                                );
                                continue;
                            }
                            println!(
                                "  d={d:<3} k={k:<3} {:>9.5} s/step (predicted {:.5})",
                                m.per_step,
                                pred / steps as f64
                            );
                            res.grid.push(GridPoint {
                                chunks: d,
                                block_steps: k,
                                per_step: m.per_step,
                                predicted_per_step: pred / steps as f64,
                            });
                        }
                        Err(e) => println!("  d={d:<3} k={k:<3} failed: {e}"),
                    }
                }
            }
            if let (Some(best), Some(rs)) = (
                res.grid
                    .iter()
                    .min_by(|a, b| a.per_step.total_cmp(&b.per_step))
                    .cloned(),
                configs.iter().find(|m| m.config == "region-sharing"),
            ) {
                let ratio = rs.per_step / best.per_step;
                res.tuner = Some(TunerResult {
                    chunks: rs.chunks,
                    block_steps: rs.block_steps,
                    predicted_per_step: rs.predicted_seconds.unwrap_or(f64::NAN) / steps as f64,
                    measured_per_step: rs.per_step,
                    grid_best_chunks: best.chunks,
                    grid_best_steps: best.block_steps,
                    grid_best_per_step: best.per_step,
                    ratio_to_best: ratio,
                    within_10_percent: ratio <= 1.10,
                });
            }
        }
        drop(lock);
    } else if has(args, "region-sharing") {
        res.skipped
            .push("GPU configurations: no CUDA device; only the CPU configuration ran".into());
    }

    if has(args, "cpu") {
        let cpu_steps = args
            .cpu_steps
            .unwrap_or(if size == "ooc" { 1 } else { steps });
        let cpu_steps = if verify { steps } else { cpu_steps };
        reinit(&mut w);
        let t = Instant::now();
        w.cpu_steps(cpu_steps);
        let mut m = Measurement {
            config: "cpu".into(),
            chunks: 1,
            block_steps: cpu_steps,
            steps: cpu_steps,
            seconds: t.elapsed().as_secs_f64(),
            notes: vec![format!(
                "hand-written rayon loops over planes, {} threads",
                rayon::current_num_threads()
            )],
            ..Default::default()
        };
        if verify {
            m.checksum = Some(w.checksum());
        }
        finish(&mut m, None);
        println!("{}", line(&m));
        configs.push(m);
    }
    // Verification: every configuration's checksum against the first one's.
    if verify && configs.len() > 1 {
        let r = configs[0].checksum.unwrap_or(0.0);
        for m in &mut configs {
            if let Some(c) = m.checksum {
                let rel = (c - r).abs() / r.abs().max(1e-30);
                let ok = rel < 1e-4;
                m.notes.push(format!(
                    "checksum {c:.9e} vs {} {r:.9e}: rel. diff {rel:.1e} {}",
                    configs_first_name(),
                    if ok { "(agree)" } else { "(DISAGREE)" }
                ));
                if !ok {
                    println!(
                        "WARNING: {} disagrees with the first configuration: rel {rel:.2e}",
                        m.config
                    );
                }
            }
        }
    }
    res.configs = configs;
    analyse(&mut res);
    out.runs.push(res);
}

fn check_serial(args: &Args) {
    use ndarray::Array3;
    let steps = args.steps.unwrap_or(6);
    let mut all_ok = true;
    for m in [Model::Acoustic, Model::Himeno] {
        let shape = match m {
            Model::Acoustic => [48, 40, 44],
            Model::Himeno => [40, 40, 72],
        };
        let mut w = Workload::new(m, shape, "generated", steps);
        let arr = |w: &Workload, n: &str| {
            Array3::from_shape_vec((shape[0], shape[1], shape[2]), w.data[w.phys(n)].clone())
                .unwrap()
        };
        let mut serial: Vec<Vec<f32>> = Vec::new();
        match m {
            Model::Acoustic => {
                let (mut prev, mut cur) = (arr(&w, "prev"), arr(&w, "cur"));
                let (vel, damp) = (arr(&w, "vel"), arr(&w, "damp"));
                pacc::models::acoustic::propagate_sponge::serial(
                    &mut prev, &mut cur, &vel, &damp, &w.wavelet, w.src[0], w.src[1], w.src[2],
                    DX2, steps,
                );
                // After `steps` swaps the names refer to the other buffer when steps is odd.
                if steps % 2 == 1 {
                    std::mem::swap(&mut prev, &mut cur);
                }
                serial.push(prev.into_raw_vec_and_offset().0);
                serial.push(cur.into_raw_vec_and_offset().0);
            }
            Model::Himeno => {
                let a: Vec<Array3<f32>> =
                    kernels::HIMENO_ARRAYS.iter().map(|n| arr(&w, n)).collect();
                let mut p = a[0].clone();
                let mut wrk2 = a[13].clone();
                pacc::models::himeno::jacobi::serial(
                    &mut p, &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9], &a[10],
                    &a[11], &a[12], &mut wrk2, OMEGA, steps,
                );
                serial.push(p.into_raw_vec_and_offset().0);
            }
        }
        w.cpu_steps(steps);
        let mine: Vec<&Vec<f32>> = match m {
            Model::Acoustic => vec![&w.data[w.phys("prev")], &w.data[w.phys("cur")]],
            Model::Himeno => vec![&w.data[w.phys("p")]],
        };
        let same = serial.iter().zip(&mine).all(|(a, b)| {
            a.iter()
                .zip(b.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits())
        });
        all_ok &= same;
        println!(
            "{} {:?}, {steps} steps: hand-written CPU loops {} the serial function bit for bit",
            m.name(),
            shape,
            if same { "equal" } else { "DIFFER FROM" }
        );
    }
    if !all_ok {
        std::process::exit(1);
    }
}

fn plan_only(args: &Args) {
    let link = LinkRates {
        htod: 54e9,
        dtoh: 54e9,
        both: 80e9,
        bytes: 0,
    };
    for size in args.size.as_deref().unwrap_or("incore,ooc").split(',') {
        for m in [Model::Acoustic, Model::Himeno] {
            let shape = m.preset(size).expect("preset size");
            let prog = if args.kernels == "hand" {
                match m {
                    Model::Acoustic => kernels::acoustic(),
                    Model::Himeno => kernels::himeno(),
                }
            } else {
                generated_program(m).expect("generated program")
            };
            let steps = args
                .steps
                .unwrap_or_else(|| default_steps(m, size, args.quick));
            for scheme in Scheme::ALL {
                let mut i = TuneInputs::new(link, vec![50e9], 78_000_000_000);
                i.scheme = scheme;
                i.point_planes = prog.points.iter().map(|_| shape[0] / 2).collect();
                if scheme == Scheme::StagedCopy {
                    i.host_memory = Some(24 << 30);
                }
                let t = Instant::now();
                match tune::choose(&prog, &shape, steps, &i) {
                    Ok(c) => println!(
                        "{} {size} {scheme}: {} ({} candidates, {:.2} s to tune); bytes in {:.1} GB out {:.1} GB per block",
                        m.name(),
                        c.summary(),
                        c.candidates.len(),
                        t.elapsed().as_secs_f64(),
                        gb(c.block.bytes_htod),
                        gb(c.block.bytes_dtoh)
                    ),
                    Err(e) => println!("{} {size} {scheme}: {e}", m.name()),
                }
            }
        }
    }
}

fn configs_first_name() -> &'static str {
    "the first configuration's"
}

fn predict_for_incore(w: &Workload, steps: usize, inputs: &TuneInputs) -> Option<f64> {
    let mut i = inputs.clone();
    i.chunks = Some(1);
    i.block_steps = Some(steps);
    i.buffer_sets = 1;
    i.device_memory = u64::MAX;
    tune::choose(&w.program, &w.shape, steps, &i)
        .ok()
        .map(|c| c.predicted_seconds)
}

fn line(m: &Measurement) -> String {
    format!(
        "  {:<15} d={:<3} k={:<3} {:>3} steps {:>10.5} s/step  link {:>6.1} GB/s  floor {:>9.5} s/step  eff {:>5.2}{}",
        m.config,
        m.chunks,
        m.block_steps,
        m.steps,
        m.per_step,
        m.link_gbps,
        m.floor_seconds / m.steps.max(1) as f64,
        m.efficiency,
        m.predicted_seconds
            .map(|p| format!("  predicted {:.5} s/step", p / m.steps.max(1) as f64))
            .unwrap_or_default()
    )
}

/// Speedups and the targets.
fn analyse(res: &mut RunResult) {
    let per: BTreeMap<String, f64> = res
        .configs
        .iter()
        .map(|m| (m.config.clone(), m.per_step))
        .collect();
    res.speedups = per
        .iter()
        .map(|(a, ta)| {
            (
                a.clone(),
                per.iter()
                    .map(|(b, tb)| (b.clone(), tb / ta))
                    .collect::<BTreeMap<_, _>>(),
            )
        })
        .collect();
    let Some(rs) = res.configs.iter().find(|m| m.config == "region-sharing") else {
        return;
    };
    let mut t = Vec::new();
    let sp = |b: &str| per.get(b).map(|tb| tb / rs.per_step);
    if res.size == "ooc" || !res.configs.iter().any(|m| m.config == "in-core") {
        let ratio = rs.seconds / rs.floor_seconds;
        t.push(Target {
            what: "region-sharing time / floor".into(),
            want: "<= 1.25".into(),
            got: format!("{ratio:.2}"),
            met: ratio <= 1.25,
        });
        for (b, want) in [("direct-map", 1.3), ("staged-copy", 3.0), ("cpu", 20.0)] {
            if let Some(s) = sp(b) {
                t.push(Target {
                    what: format!("speedup over {b}"),
                    want: format!(">= {want}"),
                    got: format!("{s:.2}"),
                    met: s >= want,
                });
            }
        }
    } else {
        if let Some(s) = sp("in-core") {
            t.push(Target {
                what: "speedup over in-core CUDA (upload + download counted)".into(),
                want: ">= 1.0".into(),
                got: format!("{s:.2}"),
                met: s >= 1.0,
            });
        }
        if let Some(s) = sp("um-prefetch") {
            t.push(Target {
                what: "speedup over unified memory with prefetch".into(),
                want: "> 1.0".into(),
                got: format!("{s:.2}"),
                met: s > 1.0,
            });
        }
    }
    if let Some(tu) = &res.tuner {
        t.push(Target {
            what: "tuned / grid best".into(),
            want: "<= 1.10".into(),
            got: format!("{:.3}", tu.ratio_to_best),
            met: tu.within_10_percent,
        });
    }
    res.targets = t;
}

// ------------------------------------------------------------------------------------------------
// Table and plots

fn print_tables(out: &Output) {
    println!("\n# pacc pipeline benchmark: {} ({})", out.device, out.date);
    println!("command: {}", out.command);
    if let Some(l) = &out.link {
        println!(
            "link (pinned, {} MiB buffers): HtoD {:.1} GB/s, DtoH {:.1} GB/s, both at once {:.1} GB/s",
            l.buffer_bytes >> 20,
            l.htod_gbps,
            l.dtoh_gbps,
            l.both_gbps
        );
    }
    if !out.note.is_empty() {
        println!("note: {}", out.note);
    }
    for r in &out.runs {
        println!(
            "\n## {} {} {:?} ({} kernels): {} arrays, {:.1} GB, {} steps",
            r.program,
            r.size,
            r.shape,
            r.kernels,
            r.arrays,
            gb(r.array_bytes),
            r.steps
        );
        for s in &r.skipped {
            println!("  skipped: {s}");
        }
        if r.configs.is_empty() {
            continue;
        }
        println!(
            "| config | d | k | steps | s/step | GB in | GB out | GB d2d | link GB/s | floor s/step | eff | htod | dtoh | dtod | kernel | host copy | predicted s/step | model link | model kernel | redundancy |"
        );
        println!(
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for m in &r.configs {
            let st = m.steps.max(1) as f64;
            println!(
                "| {} | {} | {} | {} | {:.5} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {} | {} | {} | {} |",
                m.config,
                m.chunks,
                m.block_steps,
                m.steps,
                m.per_step,
                gb(m.bytes_htod),
                gb(m.bytes_dtoh),
                gb(m.bytes_dtod),
                m.link_gbps,
                if m.floor_seconds > 0.0 { format!("{:.5}", m.floor_seconds / st) } else { "-".into() },
                if m.floor_seconds > 0.0 { format!("{:.2}", m.efficiency) } else { "-".into() },
                m.stages.htod / st,
                m.stages.dtoh / st,
                m.stages.dtod / st,
                m.stages.kernel / st,
                m.stages.host_copy / st,
                m.predicted_seconds.map(|p| format!("{:.5}", p / st)).unwrap_or("-".into()),
                if m.model_link_seconds > 0.0 { format!("{:.4}", m.model_link_seconds / st) } else { "-".into() },
                if m.model_kernel_seconds > 0.0 { format!("{:.4}", m.model_kernel_seconds / st) } else { "-".into() },
                if m.redundancy > 0.0 { format!("{:.2}", m.redundancy) } else { "-".into() }
            );
        }
        println!("(stage columns: busy seconds per step summed over streams; they overlap. model link/kernel: the tuner's model of the plan that ran, s/step; redundancy: kernel points computed / points of the serial loop)");
        let names: Vec<&String> = r.speedups.keys().collect();
        if names.len() > 1 {
            println!("\nspeedup of row over column (column s/step / row s/step):");
            print!("| |");
            for n in &names {
                print!(" {n} |");
            }
            println!();
            print!("|---|");
            for _ in &names {
                print!("---|");
            }
            println!();
            for a in &names {
                print!("| {a} |");
                for b in &names {
                    print!(" {:.2} |", r.speedups[*a][*b]);
                }
                println!();
            }
        }
        if let Some(t) = &r.tuner {
            println!(
                "\ntuner: d={} k={} predicted {:.5} s/step, measured {:.5} s/step; grid best d={} k={} {:.5} s/step; ratio {:.3} ({})",
                t.chunks,
                t.block_steps,
                t.predicted_per_step,
                t.measured_per_step,
                t.grid_best_chunks,
                t.grid_best_steps,
                t.grid_best_per_step,
                t.ratio_to_best,
                if t.within_10_percent { "within 10%" } else { "NOT within 10%" }
            );
        }
        for t in &r.targets {
            println!(
                "target: {} {} -> {} [{}]",
                t.what,
                t.want,
                t.got,
                if t.met { "met" } else { "MISSED" }
            );
        }
        for m in &r.configs {
            for n in &m.notes {
                println!("  {}: {n}", m.config);
            }
        }
    }
}

fn color(config: &str) -> &'static str {
    match config {
        "region-sharing" => "#1f77b4",
        "direct-map" => "#6baed6",
        "staged-copy" => "#9ecae1",
        "in-core" => "#2ca02c",
        "um" => "#ff7f0e",
        "um-prefetch" => "#ffbb78",
        "cpu" => "#7f7f7f",
        _ => "#bcbd22",
    }
}

fn write_svgs(out: &Output, stem: &std::path::Path) -> std::io::Result<Vec<String>> {
    let mut groups = Vec::new();
    for r in &out.runs {
        if r.configs.is_empty() {
            continue;
        }
        let title = format!(
            "{} {} {}x{}x{} ({:.0} GB, {} steps)",
            r.program,
            r.size,
            r.shape[0],
            r.shape[1],
            r.shape[2],
            gb(r.array_bytes),
            r.steps
        );
        let mut bars: Vec<svg::Bar> = r
            .configs
            .iter()
            .map(|m| svg::Bar {
                label: format!("{} (d={}, k={})", m.config, m.chunks, m.block_steps),
                value: m.per_step,
                color: color(&m.config),
                text: Some(format!(
                    "{} s{}",
                    svg::fmt_num(m.per_step),
                    if m.floor_seconds > 0.0 {
                        format!(", eff {:.2}", m.efficiency)
                    } else {
                        String::new()
                    }
                )),
            })
            .collect();
        if let Some(rs) = r.configs.iter().find(|m| m.config == "region-sharing") {
            if rs.floor_seconds > 0.0 {
                bars.push(svg::Bar {
                    label: "floor of region-sharing".into(),
                    value: rs.floor_seconds / rs.steps.max(1) as f64,
                    color: "#d62728",
                    text: None,
                });
            }
        }
        groups.push(svg::Group { title, bars });
    }
    let title = format!("Seconds per time step: {} ({})", out.device, out.date);
    let time = svg::hbars(
        &title,
        "seconds per time step (log scale)",
        &groups,
        true,
        &[],
    );
    // Stage breakdown.
    let stage_colors = [
        ("htod", "#1f77b4"),
        ("dtoh", "#ff7f0e"),
        ("dtod", "#9467bd"),
        ("kernel", "#2ca02c"),
        ("host copy", "#8c564b"),
        ("measured", "#222222"),
        ("floor", "#d62728"),
    ];
    let mut sgroups = Vec::new();
    for r in &out.runs {
        for m in &r.configs {
            if m.config == "cpu" {
                continue;
            }
            let st = m.steps.max(1) as f64;
            let s = &m.stages;
            let mut bars = vec![];
            for (name, v) in [
                ("htod", s.htod),
                ("dtoh", s.dtoh),
                ("dtod", s.dtod),
                ("kernel", s.kernel),
                ("host copy", s.host_copy),
            ] {
                if v > 0.0 {
                    bars.push(svg::Bar {
                        label: name.into(),
                        value: v / st,
                        color: stage_colors.iter().find(|c| c.0 == name).unwrap().1,
                        text: None,
                    });
                }
            }
            bars.push(svg::Bar {
                label: "measured".into(),
                value: m.per_step,
                color: "#222222",
                text: None,
            });
            if m.floor_seconds > 0.0 {
                bars.push(svg::Bar {
                    label: "floor".into(),
                    value: m.floor_seconds / st,
                    color: "#d62728",
                    text: None,
                });
            }
            sgroups.push(svg::Group {
                title: format!(
                    "{} {}: {} (d={}, k={})",
                    r.program, r.size, m.config, m.chunks, m.block_steps
                ),
                bars,
            });
        }
    }
    let stages = svg::hbars(
        &format!(
            "Stage breakdown per time step (busy time summed over streams; stages overlap): {}",
            out.device
        ),
        "seconds per time step (log scale)",
        &sgroups,
        true,
        &stage_colors,
    );
    let mut written = Vec::new();
    let stem_s = stem.to_string_lossy().to_string();
    for (suffix, body) in [("-time.svg", time), ("-stages.svg", stages)] {
        let p = format!("{stem_s}{suffix}");
        std::fs::write(&p, body)?;
        written.push(p);
    }
    Ok(written)
}

fn json_path_of(args: &Args, date: &str, out: &Output) -> String {
    args.json
        .clone()
        .unwrap_or_else(|| format!("benches/results/{}-{}.json", date, slug(&out.device)))
}

fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}

fn today() -> (String, String) {
    // UTC date and time without a date crate: days since the epoch -> civil date.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86400) as i64;
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    let t = secs % 86400;
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            t / 3600,
            t / 60 % 60,
            t % 60
        ),
    )
}

fn main() {
    let args = Args::parse();
    if args
        .at
        .as_ref()
        .is_some_and(|v| v.len() != 2 || v.contains(&0))
    {
        eprintln!("error: --at takes CHUNKS,BLOCK_STEPS (two positive numbers)");
        std::process::exit(2);
    }
    match args.kernel_form.parse() {
        Ok(f) => {
            let _ = KERNEL_FORM.set(f);
        }
        Err(e) => {
            eprintln!("error: --kernel-form: {e}");
            std::process::exit(2);
        }
    }
    if let Some(list) = &args.from_json {
        // One file, or several merged (runs concatenated; the first file's header, the others'
        // commands appended).
        let mut out: Option<Output> = None;
        for p in list.split(',') {
            let o: Output = serde_json::from_str(&std::fs::read_to_string(p).expect("read JSON"))
                .expect("parse JSON");
            match &mut out {
                None => out = Some(o),
                Some(x) => {
                    x.command = format!("{} ; {}", x.command, o.command);
                    x.runs.extend(o.runs);
                }
            }
        }
        let out = out.expect("at least one JSON file");
        print_tables(&out);
        let p = args
            .json
            .clone()
            .unwrap_or_else(|| list.split(',').next().unwrap().to_string());
        if args.json.is_some() {
            std::fs::write(&p, serde_json::to_string_pretty(&out).unwrap()).expect("write JSON");
            println!("\nwrote {p}");
        }
        let stem = p.trim_end_matches(".json");
        match write_svgs(&out, std::path::Path::new(stem)) {
            Ok(w) => println!("\nwrote {}", w.join(", ")),
            Err(e) => println!("could not write the plots: {e}"),
        }
        return;
    }
    if args.check_serial {
        check_serial(&args);
        return;
    }
    if args.plan_only {
        plan_only(&args);
        return;
    }
    let (date, stamp) = today();
    let gpu = gpu::available();
    let mut out = Output {
        device: match &gpu {
            Ok(n) => n.clone(),
            Err(_) => format!("CPU only ({} threads)", rayon::current_num_threads()),
        },
        date: stamp,
        command: std::env::args()
            .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
            .collect::<Vec<_>>()
            .join(" "),
        host_threads: rayon::current_num_threads(),
        gpu: gpu.is_ok(),
        ..Default::default()
    };
    let link = match &gpu {
        Ok(name) => {
            println!("GPU: {name}");
            match gpu::link() {
                Ok(l) => {
                    println!(
                        "link: HtoD {:.1} GB/s, DtoH {:.1} GB/s, both at once {:.1} GB/s",
                        l.htod / 1e9,
                        l.dtoh / 1e9,
                        l.both / 1e9
                    );
                    out.link = Some(Link {
                        htod_gbps: l.htod / 1e9,
                        dtoh_gbps: l.dtoh / 1e9,
                        both_gbps: l.both / 1e9,
                        buffer_bytes: l.bytes,
                    });
                    Some(l)
                }
                Err(e) => {
                    println!("measuring the link failed ({e}); GPU configurations skipped");
                    out.note = format!("link measurement failed: {e}");
                    None
                }
            }
        }
        Err(reason) => {
            out.note = format!("no CUDA device ({reason}): only the CPU configuration ran");
            println!("{}", out.note);
            None
        }
    };
    let sizes = args.size.clone().unwrap_or_else(|| {
        if link.is_some() {
            "incore,ooc".into()
        } else {
            "small".into()
        }
    });
    let models: Vec<Model> = match args.program.as_str() {
        "acoustic" => vec![Model::Acoustic],
        "himeno" => vec![Model::Himeno],
        "all" => vec![Model::Acoustic, Model::Himeno],
        p => {
            eprintln!("unknown program `{p}`: acoustic, himeno or all");
            std::process::exit(2);
        }
    };
    for size in sizes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        for &m in &models {
            let shape = match m.preset(size) {
                Some(s) => s,
                None => {
                    let v: Vec<usize> = size.split('x').filter_map(|x| x.parse().ok()).collect();
                    if v.len() != 3 {
                        eprintln!("unknown size `{size}`: small, incore, ooc or NZxNYxNX");
                        std::process::exit(2);
                    }
                    [v[0], v[1], v[2]]
                }
            };
            bench_one(&args, m, size, shape, link.as_ref(), &mut out);
            // Keep what is done so far on disk (a run cut short still leaves its results).
            let p = json_path_of(&args, &date, &out);
            if let Some(dir) = std::path::Path::new(&p).parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(&p, serde_json::to_string_pretty(&out).unwrap());
        }
    }
    if let Some(l) = &out.link {
        // Floors are recomputed from the JSON's link figures when re-rendering.
        let _ = link_of(l);
    }
    print_tables(&out);
    let json_path = json_path_of(&args, &date, &out);
    if let Some(dir) = std::path::Path::new(&json_path).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(&json_path, serde_json::to_string_pretty(&out).unwrap()) {
        Ok(()) => println!("\nwrote {json_path}"),
        Err(e) => println!("could not write {json_path}: {e}"),
    }
    let stem = json_path.trim_end_matches(".json").to_string();
    match write_svgs(&out, std::path::Path::new(&stem)) {
        Ok(w) => println!("wrote {}", w.join(", ")),
        Err(e) => println!("could not write the plots: {e}"),
    }
}
