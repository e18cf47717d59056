//! Phase 1 of a CUDA run, before any user data is touched: compile and look up every function,
//! fit the plan to device memory (re-planning with more chunks if needed), page-lock the user's
//! arrays (falling back to staged-copy if that fails), and allocate everything the run uses.

use super::bounce::Bounce;
use super::compression::DeviceCodec;
use super::device::Module;
use super::driver::{self, range_page_locked, Event, Function, RegisterError};
use super::launch::{self, Geometry};
use super::memory::{DeviceBuf, PinnedHost};
use super::pinning::{plan_pieces, Piece, PinPlan, Pinner, Registrar, MAX_PIECE};
use super::probe::{free_for_runs, RESERVE};
use super::rows::{self, Rows};
use super::stream::{Events, HostCopy, Streams, SyncOnDrop};
use crate::cosched::CoSchedule;
use crate::error::Error;
use crate::fault::{self, Site};
use crate::invocation::Invocation;
use crate::options::{HostPath, KernelForm};
use crate::plan::{HostSide, OpKind, Plan, PlanOptions, Scheme};
use crate::program::{Elem, Program, ReduceOp};
use crate::settled::CudaSettings;
use crate::tune::host_path::HostTraffic;
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// The functions a run launches.
#[derive(Clone)]
pub(super) struct Compiled {
    /// Per kernel: its function and launch shape.
    pub geoms: Vec<Geometry>,
    /// The program's module and the shape it was compiled with, for [`Compiled::for_rows`].
    module: Arc<Module>,
    tuning: launch::MarchTuning,
    sms: usize,
    /// Why the kernels were compiled with another shape than asked (the occupancy guard).
    pub note: Option<String>,
    /// Per point statement.
    pub pfuncs: Vec<Function>,
    /// Per reduction variable: the kernel folding its partials.
    pub rfuncs: Vec<Function>,
    /// Copies planes between buffer sets, and its grid (enough blocks to fill the device).
    pub copy: Function,
    pub copy_blocks: u32,
}

/// Compiles (cached) the program's and pacc's own kernels and looks up every function.
pub(super) fn compile(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    cuda: &CudaSettings,
) -> Result<Compiled, Error> {
    fault::hit(Site::Compile, || {
        format!("NVRTC compile of `{}`", program.name)
    })?;
    let (module, tuning, note) = super::compile::guarded_module(ctx, program, cuda)?;
    fault::hit(Site::Compile, || {
        "NVRTC compile of pacc's internal kernels".into()
    })?;
    let internal = super::compile::internal(ctx)?;
    let sms = driver::sm_count(ctx);
    // The rows are chosen later (`place`); until then, the host's.
    let pitch = *plan.shape.last().unwrap_or(&1);
    let form = cuda.kernel_form;
    let geoms = geometries(&module, program, &plan.shape, pitch, form, &tuning, sms)?;
    let pfuncs = program
        .points
        .iter()
        .map(|p| module.function(&p.name))
        .collect::<Result<Vec<_>, _>>()?;
    let rfuncs = program
        .reductions
        .iter()
        .map(|r| combine_fn(&internal, r.op, r.elem))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Compiled {
        geoms,
        module,
        tuning,
        sms,
        note,
        pfuncs,
        rfuncs,
        copy: internal.function("pacc_copy")?,
        copy_blocks: (sms * 8) as u32,
    })
}

/// Every kernel's function and launch shape for device rows `pitch` elements apart.
fn geometries(
    module: &Module,
    program: &Program,
    shape: &[usize],
    pitch: usize,
    form: KernelForm,
    tuning: &launch::MarchTuning,
    sms: usize,
) -> Result<Vec<Geometry>, Error> {
    program
        .kernels
        .iter()
        .map(|k| launch::geometry(module, k, shape, pitch, form, sms, tuning))
        .collect()
}

