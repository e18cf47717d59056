//! The CPU backend: runs a plan's operations in submission order (or, for tests, in a seeded
//! random order the dependencies allow), each kernel parallel over planes with rayon.
//!
//! Device buffer sets and staging buffers are ordinary host allocations with the geometry the
//! plan gives (`buffer_sets` sets x every program array x `buffer_planes` planes). They start
//! filled with NaN, so a plane the plan forgot to transfer shows up as a wrong result instead of
//! a plausible zero. Transfers are plane-range copies (global plane `p` <-> buffer slot
//! `p - base`); kernels call the program's CPU closures through [`KernelFrame`].

use crate::codec::ValuesMut;
use crate::error::{CompressError, Error, Result};
use crate::exec::{reduction_identity, BufView, Executed, Executor, KernelFrame, Peers, Tracker};
use crate::fault::{self, Site};
use crate::invocation::Invocation;
use crate::plan::{HostSide, Op, OpKind, Plan};
use crate::program::{Elem, Program, ReduceOp};
use crate::progress::{OnProgress, StepCounter};
use crate::report::{Report, StageTimes};
use crate::settled::Settled;
use crate::validate;
use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;

/// In which order the executor runs the plan's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Plan (submission) order.
    Submission,
    /// A random topological order, seeded: each operation still runs after its `deps` and after
    /// the previous operation of its stream, but nothing else is kept in order.
    Shuffled(u64),
}

/// What an execution produced besides the host arrays it updated in place.
#[derive(Clone, Debug)]
pub struct ExecOutput {
    /// Final value of each reduction (f64 holding the reduction's own type exactly).
    pub reductions: Vec<f64>,
    /// Seconds spent per kind of operation (`setup` is buffer allocation).
    pub stages: StageTimes,
}

/// The CPU backend behind the executor interface ([`crate::exec::Executor`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuExecutor {
    pub order: Order,
}

impl Executor for CpuExecutor {
    fn name(&self) -> &'static str {
        match self.order {
            Order::Submission => "cpu",
            Order::Shuffled(_) => "shuffled",
        }
    }

    fn execute_with(
        &self,
        program: &Program,
        plan: &Plan,
        inv: &Invocation<'_>,
        settled: &Settled,
        peers: Option<&dyn Peers>,
    ) -> Result<Executed> {
        let start = Instant::now();
        let progress = settled.on_progress.as_ref();
        let out = run_plan(program, plan, inv, self.order, progress, peers)?;
        let device = format!("CPU, {} rayon threads", rayon::current_num_threads());
        let mut report = Report::of_plan(program, self.name(), Some(device), plan);
        report.wall_seconds = start.elapsed().as_secs_f64();
        report.stages = out.stages;
        Ok(Executed {
            reductions: out.reductions,
            report,
        })
    }
}

/// Runs `plan` for `program` on the CPU. Host arrays of `inv` are read and written in place.
///
/// The user's arrays are written only by `DtoH` (to the user side) and `StageOut` operations.
/// Every operation first passes the fault hook ([`crate::fault::hit`]); an error after the first
/// write-back comes back as [`Error::Failed`] saying which blocks are complete.
///
/// The call and the plan are checked first ([`crate::validate::execution`], as on every
/// backend), so a malformed plan is an [`Error::Internal`] rather than an out-of-bounds access.
pub fn execute(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    order: Order,
) -> Result<ExecOutput> {
    execute_with_progress(program, plan, inv, order, None)
}

/// [`execute`], calling `progress` as each block's kernels complete (see [`crate::progress`]).
pub fn execute_with_progress(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    order: Order,
    progress: Option<&OnProgress>,
) -> Result<ExecOutput> {
    run_plan(program, plan, inv, order, progress, None)
}

