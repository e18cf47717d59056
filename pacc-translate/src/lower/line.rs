//! One-dimensional programs (`Array1`, `ArrayView1`, `ArrayViewMut1`, `Array<T, Ix1>`) and
//! one-dimensional series beside grids of more axes.
//!
//! A 1D grid of `n` points is a 2D grid of shape `[n, 1]`: planes of one element, so the
//! runtime chunks it along its one axis as it chunks any 2D program along axis 0, and the host
//! descriptions of `Array1`s (`host.rs`) have that shape (the same memory: `n` contiguous
//! elements). Lowering sees the nests as 2D ones: [`as_columns`] wraps each nest's statements
//! in `for __pacc_x in 0..1` and indexes the arrays `u[[i, __pacc_x]]` (`u[i]` and `u[[i]]`
//! alike; `u[[i, 0]]` in single-point statements), so every later layer is the 2D one, and the
//! CPU closures are the user's statements with those indices, the serial function untouched.
//!
//! A *series* is a read-only `Array1` used as the `&[T]` slices are (`analysis/slices.rs`,
//! `host_series` in the wrapper): every 1D array of a 2D or 3D program, and a 1D array of a 1D
//! program that is never written nor swapped and that some index reads otherwise than at a
//! nest's loop variable plus a constant (`f[t]`, `f[2 * i]`): an index like `f[i + 1]` makes it
//! a grid, which must then have the grids' length.

use super::context::err;
use super::syntax::{ident_of, int_lit, is_swap, strip};
use crate::ir::{ArrayParam, Param, ParamKind};
use quote::ToTokens;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Expr, Ident, Pat, Stmt};

/// The name of a 1D nest's inner axis (one point wide); `__` keeps it from the user's names.
pub(super) const COLUMN: &str = "__pacc_x";

/// The parameters with the 1D arrays that are series turned into slices (the arrays renumbered),
/// and the series' names.
pub(super) fn series(
    params: Vec<Param>,
    arrays: Vec<ArrayParam>,
    time_loop: &syn::ExprForLoop,
) -> (Vec<Param>, Vec<ArrayParam>, Vec<Ident>) {
    let grids = arrays.iter().any(|a| a.ndim >= 2);
    let is_series = |a: &ArrayParam| a.ndim == 1 && (grids || !used_as_grid(&a.name, time_loop));
    let mut kept = Vec::new();
    let mut names = Vec::new();
    let mut renumber = Vec::new();
    for a in &arrays {
        if is_series(a) {
            renumber.push(None);
            names.push(a.name.clone());
        } else {
            renumber.push(Some(kept.len()));
            kept.push(a.clone());
        }
    }
    let params = params
        .into_iter()
        .map(|p| match p.kind {
            ParamKind::Array(i) => Param {
                kind: match renumber[i] {
                    Some(j) => ParamKind::Array(j),
                    None => ParamKind::Slice(arrays[i].elem),
                },
                name: p.name,
            },
            _ => p,
        })
        .collect();
    (params, kept, names)
}

