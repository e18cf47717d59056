//! The expressions of a kernel: literals, names, stencil and slice reads, operators, casts,
//! float methods and `if` values.

use super::context::{err, Ctx, Scope, KERNEL_SURFACE};
use super::syntax::{ident_of, int_lit, is_assign_op, strip};
use crate::ir::{Access, KExpr, KExprKind, PreVar, Ty};
use crate::parse::sig::scalar_ty;
use crate::typing::{bin_op, method_arity, method_list};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Stmt};

/// The largest offset an index may add to its loop variable: far beyond any stencil's reach,
/// and far from where sums of reaches could overflow.
pub const MAX_OFFSET: u64 = 1 << 16;

/// A literal in a kernel: float, integer (with its suffix's type, if any) or bool.
pub(super) fn lit(l: &syn::ExprLit) -> syn::Result<KExprKind> {
    let ty = |suf: &str| {
        if suf.is_empty() {
            None
        } else {
            Ty::from_name(suf)
        }
    };
    match &l.lit {
        Lit::Float(f) => Ok(KExprKind::Float(
            f.base10_digits().to_string(),
            ty(f.suffix()),
        )),
        Lit::Int(i) => Ok(KExprKind::Int(
            i.base10_digits().to_string(),
            ty(i.suffix()),
        )),
        Lit::Bool(b) => Ok(KExprKind::Bool(b.value)),
        other => Err(err(
            other,
            format!("unsupported literal in a kernel; {KERNEL_SURFACE}"),
        )),
    }
}

/// Float constants: `f32::consts::PI`, `std::f64::consts::E`, ..
pub(super) fn const_path(p: &syn::ExprPath, e: &Expr) -> syn::Result<KExprKind> {
    let segs = crate::parse::path_names(&p.path);
    let ty = segs
        .iter()
        .find_map(|s| Ty::from_name(s))
        .filter(|t| t.is_float());
    let last = segs.last().map(|s| s.as_str()).unwrap_or("");
    let val = match last {
        "PI" => Some(std::f64::consts::PI),
        "E" => Some(std::f64::consts::E),
        "TAU" => Some(std::f64::consts::TAU),
        "SQRT_2" => Some(std::f64::consts::SQRT_2),
        "LN_2" => Some(std::f64::consts::LN_2),
        "FRAC_PI_2" => Some(std::f64::consts::FRAC_PI_2),
        _ => None,
    };
    match (ty, val) {
        (Some(t), Some(v)) => {
            let s = if t == Ty::F32 { format!("{:?}", v as f32) } else { format!("{v:?}") };
            Ok(KExprKind::Float(s, Some(t)))
        }
        _ => Err(err(e, format!("unsupported path in a kernel (known constants: PI, E, TAU, SQRT_2, LN_2, FRAC_PI_2 of f32/f64); {KERNEL_SURFACE}"))),
    }
}

