//! Lowering: the function body (syn) -> the stencil IR. Every unsupported construct is an
//! error at that construct saying what is supported.

use crate::ir::*;
use crate::parse::args::push;
use crate::parse::sig::{scalar_ty, slice_elem};
use crate::typing::{bin_op, method_arity, method_list, pre_infer};
use pacc_runtime::program::{AxisRange, Bound, ReduceOp};
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Pat, Stmt};

const KERNEL_SURFACE: &str = "kernels support `let`, arithmetic, comparisons, `&&`/`||`/`!`, `as` casts, `if`/`else`, float methods, scalars, the time variable, reads `a[[z + 1, y, x - 2]]`, slices `w[i]`, writes at the centre `a[[z, y, x]] = e` and reductions `s += e` / `m = m.min(e)` / `m = m.max(e)`";
const STEP_SURFACE: &str = "the time loop's body may contain perfect loop nests (one `for` per array axis), `std::mem::swap(a, b)` of two arrays, reduction resets `s = 0.0;` and single-point statements `a[[i, j, k]] += e;`";

fn err(t: impl ToTokens, msg: impl std::fmt::Display) -> syn::Error {
    syn::Error::new_spanned(t, msg)
}

fn is_assign_op(op: &syn::BinOp) -> bool {
    use syn::BinOp as B;
    matches!(
        op,
        B::AddAssign(_)
            | B::SubAssign(_)
            | B::MulAssign(_)
            | B::DivAssign(_)
            | B::RemAssign(_)
            | B::BitAndAssign(_)
            | B::BitOrAssign(_)
            | B::BitXorAssign(_)
            | B::ShlAssign(_)
            | B::ShrAssign(_)
    )
}

pub fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        _ => e,
    }
}

fn ident_of(e: &Expr) -> Option<&Ident> {
    match strip(e) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    }
}

fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

/// Kernel scope: loop variables, locals, and (for point statements) the point's index.
#[derive(Default, Clone)]
struct Scope {
    loop_vars: Vec<String>,
    locals: Vec<String>,
    point: Option<(usize, Vec<String>)>,
}

struct Ctx<'a> {
    arrays: &'a [ArrayParam],
    ndim: usize,
    pre: HashMap<String, PreVar>,
    time_var: Option<String>,
    scalars: Vec<ScalarUse>,
    slices: Vec<SliceUse>,
    reductions: Vec<ReductionUse>,
}

/// Parses and lowers the annotated function.
pub fn lower(item: syn::ItemFn, directive: Directive) -> syn::Result<Func> {
    let (params, arrays) = crate::parse::sig::params(&item.sig)?;
    let ndim = check_ranks(&item.sig, &arrays)?;
    let stmts = &item.block.stmts;
    let ti = time_loop_index(&item)?;
    check_not_spatial(&stmts[ti], &arrays)?;
    let tl = match &stmts[ti] {
        Stmt::Expr(Expr::ForLoop(tl), _) => tl,
        _ => {
            return Err(err(
                &item.sig.ident,
                "internal error locating the time loop",
            ))
        }
    };
    let pre_stmts: Vec<Stmt> = stmts[..ti].to_vec();
    let post_stmts: Vec<Stmt> = stmts[ti + 1..].to_vec();
    check_no_early_exit(&pre_stmts, &post_stmts)?;
    let pre = pre_vars(&item, &params, &arrays, &pre_stmts);
    let (start, end, inclusive, var) = time_range(tl)?;

    let mut cx = Ctx {
        arrays: &arrays,
        ndim,
        pre,
        time_var: var.as_ref().map(|v| v.to_string()),
        scalars: Vec::new(),
        slices: Vec::new(),
        reductions: Vec::new(),
    };
    let items = cx.step(&tl.body.stmts)?;

    Ok(Func {
        name: item.sig.ident.clone(),
        item: item.clone(),
        params,
        ndim,
        arrays: arrays.clone(),
        pre: pre_stmts,
        post: post_stmts,
        time: TimeLoop {
            var,
            start,
            end,
            inclusive,
            items,
        },
        scalars: cx.scalars,
        slices: cx.slices,
        reductions: cx.reductions,
        directive,
    })
}