/// [`execute_with_progress`] with the peers that carry the plan's halo exchanges, if it has any.
fn run_plan(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    order: Order,
    progress: Option<&OnProgress>,
    peers: Option<&dyn Peers>,
) -> Result<ExecOutput> {
    let setup = Instant::now();
    validate::execution(program, plan, inv)?;
    closures_match(program, inv)?;
    fault::hit(Site::Alloc, || {
        format!(
            "{} buffer sets of {} planes",
            plan.buffer_sets, plan.buffer_planes
        )
    })?;
    let mut mem = Memory::new(program, plan);
    let order = match order {
        Order::Submission => (0..plan.ops.len()).collect(),
        Order::Shuffled(seed) => shuffled_order(&plan.ops, seed),
    };
    let mut stages = StageTimes {
        setup: setup.elapsed().as_secs_f64(),
        ..StageTimes::default()
    };
    let mut partials = Partials::new(program, plan.steps);
    let mut tracker = Tracker::new(plan);
    let mut counter = StepCounter::new(plan, progress);
    for i in order {
        let op = &plan.ops[i];
        fault::hit(Site::of(&op.kind), || describe(i, op)).map_err(|e| tracker.fail(e.into()))?;
        let start = Instant::now();
        run_op(program, plan, inv, &mut mem, op, &mut partials, peers)
            .map_err(|e| tracker.fail(e))?;
        stages.add_op(&op.kind, start.elapsed().as_secs_f64());
        tracker.finished(plan, i);
        counter.finished(plan, i);
    }
    Ok(ExecOutput {
        reductions: partials.finish(program, inv, plan.steps),
        stages,
    })
}

/// The program's CPU closures: one per kernel and point statement (what only this backend
/// calls, so the shared checks leave it out).
fn closures_match(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    // A fused run's kernel runs the original nests' closures.
    let nests = (program.fusion.active.as_ref()).map_or(program.kernels.len(), |a| a.nests.len());
    if inv.cpu.kernels.len() != nests || inv.cpu.points.len() != program.points.len() {
        return Err(Error::Internal(
            "the invocation's CPU closures do not match the program's kernels and point statements"
                .into(),
        ));
    }
    Ok(())
}

/// An operation for error messages: index, kind, block, chunk.
fn describe(i: usize, op: &Op) -> String {
    format!(
        "plan operation {i}, {} of block {} chunk {}",
        op.kind.label(),
        op.block,
        op.chunk
    )
}

/// Runs one operation. SAFETY of the copies here and in the helpers: `crate::validate` checked
/// that every plane range lies inside the host array and inside the buffer window
/// `base..base + buffer_planes`, and that host destinations are writable. Operations run one at
/// a time, so nothing else accesses these bytes concurrently.
fn run_op(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    mem: &mut Memory,
    op: &Op,
    partials: &mut Partials,
    peers: Option<&dyn Peers>,
) -> Result<()> {
    match &op.kind {
        OpKind::HtoD {
            array,
            set,
            base,
            planes,
            from: HostSide::Compressed,
        } => mem.move_compressed(plan, *array, *set, *base, planes, true),
        OpKind::DtoH {
            array,
            set,
            base,
            planes,
            to: HostSide::Compressed,
        } => mem.move_compressed(plan, *array, *set, *base, planes, false),
        OpKind::Encode {
            array,
            set,
            base,
            planes,
        } => mem.codec(program, plan, *array, *set, *base, planes, true)?,
        OpKind::Decode {
            array,
            set,
            base,
            planes,
        } => mem.codec(program, plan, *array, *set, *base, planes, false)?,
        OpKind::Kernel { .. } => run_kernel(program, plan, inv, mem, op, partials),
        OpKind::Point {
            point,
            set,
            base,
            step,
            args,
            ring_base,
            ..
        } => {
            let views = mem.views(program, plan, (*set, *base, *ring_base), args);
            let frame = KernelFrame {
                arrays: &views,
                t: program.time_of(inv.t0, *step),
                shape: &plan.shape,
            };
            (inv.cpu.points[*point])(&frame);
        }
        OpKind::Exchange {
            set,
            base,
            arrays,
            links,
            ..
        } => {
            let peers = peers.ok_or_else(crate::exec::peers::missing)?;
            let transfers = crate::exec::peers::transfers(arrays, links, |a, p| {
                let pb = plan.plane_len * program.arrays[a].elem.size();
                (mem.device(*set, a) as u64 + ((p - base) * pb) as u64, pb)
            });
            // SAFETY: `validate` checked the planes against the buffer window; the sent
            // (owned) and received (halo) planes are disjoint, and operations run one at a time.
            unsafe { peers.exchange_host(&transfers) }?;
        }
        _ => copy_op(program, plan, inv, mem, &op.kind),
    }
    Ok(())
}

