//! The indices slices are read at: per slice, each read's index as an affine function of the
//! time variable, the loop variables of its nest (with their ranges) and integer scalars, so
//! that the runtime checks the slice's length before the run (`SliceDecl::reads`).
//!
//! An index of another form is refused here. Its bound is unknown before the run, and neither
//! backend could fail cleanly while running: the CPU closures index the slice with the user's
//! own expression (a panic past the end, after earlier operations wrote results back), and a
//! guard in the CUDA kernel could only substitute a value, a silent wrong result.

use crate::ir::{BinOp, Func, KExpr, KExprKind, StepItem};
use crate::parse::args::push;
use pacc_runtime::program::{AxisRange, AxisTerm, ScalarTerm, SliceIndex};
use std::collections::BTreeMap;

/// An affine index in exact arithmetic: constant, time coefficient, per axis and per scalar
/// coefficients.
#[derive(Default)]
struct Affine {
    offset: i128,
    time: i128,
    axes: BTreeMap<usize, i128>,
    scalars: BTreeMap<usize, i128>,
}

impl Affine {
    fn constant(c: i128) -> Self {
        Affine {
            offset: c,
            ..Default::default()
        }
    }

    fn is_constant(&self) -> bool {
        self.time == 0 && self.axes.is_empty() && self.scalars.is_empty()
    }

    fn scaled(mut self, k: i128) -> Option<Self> {
        self.offset = self.offset.checked_mul(k)?;
        self.time = self.time.checked_mul(k)?;
        for c in self.axes.values_mut().chain(self.scalars.values_mut()) {
            *c = c.checked_mul(k)?;
        }
        Some(self)
    }

    fn plus(mut self, o: Affine) -> Option<Self> {
        self.offset = self.offset.checked_add(o.offset)?;
        self.time = self.time.checked_add(o.time)?;
        for (a, c) in o.axes {
            let e = self.axes.entry(a).or_default();
            *e = e.checked_add(c)?;
        }
        for (s, c) in o.scalars {
            let e = self.scalars.entry(s).or_default();
            *e = e.checked_add(c)?;
        }
        Some(self)
    }

    /// The runtime's form: coefficients that fit an `i64`, loop variables with their ranges.
    fn index(self, ranges: &[AxisRange]) -> Option<SliceIndex> {
        let c = |v: i128| i64::try_from(v).ok();
        let mut axes = Vec::new();
        for (axis, coef) in self.axes.into_iter().filter(|&(_, k)| k != 0) {
            let range = *ranges.get(axis)?;
            let coef = c(coef)?;
            axes.push(AxisTerm { axis, coef, range });
        }
        let mut scalars = Vec::new();
        for (scalar, coef) in self.scalars.into_iter().filter(|&(_, k)| k != 0) {
            let coef = c(coef)?;
            scalars.push(ScalarTerm { scalar, coef });
        }
        Some(SliceIndex {
            offset: c(self.offset)?,
            time: c(self.time)?,
            axes,
            scalars,
        })
    }
}

/// `e` as an affine index; `None` when it is not one (or a coefficient overflows).
fn affine(f: &Func, e: &KExpr) -> Option<Affine> {
    match &e.kind {
        KExprKind::Int(digits, _) => Some(Affine::constant(digits.parse().ok()?)),
        KExprKind::Time => Some(Affine {
            time: 1,
            ..Default::default()
        }),
        KExprKind::LoopVar(a) => Some(Affine {
            axes: BTreeMap::from([(*a, 1)]),
            ..Default::default()
        }),
        KExprKind::Scalar(s) if f.scalars.get(*s)?.ty.is_int() => Some(Affine {
            scalars: BTreeMap::from([(*s, 1)]),
            ..Default::default()
        }),
        // An integer cast keeps the value of an index in range; one to a float is no index.
        KExprKind::Cast(x, ty) if ty.is_int() => affine(f, x),
        KExprKind::Paren(x) => affine(f, x),
        KExprKind::Neg(x) => affine(f, x)?.scaled(-1),
        KExprKind::Bin(op, l, r) => {
            let (l, r) = (affine(f, l)?, affine(f, r)?);
            match op {
                BinOp::Add => l.plus(r),
                BinOp::Sub => l.plus(r.scaled(-1)?),
                BinOp::Mul if l.is_constant() => r.scaled(l.offset),
                BinOp::Mul if r.is_constant() => l.scaled(r.offset),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Per slice of `f`, the index of each of its reads (duplicates once). Errors name every read
/// whose index is not affine.
pub fn slice_reads(f: &Func) -> syn::Result<Vec<Vec<SliceIndex>>> {
    let mut out = vec![Vec::new(); f.slices.len()];
    let mut errors = None;
    let mut visit = |e: &KExpr, ranges: &[AxisRange]| {
        let KExprKind::SliceRead(s, idx) = &e.kind else {
            return;
        };
        match affine(f, idx).and_then(|a| a.index(ranges)) {
            Some(i) if !out[*s].contains(&i) => out[*s].push(i),
            Some(_) => {}
            None => push(&mut errors, refused(f, *s, idx)),
        }
    };
    for item in &f.time.items {
        match item {
            StepItem::Nest(n) => {
                let ranges = &n.ranges;
                super::walk_stmts(&n.body, &mut |_| {}, &mut |e| visit(e, ranges));
            }
            StepItem::Point(p) => super::walk_expr(&p.value, &mut |e| visit(e, &[])),
            StepItem::Swap { .. } | StepItem::Reset { .. } => {}
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn refused(f: &Func, s: usize, idx: &KExpr) -> syn::Error {
    let name = &f.slices[s].name;
    let t = f
        .time
        .var
        .as_ref()
        .map_or("t".to_string(), |v| v.to_string());
    let msg = format!(
        "pacc cannot bound this index of slice `{name}`, so it cannot check the slice's length \
         before the run; index slices by a sum of integer constants, the time variable, loop \
         variables and integer scalars, each times a constant (`{name}[{t}]`, \
         `{name}[2 * {t} + 1]`, `{name}[z - 4]`)"
    );
    syn::Error::new(idx.span, msg)
}
