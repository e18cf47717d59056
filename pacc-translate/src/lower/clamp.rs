//! Stencil reads whose index is clamped at the array's ends (`t[[y, (x + 1).min(nx - 1)]]`,
//! `t[[y, x.max(1) - 1]]`, `(x + 1).clamp(1, nx - 2)`): a select between affine reads, so the
//! kernels and analyses see constant offsets only.
//!
//! Over the nest's range a clamp changes the index at one point at most (the first or the last
//! of the range), where the clamped index is again the loop variable plus a constant: there the
//! select picks that read, elsewhere the unclamped one. Clamps that pin the index over more
//! points are not affine reads and are refused. The CPU kernels keep the user's index
//! expression, so both backends compute the same element as Rust does.

use super::context::{err, Ctx, Scope};
use super::syntax::{ident_of, int_lit, strip};
use crate::ir::{Access, BinOp, KExpr, KExprKind, PreVar};
use pacc_runtime::program::{Base, Bound};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Expr;

/// One way an index resolves: under `cond` (`None`: otherwise), the loop variable plus `offset`.
type Alternative = (Option<KExpr>, i64);

const FORMS: &str = "a clamped index is `(v + c).min(B)`, `(v + c).max(B)` or `(v + c).clamp(A, B)`, optionally plus or minus a literal, with `B` a literal or this axis' extent minus a literal (`(x + 1).min(nx - 1)`, `x.max(1) - 1`), clamping at most the first or the last point of the loop's range";

impl Ctx<'_> {
    /// A stencil read `a[[..]]`; where some index is clamped, the select between its reads.
    pub(super) fn read(&mut self, ix: &syn::ExprIndex, sc: &Scope) -> syn::Result<KExprKind> {
        let Expr::Array(idx) = strip(&ix.index) else {
            return Ok(KExprKind::Read(self.access(ix, sc)?));
        };
        let mut axes = Vec::new();
        let mut clamped = false;
        for (axis, e) in idx.elems.iter().enumerate().take(sc.loop_vars.len()) {
            match self.offset(e, axis, sc) {
                Ok(c) => axes.push(vec![(None, c)]),
                Err(plain) => match self.clamped(e, axis, sc)? {
                    Some(alts) => {
                        clamped = true;
                        axes.push(alts);
                    }
                    None => return Err(plain),
                },
            }
        }
        let access = self.access_or_clamped(ix, sc, clamped)?;
        if !clamped {
            return Ok(KExprKind::Read(access));
        }
        let mut offsets = Vec::new();
        Ok(select(&axes, &access, &mut offsets, ix.span()).kind)
    }

    /// The access of a read without clamps (its offsets checked as today), or, with clamps,
    /// the array and tokens of one whose offsets [`select`] fills in.
    fn access_or_clamped(
        &mut self,
        ix: &syn::ExprIndex,
        sc: &Scope,
        clamped: bool,
    ) -> syn::Result<Access> {
        if !clamped {
            return self.access(ix, sc);
        }
        let id = ident_of(&ix.expr).ok_or_else(|| err(&ix.expr, "only arrays can be indexed"))?;
        let array = self
            .array(id)
            .ok_or_else(|| err(&ix.expr, format!("`{id}` is not an array parameter")))?;
        Ok(Access {
            array,
            offsets: Vec::new(),
            tokens: ix.to_token_stream(),
        })
    }

    /// `e` as a clamped index of `axis`: its alternatives, or `None` where `e` is no clamp.
    fn clamped(
        &mut self,
        e: &Expr,
        axis: usize,
        sc: &Scope,
    ) -> syn::Result<Option<Vec<Alternative>>> {
        let (m, d) = match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
                match (strip(&b.left), int_lit(&b.right)) {
                    (Expr::MethodCall(m), Some(c)) => (
                        m,
                        if matches!(b.op, syn::BinOp::Sub(_)) {
                            -c
                        } else {
                            c
                        },
                    ),
                    _ => return Ok(None),
                }
            }
            Expr::MethodCall(m) => (m, 0),
            _ => return Ok(None),
        };
        let name = m.method.to_string();
        let want = match name.as_str() {
            "min" | "max" => 1,
            "clamp" => 2,
            _ => return Ok(None),
        };
        if m.args.len() != want {
            return Err(err(m, FORMS));
        }
        let Some(range) = sc.ranges.get(axis).copied() else {
            return Ok(None);
        };
        let c = self.offset(&m.receiver, axis, sc)?;
        let mut bounds = Vec::new();
        for a in &m.args {
            let b = self.bound(a, axis, &[]).map_err(|_| err(a, FORMS))?;
            bounds.push((b, self.dim_scalar(a)?));
        }
        let span = e.span();
        let cmp = |op: BinOp, (b, dim): (Bound, Option<usize>)| compare(axis, c, op, b, dim, span);
        // Where the index is pinned to `b` over `vars` (inclusive, in one frame), the offset.
        let pinned = |b: Bound, lo: Bound, hi: Bound| -> syn::Result<Option<i64>> {
            if lo.base != hi.base || b.base != lo.base {
                return Err(err(e, FORMS));
            }
            match lo.offset.cmp(&hi.offset) {
                std::cmp::Ordering::Greater => Ok(None),
                std::cmp::Ordering::Equal => Ok(Some(b.offset + d - lo.offset)),
                std::cmp::Ordering::Less => Err(err(e, FORMS)),
            }
        };
        let last = Bound {
            offset: range.hi.offset - 1,
            ..range.hi
        };
        let above = |b: Bound| Bound {
            offset: b.offset - c + 1,
            ..b
        };
        let below = |b: Bound| Bound {
            offset: b.offset - c - 1,
            ..b
        };
        let mut alts = Vec::new();
        match name.as_str() {
            "min" => {
                if let Some(o) = pinned(bounds[0].0, above(bounds[0].0), last)? {
                    alts.push((Some(cmp(BinOp::Le, bounds[0])), c + d));
                    alts.push((None, o));
                }
            }
            "max" => {
                if let Some(o) = pinned(bounds[0].0, range.lo, below(bounds[0].0))? {
                    alts.push((Some(cmp(BinOp::Ge, bounds[0])), c + d));
                    alts.push((None, o));
                }
            }
            _ => {
                if let Some(o) = pinned(bounds[0].0, range.lo, below(bounds[0].0))? {
                    alts.push((Some(cmp(BinOp::Lt, bounds[0])), o));
                }
                if let Some(o) = pinned(bounds[1].0, above(bounds[1].0), last)? {
                    alts.push((Some(cmp(BinOp::Gt, bounds[1])), o));
                }
            }
        }
        if alts.last().is_none_or(|(cond, _)| cond.is_some()) {
            alts.push((None, c + d));
        }
        Ok(Some(alts))
    }

    /// The program scalar of the axis extent a bound expression names, if it names one.
    fn dim_scalar(&mut self, a: &Expr) -> syn::Result<Option<usize>> {
        let id = match strip(a) {
            Expr::Binary(b) => ident_of(&b.left),
            x => ident_of(x),
        };
        match id {
            Some(id) if matches!(self.pre.get(&id.to_string()), Some(PreVar::Dim(_))) => {
                let id = id.clone();
                Ok(Some(self.scalar(&id, Some(crate::ir::Ty::Usize))?))
            }
            _ => Ok(None),
        }
    }
}

