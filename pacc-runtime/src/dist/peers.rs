//! The host-MPI carrier of [`Peers`]: the host exchange between blocks, and the CPU backend's
//! resident plans. The NCCL carrier is in `nccl.rs`; which planes go where, in
//! [`super::slab::links`].

use super::comm::Communicator;
use crate::error::{DistError, Error};
use crate::exec::{Peers, Transfer};
use mpi::traits::Communicator as _;
use mpi::traits::*;

/// The part of a host exchange still under way while a block runs (`beside.rs`, where the
/// halos are relayed through the GPUs): the carrier the block's run answers to meanwhile, and
/// the wait at the block's end.
pub(super) trait Pending: Peers {
    /// Waits for the rest of the exchange.
    fn end(self: Box<Self>) -> Result<(), Error>;
}

/// Largest message (MPI counts are `i32`): bigger transfers go in several pieces.
const MAX_MESSAGE: usize = 1 << 30;

/// Host memory exchanged through MPI: every receive and send posted before any is waited for.
pub struct MpiPeers<'c> {
    pub comm: &'c Communicator,
}

impl Peers for MpiPeers<'_> {
    fn carrier(&self) -> &'static str {
        "host MPI"
    }

    unsafe fn exchange_host(&self, transfers: &[Transfer]) -> Result<(), Error> {
        mpi::request::scope(|scope| {
            let mut pending = Vec::new();
            for (i, t) in transfers.iter().enumerate() {
                let proc = self.comm.process_at_rank(t.peer as i32);
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
                    pending.push(proc.immediate_receive_into_with_tag(scope, piece, tag(p)));
                }
                for (p, piece) in sbuf.chunks(MAX_MESSAGE).enumerate() {
                    pending.push(proc.immediate_send_with_tag(scope, piece, tag(p)));
                }
            }
            for r in pending {
                r.wait();
            }
        });
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
