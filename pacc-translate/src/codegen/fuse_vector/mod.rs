//! The vector form of a fused kernel (`<fused>_vec`, docs/internals.md §3).
//!
//! The fused form of `fuse.rs` gives each thread one column of the block's window. For the
//! radius-4 acoustic stencils that costs 16.5 warp instructions per point-step against 2.7 for
//! the single-step vector form: one L1 load per in-plane neighbour of the input, one shared load
//! per in-plane neighbour of a level, and ring slots and guards recomputed for every point. The
//! vector form keeps the same plan (the invocations, their skews, windows, queues and rings of
//! `analysis/fuse.rs`) and changes who computes what:
//! - a thread computes 4 (`VECTOR_WIDTH`) consecutive points along x, so each register of the
//!   scalar form is a vector, and every queue turn, load and tile store moves 16 bytes;
//! - an input read in its plane along the axes is staged once per step in a double-buffered
//!   tile (the single-step vector form's tile), and a level's in-plane rows come from its ring as
//!   vectors: a row at `dy` is one shared load for all the thread's points, an `x` neighbour comes
//!   from the vectors left and right of the thread's own;
//! - an input read at its column at a few planes far apart (`vel` at the two levels' planes,
//!   four apart) is loaded before the step's barrier instead of riding a queue as long as the
//!   gap, which would cost a register per plane and point;
//! - ring slots follow a counter turned once a step, and each invocation's window is a mask of
//!   the thread's points computed once.
//!
//! The x window is rounded out to whole vectors ([`vector_halo`]), so a vector never straddles
//! the output tile. The arithmetic of each point is the nest body as written, so the bits are the
//! serial loop's. Only 3D plans of floating-point arrays get a vector form.

use super::emit::{c_ident, combine, offset_name, signed, Gen, Serve, STATIC_SHARED};
use super::fuse::{fused_name, FuseCtx};
use crate::analysis::fuse::{FusePlan, Ver};
use crate::analysis::Analysis;
use crate::ir::{Func, KExprKind, Ty};
use pacc_runtime::program::{vector_halo, VECTOR_SUFFIX, VECTOR_WIDTH};
use std::collections::BTreeMap;
use std::fmt::Write;

mod march;
mod points;
mod sums;

/// Points per thread along x.
const W: i64 = VECTOR_WIDTH as i64;

/// Thread blocks `[x threads, y rows]` of the vector form, by preference: the fastest first of
/// those measured for the fused `propagate` kernel on an H200 at 512³ (2026-11-28, Gpt/s per
/// step at one block per SM: 8 x 48 102.7, 16 x 24 98.8, 8 x 32 81.6, 16 x 32 72.3, 16 x 16
/// 66.6, 32 x 12 52.9; two blocks per SM spilled and ran at 13-55), then smaller ones for
/// groups whose rings need more room. Tall narrow blocks leave fewer warps idle in the last
/// level's window, whose rows lose the y halo.
const BLOCKS: [[u32; 2]; 6] = [[8, 48], [16, 24], [8, 32], [16, 16], [32, 8], [8, 16]];

/// Row length of every tile and ring, in elements: the block's vectors plus one on each side.
const ROW: &str = "(PACC_FVBX * 4 + 8)";

/// An input staged in shared memory: its in-plane reads along the axes at plane `j + at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InTile {
    pub slot: usize,
    pub at: i64,
    /// Rows beyond the block's rows, below and above.
    pub ylo: i64,
    pub yhi: i64,
    /// The y offsets (non-zero) read.
    pub rows: Vec<i64>,
    /// Whether x neighbours are read (one halo vector on each side of the block's rows).
    pub xs: bool,
}

/// How a fused plan's reads are served in the vector form.
#[derive(Clone, Debug, Default)]
pub struct VFuse {
    /// The window beyond the output tile along x, in whole vectors' points: `[below, above]`.
    pub hx: [i64; 2],
    pub tiles: Vec<InTile>,
    /// Input slots loaded at their column before each step's barrier (no queue), with the
    /// planes read, relative to `j`.
    pub direct: BTreeMap<usize, Vec<i64>>,
    /// Per ring: rows of padding below and above the block's rows (the farthest row read).
    pub pads: Vec<[i64; 2]>,
    /// Every read of the group's invocations (and of their point statements), resolved.
    reads: Vec<Read>,
}

