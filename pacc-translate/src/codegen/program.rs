//! The `Program` description: built as a value, and emitted as a constructor expression.

use crate::analysis::Analysis;
use crate::codegen::cuda::{kernel_name, point_name};
use crate::ir::{Func, StepItem};
use pacc_runtime::program::*;
use proc_macro2::TokenStream;
use quote::quote;

pub fn build(f: &Func, an: &Analysis, cuda: String) -> Program {
    let mut kernels = Vec::new();
    let mut points = Vec::new();
    let mut resets = Vec::new();
    let mut step = Vec::new();
    for item in &f.time.items {
        match item {
            StepItem::Nest(n) => {
                let k = kernels.len();
                kernels.push(KernelDecl {
                    name: kernel_name(f, k),
                    ranges: n.ranges.clone(),
                    reads: an.reads[k].clone(),
                    writes: an.writes[k].clone(),
                    reductions: an.reductions[k].clone(),
                    launch: Launch::Marching {
                        block: crate::codegen::march::default_block(f.ndim),
                    },
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
        slices: f
            .slices
            .iter()
            .map(|s| SliceDecl {
                name: s.name.to_string(),
                elem: s.elem,
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
        events,
        points: crate::codegen::fuse::folded_points(p),
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

const P: &str = "::pacc::runtime::program";

fn path(s: &str) -> TokenStream {
    s.parse().unwrap_or_default()
}

fn elem(e: Elem) -> TokenStream {
    path(&format!("{P}::Elem::{e:?}"))
}

fn string(s: &str) -> TokenStream {
    quote!(::std::string::String::from(#s))
}

fn i64s(v: &[i64]) -> TokenStream {
    quote!(::std::vec::Vec::from([#(#v),*]))
}

fn list(items: impl IntoIterator<Item = TokenStream>) -> TokenStream {
    let items: Vec<TokenStream> = items.into_iter().collect();
    quote!(::std::vec::Vec::from([#(#items),*]))
}

fn bound(b: Bound) -> TokenStream {
    let (fe, o) = (b.from_end, b.offset);
    let p = path(&format!("{P}::Bound"));
    quote!(#p { from_end: #fe, offset: #o })
}

/// The constructor expression of `p`, with `cuda` as the expression of its source.
pub fn tokens(p: &Program, cuda: TokenStream) -> TokenStream {
    let ty = |n: &str| path(&format!("{P}::{n}"));
    let (ad, sd, sl, rd, rs, kd, pd, st, ar, rdl) = (
        ty("ArrayDecl"),
        ty("ScalarDecl"),
        ty("SliceDecl"),
        ty("ReductionDecl"),
        ty("ResetDecl"),
        ty("KernelDecl"),
        ty("PointDecl"),
        ty("Stage"),
        ty("AxisRange"),
        ty("ReadDecl"),
    );
    let la = ty("Launch");
    let name = string(&p.name);
    let ndim = p.ndim;
    let arrays = p.arrays.iter().map(|a| {
        let (n, e, r) = (
            string(&a.name),
            elem(a.elem),
            path(&format!("{P}::Role::{:?}", a.role)),
        );
        quote!(#ad { name: #n, elem: #e, role: #r })
    });
    let scalars = p.scalars.iter().map(|s| {
        let (n, t) = (
            string(&s.name),
            path(&format!("{P}::ScalarType::{:?}", s.ty)),
        );
        quote!(#sd { name: #n, ty: #t })
    });
    let slices = p.slices.iter().map(|s| {
        let (n, e) = (string(&s.name), elem(s.elem));
        quote!(#sl { name: #n, elem: #e })
    });
    let reductions = p.reductions.iter().map(|r| {
        let (n, o, e) = (
            string(&r.name),
            path(&format!("{P}::ReduceOp::{:?}", r.op)),
            elem(r.elem),
        );
        quote!(#rd { name: #n, op: #o, elem: #e })
    });
    let resets = p.resets.iter().map(|r| {
        let i = r.reduction;
        quote!(#rs { reduction: #i })
    });
    let kernels = p.kernels.iter().map(|k| {
        let n = string(&k.name);
        let ranges = k.ranges.iter().map(|r| {
            let (lo, hi) = (bound(r.lo), bound(r.hi));
            quote!(#ar { lo: #lo, hi: #hi })
        });
        let reads = k.reads.iter().map(|r| {
            let (a, lo, hi) = (r.array, i64s(&r.lo), i64s(&r.hi));
            quote!(#rdl { array: #a, lo: #lo, hi: #hi })
        });
        let w = &k.writes;
        let red = &k.reductions;
        let (ranges, reads) = (list(ranges), list(reads));
        let launch = match k.launch {
            Launch::PerPoint => quote!(#la::PerPoint),
            Launch::Marching { block: [bx, by] } => quote!(#la::Marching { block: [#bx, #by] }),
            // Only programs prepared for a fused run (by the runtime) have one.
            Launch::Fused {
                block: [bx, by],
                halo: [[a, b], [c, d]],
            } => quote!(#la::Fused { block: [#bx, #by], halo: [[#a, #b], [#c, #d]] }),
        };
        quote!(#kd { name: #n, ranges: #ranges, reads: #reads, writes: ::std::vec::Vec::from([#(#w),*]), reductions: ::std::vec::Vec::from([#(#red),*]), launch: #launch })
    });
    let points = p.points.iter().map(|q| {
        let (n, a, r) = (string(&q.name), q.array, &q.reads);
        quote!(#pd { name: #n, array: #a, reads: ::std::vec::Vec::from([#(#r),*]) })
    });
    let step = p.step.iter().map(|s| match s {
        Stage::Kernel(i) => quote!(#st::Kernel(#i)),
        Stage::Point(i) => quote!(#st::Point(#i)),
        Stage::Swap(a, b) => quote!(#st::Swap(#a, #b)),
        Stage::Reset(i) => quote!(#st::Reset(#i)),
    });
    let (arrays, scalars, slices, reductions) =
        (list(arrays), list(scalars), list(slices), list(reductions));
    let (resets, kernels, points, step) = (list(resets), list(kernels), list(points), list(step));
    let halo = p.halo;
    let opt = |o: Option<usize>| match o {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let (dc, db) = (opt(p.default_chunks), opt(p.default_block_steps));
    let compress = compress_tokens(&p.compress);
    let fusion = fusion_tokens(&p.fusion);
    quote! {
        ::pacc::runtime::Program {
            name: #name,
            ndim: #ndim,
            arrays: #arrays,
            scalars: #scalars,
            slices: #slices,
            reductions: #reductions,
            resets: #resets,
            kernels: #kernels,
            points: #points,
            step: #step,
            halo: #halo,
            default_chunks: #dc,
            default_block_steps: #db,
            compress: #compress,
            cuda_source: #cuda,
            row_pitch: true,
            fusion: #fusion,
        }
    }
}

/// The constructor expression of the directive's `compress(..)` entries.
fn compress_tokens(entries: &[CompressDecl]) -> TokenStream {
    let compress = entries.iter().map(|c| {
        let (a, r) = (c.array, proc_macro2::Literal::f64_suffixed(c.rate));
        let codec = match &c.codec {
            Some(n) => quote!(::core::option::Option::Some(::std::string::String::from(#n))),
            None => quote!(::core::option::Option::None),
        };
        let decl = path(&format!("{P}::CompressDecl"));
        quote!(#decl { array: #a, rate: #r, codec: #codec })
    });
    quote!(::std::vec::Vec::from([#(#compress),*]))
}

/// The constructor expression of a program's fused forms.
fn fusion_tokens(fu: &Fusion) -> TokenStream {
    let ty = |n: &str| path(&format!("{P}::{n}"));
    let (fd, rdl, ev, fus) = (
        ty("FusedDecl"),
        ty("ReadDecl"),
        ty("ReduceEvent"),
        ty("Fusion"),
    );
    let kernels = fu.kernels.iter().map(|k| {
        let n = string(&k.name);
        let steps = k.steps;
        let outputs = &k.outputs;
        let reads = list(k.reads.iter().map(|r| {
            let (a, lo, hi) = (r.array, i64s(&r.lo), i64s(&r.hi));
            quote!(#rdl { array: #a, lo: #lo, hi: #hi })
        }));
        let [bx, by] = k.block;
        let [[a, b], [c, d]] = k.halo;
        let events = list(k.events.iter().map(|e| match e {
            ReduceEvent::Reset(i) => quote!(#ev::Reset(#i)),
            ReduceEvent::Reduce(r) => quote!(#ev::Reduce(#r)),
        }));
        let points = &k.points;
        quote!(#fd {
            name: #n,
            steps: #steps,
            outputs: ::std::vec::Vec::from([#(#outputs),*]),
            reads: #reads,
            block: [#bx, #by],
            halo: [[#a, #b], [#c, #d]],
            events: #events,
            points: ::std::vec::Vec::from([#(#points),*]),
        })
    });
    let kernels = list(kernels);
    let refused = list(fu.refused.iter().map(|(s, why)| {
        let w = string(why);
        quote!((#s, #w))
    }));
    quote!(#fus { kernels: #kernels, refused: #refused, active: ::core::option::Option::None })
}
