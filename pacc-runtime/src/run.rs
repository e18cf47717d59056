//! The session: the entry point generated wrappers call. Validates the call once, resolves the
//! options once (`crate::config`: the planner's options and the settings every layer below reads,
//! `crate::settled::Settled`), plans every segment, picks a backend and runs the plans through
//! the executor interface (`crate::exec::Executor`), checkpointing between segments, and reports.

use crate::binding::{bind, binding_at, unbind, written_physically};
use crate::checkpoint::{self, Found};
use crate::error::{CheckpointRef, Error, Progress};
use crate::exec::backend::{self, Backend};
use crate::exec::Executor;
use crate::invocation::{HostArray, Invocation, RunOutput};
use crate::options::Options;
use crate::plan::{self, Plan, PlanOptions};
use crate::program::Program;
use crate::report::Report;
use crate::settled::Settled;
use std::time::Instant;

pub use crate::binding::swap_replays;
pub use crate::config::{plan_options, DEFAULT_BLOCK_STEPS, DEFAULT_CHUNKS};
/// Checks the call against the program (see [`crate::validate::call`]). Touches no data.
pub use crate::validate::call as validate;

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
    let mut lap = Lap::start();
    opts.validate()?;
    // Loop bounds counted from scalars take this call's values: everything below sees
    // concrete ranges only.
    let resolved = crate::validate::resolve(program, &inv)?;
    let program: &Program = &resolved;
    crate::validate::call(program, &inv)?;
    settings(program, opts)?;
    too_many_chunks(program, opts, inv.arrays[0].shape()[0])?;
    let mut settled = crate::config::settle(program, opts);
    let free_march = settled.fuse.is_none() && !settled.cuda.march_fixed;
    let _early = backend::compile_early(opts.backend, program, || {
        crate::tune::first_forms(program, &inv, &settled, free_march)
    });
    let backend = backend::choose(opts.backend, Some(opts.source_of("backend")))?;
    // A process's first CUDA call loads the driver and creates the context here.
    lap.mark("device");
    let steps = inv.steps;
    let asked = asked_notes(program, opts, backend, steps);
    let (march, march_note) = match backend.probe().filter(|_| free_march) {
        Some(probe) => crate::tune::auto_march(probe, program, &inv, &settled),
        None => (None, None),
    };
    if let Some(t) = march {
        settled.cuda.march = t.into();
    }
    lap.mark("march tuning");
    let (mut popts, tune_note) = resolve_options(program, &inv, opts, &settled, backend)?;
    lap.mark("tuner");
    let swap_replays = swap_replays(program, steps);
    let (fuse, fuse_note) = fusion(program, &inv, &settled, &mut popts, backend)?;
    if let Some(probe) = backend.probe() {
        probe.release();
    }
    lap.mark("fusion weighing");
    if let Some((s, block)) = fuse {
        let (fused, inv) = fused_call(program, inv, s, block)?;
        let mut out = run_fused(&fused, inv, opts, &settled, &popts, backend)?;
        out.swap_replays = swap_replays;
        out.report.steps = steps;
        out.report
            .adjustments
            .extend(march_note.into_iter().chain(tune_note).chain(fuse_note));
        // The plan counts groups (launches); the report, like every other, counts time steps.
        let groups = out.report.block_steps;
        out.report.block_steps = groups * s;
        out.report.adjustments.push(format!(
            "fused: {s} steps per launch (`{}`), {groups} groups of {s} steps per block",
            fused.kernels[0].name
        ));
        lap.prepend_to(&mut out.report);
        out.report.wall_seconds = start.elapsed().as_secs_f64();
        return Ok(out);
    }
    let durable = Durable::prepare(program, &inv, opts)?;
    let first = durable.found.as_ref().map_or(0, |f| f.state.step);
    let mut notes: Vec<String> = (march_note.into_iter())
        .chain(tune_note)
        .chain(fuse_note)
        .chain(asked)
        .collect();
    if let Some(f) = &durable.found {
        notes.push(format!(
            "resumed from the checkpoint in `{}` at step {} of {steps}",
            f.at.dir.display(),
            f.at.step
        ));
    }
    let segments = Segments::plan(program, &inv, &popts, opts, steps - first, true)?;
    let planned = start.elapsed().as_secs_f64();
    lap.mark("planning");

    let mut cursor = Cursor::start(&inv, first);
    if let Some(f) = &durable.found {
        cursor.resume(f, &inv.arrays)?;
    }
    let Some(segments) = segments else {
        let mut report = empty_report(program, backend, inv.arrays[0].shape(), &popts);
        report.steps = steps;
        report.adjustments = notes;
        report.stages.setup = start.elapsed().as_secs_f64();
        report.wall_seconds = start.elapsed().as_secs_f64();
        return Ok(RunOutput {
            reductions: cursor.reductions,
            swap_replays,
            report,
        });
    };
    let session = Session {
        program,
        opts,
        settled: &settled,
        executor: backend.executor(),
        fingerprint: durable.fingerprint.as_ref(),
    };
    let (mut report, checkpoints) = session.run_segments(inv, &segments, &mut cursor)?;
    if let Some(c) = &opts.checkpoint {
        notes.push(format!(
            "checkpointed every {} blocks to `{}`: {} checkpoints, {:.3} s",
            c.every_blocks,
            c.dir.display(),
            checkpoints.0,
            checkpoints.1
        ));
    }
    report.steps = steps;
    report.stages.setup += planned;
    lap.prepend_to(&mut report);
    report.adjustments.extend(notes);
    report.wall_seconds = start.elapsed().as_secs_f64();
    Ok(RunOutput {
        reductions: cursor.reductions,
        swap_replays,
        report,
    })
}

