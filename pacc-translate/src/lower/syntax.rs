//! Small questions about Rust syntax that lowering asks everywhere.

use crate::ir::ArrayParam;
use syn::{Expr, Ident, Lit, Pat, Stmt};

pub(super) fn is_assign_op(op: &syn::BinOp) -> bool {
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

pub(super) fn ident_of(e: &Expr) -> Option<&Ident> {
    match strip(e) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    }
}

pub(super) fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

pub(super) fn int_lit(e: &Expr) -> Option<i64> {
    match strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn for_head(f: &syn::ExprForLoop) -> proc_macro2::TokenStream {
    let (a, b, c, d) = (&f.for_token, &f.pat, &f.in_token, &f.expr);
    quote::quote!(#a #b #c #d)
}

pub(super) fn collect_pat_idents(p: &Pat, out: &mut Vec<String>) {
    match p {
        Pat::Ident(pi) => out.push(pi.ident.to_string()),
        Pat::Type(pt) => collect_pat_idents(&pt.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| collect_pat_idents(e, out)),
        _ => {}
    }
}

pub(super) fn is_swap(f: &Expr) -> bool {
    let Expr::Path(p) = strip(f) else {
        return false;
    };
    let segs = crate::parse::path_names(&p.path);
    matches!(
        segs.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .as_slice(),
        ["swap"] | ["mem", "swap"] | ["std", "mem", "swap"] | ["core", "mem", "swap"]
    )
}

/// The loops of the perfect nest `f` begins, outermost first: each loop's body is the next
/// loop alone, the last one's is not.
pub(super) fn perfect_loops(f: &syn::ExprForLoop) -> Vec<syn::ExprForLoop> {
    let mut loops = vec![f.clone()];
    while let [Stmt::Expr(Expr::ForLoop(inner), _)] = loops[loops.len() - 1].body.stmts.as_slice() {
        let inner = inner.clone();
        loops.push(inner);
    }
    loops
}

/// The full-rank index of `ix` when it is an access of a grid (`u[[a, b]]`).
pub(super) fn grid_index<'a>(
    ix: &'a syn::ExprIndex,
    grids: &[ArrayParam],
    ndim: usize,
) -> Option<&'a syn::ExprArray> {
    let id = ident_of(&ix.expr)?;
    match strip(&ix.index) {
        Expr::Array(a) if a.elems.len() == ndim && grids.iter().any(|g| g.name == *id) => Some(a),
        _ => None,
    }
}