/// The arrays' common rank (there is at least one array, all of the same rank).
fn check_ranks(sig: &syn::Signature, arrays: &[ArrayParam]) -> syn::Result<usize> {
    if arrays.is_empty() {
        return Err(err(
            sig,
            "a pipelined function needs at least one array parameter (`&mut Array3<f32>`, `&Array2<f64>`, `ArrayView3<f32>`, ..)",
        ));
    }
    let ndim = arrays[0].ndim;
    let mut errors = None;
    for a in &arrays[1..] {
        if a.ndim != ndim {
            push(
                &mut errors,
                err(
                    &a.name,
                    format!(
                        "array `{}` has {} dimensions but `{}` has {}; all arrays of a pipeline have the same rank and shape",
                        a.name, a.ndim, arrays[0].name, ndim
                    ),
                ),
            );
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(ndim),
    }
}

/// The index in the body of the time loop: the one top-level `for`.
fn time_loop_index(item: &syn::ItemFn) -> syn::Result<usize> {
    let stmts = &item.block.stmts;
    let fors: Vec<usize> = stmts
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
        .map(|(i, _)| i)
        .collect();
    if fors.is_empty() {
        return Err(err(
            &item.sig.ident,
            "no time loop: a pipelined function needs exactly one `for t in a..b { .. }` loop at the top level of its body, containing the loop nests of one time step",
        ));
    }
    if fors.len() > 1 {
        let mut e = None;
        for &i in &fors[1..] {
            let Stmt::Expr(Expr::ForLoop(f), _) = &stmts[i] else {
                continue;
            };
            push(
                &mut e,
                err(
                    for_head(f),
                    "a second time loop: a pipelined function has exactly one top-level `for` (the time loop); put every loop nest of a step inside it",
                ),
            );
        }
        return Err(e.unwrap_or_else(|| err(&item.sig.ident, "two time loops")));
    }
    Ok(fors[0])
}

/// The one top-level `for` is a time loop only if its variable never indexes an array: a loop
/// whose variable does (`for y in 1..ny - 1 { .. a[[y, x]] .. }`) is a loop of the stencil's
/// nest, and the function has no time loop at all.
fn check_not_spatial(stmt: &Stmt, arrays: &[ArrayParam]) -> syn::Result<()> {
    let Stmt::Expr(Expr::ForLoop(f), _) = stmt else {
        return Ok(());
    };
    let Pat::Ident(pi) = &*f.pat else {
        return Ok(());
    };
    let var = pi.ident.to_string();
    struct Finder<'a> {
        var: &'a str,
        arrays: &'a [ArrayParam],
        found: Option<String>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder<'_> {
        fn visit_expr_index(&mut self, e: &'ast syn::ExprIndex) {
            if let Expr::Path(p) = &*e.expr {
                if let Some(id) = p.path.get_ident() {
                    let uses_var = e
                        .index
                        .to_token_stream()
                        .into_iter()
                        .any(|t| mentions(&t, self.var));
                    if uses_var && self.found.is_none() && self.arrays.iter().any(|a| a.name == *id)
                    {
                        self.found = Some(id.to_string());
                    }
                }
            }
            syn::visit::visit_expr_index(self, e);
        }
    }
    fn mentions(t: &proc_macro2::TokenTree, var: &str) -> bool {
        match t {
            proc_macro2::TokenTree::Ident(i) => i == var,
            proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| mentions(&t, var)),
            _ => false,
        }
    }
    let mut finder = Finder {
        var: &var,
        arrays,
        found: None,
    };
    syn::visit::Visit::visit_block(&mut finder, &f.body);
    match finder.found {
        Some(array) => Err(err(
            for_head(f),
            format!(
                "no time loop: this top-level `for {var} in ..` indexes array `{array}` with `{var}`, so it is a loop of the stencil's nest, not a time loop; put the nest inside a time loop, `for t in 0..steps {{ .. }}` (`for _t in 0..1` for a single step)"
            ),
        )),
        None => Ok(()),
    }
}

/// Variables known before the time loop: the parameters, then the locals bound before it.
fn pre_vars(
    item: &syn::ItemFn,
    params: &[Param],
    arrays: &[ArrayParam],
    pre_stmts: &[Stmt],
) -> HashMap<String, PreVar> {
    let mut pre = HashMap::new();
    for (p, arg) in params.iter().zip(item.sig.inputs.iter()) {
        let mutable = matches!(arg, syn::FnArg::Typed(pt) if matches!(&*pt.pat, Pat::Ident(pi) if pi.mutability.is_some()));
        let v = match p.kind {
            ParamKind::Array(i) => PreVar::Array(i),
            ParamKind::Slice(e) => PreVar::Slice(e),
            ParamKind::Scalar(t) => PreVar::Scalar {
                ty: Some(t),
                mutable,
            },
            ParamKind::Other => PreVar::Other,
        };
        pre.insert(p.name.to_string(), v);
    }
    for s in pre_stmts {
        if let Stmt::Local(l) = s {
            bind_local(l, arrays, &mut pre);
        }
    }
    pre
}

