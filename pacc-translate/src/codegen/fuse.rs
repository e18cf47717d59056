//! Fused kernels: `s` time steps of the step body per launch (`analysis/fuse.rs` plans them).
//!
//! One thread per column of the block's window (the output tile widened by what later
//! invocations read), marching along axis 0. Each step `j` has two phases split by one barrier:
//! phase A turns the input queues (loading the next plane) and stores, into each ring of tiles,
//! the plane its reader will need, taken from the producer's register queue; phase B runs every
//! invocation in serial order at its plane `j - sigma`, pushes its value into its queue, writes
//! the last versions of the output tile and adds the reductions of the owned points of its
//! segment (an invocation also computes planes beyond the segment that later ones read, which
//! the neighbouring segment counts). A point
//! outside a nest's ranges keeps the previous version, as the serial loop leaves it, so the
//! output buffers receive whole planes.

use super::emit::{
    c_ident, combine, offset_name, reduction_buffer_bytes, signed, Gen, Serve, STATIC_SHARED,
};
use crate::analysis::fuse::{FusePlan, Ver};
use crate::analysis::Analysis;
use crate::ir::{Func, KStmt, Ty};
use std::fmt::Write;

/// The step counts the translator fuses (a kernel each, where the step body allows it).
pub const FUSE_STEPS: [usize; 2] = [2, 3];

/// [`FUSE_STEPS`] as a sentence lists them ("2 or 3"), for help texts and messages.
pub fn fuse_steps_text() -> String {
    pacc_runtime::words::sentence_list(FUSE_STEPS.iter().map(|s| s.to_string()))
}

/// Thread blocks a fused kernel may take, by preference: up to 512 threads first (blocks of
/// 1024 spilled Himeno's fused kernel on the H100 at 64 registers a thread), wider ones only
/// where a window leaves no smaller block an output tile.
const BLOCKS_3D: [[u32; 2]; 6] = [[32, 16], [64, 8], [32, 8], [32, 24], [32, 32], [64, 16]];
const BLOCKS_2D: [[u32; 2]; 3] = [[256, 1], [512, 1], [1024, 1]];

/// A step count's fusion plan and thread block, or why it has none.
pub type Fitted = Result<(FusePlan, [u32; 2]), String>;

/// The plans of the step counts the translator fuses, each with its thread block, or why
/// that step count has none.
pub fn fused_plans(f: &Func, an: &Analysis) -> Vec<(usize, Fitted)> {
    FUSE_STEPS
        .iter()
        .map(|&s| {
            if f.is_line() {
                // The fused forms' CUDA for planes of one point does not compile yet (NVRTC,
                // H200, 2026-12-02); the single-step kernels serve 1D programs.
                let why = "a 1D program runs single steps (its fused CUDA form is not generated yet)";
                return (s, Err(why.to_string()));
            }
            if let Some(k) = (0..an.guarded.len()).find(|&k| an.is_guarded(k)) {
                let why = format!("nest {k} reads under guards that keep its reads inside the arrays (`if y > 0 {{ .. }}`, clamped indices); fused forms load every plane a group reads unguarded");
                return (s, Err(why));
            }
            let fitted = FusePlan::of(f, an, s).and_then(|p| {
                let block = block_for(f, an, &p)?;
                Ok((p, block))
            });
            (s, fitted)
        })
        .collect()
}

