//! Measurements and baselines around the executor, for the tuner and the benchmark program:
//!
//! * [`measure_link`]: host <-> device bandwidth with pinned buffers (each way, and both ways at
//!   once on two streams), timed with events.
//! * [`free_memory`]: free and total device memory (`cuMemGetInfo`).
//! * [`lock_host`]: page-locks the caller's arrays until the guard drops, so that several runs
//!   over the same arrays register them once (runs skip arrays that are already page-locked).
//! * [`run_managed`]: the unified-memory baseline: the program's own kernels launched over the
//!   whole domain every step on arrays in managed memory, with or without `cuMemPrefetchAsync`.
//!   It refuses (an error, nothing allocated) when the arrays would not fit in free device memory:
//!   oversubscribed managed memory can hang a shared GPU.

use super::device::{context, cuda_err, module};
use super::memory::{DeviceBuf, PinnedHost, Registration};
use super::{available, Events, Streams, SyncOnDrop};
use crate::error::Error;
use crate::invocation::{HostArray, Invocation};
use crate::options::Options;
use crate::program::Program;
use crate::tune::LinkRates;
use cudarc::driver::{result, sys};
use std::ffi::c_void;
use std::time::Instant;

/// Free and total device memory in bytes.
pub fn free_memory() -> Result<(u64, u64), Error> {
    let info = available().map_err(|reason| Error::NoCuda { reason })?;
    let _ctx = context(info.ordinal)?;
    let (f, t) = result::mem_get_info().map_err(cuda_err("cuMemGetInfo"))?;
    Ok((f as u64, t as u64))
}

