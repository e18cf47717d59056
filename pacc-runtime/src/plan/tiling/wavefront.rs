//! Wavefront tiling (DESIGN.md "Wavefront tiling"; `shared/tools/wavefront-sim.py` models it):
//! every point of every step is computed exactly once.
//!
//! The block is a sequence of invocations (every kernel and point statement of every step, in
//! serial order, with the physical arrays bound at that point). Invocation `n` of chunk `i`
//! computes planes `[E(i-1, n), E(i, n))` of its nest, `E(i, n) = z(i+1) - sigma(n)`, where
//! `z(i)` are the chunk boundaries and `sigma` the cumulative skew. Buffers are updated in place,
//! so near its right edge a chunk's buffer holds a staircase of levels; the next chunk receives
//! that staircase on the device and continues it. Two conditions make this exact:
//! - a forward read of physical array `A` at `+b` by invocation `n` needs
//!   `sigma(n) - sigma(w) >= b`, `w` the last writer of `A` before `n` (the values it reads
//!   are computed by then in this chunk);
//! - a backward read at `-a` needs `sigma(j) - sigma(n) >= a`, `j` the next invocation that
//!   overwrites `A` (the previous chunk has not overwritten the planes this chunk still reads).
//!
//! The minimal `sigma` is the longest path over these difference constraints, computed in one
//! forward pass since every constraint points forward.

use super::super::infer::writes_whole_planes;
use super::super::span::{add, outside, Planes};
use super::cost::{first_upload_and_last_download, BlockSeconds, TilingCost};
use super::{owned_slabs, BlockSpec, BlockTiles, ChunkTile, Tiling, Work};
use crate::program::{Program, Stage};
use std::ops::Range;

pub struct Wavefront;

/// One kernel or point statement of the block, in serial order.
struct Invocation {
    step: usize,
    what: What,
    /// Name -> physical array.
    args: Vec<usize>,
    /// Physical array, backward reach, forward reach (reach may be negative: an offset that
    /// only looks the other way).
    reads: Vec<(usize, i64, i64)>,
    /// Physical arrays written.
    writes: Vec<usize>,
    /// Planes of axis 0 the statement covers.
    range: Range<usize>,
}

enum What {
    Kernel(usize),
    Point(usize),
}

impl Invocation {
    /// Whether every point of each plane the invocation computes is written, so that the old
    /// values of those planes are never needed; not so for a kernel that leaves a boundary
    /// alone or for a point statement.
    fn writes_whole_planes(&self, spec: &BlockSpec<'_>) -> bool {
        match self.what {
            What::Kernel(k) => writes_whole_planes(&spec.program.kernels[k], spec.shape),
            What::Point(_) => false,
        }
    }
}

fn invocations(spec: &BlockSpec<'_>) -> Vec<Invocation> {
    let (program, n0) = (spec.program, spec.shape[0]);
    let mut out = Vec::new();
    let mut binding = spec.binding.to_vec();
    for step in 0..spec.steps {
        let (before, after) = crate::binding::bindings_through_step(program, &binding);
        binding = after;
        for (st, args) in program.step.iter().zip(before) {
            match *st {
                Stage::Swap(..) | Stage::Reset(_) => {}
                Stage::Kernel(k) => {
                    let kd = &program.kernels[k];
                    let lo = kd.ranges[0].lo.eval(n0).clamp(0, n0 as i64) as usize;
                    let hi = kd.ranges[0].hi.eval(n0).clamp(0, n0 as i64) as usize;
                    out.push(Invocation {
                        step,
                        what: What::Kernel(k),
                        reads: kd
                            .reads
                            .iter()
                            .map(|r| (args[r.array], -r.lo[0], r.hi[0]))
                            .collect(),
                        writes: kd.writes.iter().map(|&w| args[w]).collect(),
                        range: lo..hi.max(lo),
                        args,
                    });
                }
                Stage::Point(p) => {
                    let pd = &program.points[p];
                    let plane = spec.points[p];
                    out.push(Invocation {
                        step,
                        what: What::Point(p),
                        reads: pd.reads.iter().map(|&r| (args[r], 0, 0)).collect(),
                        writes: vec![args[pd.array]],
                        range: plane..plane + 1,
                        args,
                    });
                }
            }
        }
    }
    out
}

/// `x` (at least 0) rounded up to a multiple of `slab`.
fn round_up(x: i64, slab: i64) -> i64 {
    (x.max(0) + slab - 1) / slab * slab
}

