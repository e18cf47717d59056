//! The register queues of a marching kernel: which arrays a nest keeps in registers along axis
//! 0 (a queue of planes of the thread's own column) and which it loads one step ahead.

use super::emit::Serve;
use crate::ir::{KExprKind, Nest};
use std::collections::BTreeMap;

/// Most axis-0 offsets a register queue spans.
const MAX_QUEUE: i64 = 16;

/// The register queue of one array: axis-0 offsets `lo..=hi` of the thread's own column.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    pub lo: i64,
    pub hi: i64,
}

/// The read plan of one nest: which arrays are queued or loaded ahead.
#[derive(Clone, Debug, Default)]
pub struct March {
    pub ndim: usize,
    pub cached: BTreeMap<usize, Cache>,
    /// Arrays read only at the point itself, through a register loaded one step ahead.
    pub ahead: Vec<usize>,
}

impl March {
    /// Arrays the nest writes are never cached (a thread must see its own stores); an array
    /// read only at the centre gains nothing from a queue.
    pub fn of(nest: &Nest, written: &[usize], ndim: usize) -> March {
        let mut offs: BTreeMap<usize, Vec<Vec<i64>>> = BTreeMap::new();
        crate::analysis::walk_stmts(&nest.body, &mut |_| {}, &mut |e| {
            if let KExprKind::Read(a) = &e.kind {
                offs.entry(a.array).or_default().push(a.offsets.clone());
            }
        });
        let mut cached = BTreeMap::new();
        let mut ahead = Vec::new();
        let late = read_after_write(&nest.body);
        for (array, list) in offs {
            if list.iter().all(|o| o.iter().all(|&v| v == 0)) {
                // Loading the next plane early is safe: only this thread writes its column,
                // and only after reading it (unless a read follows a write in the body).
                if !late.contains(&array) {
                    ahead.push(array);
                }
                continue;
            }
            if written.contains(&array) {
                continue;
            }
            // Only the column's own planes are queued; neighbours in the plane come through the
            // cache (the block's threads read each other's columns, which the L1 holds).
            let column = list.iter().filter(|o| o[1..].iter().all(|&v| v == 0));
            let (lo, hi) =
                column.fold((i64::MAX, i64::MIN), |(l, h), o| (l.min(o[0]), h.max(o[0])));
            // A queue needs a register per plane: wide or single-plane spans are left to the cache.
            if lo < hi && lo >= -MAX_QUEUE && hi <= MAX_QUEUE && hi - lo <= MAX_QUEUE {
                cached.insert(array, Cache { lo, hi });
            }
        }
        March {
            ndim,
            cached,
            ahead,
        }
    }

    /// C for a read of a cached array, or `None` when it is a plain load.
    pub fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        if self.ahead.contains(&array) {
            return Some(format!("pacc_r{array}"));
        }
        self.cached.get(&array)?;
        if offsets[1..].iter().all(|&v| v == 0) {
            return Some(queue_reg(array, offsets[0]));
        }
        None
    }
}

impl Serve for March {
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        March::read(self, array, offsets) // the inherent method above
    }

    fn relative_to_point(&self) -> bool {
        true
    }
}

fn off_name(dz: i64) -> String {
    match dz {
        0 => "0".into(),
        d if d < 0 => format!("m{}", -d),
        d => format!("p{d}"),
    }
}

pub(super) fn queue_reg(array: usize, dz: i64) -> String {
    format!("pacc_q{array}_{}", off_name(dz))
}

/// Arrays some statement reads after an earlier statement (or an `if` branch) wrote them.
fn read_after_write(body: &[crate::ir::KStmt]) -> Vec<usize> {
    use crate::ir::KStmt;
    fn go(body: &[KStmt], written: &mut Vec<usize>, late: &mut Vec<usize>) {
        for s in body {
            let mut reads = Vec::new();
            let mut note = |e: &crate::ir::KExpr| {
                if let KExprKind::Read(a) = &e.kind {
                    reads.push(a.array);
                }
            };
            match s {
                KStmt::If { cond, then, els } => {
                    crate::analysis::walk_expr(cond, &mut note);
                    late.extend(reads.iter().filter(|a| written.contains(a)));
                    go(then, written, late);
                    if let Some(e) = els {
                        go(e, written, late);
                    }
                    continue;
                }
                KStmt::Let { init: e, .. }
                | KStmt::Assign { value: e, .. }
                | KStmt::Write { value: e, .. }
                | KStmt::Reduce { value: e, .. } => crate::analysis::walk_expr(e, &mut note),
            }
            late.extend(reads.iter().filter(|a| written.contains(a)));
            if let KStmt::Write { access, .. } = s {
                written.push(access.array);
            }
        }
    }
    let (mut written, mut late) = (Vec::new(), Vec::new());
    go(body, &mut written, &mut late);
    late
}
