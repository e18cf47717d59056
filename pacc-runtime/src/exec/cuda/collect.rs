//! Phase 3 of a CUDA run, after every stream has drained: the codec's error flags, the ops'
//! event times (stage totals and the timeline), the reductions read back and combined in a
//! fixed order, the report, and the trace file if asked for.

use super::device::DeviceInfo;
use super::driver;
use super::memory::PinnedHost;
use super::prepare::Resources;
use super::trace::write_trace;
use crate::error::Error;
use crate::invocation::Invocation;
use crate::plan::{OpKind, Plan};
use crate::program::Program;
use crate::report::{Report, StageTimes, TraceEvent};
use crate::settled::Settled;
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// Per-op event times: stage totals and the timeline (from the run's origin event).
///
/// # Safety
/// Every op's events must have been recorded and the streams synchronized.
pub(super) unsafe fn timings(
    program: &Program,
    plan: &Plan,
    res: &Resources,
) -> Result<(StageTimes, Vec<TraceEvent>), Error> {
    let mut stages = StageTimes::default();
    let mut timeline = Vec::with_capacity(plan.ops.len());
    let mut span = None;
    for (i, op) in plan.ops.iter().enumerate() {
        let start_ms = driver::event_elapsed_ms(res.origin(), res.start(i))?;
        let dur_ms = driver::event_elapsed_ms(res.start(i), res.end(i))?;
        stages.add_op(&op.kind, dur_ms as f64 / 1e3);
        if op.kind.computes() {
            let (s, e) = (start_ms as f64 / 1e3, (start_ms + dur_ms) as f64 / 1e3);
            span = Some(span.map_or((s, e), |(a, b): (f64, f64)| (a.min(s), b.max(e))));
        }
        let name = op.kind.describe(program);
        timeline.push(TraceEvent {
            name,
            stream: op.stream,
            start_us: start_ms as f64 * 1e3,
            dur_us: dur_ms as f64 * 1e3,
        });
    }
    stages.stepping = span.map_or(0.0, |(a, b)| b - a);
    Ok((stages, timeline))
}

/// The reduction result slots, read back.
pub(super) fn read_slots(ctx: &Arc<CudaContext>, res: &Resources) -> Result<Vec<f64>, Error> {
    let n = res.nslots;
    let mut vals = vec![0f64; n];
    if n > 0 {
        // Through pinned memory, for the same reason as the slices' upload (prepare.rs).
        let bounce = PinnedHost::new(ctx, n * 8, "reduction bounce buffer")?;
        // SAFETY: both hold n doubles; the streams are synchronized.
        unsafe {
            driver::copy_dtoh(
                bounce.ptr,
                res.results.ptr,
                n * 8,
                "copying reduction results",
            )?;
            std::ptr::copy_nonoverlapping(bounce.ptr as *const f64, vals.as_mut_ptr(), n);
        }
    }
    Ok(vals)
}

/// §4: partials combined in chunk order per (step, kernel), then the steps walked in order.
pub(super) fn combine_reductions(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    op_slot: &[usize],
    vals: &[f64],
) -> Vec<f64> {
    use std::collections::BTreeMap;
    // (step, kernel) -> [(chunk, op index)]
    let mut by: BTreeMap<(usize, usize), Vec<(usize, usize)>> = BTreeMap::new();
    for (i, op) in plan.ops.iter().enumerate() {
        if let OpKind::Kernel { kernel, step, .. } = &op.kind {
            if op_slot[i] != usize::MAX {
                by.entry((*step, *kernel)).or_default().push((op.chunk, i));
            }
        }
    }
    for ops in by.values_mut() {
        ops.sort();
    }
    crate::exec::reduce::walk_steps(program, inv, plan.steps, |step, k| {
        let n = program.kernels[k].reductions.len();
        by.get(&(step, k))
            .map(|ops| {
                ops.iter()
                    .map(|&(_, i)| &vals[op_slot[i]..op_slot[i] + n])
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// The run's report (`notes` after the plan's own adjustments); writes the trace if
/// `settled.cuda.trace` asks for one.
pub(super) fn report(
    program: &Program,
    plan: &Plan,
    info: &DeviceInfo,
    settled: &Settled,
    (stages, timeline): (StageTimes, Vec<TraceEvent>),
    notes: Vec<String>,
    wall_seconds: f64,
) -> Report {
    let mut report = Report::of_plan(program, "cuda", Some(info.name.clone()), plan);
    report.adjustments.extend(notes);
    (report.wall_seconds, report.stages, report.timeline) = (wall_seconds, stages, timeline);
    if let Some(path) = &settled.cuda.trace {
        // The run has already updated the arrays: a trace that cannot be written is a note,
        // not an error.
        if let Err(e) = write_trace(path, &program.name, &report.timeline) {
            report.adjustments.push(format!(
                "could not write the trace to {}: {e}",
                path.display()
            ));
        }
    }
    report
}