/// One read of an invocation, resolved to the version it sees.
#[derive(Clone, Debug)]
struct Read {
    inv: usize,
    ver: Ver,
    off: [i64; 3],
}

fn on_axis(off: &[i64; 3]) -> bool {
    (off[1] == 0 || off[2] == 0) && off[2].abs() <= W
}

impl VFuse {
    /// The vector form of plan `p`, or why it has none.
    pub fn of(f: &Func, p: &FusePlan, an: &Analysis) -> Result<VFuse, String> {
        if f.ndim != 3 {
            return Err("only 3D plans have a vector form".into());
        }
        if (f.arrays.iter()).any(|a| !Ty::from_elem(a.elem).is_float()) {
            return Err("only arrays of f32 or f64 have a vector form".into());
        }
        let reads = reads(f, p, an);
        let [_, [hxl, hxr]] = p.block_halo;
        let hx = [
            vector_halo(hxl as u32) as i64,
            vector_halo(hxr as u32) as i64,
        ];
        let tiles = tiles(p, &reads);
        // The form pays through its vector rows: a read one of them cannot serve would be one
        // load per point (Himeno's diagonals ran at 10 Gpt/s this way against 72 for the
        // one-column form on an H200, `benches/results/2026-11-28-h200-fused-vector/`).
        let unserved = reads.iter().find(|r| {
            let in_plane = (r.off[1], r.off[2]) != (0, 0);
            let served = match r.ver {
                Ver::Input(s) => (tiles.iter())
                    .any(|t| t.slot == s && t.at == r.off[0] - p.sigma[r.inv] && on_axis(&r.off)),
                Ver::Inv(..) => on_axis(&r.off),
            };
            in_plane && !served
        });
        if let Some(r) = unserved {
            return Err(format!(
                "invocation {} reads an array at in-plane offsets {:?}, off the axes, more than \
                 {W} points along x or at more than one plane; only the one-column form serves that",
                r.inv + 1,
                &r.off[1..]
            ));
        }
        Ok(VFuse {
            hx,
            tiles,
            direct: direct(p, &reads),
            pads: (p.rings.iter())
                .map(|g| {
                    let rows = reads.iter().filter(|r| {
                        r.ver == g.ver && r.inv == g.reader && r.off[2] == 0 && r.off[1] != 0
                    });
                    rows.fold([0, 0], |[lo, hi], r| [lo.max(-r.off[1]), hi.max(r.off[1])])
                })
                .collect(),
            reads,
        })
    }

    fn tile(&self, slot: usize) -> Option<&InTile> {
        self.tiles.iter().find(|t| t.slot == slot)
    }

    /// The queue register holding tile `t`'s centre at step `j`, if a queue holds it.
    fn tile_centre(&self, p: &FusePlan, t: &InTile) -> Option<String> {
        let q = p.inputs.get(&t.slot)?;
        let queued = !self.direct.contains_key(&t.slot) && q.lo <= t.at && t.at <= q.hi;
        queued.then(|| FuseCtx::queue_reg(Ver::Input(t.slot), q.hi - t.at))
    }

    /// The shared memory the form declares, as terms `(tiles, rows beyond the block's, element
    /// bytes)`: each term holds `tiles * (4 * bx + 8) * (by + rows)` elements. The C condition
    /// and the choice of the default block both read these.
    fn shared_terms(&self, f: &Func, p: &FusePlan) -> Vec<(i64, i64, usize)> {
        let tiles = (self.tiles.iter()).map(|t| (2, t.ylo + t.yhi, f.arrays[t.slot].elem.size()));
        let rings = (p.rings.iter().zip(&self.pads)).filter_map(|(g, [lo, hi])| match g.ver {
            Ver::Inv(_, sl) => Some((g.tiles(), lo + hi, f.arrays[sl].elem.size())),
            Ver::Input(_) => None,
        });
        tiles.chain(rings).collect()
    }

    /// The C of the static shared memory the form declares, in bytes, per the block macros.
    fn shared_bytes(&self, f: &Func, p: &FusePlan, reductions: usize) -> String {
        let mut terms: Vec<String> = (self.shared_terms(f, p).into_iter())
            .map(|(n, rows, elem)| format!("{n} * {ROW} * (PACC_FVBY + {rows}) * {elem}"))
            .collect();
        terms.push(reductions.to_string());
        terms.join(" + ")
    }

