//! Proof that a plan has no data race: every two operations that touch overlapping bytes of one
//! buffer or host range, at least one of them writing, must be ordered by a path of
//! dependencies (explicit `deps`, or stream order). Executors may then run the operations in any
//! order those edges allow and get the submission order's result.
//!
//! Cost: a bitset of ancestors per operation (n^2 / 8 bytes); meant for tests and `pacc plan`.

use super::access::{accesses, Resource};
use super::span::overlaps;
use super::Plan;
use crate::program::Program;
use std::collections::HashMap;
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
        first_slots: Range<usize>,
        second_slots: Range<usize>,
    },
}

struct Bits {
    words: usize,
    data: Vec<u64>,
}

impl Bits {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        Bits {
            words,
            data: vec![0; words * n],
        }
    }
    fn row(&self, i: usize) -> &[u64] {
        &self.data[i * self.words..(i + 1) * self.words]
    }
    fn get(&self, i: usize, j: usize) -> bool {
        self.row(i)[j / 64] >> (j % 64) & 1 == 1
    }
    /// row i |= row j, and set bit j.
    fn absorb(&mut self, i: usize, j: usize) {
        let w = self.words;
        let (lo, hi) = self.data.split_at_mut(i * w);
        let src = &lo[j * w..(j + 1) * w];
        let dst = &mut hi[..w];
        for (d, s) in dst.iter_mut().zip(src) {
            *d |= *s;
        }
        dst[j / 64] |= 1 << (j % 64);
    }
}

/// Checks that the plan is free of data races.
pub fn check(program: &Program, plan: &Plan) -> Result<(), RaceError> {
    let n = plan.ops.len();
    let mut anc = Bits::new(n);
    let mut last_on_stream: HashMap<usize, usize> = HashMap::new();
    for (i, op) in plan.ops.iter().enumerate() {
        let stream_prev = last_on_stream.insert(op.stream, i);
        for &d in op.deps.iter().chain(stream_prev.iter()) {
            if d >= i {
                return Err(RaceError::Forward { op: i, dep: d });
            }
            anc.absorb(i, d);
        }
    }
    let mut by_resource: HashMap<Resource, Vec<(usize, Range<usize>, bool)>> = HashMap::new();
    for (i, op) in plan.ops.iter().enumerate() {
        for a in accesses(program, plan, op) {
            let list = by_resource.entry(a.resource).or_default();
            for (j, slots, write) in list.iter() {
                if *j != i && (*write || a.write) && overlaps(slots, &a.slots) && !anc.get(i, *j) {
                    return Err(RaceError::Unordered {
                        first: *j,
                        second: i,
                        resource: a.resource,
                        first_slots: slots.clone(),
                        second_slots: a.slots.clone(),
                    });
                }
            }
            list.push((i, a.slots, a.write));
        }
    }
    Ok(())
}
