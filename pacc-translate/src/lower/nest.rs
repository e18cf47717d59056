//! A loop nest: one `for` per array axis over a range bounded by the axis' extent, the innermost
//! holding the kernel's statements.

use super::context::{err, Ctx, Scope};
use super::syntax::{ident_of, int_lit, strip};
use crate::ir::{Nest, PreVar};
use pacc_runtime::program::{AxisRange, Bound};
use syn::{Expr, Pat, Stmt};

impl Ctx<'_> {
    pub(super) fn nest(&mut self, f: &syn::ExprForLoop) -> syn::Result<Nest> {
        let mut vars = Vec::new();
        let mut ranges = Vec::new();
        let mut loops = Vec::new();
        let mut cur = f;
        loop {
            let axis = vars.len();
            let v = match &*cur.pat {
                Pat::Ident(pi) if pi.subpat.is_none() => pi.ident.clone(),
                other => {
                    return Err(err(
                        other,
                        "a loop nest's variables must be plain names (`for z in ..`)",
                    ))
                }
            };
            if let Some(l) = &cur.label {
                return Err(err(l, "labels on loop nests are not supported"));
            }
            ranges.push(self.range(&cur.expr, axis)?);
            vars.push(v);
            loops.push(cur.clone());
            if vars.len() == self.ndim {
                break;
            }
            let body = &cur.body.stmts;
            match body.as_slice() {
                [Stmt::Expr(Expr::ForLoop(inner), _)] => cur = inner,
                [] => return Err(err(&cur.body, format!("empty loop body: a loop nest has one `for` per array axis ({}), the innermost holding the update", self.ndim))),
                stmts => {
                    let bad = stmts
                        .iter()
                        .find(|s| !matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
                        .unwrap_or(&stmts[0]);
                    return Err(err(
                        bad,
                        format!(
                            "this loop nest is not perfect: between two `for`s there may be nothing else; a nest has exactly one `for` per array axis ({}), the innermost holding the statements",
                            self.ndim
                        ),
                    ));
                }
            }
        }
        let sc = Scope {
            loop_vars: vars.iter().map(|v| v.to_string()).collect(),
            ranges: ranges.clone(),
            ..Scope::default()
        };
        let mut sc = sc;
        let body = self.block(&cur.body.stmts, &mut sc)?;
        Ok(Nest {
            vars,
            ranges,
            loops,
            body,
            span: f.for_token.span,
        })
    }

    pub(super) fn range(&self, e: &Expr, axis: usize) -> syn::Result<AxisRange> {
        let Expr::Range(r) = strip(e) else {
            return Err(err(
                e,
                "a loop nest's `for` runs over a range `lo..hi` or `lo..=hi`",
            ));
        };
        let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
            return Err(err(e, "a loop nest's range needs both bounds: `lo..hi`"));
        };
        let lo = self.bound(lo, axis)?;
        let mut hi = self.bound(hi, axis)?;
        if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            hi.offset = hi
                .offset
                .checked_add(1)
                .ok_or_else(|| err(e, "loop bound out of range"))?;
        }
        Ok(AxisRange { lo, hi })
    }

    pub(super) fn bound(&self, e: &Expr, axis: usize) -> syn::Result<Bound> {
        let msg = "loop bounds are an integer literal `c`, `n` or `n - c`, where `n` is the extent of this axis bound before the time loop (`let (nz, ny, nx) = a.dim();`)";
        if let Some(v) = int_lit(e) {
            return Ok(Bound::start(v));
        }
        let dim = |x: &Expr| -> syn::Result<()> {
            let id = ident_of(x).ok_or_else(|| err(x, msg))?;
            match self.pre.get(&id.to_string()) {
                Some(PreVar::Dim(a)) if *a == axis => Ok(()),
                Some(PreVar::Dim(a)) => Err(err(
                    id,
                    format!("`{id}` is the extent of axis {a}, but this loop runs over axis {axis}; each loop of a nest runs over its own axis, outermost first"),
                )),
                _ => Err(err(id, msg)),
            }
        };
        match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Sub(_) | syn::BinOp::Add(_)) => {
                dim(&b.left)?;
                let c = int_lit(&b.right).ok_or_else(|| err(&b.right, msg))?;
                Ok(Bound::end(if matches!(b.op, syn::BinOp::Sub(_)) {
                    -c
                } else {
                    c
                }))
            }
            x => {
                dim(x)?;
                Ok(Bound::end(0))
            }
        }
    }
}