/// An uncompressed transfer or copy: HtoD, DtoH, StageIn, StageOut, DtoD.
fn copy_op(program: &Program, plan: &Plan, inv: &Invocation<'_>, mem: &mut Memory, kind: &OpKind) {
    let pb = |a: usize| plan.plane_len * program.arrays[a].elem.size();
    let host = |a: usize| inv.arrays[a].ptr;
    match kind {
        OpKind::HtoD {
            array,
            set,
            base,
            planes,
            from,
        } => {
            let (src, sbase) = match from {
                HostSide::User => (host(*array), 0),
                _ => (mem.staging(*set, *array), *base),
            };
            let dst = mem.device(*set, *array);
            unsafe { copy_planes(src, sbase, dst, *base, planes, pb(*array)) };
        }
        OpKind::DtoH {
            array,
            set,
            base,
            planes,
            to,
        } => {
            let (dst, dbase) = match to {
                HostSide::User => (host(*array), 0),
                _ => (mem.staging(*set, *array), *base),
            };
            let src = mem.device(*set, *array);
            unsafe { copy_planes(src, *base, dst, dbase, planes, pb(*array)) };
        }
        OpKind::StageIn {
            array,
            set,
            base,
            planes,
        } => {
            let dst = mem.staging(*set, *array);
            unsafe { copy_planes(host(*array), 0, dst, *base, planes, pb(*array)) };
        }
        OpKind::StageOut {
            array,
            set,
            base,
            planes,
        } => {
            let src = mem.staging(*set, *array);
            unsafe { copy_planes(src, *base, host(*array), 0, planes, pb(*array)) };
        }
        OpKind::DtoD {
            array,
            from_set,
            from_base,
            to_set,
            to_base,
            planes,
        } => {
            let src = mem.device(*from_set, *array);
            let dst = mem.device(*to_set, *array);
            unsafe { copy_planes(src, *from_base, dst, *to_base, planes, pb(*array)) };
        }
        _ => unreachable!("run_op handles compressed transfers, codecs, kernels and points"),
    }
}

/// Points of a kernel operation from which its planes are computed in parallel.
const PARALLEL_POINTS: usize = 1 << 15;

/// A kernel over its planes, in parallel, keeping the reduction partials of the planes the chunk
/// owns.
fn run_kernel(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    mem: &mut Memory,
    op: &Op,
    partials: &mut Partials,
) {
    let OpKind::Kernel {
        kernel,
        set,
        base,
        step,
        planes,
        owned,
        args,
        ring_base,
    } = &op.kind
    else {
        return;
    };
    let views = mem.views(program, plan, (*set, *base, *ring_base), args);
    if let Some(active) = &program.fusion.active {
        let (at, chunk) = ((*step, planes.clone(), owned.clone()), op.chunk);
        let acc = super::fused::run(program, plan, inv, active, &views, at);
        if !acc.is_empty() {
            partials.add(*step, *kernel, chunk, owned.start, acc);
        }
        return;
    }
    let frame = KernelFrame {
        arrays: &views,
        t: program.time_of(inv.t0, *step),
        shape: &plan.shape,
    };
    let decl = &program.kernels[*kernel];
    let ops: Vec<(ReduceOp, Elem)> = decl
        .reductions
        .iter()
        .map(|&r| (program.reductions[r].op, program.reductions[r].elem))
        .collect();
    let f = &inv.cpu.kernels[*kernel];
    let plane = |p: usize| {
        let mut red: Vec<f64> = ops.iter().map(|&(o, _)| reduction_identity(o)).collect();
        f(&frame, p, &mut red);
        red
    };
    // Handing a few thousand points to the pool costs more than computing them: a long run on
    // a small grid spent 80% of its time waking threads.
    let per_plane: Vec<Vec<f64>> = match planes.len() * plan.plane_len < PARALLEL_POINTS {
        true => planes.clone().map(plane).collect(),
        false => planes.clone().into_par_iter().map(plane).collect(),
    };
    if ops.is_empty() {
        return;
    }
    let own = intersect(owned, planes);
    if !own.is_empty() {
        let mut acc: Vec<f64> = ops.iter().map(|&(o, _)| reduction_identity(o)).collect();
        for p in own {
            let red = &per_plane[p - planes.start];
            for (j, &(o, e)) in ops.iter().enumerate() {
                acc[j] = combine(o, e, acc[j], red[j]);
            }
        }
        partials.add(*step, *kernel, op.chunk, owned.start, acc);
    }
}