/// The program and invocation of a run of `steps` steps per launch (`crate::fuse`), launching
/// the vector form with `block` where the tuner chose one.
fn fused_call<'a>(
    program: &Program,
    inv: Invocation<'a>,
    steps: usize,
    block: Option<[u32; 2]>,
) -> Result<(Program, Invocation<'a>), Error> {
    let fused = crate::fuse::program(program, steps).map_err(|e| Error::Internal(e.to_string()))?;
    let fused = match block {
        Some(b) => crate::fuse::with_vector_block(&fused, b),
        None => fused,
    };
    // SAFETY: the twins stay with the invocation's other arrays: `run_fused` hands them to one
    // executor run after another (its segments, which only reorder them), never two at once,
    // and nothing else sees them.
    let inv = unsafe { crate::fuse::invocation(&fused, inv, steps) };
    Ok((fused, inv))
}

/// A fused run (`crate::fuse`): `program` and `inv` prepared for it, one segment (fused runs do
/// not checkpoint), the options already resolved on the original program.
fn run_fused(
    program: &Program,
    inv: Invocation<'_>,
    opts: &Options,
    settled: &Settled,
    popts: &PlanOptions,
    backend: Backend,
) -> Result<RunOutput, Error> {
    let segments = Segments::plan(program, &inv, popts, opts, inv.steps, false)?;
    let mut cursor = Cursor::start(&inv, 0);
    let Some(segments) = segments else {
        let mut report = empty_report(program, backend, inv.arrays[0].shape(), popts);
        report.steps = inv.steps;
        return Ok(RunOutput {
            reductions: cursor.reductions,
            swap_replays: 0,
            report,
        });
    };
    let session = Session {
        program,
        opts,
        settled,
        executor: backend.executor(),
        fingerprint: None,
    };
    let (report, _) = session.run_segments(inv, &segments, &mut cursor)?;
    Ok(RunOutput {
        reductions: cursor.reductions,
        swap_replays: 0,
        report,
    })
}

/// Times the parts of a call's set-up, for [`Report::setup_parts`].
struct Lap {
    at: Instant,
    parts: Vec<(String, f64)>,
}

impl Lap {
    fn start() -> Lap {
        Lap {
            at: Instant::now(),
            parts: Vec::new(),
        }
    }

    /// Ends the part `name` here; parts that took no measurable time are left out.
    fn mark(&mut self, name: &str) {
        let secs = self.at.elapsed().as_secs_f64();
        self.at = Instant::now();
        if secs >= 1e-4 {
            self.parts.push((name.into(), secs));
        }
    }

    /// Puts the parts before those the executor reported (they ran first).
    fn prepend_to(self, report: &mut Report) {
        report.prepend_setup(self.parts);
    }
}

/// Refuses a chunk count or blocking depth of 0, naming where it came from: the option (by its
/// origin: code, environment, command line) or the directive's clause.
fn settings(program: &Program, opts: &Options) -> Result<(), Error> {
    let check = |setting: &'static str, option: Option<usize>, clause: Option<usize>, what| {
        let from = match (option, clause) {
            (Some(0), _) => opts.source_of(setting),
            (None, Some(0)) => format!("the `{setting} = 0` clause of `#[pacc::pipeline]`"),
            _ => return Ok(()),
        };
        Err(Error::Setting {
            setting,
            value: "0".into(),
            fix: format!("set {from} to 1 or more, or leave it unset for the default"),
            from,
            problem: format!("a run needs at least one {what}"),
        })
    };
    check("chunks", opts.chunks, program.default_chunks, "chunk")?;
    check(
        "block_steps",
        opts.block_steps,
        program.default_block_steps,
        "time step per block",
    )
}

