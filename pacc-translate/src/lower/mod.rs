//! Lowering: the function body (syn) -> the stencil IR. Every unsupported construct is an
//! error at that construct saying what is supported.
//!
//! [`lower`] checks the function's outline (`outline.rs`), binds the variables known before the
//! time loop (`pre_loop.rs`) and lowers the time loop's body (`step.rs`): its loop nests
//! (`nest.rs`), their statements (`stmt.rs`) and expressions (`expr.rs`), all sharing one
//! context (`context.rs`) and the syntax questions of [`syntax`].

mod clamp;
mod context;
mod expr;
mod nest;
mod outline;
mod pre_loop;
mod step;
mod stmt;
pub mod syntax;

use crate::ir::{Directive, Func, TimeLoop};
use context::{err, Ctx};
use outline::{check_no_early_exit, check_not_spatial, check_ranks, time_loop_index, time_range};
use pre_loop::pre_vars;
use syn::{Expr, Stmt};

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
