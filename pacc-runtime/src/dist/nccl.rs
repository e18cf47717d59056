//! The NCCL carrier of [`Peers`]: halos move GPU to GPU (NVLink inside a node, InfiniBand or
//! RoCE between nodes) on the stream the plan puts the exchange on. MPI stays the control
//! plane: it carries NCCL's unique id from rank 0 to the others and, on a separate duplicate
//! of the communicator, a failing rank's notice to the others, who then abort their NCCL
//! communicator so that no stream waits forever for a peer that will not send.
//!
//! The library is loaded at run time (cudarc's dynamic loading), so builds without NCCL, and
//! machines without it, work: [`NcclPeers::new`] says why it cannot start, and the caller
//! falls back to the host exchange.

use super::comm::Communicator;
use crate::error::{DistError, Error};
use crate::exec::{Peers, Transfer};
use cudarc::nccl::{result, sys};
use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::topology::CommunicatorRelation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::rc::Rc;

/// The tag of a failing rank's notice on the notice communicator.
const FAILED: i32 = 7;

/// A rank's NCCL communicator over all ranks of the MPI communicator.
///
/// The communicator is non-blocking: NCCL's calls return while it still connects peers, and
/// [`NcclPeers::wait`] polls it, reading failure notices meanwhile. A blocking call could not
/// be left when another rank fails inside it (seen on two H200s: a rank's connection set-up
/// failed and its peer spun in NCCL's connect loop for good).
///
/// Clones share one communicator: a rank keeps it for the next call over the same ranks
/// ([`NcclPeers::for_call`]), since starting one costs most of a second.
#[derive(Clone)]
pub struct NcclPeers(Rc<Shared>);

/// The communicator and what its calls need besides.
pub struct Shared {
    comm: sys::ncclComm_t,
    /// Where failure notices travel (a duplicate, so they never mix with other traffic).
    notices: SimpleCommunicator,
    /// Whether the communicator is gone (aborted).
    ended: Cell<bool>,
    /// Whether another rank's notice has arrived (this rank then tells nobody).
    notified: Cell<bool>,
}

