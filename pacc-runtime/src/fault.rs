//! Fault injection (for tests) and progress tracking (for every executor).
//!
//! **The hook.** [`inject`] arms a fault in the *calling thread*: the `nth` (0-based) operation
//! of a [`Site`] that this thread starts afterwards fails with [`Error::Fault`]. Executors call
//! [`hit`] at the start of every operation of that kind; it costs one thread-local lookup when
//! nothing is armed. Faults are per thread so that tests running in parallel (and concurrent
//! calls of `run`) never see each other's faults; executors must therefore call [`hit`] on the
//! thread that called `run` (both executors issue all their operations from it). The guard
//! returned by [`inject`] disarms the fault when dropped.
//!
//! **Progress.** A [`Tracker`] follows which of a plan's operations have finished and turns an
//! executor's error into [`Error::Failed`] with the blocks whose write-backs are all done, or
//! returns the error unchanged while no write-back has run (the user's arrays are then
//! untouched: only `DtoH` to the user's array and `StageOut` write to them).
//!
//! See `docs/internals.md` §5 for the contract executors follow.

use crate::error::{Error, Progress};
use crate::plan::{HostSide, OpKind, Plan};
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
    /// Writing a checkpoint: fires after the array files are written, before the checkpoint is
    /// made current, as a crash or a full disk would.
    Checkpoint,
}

impl Site {
    /// The site of a plan operation.
    pub fn of(kind: &OpKind) -> Site {
        match kind {
            OpKind::HtoD { .. } => Site::HtoD,
            OpKind::DtoH { .. } => Site::DtoH,
            OpKind::DtoD { .. } => Site::DtoD,
            OpKind::StageIn { .. } | OpKind::StageOut { .. } => Site::HostCopy,
            OpKind::Kernel { .. } => Site::Kernel,
            OpKind::Point { .. } => Site::Point,
            OpKind::Encode { .. } => Site::Encode,
            OpKind::Decode { .. } => Site::Decode,
        }
    }

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
            Site::Checkpoint => "checkpoint write",
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
/// fails with [`Error::Fault`]. Test-only; see the module documentation.
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

/// Called by executors at the start of every operation of `site`: fails when an armed fault says
/// so. `op` describes the operation (only evaluated when the fault fires).
pub fn hit(site: Site, op: impl FnOnce() -> String) -> Result<(), Error> {
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
        Some(index) => Err(Error::Fault {
            site,
            index,
            op: op(),
        }),
    }
}

/// Whether `kind` writes to the user's arrays (the only operations that do).
pub fn writes_user_array(kind: &OpKind) -> bool {
    match kind {
        OpKind::DtoH {
            to: HostSide::User,
            planes,
            ..
        }
        | OpKind::StageOut { planes, .. } => !planes.is_empty(),
        _ => false,
    }
}

/// Whether `kind` writes back a written array's results into the host's compressed copy (every
/// block but the last, with compression): that block's state never reaches the user's arrays, so
/// the block never counts as complete (its count of pending write-backs never drops to zero:
/// [`Tracker::finished`] only counts user write-backs down).
fn keeps_compressed_state(plan: &Plan, kind: &OpKind) -> bool {
    matches!(kind, OpKind::DtoH { array, to: HostSide::Compressed, .. }
        if plan.compressed(*array).is_some_and(|c| c.written))
}

/// Follows which operations of a plan have started and finished, to say how far a failed run
/// got.
///
/// Call [`Tracker::started`] when an operation is issued (for an asynchronous executor: once it
/// may execute at any moment) and [`Tracker::finished`] once it is known to have completed. A
/// write-back that started but is not known to have finished counts as possibly written: the
/// arrays are then reported as touched (and, beyond the complete blocks, torn).
#[derive(Clone, Debug)]
pub struct Tracker {
    /// Per block: write-backs to the user's arrays not yet known to have finished.
    pending: Vec<usize>,
    /// Per block: whether a write-back may have written (started or finished).
    touched: Vec<bool>,
    /// Per block: number of time steps.
    steps: Vec<usize>,
}

impl Tracker {
    pub fn new(plan: &Plan) -> Tracker {
        let mut pending = vec![0; plan.blocks.len()];
        for op in &plan.ops {
            if writes_user_array(&op.kind) || keeps_compressed_state(plan, &op.kind) {
                if let Some(p) = pending.get_mut(op.block) {
                    *p += 1;
                }
            }
        }
        Tracker {
            touched: vec![false; pending.len()],
            pending,
            steps: plan.blocks.iter().map(|b| b.steps).collect(),
        }
    }

    /// Records that operation `op` of the plan was issued.
    pub fn started(&mut self, plan: &Plan, op: usize) {
        let op = &plan.ops[op];
        if writes_user_array(&op.kind) {
            if let Some(t) = self.touched.get_mut(op.block) {
                *t = true;
            }
        }
    }

    /// Records that operation `op` of the plan has finished (implies [`Tracker::started`]).
    pub fn finished(&mut self, plan: &Plan, op: usize) {
        self.started(plan, op);
        let op = &plan.ops[op];
        if writes_user_array(&op.kind) {
            if let Some(p) = self.pending.get_mut(op.block) {
                *p = p.saturating_sub(1);
            }
        }
    }

    /// Whether any write-back to the user's arrays may have written.
    pub fn written(&self) -> bool {
        self.touched.iter().any(|&t| t)
    }

    /// Progress within this plan (steps counted from the plan's first step; no checkpoint).
    pub fn progress(&self) -> Progress {
        let blocks = self.pending.iter().take_while(|&&p| p == 0).count();
        Progress {
            steps_complete: self.steps[..blocks].iter().sum(),
            blocks_complete: blocks,
            torn: self.touched[blocks..].iter().any(|&t| t),
            checkpoint: None,
        }
    }

    /// The error to return for `cause`: unchanged while no write-back may have written (the
    /// arrays are untouched), else [`Error::Failed`] with this plan's progress.
    pub fn fail(&self, cause: Error) -> Error {
        if !self.written() {
            return cause;
        }
        Error::Failed {
            cause: Box::new(cause),
            progress: self.progress(),
        }
    }
}
