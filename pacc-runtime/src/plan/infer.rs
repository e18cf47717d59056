//! Bounds inference for one chunk over one block of time steps.
//!
//! Works backwards from the planes the chunk owns: after the block, every array the caller gets
//! back must be exact on the owned planes. Walking the time steps' statements in reverse, a
//! kernel must compute the planes of its outputs that are needed later (and, if it reduces, the
//! owned planes), and then needs its inputs on those planes widened by its read reach. This is
//! overlapped tiling: redundant work happens only in the halos that require it.

use super::span::{hull, hull_minus, intersect, span, Span};
use super::tiling::Work;
use crate::program::{Program, Role, Stage};
use std::ops::Range;

#[derive(Clone, Debug)]
pub struct ChunkWork {
    /// Planes of each *physical* array that must be on the device when the block starts.
    pub load: Vec<Span>,
    pub work: Vec<Work>,
    /// Every plane the chunk's buffers must hold.
    pub window: Range<usize>,
}

/// Which names must be exact on the owned planes after a block: those whose buffers are written
/// (directly or by being swapped with a written name) and returned to the caller.
pub fn returned(program: &Program) -> Vec<bool> {
    (0..program.arrays.len())
        .map(|a| {
            crate::binding::written_physically(program, a)
                && program.arrays[a].role != Role::Scratch
        })
        .collect()
}

/// The buffers a block that starts with `binding` and runs `steps` steps writes back: those the
/// returned names refer to when it ends (a fused run's output buffers trade places with their
/// arrays every step).
pub fn written_back(program: &Program, binding: &[usize], steps: usize) -> Vec<bool> {
    let names = returned(program);
    let end = crate::binding::advance(program, binding, steps);
    let mut ret = vec![false; names.len()];
    for (n, _) in names.iter().enumerate().filter(|(_, &r)| r) {
        ret[end[n]] = true;
    }
    ret
}

pub use crate::binding::bindings_through_step;

/// Whether `kd` writes every point of the planes it computes (its in-plane ranges span the
/// plane), so that the old values of those planes are never needed.
pub(super) fn writes_whole_planes(kd: &crate::program::KernelDecl, shape: &[usize]) -> bool {
    kd.ranges[1..]
        .iter()
        .zip(&shape[1..])
        .all(|(r, &n)| r.lo.eval(n) <= 0 && r.hi.eval(n) >= n as i64)
}

pub fn infer(
    program: &Program,
    shape: &[usize],
    owned: &Range<usize>,
    steps: usize,
    binding_at_start: &[usize],
    returned: &[bool],
    points: &[usize],
) -> ChunkWork {
    let n0 = shape[0];
    let owned_span: Span = Some(owned.clone());
    let mut need: Vec<Span> = returned
        .iter()
        .map(|&r| if r { owned_span.clone() } else { None })
        .collect();
    let mut window: Span = owned_span.clone();

    // Bindings are the same for every step of a block up to the permutation at its start, so
    // compute them step by step going forward, then walk backwards.
    let mut step_bindings = Vec::with_capacity(steps);
    let mut b = binding_at_start.to_vec();
    for _ in 0..steps {
        let (before, after) = bindings_through_step(program, &b);
        step_bindings.push(before);
        b = after;
    }

    let mut work = Vec::new();
    for step in (0..steps).rev() {
        for (i, st) in program.step.iter().enumerate().rev() {
            let args = &step_bindings[step][i];
            match *st {
                Stage::Swap(a, b) => need.swap(a, b),
                Stage::Reset(_) => {}
                Stage::Kernel(k) => {
                    let kd = &program.kernels[k];
                    let dom = span(kd.ranges[0].lo.eval(n0), kd.ranges[0].hi.eval(n0), n0);
                    let mut c: Span = kd.writes.iter().fold(None, |acc, &w| hull(&acc, &need[w]));
                    if !kd.reductions.is_empty() {
                        c = hull(&c, &owned_span);
                    }
                    let Some(c) = intersect(&c, &dom) else {
                        continue;
                    };
                    let cs = Some(c.clone());
                    window = hull(&window, &cs);
                    // Only a nest spanning whole planes replaces them; one that leaves a rim (e.g.
                    // `1..ny - 1`) needs the old values of the rim too.
                    if writes_whole_planes(kd, shape) {
                        for &w in &kd.writes {
                            need[w] = hull_minus(&need[w], &cs);
                        }
                    }
                    for r in &kd.reads {
                        let ext = span(c.start as i64 + r.lo[0], c.end as i64 + r.hi[0], n0);
                        need[r.array] = hull(&need[r.array], &ext);
                        window = hull(&window, &ext);
                    }
                    work.push(Work::Kernel {
                        step,
                        kernel: k,
                        planes: c,
                        owned: owned.clone(),
                        args: args.clone(),
                    });
                }
                Stage::Point(p) => {
                    let pd = &program.points[p];
                    let plane = points[p];
                    let hit = need[pd.array].as_ref().is_some_and(|r| r.contains(&plane));
                    if !hit {
                        continue;
                    }
                    for &r in &pd.reads {
                        need[r] = hull(&need[r], &Some(plane..plane + 1));
                    }
                    work.push(Work::Point {
                        step,
                        point: p,
                        plane,
                        args: args.clone(),
                    });
                }
            }
        }
    }
    work.reverse();

    let mut load = vec![None; need.len()];
    for (name, span) in need.into_iter().enumerate() {
        window = hull(&window, &span);
        load[binding_at_start[name]] = span;
    }
    ChunkWork {
        load,
        work,
        window: window.unwrap_or(owned.clone()),
    }
}