impl std::ops::Deref for NcclPeers {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

thread_local! {
    /// The communicator this thread's last call made, with (a duplicate of) the MPI
    /// communicator it was made over. Never dropped: a thread's locals may go after
    /// `MPI_Finalize`, and freeing an MPI communicator then stops the process.
    static KEPT: RefCell<ManuallyDrop<Option<(NcclPeers, SimpleCommunicator)>>> =
        const { RefCell::new(ManuallyDrop::new(None)) };
}

/// The NCCL library could not be loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the NCCL library (libnccl.so.2) was not found")]
pub struct NcclMissing;

/// Whether the NCCL library can be loaded here.
pub fn available() -> Result<(), NcclMissing> {
    // SAFETY: only tries to open the library.
    match unsafe { sys::is_culib_present() } {
        true => Ok(()),
        false => Err(NcclMissing),
    }
}

/// An exchange error of the NCCL carrier.
fn failure(message: String) -> Error {
    DistError::Exchange {
        carrier: "NCCL",
        message,
    }
    .into()
}

impl NcclPeers {
    /// Creates the communicator on every rank of `comm` with this rank's device (collective).
    /// Every rank takes part in every MPI step whatever happens locally, and the ranks agree
    /// that each can start before any enters NCCL's set-up; from there a failing rank tells
    /// the others, who stop waiting for it.
    pub fn new(comm: &Communicator) -> Result<NcclPeers, Error> {
        let here = available().map_err(|e| e.to_string()).and_then(|_| {
            crate::exec::cuda::bind_device().map_err(|e| e.to_string())?;
            // Point-to-point exchanges gain nothing from NVLink multicast, which can take a
            // shared machine's GPUs out of service: off unless the caller chose otherwise.
            if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
                std::env::set_var("NCCL_NVLS_ENABLE", "0");
            }
            Ok(())
        });
        // Rank 0's id, or a zero flag when rank 0 could not make one.
        let mut id = [0u8; 129];
        if comm.rank() == 0 {
            if let Ok(u) = here.clone().and_then(|_| unique_id()) {
                id[0] = 1;
                for (d, s) in id[1..].iter_mut().zip(u.internal) {
                    *d = s as u8;
                }
            }
        }
        comm.process_at_rank(0).broadcast_into(&mut id[..]);
        // Every rank enters NCCL's set-up or none: a rank waiting there would wait for good.
        super::comm::agree(comm, here.map_err(failure))?;
        if id[0] == 0 {
            return Err(failure("rank 0 could not start NCCL".into()));
        }
        let mut unique = sys::ncclUniqueId { internal: [0; 128] };
        for (d, s) in unique.internal.iter_mut().zip(&id[1..]) {
            *d = *s as std::ffi::c_char;
        }
        let mut shared = Shared {
            comm: std::ptr::null_mut(),
            notices: comm.duplicate(),
            ended: Cell::new(false),
            notified: Cell::new(false),
        };
        let mut config = nonblocking();
        // SAFETY: `shared.comm` receives the communicator; the id came from rank 0 of this
        // group; the config is NCCL's initializer with `blocking` off.
        let started = unsafe {
            result::comm_init_rank_config(
                &mut shared.comm,
                comm.size(),
                unique,
                comm.rank(),
                &mut config,
            )
        };
        let peers = NcclPeers(Rc::new(shared));
        let ready = match started {
            Ok(_) => peers.wait("ncclCommInitRankConfig"),
            Err(e) => Err(failure(format!("ncclCommInitRankConfig: {}", code(&e)))),
        };
        let (me, ranks) = (comm.rank() as usize, comm.size() as usize);
        match ready.and_then(|_| peers.first_round(me, ranks)) {
            Ok(()) => Ok(peers),
            Err(e) => {
                peers.fail(&e);
                Err(e)
            }
        }
    }

    /// NCCL over `comm` for a call (collective): the communicator an earlier call over the same
    /// ranks made, where every rank still has a working one, else a new one; whether it was
    /// an earlier one.
    pub fn for_call(comm: &Communicator) -> Result<(NcclPeers, bool), Error> {
        let same = |parent: &SimpleCommunicator| {
            matches!(
                parent.compare(comm),
                CommunicatorRelation::Identical | CommunicatorRelation::Congruent
            )
        };
        let mine = KEPT.with(|k| {
            (k.borrow().as_ref())
                .filter(|(p, parent)| !p.ended.get() && !p.notified.get() && same(parent))
                .map(|(p, _)| p.clone())
        });
        let (have, mut all) = (i32::from(mine.is_some()), 0);
        comm.all_reduce_into(&have, &mut all, SystemOperation::min());
        if let (1, Some(p)) = (all, mine) {
            return Ok((p, true));
        }
        // Discarded alike on every rank, between calls: aborting it waits for no one.
        let old = KEPT.with(|k| k.borrow_mut().take());
        drop(old);
        // Agreed before the duplicate, which every rank must make together.
        let p = super::comm::agree(comm, NcclPeers::new(comm))?;
        KEPT.with(|k| **k.borrow_mut() = Some((p.clone(), comm.duplicate())));
        Ok((p, false))
    }