impl Compiled {
    /// The launch shapes for the rows the run settled on: padded rows may admit a vector form
    /// that the host's rows did not (whose length is no multiple of the vector).
    pub fn for_rows(
        &self,
        program: &Program,
        shape: &[usize],
        rows: Rows,
        cuda: &CudaSettings,
    ) -> Result<Compiled, Error> {
        let mut c = self.clone();
        if rows.pitch != rows.len {
            let (md, t, form) = (&self.module, &self.tuning, cuda.kernel_form);
            c.geoms = geometries(md, program, shape, rows.pitch, form, t, self.sms)?;
        }
        Ok(c)
    }
}

/// The internal kernel folding partials of `op` over `elem` (see `device::INTERNAL_SOURCE`).
fn combine_fn(internal: &Module, op: ReduceOp, elem: Elem) -> Result<Function, Error> {
    let o = match op {
        ReduceOp::Sum => "sum",
        ReduceOp::Min => "min",
        ReduceOp::Max => "max",
    };
    internal.function(&format!("pacc_combine_{o}_{}", elem.rust_name()))
}

/// Per-stream reduction scratch (in doubles) and the number of result slots.
pub(super) fn reduction_layout(
    program: &Program,
    plan: &Plan,
    geoms: &[Geometry],
) -> (Vec<usize>, usize) {
    let mut scratch = vec![0usize; plan.streams];
    let mut slots = 0;
    for op in &plan.ops {
        if let Some((kernel, planes)) = op.kind.kernel_planes() {
            let nred = program.kernels[kernel].reductions.len();
            if nred == 0 {
                continue;
            }
            let n = geoms[kernel].blocks(planes.len()) * nred;
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
            compress: plan
                .compression
                .iter()
                .map(|c| c.map(|c| c.rate.bits()))
                .collect(),
            codec: (plan.compression.iter().flatten().next())
                .map_or_else(Default::default, |c| c.codec),
            // A plan without a ring was asked for none, or had no array to put there.
            read_only_ring: plan.ring.is_some(),
        },
    )
}

/// What fitting a plan to the device needs to know besides the plan.
struct Fit<'a> {
    program: &'a Program,
    points: Vec<usize>,
    geoms: &'a [Geometry],
    slice_bytes: u64,
    /// Device memory the plan may use.
    budget: u64,
    /// Free device memory (for the error and the note).
    free: u64,
}

impl Fit<'_> {
    fn need(&self, plan: &Plan) -> u64 {
        device_need(self.program, plan, self.geoms, self.slice_bytes)
    }

    /// `plan` re-planned with `chunks` if that fits the budget.
    fn try_chunks(&self, plan: &Plan, chunks: usize) -> Option<Plan> {
        let p = replan(self.program, plan, &self.points, chunks, plan.scheme).ok()?;
        (self.need(&p) <= self.budget).then_some(p)
    }

    /// The plan with the smallest chunk count (at least the given plan's) whose device memory
    /// fits the budget, or `Error::DeviceMemory`.
    fn fit(&self, plan: Plan, notes: &mut Vec<String>) -> Result<Plan, Error> {
        let need0 = self.need(&plan);
        if need0 <= self.budget {
            return Ok(plan);
        }
        // A plan with halo exchanges is one chunk by construction: more chunks would drop them.
        if plan.exchanges() {
            return Err(Error::DeviceMemory {
                need: need0 + RESERVE,
                free: self.free,
                sets: plan.buffer_sets,
            });
        }
        // Exponential probe, then binary search for the smallest count that fits.
        let mut lo = plan.chunks; // does not fit
        let mut hi = None;
        let mut c = plan.chunks.max(1);
        while c < plan.shape[0] {
            c = (c * 2).min(plan.shape[0]);
            if let Some(p) = self.try_chunks(&plan, c) {
                hi = Some((c, p));
                break;
            }
            lo = c;
        }
        let Some((mut hc, mut hp)) = hi else {
            // `need` includes the reserve so that it compares directly with `free`.
            return Err(Error::DeviceMemory {
                need: need0 + RESERVE,
                free: self.free,
                sets: plan.buffer_sets,
            });
        };
        while hc - lo > 1 {
            let mid = lo + (hc - lo) / 2;
            match self.try_chunks(&plan, mid) {
                Some(p) => (hc, hp) = (mid, p),
                None => lo = mid,
            }
        }
        notes.push(format!(
            "{} chunks need {} bytes of device memory but {} are free ({} kept in reserve); \
             using {} chunks ({} bytes)",
            plan.chunks,
            need0 + RESERVE,
            self.free,
            RESERVE,
            hp.chunks,
            self.need(&hp) + RESERVE
        ));
        Ok(hp)
    }
}

