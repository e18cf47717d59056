//! The CUDA backend: runs a [`Plan`] on an NVIDIA GPU through cudarc's driver API.
//!
//! * Kernels: the program's `cuda_source` is compiled by NVRTC once per process, device, source
//!   and FMA setting (`--fmad=false` unless [`Options::fma`]), for the device's compute
//!   capability (PTX `compute_XY`, JIT-compiled by the driver).
//! * Host memory: for direct-map and region-sharing, the user's arrays (read-only ones too) are
//!   page-locked for the run with `cuMemHostRegister` (portable) and unregistered when it ends;
//!   arrays already page-locked (a [`PinnedArray`]) are not registered again. If registering
//!   fails, the run is re-planned as staged-copy and the report says so.
//! * Device memory: `buffer_sets` sets of one buffer per array (`buffer_planes * plane_len`
//!   elements), plus slices and reduction scratch, checked against `cuMemGetInfo` before anything
//!   is allocated; a plan that does not fit is re-planned with the smallest chunk count that does.
//! * Ordering: one CUDA stream per plan stream; every op records a start and an end event (timed);
//!   an op waits (`cuStreamWaitEvent`) for the end events of its dependencies on other streams.
//!   Nothing else synchronizes: cudarc's event tracking is off and all memory is raw.
//! * StageIn/StageOut (staged-copy) are host `memcpy`s enqueued with `cuLaunchHostFunc` on the
//!   op's stream, so they wait for their events like every other op and the host thread never
//!   blocks while submitting (the driver runs host functions on its own thread).
//! * Kernels launch with the ABI of `docs/internals.md` §3. Block shape: the occupancy API's
//!   suggestion (`cuOccupancyMaxPotentialBlockSize`) capped at 256 threads; 3D: 32 x (n/32) x 1,
//!   2D: n x 1 x 1 (halved while wider than twice the row). Ops spanning more than 65535 planes
//!   are split into several launches. Reductions: each block's partial goes into a per-stream
//!   scratch buffer; a one-block combine kernel on the same stream folds them in a fixed order
//!   into the op's slot of a results buffer; after the run the host combines slots in chunk
//!   order per step and walks the steps (`internals.md` §4).
//! * Faults and progress (`internals.md` §5): the fault hook ([`crate::fault::hit`]) runs before
//!   each device or pinned allocation (`Alloc`), each module compile or cache look-up
//!   (`Compile`) and each plan operation; a [`Tracker`] marks an operation finished only once its
//!   end event is known complete. On any error during submission the streams are drained before
//!   returning, so nothing writes the user's arrays after the error comes back.
//! * Runs are serialized: [`execute`] holds a process-wide lock for the whole run.

mod codec_rate;
mod compression;
mod device;
mod extra;
mod launch;
mod memory;
mod resident;
mod trace;

pub use codec_rate::{measure_codec, CodecRates};
pub use device::{available, prefer_device, DeviceInfo};
pub use extra::{
    device_memory_budget, free_memory, lock_host, managed_fits, measure_link, run_managed,
    HostLock, ManagedOutput,
};
pub use memory::PinnedArray;
pub use resident::{measure_dtod, ResidentOutput};
pub use trace::{trace_json, write_trace};

