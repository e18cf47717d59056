//! Analyses over the IR: read reach and halo, array roles, races, types.

pub mod compress;
pub mod fuse;
pub mod guards;
pub mod race;
pub mod reach;
pub mod roles;
pub mod slices;
pub mod speculate;
pub mod types;

use crate::ir::{Func, KExpr, KExprKind, KStmt, Ty};
use crate::parse::args::push;
use pacc_runtime::program::{ReadDecl, Role};

/// What the analyses found.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub roles: Vec<Role>,
    /// Per kernel: reads per array.
    pub reads: Vec<Vec<ReadDecl>>,
    /// Per kernel: arrays written.
    pub writes: Vec<Vec<usize>>,
    /// Per kernel: reductions accumulated (program indices).
    pub reductions: Vec<Vec<usize>>,
    /// Per point statement: arrays read at the point.
    pub point_reads: Vec<Vec<usize>>,
    pub halo: usize,
    pub time_ty: Ty,
    /// `compress(..)`: one entry per compressed array.
    pub compress: Vec<pacc_runtime::program::CompressDecl>,
    /// Per slice: the index of each read (`slices::slice_reads`).
    pub slice_reads: Vec<Vec<pacc_runtime::program::SliceIndex>>,
    /// Per kernel: its guarded reads (`guards::guarded`; empty where no read needs its guard).
    pub guarded: Vec<Vec<pacc_runtime::program::GuardedRead>>,
}

impl Analysis {
    /// Whether kernel `k` has reads that execute only under their guards: its CUDA code is the
    /// per-point form alone (the other forms load their neighbours ahead, unguarded), and its
    /// program has no fused forms.
    pub fn is_guarded(&self, k: usize) -> bool {
        self.guarded.get(k).is_some_and(|g| !g.is_empty())
    }
}

/// Runs every analysis; fixes literal-typed scalars and reductions in `f`.
pub fn analyse(f: &mut Func) -> syn::Result<Analysis> {
    let mut errors = None;
    if let Err(e) = race::check(f) {
        push(&mut errors, e);
    }
    let (reads, halo) = match reach::reach(f) {
        Ok(x) => x,
        Err(e) => {
            push(&mut errors, e);
            (Vec::new(), 0)
        }
    };
    let roles = match roles::roles(f) {
        Ok(r) => r,
        Err(e) => {
            push(&mut errors, e);
            Vec::new()
        }
    };
    let compress = match compress::compress(f, &roles) {
        Ok(c) => c,
        Err(e) => {
            push(&mut errors, e);
            Vec::new()
        }
    };
    let slice_reads = match slices::slice_reads(f) {
        Ok(r) => r,
        Err(e) => {
            push(&mut errors, e);
            Vec::new()
        }
    };
    let guarded = match guards::guarded(f) {
        Ok(g) => g,
        Err(e) => {
            push(&mut errors, e);
            Vec::new()
        }
    };
    if let Some(e) = errors {
        return Err(e);
    }
    let writes = f
        .nests()
        .map(|n| {
            let mut w = Vec::new();
            walk_stmts(
                &n.body,
                &mut |s| {
                    if let KStmt::Write { access, .. } = s {
                        if !w.contains(&access.array) {
                            w.push(access.array);
                        }
                    }
                },
                &mut |_| {},
            );
            w
        })
        .collect();
    let reductions = f
        .nests()
        .map(|n| {
            let mut r = Vec::new();
            walk_stmts(
                &n.body,
                &mut |s| {
                    if let KStmt::Reduce { reduction, .. } = s {
                        if !r.contains(reduction) {
                            r.push(*reduction);
                        }
                    }
                },
                &mut |_| {},
            );
            r
        })
        .collect();
    let point_reads = f
        .points()
        .map(|p| {
            let mut r = Vec::new();
            walk_expr(&p.value, &mut |e| {
                if let KExprKind::PointRead(a) = e.kind {
                    if !r.contains(&a) {
                        r.push(a);
                    }
                }
            });
            r
        })
        .collect();
    let time_ty = time_type(f);
    resolve_literal_types(f, time_ty);
    Ok(Analysis {
        roles,
        reads,
        writes,
        reductions,
        point_reads,
        halo,
        time_ty,
        compress,
        slice_reads,
        guarded,
    })
}