/// The plan that will run, with the user's arrays being page-locked for it.
pub(super) struct Placed {
    pub plan: Plan,
    /// How to page-lock the arrays; [`start_pinning`] starts it once the device memory is
    /// allocated (the driver serializes registration with allocation, so page-locking begun
    /// earlier would hold the allocations up rather than run beside the transfers).
    pub pin: PinSettings,
    /// The rows of the device buffers (padded to 128 bytes when the program allows and the
    /// memory is there).
    pub rows: Rows,
}

/// How the user's arrays are page-locked ([`CudaSettings::pin_threads`],
/// [`CudaSettings::pin_overlap`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct PinSettings {
    pub threads: usize,
    /// Register beside the run (else every piece before the first operation).
    pub overlap: bool,
}

/// The page-locking of one run: the pieces, the threads registering them, and how many arrays
/// were page-locked already (a `PinnedArray`, `lock_host`) and are left alone.
pub(super) struct Pinning {
    pub plan: PinPlan,
    pub pinner: Pinner<CudaRegistrar>,
    pub overlap: bool,
    pub threads: usize,
    pub already_locked: usize,
}

/// The driver's page-locking for [`Pinner`]'s threads.
pub(super) struct CudaRegistrar {
    ctx: Arc<CudaContext>,
}

impl Registrar for CudaRegistrar {
    fn register(&self, r: &std::ops::Range<usize>) -> Result<(), RegisterError> {
        (self.ctx.bind_to_thread()).map_err(|e| RegisterError::Context(e.to_string()))?;
        // SAFETY: whole pages covering the user's arrays, which stay borrowed for the run;
        // the pinner unregisters them before the run returns.
        unsafe { driver::host_register(r.start as *mut u8, r.len()) }
    }

    fn unregister(&self, r: &std::ops::Range<usize>) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: registered by `register`; the operations touching it have completed.
        unsafe { driver::host_unregister(r.start as *mut u8) }
    }
}

/// How a run that copies straight from the user's arrays reaches them: page-locked pieces
/// ([`start_pinning`]) or the bounce rings, as the options ask or the tuner's prices say
/// ([`crate::tune::host_path`]); the report's note says which and why.
pub(super) fn reach_host(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    pin: PinSettings,
    wanted: HostPath,
    notes: &mut Vec<String>,
) -> Result<(Option<Pinning>, Option<Bounce>), Error> {
    if !plan.scheme.transfers().pins_user_arrays() {
        return Ok((None, None));
    }
    let traffic = user_traffic(plan, inv);
    let choice = crate::tune::host_path::choose(wanted, traffic, host_rates);
    if choice.path == HostPath::Bounce {
        let elem = plan.elem_sizes.iter().copied().max().unwrap_or(1);
        let b = Bounce::new(ctx, Rows::flat(&plan.shape).len * elem)?;
        notes.push(format!(
            "the arrays were not page-locked: transfers bounced through {} MiB of pinned \
             rings ({})",
            b.pinned_bytes() >> 20,
            choice.why
        ));
        return Ok((None, Some(b)));
    }
    if traffic.unlocked > 0 && wanted == HostPath::Auto {
        notes.push(format!(
            "the arrays were page-locked for the call ({})",
            choice.why
        ));
    }
    Ok((start_pinning(ctx, program, plan, inv, pin, notes), None))
}

