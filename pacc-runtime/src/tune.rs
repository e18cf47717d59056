//! The tuner: chooses the chunk count and the temporal blocking depth of a run from a
//! performance model.
//!
//! The plan is data, so the model needs no guesswork about what a configuration moves or
//! computes: for every candidate `(chunks, block_steps)` the tuner builds the plan of one block
//! with [`plan::build`] and counts its bytes each way, its device-to-device bytes, its host
//! staging bytes and the plane-points every kernel computes (redundant halo work included). With
//!
//! * the link rates (host to device, device to host, both at once; measured once per process),
//! * each kernel's throughput in points per second (measured once per process and program on a
//!   small slab of the real plane size, or passed in),
//! * the device memory the buffer sets must fit in,
//!
//! one block is predicted to take `max(link, kernels, device copies, host copies)`, the
//! resources running concurrently on their own streams, where
//! `link = max(in / htod, out / dtoh, (in + out) / both)`. A run is its blocks plus one pipeline
//! fill, `(in + kernels + out) / chunks` of the first block: the first chunk's upload before any
//! kernel and the last chunk's download after the last. The candidate with the smallest
//! predicted time wins; candidates whose buffer sets do not fit are skipped.
//!
//! [`choose`] is the pure part (model in, choice out). On the CUDA backend, `run` calls
//! [`auto_plan_options`] when neither the options nor the directive fix both the chunk count and
//! the block steps; explicit values are kept and only the free ones are tuned.

use crate::error::Error;
use crate::plan::{self, OpKind, Plan, PlanOptions, Scheme};
use crate::program::Program;
use serde::Serialize;

/// Host <-> device bandwidth in bytes per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkRates {
    pub htod: f64,
    pub dtoh: f64,
    /// Both directions at once: bytes of both directions together per second.
    pub both: f64,
    /// Size of the buffers it was measured with.
    pub bytes: usize,
}

impl LinkRates {
    /// Seconds to move `htod` bytes in and `dtoh` bytes out, overlapped as the streams allow.
    pub fn seconds(&self, htod: u64, dtoh: u64) -> f64 {
        let (h, d) = (htod as f64, dtoh as f64);
        (h / self.htod).max(d / self.dtoh).max((h + d) / self.both)
    }
}

/// What the model knows about the machine and the call.
#[derive(Clone, Debug, Serialize)]
pub struct TuneInputs {
    pub link: LinkRates,
    /// Points per second of each kernel (program order). A single value applies to all.
    pub kernel_rate: Vec<f64>,
    /// Device-to-device copy rate in bytes copied per second.
    pub dtod_rate: f64,
    /// Host memcpy rate (staged-copy's staging copies) in bytes per second.
    pub host_copy_rate: f64,
    /// Fixed cost of one kernel launch (seconds).
    pub launch_overhead: f64,
    /// Device memory the buffer sets (and the executor's scratch) may use, in bytes.
    pub device_memory: u64,
    /// Pinned host memory the staging buffers may use (staged-copy), if limited.
    pub host_memory: Option<u64>,
    pub scheme: Scheme,
    pub buffer_sets: usize,
    /// Outermost-axis plane of each point statement (needed to build plans).
    pub point_planes: Vec<usize>,
    /// Fixed chunk count (the tuner then chooses block steps only).
    pub chunks: Option<usize>,
    /// Fixed block steps (the tuner then chooses the chunk count only).
    pub block_steps: Option<usize>,
    /// Candidate chunk counts (empty: the default list).
    pub chunk_candidates: Vec<usize>,
    /// Candidate block steps (empty: the default list).
    pub step_candidates: Vec<usize>,
}

impl TuneInputs {
    /// Inputs with the given link and kernel rates and defaults elsewhere (HBM copies at
    /// 1.4 TB/s, host copies at 12 GB/s, 4 us per launch, region-sharing, 3 buffer sets).
    pub fn new(link: LinkRates, kernel_rate: Vec<f64>, device_memory: u64) -> Self {
        TuneInputs {
            link,
            kernel_rate,
            dtod_rate: 1.4e12,
            host_copy_rate: 12e9,
            launch_overhead: 4e-6,
            device_memory,
            host_memory: None,
            scheme: Scheme::RegionSharing,
            buffer_sets: 3,
            point_planes: Vec::new(),
            chunks: None,
            block_steps: None,
            chunk_candidates: Vec::new(),
            step_candidates: Vec::new(),
        }
    }
}

