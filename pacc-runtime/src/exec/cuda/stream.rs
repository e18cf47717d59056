//! Owners of streams and events, the payload of host functions enqueued on streams, and the
//! guard that synchronizes a context before a run's resources are freed.

use super::driver::{self, Event, Stream};
use crate::error::Error;
use cudarc::driver::CudaContext;
use std::ffi::c_void;
use std::sync::Arc;

/// Non-blocking streams, destroyed when dropped.
pub(crate) struct Streams(pub Vec<Stream>);

impl Streams {
    pub fn new(n: usize) -> Result<Streams, Error> {
        Streams::prioritized(n, |_| None)
    }

    /// `n` streams, stream `i` at high priority (`Some(true)`), low (`Some(false)`) or the
    /// default (`None`) per `priority(i)`.
    pub fn prioritized(
        n: usize,
        priority: impl Fn(usize) -> Option<bool>,
    ) -> Result<Streams, Error> {
        let mut s = Streams(Vec::with_capacity(n));
        for i in 0..n {
            s.0.push(match priority(i) {
                Some(high) => driver::stream_create_prioritized(high)?,
                None => driver::stream_create()?,
            });
        }
        Ok(s)
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        for &s in &self.0 {
            // SAFETY: created by us; work was synchronized before this drop.
            unsafe { driver::stream_destroy(s) };
        }
    }
}

/// Timing events, destroyed when dropped.
pub(crate) struct Events(pub Vec<Event>);

impl Events {
    pub fn new(n: usize) -> Result<Events, Error> {
        let mut e = Events(Vec::with_capacity(n));
        for _ in 0..n {
            e.0.push(driver::event_create()?);
        }
        Ok(e)
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        for &e in &self.0 {
            // SAFETY: created by us.
            unsafe { driver::event_destroy(e) };
        }
    }
}

/// Synchronizes the context when dropped: declared after (or, in a struct, before) every
/// resource of a run, so it runs first on every exit path (errors included) and nothing is freed
/// while the GPU may use it.
pub(crate) struct SyncOnDrop(pub Arc<CudaContext>);

impl Drop for SyncOnDrop {
    fn drop(&mut self) {
        let _ = self.0.bind_to_thread();
        let _ = self.0.synchronize();
    }
}

/// Payload of a host-function copy (StageIn/StageOut, and the bounce rings' copies).
pub(super) struct HostCopy {
    pub src: *const u8,
    pub dst: *mut u8,
    pub len: usize,
    /// Copies of at least four pieces go in pieces of this many bytes on rayon's pool.
    pub piece: usize,
    pub stores: crate::memcopy::Stores,
}

/// The host function of a [`HostCopy`] (runs on the driver's thread; large copies in pieces on
/// `memcopy`'s pool).
///
/// # Safety
/// `user` must point at a live `HostCopy` whose ranges are valid and do not overlap.
pub(super) unsafe extern "C" fn host_copy(user: *mut c_void) {
    let c = &*(user as *const HostCopy);
    crate::memcopy::copy_with(c.src, c.dst, c.len, c.piece, c.stores);
}