    /// The preprocessor condition under which the form is compiled: asked for, the block wider
    /// and taller than the window beyond the output tile, tall enough that each thread loads at
    /// most one halo row of a tile, and its tiles, rings and reduction buffers in static shared
    /// memory.
    pub fn condition(&self, f: &Func, p: &FusePlan, reductions: usize) -> String {
        let [[hyl, hyr], _] = p.block_halo;
        let tall = (self.tiles.iter())
            .map(|t| t.ylo + t.yhi)
            .max()
            .unwrap_or(0);
        format!(
            "PACC_FUSE == {} && PACC_FVX == {W} && PACC_FVBX >= 2 && PACC_FVBX * {W} > {} && \
             PACC_FVBY > {} && PACC_FVBY >= {tall} && {} <= {STATIC_SHARED}",
            p.steps,
            self.hx[0] + self.hx[1],
            hyl + hyr,
            self.shared_bytes(f, p, reductions)
        )
    }

    /// The blocks of `BLOCKS` that leave an output tile and fit, in its order.
    pub fn blocks(&self, f: &Func, p: &FusePlan, reductions: usize) -> Vec<[u32; 2]> {
        let [[hyl, hyr], _] = p.block_halo;
        let tall = (self.tiles.iter())
            .map(|t| t.ylo + t.yhi)
            .max()
            .unwrap_or(0);
        (BLOCKS.iter().copied())
            .filter(|&[bx, by]| {
                let exact = self.exact_bytes(f, p, reductions, [bx, by]);
                bx >= 2
                    && (bx as i64) * W > self.hx[0] + self.hx[1]
                    && (by as i64) > hyl + hyr
                    && (by as i64) >= tall
                    && exact <= STATIC_SHARED
            })
            .collect()
    }

    /// [`Self::shared_bytes`] for one block.
    fn exact_bytes(&self, f: &Func, p: &FusePlan, reductions: usize, [bx, by]: [u32; 2]) -> usize {
        let row = bx as usize * VECTOR_WIDTH + 2 * VECTOR_WIDTH;
        let bytes = |(n, rows, elem): (i64, i64, usize)| {
            n as usize * row * (by as usize + rows as usize) * elem
        };
        (self.shared_terms(f, p).into_iter())
            .map(bytes)
            .sum::<usize>()
            + reductions
    }
}

/// Every read of every invocation that computes something, and of the point statements that
/// follow it, with the version it sees.
fn reads(f: &Func, p: &FusePlan, an: &Analysis) -> Vec<Read> {
    let mut out = Vec::new();
    for (c, inv) in p.invs.iter().enumerate() {
        if !p.computes(c) {
            continue;
        }
        let nest = f.nests().nth(inv.nest).expect("nest index");
        crate::analysis::walk_stmts(&nest.body, &mut |_| {}, &mut |e| {
            if let KExprKind::Read(a) = &e.kind {
                out.push(Read {
                    inv: c,
                    ver: inv.sees[a.array],
                    off: [a.offsets[0], a.offsets[1], a.offsets[2]],
                });
            }
        });
        for &a in inv.points.iter().flat_map(|&pt| &an.point_reads[pt]) {
            if !inv.writes.contains(&inv.slot[a]) {
                out.push(Read {
                    inv: c,
                    ver: inv.sees[a],
                    off: [0; 3],
                });
            }
        }
    }
    out
}

/// The inputs worth a tile: read in their plane along the axes, at one plane relative to `j`
/// and at most one vector away along x. Their other in-plane reads go through the L1.
fn tiles(p: &FusePlan, reads: &[Read]) -> Vec<InTile> {
    let mut by_slot: BTreeMap<usize, Vec<(i64, [i64; 3])>> = BTreeMap::new();
    for r in reads {
        if let Ver::Input(s) = r.ver {
            if (r.off[1], r.off[2]) != (0, 0) && on_axis(&r.off) {
                by_slot
                    .entry(s)
                    .or_default()
                    .push((r.off[0] - p.sigma[r.inv], r.off));
            }
        }
    }
    (by_slot.into_iter())
        .filter(|(_, rs)| rs.iter().all(|(at, _)| *at == rs[0].0))
        .map(|(slot, rs)| {
            let mut rows: Vec<i64> = (rs.iter().map(|(_, o)| o[1])).filter(|&d| d != 0).collect();
            rows.sort_unstable();
            rows.dedup();
            InTile {
                slot,
                at: rs[0].0,
                ylo: rows.iter().map(|d| -d).max().unwrap_or(0).max(0),
                yhi: rows.iter().copied().max().unwrap_or(0).max(0),
                rows,
                xs: rs.iter().any(|(_, o)| o[2] != 0),
            }
        })
        .collect()
}

