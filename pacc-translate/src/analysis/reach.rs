//! Read reach per kernel and array, and the halo it implies.

use crate::analysis::walk_stmts;
use crate::ir::{Access, Func, KExprKind};
use pacc_runtime::program::ReadDecl;

/// Per kernel the reads (min/max offset per axis per array), and the halo: the stated one
/// (checked to cover the reach) or the largest |offset|.
pub fn reach(f: &Func) -> syn::Result<(Vec<Vec<ReadDecl>>, usize)> {
    let mut all = Vec::new();
    let mut widest: Option<(usize, Access)> = None;
    for n in f.nests() {
        let mut reads: Vec<ReadDecl> = Vec::new();
        walk_stmts(&n.body, &mut |_| {}, &mut |e| {
            if let KExprKind::Read(a) = &e.kind {
                let r = match reads.iter_mut().find(|r| r.array == a.array) {
                    Some(r) => r,
                    None => {
                        reads.push(ReadDecl {
                            array: a.array,
                            lo: a.offsets.clone(),
                            hi: a.offsets.clone(),
                        });
                        reads.last_mut().expect("just pushed")
                    }
                };
                for (i, &o) in a.offsets.iter().enumerate() {
                    r.lo[i] = r.lo[i].min(o);
                    r.hi[i] = r.hi[i].max(o);
                }
                let m = a
                    .offsets
                    .iter()
                    .map(|o| o.unsigned_abs() as usize)
                    .max()
                    .unwrap_or(0);
                if widest.as_ref().map(|(w, _)| m > *w).unwrap_or(m > 0) {
                    widest = Some((m, a.clone()));
                }
            }
        });
        reads.sort_by_key(|r| r.array);
        all.push(reads);
    }
    let inferred = widest.as_ref().map(|w| w.0).unwrap_or(0);
    let halo = match f.directive.halo {
        Some((h, span)) if h < inferred => {
            let (w, acc) = widest.expect("inferred > 0");
            let text = acc
                .tokens
                .to_string()
                .replace(" [", "[")
                .replace("[ [", "[[")
                .replace("] ]", "]]");
            let mut e = syn::Error::new(
                span,
                format!(
                    "`halo = {h}` is smaller than the code's reach: `{text}` reads {w} point(s) away from the centre; use `halo = {w}` or leave the clause out to infer it"
                ),
            );
            e.combine(syn::Error::new_spanned(
                &acc.tokens,
                format!("this read reaches {w} point(s), more than the stated `halo = {h}`"),
            ));
            return Err(e);
        }
        Some((h, _)) => h,
        None => inferred,
    };
    Ok((all, halo))
}
