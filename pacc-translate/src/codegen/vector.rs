//! The vector form of a 3D marching kernel (`<kernel>_vec`, docs/internals.md §3).
//!
//! The scalar forms give each thread one column and spend most of their instructions on
//! addresses, guards and one shared-memory load per in-plane neighbour: on an H100 the staged
//! `propagate` kernel issued 3.86 warp instructions (123 thread instructions) per point, of
//! which 33 are the stencil's arithmetic, and ran issue-bound at 74-79% of the device's copy
//! rate. In the vector form a thread computes [`VECTOR_WIDTH`] consecutive points along x:
//! every load and tile store moves a 16-byte (f32) vector, a y neighbour row is one shared load
//! for all the thread's points and an x neighbour comes from the vectors left and right of the
//! thread's own, so the overheads are shared four ways (2.83 warp instructions per point; 158.8
//! against 140.5 Gpt/s for `propagate` at 512³, 85% of the copy rate,
//! `benches/results/2026-11-26-h100-fusion/`).
//!
//! Arrays read at in-plane offsets in their own plane only, along the axes, at most one vector
//! away along x, are staged in a double-buffered tile; other in-plane reads go through the L1
//! as in the L1 form. The arithmetic of each point is the nest body as written, so the bits
//! are the plain kernel's.

use super::emit::{
    c_ident, combine, kernel_name, offset_name, reduction_buffer_bytes, Gen, Serve, STATIC_SHARED,
};
use super::queue::{queue_reg, March};
use super::stage::Stage;
use crate::analysis::Analysis;
use crate::ir::{KExprKind, KStmt, Nest};
use pacc_runtime::program::{VECTOR_SUFFIX, VECTOR_WIDTH};
use std::fmt::Write;

/// Points per thread along x, as the C the generated code spells.
const W: i64 = VECTOR_WIDTH as i64;

/// A staged array of the vector form: its in-plane halo below (`lo`) and above (`hi`), `[y, x]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VTile {
    pub array: usize,
    pub lo: [i64; 2],
    pub hi: [i64; 2],
    pub elem_bytes: usize,
    /// The y offsets (non-zero) the nest reads the array at, each one shared row per step.
    pub rows: Vec<i64>,
}

/// The read plan of the vector form of one nest.
#[derive(Clone, Debug, Default)]
pub struct Vector {
    pub march: March,
    pub tiles: Vec<VTile>,
    /// Arrays whose values are gathered per point and stored as one vector after the points
    /// (every write of the array is an unconditional top-level `a[[z, y, x]] = e` and the body
    /// never reads it after writing it).
    pub gathered: Vec<usize>,
    pub reduction_bytes: usize,
}

impl Vector {
    pub fn of(nest: &Nest, written: &[usize], elem_bytes: impl Fn(usize) -> usize) -> Vector {
        let march = March::of(nest, written, 3);
        let stage = Stage::of(nest, written, 3, &elem_bytes);
        let tiles = stage
            .tiles
            .iter()
            .filter(|t| t.dlo == 0 && t.dhi == 0 && t.lo[1] <= W && t.hi[1] <= W)
            .map(|t| VTile {
                array: t.array,
                lo: t.lo,
                hi: t.hi,
                elem_bytes: t.elem_bytes,
                rows: y_rows(nest, t.array),
            })
            .collect();
        Vector {
            march,
            tiles,
            gathered: gathered(&nest.body, written),
            reduction_bytes: 0,
        }
    }

    fn tile(&self, array: usize) -> Option<&VTile> {
        self.tiles.iter().find(|t| t.array == array)
    }

    /// The C of one tile's elements: its rows hold the block's vectors plus one vector on each
    /// side (so every vector in it starts on 16 bytes), its height the block's rows plus the
    /// y halo.
    fn area(t: &VTile) -> String {
        format!(
            "(PACC_VBX * {W} + {}) * (PACC_VBY + {})",
            2 * W,
            t.lo[0] + t.hi[0]
        )
    }