    /// One byte to and from each neighbour in the chain of ranks: NCCL connects peers on their
    /// first exchange, so that happens here, where every rank is, rather than inside a run
    /// (where waiting for it would idle the kernel stream: 0.4 s of 1.35 s of stepping on two
    /// H200s when it was tried, `benches/results/2026-11-28-h200x2-nccl-close/` call 9).
    fn first_round(&self, me: usize, ranks: usize) -> Result<(), Error> {
        let neighbours: Vec<usize> = [me.checked_sub(1), Some(me + 1).filter(|&r| r < ranks)]
            .into_iter()
            .flatten()
            .collect();
        crate::exec::cuda::with_scratch(64, |ptr, stream| {
            let transfers: Vec<Transfer> = (neighbours.iter().enumerate())
                .map(|(i, &peer)| Transfer {
                    peer,
                    send: ptr + 32 * i as u64,
                    send_bytes: 1,
                    recv: ptr + 32 * i as u64 + 16,
                    recv_bytes: 1,
                })
                .collect();
            // SAFETY: the scratch buffer holds 64 bytes; the stream is waited for.
            let r = unsafe { self.exchange_device(&transfers, stream) };
            // Aborted before the scratch's stream is waited for: nothing then waits for a peer.
            if let Err(e) = &r {
                self.fail(e);
            }
            r
        })
    }

    /// Waits until the communicator has finished its last call (NCCL's non-blocking calls
    /// return `ncclInProgress` and go on in the background), reading failure notices meanwhile.
    fn wait(&self, what: &str) -> Result<(), Error> {
        loop {
            let mut state = sys::ncclResult_t::ncclSuccess;
            // SAFETY: our communicator; `state` receives its status.
            let asked = unsafe { sys::ncclCommGetAsyncError(self.comm, &mut state) };
            let state = asked.result().and(state.result());
            match state {
                Ok(result::NcclStatus::InProgress) => {
                    self.check()?;
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
                Ok(_) => return Ok(()),
                Err(e) => return Err(failure(format!("{what}: {}", self.describe(&e)))),
            }
        }
    }

    /// NCCL's name for an error, with the communicator's last message (which names the CUDA
    /// or system call that failed).
    fn describe(&self, e: &result::NcclError) -> String {
        if self.ended.get() {
            return code(e);
        }
        // SAFETY: a live communicator; NCCL returns a static or per-communicator C string, or
        // null.
        let last = unsafe { sys::ncclGetLastError(self.comm) };
        match last.is_null() {
            true => code(e),
            false => {
                // SAFETY: non-null, NUL-terminated (NCCL's contract).
                let text = unsafe { std::ffi::CStr::from_ptr(last) }.to_string_lossy();
                format!("{} ({})", code(e), text.trim())
            }
        }
    }

    /// Starts relaying host memory through this rank's GPU and returns without waiting
    /// (`exec::cuda::Relay`).
    ///
    /// # Safety
    /// As [`crate::exec::cuda::Relay::start`].
    pub unsafe fn begin_host(
        &self,
        transfers: &[Transfer],
    ) -> Result<crate::exec::cuda::Relay, Error> {
        let exchange = |t: &[Transfer], st: *mut std::ffi::c_void| {
            // SAFETY: the relay gives device pieces it owns, on its stream.
            unsafe { self.exchange_device(t, st) }
        };
        let abandon = |e: &Error| self.fail(e);
        crate::exec::cuda::Relay::start(
            transfers,
            crate::exec::cuda::RELAY_PIECE,
            &exchange,
            &abandon,
        )
    }

    /// Waits for a relay started by [`NcclPeers::begin_host`]; on a failure, tells the other
    /// ranks (or learns theirs) and aborts, so that the relay's streams drain.
    pub fn end_host(&self, relay: crate::exec::cuda::Relay) -> Result<(), Error> {
        relay.finish(&|| self.check(), &|e| self.fail(e))
    }
}

/// NCCL's configuration initializer (`NCCL_CONFIG_INITIALIZER`) with `blocking` off.
fn nonblocking() -> sys::ncclConfig_t {
    const UNDEF: i32 = i32::MIN;
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        version: 22800,
        blocking: 0,
        cgaClusterSize: UNDEF,
        minCTAs: UNDEF,
        maxCTAs: UNDEF,
        netName: std::ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: std::ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
    }
}

