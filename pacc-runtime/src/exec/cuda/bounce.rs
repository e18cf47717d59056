//! Transfers that bounce through a small ring of pacc's own pinned buffers instead of
//! page-locking the caller's arrays. Registering ordinary 4 KiB pages runs at 15-26 GB/s and
//! the driver serializes it (two ranks of one host at 6-7 GB/s each), so a call that moves each
//! byte once or twice waits for the registration rather than the link. Here every piece is
//! copied by the host (`crate::memcopy`'s pool, in parallel) into a pinned slot and crosses the
//! link from there, while the next slot fills: the host copies overlap the link, and host
//! memory stays bounded at [`SLOTS`] x [`SLOT_BYTES`] per direction. The copies and the DMA
//! share the host's memory, so bounced bytes move at about half the measured copy rate, which
//! the tuner's price counts (`tune::host_path`). That memory is the bound: on the H200 machine's
//! host it carries about 148 GB/s in all while the copy engines run, and a bounced byte crosses
//! it three times (the copy's read and write, the engine's access), so a one-shot call bouncing
//! 160 GB cannot take less than 3.24 s there; it took 3.48
//! (`benches/results/2026-11-28-h200-verify-fused/`).
//!
//! Ordering is by events only, so submission never blocks: per direction one host-function
//! stream does the host copies in submission order; a slot is `filled` once its bytes are in
//! place for the next stage and `free` once the stage after it has read them. The submitter
//! makes the upload stream wait for what an upload reads (`submit.rs`, `order_bounced_read`).

use super::driver::{self, Event, Stream};
use super::memory::PinnedHost;
use super::stream::{host_copy, Events, HostCopy, Streams};
use crate::error::Error;
use cudarc::driver::CudaContext;
use std::ffi::c_void;
use std::sync::Arc;

/// Slots per direction.
pub(super) const SLOTS: usize = 4;
/// Bytes of one slot: 1.2 ms of an H200's link, and 64 pieces for the host copy's threads.
/// Each slot's copy is a host function with a fixed cost, which larger slots spread: a
/// one-shot call bouncing 55 GB took 1.75 s with 64 MiB slots against 1.90-2.30 s with
/// 32 MiB, 2.86-3.31 s with 8 MiB and 8.31 s with 4 MiB; 128 MiB gained nothing more (1.79 s;
/// H200, 2026-11-28, `benches/results/2026-11-28-h200-cold-link/`). More slots do not make small
/// ones pay, though rings that fit the host's cache spare its memory: 16 x 4 MiB and 8-16 x
/// 8 MiB, with cached stores into the upload slots, took 2.2-2.9 s against 1.55-1.68 s
/// (`benches/results/2026-11-28-h200-verify-fused/`, call 9), as both directions' host
/// functions take turns on the driver's one thread.
pub(super) const SLOT_BYTES: usize = 64 << 20;

/// One direction's ring.
struct Lane {
    slots: Vec<PinnedHost>,
    /// Per slot: its bytes are ready for the stage that reads them.
    filled: Events,
    /// Per slot: the stage that read it has, so it may be written again.
    free: Events,
    /// The host-function stream of this direction's host copies.
    host: Stream,
    next: usize,
}

impl Lane {
    fn new(ctx: &Arc<CudaContext>, bytes: usize, host: Stream, what: &str) -> Result<Lane, Error> {
        let slots = (0..SLOTS)
            .map(|_| PinnedHost::new(ctx, bytes, what))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Lane {
            slots,
            filled: Events::new(SLOTS)?,
            free: Events::new(SLOTS)?,
            host,
            next: 0,
        })
    }

    fn take(&mut self) -> usize {
        let s = self.next;
        self.next = (s + 1) % SLOTS;
        s
    }
}

/// The two rings of a run, their host-function streams, and the payloads of the host copies
/// enqueued so far (alive until the streams have drained, which `Resources` guarantees).
pub(super) struct Bounce {
    inbound: Lane,
    outbound: Lane,
    /// After the last host copy of the latest download.
    copied_out: Events,
    /// Boxed: the driver holds pointers to them while the vector grows.
    #[allow(clippy::vec_box)]
    copies: Vec<Box<HostCopy>>,
    slot_bytes: usize,
    /// Bytes moved through the rings, in and out.
    pub bytes: [u64; 2],
    // Declared last: dropped after the events and slots' users are done (streams synchronized
    // by the run before `Resources` drops).
    streams: Streams,
}

impl Bounce {
    /// Rings whose slots hold at least one row of `row_bytes` (the largest row a strided copy
    /// moves), at least [`SLOT_BYTES`].
    pub fn new(ctx: &Arc<CudaContext>, row_bytes: usize) -> Result<Bounce, Error> {
        Bounce::with_slots(ctx, SLOT_BYTES.max(row_bytes))
    }

    /// Rings of `slot_bytes` slots (smaller ones for transfers that small).
    pub fn with_slots(ctx: &Arc<CudaContext>, slot_bytes: usize) -> Result<Bounce, Error> {
        let slot_bytes = slot_bytes.max(1);
        let streams = Streams::new(2)?;
        let (i, o) = (streams.0[0], streams.0[1]);
        Ok(Bounce {
            inbound: Lane::new(ctx, slot_bytes, i, "the upload ring")?,
            outbound: Lane::new(ctx, slot_bytes, o, "the download ring")?,
            copied_out: Events::new(1)?,
            copies: Vec::new(),
            slot_bytes,
            bytes: [0; 2],
            streams,
        })
    }