/// Measures the link with `bytes`-byte pinned buffers: the best of `reps` timed copies host to
/// device, device to host, and both at once (two streams; the rate counts the bytes of both).
pub fn measure_link(bytes: usize, reps: usize) -> Result<LinkRates, Error> {
    let info = available().map_err(|reason| Error::NoCuda { reason })?;
    let ctx = context(info.ordinal)?;
    let cerr = |w: &str| cuda_err(w.to_string());
    let bytes = bytes.max(1 << 20);
    let reps = reps.max(1);
    let h0 = PinnedHost::new(&ctx, bytes, "link measurement")?;
    let h1 = PinnedHost::new(&ctx, bytes, "link measurement")?;
    // SAFETY: freshly allocated host memory of `bytes` bytes each.
    unsafe {
        std::ptr::write_bytes(h0.ptr, 1, bytes);
        std::ptr::write_bytes(h1.ptr, 2, bytes);
    }
    let d0 = DeviceBuf::new(&ctx, bytes, "link measurement")?;
    let d1 = DeviceBuf::new(&ctx, bytes, "link measurement")?;
    let mut streams = Streams(Vec::new());
    for _ in 0..2 {
        streams.0.push(
            result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(cerr("creating a stream"))?,
        );
    }
    let mut events = Events(Vec::new());
    for _ in 0..4 {
        events.0.push(
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(cerr("creating an event"))?,
        );
    }
    let _sync = SyncOnDrop(ctx.clone());
    let (s0, s1) = (streams.0[0], streams.0[1]);
    let (e0, e1, e2, e3) = (events.0[0], events.0[1], events.0[2], events.0[3]);
    // mode 0: HtoD on s0; 1: DtoH on s0; 2: HtoD on s0 and DtoH on s1 at once.
    let mut best = [f64::INFINITY; 3];
    // SAFETY: copies between buffers we allocated, of their size; synchronized before reading
    // the events and before the buffers drop.
    unsafe {
        for (mode, best) in best.iter_mut().enumerate() {
            for rep in 0..=reps {
                result::event::record(e0, s0).map_err(cerr("recording an event"))?;
                result::stream::wait_event(s1, e0, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                    .map_err(cerr("cuStreamWaitEvent"))?;
                if mode == 0 || mode == 2 {
                    sys::cuMemcpyHtoDAsync_v2(d0.ptr, h0.ptr as *const c_void, bytes, s0)
                        .result()
                        .map_err(cerr("cuMemcpyHtoDAsync"))?;
                }
                if mode == 1 {
                    sys::cuMemcpyDtoHAsync_v2(h1.ptr as *mut c_void, d1.ptr, bytes, s0)
                        .result()
                        .map_err(cerr("cuMemcpyDtoHAsync"))?;
                }
                if mode == 2 {
                    sys::cuMemcpyDtoHAsync_v2(h1.ptr as *mut c_void, d1.ptr, bytes, s1)
                        .result()
                        .map_err(cerr("cuMemcpyDtoHAsync"))?;
                }
                result::event::record(e1, s0).map_err(cerr("recording an event"))?;
                result::event::record(e2, s1).map_err(cerr("recording an event"))?;
                result::stream::wait_event(s0, e2, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                    .map_err(cerr("cuStreamWaitEvent"))?;
                result::event::record(e3, s0).map_err(cerr("recording an event"))?;
                result::stream::synchronize(s0).map_err(cerr("synchronizing"))?;
                let ms = result::event::elapsed(e0, e3).map_err(cerr("cuEventElapsedTime"))?;
                if rep > 0 {
                    // rep 0 warms up
                    *best = best.min(ms as f64 / 1e3);
                }
            }
        }
    }
    let b = bytes as f64;
    Ok(LinkRates {
        htod: b / best[0],
        dtoh: b / best[1],
        both: 2.0 * b / best[2],
        bytes,
    })
}

/// Page-locked host arrays; unregistered when dropped.
pub struct HostLock {
    _reg: Registration,
    /// Seconds spent registering.
    pub seconds: f64,
    pub bytes: usize,
}

/// Page-locks `arrays` (those not already page-locked) until the guard drops. While it lives,
/// CUDA runs over these arrays skip registering them (the report notes it).
pub fn lock_host(arrays: &[HostArray]) -> Result<HostLock, Error> {
    let info = available().map_err(|reason| Error::NoCuda { reason })?;
    let ctx = context(info.ordinal)?;
    let t = Instant::now();
    let ranges: Vec<(*mut u8, usize)> = arrays.iter().map(|a| (a.ptr, a.bytes())).collect();
    let reg = Registration::new(&ctx, &ranges).map_err(|m| Error::Cuda {
        what: "page-locking the arrays".into(),
        message: m,
    })?;
    let bytes = reg.bytes();
    Ok(HostLock {
        _reg: reg,
        seconds: t.elapsed().as_secs_f64(),
        bytes,
    })
}

/// What a unified-memory run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ManagedOutput {
    /// From the first prefetch / kernel to the results being back in host memory.
    pub seconds: f64,
    /// Sum of the kernels' event times (they include page-fault migration without prefetch).
    pub kernel_seconds: f64,
    /// Prefetching to the device before the first step.
    pub prefetch_in_seconds: f64,
    /// Getting the results back to the host (prefetch to the host, or the host touching every
    /// page of the written arrays).
    pub back_seconds: f64,
    /// Bytes of managed memory.
    pub managed_bytes: u64,
    /// Setup: allocating managed memory and filling it from the caller's arrays (not timed).
    pub setup_seconds: f64,
}

struct Managed(Vec<sys::CUdeviceptr>);
impl Drop for Managed {
    fn drop(&mut self) {
        for &p in &self.0 {
            if p != 0 {
                // SAFETY: allocated by cuMemAllocManaged below; work synchronized before drop.
                unsafe {
                    let _ = result::free_sync(p);
                }
            }
        }
    }
}

/// Bytes kept free beside a managed allocation (context, modules, other tenants' slack).
const MANAGED_MARGIN: u64 = 2 << 30;

/// Whether `bytes` of managed memory fit in free device memory with a margin (`Err` says why
/// not). Never allocate managed memory without asking this first.
pub fn managed_fits(bytes: u64) -> Result<(), String> {
    let (free, _) = free_memory().map_err(|e| e.to_string())?;
    if bytes + MANAGED_MARGIN > free {
        return Err(format!(
            "{:.1} GiB of managed arrays (+{:.0} GiB margin) would not fit in the {:.1} GiB of free device memory; not oversubscribing a shared GPU",
            bytes as f64 / (1u64 << 30) as f64,
            MANAGED_MARGIN as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        ));
    }
    Ok(())
}

/// Runs `inv.steps` steps of `program` with every array in managed memory: per step, each stage
/// in program order (kernels over the whole domain, point statements, swaps by renaming). The
/// caller's arrays are copied into managed memory first and the results copied back at the end
/// (both untimed); reductions are computed by the kernels but not combined (not returned).
pub fn run_managed(
    program: &Program,
    inv: &Invocation<'_>,
    opts: &Options,
    prefetch: bool,
) -> Result<ManagedOutput, Error> {
    let info = available().map_err(|reason| Error::NoCuda { reason })?;
    let ctx = context(info.ordinal)?;
    let cerr = |w: &str| cuda_err(w.to_string());
    let t_setup = Instant::now();
    let total: u64 = inv.arrays.iter().map(|a| a.bytes() as u64).sum();
    managed_fits(total).map_err(|m| Error::Cuda {
        what: "the unified-memory baseline".into(),
        message: m,
    })?;
    let tuning = super::launch::MarchTuning::from_env()?;
    let md = module(
        &ctx,
        &program.name,
        &tuning.source(&program.cuda_source),
        opts.fma,
    )?;
    let mut managed = Managed(Vec::new());
    for a in &inv.arrays {
        // SAFETY: plain allocation, freed by `Managed`.
        let p = unsafe {
            result::malloc_managed(a.bytes(), sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
        }
        .map_err(cerr("cuMemAllocManaged"))?;
        managed.0.push(p);
        // SAFETY: `a.bytes()` bytes on both sides; managed memory is host-accessible.
        par_copy(a.ptr as *const u8, p as *mut u8, a.bytes());
    }
    let steps = super::resident::Steps::new(&ctx, &md, program, inv, opts, &tuning)?;
    let streams = Streams(vec![result::stream::create(
        result::stream::StreamKind::NonBlocking,
    )
    .map_err(cerr("creating a stream"))?]);
    let st = streams.0[0];
    let sync = SyncOnDrop(ctx.clone());
    // Make sure the host-side fill is complete and nothing is in flight.
    ctx.synchronize().map_err(cerr("synchronizing"))?;
    let setup_seconds = t_setup.elapsed().as_secs_f64();

    let dev = info.ordinal as i32;
    let loc_dev = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: dev,
    };
    let loc_host = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
        id: 0,
    };
    let mut out = ManagedOutput {
        managed_bytes: total,
        setup_seconds,
        ..Default::default()
    };
    let t0 = Instant::now();
    // SAFETY: launches over managed arrays of the full shape with the ABI of internals.md §3;
    // everything is on one stream and synchronized before the buffers drop.
    unsafe {
        if prefetch {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                result::mem_prefetch_async(p, a.bytes(), loc_dev, st)
                    .map_err(cerr("cuMemPrefetchAsync to the device"))?;
            }
            result::stream::synchronize(st).map_err(cerr("prefetching"))?;
        }
        out.prefetch_in_seconds = t0.elapsed().as_secs_f64();
        let ran = steps.run(&managed.0)?;
        out.kernel_seconds = ran.kernel_seconds.iter().sum();
        let t_back = Instant::now();
        if prefetch {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                if a.writable {
                    result::mem_prefetch_async(p, a.bytes(), loc_host, st)
                        .map_err(cerr("cuMemPrefetchAsync to the host"))?;
                }
            }
            result::stream::synchronize(st).map_err(cerr("prefetching back"))?;
        } else {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                if a.writable {
                    touch_pages(p as *const u8, a.bytes());
                }
            }
        }
        out.back_seconds = t_back.elapsed().as_secs_f64();
    }
    out.seconds = t0.elapsed().as_secs_f64();
    // Results back into the caller's arrays (untimed).
    for (a, &p) in inv.arrays.iter().zip(&managed.0) {
        if a.writable {
            par_copy(p as *const u8, a.ptr, a.bytes());
        }
    }
    drop(sync);
    Ok(out)
}

