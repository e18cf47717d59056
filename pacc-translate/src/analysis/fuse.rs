//! Fusion: `s` time steps of the whole step body as one kernel (docs/internals.md §3).
//!
//! The group's invocations (every nest and point statement of `s` steps, in serial order) run
//! inside one march along axis 0. Each invocation computes its plane `j - sigma` at step `j`, so
//! a later invocation lags an earlier one by the planes it reads ahead (the wavefront's skew,
//! inside one kernel). Intermediate values stay on chip: an invocation's output column waits in
//! registers (a queue per version) and, where a later invocation reads it at in-plane offsets,
//! in a ring of shared-memory tiles that the block's own threads fill. Along the in-plane axes
//! the block computes each invocation on its output tile widened by what later invocations read
//! (overlapped tiling inside the block), so neighbouring blocks compute the halo twice but never
//! wait for each other. A fused kernel cannot update in place (a neighbour may still read the
//! old values of its halo), so the last version of every written array goes to an output buffer.
//!
//! Arrays are tracked by *slot*, the name each buffer has at the group's start: the step's swaps
//! rename, they do not move data. A *version* is a slot's contents after an invocation wrote it
//! (or its input, before any did).

use crate::analysis::Analysis;
use crate::ir::{Func, KExprKind, KStmt, StepItem};
use std::collections::BTreeMap;

/// Who made the values a read sees: the kernel's input of a slot, or invocation `inv`'s output
/// of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ver {
    Input(usize),
    Inv(usize, usize),
}

/// One invocation of the group: a nest at one step.
#[derive(Clone, Debug)]
pub struct Inv {
    /// Step within the group (0-based).
    pub step: usize,
    /// The nest (index among the function's nests).
    pub nest: usize,
    /// Slot of each name at this point of the group.
    pub slot: Vec<usize>,
    /// Slots the nest writes.
    pub writes: Vec<usize>,
    /// The version each name refers to when the invocation reads it (before its own writes).
    pub sees: Vec<Ver>,
    /// Point statements applied right after it (indices among the function's points), each
    /// writing a slot this invocation wrote.
    pub points: Vec<usize>,
    /// Resets (indices among the step's resets, in order) that come before it in its step.
    pub resets_before: Vec<usize>,
}

/// A version's register queue: index 0 holds the newest plane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    pub len: i64,
}

/// An input slot's register queue: at step `j` it holds the slot's planes `j + lo ..= j + hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputQueue {
    pub lo: i64,
    pub hi: i64,
}

/// A ring of shared-memory tiles holding planes `p + dlo ..= p + dhi` of version `ver` for the
/// invocation `reader` at its plane `p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub ver: Ver,
    pub reader: usize,
    pub dlo: i64,
    pub dhi: i64,
}

impl Ring {
    /// Tiles: the planes a step reads plus the one the next step fills.
    pub fn tiles(&self) -> i64 {
        self.dhi - self.dlo + 2
    }
}

/// The fusion plan of `s` steps.
#[derive(Clone, Debug)]
pub struct FusePlan {
    pub steps: usize,
    pub invs: Vec<Inv>,
    /// Per invocation: the step lag of its plane (`j - sigma`).
    pub sigma: Vec<i64>,
    /// Per invocation: planes below and above the output planes it computes.
    pub back: Vec<i64>,
    pub fwd: Vec<i64>,
    /// Per invocation: its in-plane window beyond the output tile, `[axis][below, above]`
    /// (axis 0 is y in 3D; 2D uses axis 1 only).
    pub halo: Vec<[[i64; 2]; 2]>,
    /// The widest window (the thread block's extent beyond the output tile).
    pub block_halo: [[i64; 2]; 2],
    /// Written slots in output order, each with its last writer.
    pub outputs: Vec<(usize, usize)>,
    pub queues: BTreeMap<Ver, Queue>,
    pub inputs: BTreeMap<usize, InputQueue>,
    pub rings: Vec<Ring>,
    /// Per slot: the reach of the kernel's reads of its input, per axis `(lo, hi)` (for the
    /// planner; `None`: never read).
    pub input_reach: Vec<Option<(Vec<i64>, Vec<i64>)>>,
    /// Trailing resets of the last step (after its last reduction), in order.
    pub resets_after: Vec<usize>,
}

