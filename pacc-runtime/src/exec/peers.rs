//! The seam between a plan's halo exchanges ([`OpKind::Exchange`](crate::plan::OpKind)) and
//! whatever carries them between ranks: the executors name the bytes, a [`Peers`] moves them.
//! `crate::dist` implements it with NCCL (device memory, GPU to GPU) and with host MPI (the CPU
//! backend's buffers), so neither executor knows MPI or NCCL.

use crate::error::Error;

/// One neighbour's share of an exchange: `send_bytes` bytes at `send` go to rank `peer`, and
/// `recv_bytes` bytes from it land at `recv`. Addresses are host pointers for
/// [`Peers::exchange_host`] and device pointers for [`Peers::exchange_device`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub peer: usize,
    pub send: u64,
    pub send_bytes: usize,
    pub recv: u64,
    pub recv_bytes: usize,
}

/// Planes of a user's array that a run may not touch (or, with `writes_only`, not write)
/// before `event` (a `CUevent` of the run's device) completes: a halo exchange running beside
/// the run still reads or fills them. Only the CUDA executor takes gates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gate {
    pub array: usize,
    pub planes: std::ops::Range<usize>,
    pub event: u64,
    pub writes_only: bool,
}

/// Moves halo planes between this rank and its neighbours. Every rank issues its exchanges in
/// the same order (the plans of one run have them at the same steps), and each call pairs with
/// the neighbours' calls of the same position.
pub trait Peers {
    /// What carries the exchanges, for the report ("NCCL", "host MPI").
    fn carrier(&self) -> &'static str;

    /// Exchanges host memory; returns once every byte has arrived.
    ///
    /// # Safety
    /// Each transfer's `send` is readable and `recv` writable for its bytes, disjoint from each
    /// other, and nothing else touches them until the call returns.
    unsafe fn exchange_host(&self, transfers: &[Transfer]) -> Result<(), Error>;

    /// Enqueues the exchange of device memory on the CUDA stream `stream` (a `CUstream`) and
    /// returns without waiting.
    ///
    /// # Safety
    /// The addresses are device memory of the current context, valid for their bytes until the
    /// stream has passed the exchange; nothing else writes them meanwhile.
    unsafe fn exchange_device(
        &self,
        transfers: &[Transfer],
        stream: *mut std::ffi::c_void,
    ) -> Result<(), Error>;

    /// Host planes the run must wait for (an exchange running beside it).
    fn gates(&self) -> Vec<Gate> {
        Vec::new()
    }

    /// Called while the executor waits for the device: an error when another rank has failed
    /// (its exchanges will never come). The executor then calls [`Peers::fail`].
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Called when this rank's run fails: tells the other ranks (unless the failure was
    /// theirs), and makes this rank's pending exchanges give up so that its streams drain.
    fn fail(&self, error: &Error) {
        let _ = error;
    }
}

/// The error of an exchange found in a plan run without [`Peers`].
pub(crate) fn missing() -> Error {
    Error::Internal(
        "the plan exchanges halos with other ranks, but the run was given no peers".into(),
    )
}

/// The transfers of an exchange of `arrays` over `links`: `at(array, plane)` gives the address
/// of that plane of the array's buffer and the bytes of one plane.
pub(crate) fn transfers(
    arrays: &[usize],
    links: &[crate::plan::HaloLink],
    at: impl Fn(usize, usize) -> (u64, usize),
) -> Vec<Transfer> {
    let mut v = Vec::with_capacity(arrays.len() * links.len());
    for &a in arrays {
        for l in links {
            let ((send, pb), (recv, _)) = (at(a, l.send.start), at(a, l.recv.start));
            v.push(Transfer {
                peer: l.peer,
                send,
                send_bytes: l.send.len() * pb,
                recv,
                recv_bytes: l.recv.len() * pb,
            });
        }
    }
    v
}
