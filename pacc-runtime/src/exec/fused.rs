//! A fused kernel on the CPU backend: the group's steps nest by nest, as the serial loop runs
//! them, on private copies of the arrays it writes.
//!
//! The CUDA kernel computes intermediate levels on chip; here each written array's planes that
//! the group needs are copied into a private buffer, the original nests and point statements run
//! on those buffers in serial order (each nest on the planes whose reads the buffers still hold
//! exactly), and the last versions of the operation's planes go to the output buffers. The
//! arithmetic is the serial function's, so are the bits.

use super::reduce::combine;
use crate::frame::{reduction_identity, BufView, KernelFrame};
use crate::invocation::Invocation;
use crate::plan::Plan;
use crate::program::{Active, Program, Stage};
use rayon::prelude::*;
use std::ops::Range;

/// Runs the group of `active` for plan step `step` on output planes `planes`, with `views` the
/// fused program's arrays as the operation binds them; returns the partials of each reduction
/// instance over the `owned` planes, in the kernel's order.
pub(super) fn run(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    active: &Active,
    views: &[BufView],
    (step, planes, owned): (usize, Range<usize>, Range<usize>),
) -> Vec<f64> {
    let n0 = plan.shape[0];
    let norig = program.arrays.len() - active.twins.len();
    let (back, fwd) = active
        .decl
        .reads
        .iter()
        .fold((0i64, 0i64), |(b, f), r| (b.max(-r.lo[0]), f.max(r.hi[0])));
    let region = planes.start.saturating_sub(back as usize)..(planes.end + fwd as usize).min(n0);
    let mut bufs = Private::new(plan, views, &active.twins, &region);
    // Per slot (the names at the group's start): the planes holding its current values,
    // first those the planner made exact for the kernel's reads (none for a slot it never
    // reads, which the group writes before it reads).
    let mut avail: Vec<Range<usize>> = (0..norig)
        .map(|s| {
            let Some(r) = active.decl.reads.iter().find(|r| r.array == s) else {
                return planes.start..planes.start;
            };
            let lo = (planes.start as i64 + r.lo[0]).max(0) as usize;
            let hi = ((planes.end as i64 + r.hi[0]).max(0) as usize).min(n0);
            lo..hi.max(lo)
        })
        .collect();
    let mut slot: Vec<usize> = (0..norig).collect();
    let mut acc = Vec::new();
    let t0 = program.time_of(inv.t0, step);
    for g in 0..active.decl.steps {
        for stage in &active.step {
            match *stage {
                Stage::Kernel(k) => {
                    let frame_views = bufs.views(views, &slot);
                    let frame = KernelFrame {
                        arrays: &frame_views,
                        t: t0 + g as i64,
                        shape: &plan.shape,
                    };
                    let nest = &active.nests[k];
                    // A nest with an empty range along any axis runs no iteration in the
                    // serial loop: it writes nothing, and leaves every plane as exact as it was.
                    let empty = (nest.ranges.iter().zip(&plan.shape))
                        .any(|(r, &n)| r.lo.eval(n) >= r.hi.eval(n));
                    let done = match empty {
                        true => planes.start..planes.start,
                        false => computable(nest, &slot, &avail, n0, &region),
                    };
                    let red = nest_planes(program, inv, k, &frame, &done, &owned);
                    acc.extend(red);
                    if empty {
                        continue;
                    }
                    let (lo, hi) = (
                        nest.ranges[0].lo.eval(n0).max(0) as usize,
                        nest.ranges[0].hi.eval(n0).max(0) as usize,
                    );
                    for &w in &nest.writes {
                        avail[slot[w]] = after_write(&avail[slot[w]], &done, lo..hi);
                    }
                }
                Stage::Point(p) => {
                    let plane = inv.points[p][0].max(0) as usize;
                    let target = slot[program.points[p].array];
                    if avail[target].contains(&plane) && region.contains(&plane) {
                        let frame_views = bufs.views(views, &slot);
                        let frame = KernelFrame {
                            arrays: &frame_views,
                            t: t0 + g as i64,
                            shape: &plan.shape,
                        };
                        (inv.cpu.points[p])(&frame);
                    }
                }
                Stage::Swap(a, b) => slot.swap(a, b),
                Stage::Reset(_) => {}
            }
        }
    }
    for (k, &s) in active.decl.outputs.iter().enumerate() {
        assert!(
            avail[s].start <= planes.start && planes.end <= avail[s].end,
            "pacc internal error: a fused group left planes {:?} of `{}` inexact (exact: {:?})",
            planes,
            program.arrays[s].name,
            avail[s]
        );
        bufs.store(s, &views[norig + k], &planes);
    }
    acc
}