/// The block whose output tile is the largest share of its threads, among the blocks of the
/// first preference class that fit at all: wider than the window on each in-plane axis, and
/// its rings and reduction buffers within static shared memory.
fn block_for(f: &Func, an: &Analysis, p: &FusePlan) -> Result<[u32; 2], String> {
    let [[hyl, hyr], [hxl, hxr]] = p.block_halo;
    let (hy, hx) = ((hyl + hyr) as u32, (hxl + hxr) as u32);
    let ring_bytes: usize = (p.rings.iter())
        .map(|g| match g.ver {
            Ver::Inv(_, sl) | Ver::Input(sl) => g.tiles() as usize * f.arrays[sl].elem.size(),
        })
        .sum();
    let red_bytes = reduction_bytes(f, &fused_reductions(p, an));
    let (candidates, tall): (&[[u32; 2]], bool) = if f.ndim == 3 {
        (&BLOCKS_3D, true)
    } else {
        (&BLOCKS_2D, false)
    };
    let fits = |&[x, y]: &[u32; 2]| {
        let threads = (x * y) as usize;
        x > hx && (!tall || y > hy) && ring_bytes * threads + red_bytes <= STATIC_SHARED
    };
    let useful = |&[x, y]: &[u32; 2]| {
        let out_y = if tall { y - hy } else { 1 };
        ((x - hx) * out_y) as f64 / (x * y) as f64
    };
    let best = |small: bool| {
        (candidates.iter())
            .filter(|b| (b[0] * b[1] <= 512) == small && fits(b))
            .max_by(|a, b| useful(a).total_cmp(&useful(b)))
            .copied()
    };
    best(true).or_else(|| best(false)).ok_or_else(|| {
        format!(
            "{} steps widen the window beyond the output tile to {hy} rows and {hx} columns, \
             and no thread block of up to 1024 threads leaves an output tile with its rings \
             ({ring_bytes} bytes a thread) in 48 KB of shared memory",
            p.steps
        )
    })
}

/// Whether plane `pacc_q` of input slot `sl` may be loaded into its queue: inside the array
/// and inside the planes the group reads ([`FusePlan::input_reach`]), which are all the
/// runtime's buffers hold. The queue loads one plane ahead, past the last plane a step uses;
/// beyond the reach that load would leave the buffer (or the read-only ring).
fn input_guard(p: &FusePlan, sl: usize) -> String {
    let (lo, hi) = input_planes(p, sl);
    format!(
        "pacc_in && pacc_q >= 0 && pacc_q < pacc_n0 && pacc_q >= pacc_zb + ({lo}) && pacc_q < pacc_ze + ({hi})"
    )
}

/// The planes of input slot `sl` the group reads, below the first output plane and beyond the
/// last, `(lo, hi)`: loads of planes `zb + lo ..< ze + hi` (inside the array) stay in the
/// buffers. Both fused forms guard their loads by it.
pub(super) fn input_planes(p: &FusePlan, sl: usize) -> (i64, i64) {
    match &p.input_reach[sl] {
        Some((lo, hi)) => (lo[0], hi[0]),
        None => (0, 0),
    }
}

/// Input slot `sl`'s queue registers, newest plane first and then the one loaded ahead
/// (`pacc_gn<sl>`), each with the plane it holds before the first step's turn, relative to the
/// segment's first output plane: slot k holds plane `j0 - 1 + hi - k`, the one ahead `j0 + hi`
/// (`j0` the march's first step). Both fused forms start their queues so.
pub(super) fn input_queue_start(p: &FusePlan, sl: usize) -> Vec<(String, i64)> {
    let (first, _) = p.march_range();
    let q = p.inputs[&sl];
    let len = q.hi - q.lo + 1;
    (0..len)
        .map(|k| (FuseCtx::queue_reg(Ver::Input(sl), k), first - 1 + q.hi - k))
        .chain(std::iter::once((format!("pacc_gn{sl}"), first + q.hi)))
        .collect()
}

/// Bytes of the block-reduction buffers of reduction instances `reds`.
pub(super) fn reduction_bytes(f: &Func, reds: &[usize]) -> usize {
    (reds.iter())
        .map(|&r| reduction_buffer_bytes(f.reductions[r].ty))
        .sum()
}

/// Every reduction instance of the group, in the order of its partial pointers.
pub(super) fn fused_reductions(p: &FusePlan, an: &Analysis) -> Vec<usize> {
    (p.invs.iter())
        .flat_map(|inv| an.reductions[inv.nest].iter().copied())
        .collect()
}

/// The name of the kernel fusing `s` steps.
pub fn fused_name(f: &crate::ir::Func, s: usize) -> String {
    format!("pacc_{}_f{s}", syn::ext::IdentExt::unraw(&f.name))
}

/// How the body of one invocation reads and writes inside the fused kernel.
#[derive(Clone, Debug)]
pub struct FuseCtx {
    pub plan: FusePlan,
    pub inv: usize,
    /// C names of the kernel's input arrays, by slot.
    pub names: Vec<String>,
    pub ndim: usize,
}

