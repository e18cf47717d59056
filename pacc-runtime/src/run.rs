//! The entry point generated wrappers call: validate, plan, pick a backend, execute, report.

use crate::checkpoint;
use crate::error::{CheckpointRef, Error, Progress};
use crate::exec::cpu::{self, Order};
use crate::invocation::{Invocation, RunOutput};
use crate::options::{BackendChoice, Options};
use crate::plan::{self, PlanOptions, Scheme};
use crate::program::{Elem, Program, ScalarType, Stage};
use crate::report::{Report, StageTimes};
use std::time::Instant;

/// Default chunk count when neither the options nor the directive give one (clamped to the
/// number of planes).
pub const DEFAULT_CHUNKS: usize = 4;
/// Default temporal blocking depth (clamped to the number of steps).
pub const DEFAULT_BLOCK_STEPS: usize = 4;

/// Runs one call of a translated function.
///
/// Everything about the call is validated, and the run planned, before any data is touched; on
/// an error other than [`Error::Failed`] the arrays are unchanged. With zero steps nothing is
/// planned or moved and the reductions keep their initial values.
///
/// **Checkpoints.** With [`Options::checkpoint`] the time loop runs in segments of
/// `every_blocks * block_steps` steps (each its own plan); after every segment but the last, the
/// arrays, step counter and reductions are written to the directory atomically (see
/// [`crate::checkpoint`]). With [`Options::resume`] the call first checks the checkpoint against
/// the program and its own arguments (shape, element types, inputs, scalars, checksums), then
/// loads it into the arrays and runs the remaining steps: the results are bit for bit those of
/// an uninterrupted run.
///
/// **Threads.** `run` may be called from several threads at once: every call allocates its own
/// buffers and the process-wide state is synchronized (the once-per-process message when `auto`
/// falls back to the CPU, the CUDA context and module caches). CPU-backend calls run side by side
/// (their kernels share rayon's global pool); CUDA calls are serialized, one run on the device at
/// a time, so that two calls sharing an array never page-lock and unlock it under each other.
/// Calls checkpointing to the same directory at once are not supported.
pub fn run(program: &Program, inv: Invocation<'_>, opts: &Options) -> Result<RunOutput, Error> {
    let start = Instant::now();
    opts.validate()?;
    validate(program, &inv)?;
    let backend = choose_backend(opts.backend)?;
    let shape = inv.arrays[0].shape().to_vec();
    let steps = inv.steps;
    let mut popts = plan_options(program, shape[0], steps, opts);
    popts.compress = crate::compress::rates(program, &shape, popts.scheme, opts)?;
    if !popts.compresses() {
        popts.compress.clear();
    }
    // The tuner picks what neither the options nor the directive fix (CUDA backend only).
    let (popts, tune_note) = match backend {
        Backend::Cuda => crate::tune::auto_plan_options(program, &inv, opts, popts),
        Backend::Cpu(_) => (popts, None),
    };
    let swap_replays = swap_replays(program, steps);

    // What a resumed call must agree with, and the checkpoint to resume from: checked against
    // the call and verified, nothing loaded yet.
    let durable = opts.checkpoint.is_some() || opts.resume.is_some();
    let fp = durable.then(|| {
        let saved = (0..program.arrays.len())
            .map(|a| written_physically(program, a))
            .collect();
        checkpoint::fingerprint(program, &inv, saved)
    });
    let found = match (&opts.resume, &fp) {
        (Some(r), Some(fp)) if steps > 0 => checkpoint::find(r, program, &inv, fp)?,
        _ => None,
    };
    if let (Some(c), true) = (&opts.checkpoint, steps > 0) {
        checkpoint::prepare_dir(c)?;
    }
    let first = found.as_ref().map_or(0, |f| f.state.step);
    let mut notes: Vec<String> = tune_note.into_iter().collect();
    if let Some(f) = &found {
        notes.push(format!(
            "resumed from the checkpoint in `{}` at step {} of {steps}",
            f.at.dir.display(),
            f.at.step
        ));
    }

    // Plan every segment before any data is touched: full segments share one plan, the last one
    // may be shorter (with the same chunks, so reductions add up in the same order).
    let remaining = steps - first;
    let seg_len = match &opts.checkpoint {
        Some(c) => c.every_blocks.saturating_mul(popts.block_steps.max(1)),
        None => remaining,
    }
    .min(remaining)
    .max(1);
    let point_planes: Vec<usize> = inv.points.iter().map(|p| p[0] as usize).collect();
    let plans = if remaining > 0 {
        let full = plan::build(program, &shape, seg_len, &point_planes, &popts)?;
        let tail = remaining % seg_len;
        let tail = if tail > 0 {
            let o = PlanOptions {
                chunks: full.chunks,
                ..popts.clone()
            };
            Some(plan::build(program, &shape, tail, &point_planes, &o)?)
        } else {
            None
        };
        Some((full, tail))
    } else {
        None
    };
    let planned = start.elapsed().as_secs_f64();

    let user_arrays = inv.arrays.clone();
    let mut reductions = inv.reduction_init.clone();
    let mut last_checkpoint = None;
    if let Some(f) = &found {
        checkpoint::load(f, &user_arrays).map_err(|e| Error::Failed {
            cause: Box::new(e),
            progress: Progress {
                steps_complete: 0,
                blocks_complete: 0,
                torn: true,
                checkpoint: None,
            },
        })?;
        reductions = f.reductions();
        last_checkpoint = Some(f.at.clone());
    }
    let Some((full, tail)) = plans else {
        let mut report = empty_report(program, backend.name(), &shape, &popts);
        report.steps = steps;
        report.adjustments = notes;
        report.stages.setup = start.elapsed().as_secs_f64();
        report.wall_seconds = start.elapsed().as_secs_f64();
        return Ok(RunOutput {
            reductions,
            swap_replays,
            report,
        });
    };

    let mut inv = inv;
    let t0 = inv.t0;
    let (mut done, mut blocks_done) = (first, 0usize);
    let mut report: Option<Report> = None;
    let (mut written, mut ckpt_seconds) = (0usize, 0.0f64);
    while done < steps {
        let plan = match &tail {
            Some(t) if steps - done < seg_len => t,
            _ => &full,
        };
        // The segment's plan starts from the identity binding: hand it the arrays the names
        // refer to after `done` steps.
        let binding = checkpoint::binding_at(program, done);
        inv.arrays = binding.iter().map(|&p| user_arrays[p]).collect();
        inv.t0 = t0 + done as i64;
        inv.steps = plan.steps;
        inv.reduction_init = reductions.clone();
        // Progress counts over the whole call, not the segment's plan.
        let mut seg_opts = opts.clone();
        seg_opts.on_progress = opts.on_progress.as_ref().map(|p| p.segment(done, steps));
        let (r, seg) = execute(backend, program, plan, &inv, &seg_opts)
            .map_err(|e| in_context(e, done, blocks_done, last_checkpoint.as_ref()))?;
        reductions = r;
        match &mut report {
            None => report = Some(seg),
            Some(total) => merge(total, seg),
        }
        done += plan.steps;
        blocks_done += plan.blocks.len();
        if let (Some(c), Some(fp)) = (&opts.checkpoint, &fp) {
            if done < steps {
                let t = Instant::now();
                let at = checkpoint::At {
                    t0,
                    step: done,
                    steps_total: steps,
                    block_steps: plan.block_steps,
                    reductions: &reductions,
                };
                match checkpoint::write(c, program, &user_arrays, fp, at) {
                    Ok(r) => last_checkpoint = Some(r),
                    Err(e) => {
                        return Err(Error::Failed {
                            cause: Box::new(e),
                            progress: Progress {
                                steps_complete: done,
                                blocks_complete: blocks_done,
                                torn: false,
                                checkpoint: last_checkpoint,
                            },
                        })
                    }
                }
                written += 1;
                ckpt_seconds += t.elapsed().as_secs_f64();
            }
        }
    }
    let mut report = report.expect("at least one segment ran");
    if let Some(c) = &opts.checkpoint {
        notes.push(format!(
            "checkpointed every {} blocks to `{}`: {written} checkpoints, {ckpt_seconds:.3} s",
            c.every_blocks,
            c.dir.display()
        ));
    }
    report.steps = steps;
    report.stages.setup += planned;
    report.adjustments.extend(notes);
    report.wall_seconds = start.elapsed().as_secs_f64();
    Ok(RunOutput {
        reductions,
        swap_replays,
        report,
    })
}

