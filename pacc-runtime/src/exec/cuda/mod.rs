//! The CUDA backend: runs a [`Plan`] on an NVIDIA GPU through cudarc's driver API.
//!
//! * Kernels: the program's `cuda_source` is compiled by NVRTC once per process, device, source
//!   and FMA setting (`--fmad=false` unless `Options::fma`), to the device's machine code
//!   (CUBIN for `sm_XY`), which the driver loads without compiling again.
//! * Host memory: for direct-map, region-sharing and the wavefront, the user's arrays (read-only
//!   ones too) are page-locked with `cuMemHostRegister` (portable) piece by piece on a few
//!   threads, beside the run: each operation is enqueued once the pieces it touches are
//!   registered, writes to the arrays once all are, and each piece is unregistered, on a
//!   background thread, once its last operation has completed (`pinning.rs`, `defer.rs`); the
//!   run waits for that before it returns, so no page of the caller's stays registered after
//!   the call. Arrays already page-locked (a
//!   [`PinnedArray`], [`lock_host`]) are left alone. If registering fails, the arrays are
//!   untouched and the run is repeated as staged-copy; the report says so.
//! * Device memory: `buffer_sets` sets of one buffer per array (`buffer_planes * plane_len`
//!   elements), plus slices and reduction scratch, checked against `cuMemGetInfo` before anything
//!   is allocated; a plan that does not fit is re-planned with the smallest chunk count that does.
//!   For translated programs each row of the last axis starts on 128 bytes in the device buffers
//!   when that fits (`rows.rs`): transfers are then strided copies, the kernels get the pitch.
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
//!
//! Files, by phase: `prepare.rs` (compile, fit and re-plan, start page-locking, allocate),
//! `submit.rs` (ops onto streams with events), `collect.rs` (timings, reductions, report,
//! trace); `pinning.rs` and `defer.rs` page-lock the arrays beside the run. Raw driver
//! calls live only in `driver.rs`; the owners of memory, streams and events in `memory.rs` and
//! `stream.rs`. `probe.rs` answers the tuner's questions (free memory, link timing). The
//! benchmarks' baselines (`extra.rs`, `resident.rs`) are built only with the `bench` feature;
//! `codec_rate.rs` times the codec for the benchmark and for the tuner's compression decision.

mod bounce;
mod codec_rate;
mod collect;
mod compile;
mod compression;
mod cubin;
mod defer;
mod device;
mod driver;
#[cfg(feature = "bench")]
mod extra;
mod launch;
mod measure;
mod memory;
mod pinning;
mod prepare;
mod probe;
mod relay;
#[cfg(feature = "bench")]
mod resident;
mod rows;
mod stream;
mod submit;
mod trace;

pub use codec_rate::{codec_throughput, measure_codec, CodecRates};
pub(crate) use compile::start_early as compile_early;
pub(crate) use compile::Early as EarlyCompile;
pub use device::{available, prefer_device, DeviceInfo};
pub use driver::Unavailable;
#[cfg(feature = "bench")]
pub use extra::{managed_fits, run_managed, ManagedFitError, ManagedOutput};
pub use measure::{
    link_rates, measure_inputs, measure_inputs_at, measure_kernel_rates, measure_kernel_rates_at,
    measure_link, measure_march_candidates, release_slabs, CudaProbe,
};
pub use memory::{lock_host, lock_host_unchecked, HostLock, PinnedArray};
pub use probe::{
    device_memory_budget, device_memory_limit, free_memory, set_device_memory_limit, time_link,
    LinkTimes,
};
pub use relay::{Relay, RELAY_PIECE};
#[cfg(feature = "bench")]
pub use resident::{measure_dtod, ResidentOutput};
pub use trace::{trace_json, write_trace};

use crate::error::Error;
use crate::exec::{Peers, Tracker};
use crate::invocation::Invocation;
use crate::plan::{Plan, Scheme};
use crate::program::Program;
use crate::report::Report;
use crate::settled::Settled;
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

