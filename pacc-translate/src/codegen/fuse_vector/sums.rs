//! The leading `let`s of an invocation's body computed for all the thread's points before its
//! point loop, a long sum one term at a time.
//!
//! Written point by point, the body of a radius-4 stencil needs every row of the tiles for its
//! first point, so the compiler issues all of a step's shared loads together right after the
//! barrier, in the same cycles as every other warp of the block: Nsight Compute found half of
//! the issue slots stalled on a full shared-memory queue (`mio_throttle`), against none for the
//! hand-written kernel that sums distance by distance (H200, `benches/results/
//! 2026-11-28-h200-speculate/`). Summed a term at a time across the points (`lap = 3 c0 u` for
//! the 4 points, then `lap + c1 (...)` for the 4 points, ...), a row is loaded just before the
//! first term that reads it, and the loads spread over the arithmetic. Each partial sum is the
//! chain's own, in the chain's type, so the bits are the serial loop's. Only where every point
//! runs the body (`analysis::speculate`): the terms run for all points.

use super::*;
use crate::analysis::types::Env;
use crate::ir::{BinOp, KExpr, KStmt};

/// A leading `let` of the body: its name, its type, and its terms left to right (the first
/// without an operator); one term where its value is not a long sum.
pub(super) struct Hoisted {
    name: String,
    ty: Ty,
    terms: Vec<(Option<BinOp>, KExpr)>,
}

/// Terms a sum needs before summing it a term at a time pays.
const MIN_TERMS: usize = 3;

/// The leading `let`s of `body` to compute before the point loop: none unless one of them is
/// a long sum.
pub(super) fn hoist(body: &[KStmt], env: &mut Env<'_>) -> Vec<Hoisted> {
    let scope = env.locals.len();
    let mut out = Vec::new();
    for (i, s) in body.iter().enumerate() {
        let KStmt::Let { name, ty, init } = s else {
            break;
        };
        let name = name.to_string();
        let t = ty.unwrap_or_else(|| env.let_type(&name, init, &body[i + 1..]));
        let terms = terms(init, t, env).unwrap_or_else(|| vec![(None, init.clone())]);
        env.locals.push((name.clone(), t));
        out.push(Hoisted { name, ty: t, terms });
    }
    env.locals.truncate(scope);
    if out.iter().any(|h| h.terms.len() >= MIN_TERMS) {
        out
    } else {
        Vec::new()
    }
}

/// The terms of `e` as a left-leaning chain of `+` and `-` in the float type `t`, where every
/// term has that type or is a float literal (so every partial sum is computed in `t`, as in
/// the chain).
fn terms(e: &KExpr, t: Ty, env: &Env<'_>) -> Option<Vec<(Option<BinOp>, KExpr)>> {
    if !matches!(t, Ty::F32 | Ty::F64) {
        return None;
    }
    let mut out = Vec::new();
    let mut left = e;
    while let KExprKind::Bin(op @ (BinOp::Add | BinOp::Sub), l, r) = &left.kind {
        out.push((Some(*op), (**r).clone()));
        left = l;
    }
    out.push((None, left.clone()));
    out.reverse();
    let typed = |x: &KExpr| matches!(env.infer(x), u if u == t || u == Ty::FloatLit);
    (out.len() >= 2 && out.iter().all(|(_, x)| typed(x))).then_some(out)
}

impl Gen<'_> {
    /// The hoisted `let`s into `pacc_h<k>[W]`, a term at a time for all points, each of
    /// `loads` (a row's register and its load) written just before the first term reading it.
    /// `prelude` declares a point's coordinates; the caller has set the loop variables and the
    /// reads' server (`self.serve`).
    pub(super) fn vfuse_hoisted(
        &mut self,
        hoisted: &[Hoisted],
        loads: &mut Vec<(String, String)>,
        prelude: &str,
    ) {
        let scope = self.env.locals.len();
        for (k, h) in hoisted.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "                {} pacc_h{k}[{W}];",
                h.ty.cuda_name()
            );
            for (op, term) in &h.terms {
                self.rows_for(term, loads);
                let v = self.expr(term, Some(h.ty));
                let rhs = match op {
                    None => v,
                    Some(op) => format!("pacc_h{k}[pacc_i] {} ({v})", op.c()),
                };
                let _ = writeln!(
                    self.out,
                    "                #pragma unroll\n                for (int pacc_i = 0; pacc_i < {W}; ++pacc_i) {{\n{prelude}{}                    pacc_h{k}[pacc_i] = {rhs};\n                }}",
                    hoisted_locals(&hoisted[..k], "                    ")
                );
            }
            self.env.locals.push((h.name.clone(), h.ty));
        }
        self.env.locals.truncate(scope);
    }

    /// Writes the loads of the rows `e` reads that are still pending.
    fn rows_for(&mut self, e: &KExpr, loads: &mut Vec<(String, String)>) {
        let mut regs = Vec::new();
        crate::analysis::walk_expr(e, &mut |x| {
            if let KExprKind::Read(a) = &x.kind {
                if let Some(r) = self.serve.iter().find_map(|s| s.read(a.array, &a.offsets)) {
                    regs.push(r.split('[').next().unwrap_or_default().to_string());
                }
            }
        });
        loads.retain(|(reg, load)| {
            let due = regs.contains(reg);
            if due {
                self.out.push_str(load);
            }
            !due
        });
    }
}

/// The point's values of the hoisted `let`s, as the body's locals.
pub(super) fn hoisted_locals(hoisted: &[Hoisted], ind: &str) -> String {
    let mut s = String::new();
    for (k, h) in hoisted.iter().enumerate() {
        let _ = writeln!(
            s,
            "{ind}const {} {} = pacc_h{k}[pacc_i];",
            h.ty.cuda_name(),
            c_ident(&h.name)
        );
    }
    s
}

/// The names of the hoisted `let`s with their types, for the body's type inference.
pub(super) fn hoisted_types(hoisted: &[Hoisted]) -> impl Iterator<Item = (String, Ty)> + '_ {
    hoisted.iter().map(|h| (h.name.clone(), h.ty))
}