/// The rates [`reach_host`] prices with: the link as measured (or the H100's when it cannot
/// be), this host's copy rate.
fn host_rates() -> crate::tune::Rates {
    let link = super::measure::link_rates().unwrap_or(crate::tune::LinkRates::H100);
    let mut r = crate::tune::Rates::new(link, Vec::new());
    r.host_copy_rate = crate::tune::host_copy_rate();
    r
}

/// Bytes the plan copies between the user's arrays and the device, and the arrays' bytes
/// not page-locked yet.
fn user_traffic(plan: &Plan, inv: &Invocation<'_>) -> HostTraffic {
    let pb = |a: usize| (plan.elem_sizes[a] * plan.plane_len) as u64;
    let (mut htod, mut dtoh) = (0, 0);
    for op in &plan.ops {
        match op.kind {
            OpKind::HtoD {
                array,
                ref planes,
                from: HostSide::User,
                ..
            } => htod += planes.len() as u64 * pb(array),
            OpKind::DtoH {
                array,
                ref planes,
                to: HostSide::User,
                ..
            } => dtoh += planes.len() as u64 * pb(array),
            _ => {}
        }
    }
    let unlocked = (inv.arrays.iter())
        .filter(|a| !range_page_locked(a.ptr, a.bytes()))
        .map(|a| a.bytes() as u64)
        .sum();
    HostTraffic {
        unlocked,
        htod,
        dtoh,
    }
}

/// Starts page-locking the user's arrays for `plan` (direct and shared transfers), skipping
/// arrays that are page-locked already, and says so in `notes`.
pub(super) fn start_pinning(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    pin: PinSettings,
    notes: &mut Vec<String>,
) -> Option<Pinning> {
    let pinning = pin_pieces(ctx, program, plan, inv, pin);
    if let Some(p) = pinning.as_ref().filter(|p| p.already_locked > 0) {
        notes.push(format!(
            "{} of {} arrays were already page-locked and were not registered",
            p.already_locked,
            inv.arrays.len()
        ));
    }
    pinning
}

fn pin_pieces(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    pin: PinSettings,
) -> Option<Pinning> {
    if !plan.scheme.transfers().pins_user_arrays() {
        return None;
    }
    let mut already_locked = 0;
    let arrays: Vec<Option<std::ops::Range<usize>>> = (inv.arrays.iter())
        .map(|a| {
            let (p, n) = (a.ptr, a.bytes());
            let locked = range_page_locked(p, n);
            already_locked += usize::from(locked);
            (n > 0 && !locked).then(|| p as usize..p as usize + n)
        })
        .collect();
    let pb: Vec<usize> = plan.elem_sizes.iter().map(|e| e * plan.plane_len).collect();
    let pieces = plan_pieces(plan, &arrays, &pb, MAX_PIECE);
    let reg = Arc::new(CudaRegistrar { ctx: ctx.clone() });
    let name = |piece: &Piece| {
        let a = (inv.arrays.iter()).position(|a| {
            let at = a.ptr as usize;
            piece.range.end > at && piece.range.start < at + a.bytes()
        });
        let name = a.map_or("?", |a| program.arrays[a].name.as_str());
        format!("page-locking {} bytes of `{name}`", piece.range.len())
    };
    let pinner = Pinner::start(reg, &pieces.pieces, pin.threads, name);
    Some(Pinning {
        plan: pieces,
        pinner,
        overlap: pin.overlap,
        threads: pin.threads,
        already_locked,
    })
}

/// Fits `plan` to free device memory and chooses its rows. If a registration fails later, the
/// run is repeated as staged-copy (`mod.rs`).
#[allow(clippy::too_many_arguments)]
pub(super) fn place(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    geoms: &[Geometry],
    pad: bool,
    pin: PinSettings,
    notes: &mut Vec<String>,
) -> Result<Placed, Error> {
    let fit = fitter(program, inv, geoms)?;
    let plan = fit.fit(plan.clone(), notes)?;
    let spare = fit.budget.saturating_sub(fit.need(&plan));
    let (rows, note) = rows::choose(program, &plan, pad, spare);
    notes.extend(note);
    Ok(Placed { plan, pin, rows })
}