/// Input slots read at their column at planes much farther apart than there are planes: each
/// plane read costs one load a step, where a queue would cost a register for every plane in
/// between.
fn direct(p: &FusePlan, reads: &[Read]) -> BTreeMap<usize, Vec<i64>> {
    let mut out = BTreeMap::new();
    for (&s, q) in &p.inputs {
        let mut planes: Vec<i64> = (reads.iter())
            .filter(|r| r.ver == Ver::Input(s) && r.off[1] == 0 && r.off[2] == 0)
            .map(|r| r.off[0] - p.sigma[r.inv])
            .collect();
        // A written slot's previous version is read at its centre too (`FusePlan::of`).
        for (c, inv) in p.invs.iter().enumerate() {
            if p.fwd[c] >= -p.back[c]
                && inv
                    .writes
                    .iter()
                    .any(|&w| inv.sees[name_of(inv, w)] == Ver::Input(s))
            {
                planes.push(-p.sigma[c]);
            }
        }
        planes.sort_unstable();
        planes.dedup();
        if q.hi - q.lo + 1 > planes.len() as i64 + 1 {
            out.insert(s, planes);
        }
    }
    out
}

fn name_of(inv: &crate::analysis::fuse::Inv, slot: usize) -> usize {
    inv.slot.iter().position(|&x| x == slot).expect("slot")
}

/// Whether plane `pacc_q` of input slot `sl` lies inside the array and the group's reach
/// (`fuse::plane_guard`, its bounds computed once: `pacc_ql<sl>`, `pacc_qh<sl>`).
fn plane_guard(sl: usize) -> String {
    format!("pacc_q >= pacc_ql{sl} && pacc_q < pacc_qh{sl}")
}

/// [`plane_guard`] for a load of the thread's own column.
fn input_guard(sl: usize) -> String {
    format!("pacc_in && {}", plane_guard(sl))
}

/// The preprocessor settings of the fused vector forms: asked for or not (`PACC_FVX`), the block
/// of each step count's form and its blocks per SM, and the vector helpers where the
/// single-step vector forms do not define them.
pub fn header(f: &Func, an: &Analysis, fused: &[(FusePlan, [u32; 2])]) -> String {
    let blocks: Vec<(usize, [u32; 2])> = (fused.iter())
        .filter_map(|(p, _)| Some((p.steps, default_block(f, an, p)?)))
        .collect();
    if blocks.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "// The fused vector forms (`_f<s>_vec`): {W} points along x per thread (PACC_FVX={W}; 1 leaves\n\
         // them out), their thread block and blocks per SM.\n\
         #ifndef PACC_FVX\n#define PACC_FVX {W}\n#endif\n"
    );
    for (steps, [bx, by]) in blocks {
        let _ = writeln!(
            s,
            "#if PACC_FUSE == {steps}\n#ifndef PACC_FVBX\n#define PACC_FVBX {bx}\n#endif\n\
             #ifndef PACC_FVBY\n#define PACC_FVBY {by}\n#endif\n#endif"
        );
    }
    s.push_str("#ifndef PACC_FVMINB\n#define PACC_FVMINB 1\n#endif\n");
    s.push_str(&crate::codegen::vector::helpers_if(&format!(
        "PACC_FVX == {W} && PACC_VX != {W}"
    )));
    s
}

/// The blocks plan `p`'s vector form fits, by preference (empty where it has none).
pub fn fitting_blocks(f: &Func, an: &Analysis, p: &FusePlan) -> Vec<[u32; 2]> {
    let Ok(vf) = VFuse::of(f, p, an) else {
        return Vec::new();
    };
    let reds = super::fuse::fused_reductions(p, an);
    vf.blocks(f, p, super::fuse::reduction_bytes(f, &reds))
}

