//! Everything that talks MPI besides the halo carrier (`peers.rs`): agreeing on failures, combining
//! reductions in rank order, and the consistency checks before a run.

use crate::error::{DistError, Error};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::traits::*;

/// The communicator type the distributed entry points take (`universe.world()`).
pub type Communicator = SimpleCommunicator;

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