    /// The preprocessor condition under which the vector form is compiled: asked for, the block
    /// wide enough that its first and last thread of a row are different threads (each loads
    /// one x-halo vector) and as tall as the y halo (each thread loads at most one y-halo
    /// row), and the tiles plus the reduction buffers within the static shared memory.
    pub fn condition(&self) -> String {
        let reach_y = self.tiles.iter().map(|t| t.lo[0] + t.hi[0]).max();
        let bytes: Vec<String> = self
            .tiles
            .iter()
            .map(|t| format!("2 * {} * {}", Self::area(t), t.elem_bytes))
            .chain(std::iter::once(self.reduction_bytes.to_string()))
            .collect();
        format!(
            "PACC_VX == {W} && PACC_VBX >= 2 && PACC_VBY >= {} && {} <= {STATIC_SHARED}",
            reach_y.unwrap_or(0).max(1),
            bytes.join(" + ")
        )
    }

    /// C for a read at `offsets` of point `pacc_i` of the thread's vector, or `None` for a
    /// load through the L1.
    pub fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        if self.march.ahead.contains(&array) {
            return Some(format!("pacc_r{array}[pacc_i]"));
        }
        let column = offsets[1] == 0 && offsets[2] == 0;
        if column && self.march.cached.contains_key(&array) {
            return Some(format!("{}[pacc_i]", queue_reg(array, offsets[0])));
        }
        self.tile(array)?;
        match (offsets[0], offsets[1], offsets[2]) {
            (0, 0, 0) => Some(format!("pacc_vc{array}[pacc_i]")),
            (0, dy, 0) => Some(format!("{}[pacc_i]", row_reg(array, dy))),
            (0, 0, dx) => Some(format!("pacc_vrow{array}[{} + pacc_i + ({dx})]", W)),
            _ => None,
        }
    }

    /// The register a gathered write of `array` goes to.
    pub fn write(&self, array: usize) -> Option<String> {
        self.gathered
            .contains(&array)
            .then(|| format!("pacc_w{array}[pacc_i]"))
    }

    /// The centre vector of a staged array: its queue's slot at the plane itself, or a register
    /// loaded one step ahead.
    fn centre(&self, array: usize) -> String {
        match self.march.cached.get(&array) {
            Some(c) if c.lo <= 0 && 0 <= c.hi => queue_reg(array, 0),
            _ => format!("pacc_vc{array}"),
        }
    }

    fn own_centre(&self, array: usize) -> bool {
        self.centre(array) == format!("pacc_vc{array}")
    }
}

impl Serve for Vector {
    // The inherent methods above.
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        Vector::read(self, array, offsets)
    }

    fn write(&self, array: usize) -> Option<String> {
        Vector::write(self, array)
    }

    fn relative_to_point(&self) -> bool {
        true
    }
}

/// The y offsets, other than 0, at which the nest reads `array` in its own plane.
fn y_rows(nest: &Nest, array: usize) -> Vec<i64> {
    let mut rows = Vec::new();
    crate::analysis::walk_stmts(&nest.body, &mut |_| {}, &mut |e| {
        if let crate::ir::KExprKind::Read(a) = &e.kind {
            if a.array == array
                && a.offsets[0] == 0
                && a.offsets[1] != 0
                && !rows.contains(&a.offsets[1])
            {
                rows.push(a.offsets[1]);
            }
        }
    });
    rows.sort_unstable();
    rows
}

/// Arrays of `written` whose every write is a top-level `a[[..]] = e` (no `op=`, not under an
/// `if`), written once, and not read after the write: their values can wait in registers and
/// leave as one vector store.
fn gathered(body: &[KStmt], written: &[usize]) -> Vec<usize> {
    let mut plain: Vec<usize> = Vec::new();
    let mut other: Vec<usize> = Vec::new();
    for s in body {
        match s {
            KStmt::Write {
                access, op: None, ..
            } if !plain.contains(&access.array) => plain.push(access.array),
            _ => crate::analysis::walk_stmts(
                std::slice::from_ref(s),
                &mut |st| {
                    if let KStmt::Write { access, .. } = st {
                        other.push(access.array);
                    }
                },
                &mut |_| {},
            ),
        }
    }
    // A read after the write would have to see the new value.
    let mut late = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    for s in body {
        crate::analysis::walk_stmts(std::slice::from_ref(s), &mut |_| {}, &mut |e| {
            if let crate::ir::KExprKind::Read(a) = &e.kind {
                if seen.contains(&a.array) {
                    late.push(a.array);
                }
            }
        });
        if let KStmt::Write { access, .. } = s {
            seen.push(access.array);
        }
    }
    plain
        .into_iter()
        .filter(|a| written.contains(a) && !other.contains(a) && !late.contains(a))
        .collect()
}

