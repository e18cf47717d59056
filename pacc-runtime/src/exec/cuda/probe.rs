//! What the tuner asks the device before a run: free memory, the memory a plan may use, and
//! how long the link takes to move a buffer each way. Rates and the model built on them live in
//! `crate::tune`; this module only times the hardware.

use super::device::available;
use super::device::context;
use super::driver;
use super::memory::{DeviceBuf, PinnedHost};
use super::stream::{Events, Streams, SyncOnDrop};
use crate::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};

/// Device memory kept free besides the plan's buffers (context, modules, driver bookkeeping).
pub(super) const RESERVE: u64 = 64 << 20;

static MEMORY_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Caps the device memory runs may plan for (as if the GPU had only `bytes` free), to try
/// out-of-core behaviour on a large GPU; `None` lifts the cap. Process-wide.
pub fn set_device_memory_limit(bytes: Option<u64>) {
    MEMORY_LIMIT.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The cap [`set_device_memory_limit`] set, if any.
pub fn device_memory_limit() -> Option<u64> {
    Some(MEMORY_LIMIT.load(Ordering::Relaxed)).filter(|&l| l != u64::MAX)
}

/// Free device memory as runs see it: the driver's figure, capped by
/// [`set_device_memory_limit`]. The context must be current.
pub(super) fn free_for_runs() -> Result<u64, Error> {
    let (free, _total) = driver::mem_get_info()?;
    Ok(free.min(MEMORY_LIMIT.load(Ordering::Relaxed)))
}

/// Free and total device memory in bytes.
pub fn free_memory() -> Result<(u64, u64), Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let _ctx = context(info.ordinal)?;
    driver::mem_get_info()
}

/// Device memory a plan may use now: free memory (capped by [`super::set_device_memory_limit`])
/// less the executor's reserve.
pub fn device_memory_budget() -> Result<u64, Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let _ctx = context(info.ordinal)?;
    Ok(free_for_runs()?.saturating_sub(RESERVE))
}

/// Best times of one buffer's copy over the link (see [`time_link`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkTimes {
    /// Bytes of each copy.
    pub bytes: usize,
    /// Seconds host to device.
    pub htod: f64,
    /// Seconds device to host.
    pub dtoh: f64,
    /// Seconds for one copy each way at once (two streams).
    pub both: f64,
}

/// Times the link with `bytes`-byte pinned buffers (at least 1 MiB): the best of `reps` timed
/// copies host to device, device to host, and both at once on two streams.
pub fn time_link(bytes: usize, reps: usize) -> Result<LinkTimes, Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = context(info.ordinal)?;
    let bytes = bytes.max(1 << 20);
    let h0 = PinnedHost::new(&ctx, bytes, "link measurement")?;
    let h1 = PinnedHost::new(&ctx, bytes, "link measurement")?;
    // SAFETY: freshly allocated host memory of `bytes` bytes each.
    unsafe {
        std::ptr::write_bytes(h0.ptr, 1, bytes);
        std::ptr::write_bytes(h1.ptr, 2, bytes);
    }
    let d0 = DeviceBuf::new(&ctx, bytes, "link measurement")?;
    let d1 = DeviceBuf::new(&ctx, bytes, "link measurement")?;
    let streams = Streams::new(2)?;
    let events = Events::new(4)?;
    let _sync = SyncOnDrop(ctx.clone());
    let (s0, s1) = (streams.0[0], streams.0[1]);
    let (e0, e1, e2, e3) = (events.0[0], events.0[1], events.0[2], events.0[3]);
    // mode 0: HtoD on s0; 1: DtoH on s0; 2: HtoD on s0 and DtoH on s1 at once.
    let mut best = [f64::INFINITY; 3];
    // SAFETY: copies between buffers we allocated, of their size; synchronized before reading
    // the events and before the buffers drop.
    unsafe {
        for (mode, best) in best.iter_mut().enumerate() {
            for rep in 0..=reps.max(1) {
                driver::event_record(e0, s0)?;
                driver::stream_wait(s1, e0)?;
                if mode == 0 || mode == 2 {
                    driver::copy_htod_async(d0.ptr, h0.ptr, bytes, s0, "cuMemcpyHtoDAsync")?;
                }
                if mode == 1 || mode == 2 {
                    let st = if mode == 1 { s0 } else { s1 };
                    driver::copy_dtoh_async(h1.ptr, d1.ptr, bytes, st, "cuMemcpyDtoHAsync")?;
                }
                driver::event_record(e1, s0)?;
                driver::event_record(e2, s1)?;
                driver::stream_wait(s0, e2)?;
                driver::event_record(e3, s0)?;
                driver::stream_sync(s0, "synchronizing")?;
                let ms = driver::event_elapsed_ms(e0, e3)?;
                if rep > 0 {
                    // rep 0 warms up
                    *best = best.min(ms as f64 / 1e3);
                }
            }
        }
    }
    Ok(LinkTimes {
        bytes,
        htod: best[0],
        dtoh: best[1],
        both: best[2],
    })
}