/// Runs one plan on the chosen backend; returns the reductions and the segment's report.
fn execute(
    backend: Backend,
    program: &Program,
    plan: &crate::plan::Plan,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<(Vec<f64>, Report), Error> {
    let order = match backend {
        Backend::Cuda => return execute_cuda(program, plan, inv, opts),
        Backend::Cpu(order) => order,
    };
    let start = Instant::now();
    let out = cpu::execute_with_progress(program, plan, inv, order, opts.on_progress.as_ref())?;
    let report = Report {
        program: program.name.clone(),
        backend: backend.name().into(),
        device: Some(cpu_device()),
        scheme: plan.scheme,
        shape: plan.shape.clone(),
        steps: plan.steps,
        chunks: plan.chunks,
        requested_chunks: plan.requested_chunks,
        block_steps: plan.block_steps,
        bytes_htod: plan.bytes_htod(),
        bytes_dtoh: plan.bytes_dtoh(),
        bytes_dtod: plan.bytes_dtod(),
        bytes_htod_raw: plan.bytes_htod_raw(),
        bytes_dtoh_raw: plan.bytes_dtoh_raw(),
        device_bytes: plan.device_bytes(),
        wall_seconds: start.elapsed().as_secs_f64(),
        stages: out.stages,
        adjustments: plan.adjustments.clone(),
        timeline: Vec::new(),
    };
    Ok((out.reductions, report))
}

/// An error of a segment that started after `done` steps (`blocks` blocks of this call) as the
/// caller sees it: progress counted over the whole call, with the last checkpoint. Errors of a
/// segment that found the arrays already written (or loaded from a checkpoint) say so.
fn in_context(e: Error, done: usize, blocks: usize, last: Option<&CheckpointRef>) -> Error {
    match e {
        Error::Failed {
            cause,
            mut progress,
        } => {
            progress.steps_complete += done;
            progress.blocks_complete += blocks;
            progress.checkpoint = last.cloned();
            Error::Failed { cause, progress }
        }
        e if done > 0 => Error::Failed {
            cause: Box::new(e),
            progress: Progress {
                steps_complete: done,
                blocks_complete: blocks,
                torn: false,
                checkpoint: last.cloned(),
            },
        },
        e => e,
    }
}

/// Adds a later segment's report to the run's.
fn merge(total: &mut Report, seg: Report) {
    total.bytes_htod += seg.bytes_htod;
    total.bytes_dtoh += seg.bytes_dtoh;
    total.bytes_dtod += seg.bytes_dtod;
    total.bytes_htod_raw += seg.bytes_htod_raw;
    total.bytes_dtoh_raw += seg.bytes_dtoh_raw;
    total.device_bytes = total.device_bytes.max(seg.device_bytes);
    total.wall_seconds += seg.wall_seconds;
    let (t, s) = (&mut total.stages, &seg.stages);
    t.htod += s.htod;
    t.dtoh += s.dtoh;
    t.dtod += s.dtod;
    t.kernel += s.kernel;
    t.host_copy += s.host_copy;
    t.register += s.register;
    t.setup += s.setup;
    t.encode += s.encode;
    t.decode += s.decode;
    for a in seg.adjustments {
        if !total.adjustments.contains(&a) {
            total.adjustments.push(a);
        }
    }
    total.timeline.extend(seg.timeline);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Cpu(Order),
    Cuda,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Cpu(Order::Submission) => "cpu",
            Backend::Cpu(Order::Shuffled(_)) => "shuffled",
            Backend::Cuda => "cuda",
        }
    }
}