/// `plan` re-planned with [`Scheme::WHEN_PINNING_FAILS`] (staged-copy; after a registration
/// failed), fitted to device memory.
pub(super) fn staged(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    geoms: &[Geometry],
    notes: &mut Vec<String>,
) -> Result<Plan, Error> {
    let fit = fitter(program, inv, geoms)?;
    let chunks = plan.requested_chunks.max(plan.chunks);
    let unpinned = Scheme::WHEN_PINNING_FAILS;
    let p = replan(program, plan, &fit.points, chunks, unpinned)?;
    fit.fit(p, notes)
}

/// The device-memory fit for a run of `program` on `inv`.
fn fitter<'a>(
    program: &'a Program,
    inv: &Invocation<'_>,
    geoms: &'a [Geometry],
) -> Result<Fit<'a>, Error> {
    let free = free_for_runs()?;
    Ok(Fit {
        program,
        points: inv
            .points
            .iter()
            .map(|p| p.first().copied().unwrap_or(0).max(0) as usize)
            .collect(),
        geoms,
        slice_bytes: inv
            .slices
            .iter()
            .map(|s| (s.len * s.elem.size()) as u64)
            .sum(),
        budget: free.saturating_sub(RESERVE),
        free,
    })
}

/// Everything a run holds on the device and in pinned memory. Fields drop in declaration order:
/// `_sync` first, so the context is synchronized before anything below it is freed, on every
/// exit path.
pub(super) struct Resources {
    _sync: SyncOnDrop,
    /// The user's arrays being page-locked (dropped after the synchronization above, so no
    /// copy still touches a piece it unregisters).
    pub pinning: Option<Pinning>,
    /// Or the rings the transfers bounce through instead (`bounce.rs`).
    pub bounce: Option<Bounce>,
    /// Payloads of the enqueued host-function copies (read by the driver's thread). Boxed: the
    /// driver holds pointers to them while the vector grows.
    #[allow(clippy::vec_box)]
    pub host_copies: Vec<Box<HostCopy>>,
    /// Per op `i`: start `2i`, end `2i + 1`; the last is the run's origin.
    pub events: Events,
    /// One per plan stream.
    pub streams: Streams,
    /// Whether every operation runs on stream 0, in plan order ([`CudaSettings::serial_stream`]).
    pub serial: bool,
    pub codec: Option<DeviceCodec>,
    /// One slot per reduction per kernel op that has reductions.
    pub results: DeviceBuf,
    pub nslots: usize,
    /// Per stream: the partials of the reduction kernel running on it.
    pub scratch: Vec<DeviceBuf>,
    pub slices: Vec<DeviceBuf>,
    /// `[set][array]`: pinned staging buffers (staged-copy only).
    pub staging: Vec<Vec<PinnedHost>>,
    /// `[set][array]`: device buffers of `buffer_planes` planes, then (`[ring.set]`) the
    /// ring's of `ring.planes` (empty where `Plan::has_buffer` says there is none).
    pub dev: Vec<Vec<DeviceBuf>>,
    /// The layout of a plane in `dev`.
    pub rows: Rows,
}

impl Resources {
    pub fn start(&self, op: usize) -> Event {
        self.events.0[2 * op]
    }
    pub fn end(&self, op: usize) -> Event {
        self.events.0[2 * op + 1]
    }
    pub fn origin(&self) -> Event {
        self.events.0[self.events.0.len() - 1]
    }
}

