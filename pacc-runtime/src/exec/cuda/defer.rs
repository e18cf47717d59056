//! Which operations wait to be enqueued until the user's arrays are page-locked.
//!
//! While the arrays are still being registered (`pinning.rs`), the submitting thread holds back
//! every write to the user's arrays, and with it every operation that would have to wait for a
//! held one: later operations on its stream, and operations that depend on it. Everything else
//! is enqueued in plan order, loads included, so the device works while registration goes on.
//! Once every piece is registered, the held operations follow in plan order. No operation is
//! enqueued before one it waits for, and each stream keeps plan order, so the device runs what
//! the plan says; a registration that fails meanwhile leaves the arrays as they were.

use crate::exec::writes_user_array;
use crate::plan::Plan;

/// The operations held back so far; see the module documentation.
pub(crate) struct Deferral {
    holding: bool,
    held: Vec<bool>,
    held_streams: Vec<bool>,
    queue: Vec<usize>,
}

impl Deferral {
    /// Holds back writes to the user's arrays if `holding` (registration still running).
    pub fn new(plan: &Plan, holding: bool) -> Deferral {
        Deferral {
            holding,
            held: vec![false; plan.ops.len()],
            held_streams: vec![false; plan.streams],
            queue: Vec::new(),
        }
    }

    /// Whether operation `i` (offered in plan order) may be enqueued now; if not, it is held.
    pub fn offer(&mut self, plan: &Plan, i: usize) -> bool {
        if !self.holding {
            return true;
        }
        let op = &plan.ops[i];
        let stream = self.held_streams.get(op.stream).copied().unwrap_or(false);
        let hold = writes_user_array(&op.kind) || stream || op.deps.iter().any(|&d| self.held[d]);
        if hold {
            self.held[i] = true;
            if let Some(s) = self.held_streams.get_mut(op.stream) {
                *s = true;
            }
            self.queue.push(i);
        }
        !hold
    }

    /// Whether operations are being held back.
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Stops holding back; the held operations, in plan order, to enqueue now.
    pub fn release(&mut self) -> Vec<usize> {
        self.holding = false;
        std::mem::take(&mut self.queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{self, PlanOptions, Scheme};
    use crate::program::*;

    fn acoustic() -> Program {
        let arrays = [
            ("prev", Role::InOut),
            ("cur", Role::InOut),
            ("vel", Role::Input),
        ];
        fixtures::one_kernel("acoustic", &arrays, &[(1, 2), (0, 0), (2, 0)], 0, 2)
    }

    /// The order the submitting thread enqueues in when registration completes right after
    /// operation `done` was offered.
    fn order(plan: &Plan, done: usize) -> (Vec<usize>, usize) {
        let mut d = Deferral::new(plan, true);
        let mut out = Vec::new();
        let mut released_at = usize::MAX;
        for i in 0..plan.ops.len() {
            if d.offer(plan, i) {
                out.push(i);
            }
            if i == done && d.holding() {
                released_at = out.len();
                out.extend(d.release());
            }
        }
        if d.holding() {
            released_at = out.len();
            out.extend(d.release());
        }
        (out, released_at)
    }

    #[test]
    fn held_writes_keep_every_dependency_and_stream_in_order() {
        for scheme in Scheme::ALL {
            let o = PlanOptions {
                chunks: 6,
                block_steps: 3,
                scheme,
                buffer_sets: scheme.buffer_sets(),
                compress: Vec::new(),
                codec: Default::default(),
                read_only_ring: true,
            };
            let plan = plan::build(&acoustic(), &[120, 16, 16], 9, &[], &o).unwrap();
            let n = plan.ops.len();
            for done in [0, 3, n / 4, n / 2, n - 1] {
                let (out, released) = order(&plan, done);
                let mut pos = vec![usize::MAX; n];
                for (k, &i) in out.iter().enumerate() {
                    assert_eq!(pos[i], usize::MAX, "{scheme}: op {i} twice");
                    pos[i] = k;
                }
                assert!(
                    pos.iter().all(|&p| p != usize::MAX),
                    "{scheme}: an op is lost"
                );
                let mut last_on_stream = vec![None; plan.streams];
                for (i, op) in plan.ops.iter().enumerate() {
                    for &d in &op.deps {
                        assert!(
                            pos[d] < pos[i],
                            "{scheme}: op {i} before its dependency {d}"
                        );
                    }
                    if let Some(p) = last_on_stream[op.stream].replace(i) {
                        assert!(
                            pos[p] < pos[i],
                            "{scheme}: stream {} out of order",
                            op.stream
                        );
                    }
                    if writes_user_array(&op.kind) {
                        assert!(
                            pos[i] >= released,
                            "{scheme}: a write-back before registration"
                        );
                    }
                }
                // Something besides the first chunk's work went ahead of a late release.
                if done == n / 2 {
                    assert!(
                        released > 4,
                        "{scheme}: only {released} ops before the release"
                    );
                }
            }
        }
    }

    #[test]
    fn nothing_is_held_when_nothing_registers() {
        let o = PlanOptions::default();
        let plan = plan::build(&acoustic(), &[40, 8, 8], 4, &[], &o).unwrap();
        let mut d = Deferral::new(&plan, false);
        assert!((0..plan.ops.len()).all(|i| d.offer(&plan, i)));
        assert!(d.release().is_empty());
    }
}
