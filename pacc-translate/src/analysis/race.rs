//! Races: a nest that writes an array may read it only at the centre point, or at an offset
//! that leaves the nest's range (a boundary row copying its neighbour row).
//!
//! The message names what the loop is. A read behind the point in the serial visiting order
//! (`u[[y - 1, x]]` while writing `u[[y, x]]`) sees a value the same sweep already updated: an
//! in-place (Gauss-Seidel) update or a recurrence along an axis, whose result depends on the
//! order; a second array and a swap would turn it into Jacobi, a different algorithm, so that is
//! not offered. A read only ahead of the point sees the value from before the sweep, which a
//! second array reproduces exactly, so there the swap is the equivalent form.

use crate::analysis::walk_stmts;
use crate::ir::{Access, Func, KExprKind, KStmt};
use crate::parse::args::push;
use pacc_runtime::program::AxisRange;

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
                if written.contains(&a.array)
                    && a.offsets.iter().any(|&o| o != 0)
                    && !clear_of_the_range(&n.ranges, &a.offsets)
                {
                    reads.push(a.clone());
                }
            }
        });
        let vars: Vec<String> = n.vars.iter().map(|v| v.to_string()).collect();
        // One error per array, at its first read behind the point (else its first read).
        let mut arrays: Vec<usize> = reads.iter().map(|r| r.array).collect();
        arrays.sort_unstable();
        arrays.dedup();
        for a in arrays {
            let Some(first) = reads.iter().find(|r| r.array == a) else {
                continue;
            };
            let behind = reads.iter().find(|r| r.array == a && is_behind(&r.offsets));
            let name = &f.arrays[a].name;
            let (r, msg) = match behind {
                Some(r) => (r, in_place_message(f, r, &vars)),
                None => (
                    first,
                    format!(
                        "`{name}` is written in this loop nest and read here ahead of the point, where the serial loop still sees the value from before the sweep; pacc runs the points of a nest in parallel, so another point may already have overwritten it. Reading the old values gives the serial result: write the new values into another array and `std::mem::swap` the two after the nest"
                    ),
                ),
            };
            push(&mut errors, syn::Error::new_spanned(&r.tokens, msg));
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether a read at `offsets` from every point of `ranges` stays clear of all of them: along
/// some axis the range has a width fixed at compile time (both bounds on one base, a boundary
/// row `for x { b[[0, x]] = b[[1, x]] }` has width 1) no larger than the offset. Then no point
/// reads what another writes, and the serial order does not matter.
fn clear_of_the_range(ranges: &[AxisRange], offsets: &[i64]) -> bool {
    ranges.iter().zip(offsets).any(|(r, &o)| {
        r.lo.base == r.hi.base && o != 0 && o.unsigned_abs() >= r.hi.offset.abs_diff(r.lo.offset)
    })
}

/// Whether the point at `offsets` from the current one comes earlier in the serial loop's
/// visiting order (axis 0 outermost, every axis ascending): the first non-zero offset is
/// negative.
fn is_behind(offsets: &[i64]) -> bool {
    offsets.iter().find(|&&o| o != 0).is_some_and(|&o| o < 0)
}

/// The refusal of an in-place update or recurrence: what the loop is, why pacc cannot run it,
/// and that the parallel formulations are other algorithms.
fn in_place_message(f: &Func, first: &Access, vars: &[String]) -> String {
    let name = &f.arrays[first.array].name;
    let idx: Vec<String> = vars
        .iter()
        .zip(&first.offsets)
        .map(|(v, &o)| match o {
            0 => v.clone(),
            o if o < 0 => format!("{v} - {}", -o),
            o => format!("{v} + {o}"),
        })
        .collect();
    let at = format!("{name}[[{}]]", idx.join(", "));
    format!(
        "this loop nest writes `{name}` and reads `{at}`, a point the same sweep has already updated: each point reads new values, so the result depends on the order the points are visited. That is an in-place (Gauss-Seidel-style) update or a recurrence along an axis (a prefix sum, a tridiagonal sweep), not a parallel stencil, and pacc runs the points of a nest in parallel. Writing into a second array and swapping would not be the same loop: it computes a Jacobi iteration, a different algorithm (other results, slower convergence); a Jacobi or red-black formulation is a change of algorithm to choose deliberately, and pacc translates the Jacobi form"
    )
}
