//! A loop nest: one `for` per array axis over a range whose bounds are fixed before the time
//! loop (the axis's extent, integer scalars, or expressions of them: docs/internals.md §1, "Loop
//! bounds"), the innermost holding the kernel's statements.

use super::context::{err, Ctx, Scope};
use super::interchange;
use super::syntax::{ident_of, int_lit, strip};
use crate::ir::{Nest, PreVar, ScalarUse, Ty};
use pacc_runtime::program::{AxisRange, Bound, SYNTHETIC_PREFIX};
use quote::{format_ident, ToTokens};
use syn::{Expr, Pat, Stmt};

impl Ctx<'_> {
    pub(super) fn nest(&mut self, f: &syn::ExprForLoop) -> syn::Result<Nest> {
        let mut vars = Vec::new();
        let mut loops = Vec::new();
        let mut cur = f;
        loop {
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
            vars.push(v);
            loops.push(cur.clone());
            if vars.len() == self.ndim {
                break;
            }
            cur = self.inner_loop(cur)?;
        }
        // Loops written in another order than the layout's run in the layout's: each loop,
        // with its bounds, moves to the axis its variable indexes (`interchange.rs`).
        let names: Vec<String> = self.arrays.iter().map(|a| a.name.to_string()).collect();
        let written = interchange::layout_order(&vars, &names, &cur.body.stmts).map(|perm| {
            let written = vars.clone();
            vars = perm.iter().map(|&p| written[p].clone()).collect();
            let mut moved: Vec<syn::ExprForLoop> = perm.iter().map(|&p| loops[p].clone()).collect();
            // The innermost loop holds the statements (the CPU kernels take them from there).
            if let Some(last) = moved.last_mut() {
                last.body = cur.body.clone();
            }
            loops = moved;
            written
        });
        let all = vars.clone();
        let ranges = loops
            .iter()
            .enumerate()
            .map(|(axis, l)| self.range(&l.expr, axis, &all))
            .collect::<syn::Result<Vec<_>>>()?;
        let mut sc = Scope {
            loop_vars: vars.iter().map(|v| v.to_string()).collect(),
            ranges: ranges.clone(),
            ..Scope::default()
        };
        let body = self.block(&cur.body.stmts, &mut sc)?;
        Ok(Nest {
            vars,
            ranges,
            loops,
            body,
            span: f.for_token.span,
            written,
        })
    }

    /// The one `for` in the body of `cur`, a loop of a nest that has more axes to go.
    fn inner_loop<'f>(&self, cur: &'f syn::ExprForLoop) -> syn::Result<&'f syn::ExprForLoop> {
        match cur.body.stmts.as_slice() {
            [Stmt::Expr(Expr::ForLoop(inner), _)] => Ok(inner),
            [] => Err(err(&cur.body, format!("empty loop body: a loop nest has one `for` per array axis ({}), the innermost holding the update", self.ndim))),
            stmts => {
                let bad = stmts
                    .iter()
                    .find(|s| !matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
                    .unwrap_or(&stmts[0]);
                Err(err(
                    bad,
                    format!(
                        "this loop nest is not perfect: between two `for`s there may be nothing else; a nest has exactly one `for` per array axis ({}), the innermost holding the statements",
                        self.ndim
                    ),
                ))
            }
        }
    }

    pub(super) fn range(
        &mut self,
        e: &Expr,
        axis: usize,
        outer: &[syn::Ident],
    ) -> syn::Result<AxisRange> {
        let Expr::Range(r) = strip(e) else {
            return Err(err(
                e,
                "a loop nest's `for` runs over a range `lo..hi` or `lo..=hi`",
            ));
        };
        let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
            return Err(err(e, "a loop nest's range needs both bounds: `lo..hi`"));
        };
        let lo = self.bound(lo, axis, outer)?;
        let mut hi = self.bound(hi, axis, outer)?;
        if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            hi = hi
                .shifted(1)
                .ok_or_else(|| err(e, "loop bound out of range"))?;
        }
        Ok(AxisRange { lo, hi })
    }

    /// One end of a loop's range. `c`, `n`, `n - c` and `n + c`, `n` this axis's extent, keep
    /// the forms the runtime evaluates against the shape (`Bound::start`, `Bound::end`); an
    /// integer scalar `s`, `s - c` or `s + c` (a parameter, a pre-loop local of known integer
    /// type, another axis's extent) counts from that program scalar; any other integer
    /// expression of values fixed before the time loop becomes a synthetic `i64` scalar the
    /// wrapper computes from the user's tokens before the run (`program::bound_value`).
    pub(super) fn bound(
        &mut self,
        e: &Expr,
        axis: usize,
        outer: &[syn::Ident],
    ) -> syn::Result<Bound> {
        if let Some(v) = int_lit(e) {
            return Ok(Bound::start(v));
        }
        let (base, offset) = match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Sub(_) | syn::BinOp::Add(_)) => {
                match (ident_of(&b.left), int_lit(&b.right)) {
                    (Some(id), Some(c)) if matches!(b.op, syn::BinOp::Sub(_)) => {
                        (Some(id), c.checked_neg())
                    }
                    (Some(id), Some(c)) => (Some(id), Some(c)),
                    _ => (None, None),
                }
            }
            x => (ident_of(x), Some(0)),
        };
        if let (Some(id), Some(offset)) = (base, offset) {
            match self.pre.get(&id.to_string()).cloned() {
                Some(PreVar::Dim(a)) if a == axis => return Ok(Bound::end(offset)),
                Some(PreVar::Dim(_)) => {
                    self.check_bound_expr(e, outer)?;
                    let s = self.scalar(id, Some(Ty::Usize))?;
                    return Ok(Bound::scalar(s, offset));
                }
                Some(PreVar::Scalar { ty: Some(t), .. }) if t.is_int() && !t.is_lit() => {
                    self.check_bound_expr(e, outer)?;
                    let s = self.scalar(id, Some(t))?;
                    return Ok(Bound::scalar(s, offset));
                }
                _ => {}
            }
        }
        self.check_bound_expr(e, outer)?;
        Ok(Bound::scalar(self.synthetic_bound(e), 0))
    }

    /// The synthetic scalar holding the value of bound expression `e` (one per distinct
    /// expression of the function).
    fn synthetic_bound(&mut self, e: &Expr) -> usize {
        let text = e.to_token_stream().to_string();
        if let Some((id, _)) =
            (self.bound_exprs.iter()).find(|(_, x)| x.to_token_stream().to_string() == text)
        {
            let id = id.clone();
            return self.scalars.iter().position(|s| s.name == id).unwrap_or(0);
        }
        let name = format_ident!("{SYNTHETIC_PREFIX}b{}", self.bound_exprs.len());
        self.bound_exprs.push((name.clone(), e.clone()));
        self.scalars.push(ScalarUse {
            name,
            ty: Ty::I64,
            dim: None,
        });
        self.scalars.len() - 1
    }

    /// Refuses a bound that is not an integer expression of values fixed before the time loop.
    fn check_bound_expr(&mut self, e: &Expr, outer: &[syn::Ident]) -> syn::Result<()> {
        let surface = "a loop bound is an integer expression of values fixed before the time loop: literals, integer parameters and locals computed before it, array extents (`let (nz, ny, nx) = a.dim();`), `+ - * / %`, `as` casts to integer types and `min`/`max` (`0..nx.min(m)`, `r..nx - r`, `(n / 2)..n`)";
        match e {
            Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_)) => Ok(()),
            Expr::Paren(p) => self.check_bound_expr(&p.expr, outer),
            Expr::Group(g) => self.check_bound_expr(&g.expr, outer),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                self.check_bound_expr(&u.expr, outer)
            }
            Expr::Binary(b) => {
                use syn::BinOp as B;
                if !matches!(
                    b.op,
                    B::Add(_) | B::Sub(_) | B::Mul(_) | B::Div(_) | B::Rem(_)
                ) {
                    return Err(err(b.op, surface));
                }
                self.check_bound_expr(&b.left, outer)?;
                self.check_bound_expr(&b.right, outer)
            }
            Expr::Cast(c) => {
                let int = matches!(crate::parse::sig::scalar_ty(&c.ty), Some(t) if t.is_int());
                if !int {
                    return Err(err(&c.ty, surface));
                }
                self.check_bound_expr(&c.expr, outer)
            }
            Expr::MethodCall(m)
                if (m.method == "min" || m.method == "max") && m.args.len() == 1 =>
            {
                self.check_bound_expr(&m.receiver, outer)?;
                self.check_bound_expr(&m.args[0], outer)
            }
            Expr::Call(c) if c.args.len() == 2 && min_max_path(&c.func) => {
                self.check_bound_expr(&c.args[0], outer)?;
                self.check_bound_expr(&c.args[1], outer)
            }
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let id = p.path.get_ident().expect("checked");
                self.check_bound_name(id, outer, surface)
            }
            other => Err(err(other, surface)),
        }
    }

    fn check_bound_name(
        &mut self,
        id: &syn::Ident,
        outer: &[syn::Ident],
        surface: &str,
    ) -> syn::Result<()> {
        if outer.iter().any(|v| v == id) {
            return Err(err(id, format!("this bound reads loop variable `{id}`; the loops of a nest run over fixed ranges (a triangular or skewed nest is not supported): {surface}")));
        }
        if self.time_var.as_deref() == Some(id.to_string().as_str()) {
            return Err(err(id, format!("this bound reads the time variable `{id}`; a nest's ranges are the same at every step: {surface}")));
        }
        match self.pre.get(&id.to_string()) {
            Some(PreVar::Dim(_)) => {}
            Some(PreVar::Scalar { ty, .. }) if ty.is_none_or(|t| t.is_int()) => {}
            Some(PreVar::Scalar { .. }) => {
                return Err(err(id, format!("`{id}` is not an integer: {surface}")))
            }
            Some(PreVar::Poisoned) => {}
            Some(_) => return Err(err(id, format!("`{id}` is not an integer scalar: {surface}"))),
            None => return Err(err(id, format!("cannot find `{id}` among the parameters and the values computed before the time loop: {surface}"))),
        }
        self.bound_reads.push(id.clone());
        Ok(())
    }
}

/// `min`, `max`, `usize::min`, `std::cmp::max`, ... as a function.
fn min_max_path(f: &Expr) -> bool {
    match strip(f) {
        Expr::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "min" || s.ident == "max"),
        _ => false,
    }
}