fn kx(kind: KExprKind, span: Span) -> KExpr {
    KExpr { kind, span }
}

fn int(v: i64, span: Span) -> KExpr {
    kx(KExprKind::Int(v.to_string(), None), span)
}

fn plus(a: KExpr, k: i64, span: Span) -> KExpr {
    if k == 0 {
        return a;
    }
    let sum = KExprKind::Bin(BinOp::Add, Box::new(a), Box::new(int(k, span)));
    kx(KExprKind::Paren(Box::new(kx(sum, span))), span)
}

/// `v + c op b`, written with non-negative literals on both sides (`x + 2 <= nx`, not
/// `x + 1 <= nx - 1`), so no side wraps around in unsigned arithmetic.
fn compare(axis: usize, c: i64, op: BinOp, b: Bound, dim: Option<usize>, span: Span) -> KExpr {
    let k = c - b.offset;
    let lhs = plus(kx(KExprKind::LoopVar(axis), span), k.max(0), span);
    let rhs = match (b.base, dim) {
        (Base::Extent, Some(s)) | (Base::Scalar(s), _) => {
            plus(kx(KExprKind::Scalar(s), span), (-k).max(0), span)
        }
        _ => int((-k).max(0), span),
    };
    let cmp = KExprKind::Bin(op, Box::new(lhs), Box::new(rhs));
    kx(KExprKind::Paren(Box::new(kx(cmp, span))), span)
}

/// The read of `access` with the offsets chosen per axis among `axes`' alternatives.
fn select(axes: &[Vec<Alternative>], access: &Access, chosen: &mut Vec<i64>, span: Span) -> KExpr {
    let Some(alts) = axes.get(chosen.len()) else {
        let read = Access {
            offsets: chosen.clone(),
            ..access.clone()
        };
        return kx(KExprKind::Read(read), span);
    };
    let mut pick = |o: i64| {
        chosen.push(o);
        let r = select(axes, access, chosen, span);
        chosen.pop();
        r
    };
    let (last, rest) = alts.split_last().expect("an axis has an alternative");
    let mut out = pick(last.1);
    for (cond, o) in rest.iter().rev() {
        let cond = cond
            .clone()
            .expect("only the last alternative is unconditional");
        let then = pick(*o);
        out = kx(
            KExprKind::If(Box::new(cond), Box::new(then), Box::new(out)),
            span,
        );
    }
    out
}