fn choose_backend(choice: BackendChoice) -> Result<Backend, Error> {
    Ok(match choice {
        BackendChoice::Serial => {
            return Err(Error::Internal(
                "the serial backend is run by the generated wrapper, not by `pacc::runtime::run`"
                    .into(),
            ))
        }
        BackendChoice::Cpu => Backend::Cpu(Order::Submission),
        BackendChoice::Shuffled(seed) => Backend::Cpu(Order::Shuffled(seed)),
        BackendChoice::Cuda => {
            cuda_available().map_err(|reason| Error::NoCuda { reason })?;
            Backend::Cuda
        }
        BackendChoice::Auto => match cuda_available() {
            Ok(()) => Backend::Cuda,
            Err(reason) => {
                announce_cpu_fallback(&reason);
                Backend::Cpu(Order::Submission)
            }
        },
    })
}

/// The planner options for a call: explicit options first, then the directive's clauses, then
/// the defaults (4 chunks clamped to the planes, 4 block steps clamped to the steps).
pub fn plan_options(program: &Program, planes: usize, steps: usize, opts: &Options) -> PlanOptions {
    PlanOptions {
        chunks: opts
            .chunks
            .or(program.default_chunks)
            .unwrap_or_else(|| DEFAULT_CHUNKS.min(planes).max(1)),
        block_steps: opts
            .block_steps
            .or(program.default_block_steps)
            .unwrap_or_else(|| DEFAULT_BLOCK_STEPS.min(steps).max(1)),
        scheme: opts.scheme.unwrap_or(Scheme::RegionSharing),
        ..PlanOptions::default()
    }
}