/// Where a chunk or block-step setting came from: the option (by its origin) or the clause.
fn origin_of(opts: &Options, setting: &'static str) -> String {
    let option = match setting {
        "chunks" => opts.chunks,
        _ => opts.block_steps,
    };
    match option {
        Some(_) => opts.source_of(setting),
        None => format!("the `{setting}` clause of `#[pacc::pipeline]`"),
    }
}

/// Refuses more chunks than the outermost axis has planes, naming where the count came from
/// (the planner's own error cannot: it sees the number only).
fn too_many_chunks(program: &Program, opts: &Options, planes: usize) -> Result<(), Error> {
    let Some(chunks) = opts.chunks.or(program.default_chunks) else {
        return Ok(());
    };
    if chunks <= planes.max(1) {
        return Ok(());
    }
    let from = origin_of(opts, "chunks");
    Err(Error::Setting {
        setting: "chunks",
        value: chunks.to_string(),
        problem: format!("{chunks} chunks are more than the {planes} planes of the outermost axis"),
        fix: format!("set {from} to at most {planes}, or leave it unset for the tuner's choice"),
        from,
    })
}

/// Notes on settings the call honours differently from how they read: more block steps than
/// the call has steps, and a trace asked of a backend that writes none.
fn asked_notes(program: &Program, opts: &Options, backend: Backend, steps: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let k = opts.block_steps.or(program.default_block_steps);
    if let Some(k) = k.filter(|&k| steps > 0 && k > steps) {
        notes.push(format!(
            "block_steps {k} ({}) is more than the call's {steps} steps: all of them run in one \
             block",
            origin_of(opts, "block_steps")
        ));
    }
    if let (Some(t), Backend::Cpu(_)) = (&opts.cuda.trace, backend) {
        notes.push(format!(
            "no trace written to `{}`: a trace shows the CUDA streams, and this run is on the \
             CPU backend",
            t.display()
        ));
    }
    notes
}

/// The planner options of the call: precedence (`crate::config`), the compression rates, what
/// the tuner picks where neither the options nor the directive fix it, and whether compression
/// pays (CUDA backend only); the tuner's notes.
fn resolve_options(
    program: &Program,
    inv: &Invocation<'_>,
    opts: &Options,
    settled: &Settled,
    backend: Backend,
) -> Result<(PlanOptions, Vec<String>), Error> {
    let popts = crate::config::resolve(program, inv.arrays[0].shape(), inv.steps, opts)?;
    let Some(probe) = backend.probe() else {
        return Ok((popts, Vec::new()));
    };
    let (mut popts, note) = crate::tune::auto_plan_options(probe, program, inv, settled, popts);
    let decision = crate::tune::auto_compression(probe, program, inv, settled, &mut popts);
    Ok((popts, note.into_iter().chain(decision).collect()))
}

/// A fused run's group: steps per launch, and the vector form's block where the tuner chose
/// one (`None`: the translator's default).
type Group = (usize, Option<[u32; 2]>);

/// The group of the run (`None`: single steps) and a note for the report: the count the
/// caller forced, refused with the reason where the call cannot run it, with `popts`' block
/// steps counted in groups; else, on CUDA, the tuner's pick, with its plan options.
fn fusion(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    popts: &mut PlanOptions,
    backend: Backend,
) -> Result<(Option<Group>, Option<String>), Error> {
    if let Some(s) = settled.fuse {
        crate::fuse::in_groups(program, inv.steps, s, settled, popts)?;
        return Ok((Some((s, None)), None));
    }
    let (picked, note) = match backend.probe() {
        Some(probe) => crate::tune::fusion::auto_fuse(probe, program, inv, settled, popts),
        None => (None, None),
    };
    Ok((
        picked.map(|p| {
            *popts = p.popts;
            (p.steps, p.block)
        }),
        note,
    ))
}

/// What a checkpointing or resuming call must agree with, and the checkpoint it resumes from:
/// checked against the call and verified, nothing loaded yet.
struct Durable {
    fingerprint: Option<checkpoint::Fingerprint>,
    found: Option<Found>,
}