/// The checks every executor runs (`crate::validate`): the call, and the plan against it.
fn validate(program: &Program, plan: &Plan, inv: &Invocation<'_>) -> Result<(), Error> {
    crate::validate::execution(program, plan, inv)
}

/// The CUDA backend behind the executor interface ([`crate::exec::Executor`]): [`execute`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CudaExecutor;

impl crate::exec::Executor for CudaExecutor {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn execute_with(
        &self,
        program: &Program,
        plan: &Plan,
        inv: &Invocation<'_>,
        settled: &Settled,
        peers: Option<&dyn Peers>,
    ) -> Result<crate::exec::Executed, Error> {
        let o = execute_with_peers(program, plan, inv, settled, peers)?;
        Ok(crate::exec::Executed {
            reductions: o.reductions,
            report: o.report,
        })
    }
}

/// Serializes CUDA runs within the process (see [`execute`]).
static RUNS: Mutex<()> = Mutex::new(());

/// Runs `plan` for `program` on CUDA device 0 with the call's resolved settings
/// (`crate::config::settle`). See the module documentation.
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
    settled: &Settled,
) -> Result<CudaOutput, Error> {
    execute_with_peers(program, plan, inv, settled, None)
}

/// [`execute`] for a plan that may exchange halos with other ranks through `peers`.
fn execute_with_peers(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    settled: &Settled,
    peers: Option<&dyn Peers>,
) -> Result<CudaOutput, Error> {
    let _serial = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    settle();
    let r = {
        // Pieces handed over for unregistering wait until the run, teardown included, is over:
        // unregistering waits for the device to go idle.
        let _hold = pinning::background::hold();
        execute_serialized(program, plan, inv, settled, peers)
    };
    // No page of the caller's stays registered once the call returns: the caller may free or
    // reuse the memory at once, and a registration left behind serves a new mapping at the same
    // address the old bytes (reproduced on an H200 with the driver calls pacc makes).
    let t = Instant::now();
    settle();
    r.map(|mut out| {
        let s = t.elapsed().as_secs_f64();
        out.report.wall_seconds += s;
        out.report.stages.register += s;
        out.report.adjustments.push(format!(
            "unregistering the arrays after the last operation took {s:.3} s before the call \
             returned"
        ));
        out
    })
}

/// Waits until every piece of user memory handed over for unregistering is unregistered.
/// A run does this before it returns (no page of the caller's stays registered after the
/// call), so this is needed only after a run that failed. If unregistering a piece panicked
/// since the last wait, this says so on stderr (the piece may still be page-locked).
pub fn settle() {
    pinning::background::drain();
}