/// Copies planes `planes` (global) from a buffer whose slot 0 holds plane `src_base` to one whose
/// slot 0 holds `dst_base`.
///
/// # Safety
/// Both ranges must lie inside their allocations and `dst` must be writable.
unsafe fn copy_planes(
    src: *const u8,
    src_base: usize,
    dst: *mut u8,
    dst_base: usize,
    planes: &Range<usize>,
    plane_bytes: usize,
) {
    if planes.is_empty() {
        return;
    }
    let n = planes.len() * plane_bytes;
    let s = src.add((planes.start - src_base) * plane_bytes);
    let d = dst.add((planes.start - dst_base) * plane_bytes);
    std::ptr::copy(s, d, n);
}

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.max(b.start)..a.end.min(b.end).max(a.start.max(b.start))
}

/// Combines two values of a reduction in its own type.
pub use super::reduce::combine;

/// Device buffer sets and staging buffers, allocated once per run.
struct Memory {
    narrays: usize,
    /// `[set * narrays + array]`, the ring as the set after the last (`Plan::has_buffer` says
    /// which exist; the others are empty); backing storage, never touched except through
    /// `dev_ptr`.
    _dev: Vec<Vec<u64>>,
    dev_ptr: Vec<*mut u8>,
    _stage: Vec<Vec<u64>>,
    stage_ptr: Vec<*mut u8>,
    /// Compression: the host's compressed copy of each array (empty when not compressed).
    host_comp: Vec<Vec<u8>>,
    /// Compression: `[set * narrays + array]`, the compressed staging area on the "device".
    dev_comp: Vec<Vec<u8>>,
}