/// Whether the time loop writes or swaps 1D array `name`, or reads it at a loop variable plus
/// a constant only (`u[i]`, `u[[i - 1]]`), which makes it one of the grids.
fn used_as_grid(name: &Ident, tl: &syn::ExprForLoop) -> bool {
    struct Uses<'a> {
        name: &'a Ident,
        loop_vars: Vec<Ident>,
        written: bool,
        stencil: bool,
        other: bool,
    }
    impl Uses<'_> {
        fn target(&mut self, e: &Expr) {
            if let Expr::Index(ix) = strip(e) {
                if ident_of(&ix.expr) == Some(self.name) {
                    self.written = true;
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for Uses<'_> {
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.visit_expr(&f.expr);
            let bound = match &*f.pat {
                Pat::Ident(pi) => Some(pi.ident.clone()),
                _ => None,
            };
            let n = self.loop_vars.len();
            self.loop_vars.extend(bound);
            self.visit_block(&f.body);
            self.loop_vars.truncate(n);
        }
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Assign(a) => self.target(&a.left),
                Expr::Binary(b) if super::syntax::is_assign_op(&b.op) => self.target(&b.left),
                Expr::Call(c) if is_swap(&c.func) => {
                    let mentions = |a: &Expr| {
                        super::syntax::mentions(a.to_token_stream(), &self.name.to_string())
                    };
                    if c.args.iter().any(mentions) {
                        self.written = true;
                    }
                }
                Expr::Index(ix) if ident_of(&ix.expr) == Some(self.name) => {
                    match one_index(&ix.index) {
                        Some(i) if at_loop_var(i, &self.loop_vars) => self.stencil = true,
                        _ => self.other = true,
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut u = Uses {
        name,
        loop_vars: Vec::new(),
        written: false,
        stencil: false,
        other: false,
    };
    u.visit_block(&tl.body);
    u.written || !u.other
}

/// The index of `u[e]` or `u[[e]]`.
fn one_index(e: &Expr) -> Option<&Expr> {
    match strip(e) {
        Expr::Array(a) if a.elems.len() == 1 => a.elems.first(),
        Expr::Array(_) => None,
        x => Some(x),
    }
}

/// `v`, `v + c`, `c + v`, `v - c` for a loop variable `v`.
fn at_loop_var(e: &Expr, vars: &[Ident]) -> bool {
    let var = |x: &Expr| ident_of(x).is_some_and(|i| vars.contains(i));
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
            (var(&b.left) && int_lit(&b.right).is_some())
                || (matches!(b.op, syn::BinOp::Add(_))
                    && var(&b.right)
                    && int_lit(&b.left).is_some())
        }
        x => var(x),
    }
}

/// The time loop of a 1D program as a 2D one (module docs): each nest's statements in
/// `for __pacc_x in 0..1`, the grids indexed `[[e, __pacc_x]]` there and `[[e, 0]]` outside;
/// series indexed `f[e]` everywhere. A nest written with more loops than one keeps them (the
/// index checks refuse it, as they refuse a 2D nest with a third loop).
pub(super) fn as_columns(
    tl: &syn::ExprForLoop,
    grids: &[ArrayParam],
    series: &[Ident],
) -> syn::ExprForLoop {
    let mut tl = tl.clone();
    let column = Ident::new(COLUMN, proc_macro2::Span::call_site());
    for s in &mut tl.body.stmts {
        match s {
            Stmt::Expr(Expr::ForLoop(f), _) => {
                let mut ix = Indices {
                    grids,
                    series,
                    second: Some(parse_quote!(#column)),
                };
                ix.visit_block_mut(&mut f.body);
                let stmts = &f.body.stmts;
                f.body = parse_quote!({ for #column in 0..1 { #(#stmts)* } });
            }
            other => Indices {
                grids,
                series,
                second: Some(parse_quote!(0)),
            }
            .visit_stmt_mut(other),
        }
    }
    tl
}

/// The time loop of a program with series (and grids of 2 or 3 axes): series indexed `f[e]`.
pub(super) fn series_indices(tl: &syn::ExprForLoop, series: &[Ident]) -> syn::ExprForLoop {
    let mut tl = tl.clone();
    Indices {
        grids: &[],
        series,
        second: None,
    }
    .visit_block_mut(&mut tl.body);
    tl
}

/// Rewrites indices of 1D grids (to two, `second` the inner one) and of series (to one).
struct Indices<'a> {
    grids: &'a [ArrayParam],
    series: &'a [Ident],
    second: Option<Expr>,
}

impl VisitMut for Indices<'_> {
    fn visit_expr_index_mut(&mut self, ix: &mut syn::ExprIndex) {
        syn::visit_mut::visit_expr_index_mut(self, ix);
        let Some(id) = ident_of(&ix.expr).cloned() else {
            return;
        };
        let Some(i) = one_index(&ix.index).cloned() else {
            return;
        };
        if self.series.contains(&id) {
            *ix.index = i;
        } else if let (Some(second), true) = (&self.second, self.grids.iter().any(|a| a.name == id))
        {
            *ix.index = parse_quote!([#i, #second]);
        }
    }
}

/// The arrays' extent in a 1D program: `u.len()`, `u.dim()` (axis 0, the only one).
pub(super) fn is_len(m: &syn::ExprMethodCall) -> bool {
    (m.method == "len" || m.method == "dim") && m.args.is_empty()
}

/// An error for a 1D grid that a single-point statement or a nest indexes with more than one
/// index: 1D arrays take one.
pub(super) fn check_one_index(tl: &syn::ExprForLoop, grids: &[ArrayParam]) -> syn::Result<()> {
    struct V<'a>(&'a [ArrayParam], Option<syn::Error>);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
            if let (Some(id), None) = (ident_of(&ix.expr), one_index(&ix.index)) {
                if self.0.iter().any(|a| a.name == *id) && self.1.is_none() {
                    self.1 = Some(err(
                        ix,
                        format!("`{id}` has one axis: index it `{id}[i]` or `{id}[[i]]`"),
                    ));
                }
            }
            syn::visit::visit_expr_index(self, ix);
        }
    }
    let mut v = V(grids, None);
    v.visit_block(&tl.body);
    v.1.map_or(Ok(()), Err)
}