use crate::error::Error;
use crate::fault::{self, Site, Tracker};
use crate::invocation::{Invocation, ScalarValue};
use crate::options::Options;
use crate::plan::{HostSide, OpKind, Plan, PlanOptions, Scheme};
use crate::program::{Elem, Program, ReduceOp};
use crate::report::{Report, StageTimes, TraceEvent};
use cudarc::driver::{result, sys, CudaContext};
use device::cuda_err;
use launch::{Geometry, KernelArgs};
use memory::{DeviceBuf, PinnedHost, Registration};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a CUDA run returns (the CPU executor's counterpart; `run::run` adds `swap_replays`).
#[derive(Debug)]
pub struct CudaOutput {
    /// Final value of each reduction variable (f64 holding its type exactly).
    pub reductions: Vec<f64>,
    pub report: Report,
    /// The plan that actually ran (differs from the one given when it was re-planned to fit
    /// device memory or fell back to staged-copy; the report's `adjustments` say why).
    pub plan: Plan,
}

static MEMORY_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Caps the device memory runs may plan for (as if the GPU had only `bytes` free), to try
/// out-of-core behaviour on a large GPU; `None` lifts the cap. Process-wide.
pub fn set_device_memory_limit(bytes: Option<u64>) {
    MEMORY_LIMIT.store(
        bytes.unwrap_or(u64::MAX),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Device memory kept free besides the plan's buffers (context, modules, driver bookkeeping).
const RESERVE: u64 = 64 << 20;
/// Largest grid extent along y and z.
const MAX_GRID_YZ: usize = 65535;

/// Per-stream reduction scratch (in doubles) and the number of result slots.
fn reduction_layout(program: &Program, plan: &Plan, geoms: &[Geometry]) -> (Vec<usize>, usize) {
    let mut scratch = vec![0usize; plan.streams];
    let mut slots = 0;
    for op in &plan.ops {
        if let OpKind::Kernel { kernel, planes, .. } = &op.kind {
            let nred = program.kernels[*kernel].reductions.len();
            if nred == 0 {
                continue;
            }
            let n = geoms[*kernel].blocks(planes.len()) * nred;
            scratch[op.stream] = scratch[op.stream].max(n);
            slots += nred;
        }
    }
    (scratch, slots)
}

fn device_need(program: &Program, plan: &Plan, geoms: &[Geometry], slice_bytes: u64) -> u64 {
    let (scratch, slots) = reduction_layout(program, plan, geoms);
    plan.device_bytes() + slice_bytes + 8 * (scratch.iter().sum::<usize>() + slots) as u64
}

fn replan(
    program: &Program,
    plan: &Plan,
    points: &[usize],
    chunks: usize,
    scheme: Scheme,
) -> Result<Plan, crate::plan::PlanError> {
    crate::plan::build(
        program,
        &plan.shape,
        plan.steps,
        points,
        &PlanOptions {
            chunks,
            block_steps: plan.block_steps,
            scheme,
            buffer_sets: plan.buffer_sets,
            compress: plan.compression.iter().map(|c| c.map(|c| c.rate)).collect(),
        },
    )
}

#[allow(clippy::too_many_arguments)]
/// The plan with the smallest chunk count (at least the given plan's) whose device memory fits
/// `budget`, or `Error::DeviceMemory`.
fn fit_plan(
    program: &Program,
    plan: Plan,
    points: &[usize],
    geoms: &[Geometry],
    slice_bytes: u64,
    budget: u64,
    free: u64,
    notes: &mut Vec<String>,
) -> Result<Plan, Error> {
    let need0 = device_need(program, &plan, geoms, slice_bytes);
    if need0 <= budget {
        return Ok(plan);
    }
    let n = plan.shape[0];
    let try_c = |c: usize| -> Option<Plan> {
        let p = replan(program, &plan, points, c, plan.scheme).ok()?;
        (device_need(program, &p, geoms, slice_bytes) <= budget).then_some(p)
    };
    // Exponential probe, then binary search for the smallest count that fits.
    let mut lo = plan.chunks; // does not fit
    let mut hi = None;
    let mut c = plan.chunks.max(1);
    while c < n {
        c = (c * 2).min(n);
        if let Some(p) = try_c(c) {
            hi = Some((c, p));
            break;
        }
        lo = c;
    }
    let Some((mut hc, mut hp)) = hi else {
        // `need` includes the reserve so that it compares directly with `free`.
        return Err(Error::DeviceMemory {
            need: need0 + RESERVE,
            free,
            sets: plan.buffer_sets,
        });
    };
    while hc - lo > 1 {
        let mid = lo + (hc - lo) / 2;
        match try_c(mid) {
            Some(p) => {
                hc = mid;
                hp = p;
            }
            None => lo = mid,
        }
    }
    notes.push(format!(
        "{} chunks need {} bytes of device memory but {} are free ({} kept in reserve); \
         using {} chunks ({} bytes)",
        plan.chunks,
        need0 + RESERVE,
        free,
        RESERVE,
        hp.chunks,
        device_need(program, &hp, geoms, slice_bytes) + RESERVE
    ));
    Ok(hp)
}

/// The call's own checks (shared with `run`), then that the plan was made for these arrays.
fn validate(program: &Program, plan: &Plan, inv: &Invocation<'_>) -> Result<(), Error> {
    crate::run::validate(program, inv)?;
    let shape = inv.arrays[0].shape();
    if shape != plan.shape.as_slice() {
        return Err(Error::ShapeMismatch {
            name: program.arrays[0].name.clone(),
            got: shape.to_vec(),
            first: "the plan".into(),
            want: plan.shape.clone(),
        });
    }
    if plan.elem_sizes.len() != program.arrays.len() {
        return Err(Error::Internal(
            "the plan and the program disagree on the arrays".into(),
        ));
    }
    Ok(())
}

/// A launch-argument arena: every argument is at most 8 bytes, stored in its own u64 slot
/// (little-endian, so a pointer to the slot points at the value's bytes).
struct Args {
    slots: Vec<u64>,
}

impl Args {
    fn new() -> Self {
        Args {
            slots: Vec::with_capacity(64),
        }
    }
    fn i64(&mut self, v: i64) {
        self.slots.push(v as u64);
    }
    fn ptr(&mut self, p: u64) {
        self.slots.push(p);
    }
    fn scalar(&mut self, s: &ScalarValue) {
        let v: u64 = match *s {
            ScalarValue::F32(x) => x.to_bits() as u64,
            ScalarValue::F64(x) => x.to_bits(),
            ScalarValue::I32(x) => x as u32 as u64,
            ScalarValue::I64(x) => x as u64,
            ScalarValue::U32(x) => x as u64,
            ScalarValue::U64(x) => x,
            ScalarValue::Usize(x) => x as u64,
            ScalarValue::Isize(x) => x as i64 as u64,
            ScalarValue::Bool(x) => x as u64,
        };
        self.slots.push(v);
    }
    fn params(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect()
    }
}

/// Payload of a host-function copy (StageIn/StageOut).
struct HostCopy {
    src: *const u8,
    dst: *mut u8,
    len: usize,
}

unsafe extern "C" fn host_copy(user: *mut c_void) {
    let c = &*(user as *const HostCopy);
    const PIECE: usize = 4 << 20;
    if c.len >= 4 * PIECE {
        use rayon::prelude::*;
        let (src, dst, len) = (c.src as usize, c.dst as usize, c.len);
        (0..len.div_ceil(PIECE)).into_par_iter().for_each(|i| {
            let o = i * PIECE;
            let n = PIECE.min(len - o);
            // SAFETY: disjoint pieces of the two non-overlapping ranges given by the plan.
            unsafe {
                std::ptr::copy_nonoverlapping((src + o) as *const u8, (dst + o) as *mut u8, n)
            };
        });
    } else {
        std::ptr::copy_nonoverlapping(c.src, c.dst, c.len);
    }
}

struct Streams(Vec<sys::CUstream>);
impl Drop for Streams {
    fn drop(&mut self) {
        for &s in &self.0 {
            // SAFETY: created by us; work was synchronized before this drop.
            unsafe {
                let _ = result::stream::destroy(s);
            }
        }
    }
}

struct Events(Vec<sys::CUevent>);
impl Drop for Events {
    fn drop(&mut self) {
        for &e in &self.0 {
            // SAFETY: created by us.
            unsafe {
                let _ = result::event::destroy(e);
            }
        }
    }
}

/// Synchronizes the context when dropped: declared after every resource of a run, so it runs
/// first on every exit path (errors included) and nothing is freed while the GPU may use it.
struct SyncOnDrop(Arc<CudaContext>);
impl Drop for SyncOnDrop {
    fn drop(&mut self) {
        let _ = self.0.bind_to_thread();
        let _ = self.0.synchronize();
    }
}

fn op_label(program: &Program, k: &OpKind) -> (&'static str, String) {
    let an = |a: &usize| {
        program
            .arrays
            .get(*a)
            .map(|d| d.name.as_str())
            .unwrap_or("?")
    };
    match k {
        OpKind::HtoD {
            array,
            set,
            planes,
            from,
            ..
        } => (
            "htod",
            format!(
                "HtoD {} s{set} {planes:?}{}",
                an(array),
                match from {
                    HostSide::Staging => " (staging)",
                    HostSide::Compressed => " (compressed)",
                    HostSide::User => "",
                }
            ),
        ),
        OpKind::DtoH {
            array,
            set,
            planes,
            to,
            ..
        } => (
            "dtoh",
            format!(
                "DtoH {} s{set} {planes:?}{}",
                an(array),
                match to {
                    HostSide::Staging => " (staging)",
                    HostSide::Compressed => " (compressed)",
                    HostSide::User => "",
                }
            ),
        ),
        OpKind::StageIn {
            array, set, planes, ..
        } => (
            "host_copy",
            format!("StageIn {} s{set} {planes:?}", an(array)),
        ),
        OpKind::StageOut {
            array, set, planes, ..
        } => (
            "host_copy",
            format!("StageOut {} s{set} {planes:?}", an(array)),
        ),
        OpKind::Encode {
            array, set, planes, ..
        } => ("encode", format!("Encode {} s{set} {planes:?}", an(array))),
        OpKind::Decode {
            array, set, planes, ..
        } => ("decode", format!("Decode {} s{set} {planes:?}", an(array))),
        OpKind::DtoD {
            array,
            from_set,
            to_set,
            planes,
            ..
        } => (
            "dtod",
            format!("DtoD {} s{from_set}->s{to_set} {planes:?}", an(array)),
        ),
        OpKind::Kernel {
            kernel,
            set,
            step,
            planes,
            ..
        } => (
            "kernel",
            format!(
                "{} s{set} t{step} {planes:?}",
                program
                    .kernels
                    .get(*kernel)
                    .map(|k| k.name.as_str())
                    .unwrap_or("?")
            ),
        ),
        OpKind::Point {
            point,
            set,
            step,
            plane,
            ..
        } => (
            "kernel",
            format!(
                "{} s{set} t{step} @{plane}",
                program
                    .points
                    .get(*point)
                    .map(|p| p.name.as_str())
                    .unwrap_or("?")
            ),
        ),
    }
}

/// Serializes CUDA runs within the process (see [`execute`]).
static RUNS: Mutex<()> = Mutex::new(());

/// Runs `plan` for `program` on CUDA device 0. See the module documentation.
///
/// **CUDA runs in one process are serialized**: each call holds a process-wide lock from start
/// to end, so concurrent calls (from several threads, possibly sharing read-only host arrays
/// such as a velocity model) run one after the other. This keeps one run's page-locking of a
/// shared array from being undone while another run still copies from it. (The CPU backend runs
/// concurrently.) A run that panicked does not poison the lock for later runs.
///
/// Errors follow `docs/internals.md` §5: any error other than [`Error::Failed`] leaves the
/// user's arrays untouched; [`Error::Failed`] says which blocks' write-backs are known complete.
pub fn execute(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<CudaOutput, Error> {
    let _serial = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    execute_serialized(program, plan, inv, opts)
}

fn execute_serialized(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<CudaOutput, Error> {
    let t_start = Instant::now();
    let info = available().map_err(|reason| Error::NoCuda { reason })?;
    validate(program, plan, inv)?;
    let ctx = device::context(info.ordinal)?;
    let cerr = |w: &str| cuda_err(w.to_string());

    // Compile (cached) and look up every function before any user data is touched.
    fault::hit(Site::Compile, || {
        format!("NVRTC compile of `{}`", program.name)
    })?;
    let tuning = launch::MarchTuning::from_env()?;
    let module = device::module(
        &ctx,
        &program.name,
        &tuning.source(&program.cuda_source),
        opts.fma,
    )?;
    fault::hit(Site::Compile, || {
        "NVRTC compile of pacc's internal kernels".into()
    })?;
    let internal = device::module(&ctx, "pacc_internal", device::INTERNAL_SOURCE, false)?;
    let sms = launch::sm_count(&ctx);
    let geoms = program
        .kernels
        .iter()
        .map(|k| launch::geometry(&module, k, &plan.shape, opts.kernel_form, sms, &tuning))
        .collect::<Result<Vec<_>, _>>()?;
    let pfuncs = program
        .points
        .iter()
        .map(|p| module.function(&p.name))
        .collect::<Result<Vec<_>, _>>()?;
    let combine_fn = |op: ReduceOp, e: Elem| {
        let o = match op {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        };
        internal.function(&format!("pacc_combine_{o}_{}", e.rust_name()))
    };
    let rfuncs = program
        .reductions
        .iter()
        .map(|r| combine_fn(r.op, r.elem))
        .collect::<Result<Vec<_>, _>>()?;

    let ndim = plan.shape.len();

    // Device memory: check before allocating; re-plan with more chunks if needed.
    let mut notes: Vec<String> = Vec::new();
    let points: Vec<usize> = inv
        .points
        .iter()
        .map(|p| p.first().copied().unwrap_or(0).max(0) as usize)
        .collect();
    let slice_bytes: u64 = inv
        .slices
        .iter()
        .map(|s| (s.len * s.elem.size()) as u64)
        .sum();
    let (free, _total) = result::mem_get_info().map_err(cerr("cuMemGetInfo"))?;
    let free = (free as u64).min(MEMORY_LIMIT.load(std::sync::atomic::Ordering::Relaxed));
    let budget = free.saturating_sub(RESERVE);
    let mut plan = fit_plan(
        program,
        plan.clone(),
        &points,
        &geoms,
        slice_bytes,
        budget,
        free,
        &mut notes,
    )?;

    // Host memory: page-lock the user's arrays (direct-map, region-sharing).
    let t_reg = Instant::now();
    let mut registration = None;
    if plan.scheme != Scheme::StagedCopy {
        let ranges: Vec<(*mut u8, usize)> = inv.arrays.iter().map(|a| (a.ptr, a.bytes())).collect();
        match Registration::new(&ctx, &ranges) {
            Ok(r) => {
                if r.already_locked > 0 {
                    notes.push(format!(
                        "{} of {} arrays were already page-locked and were not registered",
                        r.already_locked,
                        ranges.len()
                    ));
                }
                registration = Some(r);
            }
            Err(msg) if plan.compresses() => {
                return Err(Error::Cuda {
                    what: "page-locking the arrays (compression needs them page-locked: it has no staged-copy fallback)".into(),
                    message: msg,
                });
            }
            Err(msg) => {
                notes.push(format!(
                    "registering the arrays as page-locked failed ({msg}); fell back to staged-copy"
                ));
                let p = replan(
                    program,
                    &plan,
                    &points,
                    plan.requested_chunks.max(plan.chunks),
                    Scheme::StagedCopy,
                )?;
                plan = fit_plan(
                    program,
                    p,
                    &points,
                    &geoms,
                    slice_bytes,
                    budget,
                    free,
                    &mut notes,
                )?;
            }
        }
    }
    let register_s = t_reg.elapsed().as_secs_f64();

    // Allocate.
    let nsets = plan.buffer_sets;
    let narr = program.arrays.len();
    let plane_len = plan.plane_len;
    let pbytes: Vec<usize> = plan.elem_sizes.iter().map(|e| e * plane_len).collect();
    let mut dev: Vec<Vec<DeviceBuf>> = Vec::with_capacity(nsets);
    for s in 0..nsets {
        let mut v = Vec::with_capacity(narr);
        for (a, pb) in pbytes.iter().enumerate() {
            v.push(DeviceBuf::new(
                &ctx,
                pb * plan.buffer_planes,
                &format!("buffer set {s} of `{}`", program.arrays[a].name),
            )?);
        }
        dev.push(v);
    }
    let uses_staging = plan.ops.iter().any(|o| {
        matches!(o.kind, OpKind::StageIn { .. } | OpKind::StageOut { .. })
            || matches!(
                o.kind,
                OpKind::HtoD {
                    from: HostSide::Staging,
                    ..
                } | OpKind::DtoH {
                    to: HostSide::Staging,
                    ..
                }
            )
    });
    let mut staging: Vec<Vec<PinnedHost>> = Vec::new();
    if uses_staging {
        for s in 0..nsets {
            let mut v = Vec::with_capacity(narr);
            for (a, pb) in pbytes.iter().enumerate() {
                v.push(PinnedHost::new(
                    &ctx,
                    pb * plan.buffer_planes,
                    &format!("staging set {s} of `{}`", program.arrays[a].name),
                )?);
            }
            staging.push(v);
        }
    }
    let mut slices = Vec::with_capacity(inv.slices.len());
    for (i, s) in inv.slices.iter().enumerate() {
        let n = s.len * s.elem.size();
        let b = DeviceBuf::new(&ctx, n, &format!("slice `{}`", program.slices[i].name))?;
        if n > 0 {
            // Registration widens the arrays' ranges to whole pages, which may cover part of a
            // small slice sharing a page with an array; the driver rejects copies from such
            // half-registered memory. A pinned bounce buffer of the driver's own never shares
            // a page with user memory.
            let bounce = PinnedHost::new(&ctx, n, "slice bounce buffer")?;
            // SAFETY: `n` readable bytes at s.ptr (the caller's slice); bounce holds n bytes;
            // b holds n bytes on the device.
            unsafe {
                std::ptr::copy_nonoverlapping(s.ptr, bounce.ptr, n);
                sys::cuMemcpyHtoD_v2(b.ptr, bounce.ptr as *const c_void, n)
            }
            .result()
            .map_err(cerr("copying a slice to the device"))?;
        }
        slices.push(b);
    }
    let (scratch_len, nslots) = reduction_layout(program, &plan, &geoms);
    let scratch = scratch_len
        .iter()
        .map(|&n| DeviceBuf::new(&ctx, n * 8, "reduction partials"))
        .collect::<Result<Vec<_>, _>>()?;
    let results = DeviceBuf::new(&ctx, nslots * 8, "reduction results")?;
    let dcodec = compression::DeviceCodec::new(&ctx, program, &plan)?;

    // Streams and events.
    let mut streams = Streams(Vec::new());
    for _ in 0..plan.streams.max(1) {
        streams.0.push(
            result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(cerr("creating a stream"))?,
        );
    }
    let nops = plan.ops.len();
    let mut events = Events(Vec::with_capacity(2 * nops + 1));
    for _ in 0..2 * nops + 1 {
        events.0.push(
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(cerr("creating an event"))?,
        );
    }
    let origin = events.0[2 * nops];
    let ev_start = |i: usize| events.0[2 * i];
    let ev_end = |i: usize| events.0[2 * i + 1];
    let mut host_copies: Vec<Box<HostCopy>> = Vec::new();
    // Everything above is freed only after this guard synchronizes the context.
    let sync_guard = SyncOnDrop(ctx.clone());
    let setup_s = t_start.elapsed().as_secs_f64() - register_s;

    // Submit.
    // SAFETY (whole block): raw driver calls on buffers we allocated with the sizes the plan
    // gives; host pointers are the caller's arrays (borrowed for the call) or our staging
    // buffers; `plan::race::check` guarantees that unordered ops never touch the same bytes.
    unsafe {
        let t_of = |step: usize| inv.t0 + step as i64;
        let n0 = plan.shape[0] as i64;
        let n1 = plan.shape[1] as i64;
        let n2 = if ndim == 3 { plan.shape[2] as i64 } else { 1 };
        let mut slot = 0usize;
        let mut op_slot = vec![usize::MAX; nops];
        let mut tracker = Tracker::new(&plan);
        // Operations whose end event has been recorded (a prefix of the plan).
        let mut recorded = 0usize;
        let mut submit = || -> Result<(), Error> {
            let s0 = streams.0[0];
            result::event::record(origin, s0).map_err(cerr("recording an event"))?;
            for &s in &streams.0[1..] {
                result::stream::wait_event(
                    s,
                    origin,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
                .map_err(cerr("cuStreamWaitEvent"))?;
            }
            for (i, op) in plan.ops.iter().enumerate() {
                fault::hit(Site::of(&op.kind), || {
                    format!(
                        "plan operation {i}, {} of block {} chunk {}",
                        op_label(program, &op.kind).1,
                        op.block,
                        op.chunk
                    )
                })?;
                let st = streams.0[op.stream];
                for &d in &op.deps {
                    if plan.ops[d].stream != op.stream {
                        result::stream::wait_event(
                            st,
                            ev_end(d),
                            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                        )
                        .map_err(cerr("cuStreamWaitEvent"))?;
                    }
                }
                result::event::record(ev_start(i), st).map_err(cerr("recording an event"))?;
                // From here on the operation may execute.
                tracker.started(&plan, i);
                let codec = || {
                    dcodec
                        .as_ref()
                        .ok_or_else(|| Error::Internal("a codec operation without a codec".into()))
                };
                match &op.kind {
                    OpKind::HtoD {
                        array,
                        set,
                        base,
                        planes,
                        from: HostSide::Compressed,
                    } => codec()?.copy(&plan, *array, *set, *base, planes, true, st)?,
                    OpKind::DtoH {
                        array,
                        set,
                        base,
                        planes,
                        to: HostSide::Compressed,
                    } => codec()?.copy(&plan, *array, *set, *base, planes, false, st)?,
                    OpKind::Encode {
                        array,
                        set,
                        base,
                        planes,
                    } => {
                        let buf = dev[*set][*array].ptr;
                        codec()?.launch(&plan, *array, *set, *base, planes, true, buf, st)?
                    }
                    OpKind::Decode {
                        array,
                        set,
                        base,
                        planes,
                    } => {
                        let buf = dev[*set][*array].ptr;
                        codec()?.launch(&plan, *array, *set, *base, planes, false, buf, st)?
                    }
                    OpKind::HtoD {
                        array,
                        set,
                        base,
                        planes,
                        from,
                    } => {
                        let a = *array;
                        let n = planes.len() * pbytes[a];
                        let dst = dev[*set][a].ptr + ((planes.start - base) * pbytes[a]) as u64;
                        let src = match from {
                            HostSide::User => {
                                inv.arrays[a].ptr.add(planes.start * pbytes[a]) as *const u8
                            }
                            HostSide::Staging | HostSide::Compressed => {
                                staging[*set][a].ptr.add((planes.start - base) * pbytes[a])
                                    as *const u8
                            }
                        };
                        if n > 0 {
                            sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, n, st)
                                .result()
                                .map_err(cerr("cuMemcpyHtoDAsync"))?;
                        }
                    }
                    OpKind::DtoH {
                        array,
                        set,
                        base,
                        planes,
                        to,
                    } => {
                        let a = *array;
                        let n = planes.len() * pbytes[a];
                        let src = dev[*set][a].ptr + ((planes.start - base) * pbytes[a]) as u64;
                        let dst = match to {
                            HostSide::User => inv.arrays[a].ptr.add(planes.start * pbytes[a]),
                            HostSide::Staging | HostSide::Compressed => {
                                staging[*set][a].ptr.add((planes.start - base) * pbytes[a])
                            }
                        };
                        if n > 0 {
                            sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, n, st)
                                .result()
                                .map_err(cerr("cuMemcpyDtoHAsync"))?;
                        }
                    }
                    OpKind::DtoD {
                        array,
                        from_set,
                        from_base,
                        to_set,
                        to_base,
                        planes,
                    } => {
                        let a = *array;
                        let n = planes.len() * pbytes[a];
                        let src =
                            dev[*from_set][a].ptr + ((planes.start - from_base) * pbytes[a]) as u64;
                        let dst =
                            dev[*to_set][a].ptr + ((planes.start - to_base) * pbytes[a]) as u64;
                        if n > 0 {
                            sys::cuMemcpyDtoDAsync_v2(dst, src, n, st)
                                .result()
                                .map_err(cerr("cuMemcpyDtoDAsync"))?;
                        }
                    }
                    OpKind::StageIn {
                        array,
                        set,
                        base,
                        planes,
                    }
                    | OpKind::StageOut {
                        array,
                        set,
                        base,
                        planes,
                    } => {
                        let a = *array;
                        let n = planes.len() * pbytes[a];
                        let user = inv.arrays[a].ptr.add(planes.start * pbytes[a]);
                        let stg = staging[*set][a].ptr.add((planes.start - base) * pbytes[a]);
                        let (src, dst) = if matches!(op.kind, OpKind::StageIn { .. }) {
                            (user as *const u8, stg)
                        } else {
                            (stg as *const u8, user)
                        };
                        if n > 0 {
                            let c = Box::new(HostCopy { src, dst, len: n });
                            let p = &*c as *const HostCopy as *mut c_void;
                            host_copies.push(c);
                            sys::cuLaunchHostFunc(st, Some(host_copy), p)
                                .result()
                                .map_err(cerr("cuLaunchHostFunc"))?;
                        }
                    }
                    OpKind::Kernel {
                        kernel,
                        set,
                        base,
                        step,
                        planes,
                        owned,
                        args,
                    } => {
                        let kd = &program.kernels[*kernel];
                        let g = &geoms[*kernel];
                        let nred = kd.reductions.len();
                        let total = g.blocks(planes.len());
                        let ptrs: Vec<u64> = args.iter().map(|&p| dev[*set][p].ptr).collect();
                        let sptrs: Vec<u64> = slices.iter().map(|s| s.ptr).collect();
                        launch::launch(
                            g,
                            &kd.name,
                            planes.start,
                            planes.end,
                            &KernelArgs {
                                owned: (owned.start, owned.end),
                                base: *base,
                                n: [n0, n1, n2],
                                t: t_of(*step),
                                arrays: &ptrs,
                                scalars: &inv.scalars,
                                slices: &sptrs,
                                partials: scratch[op.stream].ptr,
                                reductions: nred,
                            },
                            st,
                            ndim,
                        )?;
                        if nred > 0 {
                            op_slot[i] = slot;
                            for (j, &r) in kd.reductions.iter().enumerate() {
                                let mut a = Args::new();
                                a.ptr(scratch[op.stream].ptr + (8 * j * total) as u64);
                                a.i64(total as i64);
                                a.ptr(results.ptr + (8 * (slot + j)) as u64);
                                let mut params = a.params();
                                result::launch_kernel(
                                    rfuncs[r],
                                    (1, 1, 1),
                                    (256, 1, 1),
                                    0,
                                    st,
                                    &mut params,
                                )
                                .map_err(cerr("launching the reduction combine kernel"))?;
                            }
                            slot += nred;
                        }
                    }
                    OpKind::Point {
                        point,
                        set,
                        base,
                        step,
                        args,
                        ..
                    } => {
                        let ptrs: Vec<u64> = args.iter().map(|&p| dev[*set][p].ptr).collect();
                        let sptrs: Vec<u64> = slices.iter().map(|s| s.ptr).collect();
                        launch::launch_point(
                            pfuncs[*point],
                            &program.points[*point].name,
                            &inv.points[*point],
                            &KernelArgs {
                                owned: (0, 0),
                                base: *base,
                                n: [n0, n1, n2],
                                t: t_of(*step),
                                arrays: &ptrs,
                                scalars: &inv.scalars,
                                slices: &sptrs,
                                partials: 0,
                                reductions: 0,
                            },
                            st,
                        )?;
                    }
                }
                result::event::record(ev_end(i), st).map_err(cerr("recording an event"))?;
                recorded = i + 1;
            }
            for &s in &streams.0 {
                result::stream::synchronize(s)
                    .map_err(cerr("running the plan (stream synchronize)"))?;
            }
            Ok(())
        };
        if let Err(e) = submit() {
            // Drain whatever was enqueued (host-function copies included) before returning, so
            // nothing writes the user's arrays after the error; then count as finished exactly
            // the operations whose end events are known complete.
            for &s in &streams.0 {
                let _ = result::stream::synchronize(s);
            }
            for i in 0..recorded {
                if sys::cuEventQuery(ev_end(i)) == sys::CUresult::CUDA_SUCCESS {
                    tracker.finished(&plan, i);
                }
            }
            return Err(tracker.fail(e));
        }
        for i in 0..nops {
            tracker.finished(&plan, i);
        }
        let fail = |e: Error| tracker.fail(e);
        if let Some(c) = &dcodec {
            c.check(&ctx, program).map_err(fail)?;
        }

        // Timings.
        let mut stages = StageTimes {
            register: register_s,
            setup: setup_s,
            ..Default::default()
        };
        let mut timeline = Vec::with_capacity(nops);
        for (i, op) in plan.ops.iter().enumerate() {
            let start_ms = result::event::elapsed(origin, ev_start(i))
                .map_err(cerr("cuEventElapsedTime"))
                .map_err(fail)?;
            let dur_ms = result::event::elapsed(ev_start(i), ev_end(i))
                .map_err(cerr("cuEventElapsedTime"))
                .map_err(fail)?;
            let (kind, name) = op_label(program, &op.kind);
            let d = dur_ms as f64 / 1e3;
            match kind {
                "htod" => stages.htod += d,
                "dtoh" => stages.dtoh += d,
                "dtod" => stages.dtod += d,
                "host_copy" => stages.host_copy += d,
                "encode" => stages.encode += d,
                "decode" => stages.decode += d,
                _ => stages.kernel += d,
            }
            timeline.push(TraceEvent {
                name,
                stream: op.stream,
                start_us: start_ms as f64 * 1e3,
                dur_us: dur_ms as f64 * 1e3,
            });
        }

        // Reductions.
        // Read back through pinned memory for the same reason as the slices' upload.
        let mut vals = vec![0f64; nslots];
        if nslots > 0 {
            let bounce =
                PinnedHost::new(&ctx, nslots * 8, "reduction bounce buffer").map_err(fail)?;
            sys::cuMemcpyDtoH_v2(bounce.ptr as *mut c_void, results.ptr, nslots * 8)
                .result()
                .map_err(cerr("copying reduction results"))
                .map_err(fail)?;
            std::ptr::copy_nonoverlapping(bounce.ptr as *const f64, vals.as_mut_ptr(), nslots);
        }
        drop(sync_guard);
        let reductions = combine_reductions(program, &plan, inv, &op_slot, &vals);

        let mut adjustments = plan.adjustments.clone();
        adjustments.extend(notes);
        let report = Report {
            program: program.name.clone(),
            backend: "cuda".into(),
            device: Some(info.name.clone()),
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
            wall_seconds: t_start.elapsed().as_secs_f64(),
            stages,
            adjustments,
            timeline,
        };
        let mut report = report;
        if let Some(path) = &opts.trace {
            // The run has already updated the arrays: a trace that cannot be written is a note,
            // not an error.
            if let Err(e) = write_trace(path, &program.name, &report.timeline) {
                report.adjustments.push(format!(
                    "could not write the trace to {}: {e}",
                    path.display()
                ));
            }
        }
        drop(registration);
        Ok(CudaOutput {
            reductions,
            report,
            plan,
        })
    }
}

/// §4: partials combined in chunk order per (step, kernel), then the steps walked in order.
fn combine_reductions(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;

    fn prog() -> Program {
        let f = |n: &str, role| ArrayDecl {
            name: n.into(),
            elem: Elem::F32,
            role,
        };
        Program {
            name: "p".into(),
            ndim: 3,
            arrays: vec![f("a", Role::InOut), f("b", Role::InOut)],
            scalars: vec![],
            slices: vec![],
            reductions: vec![],
            resets: vec![],
            kernels: vec![KernelDecl {
                name: "k".into(),
                ranges: vec![
                    AxisRange {
                        lo: Bound::start(1),
                        hi: Bound::end(-1)
                    };
                    3
                ],
                reads: vec![ReadDecl {
                    array: 0,
                    lo: vec![-1; 3],
                    hi: vec![1; 3],
                }],
                writes: vec![1],
                reductions: vec![],
                launch: Default::default(),
            }],
            points: vec![],
            step: vec![Stage::Kernel(0), Stage::Swap(0, 1)],
            halo: 1,
            default_chunks: None,
            default_block_steps: None,
            compress: Vec::new(),
            cuda_source: String::new(),
        }
    }

    #[test]
    fn fit_plan_picks_the_smallest_chunk_count_that_fits_or_errors() {
        let p = prog();
        let opts = PlanOptions {
            chunks: 2,
            block_steps: 2,
            scheme: Scheme::RegionSharing,
            buffer_sets: 3,
            compress: Vec::new(),
        };
        let plan = crate::plan::build(&p, &[256, 16, 16], 4, &[], &opts).unwrap();
        let geoms = [Geometry {
            func: std::ptr::null_mut(),
            marching: false,
            bx: 32,
            by: 8,
            gx: 1,
            gy: 2,
            resident: 0,
            reach: 2,
        }];
        let need = |c: usize| {
            let q = crate::plan::build(
                &p,
                &[256, 16, 16],
                4,
                &[],
                &PlanOptions {
                    chunks: c,
                    ..opts.clone()
                },
            )
            .unwrap();
            device_need(&p, &q, &geoms, 0)
        };
        let mut notes = vec![];
        // Fits as is.
        let q = fit_plan(
            &p,
            plan.clone(),
            &[],
            &geoms,
            0,
            need(2),
            need(2),
            &mut notes,
        )
        .unwrap();
        assert_eq!(q.chunks, 2);
        assert!(notes.is_empty());
        // Budget for exactly 11 chunks.
        let q = fit_plan(
            &p,
            plan.clone(),
            &[],
            &geoms,
            0,
            need(11),
            need(11),
            &mut notes,
        )
        .unwrap();
        assert_eq!(q.chunks, 11, "{notes:?}");
        assert!(need(10) > need(11));
        assert_eq!(notes.len(), 1);
        // Nothing fits.
        match fit_plan(&p, plan, &[], &geoms, 0, 1000, 1000, &mut notes) {
            Err(Error::DeviceMemory {
                sets: 3,
                free: 1000,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }
}
