//! Shared-memory staging: the staged form of a marching kernel (docs/internals.md §3).
//!
//! The L1 form reads a neighbour's column straight from global memory and counts on the cache
//! to serve the block's threads; each in-plane read is then a separate cache request, and on an
//! H100 those requests cost 18-21% of the kernel's time. The staged form copies each plane an
//! array is read at into a tile of shared memory once, the block's columns plus a halo as wide as
//! the in-plane reach, and serves the in-plane reads from the tile.
//!
//! The tiles of one array form a ring that turns by one plane per step of the march. The ring
//! holds one tile more than the planes a step reads, so one barrier per plane suffices: a step
//! fills the spare tile while no thread can still be reading it (the last reader finished
//! before the previous step's barrier). Arithmetic is untouched, so results keep their bits.

use super::emit::{c_ident, signed, Gen, Serve, STATIC_SHARED};
use super::queue::{queue_reg, March};
use crate::ir::{KExprKind, Nest};
use std::fmt::Write;

/// The widest in-plane halo (per side) and the most planes of one array that are staged;
/// wider reads stay in the L1 form.
const MAX_REACH: i64 = 8;
const MAX_PLANES: i64 = 8;
/// Whether the generated source stages by default (`PACC_STAGE`): in 3D, where a warp's
/// in-plane neighbours lie on other rows; not in 2D, where they are the warp's own row and the
/// L1 form won on an H100 (laplace2d 16384², 277 against 262 Gpt/s). The run-time tuner may
/// choose either form per program and shape.
pub fn default_stage(ndim: usize) -> u32 {
    u32::from(ndim == 3)
}
/// The ring of tiles of one array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    pub array: usize,
    /// Axis-0 offsets the in-plane reads are at: the ring holds planes `z + dlo ..= z + dhi`.
    pub dlo: i64,
    pub dhi: i64,
    /// The halo below (`lo`) and above (`hi`) the block, `[y, x]` (2D: `y` is 0).
    pub lo: [i64; 2],
    pub hi: [i64; 2],
    /// No read is diagonal in the plane, so the halo is four edge strips, each cell loaded by
    /// one edge thread (only such arrays are staged).
    pub star: bool,
    pub elem_bytes: usize,
}

impl Tile {
    /// Tiles in the ring: the planes a step reads plus the one the next step fills.
    pub fn ring(&self) -> i64 {
        self.dhi - self.dlo + 2
    }
}

/// The staging plan of one nest: which arrays are staged, and the shared memory the
/// reductions take beside them.
#[derive(Clone, Debug, Default)]
pub struct Stage {
    pub ndim: usize,
    pub tiles: Vec<Tile>,
    pub reduction_bytes: usize,
}

