//! The march of the fused vector form: the kernel's frame, its prologue (coordinates, masks,
//! queues, tiles, rings) and each step's phase A (loads, stores, the barrier) and turn.

use super::*;

impl Gen<'_> {
    /// The vector form of the kernel fusing the plan's steps, under its `#if`; nothing where
    /// the plan has none.
    pub(in crate::codegen) fn fused_vector_kernel(&mut self, p: &FusePlan, an: &Analysis) {
        let f = self.f;
        let Ok(vf) = VFuse::of(f, p, an) else { return };
        let reds = crate::codegen::fuse::fused_reductions(p, an);
        let red_bytes = crate::codegen::fuse::reduction_bytes(f, &reds);
        let [[hyl, hyr], [hxl, hxr]] = p.block_halo;
        let _ = writeln!(
            self.out,
            "// Fused vector form: {} steps per launch, {W} points along x per thread, the window \
             beyond the output tile x {}/{} (rounded out from {hxl}/{hxr}), y {hyl}/{hyr}.\n#if {}",
            p.steps,
            vf.hx[0],
            vf.hx[1],
            vf.condition(f, p, red_bytes)
        );
        let params = self.fused_params(p, reds.len());
        let _ = writeln!(
            self.out,
            "extern \"C\" __global__ void __launch_bounds__(PACC_FVBX * PACC_FVBY, PACC_FVMINB) {}(\n    {})\n{{",
            vector_name(f, p.steps),
            params.join(",\n    ")
        );
        self.vfuse_prologue(p, &vf);
        self.reduction_accumulators(&reds, true, "    ");
        let (first, last) = p.march_range();
        let _ = writeln!(
            self.out,
            "    #pragma unroll 1\n    for (int pacc_j = pacc_zbi + ({first}); pacc_j < pacc_zei + ({last}); ++pacc_j) {{\n        \
             const long long pacc_jo = ((long long)pacc_j - pacc_base) * pacc_pl + pacc_c;"
        );
        self.vfuse_phase_a(p, &vf);
        let mut e = 0usize;
        for c in 0..p.invs.len() {
            self.vfuse_invocation(p, &vf, c, an, &mut e);
        }
        self.vfuse_turn(p, &vf);
        self.out.push_str("    }\n");
        self.block_reductions(&reds, true);
        self.out.push_str("}\n#endif\n");
    }

    /// Thread coordinates, the masks of the thread's points, the queues, the direct loads'
    /// registers, the input tiles and the rings.
    fn vfuse_prologue(&mut self, p: &FusePlan, vf: &VFuse) {
        let [[hyl, hyr], [hxl, hxr]] = p.block_halo;
        let [vxl, vxr] = vf.hx;
        let _ = writeln!(
            self.out,
            "    const int pacc_tx = threadIdx.x;\n    \
             const int pacc_ty = threadIdx.y;\n    \
             const long long pacc_x0 = (long long)blockIdx.x * (PACC_FVBX * {W} - {}) - {vxl} + {W} * pacc_tx;\n    \
             const long long pacc_y = (long long)blockIdx.y * (PACC_FVBY - {}) - {hyl} + pacc_ty;\n    \
             const long long pacc_pl = pacc_n1 * pacc_rp;\n    \
             const long long pacc_c = pacc_y * pacc_rp + pacc_x0;\n    \
             const bool pacc_in = pacc_x0 >= 0 && pacc_x0 < pacc_n2 && pacc_y >= 0 && pacc_y < pacc_n1;\n    \
             const long long pacc_zb = pacc_z0 + (long long)blockIdx.z * pacc_seg;\n    \
             const long long pacc_ze = pacc_zb + pacc_seg < pacc_z1 ? pacc_zb + pacc_seg : pacc_z1;\n    \
             // Bit i: point x0 + i lies inside the array.\n    \
             unsigned int pacc_xin = 0u;\n    \
             if (pacc_in) {{\n        #pragma unroll\n        for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if (pacc_x0 + pacc_i < pacc_n2) pacc_xin |= 1u << pacc_i;\n    }}\n    \
             // The thread's first column in the scalar form's window (the rounding's columns lie outside it).\n    \
             const int pacc_wc = {W} * pacc_tx - {};\n    \
             const int pacc_wn = PACC_FVBX * {W} - {};\n    \
             const bool pacc_out = pacc_in && pacc_tx >= {} && pacc_tx < PACC_FVBX - {} && pacc_ty >= {hyl} && pacc_ty < PACC_FVBY - {hyr};",
            vxl + vxr,
            hyl + hyr,
            vxl - hxl,
            (vxl - hxl) + (vxr - hxr),
            vxl / W,
            vxr / W,
        );
        self.out.push_str(
            "    // Planes fit an int: the march's bounds and comparisons in 32 bits.\n    \
             const int pacc_zbi = (int)pacc_zb, pacc_zei = (int)pacc_ze, pacc_n0i = (int)pacc_n0;\n",
        );
        for pt in crate::codegen::fuse::folded_points(p) {
            let _ = writeln!(
                self.out,
                "    // Which of the thread's points is point statement {pt}'s column (-1: none), and its\n    \
                 // plane where the thread holds it inside the array (-1: none; planes fit an int).\n    \
                 const int pacc_px{pt} = pacc_y == pacc_pt{pt}_1 && pacc_pt{pt}_2 >= pacc_x0 && pacc_pt{pt}_2 < pacc_x0 + {W} ? (int)(pacc_pt{pt}_2 - pacc_x0) : -1;\n    \
                 const int pacc_pz{pt} = pacc_px{pt} >= 0 && pacc_pt{pt}_0 >= 0 && pacc_pt{pt}_0 < pacc_n0 ? (int)pacc_pt{pt}_0 : -1;"
            );
        }
        for (c, h) in p.halo.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "    unsigned int pacc_win{c} = 0u;\n    \
                 if (pacc_ty >= {} && pacc_ty < PACC_FVBY - {}) {{\n        #pragma unroll\n        \
                 for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if (pacc_wc + pacc_i >= {} && pacc_wc + pacc_i < pacc_wn - {}) pacc_win{c} |= pacc_xin & (1u << pacc_i);\n    }}",
                hyl - h[0][0],
                hyr - h[0][1],
                hxl - h[1][0],
                hxr - h[1][1],
            );
        }
        let f = self.f;
        for (c, inv) in p.invs.iter().enumerate() {
            let r = &f.nests().nth(inv.nest).expect("nest").ranges;
            let _ = writeln!(
                self.out,
                "    // Bit i: point x0 + i of invocation {c}'s window lies in its nest's in-plane ranges.\n    \
                 unsigned int pacc_xr{c} = 0u;\n    \
                 if (pacc_y >= {} && pacc_y < {}) {{\n        #pragma unroll\n        \
                 for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) if (pacc_x0 + pacc_i >= {} && pacc_x0 + pacc_i < {}) pacc_xr{c} |= pacc_win{c} & (1u << pacc_i);\n    }}",
                self.bound(r[1].lo, 1),
                self.bound(r[1].hi, 1),
                self.bound(r[2].lo, 2),
                self.bound(r[2].hi, 2),
            );
        }
        for sl in (0..p.input_reach.len()).filter(|&sl| p.input_reach[sl].is_some()) {
            let (lo, hi) = crate::codegen::fuse::input_planes(p, sl);
            let _ = writeln!(
                self.out,
                "    // The planes of slot {sl} a load may touch: inside the array and the group's reach.\n    \
                 const int pacc_ql{sl} = max(0, pacc_zbi + ({lo})), pacc_qh{sl} = min(pacc_n0i, pacc_zei + ({hi}));"
            );
        }
        for (&ver, q) in &p.queues {
            let Ver::Inv(_, sl) = ver else { continue };
            let t = f.arrays[sl].elem.cuda_name();
            let regs: Vec<String> = (0..q.len)
                .map(|k| format!("{}[{W}] = {{}}", FuseCtx::queue_reg(ver, k)))
                .collect();
            let _ = writeln!(self.out, "    {t} {};", regs.join(", "));
        }
        self.vfuse_input_queues(p, vf);
        for t in &vf.tiles {
            self.vfuse_tile(p, vf, t);
        }
        self.vfuse_rings(p, vf);
    }

    /// The queued inputs' registers holding the planes before the first step's turn, and the
    /// direct loads' registers.
    fn vfuse_input_queues(&mut self, p: &FusePlan, vf: &VFuse) {
        let f = self.f;
        for (&sl, q) in &p.inputs {
            let t = f.arrays[sl].elem.cuda_name();
            let arr = c_ident(&f.arrays[sl].name.to_string());
            if let Some(planes) = vf.direct.get(&sl) {
                let regs: Vec<String> = (planes.iter())
                    .map(|&at| format!("pacc_d{sl}_{}[{W}] = {{}}", offset_name(at)))
                    .collect();
                let _ =
                    writeln!(
                    self.out,
                    "    // `{arr}` at the column, loaded each step at planes j{}.\n    {t} {};",
                    planes.iter().map(|&a| signed(a)).collect::<Vec<_>>().join(", j"),
                    regs.join(", ")
                );
                continue;
            }
            let _ = writeln!(
                self.out,
                "    // `{arr}` at the column: planes j{} ..= j{} at step j.",
                signed(q.lo),
                signed(q.hi)
            );
            let start = crate::codegen::fuse::input_queue_start(p, sl);
            let regs: Vec<String> = (start.iter())
                .map(|(reg, _)| format!("{reg}[{W}] = {{}}"))
                .collect();
            let _ = writeln!(self.out, "    {t} {};", regs.join(", "));
            for (reg, at) in &start {
                let _ = writeln!(
                    self.out,
                    "    {{ const long long pacc_q = pacc_zb + ({at}); if ({}) pacc_ld4({arr} + (pacc_q - pacc_base) * pacc_pl + pacc_c, {reg}); }}",
                    input_guard(sl),
                );
            }
        }
    }

    /// An input's tile, the thread's place in it and the halo vectors (and the centre, where no
    /// queue holds it) of the first step's plane, loaded one step ahead from then on.
    fn vfuse_tile(&mut self, p: &FusePlan, vf: &VFuse, t: &InTile) {
        let f = self.f;
        let s = t.slot;
        let ty = f.arrays[s].elem.cuda_name();
        let arr = c_ident(&f.arrays[s].name.to_string());
        let (first, _) = p.march_range();
        let area = format!("{ROW} * (PACC_FVBY + {})", t.ylo + t.yhi);
        let _ = writeln!(
            self.out,
            "    // `{arr}` at plane j{} in shared memory: two tiles (this step's, and the next one's while it is read).\n    \
             __shared__ __align__(16) {ty} pacc_t{s}[2 * {area}];\n    \
             const int pacc_ti{s} = (pacc_ty + {}) * {ROW} + {W} + {W} * pacc_tx;\n    \
             int pacc_to{s} = 0;",
            signed(t.at),
            t.ylo,
        );
        let at0 = first + t.at;
        let guard = plane_guard(s);
        if vf.tile_centre(p, t).is_none() {
            let _ = writeln!(
                self.out,
                "    {ty} pacc_tc{s}[{W}] = {{}};\n    \
                 {{ const long long pacc_q = pacc_zb + ({at0}); if (pacc_in && {guard}) pacc_ld4({arr} + (pacc_q - pacc_base) * pacc_pl + pacc_c, pacc_tc{s}); }}"
            );
        }
        if t.xs {
            let _ = writeln!(
                self.out,
                "    const int pacc_txo{s} = pacc_tx == 0 ? -{W} : (pacc_tx == PACC_FVBX - 1 ? {W} : 0);\n    \
                 const bool pacc_txv{s} = pacc_txo{s} != 0 && pacc_y >= 0 && pacc_y < pacc_n1 && pacc_x0 + pacc_txo{s} >= 0 && pacc_x0 + pacc_txo{s} < pacc_n2;\n    \
                 {ty} pacc_thx{s}[{W}] = {{}};\n    \
                 {{ const long long pacc_q = pacc_zb + ({at0}); if (pacc_txv{s} && {guard}) pacc_ld4({arr} + (pacc_q - pacc_base) * pacc_pl + pacc_c + pacc_txo{s}, pacc_thx{s}); }}"
            );
        }
        if t.ylo + t.yhi > 0 {
            let _ = writeln!(
                self.out,
                "    const int pacc_tyo{s} = pacc_ty < {ylo} ? -{ylo} : (pacc_ty >= PACC_FVBY - {yhi} ? {yhi} : 0);\n    \
                 const bool pacc_tyv{s} = pacc_tyo{s} != 0 && pacc_x0 >= 0 && pacc_x0 < pacc_n2 && pacc_y + pacc_tyo{s} >= 0 && pacc_y + pacc_tyo{s} < pacc_n1;\n    \
                 {ty} pacc_thy{s}[{W}] = {{}};\n    \
                 {{ const long long pacc_q = pacc_zb + ({at0}); if (pacc_tyv{s} && {guard}) pacc_ld4({arr} + (pacc_q - pacc_base) * pacc_pl + pacc_c + pacc_tyo{s} * pacc_rp, pacc_thy{s}); }}",
                ylo = t.ylo,
                yhi = t.yhi,
            );
        }
    }

    /// Each ring's tiles, the thread's place in them and the slot counter of the plane the
    /// first step stores.
    fn vfuse_rings(&mut self, p: &FusePlan, vf: &VFuse) {
        let f = self.f;
        let (first, _) = p.march_range();
        for (g, ring) in p.rings.iter().enumerate() {
            let Ver::Inv(v, sl) = ring.ver else { continue };
            let t = f.arrays[sl].elem.cuda_name();
            let [lo, hi] = vf.pads[g];
            let r = ring.tiles();
            let _ = writeln!(
                self.out,
                "    // Invocation {v}'s planes p{} ..= p{} for invocation {} at plane p, {r} tiles.\n    \
                 __shared__ __align__(16) {t} pacc_r{g}[{r} * {ROW} * (PACC_FVBY + {})];\n    \
                 const int pacc_ri{g} = (pacc_ty + {lo}) * {ROW} + {W} + {W} * pacc_tx;\n    \
                 int pacc_k{g} = (int)((((pacc_zb + ({first}) - ({}) + ({})) % {r}) + {r}) % {r});",
                signed(ring.dlo),
                signed(ring.dhi),
                ring.reader,
                lo + hi,
                p.sigma[ring.reader],
                ring.dhi,
            );
        }
    }

    /// Phase A of a step: the queued inputs turn and load ahead, the direct loads, the tiles'
    /// stores and next loads, the rings' stores, then the step's barrier.
    fn vfuse_phase_a(&mut self, p: &FusePlan, vf: &VFuse) {
        let f = self.f;
        for (&sl, q) in &p.inputs {
            let arr = c_ident(&f.arrays[sl].name.to_string());
            if let Some(planes) = vf.direct.get(&sl) {
                for &at in planes {
                    let _ = writeln!(
                        self.out,
                        "        {{ const int pacc_q = pacc_j + ({at}); if ({}) pacc_ld4({arr} + pacc_jo + ({at}) * pacc_pl, pacc_d{sl}_{}); }}",
                        input_guard(sl),
                        offset_name(at)
                    );
                }
                continue;
            }
            let len = q.hi - q.lo + 1;
            for k in (1..len).rev() {
                let _ = writeln!(
                    self.out,
                    "        pacc_cp4({}, {});",
                    FuseCtx::queue_reg(Ver::Input(sl), k),
                    FuseCtx::queue_reg(Ver::Input(sl), k - 1)
                );
            }
            let _ = writeln!(
                self.out,
                "        pacc_cp4({}, pacc_gn{sl});\n        \
                 {{ const int pacc_q = pacc_j + {d}; if ({}) pacc_ld4({arr} + pacc_jo + {d} * pacc_pl, pacc_gn{sl}); }}",
                FuseCtx::queue_reg(Ver::Input(sl), 0),
                input_guard(sl),
                d = q.hi + 1,
            );
        }
        for t in &vf.tiles {
            self.vfuse_tile_step(p, vf, t);
        }
        for (g, ring) in p.rings.iter().enumerate() {
            let Ver::Inv(v, _) = ring.ver else { continue };
            let k = p.sigma[ring.reader] - p.sigma[v] - ring.dhi - 1;
            let [lo, hi] = vf.pads[g];
            let _ = writeln!(
                self.out,
                "        pacc_st4(pacc_r{g} + pacc_k{g} * ({ROW} * (PACC_FVBY + {})) + pacc_ri{g}, {});",
                lo + hi,
                FuseCtx::queue_reg(ring.ver, k),
            );
        }
        if !(p.rings.is_empty() && vf.tiles.is_empty()) {
            self.out.push_str("        __syncthreads();\n");
        }
    }

    /// A tile's stores of this step's plane and the loads of the next step's.
    fn vfuse_tile_step(&mut self, p: &FusePlan, vf: &VFuse, t: &InTile) {
        let f = self.f;
        let s = t.slot;
        let arr = c_ident(&f.arrays[s].name.to_string());
        let dst = format!("pacc_t{s} + pacc_to{s} + pacc_ti{s}");
        let guard = plane_guard(s);
        let next = format!("const int pacc_q = pacc_j + 1 + ({})", t.at);
        let at = format!("pacc_jo + (1 + ({})) * pacc_pl", t.at);
        match vf.tile_centre(p, t) {
            Some(reg) => {
                let _ = writeln!(self.out, "        pacc_st4({dst}, {reg});");
            }
            None => {
                let _ = writeln!(
                    self.out,
                    "        pacc_st4({dst}, pacc_tc{s});\n        \
                     {{ {next}; if (pacc_in && {guard}) pacc_ld4({arr} + {at}, pacc_tc{s}); }}"
                );
            }
        }
        if t.xs {
            let _ = writeln!(
                self.out,
                "        if (pacc_txv{s}) pacc_st4({dst} + pacc_txo{s}, pacc_thx{s});\n        \
                 {{ {next}; if (pacc_txv{s} && {guard}) pacc_ld4({arr} + {at} + pacc_txo{s}, pacc_thx{s}); }}"
            );
        }
        if t.ylo + t.yhi > 0 {
            let _ = writeln!(
                self.out,
                "        if (pacc_tyv{s}) pacc_st4({dst} + pacc_tyo{s} * {ROW}, pacc_thy{s});\n        \
                 {{ {next}; if (pacc_tyv{s} && {guard}) pacc_ld4({arr} + {at} + pacc_tyo{s} * pacc_rp, pacc_thy{s}); }}"
            );
        }
    }

    /// The end of a step: the tiles' buffers trade places, the rings' counters turn.
    fn vfuse_turn(&mut self, p: &FusePlan, vf: &VFuse) {
        for t in &vf.tiles {
            let s = t.slot;
            let _ = writeln!(
                self.out,
                "        pacc_to{s} = pacc_to{s} == 0 ? {ROW} * (PACC_FVBY + {}) : 0;",
                t.ylo + t.yhi
            );
        }
        for (g, ring) in p.rings.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "        pacc_k{g} = pacc_k{g} + 1 == {r} ? 0 : pacc_k{g} + 1;",
                r = ring.tiles()
            );
        }
    }
}
