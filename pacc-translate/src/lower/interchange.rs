//! Loop interchange: a perfect nest written in another order than the arrays' layout
//! (`for x { for y { for z { a[[z, y, x]] = .. } } }`) runs in the layout's order.
//!
//! Why reordering is sound: the analyses accept a nest only if every write is at the nest's
//! own point (`stmt.rs`, write at an offset) and an array the nest writes is read only there
//! (`analysis/race.rs`), so no point reads what another point of the same nest writes: the
//! points are independent and any order leaves the same arrays, bit for bit. Only the order of
//! a sum's terms changes, and sums are already added plane by plane ("to rounding"); minima and
//! maxima do not depend on the order.

use super::syntax::strip;
use syn::visit::Visit;
use syn::{Expr, Ident};

/// The layout order of a nest whose loop variables (outermost first, as written) are `vars`:
/// `perm[axis]` is the written position of the loop that runs over `axis`. Taken from the
/// first array index (writes first) that names each loop variable once, one per position;
/// `None` when no index does, or when the written order is the layout's already. A nest whose
/// other indices disagree is refused later, by the index checks, as before.
pub(super) fn layout_order(
    vars: &[Ident],
    arrays: &[String],
    body: &[syn::Stmt],
) -> Option<Vec<usize>> {
    struct Finder<'a> {
        vars: &'a [Ident],
        arrays: &'a [String],
        write: Option<Vec<usize>>,
        read: Option<Vec<usize>>,
    }
    impl Finder<'_> {
        /// The permutation an index `a[[e0, .., en]]` implies, if it is one.
        fn perm(&self, e: &Expr) -> Option<Vec<usize>> {
            let Expr::Index(ix) = strip(e) else {
                return None;
            };
            let id = super::syntax::ident_of(&ix.expr)?;
            if !self.arrays.iter().any(|a| id == a) {
                return None;
            }
            let Expr::Array(idx) = strip(&ix.index) else {
                return None;
            };
            if idx.elems.len() != self.vars.len() {
                return None;
            }
            let mut perm = Vec::new();
            for e in &idx.elems {
                let v = index_var(e)?;
                let pos = self.vars.iter().position(|x| x == v)?;
                if perm.contains(&pos) {
                    return None;
                }
                perm.push(pos);
            }
            Some(perm)
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let target = match e {
                Expr::Assign(a) => Some(&*a.left),
                Expr::Binary(b) if super::syntax::is_assign_op(&b.op) => Some(&*b.left),
                _ => None,
            };
            if let Some(t) = target {
                if self.write.is_none() {
                    self.write = self.perm(t);
                }
            }
            if self.read.is_none() {
                self.read = self.perm(e);
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut f = Finder {
        vars,
        arrays,
        write: None,
        read: None,
    };
    for s in body {
        f.visit_stmt(s);
    }
    let perm = f.write.or(f.read)?;
    let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
    (!identity).then_some(perm)
}

/// The loop variable of an index `v`, `v + c`, `c + v` or `v - c`.
fn index_var(e: &Expr) -> Option<&Ident> {
    use super::syntax::{ident_of, int_lit};
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
            if int_lit(&b.right).is_some() {
                ident_of(&b.left)
            } else if int_lit(&b.left).is_some() && matches!(b.op, syn::BinOp::Add(_)) {
                ident_of(&b.right)
            } else {
                None
            }
        }
        x => ident_of(x),
    }
}

/// The note `pacc plan` and the translation summary print for a reordered nest.
pub fn note(nest: usize, written: &[Ident], layout: &[Ident], sums: bool) -> String {
    let names = |v: &[Ident]| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut s = format!(
        "nest {nest}: loops reordered {} -> {} to follow the array layout",
        names(written),
        names(layout)
    );
    if sums {
        s.push_str(" (its sums add their terms in the new order: equal to the serial sums to rounding, as every sum is)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(vars: &[&str], body: &str) -> Option<Vec<usize>> {
        let vars: Vec<Ident> = vars
            .iter()
            .map(|v| Ident::new(v, proc_macro2::Span::call_site()))
            .collect();
        let block: syn::Block = syn::parse_str(&format!("{{ {body} }}")).unwrap();
        layout_order(&vars, &["a".into(), "b".into()], &block.stmts)
    }

    #[test]
    fn finds_the_layout_order() {
        assert_eq!(
            order(&["x", "y", "z"], "a[[z, y, x]] = b[[z + 1, y, x]];"),
            Some(vec![2, 1, 0])
        );
        assert_eq!(order(&["y", "x"], "a[[x, y]] += 1.0;"), Some(vec![1, 0]));
        // The write decides, before any read.
        assert_eq!(
            order(&["x", "z", "y"], "let s = b[[x, y, z]]; a[[z, y, x]] = s;"),
            Some(vec![1, 2, 0])
        );
        // Only reads (a reduction): the first read.
        assert_eq!(order(&["x", "y"], "s += b[[y - 1, x]];"), Some(vec![1, 0]));
    }

    #[test]
    fn leaves_other_nests_alone() {
        assert_eq!(order(&["z", "y", "x"], "a[[z, y, x]] = 1.0;"), None);
        // No index names each variable once: left to the index checks.
        assert_eq!(order(&["y", "x"], "a[[y, y]] = 1.0;"), None);
        assert_eq!(order(&["y", "x"], "c[[x, y]] = 1.0;"), None);
    }
}