impl Stage {
    /// Arrays the nest reads at an in-plane offset and never writes (a written array is read
    /// only at the centre point, which the race check guarantees).
    pub fn of(
        nest: &Nest,
        written: &[usize],
        ndim: usize,
        elem_bytes: impl Fn(usize) -> usize,
    ) -> Stage {
        let mut tiles: Vec<Tile> = Vec::new();
        crate::analysis::walk_stmts(&nest.body, &mut |_| {}, &mut |e| {
            let KExprKind::Read(a) = &e.kind else { return };
            let plane = in_plane(&a.offsets, ndim);
            if written.contains(&a.array) || plane == [0, 0] {
                return;
            }
            let dz = a.offsets[0];
            let i = match tiles.iter().position(|t| t.array == a.array) {
                Some(i) => i,
                None => {
                    tiles.push(Tile {
                        array: a.array,
                        dlo: dz,
                        dhi: dz,
                        lo: [0, 0],
                        hi: [0, 0],
                        star: true,
                        elem_bytes: elem_bytes(a.array),
                    });
                    tiles.len() - 1
                }
            };
            let t = &mut tiles[i];
            t.dlo = t.dlo.min(dz);
            t.dhi = t.dhi.max(dz);
            for (d, &o) in plane.iter().enumerate() {
                t.lo[d] = t.lo[d].max(-o);
                t.hi[d] = t.hi[d].max(o);
            }
            t.star &= plane[0] == 0 || plane[1] == 0;
        });
        // Diagonal reads would need the tile's corners too; on an H100 loading whole tiles
        // cooperatively lost to the L1 form (Himeno's 19 points), so those arrays stay there.
        tiles.retain(|t| {
            t.star
                && t.dhi - t.dlo < MAX_PLANES
                && t.lo.iter().chain(&t.hi).all(|&h| h <= MAX_REACH)
        });
        Stage {
            ndim,
            tiles,
            reduction_bytes: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }

    fn tile(&self, array: usize) -> Option<&Tile> {
        self.tiles.iter().find(|t| t.array == array)
    }

    /// C of the tile's row length.
    fn width(t: &Tile) -> String {
        format!("(PACC_BX + {})", t.lo[1] + t.hi[1])
    }

    /// C of the elements in one tile (3D: `PACC_RY` rows per thread).
    fn area(&self, t: &Tile) -> String {
        if self.ndim == 3 {
            format!(
                "{} * (PACC_BY * PACC_RY + {})",
                Self::width(t),
                t.lo[0] + t.hi[0]
            )
        } else {
            Self::width(t)
        }
    }

    /// The preprocessor condition under which the staged form is compiled: staging asked for,
    /// the block at least as wide as both halos of an axis (each thread loads at most one halo
    /// cell per axis), and the tiles plus the reduction buffers within the static shared memory.
    pub fn condition(&self) -> String {
        let bytes: Vec<String> = self
            .tiles
            .iter()
            .map(|t| format!("{} * {} * {}", t.ring(), self.area(t), t.elem_bytes))
            .collect();
        let reach = |d: usize| self.tiles.iter().map(|t| t.lo[d] + t.hi[d]).max();
        let mut c = vec!["PACC_STAGE".to_string()];
        c.push(format!("PACC_BX >= {}", reach(1).unwrap_or(0)));
        if self.ndim == 3 {
            c.push(format!("PACC_BY >= {}", reach(0).unwrap_or(0)));
        }
        c.push(format!(
            "{} + {} <= {STATIC_SHARED}",
            bytes.join(" + "),
            self.reduction_bytes
        ));
        c.join(" && ")
    }

    /// C for an in-plane read of a staged array, or `None` when it is not one.
    pub fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        let t = self.tile(array)?;
        let plane = in_plane(offsets, self.ndim);
        if plane == [0, 0] {
            return None;
        }
        let mut at = format!("pacc_so{array}_{} + pacc_si{array}", offsets[0] - t.dlo);
        if plane[0] != 0 {
            let _ = write!(at, " + ({}) * pacc_sw{array}", plane[0]);
        }
        if plane[1] != 0 {
            let _ = write!(at, " + ({})", plane[1]);
        }
        Some(format!("pacc_sm{array}[{at}]"))
    }
}

impl Serve for Stage {
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        Stage::read(self, array, offsets) // the inherent method above
    }
}

/// The in-plane offsets of a read, `[y, x]` (2D: `[0, x]`).
fn in_plane(offsets: &[i64], ndim: usize) -> [i64; 2] {
    if ndim == 3 {
        [offsets[1], offsets[2]]
    } else {
        [0, offsets[1]]
    }
}

