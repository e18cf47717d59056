//! Type inference for kernel expressions (CUDA needs every type spelled out) and for the
//! scalars computed before the time loop.

use crate::ir::{KExpr, KExprKind, KStmt, PreVar, ReductionUse, ScalarUse, Ty};
use std::collections::HashMap;

/// The common type of two operands, literals taking the other side's type as in Rust.
pub fn unify(a: Ty, b: Ty) -> Ty {
    match (a, b) {
        (x, y) if x == y => x,
        (Ty::FloatLit, t) | (t, Ty::FloatLit) if t.is_float() => t,
        (Ty::IntLit, t) | (t, Ty::IntLit) if t.is_int() => t,
        (x, _) => x,
    }
}

/// Resolves a literal type with the type the context wants.
pub fn resolve(t: Ty, want: Option<Ty>) -> Ty {
    match (t, want) {
        (Ty::FloatLit, Some(w)) if w.is_float() && !w.is_lit() => w,
        (Ty::IntLit, Some(w)) if w.is_int() && !w.is_lit() => w,
        (t, _) => t.defaulted(),
    }
}

/// Methods on floats (and `f32::name(recv, ..)` calls): name, number of arguments besides the
/// receiver.
pub const FLOAT_METHODS: &[(&str, usize)] = &[
    ("sqrt", 0),
    ("abs", 0),
    ("exp", 0),
    ("exp2", 0),
    ("ln", 0),
    ("log10", 0),
    ("log2", 0),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("asin", 0),
    ("acos", 0),
    ("atan", 0),
    ("sinh", 0),
    ("cosh", 0),
    ("tanh", 0),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("trunc", 0),
    ("cbrt", 0),
    ("recip", 0),
    ("min", 1),
    ("max", 1),
    ("powf", 1),
    ("powi", 1),
    ("atan2", 1),
    ("hypot", 1),
    ("copysign", 1),
    ("mul_add", 2),
];

pub fn method_arity(name: &str) -> Option<usize> {
    FLOAT_METHODS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
}

pub fn method_list() -> String {
    FLOAT_METHODS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What kernel expressions may refer to, with their types.
pub struct Env<'a> {
    pub arrays: &'a [pacc_runtime::program::Elem],
    pub scalars: &'a [ScalarUse],
    pub slices: &'a [crate::ir::SliceUse],
    pub reductions: &'a [ReductionUse],
    pub time: Ty,
    /// Kernel locals in scope (innermost last).
    pub locals: Vec<(String, Ty)>,
}

impl Env<'_> {
    pub fn local(&self, name: &str) -> Option<Ty> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
    }

    /// The type of `let name = init;` without annotation: the initialiser's, or, for a
    /// literal, the type the following statements (`rest`) use it with, as rustc infers it.
    pub fn let_type(&self, name: &str, init: &KExpr, rest: &[KStmt]) -> Ty {
        let t = self.infer(init);
        if !t.is_lit() {
            return t;
        }
        let mut hint = None;
        hint_stmts(name, rest, self, &mut hint);
        match hint {
            Some(h) if (h.is_float() && t == Ty::FloatLit) || (h.is_int() && t == Ty::IntLit) => h,
            _ => t.defaulted(),
        }
    }

    pub fn infer(&self, e: &KExpr) -> Ty {
        match &e.kind {
            KExprKind::Float(_, s) => s.unwrap_or(Ty::FloatLit),
            KExprKind::Int(_, s) => s.unwrap_or(Ty::IntLit),
            KExprKind::Bool(_) => Ty::Bool,
            KExprKind::Local(n) => self.local(&n.to_string()).unwrap_or(Ty::FloatLit),
            KExprKind::LoopVar(_) => Ty::Usize,
            KExprKind::Time => self.time,
            KExprKind::Scalar(i) => self.scalars[*i].ty,
            KExprKind::Reduction(i) => self.reductions[*i].ty,
            KExprKind::Read(a) => Ty::from_elem(self.arrays[a.array]),
            KExprKind::PointRead(a) => Ty::from_elem(self.arrays[*a]),
            KExprKind::SliceRead(s, _) => Ty::from_elem(self.slices[*s].elem),
            KExprKind::Bin(op, l, r) => {
                if op.is_cmp() || op.is_logic() {
                    Ty::Bool
                } else if op.is_shift() {
                    self.infer(l)
                } else {
                    unify(self.infer(l), self.infer(r))
                }
            }
            KExprKind::Neg(x) | KExprKind::Not(x) | KExprKind::Paren(x) => self.infer(x),
            KExprKind::Cast(_, t) => *t,
            KExprKind::Method(name, recv, args, explicit) => {
                if let Some(t) = explicit {
                    return *t;
                }
                let mut t = self.infer(recv);
                if name != "powi" {
                    for a in args {
                        t = unify(t, self.infer(a));
                    }
                }
                t
            }
            KExprKind::If(_, a, b) => unify(self.infer(a), self.infer(b)),
        }
    }
}

