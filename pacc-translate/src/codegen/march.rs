//! Marching kernels: the fast CUDA form of a nest (docs/internals.md §3).
//!
//! A thread block covers a tile of the plane (the inner axes) and walks a segment of planes along
//! axis 0, one thread per column. Planes of an array read at several axis-0 offsets of the
//! thread's own column stay in registers, a queue that shifts by one plane per step, so each
//! plane comes from memory once per segment instead of once per reader. Arrays read only at the
//! point itself are loaded one step ahead into a register, so the load overlaps the step before.
//! Reads at in-plane offsets come from tiles in shared memory in the staged form (`stage.rs`),
//! or through the cache in the L1 form: the block's threads load each other's columns in the
//! same step, so these hit the L1. The arithmetic is the plain kernel's, so results are the
//! same bits.

use super::emit::{kernel_name, reduction_buffer_bytes, Gen};
use super::queue::{queue_reg, March};
use super::stage::Stage;
use crate::analysis::Analysis;
use crate::ir::Nest;
use std::fmt::Write;

/// Threads of a marching block along the fastest axis, by default.
pub const BLOCK_X: u32 = 64;
/// Threads along the second-fastest axis (3D), by default.
pub const BLOCK_Y_3D: u32 = 8;
/// Threads along the only in-plane axis of a 2D nest, by default.
pub const BLOCK_X_2D: u32 = 256;

/// The default thread block of a marching kernel, `[x, y]`.
pub fn default_block(ndim: usize) -> [u32; 2] {
    if ndim == 3 {
        [BLOCK_X, BLOCK_Y_3D]
    } else {
        [BLOCK_X_2D, 1]
    }
}

/// The block's segment of planes, `pacc_zb .. pacc_ze`, from grid index `seg_idx`.
fn segment(seg_idx: &str) -> String {
    format!(
        "    const long long pacc_zb = pacc_z0 + (long long){seg_idx} * pacc_seg;\n    \
         const long long pacc_ze = pacc_zb + pacc_seg < pacc_z1 ? pacc_zb + pacc_seg : pacc_z1;\n"
    )
}