/// The three phases. Everything up to `submit` happens before any user data is touched; from
/// `submit` on, errors go through the tracker, which says what may have been written. A
/// registration that fails leaves the arrays untouched (`pinning.rs`): the run is then
/// repeated as staged-copy, which needs no page-locked user memory (compression has no such
/// fallback).
fn execute_serialized(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    settled: &Settled,
    peers: Option<&dyn Peers>,
) -> Result<CudaOutput, Error> {
    let t_start = Instant::now();
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    validate(program, plan, inv)?;
    let ctx = device::context(info.ordinal)?;
    let context_s = t_start.elapsed().as_secs_f64();
    let compiled = prepare::compile(&ctx, program, plan, &settled.cuda)?;
    let compile_s = t_start.elapsed().as_secs_f64() - context_s;
    let mut notes: Vec<String> = compiled.note.iter().cloned().collect();
    let pin = prepare::PinSettings {
        threads: settled.cuda.pin_threads,
        overlap: settled.cuda.pin_overlap,
    };
    let run = Run {
        ctx: &ctx,
        program,
        inv,
        settled,
        compiled: &compiled,
        info: &info,
        t_start,
        peers,
    };
    let pad = !settled.cuda.unpadded_rows;
    let placed = prepare::place(program, plan, inv, &compiled.geoms, pad, pin, &mut notes)?;
    let planned = placed.plan.clone();
    let place_s = t_start.elapsed().as_secs_f64() - compile_s - context_s;
    let before = [
        ("context", context_s),
        ("compile", compile_s),
        ("placement", place_s),
    ];
    let r = run.placed(placed, notes.clone()).map(|mut out| {
        out.report
            .prepend_setup(before.map(|(n, s)| (n.to_string(), s)).to_vec());
        out
    });
    match r {
        Err(Unplaced::Pinning(refused)) if planned.compresses() || planned.exchanges() => {
            Err(Error::Cuda {
                what: format!(
                    "page-locking the arrays (compression and halo exchanges need them \
                     page-locked: they have no {} fallback)",
                    Scheme::WHEN_PINNING_FAILS
                ),
                message: refused.to_string(),
            })
        }
        Err(Unplaced::Pinning(refused)) => {
            notes.push(format!(
                "registering the arrays as page-locked failed ({refused}); fell back to {}",
                Scheme::WHEN_PINNING_FAILS
            ));
            let staged = prepare::staged(program, &planned, inv, &compiled.geoms, &mut notes)?;
            let placed =
                prepare::place(program, &staged, inv, &compiled.geoms, pad, pin, &mut notes)?;
            run.placed(placed, notes).map_err(Unplaced::into_error)
        }
        r => r.map_err(Unplaced::into_error),
    }
}

/// Makes this thread's current CUDA context the run's device's (its primary context), as
/// libraries that use the current device (NCCL) expect.
pub fn bind_device() -> Result<(), Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    device::context(info.ordinal).map(|_| ())
}

/// Runs `f` with `bytes` bytes of zeroed device memory and a stream of the run's device, then
/// waits for the stream: for a peer library's first exchange (NCCL sets up its connections
/// then, while every rank is still known to be there).
pub fn with_scratch(
    bytes: usize,
    f: impl FnOnce(u64, *mut std::ffi::c_void) -> Result<(), Error>,
) -> Result<(), Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let buf = memory::DeviceBuf::new(&ctx, bytes, "a peer exchange's scratch")?;
    let streams = stream::Streams::new(1)?;
    let st = streams.0[0];
    // SAFETY: the buffer and the stream are ours; the stream is synchronized before either
    // is released.
    unsafe {
        driver::memset(buf.ptr, 0, bytes, "clearing the scratch")?;
        let r = f(buf.ptr, st as *mut std::ffi::c_void);
        let synced = driver::stream_sync(st, "the peer exchange's first round");
        r.and(synced)
    }
}

/// Why a placed run did not complete.
enum Unplaced {
    /// Registering the arrays failed; the arrays are untouched.
    Pinning(driver::RegisterError),
    Other(Error),
}

impl Unplaced {
    fn into_error(self) -> Error {
        match self {
            Unplaced::Pinning(refused) => refused.into(),
            Unplaced::Other(e) => e,
        }
    }
}

impl From<Error> for Unplaced {
    fn from(e: Error) -> Self {
        Unplaced::Other(e)
    }
}

/// What every attempt of a run shares.
struct Run<'a, 'i> {
    ctx: &'a Arc<cudarc::driver::CudaContext>,
    program: &'a Program,
    inv: &'a Invocation<'i>,
    settled: &'a Settled,
    compiled: &'a prepare::Compiled,
    info: &'a DeviceInfo,
    t_start: Instant,
    peers: Option<&'a dyn Peers>,
}