/// How many times the wrapper replays the step's swaps after `steps` steps: `steps` modulo the
/// order of the permutation one step's swaps make.
pub fn swap_replays(program: &Program, steps: usize) -> usize {
    let n = program.arrays.len();
    let mut perm: Vec<usize> = (0..n).collect();
    for stage in &program.step {
        if let Stage::Swap(a, b) = *stage {
            perm.swap(a, b);
        }
    }
    // Order of the permutation = lcm of its cycle lengths.
    let mut seen = vec![false; n];
    let mut order = 1usize;
    for i in 0..n {
        let mut len = 0;
        let mut j = i;
        while !seen[j] {
            seen[j] = true;
            j = perm[j];
            len += 1;
        }
        if len > 0 {
            order = lcm(order, len);
        }
    }
    steps % order
}

fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

// ---- The CUDA seam: the two functions below are all that `exec::cuda` needs to plug in. ----

/// Whether the CUDA backend can run here (`Ok`), else why not.
#[cfg(not(feature = "cuda"))]
fn cuda_available() -> Result<(), String> {
    Err("pacc was built without the `cuda` feature".into())
}

/// Whether the CUDA backend can run here (`Ok`), else why not.
#[cfg(feature = "cuda")]
fn cuda_available() -> Result<(), String> {
    crate::exec::cuda::available().map(|_| ())
}