/// Allocates the buffer sets, staging buffers, slices (uploaded), reduction buffers, codec
/// buffers, streams and events of `plan`.
#[allow(clippy::too_many_arguments)]
pub(super) fn allocate(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    geoms: &[Geometry],
    rows: Rows,
    cuda: &CudaSettings,
) -> Result<Resources, Error> {
    let pbytes: Vec<usize> = plan.elem_sizes.iter().map(|e| e * plan.plane_len).collect();
    let ring = plan.ring.as_ref().map(|r| r.set);
    let sets = plan.buffer_sets + usize::from(ring.is_some());
    let mut dev: Vec<Vec<DeviceBuf>> = Vec::with_capacity(sets);
    for s in 0..sets {
        let mut v = Vec::with_capacity(pbytes.len());
        for (a, e) in plan.elem_sizes.iter().enumerate() {
            let what = match ring {
                Some(r) if r == s => format!("the ring of `{}`", program.arrays[a].name),
                _ => format!("buffer set {s} of `{}`", program.arrays[a].name),
            };
            // Arrays in the ring have no buffer in the chunks' sets, and the others none in
            // the ring: empty buffers, never allocated.
            let planes = if plan.has_buffer(s, a) {
                plan.buffer_len(s)
            } else {
                0
            };
            v.push(DeviceBuf::new(ctx, e * rows.plane_len() * planes, &what)?);
        }
        dev.push(v);
    }
    let staging = allocate_staging(ctx, program, plan, &pbytes)?;
    let slices = upload_slices(ctx, program, inv)?;
    let (scratch_len, nslots) = reduction_layout(program, plan, geoms);
    let scratch = scratch_len
        .iter()
        .map(|&n| DeviceBuf::new(ctx, n * 8, "reduction partials"))
        .collect::<Result<Vec<_>, _>>()?;
    let results = DeviceBuf::new(ctx, nslots * 8, "reduction results")?;
    let codec = DeviceCodec::new(ctx, program, plan, geoms, cuda.codec_grid)?;
    // With the codec behind the stencil, the block scheduler serves the kernel streams first
    // and the codec (on its own low-priority streams) fills the SMs they leave idle.
    let behind = cuda.codec_grid == CoSchedule::Priority && plan.compresses();
    let kernels = |i: usize| plan.role_of(i).0 == crate::plan::StreamRole::Kernels;
    // A halo exchange's kernels (NCCL's) must get SMs while the interior computes, not after
    // its last wave: their stream (the loads stream) goes first.
    let exchanging = plan.exchanges();
    let priority = |i: usize| match plan.role_of(i).0 {
        crate::plan::StreamRole::Loads if exchanging => Some(true),
        _ => behind.then(|| kernels(i)),
    };
    let streams = Streams::prioritized(plan.streams.max(1), priority)?;
    let events = Events::new(2 * plan.ops.len() + 1)?;
    Ok(Resources {
        _sync: SyncOnDrop(ctx.clone()),
        pinning: None,
        bounce: None,
        host_copies: Vec::new(),
        events,
        streams,
        serial: cuda.serial_stream,
        codec,
        results,
        nslots,
        scratch,
        slices,
        staging,
        dev,
        rows,
    })
}

/// Staging buffers must fit the pinned memory the host can give (`budget`; unknown: no check),
/// or the run stops here, before any data is touched, instead of being killed for memory.
fn check_staging(plan: &Plan, pbytes: &[usize], budget: Option<u64>) -> Result<(), Error> {
    let need =
        plan.buffer_sets as u64 * pbytes.iter().sum::<usize>() as u64 * plan.buffer_planes as u64;
    match budget {
        Some(b) if need > b => Err(Error::HostMemory {
            bytes: Some(need),
            what: format!(
                "{} sets of pinned staging buffers of {} planes ({need} bytes; the host can \
                 spare about {b}; more chunks make them smaller)",
                plan.buffer_sets, plan.buffer_planes
            ),
        }),
        _ => Ok(()),
    }
}

/// Pinned staging sets, if the plan stages anything through them.
fn allocate_staging(
    ctx: &Arc<CudaContext>,
    program: &Program,
    plan: &Plan,
    pbytes: &[usize],
) -> Result<Vec<Vec<PinnedHost>>, Error> {
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
    let mut staging = Vec::new();
    if uses_staging {
        check_staging(plan, pbytes, crate::pages::pinned_budget())?;
        for s in 0..plan.buffer_sets {
            let mut v = Vec::with_capacity(pbytes.len());
            for (a, pb) in pbytes.iter().enumerate() {
                let what = format!("staging set {s} of `{}`", program.arrays[a].name);
                v.push(PinnedHost::new(ctx, pb * plan.buffer_planes, &what)?);
            }
            staging.push(v);
        }
    }
    Ok(staging)
}