/// The model's view of one plan (or one block of it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Prediction {
    pub bytes_htod: u64,
    pub bytes_dtoh: u64,
    pub bytes_dtod: u64,
    pub bytes_host_copy: u64,
    /// Plane-points computed by kernels, redundant work included.
    pub kernel_points: u64,
    pub link_seconds: f64,
    pub kernel_seconds: f64,
    pub dtod_seconds: f64,
    pub host_copy_seconds: f64,
    /// max of the above.
    pub seconds: f64,
}

/// One evaluated candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub chunks: usize,
    pub block_steps: usize,
    pub predicted_seconds: f64,
    pub device_bytes: u64,
    /// Why it was not eligible, if it was not.
    pub rejected: Option<String>,
}

/// The tuner's pick.
#[derive(Clone, Debug, Serialize)]
pub struct TuneChoice {
    pub chunks: usize,
    pub block_steps: usize,
    pub scheme: Scheme,
    /// Predicted seconds for the whole run (all steps).
    pub predicted_seconds: f64,
    pub predicted_per_step: f64,
    /// The model of one full block of the pick.
    pub block: Prediction,
    /// Pipeline fill added once per run.
    pub fill_seconds: f64,
    pub device_bytes: u64,
    pub candidates: Vec<Candidate>,
}

impl TuneChoice {
    pub fn summary(&self) -> String {
        format!(
            "tuner: {} chunks x {} block steps ({}), predicted {:.4} s ({:.4} s/step; per block link {:.4} s, kernels {:.4} s)",
            self.chunks,
            self.block_steps,
            self.scheme,
            self.predicted_seconds,
            self.predicted_per_step,
            self.block.link_seconds,
            self.block.kernel_seconds
        )
    }
}

/// Points the serial loop computes in `steps` steps (every kernel's full ranges): the work
/// without any redundancy, to compare a plan's [`Prediction::kernel_points`] with.
pub fn useful_points(program: &Program, shape: &[usize], steps: usize) -> u64 {
    (0..program.kernels.len())
        .map(|k| {
            let r = &program.kernels[k].ranges[0];
            let planes = (r.hi.eval(shape[0]) - r.lo.eval(shape[0])).max(0) as u64;
            planes * plane_points(program, shape, k)
        })
        .sum::<u64>()
        * steps as u64
}

/// Points of one plane a kernel computes (its inner loop ranges).
pub fn plane_points(program: &Program, shape: &[usize], kernel: usize) -> u64 {
    let kd = &program.kernels[kernel];
    kd.ranges
        .iter()
        .zip(shape)
        .skip(1)
        .map(|(r, &n)| (r.hi.eval(n) - r.lo.eval(n)).max(0) as u64)
        .product()
}

/// The model of `plan` (all its ops).
pub fn predict(program: &Program, plan: &Plan, inputs: &TuneInputs) -> Prediction {
    let mut p = Prediction {
        bytes_htod: plan.bytes_htod(),
        bytes_dtoh: plan.bytes_dtoh(),
        bytes_dtod: plan.bytes_dtod(),
        ..Default::default()
    };
    let rate = |k: usize| -> f64 {
        *inputs
            .kernel_rate
            .get(k)
            .or(inputs.kernel_rate.first())
            .unwrap_or(&1e10)
    };
    let mut kt = 0.0;
    for op in &plan.ops {
        match &op.kind {
            OpKind::Kernel { kernel, planes, .. } => {
                let pts = planes.len() as u64 * plane_points(program, &plan.shape, *kernel);
                p.kernel_points += pts;
                kt += pts as f64 / rate(*kernel) + inputs.launch_overhead;
            }
            OpKind::Point { .. } => kt += inputs.launch_overhead,
            OpKind::StageIn { array, planes, .. } | OpKind::StageOut { array, planes, .. } => {
                p.bytes_host_copy +=
                    (planes.len() * plan.plane_len * plan.elem_sizes[*array]) as u64;
            }
            _ => {}
        }
    }
    p.kernel_seconds = kt;
    p.link_seconds = inputs.link.seconds(p.bytes_htod, p.bytes_dtoh);
    p.dtod_seconds = p.bytes_dtod as f64 / inputs.dtod_rate;
    p.host_copy_seconds = p.bytes_host_copy as f64 / inputs.host_copy_rate;
    p.seconds = (p.link_seconds + p.dtod_seconds)
        .max(p.kernel_seconds)
        .max(p.host_copy_seconds);
    p
}

