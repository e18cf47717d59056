//! Proof that a plan has no data race: every two operations that touch overlapping bytes of one
//! buffer or host range, at least one of them writing, must be ordered by a path of
//! dependencies (explicit `deps`, or stream order). Executors may then run the operations in any
//! order those edges allow and get the submission order's result.
//!
//! Each access is checked against the live accesses it conflicts with (`plan/live.rs`), not against
//! every earlier one: an access a later write hid is ordered before that write, which was
//! checked against it, so order through the write suffices (and of one stream's reads, the
//! latest stands for the earlier ones). Checked this way the verdict is the same as over all
//! pairs, in time and memory linear in the operations: a conflict the derivation turned into
//! an edge (or that stream order covers) costs one look-up; only one it left to a path is
//! searched for, among the operations between the two.

use super::access::{accesses, Resource};
use super::live::{Conflict, Live};
use super::Plan;
use crate::program::Program;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RaceError {
    #[error("operation {op} depends on operation {dep}, which is not earlier in submission order")]
    Forward { op: usize, dep: usize },
    #[error("operations {first} and {second} both touch {resource:?} slots {first_slots:?} / {second_slots:?} (one writes) with no dependency path between them")]
    Unordered {
        first: usize,
        second: usize,
        resource: Resource,
        /// The slots of `first`'s access that `second`'s overlaps.
        first_slots: Range<usize>,
        second_slots: Range<usize>,
    },
}

/// Whether one operation is ordered after another: `deps` and stream order, searched backwards.
struct Order<'a> {
    plan: &'a Plan,
    /// Per operation, the previous one on its stream.
    stream_prev: Vec<Option<usize>>,
    /// Per operation, the search that last visited it (searches count from 1).
    seen: Vec<u32>,
    search: u32,
    stack: Vec<usize>,
}

impl<'a> Order<'a> {
    fn new(plan: &'a Plan) -> Result<Self, RaceError> {
        let n = plan.ops.len();
        let mut last = vec![None; plan.streams.max(1)];
        let mut stream_prev = Vec::with_capacity(n);
        for (i, op) in plan.ops.iter().enumerate() {
            if let Some(&dep) = op.deps.iter().find(|&&d| d >= i) {
                return Err(RaceError::Forward { op: i, dep });
            }
            if op.stream >= last.len() {
                last.resize(op.stream + 1, None);
            }
            stream_prev.push(last[op.stream].replace(i));
        }
        Ok(Order {
            plan,
            stream_prev,
            seen: vec![0; n],
            search: 0,
            stack: Vec::new(),
        })
    }

    /// Whether `i` runs after `j < i`. A path from `i` to `j` only passes operations in
    /// `j..i`, and reaching any operation of `j`'s stream at or after `j` reaches `j`.
    fn after(&mut self, i: usize, j: usize) -> bool {
        let ops = &self.plan.ops;
        let on_j = |k: usize| ops[k].stream == ops[j].stream && k >= j;
        let mut preds = ops[i].deps.iter().copied().chain(self.stream_prev[i]);
        if on_j(i) || preds.any(on_j) {
            return true;
        }
        self.search += 1;
        self.stack.clear();
        self.stack.push(i);
        while let Some(k) = self.stack.pop() {
            for p in ops[k].deps.iter().copied().chain(self.stream_prev[k]) {
                if p < j || self.seen[p] == self.search {
                    continue;
                }
                if on_j(p) {
                    return true;
                }
                self.seen[p] = self.search;
                self.stack.push(p);
            }
        }
        false
    }
}