impl Run<'_, '_> {
    /// Allocates, submits and collects a placed plan.
    fn placed(&self, placed: prepare::Placed, notes: Vec<String>) -> Result<CudaOutput, Unplaced> {
        let (program, inv) = (self.program, self.inv);
        let plan = placed.plan;
        // Padded rows may admit the vector forms the host's rows did not.
        let compiled =
            &self
                .compiled
                .for_rows(program, &plan.shape, placed.rows, &self.settled.cuda)?;
        let geoms = &compiled.geoms;
        let t_alloc = Instant::now();
        let mut res = prepare::allocate(
            self.ctx,
            program,
            &plan,
            inv,
            geoms,
            placed.rows,
            &self.settled.cuda,
        )?;
        let allocated = t_alloc.elapsed().as_secs_f64();
        let mut notes = notes;
        let wanted = self.settled.cuda.host_path;
        let t_host = Instant::now();
        (res.pinning, res.bounce) = prepare::reach_host(
            self.ctx, program, &plan, inv, placed.pin, wanted, &mut notes,
        )?;
        let host_path = t_host.elapsed().as_secs_f64();
        let setup_s = self.t_start.elapsed().as_secs_f64();
        let mut tracker = Tracker::new(&plan);
        let submitted = submit::submit(
            program,
            &plan,
            inv,
            compiled,
            &mut res,
            &mut tracker,
            submit::Outside {
                on_progress: self.settled.on_progress.as_ref(),
                peers: self.peers,
            },
        );
        let pin_failure = res.pinning.as_ref().and_then(|p| p.pinner.driver_failure());
        let op_slot = match (submitted, pin_failure) {
            (Err(e), Some(m)) if !matches!(e, Error::Failed { .. }) => {
                return Err(Unplaced::Pinning(m))
            }
            (r, _) => r?,
        };
        let fail = |e: Error| tracker.fail(e);
        if let Some(c) = &res.codec {
            c.check(self.ctx, program).map_err(fail)?;
        }
        let codec_note = res.codec.as_ref().and_then(|c| c.note());
        // SAFETY: `submit` recorded every op's events and synchronized every stream.
        let (mut stages, timeline) =
            unsafe { collect::timings(program, &plan, &res) }.map_err(fail)?;
        notes.extend(codec_note);
        if res.serial {
            notes.push(
                "every operation ran on one stream, in plan order (PACC_SERIAL_STREAM)".into(),
            );
        }
        if let Some(p) = &res.pinning {
            stages.register = p.pinner.waited;
            notes.push(pinning_note(p));
        }
        if let Some(b) = &res.bounce {
            notes.push(format!(
                "bounced {:.1} GB to the device and {:.1} GB back through the pinned rings",
                b.bytes[0] as f64 / 1e9,
                b.bytes[1] as f64 / 1e9
            ));
        }
        stages.setup = setup_s;
        let vals = collect::read_slots(self.ctx, &res).map_err(fail)?;
        let reductions = collect::combine_reductions(program, &plan, inv, &op_slot, &vals);
        let wall = self.t_start.elapsed().as_secs_f64();
        let parts = (stages, timeline);
        let mut report =
            collect::report(program, &plan, self.info, self.settled, parts, notes, wall);
        report.device_bytes += res.rows.extra_bytes(&plan);
        report.add_setup("allocation", allocated);
        report.add_setup("host path", host_path);
        report.kernels = (compiled.geoms.iter().zip(&program.kernels).enumerate())
            .map(|(k, (g, kd))| g.stats(kd, program, &plan.kernel_launches(k)))
            .collect();
        // The run completed: its pieces are unregistered after it returns.
        if let Some(p) = res.pinning.as_mut() {
            p.pinner.detach();
        }
        // `res` drops here: it synchronizes, frees, then hands over what is left to unregister.
        Ok(CudaOutput {
            reductions,
            report,
            plan,
        })
    }
}

/// The report's line on page-locking: how much, on how many threads, how much of it the run
/// waited for.
fn pinning_note(p: &prepare::Pinning) -> String {
    format!(
        "page-locked {:.1} GiB of the arrays in {} pieces on {} threads {}: {:.2} s of \
         registration, {:.2} s of it waited for",
        p.plan.bytes() as f64 / (1u64 << 30) as f64,
        p.plan.pieces.len(),
        p.threads,
        if p.overlap {
            "beside the run"
        } else {
            "before the first operation"
        },
        p.pinner.busy(),
        p.pinner.waited
    )
}