impl Ctx<'_> {
    pub(super) fn access(&mut self, ix: &syn::ExprIndex, sc: &Scope) -> syn::Result<Access> {
        let id = ident_of(&ix.expr).ok_or_else(|| {
            err(
                &ix.expr,
                "only array parameters and slices can be indexed in a kernel",
            )
        })?;
        let array = self.array(id).ok_or_else(|| {
            err(
                &ix.expr,
                super::forms::not_an_array(id, self.pre.get(&id.to_string())),
            )
        })?;
        let Expr::Array(idx) = strip(&ix.index) else {
            return Err(err(
                &ix.index,
                format!(
                    "index arrays with one index per axis: `{id}[[{}]]`",
                    sc.loop_vars.join(", ")
                ),
            ));
        };
        if idx.elems.len() != self.ndim {
            return Err(err(
                &ix.index,
                format!(
                    "wrong number of indices: `{id}` has {} axes, this index has {}",
                    self.ndim,
                    idx.elems.len()
                ),
            ));
        }
        let mut offsets = Vec::new();
        for (axis, e) in idx.elems.iter().enumerate() {
            offsets.push(self.offset(e, axis, sc)?);
        }
        Ok(Access {
            array,
            offsets,
            tokens: ix.to_token_stream(),
        })
    }

    /// Reads `a[[var + c, ..]]` with `|c|` at most [`MAX_OFFSET`]; larger is a compile error.
    pub(super) fn offset(&self, e: &Expr, axis: usize, sc: &Scope) -> syn::Result<i64> {
        let var = &sc.loop_vars[axis];
        let msg = || {
            format!("an array index is the loop variable of its axis plus or minus an integer literal (`{var}`, `{var} + 1`, `{var} - 2`)")
        };
        let check_var = |x: &Expr| -> syn::Result<()> {
            match ident_of(x) {
                Some(id) if *id == var.as_str() => Ok(()),
                Some(id) if sc.loop_vars.contains(&id.to_string()) => Err(err(
                    x,
                    format!("`{id}` indexes axis {axis}, whose loop variable is `{var}`; each index uses its own axis' loop variable"),
                )),
                _ => Err(err(x, msg())),
            }
        };
        // Reaches add up over a step's nests and a block's steps, and the kernels index planes
        // around them: an offset past any stencil's must stop here, not overflow downstream.
        let bounded = |c: i64, lit: &Expr| -> syn::Result<i64> {
            if c.unsigned_abs() > MAX_OFFSET {
                return Err(err(
                    lit,
                    format!("the offset {c} from `{var}` is too large: an index reaches at most {MAX_OFFSET} points from its loop variable"),
                ));
            }
            Ok(c)
        };
        // `x + k` with `k` an unrolled loop's variable, `x + k - 2`: the offset is constant.
        if !sc.consts.is_empty() {
            if let Some(c) = super::forms::var_plus_const(e, var, sc) {
                return bounded(c, e);
            }
        }
        match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
                let neg = matches!(b.op, syn::BinOp::Sub(_));
                if let (Some(c), false) = (int_lit(&b.left), neg) {
                    check_var(&b.right)?;
                    return bounded(c, &b.left);
                }
                check_var(&b.left)?;
                match int_lit(&b.right) {
                    Some(c) => bounded(if neg { -c } else { c }, &b.right),
                    None => Err(err(
                        &b.right,
                        format!("non-constant offset: the offset from `{var}` must be an integer literal so the halo can be known at compile time (`{var} + 1`)"),
                    )),
                }
            }
            x => {
                check_var(x)?;
                Ok(0)
            }
        }
    }

    pub(super) fn expr(&mut self, e: &Expr, sc: &Scope) -> syn::Result<KExpr> {
        let span = e.span();
        let kind = match e {
            Expr::Lit(l) => lit(l)?,
            Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
                Some(id) => self.name(id, sc)?,
                None => const_path(p, e)?,
            },
            Expr::Index(ix) => self.index(ix, sc)?,
            Expr::Binary(b) => {
                let op = bin_op(&b.op)
                    .filter(|_| !is_assign_op(&b.op))
                    .ok_or_else(|| {
                        err(
                            b.op,
                            format!("unsupported operator in an expression; {KERNEL_SURFACE}"),
                        )
                    })?;
                let l = self.expr(&b.left, sc)?;
                let r = self.expr(&b.right, sc)?;
                KExprKind::Bin(op, Box::new(l), Box::new(r))
            }
            Expr::Unary(u) => {
                let x = Box::new(self.expr(&u.expr, sc)?);
                match u.op {
                    syn::UnOp::Neg(_) => KExprKind::Neg(x),
                    syn::UnOp::Not(_) => KExprKind::Not(x),
                    _ => {
                        return Err(err(
                            u,
                            format!("dereferences are not supported in a kernel; {KERNEL_SURFACE}"),
                        ))
                    }
                }
            }
            Expr::Paren(p) => KExprKind::Paren(Box::new(self.expr(&p.expr, sc)?)),
            Expr::Group(g) => return self.expr(&g.expr, sc),
            Expr::Cast(c) => {
                let t = scalar_ty(&c.ty).ok_or_else(|| {
                    err(&c.ty, "casts in a kernel are to f32, f64, i32, i64, u32, u64, usize, isize or bool")
                })?;
                let x = self.expr(&c.expr, sc)?;
                KExprKind::Cast(Box::new(x), t)
            }
            Expr::MethodCall(m) => self.method_call(m, sc)?,
            Expr::Call(c) => self.call(c, sc)?,
            Expr::If(i) => self.if_expr(i, sc)?,
            Expr::Block(b) if b.block.stmts.len() == 1 && b.label.is_none() => {
                return self.tail_only(&b.block, sc)
            }
            other => {
                return Err(err(
                    other,
                    format!("unsupported expression in a kernel; {KERNEL_SURFACE}"),
                ))
            }
        };
        Ok(KExpr { kind, span })
    }

    /// `a[[..]]` in an expression: a slice element, a single-point statement's read at its own
    /// point, or a stencil read.
    pub(super) fn index(&mut self, ix: &syn::ExprIndex, sc: &Scope) -> syn::Result<KExprKind> {
        if let Some(id) = ident_of(&ix.expr) {
            let table = match self.pre.get(&id.to_string()) {
                Some(PreVar::Slice(el)) => Some((*el, false)),
                Some(PreVar::LitTable) => Some((pacc_runtime::program::Elem::F64, true)),
                _ => None,
            };
            if let Some((el, literal)) = table {
                if sc.local(id).is_some() {
                    return Err(err(id, "indexing a kernel local is not supported"));
                }
                let idx = self.expr(&ix.index, sc)?;
                let s = self.slice(id, el, literal);
                return Ok(KExprKind::SliceRead(s, Box::new(idx)));
            }
        }
        if let Some((_, pidx)) = &sc.point {
            return self.point_read(ix, pidx);
        }
        self.read(ix, sc)
    }

    /// A read in a single-point statement whose point is `pidx`: only at that point.
    pub(super) fn point_read(
        &self,
        ix: &syn::ExprIndex,
        pidx: &[String],
    ) -> syn::Result<KExprKind> {
        let id = ident_of(&ix.expr)
            .ok_or_else(|| err(&ix.expr, "only arrays and slices can be indexed"))?;
        let array = self.array(id).ok_or_else(|| {
            err(
                &ix.expr,
                format!("`{id}` is not an array parameter or a slice"),
            )
        })?;
        let Expr::Array(idx) = strip(&ix.index) else {
            return Err(err(
                &ix.index,
                "index arrays with one index per axis: `a[[i, j, k]]`",
            ));
        };
        let same = idx.elems.len() == pidx.len()
            && idx
                .elems
                .iter()
                .zip(pidx)
                .all(|(a, b)| a.to_token_stream().to_string() == *b);
        if !same {
            return Err(err(
                ix,
                format!(
                    "a single-point statement reads arrays only at its own point `[[{}]]`",
                    pidx.join(", ")
                ),
            ));
        }
        Ok(KExprKind::PointRead(array))
    }

    /// `x.sqrt()`, `a.max(b)`, ..: the float methods the kernels support.
    pub(super) fn method_call(
        &mut self,
        m: &syn::ExprMethodCall,
        sc: &Scope,
    ) -> syn::Result<KExprKind> {
        let name = m.method.to_string();
        match method_arity(&name) {
            Some(n) if n == m.args.len() && m.turbofish.is_none() => {
                super::forms::check_clamp(&name, &m.args.iter().collect::<Vec<_>>())?;
                let recv = self.expr(&m.receiver, sc)?;
                let args = m
                    .args
                    .iter()
                    .map(|a| self.expr(a, sc))
                    .collect::<syn::Result<Vec<_>>>()?;
                Ok(KExprKind::Method(name, Box::new(recv), args, None))
            }
            Some(n) => Err(err(&m.method, format!("`{name}` takes {n} argument(s)"))),
            None => Err(err(
                &m.method,
                format!(
                    "unsupported method `{name}` in a kernel; supported float methods: {}",
                    method_list()
                ),
            )),
        }
    }

    /// `f32::max(a, b)` and the like: a float method called as a function.
    pub(super) fn call(&mut self, c: &syn::ExprCall, sc: &Scope) -> syn::Result<KExprKind> {
        let path = match strip(&c.func) {
            Expr::Path(p) => Some(p),
            _ => None,
        };
        let segs = path
            .map(|p| crate::parse::path_names(&p.path))
            .unwrap_or_default();
        if segs.len() == 2 {
            // Integers have `min`, `max` and `clamp` too (`i64::max(a, b)`).
            let int_method = matches!(segs[1].as_str(), "min" | "max" | "clamp");
            if let (Some(t), Some(n)) = (
                Ty::from_name(&segs[0]).filter(|t| t.is_float() || (int_method && t.is_int())),
                method_arity(&segs[1]),
            ) {
                if c.args.len() != n + 1 {
                    return Err(err(
                        c,
                        format!("`{}::{}` takes {} argument(s)", segs[0], segs[1], n + 1),
                    ));
                }
                super::forms::check_clamp(&segs[1], &c.args.iter().skip(1).collect::<Vec<_>>())?;
                let mut args = c
                    .args
                    .iter()
                    .map(|a| self.expr(a, sc))
                    .collect::<syn::Result<Vec<_>>>()?;
                let recv = args.remove(0);
                return Ok(KExprKind::Method(
                    segs[1].clone(),
                    Box::new(recv),
                    args,
                    Some(t),
                ));
            }
        }
        Err(err(
            &c.func,
            format!("unsupported function call in a kernel; call float functions as methods (`x.sqrt()`) or as `f32::max(a, b)`; supported: {}", method_list()),
        ))
    }

    /// `if c { a } else { b }` used as a value.
    pub(super) fn if_expr(&mut self, i: &syn::ExprIf, sc: &Scope) -> syn::Result<KExprKind> {
        let cond = self.expr(&i.cond, sc)?;
        let then = self.tail_only(&i.then_branch, sc)?;
        let Some((_, els)) = &i.else_branch else {
            return Err(err(i, "an `if` used as a value needs an `else`"));
        };
        let els = match &**els {
            Expr::Block(b) => self.tail_only(&b.block, sc)?,
            other => self.expr(other, sc)?,
        };
        Ok(KExprKind::If(Box::new(cond), Box::new(then), Box::new(els)))
    }

    pub(super) fn tail_only(&mut self, b: &syn::Block, sc: &Scope) -> syn::Result<KExpr> {
        match b.stmts.as_slice() {
            [Stmt::Expr(e, None)] => self.expr(e, sc),
            _ => Err(err(b, "a branch of an `if` used as a value must be a single expression; compute parts with `let` before the `if`")),
        }
    }

    pub(super) fn name(&mut self, id: &Ident, sc: &Scope) -> syn::Result<KExprKind> {
        let name = id.to_string();
        if let Some(k) = super::forms::const_value(sc, id) {
            return Ok(k);
        }
        if let Some(local) = sc.local(id) {
            return Ok(KExprKind::Local(local));
        }
        if let Some(a) = sc.loop_vars.iter().position(|v| *v == name) {
            return Ok(KExprKind::LoopVar(a));
        }
        if self.time_var.as_deref() == Some(name.as_str()) {
            return Ok(KExprKind::Time);
        }
        if let Some(r) = self.reductions.iter().position(|r| r.name == *id) {
            let _ = r;
        }
        match self.pre.get(&name).cloned() {
            Some(PreVar::Scalar { ty, mutable }) => {
                if mutable && self.reductions.iter().any(|r| r.name == *id) {
                    return Err(err(id, format!("reduction variable `{id}` can be read only after the time loop; inside a kernel it is only accumulated")));
                }
                Ok(KExprKind::Scalar(self.scalar(id, ty)?))
            }
            Some(PreVar::Dim(_)) => Ok(KExprKind::Scalar(self.scalar(id, Some(Ty::Usize))?)),
            Some(PreVar::Poisoned) => Ok(KExprKind::Float("0".into(), None)),
            Some(PreVar::Array(_)) => Err(err(
                id,
                format!("array `{id}` must be indexed in a kernel: `{id}[[{}]]`", sc.loop_vars.join(", ")),
            )),
            Some(PreVar::Slice(_) | PreVar::LitTable) => Err(err(id, format!("slice `{id}` must be indexed in a kernel: `{id}[i]`"))),
            Some(PreVar::Other) => Err(err(
                id,
                format!("`{id}` has a type kernels cannot use; kernels read scalars (f32, f64, integers, bool), arrays and 1D slices (`&[f32]`, `Vec<f32>`)"),
            )),
            None => Err(err(id, format!("cannot find `{id}` among the kernel's locals, loop variables, parameters and the values computed before the time loop; `#[pacc::pipeline]` sees only the function, so a module-level `const` or `static` is invisible to it: define it inside the function before the time loop, or pass it as a parameter"))),
        }
    }
}
