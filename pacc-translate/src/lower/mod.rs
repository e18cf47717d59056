//! Lowering: the function body (syn) -> the stencil IR. Every unsupported construct is an
//! error at that construct saying what is supported.
//!
//! [`lower`] checks the function's outline (`outline.rs`), binds the variables known before the
//! time loop (`pre_loop.rs`) and lowers the time loop's body (`step.rs`): its loop nests
//! (`nest.rs`), their statements (`stmt.rs`) and expressions (`expr.rs`), all sharing one
//! context (`context.rs`) and the syntax questions of [`syntax`].

mod clamp;
mod context;
mod distribute;
mod expr;
mod forms;
mod inline;
pub mod interchange;
mod line;
mod nest;
mod outline;
mod pre_loop;
mod rank;
mod step;
mod stmt;
pub mod syntax;
mod time_forms;

use crate::ir::{Directive, Func, TimeLoop};
use context::{err, Ctx};
use outline::{check_no_early_exit, check_not_spatial, check_ranks, time_loop_index, time_range};
use pre_loop::pre_vars;
use syn::{Expr, Stmt};

/// Parses and lowers the annotated function.
pub fn lower(item: syn::ItemFn, directive: Directive) -> syn::Result<Func> {
    lower_with(item, directive, &[])
}

/// [`lower`], with the plain functions of the enclosing `#[pacc::stencils]` module in reach
/// as helpers (`inline.rs`).
pub fn lower_with(
    item: syn::ItemFn,
    directive: Directive,
    outer: &[syn::ItemFn],
) -> syn::Result<Func> {
    let (params, arrays) = crate::parse::sig::params(&item.sig)?;
    let helpers = inline::Helpers::new(&item, outer);
    // A `while` time loop in the counter form is read as the `for` it is.
    let mut work = item.clone();
    if let Some(stmts) = time_forms::while_as_for(&item)? {
        work.block.stmts = stmts;
    }
    let stmts = &work.block.stmts;
    let ti = time_loop_index(&work)?;
    let tl = match &stmts[ti] {
        Stmt::Expr(Expr::ForLoop(tl), _) => tl,
        _ => {
            return Err(err(
                &item.sig.ident,
                "internal error locating the time loop",
            ))
        }
    };
    // 1D arrays: series beside the grids, or the grids of a 1D program seen as 2D (`line.rs`).
    let (params, arrays, series) = line::series(params, arrays, tl);
    let ndim = check_ranks(&item.sig, &arrays)?;
    check_not_spatial(&stmts[ti], &arrays)?;
    let columns;
    let tl = if ndim == 1 {
        line::check_one_index(tl, &arrays)?;
        columns = line::as_columns(tl, &arrays, &series);
        &columns
    } else if !series.is_empty() {
        columns = line::series_indices(tl, &series);
        &columns
    } else {
        tl
    };
    // Nests of fewer loops than axes, as full-rank ones (`rank.rs`).
    let full;
    let rewritten = match ndim {
        1 => None,
        _ => rank::full_rank(tl, &arrays, ndim)?,
    };
    let tl = match rewritten {
        Some(t) => {
            full = t;
            &full
        }
        _ => tl,
    };
    let ndim = ndim.max(2);
    let mut pre_stmts: Vec<Stmt> = stmts[..ti].iter().map(quiet_helper).collect();
    let post_stmts: Vec<Stmt> = stmts[ti + 1..].iter().map(quiet_helper).collect();
    check_no_early_exit(&pre_stmts, &post_stmts)?;
    let mut pre = pre_vars(&item, &params, &arrays, &pre_stmts);
    let (start, end, inclusive, var) = time_range(tl)?;
    let time_name = var.as_ref().map(|v| v.to_string());
    let expanded = inline::expand(&item, &helpers, &pre, time_name.as_deref(), &tl.body.stmts)?;
    for s in &expanded.hoisted {
        if let Stmt::Local(l) = s {
            pre_loop::bind_local(l, &arrays, &mut pre);
        }
    }
    pre_stmts.extend(expanded.hoisted);

    let mut cx = Ctx {
        arrays: &arrays,
        ndim,
        pre,
        time_var: var.as_ref().map(|v| v.to_string()),
        scalars: Vec::new(),
        slices: Vec::new(),
        reductions: Vec::new(),
        bound_exprs: Vec::new(),
        bound_reads: Vec::new(),
        untyped: Vec::new(),
    };
    let items = cx.step(&expanded.body)?;
    // A reduction changes during the time loop; a nest's range is fixed before it.
    if let Some(id) =
        (cx.bound_reads.iter()).find(|id| cx.reductions.iter().any(|r| r.name == **id))
    {
        return Err(err(id, format!("this loop bound reads `{id}`, a reduction the time loop accumulates; a nest's ranges must be fixed before the time loop (copy the value into a local before it)")));
    }
    if !cx.untyped.is_empty() {
        return Err(forms::untyped_error(&cx, &arrays, &items));
    }

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
        bounds: cx.bound_exprs,
        directive,
        series,
    })
}

/// A function item before or after the time loop, as `run` copies it: inlined into the kernels,
/// it may have no call left there, which must not warn in the user's crate.
fn quiet_helper(s: &Stmt) -> Stmt {
    let mut s = s.clone();
    if let Stmt::Item(syn::Item::Fn(f)) = &mut s {
        f.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    }
    s
}
