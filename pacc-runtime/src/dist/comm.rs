//! Everything that talks MPI besides the halo carrier (`peers.rs`): agreeing on failures, combining
//! reductions in rank order, and the consistency checks before a run. Every wait here has the
//! deadline of `wait.rs`: a rank that stops answering makes the others return an error naming
//! it ([`DistError::NoAnswer`]) instead of waiting forever.

pub use super::wait::Communicator;
use super::wait::{self, no_answer, Posted};
use crate::error::{DistError, Error};
use mpi::traits::Communicator as _;
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// After a stage every rank ran: `Ok` on every rank if it succeeded on all of them; else
/// every rank returns an error: a failing rank its own, the others [`DistError::RankFailed`]
/// with the message of the lowest failing rank, or [`DistError::NoAnswer`] naming the ranks
/// that did not report within the timeout. Never leaves a rank waiting.
///
/// Rank 0 collects every rank's outcome and sends back the verdict (point to point, so that
/// it knows who is missing); the others wait twice the timeout for it, which leaves rank 0 its
/// full timeout even when it arrives late.
pub(crate) fn agree<T>(comm: &Communicator, r: Result<T, Error>) -> Result<T, Error> {
    let (me, n) = (comm.rank() as usize, comm.size() as usize);
    if n == 1 {
        return r;
    }
    let timeout = wait::patience();
    let (up, down) = round_tags(comm);
    let mine = match &r {
        Ok(_) => Frame::encode(OK, me, &[]),
        Err(e) => Frame::encode(FAILED, me, e.to_string().as_bytes()),
    };
    let verdict = match me {
        0 => collect(comm, &r, up, down, timeout),
        _ => await_verdict(comm, mine, up, down, timeout),
    };
    match (verdict, r) {
        (_, Err(e)) => Err(e),
        (Verdict::Ok, ok) => ok,
        (Verdict::Failed { rank, message }, Ok(_)) => {
            Err(DistError::RankFailed { rank, message }.into())
        }
        (Verdict::Missing(ranks), Ok(_)) => {
            Err(no_answer(ranks, timeout, "agreeing on the outcome of a step").into())
        }
    }
}

/// What every rank learns from [`agree`].
enum Verdict {
    Ok,
    Failed { rank: usize, message: String },
    Missing(Vec<usize>),
}

/// Rank 0's part of [`agree`]: every rank's outcome (its own is `r`), then the verdict sent to
/// every rank, the missing ones too (a rank that was only late still learns it).
fn collect<T>(
    comm: &Communicator,
    r: &Result<T, Error>,
    up: i32,
    down: i32,
    timeout: Duration,
) -> Verdict {
    let n = comm.size() as usize;
    let mut recvs: Vec<Posted> = (1..n)
        .map(|j| Posted::recv(comm, j, up, vec![0; FRAME]))
        .collect();
    let missing = wait::wait_all(&mut recvs, Instant::now() + timeout).err();
    let mut first = r.as_ref().err().map(|e| (0, e.to_string()));
    for p in &mut recvs {
        if first.is_some() {
            break;
        }
        if let Some((FAILED, rank, text)) = p.data().map(Frame::decode) {
            first = Some((rank, String::from_utf8_lossy(text).into_owned()));
        }
    }
    let verdict = match (missing, first) {
        (Some(ranks), _) => Verdict::Missing(ranks),
        (None, Some((rank, message))) => Verdict::Failed { rank, message },
        (None, None) => Verdict::Ok,
    };
    let frame = match &verdict {
        Verdict::Ok => Frame::encode(OK, 0, &[]),
        Verdict::Failed { rank, message } => Frame::encode(FAILED, *rank, message.as_bytes()),
        Verdict::Missing(ranks) => {
            let bytes: Vec<u8> = ranks
                .iter()
                .flat_map(|&r| (r as u32).to_le_bytes())
                .collect();
            Frame::encode(MISSING, 0, &bytes)
        }
    };
    let absent = |j: usize| matches!(&verdict, Verdict::Missing(m) if m.contains(&j));
    let (mut live, mut late) = (Vec::new(), Vec::new());
    for j in 1..n {
        let s = Posted::send(comm, j, down, frame.clone());
        match absent(j) {
            true => late.push(s),
            false => live.push(s),
        }
    }
    let _ = wait::wait_all(&mut live, Instant::now() + timeout);
    // Sends to the missing ranks are eager where they can be; what is left of them is
    // abandoned with its buffer (`Posted`'s drop).
    for s in &mut late {
        s.done();
    }
    verdict
}

/// A rank's part of [`agree`] other than rank 0's: its outcome sent, the verdict received.
fn await_verdict(
    comm: &Communicator,
    mine: Vec<u8>,
    up: i32,
    down: i32,
    timeout: Duration,
) -> Verdict {
    let deadline = Instant::now() + 2 * timeout;
    // The receive first: the verdict can only follow this rank's outcome.
    let mut verdict = [Posted::recv(comm, 0, down, vec![0; FRAME])];
    let mut status = [Posted::send(comm, 0, up, mine)];
    if wait::wait_all(&mut verdict, deadline).is_err() {
        return Verdict::Missing(vec![0]);
    }
    let _ = wait::wait_all(&mut status, deadline);
    let frame = verdict[0].data().unwrap_or_default();
    match Frame::decode(frame) {
        (OK, _, _) => Verdict::Ok,
        (MISSING, _, ranks) => Verdict::Missing(
            (ranks.chunks_exact(4))
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .collect(),
        ),
        (_, rank, text) => Verdict::Failed {
            rank,
            message: String::from_utf8_lossy(text).into_owned(),
        },
    }
}