impl Gen<'_> {
    /// The marching form of nest `k`: the staged form (in-plane reads from shared memory)
    /// under `#if`, when the nest has in-plane reads to stage, and the L1 form.
    pub(super) fn marching_kernel(&mut self, k: usize, n: &Nest, an: &Analysis) {
        let f = self.f;
        let mut stage = Stage::of(n, &an.writes[k], f.ndim, |a| f.arrays[a].elem.size());
        stage.reduction_bytes = an.reductions[k]
            .iter()
            .map(|&r| reduction_buffer_bytes(f.reductions[r].ty))
            .sum();
        if stage.is_empty() {
            self.marching_form(k, n, an, None);
            return;
        }
        let _ = writeln!(
            self.out,
            "// Staged form (in-plane reads from shared memory) when PACC_STAGE is set and the tiles fit; else the L1 form.\n#if {}",
            stage.condition()
        );
        self.marching_form(k, n, an, Some(&stage));
        self.out.push_str("#else\n");
        self.marching_form(k, n, an, None);
        self.out.push_str("#endif\n");
    }

    fn marching_form(&mut self, k: usize, n: &Nest, an: &Analysis, stage: Option<&Stage>) {
        let f = self.f;
        let march = March::of(n, &an.writes[k], f.ndim);
        let params = self.kernel_params(k, an, true);
        let _ = writeln!(
            self.out,
            "extern \"C\" __global__ void __launch_bounds__(PACC_BX * PACC_BY, PACC_MINB) {}(\n    {})\n{{",
            kernel_name(f, k),
            params.join(",\n    ")
        );
        let reds = an.reductions[k].clone();
        if f.ndim == 3 {
            // The single-row form stays as measured: the rows form with one row ran at 0.92x
            // of it for `propagate` at 512³ on the H100.
            self.out.push_str("#if PACC_RY > 1\n");
            self.rows_form(n, &march, stage, &reds);
            self.out.push_str("#else\n");
            self.single_row_form(n, &march, stage, &reds);
            self.out.push_str("#endif\n");
        } else {
            self.single_row_form(n, &march, stage, &reds);
        }
        self.block_reductions(&reds, true);
        self.out.push_str("}\n");
    }

    /// One column per thread: the queues, the registers loaded ahead and, staged, the thread's
    /// tile cells, then the march along axis 0.
    fn single_row_form(&mut self, n: &Nest, march: &March, stage: Option<&Stage>, reds: &[usize]) {
        let lv = self.loop_vars.clone();
        self.march_prologue(n, &lv);
        self.reduction_accumulators(reds, true, "    ");
        self.fill_queues(march);
        self.fill_ahead(march);
        if let Some(s) = stage {
            self.stage_prologue(s, march);
        }
        let z = &lv[0];
        let _ = writeln!(
            self.out,
            "    #pragma unroll PACC_UNROLL\n    for (long long {z} = pacc_zb; {z} < pacc_ze; ++{z}) {{\n        \
             const long long pacc_at = ({z} - pacc_base) * pacc_pl + pacc_c;"
        );
        self.advance_queues(march);
        self.advance_ahead(march);
        self.prefetch_l2(march);
        if let Some(s) = stage {
            self.stage_step(s, march, false);
            self.out.push_str("        __syncthreads();\n");
        }
        self.compute(n, march, stage, reds);
        if let Some(s) = stage {
            self.stage_rotate(s);
        }
        let _ = writeln!(self.out, "    }}");
    }

    /// The step's points: the nest body where the point is inside the ranges, the reductions'
    /// contributions, and the queues' shift by one plane.
    fn compute(&mut self, n: &Nest, march: &March, stage: Option<&Stage>, reds: &[usize]) {
        self.reduction_accumulators(reds, false, "        ");
        let _ = writeln!(self.out, "        if (pacc_xy) {{");
        self.time_binding(
            "            ",
            crate::codegen::cpu::uses_time_stmts(&n.body),
        );
        self.env.locals.clear();
        self.serve = vec![Box::new(march.clone())];
        if let Some(s) = stage {
            self.serve.push(Box::new(s.clone()));
        }
        self.stmts(&n.body, 3);
        self.serve.clear();
        let _ = writeln!(self.out, "        }}");
        self.fold_reductions(reds);
        self.shift_queues(march);
    }

    /// The 3D form with `PACC_RY` rows per thread: thread `(tx, ty)` computes rows
    /// `ty, ty + BY, ..` of a tile `BY * RY` rows high, so the loop control, the plane's
    /// addresses, the y-halo cell and the barrier are shared by `RY` points (1.16x at 512³ for
    /// `propagate` with `RY = 4` on an H100, `benches/results/2026-11-25-h100-row-pitch/`).
    /// Each row's registers live in arrays indexed by the unrolled row loop: every phase copies
    /// them into locals of the names the single-row code uses, and back.
    fn rows_form(&mut self, n: &Nest, march: &March, stage: Option<&Stage>, reds: &[usize]) {
        let lv = self.loop_vars.clone();
        let (x, z) = (&lv[2], &lv[0]);
        let _ = writeln!(
            self.out,
            "    const int pacc_tx = threadIdx.x;\n    \
             const int pacc_ty = threadIdx.y;\n    \
             const long long {x} = (long long)blockIdx.x * PACC_BX + pacc_tx;"
        );
        self.out.push_str(&segment("blockIdx.z"));
        self.out
            .push_str("    const long long pacc_pl = pacc_n1 * pacc_rp;\n");
        self.reduction_accumulators(reds, true, "    ");
        if let Some(s) = stage {
            self.stage_tiles(s);
        }
        let vars = self.row_vars(march, stage);
        for (ty, name) in &vars {
            let _ = writeln!(self.out, "    {ty} {name}_v[PACC_RY];");
        }
        // Row prologue: coordinates, queues, registers loaded ahead, the row's tile cells.
        self.row_loop("    ", None, &vars, |g| {
            g.row_coordinates(n);
            g.fill_queues(march);
            g.fill_ahead(march);
            if let Some(s) = stage {
                g.stage_row_prologue(s, march);
            }
        });
        if let Some(s) = stage {
            self.stage_y_prologue(s);
        }
        let _ = writeln!(
            self.out,
            "    #pragma unroll PACC_UNROLL\n    for (long long {z} = pacc_zb; {z} < pacc_ze; ++{z}) {{\n        \
             const long long pacc_zo = ({z} - pacc_base) * pacc_pl;"
        );
        let at = Some("const long long pacc_at = pacc_zo + pacc_c;");
        self.row_loop("        ", at, &vars, |g| {
            g.advance_queues(march);
            g.advance_ahead(march);
            g.prefetch_l2(march);
            if let Some(s) = stage {
                g.stage_step(s, march, true);
            }
        });
        if let Some(s) = stage {
            self.stage_y_step(s);
            self.out.push_str("        __syncthreads();\n");
        }
        self.row_loop("        ", at, &vars, |g| g.compute(n, march, stage, reds));
        if let Some(s) = stage {
            self.stage_rotate(s);
        }
        let _ = writeln!(self.out, "    }}");
    }

    /// One unrolled loop over the thread's rows at indentation `ind`: the row's variables and
    /// `pre` (`None` in the prologue, whose body declares them), the code `body` writes
    /// (indented one level further), and the variables copied back.
    fn row_loop(
        &mut self,
        ind: &str,
        pre: Option<&str>,
        vars: &[(String, String)],
        body: impl FnOnce(&mut Self),
    ) {
        let _ = writeln!(
            self.out,
            "{ind}#pragma unroll\n{ind}for (int pacc_r = 0; pacc_r < PACC_RY; ++pacc_r) {{"
        );
        let saved = std::mem::take(&mut self.out);
        if let Some(pre) = pre {
            for (ty, name) in vars {
                let _ = writeln!(self.out, "{ind}{ty} {name} = {name}_v[pacc_r];");
            }
            let _ = writeln!(self.out, "{ind}{pre}");
        }
        body(self);
        for (_, name) in vars {
            let _ = writeln!(self.out, "{ind}{name}_v[pacc_r] = {name};");
        }
        let inner = std::mem::replace(&mut self.out, saved);
        // The emitters write at the depth of `ind`; the loop nests them one level deeper.
        for line in inner.lines() {
            let pad = if line.starts_with('#') { "" } else { "    " };
            let _ = writeln!(self.out, "{pad}{line}");
        }
        let _ = writeln!(self.out, "{ind}}}");
    }

    /// The row's coordinate, its column in the plane, and the in-plane guards.
    fn row_coordinates(&mut self, n: &Nest) {
        let lv = self.loop_vars.clone();
        let (y, x) = (&lv[1], &lv[2]);
        let _ = writeln!(
            self.out,
            "    const long long {y} = (long long)blockIdx.y * (PACC_BY * PACC_RY) + pacc_ty + pacc_r * PACC_BY;\n    \
             const long long pacc_c = {y} * pacc_rp + {x};\n    \
             const bool pacc_in = {x} < pacc_n2 && {y} < pacc_n1;"
        );
        let guard = self.in_plane_guard(n, &lv);
        let _ = writeln!(self.out, "    const bool pacc_xy = {guard};");
    }

    /// `pacc_in` and the nest's ranges along the in-plane axes.
    fn in_plane_guard(&self, n: &Nest, lv: &[String]) -> String {
        let mut guard = vec!["pacc_in".to_string()];
        for (axis, (v, r)) in lv.iter().zip(&n.ranges).enumerate().skip(1) {
            guard.push(format!("{v} >= {}", self.bound(r.lo, axis)));
            guard.push(format!("{v} < {}", self.bound(r.hi, axis)));
        }
        guard.join(" && ")
    }

    /// The variables each row of a thread keeps across phases, with their C types.
    fn row_vars(&self, m: &March, stage: Option<&Stage>) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = [
            ("long long", self.loop_vars[1].as_str()),
            ("long long", "pacc_c"),
            ("bool", "pacc_in"),
            ("bool", "pacc_xy"),
        ]
        .iter()
        .map(|(t, n)| (t.to_string(), n.to_string()))
        .collect();
        for (&a, c) in &m.cached {
            let t = self.elem_c(a).to_string();
            v.extend((c.lo..=c.hi).map(|dz| (t.clone(), queue_reg(a, dz))));
            v.push((t, format!("pacc_next{a}")));
        }
        for &a in &m.ahead {
            let t = self.elem_c(a).to_string();
            v.push((t.clone(), format!("pacc_r{a}")));
            v.push((t, format!("pacc_rn{a}")));
        }
        if let Some(s) = stage {
            v.extend(self.stage_row_vars(s));
        }
        v
    }

    /// Thread coordinates, the segment of planes and the in-plane guard.
    fn march_prologue(&mut self, n: &Nest, lv: &[String]) {
        let nd = self.f.ndim;
        let mut w = String::new();
        let _ = writeln!(w, "    const int pacc_tx = threadIdx.x;");
        if nd == 3 {
            let _ = writeln!(w, "    const int pacc_ty = threadIdx.y;");
        }
        let x = &lv[nd - 1];
        if self.f.is_line() {
            // A 1D program: planes of one point (`lower/line.rs`), so a thread per column would
            // leave all but one thread of the block idle. The block's threads split its segment
            // instead, each marching planes of its own with its own queues (no barrier in the
            // loop: a 1D nest has no in-plane reads to stage).
            let _ = writeln!(w, "    const long long {x} = (long long)blockIdx.x;");
            let _ = writeln!(
                w,
                "    const long long pacc_sb = pacc_z0 + (long long)blockIdx.y * pacc_seg;\n    \
                 const long long pacc_se = pacc_sb + pacc_seg < pacc_z1 ? pacc_sb + pacc_seg : pacc_z1;\n    \
                 const long long pacc_sub = (pacc_se - pacc_sb + PACC_BX - 1) / PACC_BX;\n    \
                 const long long pacc_zt = pacc_sb + (long long)pacc_tx * pacc_sub;\n    \
                 const long long pacc_zb = pacc_zt < pacc_se ? pacc_zt : pacc_se;\n    \
                 const long long pacc_ze = pacc_zb + pacc_sub < pacc_se ? pacc_zb + pacc_sub : pacc_se;\n    \
                 const long long pacc_pl = pacc_rp;\n    \
                 const long long pacc_c = {x};\n    \
                 const bool pacc_in = {x} < pacc_n1;"
            );
            let _ = writeln!(
                w,
                "    const bool pacc_xy = {};",
                self.in_plane_guard(n, lv)
            );
            self.out.push_str(&w);
            return;
        }
        let _ = writeln!(
            w,
            "    const long long {x} = (long long)blockIdx.x * PACC_BX + pacc_tx;"
        );
        let (seg_idx, inside, pl, c) = if nd == 3 {
            let y = &lv[1];
            let _ = writeln!(
                w,
                "    const long long {y} = (long long)blockIdx.y * PACC_BY + pacc_ty;"
            );
            (
                "blockIdx.z",
                format!("{x} < pacc_n2 && {y} < pacc_n1"),
                "pacc_n1 * pacc_rp",
                format!("{y} * pacc_rp + {x}"),
            )
        } else {
            ("blockIdx.y", format!("{x} < pacc_n1"), "pacc_rp", x.clone())
        };
        w.push_str(&segment(seg_idx));
        let _ = writeln!(
            w,
            "    const long long pacc_pl = {pl};\n    \
             const long long pacc_c = {c};\n    \
             const bool pacc_in = {inside};"
        );
        let _ = writeln!(
            w,
            "    const bool pacc_xy = {};",
            self.in_plane_guard(n, lv)
        );
        self.out.push_str(&w);
    }

    /// Registers for arrays read only at the point: this step's value and the next step's,
    /// loaded one step ahead.
    fn fill_ahead(&mut self, m: &March) {
        for &a in &m.ahead {
            let t = self.elem_c(a);
            let arr = self.array_c(a);
            let _ = writeln!(
                self.out,
                "    {t} pacc_r{a} = ({t})0, pacc_rn{a} = ({t})0;\n    \
                 if (pacc_in && pacc_zb < pacc_ze) pacc_rn{a} = {arr}[(pacc_zb - pacc_base) * pacc_pl + pacc_c];"
            );
        }
    }

    fn advance_ahead(&mut self, m: &March) {
        let z = self.loop_vars[0].clone();
        for &a in &m.ahead {
            let arr = self.array_c(a);
            let _ = writeln!(
                self.out,
                "        pacc_r{a} = pacc_rn{a};\n        \
                 if (pacc_in && {z} + 1 < pacc_ze) pacc_rn{a} = {arr}[pacc_at + pacc_pl];"
            );
        }
    }

    /// With `PACC_PREFETCH` = `D` > 0, asks the L2 for the planes `D` steps beyond the ones the
    /// registers load next, so those loads find them in the L2. A hint: no register holds the
    /// data, and the planes lie within the segment's reads.
    fn prefetch_l2(&mut self, m: &March) {
        let z = self.loop_vars[0].clone();
        let mut lines = Vec::new();
        for (&a, c) in &m.cached {
            lines.push((a, c.hi + 1));
        }
        for &a in &m.ahead {
            lines.push((a, 1));
        }
        if lines.is_empty() {
            return;
        }
        let _ = writeln!(
            self.out,
            "#if PACC_PREFETCH > 0\n        if (pacc_in && {z} + 1 + PACC_PREFETCH < pacc_ze) {{"
        );
        for (a, off) in lines {
            let arr = self.array_c(a);
            // A guarded nest asks only for planes inside the array.
            let ok = self.plane_ok(&format!("{z} + ({off} + PACC_PREFETCH)"));
            let pre = ok
                .strip_prefix(" && ")
                .map_or(String::new(), |c| format!("if ({c}) "));
            let _ = writeln!(
                self.out,
                "            {pre}asm volatile(\"prefetch.global.L2 [%0];\" :: \"l\"({arr} + pacc_at + ({off} + PACC_PREFETCH) * pacc_pl));"
            );
        }
        let _ = writeln!(self.out, "        }}\n#endif");
    }

    /// Queue slots `lo..hi` get planes `zb + lo .. zb + hi` before the first step, and
    /// `pacc_n<a>` the plane of slot `hi`. Each step moves `pacc_n<a>` into slot `hi` and at once
    /// starts loading the next step's plane, so that load overlaps this step's work.
    fn fill_queues(&mut self, m: &March) {
        for (&a, c) in &m.cached {
            let t = self.elem_c(a);
            let arr = self.array_c(a);
            let regs: Vec<String> = (c.lo..=c.hi)
                .map(|dz| format!("{} = ({t})0", queue_reg(a, dz)))
                .chain(std::iter::once(format!("pacc_next{a} = ({t})0")))
                .collect();
            let _ = writeln!(self.out, "    {t} {};", regs.join(", "));
            let _ = writeln!(self.out, "    if (pacc_in && pacc_zb < pacc_ze) {{");
            for dz in c.lo..=c.hi {
                let reg = if dz == c.hi {
                    format!("pacc_next{a}")
                } else {
                    queue_reg(a, dz)
                };
                let ok = self.plane_ok(&format!("pacc_zb + ({dz})"));
                let load =
                    format!("{reg} = {arr}[(pacc_zb - pacc_base + ({dz})) * pacc_pl + pacc_c];");
                match ok.strip_prefix(" && ") {
                    Some(ok) => writeln!(self.out, "        if ({ok}) {load}"),
                    None => writeln!(self.out, "        {load}"),
                }
                .ok();
            }
            let _ = writeln!(self.out, "    }}");
        }
    }

    fn advance_queues(&mut self, m: &March) {
        let z = self.loop_vars[0].clone();
        for (&a, c) in &m.cached {
            let arr = self.array_c(a);
            let ok = self.plane_ok(&format!("{z} + ({})", c.hi + 1));
            let _ = writeln!(
                self.out,
                "        {} = pacc_next{a};\n        \
                 if (pacc_in && {z} + 1 < pacc_ze{ok}) pacc_next{a} = {arr}[pacc_at + ({}) * pacc_pl];",
                queue_reg(a, c.hi),
                c.hi + 1
            );
        }
    }

    fn shift_queues(&mut self, m: &March) {
        for (&a, c) in &m.cached {
            for dz in c.lo..c.hi {
                let _ = writeln!(
                    self.out,
                    "        {} = {};",
                    queue_reg(a, dz),
                    queue_reg(a, dz + 1)
                );
            }
        }
    }
}
