//! Loop distribution of boundary nests: `for x in 0..nx { u[[0, x]] = u[[1, x]]; u[[ny - 1, x]]
//! = u[[ny - 2, x]]; }` writes two rows, each fixed along the axis without a loop, which
//! `rank.rs` cannot make one full-rank nest. Split into one nest per statement, each is.
//!
//! The split runs every point of the first statement before any of the second, where serial
//! interleaves them point by point. That gives serial's values when no statement reads, at a
//! point the split moves to the other side of a write, what another statement writes there: an
//! earlier statement reading a later one's array only at or ahead of the current point in
//! visiting order, a later statement reading an earlier one's only at or behind it. Anything
//! else (a `let`, another statement kind, an index that is no loop variable plus a literal) is
//! left as it was, for `rank.rs` to accept or refuse.

use super::syntax::{grid_index, ident_of, int_lit, is_assign_op, mentions, perfect_loops, strip};
use crate::ir::ArrayParam;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Expr, Stmt};

/// The nests one statement each, or `None` where `f` is not a perfect nest of fewer loops than
/// `ndim` with two or more array writes as its whole body, or the split could change a value.
pub(super) fn split(
    f: &syn::ExprForLoop,
    grids: &[ArrayParam],
    ndim: usize,
) -> Option<Vec<syn::ExprForLoop>> {
    let loops = perfect_loops(f);
    let inner = &loops[loops.len() - 1];
    if loops.len() >= ndim || inner.body.stmts.len() < 2 {
        return None;
    }
    let vars: Vec<String> = (loops.iter())
        .map(|l| match &*l.pat {
            syn::Pat::Ident(p) => Some(p.ident.to_string()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let stmts: Vec<Effects> = (inner.body.stmts.iter())
        .map(|s| Effects::of(s, grids, ndim, &vars))
        .collect::<Option<_>>()?;
    for (i, a) in stmts.iter().enumerate() {
        for b in &stmts[i + 1..] {
            // `a` runs wholly before `b`: `a` must not read `b`'s writes from behind the point,
            // nor `b` read `a`'s from ahead of it.
            if a.reads_from(&b.writes, |o| o < [0; 3]) || b.reads_from(&a.writes, |o| o > [0; 3]) {
                return None;
            }
        }
    }
    Some(
        (inner.body.stmts.iter())
            .map(|s| {
                let mut one = inner.clone();
                one.body.stmts = vec![s.clone()];
                wrap(&loops[..loops.len() - 1], one)
            })
            .collect(),
    )
}

/// `inner` inside copies of the `outer` loops.
fn wrap(outer: &[syn::ExprForLoop], inner: syn::ExprForLoop) -> syn::ExprForLoop {
    outer.iter().rev().fold(inner, |body, l| {
        let mut l = l.clone();
        l.body.stmts = vec![Stmt::Expr(Expr::ForLoop(body), None)];
        l
    })
}

/// One statement's grid accesses: the arrays it writes, and each read as its array and its
/// offsets along the loop variables (outermost first, padded with zeros).
struct Effects {
    writes: Vec<String>,
    reads: Vec<(String, [i64; 3])>,
}

impl Effects {
    fn of(s: &Stmt, grids: &[ArrayParam], ndim: usize, vars: &[String]) -> Option<Effects> {
        let Stmt::Expr(e, Some(_)) = s else {
            return None;
        };
        let (target, compound) = match e {
            Expr::Assign(a) => (&*a.left, false),
            Expr::Binary(b) if is_assign_op(&b.op) => (&*b.left, true),
            _ => return None,
        };
        let Expr::Index(ix) = strip(target) else {
            return None;
        };
        let array = ident_of(&ix.expr)?.to_string();
        // The write at the point itself, so that "ahead" and "behind" are the reads' offsets.
        let mut at = Reads::new(grids, ndim, vars);
        at.visit_expr(target);
        if !at.ok || at.list.last().is_none_or(|(_, o)| *o != [0; 3]) {
            return None;
        }
        let mut v = Reads::new(grids, ndim, vars);
        match e {
            Expr::Assign(a) => v.visit_expr(&a.right),
            Expr::Binary(b) => v.visit_expr(&b.right),
            _ => unreachable!("matched above"),
        }
        if compound {
            v.visit_expr(target);
        }
        v.ok.then_some(Effects {
            writes: vec![array],
            reads: v.list,
        })
    }

    fn reads_from(&self, arrays: &[String], bad: impl Fn([i64; 3]) -> bool) -> bool {
        (self.reads.iter()).any(|(a, o)| arrays.contains(a) && bad(*o))
    }
}

/// The grid reads of an expression with their offsets along the loop variables; `ok` turns
/// false at an index that mentions a loop variable other than as `v`, `v + c` or `v - c`.
struct Reads<'a> {
    grids: &'a [ArrayParam],
    ndim: usize,
    vars: &'a [String],
    list: Vec<(String, [i64; 3])>,
    ok: bool,
}

impl<'a> Reads<'a> {
    fn new(grids: &'a [ArrayParam], ndim: usize, vars: &'a [String]) -> Self {
        Reads {
            grids,
            ndim,
            vars,
            list: Vec::new(),
            ok: true,
        }
    }
}

impl<'ast> Visit<'ast> for Reads<'_> {
    fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
        syn::visit::visit_expr_index(self, ix);
        let Some(idx) = grid_index(ix, self.grids, self.ndim) else {
            return;
        };
        let Some(name) = ident_of(&ix.expr) else {
            return;
        };
        let mut off = [0i64; 3];
        for (k, v) in self.vars.iter().enumerate() {
            let Some(e) = idx.elems.iter().find(|e| mentions(e.to_token_stream(), v)) else {
                continue;
            };
            match loop_offset(e, v) {
                Some(o) => off[k] = o,
                None => self.ok = false,
            }
        }
        self.list.push((name.to_string(), off));
    }
}

/// `c` for an index `v`, `v + c` or `v - c`.
fn loop_offset(e: &Expr, v: &str) -> Option<i64> {
    let is_v = |e: &Expr| ident_of(e).is_some_and(|i| i == v);
    match strip(e) {
        e if is_v(e) => Some(0),
        Expr::Binary(b) if is_v(&b.left) => match (&b.op, int_lit(&b.right)) {
            (syn::BinOp::Add(_), Some(c)) => Some(c),
            (syn::BinOp::Sub(_), Some(c)) => Some(-c),
            _ => None,
        },
        _ => None,
    }
}
