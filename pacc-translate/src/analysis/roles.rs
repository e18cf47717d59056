//! Array roles: inferred from writes (through swaps), checked against stated clauses.

use crate::analysis::{walk_expr, walk_stmts};
use crate::ir::{Func, KExprKind, KStmt, StepItem};
use crate::parse::args::push;
use pacc_runtime::program::Role;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum First {
    None,
    Read,
    Write,
}

pub fn roles(f: &Func) -> syn::Result<Vec<Role>> {
    let n = f.arrays.len();
    let mut errors = None;
    // Written arrays, closed over swaps (a swap exchanges buffers, so both get written).
    let mut written = vec![false; n];
    let mut first = vec![First::None; n];
    for item in &f.time.items {
        match item {
            StepItem::Nest(nest) => {
                let mut order: Vec<(usize, bool)> = Vec::new();
                walk_stmts(
                    &nest.body,
                    &mut |s| {
                        // Reads of the statement's value come before its write.
                        let mut reads = Vec::new();
                        let e = match s {
                            KStmt::Let { init, .. } => Some(init),
                            KStmt::Assign { value, .. } | KStmt::Reduce { value, .. } => {
                                Some(value)
                            }
                            KStmt::Write { value, .. } => Some(value),
                            KStmt::If { cond, .. } => Some(cond),
                        };
                        if let Some(e) = e {
                            walk_expr(e, &mut |x| {
                                if let KExprKind::Read(a) = &x.kind {
                                    reads.push(a.array)
                                }
                            });
                        }
                        for r in reads {
                            order.push((r, false));
                        }
                        if let KStmt::Write { access, op, .. } = s {
                            if op.is_some() {
                                order.push((access.array, false));
                            }
                            order.push((access.array, true));
                        }
                    },
                    &mut |_| {},
                );
                for (a, w) in order {
                    if w {
                        written[a] = true;
                    }
                    if first[a] == First::None {
                        first[a] = if w { First::Write } else { First::Read };
                    }
                }
            }
            StepItem::Point(p) => {
                let mut reads = Vec::new();
                walk_expr(&p.value, &mut |x| {
                    if let KExprKind::PointRead(a) = x.kind {
                        reads.push(a)
                    }
                });
                if p.op.is_some() {
                    reads.push(p.array);
                }
                for r in reads {
                    if first[r] == First::None {
                        first[r] = First::Read;
                    }
                }
                written[p.array] = true;
                if first[p.array] == First::None {
                    first[p.array] = First::Write;
                }
            }
            _ => {}
        }
    }
    // Swap groups.
    let mut group: Vec<usize> = (0..n).collect();
    fn find(g: &mut [usize], i: usize) -> usize {
        let mut i = i;
        while g[i] != i {
            i = g[i];
        }
        i
    }
    for item in &f.time.items {
        if let StepItem::Swap { a, b, .. } = item {
            let (ra, rb) = (find(&mut group, *a), find(&mut group, *b));
            group[ra] = rb;
        }
    }
    let mut gw = vec![false; n];
    for (i, w) in written.iter().enumerate() {
        if *w {
            let r = find(&mut group, i);
            gw[r] = true;
        }
    }
    let mut roles: Vec<Role> = (0..n)
        .map(|i| {
            if gw[find(&mut group, i)] {
                Role::InOut
            } else {
                Role::Input
            }
        })
        .collect();

    // Stated roles.
    let d = &f.directive;
    let mut stated: Vec<Option<(&'static str, &syn::Ident)>> = vec![None; n];
    let names: Vec<String> = f.arrays.iter().map(|a| a.name.to_string()).collect();
    for (clause, list) in [
        ("input", &d.input),
        ("inout", &d.inout),
        ("scratch", &d.scratch),
    ] {
        for id in list {
            let Some(i) = names.iter().position(|n| id == n) else {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        id,
                        format!(
                            "`{id}` is not an array parameter of `{}`; `{clause}(..)` names array parameters: {}",
                            f.name,
                            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                        ),
                    ),
                );
                continue;
            };
            if let Some((c, _)) = stated[i] {
                push(
                    &mut errors,
                    syn::Error::new_spanned(id, format!("`{id}` is already stated as `{c}`")),
                );
                continue;
            }
            stated[i] = Some((clause, id));
            let w = gw[find(&mut group, i)];
            match clause {
                "input" if w => push(
                    &mut errors,
                    syn::Error::new_spanned(
                        id,
                        format!("`{id}` is written by the kernels{}, so it cannot be `input`; state it `inout` (the caller gets the result) or `scratch` (the caller does not need it)", if written[i] { "" } else { " (through a swap)" }),
                    ),
                ),
                "input" => roles[i] = Role::Input,
                "inout" => roles[i] = Role::InOut,
                _ => {
                    if !w {
                        push(
                            &mut errors,
                            syn::Error::new_spanned(id, format!("`{id}` is never written, so it cannot be `scratch`; scratch arrays are written by the kernels and their final contents discarded")),
                        );
                    } else if first[i] == First::Read {
                        push(
                            &mut errors,
                            syn::Error::new_spanned(id, format!("`{id}` cannot be `scratch`: each time step reads it before writing it, so its contents must be kept; state it `inout`")),
                        );
                    } else {
                        roles[i] = Role::Scratch;
                    }
                }
            }
        }
    }
    for item in &f.time.items {
        if let StepItem::Swap { a, b, stmt } = item {
            if roles[*a] != roles[*b] {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        stmt,
                        format!(
                            "swapped arrays must have the same role, but `{}` is {:?} and `{}` is {:?}; state both the same way",
                            f.arrays[*a].name, roles[*a], f.arrays[*b].name, roles[*b]
                        ),
                    ),
                );
            }
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(roles),
    }
}
