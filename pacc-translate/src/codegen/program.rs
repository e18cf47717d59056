//! The `Program` description: built as a value ([`build`], the one home of every field), and
//! emitted as the constructor expression of that value ([`tokens`]).

use crate::analysis::Analysis;
use crate::codegen::emit::{kernel_name, point_name};
use crate::ir::{Func, StepItem};
use pacc_runtime::program::*;
use proc_macro2::TokenStream;

pub fn build(f: &Func, an: &Analysis, cuda: String) -> Program {
    let mut kernels = Vec::new();
    let mut points = Vec::new();
    let mut resets = Vec::new();
    let mut step = Vec::new();
    for item in &f.time.items {
        match item {
            StepItem::Nest(n) => {
                let k = kernels.len();
                // Every nest marches; a guarded nest's loads stay inside the arrays
                // (`codegen/cuda.rs`).
                let block = crate::codegen::march::default_block(f.ndim);
                let (name, launch) = (kernel_name(f, k), Launch::Marching { block });
                kernels.push(KernelDecl {
                    name,
                    ranges: n.ranges.clone(),
                    reads: an.reads[k].clone(),
                    writes: an.writes[k].clone(),
                    reductions: an.reductions[k].clone(),
                    launch,
                    guarded: an.guarded.get(k).cloned().unwrap_or_default(),
                });
                step.push(Stage::Kernel(k));
            }
            StepItem::Point(p) => {
                let i = points.len();
                points.push(PointDecl {
                    name: point_name(f, i),
                    array: p.array,
                    reads: an.point_reads[i].clone(),
                });
                step.push(Stage::Point(i));
            }
            StepItem::Swap { a, b, .. } => step.push(Stage::Swap(*a, *b)),
            StepItem::Reset { reduction, .. } => {
                resets.push(ResetDecl {
                    reduction: *reduction,
                });
                step.push(Stage::Reset(resets.len() - 1));
            }
        }
    }
    Program {
        name: f.name.to_string(),
        ndim: f.ndim,
        arrays: f
            .arrays
            .iter()
            .zip(&an.roles)
            .map(|(a, r)| ArrayDecl {
                name: a.name.to_string(),
                elem: a.elem,
                role: *r,
            })
            .collect(),
        scalars: f
            .scalars
            .iter()
            .map(|s| ScalarDecl {
                name: s.name.to_string(),
                ty: scalar_type(s.ty),
            })
            .collect(),
        slices: (f.slices.iter().enumerate())
            .map(|(i, s)| SliceDecl {
                name: s.name.to_string(),
                elem: s.elem,
                reads: an.slice_reads.get(i).cloned().unwrap_or_default(),
            })
            .collect(),
        reductions: f
            .reductions
            .iter()
            .map(|r| ReductionDecl {
                name: r.name.to_string(),
                op: r.op,
                elem: r.ty.elem().unwrap_or(Elem::F64),
            })
            .collect(),
        resets,
        kernels,
        points,
        step,
        halo: an.halo,
        default_chunks: f.directive.chunks,
        default_block_steps: f.directive.block_steps,
        compress: an.compress.clone(),
        cuda_source: cuda,
        row_pitch: true,
        fusion: fusion(f, an),
    }
}

/// The fused forms the translator generates (`codegen/fuse.rs`), or why a step count has none.
pub fn fusion(f: &Func, an: &Analysis) -> Fusion {
    let mut out = Fusion::default();
    for (steps, fitted) in crate::codegen::fuse::fused_plans(f, an) {
        match fitted {
            Ok((p, block)) => out.kernels.push(fused_decl(f, an, &p, block)),
            Err(why) => out.refused.push((steps, why)),
        }
    }
    out
}

fn fused_decl(
    f: &Func,
    an: &Analysis,
    p: &crate::analysis::fuse::FusePlan,
    block: [u32; 2],
) -> FusedDecl {
    let mut events = Vec::new();
    for inv in &p.invs {
        events.extend(inv.resets_before.iter().map(|&r| ReduceEvent::Reset(r)));
        events.extend(
            an.reductions[inv.nest]
                .iter()
                .map(|&r| ReduceEvent::Reduce(r)),
        );
    }
    events.extend(p.resets_after.iter().map(|&r| ReduceEvent::Reset(r)));
    let u = |v: i64| v.max(0) as u32;
    let h = p.block_halo;
    FusedDecl {
        name: crate::codegen::fuse::fused_name(f, p.steps),
        steps: p.steps,
        outputs: p.outputs.iter().map(|&(s, _)| s).collect(),
        reads: p
            .input_reach
            .iter()
            .enumerate()
            .filter_map(|(a, r)| {
                r.as_ref().map(|(lo, hi)| ReadDecl {
                    array: a,
                    lo: lo.clone(),
                    hi: hi.clone(),
                })
            })
            .collect(),
        block,
        halo: [[u(h[0][0]), u(h[0][1])], [u(h[1][0]), u(h[1][1])]],
        vector_blocks: crate::codegen::fuse_vector::fitting_blocks(f, an, p),
        events,
        points: crate::codegen::fuse::folded_points(p),
        invocations: (0..p.invs.len())
            .map(|c| {
                let w = p.halo[c];
                p.computes(c).then(|| FusedInvocation {
                    window: [[u(w[0][0]), u(w[0][1])], [u(w[1][0]), u(w[1][1])]],
                    planes: [u(p.back[c]), u(p.fwd[c])],
                })
            })
            .collect(),
    }
}

pub fn scalar_type(t: crate::ir::Ty) -> ScalarType {
    use crate::ir::Ty;
    match t.defaulted() {
        Ty::F32 => ScalarType::F32,
        Ty::F64 => ScalarType::F64,
        Ty::I32 => ScalarType::I32,
        Ty::I64 => ScalarType::I64,
        Ty::U32 => ScalarType::U32,
        Ty::U64 => ScalarType::U64,
        Ty::Usize => ScalarType::Usize,
        Ty::Isize => ScalarType::Isize,
        _ => ScalarType::Bool,
    }
}

/// The constructor expression of `p`, with `cuda` as the expression of its source: every field
/// spelled from its value (`ctor.rs`), so `build` is each field's one home.
pub fn tokens(p: &Program, cuda: TokenStream) -> TokenStream {
    super::ctor::spell(p, "::pacc::runtime::Program", &[("cuda_source", cuda)])
}