fn off(k: i64) -> String {
    k.to_string()
}

impl FuseCtx {
    pub(super) fn queue_reg(ver: Ver, k: i64) -> String {
        match ver {
            Ver::Inv(i, s) => format!("pacc_v{i}s{s}_{}", off(k)),
            Ver::Input(s) => format!("pacc_g{s}_{}", off(k)),
        }
    }

    /// C for a read at `offsets` of `array` (a name) by the current invocation at its plane
    /// `pacc_p`.
    pub fn read(&self, array: usize, offsets: &[i64]) -> String {
        let p = &self.plan;
        let c = self.inv;
        let ver = p.invs[c].sees[array];
        let column = offsets[1..].iter().all(|&o| o == 0);
        let dz = offsets[0];
        match ver {
            Ver::Input(s) if column => {
                let q = p.inputs[&s];
                Self::queue_reg(ver, q.hi - (dz - p.sigma[c]))
            }
            Ver::Input(s) => {
                let mut at = format!("({dz} + pacc_p - pacc_base) * pacc_pl + pacc_c");
                let strides = if self.ndim == 3 {
                    vec!["pacc_rp", ""]
                } else {
                    vec![""]
                };
                for (o, st) in offsets[1..].iter().zip(strides) {
                    if *o != 0 {
                        if st.is_empty() {
                            let _ = write!(at, " + ({o})");
                        } else {
                            let _ = write!(at, " + ({o}) * {st}");
                        }
                    }
                }
                format!("{}[{at}]", self.names[s])
            }
            Ver::Inv(v, _) if column => Self::queue_reg(ver, p.sigma[c] - p.sigma[v] - dz),
            Ver::Inv(..) => {
                let g = p
                    .rings
                    .iter()
                    .position(|g| g.ver == ver && g.reader == c)
                    .expect("a ring for every in-plane read of a version");
                let (dy, dx) = if self.ndim == 3 {
                    (offsets[1], offsets[2])
                } else {
                    (0, offsets[1])
                };
                format!(
                    "pacc_r{g}[pacc_rb{g}_{} + ({dy}) * PACC_FBX + ({dx})]",
                    offset_name(dz)
                )
            }
        }
    }

    /// The register a write of `array` (a name) goes to.
    pub fn write(&self, array: usize) -> String {
        format!("pacc_w{}", self.plan.invs[self.inv].slot[array])
    }

    /// C for a point statement's read of `array` at its point inside a fused kernel: the
    /// invocation's own value of a slot it wrote, else the slot's input at the column.
    pub fn point_read(&self, array: usize) -> String {
        let inv = &self.plan.invs[self.inv];
        let slot = inv.slot[array];
        if inv.writes.contains(&slot) {
            format!("pacc_w{slot}")
        } else {
            self.read(array, &vec![0; self.ndim])
        }
    }
}

/// A fused invocation serves every read and write of its body.
impl Serve for FuseCtx {
    // The inherent methods above.
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String> {
        Some(FuseCtx::read(self, array, offsets))
    }

    fn write(&self, array: usize) -> Option<String> {
        Some(FuseCtx::write(self, array))
    }

    fn point_read(&self, array: usize) -> Option<String> {
        Some(FuseCtx::point_read(self, array))
    }
}

