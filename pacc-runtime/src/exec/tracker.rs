//! Progress tracking for every executor: which of a plan's operations have finished, and how an
//! executor's error becomes [`Error::Failed`] with the blocks whose write-backs are all done (or
//! stays as it is while no write-back has run: the user's arrays are then untouched, since only
//! `DtoH` to the user's array and `StageOut` write to them).
//!
//! See `docs/internals.md` §5 for the contract executors follow.

use crate::error::{Error, Progress};
use crate::fault::Site;
use crate::plan::{HostSide, OpKind, Plan};

impl Site {
    /// The site of a plan operation (defined here, beside the executors that call the hook per
    /// operation, so that `crate::fault` stays a leaf that knows nothing of plans).
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
            OpKind::Exchange { .. } => Site::Exchange,
        }
    }
}

/// Whether `kind` writes to the user's arrays (the only operations that do).
pub fn writes_user_array(kind: &OpKind) -> bool {
    (kind.written_user_planes()).is_some_and(|(_, planes)| !planes.is_empty())
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