/// Scalars and reductions whose declaration left the type to context (`let c = 0.5;`): fix
/// them from their uses in kernels, as rustc would.
pub fn resolve_uses(
    nests: &[&[KStmt]],
    points: &[&KExpr],
    env: &mut Env<'_>,
) -> (HashMap<usize, Ty>, HashMap<usize, Ty>) {
    let mut scal = HashMap::new();
    let mut red = HashMap::new();
    for body in nests {
        env.locals.clear();
        walk_stmts(body, env, &mut scal, &mut red);
    }
    for p in points {
        env.locals.clear();
        walk_expr(p, env, &mut scal);
    }
    (scal, red)
}

fn walk_stmts(
    body: &[KStmt],
    env: &mut Env<'_>,
    scal: &mut HashMap<usize, Ty>,
    red: &mut HashMap<usize, Ty>,
) {
    let depth = env.locals.len();
    for (i, s) in body.iter().enumerate() {
        match s {
            KStmt::Let { name, ty, init } => {
                walk_expr(init, env, scal);
                let t = ty.unwrap_or_else(|| env.let_type(&name.to_string(), init, &body[i + 1..]));
                env.locals.push((name.to_string(), t));
            }
            KStmt::Assign { value, .. } | KStmt::Write { value, .. } => walk_expr(value, env, scal),
            KStmt::Reduce {
                reduction, value, ..
            } => {
                walk_expr(value, env, scal);
                let t = env.infer(value);
                if env.reductions[*reduction].ty.is_lit() && !t.is_lit() {
                    red.insert(*reduction, t);
                }
            }
            KStmt::If { cond, then, els } => {
                walk_expr(cond, env, scal);
                walk_stmts(then, env, scal, red);
                if let Some(e) = els {
                    walk_stmts(e, env, scal, red);
                }
            }
        }
    }
    env.locals.truncate(depth);
}

fn walk_expr(e: &KExpr, env: &Env<'_>, scal: &mut HashMap<usize, Ty>) {
    let mut note = |x: &KExpr, other: Ty| {
        if let KExprKind::Scalar(i) = strip(x).kind {
            if env.scalars[i].ty.is_lit() && !other.is_lit() {
                scal.insert(i, other);
            }
        }
    };
    match &e.kind {
        KExprKind::Bin(op, l, r) if !op.is_logic() && !op.is_shift() => {
            note(l, env.infer(r));
            note(r, env.infer(l));
            walk_expr(l, env, scal);
            walk_expr(r, env, scal);
        }
        KExprKind::Bin(_, l, r) => {
            walk_expr(l, env, scal);
            walk_expr(r, env, scal);
        }
        KExprKind::Neg(x) | KExprKind::Not(x) | KExprKind::Paren(x) | KExprKind::Cast(x, _) => {
            walk_expr(x, env, scal)
        }
        KExprKind::SliceRead(_, x) => walk_expr(x, env, scal),
        KExprKind::Method(name, recv, args, explicit) => {
            if let Some(t) = explicit {
                note(recv, *t);
            }
            if name != "powi" {
                for a in args {
                    note(a, env.infer(recv));
                    note(recv, env.infer(a));
                }
            }
            walk_expr(recv, env, scal);
            for a in args {
                walk_expr(a, env, scal);
            }
        }
        KExprKind::If(c, a, b) => {
            walk_expr(c, env, scal);
            walk_expr(a, env, scal);
            walk_expr(b, env, scal);
        }
        _ => {}
    }
}

fn strip(e: &KExpr) -> &KExpr {
    match &e.kind {
        KExprKind::Paren(x) => strip(x),
        _ => e,
    }
}

/// Type of an expression computed before the time loop, when it is simple enough to tell.
pub fn pre_infer(e: &syn::Expr, pre: &HashMap<String, PreVar>) -> Option<Ty> {
    use syn::{Expr, Lit};
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Float(f) => Some(Ty::from_name(f.suffix()).unwrap_or(Ty::FloatLit)),
            Lit::Int(i) => Some(Ty::from_name(i.suffix()).unwrap_or(Ty::IntLit)),
            Lit::Bool(_) => Some(Ty::Bool),
            _ => None,
        },
        Expr::Path(p) => {
            let id = p.path.get_ident()?;
            match pre.get(&id.to_string())? {
                PreVar::Scalar { ty, .. } => *ty,
                PreVar::Dim(_) => Some(Ty::Usize),
                _ => None,
            }
        }
        Expr::Paren(p) => pre_infer(&p.expr, pre),
        Expr::Group(g) => pre_infer(&g.expr, pre),
        Expr::Unary(u) => pre_infer(&u.expr, pre),
        Expr::Cast(c) => crate::parse::sig::scalar_ty(&c.ty),
        Expr::Binary(b) => {
            let op = crate::lower::bin_op(&b.op)?;
            if op.is_cmp() || op.is_logic() {
                Some(Ty::Bool)
            } else {
                let l = pre_infer(&b.left, pre)?;
                if op.is_shift() {
                    return Some(l);
                }
                let r = pre_infer(&b.right, pre)?;
                Some(unify(l, r))
            }
        }
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            if name == "len" {
                return Some(Ty::Usize);
            }
            method_arity(&name)?;
            let t = pre_infer(&m.receiver, pre)?;
            if t.is_float() {
                Some(t)
            } else {
                None
            }
        }
        Expr::Call(c) => {
            if let Expr::Path(p) = &*c.func {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                if segs.len() == 2 && method_arity(&segs[1]).is_some() {
                    return Ty::from_name(&segs[0]).filter(|t| t.is_float());
                }
            }
            None
        }
        Expr::Index(i) => {
            if let Expr::Path(p) = &*i.expr {
                if let Some(PreVar::Slice(e)) =
                    p.path.get_ident().and_then(|id| pre.get(&id.to_string()))
                {
                    return Some(Ty::from_elem(*e));
                }
            }
            None
        }
        Expr::If(_) | Expr::Block(_) => None,
        _ => None,
    }
}

