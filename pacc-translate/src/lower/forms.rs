//! Kernel-language forms that lower to the plain IR: tuple `let`s, inner loops of a constant
//! trip count (unrolled), and the compile-time check of `clamp`'s literal bounds.
//!
//! The CPU closures run the user's own tokens, so these forms need only a C equivalent whose
//! operations come in the same order: a tuple `let` becomes one `let` per name (every part
//! computed before any name is bound, as Rust does), an `if` yielding tuples one `if` value per
//! name, and an inner loop one copy of its body per iteration.

use super::context::{err, Ctx, Scope};
use super::syntax::{ident_of, strip};
use crate::ir::{KExpr, KExprKind, KStmt, Ty};
use crate::parse::sig::scalar_ty;
use syn::spanned::Spanned;
use syn::{parse_quote, Expr, Lit, Pat, Stmt};

/// Iterations an inner loop may unroll to: enough for any stencil's tap loop, few enough to
/// keep the generated kernels small.
pub const MAX_UNROLL: i64 = 64;

/// `e` split into `n` parts: a tuple's elements, or an `if`/`else` (or a block) whose every
/// branch ends in such a tuple, as one `if` per part.
fn tuple_parts(e: &Expr, n: usize) -> Option<Vec<Expr>> {
    match strip(e) {
        Expr::Tuple(t) if t.elems.len() == n => Some(t.elems.iter().cloned().collect()),
        Expr::Block(b) if b.label.is_none() => match b.block.stmts.as_slice() {
            [Stmt::Expr(x, None)] => tuple_parts(x, n),
            _ => None,
        },
        Expr::If(i) => {
            let (_, els) = i.else_branch.as_ref()?;
            let then = match i.then_branch.stmts.as_slice() {
                [Stmt::Expr(x, None)] => tuple_parts(x, n)?,
                _ => return None,
            };
            let els = tuple_parts(els, n)?;
            let cond = &i.cond;
            Some(
                then.into_iter()
                    .zip(els)
                    .map(|(a, b)| parse_quote!(if #cond { #a } else { #b }))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The names of a tuple pattern with their annotated types: `(a, mut b, _)`, nested tuples
/// flattened (`_` binds nothing: `None`).
fn tuple_names(
    p: &Pat,
    ann: Option<&syn::Type>,
    out: &mut Vec<(Option<syn::Ident>, Option<Ty>)>,
) -> syn::Result<()> {
    let ty = |t: Option<&syn::Type>| -> syn::Result<Option<Ty>> {
        match t {
            None | Some(syn::Type::Infer(_)) => Ok(None),
            Some(t) => scalar_ty(t).map(Some).ok_or_else(|| {
                err(t, "kernel locals have a scalar type: f32, f64, i32, i64, u32, u64, usize, isize or bool")
            }),
        }
    };
    match p {
        Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
            out.push((Some(pi.ident.clone()), ty(ann)?))
        }
        Pat::Wild(_) => out.push((None, None)),
        Pat::Type(pt) => tuple_names(&pt.pat, Some(&pt.ty), out)?,
        Pat::Paren(pp) => tuple_names(&pp.pat, ann, out)?,
        Pat::Tuple(t) => {
            let anns: Vec<&syn::Type> = match ann {
                Some(syn::Type::Tuple(tt)) if tt.elems.len() == t.elems.len() => {
                    tt.elems.iter().collect()
                }
                Some(other) => {
                    return Err(err(other, "a tuple pattern's annotation is a tuple of as many scalar types: `let (a, b): (f32, f32) = ..;`"))
                }
                None => Vec::new(),
            };
            for (i, e) in t.elems.iter().enumerate() {
                tuple_names(e, anns.get(i).copied(), out)?;
            }
        }
        other => {
            return Err(err(
                other,
                "`let` in a kernel binds plain names or a tuple of them: `let s = ..;`, `let (a, b) = (.., ..);`",
            ))
        }
    }
    Ok(())
}

/// The element expressions of a nested tuple, flattened in the order of [`tuple_names`].
fn flatten(p: &Pat, e: Expr, out: &mut Vec<Expr>) -> Option<()> {
    let p = match p {
        Pat::Type(pt) => &*pt.pat,
        Pat::Paren(pp) => &*pp.pat,
        p => p,
    };
    match p {
        Pat::Tuple(t) => {
            let parts = tuple_parts(&e, t.elems.len())?;
            for (sub, x) in t.elems.iter().zip(parts) {
                flatten(sub, x, out)?;
            }
        }
        _ => out.push(e),
    }
    Some(())
}

impl Ctx<'_> {
    /// `let (a, b) = (e1, e2);` and `let (a, b) = if c { (x, y) } else { (y, x) };`: one `let`
    /// per name, every part lowered before any name comes into scope (a part reading `a`
    /// reads the `a` from before this `let`).
    pub(super) fn tuple_let(
        &mut self,
        l: &syn::Local,
        init: &Expr,
        sc: &mut Scope,
    ) -> syn::Result<Vec<KStmt>> {
        let mut names = Vec::new();
        tuple_names(&l.pat, None, &mut names)?;
        let mut parts = Vec::new();
        flatten(&l.pat, init.clone(), &mut parts).ok_or_else(|| {
            err(init, "a tuple `let` in a kernel takes a tuple of as many values, `(e1, e2)`, or an `if`/`else` whose branches end in such tuples")
        })?;
        let mut lowered = Vec::new();
        for ((name, _), part) in names.iter().zip(&parts) {
            if name.is_some() {
                lowered.push(Some(self.expr(part, sc)?));
            } else {
                lowered.push(None);
            }
        }
        let mut out = Vec::new();
        for ((name, ty), init) in names.into_iter().zip(lowered) {
            let (Some(name), Some(init)) = (name, init) else {
                continue;
            };
            if self.array(&name).is_some() {
                return Err(err(
                    &name,
                    format!("`{name}` shadows an array parameter; pick another name"),
                ));
            }
            let name = self.bind_local(sc, &name);
            out.push(KStmt::Let { name, ty, init });
        }
        Ok(out)
    }

    /// `for k in a..b { .. }` inside a nest, `a` and `b` integer literals (`-r..=r` too):
    /// the body once per value of `k`, each copy in a scope of its own (an `if true`), with
    /// `k` a constant, so `u[[z, y, x + k]]` is a read at a known offset.
    pub(super) fn unrolled_loop(
        &mut self,
        f: &syn::ExprForLoop,
        sc: &mut Scope,
    ) -> syn::Result<Option<Vec<KStmt>>> {
        let Some((lo, hi)) = literal_range(&f.expr) else {
            return Ok(None);
        };
        let var = match &*f.pat {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => Some(pi.ident.clone()),
            Pat::Wild(_) => None,
            other => return Err(err(other, "an inner loop's variable is a plain name")),
        };
        if let Some(l) = &f.label {
            return Err(err(l, "labels on inner loops are not supported"));
        }
        let trips = hi.saturating_sub(lo).max(0);
        if trips > MAX_UNROLL {
            return Err(err(
                &f.expr,
                format!("an inner loop in a kernel is unrolled, so it runs at most {MAX_UNROLL} times; this one runs {trips}"),
            ));
        }
        let mut out = Vec::new();
        for v in lo..hi {
            if let Some(var) = &var {
                sc.consts.push((var.to_string(), v, sc.locals.len()));
            }
            let body = self.block(&f.body.stmts, sc);
            if var.is_some() {
                sc.consts.pop();
            }
            let body = body?;
            if body.iter().any(|s| matches!(s, KStmt::Let { .. })) {
                // The copy's locals in a C scope of their own (`if (true) { .. }`).
                out.push(KStmt::If {
                    cond: KExpr {
                        kind: KExprKind::Bool(true),
                        span: f.for_token.span,
                    },
                    then: body,
                    els: None,
                });
            } else {
                out.extend(body);
            }
        }
        Ok(Some(out))
    }
}

/// `a..b` / `a..=b` with (possibly negated) integer literal bounds, as a half-open range.
fn literal_range(e: &Expr) -> Option<(i64, i64)> {
    let Expr::Range(r) = strip(e) else {
        return None;
    };
    let lo = signed_int(r.start.as_deref()?)?;
    let hi = signed_int(r.end.as_deref()?)?;
    match r.limits {
        syn::RangeLimits::Closed(_) => Some((lo, hi.checked_add(1)?)),
        syn::RangeLimits::HalfOpen(_) => Some((lo, hi)),
    }
}

fn signed_int(e: &Expr) -> Option<i64> {
    match strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => signed_int(&u.expr)?.checked_neg(),
        _ => None,
    }
}

/// A numeric literal, possibly negated, as an `f64` (integers too).
fn literal_value(e: &Expr) -> Option<f64> {
    match strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<f64>().ok(),
            Lit::Float(f) => f.base10_parse::<f64>().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => literal_value(&u.expr).map(|v| -v),
        _ => None,
    }
}

/// `v.clamp(lo, hi)` panics in Rust when `lo > hi`: with both bounds literals, that is known
/// now, and refused here rather than left to panic in the serial run (and to compute in a
/// kernel).
pub(super) fn check_clamp(name: &str, bounds: &[&Expr]) -> syn::Result<()> {
    let [lo, hi] = bounds else { return Ok(()) };
    if name != "clamp" {
        return Ok(());
    }
    if let (Some(a), Some(b)) = (literal_value(lo), literal_value(hi)) {
        if a > b {
            let span = lo.span().join(hi.span()).unwrap_or_else(|| lo.span());
            return Err(syn::Error::new(
                span,
                format!("`clamp` panics when its lower bound is above its upper bound, and here {} > {}: write the bounds in order, `clamp(lo, hi)`", quote::ToTokens::to_token_stream(lo), quote::ToTokens::to_token_stream(hi)),
            ));
        }
    }
    Ok(())
}

/// A name bound to a constant by an unrolled loop, as an integer literal of open type.
pub(super) fn const_value(sc: &Scope, id: &syn::Ident) -> Option<KExprKind> {
    let v = sc.constant(id)?;
    let lit = KExpr {
        kind: KExprKind::Int(v.unsigned_abs().to_string(), None),
        span: id.span(),
    };
    Some(if v < 0 {
        KExprKind::Paren(Box::new(KExpr {
            kind: KExprKind::Neg(Box::new(lit)),
            span: id.span(),
        }))
    } else {
        lit.kind
    })
}

/// The constant a literal or an unrolled loop's variable stands for in an index (`x + k`).
pub(super) fn index_const(sc: &Scope, e: &Expr) -> Option<i64> {
    signed_int(e).or_else(|| sc.constant(ident_of(e)?))
}

/// `e` as `var + c` for a constant `c`: `var`, `var + k`, `k + var`, `var + k - 2`, with `k`
/// a literal or an unrolled loop's variable.
pub(super) fn var_plus_const(e: &Expr, var: &str, sc: &Scope) -> Option<i64> {
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
            let neg = matches!(b.op, syn::BinOp::Sub(_));
            if let Some(l) = var_plus_const(&b.left, var, sc) {
                let r = index_const(sc, &b.right)?;
                return if neg {
                    l.checked_sub(r)
                } else {
                    l.checked_add(r)
                };
            }
            if neg {
                return None;
            }
            let l = index_const(sc, &b.left)?;
            l.checked_add(var_plus_const(&b.right, var, sc)?)
        }
        x => (ident_of(x)? == var && sc.constant(ident_of(x)?).is_none()).then_some(0),
    }
}

