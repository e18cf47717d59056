//! Progress of a run as it goes: how many time steps are done, for a progress bar.
//!
//! The caller sets a hook with [`crate::Options::on_progress`]; the executors call it on the
//! thread that called `run`, each time a block's kernels have all completed, with the steps of
//! the whole call done so far. The runtime draws nothing itself (a front end maps the hook to a
//! bar, as the examples do with `indicatif`).
//!
//! (Not to be confused with [`crate::error::Progress`], which says how far a *failed* run got.)

use crate::plan::{OpKind, Plan};
use std::sync::Arc;

/// Time steps of one call done so far, and in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepsDone {
    /// Steps whose kernels have completed, counted from the first step of the call (a resumed
    /// call starts at the checkpoint's step).
    pub done: usize,
    /// Steps of the call.
    pub total: usize,
}

/// The hook [`crate::Options::on_progress`] sets: called with every new [`StepsDone`].
///
/// `Send + Sync` because `Options` may be shared by calls on several threads; each call invokes
/// it only from its own thread, and never after `run` has returned. Keep it cheap: it runs
/// between operations (the CPU backend) or while the device works (the CUDA backend).
#[derive(Clone)]
pub struct OnProgress {
    f: Arc<dyn Fn(StepsDone) + Send + Sync>,
    /// Steps done before the plan this hook is handed to (checkpoint segments, resumed calls).
    before: usize,
    /// The call's steps, when it runs in several plans; `None`: the plan's own.
    total: Option<usize>,
}

impl OnProgress {
    pub fn new(f: impl Fn(StepsDone) + Send + Sync + 'static) -> Self {
        OnProgress {
            f: Arc::new(f),
            before: 0,
            total: None,
        }
    }

    /// The hook for a plan that runs steps `before..` of a call of `total` steps: the executor
    /// counts within its plan, the caller sees the call.
    pub fn segment(&self, before: usize, total: usize) -> Self {
        OnProgress {
            f: self.f.clone(),
            before,
            total: Some(total),
        }
    }

    fn call(&self, done_in_plan: usize, plan_steps: usize) {
        (self.f)(StepsDone {
            done: self.before + done_in_plan,
            total: self.total.unwrap_or(self.before + plan_steps),
        })
    }
}

impl std::fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnProgress")
            .field("before", &self.before)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// What an executor feeds as operations finish: counts each block's kernel and point
/// operations down and calls the hook when a block's last one completes. Inert (and free)
/// without a hook.
#[derive(Debug)]
pub struct StepCounter {
    hook: Option<OnProgress>,
    /// Per block: kernel and point operations not yet finished.
    pending: Vec<usize>,
    /// Per block: time steps.
    steps: Vec<usize>,
    /// Steps of the blocks whose kernels are all done.
    done: usize,
    plan_steps: usize,
}

impl StepCounter {
    pub fn new(plan: &Plan, hook: Option<&OnProgress>) -> StepCounter {
        let mut pending = vec![0; plan.blocks.len()];
        if hook.is_some() {
            for op in &plan.ops {
                if computes(&op.kind) {
                    if let Some(p) = pending.get_mut(op.block) {
                        *p += 1;
                    }
                }
            }
        }
        let steps: Vec<usize> = plan.blocks.iter().map(|b| b.steps).collect();
        // A block without kernels (none today) counts as done from the start.
        let done = steps
            .iter()
            .zip(&pending)
            .filter(|(_, &p)| p == 0)
            .map(|(s, _)| s)
            .sum();
        StepCounter {
            hook: hook.cloned(),
            pending,
            steps,
            done,
            plan_steps: plan.steps,
        }
    }

    /// Whether anyone listens (an executor may skip waiting for progress otherwise).
    pub fn active(&self) -> bool {
        self.hook.is_some()
    }

    /// The operations whose completion moves the count, in plan order: what an asynchronous
    /// executor waits for, one after the other, to report progress while the device works.
    pub fn watched(&self, plan: &Plan) -> Vec<usize> {
        if !self.active() {
            return Vec::new();
        }
        (0..plan.ops.len())
            .filter(|&i| computes(&plan.ops[i].kind))
            .collect()
    }

    /// Records that operation `op` of `plan` has finished; calls the hook if that completes its
    /// block's kernels.
    pub fn finished(&mut self, plan: &Plan, op: usize) {
        let Some(hook) = &self.hook else { return };
        let o = &plan.ops[op];
        if !computes(&o.kind) {
            return;
        }
        if let Some(p) = self.pending.get_mut(o.block) {
            if *p > 0 {
                *p -= 1;
                if *p == 0 {
                    self.done += self.steps[o.block];
                    hook.call(self.done, self.plan_steps);
                }
            }
        }
    }
}

/// Operations that advance the time steps ([`OpKind::computes`]).
fn computes(kind: &OpKind) -> bool {
    kind.computes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_segment_hook_counts_within_the_call() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let hook = OnProgress::new(move |p| s.lock().unwrap().push(p));
        hook.call(3, 10);
        hook.segment(10, 25).call(4, 10);
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                StepsDone { done: 3, total: 10 },
                StepsDone {
                    done: 14,
                    total: 25
                }
            ]
        );
        assert!(format!("{hook:?}").contains("OnProgress"));
    }
}