/// A read an invocation makes, resolved to the version it sees.
#[derive(Clone, Debug)]
pub struct VRead {
    pub ver: Ver,
    pub offsets: Vec<i64>,
}

/// The farthest a fused group may reach (skew, window or halo, in points along any axis):
/// its levels live in registers and shared memory, sized by the reach; acoustic's three steps
/// reach 12.
pub const MAX_REACH: u64 = 64;

impl FusePlan {
    /// Plans `s` steps of `f` as one kernel, or says why it cannot.
    /// Refuses groups reaching further than [`MAX_REACH`] points along any axis.
    pub fn of(f: &Func, an: &Analysis, s: usize) -> Result<FusePlan, String> {
        let nd = f.ndim;
        let narrays = f.arrays.len();
        let (invs, resets_after, slot_after) = unroll(f, s)?;
        for inv in &invs {
            let nest = f.nests().nth(inv.nest).expect("nest index");
            if !late_reads(&nest.body).is_empty() {
                return Err(format!(
                    "nest {} reads an array at its point after writing it; only the single-step \
                     kernels serve that",
                    inv.nest + 1
                ));
            }
        }
        // Every read of every invocation, with the version it sees; the written slots' previous
        // versions at the centre too (a point outside the nest's ranges keeps that value).
        let reads: Vec<Vec<VRead>> = invs
            .iter()
            .map(|inv| {
                let mut out = Vec::new();
                let nest = f.nests().nth(inv.nest).expect("nest index");
                crate::analysis::walk_stmts(&nest.body, &mut |_| {}, &mut |e| {
                    if let KExprKind::Read(a) = &e.kind {
                        out.push(VRead {
                            ver: inv.sees[a.array],
                            offsets: a.offsets.clone(),
                        });
                    }
                });
                for &w in &inv.writes {
                    let name = inv.slot.iter().position(|&x| x == w).expect("written slot");
                    out.push(VRead {
                        ver: inv.sees[name],
                        offsets: vec![0; nd],
                    });
                }
                for &p in &inv.points {
                    let pt = f.points().nth(p).expect("point index");
                    for &a in &an.point_reads[p] {
                        if inv.writes.contains(&inv.slot[a]) {
                            continue;
                        }
                        if !matches!(inv.sees[a], Ver::Input(_)) {
                            return Err(format!(
                                "point statement `{}` reads an array another nest of the step \
                                 wrote; only the single-step kernels serve that",
                                stmt_text(&pt.stmt)
                            ));
                        }
                        out.push(VRead {
                            ver: inv.sees[a],
                            offsets: vec![0; nd],
                        });
                    }
                }
                Ok(out)
            })
            .collect::<Result<_, String>>()?;
        let sigma = skew(&invs, &reads, nd);
        let outputs = outputs(&invs, narrays);
        // The runtime gives every written slot an output buffer sharing its array's memory and
        // renames the buffers as the swaps do; that keeps each slot in its own array's memory
        // only where the group's swaps take the written names to written names.
        let written: Vec<usize> = outputs.iter().map(|&(sl, _)| sl).collect();
        if let Some(&sl) = written
            .iter()
            .find(|&&sl| !written.contains(&slot_after[sl]))
        {
            return Err(format!(
                "after {s} steps the swaps leave `{}` naming the array that was `{}`, which the \
                 {s} steps do not write; only the single-step kernels serve that",
                f.arrays[sl].name, f.arrays[slot_after[sl]].name
            ));
        }
        // A nest with a reduction computes its output tile even where no later nest reads what
        // it writes (or it writes nothing).
        let reduces: Vec<bool> = invs
            .iter()
            .map(|inv| !an.reductions[inv.nest].is_empty())
            .collect();
        let (back, fwd, halo) = extents(&invs, &reads, &outputs, &reduces, nd);
        let mut block_halo = [[0i64; 2]; 2];
        for h in &halo {
            for a in 0..2 {
                for side in 0..2 {
                    block_halo[a][side] = block_halo[a][side].max(h[a][side]);
                }
            }
        }
        let (queues, inputs, rings, input_reach) =
            storage(&invs, &reads, &sigma, &back, &fwd, narrays, nd);
        within_reach(s, &[&sigma, &back, &fwd], &halo, &input_reach)?;
        Ok(FusePlan {
            steps: s,
            invs,
            sigma,
            back,
            fwd,
            halo,
            block_halo,
            outputs,
            queues,
            inputs,
            rings,
            input_reach,
            resets_after,
        })
    }

