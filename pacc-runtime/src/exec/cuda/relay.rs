//! Host halos relayed through the GPU: a rank whose slab streams through its GPU block by
//! block keeps its halos in host memory, and host MPI moved them at about 2.3 GB/s between two
//! H200 ranks of one node (43% of the stepping time exposed). Here each piece goes host to
//! device, device to device between the ranks (the caller's carrier, NCCL over NVLink), and
//! device to host: two link crossings at 54 GB/s and an NVLink one at 300 GB/s or more, with
//! the next piece's upload overlapping the current piece's exchange and download.
//!
//! Host memory the driver does not know as page-locked bounces through pinned slots
//! (`bounce.rs`): a copy between pageable memory and the device waits on the host for the
//! stream, and would wait there for a peer's NCCL operations, out of reach of a failure notice.
//!
//! A relay is started ([`Relay::start`]) and finished apart, so that it can run beside the next
//! block's pipeline: the run waits for [`Relay::uploaded`] before writing the planes it sends
//! and for [`Relay::arrived`] before touching the planes it receives (`exec::Gate`).

use super::bounce::Bounce;
use super::device::{available, context};
use super::driver::{self, Event, Stream};
use super::memory::DeviceBuf;
use super::stream::{Events, Streams, SyncOnDrop};
use crate::error::Error;
use crate::exec::Transfer;
use std::ffi::c_void;

/// Enqueues an exchange of device pieces on the stream it is given (a `CUstream`).
pub type DeviceExchange<'a> = &'a dyn Fn(&[Transfer], *mut c_void) -> Result<(), Error>;