/// The time variable's type: from a typed bound, else `usize` (what indexing a slice with it
/// would make it).
pub fn time_type(f: &Func) -> Ty {
    let mut pre = std::collections::HashMap::new();
    for p in &f.params {
        if let crate::ir::ParamKind::Scalar(t) = p.kind {
            pre.insert(
                p.name.to_string(),
                crate::ir::PreVar::Scalar {
                    ty: Some(t),
                    mutable: false,
                },
            );
        }
    }
    let a = crate::typing::pre_infer(&f.time.start, &pre);
    let b = crate::typing::pre_infer(&f.time.end, &pre);
    match (a, b) {
        (Some(x), Some(y)) => {
            let t = crate::typing::unify(x, y);
            if t == Ty::IntLit {
                Ty::Usize
            } else {
                t
            }
        }
        (Some(x), None) | (None, Some(x)) if !x.is_lit() => x,
        _ => Ty::Usize,
    }
}

fn resolve_literal_types(f: &mut Func, time: Ty) {
    let elems: Vec<_> = f.arrays.iter().map(|a| a.elem).collect();
    let bodies: Vec<Vec<KStmt>> = f.nests().map(|n| n.body.clone()).collect();
    let points: Vec<KExpr> = f.points().map(|p| p.value.clone()).collect();
    let (s, r) = {
        let mut env = types::Env {
            arrays: &elems,
            scalars: &f.scalars,
            slices: &f.slices,
            reductions: &f.reductions,
            time,
            locals: Vec::new(),
        };
        let b: Vec<&[KStmt]> = bodies.iter().map(|b| b.as_slice()).collect();
        let p: Vec<&KExpr> = points.iter().collect();
        types::resolve_uses(&b, &p, &mut env)
    };
    for (open, t) in s {
        match open {
            types::Open::Scalar(i) => f.scalars[i].ty = t,
            types::Open::Table(i) => {
                if let Some(e) = t.elem() {
                    f.slices[i].elem = e;
                }
            }
        }
    }
    // A table no use typed is f64, Rust's default for a float literal.
    for sl in &mut f.slices {
        sl.literal = false;
    }
    for (i, t) in r {
        f.reductions[i].ty = t;
    }
    for sc in &mut f.scalars {
        sc.ty = sc.ty.defaulted();
    }
    for red in &mut f.reductions {
        red.ty = red.ty.defaulted();
    }
}

/// Visits statements (pre-order) and every expression in them.
pub fn walk_stmts(body: &[KStmt], fs: &mut dyn FnMut(&KStmt), fe: &mut dyn FnMut(&KExpr)) {
    for s in body {
        fs(s);
        match s {
            KStmt::Let { init: e, .. }
            | KStmt::Assign { value: e, .. }
            | KStmt::Write { value: e, .. }
            | KStmt::Reduce { value: e, .. } => walk_expr(e, fe),
            KStmt::If { cond, then, els } => {
                walk_expr(cond, fe);
                walk_stmts(then, fs, fe);
                if let Some(e) = els {
                    walk_stmts(e, fs, fe);
                }
            }
        }
    }
}

pub fn walk_expr(e: &KExpr, f: &mut dyn FnMut(&KExpr)) {
    f(e);
    match &e.kind {
        KExprKind::SliceRead(_, x)
        | KExprKind::Neg(x)
        | KExprKind::Not(x)
        | KExprKind::Paren(x)
        | KExprKind::Cast(x, _) => walk_expr(x, f),
        KExprKind::Bin(_, a, b) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        KExprKind::Method(_, r, args, _) => {
            walk_expr(r, f);
            for a in args {
                walk_expr(a, f);
            }
        }
        KExprKind::If(c, a, b) => {
            walk_expr(c, f);
            walk_expr(a, f);
            walk_expr(b, f);
        }
        _ => {}
    }
}
