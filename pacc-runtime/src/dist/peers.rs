//! The host-MPI carrier of [`Peers`]: the host exchange between blocks, and the CPU backend's
//! resident plans. The NCCL carrier is in `nccl.rs`; which planes go where, in
//! [`super::slab::links`].

use super::comm::Communicator;
use super::wait::{self, no_answer, Posted};
use crate::error::{DistError, Error};
use crate::exec::{Peers, Transfer};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The part of a host exchange still under way while a block runs (`beside.rs`, where the
/// halos are relayed through the GPUs): the carrier the block's run answers to meanwhile, and
/// the wait at the block's end.
pub(super) trait Pending: Peers {
    /// Waits for the rest of the exchange.
    fn end(self: Box<Self>) -> Result<(), Error>;
}

/// Largest message (MPI counts are `i32`): bigger transfers go in several pieces.
const MAX_MESSAGE: usize = 1 << 30;

/// Host memory exchanged through MPI: every receive and send posted before any is waited for,
/// each through a buffer of the exchange's own (kept for the next exchange), so that an
/// exchange given up on leaves MPI nothing of the caller's to touch (`wait.rs`).
pub struct MpiPeers<'c> {
    pub comm: &'c Communicator,
    /// How long an exchange waits for the neighbours.
    timeout: Duration,
    /// The last exchange's buffers, in the order it posted them (every block exchanges the
    /// same planes).
    spare: RefCell<Vec<Vec<u8>>>,
}

impl<'c> MpiPeers<'c> {
    /// The carrier over `comm`, waiting as long as this thread's waits do ([`Patience`]).
    ///
    /// [`Patience`]: super::wait::Patience
    pub fn new(comm: &'c Communicator) -> Self {
        MpiPeers {
            comm,
            timeout: wait::patience(),
            spare: RefCell::new(Vec::new()),
        }
    }
}

impl Peers for MpiPeers<'_> {
    fn carrier(&self) -> &'static str {
        "host MPI"
    }

    unsafe fn exchange_host(&self, transfers: &[Transfer]) -> Result<(), Error> {
        let deadline = Instant::now() + self.timeout;
        let mut spare = self.spare.take().into_iter();
        let mut pending = Vec::new();
        // Where each received piece goes (`None`: a send).
        let mut into: Vec<Option<*mut u8>> = Vec::new();
        for (i, t) in transfers.iter().enumerate() {
            // Both ends list a neighbour's transfers in the same order (arrays in program
            // order): the position among this peer's transfers tells them apart.
            let nth = transfers[..i].iter().filter(|u| u.peer == t.peer).count();
            let tag = |piece: usize| (nth * 1024 + piece) as i32;
            // SAFETY: the caller's contract (`Peers::exchange_host`).
            let (rbuf, sbuf) = unsafe {
                (
                    std::slice::from_raw_parts_mut(t.recv as *mut u8, t.recv_bytes),
                    std::slice::from_raw_parts(t.send as *const u8, t.send_bytes),
                )
            };
            for (p, piece) in rbuf.chunks_mut(MAX_MESSAGE).enumerate() {
                let mut b = spare.next().unwrap_or_default();
                b.resize(piece.len(), 0);
                pending.push(Posted::recv(self.comm, t.peer, tag(p), b));
                into.push(Some(piece.as_mut_ptr()));
            }
            for (p, piece) in sbuf.chunks(MAX_MESSAGE).enumerate() {
                let mut b = spare.next().unwrap_or_default();
                b.clear();
                b.extend_from_slice(piece);
                pending.push(Posted::send(self.comm, t.peer, tag(p), b));
                into.push(None);
            }
        }
        wait::wait_all(&mut pending, deadline).map_err(|ranks| {
            no_answer(ranks, self.timeout, "the halo exchange through host MPI")
        })?;
        let mut back = Vec::with_capacity(pending.len());
        for (p, to) in pending.into_iter().zip(into) {
            let b = p
                .into_buffers()
                .and_then(|mut b| b.pop())
                .unwrap_or_default();
            if let Some(to) = to {
                // SAFETY: `to` is the piece of `recv` this buffer was received for, of its
                // length; the caller's contract makes it writable.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), to, b.len()) };
            }
            back.push(b);
        }
        *self.spare.borrow_mut() = back;
        Ok(())
    }

    unsafe fn exchange_device(
        &self,
        _transfers: &[Transfer],
        _stream: *mut std::ffi::c_void,
    ) -> Result<(), Error> {
        Err(DistError::Exchange {
            carrier: self.carrier(),
            message: "host MPI here is not CUDA-aware: it cannot move device memory".into(),
        }
        .into())
    }
}