/// The minimal cumulative skew (non-decreasing, multiples of `slab`).
fn skew(invs: &[Invocation], narrays: usize, slab: i64) -> Vec<i64> {
    let mut sigma: Vec<i64> = Vec::with_capacity(invs.len());
    let mut last_writer: Vec<Option<usize>> = vec![None; narrays];
    // Per array, the least skew its next overwriter must have (backward reads since the last
    // write).
    let mut pending: Vec<i64> = vec![0; narrays];
    for inv in invs {
        let mut s = sigma.last().copied().unwrap_or(0);
        for &(p, _, b) in &inv.reads {
            if let Some(w) = last_writer[p] {
                s = s.max(sigma[w] + b);
            }
        }
        for &p in &inv.writes {
            s = s.max(pending[p]);
        }
        let s = round_up(s, slab);
        let n = sigma.len();
        sigma.push(s);
        for &p in &inv.writes {
            last_writer[p] = Some(n);
            pending[p] = 0;
        }
        for &(p, a, _) in &inv.reads {
            pending[p] = pending[p].max(s + a);
        }
    }
    sigma
}

/// `(beta, amax)`: how far past its boundary a chunk must hold planes for reads of values not yet
/// written in the block (forward reach minus the skew at that invocation), and the largest
/// backward reach (how far below its first computed plane a chunk must hold planes).
fn reaches(invs: &[Invocation], sigma: &[i64], narrays: usize, slab: i64) -> (usize, usize) {
    let mut written = vec![false; narrays];
    let (mut beta, mut amax) = (0i64, 0i64);
    for (inv, &s) in invs.iter().zip(sigma) {
        for &(p, a, b) in &inv.reads {
            if !written[p] {
                beta = beta.max(b - s);
            }
            amax = amax.max(a);
        }
        for &p in &inv.writes {
            written[p] = true;
        }
    }
    (round_up(beta, slab) as usize, round_up(amax, slab) as usize)
}

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.max(b.start)..a.end.min(b.end).max(a.start.max(b.start))
}

impl Tiling for Wavefront {
    fn tile(&self, spec: &BlockSpec<'_>, d: usize) -> Result<BlockTiles, usize> {
        let n0 = spec.shape[0];
        let narrays = spec.returned.len();
        let invs = invocations(spec);
        let slab = spec.slab() as i64;
        let sigma = skew(&invs, narrays, slab);
        let (beta, amax) = reaches(&invs, &sigma, narrays, slab);
        let last_sigma = sigma.last().copied().unwrap_or(0) as usize;
        let held = held_arrays(spec, &invs);
        let fresh = written_before_read(spec, &invs);
        let (written, back) = written_and_back(&invs, narrays, slab);
        let z = |i: usize| owned_slabs(n0, d, i, spec.slab()).end;
        // E(i, s): the end of chunk i's planes for an invocation of skew s (chunk -1: 0).
        let e = |i: isize, s: usize| -> usize {
            match i {
                i if i < 0 => 0,
                i if i as usize + 1 == d => n0,
                i => z(i as usize).saturating_sub(s),
            }
        };
        let top = |i: usize| {
            if i + 1 == d {
                n0
            } else {
                (z(i) + beta).min(n0)
            }
        };
        let windows: Vec<Range<usize>> = (0..d)
            .map(|i| e(i as isize - 1, last_sigma).saturating_sub(amax)..top(i))
            .collect();
        let geometry = Chunks {
            e: &e,
            top: &top,
            windows: &windows,
            last_sigma,
        };
        let mut shares = staircases(spec, &invs, &sigma, &held, &back, &geometry);
        let chunks = (0..d)
            .map(|i| {
                let ii = i as isize;
                let window = windows[i].clone();
                let from_host = if i == 0 { 0 } else { top(i - 1) }..window.end;
                let shared = std::mem::take(&mut shares[i]);
                let work = invs
                    .iter()
                    .zip(&sigma)
                    .filter_map(|(inv, &s)| {
                        let planes = e(ii - 1, s as usize)..e(ii, s as usize);
                        work_in(inv, intersect(&planes, &inv.range))
                    })
                    .collect();
                ChunkTile {
                    owned: e(ii - 1, last_sigma)..e(ii, last_sigma),
                    loads: (0..narrays)
                        .map(|p| {
                            (held[p] && !fresh[p] && !from_host.is_empty())
                                .then(|| from_host.clone())
                                .into_iter()
                                .collect()
                        })
                        .collect(),
                    shared: share_order(&shared, &written),
                    window,
                    work,
                }
            })
            .collect();
        Ok(BlockTiles {
            chunks,
            share_results: true,
        })
    }

