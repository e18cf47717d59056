//! The time loop's body: its loop nests, swaps, reduction resets and single-point statements.

use super::context::{err, Ctx, Scope, STEP_SURFACE};
use super::syntax::{collect_pat_idents, ident_of, is_assign_op, is_swap, mentions, strip};
use crate::ir::{BinOp, Point, PreVar, StepItem};
use crate::parse::args::push;
use crate::typing::bin_op;
use quote::ToTokens;
use syn::{Expr, Ident, Stmt};

impl Ctx<'_> {
    /// The time loop's body as step items; reduction resets are resolved once every reduction
    /// is known, and kernels may not read reductions.
    pub(super) fn step(&mut self, body: &[Stmt]) -> syn::Result<Vec<StepItem>> {
        let mut items = Vec::new();
        let mut resets: Vec<(Ident, Expr, usize)> = Vec::new();
        let mut errors = None;
        for s in body {
            match self.step_item(s) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {
                    // A reset candidate: resolved once every reduction is known.
                    if let Stmt::Expr(Expr::Assign(a), _) = s {
                        if let Some(id) = ident_of(&a.left) {
                            resets.push((id.clone(), (*a.right).clone(), items.len()));
                            items.push(StepItem::Reset {
                                reduction: usize::MAX,
                                value: (*a.right).clone(),
                            });
                        }
                    }
                }
                Err(e) => push(&mut errors, e),
            }
        }
        for (id, value, at) in resets {
            match self.reset(id, value) {
                Ok(item) => items[at] = item,
                Err(e) => push(&mut errors, e),
            }
        }
        for sc in &self.scalars {
            if self.reductions.iter().any(|r| r.name == sc.name) {
                push(
                    &mut errors,
                    err(
                        &sc.name,
                        format!("reduction variable `{}` is read by a kernel; a reduction can be read only after the time loop (inside kernels it is only accumulated)", sc.name),
                    ),
                );
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(items),
        }
    }

    /// `id = value;` in the time loop: the reset of reduction `id`.
    pub(super) fn reset(&self, id: Ident, value: Expr) -> syn::Result<StepItem> {
        let Some(r) = self.reductions.iter().position(|r| r.name == id) else {
            return Err(err(
                &id,
                format!(
                    "`{id}` is not a reduction: assignments in the time loop outside a loop nest may only reset a reduction variable (one accumulated with `{id} += e` in a nest); {STEP_SURFACE}"
                ),
            ));
        };
        if let Some(t) = &self.time_var {
            if mentions(value.to_token_stream(), t) {
                return Err(err(&value, "a reduction reset's value may not depend on the time variable; it is evaluated once before the run"));
            }
        }
        Ok(StepItem::Reset {
            reduction: r,
            value,
        })
    }

    /// One statement of the time loop. `Ok(None)` for a reset candidate.
    pub(super) fn step_item(&mut self, s: &Stmt) -> syn::Result<Option<StepItem>> {
        let e = match s {
            Stmt::Expr(e, _) => e,
            Stmt::Local(l) => {
                // Later uses of the names should not add errors of their own.
                let mut names = Vec::new();
                collect_pat_idents(&l.pat, &mut names);
                for n in names {
                    self.pre.insert(n, PreVar::Poisoned);
                }
                return Err(err(
                    l,
                    format!("`let` in the time loop outside a loop nest is not supported: compute the value before the time loop or inside a nest; {STEP_SURFACE}"),
                ));
            }
            Stmt::Macro(m) => {
                return Err(err(
                    m,
                    format!("macros are not supported in the time loop; {STEP_SURFACE}"),
                ))
            }
            Stmt::Item(i) => {
                return Err(err(
                    i,
                    format!("items are not supported in the time loop; {STEP_SURFACE}"),
                ))
            }
        };
        match e {
            Expr::ForLoop(f) => Ok(Some(StepItem::Nest(self.nest(f)?))),
            Expr::Call(c) if is_swap(&c.func) => {
                if c.args.len() != 2 {
                    return Err(err(c, "`swap` takes two arrays"));
                }
                let mut ids = Vec::new();
                for a in &c.args {
                    let mut x = strip(a);
                    loop {
                        match x {
                            Expr::Reference(r) => x = strip(&r.expr),
                            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                                x = strip(&u.expr)
                            }
                            _ => break,
                        }
                    }
                    match ident_of(x).and_then(|id| self.array(id)) {
                        Some(i) => ids.push(i),
                        None => {
                            return Err(err(
                                a,
                                "`std::mem::swap` in the time loop exchanges two array parameters (`std::mem::swap(a, b)` or `std::mem::swap(&mut a, &mut b)`)",
                            ))
                        }
                    }
                }
                let (a, b) = (ids[0], ids[1]);
                let (aa, bb) = (&self.arrays[a], &self.arrays[b]);
                if a == b {
                    return Err(err(
                        c,
                        "swapping an array with itself does nothing; remove it",
                    ));
                }
                if aa.elem != bb.elem {
                    return Err(err(
                        c,
                        format!(
                            "swapped arrays must have the same element type: `{}` holds {} but `{}` holds {}",
                            aa.name,
                            aa.elem.rust_name(),
                            bb.name,
                            bb.elem.rust_name()
                        ),
                    ));
                }
                Ok(Some(StepItem::Swap {
                    a,
                    b,
                    stmt: s.clone(),
                }))
            }
            Expr::Assign(a) if matches!(strip(&a.left), Expr::Index(_)) => Ok(Some(
                StepItem::Point(self.point(&a.left, None, &a.right, s)?),
            )),
            Expr::Binary(b) if is_assign_op(&b.op) && matches!(strip(&b.left), Expr::Index(_)) => {
                Ok(Some(StepItem::Point(self.point(
                    &b.left,
                    bin_op(&b.op),
                    &b.right,
                    s,
                )?)))
            }
            Expr::Assign(a) if ident_of(&a.left).is_some() => Ok(None),
            other => Err(err(
                other,
                format!("unsupported statement in the time loop; {STEP_SURFACE}"),
            )),
        }
    }

    pub(super) fn point(
        &mut self,
        target: &Expr,
        op: Option<BinOp>,
        value: &Expr,
        stmt: &Stmt,
    ) -> syn::Result<Point> {
        let Expr::Index(ix) = strip(target) else {
            return Err(err(target, "expected an array element"));
        };
        let array = ident_of(&ix.expr).and_then(|id| self.array(id)).ok_or_else(|| {
            err(
                &ix.expr,
                "a single-point statement in the time loop writes an element of an array parameter: `a[[i, j, k]] += e;`",
            )
        })?;
        let Expr::Array(idx) = strip(&ix.index) else {
            return Err(err(
                &ix.index,
                format!(
                    "index arrays with one index per axis: `{}[[i, j, k]]`",
                    self.arrays[array].name
                ),
            ));
        };
        if idx.elems.len() != self.ndim {
            return Err(err(
                &ix.index,
                format!(
                    "wrong number of indices: `{}` has {} axes, this index has {}",
                    self.arrays[array].name,
                    self.ndim,
                    idx.elems.len()
                ),
            ));
        }
        if let Some(t) = &self.time_var {
            for e in &idx.elems {
                if mentions(e.to_token_stream(), t) {
                    return Err(err(
                        e,
                        "the index of a single-point statement may not depend on the time variable; it is evaluated once before the run",
                    ));
                }
            }
        }
        let index: Vec<Expr> = idx.elems.iter().cloned().collect();
        let sc = Scope {
            point: Some((
                array,
                index
                    .iter()
                    .map(|e| e.to_token_stream().to_string())
                    .collect(),
            )),
            ..Scope::default()
        };
        let value = self.expr(value, &sc)?;
        Ok(Point {
            array,
            index,
            op,
            value,
            stmt: stmt.clone(),
        })
    }
}