impl Durable {
    fn prepare(program: &Program, inv: &Invocation<'_>, opts: &Options) -> Result<Durable, Error> {
        let durable = opts.checkpoint.is_some() || opts.resume.is_some();
        let fingerprint = durable.then(|| {
            let saved = (0..program.arrays.len())
                .map(|a| written_physically(program, a))
                .collect();
            checkpoint::fingerprint(program, inv, saved)
        });
        let found = match (&opts.resume, &fingerprint) {
            (Some(r), Some(fp)) if inv.steps > 0 => checkpoint::find(r, program, inv, fp)?,
            _ => None,
        };
        if let (Some(c), true) = (&opts.checkpoint, inv.steps > 0) {
            checkpoint::prepare_dir(c)?;
        }
        Ok(Durable { fingerprint, found })
    }
}

/// The plans of a call's segments, made before any data is touched: full segments share one
/// plan, the last one may be shorter (with the same chunks, so reductions add up in the same
/// order). Segments are checkpoint intervals, or else bound the plan of a long run
/// ([`PlanOptions::segment_steps`]).
struct Segments {
    full: Plan,
    tail: Option<Plan>,
    len: usize,
}

impl Segments {
    /// `None` when no step remains. `split`: in segments ([`PlanOptions::segment_steps`]);
    /// else one (a fused run, which neither checkpoints nor runs long enough to need them).
    fn plan(
        program: &Program,
        inv: &Invocation<'_>,
        popts: &PlanOptions,
        opts: &Options,
        remaining: usize,
        split: bool,
    ) -> Result<Option<Segments>, Error> {
        if remaining == 0 {
            return Ok(None);
        }
        let every = opts.checkpoint.as_ref().map(|c| c.every_blocks);
        let len = match split {
            true => popts.segment_steps(remaining, every),
            false => remaining,
        };
        let shape = inv.arrays[0].shape();
        let points: Vec<usize> = inv.points.iter().map(|p| p[0] as usize).collect();
        let full = plan::build(program, shape, len, &points, popts)?;
        let tail = match remaining % len {
            0 => None,
            tail => {
                let o = PlanOptions {
                    chunks: full.chunks,
                    ..popts.clone()
                };
                Some(plan::build(program, shape, tail, &points, &o)?)
            }
        };
        Ok(Some(Segments { full, tail, len }))
    }

    /// The plan of the segment that starts with `left` steps to go.
    fn next(&self, left: usize) -> &Plan {
        match &self.tail {
            Some(t) if left < self.len => t,
            _ => &self.full,
        }
    }
}

/// How far the call got: steps (from the call's first step) and blocks (of this call) done,
/// the reductions so far, the last checkpoint written or resumed from.
struct Cursor {
    done: usize,
    blocks: usize,
    reductions: Vec<f64>,
    checkpoint: Option<CheckpointRef>,
}

impl Cursor {
    fn start(inv: &Invocation<'_>, first: usize) -> Cursor {
        Cursor {
            done: first,
            blocks: 0,
            reductions: inv.reduction_init.clone(),
            checkpoint: None,
        }
    }

    /// Loads the checkpoint into the arrays: from here on, the arrays are written.
    fn resume(&mut self, found: &Found, arrays: &[HostArray]) -> Result<(), Error> {
        checkpoint::load(found, arrays).map_err(|e| Error::Failed {
            cause: Box::new(e),
            progress: Progress {
                steps_complete: 0,
                blocks_complete: 0,
                torn: true,
                checkpoint: None,
            },
        })?;
        self.reductions = found.reductions();
        self.checkpoint = Some(found.at.clone());
        Ok(())
    }

    /// An error of the segment that starts here, as the caller sees it: progress counted over
    /// the whole call, with the last checkpoint. Errors of a segment that found the arrays
    /// already written (or loaded from a checkpoint) say so.
    fn in_context(&self, e: Error) -> Error {
        match e {
            Error::Failed {
                cause,
                mut progress,
            } => {
                progress.steps_complete += self.done;
                progress.blocks_complete += self.blocks;
                progress.checkpoint = self.checkpoint.clone();
                Error::Failed { cause, progress }
            }
            e if self.done > 0 => self.failed(e),
            e => e,
        }
    }

