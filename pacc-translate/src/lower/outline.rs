//! The function's outline: arrays of one rank, exactly one time loop over a range, and no early
//! exit before or after it.

use super::context::err;
use super::syntax::{for_head, strip};
use crate::ir::ArrayParam;
use crate::parse::args::push;
use quote::ToTokens;
use syn::{Expr, Ident, Pat, Stmt};

/// The arrays' common rank (there is at least one array, all of the same rank).
pub(super) fn check_ranks(sig: &syn::Signature, arrays: &[ArrayParam]) -> syn::Result<usize> {
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
pub(super) fn time_loop_index(item: &syn::ItemFn) -> syn::Result<usize> {
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
pub(super) fn check_not_spatial(stmt: &Stmt, arrays: &[ArrayParam]) -> syn::Result<()> {
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

/// The time loop's range (`start`, `end`, whether inclusive) and its variable.
pub(super) fn time_range(tl: &syn::ExprForLoop) -> syn::Result<(Expr, Expr, bool, Option<Ident>)> {
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

pub(super) fn check_no_early_exit(pre: &[Stmt], post: &[Stmt]) -> syn::Result<()> {
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