/// The planes of nest `nest` whose reads the slots' current values cover, within its range
/// and the private buffers' `region` (a nest reading only above its planes could otherwise
/// compute one below the region from planes inside it).
fn computable(
    nest: &crate::program::KernelDecl,
    slot: &[usize],
    avail: &[Range<usize>],
    n0: usize,
    region: &Range<usize>,
) -> Range<usize> {
    let mut lo = nest.ranges[0].lo.eval(n0).max(region.start as i64);
    let mut hi = nest.ranges[0].hi.eval(n0).min(region.end as i64);
    for r in &nest.reads {
        let a = &avail[slot[r.array]];
        lo = lo.max(a.start as i64 - r.lo[0]);
        hi = hi.min(a.end as i64 - r.hi[0]);
    }
    lo as usize..(hi.max(lo)) as usize
}

/// Where a slot holds its new version after a nest computed `done` of its range `range`: the
/// planes computed, joined by the old planes outside the range (which the nest leaves as they
/// are) where they touch them.
fn after_write(old: &Range<usize>, done: &Range<usize>, range: Range<usize>) -> Range<usize> {
    if done.is_empty() {
        // Nothing computed: the old planes inside the range are stale. A range wholly below
        // the old planes (a nest over the first planes only) leaves them all exact.
        if range.end <= old.start || range.is_empty() {
            return old.clone();
        }
        if range.start <= old.start {
            return range.end.min(old.end)..old.end;
        }
        return old.start..old.end.min(range.start).max(old.start);
    }
    // A write wholly outside the old planes (a nest over one boundary plane) leaves them
    // exact; the planes it computed join them only where they touch.
    if range.end <= old.start || range.start >= old.end {
        return match (done.end == old.start, done.start == old.end) {
            (true, _) => done.start..old.end,
            (_, true) => old.start..done.end,
            _ => old.clone(),
        };
    }
    let start = if done.start == range.start && old.start < range.start && old.end >= range.start {
        old.start
    } else {
        done.start
    };
    let end = if done.end == range.end && old.end > range.end && old.start <= range.end {
        old.end
    } else {
        done.end
    };
    start..end
}

/// Runs nest `k` over `done`, in parallel, and combines its reductions over the owned planes.
fn nest_planes(
    program: &Program,
    inv: &Invocation<'_>,
    k: usize,
    frame: &KernelFrame<'_>,
    done: &Range<usize>,
    owned: &Range<usize>,
) -> Vec<f64> {
    let reds = &program
        .fusion
        .active
        .as_ref()
        .expect("a fused program")
        .nests[k]
        .reductions;
    let ops: Vec<_> = reds
        .iter()
        .map(|&r| (program.reductions[r].op, program.reductions[r].elem))
        .collect();
    let f = &inv.cpu.kernels[k];
    let per_plane: Vec<Vec<f64>> = done
        .clone()
        .into_par_iter()
        .map(|p| {
            let mut red: Vec<f64> = ops.iter().map(|&(o, _)| reduction_identity(o)).collect();
            f(frame, p, &mut red);
            red
        })
        .collect();
    let mut acc: Vec<f64> = ops.iter().map(|&(o, _)| reduction_identity(o)).collect();
    for p in owned.start.max(done.start)..owned.end.min(done.end) {
        let red = &per_plane[p - done.start];
        for (j, &(o, e)) in ops.iter().enumerate() {
            acc[j] = combine(o, e, acc[j], red[j]);
        }
    }
    acc
}