impl Memory {
    fn new(program: &Program, plan: &Plan) -> Memory {
        let narrays = program.arrays.len();
        let alloc = |sets: usize| -> Vec<Vec<u64>> {
            (0..sets * narrays)
                .map(|i| {
                    let (set, a) = (i / narrays, i % narrays);
                    let planes = if plan.has_buffer(set, a) {
                        plan.buffer_len(set)
                    } else {
                        0
                    };
                    nan_buffer(program.arrays[a].elem, planes * plan.plane_len)
                })
                .collect()
        };
        let mut dev = alloc(plan.buffer_sets + usize::from(plan.ring.is_some()));
        let uses_staging = plan.ops.iter().any(|op| {
            matches!(
                op.kind,
                OpKind::StageIn { .. }
                    | OpKind::StageOut { .. }
                    | OpKind::HtoD {
                        from: HostSide::Staging,
                        ..
                    }
                    | OpKind::DtoH {
                        to: HostSide::Staging,
                        ..
                    }
            )
        });
        let mut stage = if uses_staging {
            alloc(plan.buffer_sets)
        } else {
            Vec::new()
        };
        let dev_ptr = dev.iter_mut().map(|b| b.as_mut_ptr() as *mut u8).collect();
        let stage_ptr = stage
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut u8)
            .collect();
        // Filled with 0xFF: bytes the plan forgot to write decode to garbage, not to zeros.
        let host_comp = (0..narrays)
            .map(|a| vec![0xFF; plan.host_compressed_bytes(a) as usize])
            .collect();
        let dev_comp = (0..plan.buffer_sets * narrays)
            .map(|i| vec![0xFF; plan.staging_compressed_bytes(i % narrays) as usize])
            .collect();
        Memory {
            narrays,
            _dev: dev,
            dev_ptr,
            _stage: stage,
            stage_ptr,
            host_comp,
            dev_comp,
        }
    }

    /// A compressed transfer: the bytes of `planes` between the host's compressed copy and the
    /// set's compressed staging area (slot = slab index minus the base's).
    fn move_compressed(
        &mut self,
        plan: &Plan,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        htod: bool,
    ) {
        let Some(c) = plan.compressed(array) else {
            return;
        };
        let n = c.bytes(planes);
        let h = c.offset(planes.start);
        let d = c.offset(planes.start - base);
        let stage = &mut self.dev_comp[set * self.narrays + array];
        let host = &mut self.host_comp[array];
        if htod {
            stage[d..d + n].copy_from_slice(&host[h..h + n]);
        } else {
            host[h..h + n].copy_from_slice(&stage[d..d + n]);
        }
    }

    /// Encodes `planes` of the set's buffer into its compressed staging area, or decodes them
    /// back.
    #[allow(clippy::too_many_arguments)]
    fn codec(
        &mut self,
        program: &Program,
        plan: &Plan,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        encode: bool,
    ) -> Result<()> {
        let Some(c) = plan.compressed(array).copied() else {
            return Ok(());
        };
        let mut shape = plan.shape.clone();
        shape[0] = planes.len();
        let (off, n) = (
            (planes.start - base) * plan.plane_len,
            planes.len() * plan.plane_len,
        );
        let d = c.offset(planes.start - base);
        let buf = self.device(set, array);
        let stage = &mut self.dev_comp[set * self.narrays + array][d..d + c.bytes(planes)];
        let fail = |message: String| {
            Error::Compress(CompressError::Codec {
                array: program.arrays[array].name.clone(),
                message,
            })
        };
        // SAFETY: `crate::validate` verified that `planes` lies in the buffer window at `base`; the
        // buffer holds `buffer_planes * plane_len` elements of the array's type, 8-byte aligned.
        let values = match program.arrays[array].elem {
            Elem::F32 => ValuesMut::F32(unsafe {
                std::slice::from_raw_parts_mut((buf as *mut f32).add(off), n)
            }),
            Elem::F64 => ValuesMut::F64(unsafe {
                std::slice::from_raw_parts_mut((buf as *mut f64).add(off), n)
            }),
        };
        // The codec refuses NaN and infinite values (`ZfpError::NonFinite`), as the CUDA
        // kernels flag them.
        let codec = c.codec.get();
        if encode {
            codec.encode(values.as_values(), &shape, c.rate, stage)
        } else {
            codec.decode(stage, &shape, c.rate, values)
        }
        .map_err(|e| fail(format!("planes {planes:?}: {e}")))
    }

    fn device(&self, set: usize, array: usize) -> *mut u8 {
        self.dev_ptr[set * self.narrays + array]
    }

    fn staging(&self, set: usize, array: usize) -> *mut u8 {
        self.stage_ptr[set * self.narrays + array]
    }

    /// Views of the buffers a kernel or point statement of set `set` at `base` works on: the
    /// ring's arrays from the ring, offset so that plane `base` is the view's first (contract:
    /// `validate` checked `ring_base <= base` and the planes against both windows).
    fn views(
        &self,
        program: &Program,
        plan: &Plan,
        (set, base, ring_base): (usize, usize, Option<usize>),
        args: &[usize],
    ) -> Vec<BufView<'_>> {
        let mut inner = [1usize; 2];
        inner[..plan.shape.len() - 1].copy_from_slice(&plan.shape[1..]);
        let left = plan.shape[0].saturating_sub(base);
        args.iter()
            .map(|&phys| {
                let elem = program.arrays[phys].elem;
                let (ptr, planes) = match (&plan.ring, ring_base) {
                    (Some(r), Some(rb)) if plan.in_ring(phys) => {
                        let skip = base.saturating_sub(rb).min(r.planes);
                        let offset = skip * plan.plane_len * elem.size();
                        // SAFETY: at most one past the end of the ring's buffer of `r.planes`
                        // planes (and within it whenever the op has planes to touch).
                        let ptr = unsafe { self.device(r.set, phys).add(offset) };
                        (ptr, (r.planes - skip).min(left))
                    }
                    // Slots past the last plane of the arrays are never valid: leave them out
                    // of the window so that a stray access panics instead of reading filler.
                    _ => (self.device(set, phys), plan.buffer_planes.min(left)),
                };
                BufView {
                    ptr,
                    elem,
                    base,
                    planes,
                    inner,
                    ndim: plan.shape.len(),
                    _buf: std::marker::PhantomData,
                }
            })
            .collect()
    }
}