/// The default block of plan `p`'s vector form, or `None` where it has none.
pub fn default_block(f: &Func, an: &Analysis, p: &FusePlan) -> Option<[u32; 2]> {
    fitting_blocks(f, an, p).first().copied()
}

/// The name of the vector form of the kernel fusing `s` steps.
pub fn vector_name(f: &Func, s: usize) -> String {
    format!("{}{VECTOR_SUFFIX}", fused_name(f, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The radius-4 leap-frog of the acoustic model: `prev` updated from `cur` and `vel`.
    const LEAP: &str = r#"
    fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, vel: &Array3<f32>, steps: usize) {
        let (nz, ny, nx) = cur.dim();
        for _t in 0..steps {
            for z in 4..nz - 4 {
                for y in 4..ny - 4 {
                    for x in 4..nx - 4 {
                        prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]] + vel[[z, y, x]]
                            * (cur[[z - 4, y, x]] + cur[[z + 4, y, x]] + cur[[z, y - 4, x]]
                                + cur[[z, y + 4, x]] + cur[[z, y, x - 4]] + cur[[z, y, x + 4]]
                                + cur[[z, y - 1, x]] + cur[[z, y, x + 1]]);
                    }
                }
            }
            std::mem::swap(prev, cur);
        }
    }"#;

    fn plan(src: &str, s: usize) -> (Func, Analysis, FusePlan) {
        let file: syn::File = syn::parse_str(src).unwrap();
        let syn::Item::Fn(item) = &file.items[0] else {
            panic!()
        };
        let mut f = crate::lower::lower(item.clone(), Default::default()).unwrap();
        let an = crate::analysis::analyse(&mut f).unwrap();
        let p = FusePlan::of(&f, &an, s).unwrap();
        (f, an, p)
    }

    #[test]
    fn the_leapfrog_stages_cur_loads_vel_directly_and_pads_its_ring() {
        let (f, an, p) = plan(LEAP, 2);
        let vf = VFuse::of(&f, &p, &an).unwrap();
        // `cur` (slot 1) is read in its plane at step j only, by the first level: one tile, its
        // rows at the y offsets read, one halo vector on each side along x.
        assert_eq!(vf.tiles.len(), 1, "{:?}", vf.tiles);
        let t = &vf.tiles[0];
        assert_eq!((t.slot, t.at, t.ylo, t.yhi, t.xs), (1, 0, 4, 4, true));
        assert_eq!(t.rows, vec![-4, -1, 4]);
        // `vel` (slot 2) is read at the two levels' planes, 4 apart: two loads a step, no
        // queue of 5. `cur` is read at its column at 3 planes 4 apart (the first level's z
        // neighbours and centre, the second level's `prev`): 3 loads, not a queue of 9, so the
        // tile's centre comes in a register of its own.
        assert_eq!(vf.direct.get(&2), Some(&vec![-4, 0]));
        assert_eq!(vf.direct.get(&1), Some(&vec![-4, 0, 4]));
        assert_eq!(vf.tile_centre(&p, t), None);
        assert!(
            !vf.direct.contains_key(&0),
            "prev, read at one plane, keeps its queue"
        );
        // The second level reads the first one's rows up to 4 away: the ring is padded so.
        assert_eq!(vf.pads, vec![[4, 4]]);
        // The window of 4 points each side is one whole vector.
        assert_eq!(vf.hx, [4, 4]);
        let block = default_block(&f, &an, &p).unwrap();
        assert_eq!(block, BLOCKS[0]);
        // The condition the source compiles the form under holds for that block.
        let bytes = vf.exact_bytes(&f, &p, 0, block);
        assert!(bytes <= STATIC_SHARED, "{bytes}");
        assert!(vf
            .condition(&f, &p, 0)
            .contains("PACC_FUSE == 2 && PACC_FVX == 4"));
    }

    #[test]
    fn a_diagonal_read_of_a_level_leaves_the_group_without_a_vector_form() {
        let diag = LEAP.replace("cur[[z, y - 1, x]]", "cur[[z, y - 1, x + 1]]");
        let (f, an, p) = plan(&diag, 2);
        let why = VFuse::of(&f, &p, &an).unwrap_err();
        assert!(why.contains("off the axes"), "{why}");
        assert_eq!(default_block(&f, &an, &p), None);
    }
}