    /// `cause` with the progress of the segments done so far (all complete, none torn).
    fn failed(&self, cause: Error) -> Error {
        Error::Failed {
            cause: Box::new(cause),
            progress: Progress {
                steps_complete: self.done,
                blocks_complete: self.blocks,
                torn: false,
                checkpoint: self.checkpoint.clone(),
            },
        }
    }
}

/// What the segments of one call share.
struct Session<'a> {
    program: &'a Program,
    opts: &'a Options,
    settled: &'a Settled,
    executor: Box<dyn Executor>,
    fingerprint: Option<&'a checkpoint::Fingerprint>,
}

impl Session<'_> {
    /// Runs the segments from the cursor to the end of the call, checkpointing between them;
    /// returns the merged report and (checkpoints written, seconds spent writing them).
    fn run_segments(
        &self,
        mut inv: Invocation<'_>,
        segments: &Segments,
        cursor: &mut Cursor,
    ) -> Result<(Report, (usize, f64)), Error> {
        let (steps, t0) = (inv.steps, inv.t0);
        // In argument order between segments (checkpoints save them so), bound to the names
        // while one runs: moved, not copied (a description is not `Copy`).
        let mut user_arrays = std::mem::take(&mut inv.arrays);
        let mut report: Option<Report> = None;
        let mut checkpoints = (0usize, 0.0f64);
        while cursor.done < steps {
            let plan = segments.next(steps - cursor.done);
            // The segment's plan starts from the identity binding: hand it the arrays the names
            // refer to after `done` steps.
            let binding = binding_at(self.program, cursor.done);
            inv.arrays = bind(user_arrays, &binding);
            inv.t0 = t0 + cursor.done as i64;
            inv.steps = plan.steps;
            inv.reduction_init = cursor.reductions.clone();
            // Progress counts over the whole call, not the segment's plan.
            let mut segment = self.settled.clone();
            segment.on_progress =
                (self.settled.on_progress.as_ref()).map(|p| p.segment(cursor.done, steps));
            let out = self
                .executor
                .execute(self.program, plan, &inv, &segment)
                .map_err(|e| cursor.in_context(e))?;
            user_arrays = unbind(std::mem::take(&mut inv.arrays), &binding);
            cursor.reductions = out.reductions;
            match &mut report {
                None => report = Some(out.report),
                Some(total) => total.absorb(out.report),
            }
            cursor.done += plan.steps;
            cursor.blocks += plan.blocks.len();
            if cursor.done < steps {
                let t = Instant::now();
                if self.checkpoint(&user_arrays, t0, steps, plan, cursor)? {
                    checkpoints.0 += 1;
                    checkpoints.1 += t.elapsed().as_secs_f64();
                }
            }
        }
        let report = report.ok_or_else(|| Error::Internal("no segment ran".into()))?;
        Ok((report, checkpoints))
    }

    /// Writes a checkpoint after the segment that ended at the cursor, when the call
    /// checkpoints; returns whether it did.
    fn checkpoint(
        &self,
        arrays: &[HostArray],
        t0: i64,
        steps_total: usize,
        plan: &Plan,
        cursor: &mut Cursor,
    ) -> Result<bool, Error> {
        let (Some(c), Some(fp)) = (&self.opts.checkpoint, self.fingerprint) else {
            return Ok(false);
        };
        let at = checkpoint::At {
            t0,
            step: cursor.done,
            steps_total,
            block_steps: plan.block_steps,
            reductions: &cursor.reductions,
        };
        match checkpoint::write(c, self.program, arrays, fp, at) {
            Ok(r) => cursor.checkpoint = Some(r),
            Err(e) => return Err(cursor.failed(e)),
        }
        Ok(true)
    }
}

fn cpu_device() -> String {
    format!("CPU, {} rayon threads", rayon::current_num_threads())
}

/// The device a backend runs on, as reports name it.
fn device_of(backend: Backend) -> Option<String> {
    match backend {
        Backend::Cpu(_) => Some(cpu_device()),
        #[cfg(feature = "cuda")]
        Backend::Cuda => crate::exec::cuda::available().ok().map(|d| d.to_string()),
        #[cfg(not(feature = "cuda"))]
        Backend::Cuda => None,
    }
}

fn empty_report(
    program: &Program,
    backend: Backend,
    shape: &[usize],
    popts: &PlanOptions,
) -> Report {
    Report {
        scheme: popts.scheme,
        shape: shape.to_vec(),
        chunks: popts.chunks,
        requested_chunks: popts.chunks,
        block_steps: popts.block_steps,
        ..Report::named(program, backend.name(), device_of(backend))
    }
}