/// Runs `plan` on the device; returns the reductions and the report. Only reached when
/// [`cuda_available`] said yes.
#[cfg(feature = "cuda")]
fn execute_cuda(
    program: &Program,
    plan: &crate::plan::Plan,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<(Vec<f64>, Report), Error> {
    let o = crate::exec::cuda::execute(program, plan, inv, opts)?;
    Ok((o.reductions, o.report))
}

#[cfg(not(feature = "cuda"))]
fn execute_cuda(
    program: &Program,
    plan: &crate::plan::Plan,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<(Vec<f64>, Report), Error> {
    let _ = (program, plan, inv, opts);
    Err(Error::NoCuda {
        reason: "pacc was built without the `cuda` feature".into(),
    })
}

fn cpu_device() -> String {
    format!("CPU, {} rayon threads", rayon::current_num_threads())
}

/// Says once per process that `auto` fell back to the CPU backend.
fn announce_cpu_fallback(reason: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| eprintln!("pacc: no CUDA device ({reason}); running on the CPU backend"));
}

fn empty_report(program: &Program, backend: &str, shape: &[usize], popts: &PlanOptions) -> Report {
    Report {
        program: program.name.clone(),
        backend: backend.into(),
        device: Some(cpu_device()),
        scheme: popts.scheme,
        shape: shape.to_vec(),
        steps: 0,
        chunks: popts.chunks,
        requested_chunks: popts.chunks,
        block_steps: popts.block_steps,
        bytes_htod: 0,
        bytes_dtoh: 0,
        bytes_dtod: 0,
        bytes_htod_raw: 0,
        bytes_dtoh_raw: 0,
        device_bytes: 0,
        wall_seconds: 0.0,
        stages: StageTimes::default(),
        adjustments: Vec::new(),
        timeline: Vec::new(),
    }
}

fn scalar_type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::I32 => "i32",
        ScalarType::I64 => "i64",
        ScalarType::U32 => "u32",
        ScalarType::U64 => "u64",
        ScalarType::Usize => "usize",
        ScalarType::Isize => "isize",
        ScalarType::Bool => "bool",
    }
}

fn elem_name(e: Elem) -> &'static str {
    e.rust_name()
}

/// Checks the call against the program. Touches no data.
pub fn validate(program: &Program, inv: &Invocation<'_>) -> Result<(), Error> {
    let internal = |m: String| Err(Error::Internal(m));
    if program.ndim != 2 && program.ndim != 3 {
        return internal(format!(
            "program `{}` has {} axes",
            program.name, program.ndim
        ));
    }
    if inv.arrays.len() != program.arrays.len() || inv.arrays.is_empty() {
        return internal(format!(
            "{} arrays passed, the program `{}` has {}",
            inv.arrays.len(),
            program.name,
            program.arrays.len()
        ));
    }
    for (a, (h, d)) in inv.arrays.iter().zip(&program.arrays).enumerate() {
        if h.elem != d.elem {
            return internal(format!(
                "array {a} `{}` holds {} but the program declares {}",
                d.name,
                elem_name(h.elem),
                elem_name(d.elem)
            ));
        }
        if h.ndim != program.ndim {
            return internal(format!(
                "array `{}` has {} axes but the program uses {}",
                d.name, h.ndim, program.ndim
            ));
        }
    }
    let first = &inv.arrays[0];
    for (h, d) in inv.arrays.iter().zip(&program.arrays) {
        if h.shape() != first.shape() {
            return Err(Error::ShapeMismatch {
                name: d.name.clone(),
                got: h.shape().to_vec(),
                first: program.arrays[0].name.clone(),
                want: first.shape().to_vec(),
            });
        }
    }
    for (h, d) in inv.arrays.iter().zip(&program.arrays) {
        if h.is_empty() {
            return Err(Error::Empty {
                name: d.name.clone(),
                shape: h.shape().to_vec(),
            });
        }
    }
    if inv.steps > 0 {
        check_halo(program, first.shape())?;
    }
    for (a, (h, d)) in inv.arrays.iter().zip(&program.arrays).enumerate() {
        if !h.writable && written_physically(program, a) {
            return Err(Error::ReadOnly {
                name: d.name.clone(),
            });
        }
    }
    for i in 0..inv.arrays.len() {
        for j in i + 1..inv.arrays.len() {
            let (x, y) = (&inv.arrays[i], &inv.arrays[j]);
            let (x0, y0) = (x.ptr as usize, y.ptr as usize);
            if x0 < y0 + y.bytes() && y0 < x0 + x.bytes() {
                return Err(Error::Overlap {
                    a: program.arrays[i].name.clone(),
                    b: program.arrays[j].name.clone(),
                });
            }
        }
    }
    if inv.scalars.len() != program.scalars.len() {
        return internal(format!(
            "{} scalars passed, the program has {}",
            inv.scalars.len(),
            program.scalars.len()
        ));
    }
    for (v, d) in inv.scalars.iter().zip(&program.scalars) {
        if v.ty() != d.ty {
            return internal(format!(
                "scalar `{}` passed as {} but declared {}",
                d.name,
                scalar_type_name(v.ty()),
                scalar_type_name(d.ty)
            ));
        }
    }
    if inv.slices.len() != program.slices.len() {
        return internal(format!(
            "{} slices passed, the program has {}",
            inv.slices.len(),
            program.slices.len()
        ));
    }
    for (s, d) in inv.slices.iter().zip(&program.slices) {
        if s.elem != d.elem {
            return internal(format!(
                "slice `{}` holds {} but is declared {}",
                d.name,
                elem_name(s.elem),
                elem_name(d.elem)
            ));
        }
    }
    // The CPU closures are checked by the CPU executor: the CUDA backend does not need them.
    let counts = [
        (
            "reduction initial values",
            inv.reduction_init.len(),
            program.reductions.len(),
        ),
        ("reset values", inv.reset_values.len(), program.resets.len()),
        ("point indices", inv.points.len(), program.points.len()),
    ];
    for (what, got, want) in counts {
        if got != want {
            return internal(format!("{got} {what} passed, the program has {want}"));
        }
    }
    // The serial loop evaluates point statements only when it runs a step.
    if inv.steps > 0 {
        let shape = first.shape();
        for (idx, d) in inv.points.iter().zip(&program.points) {
            let inside = idx.len() == shape.len()
                && idx
                    .iter()
                    .zip(shape)
                    .all(|(&i, &n)| i >= 0 && (i as u64) < n as u64);
            if !inside {
                return Err(Error::PointOutOfBounds {
                    point: d.name.clone(),
                    index: idx.clone(),
                    shape: shape.to_vec(),
                });
            }
        }
    }
    Ok(())
}