/// The time loop's range (`start`, `end`, whether inclusive) and its variable.
fn time_range(tl: &syn::ExprForLoop) -> syn::Result<(Expr, Expr, bool, Option<Ident>)> {
    let (start, end, inclusive) = match strip(&tl.expr) {
        Expr::Range(r) => match (&r.start, &r.end) {
            (Some(s), Some(e)) => (
                (**s).clone(),
                (**e).clone(),
                matches!(r.limits, syn::RangeLimits::Closed(_)),
            ),
            _ => {
                return Err(err(
                    &tl.expr,
                    "the time loop must run over a bounded range `a..b` or `a..=b`",
                ))
            }
        },
        other => {
            return Err(err(
                other,
                "the time loop must run over a range `a..b` or `a..=b`",
            ))
        }
    };
    let var = match &*tl.pat {
        Pat::Ident(pi) if pi.subpat.is_none() => Some(pi.ident.clone()),
        Pat::Wild(_) => None,
        other => {
            return Err(err(
                other,
                "the time loop's variable must be a plain name (`t`, `_t`) or `_`",
            ))
        }
    };
    if let Some(l) = &tl.label {
        return Err(err(l, "labels on the time loop are not supported"));
    }
    Ok((start, end, inclusive, var))
}

impl Ctx<'_> {
    /// The time loop's body as step items; reduction resets are resolved once every reduction
    /// is known, and kernels may not read reductions.
    fn step(&mut self, body: &[Stmt]) -> syn::Result<Vec<StepItem>> {
        let mut items = Vec::new();
        let mut resets: Vec<(Ident, Expr, usize)> = Vec::new();
        let mut errors = None;
        for s in body {
            match self.step_item(s) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {
                    // A reset candidate: resolved once every reduction is known.
                    if let Stmt::Expr(Expr::Assign(a), _) = s {
                        if let Some(id) = ident_of(&a.left) {
                            resets.push((id.clone(), (*a.right).clone(), items.len()));
                            items.push(StepItem::Reset {
                                reduction: usize::MAX,
                                value: (*a.right).clone(),
                            });
                        }
                    }
                }
                Err(e) => push(&mut errors, e),
            }
        }
        for (id, value, at) in resets {
            match self.reset(id, value) {
                Ok(item) => items[at] = item,
                Err(e) => push(&mut errors, e),
            }
        }
        for sc in &self.scalars {
            if self.reductions.iter().any(|r| r.name == sc.name) {
                push(
                    &mut errors,
                    err(
                        &sc.name,
                        format!("reduction variable `{}` is read by a kernel; a reduction can be read only after the time loop (inside kernels it is only accumulated)", sc.name),
                    ),
                );
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(items),
        }
    }

    /// `id = value;` in the time loop: the reset of reduction `id`.
    fn reset(&self, id: Ident, value: Expr) -> syn::Result<StepItem> {
        let Some(r) = self.reductions.iter().position(|r| r.name == id) else {
            return Err(err(
                &id,
                format!(
                    "`{id}` is not a reduction: assignments in the time loop outside a loop nest may only reset a reduction variable (one accumulated with `{id} += e` in a nest); {STEP_SURFACE}"
                ),
            ));
        };
        if let Some(t) = &self.time_var {
            if mentions(value.to_token_stream(), t) {
                return Err(err(&value, "a reduction reset's value may not depend on the time variable; it is evaluated once before the run"));
            }
        }
        Ok(StepItem::Reset {
            reduction: r,
            value,
        })
    }
}