    /// Whether invocation `c` computes anything: one whose output a later invocation of the
    /// group overwrites before anything reads it has no planes (its queue still turns).
    pub fn computes(&self, c: usize) -> bool {
        self.fwd[c] >= -self.back[c]
    }

    /// The steps the march takes for output planes `zb .. ze`: `j` from `zb + first` to
    /// `ze + last` (exclusive).
    pub fn march_range(&self) -> (i64, i64) {
        let first = (0..self.invs.len())
            .map(|i| self.sigma[i] - self.back[i])
            .min()
            .unwrap_or(0);
        let last = (0..self.invs.len())
            .map(|i| self.sigma[i] + self.fwd[i])
            .max()
            .unwrap_or(0);
        (first, last)
    }

    /// The slot whose last version invocation `inv` writes, if it writes one that leaves the
    /// kernel: its output index.
    pub fn output_of(&self, inv: usize, slot: usize) -> Option<usize> {
        self.outputs
            .iter()
            .position(|&(s, w)| s == slot && w == inv)
    }
}

type Unrolled = (Vec<Inv>, Vec<usize>, Vec<usize>);

/// The group's invocations in serial order, each with the slots and versions it sees, the point
/// statements that follow it and the resets before it; the resets after the last nest; and the
/// slot each name refers to after the group.
/// Refuses a group reaching further than [`MAX_REACH`] points: its queues and rings are sized
/// by the skews `per_inv` (skew, back, forward per invocation), the in-plane halos and the
/// inputs' reach when the kernel is written (`codegen::fuse`).
fn within_reach(
    s: usize,
    per_inv: &[&Vec<i64>],
    halo: &[[[i64; 2]; 2]],
    input_reach: &[Option<(Vec<i64>, Vec<i64>)>],
) -> Result<(), String> {
    let reach = (input_reach.iter().flatten()).flat_map(|(lo, hi)| lo.iter().chain(hi));
    let widest = (per_inv.iter().flat_map(|v| v.iter()))
        .chain(halo.iter().flatten().flatten())
        .chain(reach)
        .filter(|&&v| v != i64::MIN)
        .map(|v| v.unsigned_abs())
        .max()
        .unwrap_or(0);
    if widest > MAX_REACH {
        return Err(format!(
            "the {s} steps reach {widest} points from a point they update, and a fused kernel \
             keeps at most {MAX_REACH} on chip; only the single-step kernels serve that"
        ));
    }
    Ok(())
}