/// Device memory the executor needs for `plan` beyond its buffer sets (reduction scratch,
/// driver reserve), approximately.
fn extra_device_bytes(program: &Program, plan: &Plan) -> u64 {
    let nred: usize = program.kernels.iter().map(|k| k.reductions.len()).sum();
    let scratch = (plan.plane_len / 256 + 1) * plan.buffer_planes * 8 * nred * plan.streams;
    (64u64 << 20) + scratch as u64
}

const CHUNKS: [usize; 15] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 128];
const STEPS: [usize; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Chooses chunks and block steps for `steps` steps of `program` over arrays of `shape`.
pub fn choose(
    program: &Program,
    shape: &[usize],
    steps: usize,
    inputs: &TuneInputs,
) -> Result<TuneChoice, Error> {
    let steps = steps.max(1);
    let n0 = shape[0];
    let chunk_list: Vec<usize> = match inputs.chunks {
        Some(c) => vec![c],
        None if !inputs.chunk_candidates.is_empty() => inputs.chunk_candidates.clone(),
        None => CHUNKS
            .iter()
            .copied()
            .filter(|&c| c == 1 || c * 2 <= n0)
            .collect(),
    };
    let step_list: Vec<usize> = match inputs.block_steps {
        Some(k) => vec![k],
        None if !inputs.step_candidates.is_empty() => inputs.step_candidates.clone(),
        None => {
            let mut v: Vec<usize> = STEPS.iter().copied().filter(|&k| k <= steps).collect();
            if steps <= 64 && !v.contains(&steps) {
                v.push(steps);
            }
            v
        }
    };
    let points = if inputs.point_planes.len() == program.points.len() {
        inputs.point_planes.clone()
    } else {
        vec![n0 / 2; program.points.len()]
    };
    let build = |c: usize, k: usize, s: usize| {
        plan::build(
            program,
            shape,
            s,
            &points,
            &PlanOptions {
                chunks: c,
                block_steps: k,
                scheme: inputs.scheme,
                buffer_sets: inputs.buffer_sets,
                compress: Vec::new(),
            },
        )
    };
    let mut best: Option<TuneChoice> = None;
    let mut candidates = Vec::new();
    let mut last_err = None;
    for &k in &step_list {
        let k = k.min(steps).max(1);
        for &c in &chunk_list {
            // Redundant work beyond twice the owned planes never pays: skip without planning
            // (unless the caller fixed both values).
            let (back, fwd) = program.axis0_reach();
            let owned = n0.div_ceil(c.max(1));
            if inputs.chunks.is_none() && c > 1 && (back + fwd) * k > 2 * owned {
                continue;
            }
            let block = match build(c, k, k) {
                Ok(p) => p,
                Err(e) => {
                    last_err = Some(e.to_string());
                    continue;
                }
            };
            if candidates
                .iter()
                .any(|x: &Candidate| x.chunks == block.chunks && x.block_steps == k)
            {
                continue;
            }
            let need = block.device_bytes() + extra_device_bytes(program, &block);
            let mut cand = Candidate {
                chunks: block.chunks,
                block_steps: k,
                predicted_seconds: f64::INFINITY,
                device_bytes: need,
                rejected: None,
            };
            if need > inputs.device_memory {
                cand.rejected = Some(format!(
                    "needs {need} bytes of device memory, {} available",
                    inputs.device_memory
                ));
                candidates.push(cand);
                continue;
            }
            if inputs.scheme == Scheme::StagedCopy {
                if let Some(h) = inputs.host_memory {
                    if block.device_bytes() > h {
                        cand.rejected = Some(format!(
                            "staging needs {} bytes of pinned host memory, {h} allowed",
                            block.device_bytes()
                        ));
                        candidates.push(cand);
                        continue;
                    }
                }
            }
            let pb = predict(program, &block, inputs);
            let full = steps / k;
            let rem = steps % k;
            let mut total = pb.seconds * full as f64;
            if rem > 0 {
                match build(block.chunks, rem, rem) {
                    Ok(r) => total += predict(program, &r, inputs).seconds,
                    Err(_) => total += pb.seconds * rem as f64 / k as f64,
                }
            }
            let fill =
                (pb.link_seconds + pb.kernel_seconds + pb.host_copy_seconds) / block.chunks as f64;
            total += fill;
            cand.predicted_seconds = total;
            candidates.push(cand);
            if best
                .as_ref()
                .is_none_or(|b| total < b.predicted_seconds * (1.0 - 1e-9))
            {
                best = Some(TuneChoice {
                    chunks: block.chunks,
                    block_steps: k,
                    scheme: inputs.scheme,
                    predicted_seconds: total,
                    predicted_per_step: total / steps as f64,
                    block: pb,
                    fill_seconds: fill,
                    device_bytes: need,
                    candidates: Vec::new(),
                });
            }
        }
    }
    match best {
        Some(mut b) => {
            b.candidates = candidates;
            Ok(b)
        }
        None => {
            if let Some(c) = candidates.iter().find(|c| c.rejected.is_some()) {
                Err(Error::DeviceMemory {
                    need: c.device_bytes,
                    free: inputs.device_memory,
                    sets: inputs.buffer_sets,
                })
            } else {
                Err(Error::Option(format!(
                    "the tuner found no configuration that can be planned{}",
                    last_err.map(|e| format!(" ({e})")).unwrap_or_default()
                )))
            }
        }
    }
}

/// Host memcpy rate in bytes per second, as the staged-copy executor copies (4 MiB pieces in
/// parallel on rayon's pool): the best of 3 copies of `bytes` bytes between two fresh buffers.
pub fn measure_host_copy_rate(bytes: usize) -> f64 {
    use rayon::prelude::*;
    const PIECE: usize = 4 << 20;
    let bytes = bytes.max(PIECE);
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    bytes as f64 / best.max(1e-9)
}

#[cfg(feature = "cuda")]
pub use measure::{auto_plan_options, link_rates, measure_inputs, measure_kernel_rates};

#[cfg(not(feature = "cuda"))]
/// Without the CUDA feature there is nothing to tune: the options are returned as they are.
pub fn auto_plan_options(
    _program: &Program,
    _inv: &crate::invocation::Invocation<'_>,
    _opts: &crate::options::Options,
    base: PlanOptions,
) -> (PlanOptions, Option<String>) {
    (base, None)
}

#[cfg(feature = "cuda")]
mod measure {
    use super::*;
    use crate::exec::cuda;
    use crate::exec::CpuKernels;
    use crate::invocation::{HostArray, Invocation};
    use crate::options::Options;
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    use std::sync::{Mutex, OnceLock};

    /// The link rates, measured once per process (256 MiB pinned buffers, best of 3).
    pub fn link_rates() -> Result<LinkRates, Error> {
        static LINK: OnceLock<Result<LinkRates, String>> = OnceLock::new();
        LINK.get_or_init(|| cuda::measure_link(256 << 20, 3).map_err(|e| e.to_string()))
            .clone()
            .map_err(|m| Error::Cuda {
                what: "measuring the link".into(),
                message: m,
            })
    }

    /// Points per second of each kernel of `program`, measured by running it (2 steps, in core)
    /// on a copy of the first planes of the call's arrays: a slab of the real plane size. Cached
    /// per process, program source, plane shape and FMA setting.
    pub fn measure_kernel_rates(
        program: &Program,
        inv: &Invocation<'_>,
        opts: &Options,
    ) -> Result<Vec<f64>, Error> {
        type Key = (String, u64, Vec<usize>, bool, crate::options::KernelForm);
        static CACHE: OnceLock<Mutex<HashMap<Key, Vec<f64>>>> = OnceLock::new();
        let shape = inv.arrays[0].shape().to_vec();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        program.cuda_source.hash(&mut h);
        let key = (
            program.name.clone(),
            h.finish(),
            shape[1..].to_vec(),
            opts.fma,
            opts.kernel_form,
        );
        if let Some(v) = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(v.clone());
        }
        let n0 = shape[0];
        let slab = n0.min((4 * program.halo + 8).max(16));
        let plane_elems: usize = shape[1..].iter().product();
        // Copies of the first `slab` planes (u64 storage for alignment).
        let mut store: Vec<Vec<u64>> = Vec::new();
        let mut arrays = Vec::new();
        for a in &inv.arrays {
            let bytes = slab * plane_elems * a.elem.size();
            let mut v = vec![0u64; bytes.div_ceil(8)];
            // SAFETY: the first `bytes` bytes of the caller's array (it has >= slab planes).
            unsafe { std::ptr::copy_nonoverlapping(a.ptr, v.as_mut_ptr() as *mut u8, bytes) };
            let mut s = a.shape;
            s[0] = slab;
            arrays.push(HostArray {
                ptr: v.as_mut_ptr() as *mut u8,
                elem: a.elem,
                shape: s,
                ndim: a.ndim,
                writable: true,
            });
            store.push(v);
        }
        let points: Vec<Vec<i64>> = inv
            .points
            .iter()
            .map(|p| {
                let mut q = p.clone();
                if let Some(z) = q.first_mut() {
                    *z = (slab / 2) as i64;
                }
                q
            })
            .collect();
        let steps = 2;
        let make_inv = || Invocation {
            arrays: arrays.clone(),
            scalars: inv.scalars.clone(),
            slices: inv.slices.clone(),
            points: points.clone(),
            t0: inv.t0,
            steps,
            reduction_init: inv.reduction_init.clone(),
            reset_values: inv.reset_values.clone(),
            cpu: CpuKernels {
                kernels: program
                    .kernels
                    .iter()
                    .map(|_| {
                        Box::new(|_: &crate::exec::KernelFrame<'_>, _: usize, _: &mut [f64]| {})
                            as Box<crate::exec::CpuKernelFn<'_>>
                    })
                    .collect(),
                points: program
                    .points
                    .iter()
                    .map(|_| {
                        Box::new(|_: &crate::exec::KernelFrame<'_>| {})
                            as Box<crate::exec::CpuPointFn<'_>>
                    })
                    .collect(),
            },
        };
        let point_planes: Vec<usize> = points.iter().map(|p| p[0] as usize).collect();
        let plan = plan::build(
            program,
            &shape_with(&shape, slab),
            steps,
            &point_planes,
            &PlanOptions {
                chunks: 1,
                block_steps: steps,
                scheme: Scheme::RegionSharing,
                buffer_sets: 1,
                compress: Vec::new(),
            },
        )?;
        let o = Options {
            fma: opts.fma,
            ..Options::default()
        };
        let mut rates = vec![0.0; program.kernels.len()];
        for rep in 0..2 {
            let out = cuda::execute(program, &plan, &make_inv(), &o)?;
            if rep == 0 {
                continue;
            }
            for (k, kd) in program.kernels.iter().enumerate() {
                let prefix = format!("{} ", kd.name);
                let secs: f64 = out
                    .report
                    .timeline
                    .iter()
                    .filter(|e| e.name.starts_with(&prefix))
                    .map(|e| e.dur_us * 1e-6)
                    .sum();
                let pts: u64 = out
                    .plan
                    .ops
                    .iter()
                    .filter_map(|op| match &op.kind {
                        OpKind::Kernel { kernel, planes, .. } if *kernel == k => {
                            Some(planes.len() as u64 * plane_points(program, &out.plan.shape, k))
                        }
                        _ => None,
                    })
                    .sum();
                rates[k] = if secs > 0.0 && pts > 0 {
                    pts as f64 / secs
                } else {
                    1e10
                };
            }
        }
        drop(store);
        CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, rates.clone());
        Ok(rates)
    }

    fn shape_with(shape: &[usize], n0: usize) -> Vec<usize> {
        let mut s = shape.to_vec();
        s[0] = n0;
        s
    }

    /// Measured inputs for a call: link (cached), kernel rates (cached), the device memory
    /// available to the plan now, the call's point planes.
    pub fn measure_inputs(
        program: &Program,
        inv: &Invocation<'_>,
        opts: &Options,
    ) -> Result<TuneInputs, Error> {
        let link = link_rates()?;
        let rates = measure_kernel_rates(program, inv, opts)?;
        let budget = cuda::device_memory_budget()?;
        let mut t = TuneInputs::new(link, rates, budget);
        t.point_planes = inv
            .points
            .iter()
            .map(|p| p.first().copied().unwrap_or(0).max(0) as usize)
            .collect();
        Ok(t)
    }

    /// `run`'s hook: on the CUDA backend, tunes whichever of chunks and block steps neither the
    /// options nor the directive fix. Returns the options to plan with and a note for the
    /// report. If measuring fails, keeps `base` and says why.
    pub fn auto_plan_options(
        program: &Program,
        inv: &Invocation<'_>,
        opts: &Options,
        base: PlanOptions,
    ) -> (PlanOptions, Option<String>) {
        let fixed = crate::config::Fixed::of(program, opts);
        let (fixed_c, fixed_k) = (fixed.chunks, fixed.block_steps);
        if (fixed_c.is_some() && fixed_k.is_some()) || inv.steps == 0 {
            return (base, None);
        }
        let shape = inv.arrays[0].shape().to_vec();
        let r = measure_inputs(program, inv, opts).and_then(|mut t| {
            t.scheme = base.scheme;
            t.buffer_sets = base.buffer_sets;
            if base.scheme == Scheme::StagedCopy {
                static HOST: OnceLock<f64> = OnceLock::new();
                t.host_copy_rate = *HOST.get_or_init(|| measure_host_copy_rate(256 << 20));
            }
            t.chunks = fixed_c;
            t.block_steps = fixed_k;
            choose(program, &shape, inv.steps, &t)
        });
        match r {
            Ok(c) => (
                PlanOptions {
                    chunks: c.chunks,
                    block_steps: c.block_steps,
                    ..base
                },
                Some(c.summary()),
            ),
            Err(e) => (
                base,
                Some(format!("tuner skipped ({e}); using the default options")),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;

    fn prog(halo: i64) -> Program {
        let f = |n: &str, role| ArrayDecl {
            name: n.into(),
            elem: Elem::F32,
            role,
        };
        let r = AxisRange {
            lo: Bound::start(halo),
            hi: Bound::end(-halo),
        };
        Program {
            name: "p".into(),
            ndim: 3,
            arrays: vec![
                f("a", Role::InOut),
                f("b", Role::InOut),
                f("v", Role::Input),
            ],
            scalars: vec![],
            slices: vec![],
            reductions: vec![],
            resets: vec![],
            kernels: vec![KernelDecl {
                name: "k".into(),
                ranges: vec![r; 3],
                reads: vec![
                    ReadDecl {
                        array: 0,
                        lo: vec![-halo; 3],
                        hi: vec![halo; 3],
                    },
                    ReadDecl {
                        array: 2,
                        lo: vec![0; 3],
                        hi: vec![0; 3],
                    },
                ],
                writes: vec![1],
                reductions: vec![],
                launch: Default::default(),
            }],
            points: vec![],
            step: vec![Stage::Kernel(0), Stage::Swap(0, 1)],
            halo: halo as usize,
            default_chunks: None,
            default_block_steps: None,
            compress: Vec::new(),
            cuda_source: String::new(),
        }
    }

    fn link() -> LinkRates {
        LinkRates {
            htod: 54e9,
            dtoh: 54e9,
            both: 80e9,
            bytes: 1 << 28,
        }
    }

    #[test]
    fn link_bound_runs_block_deeper_and_memory_limits_the_buffers() {
        let p = prog(4);
        let shape = [512, 256, 256];
        // Fast kernels: the link dominates, so deeper blocking pays until memory stops it.
        let mut t = TuneInputs::new(link(), vec![1e12], 1 << 40);
        let c = choose(&p, &shape, 32, &t).unwrap();
        assert!(c.block_steps >= 8, "{c:?}");
        // Slow kernels: the redundant work of deep blocks costs more than it saves.
        t.kernel_rate = vec![1e8];
        let slow = choose(&p, &shape, 32, &t).unwrap();
        assert!(slow.block_steps < c.block_steps, "{slow:?} vs {c:?}");
        // A memory limit of a quarter of the arrays forces several chunks.
        let arrays = 3 * 512 * 256 * 256 * 4u64;
        t.kernel_rate = vec![1e12];
        t.device_memory = arrays / 4;
        let m = choose(&p, &shape, 32, &t).unwrap();
        assert!(m.device_bytes <= arrays / 4);
        assert!(m.chunks >= 4, "{m:?}");
        // Fixed values are kept.
        t.device_memory = 1 << 40;
        t.chunks = Some(16);
        t.block_steps = Some(3);
        let f = choose(&p, &shape, 32, &t).unwrap();
        assert_eq!((f.chunks, f.block_steps), (16, 3));
        // Nothing fits.
        t.device_memory = 1000;
        assert!(matches!(
            choose(&p, &shape, 32, &t),
            Err(Error::DeviceMemory { .. })
        ));
    }

    #[test]
    fn prediction_counts_the_plan() {
        let p = prog(1);
        let shape = [64, 32, 32];
        let plan = plan::build(
            &p,
            &shape,
            4,
            &[],
            &PlanOptions {
                chunks: 4,
                block_steps: 4,
                scheme: Scheme::RegionSharing,
                buffer_sets: 3,
                compress: Vec::new(),
            },
        )
        .unwrap();
        let t = TuneInputs::new(link(), vec![1e9], 1 << 40);
        let pr = predict(&p, &plan, &t);
        assert_eq!(pr.bytes_htod, plan.bytes_htod());
        // At least every interior point of every step, plus redundant halo work.
        assert!(pr.kernel_points >= 4 * 62 * 30 * 30);
        assert!(pr.seconds >= pr.link_seconds && pr.seconds >= pr.kernel_seconds);
    }
}