/// Parallel memcpy of `n` bytes (non-overlapping).
fn par_copy(src: *const u8, dst: *mut u8, n: usize) {
    use rayon::prelude::*;
    const PIECE: usize = 8 << 20;
    let (s, d) = (src as usize, dst as usize);
    (0..n.div_ceil(PIECE)).into_par_iter().for_each(|i| {
        let o = i * PIECE;
        let len = PIECE.min(n - o);
        // SAFETY: disjoint pieces of two valid, non-overlapping ranges of n bytes.
        unsafe { std::ptr::copy_nonoverlapping((s + o) as *const u8, (d + o) as *mut u8, len) };
    });
}

/// Reads one byte of every 4 KiB page, in parallel (forces managed pages back to the host).
fn touch_pages(p: *const u8, n: usize) {
    use rayon::prelude::*;
    const PAGE: usize = 4096;
    let base = p as usize;
    let sum: u64 = (0..n.div_ceil(PAGE))
        .into_par_iter()
        .map(|i| {
            // SAFETY: inside the n-byte managed allocation.
            unsafe { std::ptr::read_volatile((base + i * PAGE) as *const u8) as u64 }
        })
        .sum();
    std::hint::black_box(sum);
}

/// Device memory a plan may use now: free memory (capped by [`super::set_device_memory_limit`])
/// less the executor's reserve.
pub fn device_memory_budget() -> Result<u64, Error> {
    let (free, _) = free_memory()?;
    let free = free.min(super::MEMORY_LIMIT.load(std::sync::atomic::Ordering::Relaxed));
    Ok(free.saturating_sub(super::RESERVE))
}