    /// Pinned host memory the rings hold.
    pub fn pinned_bytes(&self) -> usize {
        2 * SLOTS * self.slot_bytes
    }

    /// The host-function streams, to drain on an error.
    pub fn streams(&self) -> &[Stream] {
        &self.streams.0
    }

    fn host_copy(
        &mut self,
        st: Stream,
        src: *const u8,
        dst: *mut u8,
        len: usize,
    ) -> Result<(), Error> {
        let c = Box::new(HostCopy {
            src,
            dst,
            len,
            piece: crate::memcopy::BOUNCE_PIECE,
            stores: crate::memcopy::BOUNCE_STORES,
        });
        let p = &*c as *const HostCopy as *mut c_void;
        self.copies.push(c);
        // SAFETY: the payload lives in `copies` until the streams drain; the caller vouches
        // for the ranges.
        unsafe { driver::launch_host_func(st, host_copy, p) }
    }

    /// Makes the host copies of the uploads enqueued after this wait for `events`.
    ///
    /// # Safety
    /// The events are live.
    pub unsafe fn inbound_after(&self, events: &[Event]) -> Result<(), Error> {
        for &e in events {
            driver::stream_wait(self.inbound.host, e)?;
        }
        Ok(())
    }

    /// Enqueues the upload of `len` bytes at `host` in pieces of whole `unit`s: each piece is
    /// copied into a slot on the inbound host stream, then `dma(slot, offset, n)` enqueues its
    /// copy from the slot on `st` (the piece is `host[offset..offset + n]`).
    ///
    /// # Safety
    /// `host` is readable for `len` bytes until `st` has passed this upload; `dma` enqueues
    /// on `st` a copy that reads only the `n` bytes at the slot.
    pub unsafe fn upload(
        &mut self,
        host: *const u8,
        len: usize,
        unit: usize,
        st: Stream,
        mut dma: impl FnMut(*const u8, usize, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        for (off, n) in cut(self.slot_bytes, len, unit) {
            let s = self.inbound.take();
            let (slot, hs) = (self.inbound.slots[s].ptr, self.inbound.host);
            driver::stream_wait(hs, self.inbound.free.0[s])?;
            self.host_copy(hs, host.add(off), slot, n)?;
            driver::event_record(self.inbound.filled.0[s], hs)?;
            driver::stream_wait(st, self.inbound.filled.0[s])?;
            dma(slot, off, n)?;
            driver::event_record(self.inbound.free.0[s], st)?;
            self.bytes[0] += n as u64;
        }
        Ok(())
    }

    /// Enqueues the download of `len` bytes to `host` in pieces of whole `unit`s: `dma(slot,
    /// offset, n)` enqueues on `st` the copy of the piece into a slot, which the outbound host
    /// stream then copies to `host[offset..offset + n]`. `st` waits for the last host copy, so
    /// whatever `st` records next follows the bytes' arrival.
    ///
    /// # Safety
    /// `host` is writable for `len` bytes, by nothing else, until `st` has passed this
    /// download; `dma` enqueues on `st` a copy that writes only the `n` bytes at the slot.
    pub unsafe fn download(
        &mut self,
        host: *mut u8,
        len: usize,
        unit: usize,
        st: Stream,
        mut dma: impl FnMut(*mut u8, usize, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let hs = self.outbound.host;
        for (off, n) in cut(self.slot_bytes, len, unit) {
            let s = self.outbound.take();
            let slot = self.outbound.slots[s].ptr;
            driver::stream_wait(st, self.outbound.free.0[s])?;
            dma(slot, off, n)?;
            driver::event_record(self.outbound.filled.0[s], st)?;
            driver::stream_wait(hs, self.outbound.filled.0[s])?;
            self.host_copy(hs, slot, host.add(off), n)?;
            driver::event_record(self.outbound.free.0[s], hs)?;
            self.bytes[1] += n as u64;
        }
        if len > 0 {
            driver::event_record(self.copied_out.0[0], hs)?;
            driver::stream_wait(st, self.copied_out.0[0])?;
        }
        Ok(())
    }
}

/// `len` bytes cut into pieces of whole `unit`s, each at most `slot` bytes unless one unit is
/// larger: `(offset, len)` per piece.
fn cut(slot: usize, len: usize, unit: usize) -> Vec<(usize, usize)> {
    let unit = unit.max(1);
    let step = (slot / unit).max(1) * unit;
    (0..len.div_ceil(step))
        .map(|i| (i * step, step.min(len - i * step)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::cut as pieces;

    #[test]
    fn pieces_are_whole_units_within_a_slot_and_cover_the_range() {
        let p = pieces(100, 250, 30);
        assert_eq!(p, vec![(0, 90), (90, 90), (180, 70)]);
        assert_eq!(pieces(100, 0, 7), vec![]);
        // A unit larger than a slot still moves (the rings are sized for the largest row).
        assert_eq!(pieces(10, 40, 20), vec![(0, 20), (20, 20)]);
    }
}
