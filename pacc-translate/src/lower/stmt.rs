//! The statements of a kernel: `let`, assignments to locals, writes at the centre point,
//! reductions and `if`.

use super::context::{err, Ctx, Scope, KERNEL_SURFACE};
use super::syntax::{for_head, ident_of, is_assign_op, strip};
use crate::ir::{BinOp, KStmt, PreVar, ReductionUse, Ty};
use crate::parse::args::push;
use crate::parse::sig::scalar_ty;
use crate::typing::bin_op;
use pacc_runtime::program::ReduceOp;
use syn::{Expr, Ident, Pat, Stmt};

impl Ctx<'_> {
    pub(super) fn block(&mut self, stmts: &[Stmt], sc: &mut Scope) -> syn::Result<Vec<KStmt>> {
        let depth = sc.locals.len();
        let mut out = Vec::new();
        let mut errors = None;
        for s in stmts {
            match self.stmt(s, sc) {
                Ok(k) => out.extend(k),
                Err(e) => push(&mut errors, e),
            }
        }
        sc.locals.truncate(depth);
        match errors {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// One statement of a kernel, as the IR statements it lowers to (several for a tuple
    /// `let` or an unrolled inner loop, `forms.rs`).
    pub(super) fn stmt(&mut self, s: &Stmt, sc: &mut Scope) -> syn::Result<Vec<KStmt>> {
        match s {
            Stmt::Local(l) => {
                let (pat, ty) = match &l.pat {
                    Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
                    p => (p, None),
                };
                if let (Pat::Tuple(_), Some(init)) = (pat, &l.init) {
                    if let Some((_, d)) = &init.diverge {
                        return Err(err(d, "`let .. else` is not supported in a kernel"));
                    }
                    return self.tuple_let(l, &init.expr, sc);
                }
                let Pat::Ident(pi) = pat else {
                    return Err(err(
                        pat,
                        "`let` in a kernel binds one plain name or a tuple of them: `let s = ..;`, `let (a, b) = (.., ..);`",
                    ));
                };
                let ty = match ty {
                    Some(t) => Some(scalar_ty(t).ok_or_else(|| {
                        err(t, "kernel locals have a scalar type: f32, f64, i32, i64, u32, u64, usize, isize or bool")
                    })?),
                    None => None,
                };
                let Some(init) = &l.init else {
                    return Err(err(
                        l,
                        "kernel locals must be initialised where declared: `let s = ..;`",
                    ));
                };
                if let Some((_, d)) = &init.diverge {
                    return Err(err(d, "`let .. else` is not supported in a kernel"));
                }
                let name = pi.ident.clone();
                if self.array(&name).is_some() {
                    return Err(err(
                        &name,
                        format!("`{name}` shadows an array parameter; pick another name"),
                    ));
                }
                let init = self.expr(&init.expr, sc);
                // In scope even when its initialiser failed, so later uses do not cascade.
                let name = self.bind_local(sc, &name);
                let init = init?;
                Ok(vec![KStmt::Let { name, ty, init }])
            }
            Stmt::Expr(e, semi) => {
                let block_like = matches!(
                    e,
                    Expr::If(_)
                        | Expr::While(_)
                        | Expr::Loop(_)
                        | Expr::ForLoop(_)
                        | Expr::Block(_)
                        | Expr::Match(_)
                        | Expr::Unsafe(_)
                );
                if semi.is_none() && !block_like {
                    return Err(err(
                        e,
                        format!("a kernel statement must end with `;`; {KERNEL_SURFACE}"),
                    ));
                }
                if let Expr::ForLoop(f) = e {
                    if let Some(copies) = self.unrolled_loop(f, sc)? {
                        return Ok(copies);
                    }
                }
                self.expr_stmt(e, sc).map(|k| vec![k])
            }
            Stmt::Macro(m) => Err(err(
                m,
                format!("macros are not supported in a kernel; {KERNEL_SURFACE}"),
            )),
            Stmt::Item(i) => Err(err(
                i,
                format!("items are not supported in a kernel; {KERNEL_SURFACE}"),
            )),
        }
    }

    pub(super) fn expr_stmt(&mut self, e: &Expr, sc: &mut Scope) -> syn::Result<KStmt> {
        match e {
            Expr::Assign(a) => self.assign(&a.left, None, &a.right, sc, e),
            Expr::Binary(b) if is_assign_op(&b.op) => self.assign(&b.left, bin_op(&b.op), &b.right, sc, e),
            Expr::If(i) => self.if_stmt(i, sc),
            Expr::ForLoop(f) => Err(err(
                for_head(f),
                format!("a loop nest has exactly one `for` per array axis ({}); a `for` inside it runs over a range of integer literals (`for k in 0..4`, `for k in -2..=2`), unrolled", self.ndim),
            )),
            Expr::While(_) | Expr::Loop(_) => Err(err(
                e,
                format!("loops inside a kernel are not supported (a kernel is the body of one perfect loop nest); {KERNEL_SURFACE}"),
            )),
            other => Err(err(other, format!("unsupported statement in a kernel; {KERNEL_SURFACE}"))),
        }
    }

    pub(super) fn if_stmt(&mut self, i: &syn::ExprIf, sc: &mut Scope) -> syn::Result<KStmt> {
        let cond = self.expr(&i.cond, sc)?;
        let then = self.block(&i.then_branch.stmts, sc)?;
        let els = match &i.else_branch {
            None => None,
            Some((_, e)) => match &**e {
                Expr::Block(b) => Some(self.block(&b.block.stmts, sc)?),
                Expr::If(ei) => Some(vec![self.if_stmt(ei, sc)?]),
                other => return Err(err(other, "expected a block after `else`")),
            },
        };
        Ok(KStmt::If { cond, then, els })
    }

    pub(super) fn assign(
        &mut self,
        left: &Expr,
        op: Option<BinOp>,
        right: &Expr,
        sc: &mut Scope,
        whole: &Expr,
    ) -> syn::Result<KStmt> {
        if let Expr::Index(ix) = strip(left) {
            let access = self.access(ix, sc)?;
            if let Some(ai) = ident_of(&ix.expr).and_then(|id| self.array(id)) {
                let _ = ai;
            }
            if access.offsets.iter().any(|&o| o != 0) {
                return Err(err(
                    left,
                    format!(
                        "write at an offset: a kernel writes only the centre point of its loop nest (`{}[[{}]] = ..`); shift the loop range instead",
                        self.arrays[access.array].name,
                        sc.loop_vars.join(", ")
                    ),
                ));
            }
            let value = self.expr(right, sc)?;
            return Ok(KStmt::Write { access, op, value });
        }
        let Some(id) = ident_of(left) else {
            return Err(err(
                left,
                format!("unsupported assignment target in a kernel; {KERNEL_SURFACE}"),
            ));
        };
        let name = id.to_string();
        if let Some(local) = sc.local(id) {
            let value = self.expr(right, sc)?;
            return Ok(KStmt::Assign {
                name: local,
                op,
                value,
            });
        }
        if self.array(id).is_some() {
            return Err(err(
                left,
                format!("assign array elements, not the array: `{id}[[..]] = ..`"),
            ));
        }
        if sc.loop_vars.contains(&name) || self.time_var.as_deref() == Some(name.as_str()) {
            return Err(err(left, "loop variables cannot be assigned"));
        }
        let reduce_err = || {
            err(
                whole,
                format!("`{id}` is declared outside the loop nest, so a kernel may only accumulate into it: a sum `{id} += e`, a minimum `{id} = {id}.min(e)` or a maximum `{id} = {id}.max(e)` (declared `let mut {id}` before the time loop)"),
            )
        };
        match self.pre.get(&name) {
            Some(PreVar::Scalar { mutable: true, .. }) => {}
            _ => return Err(reduce_err()),
        }
        let (rop, value) = match op {
            Some(BinOp::Add) => (ReduceOp::Sum, right),
            None => match min_max_form(right, &name) {
                Some(x) => x,
                None => return Err(reduce_err()),
            },
            _ => return Err(reduce_err()),
        };
        let red = self.reduction(id, rop, whole)?;
        let value = self.expr(value, sc)?;
        Ok(KStmt::Reduce {
            reduction: red,
            op: rop,
            value,
        })
    }

    pub(super) fn reduction(
        &mut self,
        id: &Ident,
        op: ReduceOp,
        whole: &Expr,
    ) -> syn::Result<usize> {
        if let Some(i) = self.reductions.iter().position(|r| r.name == *id) {
            if self.reductions[i].op != op {
                return Err(err(whole, format!("`{id}` is reduced with two different operations; a reduction variable is either a sum, a minimum or a maximum")));
            }
            return Ok(i);
        }
        let ty = match self.pre.get(&id.to_string()) {
            Some(PreVar::Scalar { ty, .. }) => ty.unwrap_or(Ty::FloatLit),
            _ => Ty::FloatLit,
        };
        if !ty.is_float() {
            return Err(err(
                whole,
                format!(
                    "reduction `{id}` must be a float (f32 or f64), found {}",
                    ty.rust_name()
                ),
            ));
        }
        self.reductions.push(ReductionUse {
            name: id.clone(),
            op,
            ty,
        });
        Ok(self.reductions.len() - 1)
    }
}

/// `m.min(e)`, `e.min(m)`, `f32::min(m, e)`, `f64::max(e, m)`: (op, e).
pub(super) fn min_max_form<'e>(right: &'e Expr, name: &str) -> Option<(ReduceOp, &'e Expr)> {
    let is_m = |e: &Expr| ident_of(e).map(|i| i == name).unwrap_or(false);
    let op = |s: &str| match s {
        "min" => Some(ReduceOp::Min),
        "max" => Some(ReduceOp::Max),
        _ => None,
    };
    match strip(right) {
        Expr::MethodCall(m) if m.args.len() == 1 => {
            let o = op(&m.method.to_string())?;
            if is_m(&m.receiver) {
                Some((o, &m.args[0]))
            } else if is_m(&m.args[0]) {
                Some((o, &*m.receiver))
            } else {
                None
            }
        }
        Expr::Call(c) if c.args.len() == 2 => {
            let Expr::Path(p) = strip(&c.func) else {
                return None;
            };
            let segs = crate::parse::path_names(&p.path);
            if segs.len() != 2 || !matches!(segs[0].as_str(), "f32" | "f64") {
                return None;
            }
            let o = op(&segs[1])?;
            if is_m(&c.args[0]) {
                Some((o, &c.args[1]))
            } else if is_m(&c.args[1]) {
                Some((o, &c.args[0]))
            } else {
                None
            }
        }
        _ => None,
    }
}
