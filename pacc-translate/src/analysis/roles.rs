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

/// Each array's role: `inout` when the kernels write it (directly or through a swap), else
/// `input`, unless the directive states otherwise (checked).
pub fn roles(f: &Func) -> syn::Result<Vec<Role>> {
    let (written, first) = first_accesses(f);
    let group_written = through_swaps(f, &written);
    let mut roles: Vec<Role> = group_written
        .iter()
        .map(|&w| if w { Role::InOut } else { Role::Input })
        .collect();
    let mut errors = None;
    stated_roles(f, &written, &group_written, &first, &mut roles, &mut errors);
    swapped_alike(f, &roles, &mut errors);
    match errors {
        Some(e) => Err(e),
        None => Ok(roles),
    }
}

/// Per array: whether a kernel or point statement writes it, and whether a step first reads or
/// first writes it.
fn first_accesses(f: &Func) -> (Vec<bool>, Vec<First>) {
    let n = f.arrays.len();
    let mut written = vec![false; n];
    let mut first = vec![First::None; n];
    for item in &f.time.items {
        let order = match item {
            StepItem::Nest(nest) => nest_order(&nest.body),
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
                let mut order: Vec<(usize, bool)> = reads.into_iter().map(|r| (r, false)).collect();
                order.push((p.array, true));
                order
            }
            _ => continue,
        };
        for (a, w) in order {
            if w {
                written[a] = true;
            }
            if first[a] == First::None {
                first[a] = if w { First::Write } else { First::Read };
            }
        }
    }
    (written, first)
}

/// The array accesses of a loop nest's body in execution order: (array, is a write).
fn nest_order(body: &[KStmt]) -> Vec<(usize, bool)> {
    let mut order: Vec<(usize, bool)> = Vec::new();
    walk_stmts(
        body,
        &mut |s| {
            // Reads of the statement's value come before its write.
            let e = match s {
                KStmt::Let { init, .. } => Some(init),
                KStmt::Assign { value, .. } | KStmt::Reduce { value, .. } => Some(value),
                KStmt::Write { value, .. } => Some(value),
                KStmt::If { cond, .. } => Some(cond),
            };
            if let Some(e) = e {
                walk_expr(e, &mut |x| {
                    if let KExprKind::Read(a) = &x.kind {
                        order.push((a.array, false))
                    }
                });
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
    order
}

/// Per array: whether any array of its swap group is written (a swap exchanges buffers, so
/// all of them get written).
fn through_swaps(f: &Func, written: &[bool]) -> Vec<bool> {
    let n = f.arrays.len();
    let mut group: Vec<usize> = (0..n).collect();
    fn find(g: &[usize], i: usize) -> usize {
        let mut i = i;
        while g[i] != i {
            i = g[i];
        }
        i
    }
    for item in &f.time.items {
        if let StepItem::Swap { a, b, .. } = item {
            let (ra, rb) = (find(&group, *a), find(&group, *b));
            group[ra] = rb;
        }
    }
    let mut gw = vec![false; n];
    for (i, w) in written.iter().enumerate() {
        if *w {
            gw[find(&group, i)] = true;
        }
    }
    (0..n).map(|i| gw[find(&group, i)]).collect()
}

/// The directive's `input(..)`, `inout(..)` and `scratch(..)`, checked against the accesses.
fn stated_roles(
    f: &Func,
    written: &[bool],
    group_written: &[bool],
    first: &[First],
    roles: &mut [Role],
    errors: &mut Option<syn::Error>,
) {
    let d = &f.directive;
    let mut stated: Vec<Option<(&'static str, &syn::Ident)>> = vec![None; f.arrays.len()];
    let names: Vec<String> = f.arrays.iter().map(|a| a.name.to_string()).collect();
    for (clause, list) in [
        ("input", &d.input),
        ("inout", &d.inout),
        ("scratch", &d.scratch),
    ] {
        for id in list {
            let Some(i) = names.iter().position(|n| id == n) else {
                push(
                    errors,
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
                    errors,
                    syn::Error::new_spanned(id, format!("`{id}` is already stated as `{c}`")),
                );
                continue;
            }
            stated[i] = Some((clause, id));
            let w = group_written[i];
            match clause {
                "input" if w => push(
                    errors,
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
                            errors,
                            syn::Error::new_spanned(id, format!("`{id}` is never written, so it cannot be `scratch`; scratch arrays are written by the kernels and their final contents discarded")),
                        );
                    } else if first[i] == First::Read {
                        push(
                            errors,
                            syn::Error::new_spanned(id, format!("`{id}` cannot be `scratch`: each time step reads it before writing it, so its contents must be kept; state it `inout`")),
                        );
                    } else {
                        roles[i] = Role::Scratch;
                    }
                }
            }
        }
    }
}

/// Arrays that trade places must have the same role.
fn swapped_alike(f: &Func, roles: &[Role], errors: &mut Option<syn::Error>) {
    for item in &f.time.items {
        if let StepItem::Swap { a, b, stmt } = item {
            if roles[*a] != roles[*b] {
                push(
                    errors,
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
}