    /// Four: with three, a block's third chunk reuses the set of the previous block's last
    /// chunk, whose write-back (the largest, its staircase included) must finish before the new
    /// chunk can load; on the H100 at 1800^3 the kernels then idled 170 ms at every block
    /// boundary. With four it reuses the set of the chunk before, written back long before.
    fn buffer_sets(&self) -> usize {
        4
    }

    /// Two for a run in one block: with no block boundary, the reason for the third and fourth
    /// sets is gone, and a chunk's set is free again once the chunk two before has been written
    /// back, which the kernels of the chunk between hide. Halving the sets lets a block hold
    /// every step where four sets would need several sweeps over the link.
    fn fewest_buffer_sets(&self, blocks: usize) -> usize {
        match blocks {
            1 => 2,
            _ => self.buffer_sets(),
        }
    }

    fn recomputes_halos(&self) -> bool {
        false
    }

    fn keeps_read_only_ring(&self) -> bool {
        true
    }

    fn skews_windows(&self) -> bool {
        true
    }
}

impl TilingCost for Wavefront {
    /// Every configuration computes each point once, so only the device memory (checked on the
    /// plan) bounds the depth.
    fn worth_planning(&self, _: &Program, _: usize, _: usize, _: usize, _: bool) -> bool {
        true
    }

    /// A chunk's staircase copy waits for the previous chunk's last kernel and its own kernels
    /// wait for the copy: the copies lengthen the kernel chain instead of hiding under it
    /// (measured on the H100, 1800^3 at 128 chunks: 0.12 s/step against a kernels-or-link model
    /// of 0.06).
    fn pipelined_block_seconds(&self, b: &BlockSeconds) -> f64 {
        (b.link)
            .max(b.kernels + b.device_copies)
            .max(b.host_copies)
            .max(b.codec)
    }

    /// The sweep does not drain between blocks, so only the first chunk's upload and the last
    /// chunk's download stand alone, as in the overlapped tiling.
    fn fill_seconds(&self, block: &BlockSeconds, chunks: usize) -> f64 {
        first_upload_and_last_download(block, chunks)
    }
}

/// Pieces each written array's staircase is copied in. The top of the staircase is final in the
/// previous chunk's buffer early in the block and the bottom only after its last invocation, so
/// all pieces but the last are copied while the previous chunk still computes. (Copied whole
/// after it, the staircase held the kernels up 6.7 ms per chunk on the H100, 1800^3, 4 arrays.)
const STAIRCASE_PIECES: usize = 8;

/// The planes `shared[p]` of every array, in copy order: arrays the block never writes first
/// (final since their load), then the written ones in pieces from the top down, interleaved
/// (an array's planes in [`STAIRCASE_PIECES`] pieces over all its intervals).
fn share_order(shared: &[Planes], written: &[bool]) -> Vec<(usize, Range<usize>)> {
    let arrays = |w: bool| (0..shared.len()).filter(move |&p| written[p] == w);
    let mut out: Vec<(usize, Range<usize>)> = arrays(false)
        .flat_map(|p| shared[p].iter().map(move |r| (p, r.clone())))
        .collect();
    let mut pieces: Vec<Vec<(usize, Range<usize>)>> = Vec::new();
    for p in arrays(true) {
        let total: usize = shared[p].iter().map(|r| r.len()).sum();
        let piece = total.div_ceil(STAIRCASE_PIECES).max(1);
        let mut q = 0;
        for r in shared[p].iter().rev() {
            let mut hi = r.end;
            while hi > r.start {
                let lo = hi.saturating_sub(piece).max(r.start);
                if pieces.len() <= q {
                    pieces.push(Vec::new());
                }
                pieces[q].push((p, lo..hi));
                (hi, q) = (lo, q + 1);
            }
        }
    }
    out.extend(pieces.into_iter().flatten());
    out
}

/// Where a block's chunks lie: `e(i, s)` ends chunk `i`'s planes for an invocation of skew
/// `s` (chunk -1: 0), `top(i)` ends the planes it holds, `windows[i]` are its buffer's planes.
struct Chunks<'a> {
    e: &'a dyn Fn(isize, usize) -> usize,
    top: &'a dyn Fn(usize) -> usize,
    windows: &'a [Range<usize>],
    last_sigma: usize,
}

