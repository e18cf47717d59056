//! Waiting for other ranks with a deadline (`PACC_MPI_TIMEOUT`, [`Options::mpi_timeout`]).
//!
//! A rank that stops (SIGSTOP, a hung device) or dies (with `mpirun --enable-recovery`, which
//! keeps the others running) never completes its half of a send, a receive or a collective:
//! `MPI_Wait` would block forever. Every wait of a distributed run therefore polls its requests
//! with `MPI_Test` until a deadline, and gives up with the ranks it still waits on.
//!
//! A request that is given up on may still be completed by MPI later (the rank was only slow),
//! so MPI must never be left holding memory the caller gets back: every request here owns its
//! buffers ([`Posted`]), and an unfinished one is cancelled where MPI allows and otherwise
//! leaked together with them.
//!
//! [`Options::mpi_timeout`]: crate::options::Options::mpi_timeout

use crate::error::DistError;
use mpi::ffi::MPI_Request;
use mpi::raw::AsRaw;
use mpi::request::StaticScope;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// The communicator type the distributed entry points take (`universe.world()`). Its home is
/// here, the lowest layer that touches MPI, so that the agreement above it (`comm.rs`, which
/// re-exports it) and the requests here name one type without importing each other.
pub type Communicator = mpi::topology::SimpleCommunicator;

/// How long a rank waits for the others when the options do not say (`PACC_MPI_TIMEOUT`).
/// Generous: ranks legitimately wait for one another for as long as their slowest peer takes
/// to finish a block or write a checkpoint.
pub const DEFAULT_MPI_TIMEOUT: Duration = Duration::from_secs(300);

thread_local! {
    static PATIENCE: Cell<Duration> = const { Cell::new(DEFAULT_MPI_TIMEOUT) };
}

/// The timeout of this thread's waits; restores the one before when dropped.
pub(crate) struct Patience {
    before: Duration,
}

impl Patience {
    /// Waits on this thread give up after `timeout` until the guard is dropped (the options'
    /// timeout for the length of a collective call; `None`: the default).
    pub(crate) fn set(timeout: Option<Duration>) -> Patience {
        let t = timeout.unwrap_or(DEFAULT_MPI_TIMEOUT);
        Patience {
            before: PATIENCE.with(|p| p.replace(t)),
        }
    }
}

impl Drop for Patience {
    fn drop(&mut self) {
        PATIENCE.with(|p| p.set(self.before));
    }
}

/// The timeout of this thread's waits.
pub(crate) fn patience() -> Duration {
    PATIENCE.with(Cell::get)
}

/// The error for ranks that did not answer within `timeout` (`ranks` empty: a collective,
/// which cannot tell who is missing).
pub(crate) fn no_answer(ranks: Vec<usize>, timeout: Duration, during: &'static str) -> DistError {
    DistError::NoAnswer {
        ranks,
        seconds: timeout.as_secs_f64(),
        during,
    }
}

/// One non-blocking send, receive or collective over buffers it owns.
pub(crate) struct Posted {
    request: MPI_Request,
    /// The rank it waits on (`None`: a collective).
    peer: Option<usize>,
    /// What MPI reads or writes. The heap memory stays put when the `Posted` moves.
    bufs: Vec<Vec<u8>>,
}

/// A buffer as MPI takes it for a request that owns it.
///
/// # Safety
/// The buffer is neither touched nor freed before the request completed.
unsafe fn lend(v: &[u8]) -> &'static [u8] {
    // SAFETY: the caller's contract.
    unsafe { &*(v as *const [u8]) }
}

/// # Safety
/// As [`lend`].
unsafe fn lend_mut(v: &mut [u8]) -> &'static mut [u8] {
    // SAFETY: the caller's contract.
    unsafe { &mut *(v as *mut [u8]) }
}

impl Posted {
    fn of<D: ?Sized>(
        r: mpi::request::Request<'static, D, StaticScope>,
        peer: Option<usize>,
        bufs: Vec<Vec<u8>>,
    ) -> Posted {
        // SAFETY: `Posted` completes the request before it frees the buffers, or leaks them.
        let (request, _, _) = unsafe { r.into_raw() };
        Posted {
            request,
            peer,
            bufs,
        }
    }

    /// Sends `data` to `peer`.
    pub(crate) fn send(comm: &Communicator, peer: usize, tag: i32, data: Vec<u8>) -> Posted {
        // SAFETY: `data` moves into the `Posted`, which outlives the request (`Drop`).
        let b = unsafe { lend(&data) };
        let r = comm
            .process_at_rank(peer as i32)
            .immediate_send_with_tag(StaticScope, b, tag);
        Posted::of(r, Some(peer), vec![data])
    }