impl Gen<'_> {
    /// The tiles, each thread's place in them, the halo cell it loads on each in-plane axis,
    /// and the ring's tile offsets; then the planes `dlo .. dhi` of the first step, and the
    /// registers of plane `dhi`, which the first step stores.
    pub(super) fn stage_prologue(&mut self, s: &Stage, m: &March) {
        for t in &s.tiles {
            let a = t.array;
            self.stage_tile(s, t);
            let si = if s.ndim == 3 {
                format!(
                    "(pacc_ty + {}) * pacc_sw{a} + pacc_tx + {}",
                    t.lo[0], t.lo[1]
                )
            } else {
                format!("pacc_tx + {}", t.lo[1])
            };
            let _ = writeln!(self.out, "    const int pacc_si{a} = {si};");
            self.stage_slots(s, t);
            self.stage_cells(s, t, m, "    ", false);
        }
    }

    /// Each step: store plane `z + dhi` of the thread's cells (`x_only`: of the row, whose
    /// y-halo cell is the thread's), whose values the registers hold since the step before (the
    /// centre may come from the register queue), and start loading the next step's. The loads'
    /// latency is hidden behind a whole step; the caller places the step's one barrier after
    /// every store.
    pub(super) fn stage_step(&mut self, s: &Stage, m: &March, x_only: bool) {
        let z = self.loop_vars[0].clone();
        for t in &s.tiles {
            let centre = self.stage_centre(t, m);
            self.stage_store(s, t, t.dhi - t.dlo, centre.as_deref(), "        ", x_only);
            let g = format!("pacc_at + ({}) * pacc_pl", t.dhi + 1);
            let ok = self.plane_ok(&format!("{z} + ({})", t.dhi + 1));
            let _ = writeln!(self.out, "        if ({z} + 1 < pacc_ze{ok}) {{");
            self.stage_load(s, t, &g, centre.as_deref(), "            ", x_only);
            let _ = writeln!(self.out, "        }}");
        }
    }

    /// The tiles and the ring's tile offsets, which every row of a thread shares (3D).
    pub(super) fn stage_tiles(&mut self, s: &Stage) {
        for t in &s.tiles {
            self.stage_tile(s, t);
            self.stage_slots(s, t);
        }
    }

    /// A row's place in each tile, its x-halo cell and the first step's planes (3D, inside the
    /// row loop).
    pub(super) fn stage_row_prologue(&mut self, s: &Stage, m: &March) {
        for t in &s.tiles {
            let a = t.array;
            let _ = writeln!(
                self.out,
                "    const int pacc_si{a} = (pacc_ty + pacc_r * PACC_BY + {}) * pacc_sw{a} + pacc_tx + {};",
                t.lo[0], t.lo[1]
            );
            self.stage_cells(s, t, m, "    ", true);
        }
    }

    /// The variables of a row that the staged form keeps across the phases of a step.
    pub(super) fn stage_row_vars(&self, s: &Stage) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for t in &s.tiles {
            let a = t.array;
            let ty = self.f.arrays[a].elem.cuda_name().to_string();
            v.push(("int".to_string(), format!("pacc_si{a}")));
            for h in self.halos(s, t, true) {
                let k = h.key;
                v.push(("int".to_string(), format!("pacc_{k}o{a}")));
                v.push(("bool".to_string(), format!("pacc_{k}v{a}")));
                v.push((ty.clone(), format!("pacc_{k}{a}")));
            }
            v.push((ty, format!("pacc_hc{a}")));
        }
        v
    }

    fn stage_tile(&mut self, s: &Stage, t: &Tile) {
        let a = t.array;
        let ty = self.f.arrays[a].elem.cuda_name();
        let name = c_ident(&self.f.arrays[a].name.to_string());
        let _ = writeln!(
            self.out,
            "    // `{name}` in shared memory: a ring of {ring} tiles (planes z{} ..= z{} and the next).\n    \
             __shared__ {ty} pacc_sm{a}[{ring} * {area}];\n    \
             const int pacc_sw{a} = {};",
            signed(t.dlo),
            signed(t.dhi),
            Stage::width(t),
            ring = t.ring(),
            area = s.area(t),
        );
    }

    fn stage_slots(&mut self, s: &Stage, t: &Tile) {
        let a = t.array;
        let area = s.area(t);
        let slots: Vec<String> = (0..t.ring())
            .map(|j| format!("pacc_so{a}_{j} = {j} * {area}"))
            .collect();
        let _ = writeln!(self.out, "    int {};", slots.join(", "));
    }

    /// The halo cells of the thread (`x_only`: of the row), the centre register, and the first
    /// step's planes.
    fn stage_cells(&mut self, s: &Stage, t: &Tile, m: &March, ind: &str, x_only: bool) {
        let a = t.array;
        let ty = self.f.arrays[a].elem.cuda_name();
        for h in self.halos(s, t, x_only) {
            let _ = writeln!(
                self.out,
                "{ind}// The {axis}-halo cell this thread loads (offset 0: none).\n{ind}\
                 const int pacc_{k}o{a} = {tid} < {lo} ? -{lo} : ({tid} >= {extent} - {hi} ? {hi} : 0);\n{ind}\
                 const bool pacc_{k}v{a} = pacc_{k}o{a} != 0 && {other}{v} + pacc_{k}o{a} >= 0 && {v} + pacc_{k}o{a} < {n};\n{ind}\
                 {ty} pacc_{k}{a} = ({ty})0;",
                axis = h.axis,
                k = h.key,
                tid = h.tid,
                lo = h.lo,
                hi = h.hi,
                extent = h.extent,
                other = h.other,
                v = h.var,
                n = h.n,
            );
        }
        let centre = self.stage_centre(t, m);
        let _ = writeln!(self.out, "{ind}{ty} pacc_hc{a} = ({ty})0;");
        let _ = writeln!(self.out, "{ind}if (pacc_zb < pacc_ze) {{");
        let inner = format!("{ind}    ");
        for dz in t.dlo..t.dhi {
            let g = format!("(pacc_zb - pacc_base + ({dz})) * pacc_pl + pacc_c");
            self.stage_plane_load(s, t, dz, &g, None, &inner, x_only);
            self.stage_store(s, t, dz - t.dlo, None, &inner, x_only);
        }
        let g = format!("(pacc_zb - pacc_base + ({})) * pacc_pl + pacc_c", t.dhi);
        self.stage_plane_load(s, t, t.dhi, &g, centre.as_deref(), &inner, x_only);
        let _ = writeln!(self.out, "{ind}}}");
    }

    /// The y-halo cell of each thread (3D, after the row loop): threads of the top rows of the
    /// block load the rows above the tile, next to their first row; threads of the bottom rows
    /// the rows below it, next to their last row. Then the first step's planes of that cell.
    pub(super) fn stage_y_prologue(&mut self, s: &Stage) {
        let x = self.loop_vars[2].clone();
        for t in s.tiles.iter().filter(|t| t.lo[0] + t.hi[0] > 0) {
            let a = t.array;
            let ty = self.f.arrays[a].elem.cuda_name();
            let src = c_ident(&self.f.arrays[a].name.to_string());
            let y = &self.loop_vars[1];
            let (lo, hi) = (t.lo[0], t.hi[0]);
            let _ = writeln!(
                self.out,
                "    // The y-halo cell this thread loads (offset 0: none), beside its first or last row.\n    \
                 const int pacc_hyo{a} = pacc_ty < {lo} ? -{lo} : (pacc_ty >= PACC_BY - {hi} ? {hi} : 0);\n    \
                 const int pacc_hyr{a} = pacc_hyo{a} < 0 ? 0 : PACC_RY - 1;\n    \
                 const long long pacc_hyy{a} = {y}_v[pacc_hyr{a}] + pacc_hyo{a};\n    \
                 const bool pacc_hyv{a} = pacc_hyo{a} != 0 && {x} < pacc_n2 && pacc_hyy{a} >= 0 && pacc_hyy{a} < pacc_n1;\n    \
                 const long long pacc_hyc{a} = pacc_c_v[pacc_hyr{a}] + pacc_hyo{a} * pacc_rp;\n    \
                 const int pacc_hys{a} = pacc_si{a}_v[pacc_hyr{a}] + pacc_hyo{a} * pacc_sw{a};\n    \
                 {ty} pacc_hy{a} = ({ty})0;\n    \
                 if (pacc_zb < pacc_ze) {{"
            );
            for dz in t.dlo..=t.dhi {
                let ok = self.plane_ok(&format!("pacc_zb + ({dz})"));
                let _ = writeln!(
                    self.out,
                    "        if (pacc_hyv{a}{ok}) pacc_hy{a} = {src}[(pacc_zb - pacc_base + ({dz})) * pacc_pl + pacc_hyc{a}];"
                );
                if dz < t.dhi {
                    let _ = writeln!(
                        self.out,
                        "        if (pacc_hyv{a}) pacc_sm{a}[pacc_so{a}_{} + pacc_hys{a}] = pacc_hy{a};",
                        dz - t.dlo
                    );
                }
            }
            let _ = writeln!(self.out, "    }}");
        }
    }

    /// Each step (3D, after the rows' stores): the y-halo cell of plane `z + dhi` into the
    /// ring, and the next step's cell into the register.
    pub(super) fn stage_y_step(&mut self, s: &Stage) {
        let z = self.loop_vars[0].clone();
        for t in s.tiles.iter().filter(|t| t.lo[0] + t.hi[0] > 0) {
            let a = t.array;
            let src = c_ident(&self.f.arrays[a].name.to_string());
            let ok = self.plane_ok(&format!("{z} + ({})", t.dhi + 1));
            let _ = writeln!(
                self.out,
                "        if (pacc_hyv{a}) pacc_sm{a}[pacc_so{a}_{} + pacc_hys{a}] = pacc_hy{a};\n        \
                 if (pacc_hyv{a} && {z} + 1 < pacc_ze{ok}) pacc_hy{a} = {src}[pacc_zo + ({}) * pacc_pl + pacc_hyc{a}];",
                t.dhi - t.dlo,
                t.dhi + 1
            );
        }
    }

    /// Turns each ring by one plane: the tile read at the lowest offset becomes the spare.
    pub(super) fn stage_rotate(&mut self, s: &Stage) {
        for t in &s.tiles {
            let a = t.array;
            let ring = t.ring();
            let mut w = format!("        {{ const int pacc_o = pacc_so{a}_0;");
            for j in 0..ring - 1 {
                let _ = write!(w, " pacc_so{a}_{j} = pacc_so{a}_{};", j + 1);
            }
            let _ = writeln!(w, " pacc_so{a}_{} = pacc_o; }}", ring - 1);
            self.out.push_str(&w);
        }
    }

    /// The register queue's slot that holds plane `z + dhi` of the thread's own column, if the
    /// array has a queue spanning it (then the centre needs no load of its own).
    fn stage_centre(&self, t: &Tile, m: &March) -> Option<String> {
        m.cached
            .get(&t.array)
            .filter(|c| c.lo <= t.dhi && t.dhi <= c.hi)
            .map(|_| queue_reg(t.array, t.dhi))
    }

    /// [`Gen::stage_load`] of the first step's plane `pacc_zb + dz`, under the test that the
    /// plane lies inside the array in a nest with guarded reads.
    #[allow(clippy::too_many_arguments)]
    fn stage_plane_load(
        &mut self,
        s: &Stage,
        t: &Tile,
        dz: i64,
        g: &str,
        centre: Option<&str>,
        ind: &str,
        x_only: bool,
    ) {
        let ok = self.plane_ok(&format!("pacc_zb + ({dz})"));
        let Some(ok) = ok.strip_prefix(" && ") else {
            return self.stage_load(s, t, g, centre, ind, x_only);
        };
        let _ = writeln!(self.out, "{ind}if ({ok}) {{");
        self.stage_load(s, t, g, centre, &format!("{ind}    "), x_only);
        let _ = writeln!(self.out, "{ind}}}");
    }

    /// Loads the thread's cells of the plane whose thread-column element is at flat index `g`
    /// into its registers (the centre only when no queue holds it).
    /// (`x_only`: the row's cells in the rows form.)
    fn stage_load(
        &mut self,
        s: &Stage,
        t: &Tile,
        g: &str,
        centre: Option<&str>,
        ind: &str,
        x_only: bool,
    ) {
        let a = t.array;
        let src = c_ident(&self.f.arrays[a].name.to_string());
        if centre.is_none() {
            let _ = writeln!(self.out, "{ind}if (pacc_in) pacc_hc{a} = {src}[{g}];");
        }
        for h in self.halos(s, t, x_only) {
            let k = h.key;
            let _ = writeln!(
                self.out,
                "{ind}if (pacc_{k}v{a}) pacc_{k}{a} = {src}[{g} + pacc_{k}o{a}{}];",
                h.stride
            );
        }
    }

    /// Stores the thread's cells into ring tile `slot`.
    /// (`x_only`: the row's cells in the rows form.)
    fn stage_store(
        &mut self,
        s: &Stage,
        t: &Tile,
        slot: i64,
        centre: Option<&str>,
        ind: &str,
        x_only: bool,
    ) {
        let a = t.array;
        let dst = format!("pacc_sm{a}[pacc_so{a}_{slot} + pacc_si{a}");
        let c = centre.map_or(format!("pacc_hc{a}"), str::to_string);
        let _ = writeln!(self.out, "{ind}if (pacc_in) {dst}] = {c};");
        for h in self.halos(s, t, x_only) {
            let k = h.key;
            let _ = writeln!(
                self.out,
                "{ind}if (pacc_{k}v{a}) {dst} + pacc_{k}o{a}{}] = pacc_{k}{a};",
                h.tile_stride
            );
        }
    }

    /// The in-plane axes along which tile `t` has a halo.
    /// (`x_only`: only the x halo, a row's cells in the rows form, where the y halo is the
    /// thread's.)
    fn halos(&self, s: &Stage, t: &Tile, x_only: bool) -> Vec<Halo> {
        let lv = &self.loop_vars;
        let a = t.array;
        let mut out = Vec::new();
        let x_n = if s.ndim == 3 { "pacc_n2" } else { "pacc_n1" };
        if t.lo[1] + t.hi[1] > 0 {
            out.push(Halo {
                axis: "x",
                key: "hx",
                tid: "pacc_tx",
                extent: "PACC_BX",
                lo: t.lo[1],
                hi: t.hi[1],
                var: lv[s.ndim - 1].clone(),
                n: x_n,
                other: if s.ndim == 3 {
                    format!("{} < pacc_n1 && ", lv[1])
                } else {
                    String::new()
                },
                stride: String::new(),
                tile_stride: String::new(),
            });
        }
        if s.ndim == 3 && !x_only && t.lo[0] + t.hi[0] > 0 {
            out.push(Halo {
                axis: "y",
                key: "hy",
                tid: "pacc_ty",
                extent: "PACC_BY",
                lo: t.lo[0],
                hi: t.hi[0],
                var: lv[1].clone(),
                n: "pacc_n1",
                other: format!("{} < pacc_n2 && ", lv[2]),
                stride: " * pacc_rp".into(),
                tile_stride: format!(" * pacc_sw{a}"),
            });
        }
        out
    }
}

