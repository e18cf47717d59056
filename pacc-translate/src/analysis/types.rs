//! Type inference for kernel expressions (CUDA needs every type spelled out), on the lowered
//! IR; the literal rules and the pre-loop probe it builds on are in [`crate::typing`].

use crate::ir::{KExpr, KExprKind, KStmt, ReductionUse, ScalarUse, Ty};
use crate::typing::unify;
use std::collections::HashMap;

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
            KExprKind::SliceRead(s, _) if self.slices[*s].literal => Ty::FloatLit,
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

/// A value whose declaration left its type to context: a scalar (`let c = 0.5;`) or a table
/// of unsuffixed literals (`let w = [1.0, 2.0];`), by its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Open {
    Scalar(usize),
    Table(usize),
}

/// The types of the open values ([`Open`]) and reductions, fixed from their uses in kernels,
/// as rustc would.
pub fn resolve_uses(
    nests: &[&[KStmt]],
    points: &[&KExpr],
    env: &mut Env<'_>,
) -> (HashMap<Open, Ty>, HashMap<usize, Ty>) {
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
    scal: &mut HashMap<Open, Ty>,
    red: &mut HashMap<usize, Ty>,
) {
    let depth = env.locals.len();
    for (i, s) in body.iter().enumerate() {
        match s {
            KStmt::Let { name, ty, init } => {
                walk_expr(init, env, scal);
                let t = ty.unwrap_or_else(|| env.let_type(&name.to_string(), init, &body[i + 1..]));
                pin_table(init, t, env, scal);
                env.locals.push((name.to_string(), t));
            }
            KStmt::Assign { name, value, .. } => {
                walk_expr(value, env, scal);
                if let Some(t) = env.local(&name.to_string()) {
                    pin_table(value, t, env, scal);
                }
            }
            KStmt::Write { access, value, .. } => {
                walk_expr(value, env, scal);
                pin_table(value, Ty::from_elem(env.arrays[access.array]), env, scal);
            }
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

/// A literal table's element stored as a value of type `t` has that type.
fn pin_table(e: &KExpr, t: Ty, env: &Env<'_>, scal: &mut HashMap<Open, Ty>) {
    if let KExprKind::SliceRead(i, _) = strip(e).kind {
        if env.slices[i].literal && t.is_float() && !t.is_lit() {
            scal.insert(Open::Table(i), t);
        }
    }
}

fn walk_expr(e: &KExpr, env: &Env<'_>, scal: &mut HashMap<Open, Ty>) {
    let mut note = |x: &KExpr, other: Ty| match strip(x).kind {
        KExprKind::Scalar(i) if env.scalars[i].ty.is_lit() && !other.is_lit() => {
            scal.insert(Open::Scalar(i), other);
        }
        KExprKind::SliceRead(i, _)
            if env.slices[i].literal && other.is_float() && !other.is_lit() =>
        {
            scal.insert(Open::Table(i), other);
        }
        _ => {}
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
            KStmt::Assign { name: n, value, .. } => {
                // `s += w * u[[..]]`: Rust types the accumulator by what is added to it.
                let t = env.infer(value);
                if n == name && !t.is_lit() && t != Ty::Bool {
                    *hint = Some(t);
                }
                hint_expr(name, value, env, hint)
            }
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