fn unroll(f: &Func, s: usize) -> Result<Unrolled, String> {
    let n = f.arrays.len();
    let mut slot: Vec<usize> = (0..n).collect();
    // Per slot: the version it holds now.
    let mut cur: Vec<Ver> = (0..n).map(Ver::Input).collect();
    let mut invs: Vec<Inv> = Vec::new();
    let mut pending_resets = Vec::new();
    for step in 0..s {
        let (mut nest, mut point, mut reset) = (0usize, 0usize, 0usize);
        for item in &f.time.items {
            match item {
                StepItem::Nest(body) => {
                    let writes: Vec<usize> = written(&body.body).iter().map(|&a| slot[a]).collect();
                    let i = invs.len();
                    invs.push(Inv {
                        step,
                        nest,
                        slot: slot.clone(),
                        writes: writes.clone(),
                        sees: slot.iter().map(|&sl| cur[sl]).collect(),
                        points: Vec::new(),
                        resets_before: std::mem::take(&mut pending_resets),
                    });
                    for w in writes {
                        cur[w] = Ver::Inv(i, w);
                    }
                    nest += 1;
                }
                StepItem::Point(p) => {
                    let target = slot[p.array];
                    let last = invs
                        .last_mut()
                        .filter(|v| v.step == step && v.writes.contains(&target));
                    let Some(last) = last else {
                        return Err(format!(
                            "point statement `{}` does not follow a nest of its step that writes \
                             `{}`; only the single-step kernels serve that",
                            stmt_text(&p.stmt),
                            f.arrays[p.array].name
                        ));
                    };
                    last.points.push(point);
                    point += 1;
                }
                StepItem::Swap { a, b, .. } => slot.swap(*a, *b),
                StepItem::Reset { .. } => {
                    pending_resets.push(reset);
                    reset += 1;
                }
            }
        }
    }
    if invs.is_empty() {
        return Err("the step has no loop nest".into());
    }
    Ok((invs, pending_resets, slot))
}

