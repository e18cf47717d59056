//! CPU kernels: closures over chunk buffers that reuse the user's tokens, rewriting only
//! array accesses, the time variable and reductions (so results are bit-identical).

use crate::analysis::Analysis;
use crate::ir::{Func, Ty};
use crate::lower::syntax::strip;
use pacc_runtime::program::ReduceOp;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr};

pub(super) struct Rewrite<'a> {
    pub(super) arrays: &'a [String],
    pub(super) ndim: usize,
    /// In a point statement: replace every index with these.
    pub(super) point: Option<Vec<syn::Ident>>,
}

impl Rewrite<'_> {
    fn array_index(&self, e: &Expr) -> Option<(syn::Ident, Vec<TokenStream>)> {
        let Expr::Index(ix) = strip(e) else {
            return None;
        };
        let Expr::Path(p) = strip(&ix.expr) else {
            return None;
        };
        let id = p.path.get_ident()?;
        if !self.arrays.iter().any(|a| id == a) {
            return None;
        }
        let Expr::Array(idx) = strip(&ix.index) else {
            return None;
        };
        let idx = match &self.point {
            Some(p) => p.iter().map(|i| i.to_token_stream()).collect(),
            None => idx.elems.iter().map(|e| e.to_token_stream()).collect(),
        };
        Some((id.clone(), idx))
    }

    fn get_set(&self) -> (syn::Ident, syn::Ident) {
        if self.ndim == 3 {
            (format_ident!("get3"), format_ident!("set3"))
        } else {
            (format_ident!("get2"), format_ident!("set2"))
        }
    }
}

fn op_of(op: &syn::BinOp) -> Option<TokenStream> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => quote!(+),
        B::SubAssign(_) => quote!(-),
        B::MulAssign(_) => quote!(*),
        B::DivAssign(_) => quote!(/),
        B::RemAssign(_) => quote!(%),
        _ => return None,
    })
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let (get, set) = self.get_set();
        match e {
            Expr::Assign(a) => {
                if let Some((arr, idx)) = self.array_index(&a.left) {
                    self.visit_expr_mut(&mut a.right);
                    let r = &a.right;
                    *e = parse_quote!(#arr.#set(#(#idx),*, #r));
                    return;
                }
            }
            Expr::Binary(b) => {
                if let (Some(op), Some((arr, idx))) = (op_of(&b.op), self.array_index(&b.left)) {
                    self.visit_expr_mut(&mut b.right);
                    let r = &b.right;
                    *e = parse_quote!(#arr.#set(#(#idx),*, #arr.#get(#(#idx),*) #op (#r)));
                    return;
                }
            }
            Expr::Index(_) => {
                if let Some((arr, idx)) = self.array_index(e) {
                    *e = parse_quote!(#arr.#get(#(#idx),*));
                    return;
                }
            }
            _ => {}
        }
        visit_mut::visit_expr_mut(self, e);
    }
}

pub(super) fn grids(f: &Func, used: &[usize]) -> TokenStream {
    let g = used.iter().map(|&i| {
        let a = &f.arrays[i];
        let name = &a.name;
        let ty = format_ident!("{}", a.elem.rust_name());
        quote!(let #name = __f.arrays[#i].grid::<#ty>();)
    });
    quote!(#(#g)*)
}

pub(super) fn time_binding(f: &Func, used: bool) -> TokenStream {
    match &f.time.var {
        Some(v) if used => quote!(let #v = __pacc_time(__t_like, __f.t);),
        _ => quote!(),
    }
}

/// Whether the kernel (or point) reads the time variable.
pub fn uses_time_stmts(body: &[crate::ir::KStmt]) -> bool {
    let mut used = false;
    crate::analysis::walk_stmts(body, &mut |_| {}, &mut |e| {
        if matches!(e.kind, crate::ir::KExprKind::Time) {
            used = true
        }
    });
    used
}

pub fn uses_time_expr(e: &crate::ir::KExpr) -> bool {
    let mut used = false;
    crate::analysis::walk_expr(e, &mut |e| {
        if matches!(e.kind, crate::ir::KExprKind::Time) {
            used = true
        }
    });
    used
}

/// Arrays a kernel touches.
fn used_arrays(an: &Analysis, k: usize) -> Vec<usize> {
    let mut u: Vec<usize> = an.reads[k].iter().map(|r| r.array).collect();
    for &w in &an.writes[k] {
        if !u.contains(&w) {
            u.push(w);
        }
    }
    u.sort();
    u
}

/// The statements pushing one closure per kernel onto `__kernels`.
///
/// What makes them meet the contract of `CpuKernels::new` (the wrapper's `unsafe` block): the
/// outer loop variable is the plane the closure is handed, the inner loops are the user's, and
/// the analysis accepted the nest only if each write is at the loop variables' own point, so a
/// call writes its plane of the arrays the program lists for the kernel and nothing else. The
/// closure's frame parameter is `&KernelFrame<'_>`: higher-ranked, so no grid it makes outlives
/// the call.
pub fn kernels(f: &Func, an: &Analysis) -> TokenStream {
    let names: Vec<String> = f.arrays.iter().map(|a| a.name.to_string()).collect();
    let mut out = TokenStream::new();
    for (k, n) in f.nests().enumerate() {
        let mut rw = Rewrite {
            arrays: &names,
            ndim: f.ndim,
            point: None,
        };
        let inner = n.loops.last().expect("a nest has loops");
        let mut body = inner.body.clone();
        rw.visit_block_mut(&mut body);
        let stmts = &body.stmts;
        let mut nested = quote!(#(#stmts)*);
        for l in n.loops[1..].iter().rev() {
            let (pat, range) = (&l.pat, &l.expr);
            nested = quote!(for #pat in #range { #nested });
        }
        let outer = &n.vars[0];
        let g = grids(f, &used_arrays(an, k));
        let t = time_binding(f, uses_time_stmts(&n.body));
        let reds = &an.reductions[k];
        let red_init = reds.iter().map(|&r| {
            let red = &f.reductions[r];
            let name = &red.name;
            let ty = format_ident!("{}", red.ty.rust_name());
            let init = match red.op {
                ReduceOp::Sum => quote!(0.0),
                ReduceOp::Min => quote!(#ty::INFINITY),
                ReduceOp::Max => quote!(#ty::NEG_INFINITY),
            };
            quote!(let mut #name: #ty = #init;)
        });
        let red_out = reds.iter().enumerate().map(|(j, &r)| {
            let name = &f.reductions[r].name;
            quote!(__red[#j] = #name as f64;)
        });
        out.extend(quote! {
            __kernels.push(::std::boxed::Box::new(
                |__f: &::pacc::runtime::exec::KernelFrame<'_>, __plane: usize, __red: &mut [f64]| {
                    #g
                    #t
                    #(#red_init)*
                    let #outer: usize = __plane;
                    #nested
                    #(#red_out)*
                },
            ));
        });
    }
    out
}

/// `{ let __v: f32 = e; __v }`: pins a value to the type the program declares.
pub fn typed(e: impl ToTokens, t: Ty) -> TokenStream {
    let ty = format_ident!("{}", t.rust_name());
    quote!({ let __v: #ty = #e; __v })
}