impl Gen<'_> {
    /// The kernel fusing the plan's steps, under `#if PACC_FUSE == s` and its fit condition.
    pub(super) fn fused_kernel(&mut self, p: &FusePlan, an: &Analysis) {
        let f = self.f;
        let nd = f.ndim;
        let s = p.steps;
        let [[hyl, hyr], [hxl, hxr]] = p.block_halo;
        let rings: Vec<String> = p
            .rings
            .iter()
            .map(|g| {
                let Ver::Inv(_, sl) = g.ver else {
                    unreachable!()
                };
                format!(
                    "{} * PACC_FBX * PACC_FBY * {}",
                    g.tiles(),
                    f.arrays[sl].elem.size()
                )
            })
            .collect();
        let mut cond = vec![
            format!("PACC_FUSE == {s}"),
            format!("PACC_FBX > {}", hxl + hxr),
        ];
        if nd == 3 {
            cond.push(format!("PACC_FBY > {}", hyl + hyr));
        }
        let reds = fused_reductions(p, an);
        let red_bytes = reduction_bytes(f, &reds);
        cond.push(format!(
            "{} + {red_bytes} <= {}",
            if rings.is_empty() {
                "0".to_string()
            } else {
                rings.join(" + ")
            },
            STATIC_SHARED
        ));
        let _ = writeln!(
            self.out,
            "// Fused form: {s} steps per launch, skews {:?}, window beyond the output tile \
             y {hyl}/{hyr}, x {hxl}/{hxr}.\n#if {}",
            p.sigma,
            cond.join(" && ")
        );
        let params = self.fused_params(p, reds.len());
        let _ = writeln!(
            self.out,
            "extern \"C\" __global__ void __launch_bounds__(PACC_FBX * PACC_FBY, PACC_FMINB) {}(\n    {})\n{{",
            fused_name(f, s),
            params.join(",\n    ")
        );
        self.fused_prologue(p);
        self.reduction_accumulators(&reds, true, "    ");
        let (first, last) = p.march_range();
        let _ = writeln!(
            self.out,
            "    #pragma unroll 1\n    for (long long pacc_j = pacc_zb + ({first}); pacc_j < pacc_ze + ({last}); ++pacc_j) {{"
        );
        self.fused_phase_a(p);
        let mut e = 0usize;
        for c in 0..p.invs.len() {
            self.fused_invocation(p, c, an, &mut e);
        }
        self.out.push_str("    }\n");
        self.block_reductions(&reds, true);
        self.out.push_str("}\n#endif\n");
    }

    /// The parameters of a fused kernel (both forms): the fixed ones, the segment, the inputs
    /// and outputs, scalars and slices, the point statements' coordinates and one partials
    /// pointer per reduction instance.
    pub(super) fn fused_params(&self, p: &FusePlan, reductions: usize) -> Vec<String> {
        let f = self.f;
        let mut params = Self::fixed_params();
        params.push("long long pacc_seg".into());
        for a in &f.arrays {
            params.push(format!(
                "const {}* __restrict__ {}",
                a.elem.cuda_name(),
                c_ident(&a.name.to_string())
            ));
        }
        for (k, &(sl, _)) in p.outputs.iter().enumerate() {
            params.push(format!(
                "{}* __restrict__ pacc_o{k}",
                f.arrays[sl].elem.cuda_name()
            ));
        }
        let common = self.common_params(&[], true);
        params.extend(common.into_iter().skip(f.arrays.len()));
        for pt in folded_points(p) {
            for axis in 0..f.ndim {
                params.push(format!("long long pacc_pt{pt}_{axis}"));
            }
        }
        for j in 0..reductions {
            params.push(format!("double* __restrict__ pacc_red{j}"));
        }
        params
    }

    /// Thread coordinates, windows, the segment, queues, tiles and the first planes of the
    /// input queues.
    fn fused_prologue(&mut self, p: &FusePlan) {
        let f = self.f;
        let nd = f.ndim;
        let [[hyl, hyr], [hxl, hxr]] = p.block_halo;
        let _ = writeln!(
            self.out,
            "    const int pacc_tx = threadIdx.x;\n    \
             const long long pacc_x = (long long)blockIdx.x * (PACC_FBX - {}) - {hxl} + pacc_tx;",
            hxl + hxr
        );
        let seg_idx = if nd == 3 { "blockIdx.z" } else { "blockIdx.y" };
        if nd == 3 {
            let _ = writeln!(
                self.out,
                "    const int pacc_ty = threadIdx.y;\n    \
                 const long long pacc_y = (long long)blockIdx.y * (PACC_FBY - {}) - {hyl} + pacc_ty;\n    \
                 const long long pacc_pl = pacc_n1 * pacc_rp;\n    \
                 const long long pacc_c = pacc_y * pacc_rp + pacc_x;\n    \
                 const bool pacc_in = pacc_x >= 0 && pacc_x < pacc_n2 && pacc_y >= 0 && pacc_y < pacc_n1;",
                hyl + hyr
            );
        } else {
            self.out.push_str(
                "    const int pacc_ty = 0;\n    \
                 const long long pacc_pl = pacc_rp;\n    \
                 const long long pacc_c = pacc_x;\n    \
                 const bool pacc_in = pacc_x >= 0 && pacc_x < pacc_n1;\n",
            );
        }
        let _ = writeln!(
            self.out,
            "    const long long pacc_zb = pacc_z0 + (long long){seg_idx} * pacc_seg;\n    \
             const long long pacc_ze = pacc_zb + pacc_seg < pacc_z1 ? pacc_zb + pacc_seg : pacc_z1;"
        );
        // The output tile, and each invocation's window.
        let win = |h: [[i64; 2]; 2]| {
            let mut c = vec![format!(
                "pacc_tx >= {} && pacc_tx < PACC_FBX - {}",
                hxl - h[1][0],
                hxr - h[1][1]
            )];
            if nd == 3 {
                c.push(format!(
                    "pacc_ty >= {} && pacc_ty < PACC_FBY - {}",
                    hyl - h[0][0],
                    hyr - h[0][1]
                ));
            }
            c.join(" && ")
        };
        let _ = writeln!(
            self.out,
            "    const bool pacc_out = pacc_in && {};",
            win([[0; 2]; 2])
        );
        for (i, h) in p.halo.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "    const bool pacc_win{i} = pacc_in && {};",
                win(*h)
            );
        }
        for (&ver, q) in &p.queues {
            let Ver::Inv(_, sl) = ver else { continue };
            let t = f.arrays[sl].elem.cuda_name();
            let regs: Vec<String> = (0..q.len)
                .map(|k| format!("{} = ({t})0", FuseCtx::queue_reg(ver, k)))
                .collect();
            let _ = writeln!(self.out, "    {t} {};", regs.join(", "));
        }
        self.fused_input_queues(p);
        for (g, ring) in p.rings.iter().enumerate() {
            let Ver::Inv(_, sl) = ring.ver else { continue };
            let t = f.arrays[sl].elem.cuda_name();
            let _ = writeln!(
                self.out,
                "    // Invocation {}'s planes p{} ..= p{} of invocation {}'s version, for invocation {} at plane p.\n    \
                 __shared__ {t} pacc_r{g}[{} * PACC_FBX * PACC_FBY];",
                match ring.ver {
                    Ver::Inv(v, _) => v,
                    Ver::Input(_) => 0,
                },
                signed(ring.dlo),
                signed(ring.dhi),
                match ring.ver {
                    Ver::Inv(v, _) => v,
                    Ver::Input(_) => 0,
                },
                ring.reader,
                ring.tiles()
            );
        }
        self.out
            .push_str("    const int pacc_ti = pacc_ty * PACC_FBX + pacc_tx;\n");
    }

    /// Each input queue's registers, holding the planes before the first step's turn.
    fn fused_input_queues(&mut self, p: &FusePlan) {
        let f = self.f;
        for (&sl, q) in &p.inputs {
            let t = f.arrays[sl].elem.cuda_name();
            let arr = c_ident(&f.arrays[sl].name.to_string());
            let _ = writeln!(
                self.out,
                "    // `{arr}` at the column: planes j{} ..= j{} at step j.",
                signed(q.lo),
                signed(q.hi)
            );
            let start = input_queue_start(p, sl);
            let regs: Vec<String> = (start.iter())
                .map(|(reg, _)| format!("{reg} = ({t})0"))
                .collect();
            let _ = writeln!(self.out, "    {t} {};", regs.join(", "));
            for (reg, at) in &start {
                let _ = writeln!(
                    self.out,
                    "    {{ const long long pacc_q = pacc_zb + ({at}); if ({}) {reg} = {arr}[(pacc_q - pacc_base) * pacc_pl + pacc_c]; }}",
                    input_guard(p, sl),
                );
            }
        }
    }

    /// Phase A of a step: the input queues turn and load ahead, the rings receive their next
    /// plane from the producers' queues, then the step's barrier.
    fn fused_phase_a(&mut self, p: &FusePlan) {
        let f = self.f;
        for (&sl, q) in &p.inputs {
            let arr = c_ident(&f.arrays[sl].name.to_string());
            let len = q.hi - q.lo + 1;
            for k in (1..len).rev() {
                let _ = writeln!(
                    self.out,
                    "        {} = {};",
                    FuseCtx::queue_reg(Ver::Input(sl), k),
                    FuseCtx::queue_reg(Ver::Input(sl), k - 1)
                );
            }
            let _ = writeln!(
                self.out,
                "        {} = pacc_gn{sl};\n        \
                 {{ const long long pacc_q = pacc_j + {}; if ({}) pacc_gn{sl} = {arr}[(pacc_q - pacc_base) * pacc_pl + pacc_c]; }}",
                FuseCtx::queue_reg(Ver::Input(sl), 0),
                q.hi + 1,
                input_guard(p, sl)
            );
        }
        for (g, ring) in p.rings.iter().enumerate() {
            let Ver::Inv(v, _) = ring.ver else { continue };
            let k = p.sigma[ring.reader] - p.sigma[v] - ring.dhi - 1;
            let _ = writeln!(
                self.out,
                "        {{ const long long pacc_q = pacc_j - ({}) + ({}); const int pacc_s = (int)(((pacc_q % {r}) + {r}) % {r}); \
                 pacc_r{g}[pacc_s * PACC_FBX * PACC_FBY + pacc_ti] = {}; }}",
                p.sigma[ring.reader],
                ring.dhi,
                FuseCtx::queue_reg(ring.ver, k),
                r = ring.tiles()
            );
        }
        if !p.rings.is_empty() {
            self.out.push_str("        __syncthreads();\n");
        }
    }

    /// Phase B for invocation `c`: its value at plane `j - sigma`, the points that follow it,
    /// the push into its queue, the output and the reductions (instances from `e` on).
    fn fused_invocation(&mut self, p: &FusePlan, c: usize, an: &Analysis, e: &mut usize) {
        let f = self.f;
        let inv = p.invs[c].clone();
        let nest = f.nests().nth(inv.nest).expect("nest").clone();
        let nd = f.ndim;
        let names: Vec<String> = f
            .arrays
            .iter()
            .map(|a| c_ident(&a.name.to_string()))
            .collect();
        let ctx = FuseCtx {
            plan: p.clone(),
            inv: c,
            names: names.clone(),
            ndim: nd,
        };
        let lv: Vec<String> = nest.vars.iter().map(|v| c_ident(&v.to_string())).collect();
        let _ = writeln!(
            self.out,
            "        {{ // invocation {c}: nest {} of step {}\n            \
             const long long pacc_p = pacc_j - ({});",
            inv.nest + 1,
            inv.step + 1,
            p.sigma[c],
        );
        if !p.computes(c) {
            // Overwritten later in the group before anything reads it: nothing to compute,
            // but its queue turns with the others.
            for &w in &inv.writes {
                let t = f.arrays[w].elem.cuda_name();
                let _ = writeln!(self.out, "            const {t} pacc_w{w} = ({t})0;");
            }
            self.fused_push(p, c, &inv.writes);
            self.out.push_str("        }\n");
            *e += an.reductions[inv.nest].len();
            return;
        } else {
            let _ = writeln!(
                self.out,
                "            const bool pacc_act = pacc_win{c} && pacc_p >= pacc_zb - {} && pacc_p < pacc_ze + {} && pacc_p >= 0 && pacc_p < pacc_n0;",
                p.back[c],
                p.fwd[c]
            );
        }
        for (g, ring) in p.rings.iter().enumerate().filter(|(_, g)| g.reader == c) {
            for dz in ring.dlo..=ring.dhi {
                let _ = writeln!(
                    self.out,
                    "            const int pacc_rb{g}_{} = (int)((((pacc_p + ({dz})) % {r}) + {r}) % {r}) * PACC_FBX * PACC_FBY + pacc_ti;",
                    offset_name(dz),
                    r = ring.tiles()
                );
            }
        }
        // Each written slot starts at its previous version (kept where the nest's ranges end).
        for &w in &inv.writes {
            let name = inv.slot.iter().position(|&x| x == w).expect("slot");
            let t = f.arrays[w].elem.cuda_name();
            let prev = ctx.read(name, &vec![0; nd]);
            let _ = writeln!(
                self.out,
                "            {t} pacc_w{w} = pacc_act ? {prev} : ({t})0;"
            );
        }
        let reds = an.reductions[inv.nest].clone();
        self.reduction_accumulators(&reds, false, "            ");
        let mut guard = vec!["pacc_act".to_string()];
        let coords = if nd == 3 {
            vec!["pacc_p", "pacc_y", "pacc_x"]
        } else {
            vec!["pacc_p", "pacc_x"]
        };
        for (axis, r) in nest.ranges.iter().enumerate() {
            guard.push(format!("{} >= {}", coords[axis], self.bound(r.lo, axis)));
            guard.push(format!("{} < {}", coords[axis], self.bound(r.hi, axis)));
        }
        let _ = writeln!(
            self.out,
            "            const bool pacc_rng = {};\n            if (pacc_rng) {{",
            guard.join(" && ")
        );
        for (axis, v) in lv.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "                const long long {v} = {};",
                coords[axis]
            );
        }
        self.fused_time(&nest.body, inv.step, "                ");
        self.loop_vars = lv.clone();
        self.env.locals.clear();
        self.serve = vec![Box::new(ctx.clone())];
        self.stmts(&nest.body, 4);
        self.out.push_str("            }\n");
        for &pt in &inv.points {
            self.fused_point(p, c, pt, &ctx);
        }
        self.serve.clear();
        self.fused_push(p, c, &inv.writes);
        for &w in &inv.writes {
            if let Some(o) = p.output_of(c, w) {
                let _ = writeln!(
                    self.out,
                    "            if (pacc_act && pacc_out && pacc_p >= pacc_zb && pacc_p < pacc_ze) pacc_o{o}[(pacc_p - pacc_base) * pacc_pl + pacc_c] = pacc_w{w};"
                );
            }
        }
        for &r in &reds {
            let red = &f.reductions[r];
            let name = c_ident(&red.name.to_string());
            let acc = combine(red.op, red.ty, &format!("pacc_acc{}", *e), &name);
            let _ = writeln!(
                self.out,
                "            if (pacc_rng && pacc_out && pacc_p >= pacc_zb && pacc_p < pacc_ze && pacc_p >= pacc_own0 && pacc_p < pacc_own1) pacc_acc{} = {acc};",
                *e
            );
            *e += 1;
        }
        self.out.push_str("        }\n");
    }

    /// The push of invocation `c`'s values: every thread, every step, so a queue's index `k`
    /// holds plane `p - k`.
    fn fused_push(&mut self, p: &FusePlan, c: usize, writes: &[usize]) {
        for &w in writes {
            let ver = Ver::Inv(c, w);
            let len = p.queues[&ver].len;
            for k in (1..len).rev() {
                let _ = writeln!(
                    self.out,
                    "            {} = {};",
                    FuseCtx::queue_reg(ver, k),
                    FuseCtx::queue_reg(ver, k - 1)
                );
            }
            let _ = writeln!(
                self.out,
                "            {} = pacc_w{w};",
                FuseCtx::queue_reg(ver, 0)
            );
        }
    }

    /// The time variable of a step of the group, where the body uses it.
    pub(super) fn fused_time(&mut self, body: &[KStmt], step: usize, ind: &str) {
        if let (Some(v), true) = (&self.f.time.var, crate::codegen::cpu::uses_time_stmts(body)) {
            let t = self.env.time;
            let _ = writeln!(
                self.out,
                "{ind}const {} {} = ({})(pacc_t + {step});",
                t.cuda_name(),
                c_ident(&v.to_string()),
                t.cuda_name()
            );
        }
    }

    /// A point statement that follows invocation `c`: applied to the invocation's value where
    /// the thread holds the point.
    fn fused_point(&mut self, p: &FusePlan, c: usize, pt: usize, ctx: &FuseCtx) {
        let f = self.f;
        let inv = &p.invs[c];
        let point = f.points().nth(pt).expect("point").clone();
        let nd = f.ndim;
        let coords = if nd == 3 {
            vec!["pacc_p", "pacc_y", "pacc_x"]
        } else {
            vec!["pacc_p", "pacc_x"]
        };
        let at: Vec<String> = coords
            .iter()
            .enumerate()
            .map(|(a, v)| format!("{v} == pacc_pt{pt}_{a}"))
            .collect();
        let _ = writeln!(
            self.out,
            "            if (pacc_act && {}) {{",
            at.join(" && ")
        );
        let target = format!("pacc_w{}", inv.slot[point.array]);
        self.point_update(
            inv.step,
            &point,
            &target,
            Box::new(ctx.clone()),
            "                ",
        );
        self.out.push_str("            }\n");
    }

    /// A point statement's update of `target` inside a fused kernel (both forms): the time
    /// variable of step `step` where the value uses it, then the assignment, its reads served
    /// by `serve`; each line indented by `ind`.
    pub(super) fn point_update(
        &mut self,
        step: usize,
        point: &crate::ir::Point,
        target: &str,
        serve: Box<dyn Serve>,
        ind: &str,
    ) {
        let f = self.f;
        if let (Some(v), true) = (
            &f.time.var,
            crate::codegen::cpu::uses_time_expr(&point.value),
        ) {
            let t = self.env.time;
            let _ = writeln!(
                self.out,
                "{ind}const {} {} = ({})(pacc_t + {step});",
                t.cuda_name(),
                c_ident(&v.to_string()),
                t.cuda_name(),
            );
        }
        let elem = Ty::from_elem(f.arrays[point.array].elem);
        self.serve = vec![serve];
        let v = self.expr(&point.value, Some(elem));
        let rhs = match point.op {
            None => v,
            Some(op) => format!("{target} {} ({v})", op.c()),
        };
        let _ = writeln!(self.out, "{ind}{target} = {rhs};");
    }
}

