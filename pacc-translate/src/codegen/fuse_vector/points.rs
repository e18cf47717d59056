//! Phase B of the fused vector form: each invocation's points, the rows they read as vectors,
//! the point statements, the queues' push and the outputs.

use super::*;
use crate::ir::KStmt;

/// How the body of one invocation reads and writes in the vector form: point `pacc_i` of the
/// thread's vector.
#[derive(Clone)]
struct VCtx {
    plan: FusePlan,
    vf: VFuse,
    inv: usize,
}

impl VCtx {
    fn column(&self, ver: Ver, dz: i64) -> String {
        let p = &self.plan;
        let c = self.inv;
        match ver {
            Ver::Input(s) => match self.vf.direct.get(&s) {
                Some(_) => format!("pacc_d{s}_{}[pacc_i]", offset_name(dz - p.sigma[c])),
                None => format!(
                    "{}[pacc_i]",
                    FuseCtx::queue_reg(ver, p.inputs[&s].hi - (dz - p.sigma[c]))
                ),
            },
            Ver::Inv(v, _) => format!(
                "{}[pacc_i]",
                FuseCtx::queue_reg(ver, p.sigma[c] - p.sigma[v] - dz)
            ),
        }
    }

    fn ring(&self, ver: Ver) -> usize {
        (self.plan.rings.iter())
            .position(|g| g.ver == ver && g.reader == self.inv)
            .expect("a ring for every in-plane read of a version")
    }

    fn read(&self, array: usize, offsets: &[i64]) -> String {
        let p = &self.plan;
        let c = self.inv;
        let ver = p.invs[c].sees[array];
        let (dz, dy, dx) = (offsets[0], offsets[1], offsets[2]);
        if dy == 0 && dx == 0 {
            return self.column(ver, dz);
        }
        // `VFuse::of` admits only reads along the axes served by a tile or a ring's rows.
        match (ver, dx) {
            (Ver::Input(s), 0) => format!("pacc_tr{s}_{}[pacc_i]", offset_name(dy)),
            (Ver::Input(s), dx) => format!("pacc_tw{s}[{W} + pacc_i + ({dx})]"),
            (Ver::Inv(..), 0) => format!(
                "pacc_q{}_{}_{}[pacc_i]",
                self.ring(ver),
                offset_name(dz),
                offset_name(dy)
            ),
            (Ver::Inv(..), dx) => format!(
                "pacc_qw{}_{}[{W} + pacc_i + ({dx})]",
                self.ring(ver),
                offset_name(dz)
            ),
        }
    }
}

impl Serve for VCtx {
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        Some(VCtx::read(self, array, offsets))
    }

    fn write(&self, array: usize) -> Option<String> {
        Some(format!(
            "pacc_w{}[pacc_i]",
            self.plan.invs[self.inv].slot[array]
        ))
    }

    fn point_read(&self, array: usize) -> Option<String> {
        let inv = &self.plan.invs[self.inv];
        let slot = inv.slot[array];
        if inv.writes.contains(&slot) {
            Some(format!("pacc_w{slot}[pacc_i]"))
        } else {
            Some(self.read(array, &[0, 0, 0]))
        }
    }
}