/// The register holding row `dy` of a staged array's tile at the thread's columns.
fn row_reg(array: usize, dy: i64) -> String {
    format!("pacc_vr{array}_{}", offset_name(dy))
}

/// The device helpers the vector forms use: 4-element loads and stores as 16-byte accesses
/// (f32) or two of them (f64), and a register copy.
pub fn helpers() -> String {
    helpers_if(&format!("PACC_VX == {W}"))
}

/// [`helpers`] under the preprocessor condition `cond`.
pub fn helpers_if(cond: &str) -> String {
    format!(
        "#if {cond}\n\
         // Four consecutive elements along x: one 16-byte access (f32) or two (f64).\n\
         __device__ __forceinline__ void pacc_ld4(const float* p, float* v) {{ const float4 t = *(const float4*)p; v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w; }}\n\
         __device__ __forceinline__ void pacc_ld4(const double* p, double* v) {{ const double2 a = ((const double2*)p)[0], b = ((const double2*)p)[1]; v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y; }}\n\
         __device__ __forceinline__ void pacc_st4(float* p, const float* v) {{ *(float4*)p = make_float4(v[0], v[1], v[2], v[3]); }}\n\
         __device__ __forceinline__ void pacc_st4(double* p, const double* v) {{ ((double2*)p)[0] = make_double2(v[0], v[1]); ((double2*)p)[1] = make_double2(v[2], v[3]); }}\n\
         template <class T> __device__ __forceinline__ void pacc_cp4(T* d, const T* s) {{ d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3]; }}\n\
         #endif\n"
    )
}

/// Whether nest `k` of `f` has a vector form: 3D, with an array to stage.
pub fn has_vector_form(f: &crate::ir::Func, an: &Analysis, k: usize, n: &Nest) -> bool {
    f.ndim == 3
        && !Vector::of(n, &an.writes[k], |a| f.arrays[a].elem.size())
            .tiles
            .is_empty()
}

