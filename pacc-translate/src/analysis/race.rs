//! Races: a nest that writes an array may read it only at the centre point.

use crate::analysis::{walk_expr, walk_stmts};
use crate::ir::{Func, KExprKind, KStmt};
use crate::parse::args::push;

pub fn check(f: &Func) -> syn::Result<()> {
    let mut errors = None;
    for n in f.nests() {
        let mut written = Vec::new();
        walk_stmts(
            &n.body,
            &mut |s| {
                if let KStmt::Write { access, .. } = s {
                    written.push(access.array);
                }
            },
            &mut |_| {},
        );
        let mut reads = Vec::new();
        walk_stmts(&n.body, &mut |_| {}, &mut |e| {
            if let KExprKind::Read(a) = &e.kind {
                reads.push(a.clone());
            }
        });
        for r in reads {
            if written.contains(&r.array) && r.offsets.iter().any(|&o| o != 0) {
                let name = &f.arrays[r.array].name;
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        &r.tokens,
                        format!(
                            "`{name}` is written in this loop nest, so reading it at an offset is a race once the nest runs in parallel; read `{name}` only at the centre point here, or write the result to another array and `std::mem::swap` them after the nest"
                        ),
                    ),
                );
            }
        }
    }
    let _ = walk_expr;
    match errors {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