/// Per chunk and physical array, the planes the chunk copies from the previous chunk's buffer
/// (none for the first chunk or an array not held). They lie in the staircase, from the
/// array's backward reach under the first plane the chunk computes last up to the previous
/// chunk's top. Of those, the planes the chunk reads before it computes them itself, or
/// writes back, and those the next chunk receives through it. A compressed array gets the
/// whole staircase.
///
/// Arrays read at every level need all of it. Buffers that trade places every launch (a
/// fused run's arrays and their output buffers, `crate::fuse`) are each read at every other
/// level, so each gets about half.
fn staircases(
    spec: &BlockSpec<'_>,
    invs: &[Invocation],
    sigma: &[i64],
    held: &[bool],
    back: &[usize],
    c: &Chunks<'_>,
) -> Vec<Vec<Planes>> {
    let (d, narrays) = (c.windows.len(), held.len());
    let ret = super::super::infer::written_back(spec.program, spec.binding, spec.steps);
    let compressed = |p: usize| spec.slabs.is_some_and(|z| z[p].is_some());
    let mut out = vec![vec![Planes::new(); narrays]; d];
    for i in (1..d).rev() {
        let ii = i as isize;
        let edge = (c.e)(ii - 1, c.last_sigma);
        let stairs =
            |p: usize| edge.saturating_sub(back[p]).max(c.windows[i].start)..(c.top)(i - 1);
        let mut written = vec![Planes::new(); narrays];
        let mut need = vec![Planes::new(); narrays];
        let read = |need: &mut Planes, written: &Planes, r: Range<usize>, p: usize| {
            for q in outside(intersect(&r, &stairs(p)), written) {
                add(need, q);
            }
        };
        for (inv, &s) in invs.iter().zip(sigma) {
            let planes = (c.e)(ii - 1, s as usize)..(c.e)(ii, s as usize);
            let planes = intersect(&planes, &inv.range);
            if planes.is_empty() {
                continue;
            }
            for &(p, a, b) in &inv.reads {
                let lo = (planes.start as i64 - a).max(0) as usize;
                let hi = (planes.end as i64 + b).max(0) as usize;
                read(&mut need[p], &written[p], lo..hi, p);
            }
            let whole = inv.writes_whole_planes(spec);
            for &p in inv.writes.iter().filter(|_| whole) {
                add(&mut written[p], planes.clone());
            }
        }
        let owned = edge..(c.e)(ii, c.last_sigma);
        for p in 0..narrays {
            if ret[p] {
                read(&mut need[p], &written[p], owned.clone(), p);
            }
            // What the next chunk copies from this one's buffer must be right in it.
            let next = out.get(i + 1).map_or(Vec::new(), |n| n[p].clone());
            for r in next {
                read(&mut need[p], &written[p], r, p);
            }
            if compressed(p) {
                need[p] = vec![stairs(p)];
            }
            need[p].retain(|r| held[p] && !r.is_empty());
        }
        out[i] = need;
    }
    out
}

/// Per physical array, whether the block writes it and how far below a plane it reads (its
/// largest backward reach, in whole slabs).
fn written_and_back(invs: &[Invocation], narrays: usize, slab: i64) -> (Vec<bool>, Vec<usize>) {
    let mut written = vec![false; narrays];
    let mut back = vec![0i64; narrays];
    for inv in invs {
        for &p in &inv.writes {
            written[p] = true;
        }
        for &(p, a, _) in &inv.reads {
            back[p] = back[p].max(a);
        }
    }
    let back = back
        .into_iter()
        .map(|a| round_up(a, slab) as usize)
        .collect();
    (written, back)
}

/// The work of `inv` on `planes` (already clipped to its range), if any.
fn work_in(inv: &Invocation, planes: Range<usize>) -> Option<Work> {
    if planes.is_empty() {
        return None;
    }
    Some(match inv.what {
        What::Kernel(kernel) => Work::Kernel {
            step: inv.step,
            kernel,
            owned: planes.clone(),
            planes,
            args: inv.args.clone(),
        },
        What::Point(point) => Work::Point {
            step: inv.step,
            point,
            plane: planes.start,
            args: inv.args.clone(),
        },
    })
}

/// Physical arrays whose old values the block never needs: first touched by a kernel that
/// writes every point of every plane (a fused kernel's output buffer, whose host memory is its
/// original's: loading it would move the original's planes across the link a second time).
fn written_before_read(spec: &BlockSpec<'_>, invs: &[Invocation]) -> Vec<bool> {
    let n0 = spec.shape[0];
    let mut first: Vec<Option<bool>> = vec![None; spec.returned.len()];
    for inv in invs {
        for &(p, _, _) in &inv.reads {
            first[p].get_or_insert(false);
        }
        let whole = inv.range == (0..n0) && inv.writes_whole_planes(spec);
        for &p in &inv.writes {
            first[p].get_or_insert(whole);
        }
    }
    let compressed = |p: usize| spec.slabs.is_some_and(|c| c[p].is_some());
    (first.into_iter().enumerate())
        .map(|(p, f)| f == Some(true) && !compressed(p))
        .collect()
}