fn stmt_text(s: &syn::Stmt) -> String {
    quote::quote!(#s)
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Arrays (names) a body writes, in order of first write.
pub fn written(body: &[KStmt]) -> Vec<usize> {
    let mut w = Vec::new();
    crate::analysis::walk_stmts(
        body,
        &mut |s| {
            if let KStmt::Write { access, .. } = s {
                if !w.contains(&access.array) {
                    w.push(access.array);
                }
            }
        },
        &mut |_| {},
    );
    w
}

/// Arrays some statement reads after an earlier one (or an `if` before it) wrote them.
fn late_reads(body: &[KStmt]) -> Vec<usize> {
    let mut written: Vec<usize> = Vec::new();
    let mut late = Vec::new();
    for s in body {
        crate::analysis::walk_stmts(std::slice::from_ref(s), &mut |_| {}, &mut |e| {
            if let KExprKind::Read(a) = &e.kind {
                if written.contains(&a.array) {
                    late.push(a.array);
                }
            }
        });
        crate::analysis::walk_stmts(
            std::slice::from_ref(s),
            &mut |st| {
                if let KStmt::Write { access, .. } = st {
                    written.push(access.array);
                }
            },
            &mut |_| {},
        );
    }
    late
}

/// Whether a read is served from a ring of tiles (in-plane offsets of a version made inside the
/// kernel) rather than the version's register queue.
fn in_plane(offsets: &[i64]) -> bool {
    offsets[1..].iter().any(|&o| o != 0)
}

/// The skew: each invocation lags every earlier one it reads by the planes it reads ahead of
/// its own (one more where the read comes from a tile, which the step fills before it computes).
fn skew(invs: &[Inv], reads: &[Vec<VRead>], _nd: usize) -> Vec<i64> {
    let mut sigma = vec![0i64; invs.len()];
    for c in 0..invs.len() {
        for r in &reads[c] {
            if let Ver::Inv(v, _) = r.ver {
                let need = r.offsets[0] + i64::from(in_plane(&r.offsets));
                sigma[c] = sigma[c].max(sigma[v] + need);
            }
        }
    }
    sigma
}

/// Every written slot with its last writer, in slot order.
fn outputs(invs: &[Inv], narrays: usize) -> Vec<(usize, usize)> {
    (0..narrays)
        .filter_map(|s| {
            invs.iter()
                .rposition(|inv| inv.writes.contains(&s))
                .map(|w| (s, w))
        })
        .collect()
}

type Extents = (Vec<i64>, Vec<i64>, Vec<[[i64; 2]; 2]>);

/// Planes and in-plane window each invocation computes beyond the output tile: the last writers
/// compute the output exactly, and so do invocations with a reduction (`reduces`); earlier ones
/// whatever later ones read of them.
fn extents(
    invs: &[Inv],
    reads: &[Vec<VRead>],
    outputs: &[(usize, usize)],
    reduces: &[bool],
    nd: usize,
) -> Extents {
    let n = invs.len();
    let mut back = vec![i64::MIN; n];
    let mut fwd = vec![i64::MIN; n];
    let mut halo = vec![[[i64::MIN; 2]; 2]; n];
    let exact = outputs
        .iter()
        .map(|&(_, w)| w)
        .chain((0..n).filter(|&i| reduces[i]));
    for w in exact {
        back[w] = back[w].max(0);
        fwd[w] = fwd[w].max(0);
        halo[w] = [[0; 2]; 2];
    }
    for c in (0..n).rev() {
        if back[c] == i64::MIN {
            // Nothing reads it, it is no output and it reduces nothing.
            back[c] = 0;
            fwd[c] = -1;
            halo[c] = [[0; 2]; 2];
            continue;
        }
        for r in &reads[c] {
            let Ver::Inv(v, _) = r.ver else { continue };
            back[v] = back[v].max(back[c] - r.offsets[0]);
            fwd[v] = fwd[v].max(fwd[c] + r.offsets[0]);
            for (axis, d) in (1..nd).map(|d| (d + 2 - nd, d)) {
                let (o, hc) = (r.offsets[d], halo[c][axis]);
                let h = &mut halo[v][axis];
                h[0] = h[0].max(hc[0] - o);
                h[1] = h[1].max(hc[1] + o);
            }
        }
    }
    for h in &mut halo {
        for a in h.iter_mut() {
            for v in a.iter_mut() {
                *v = (*v).max(0);
            }
        }
    }
    (back, fwd, halo)
}

type Storage = (
    BTreeMap<Ver, Queue>,
    BTreeMap<usize, InputQueue>,
    Vec<Ring>,
    Vec<Option<(Vec<i64>, Vec<i64>)>>,
);

/// Register queues, input queues and tile rings, and the reach of the inputs.
fn storage(
    invs: &[Inv],
    reads: &[Vec<VRead>],
    sigma: &[i64],
    back: &[i64],
    fwd: &[i64],
    narrays: usize,
    nd: usize,
) -> Storage {
    let mut queues: BTreeMap<Ver, Queue> = BTreeMap::new();
    let mut inputs: BTreeMap<usize, InputQueue> = BTreeMap::new();
    let mut rings: Vec<Ring> = Vec::new();
    let mut reach: Vec<Option<(Vec<i64>, Vec<i64>)>> = vec![None; narrays];
    for (c, rs) in reads.iter().enumerate() {
        if fwd[c] < -back[c] {
            continue; // computes nothing
        }
        for r in rs {
            match r.ver {
                Ver::Input(s) => {
                    // Planes p + dz of the slot, p in [zb - back, ze + fwd).
                    let e =
                        reach[s].get_or_insert_with(|| (vec![i64::MAX; nd], vec![i64::MIN; nd]));
                    for d in 0..nd {
                        let (lo, hi) = if d == 0 {
                            (r.offsets[0] - back[c], r.offsets[0] + fwd[c])
                        } else {
                            (r.offsets[d], r.offsets[d])
                        };
                        e.0[d] = e.0[d].min(lo);
                        e.1[d] = e.1[d].max(hi);
                    }
                    if !in_plane(&r.offsets) {
                        let at = r.offsets[0] - sigma[c];
                        let q = inputs.entry(s).or_insert(InputQueue { lo: at, hi: at });
                        q.lo = q.lo.min(at);
                        q.hi = q.hi.max(at);
                    }
                }
                Ver::Inv(v, _) => {
                    let q = queues.entry(r.ver).or_default();
                    if in_plane(&r.offsets) {
                        let dz = r.offsets[0];
                        match rings.iter_mut().find(|g| g.ver == r.ver && g.reader == c) {
                            Some(g) => {
                                g.dlo = g.dlo.min(dz);
                                g.dhi = g.dhi.max(dz);
                            }
                            None => rings.push(Ring {
                                ver: r.ver,
                                reader: c,
                                dlo: dz,
                                dhi: dz,
                            }),
                        }
                        let _ = v;
                    } else {
                        // Read in phase B after this step's push: index sigma_c - sigma_v - dz.
                        q.len = q.len.max(sigma[c] - sigma[v] - r.offsets[0] + 1);
                    }
                }
            }
        }
    }
    // Tiles are filled from the queue before the step's push: plane p_c + dhi sits at index
    // sigma_c - sigma_v - dhi - 1, and every plane down to p_c + dlo must have been stored.
    for g in &rings {
        let Ver::Inv(v, _) = g.ver else { continue };
        let q = queues.entry(g.ver).or_default();
        q.len = q.len.max(sigma[g.reader] - sigma[v] - g.dhi);
    }
    // A version no one reads at its column still goes through a queue of one (its output).
    for (i, inv) in invs.iter().enumerate() {
        for &w in &inv.writes {
            let q = queues.entry(Ver::Inv(i, w)).or_default();
            q.len = q.len.max(1);
        }
    }
    (queues, inputs, rings, reach)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(src: &str, s: usize) -> Result<FusePlan, String> {
        let file: syn::File = syn::parse_str(src).unwrap();
        let syn::Item::Fn(item) = &file.items[0] else {
            panic!()
        };
        let mut f = crate::lower::lower(item.clone(), Default::default()).unwrap();
        let an = crate::analysis::analyse(&mut f).unwrap();
        FusePlan::of(&f, &an, s)
    }

    const LEAP: &str = r#"
    fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, vel: &Array3<f32>, steps: usize) {
        let (nz, ny, nx) = cur.dim();
        for _t in 0..steps {
            for z in 4..nz - 4 {
                for y in 4..ny - 4 {
                    for x in 4..nx - 4 {
                        prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]]
                            + vel[[z, y, x]] * (cur[[z - 4, y, x]] + cur[[z + 4, y, x]]
                                + cur[[z, y - 4, x]] + cur[[z, y + 4, x]]
                                + cur[[z, y, x - 4]] + cur[[z, y, x + 4]]);
                    }
                }
            }
            std::mem::swap(prev, cur);
        }
    }
    "#;

    #[test]
    fn a_group_reaching_further_than_the_chip_holds_is_refused_before_sizing_its_rings() {
        // Reads 65536 planes away (the largest offset lowering takes; a fuzzed 4294967295 is
        // refused there): no ring of that depth is built.
        let far = LEAP.replace("cur[[z + 4, y, x]]", "cur[[z + 65536, y, x]]");
        let why = plan(&far, 2).unwrap_err();
        assert!(why.contains("keeps at most 64 on chip"), "{why}");
        let at = |r: &str| {
            LEAP.replace("z - 4", &format!("z - {r}"))
                .replace("z + 4,", &format!("z + {r},"))
        };
        assert!(
            plan(&at("32"), 2).is_ok(),
            "two steps of 32 reach 64, which fits"
        );
        let why = plan(&at("40"), 2).unwrap_err();
        assert!(why.contains("reach 80 points"), "{why}");
    }

    #[test]
    fn two_leapfrog_steps_lag_by_the_reach_and_keep_the_old_level_on_chip() {
        let p = plan(LEAP, 2).unwrap();
        assert_eq!(p.invs.len(), 2);
        // Step 2 writes `cur`'s buffer (named `prev` after the swap), reading step 1's `prev`.
        assert_eq!(p.invs[1].writes, vec![1]);
        assert_eq!(p.invs[1].sees[1], Ver::Inv(0, 0));
        // It reads step 1's plane z + 4 at its column, and in-plane at its own plane: a tile
        // ring of one plane, filled a step ahead, so the lag is 4.
        assert_eq!(p.sigma, vec![0, 4]);
        assert_eq!(p.rings.len(), 1);
        assert_eq!(
            (p.rings[0].dlo, p.rings[0].dhi, p.rings[0].tiles()),
            (0, 0, 2)
        );
        // Step 1 computes 4 planes beyond the outputs on each side and a window 4 wider.
        assert_eq!((p.back.clone(), p.fwd.clone()), (vec![4, 0], vec![4, 0]));
        assert_eq!(p.halo[0], [[4, 4], [4, 4]]);
        assert_eq!(p.block_halo, [[4, 4], [4, 4]]);
        // Both slots leave the kernel: prev's last version is step 1's, cur's step 2's.
        assert_eq!(p.outputs, vec![(0, 0), (1, 1)]);
        // Step 1's queue spans its planes p - 4 .. p + 4 as step 2 reads them: 9 planes.
        assert_eq!(p.queues[&Ver::Inv(0, 0)].len, 9);
        // The inputs: cur at the column from z - 4 to z + 4 of step 1, and at z - 4 for step
        // 2's old value (the centre of `cur`'s slot, 4 planes behind); vel at both steps.
        assert_eq!(p.inputs[&1], InputQueue { lo: -4, hi: 4 });
        assert_eq!(p.inputs[&2], InputQueue { lo: -4, hi: 0 });
        // The planner's reach: cur read from 8 planes below to 8 above the outputs.
        let (lo, hi) = p.input_reach[1].clone().unwrap();
        assert_eq!((lo, hi), (vec![-8, -4, -4], vec![8, 4, 4]));
        assert_eq!(p.march_range(), (-4, 4));
    }

    const ROT3: &str = r#"
    fn rot3(prev: &mut Array3<f32>, cur: &mut Array3<f32>, next: &mut Array3<f32>, steps: usize) {
        let (nz, ny, nx) = cur.dim();
        for _t in 0..steps {
            for z in 1..nz - 1 {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        next[[z, y, x]] = cur[[z - 1, y, x]] + cur[[z + 1, y, x]] - prev[[z, y, x]];
                    }
                }
            }
            std::mem::swap(prev, cur);
            std::mem::swap(cur, next);
        }
    }
    "#;

    #[test]
    fn swaps_that_take_a_written_name_to_an_unwritten_one_do_not_fuse() {
        // Two steps write `next` and `prev` (the names at the start); after them `next` names
        // the array that was `cur`. Three steps bring every name back.
        let e = plan(ROT3, 2).unwrap_err();
        assert!(
            e.contains("`next` naming the array that was `cur`, which the 2 steps do not write"),
            "{e}"
        );
        let p = plan(ROT3, 3).unwrap();
        assert_eq!(p.outputs.len(), 3);
    }

    const NORM: &str = r#"
    fn norm(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) -> f32 {
        let (nz, ny, nx) = a.dim();
        let mut total: f32 = 0.0;
        for _t in 0..steps {
            for z in 1..nz - 1 {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        b[[z, y, x]] = a[[z - 1, y, x]] + a[[z + 1, y, x]];
                    }
                }
            }
            std::mem::swap(a, b);
            for z in 1..nz - 2 {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        total += a[[z + 2, y, x]];
                    }
                }
            }
        }
        total
    }
    "#;

    #[test]
    fn a_nest_that_only_reduces_computes_its_output_planes() {
        let p = plan(NORM, 2).unwrap();
        // Invocations 1 and 3 write nothing and nothing reads them: they still compute the
        // output tile, for the sum.
        for i in [1, 3] {
            assert!(p.invs[i].writes.is_empty());
            assert_eq!((p.back[i], p.fwd[i], p.halo[i]), (0, 0, [[0; 2]; 2]), "{i}");
        }
        // Step 2's sum reads what step 2 wrote two planes ahead, which reads what step 1 wrote
        // one more, which reads the input one more: the group reads `a` 4 planes ahead.
        let (_, hi) = p.input_reach[0].clone().unwrap();
        assert_eq!(hi[0], 4);
    }
}