/// Checks that the plan is free of data races.
pub fn check(program: &Program, plan: &Plan) -> Result<(), RaceError> {
    let mut order = Order::new(plan)?;
    let mut live = Live::default();
    let mut conflicts = Vec::new();
    for (i, op) in plan.ops.iter().enumerate() {
        for a in accesses(program, plan, op) {
            live.access(i, op.stream, &a, &mut conflicts);
            for Conflict { op: j, slots } in conflicts.drain(..) {
                if j != i && !order.after(i, j) {
                    return Err(RaceError::Unordered {
                        first: j,
                        second: i,
                        resource: a.resource,
                        first_slots: slots,
                        second_slots: a.slots.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::span::overlaps;
    use super::super::{build, PlanOptions, Scheme};
    use super::*;
    use crate::program::fixtures::{leap_and_jacobi, one_kernel};
    use crate::program::Role;
    use crate::rng::SplitMix64;
    use std::collections::HashMap;

    /// The check as first written: every pair of conflicting accesses against a bitset of each
    /// operation's ancestors (quadratic, obviously right).
    fn all_pairs(program: &Program, plan: &Plan) -> bool {
        let n = plan.ops.len();
        let mut anc = vec![vec![false; n]; n];
        let mut last: HashMap<usize, usize> = HashMap::new();
        for (i, op) in plan.ops.iter().enumerate() {
            for d in op.deps.iter().copied().chain(last.insert(op.stream, i)) {
                let (lo, hi) = anc.split_at_mut(i);
                for (a, &b) in hi[0].iter_mut().zip(&lo[d]) {
                    *a |= b;
                }
                hi[0][d] = true;
            }
        }
        let mut seen: HashMap<Resource, Vec<(usize, Range<usize>, bool)>> = HashMap::new();
        for (i, op) in plan.ops.iter().enumerate() {
            for a in accesses(program, plan, op) {
                let list = seen.entry(a.resource).or_default();
                for (j, slots, write) in list.iter() {
                    let conflict = *j != i && (*write || a.write) && overlaps(slots, &a.slots);
                    if conflict && !anc[i][*j] {
                        return false;
                    }
                }
                list.push((i, a.slots, a.write));
            }
        }
        true
    }

    /// With edges dropped at random, the live check finds a race exactly when some pair of
    /// conflicting operations is left unordered.
    #[test]
    fn the_live_check_agrees_with_the_all_pairs_check() {
        let programs = leap_and_jacobi();
        let mut rng = SplitMix64(48);
        let (mut races, mut cases) = (0, 0);
        for p in &programs {
            for scheme in Scheme::ALL {
                for (chunks, k, steps) in [(3, 2, 5), (4, 3, 9), (2, 1, 4)] {
                    let o = PlanOptions {
                        chunks,
                        block_steps: k,
                        scheme,
                        buffer_sets: scheme.buffer_sets(),
                        ..PlanOptions::default()
                    };
                    let Ok(plan) = build(p, &[40, 12, 12], steps, &[], &o) else {
                        continue;
                    };
                    assert_eq!(check(p, &plan), Ok(()), "{} {scheme}", p.name);
                    for _ in 0..20 {
                        let mut cut = plan.clone();
                        for op in &mut cut.ops {
                            op.deps.retain(|_| rng.below(8) != 0);
                        }
                        let ok = check(p, &cut).is_ok();
                        assert_eq!(ok, all_pairs(p, &cut), "{} {scheme} c{chunks} k{k}", p.name);
                        races += usize::from(!ok);
                        cases += 1;
                    }
                }
            }
        }
        assert!(races > 0 && races < cases, "{races} races in {cases} cases");
    }

    #[test]
    fn a_dependency_on_a_later_operation_is_refused() {
        let arrays = [("p", Role::InOut), ("q", Role::InOut)];
        let p = one_kernel("jacobi", &arrays, &[(0, 1)], 1, 1);
        let o = PlanOptions {
            chunks: 2,
            block_steps: 2,
            scheme: Scheme::RegionSharing,
            buffer_sets: 2,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        let mut plan = build(&p, &[16, 8, 8], 2, &[], &o).unwrap();
        plan.ops[1].deps.push(3);
        assert_eq!(check(&p, &plan), Err(RaceError::Forward { op: 1, dep: 3 }));
    }
}
