//! Fault injection (for tests): a leaf module, so that every layer may call the hook.
//!
//! **The hook.** [`inject`] arms a fault in the *calling thread*: the `nth` (0-based) operation
//! of a [`Site`] that this thread starts afterwards fails with a [`Fault`], which becomes
//! `Error::Fault` (`crate::error`). Executors call
//! [`hit`] at the start of every operation of that kind; it costs one thread-local lookup when
//! nothing is armed. Faults are per thread so that tests running in parallel (and concurrent
//! calls of `run`) never see each other's faults; executors must therefore call [`hit`] on the
//! thread that called `run` (both executors issue all their operations from it). The guard
//! returned by [`inject`] disarms the fault when dropped.
//!
//! Progress tracking (which blocks a failed run completed) lives with the executors:
//! `crate::exec::Tracker`; the site of a plan operation is `Site::of`, defined there too.
//! See `docs/internals.md` §5 for the contract executors follow.

use std::cell::RefCell;

/// Kinds of operations a fault can be injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// Allocating the device buffer sets or staging buffers of a run (once per plan executed;
    /// the CUDA executor: each device or pinned allocation).
    Alloc,
    /// Compiling the program's kernels (NVRTC; the CPU backend compiles nothing).
    Compile,
    /// A host -> device transfer (`OpKind::HtoD`).
    HtoD,
    /// A device -> host transfer (`OpKind::DtoH`).
    DtoH,
    /// A device -> device region copy (`OpKind::DtoD`).
    DtoD,
    /// A host copy through a staging buffer (`OpKind::StageIn`, `OpKind::StageOut`).
    HostCopy,
    /// A kernel launch (`OpKind::Kernel`).
    Kernel,
    /// A point-statement launch (`OpKind::Point`).
    Point,
    /// Compressing planes of a buffer (`OpKind::Encode`).
    Encode,
    /// Decompressing planes into a buffer (`OpKind::Decode`).
    Decode,
    /// A distributed run's halo exchange with the neighbouring ranks (`OpKind::Exchange`).
    Exchange,
    /// Writing a checkpoint: fires after the array files are written, before the checkpoint is
    /// made current, as a crash or a full disk would.
    Checkpoint,
    /// Page-locking one piece of the user's arrays (CUDA, direct and shared transfers). The
    /// hook runs on the calling thread for every piece before the registering threads start;
    /// the piece it fires for fails instead of being registered.
    Register,
    /// One round of a host exchange relayed through the GPU (`exec::cuda::Relay`), before its
    /// pieces go to the neighbours.
    Relay,
}

impl Site {
    pub const fn name(self) -> &'static str {
        match self {
            Site::Alloc => "allocation",
            Site::Compile => "compile",
            Site::HtoD => "host-to-device transfer",
            Site::DtoH => "device-to-host transfer",
            Site::DtoD => "device-to-device copy",
            Site::HostCopy => "staging copy",
            Site::Kernel => "kernel launch",
            Site::Point => "point-statement launch",
            Site::Encode => "compression",
            Site::Decode => "decompression",
            Site::Exchange => "halo exchange",
            Site::Checkpoint => "checkpoint write",
            Site::Register => "page-locking",
            Site::Relay => "relayed halo exchange",
        }
    }
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

struct Armed {
    id: u64,
    site: Site,
    nth: usize,
    seen: usize,
}

thread_local! {
    static ARMED: RefCell<Vec<Armed>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Disarms its fault when dropped.
#[doc(hidden)]
#[must_use = "the fault is disarmed when the guard is dropped"]
pub struct FaultGuard {
    id: u64,
    // Not Send: the fault belongs to the thread that armed it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        let id = self.id;
        let _ = ARMED.try_with(|a| a.borrow_mut().retain(|f| f.id != id));
    }
}

/// Arms a fault in this thread: the `nth` (0-based) operation of `site` started from now on
/// fails with a [`Fault`]. Test-only; see the module documentation.
#[doc(hidden)]
pub fn inject(site: Site, nth: usize) -> FaultGuard {
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    ARMED.with(|a| {
        a.borrow_mut().push(Armed {
            id,
            site,
            nth,
            seen: 0,
        })
    });
    FaultGuard {
        id,
        _thread: std::marker::PhantomData,
    }
}

/// A fault the hook fired; `crate::error` turns it into `Error::Fault` (so `?` works in code
/// returning the crate's `Error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub site: Site,
    /// 0-based count of the operations of this kind the thread had started.
    pub index: usize,
    /// The operation, as the executor describes it.
    pub op: String,
}

/// Called by executors at the start of every operation of `site`: fails when an armed fault says
/// so. `op` describes the operation (only evaluated when the fault fires).
pub fn hit(site: Site, op: impl FnOnce() -> String) -> Result<(), Fault> {
    let fired = ARMED.with(|a| {
        let mut a = a.borrow_mut();
        let mut fired = None;
        for f in a.iter_mut().filter(|f| f.site == site) {
            if f.seen == f.nth && fired.is_none() {
                fired = Some(f.nth);
            }
            f.seen += 1;
        }
        fired
    });
    match fired {
        None => Ok(()),
        Some(index) => Err(Fault {
            site,
            index,
            op: op(),
        }),
    }
}