/// Bytes of every message of [`agree`]: a kind, a rank, a length and up to 1015 bytes of an
/// error message (longer ones are cut) or of ranks.
const FRAME: usize = 1024;
const OK: u8 = 0;
const FAILED: u8 = 1;
const MISSING: u8 = 2;

struct Frame;

impl Frame {
    fn encode(kind: u8, rank: usize, payload: &[u8]) -> Vec<u8> {
        let len = payload.len().min(FRAME - 9);
        let mut f = vec![0u8; FRAME];
        f[0] = kind;
        f[1..5].copy_from_slice(&(rank as u32).to_le_bytes());
        f[5..9].copy_from_slice(&(len as u32).to_le_bytes());
        f[9..9 + len].copy_from_slice(&payload[..len]);
        f
    }

    fn decode(f: &[u8]) -> (u8, usize, &[u8]) {
        if f.len() < 9 {
            return (FAILED, 0, b"a malformed message");
        }
        let word = |i: usize| u32::from_le_bytes([f[i], f[i + 1], f[i + 2], f[i + 3]]) as usize;
        let len = word(5).min(f.len() - 9);
        (f[0], word(1), &f[9..9 + len])
    }
}

/// The two tags of the next [`agree`] on `comm`: one per round (every rank calls it the same
/// number of times on a communicator), so that a message a late rank sent in a round given up
/// on never matches a later one. Above the halo exchange's tags (`peers.rs`).
fn round_tags(comm: &Communicator) -> (i32, i32) {
    const BASE: i32 = 16384;
    const ROUNDS: u32 = 8000;
    thread_local! {
        static ROUND: RefCell<HashMap<Vec<u8>, u32>> = RefCell::new(HashMap::new());
    }
    let r = ROUND.with(|m| {
        let mut m = m.borrow_mut();
        let r = m.entry(wait::comm_key(comm)).or_insert(0);
        let now = *r;
        *r = (now + 1) % ROUNDS;
        now
    });
    let up = BASE + 2 * r as i32;
    (up, up + 1)
}

/// Every rank's `mine` (all of one length), in rank order, within the timeout; `during` names
/// the step for the error.
fn gather_bytes(
    comm: &Communicator,
    mine: Vec<u8>,
    during: &'static str,
) -> Result<Vec<u8>, Error> {
    if comm.size() == 1 {
        return Ok(mine);
    }
    let g = complete(Posted::all_gather(comm, mine), during)?;
    let mut bufs = g.into_buffers().unwrap_or_default();
    Ok(bufs.swap_remove(0))
}

/// `p`, a collective every rank posts, once it completed within the timeout.
fn complete(p: Posted, during: &'static str) -> Result<Posted, DistError> {
    let timeout = wait::patience();
    let mut p = [p];
    wait::wait_all(&mut p, Instant::now() + timeout)
        .map_err(|ranks| no_answer(ranks, timeout, during))?;
    let [p] = p;
    Ok(p)
}

/// The element-wise maximum of every rank's `mine` (all of one length), within the timeout.
pub(crate) fn all_max(
    comm: &Communicator,
    mine: &[f64],
    during: &'static str,
) -> Result<Vec<f64>, Error> {
    let all = gather_during(comm, mine, during)?;
    Ok((0..mine.len())
        .map(|i| all.iter().map(|r| r[i]).fold(f64::NEG_INFINITY, f64::max))
        .collect())
}

/// The least and the largest of every rank's `mine`, within the timeout.
pub(crate) fn min_max(
    comm: &Communicator,
    mine: i32,
    during: &'static str,
) -> Result<(i32, i32), Error> {
    let all = gather_bytes(comm, mine.to_le_bytes().to_vec(), during)?;
    let v = all
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    Ok(v.fold((i32::MAX, i32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x))))
}

/// Every rank reached this point, within the timeout.
pub(crate) fn barrier(comm: &Communicator, during: &'static str) -> Result<(), Error> {
    if comm.size() == 1 {
        return Ok(());
    }
    complete(Posted::barrier(comm), during)?;
    Ok(())
}

/// Every rank's values, in rank order (all ranks pass the same number).
pub(crate) fn gather(comm: &Communicator, mine: &[f64]) -> Result<Vec<Vec<f64>>, Error> {
    gather_during(comm, mine, "gathering the ranks' partial results")
}

/// [`gather`], naming the step `during` for a timeout.
fn gather_during(
    comm: &Communicator,
    mine: &[f64],
    during: &'static str,
) -> Result<Vec<Vec<f64>>, Error> {
    if mine.is_empty() {
        return Ok(vec![Vec::new(); comm.size() as usize]);
    }
    let bytes = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
    let all = gather_bytes(comm, bytes, during)?;
    Ok(all
        .chunks(8 * mine.len())
        .map(|rank| {
            (rank.chunks_exact(8))
                .map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default()))
                .collect()
        })
        .collect())
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
    let all = gather_bytes(comm, h.to_le_bytes().to_vec(), "comparing the ranks' calls")?;
    if all.chunks(8).all(|c| c == &all[..8]) {
        Ok(())
    } else {
        Err(DistError::Disagree {
            what: what.into(),
            hint: hint.into(),
        }
        .into())
    }
}