impl Gen<'_> {
    /// The vector form of nest `k` under its `#if`, or nothing for a 2D nest or one with no
    /// array to stage: the vector form pays through its shared loads, and without them the four
    /// points' registers cost more than the vector loads save (Himeno's diagonals on the H100:
    /// 37.4 against 42.8 Gpt/s for the L1 form, `benches/results/2026-11-26-h100-fusion/`).
    pub(super) fn vector_kernel(&mut self, k: usize, n: &Nest, an: &Analysis) {
        let f = self.f;
        if !has_vector_form(f, an, k, n) {
            return;
        }
        let mut v = Vector::of(n, &an.writes[k], |a| f.arrays[a].elem.size());
        v.reduction_bytes = an.reductions[k]
            .iter()
            .map(|&r| reduction_buffer_bytes(f.reductions[r].ty))
            .sum();
        let params = self.kernel_params(k, an, true);
        let _ = writeln!(
            self.out,
            "// Vector form: {W} points along x per thread.\n#if {}\n\
             extern \"C\" __global__ void __launch_bounds__(PACC_VBX * PACC_VBY, PACC_VMINB) {}{VECTOR_SUFFIX}(\n    {})\n{{",
            v.condition(),
            kernel_name(f, k),
            params.join(",\n    ")
        );
        let reds = an.reductions[k].clone();
        self.vector_prologue(n, &v);
        self.reduction_accumulators(&reds, true, "    ");
        self.vector_loop(n, &v, &reds);
        self.block_reductions(&reds, true);
        self.out.push_str("}\n#endif\n");
    }

    /// Coordinates, the guard mask, the first planes of the queues and of the registers loaded
    /// ahead, and the tiles with the thread's halo vectors.
    fn vector_prologue(&mut self, n: &Nest, v: &Vector) {
        let lv = self.loop_vars.clone();
        let y = &lv[1];
        let _ = writeln!(
            self.out,
            "    const int pacc_tx = threadIdx.x;\n    \
             const int pacc_ty = threadIdx.y;\n    \
             const long long pacc_x0 = ((long long)blockIdx.x * PACC_VBX + pacc_tx) * {W};\n    \
             const long long {y} = (long long)blockIdx.y * PACC_VBY + pacc_ty;\n    \
             const long long pacc_zb = pacc_z0 + (long long)blockIdx.z * pacc_seg;\n    \
             const long long pacc_ze = pacc_zb + pacc_seg < pacc_z1 ? pacc_zb + pacc_seg : pacc_z1;\n    \
             const long long pacc_pl = pacc_n1 * pacc_rp;\n    \
             const long long pacc_c = {y} * pacc_rp + pacc_x0;\n    \
             const bool pacc_in = pacc_x0 < pacc_n2 && {y} < pacc_n1;"
        );
        let (ry, rx) = (&n.ranges[1], &n.ranges[2]);
        let _ = writeln!(
            self.out,
            "    // Bit i: point x0 + i lies in the nest's in-plane ranges.\n    \
             unsigned int pacc_xy = 0u;\n    \
             if (pacc_in && {y} >= {} && {y} < {}) {{\n        \
             #pragma unroll\n        \
             for (int pacc_i = 0; pacc_i < {W}; ++pacc_i)\n            \
             if (pacc_x0 + pacc_i >= {} && pacc_x0 + pacc_i < {}) pacc_xy |= 1u << pacc_i;\n    \
             }}",
            self.bound(ry.lo, 1),
            self.bound(ry.hi, 1),
            self.bound(rx.lo, 2),
            self.bound(rx.hi, 2),
        );
        let first = "pacc_in && pacc_zb < pacc_ze";
        for (&a, c) in &v.march.cached {
            let (t, arr) = (self.elem_c(a), self.array_c(a));
            let regs: Vec<String> = (c.lo..=c.hi)
                .map(|dz| format!("{}[{W}] = {{}}", queue_reg(a, dz)))
                .chain(std::iter::once(format!("pacc_next{a}[{W}] = {{}}")))
                .collect();
            let _ = writeln!(
                self.out,
                "    {t} {};\n    if ({first}) {{",
                regs.join(", ")
            );
            for dz in c.lo..=c.hi {
                let reg = if dz == c.hi {
                    format!("pacc_next{a}")
                } else {
                    queue_reg(a, dz)
                };
                // A guarded nest asks only for planes inside the array.
                let ok = self.plane_ok(&format!("pacc_zb + ({dz})"));
                let load = format!(
                    "pacc_ld4({arr} + (pacc_zb - pacc_base + ({dz})) * pacc_pl + pacc_c, {reg});"
                );
                match ok.strip_prefix(" && ") {
                    Some(ok) => writeln!(self.out, "        if ({ok}) {load}"),
                    None => writeln!(self.out, "        {load}"),
                }
                .ok();
            }
            self.out.push_str("    }\n");
        }
        for &a in &v.march.ahead {
            let (t, arr) = (self.elem_c(a), self.array_c(a));
            let _ = writeln!(
                self.out,
                "    {t} pacc_r{a}[{W}] = {{}}, pacc_rn{a}[{W}] = {{}};\n    \
                 if ({first}) pacc_ld4({arr} + (pacc_zb - pacc_base) * pacc_pl + pacc_c, pacc_rn{a});"
            );
        }
        for t in &v.tiles {
            self.vector_tile(v, t);
        }
    }

    /// One staged array's tile, the thread's place in it, and the halo vectors (and the centre,
    /// when no queue holds it) of the first plane.
    fn vector_tile(&mut self, v: &Vector, t: &VTile) {
        let a = t.array;
        let (ty, arr) = (self.elem_c(a), self.array_c(a));
        let name = c_ident(&self.f.arrays[a].name.to_string());
        let y = self.loop_vars[1].clone();
        let (ylo, yhi) = (t.lo[0], t.hi[0]);
        let _ = writeln!(
            self.out,
            "    // `{name}` in shared memory: two tiles (this plane, and the next one's while it is read).\n    \
             __shared__ __align__(16) {ty} pacc_vm{a}[2 * {area}];\n    \
             const int pacc_vw{a} = PACC_VBX * {W} + {w2};\n    \
             const int pacc_vi{a} = (pacc_ty + {ylo}) * pacc_vw{a} + {W} + {W} * pacc_tx;\n    \
             int pacc_vo{a}_0 = 0, pacc_vo{a}_1 = {area};",
            area = Vector::area(t),
            w2 = 2 * W,
        );
        let zb = "(pacc_zb - pacc_base) * pacc_pl + pacc_c";
        if v.own_centre(a) {
            let _ = writeln!(
                self.out,
                "    {ty} pacc_vc{a}[{W}] = {{}}, pacc_vcn{a}[{W}] = {{}};\n    \
                 if (pacc_in && pacc_zb < pacc_ze) pacc_ld4({arr} + {zb}, pacc_vcn{a});"
            );
        }
        if t.lo[1] + t.hi[1] > 0 {
            let left = if t.lo[1] > 0 { "pacc_tx == 0" } else { "false" };
            let right = if t.hi[1] > 0 {
                "pacc_tx == PACC_VBX - 1"
            } else {
                "false"
            };
            let _ = writeln!(
                self.out,
                "    // The x-halo vector this thread loads (offset 0: none): left of the block's row, or right of it.\n    \
                 const int pacc_vxo{a} = {left} ? -{W} : ({right} ? {W} : 0);\n    \
                 const bool pacc_vxv{a} = pacc_vxo{a} != 0 && {y} < pacc_n1 && pacc_x0 + pacc_vxo{a} >= 0 && pacc_x0 + pacc_vxo{a} < pacc_n2;\n    \
                 {ty} pacc_vx{a}[{W}] = {{}};\n    \
                 if (pacc_vxv{a} && pacc_zb < pacc_ze) pacc_ld4({arr} + {zb} + pacc_vxo{a}, pacc_vx{a});"
            );
        }
        if ylo + yhi > 0 {
            let _ = writeln!(
                self.out,
                "    // The y-halo row this thread loads (offset 0: none): above the block's rows, or below them.\n    \
                 const int pacc_vyo{a} = pacc_ty < {ylo} ? -{ylo} : (pacc_ty >= PACC_VBY - {yhi} ? {yhi} : 0);\n    \
                 const bool pacc_vyv{a} = pacc_vyo{a} != 0 && pacc_x0 < pacc_n2 && {y} + pacc_vyo{a} >= 0 && {y} + pacc_vyo{a} < pacc_n1;\n    \
                 {ty} pacc_vy{a}[{W}] = {{}};\n    \
                 if (pacc_vyv{a} && pacc_zb < pacc_ze) pacc_ld4({arr} + {zb} + pacc_vyo{a} * pacc_rp, pacc_vy{a});"
            );
        }
    }

    /// The march along axis 0: next loads, tile stores and the step's barrier, the points of
    /// the vector, the gathered stores, and the queues' and tiles' turn.
    fn vector_loop(&mut self, n: &Nest, v: &Vector, reds: &[usize]) {
        let z = self.loop_vars[0].clone();
        let _ = writeln!(
            self.out,
            "    #pragma unroll PACC_VUNROLL\n    for (long long {z} = pacc_zb; {z} < pacc_ze; ++{z}) {{\n        \
             const long long pacc_av = ({z} - pacc_base) * pacc_pl + pacc_c;\n        \
             const bool pacc_more = pacc_in && {z} + 1 < pacc_ze;"
        );
        for (&a, c) in &v.march.cached {
            let arr = self.array_c(a);
            let ok = self.plane_ok(&format!("{z} + ({})", c.hi + 1));
            let _ = writeln!(
                self.out,
                "        pacc_cp4({}, pacc_next{a});\n        \
                 if (pacc_more{ok}) pacc_ld4({arr} + pacc_av + ({}) * pacc_pl, pacc_next{a});",
                queue_reg(a, c.hi),
                c.hi + 1
            );
        }
        for &a in &v.march.ahead {
            let arr = self.array_c(a);
            let _ = writeln!(
                self.out,
                "        pacc_cp4(pacc_r{a}, pacc_rn{a});\n        \
                 if (pacc_more) pacc_ld4({arr} + pacc_av + pacc_pl, pacc_rn{a});"
            );
        }
        for t in &v.tiles {
            self.vector_tile_step(v, t);
        }
        self.out.push_str("        __syncthreads();\n");
        self.vector_points(n, v, reds);
        for (&a, c) in &v.march.cached {
            for dz in c.lo..c.hi {
                let _ = writeln!(
                    self.out,
                    "        pacc_cp4({}, {});",
                    queue_reg(a, dz),
                    queue_reg(a, dz + 1)
                );
            }
        }
        for t in &v.tiles {
            let a = t.array;
            let _ = writeln!(
                self.out,
                "        {{ const int pacc_o = pacc_vo{a}_0; pacc_vo{a}_0 = pacc_vo{a}_1; pacc_vo{a}_1 = pacc_o; }}"
            );
        }
        self.out.push_str("    }\n");
    }

    /// A tile's stores of this plane (the centre vector and the thread's halo vectors, loaded
    /// one step earlier) and the next plane's loads.
    fn vector_tile_step(&mut self, v: &Vector, t: &VTile) {
        let a = t.array;
        let arr = self.array_c(a);
        let dst = format!("pacc_vm{a} + pacc_vo{a}_0 + pacc_vi{a}");
        let next = "pacc_av + pacc_pl";
        if v.own_centre(a) {
            let _ = writeln!(
                self.out,
                "        pacc_cp4(pacc_vc{a}, pacc_vcn{a});\n        \
                 if (pacc_more) pacc_ld4({arr} + {next}, pacc_vcn{a});"
            );
        }
        let _ = writeln!(
            self.out,
            "        if (pacc_in) pacc_st4({dst}, {});",
            v.centre(a)
        );
        let z = self.loop_vars[0].clone();
        let more = format!("{z} + 1 < pacc_ze");
        if t.lo[1] + t.hi[1] > 0 {
            let _ = writeln!(
                self.out,
                "        if (pacc_vxv{a}) pacc_st4({dst} + pacc_vxo{a}, pacc_vx{a});\n        \
                 if (pacc_vxv{a} && {more}) pacc_ld4({arr} + {next} + pacc_vxo{a}, pacc_vx{a});"
            );
        }
        if t.lo[0] + t.hi[0] > 0 {
            let _ = writeln!(
                self.out,
                "        if (pacc_vyv{a}) pacc_st4({dst} + pacc_vyo{a} * pacc_vw{a}, pacc_vy{a});\n        \
                 if (pacc_vyv{a} && {more}) pacc_ld4({arr} + {next} + pacc_vyo{a} * pacc_rp, pacc_vy{a});"
            );
        }
    }

    /// Whether every point of the vector runs the nest body, points outside the ranges
    /// included, so that the points' chains interleave instead of each waiting behind its own
    /// branch. Only where that cannot reach memory or undefined behaviour: every write waits in
    /// a register (stored by the mask), every read comes from a register or a tile (a load
    /// through the L1 at a point outside the ranges could leave the array), and
    /// `analysis::speculate` finds nothing that can go wrong on the values there.
    fn speculates(&mut self, n: &Nest, v: &Vector) -> bool {
        let (mut writes, mut reads) = (true, true);
        crate::analysis::walk_stmts(
            &n.body,
            &mut |s| {
                if let KStmt::Write { access, .. } = s {
                    writes &= v.gathered.contains(&access.array);
                }
            },
            &mut |e| {
                if let KExprKind::Read(a) = &e.kind {
                    reads &= v.read(a.array, &a.offsets).is_some();
                }
            },
        );
        self.env.locals.clear();
        writes && reads && crate::analysis::speculate::speculation_safe(&n.body, &mut self.env)
    }

    /// The points of the thread's vector: the tile rows they read, then the nest body per point
    /// (every point where [`Self::speculates`], otherwise the points in the ranges) with its
    /// reductions, then the gathered stores.
    fn vector_points(&mut self, n: &Nest, v: &Vector, reds: &[usize]) {
        let z = self.loop_vars[0].clone();
        let x = self.loop_vars[2].clone();
        self.out.push_str("        if (pacc_xy != 0u) {\n");
        for t in &v.tiles {
            let a = t.array;
            let ty = self.elem_c(a);
            let src = format!("pacc_vm{a} + pacc_vo{a}_0 + pacc_vi{a}");
            for &dy in &t.rows {
                let _ = writeln!(
                    self.out,
                    "            {ty} {r}[{W}];\n            pacc_ld4({src} + ({dy}) * pacc_vw{a}, {r});",
                    r = row_reg(a, dy)
                );
            }
            if t.lo[1] + t.hi[1] > 0 {
                // The thread's row with a vector on each side: x neighbours at constant indices.
                let _ = writeln!(
                    self.out,
                    "            {ty} pacc_vrow{a}[{w3}];\n            \
                     pacc_ld4({src} - {W}, pacc_vrow{a});\n            \
                     pacc_cp4(pacc_vrow{a} + {W}, {c});\n            \
                     pacc_ld4({src} + {W}, pacc_vrow{a} + {w2});",
                    c = v.centre(a),
                    w2 = 2 * W,
                    w3 = 3 * W,
                );
            }
        }
        for &a in &v.gathered {
            let _ = writeln!(self.out, "            {} pacc_w{a}[{W}];", self.elem_c(a));
        }
        let _ = writeln!(
            self.out,
            "            #pragma unroll\n            for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) {{\n                \
             const long long {x} = pacc_x0 + pacc_i;\n                \
             const long long pacc_at = pacc_av + pacc_i;\n                \
             const bool pacc_xyi = (pacc_xy >> pacc_i) & 1u;"
        );
        self.reduction_accumulators(reds, false, "                ");
        let speculate = self.speculates(n, v);
        self.out.push_str(if speculate {
            "                {\n"
        } else {
            "                if (pacc_xyi) {\n"
        });
        self.time_binding(
            "                    ",
            crate::codegen::cpu::uses_time_stmts(&n.body),
        );
        self.env.locals.clear();
        self.serve = vec![Box::new(v.clone()), Box::new(v.march.clone())];
        self.stmts(&n.body, 5);
        self.serve.clear();
        self.out.push_str("                }\n");
        for (j, &r) in reds.iter().enumerate() {
            let red = &self.f.reductions[r];
            let name = c_ident(&red.name.to_string());
            let acc = combine(red.op, red.ty, &format!("pacc_acc{j}"), &name);
            let _ = writeln!(
                self.out,
                "                if (pacc_xyi && {z} >= pacc_own0 && {z} < pacc_own1) pacc_acc{j} = {acc};"
            );
        }
        self.out.push_str("            }\n");
        for &a in &v.gathered {
            let arr = self.array_c(a);
            let _ = writeln!(
                self.out,
                "            if (pacc_xy == {full}u) pacc_st4({arr} + pacc_av, pacc_w{a});\n            \
                 else {{\n                \
                 #pragma unroll\n                \
                 for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if ((pacc_xy >> pacc_i) & 1u) {arr}[pacc_av + pacc_i] = pacc_w{a}[pacc_i];\n            \
                 }}",
                full = (1u32 << W) - 1
            );
        }
        self.out.push_str("        }\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_counts_two_tiles_per_staged_array_and_the_reductions() {
        let v = Vector {
            tiles: vec![VTile {
                array: 1,
                lo: [4, 4],
                hi: [4, 4],
                elem_bytes: 4,
                rows: vec![-4, -3, -2, -1, 1, 2, 3, 4],
            }],
            reduction_bytes: 4096,
            ..Vector::default()
        };
        assert_eq!(
            v.condition(),
            "PACC_VX == 4 && PACC_VBX >= 2 && PACC_VBY >= 8 && \
             2 * (PACC_VBX * 4 + 8) * (PACC_VBY + 8) * 4 + 4096 <= 49152"
        );
        // No tile: only the form and the block's width matter.
        assert_eq!(
            Vector::default().condition(),
            "PACC_VX == 4 && PACC_VBX >= 2 && PACC_VBY >= 1 && 0 <= 49152"
        );
    }

    #[test]
    fn reads_map_to_vector_registers() {
        let mut v = Vector {
            tiles: vec![VTile {
                array: 2,
                lo: [1, 2],
                hi: [2, 1],
                elem_bytes: 4,
                rows: vec![-1, 2],
            }],
            ..Vector::default()
        };
        v.march.ahead.push(0);
        v.march
            .cached
            .insert(2, super::super::queue::Cache { lo: -1, hi: 1 });
        assert_eq!(v.read(0, &[0, 0, 0]).unwrap(), "pacc_r0[pacc_i]");
        assert_eq!(v.read(2, &[-1, 0, 0]).unwrap(), "pacc_q2_m1[pacc_i]");
        assert_eq!(v.read(2, &[0, -1, 0]).unwrap(), "pacc_vr2_m1[pacc_i]");
        assert_eq!(
            v.read(2, &[0, 0, -2]).unwrap(),
            "pacc_vrow2[4 + pacc_i + (-2)]"
        );
        // Diagonals, other planes' in-plane reads and unstaged arrays go through the L1.
        assert_eq!(v.read(2, &[0, 1, 1]), None);
        assert_eq!(v.read(2, &[1, 1, 0]), None);
        assert_eq!(v.read(3, &[0, 1, 0]), None);
        // The centre of a staged array comes from its queue when it has one.
        assert_eq!(v.centre(2), "pacc_q2_0");
        v.march.cached.clear();
        assert_eq!(v.centre(2), "pacc_vc2");
        assert_eq!(v.read(2, &[0, 0, 0]).unwrap(), "pacc_vc2[pacc_i]");
    }
}
