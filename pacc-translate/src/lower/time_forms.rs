//! Other spellings of the time loop and its steps, read as the forms lowering takes: a `while`
//! loop over a counter is the `for` it counts, and an `if` on the time variable around loop
//! nests is a condition each nest's kernel tests.

use super::context::err;
use super::syntax::{ident_of, int_lit, mentions, strip};
use quote::ToTokens;
use syn::{Expr, Stmt};

const WHILE_FORM: &str = "pacc reads a `while` time loop only as a counter, `let mut t = a; while t < b { ..; t += 1; }` (nothing else assigns `t`, nothing after the loop reads it); otherwise write it `for t in a..b { .. }`";

/// The body's statements with `let mut t = a; .. while t < b { body; t += 1; }` rewritten as
/// `.. for t in a..b { body }`, when the body has no top-level `for` and has a `while`; `None`
/// when there is nothing to rewrite.
pub(super) fn while_as_for(item: &syn::ItemFn) -> syn::Result<Option<Vec<Stmt>>> {
    let stmts = &item.block.stmts;
    if stmts
        .iter()
        .any(|s| matches!(s, Stmt::Expr(Expr::ForLoop(_), _)))
    {
        return Ok(None);
    }
    let Some(wi) = stmts
        .iter()
        .position(|s| matches!(s, Stmt::Expr(Expr::While(_), _)))
    else {
        return Ok(None);
    };
    let Stmt::Expr(Expr::While(w), _) = &stmts[wi] else {
        return Ok(None);
    };
    let bad = |at: &dyn ToTokens| err(at, WHILE_FORM);
    // `t < b` or `t <= b`.
    let Expr::Binary(cond) = strip(&w.cond) else {
        return Err(bad(&w.cond));
    };
    let inclusive = match cond.op {
        syn::BinOp::Lt(_) => false,
        syn::BinOp::Le(_) => true,
        _ => return Err(bad(&w.cond)),
    };
    let Some(t) = ident_of(&cond.left).cloned() else {
        return Err(bad(&cond.left));
    };
    let name = t.to_string();
    if mentions(cond.right.to_token_stream(), &name) {
        return Err(bad(&cond.right));
    }
    if let Some(l) = &w.label {
        return Err(err(l, "labels on the time loop are not supported"));
    }
    // The counter's `let mut t = a;`, the last binding of `t` before the loop.
    let li = stmts[..wi].iter().rposition(|s| match s {
        Stmt::Local(l) => binds(&l.pat, &name),
        _ => false,
    });
    let Some(li) = li else {
        return Err(err(
            &t,
            format!(
                "`{name}` is not bound by a `let mut {name} = ..;` before the loop; {WHILE_FORM}"
            ),
        ));
    };
    let Stmt::Local(l) = &stmts[li] else {
        return Ok(None);
    };
    let (mutable, ty) = match &l.pat {
        syn::Pat::Ident(pi) => (pi.mutability.is_some(), None),
        syn::Pat::Type(pt) => (
            matches!(&*pt.pat, syn::Pat::Ident(pi) if pi.mutability.is_some()),
            Some(&*pt.ty),
        ),
        _ => (false, None),
    };
    let init = match &l.init {
        Some(i) if mutable && i.diverge.is_none() => &*i.expr,
        _ => return Err(err(l, WHILE_FORM)),
    };
    // The body ends with `t += 1;`, and nothing else assigns `t`.
    let body = &w.body.stmts;
    let counts = matches!(body.last(), Some(Stmt::Expr(Expr::Binary(b), _))
        if matches!(b.op, syn::BinOp::AddAssign(_))
            && ident_of(&b.left).is_some_and(|i| *i == name)
            && int_lit(&b.right) == Some(1));
    if !counts {
        return Err(err(
            &w.body,
            format!("the loop does not end with `{name} += 1;`; {WHILE_FORM}"),
        ));
    }
    let steps = &body[..body.len() - 1];
    if let Some(a) = steps.iter().find_map(|s| assigns(s, &name)) {
        return Err(err(
            a,
            format!("`{name}` is assigned inside the loop; {WHILE_FORM}"),
        ));
    }
    // What reads `t` between its `let` and the loop, or after the loop, sees a counter the
    // `for` does not have.
    let outside = stmts[li + 1..wi].iter().chain(&stmts[wi + 1..]);
    if let Some(s) = outside
        .into_iter()
        .find(|s| mentions(s.to_token_stream(), &name))
    {
        return Err(err(
            s,
            format!("`{name}` is used outside the loop; {WHILE_FORM}"),
        ));
    }
    let end = &cond.right;
    let start: Expr = match ty {
        Some(ty) => syn::parse_quote!({ let __pacc_t0: #ty = #init; __pacc_t0 }),
        None => init.clone(),
    };
    let range: Expr = if inclusive {
        syn::parse_quote!(#start..=#end)
    } else {
        syn::parse_quote!(#start..#end)
    };
    let for_loop: Expr = syn::parse_quote!(for #t in #range { #(#steps)* });
    let mut out: Vec<Stmt> = Vec::new();
    out.extend(stmts[..li].iter().cloned());
    out.extend(stmts[li + 1..wi].iter().cloned());
    out.push(Stmt::Expr(for_loop, None));
    out.extend(stmts[wi + 1..].iter().cloned());
    Ok(Some(out))
}

fn binds(p: &syn::Pat, name: &str) -> bool {
    let mut names = Vec::new();
    super::syntax::collect_pat_idents(p, &mut names);
    names.iter().any(|n| n == name)
}

/// An assignment to `name` anywhere in `s`.
fn assigns(s: &Stmt, name: &str) -> Option<proc_macro2::TokenStream> {
    struct V<'n>(&'n str, Option<proc_macro2::TokenStream>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if ident_of(&a.left).is_some_and(|i| *i == self.0) {
                self.1.get_or_insert(a.to_token_stream());
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            if super::syntax::is_assign_op(&b.op) && ident_of(&b.left).is_some_and(|i| *i == self.0)
            {
                self.1.get_or_insert(b.to_token_stream());
            }
            syn::visit::visit_expr_binary(self, b);
        }
    }
    let mut v = V(name, None);
    syn::visit::Visit::visit_stmt(&mut v, s);
    v.1
}

/// `if c { nests } else { nests }` in the time loop, `c` depending only on the time variable
/// and values known before the loop: each nest with its body wrapped in `if c { .. }` (the
/// `else` branch's in `if !(c) { .. }`). A nest whose condition is false writes nothing, as
/// the serial loop, which skips it.
pub(super) fn guarded_nests(i: &syn::ExprIf) -> syn::Result<Vec<Stmt>> {
    const ONLY_NESTS: &str = "an `if` in the time loop may hold only loop nests (pacc tests its condition in each nest's kernel); move swaps and other statements out of it, or test the condition inside the nest";
    let cond = &*i.cond;
    let mut out = Vec::new();
    let mut branch = |stmts: &[Stmt], c: Expr| -> syn::Result<()> {
        for s in stmts {
            let Stmt::Expr(Expr::ForLoop(f), semi) = s else {
                return Err(err(s, ONLY_NESTS));
            };
            let mut f = f.clone();
            guard_innermost(&mut f, &c);
            out.push(Stmt::Expr(Expr::ForLoop(f), *semi));
        }
        Ok(())
    };
    branch(&i.then_branch.stmts, syn::parse_quote!(#cond))?;
    match &i.else_branch {
        None => {}
        Some((_, e)) => match &**e {
            Expr::Block(b) => branch(&b.block.stmts, syn::parse_quote!(!(#cond)))?,
            other => {
                return Err(err(
                    other,
                    format!("`else if` around loop nests is not supported; {ONLY_NESTS}"),
                ))
            }
        },
    }
    Ok(out)
}

/// Wraps the body of the innermost loop of a perfect nest (as far as it is one) in `if c`.
fn guard_innermost(f: &mut syn::ExprForLoop, c: &Expr) {
    if let [Stmt::Expr(Expr::ForLoop(inner), _)] = f.body.stmts.as_mut_slice() {
        return guard_innermost(inner, c);
    }
    let stmts = &f.body.stmts;
    f.body.stmts = vec![Stmt::Expr(syn::parse_quote!(if #c { #(#stmts)* }), None)];
}