fn unique_id() -> Result<sys::ncclUniqueId, String> {
    result::get_uniqueid().map_err(|e| format!("ncclGetUniqueId: {}", code(&e)))
}

/// NCCL's own name for an error code.
fn code(e: &result::NcclError) -> String {
    format!("{:?}", e.0)
}

impl Peers for NcclPeers {
    fn carrier(&self) -> &'static str {
        "NCCL"
    }

    /// Relayed through this rank's GPU (`exec::cuda::Relay`): host to device, NCCL,
    /// device to host, in pieces that overlap.
    unsafe fn exchange_host(&self, transfers: &[Transfer]) -> Result<(), Error> {
        let relay = self.begin_host(transfers)?;
        self.end_host(relay)
    }

    unsafe fn exchange_device(
        &self,
        transfers: &[Transfer],
        stream: *mut std::ffi::c_void,
    ) -> Result<(), Error> {
        if self.ended.get() {
            return Err(failure(
                "the communicator was aborted after a failure".into(),
            ));
        }
        let err =
            |what: &str, e: result::NcclError| failure(format!("{what}: {}", self.describe(&e)));
        let st = stream as sys::cudaStream_t;
        let u8t = sys::ncclDataType_t::ncclUint8;
        result::group_start().map_err(|e| err("ncclGroupStart", e))?;
        let mut r = Ok(());
        for t in transfers {
            let peer = t.peer as i32;
            // Empty halves are left out on both ends of the pair alike.
            // SAFETY: the caller's contract (`Peers::exchange_device`).
            let sent = unsafe {
                let send = (t.send_bytes > 0)
                    .then(|| result::send(t.send as _, t.send_bytes, u8t, peer, self.comm, st))
                    .transpose();
                send.and_then(|_| {
                    (t.recv_bytes > 0)
                        .then(|| result::recv(t.recv as _, t.recv_bytes, u8t, peer, self.comm, st))
                        .transpose()
                })
            };
            if let Err(e) = sent {
                r = Err(err("ncclSend/ncclRecv", e));
                break;
            }
        }
        // The group must be closed whatever happened inside it; it is enqueued (connections
        // made, kernels on the stream) only once the communicator is no longer in progress.
        let closed = match result::group_end() {
            Ok(result::NcclStatus::InProgress) => self.wait("ncclGroupEnd"),
            Ok(_) => Ok(()),
            Err(e) => Err(err("ncclGroupEnd", e)),
        };
        r.and(closed)
    }

    fn check(&self) -> Result<(), Error> {
        let Some((msg, status)) = self
            .notices
            .any_process()
            .immediate_matched_probe_with_tag(FAILED)
        else {
            return Ok(());
        };
        let mut text = vec![0u8; status.count(u8::equivalent_datatype()).max(0) as usize];
        msg.matched_receive_into(&mut text[..]);
        self.notified.set(true);
        Err(DistError::RankFailed {
            rank: status.source_rank() as usize,
            message: String::from_utf8_lossy(&text).into_owned(),
        }
        .into())
    }

    fn fail(&self, error: &Error) {
        if self.ended.get() || self.notified.get() {
            self.abort();
            return;
        }
        let text = error.to_string().into_bytes();
        let me = self.notices.rank();
        for r in (0..self.notices.size()).filter(|&r| r != me) {
            // Small: MPI sends it eagerly, without waiting for the receiver.
            self.notices
                .process_at_rank(r)
                .send_with_tag(&text[..], FAILED);
        }
        self.abort();
    }
}

impl Shared {
    fn abort(&self) {
        if !self.ended.replace(true) && !self.comm.is_null() {
            // SAFETY: our communicator, not used again once aborted.
            let _ = unsafe { result::comm_abort(self.comm) };
        }
    }
}

impl Drop for Shared {
    /// Aborted, never destroyed: destroying could wait for a peer that has gone.
    fn drop(&mut self) {
        self.abort();
    }
}
