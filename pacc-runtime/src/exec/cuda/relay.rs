//! Host halos relayed through the GPU: a rank whose slab streams through its GPU block by
//! block keeps its halos in host memory, and host MPI moved them at about 2.3 GB/s between two
//! H200 ranks of one node (43% of the stepping time exposed). Here each piece goes host to
//! device, device to device between the ranks (the caller's carrier, NCCL over NVLink), and
//! device to host: two link crossings at 54 GB/s and an NVLink one at 300 GB/s or more, with
//! the next piece's upload overlapping the current piece's exchange and download.
//!
//! A relay is started ([`Relay::start`]) and finished apart, so that it can run beside the next
//! block's pipeline: the run waits for [`Relay::uploaded`] before writing the planes it sends
//! and for [`Relay::arrived`] before touching the planes it receives (`exec::Gate`).

use super::device::{available, context};
use super::driver::{self, Event};
use super::memory::DeviceBuf;
use super::stream::{Events, Streams, SyncOnDrop};
use crate::error::Error;
use crate::exec::Transfer;
use std::ffi::c_void;

/// Enqueues an exchange of device pieces on the stream it is given (a `CUstream`).
pub type DeviceExchange<'a> = &'a dyn Fn(&[Transfer], *mut c_void) -> Result<(), Error>;

/// Bytes of one transfer's piece per round.
pub const RELAY_PIECE: usize = 64 << 20;

/// A relay under way: its buffers, streams and events, alive until it is finished (dropping it
/// waits for its streams).
pub struct Relay {
    // Field order is drop order: synchronize first, then free.
    _sync: SyncOnDrop,
    /// `[uploaded, arrived]`.
    marks: Events,
    _loaded: Events,
    _sent: Events,
    streams: Streams,
    _bufs: [DeviceBuf; 2],
}

impl Relay {
    /// Enqueues the exchange of host memory through device buffers and returns without
    /// waiting: per round, every transfer's next piece is uploaded on one stream, then
    /// `exchange` moves the device pieces on a second stream, which then downloads what
    /// arrived. Two buffer sets alternate, so round `i + 1` uploads while round `i` exchanges
    /// and downloads. Every rank pairs its rounds with its neighbours': a transfer of `s` bytes
    /// sent and `r` received takes `max(s, r) / piece` rounds on both ends.
    ///
    /// # Safety
    /// As [`crate::exec::Peers::exchange_host`] until the relay is finished or dropped: each
    /// `send` readable and `recv` writable for its bytes, disjoint, and nothing writes a `send`
    /// before [`Relay::uploaded`] or touches a `recv` before [`Relay::arrived`]. `exchange`
    /// enqueues on the stream it is given an exchange of device memory reading the `send` and
    /// writing the `recv` addresses it is given, and nothing else.
    pub unsafe fn start(
        transfers: &[Transfer],
        piece: usize,
        exchange: DeviceExchange<'_>,
    ) -> Result<Relay, Error> {
        let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
        let ctx = context(info.ordinal)?;
        let piece = piece.max(1);
        let rounds = (transfers.iter())
            .map(|t| t.send_bytes.max(t.recv_bytes).div_ceil(piece))
            .max()
            .unwrap_or(0);
        // Per set, per transfer: a send piece then a receive piece.
        let stride = 2 * piece as u64;
        let set_bytes = if rounds == 0 {
            0
        } else {
            transfers.len() * 2 * piece
        };
        let r = Relay {
            _sync: SyncOnDrop(ctx.clone()),
            marks: Events::new(2)?,
            _loaded: Events::new(2)?,
            _sent: Events::new(2)?,
            streams: Streams::new(2)?,
            _bufs: [
                DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
                DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
            ],
        };
        let (up, ex) = (r.streams.0[0], r.streams.0[1]);
        // Per set: uploaded (on `up`), and sent (on `ex`: its send pieces may be overwritten).
        let (loaded, sent) = (&r._loaded.0, &r._sent.0);
        let clip = |bytes: usize, round: usize| bytes.saturating_sub(round * piece).min(piece);
        for round in 0..rounds {
            let set = round % 2;
            let base = r._bufs[set].ptr;
            driver::stream_wait(up, sent[set])?;
            let mut moves = Vec::with_capacity(transfers.len());
            for (i, t) in transfers.iter().enumerate() {
                let (s, n) = (clip(t.send_bytes, round), clip(t.recv_bytes, round));
                let dsend = base + i as u64 * stride;
                if s > 0 {
                    let src = (t.send as *const u8).add(round * piece);
                    driver::copy_htod_async(dsend, src, s, up, "uploading a halo piece")?;
                }
                moves.push(Transfer {
                    peer: t.peer,
                    send: dsend,
                    send_bytes: s,
                    recv: dsend + piece as u64,
                    recv_bytes: n,
                });
            }
            driver::event_record(loaded[set], up)?;
            driver::stream_wait(ex, loaded[set])?;
            // Both ends of a pair cut alike, so a piece empty here is empty there too.
            let live: Vec<Transfer> = (moves.iter().copied())
                .filter(|m| m.send_bytes + m.recv_bytes > 0)
                .collect();
            exchange(&live, ex as *mut c_void)?;
            driver::event_record(sent[set], ex)?;
            for (t, m) in transfers.iter().zip(&moves) {
                if m.recv_bytes > 0 {
                    let dst = (t.recv as *mut u8).add(round * piece);
                    let what = "downloading a halo piece";
                    driver::copy_dtoh_async(dst, m.recv, m.recv_bytes, ex, what)?;
                }
            }
        }
        driver::event_record(r.marks.0[0], up)?;
        driver::event_record(r.marks.0[1], ex)?;
        Ok(r)
    }

    /// Recorded once every byte sent has been read from the host.
    pub fn uploaded(&self) -> u64 {
        self.marks.0[0] as u64
    }

    /// Recorded once every byte received is in host memory (and everything sent is read).
    pub fn arrived(&self) -> u64 {
        self.marks.0[1] as u64
    }

    /// Waits for the relay, asking `check` between polls (another rank's failure ends the
    /// wait with its error; the caller then aborts the carrier, which lets the streams drain).
    pub fn finish(self, check: &dyn Fn() -> Result<(), Error>) -> Result<(), Error> {
        let ev: Event = self.marks.0[1];
        loop {
            // SAFETY: our event, recorded in `start`.
            if unsafe { driver::event_ready(ev, "relaying halos") }? {
                return Ok(());
            }
            check()?;
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

/// [`Relay::start`] then [`Relay::finish`].
///
/// # Safety
/// As [`Relay::start`], until this returns.
pub unsafe fn relay_host(
    transfers: &[Transfer],
    piece: usize,
    exchange: DeviceExchange<'_>,
    check: &dyn Fn() -> Result<(), Error>,
) -> Result<(), Error> {
    Relay::start(transfers, piece, exchange)?.finish(check)
}