impl Gen<'_> {
    /// Phase B for invocation `c`: its points at plane `j - sigma` (where the thread's points
    /// lie in its window), the point statements that follow it, the push into its queues, the
    /// output and the reductions (instances from `e` on).
    pub(super) fn vfuse_invocation(
        &mut self,
        p: &FusePlan,
        vf: &VFuse,
        c: usize,
        an: &Analysis,
        e: &mut usize,
    ) {
        let f = self.f;
        let inv = p.invs[c].clone();
        let _ = writeln!(
            self.out,
            "        {{ // invocation {c}: nest {} of step {}\n            \
             const int pacc_p = pacc_j - ({});",
            inv.nest + 1,
            inv.step + 1,
            p.sigma[c],
        );
        let reds = an.reductions[inv.nest].clone();
        if !p.computes(c) {
            // Overwritten later in the group before anything reads it: nothing to compute,
            // but its queue turns with the others.
            for &w in &inv.writes {
                let _ = writeln!(
                    self.out,
                    "            {} pacc_w{w}[{W}] = {{}};",
                    f.arrays[w].elem.cuda_name()
                );
            }
            self.vfuse_push(p, c);
            self.out.push_str("        }\n");
            *e += reds.len();
            return;
        }
        let _ = writeln!(
            self.out,
            "            const bool pacc_act = pacc_win{c} != 0u && pacc_p >= pacc_zbi - {} && pacc_p < pacc_zei + {} && pacc_p >= 0 && pacc_p < pacc_n0i;",
            p.back[c],
            p.fwd[c]
        );
        for (g, ring) in p.rings.iter().enumerate().filter(|(_, g)| g.reader == c) {
            let [lo, hi] = vf.pads[g];
            for dz in ring.dlo..=ring.dhi {
                let d = dz - ring.dhi;
                let _ = writeln!(
                    self.out,
                    "            const int pacc_rb{g}_{} = (pacc_k{g} + ({d}) < 0 ? pacc_k{g} + ({d}) + {r} : pacc_k{g} + ({d})) * ({ROW} * (PACC_FVBY + {})) + pacc_ri{g};",
                    offset_name(dz),
                    lo + hi,
                    r = ring.tiles()
                );
            }
        }
        for &w in &inv.writes {
            let _ = writeln!(
                self.out,
                "            {} pacc_w{w}[{W}] = {{}};",
                f.arrays[w].elem.cuda_name()
            );
        }
        self.out.push_str("            if (pacc_act) {\n");
        let ctx = VCtx {
            plan: p.clone(),
            vf: vf.clone(),
            inv: c,
        };
        let loads = self.vfuse_preloads(&ctx);
        self.vfuse_points(&ctx, an, *e, loads);
        self.out.push_str("            }\n");
        self.vfuse_push(p, c);
        for &w in &inv.writes {
            if let Some(o) = p.output_of(c, w) {
                let _ = writeln!(
                    self.out,
                    "            if (pacc_act && pacc_out && pacc_p >= pacc_zbi && pacc_p < pacc_zei) {{\n                \
                     {elem}* pacc_od = pacc_o{o} + pacc_jo{lag};\n                \
                     if (pacc_xin == {full}u) pacc_st4(pacc_od, pacc_w{w});\n                \
                     else {{\n                    #pragma unroll\n                    \
                     for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if ((pacc_xin >> pacc_i) & 1u) pacc_od[pacc_i] = pacc_w{w}[pacc_i];\n                }}\n            }}",
                    elem = f.arrays[w].elem.cuda_name(),
                    full = (1u32 << W) - 1,
                    // The point is `lag` planes behind the column's plane `pacc_j`.
                    lag = match p.sigma[c] {
                        0 => String::new(),
                        lag => format!(" - {lag} * pacc_pl"),
                    },
                );
            }
        }
        *e += reds.len();
        self.out.push_str("        }\n");
    }

    /// The rows invocation `c` reads in its plane, as vectors: each tile row and ring row at a
    /// y offset, and the thread's row with a vector on each side where x neighbours are read.
    /// Returned as (register, load) for the caller to place. The row's middle vector is the
    /// thread's own column, copied from its register where the body reads it there anyway.
    fn vfuse_preloads(&mut self, ctx: &VCtx) -> Vec<(String, String)> {
        let f = self.f;
        let (p, vf, c) = (&ctx.plan, &ctx.vf, ctx.inv);
        let mut rows: BTreeMap<(Ver, i64), (Vec<i64>, bool)> = BTreeMap::new();
        for r in vf.reads.iter().filter(|r| r.inv == c) {
            let [dz, dy, dx] = r.off;
            if (dy, dx) == (0, 0) || !on_axis(&r.off) {
                continue;
            }
            let served = match r.ver {
                Ver::Input(s) => vf.tile(s).is_some_and(|t| t.at == dz - p.sigma[c]),
                Ver::Inv(..) => true,
            };
            if !served {
                continue;
            }
            let entry = rows.entry((r.ver, dz)).or_default();
            if dx == 0 && !entry.0.contains(&dy) {
                entry.0.push(dy);
            }
            entry.1 |= dx != 0;
        }
        let mut loads = Vec::new();
        for ((ver, dz), (mut dys, xs)) in rows {
            dys.sort_unstable();
            let (base, row, wide, sl) = match ver {
                Ver::Input(s) => (
                    format!("pacc_t{s} + pacc_to{s} + pacc_ti{s}"),
                    format!("pacc_tr{s}_"),
                    format!("pacc_tw{s}"),
                    s,
                ),
                Ver::Inv(_, sl) => {
                    let g = ctx.ring(ver);
                    (
                        format!("pacc_r{g} + pacc_rb{g}_{}", offset_name(dz)),
                        format!("pacc_q{g}_{}_", offset_name(dz)),
                        format!("pacc_qw{g}_{}", offset_name(dz)),
                        sl,
                    )
                }
            };
            let t = f.arrays[sl].elem.cuda_name();
            for dy in dys {
                let reg = format!("{row}{}", offset_name(dy));
                let load = format!(
                    "                {t} {reg}[{W}]; pacc_ld4({base} + ({dy}) * {ROW}, {reg});\n"
                );
                loads.push((reg, load));
            }
            if xs {
                let own =
                    (vf.reads.iter()).any(|r| r.inv == c && r.ver == ver && r.off == [dz, 0, 0]);
                let middle = if own {
                    let col = ctx.column(ver, dz);
                    format!(
                        "pacc_cp4({wide} + {W}, {});",
                        col.trim_end_matches("[pacc_i]")
                    )
                } else {
                    format!("pacc_ld4({base}, {wide} + {W});")
                };
                let load = format!(
                    "                {t} {wide}[{}]; pacc_ld4({base} - {W}, {wide}); {middle} pacc_ld4({base} + {W}, {wide} + {});\n",
                    3 * W,
                    2 * W
                );
                loads.push((wide, load));
            }
        }
        loads
    }

    /// The thread's points of invocation `c`: each keeps its previous version, and where it
    /// lies in the nest's ranges the body runs, then the reductions; then the point statements.
    /// Where every point runs the body, its leading `let`s are computed first for all points
    /// (`sums.rs`), with the rows `loads` as their terms need them; the other rows load before
    /// the point loop.
    fn vfuse_points(
        &mut self,
        ctx: &VCtx,
        an: &Analysis,
        e: usize,
        mut loads: Vec<(String, String)>,
    ) {
        let f = self.f;
        let c = ctx.inv;
        let inv = ctx.plan.invs[c].clone();
        let nest = f.nests().nth(inv.nest).expect("nest").clone();
        self.env.locals.clear();
        let speculate = crate::analysis::speculate::speculation_safe(&nest.body, &mut self.env);
        let lv: Vec<String> = nest.vars.iter().map(|v| c_ident(&v.to_string())).collect();
        let ind = "                    ";
        let prelude = format!(
            "{ind}const long long pacc_x = pacc_x0 + pacc_i;\n{}",
            self.point_prelude(&nest.body, inv.step, &lv, ind)
        );
        let inner = self.point_prelude(&nest.body, inv.step, &lv, "                        ");
        self.loop_vars = lv;
        self.serve = vec![Box::new(ctx.clone())];
        let hoisted = if speculate {
            super::sums::hoist(&nest.body, &mut self.env)
        } else {
            Vec::new()
        };
        self.vfuse_hoisted(&hoisted, &mut loads, &prelude);
        for (_, load) in loads {
            self.out.push_str(&load);
        }
        let r = &nest.ranges;
        let _ = writeln!(
            self.out,
            "                const bool pacc_rz = pacc_p >= {} && pacc_p < {};\n                \
             #pragma unroll\n                for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) {{\n                    \
             const long long pacc_x = pacc_x0 + pacc_i;",
            self.bound_of(r[0].lo, "pacc_n0i"),
            self.bound_of(r[0].hi, "pacc_n0i"),
        );
        let mut prevs = Vec::new();
        for &w in &inv.writes {
            let prev = ctx.read(name_of(&inv, w), &[0, 0, 0]);
            let _ = writeln!(self.out, "                    pacc_w{w}[pacc_i] = {prev};");
            prevs.push((w, prev));
        }
        let reds = an.reductions[inv.nest].clone();
        self.reduction_accumulators(&reds, false, "                    ");
        let _ = writeln!(
            self.out,
            "                    const bool pacc_rng = pacc_rz && ((pacc_xr{c} >> pacc_i) & 1u);\n                    {}{{",
            if speculate {
                "// Every point runs the body (the points' chains interleave); those outside the ranges keep their value.\n                    "
            } else {
                "if (pacc_rng) "
            }
        );
        self.out.push_str(&inner);
        self.out.push_str(&super::sums::hoisted_locals(
            &hoisted,
            "                        ",
        ));
        self.env.locals.clear();
        self.env.locals.extend(super::sums::hoisted_types(&hoisted));
        self.stmts(&nest.body[hoisted.len()..], 6);
        self.env.locals.clear();
        self.out.push_str("                    }\n");
        if speculate {
            for (w, prev) in &prevs {
                let _ = writeln!(
                    self.out,
                    "                    pacc_w{w}[pacc_i] = pacc_rng ? pacc_w{w}[pacc_i] : {prev};"
                );
            }
        }
        self.serve.clear();
        for (k, &r) in reds.iter().enumerate() {
            let red = &f.reductions[r];
            let name = c_ident(&red.name.to_string());
            let acc = combine(red.op, red.ty, &format!("pacc_acc{}", e + k), &name);
            let _ = writeln!(
                self.out,
                "                    if (pacc_rng && pacc_out && pacc_p >= pacc_zb && pacc_p < pacc_ze && pacc_p >= pacc_own0 && pacc_p < pacc_own1) pacc_acc{} = {acc};",
                e + k
            );
        }
        self.out.push_str("                }\n");
        for &pt in &inv.points {
            self.vfuse_point(&inv, pt, ctx);
        }
        self.serve.clear();
    }

    /// A point's coordinates inside a loop over the thread's points, indented by `ind`: the
    /// nest's loop variables and the time variable where the body reads it.
    fn point_prelude(&mut self, body: &[KStmt], step: usize, lv: &[String], ind: &str) -> String {
        let mut s = String::new();
        for (v, coord) in lv.iter().zip(["pacc_p", "pacc_y", "pacc_x"]) {
            let _ = writeln!(s, "{ind}const long long {v} = {coord};");
        }
        let out = std::mem::take(&mut self.out);
        self.fused_time(body, step, ind);
        s.push_str(&std::mem::replace(&mut self.out, out));
        s
    }

    /// A point statement that follows an invocation: applied, once the invocation's points are
    /// computed, to the thread's point that holds it. The plane is tested first, once for all
    /// the thread's points: tested with each point, it cost a 64-bit comparison and a branch per
    /// point and level in every step (NVRTC 13.0, `propagate`'s fused loop).
    fn vfuse_point(&mut self, inv: &crate::analysis::fuse::Inv, pt: usize, ctx: &VCtx) {
        let f = self.f;
        let point = f.points().nth(pt).expect("point").clone();
        let _ = writeln!(
            self.out,
            "                if (pacc_p == pacc_pz{pt}) {{\n                    #pragma unroll\n                    \
             for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if (pacc_i == pacc_px{pt}) {{"
        );
        let target = format!("pacc_w{}[pacc_i]", inv.slot[point.array]);
        let ind = "                        ";
        self.point_update(inv.step, &point, &target, Box::new(ctx.clone()), ind);
        self.out
            .push_str("                    }\n                }\n");
    }

    /// The push of invocation `c`'s values: every thread, every step, so a queue's index `k`
    /// holds plane `p - k`.
    fn vfuse_push(&mut self, p: &FusePlan, c: usize) {
        for &w in &p.invs[c].writes {
            let ver = Ver::Inv(c, w);
            for k in (1..p.queues[&ver].len).rev() {
                let _ = writeln!(
                    self.out,
                    "            pacc_cp4({}, {});",
                    FuseCtx::queue_reg(ver, k),
                    FuseCtx::queue_reg(ver, k - 1)
                );
            }
            let _ = writeln!(
                self.out,
                "            pacc_cp4({}, pacc_w{w});",
                FuseCtx::queue_reg(ver, 0)
            );
        }
    }
}