    /// Receives `buf.len()` bytes from `peer` into `buf`.
    pub(crate) fn recv(comm: &Communicator, peer: usize, tag: i32, mut buf: Vec<u8>) -> Posted {
        // SAFETY: as in `send`.
        let b = unsafe { lend_mut(&mut buf) };
        let r = comm
            .process_at_rank(peer as i32)
            .immediate_receive_into_with_tag(StaticScope, b, tag);
        Posted::of(r, Some(peer), vec![buf])
    }

    /// Gathers every rank's `mine` (all of one length) into one buffer, in rank order.
    pub(crate) fn all_gather(comm: &Communicator, mine: Vec<u8>) -> Posted {
        let mut all = vec![0u8; mine.len() * comm.size() as usize];
        // SAFETY: as in `send`.
        let (s, r) = unsafe { (lend(&mine), lend_mut(&mut all)) };
        let req = comm.immediate_all_gather_into(StaticScope, s, r);
        Posted::of(req, None, vec![all, mine])
    }

    /// Waits for every rank to post its own.
    pub(crate) fn barrier(comm: &Communicator) -> Posted {
        Posted::of(comm.immediate_barrier(), None, Vec::new())
    }

    /// Whether the request has completed (tests it, which also lets MPI progress).
    pub(crate) fn done(&mut self) -> bool {
        // SAFETY: reading a constant of the MPI library.
        let null = unsafe { mpi::ffi::RSMPI_REQUEST_NULL };
        if self.request == null {
            return true;
        }
        let mut flag = 0;
        // SAFETY: a live request of this `Posted`; MPI sets it to null once complete.
        unsafe {
            mpi::ffi::MPI_Test(&mut self.request, &mut flag, mpi::ffi::RSMPI_STATUS_IGNORE);
        }
        flag != 0
    }

    /// The first buffer (what was received, or gathered); `None` before completion.
    pub(crate) fn data(&mut self) -> Option<&[u8]> {
        match self.done() {
            true => self.bufs.first().map(Vec::as_slice),
            false => None,
        }
    }

    /// The buffers back, for reuse; `None` (and leaked, see `Drop`) before completion.
    pub(crate) fn into_buffers(mut self) -> Option<Vec<Vec<u8>>> {
        match self.done() {
            true => Some(std::mem::take(&mut self.bufs)),
            false => None,
        }
    }
}

impl Drop for Posted {
    fn drop(&mut self) {
        if self.done() {
            return;
        }
        // Point-to-point requests can be cancelled (a receive always; a send where the
        // library can); collectives cannot.
        if self.peer.is_some() {
            // SAFETY: a live point-to-point request of this `Posted`.
            unsafe {
                mpi::ffi::MPI_Cancel(&mut self.request);
            }
        }
        if !self.done() {
            // MPI may still read or write them: they must outlive the process.
            std::mem::forget(std::mem::take(&mut self.bufs));
        }
    }
}

/// Polls `requests` until all have completed or `deadline` passed; then the ranks the
/// unfinished ones wait on (ascending; empty for a collective).
pub(crate) fn wait_all(requests: &mut [Posted], deadline: Instant) -> Result<(), Vec<usize>> {
    let mut idle = 0u32;
    loop {
        let mut all = true;
        for r in requests.iter_mut() {
            all &= r.done();
        }
        if all {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let mut peers: Vec<usize> = (requests.iter_mut())
                .filter_map(|r| match r.done() {
                    true => None,
                    false => r.peer,
                })
                .collect();
            peers.sort_unstable();
            peers.dedup();
            return Err(peers);
        }
        // Spin while an answer is likely soon (an exchange in progress), then stop burning a
        // core that the slow rank may share.
        idle = idle.saturating_add(1);
        match idle < 2000 {
            true => std::hint::spin_loop(),
            false => std::thread::sleep(Duration::from_micros(200)),
        }
    }
}

/// A communicator's identity, for keeping per-communicator state.
pub(crate) fn comm_key(comm: &Communicator) -> Vec<u8> {
    let raw = comm.as_raw();
    // SAFETY: reading the bytes of a plain handle (a pointer or an integer, by the library).
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&raw as *const mpi::ffi::MPI_Comm).cast::<u8>(),
            std::mem::size_of::<mpi::ffi::MPI_Comm>(),
        )
    };
    bytes.to_vec()
}