/// The call's slices, copied to the device.
fn upload_slices(
    ctx: &Arc<CudaContext>,
    program: &Program,
    inv: &Invocation<'_>,
) -> Result<Vec<DeviceBuf>, Error> {
    let mut slices = Vec::with_capacity(inv.slices.len());
    for (i, s) in inv.slices.iter().enumerate() {
        let n = s.len * s.elem.size();
        let b = DeviceBuf::new(ctx, n, &format!("slice `{}`", program.slices[i].name))?;
        if n > 0 {
            // Registration widens the arrays' ranges to whole pages, which may cover part of a
            // small slice sharing a page with an array; the driver rejects copies from such
            // half-registered memory. A pinned bounce buffer of the driver's own never shares
            // a page with user memory.
            let bounce = PinnedHost::new(ctx, n, "slice bounce buffer")?;
            // SAFETY: `n` readable bytes at s.ptr (the caller's slice); bounce holds n bytes;
            // b holds n bytes on the device.
            unsafe {
                std::ptr::copy_nonoverlapping(s.ptr, bounce.ptr, n);
                driver::copy_htod(b.ptr, bounce.ptr, n, "copying a slice to the device")?;
            }
        }
        slices.push(b);
    }
    Ok(slices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;

    fn prog() -> Program {
        fixtures::one_kernel(
            "p",
            &[("a", Role::InOut), ("b", Role::InOut)],
            &[(0, 1)],
            1,
            1,
        )
    }

    #[test]
    fn staging_beyond_the_hosts_pinned_budget_is_a_typed_error_before_anything_is_pinned() {
        let p = prog();
        let opts = PlanOptions {
            chunks: 2,
            block_steps: 2,
            scheme: Scheme::StagedCopy,
            buffer_sets: 3,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        let plan = crate::plan::build(&p, &[256, 16, 16], 4, &[], &opts).unwrap();
        let pbytes = vec![16 * 16 * 4; 2];
        let need = 3 * (2 * 16 * 16 * 4) * plan.buffer_planes as u64;
        assert!(check_staging(&plan, &pbytes, None).is_ok());
        assert!(check_staging(&plan, &pbytes, Some(need)).is_ok());
        let e = check_staging(&plan, &pbytes, Some(need - 1)).unwrap_err();
        assert!(
            matches!(e, Error::HostMemory { bytes: Some(b), .. } if b == need),
            "{e}"
        );
        assert!(
            e.to_string().contains("more chunks make them smaller"),
            "{e}"
        );
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
            codec: Default::default(),
            read_only_ring: true,
        };
        let plan = crate::plan::build(&p, &[256, 16, 16], 4, &[], &opts).unwrap();
        let geoms = [Geometry {
            func: std::ptr::null_mut(),
            marching: false,
            vector: false,
            fused: false,
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
        let fit = |budget: u64| Fit {
            program: &p,
            points: vec![],
            geoms: &geoms,
            slice_bytes: 0,
            budget,
            free: budget,
        };
        let mut notes = vec![];
        // Fits as is.
        let q = fit(need(2)).fit(plan.clone(), &mut notes).unwrap();
        assert_eq!(q.chunks, 2);
        assert!(notes.is_empty());
        // Budget for exactly 11 chunks.
        let q = fit(need(11)).fit(plan.clone(), &mut notes).unwrap();
        assert_eq!(q.chunks, 11, "{notes:?}");
        assert!(need(10) > need(11));
        assert_eq!(notes.len(), 1);
        // Nothing fits.
        match fit(1000).fit(plan, &mut notes) {
            Err(Error::DeviceMemory {
                sets: 3,
                free: 1000,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }
}