/// A literal in a kernel: float, integer (with its suffix's type, if any) or bool.
fn lit(l: &syn::ExprLit) -> syn::Result<KExprKind> {
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
fn const_path(p: &syn::ExprPath, e: &Expr) -> syn::Result<KExprKind> {
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
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

fn for_head(f: &syn::ExprForLoop) -> proc_macro2::TokenStream {
    let (a, b, c, d) = (&f.for_token, &f.pat, &f.in_token, &f.expr);
    quote::quote!(#a #b #c #d)
}

fn check_no_early_exit(pre: &[Stmt], post: &[Stmt]) -> syn::Result<()> {
    use syn::visit::Visit;
    struct V(Option<syn::Error>);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            push(&mut self.0, err(r, "`return` in a pipelined function is not supported; let the body end with its value"));
        }
        fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
            push(
                &mut self.0,
                err(
                    t,
                    "`?` outside the time loop of a pipelined function is not supported",
                ),
            );
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V(None);
    for s in pre.iter().chain(post) {
        v.visit_stmt(s);
    }
    match v.0 {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Records what a `let` before the time loop binds.
fn bind_local(l: &syn::Local, arrays: &[ArrayParam], pre: &mut HashMap<String, PreVar>) {
    let (pat, ann) = match &l.pat {
        Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
        p => (p, None),
    };
    let init = l.init.as_ref().map(|i| &*i.expr);
    match pat {
        Pat::Ident(pi) => {
            let name = pi.ident.to_string();
            let mutable = pi.mutability.is_some();
            let v = if let Some(t) = ann {
                if let Some(s) = scalar_ty(t) {
                    PreVar::Scalar {
                        ty: Some(s),
                        mutable,
                    }
                } else if let Some(e) = slice_elem(t) {
                    PreVar::Slice(e)
                } else {
                    PreVar::Other
                }
            } else if let Some(axis) = init.and_then(|e| dim_call(e, arrays, pre)) {
                PreVar::Dim(axis)
            } else {
                match init.map(|e| pre_infer(e, pre)) {
                    Some(Some(t)) => PreVar::Scalar {
                        ty: Some(t),
                        mutable,
                    },
                    _ => PreVar::Scalar { ty: None, mutable },
                }
            };
            pre.insert(name, v);
        }
        Pat::Tuple(t) => {
            let dims = init.map(|e| is_dim_tuple(e, arrays, pre)).unwrap_or(false);
            let anns: Vec<Option<Ty>> = match ann {
                Some(syn::Type::Tuple(tt)) => tt.elems.iter().map(scalar_ty).collect(),
                _ => Vec::new(),
            };
            let inits: Vec<Option<Ty>> = match init.map(strip) {
                Some(Expr::Tuple(et)) => et.elems.iter().map(|e| pre_infer(e, pre)).collect(),
                _ => Vec::new(),
            };
            for (i, p) in t.elems.iter().enumerate() {
                if let Pat::Ident(pi) = p {
                    let v = if dims {
                        PreVar::Dim(i)
                    } else {
                        PreVar::Scalar {
                            ty: anns
                                .get(i)
                                .copied()
                                .flatten()
                                .or(inits.get(i).copied().flatten()),
                            mutable: pi.mutability.is_some(),
                        }
                    };
                    pre.insert(pi.ident.to_string(), v);
                }
            }
        }
        _ => {}
    }
}

fn is_array(e: &Expr, arrays: &[ArrayParam], pre: &HashMap<String, PreVar>) -> bool {
    ident_of(e)
        .map(|id| {
            matches!(pre.get(&id.to_string()), Some(PreVar::Array(_)))
                || arrays.iter().any(|a| a.name == *id)
        })
        .unwrap_or(false)
}

/// `a.dim()` (any array).
fn is_dim_tuple(e: &Expr, arrays: &[ArrayParam], pre: &HashMap<String, PreVar>) -> bool {
    matches!(strip(e), Expr::MethodCall(m) if m.method == "dim" && m.args.is_empty() && is_array(&m.receiver, arrays, pre))
}

/// `a.shape()[i]`, `a.len_of(Axis(i))`, `a.nrows()`, `a.ncols()`: the axis.
fn dim_call(e: &Expr, arrays: &[ArrayParam], pre: &HashMap<String, PreVar>) -> Option<usize> {
    match strip(e) {
        Expr::Index(ix) => {
            let Expr::MethodCall(m) = strip(&ix.expr) else {
                return None;
            };
            if m.method != "shape" || !is_array(&m.receiver, arrays, pre) {
                return None;
            }
            int_lit(&ix.index).map(|v| v as usize)
        }
        Expr::MethodCall(m) if is_array(&m.receiver, arrays, pre) => {
            match m.method.to_string().as_str() {
                "nrows" => Some(0),
                "ncols" => Some(1),
                "len_of" => {
                    let Expr::Call(c) = strip(m.args.first()?) else {
                        return None;
                    };
                    int_lit(c.args.first()?).map(|v| v as usize)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn int_lit(e: &Expr) -> Option<i64> {
    match strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

impl Ctx<'_> {
    fn array(&self, id: &Ident) -> Option<usize> {
        match self.pre.get(&id.to_string()) {
            Some(PreVar::Array(i)) => Some(*i),
            _ => None,
        }
    }

    /// One statement of the time loop. `Ok(None)` for a reset candidate.
    fn step_item(&mut self, s: &Stmt) -> syn::Result<Option<StepItem>> {
        let e = match s {
            Stmt::Expr(e, _) => e,
            Stmt::Local(l) => {
                // Later uses of the names should not add errors of their own.
                let mut names = Vec::new();
                collect_pat_idents(&l.pat, &mut names);
                for n in names {
                    self.pre.insert(n, PreVar::Poisoned);
                }
                return Err(err(
                    l,
                    format!("`let` in the time loop outside a loop nest is not supported: compute the value before the time loop or inside a nest; {STEP_SURFACE}"),
                ));
            }
            Stmt::Macro(m) => {
                return Err(err(
                    m,
                    format!("macros are not supported in the time loop; {STEP_SURFACE}"),
                ))
            }
            Stmt::Item(i) => {
                return Err(err(
                    i,
                    format!("items are not supported in the time loop; {STEP_SURFACE}"),
                ))
            }
        };
        match e {
            Expr::ForLoop(f) => Ok(Some(StepItem::Nest(self.nest(f)?))),
            Expr::Call(c) if is_swap(&c.func) => {
                if c.args.len() != 2 {
                    return Err(err(c, "`swap` takes two arrays"));
                }
                let mut ids = Vec::new();
                for a in &c.args {
                    let mut x = strip(a);
                    loop {
                        match x {
                            Expr::Reference(r) => x = strip(&r.expr),
                            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                                x = strip(&u.expr)
                            }
                            _ => break,
                        }
                    }
                    match ident_of(x).and_then(|id| self.array(id)) {
                        Some(i) => ids.push(i),
                        None => {
                            return Err(err(
                                a,
                                "`std::mem::swap` in the time loop exchanges two array parameters (`std::mem::swap(a, b)` or `std::mem::swap(&mut a, &mut b)`)",
                            ))
                        }
                    }
                }
                let (a, b) = (ids[0], ids[1]);
                let (aa, bb) = (&self.arrays[a], &self.arrays[b]);
                if a == b {
                    return Err(err(
                        c,
                        "swapping an array with itself does nothing; remove it",
                    ));
                }
                if aa.elem != bb.elem {
                    return Err(err(
                        c,
                        format!(
                            "swapped arrays must have the same element type: `{}` holds {} but `{}` holds {}",
                            aa.name,
                            aa.elem.rust_name(),
                            bb.name,
                            bb.elem.rust_name()
                        ),
                    ));
                }
                Ok(Some(StepItem::Swap {
                    a,
                    b,
                    stmt: s.clone(),
                }))
            }
            Expr::Assign(a) if matches!(strip(&a.left), Expr::Index(_)) => Ok(Some(
                StepItem::Point(self.point(&a.left, None, &a.right, s)?),
            )),
            Expr::Binary(b) if is_assign_op(&b.op) && matches!(strip(&b.left), Expr::Index(_)) => {
                Ok(Some(StepItem::Point(self.point(
                    &b.left,
                    bin_op(&b.op),
                    &b.right,
                    s,
                )?)))
            }
            Expr::Assign(a) if ident_of(&a.left).is_some() => Ok(None),
            other => Err(err(
                other,
                format!("unsupported statement in the time loop; {STEP_SURFACE}"),
            )),
        }
    }

    fn point(
        &mut self,
        target: &Expr,
        op: Option<BinOp>,
        value: &Expr,
        stmt: &Stmt,
    ) -> syn::Result<Point> {
        let Expr::Index(ix) = strip(target) else {
            return Err(err(target, "expected an array element"));
        };
        let array = ident_of(&ix.expr).and_then(|id| self.array(id)).ok_or_else(|| {
            err(
                &ix.expr,
                "a single-point statement in the time loop writes an element of an array parameter: `a[[i, j, k]] += e;`",
            )
        })?;
        let Expr::Array(idx) = strip(&ix.index) else {
            return Err(err(
                &ix.index,
                format!(
                    "index arrays with one index per axis: `{}[[i, j, k]]`",
                    self.arrays[array].name
                ),
            ));
        };
        if idx.elems.len() != self.ndim {
            return Err(err(
                &ix.index,
                format!(
                    "wrong number of indices: `{}` has {} axes, this index has {}",
                    self.arrays[array].name,
                    self.ndim,
                    idx.elems.len()
                ),
            ));
        }
        if let Some(t) = &self.time_var {
            for e in &idx.elems {
                if mentions(e.to_token_stream(), t) {
                    return Err(err(
                        e,
                        "the index of a single-point statement may not depend on the time variable; it is evaluated once before the run",
                    ));
                }
            }
        }
        let index: Vec<Expr> = idx.elems.iter().cloned().collect();
        let sc = Scope {
            point: Some((
                array,
                index
                    .iter()
                    .map(|e| e.to_token_stream().to_string())
                    .collect(),
            )),
            ..Scope::default()
        };
        let value = self.expr(value, &sc)?;
        Ok(Point {
            array,
            index,
            op,
            value,
            stmt: stmt.clone(),
        })
    }

    fn nest(&mut self, f: &syn::ExprForLoop) -> syn::Result<Nest> {
        let mut vars = Vec::new();
        let mut ranges = Vec::new();
        let mut loops = Vec::new();
        let mut cur = f;
        loop {
            let axis = vars.len();
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
            ranges.push(self.range(&cur.expr, axis)?);
            vars.push(v);
            loops.push(cur.clone());
            if vars.len() == self.ndim {
                break;
            }
            let body = &cur.body.stmts;
            match body.as_slice() {
                [Stmt::Expr(Expr::ForLoop(inner), _)] => cur = inner,
                [] => return Err(err(&cur.body, format!("empty loop body: a loop nest has one `for` per array axis ({}), the innermost holding the update", self.ndim))),
                stmts => {
                    let bad = stmts
                        .iter()
                        .find(|s| !matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
                        .unwrap_or(&stmts[0]);
                    return Err(err(
                        bad,
                        format!(
                            "this loop nest is not perfect: between two `for`s there may be nothing else; a nest has exactly one `for` per array axis ({}), the innermost holding the statements",
                            self.ndim
                        ),
                    ));
                }
            }
        }
        let sc = Scope {
            loop_vars: vars.iter().map(|v| v.to_string()).collect(),
            ..Scope::default()
        };
        let mut sc = sc;
        let body = self.block(&cur.body.stmts, &mut sc)?;
        Ok(Nest {
            vars,
            ranges,
            loops,
            body,
            span: f.for_token.span,
        })
    }

    fn range(&self, e: &Expr, axis: usize) -> syn::Result<AxisRange> {
        let Expr::Range(r) = strip(e) else {
            return Err(err(
                e,
                "a loop nest's `for` runs over a range `lo..hi` or `lo..=hi`",
            ));
        };
        let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
            return Err(err(e, "a loop nest's range needs both bounds: `lo..hi`"));
        };
        let lo = self.bound(lo, axis)?;
        let mut hi = self.bound(hi, axis)?;
        if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            hi.offset = hi
                .offset
                .checked_add(1)
                .ok_or_else(|| err(e, "loop bound out of range"))?;
        }
        Ok(AxisRange { lo, hi })
    }

    fn bound(&self, e: &Expr, axis: usize) -> syn::Result<Bound> {
        let msg = "loop bounds are an integer literal `c`, `n` or `n - c`, where `n` is the extent of this axis bound before the time loop (`let (nz, ny, nx) = a.dim();`)";
        if let Some(v) = int_lit(e) {
            return Ok(Bound::start(v));
        }
        let dim = |x: &Expr| -> syn::Result<()> {
            let id = ident_of(x).ok_or_else(|| err(x, msg))?;
            match self.pre.get(&id.to_string()) {
                Some(PreVar::Dim(a)) if *a == axis => Ok(()),
                Some(PreVar::Dim(a)) => Err(err(
                    id,
                    format!("`{id}` is the extent of axis {a}, but this loop runs over axis {axis}; each loop of a nest runs over its own axis, outermost first"),
                )),
                _ => Err(err(id, msg)),
            }
        };
        match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Sub(_) | syn::BinOp::Add(_)) => {
                dim(&b.left)?;
                let c = int_lit(&b.right).ok_or_else(|| err(&b.right, msg))?;
                Ok(Bound::end(if matches!(b.op, syn::BinOp::Sub(_)) {
                    -c
                } else {
                    c
                }))
            }
            x => {
                dim(x)?;
                Ok(Bound::end(0))
            }
        }
    }

    fn block(&mut self, stmts: &[Stmt], sc: &mut Scope) -> syn::Result<Vec<KStmt>> {
        let depth = sc.locals.len();
        let mut out = Vec::new();
        let mut errors = None;
        for s in stmts {
            match self.stmt(s, sc) {
                Ok(Some(k)) => out.push(k),
                Ok(None) => {}
                Err(e) => push(&mut errors, e),
            }
        }
        sc.locals.truncate(depth);
        match errors {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn stmt(&mut self, s: &Stmt, sc: &mut Scope) -> syn::Result<Option<KStmt>> {
        match s {
            Stmt::Local(l) => {
                let (pat, ty) = match &l.pat {
                    Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
                    p => (p, None),
                };
                let Pat::Ident(pi) = pat else {
                    return Err(err(
                        pat,
                        "`let` in a kernel binds one plain name: `let s = ..;`",
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
                sc.locals.push(name.to_string());
                let init = init?;
                Ok(Some(KStmt::Let { name, ty, init }))
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
                self.expr_stmt(e, sc).map(Some)
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

    fn expr_stmt(&mut self, e: &Expr, sc: &mut Scope) -> syn::Result<KStmt> {
        match e {
            Expr::Assign(a) => self.assign(&a.left, None, &a.right, sc, e),
            Expr::Binary(b) if is_assign_op(&b.op) => self.assign(&b.left, bin_op(&b.op), &b.right, sc, e),
            Expr::If(i) => self.if_stmt(i, sc),
            Expr::ForLoop(f) => Err(err(
                for_head(f),
                format!("a loop nest has exactly one `for` per array axis ({}); this loop is one too many", self.ndim),
            )),
            Expr::While(_) | Expr::Loop(_) => Err(err(
                e,
                format!("loops inside a kernel are not supported (a kernel is the body of one perfect loop nest); {KERNEL_SURFACE}"),
            )),
            other => Err(err(other, format!("unsupported statement in a kernel; {KERNEL_SURFACE}"))),
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf, sc: &mut Scope) -> syn::Result<KStmt> {
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

    fn assign(
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
        if sc.locals.contains(&name) {
            let value = self.expr(right, sc)?;
            return Ok(KStmt::Assign {
                name: id.clone(),
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

    fn reduction(&mut self, id: &Ident, op: ReduceOp, whole: &Expr) -> syn::Result<usize> {
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

    fn access(&mut self, ix: &syn::ExprIndex, sc: &Scope) -> syn::Result<Access> {
        let id = ident_of(&ix.expr).ok_or_else(|| {
            err(
                &ix.expr,
                "only array parameters and slices can be indexed in a kernel",
            )
        })?;
        let array = self
            .array(id)
            .ok_or_else(|| err(&ix.expr, format!("`{id}` is not an array parameter")))?;
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

    fn offset(&self, e: &Expr, axis: usize, sc: &Scope) -> syn::Result<i64> {
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
        match strip(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
                let neg = matches!(b.op, syn::BinOp::Sub(_));
                if let (Some(c), false) = (int_lit(&b.left), neg) {
                    check_var(&b.right)?;
                    return Ok(c);
                }
                check_var(&b.left)?;
                match int_lit(&b.right) {
                    Some(c) => Ok(if neg { -c } else { c }),
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

    fn scalar(&mut self, id: &Ident, ty: Option<Ty>) -> syn::Result<usize> {
        if let Some(i) = self.scalars.iter().position(|s| s.name == *id) {
            return Ok(i);
        }
        let ty = ty.ok_or_else(|| {
            err(id, format!("cannot infer the type of `{id}`, which the kernel reads; annotate it where it is declared before the time loop (`let {id}: f32 = ..;`)"))
        })?;
        self.scalars.push(ScalarUse {
            name: id.clone(),
            ty,
        });
        Ok(self.scalars.len() - 1)
    }

    fn slice(&mut self, id: &Ident, elem: pacc_runtime::program::Elem) -> usize {
        if let Some(i) = self.slices.iter().position(|s| s.name == *id) {
            return i;
        }
        self.slices.push(SliceUse {
            name: id.clone(),
            elem,
        });
        self.slices.len() - 1
    }

    fn expr(&mut self, e: &Expr, sc: &Scope) -> syn::Result<KExpr> {
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
    fn index(&mut self, ix: &syn::ExprIndex, sc: &Scope) -> syn::Result<KExprKind> {
        if let Some(id) = ident_of(&ix.expr) {
            if let Some(PreVar::Slice(el)) = self.pre.get(&id.to_string()).cloned() {
                if sc.locals.contains(&id.to_string()) {
                    return Err(err(id, "indexing a kernel local is not supported"));
                }
                let idx = self.expr(&ix.index, sc)?;
                let s = self.slice(id, el);
                return Ok(KExprKind::SliceRead(s, Box::new(idx)));
            }
        }
        if let Some((_, pidx)) = &sc.point {
            return self.point_read(ix, pidx);
        }
        Ok(KExprKind::Read(self.access(ix, sc)?))
    }

    /// A read in a single-point statement whose point is `pidx`: only at that point.
    fn point_read(&self, ix: &syn::ExprIndex, pidx: &[String]) -> syn::Result<KExprKind> {
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
    fn method_call(&mut self, m: &syn::ExprMethodCall, sc: &Scope) -> syn::Result<KExprKind> {
        let name = m.method.to_string();
        match method_arity(&name) {
            Some(n) if n == m.args.len() && m.turbofish.is_none() => {
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
    fn call(&mut self, c: &syn::ExprCall, sc: &Scope) -> syn::Result<KExprKind> {
        let path = match strip(&c.func) {
            Expr::Path(p) => Some(p),
            _ => None,
        };
        let segs: Vec<String> = path
            .map(|p| {
                p.path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect()
            })
            .unwrap_or_default();
        if segs.len() == 2 {
            if let (Some(t), Some(n)) = (
                Ty::from_name(&segs[0]).filter(|t| t.is_float()),
                method_arity(&segs[1]),
            ) {
                if c.args.len() != n + 1 {
                    return Err(err(
                        c,
                        format!("`{}::{}` takes {} argument(s)", segs[0], segs[1], n + 1),
                    ));
                }
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
    fn if_expr(&mut self, i: &syn::ExprIf, sc: &Scope) -> syn::Result<KExprKind> {
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

    fn tail_only(&mut self, b: &syn::Block, sc: &Scope) -> syn::Result<KExpr> {
        match b.stmts.as_slice() {
            [Stmt::Expr(e, None)] => self.expr(e, sc),
            _ => Err(err(b, "a branch of an `if` used as a value must be a single expression; compute parts with `let` before the `if`")),
        }
    }

    fn name(&mut self, id: &Ident, sc: &Scope) -> syn::Result<KExprKind> {
        let name = id.to_string();
        if sc.locals.contains(&name) {
            return Ok(KExprKind::Local(id.clone()));
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
            Some(PreVar::Slice(_)) => Err(err(id, format!("slice `{id}` must be indexed in a kernel: `{id}[i]`"))),
            Some(PreVar::Other) => Err(err(
                id,
                format!("`{id}` has a type kernels cannot use; kernels read scalars (f32, f64, integers, bool), arrays and 1D slices (`&[f32]`, `Vec<f32>`)"),
            )),
            None => Err(err(id, format!("cannot find `{id}` among the kernel's locals, loop variables, parameters and the values computed before the time loop"))),
        }
    }
}

/// `m.min(e)`, `e.min(m)`, `f32::min(m, e)`, `f64::max(e, m)`: (op, e).
fn min_max_form<'e>(right: &'e Expr, name: &str) -> Option<(ReduceOp, &'e Expr)> {
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
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
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

fn collect_pat_idents(p: &Pat, out: &mut Vec<String>) {
    match p {
        Pat::Ident(pi) => out.push(pi.ident.to_string()),
        Pat::Type(pt) => collect_pat_idents(&pt.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| collect_pat_idents(e, out)),
        _ => {}
    }
}

fn is_swap(f: &Expr) -> bool {
    let Expr::Path(p) = strip(f) else {
        return false;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(
        segs.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .as_slice(),
        ["swap"] | ["mem", "swap"] | ["std", "mem", "swap"] | ["core", "mem", "swap"]
    )
}

#[allow(dead_code)]
fn span_of(e: &Expr) -> Span {
    e.span()
}