/// One in-plane axis of a tile's halo, as the C that loads it.
struct Halo {
    axis: &'static str,
    key: &'static str,
    tid: &'static str,
    extent: &'static str,
    lo: i64,
    hi: i64,
    var: String,
    n: &'static str,
    /// The other in-plane coordinate's guard (3D).
    other: String,
    /// Offset multiplier in the buffer and in the tile.
    stride: String,
    tile_stride: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(dlo: i64, dhi: i64, lo: [i64; 2], hi: [i64; 2], star: bool) -> Tile {
        Tile {
            array: 1,
            dlo,
            dhi,
            lo,
            hi,
            star,
            elem_bytes: 4,
        }
    }

    #[test]
    fn ring_holds_one_spare_tile() {
        assert_eq!(tile(0, 0, [4, 4], [4, 4], true).ring(), 2);
        assert_eq!(tile(-1, 1, [1, 1], [1, 1], false).ring(), 4);
    }

    #[test]
    fn reads_map_to_the_ring_slot_of_their_plane() {
        let s = Stage {
            ndim: 3,
            tiles: vec![tile(-1, 1, [1, 2], [1, 0], false)],
            reduction_bytes: 0,
        };
        assert_eq!(
            s.read(1, &[-1, 1, -2]).unwrap(),
            "pacc_sm1[pacc_so1_0 + pacc_si1 + (1) * pacc_sw1 + (-2)]"
        );
        assert_eq!(
            s.read(1, &[1, 0, -1]).unwrap(),
            "pacc_sm1[pacc_so1_2 + pacc_si1 + (-1)]"
        );
        // Column reads and other arrays are not served by the tile.
        assert_eq!(s.read(1, &[1, 0, 0]), None);
        assert_eq!(s.read(0, &[0, 1, 0]), None);
    }

    #[test]
    fn condition_checks_halo_against_block_and_the_shared_budget() {
        let s = Stage {
            ndim: 3,
            tiles: vec![tile(0, 0, [4, 4], [4, 4], true)],
            reduction_bytes: 4096,
        };
        assert_eq!(
            s.condition(),
            "PACC_STAGE && PACC_BX >= 8 && PACC_BY >= 8 && \
             2 * (PACC_BX + 8) * (PACC_BY * PACC_RY + 8) * 4 + 4096 <= 49152"
        );
        let s2 = Stage {
            ndim: 2,
            tiles: vec![tile(0, 0, [0, 1], [0, 3], true)],
            reduction_bytes: 0,
        };
        assert_eq!(
            s2.condition(),
            "PACC_STAGE && PACC_BX >= 4 && 2 * (PACC_BX + 4) * 4 + 0 <= 49152"
        );
    }
}