/// A buffer of `len` elements of type `elem`, 8-byte aligned, every element NaN.
fn nan_buffer(elem: Elem, len: usize) -> Vec<u64> {
    match elem {
        Elem::F64 => vec![f64::NAN.to_bits(); len],
        Elem::F32 => {
            let w = f32::NAN.to_bits() as u64;
            vec![w | (w << 32); len.div_ceil(2)]
        }
    }
}

/// Per-(step, kernel) reduction partials of each chunk, combined once all operations ran.
struct Partials {
    nkernels: usize,
    /// `[step * nkernels + kernel]` -> (chunk, first owned plane, values per kernel reduction).
    slots: Vec<Vec<(usize, usize, Vec<f64>)>>,
}

impl Partials {
    fn new(program: &Program, steps: usize) -> Partials {
        let nkernels = program.kernels.len();
        let any = program.kernels.iter().any(|k| !k.reductions.is_empty());
        Partials {
            nkernels,
            slots: if any {
                vec![Vec::new(); steps * nkernels]
            } else {
                Vec::new()
            },
        }
    }

    fn add(&mut self, step: usize, kernel: usize, chunk: usize, first: usize, v: Vec<f64>) {
        self.slots[step * self.nkernels + kernel].push((chunk, first, v));
    }

    /// The final reductions (contract §4): chunks' partials in chunk order, steps in order.
    fn finish(mut self, program: &Program, inv: &Invocation<'_>, steps: usize) -> Vec<f64> {
        for parts in &mut self.slots {
            parts.sort_by_key(|&(chunk, first, _)| (chunk, first));
        }
        let (slots, nk) = (&self.slots, self.nkernels);
        super::reduce::walk_steps(program, inv, steps, |step, k| {
            slots
                .get(step * nk + k)
                .map(|p| p.iter().map(|(_, _, v)| v.as_slice()).collect())
                .unwrap_or_default()
        })
    }
}

/// A seeded random order in which every operation comes after its `deps` and after the previous
/// operation on its stream.
pub fn shuffled_order(ops: &[Op], seed: u64) -> Vec<usize> {
    let n = ops.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    let mut last_on_stream: std::collections::HashMap<usize, usize> = Default::default();
    for (i, op) in ops.iter().enumerate() {
        let mut preds: Vec<usize> = op.deps.clone();
        if let Some(prev) = last_on_stream.insert(op.stream, i) {
            preds.push(prev);
        }
        preds.sort_unstable();
        preds.dedup();
        for p in preds {
            succ[p].push(i);
            indeg[i] += 1;
        }
    }
    let mut rng = crate::rng::SplitMix64(seed);
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while !ready.is_empty() {
        let pick = rng.below(ready.len() as u64) as usize;
        let i = ready.swap_remove(pick);
        order.push(i);
        for &s in &succ[i] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.push(s);
            }
        }
    }
    debug_assert_eq!(order.len(), n, "deps must point to earlier operations");
    order
}
