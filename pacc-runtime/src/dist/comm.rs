//! Everything that talks MPI: the deep-halo exchange, agreeing on failures, combining
//! reductions in rank order, and the consistency checks before a run.

use super::slab::Slab;
use crate::error::{DistError, Error};
use crate::invocation::HostArray;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use std::ops::Range;

/// The communicator type the distributed entry points take (`universe.world()`).
pub type Communicator = SimpleCommunicator;

/// Largest message of the exchange (MPI counts are `i32`): bigger halos go in several pieces.
const MAX_MESSAGE: usize = 1 << 30;

/// Refreshes the halo planes of `arrays` (the rank's physical arrays that the run writes)
/// from the neighbours' owned planes, all in one nonblocking exchange: every send and receive
/// is posted before any is waited for.
pub(crate) fn exchange_halos(comm: &Communicator, slabs: &[Slab], me: usize, arrays: &[HostArray]) {
    let slab = &slabs[me];
    let local = |r: &Range<usize>| r.start - slab.window.start..r.end - slab.window.start;
    // (neighbour, planes I receive, planes I send), in local planes of my arrays.
    let mut links = Vec::new();
    if me > 0 {
        let left = &slabs[me - 1];
        links.push((
            me - 1,
            local(&(slab.window.start..slab.owned.start)),
            local(&(slab.owned.start..left.window.end)),
        ));
    }
    if me + 1 < slabs.len() {
        let right = &slabs[me + 1];
        links.push((
            me + 1,
            local(&(slab.owned.end..slab.window.end)),
            local(&(right.window.start..slab.owned.end)),
        ));
    }
    mpi::request::scope(|scope| {
        let mut pending = Vec::new();
        for h in arrays {
            let plane = h.bytes() / h.shape()[0].max(1);
            for (peer, recv, send) in &links {
                let proc = comm.process_at_rank(*peer as i32);
                // SAFETY: the received planes (halo) and the sent ones (owned) are disjoint
                // ranges of the array, which nothing else touches until the requests complete.
                let (rbuf, sbuf) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(
                            h.ptr.add(recv.start * plane),
                            recv.len() * plane,
                        ),
                        std::slice::from_raw_parts(
                            h.ptr.add(send.start * plane) as *const u8,
                            send.len() * plane,
                        ),
                    )
                };
                for (tag, piece) in rbuf.chunks_mut(MAX_MESSAGE).enumerate() {
                    pending.push(proc.immediate_receive_into_with_tag(scope, piece, tag as i32));
                }
                for (tag, piece) in sbuf.chunks(MAX_MESSAGE).enumerate() {
                    pending.push(proc.immediate_send_with_tag(scope, piece, tag as i32));
                }
            }
        }
        for r in pending {
            r.wait();
        }
    });
}

/// After a stage every rank ran: `Ok` on every rank if it succeeded on all of them; else
/// every rank returns an error: a failing rank its own, the others [`DistError::RankFailed`]
/// with the message of the lowest failing rank. Never leaves a rank waiting.
pub(crate) fn agree<T>(comm: &Communicator, r: Result<T, Error>) -> Result<T, Error> {
    let me = comm.rank();
    let mine: i32 = if r.is_err() { me } else { comm.size() };
    let mut first = 0i32;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == comm.size() {
        return r;
    }
    let mut msg = match &r {
        Err(e) if me == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let root = comm.process_at_rank(first);
    let mut len = msg.len() as u64;
    root.broadcast_into(&mut len);
    msg.resize(len as usize, 0);
    root.broadcast_into(&mut msg[..]);
    match r {
        Err(e) => Err(e),
        Ok(_) => Err(DistError::RankFailed {
            rank: first as usize,
            message: String::from_utf8_lossy(&msg).into_owned(),
        }
        .into()),
    }
}

/// Every rank's values, in rank order (all ranks pass the same number).
pub(crate) fn gather(comm: &Communicator, mine: &[f64]) -> Vec<Vec<f64>> {
    if mine.is_empty() {
        return vec![Vec::new(); comm.size() as usize];
    }
    let mut all = vec![0f64; mine.len() * comm.size() as usize];
    comm.all_gather_into(mine, &mut all[..]);
    all.chunks(mine.len()).map(|c| c.to_vec()).collect()
}

/// Whether every rank passed the same `value` (compared through a hash); else the typed error
/// naming `what`.
pub(crate) fn same_everywhere(
    comm: &Communicator,
    value: &str,
    what: &str,
    hint: &str,
) -> Result<(), Error> {
    let h = crc32fast::hash(value.as_bytes()) as u64 | ((value.len() as u64) << 32);
    let (mut lo, mut hi) = (0u64, 0u64);
    comm.all_reduce_into(&h, &mut lo, SystemOperation::min());
    comm.all_reduce_into(&h, &mut hi, SystemOperation::max());
    if lo == hi {
        Ok(())
    } else {
        Err(DistError::Disagree {
            what: what.into(),
            hint: hint.into(),
        }
        .into())
    }
}
