//! Halo exchanges inside a resident plan: what turns a rank's one-chunk, one-block plan into a
//! distributed run that stays on its device (`crate::dist`).
//!
//! The rank's arrays hold its window (owned planes plus halos `k x reach` deep on each side
//! with a neighbour), and its kernels compute the whole window less one reach at its edges, so
//! the halo planes go stale by one reach per step. Every `k` steps the neighbours refresh them
//! with an [`OpKind::Exchange`], which the executor carries out device to device.
//!
//! Boundary first: the last kernel launch before each exchange is split into the planes the
//! exchange touches (the planes sent, and those below or above them up to the window's edge,
//! which the exchange overwrites) and the interior. The edges come first on the kernel stream,
//! the exchange waits for them alone, and the interior runs while the halos travel. A kernel
//! writes only at the centre and never reads what it writes at an offset (the translator
//! refuses that race), so its planes may be computed in any order.
//!
//! Dependencies are derived afresh from what each operation reads and writes, as for every
//! plan, so the race check holds for these plans too.

use super::{HaloLink, Op, OpKind, Plan, StreamRole};
use crate::program::Program;
use std::ops::Range;

impl Plan {
    /// Whether the plan exchanges halos with other ranks.
    pub fn exchanges(&self) -> bool {
        (self.ops.iter()).any(|o| matches!(o.kind, OpKind::Exchange { .. }))
    }
}

/// `plan` with an exchange of `arrays` over `links` before every `every`-th step (not before
/// the first). `plan` must be resident: one chunk in one block. Returns `None` otherwise.
pub fn insert(
    program: &Program,
    plan: &Plan,
    every: usize,
    arrays: &[usize],
    links: &[HaloLink],
) -> Option<Plan> {
    if plan.chunks != 1 || plan.blocks.len() != 1 || every == 0 {
        return None;
    }
    let mut out = plan.clone();
    out.ops = Vec::with_capacity(plan.ops.len() + plan.steps / every * 4);
    let mut next = every;
    for op in &plan.ops {
        let step = match &op.kind {
            OpKind::Kernel { step, .. } | OpKind::Point { step, .. } => Some(*step),
            _ => None,
        };
        if step.is_some_and(|s| s >= next) && next < plan.steps {
            split_last_kernel(&mut out.ops, next - 1, links);
            out.ops.push(exchange(op, next, arrays, links));
            next += every;
        }
        out.ops.push(op.clone());
    }
    super::build::derive_dependencies(program, &mut out);
    Some(out)
}

/// The exchange before step `step`, in the buffer set of `next` (the op that follows it).
fn exchange(next: &Op, step: usize, arrays: &[usize], links: &[HaloLink]) -> Op {
    let (set, base) = match next.kind {
        OpKind::Kernel { set, base, .. } | OpKind::Point { set, base, .. } => (set, base),
        _ => (0, 0),
    };
    Op {
        kind: OpKind::Exchange {
            set,
            base,
            step,
            arrays: arrays.to_vec(),
            links: links.to_vec(),
        },
        stream: Plan::stream(set, StreamRole::Loads),
        deps: Vec::new(),
        block: next.block,
        chunk: next.chunk,
    }
}

/// Splits the last kernel launch of `step` in `ops` into its edges and interior (see the
/// module comment), edges first. Leaves it whole when the interior is empty.
fn split_last_kernel(ops: &mut Vec<Op>, step: usize, links: &[HaloLink]) {
    let Some(at) = ops
        .iter()
        .rposition(|o| matches!(&o.kind, OpKind::Kernel { step: s, .. } if *s == step))
    else {
        return;
    };
    let OpKind::Kernel { planes, .. } = &ops[at].kind else {
        return;
    };
    let parts = parts(planes, links);
    if parts.len() < 2 {
        return;
    }
    let whole = ops.remove(at);
    let pieces = parts.into_iter().map(|p| {
        let mut op = whole.clone();
        if let OpKind::Kernel { planes, owned, .. } = &mut op.kind {
            let lo = owned.start.clamp(p.start, p.end);
            let hi = owned.end.clamp(lo, p.end);
            *owned = lo..hi;
            *planes = p;
        }
        op
    });
    let tail = ops.split_off(at);
    ops.extend(pieces);
    ops.extend(tail);
}

/// `planes` cut into the part at or below every send range that lies above its receive range
/// (the left neighbour's), the part at or above every send range below its receive range (the
/// right one's), and the interior; edges first, empty parts left out.
pub fn parts(planes: &Range<usize>, links: &[HaloLink]) -> Vec<Range<usize>> {
    let low = links
        .iter()
        .filter(|l| l.recv.start < l.send.start)
        .map(|l| l.send.end)
        .max();
    let high = links
        .iter()
        .filter(|l| l.recv.start > l.send.start)
        .map(|l| l.send.start)
        .min();
    let a = low.map_or(planes.start, |c| c.clamp(planes.start, planes.end));
    let b = high.map_or(planes.end, |c| c.clamp(a, planes.end));
    [planes.start..a, b..planes.end, a..b]
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(peer: usize, send: Range<usize>, recv: Range<usize>) -> HaloLink {
        HaloLink { peer, send, recv }
    }

    #[test]
    fn a_middle_rank_computes_both_edges_before_its_interior() {
        // Window 0..40, owned 8..32, halos 8 deep: sends 8..16 left and 24..32 right.
        let links = [link(0, 8..16, 0..8), link(2, 24..32, 32..40)];
        assert_eq!(parts(&(4..36), &links), vec![4..16, 24..36, 16..24]);
    }

    #[test]
    fn an_end_rank_splits_one_side_and_a_thin_slab_not_at_all() {
        let right_only = [link(1, 22..30, 30..38)];
        assert_eq!(parts(&(0..34), &right_only), vec![22..34, 0..22]);
        let both = [link(0, 8..16, 0..8), link(2, 8..16, 16..24)];
        assert_eq!(parts(&(4..20), &both), vec![4..16, 16..20]);
        assert_eq!(parts(&(4..20), &[]), vec![4..20]);
    }
}
