//! Guarded reads: where a nest runs over the whole grid and protects its edge reads
//! (`if y > 0 { t[[y - 1, x]] }`, `if x + 1 < nx { .. } else { .. }`, a clamped index lowered to
//! a select, `x > 0 && t[[y, x - 1]] > 0.0`), the points where each read executes.
//!
//! Only nests with a read that leaves the array over the nest's ranges at every array size get
//! a description ([`pacc_runtime::program::GuardedRead`]): every program accepted before
//! keeps its description and kernels. The guards understood are comparisons (`<`, `<=`, `>`,
//! `>=`, `==`) of a loop variable plus or minus a literal against a literal or its axis' extent
//! plus or minus a literal, joined by `&&` (and `||` / `!` where they negate into that); any
//! other condition limits nothing, so its read counts everywhere, as before. A guarded read that
//! still leaves the array at every size is a compile error naming the read and its guards.

use crate::ir::{Access, BinOp, Func, KExpr, KExprKind, KStmt, Nest};
use pacc_runtime::program::{AxisRange, Base, Bound, GuardedRead};
use proc_macro2::Span;

/// The limits guards put on the loop variables: per axis lower bounds (inclusive) and upper
/// bounds (exclusive), and the spans of the conditions around the point.
#[derive(Clone, Default)]
struct Limits {
    from: Vec<Vec<Bound>>,
    to: Vec<Vec<Bound>>,
    guards: Vec<Span>,
}

/// One read occurrence and the limits it executes under.
struct Occurrence {
    access: Access,
    limits: Limits,
}

