//! Nests of fewer loops than the arrays have axes: `for j in 0..ny { ey[[0, j]] = f[t]; }`
//! over 2D arrays, a boundary plane `for y { for x { u[[0, y, x]] = .. } }` in 3D.
//!
//! Every later layer (analysis, kernels, CPU closures, planner) knows full-rank nests only, so
//! [`full_rank`] rewrites such a nest, before lowering and like `line.rs` does for 1D programs,
//! into one: each axis without a loop gets `for __pacc_a<axis> in c..c + 1`, `c` the fixed index
//! of the nest's first write on that axis (of its first access where it writes none), inserted
//! at the axis's place among the written loops, and every access of a grid in the body has its
//! index on that axis rewritten as an offset from the new variable (`[[1, j]]` beside
//! `[[0, j]]` reads at `__pacc_a0 + 1`). The serial function is untouched. An index on a missing
//! axis that is not the base plus or minus a literal is refused with a compile error.

use super::context::err;
use super::syntax::{grid_index, ident_of, int_lit, mentions, perfect_loops, strip};
use crate::ir::ArrayParam;
use quote::{format_ident, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Expr, Ident, Pat, Stmt};

const SUPPORTED: &str = "a nest with fewer loops than the arrays have axes is supported when every access indexes each axis without a loop with one fixed index, the same for all accesses up to a literal offset (`u[[0, j]]`, `u[[ny - 1, j]]`, `u[[1, j]]` beside `u[[0, j]]`), an integer fixed before the time loop; a loop whose statements write rows at different fixed indices is one nest per statement, unless a statement reads a row another writes at a point the split would reorder (behind the point for a later statement's row, ahead of it for an earlier one's)";

/// The time loop with each lower-rank nest of its body made full-rank (module docs); nests of
/// full rank, and bodies this module does not recognise, are left for the nest lowering.
pub(super) fn full_rank(
    tl: &syn::ExprForLoop,
    grids: &[ArrayParam],
    ndim: usize,
) -> syn::Result<Option<syn::ExprForLoop>> {
    let mut out = tl.clone();
    let mut changed = false;
    let mut stmts = Vec::new();
    for s in &tl.body.stmts {
        let Stmt::Expr(Expr::ForLoop(f), semi) = s else {
            stmts.push(s.clone());
            continue;
        };
        match nest(f, grids, ndim) {
            Ok(Some(new)) => {
                stmts.push(Stmt::Expr(Expr::ForLoop(new), *semi));
                changed = true;
            }
            Ok(None) => stmts.push(s.clone()),
            // A boundary nest writing rows at different fixed indices is one nest per row
            // where the split keeps serial's values (`distribute.rs`).
            Err(e) => {
                let pieces = super::distribute::split(f, grids, ndim).ok_or(e)?;
                for p in pieces {
                    let p = nest(&p, grids, ndim)?.unwrap_or(p);
                    stmts.push(Stmt::Expr(Expr::ForLoop(p), None));
                }
                changed = true;
            }
        }
    }
    out.body.stmts = stmts;
    Ok(changed.then_some(out))
}

/// One nest made full-rank, or `None` where it has all its loops or is not a perfect nest.
fn nest(
    f: &syn::ExprForLoop,
    grids: &[ArrayParam],
    ndim: usize,
) -> syn::Result<Option<syn::ExprForLoop>> {
    let loops = perfect_loops(f);
    let innermost = &loops[loops.len() - 1];
    if loops.len() >= ndim || has_loop(&innermost.body) {
        return Ok(None);
    }
    let mut vars = Vec::new();
    for l in &loops {
        match &*l.pat {
            Pat::Ident(pi) => vars.push(pi.ident.to_string()),
            _ => return Ok(None),
        }
    }
    let mut acc = Accesses {
        grids,
        ndim,
        list: Vec::new(),
        writes: Vec::new(),
    };
    acc.visit_block(&innermost.body);
    if acc.list.is_empty() {
        return Ok(None);
    }
    let covered = |axis: usize| {
        (acc.list.iter()).any(|ix| vars.iter().any(|v| mentions(ix[axis].to_token_stream(), v)))
    };
    let missing: Vec<usize> = (0..ndim).filter(|&a| !covered(a)).collect();
    if missing.len() != ndim - loops.len() {
        let msg = format!("this nest has {} `for`s over arrays of {ndim} axes, and its loop variables index {} of them: {SUPPORTED}", loops.len(), ndim - missing.len());
        return Err(err(f.for_token, msg));
    }
    let mut body = innermost.body.clone();
    let mut fixed = Vec::new();
    for &axis in &missing {
        let first = acc.writes.first().or(acc.list.first()).expect("not empty");
        let base = first[axis].clone();
        let var = format_ident!("__pacc_a{axis}");
        let mut rw = Rewrite {
            grids,
            ndim,
            axis,
            base: split(&base),
            var: var.clone(),
            error: None,
        };
        rw.visit_block_mut(&mut body);
        if let Some(e) = rw.error {
            return Err(e);
        }
        fixed.push((axis, var, base));
    }
    Ok(Some(rebuild(&loops, body, &fixed, ndim)))
}

