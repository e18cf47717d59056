//! The accesses a later operation can still conflict with, per resource: the basis of the
//! dependencies ([`super::build`]) and of the race check ([`super::race`]).
//!
//! Per resource, an interval map over slots: each piece holds the last operation that wrote it
//! and the operations that read it since. A write replaces every piece it covers, so what it
//! hid is reachable through it (it conflicts with all of it and is ordered after it); a read is
//! kept only until a write covers it, and of several reads of one piece on one stream only the
//! latest, since the stream runs them in order. The map's size is bounded by the distinct slot
//! boundaries and the streams, not by the number of operations: planning stays linear in the
//! blocks. (A list of whole accesses, dropped only when one write covered an access completely,
//! kept every partly overwritten host read: region sharing's loads overlap the write-backs only
//! partly, so every write-back depended on all earlier ones.)

use super::access::{Access, Resource};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// An earlier operation an access conflicts with, and the slots they share (a piece of the
/// earlier operation's access).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub op: usize,
    pub slots: Range<usize>,
}

/// One piece of a resource: slots `start..end` (its key in [`Pieces`] is `start`).
#[derive(Clone, Debug, Default)]
struct Piece {
    end: usize,
    writer: Option<usize>,
    /// The reads since `writer`: (operation, stream), at most one per stream.
    reads: Vec<(usize, usize)>,
}

#[derive(Debug, Default)]
struct Pieces(BTreeMap<usize, Piece>);

impl Pieces {
    /// Splits the piece that holds `at` in its interior, so that a piece starts at `at`.
    fn split(&mut self, at: usize) {
        let Some((_, piece)) = self.0.range_mut(..at).next_back() else {
            return;
        };
        if piece.end > at {
            let right = piece.clone();
            piece.end = at;
            self.0.insert(at, right);
        }
    }

    /// Records `op`'s access of `slots` and appends the earlier operations it conflicts with.
    fn access(
        &mut self,
        (op, stream): (usize, usize),
        slots: &Range<usize>,
        write: bool,
        out: &mut Vec<Conflict>,
    ) {
        if slots.is_empty() {
            return;
        }
        self.split(slots.start);
        self.split(slots.end);
        if write {
            self.write(op, slots, out);
        } else {
            self.read((op, stream), slots, out);
        }
    }

    fn write(&mut self, op: usize, slots: &Range<usize>, out: &mut Vec<Conflict>) {
        let covered: Vec<usize> = self.0.range(slots.clone()).map(|(&s, _)| s).collect();
        for start in covered {
            let Some(p) = self.0.remove(&start) else {
                continue;
            };
            // The reads since the writer were ordered after it: waiting for them waits for it.
            let earlier: Vec<usize> = match p.reads.is_empty() {
                true => p.writer.into_iter().collect(),
                false => p.reads.iter().map(|r| r.0).collect(),
            };
            out.extend(earlier.into_iter().map(|op| Conflict {
                op,
                slots: start..p.end,
            }));
        }
        let piece = Piece {
            end: slots.end,
            writer: Some(op),
            reads: Vec::new(),
        };
        self.0.insert(slots.start, piece);
    }

    fn read(
        &mut self,
        (op, stream): (usize, usize),
        slots: &Range<usize>,
        out: &mut Vec<Conflict>,
    ) {
        let mut gaps = Vec::new();
        let mut next = slots.start;
        for (&start, p) in self.0.range_mut(slots.clone()) {
            if start > next {
                gaps.push(next..start);
            }
            next = p.end;
            out.extend(p.writer.map(|op| Conflict {
                op,
                slots: start..p.end,
            }));
            match p.reads.iter_mut().find(|r| r.1 == stream) {
                Some(r) => r.0 = op,
                None => p.reads.push((op, stream)),
            }
        }
        if next < slots.end {
            gaps.push(next..slots.end);
        }
        for g in gaps {
            let piece = Piece {
                end: g.end,
                writer: None,
                reads: vec![(op, stream)],
            };
            self.0.insert(g.start, piece);
        }
    }
}

/// The live accesses of every resource a plan touches.
#[derive(Debug, Default)]
pub struct Live(HashMap<Resource, Pieces>);

impl Live {
    /// Records access `acc` of operation `op` (on `stream`) and appends to `out` the earlier
    /// operations it must be ordered after: every live write it overlaps and, when it writes,
    /// every live read it overlaps (for the write, where reads followed it, those alone). Every
    /// earlier conflicting access is one of those or ordered before one of them (by an access
    /// recorded earlier, or by stream order).
    pub fn access(&mut self, op: usize, stream: usize, acc: &Access, out: &mut Vec<Conflict>) {
        let pieces = self.0.entry(acc.resource).or_default();
        pieces.access((op, stream), &acc.slots, acc.write, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(slots: Range<usize>, write: bool) -> Access {
        Access {
            resource: Resource::Host { array: 0 },
            slots,
            write,
        }
    }

    fn ops(out: &[Conflict]) -> Vec<usize> {
        let mut v: Vec<usize> = out.iter().map(|c| c.op).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn a_partly_overwritten_read_is_trimmed_to_what_no_write_covered() {
        let mut live = Live::default();
        let mut out = Vec::new();
        live.access(0, 0, &acc(0..10, false), &mut out);
        live.access(1, 1, &acc(4..10, true), &mut out);
        assert_eq!(ops(&out), [0]);
        out.clear();
        // Slots 4..10 were written by 1, which waited for 0: only 1 is live there.
        live.access(2, 2, &acc(5..8, true), &mut out);
        assert_eq!(out, [Conflict { op: 1, slots: 5..8 }]);
        out.clear();
        // 0's read lives on in 0..4.
        live.access(3, 2, &acc(0..6, true), &mut out);
        assert_eq!(ops(&out), [0, 1, 2]);
        assert!(out.contains(&Conflict { op: 0, slots: 0..4 }));
    }

    #[test]
    fn reads_wait_for_writes_only_and_one_read_per_stream_stays() {
        let mut live = Live::default();
        let mut out = Vec::new();
        live.access(0, 0, &acc(0..4, true), &mut out);
        live.access(1, 1, &acc(0..4, false), &mut out);
        live.access(2, 1, &acc(2..6, false), &mut out);
        live.access(3, 2, &acc(0..2, false), &mut out);
        assert_eq!(ops(&out), [0]);
        out.clear();
        // Read 1 on stream 1 is followed by read 2 there: the write waits for 2 on 2..4, and
        // still for 1 on 0..2, where 2 did not read; for writer 0 through the reads.
        live.access(4, 0, &acc(0..6, true), &mut out);
        assert_eq!(ops(&out), [1, 2, 3]);
        assert!(!out.contains(&Conflict { op: 1, slots: 2..4 }));
    }
}
