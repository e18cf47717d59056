//! The GPU side of the benchmark: pacc's CUDA executor for one plan, unified memory, page-locking
//! and the device's figures. Built without the `cuda` feature every function says "no GPU", and
//! only the CPU configuration runs.

use pacc_runtime::{MarchTuning, Options};
use std::sync::{Mutex, OnceLock};

/// The kernel form every GPU configuration runs (`--kernel-form`), set once in `main`.
pub static KERNEL_FORM: OnceLock<pacc_runtime::KernelForm> = OnceLock::new();
/// Whether device rows are padded (`--pad-rows`), set once in `main`.
pub static PAD_ROWS: OnceLock<bool> = OnceLock::new();
/// Steps per kernel launch every GPU configuration runs (`--fuse`; 1: the single-step kernels),
/// set once in `main`.
pub static FUSE: OnceLock<usize> = OnceLock::new();

/// The codec grid of the next compressed run (`--codec-grids`; `None`: pacc's default), set by
/// the configuration that runs it.
pub static CODEC_GRID: Mutex<Option<pacc_runtime::cosched::CoSchedule>> = Mutex::new(None);

/// The marching kernels' compile-time shape of the current program, chosen once per program
/// (`choose_march`) so that every configuration runs the same kernels.
static MARCH: Mutex<Option<MarchTuning>> = Mutex::new(None);

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn run_options(fma: bool) -> Options {
    let mut o = Options::default()
        .fma(fma)
        .kernel_form(KERNEL_FORM.get().copied().unwrap_or_default())
        .row_padding(PAD_ROWS.get().copied().unwrap_or(true));
    if let Some(g) = *CODEC_GRID.lock().unwrap_or_else(|e| e.into_inner()) {
        o.cuda.codec_grid = g;
    }
    match *MARCH.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(t) => o.march(t),
        None => o,
    }
}

/// [`run_options`] as a run of `program` settles them.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn settled(program: &pacc_runtime::Program, fma: bool) -> pacc_runtime::settled::Settled {
    pacc_runtime::config::settle(program, &run_options(fma))
}

#[cfg(feature = "cuda")]
mod imp {
    use super::settled;
    use crate::programs::Workload;
    use crate::results::{finish, Measurement, Stages};
    use pacc_runtime::exec::cuda;
    use pacc_runtime::plan::{self, PlanOptions};
    use pacc_runtime::tune::{self, LinkRates, TuneInputs};

    pub fn available() -> Result<String, String> {
        cuda::available().map(|d| d.name).map_err(String::from)
    }

    pub fn link() -> Result<LinkRates, String> {
        cuda::measure_link(256 << 20, 5).map_err(|e| e.to_string())
    }

