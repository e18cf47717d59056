//! A rank's single-node problem: the program restricted to the rank's window, in local plane
//! indices, with kernels that still see global indices.
//!
//! Each kernel's axis-0 range becomes the constant local range of the planes it computes in
//! the window: its global range, shrunk at internal window edges by its own read reach so that
//! every read stays inside the local arrays. Planes near those edges then go stale step by
//! step; the halos are deep enough (`block_steps x reach`) that the owned planes never do.
//! Point statements outside the window are dropped from the step; those inside apply at their
//! local plane (also in the halos, which stand in for the neighbour's planes).

use super::slab::Slab;
#[cfg(feature = "mpi")]
use crate::exec::{BufView, CpuKernelFn, CpuKernels, CpuPointFn, KernelFrame};
#[cfg(feature = "mpi")]
use crate::plan::{OpKind, Plan};
use crate::program::{Bound, Program, Stage};
#[cfg(feature = "mpi")]
use std::ops::Range;

/// The local program of `slab` (see the module comment) and, per point statement, whether it
/// applies on this rank.
pub(crate) fn program(program: &Program, slab: &Slab, points: &[Vec<i64>]) -> (Program, Vec<bool>) {
    let mut local = program.clone();
    let (w, n0) = (&slab.window, slab.global[0]);
    for (k, decl) in local.kernels.iter_mut().enumerate() {
        let (back, fwd) = program.kernels[k].axis0_reach();
        let r = decl.ranges[0];
        let (glo, ghi) = (r.lo.eval(n0).max(0) as usize, r.hi.eval(n0).max(0) as usize);
        let lo = glo.max(w.start + back).max(w.start);
        let hi = ghi.min(w.end.saturating_sub(fwd)).max(lo);
        decl.ranges[0].lo = Bound::start((lo - w.start) as i64);
        decl.ranges[0].hi = Bound::start((hi - w.start) as i64);
    }
    let inside: Vec<bool> = points
        .iter()
        .map(|p| {
            p.first()
                .is_some_and(|&z| z >= 0 && w.contains(&(z as usize)))
        })
        .collect();
    local
        .step
        .retain(|s| !matches!(*s, Stage::Point(i) if !inside[i]));
    (local, inside)
}

#[cfg(feature = "mpi")]
/// The point indices in local planes; points that do not apply here get plane 0 (they are no
/// longer in the step, so nothing reads them but the call's validation).
pub(crate) fn points(points: &[Vec<i64>], inside: &[bool], slab: &Slab) -> Vec<Vec<i64>> {
    points
        .iter()
        .zip(inside)
        .map(|(p, &ok)| {
            let mut q = p.clone();
            if let Some(z) = q.first_mut() {
                *z = if ok { *z - slab.window.start as i64 } else { 0 };
            }
            q
        })
        .collect()
}

#[cfg(feature = "mpi")]
/// Wraps the generated CPU closures so that they see global plane indices and the global
/// shape (a kernel body may use its loop variables and the extents), while the executors work
/// on local planes.
pub(crate) fn global_kernels<'a>(cpu: CpuKernels<'a>, slab: &Slab) -> CpuKernels<'a> {
    let off = slab.window.start;
    let global: std::sync::Arc<[usize]> = slab.global.clone().into();
    let kernels = cpu
        .kernels
        .into_iter()
        .map(|f| {
            let global = global.clone();
            let g: Box<CpuKernelFn<'a>> = Box::new(move |frame: &KernelFrame<'_>, p, red| {
                let views = shifted(frame.arrays, off);
                f(&regard(frame, &views, &global), p + off, red)
            });
            g
        })
        .collect();
    let points = cpu
        .points
        .into_iter()
        .map(|f| {
            let global = global.clone();
            let g: Box<CpuPointFn<'a>> = Box::new(move |frame: &KernelFrame<'_>| {
                let views = shifted(frame.arrays, off);
                f(&regard(frame, &views, &global))
            });
            g
        })
        .collect();
    CpuKernels { kernels, points }
}

#[cfg(feature = "mpi")]
fn shifted<'f>(views: &[BufView<'f>], off: usize) -> Vec<BufView<'f>> {
    views
        .iter()
        .map(|v| BufView {
            base: v.base + off,
            ..*v
        })
        .collect()
}

#[cfg(feature = "mpi")]
fn regard<'f>(
    frame: &KernelFrame<'_>,
    views: &'f [BufView],
    shape: &'f [usize],
) -> KernelFrame<'f> {
    KernelFrame {
        arrays: views,
        t: frame.t,
        shape,
    }
}

#[cfg(feature = "mpi")]
/// Reductions count the rank's owned planes only (the halo planes are the neighbours').
pub(crate) fn reduce_within(plan: &mut Plan, owned: &Range<usize>) {
    for op in &mut plan.ops {
        if let OpKind::Kernel { owned: o, .. } = &mut op.kind {
            let lo = o.start.max(owned.start);
            let hi = o.end.min(owned.end).max(lo);
            *o = lo..hi;
        }
    }
}