/// The nest of `ndim` loops: the written ones in their order, the fixed axes' one-index loops
/// at their axes' places, `body` innermost.
fn rebuild(
    loops: &[syn::ExprForLoop],
    body: syn::Block,
    fixed: &[(usize, Ident, Expr)],
    ndim: usize,
) -> syn::ExprForLoop {
    let mut written = loops.iter();
    let mut chain: Vec<syn::ExprForLoop> = Vec::new();
    for axis in 0..ndim {
        match fixed.iter().find(|(a, _, _)| *a == axis) {
            Some((_, var, base)) => {
                let hi = one_past(base);
                chain.push(parse_quote!(for #var in #base..#hi {}));
            }
            None => chain.extend(written.next().cloned()),
        }
    }
    let mut cur = body;
    let mut out = None;
    for mut l in chain.into_iter().rev() {
        l.body = cur;
        cur = parse_quote!({ #l });
        out = Some(l);
    }
    out.expect("ndim >= 2")
}

/// `c + 1` in the form the bounds read best: a literal, `n` for `n - 1`, `n - (k - 1)`.
fn one_past(base: &Expr) -> Expr {
    if let Some(v) = int_lit(base) {
        let v = proc_macro2::Literal::i64_unsuffixed(v + 1);
        return parse_quote!(#v);
    }
    if let Expr::Binary(b) = strip(base) {
        if let (syn::BinOp::Sub(_), Some(k), Some(_)) =
            (&b.op, int_lit(&b.right), ident_of(&b.left))
        {
            let left = &b.left;
            if k == 1 {
                return parse_quote!(#left);
            }
            let k = proc_macro2::Literal::i64_unsuffixed(k - 1);
            return parse_quote!(#left - #k);
        }
    }
    parse_quote!((#base) + 1)
}

/// An index as a base (its tokens; none for a literal) and a literal offset.
fn split(e: &Expr) -> (Option<String>, i64) {
    if let Some(v) = int_lit(e) {
        return (None, v);
    }
    if let Expr::Binary(b) = strip(e) {
        if let Some(k) = int_lit(&b.right) {
            match b.op {
                syn::BinOp::Add(_) => return (Some(b.left.to_token_stream().to_string()), k),
                syn::BinOp::Sub(_) => return (Some(b.left.to_token_stream().to_string()), -k),
                _ => {}
            }
        }
    }
    (Some(strip(e).to_token_stream().to_string()), 0)
}

fn has_loop(b: &syn::Block) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {
            self.0 = true;
        }
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {
            self.0 = true;
        }
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {
            self.0 = true;
        }
    }
    let mut v = V(false);
    v.visit_block(b);
    v.0
}

/// The grid accesses' indices, in source order, and those of the written ones.
struct Accesses<'a> {
    grids: &'a [ArrayParam],
    ndim: usize,
    list: Vec<Vec<Expr>>,
    writes: Vec<Vec<Expr>>,
}

impl Accesses<'_> {
    fn target(&mut self, e: &Expr) {
        if let Expr::Index(ix) = strip(e) {
            if let Some(a) = grid_index(ix, self.grids, self.ndim) {
                self.writes.push(a.elems.iter().cloned().collect());
            }
        }
    }
}

impl<'ast> Visit<'ast> for Accesses<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Assign(a) => self.target(&a.left),
            Expr::Binary(b) if super::syntax::is_assign_op(&b.op) => self.target(&b.left),
            Expr::Index(ix) => {
                if let Some(a) = grid_index(ix, self.grids, self.ndim) {
                    self.list.push(a.elems.iter().cloned().collect());
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
}

/// Rewrites each grid access's index on `axis` as `var` plus its offset from `base`.
struct Rewrite<'a> {
    grids: &'a [ArrayParam],
    ndim: usize,
    axis: usize,
    base: (Option<String>, i64),
    var: Ident,
    error: Option<syn::Error>,
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_index_mut(&mut self, ix: &mut syn::ExprIndex) {
        syn::visit_mut::visit_expr_index_mut(self, ix);
        let Some(a) = grid_index(ix, self.grids, self.ndim) else {
            return;
        };
        let e = &a.elems[self.axis];
        let (b, off) = split(e);
        if b != self.base.0 {
            if self.error.is_none() {
                self.error = Some(err(e, format!("this index differs from the nest's fixed index on axis {} by more than a literal offset: {SUPPORTED}", self.axis)));
            }
            return;
        }
        let var = &self.var;
        let d = off - self.base.1;
        let k = proc_macro2::Literal::i64_unsuffixed(d.abs());
        let new: Expr = match d {
            0 => parse_quote!(#var),
            d if d > 0 => parse_quote!(#var + #k),
            _ => parse_quote!(#var - #k),
        };
        let mut elems = a.elems.clone();
        elems[self.axis] = new;
        *ix.index = parse_quote!([#elems]);
    }
}