/// Called on a failure before the relay's streams are waited for: it must make the carrier's
/// pending operations give up (and tell the other ranks), or the wait would last forever.
pub type Abandon<'a> = &'a dyn Fn(&Error);

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
    /// Where the host side is pageable (its host copies' payloads live here).
    bounce: Option<Bounce>,
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
    /// writing the `recv` addresses it is given, and nothing else. On a failure `abandon` runs
    /// before anything waits for the streams.
    pub unsafe fn start(
        transfers: &[Transfer],
        piece: usize,
        exchange: DeviceExchange<'_>,
        abandon: Abandon<'_>,
    ) -> Result<Relay, Error> {
        let piece = piece.max(1);
        let rounds = (transfers.iter())
            .map(|t| t.send_bytes.max(t.recv_bytes).div_ceil(piece))
            .max()
            .unwrap_or(0);
        // Per set, per transfer: a send piece then a receive piece.
        let set_bytes = if rounds == 0 {
            0
        } else {
            transfers.len() * 2 * piece
        };
        let pageable = (transfers.iter()).any(|t| {
            (t.send_bytes > 0 && !driver::range_page_locked(t.send as _, t.send_bytes))
                || (t.recv_bytes > 0 && !driver::range_page_locked(t.recv as _, t.recv_bytes))
        });
        let slot = (transfers.iter())
            .map(|t| t.send_bytes.max(t.recv_bytes).min(piece))
            .max()
            .unwrap_or(0);
        // The peers wait for this rank's part whatever failed here, and dropping a relay waits
        // for its streams, which may hold the carrier's operations: abandon first.
        let mut r = match Relay::new(set_bytes, pageable.then_some(slot)) {
            Ok(r) => r,
            Err(e) => {
                abandon(&e);
                return Err(e);
            }
        };
        if let Err(e) = r.enqueue(transfers, piece, rounds, exchange) {
            abandon(&e);
            return Err(e);
        }
        Ok(r)
    }

    /// A relay's resources; `bounce` is the slot size when the host side is pageable.
    fn new(set_bytes: usize, bounce: Option<usize>) -> Result<Relay, Error> {
        let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
        let ctx = context(info.ordinal)?;
        Ok(Relay {
            _sync: SyncOnDrop(ctx.clone()),
            marks: Events::new(2)?,
            _loaded: Events::new(2)?,
            _sent: Events::new(2)?,
            streams: Streams::new(2)?,
            _bufs: [
                DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
                DeviceBuf::new(&ctx, set_bytes, "relaying halos")?,
            ],
            bounce: bounce
                .map(|slot| Bounce::with_slots(&ctx, slot.min(super::bounce::SLOT_BYTES)))
                .transpose()?,
        })
    }

    /// Enqueues every round, then the two marks.
    ///
    /// # Safety
    /// As [`Relay::start`].
    unsafe fn enqueue(
        &mut self,
        transfers: &[Transfer],
        piece: usize,
        rounds: usize,
        exchange: DeviceExchange<'_>,
    ) -> Result<(), Error> {
        let stride = 2 * piece as u64;
        let (up, ex) = (self.streams.0[0], self.streams.0[1]);
        // Per set: uploaded (on `up`), and sent (on `ex`: its send pieces may be overwritten).
        let (loaded, sent) = (self._loaded.0.clone(), self._sent.0.clone());
        let clip = |bytes: usize, round: usize| bytes.saturating_sub(round * piece).min(piece);
        for round in 0..rounds {
            let set = round % 2;
            let base = self._bufs[set].ptr;
            driver::stream_wait(up, sent[set])?;
            let mut moves = Vec::with_capacity(transfers.len());
            for (i, t) in transfers.iter().enumerate() {
                let (s, n) = (clip(t.send_bytes, round), clip(t.recv_bytes, round));
                let dsend = base + i as u64 * stride;
                if s > 0 {
                    let src = (t.send as *const u8).add(round * piece);
                    self.upload(dsend, src, s, up)?;
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
            crate::fault::hit(crate::fault::Site::Relay, || format!("relay round {round}"))?;
            // Both ends of a pair cut alike, so a piece empty here is empty there too.
            let live: Vec<Transfer> = (moves.iter().copied())
                .filter(|m| m.send_bytes + m.recv_bytes > 0)
                .collect();
            exchange(&live, ex as *mut c_void)?;
            driver::event_record(sent[set], ex)?;
            for (t, m) in transfers.iter().zip(&moves) {
                if m.recv_bytes > 0 {
                    let dst = (t.recv as *mut u8).add(round * piece);
                    self.download(dst, m.recv, m.recv_bytes, ex)?;
                }
            }
        }
        driver::event_record(self.marks.0[0], up)?;
        driver::event_record(self.marks.0[1], ex)?;
        Ok(())
    }

    /// Enqueues on `st` the copy of `n` host bytes at `src` to `dst`, bounced when pageable.
    ///
    /// # Safety
    /// As [`Relay::start`]: `src` readable for `n` bytes until the relay has uploaded.
    unsafe fn upload(
        &mut self,
        dst: u64,
        src: *const u8,
        n: usize,
        st: Stream,
    ) -> Result<(), Error> {
        let what = "uploading a halo piece";
        match &mut self.bounce {
            None => driver::copy_htod_async(dst, src, n, st, what),
            Some(b) => b.upload(src, n, 1, st, |slot, off, len| {
                driver::copy_htod_async(dst + off as u64, slot, len, st, what)
            }),
        }
    }

    /// Enqueues on `st` the copy of `n` device bytes at `src` to host `dst`, bounced when
    /// pageable (`st` then waits for the host copy).
    ///
    /// # Safety
    /// As [`Relay::start`]: `dst` writable for `n` bytes, by nothing else, until arrived.
    unsafe fn download(
        &mut self,
        dst: *mut u8,
        src: u64,
        n: usize,
        st: Stream,
    ) -> Result<(), Error> {
        let what = "downloading a halo piece";
        match &mut self.bounce {
            None => driver::copy_dtoh_async(dst, src, n, st, what),
            Some(b) => b.download(dst, n, 1, st, |slot, off, len| {
                driver::copy_dtoh_async(slot, src + off as u64, len, st, what)
            }),
        }
    }

    /// Recorded once every byte sent has been read from the host.
    pub fn uploaded(&self) -> u64 {
        self.marks.0[0] as u64
    }

    /// Recorded once every byte received is in host memory (and everything sent is read).
    pub fn arrived(&self) -> u64 {
        self.marks.0[1] as u64
    }

    /// Waits for the relay, asking `check` between polls. Another rank's failure ends the
    /// wait with its error, as does the device's; `abandon` then runs before the relay is
    /// dropped (which waits for its streams).
    pub fn finish(
        self,
        check: &dyn Fn() -> Result<(), Error>,
        abandon: Abandon<'_>,
    ) -> Result<(), Error> {
        let ev: Event = self.marks.0[1];
        let waited = loop {
            // SAFETY: our event, recorded in `start`.
            match unsafe { driver::event_ready(ev, "relaying halos") } {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
            if let Err(e) = check() {
                break Err(e);
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        };
        if let Err(e) = &waited {
            abandon(e);
        }
        waited
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Holds the stream it is enqueued on until its flag is set (or 10 s pass), as an exchange
    /// whose peer has failed would hold it.
    unsafe extern "C" fn held(flag: *mut c_void) {
        // SAFETY: the tests pass a leaked `AtomicBool`.
        let flag = unsafe { &*(flag as *const AtomicBool) };
        let t = Instant::now();
        while !flag.load(Ordering::Acquire) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Host memory for a test: pageable, or pinned by pacc.
    enum Host {
        Pageable(Vec<u8>),
        Pinned(super::super::memory::PinnedHost),
    }

    impl Host {
        fn new(bytes: usize, fill: impl Fn(usize) -> u8, pinned: bool) -> Host {
            let mut h = match pinned {
                false => Host::Pageable(vec![0; bytes]),
                true => {
                    let ctx = context(available().unwrap().ordinal).unwrap();
                    Host::Pinned(
                        super::super::memory::PinnedHost::new(&ctx, bytes, "a test").unwrap(),
                    )
                }
            };
            for (i, b) in h.bytes().iter_mut().enumerate() {
                *b = fill(i);
            }
            h
        }

        fn bytes(&mut self) -> &mut [u8] {
            match self {
                Host::Pageable(v) => v,
                // SAFETY: the allocation's bytes, borrowed mutably with it.
                Host::Pinned(p) => unsafe { std::slice::from_raw_parts_mut(p.ptr, p.bytes) },
            }
        }

        fn ptr(&mut self) -> u64 {
            self.bytes().as_mut_ptr() as u64
        }
    }

    /// A relay whose exchange copies each transfer's send piece to its receive piece on the
    /// device (a rank talking to itself): every byte sent comes back, over several rounds, with
    /// the host side pageable (bounced) or pinned.
    fn loopback(pinned: bool) {
        available().unwrap_or_else(|r| panic!("this test needs a CUDA device ({r})"));
        let sizes = [1000usize, 337, 0];
        let mut send: Vec<Host> = (sizes.iter().enumerate())
            .map(|(k, &n)| Host::new(n, |i| (i * 7 + k * 13) as u8, pinned))
            .collect();
        let mut recv: Vec<Host> = sizes.iter().map(|&n| Host::new(n, |_| 0, pinned)).collect();
        let transfers: Vec<Transfer> = (0..sizes.len())
            .map(|k| Transfer {
                peer: k,
                send: send[k].ptr(),
                send_bytes: sizes[k],
                recv: recv[k].ptr(),
                recv_bytes: sizes[k],
            })
            .collect();
        let exchange = |live: &[Transfer], st: *mut c_void| {
            for t in live {
                // SAFETY: the relay's own device pieces, each `send_bytes` long.
                unsafe {
                    driver::copy_dtod_async(t.recv, t.send, t.send_bytes, st as _, "a test")
                }?;
            }
            Ok(())
        };
        // SAFETY: the host buffers outlive the relay, which is finished below.
        let relay = unsafe { Relay::start(&transfers, 256, &exchange, &|_| {}) }.unwrap();
        relay.finish(&|| Ok(()), &|_| {}).unwrap();
        for k in 0..sizes.len() {
            assert!(
                recv[k].bytes() == send[k].bytes(),
                "transfer {k} (pinned: {pinned})"
            );
        }
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn a_relay_moves_every_byte_from_pageable_memory() {
        loopback(false);
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn a_relay_moves_every_byte_from_pinned_memory() {
        loopback(true);
    }

    /// A relay of two rounds of 64 bytes whose exchange holds its stream in round 1, fails in
    /// round 2 when `fail_second` is set, and whose `abandon` lets the stream go; the seconds
    /// from start to the end of `finish`.
    fn relay_held(fail_second: bool, check_fails: bool, pinned: bool) -> (Result<(), Error>, f64) {
        available().unwrap_or_else(|r| panic!("this test needs a CUDA device ({r})"));
        let released: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let (mut send, mut recv) = (Host::new(128, |_| 7, pinned), Host::new(128, |_| 0, pinned));
        let transfers = [Transfer {
            peer: 1,
            send: send.ptr(),
            send_bytes: 128,
            recv: recv.ptr(),
            recv_bytes: 128,
        }];
        let calls = std::cell::Cell::new(0);
        let exchange = |_: &[Transfer], st: *mut c_void| {
            calls.set(calls.get() + 1);
            let flag = released as *const AtomicBool as *mut c_void;
            match (calls.get(), fail_second) {
                // SAFETY: `held` calls no driver function; the flag is leaked.
                (1, _) => unsafe { driver::launch_host_func(st as _, held, flag) },
                (_, true) => Err(Error::Internal("the peer is gone".into())),
                _ => Ok(()),
            }
        };
        let abandon = |_: &Error| released.store(true, Ordering::Release);
        let check = || match check_fails {
            true => Err(Error::Internal("another rank failed".into())),
            false => Ok(()),
        };
        let t = Instant::now();
        // SAFETY: the host buffers outlive the relay (finished or dropped below).
        let r = unsafe { Relay::start(&transfers, 64, &exchange, &abandon) }
            .and_then(|relay| relay.finish(&check, &abandon));
        (r, t.elapsed().as_secs_f64())
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn a_relay_failing_while_enqueued_is_abandoned_before_its_streams_are_waited_for() {
        for pinned in [false, true] {
            let (r, secs) = relay_held(true, false, pinned);
            assert!(r.unwrap_err().to_string().contains("the peer is gone"));
            assert!(
                secs < 5.0,
                "waited {secs:.1} s for a failed peer (pinned: {pinned})"
            );
        }
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn a_relay_whose_wait_fails_is_abandoned_before_its_streams_are_waited_for() {
        for pinned in [false, true] {
            let (r, secs) = relay_held(false, true, pinned);
            assert!(r.unwrap_err().to_string().contains("another rank failed"));
            assert!(
                secs < 5.0,
                "waited {secs:.1} s for a failed peer (pinned: {pinned})"
            );
        }
    }
}
