//! Host halos relayed through the GPU: a rank whose slab streams through its GPU block by
//! block keeps its halos in host memory, and host MPI moved them at about 2.3 GB/s between two
//! H200 ranks of one node (43% of the stepping time exposed). Here each piece goes host to
//! device, device to device between the ranks (the caller's carrier, NCCL over NVLink), and
//! device to host: two link crossings at 54 GB/s and an NVLink one at 300 GB/s or more, with
//! the next piece's upload overlapping the current piece's exchange and download.

use super::device::{available, context};
use super::driver::{self, Stream};
use super::memory::DeviceBuf;
use super::stream::{Events, Streams, SyncOnDrop};
use crate::error::Error;
use crate::exec::Transfer;
use std::ffi::c_void;

/// Enqueues an exchange of device pieces on the stream it is given (a `CUstream`).
pub type DeviceExchange<'a> = &'a dyn Fn(&[Transfer], *mut c_void) -> Result<(), Error>;

/// Bytes of one transfer's piece per round.
pub const RELAY_PIECE: usize = 64 << 20;

/// Exchanges host memory through device buffers: per round, every transfer's next piece is
/// uploaded on one stream, then `exchange` moves the device pieces on a second stream, which
/// then downloads what arrived. Two buffer sets alternate, so round `i + 1` uploads while
/// round `i` exchanges and downloads. `check` is called while waiting (another rank's
/// failure ends the wait with its error). Every rank pairs its rounds with its neighbours':
/// a transfer of `s` bytes sent and `r` received takes `max(s, r) / piece` rounds on both
/// ends.
///
/// # Safety
/// As [`crate::exec::Peers::exchange_host`]: each `send` readable and `recv` writable for its
/// bytes, disjoint, untouched by anything else until this returns. `exchange` enqueues on the
/// stream it is given an exchange of device memory reading the `send` and writing the `recv`
/// addresses it is given, and nothing else.
pub unsafe fn relay_host(
    transfers: &[Transfer],
    piece: usize,
    exchange: DeviceExchange<'_>,
    check: &dyn Fn() -> Result<(), Error>,
) -> Result<(), Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = context(info.ordinal)?;
    let piece = piece.max(1);
    let rounds = (transfers.iter())
        .map(|t| t.send_bytes.max(t.recv_bytes).div_ceil(piece))
        .max()
        .unwrap_or(0);
    if rounds == 0 {
        return Ok(());
    }
    // Per set, per transfer: a send piece then a receive piece.
    let stride = 2 * piece as u64;
    let set_bytes = transfers.len() * 2 * piece;
    let bufs = [
        DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
        DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
    ];
    let streams = Streams::new(2)?;
    let (up, ex) = (streams.0[0], streams.0[1]);
    // Per set: uploaded (on `up`), and sent (on `ex`: its send pieces may be overwritten).
    let loaded = Events::new(2)?;
    let sent = Events::new(2)?;
    let _sync = SyncOnDrop(ctx.clone());
    let clip = |bytes: usize, round: usize| bytes.saturating_sub(round * piece).min(piece);
    for round in 0..rounds {
        let set = round % 2;
        let base = bufs[set].ptr;
        driver::stream_wait(up, sent.0[set])?;
        let mut moves = Vec::with_capacity(transfers.len());
        for (i, t) in transfers.iter().enumerate() {
            let (s, r) = (clip(t.send_bytes, round), clip(t.recv_bytes, round));
            let (dsend, drecv) = (
                base + i as u64 * stride,
                base + i as u64 * stride + piece as u64,
            );
            if s > 0 {
                let src = (t.send as *const u8).add(round * piece);
                driver::copy_htod_async(dsend, src, s, up, "uploading a halo piece")?;
            }
            moves.push(Transfer {
                peer: t.peer,
                send: dsend,
                send_bytes: s,
                recv: drecv,
                recv_bytes: r,
            });
        }
        driver::event_record(loaded.0[set], up)?;
        driver::stream_wait(ex, loaded.0[set])?;
        // Both ends of a pair cut alike, so a piece empty here is empty there too.
        let live: Vec<Transfer> = (moves.iter().copied())
            .filter(|m| m.send_bytes + m.recv_bytes > 0)
            .collect();
        exchange(&live, ex as *mut c_void)?;
        driver::event_record(sent.0[set], ex)?;
        for (t, m) in transfers.iter().zip(&moves) {
            if m.recv_bytes > 0 {
                let dst = (t.recv as *mut u8).add(round * piece);
                driver::copy_dtoh_async(dst, m.recv, m.recv_bytes, ex, "downloading a halo piece")?;
            }
        }
    }
    wait_while(ex, check)
}

/// Waits for `st`, asking `check` between polls.
///
/// # Safety
/// `st` is a live stream.
unsafe fn wait_while(st: Stream, check: &dyn Fn() -> Result<(), Error>) -> Result<(), Error> {
    loop {
        if driver::stream_ready(st, "relaying halos")? {
            return Ok(());
        }
        check()?;
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}