/// Refuses arrays too small along some axis for the widest stencil to update a single point
/// (its nest is then empty; the serial loop would do nothing or panic on a `usize` underflow).
fn check_halo(program: &Program, shape: &[usize]) -> Result<(), Error> {
    for (axis, &extent) in shape.iter().enumerate() {
        for k in &program.kernels {
            let reach_lo = k
                .reads
                .iter()
                .filter_map(|r| r.lo.get(axis))
                .map(|&l| (-l).max(0) as usize)
                .max()
                .unwrap_or(0);
            let reach_hi = k
                .reads
                .iter()
                .filter_map(|r| r.hi.get(axis))
                .map(|&h| h.max(0) as usize)
                .max()
                .unwrap_or(0);
            let need = reach_lo + reach_hi + 1;
            if extent < need {
                return Err(Error::SmallerThanHalo {
                    axis,
                    extent,
                    need,
                    reach_lo,
                    reach_hi,
                });
            }
        }
    }
    Ok(())
}

/// Whether physical array `a` is ever written: it is written by name, or it trades places through
/// swaps with a name that is.
pub(crate) fn written_physically(program: &Program, a: usize) -> bool {
    // Arrays connected to `a` by swap statements (the orbit under the step's permutation).
    let mut group = vec![a];
    let mut changed = true;
    while changed {
        changed = false;
        for stage in &program.step {
            if let Stage::Swap(x, y) = *stage {
                for (p, q) in [(x, y), (y, x)] {
                    if group.contains(&p) && !group.contains(&q) {
                        group.push(q);
                        changed = true;
                    }
                }
            }
        }
    }
    group.iter().any(|&g| program.is_written(g))
}