/// Physical arrays the chunks hold: read in the block, returned, or compressed (a compressed
/// input is encoded from the buffer in block 0). Others are only written, never needed again.
fn held_arrays(spec: &BlockSpec<'_>, invs: &[Invocation]) -> Vec<bool> {
    let mut held: Vec<bool> = spec.returned.to_vec();
    for inv in invs {
        for &(p, _, _) in &inv.reads {
            held[p] = true;
        }
    }
    if let Some(comp) = spec.slabs {
        for (p, c) in comp.iter().enumerate() {
            held[p] |= c.is_some();
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(reads: Vec<(usize, i64, i64)>, writes: Vec<usize>) -> Invocation {
        Invocation {
            step: 0,
            what: What::Kernel(0),
            args: vec![],
            reads,
            writes,
            range: 0..10,
        }
    }

    #[test]
    fn leapfrog_skews_by_the_reach_per_step() {
        // prev = f(cur +-4, prev); swap: physical 0 and 1 alternate.
        let invs = vec![
            inv(vec![(1, 4, 4), (0, 0, 0)], vec![0]),
            inv(vec![(0, 4, 4), (1, 0, 0)], vec![1]),
            inv(vec![(1, 4, 4), (0, 0, 0)], vec![0]),
        ];
        let s = skew(&invs, 2, 1);
        assert_eq!(s, vec![0, 4, 8]);
        assert_eq!(reaches(&invs, &s, 2, 1), (4, 4));
        assert_eq!(skew(&invs, 2, 4), vec![0, 4, 8]);
        let s3 = skew(&invs[..2], 2, 3);
        assert_eq!(s3, vec![0, 6]);
    }

    #[test]
    fn staircase_is_copied_read_only_arrays_first_then_top_down() {
        let one = |r: Range<usize>| -> Planes { std::iter::once(r).collect() };
        // Arrays 0 and 2 are written, 1 is only read, 3 is not held.
        let shared = [one(100..180), one(120..180), one(100..180), vec![]];
        let order = share_order(&shared, &[true, false, true, false]);
        assert_eq!(order[0], (1, 120..180));
        assert_eq!(order[1], (0, 170..180));
        assert_eq!(order[2], (2, 170..180));
        assert_eq!(order.last(), Some(&(2, 100..110)));
        assert_eq!(order.len(), 1 + 2 * STAIRCASE_PIECES);
        for p in [0, 2] {
            let planes: usize = order.iter().filter(|o| o.0 == p).map(|o| o.1.len()).sum();
            assert_eq!(planes, 80, "array {p} gets every plane once");
        }
        // Uneven ranges: the last piece is the remainder; one plane is one piece.
        let order = share_order(&[one(0..20)], &[true]);
        assert_eq!(order[0], (0, 17..20));
        assert_eq!(order.last(), Some(&(0, 0..2)));
        assert_eq!(share_order(&[one(5..6)], &[true]), vec![(0, 5..6)]);
        // Two intervals of one array: pieces from the top down across both, every plane once.
        let order = share_order(&[vec![0..8, 16..24]], &[true]);
        assert_eq!(order[0], (0, 22..24));
        assert_eq!(order.last(), Some(&(0, 0..2)));
        assert_eq!(order.len(), STAIRCASE_PIECES);
        assert!(order.iter().all(|(_, r)| r.end <= 8 || r.start >= 16));
        let planes: usize = order.iter().map(|o| o.1.len()).sum();
        assert_eq!(planes, 16);
    }

    #[test]
    fn arrays_are_received_down_to_their_own_backward_reach() {
        // a (0) is read at -3..+1 and written; b (1) only written; c (2) read at -1, slab 2.
        let invs = vec![
            inv(vec![(0, 3, 1), (2, 1, 0)], vec![1]),
            inv(vec![(1, 0, 0)], vec![0]),
        ];
        let (written, back) = written_and_back(&invs, 3, 2);
        assert_eq!(written, vec![true, true, false]);
        assert_eq!(back, vec![4, 0, 2]);
    }

    #[test]
    fn backward_reads_hold_back_the_next_overwriter() {
        // x reads a at -3 (forward 0); y overwrites a: y must skew by 3.
        let invs = vec![inv(vec![(0, 3, 0)], vec![1]), inv(vec![], vec![0])];
        assert_eq!(skew(&invs, 2, 1), vec![0, 3]);
        assert_eq!(reaches(&invs, &[0, 3], 2, 1), (0, 3));
    }
}