/// The point statements the kernel applies (each once per step), in order: their coordinates
/// follow the slices as `long long` triples (pairs in 2D).
pub fn folded_points(p: &FusePlan) -> Vec<usize> {
    let mut v: Vec<usize> = p
        .invs
        .iter()
        .flat_map(|i| i.points.iter().copied())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(src: &str) -> Vec<(usize, Result<[u32; 2], String>)> {
        let file: syn::File = syn::parse_str(src).unwrap();
        let syn::Item::Fn(item) = &file.items[0] else {
            panic!()
        };
        let mut f = crate::lower::lower(item.clone(), Default::default()).unwrap();
        let an = crate::analysis::analyse(&mut f).unwrap();
        (fused_plans(&f, &an).into_iter())
            .map(|(s, r)| (s, r.map(|(_, b)| b)))
            .collect()
    }

    fn leap(r: i64) -> String {
        format!(
            r#"
    fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, steps: usize) {{
        let (nz, ny, nx) = cur.dim();
        for _t in 0..steps {{
            for z in {r}..nz - {r} {{
                for y in {r}..ny - {r} {{
                    for x in {r}..nx - {r} {{
                        prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]]
                            + cur[[z, y - {r}, x]] + cur[[z, y + {r}, x]]
                            + cur[[z, y, x - {r}]] + cur[[z, y, x + {r}]];
                    }}
                }}
            }}
            std::mem::swap(prev, cur);
        }}
    }}"#
        )
    }

    #[test]
    fn blocks_leave_an_output_tile_or_the_step_count_is_refused() {
        // Radius 1: the 512-thread block with the largest output share.
        let b = blocks(&leap(1));
        assert_eq!(b[0], (2, Ok([32, 16])));
        assert_eq!(b[1], (3, Ok([32, 16])));
        // Radius 4, three steps: a window of 8 rows each side needs more than 16 rows.
        let b = blocks(&leap(4));
        assert_eq!(b[0], (2, Ok([32, 16])));
        let (_, Ok([x, y])) = b[1] else {
            panic!("{b:?}")
        };
        assert!(y > 16 && x * y <= 1024, "{b:?}");
        // Radius 12: no block of 1024 threads is wider than a window of 24 + 24.
        let b = blocks(&leap(12));
        let (3, Err(why)) = &b[1] else {
            panic!("{b:?}")
        };
        assert!(why.contains("no thread block"), "{why}");
    }
}