fn is_local(e: &KExpr, name: &str) -> bool {
    matches!(&strip(e).kind, KExprKind::Local(n) if n == name)
}

fn hint_stmts(name: &str, body: &[KStmt], env: &Env<'_>, hint: &mut Option<Ty>) {
    for s in body {
        if hint.is_some() {
            return;
        }
        match s {
            KStmt::Let { name: n, ty, init } => {
                if let (Some(t), true) = (ty, is_local(init, name)) {
                    *hint = Some(*t);
                }
                hint_expr(name, init, env, hint);
                if n == name {
                    return; // shadowed from here on
                }
            }
            KStmt::Assign { value, .. } => hint_expr(name, value, env, hint),
            KStmt::Write { access, value, .. } => {
                if is_local(value, name) {
                    *hint = Some(Ty::from_elem(env.arrays[access.array]));
                }
                hint_expr(name, value, env, hint);
            }
            KStmt::Reduce {
                reduction, value, ..
            } => {
                if is_local(value, name) && !env.reductions[*reduction].ty.is_lit() {
                    *hint = Some(env.reductions[*reduction].ty);
                }
                hint_expr(name, value, env, hint);
            }
            KStmt::If { cond, then, els } => {
                hint_expr(name, cond, env, hint);
                hint_stmts(name, then, env, hint);
                if let Some(e) = els {
                    hint_stmts(name, e, env, hint);
                }
            }
        }
    }
}

fn hint_expr(name: &str, e: &KExpr, env: &Env<'_>, hint: &mut Option<Ty>) {
    crate::analysis::walk_expr(e, &mut |x| {
        if hint.is_some() {
            return;
        }
        let mut pair_explicit = None;
        let mut pair = |a: &KExpr, b: &KExpr| {
            if is_local(a, name) {
                let t = env.infer(b);
                if !t.is_lit() && t != Ty::Bool {
                    *hint = Some(t);
                }
            }
        };
        match &x.kind {
            KExprKind::Bin(op, l, r) if !op.is_logic() && !op.is_shift() => {
                pair(l, r);
                pair(r, l);
            }
            KExprKind::Method(m, recv, args, explicit) => {
                if let (Some(t), true) = (explicit, is_local(recv, name)) {
                    pair_explicit = Some(*t);
                }
                if m != "powi" {
                    for a in args {
                        pair(recv, a);
                        pair(a, recv);
                    }
                }
            }
            KExprKind::If(_, a, b) => {
                pair(a, b);
                pair(b, a);
            }
            _ => {}
        }
        if let (Some(t), None) = (pair_explicit, *hint) {
            *hint = Some(t);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unify_literals() {
        assert_eq!(unify(Ty::FloatLit, Ty::F32), Ty::F32);
        assert_eq!(unify(Ty::F64, Ty::FloatLit), Ty::F64);
        assert_eq!(unify(Ty::IntLit, Ty::Usize), Ty::Usize);
        assert_eq!(unify(Ty::IntLit, Ty::IntLit), Ty::IntLit);
        assert_eq!(resolve(Ty::FloatLit, Some(Ty::F32)), Ty::F32);
        assert_eq!(resolve(Ty::FloatLit, None), Ty::F64);
        assert_eq!(resolve(Ty::IntLit, Some(Ty::F32)), Ty::I32);
    }

    #[test]
    fn pre_loop_inference() {
        let mut pre = HashMap::new();
        pre.insert(
            "dt".to_string(),
            PreVar::Scalar {
                ty: Some(Ty::F32),
                mutable: false,
            },
        );
        pre.insert("nx".to_string(), PreVar::Dim(2));
        let e: syn::Expr = syn::parse_str("dt * dt * 0.5").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F32));
        let e: syn::Expr = syn::parse_str("(nx - 1) as f64").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F64));
        let e: syn::Expr = syn::parse_str("nx - 1").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::Usize));
        let e: syn::Expr = syn::parse_str("dt.sqrt()").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F32));
        let e: syn::Expr = syn::parse_str("foo(dt)").unwrap();
        assert_eq!(pre_infer(&e, &pre), None);
    }
}