/// Private copies of the slots the group writes, over the planes it needs.
struct Private {
    /// Per slot: its copy (u64 storage for alignment), or `None` for a slot read in place.
    store: Vec<Option<Vec<u64>>>,
    region: Range<usize>,
    plane_bytes: Vec<usize>,
}

impl Private {
    fn new(plan: &Plan, views: &[BufView], written: &[usize], region: &Range<usize>) -> Private {
        let norig = views.len() - written.len();
        let mut store = vec![None; norig];
        let mut plane_bytes = vec![0; norig];
        for (s, v) in views.iter().take(norig).enumerate() {
            plane_bytes[s] = plan.plane_len * v.elem.size();
            if !written.contains(&s) {
                continue;
            }
            let bytes = region.len() * plane_bytes[s];
            let mut buf = vec![0u64; bytes.div_ceil(8)];
            // The part of the region the operation's window holds (its exact planes among
            // them; the rest is never read as exact).
            let from = region.start.max(v.base)..region.end.min(v.base + v.planes);
            if !from.is_empty() {
                // SAFETY: `from` lies in the window of `v` and in the copy's region.
                unsafe {
                    let src = v.ptr.add((from.start - v.base) * plane_bytes[s]);
                    let dst = (buf.as_mut_ptr() as *mut u8)
                        .add((from.start - region.start) * plane_bytes[s]);
                    std::ptr::copy_nonoverlapping(src, dst, from.len() * plane_bytes[s]);
                }
            }
            store[s] = Some(buf);
        }
        Private {
            store,
            region: region.clone(),
            plane_bytes,
        }
    }

    /// The original program's names as the group binds them now: a written slot's private
    /// copy, or the operation's buffer of a slot read in place.
    /// Borrowed for as long as the copies and the operation's buffers are (`'v`).
    fn views<'v>(&'v mut self, views: &[BufView<'v>], slot: &[usize]) -> Vec<BufView<'v>> {
        slot.iter()
            .map(|&s| match &mut self.store[s] {
                Some(buf) => BufView {
                    ptr: buf.as_mut_ptr() as *mut u8,
                    base: self.region.start,
                    planes: self.region.len(),
                    ..views[s]
                },
                None => views[s],
            })
            .collect()
    }

    /// Copies `planes` of slot `s` into the output buffer `out`.
    fn store(&self, s: usize, out: &BufView, planes: &Range<usize>) {
        let Some(buf) = &self.store[s] else { return };
        let pb = self.plane_bytes[s];
        let bytes = planes.len() * pb;
        // SAFETY: `planes` lie in the private region (asserted exact) and in the output
        // buffer's window (the planner's window holds the kernel's planes).
        unsafe {
            let src = (buf.as_ptr() as *const u8).add((planes.start - self.region.start) * pb);
            let dst = out.ptr.add((planes.start - out.base) * pb);
            std::ptr::copy_nonoverlapping(src, dst, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::after_write;

    /// A nest that computed none of its planes leaves exact the old planes outside its range:
    /// below it, above it (a nest over the first planes only), or all of them.
    #[test]
    fn an_empty_computation_keeps_the_planes_outside_the_range() {
        assert_eq!(after_write(&(2..9), &(5..5), 6..12), 2..6);
        assert_eq!(after_write(&(4..9), &(3..3), 0..1), 4..9);
        assert_eq!(after_write(&(4..9), &(3..3), 0..6), 6..9);
        assert_eq!(after_write(&(4..9), &(3..3), 5..5), 4..9);
        // Computed planes join the old ones beyond the range's end they touch.
        assert_eq!(after_write(&(0..9), &(2..6), 2..6), 0..9);
    }
}