    pub struct Lock(#[allow(dead_code)] cuda::HostLock<'static>);

    pub fn lock(w: &mut Workload) -> Result<(Lock, f64), String> {
        let arrays = w.host_arrays();
        // SAFETY: the workload allocates its arrays once and only writes them in place (`init`,
        // the runs); the bench drops the lock (with its `Gpu`) before the workload.
        let l = unsafe { cuda::lock_host_unchecked(&arrays) }.map_err(|e| e.to_string())?;
        let s = l.seconds;
        Ok((Lock(l), s))
    }

    pub fn budget() -> Result<u64, String> {
        cuda::device_memory_budget().map_err(|e| e.to_string())
    }

    /// What `run` does before planning on long calls (`tune::pick_march`), here at every
    /// size, kept for every configuration of this program; the tuner's note.
    pub fn choose_march(w: &mut Workload, steps: usize, fma: bool) -> Option<String> {
        *super::MARCH.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let program = w.program.clone();
        let inv = w.invocation(steps);
        let (t, note) = tune::pick_march(&cuda::CudaProbe, &program, &inv, &settled(&program, fma));
        *super::MARCH.lock().unwrap_or_else(|e| e.into_inner()) = t;
        note
    }

    pub fn kernel_rates(w: &mut Workload, fma: bool) -> Result<Vec<f64>, String> {
        let program = w.program.clone();
        let inv = w.invocation(2);
        cuda::measure_kernel_rates(&program, &inv, &settled(&program, fma))
            .map_err(|e| e.to_string())
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
        // A fused run: its program, steps counted in groups (`pacc_runtime::fuse`).
        let s = super::FUSE.get().copied().unwrap_or(1).max(1);
        let (program, po) = if s > 1 {
            let p = pacc_runtime::fuse::program(&w.program, s).map_err(|e| e.to_string())?;
            let o = PlanOptions {
                block_steps: po.block_steps.div_ceil(s),
                ..po.clone()
            };
            (p, o)
        } else {
            (w.program.clone(), po.clone())
        };
        if steps % s != 0 {
            return Err(format!(
                "--fuse {s} needs a multiple of {s} steps, not {steps}"
            ));
        }
        let plan =
            plan::build(&program, &w.shape, steps / s, &points, &po).map_err(|e| e.to_string())?;
        // SAFETY: the invocation goes whole to the one execution below and is dropped after.
        let inv = unsafe { pacc_runtime::fuse::invocation(&program, w.invocation(steps), s) };
        let out = cuda::execute(&program, &plan, &inv, &settled(&program, fma))
            .map_err(|e| e.to_string())?;
        drop(inv);
        let pred = inputs
            .filter(|_| s == 1)
            .map(|i| tune::predict(&w.program, &out.plan, &i.rates));
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
            scheme: out.plan.scheme.to_string(),
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
        m.notes
            .extend(r.kernels.iter().map(|k| format!("kernel {k}")));
        if s > 1 {
            m.notes.push(format!(
                "fused {s}: block steps in groups of {s}; chunks and depth fit the fused run's \
                 buffers but were weighed at the single step's kernel rates (the bench does not \
                 time the fused kernels; `run` does, in tune::auto_fuse)"
            ));
        }
        finish(&mut m, Some(link));
        Ok(m)
    }

    pub fn managed_fits(bytes: u64) -> Result<(), String> {
        cuda::managed_fits(bytes).map_err(|e| e.to_string())
    }

    /// What the tuner decides for the compression of `po` (`PACC_COMPRESS_WHEN=auto`), with the
    /// codec timed on this GPU.
    pub fn decision(
        w: &Workload,
        po: &PlanOptions,
        steps: usize,
        inputs: &TuneInputs,
    ) -> Result<String, String> {
        let first = po
            .compress
            .iter()
            .position(Option::is_some)
            .ok_or("nothing compressed")?;
        let speeds = tune::codec_speeds(&cuda::CudaProbe, &w.program, po);
        let speeds = speeds.map_err(|e| e.to_string())?;
        let codec = speeds[first];
        let points: Vec<usize> = w.program.points.iter().map(|_| w.src[0]).collect();
        let d = tune::compression::decide(
            &w.program,
            &w.shape,
            steps,
            &points,
            po,
            &inputs.rates,
            &speeds,
        )
        .map_err(|e| e.to_string())?;
        Ok(format!(
            "tuner: {} (codec measured: encode {:.0} GB/s, decode {:.0} GB/s)",
            d.reason,
            codec.encode / 1e9,
            codec.decode / 1e9
        ))
    }

    pub fn run_um(
        w: &mut Workload,
        prefetch: bool,
        steps: usize,
        fma: bool,
        link: &LinkRates,
    ) -> Result<Measurement, String> {
        let program = w.program.clone();
        let inv = w.invocation(steps);
        let o = cuda::run_managed(&program, &inv, &settled(&program, fma).cuda, prefetch)
            .map_err(|e| e.to_string())?;
        drop(inv);
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
mod imp {
    use crate::programs::Workload;
    use crate::results::Measurement;
    use pacc_runtime::plan::PlanOptions;
    use pacc_runtime::tune::{LinkRates, TuneInputs};
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
    pub fn choose_march(_: &mut Workload, _: usize, _: bool) -> Option<String> {
        None
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
    pub fn decision(
        _: &Workload,
        _: &PlanOptions,
        _: usize,
        _: &TuneInputs,
    ) -> Result<String, String> {
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

pub use imp::*;