/// Why `id[..]` is not an array read: what `id` is, and for a name the macro cannot see (a
/// module-level `const`), where to define it instead.
pub(super) fn not_an_array(id: &syn::Ident, pre: Option<&crate::ir::PreVar>) -> String {
    match pre {
        None => format!("`{id}` is not an array parameter or a table of the function: `#[pacc::pipeline]` sees only the function, so a module-level `const` or `static` is invisible to it; define the table inside the function before the time loop (`const {id}: [f64; 5] = [..];` or `let {id} = [..];`), or pass it as a `&[f64]` parameter"),
        Some(_) => format!("`{id}` is not an array parameter or a float table (`[f32; N]`, `[f64; N]`, a slice `&[f32]`); kernels index arrays `a[[z, y, x]]` and 1D float tables `w[i]`"),
    }
}

/// The refusal of scalars whose type nothing before the time loop tells (CUDA needs it): the
/// annotation to add, with the type the kernels use it at (what it is combined with: an
/// array's element, another scalar), or both float types when no use tells.
pub(super) fn untyped_error(
    cx: &Ctx<'_>,
    arrays: &[crate::ir::ArrayParam],
    items: &[crate::ir::StepItem],
) -> syn::Error {
    use crate::ir::StepItem;
    let elems: Vec<_> = arrays.iter().map(|a| a.elem).collect();
    let bodies: Vec<&[KStmt]> = items
        .iter()
        .filter_map(|i| match i {
            StepItem::Nest(n) => Some(n.body.as_slice()),
            _ => None,
        })
        .collect();
    let points: Vec<&KExpr> = items
        .iter()
        .filter_map(|i| match i {
            StepItem::Point(p) => Some(&p.value),
            _ => None,
        })
        .collect();
    let mut env = crate::analysis::types::Env {
        arrays: &elems,
        scalars: &cx.scalars,
        slices: &cx.slices,
        reductions: &cx.reductions,
        time: Ty::Usize,
        locals: Vec::new(),
    };
    let (found, _) = crate::analysis::types::resolve_uses(&bodies, &points, &mut env);
    let mut errors: Option<syn::Error> = None;
    for &i in &cx.untyped {
        let id = &cx.scalars[i].name;
        let hint = match found.get(&crate::analysis::types::Open::Scalar(i)) {
            Some(t) => format!(
                "the kernel uses it as {0}, so `let {id}: {0} = ..;`",
                t.rust_name()
            ),
            None => {
                format!("`let {id}: f32 = ..;` or `let {id}: f64 = ..;`, the type its value has")
            }
        };
        let e = err(
            id,
            format!("cannot infer the type of `{id}`, which the kernel reads; annotate it where it is declared before the time loop: {hint}"),
        );
        match &mut errors {
            Some(x) => x.combine(e),
            None => errors = Some(e),
        }
    }
    errors.unwrap_or_else(|| err(&cx.scalars[0].name, "internal error: no untyped scalar"))
}