/// Per nest, its guarded reads (empty where no read leaves the array without its guards).
pub fn guarded(f: &Func) -> syn::Result<Vec<Vec<GuardedRead>>> {
    let mut out = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for n in f.nests() {
        let mut w = Walk {
            f,
            found: Vec::new(),
        };
        let none = Limits {
            from: vec![Vec::new(); f.ndim],
            to: vec![Vec::new(); f.ndim],
            guards: Vec::new(),
        };
        w.stmts(&n.body, &none);
        // Only a guard makes a nest guarded: a read that leaves the array with nothing around it
        // keeps today's run-time check (the nest may run no iteration at the call's shape).
        let unguarded = |o: &Occurrence| leaves(&n.ranges, &none, &o.access.offsets);
        // With a range from a scalar (`0..n`) whether a read leaves the array is known only at
        // the call: a guard limiting a read on the side it reaches is then enough.
        let scalar_ranges = (n.ranges.iter()).any(|r| r.lo.is_scalar() || r.hi.is_scalar());
        let restricts = |o: &Occurrence| {
            (o.access.offsets.iter().enumerate()).any(|(a, &off)| {
                (off < 0 && !o.limits.from[a].is_empty()) || (off > 0 && !o.limits.to[a].is_empty())
            })
        };
        let guarded = |o: &Occurrence| {
            (!o.limits.guards.is_empty() && unguarded(o).is_some())
                || (scalar_ranges && restricts(o))
        };
        if !w.found.iter().any(guarded) {
            out.push(Vec::new());
            continue;
        }
        let mut reads: Vec<GuardedRead> = Vec::new();
        for o in &w.found {
            if let Some(axis) = leaves(&n.ranges, &o.limits, &o.access.offsets) {
                if !o.limits.guards.is_empty() {
                    crate::parse::args::push(&mut errors, still_outside(n, o, axis));
                }
            }
            let g = GuardedRead {
                array: o.access.array,
                offsets: o.access.offsets.clone(),
                from: o.limits.from.iter().map(|b| tightest(b, true)).collect(),
                to: o.limits.to.iter().map(|b| tightest(b, false)).collect(),
            };
            if !reads.contains(&g) {
                reads.push(g);
            }
        }
        out.push(reads);
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The compile error for a guarded read that leaves the array at every size along `axis`.
fn still_outside(n: &Nest, o: &Occurrence, axis: usize) -> syn::Error {
    let text = (o.access.tokens.to_string())
        .replace(" [", "[")
        .replace("[ [", "[[")
        .replace("] ]", "]]")
        .replace(" ,", ",");
    let v = &n.vars[axis];
    let mut e = syn::Error::new_spanned(
        &o.access.tokens,
        format!(
            "`{text}` reads outside the array along axis {axis} at every array size, and the guards around it do not keep it inside (every run would be refused); pacc understands guards that compare `{v}` plus or minus a literal with a literal or the axis' extent, joined by `&&` (`if {v} > 0 {{ .. }}`, `if {v} + 1 < n {{ .. }}`), and clamped indices (`({v} + 1).min(n - 1)`, `{v}.max(1) - 1`)"
        ),
    );
    for g in &o.limits.guards {
        e.combine(syn::Error::new(
            *g,
            format!("this guard of `{text}` does not keep `{v}` away from the array's end"),
        ));
    }
    e
}

/// The order of a bound's frame: literals, the axis's extent, then each scalar.
fn frame(b: Base) -> usize {
    match b {
        Base::Zero => 0,
        Base::Extent => 1,
        Base::Scalar(s) => 2 + s,
    }
}

/// Of bounds in one frame, the tightest: the largest lower or the smallest upper bound, per
/// frame (a literal and an extent-relative bound cannot be compared before the run).
fn tightest(bounds: &[Bound], lower: bool) -> Vec<Bound> {
    let mut out: Vec<Bound> = Vec::new();
    for &b in bounds {
        match out.iter_mut().find(|o| o.base == b.base) {
            Some(o) if lower => o.offset = o.offset.max(b.offset),
            Some(o) => o.offset = o.offset.min(b.offset),
            None => out.push(b),
        }
    }
    out.sort_by_key(|b| (frame(b.base), b.offset));
    out
}

/// The axis along which a read at `offsets` under `lim` leaves the array at every large
/// enough size, or `None` (it stays inside, never runs, or depends on the size).
fn leaves(ranges: &[AxisRange], lim: &Limits, offsets: &[i64]) -> Option<usize> {
    let mut out = None;
    for (axis, r) in ranges.iter().enumerate() {
        let from: Vec<Bound> = std::iter::once(r.lo)
            .chain(lim.from[axis].iter().copied())
            .collect();
        let to: Vec<Bound> = std::iter::once(r.hi)
            .chain(lim.to[axis].iter().copied())
            .collect();
        let max = |bs: &[Bound], end: bool| {
            (bs.iter()
                .filter(|b| b.base == if end { Base::Extent } else { Base::Zero }))
            .map(|b| b.offset)
            .max()
        };
        let min = |bs: &[Bound], end: bool| {
            (bs.iter()
                .filter(|b| b.base == if end { Base::Extent } else { Base::Zero }))
            .map(|b| b.offset)
            .min()
        };
        let off = offsets[axis];
        let all_lit = from.iter().all(|b| b.base == Base::Zero);
        let all_end = to.iter().all(|b| b.base == Base::Extent);
        // Never executes: a literal interval that is empty, or one relative to the end.
        let empty_lit = matches!((all_lit, max(&from, false), min(&to, false)), (true, Some(f), Some(t)) if f >= t);
        let empty_end = matches!((all_end, max(&from, true), min(&to, true)), (true, Some(f), Some(t)) if f >= t);
        if empty_lit || empty_end {
            return None;
        }
        // Saturating: offsets and bounds are the user's literals, any i64.
        let low = all_lit && max(&from, false).is_some_and(|f| f.saturating_add(off) < 0);
        let high =
            all_end && min(&to, true).is_some_and(|t| t.saturating_sub(1).saturating_add(off) >= 0);
        if (low || high) && out.is_none() {
            out = Some(axis);
        }
    }
    out
}

struct Walk<'a> {
    f: &'a Func,
    found: Vec<Occurrence>,
}

impl Walk<'_> {
    fn stmts(&mut self, body: &[KStmt], lim: &Limits) {
        for s in body {
            match s {
                KStmt::Let { init: e, .. }
                | KStmt::Assign { value: e, .. }
                | KStmt::Write { value: e, .. }
                | KStmt::Reduce { value: e, .. } => self.expr(e, lim),
                KStmt::If { cond, then, els } => {
                    self.expr(cond, lim);
                    self.stmts(then, &self.under(lim, cond, true));
                    if let Some(els) = els {
                        self.stmts(els, &self.under(lim, cond, false));
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &KExpr, lim: &Limits) {
        match &e.kind {
            KExprKind::Read(a) => self.found.push(Occurrence {
                access: a.clone(),
                limits: lim.clone(),
            }),
            KExprKind::If(c, a, b) => {
                self.expr(c, lim);
                self.expr(a, &self.under(lim, c, true));
                self.expr(b, &self.under(lim, c, false));
            }
            // `&&` and `||` evaluate their right side only where the left one allows.
            KExprKind::Bin(BinOp::And, a, b) => {
                self.expr(a, lim);
                self.expr(b, &self.under(lim, a, true));
            }
            KExprKind::Bin(BinOp::Or, a, b) => {
                self.expr(a, lim);
                self.expr(b, &self.under(lim, a, false));
            }
            KExprKind::SliceRead(_, x)
            | KExprKind::Neg(x)
            | KExprKind::Not(x)
            | KExprKind::Paren(x)
            | KExprKind::Cast(x, _) => self.expr(x, lim),
            KExprKind::Bin(_, a, b) => {
                self.expr(a, lim);
                self.expr(b, lim);
            }
            KExprKind::Method(_, r, args, _) => {
                self.expr(r, lim);
                for a in args {
                    self.expr(a, lim);
                }
            }
            _ => {}
        }
    }

    /// `lim` where `cond` is `holds`.
    fn under(&self, lim: &Limits, cond: &KExpr, holds: bool) -> Limits {
        let mut out = lim.clone();
        out.guards.push(cond.span);
        for (axis, lower, b) in self.cond(cond, holds) {
            if lower {
                out.from[axis].push(b);
            } else {
                out.to[axis].push(b);
            }
        }
        out
    }

    /// The limits `(axis, is a lower bound, bound)` that `e` being `holds` puts on the loop
    /// variables; conditions not understood give none.
    fn cond(&self, e: &KExpr, holds: bool) -> Vec<(usize, bool, Bound)> {
        match &e.kind {
            KExprKind::Paren(x) => self.cond(x, holds),
            KExprKind::Not(x) => self.cond(x, !holds),
            KExprKind::Bin(BinOp::And, a, b) if holds => {
                let mut v = self.cond(a, true);
                v.extend(self.cond(b, true));
                v
            }
            KExprKind::Bin(BinOp::Or, a, b) if !holds => {
                let mut v = self.cond(a, false);
                v.extend(self.cond(b, false));
                v
            }
            KExprKind::Bin(op, l, r) if op.is_cmp() => self.compare(*op, l, r, holds),
            _ => Vec::new(),
        }
    }

    fn compare(&self, op: BinOp, l: &KExpr, r: &KExpr, holds: bool) -> Vec<(usize, bool, Bound)> {
        let (axis, c, b, op) = match (var_of(l), var_of(r)) {
            (Some((a, c)), _) => match self.bound_of(r, a) {
                Some(b) => (a, c, b, op),
                None => return Vec::new(),
            },
            (None, Some((a, c))) => match self.bound_of(l, a) {
                Some(b) => (a, c, b, flip(op)),
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let op = if holds { Some(op) } else { negate(op) };
        // v + c op b, i.e. v op x with x = b - c.
        let x = |k: i64| Bound {
            offset: b.offset.saturating_sub(c).saturating_add(k),
            ..b
        };
        match op {
            Some(BinOp::Lt) => vec![(axis, false, x(0))],
            Some(BinOp::Le) => vec![(axis, false, x(1))],
            Some(BinOp::Gt) => vec![(axis, true, x(1))],
            Some(BinOp::Ge) => vec![(axis, true, x(0))],
            Some(BinOp::Eq) => vec![(axis, true, x(0)), (axis, false, x(1))],
            _ => Vec::new(),
        }
    }

    /// `e` as a bound of `axis`: a literal, or the axis' extent, plus or minus literals.
    fn bound_of(&self, e: &KExpr, axis: usize) -> Option<Bound> {
        match &e.kind {
            KExprKind::Paren(x) => self.bound_of(x, axis),
            KExprKind::Int(..) => Some(Bound::start(int_of(e)?)),
            KExprKind::Scalar(s) if self.f.scalars.get(*s)?.dim == Some(axis) => {
                Some(Bound::end(0))
            }
            // Another integer known before the time loop (`n` of `0..n`): its value for the
            // call, resolved with the loop bounds (`Program::resolved`).
            KExprKind::Scalar(s) if self.f.scalars.get(*s)?.ty.is_int() => {
                Some(Bound::scalar(*s, 0))
            }
            KExprKind::Bin(op @ (BinOp::Add | BinOp::Sub), x, k) => {
                let b = self.bound_of(x, axis)?;
                let k = int_of(k)?;
                let k = if *op == BinOp::Sub { -k } else { k };
                Some(Bound {
                    offset: b.offset.checked_add(k)?,
                    ..b
                })
            }
            _ => None,
        }
    }
}

fn int_of(e: &KExpr) -> Option<i64> {
    match &e.kind {
        KExprKind::Int(s, _) => s.parse().ok(),
        KExprKind::Paren(x) => int_of(x),
        _ => None,
    }
}

/// `e` as a loop variable plus a literal: its axis and the literal.
fn var_of(e: &KExpr) -> Option<(usize, i64)> {
    match &e.kind {
        KExprKind::LoopVar(a) => Some((*a, 0)),
        KExprKind::Paren(x) => var_of(x),
        KExprKind::Bin(BinOp::Add, x, k) => match (var_of(x), int_of(k)) {
            (Some((a, c)), Some(k)) => Some((a, c.checked_add(k)?)),
            _ => {
                let (a, c) = var_of(k)?;
                Some((a, c.checked_add(int_of(x)?)?))
            }
        },
        KExprKind::Bin(BinOp::Sub, x, k) => {
            let (a, c) = var_of(x)?;
            Some((a, c.checked_sub(int_of(k)?)?))
        }
        _ => None,
    }
}

/// `b op v` as `v op' b`.
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// The comparison that holds where `op` does not (`None`: not an interval, `!=`).
fn negate(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Ne => BinOp::Eq,
        _ => return None,
    })
}
