//! Helper functions (docs/internals.md §1, "Helper functions"): a call in the time loop
//! (`single_iteration(&mut out, &temp, rows, cap);`) or in a kernel (`let f = flux(a, b, dx);`)
//! is replaced by the helper's body before lowering, so the kernels, the CPU closures (which
//! reuse the body's tokens) and the analyses all see plain time-loop code. The serial original
//! keeps calling the helper as written.
//!
//! A helper's body is renamed as it is inlined: each parameter and local it binds gets a name
//! no identifier of the annotated function uses (`y`, or `y_1` when taken), so neither side can
//! capture the other's names; its parameters stand for the caller's arguments. Kernel helpers
//! take scalars and become `let p: T = arg;` statements, the body, and `let r: R = tail;`
//! before the statement that called them: exactly what Rust evaluates, in f32/f64 as declared.

use super::context::err;
use super::syntax::{ident_of, is_swap, strip};
use crate::ir::{ParamKind, Passing, PreVar};
use crate::parse::args::push;
use crate::parse::sig::scalar_ty;
use proc_macro2::Span;
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Pat, Stmt};

/// How to make a helper's body visible, for the messages about calls pacc cannot inline.
pub(super) fn visibility_hint(name: &str, caller: &Ident) -> String {
    format!(
        "pacc inlines a helper only when it can see its body: define `fn {name}` inside `fn {caller}`'s body, or put both in an inline module with `#[pacc::stencils] mod m {{ fn {name}(..) {{ .. }} #[pacc::pipeline] fn {caller}(..) {{ .. }} }}` (a `#[pacc::pipeline]` macro sees only the function it annotates)"
    )
}

/// The helpers in reach of one annotated function, by name.
pub(super) struct Helpers {
    fns: HashMap<String, syn::ItemFn>,
}

impl Helpers {
    /// The plain functions of the enclosing `#[pacc::stencils]` module (`outer`) and those
    /// nested at the top level of the function's body or of its time loop's body; a nested one
    /// hides an outer one of the same name, as in Rust.
    pub(super) fn new(item: &syn::ItemFn, outer: &[syn::ItemFn]) -> Helpers {
        let mut fns = HashMap::new();
        for f in outer {
            fns.insert(f.sig.ident.to_string(), f.clone());
        }
        let mut nested = |stmts: &[Stmt]| {
            for s in stmts {
                if let Stmt::Item(syn::Item::Fn(f)) = s {
                    fns.insert(f.sig.ident.to_string(), f.clone());
                }
            }
        };
        nested(&item.block.stmts);
        for s in &item.block.stmts {
            if let Stmt::Expr(Expr::ForLoop(tl), _) = s {
                nested(&tl.body.stmts);
            }
        }
        Helpers { fns }
    }
}

/// The time loop's body with every helper call inlined, and the `let`s the helpers' bodies
/// bind, which run once before the time loop.
pub(super) struct Expanded {
    pub(super) body: Vec<Stmt>,
    pub(super) hoisted: Vec<Stmt>,
}

/// Inlines the helper calls of the time loop's `body`.
pub(super) fn expand(
    item: &syn::ItemFn,
    helpers: &Helpers,
    pre: &HashMap<String, PreVar>,
    time_var: Option<&str>,
    body: &[Stmt],
) -> syn::Result<Expanded> {
    // The caller's names, without its nested helpers' bodies: a helper's bindings keep their
    // names unless the caller uses them (or an earlier inlining took them). Helper names stay
    // taken, so no value shadows a function the copied code may still call.
    let mut taken: HashSet<String> = helpers.fns.keys().cloned().collect();
    let mut caller = item.clone();
    strip_helpers(&mut caller.block.stmts);
    for s in &mut caller.block.stmts {
        if let Stmt::Expr(Expr::ForLoop(tl), _) = s {
            strip_helpers(&mut tl.body.stmts);
        }
    }
    collect_idents(caller.to_token_stream(), &mut taken);
    let mut inl = Inliner {
        caller: &item.sig.ident,
        helpers,
        pre,
        time_var,
        taken,
        hoisted: Vec::new(),
        hoisted_names: HashSet::new(),
        stack: Vec::new(),
    };
    let mut errors = None;
    let mut out = Vec::new();
    for s in body {
        if matches!(s, Stmt::Item(syn::Item::Fn(_))) {
            continue; // a helper, visible through `helpers`
        }
        if let Err(e) = inl.step_stmt(s, &mut out) {
            push(&mut errors, e);
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(Expanded {
            body: out,
            hoisted: inl.hoisted,
        }),
    }
}

struct Inliner<'a> {
    caller: &'a Ident,
    helpers: &'a Helpers,
    pre: &'a HashMap<String, PreVar>,
    time_var: Option<&'a str>,
    /// Every identifier of the annotated function and every name made so far.
    taken: HashSet<String>,
    hoisted: Vec<Stmt>,
    /// Names the hoisted `let`s bind: values known before the time loop.
    hoisted_names: HashSet<String>,
    /// The helpers being inlined, outermost first (a call of one of them is recursion).
    stack: Vec<String>,
}

/// What a call's function path names: a helper, or something else.
enum Callee<'h> {
    Helper(&'h syn::ItemFn),
    Swap,
    /// `f32::max(a, b)`-style float functions, which kernels support.
    Float,
    Unknown(String),
}

impl<'a> Inliner<'a> {
    fn callee(&self, func: &Expr) -> Callee<'a> {
        if is_swap(func) {
            return Callee::Swap;
        }
        let Expr::Path(p) = strip(func) else {
            return Callee::Unknown(func.to_token_stream().to_string());
        };
        let segs = crate::parse::path_names(&p.path);
        let name = match segs.as_slice() {
            [n] => n,
            [s, n] if s == "self" => n,
            [t, _] if t == "f32" || t == "f64" => return Callee::Float,
            _ => return Callee::Unknown(segs.join("::")),
        };
        match self.helpers.fns.get(name) {
            Some(f) => Callee::Helper(f),
            None => Callee::Unknown(name.clone()),
        }
    }

    fn unknown(&self, at: impl ToTokens, name: &str, place: &str) -> syn::Error {
        err(
            at,
            format!(
                "cannot inline `{name}` {place}: {}",
                visibility_hint(name, self.caller)
            ),
        )
    }

    /// A name for a binding of `id`: its own unless taken, else `id_1`, `id_2`, ..
    fn fresh(&mut self, id: &Ident) -> Ident {
        let stem = id.to_string();
        let stem = stem.trim_start_matches("r#");
        let mut name = stem.to_string();
        let mut k = 1;
        while self.taken.contains(&name) || is_keyword(&name) {
            name = format!("{stem}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        Ident::new(&name, id.span())
    }

    fn enter(&mut self, f: &syn::ItemFn, at: &Expr) -> syn::Result<()> {
        let name = f.sig.ident.to_string();
        if self.stack.contains(&name) {
            let chain = [&self.stack[..], std::slice::from_ref(&name)].concat();
            return Err(err(
                at,
                format!(
                    "recursive helper: `{}` calls itself ({}); pacc inlines helpers, so a recursive one has no finite body; write the recursion as a loop in the time loop",
                    name,
                    chain.join(" -> ")
                ),
            ));
        }
        self.stack.push(name);
        Ok(())
    }

    /// One statement of the time loop (or of a time-loop helper's body, renamed), appended to
    /// `out` with its helper calls inlined.
    fn step_stmt(&mut self, s: &Stmt, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let e = match s {
            Stmt::Expr(e, _) => e,
            _ => {
                out.push(s.clone());
                return Ok(());
            }
        };
        match strip(e) {
            Expr::Call(c) => match self.callee(&c.func) {
                Callee::Helper(f) => self.step_call(f, c, out),
                Callee::Swap | Callee::Float => {
                    out.push(s.clone());
                    Ok(())
                }
                Callee::Unknown(n) => Err(self.unknown(&c.func, &n, "in the time loop")),
            },
            Expr::ForLoop(_) => {
                let mut s = s.clone();
                self.kernel_stmt_in_place(&mut s)?;
                out.push(s);
                Ok(())
            }
            Expr::If(i) => {
                if let Err(Why::Other(e)) = self.pre_loop(&i.cond) {
                    let msg = format!("the condition of an `if` in the time loop may depend only on the time variable and values known before the time loop ({e}); pacc tests it in the kernels of the nests it holds");
                    return Err(err(&i.cond, msg));
                }
                let mut errors = None;
                for n in super::time_forms::guarded_nests(i)? {
                    if let Err(e) = self.step_stmt(&n, out) {
                        push(&mut errors, e);
                    }
                }
                errors.map_or(Ok(()), Err)
            }
            other => {
                self.no_calls(other, "outside a loop nest, a helper is called as a statement of the time loop (`step(&mut a, &b, n);`)")?;
                out.push(s.clone());
                Ok(())
            }
        }
    }

    /// Refuses helper calls in `e` (a step-level expression other than a call statement).
    fn no_calls(&self, e: &Expr, why: &str) -> syn::Result<()> {
        struct Finder<'i, 'a> {
            inl: &'i Inliner<'a>,
            found: Option<syn::Error>,
            why: &'i str,
        }
        impl<'ast> syn::visit::Visit<'ast> for Finder<'_, '_> {
            fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
                match self.inl.callee(&c.func) {
                    Callee::Helper(f) => push(
                        &mut self.found,
                        err(
                            c,
                            format!("`{}` cannot be called here: {}", f.sig.ident, self.why),
                        ),
                    ),
                    Callee::Unknown(n) if !n.contains("::") => {
                        push(&mut self.found, self.inl.unknown(&c.func, &n, "here"))
                    }
                    _ => {}
                }
                syn::visit::visit_expr_call(self, c);
            }
        }
        let mut f = Finder {
            inl: self,
            found: None,
            why,
        };
        syn::visit::Visit::visit_expr(&mut f, e);
        f.found.map_or(Ok(()), Err)
    }

    /// `helper(args);` in the time loop: the helper's body, its parameters standing for the
    /// caller's arrays, slices and scalars, its `let`s moved before the time loop.
    fn step_call(
        &mut self,
        f: &syn::ItemFn,
        c: &syn::ExprCall,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        let name = f.sig.ident.to_string();
        let whole = Expr::Call(c.clone());
        if !matches!(&f.sig.output, syn::ReturnType::Default)
            && !matches!(&f.sig.output, syn::ReturnType::Type(_, t) if matches!(&**t, syn::Type::Tuple(tt) if tt.elems.is_empty()))
        {
            return Err(err(
                &f.sig.output,
                format!("`{name}` is called in the time loop of `{}`, where a helper's value would be dropped; a time-loop helper returns nothing and works on the arrays it is passed", self.caller),
            ));
        }
        let (params, _) = crate::parse::sig::params(&f.sig)?;
        if params.len() != c.args.len() {
            return Err(err(
                c,
                format!(
                    "`{name}` takes {} argument(s), this call passes {}",
                    params.len(),
                    c.args.len()
                ),
            ));
        }
        check_helper_swaps(f)?;
        let mut scope = HashMap::new();
        for (p, arg) in params.iter().zip(&c.args) {
            let sub = match p.kind {
                ParamKind::Array(_) => self.array_arg(arg, &name)?,
                ParamKind::Slice(_) => self.slice_arg(arg, &name)?,
                ParamKind::Scalar(t) => self.scalar_arg(arg, t)?,
                ParamKind::Other => {
                    return Err(err(
                        &p.name,
                        format!("`{name}` is inlined into the time loop, where a helper's parameters are arrays (`&mut Array2<f32>`, `&Array2<f32>`, `ArrayView2<f32>`, ..), slices (`&[f32]`) or scalars (f32, f64, integers, bool)"),
                    ))
                }
            };
            scope.insert(p.name.to_string(), sub);
        }
        self.enter(f, &whole)?;
        let body = self.renamed_body(f, scope)?;
        let mut errors = None;
        for s in &body {
            let r = match s {
                Stmt::Local(l) => self.hoist(l, &name),
                Stmt::Expr(Expr::Return(r), _) => Err(err(r, format!("`return` in `{name}`, which is inlined into the time loop; let the body end instead"))),
                s => self.step_stmt(s, out),
            };
            if let Err(e) = r {
                push(&mut errors, e);
            }
        }
        self.stack.pop();
        errors.map_or(Ok(()), Err)
    }

    /// The helper's body with its parameters replaced by `scope` and its bindings renamed.
    fn renamed_body(
        &mut self,
        f: &syn::ItemFn,
        scope: HashMap<String, Expr>,
    ) -> syn::Result<Vec<Stmt>> {
        let mut block = (*f.block).clone();
        let mut r = Renamer {
            inl: self,
            scopes: vec![scope],
            helper: f.sig.ident.to_string(),
            errors: None,
        };
        r.visit_block_mut(&mut block);
        match r.errors {
            Some(e) => Err(e),
            None => Ok(block.stmts),
        }
    }

    /// An array argument: one of the caller's arrays, however borrowed (`&mut out`, `&temp`,
    /// `out`, `out.view()`).
    fn array_arg(&self, arg: &Expr, helper: &str) -> syn::Result<Expr> {
        match ident_of(peel(arg)) {
            Some(id) if matches!(self.pre.get(&id.to_string()), Some(PreVar::Array(_))) => {
                Ok(path_expr(id))
            }
            _ => Err(err(
                arg,
                format!(
                    "pass `{helper}` one of `{}`'s array parameters (`&mut a`, `&b`, `a.view()`)",
                    self.caller
                ),
            )),
        }
    }

    fn slice_arg(&self, arg: &Expr, helper: &str) -> syn::Result<Expr> {
        match ident_of(peel(arg)) {
            Some(id) if matches!(self.pre.get(&id.to_string()), Some(PreVar::Slice(_))) => {
                Ok(path_expr(id))
            }
            _ => Err(err(
                arg,
                format!(
                    "pass `{helper}` one of `{}`'s slices (`&w`, `&w[..]`)",
                    self.caller
                ),
            )),
        }
    }

    /// A scalar argument: a name stands for itself; an expression of values known before the
    /// time loop is evaluated there once, in the parameter's type; one of the time variable is
    /// evaluated where the body uses it.
    fn scalar_arg(&mut self, arg: &Expr, ty: crate::ir::Ty) -> syn::Result<Expr> {
        if let Some(id) = ident_of(arg) {
            return Ok(path_expr(id));
        }
        match self.pre_loop(arg) {
            Ok(()) => {
                let tyi = Ident::new(ty.rust_name(), Span::call_site());
                let v = self.fresh(&Ident::new("arg", Span::call_site()));
                self.hoisted.push(syn::parse_quote!(let #v: #tyi = #arg;));
                self.hoisted_names.insert(v.to_string());
                Ok(path_expr(&v))
            }
            Err(Why::Time) => Ok(syn::parse_quote!((#arg))),
            Err(Why::Other(e)) => Err(e),
        }
    }

    fn is_array(&self, e: &Expr) -> bool {
        ident_of(e)
            .is_some_and(|id| matches!(self.pre.get(&id.to_string()), Some(PreVar::Array(_))))
    }

    /// Whether `e` depends only on values known before the time loop.
    fn pre_loop(&self, e: &Expr) -> Result<(), Why> {
        let mut why = None;
        let mut time = false;
        check_pre(e, &mut |x| match x {
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    let n = id.to_string();
                    if self.time_var == Some(n.as_str()) {
                        time = true;
                    } else if !self.hoisted_names.contains(&n) {
                        match self.pre.get(&n) {
                            Some(
                                PreVar::Scalar { mutable: false, .. }
                                | PreVar::Dim(_)
                                | PreVar::Array(_),
                            ) => {}
                            _ => {
                                why.get_or_insert(err(
                                    id,
                                    format!("`{id}` is not a value known before the time loop"),
                                ));
                            }
                        }
                    }
                }
            }
            Expr::Index(ix) => {
                why.get_or_insert(err(
                    ix,
                    "this reads an array's elements, which change from step to step",
                ));
            }
            Expr::Call(c) if !matches!(self.callee(&c.func), Callee::Float) => {
                why.get_or_insert(err(
                    c,
                    "a call here cannot be evaluated before the time loop",
                ));
            }
            Expr::MethodCall(m)
                if self.is_array(&m.receiver)
                    && !matches!(
                        m.method.to_string().as_str(),
                        "dim" | "shape" | "nrows" | "ncols" | "len_of" | "len"
                    ) =>
            {
                why.get_or_insert(err(
                    m,
                    "this reads an array's elements, which change from step to step",
                ));
            }
            _ => {}
        });
        match (why, time) {
            (Some(e), _) => Err(Why::Other(e)),
            (None, true) => Err(Why::Time),
            (None, false) => Ok(()),
        }
    }

    /// A `let` in a time-loop helper: moved before the time loop, which needs its value to
    /// depend only on values known there.
    fn hoist(&mut self, l: &syn::Local, helper: &str) -> syn::Result<()> {
        let Some(init) = &l.init else {
            return Err(err(l, format!("a `let` in `{helper}` (inlined into the time loop) must be initialised where declared")));
        };
        let reason = match self.pre_loop(&init.expr) {
            Ok(()) if init.diverge.is_none() => None,
            Ok(()) => Some("`let .. else` is not supported".to_string()),
            Err(Why::Time) => Some(format!(
                "it depends on the time variable `{}`",
                self.time_var.unwrap_or("t")
            )),
            Err(Why::Other(e)) => Some(e.to_string()),
        };
        if let Some(r) = reason {
            return Err(err(
                l,
                format!("cannot inline this `let` of `{helper}` into the time loop: {r}. pacc runs a time-loop helper's `let`s once, before the time loop, so they may depend only on values known there (parameters bound to such values, `a.dim()`, literals); compute a value that changes from step to step inside the loop nest instead"),
            ));
        }
        let mut names = Vec::new();
        super::syntax::collect_pat_idents(&l.pat, &mut names);
        self.hoisted_names.extend(names);
        self.hoisted.push(Stmt::Local(l.clone()));
        Ok(())
    }

    /// A loop nest's statement (or a kernel statement), its kernel helper calls inlined.
    fn kernel_stmt_in_place(&mut self, s: &mut Stmt) -> syn::Result<()> {
        if let Stmt::Expr(Expr::ForLoop(f), _) = s {
            let stmts = std::mem::take(&mut f.body.stmts);
            f.body.stmts = self.kernel_block(stmts)?;
        }
        Ok(())
    }

    /// Kernel statements with each helper call replaced by the helper's inlined statements
    /// before the statement, and its value's name in the call's place.
    fn kernel_block(&mut self, stmts: Vec<Stmt>) -> syn::Result<Vec<Stmt>> {
        let mut out = Vec::new();
        let mut errors = None;
        for s in stmts {
            if let Err(e) = self.kernel_stmt(s, &mut out) {
                push(&mut errors, e);
            }
        }
        errors.map_or(Ok(out), Err)
    }

    fn kernel_stmt(&mut self, mut s: Stmt, out: &mut Vec<Stmt>) -> syn::Result<()> {
        match &mut s {
            Stmt::Local(l) => {
                if let Some(init) = &mut l.init {
                    self.hoist_calls(&mut init.expr, out)?;
                }
            }
            Stmt::Expr(Expr::ForLoop(_), _) => self.kernel_stmt_in_place(&mut s)?,
            Stmt::Expr(Expr::If(i), _) => self.kernel_if(i, out)?,
            Stmt::Expr(Expr::Block(b), _) => {
                let stmts = std::mem::take(&mut b.block.stmts);
                b.block.stmts = self.kernel_block(stmts)?;
            }
            Stmt::Expr(e, _) => self.hoist_calls(e, out)?,
            _ => {}
        }
        out.push(s);
        Ok(())
    }

    /// An `if` statement: calls in its condition go before it, those in its branches stay in
    /// them (a branch that is not taken evaluates nothing).
    fn kernel_if(&mut self, i: &mut syn::ExprIf, out: &mut Vec<Stmt>) -> syn::Result<()> {
        self.hoist_calls(&mut i.cond, out)?;
        let stmts = std::mem::take(&mut i.then_branch.stmts);
        i.then_branch.stmts = self.kernel_block(stmts)?;
        if let Some((_, e)) = &mut i.else_branch {
            match &mut **e {
                Expr::Block(b) => {
                    let stmts = std::mem::take(&mut b.block.stmts);
                    b.block.stmts = self.kernel_block(stmts)?;
                }
                Expr::If(ei) => {
                    // `else if c2 { .. }`: the calls of `c2` may run only when `c` is false, so
                    // they go at the top of an `else` block of their own.
                    let mut inner = Vec::new();
                    self.kernel_if(ei, &mut inner)?;
                    if !inner.is_empty() {
                        inner.push(Stmt::Expr(Expr::If(ei.clone()), None));
                        **e = syn::parse_quote!({ #(#inner)* });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Replaces each helper call in `e` by its value's name, appending the inlined statements
    /// to `out` (arguments first, in order). Calls in a conditional position (`if` value
    /// branches, the right of `&&`/`||`) are refused: hoisted, they would run unconditionally.
    fn hoist_calls(&mut self, e: &mut Expr, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let mut h = Hoister {
            inl: self,
            out,
            cond: 0,
            errors: None,
        };
        h.visit_expr_mut(e);
        h.errors.map_or(Ok(()), Err)
    }

    /// A kernel helper call: `let p: T = arg;` per parameter, the body, `let r: R = value;`.
    fn kernel_call(
        &mut self,
        f: &syn::ItemFn,
        c: &syn::ExprCall,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<Expr> {
        let name = f.sig.ident.to_string();
        let whole = Expr::Call(c.clone());
        let ret = match &f.sig.output {
            syn::ReturnType::Type(_, t) => scalar_ty(t).map(|_| (**t).clone()),
            syn::ReturnType::Default => None,
        };
        let Some(ret) = ret else {
            return Err(err(
                &whole,
                format!("`{name}` is called in a kernel, where a helper computes a value: it takes scalars and returns one (`fn {name}(a: f32, b: f32) -> f32`)"),
            ));
        };
        let (params, _) = crate::parse::sig::params(&f.sig)?;
        if params.len() != c.args.len() {
            return Err(err(
                c,
                format!(
                    "`{name}` takes {} argument(s), this call passes {}",
                    params.len(),
                    c.args.len()
                ),
            ));
        }
        let mut scope = HashMap::new();
        for ((p, arg), input) in params.iter().zip(&c.args).zip(&f.sig.inputs) {
            let syn::FnArg::Typed(pt) = input else {
                continue;
            };
            if !matches!(p.kind, ParamKind::Scalar(_)) {
                return Err(err(
                    &pt.ty,
                    format!("`{name}` is called in a kernel, where a helper's parameters are scalars (f32, f64, integers, bool); read the arrays at the call (`{name}(u[[y, x]], u[[y, x + 1]])`)"),
                ));
            }
            let mutable = matches!(&*pt.pat, Pat::Ident(pi) if pi.mutability.is_some());
            let v = self.fresh(&p.name);
            let ty = &pt.ty;
            let m = mutable.then(|| quote!(mut));
            out.push(syn::parse_quote!(let #m #v: #ty = #arg;));
            scope.insert(p.name.to_string(), path_expr(&v));
        }
        self.enter(f, &whole)?;
        let r = self.kernel_body(f, scope, &ret, out);
        self.stack.pop();
        r
    }

    fn kernel_body(
        &mut self,
        f: &syn::ItemFn,
        scope: HashMap<String, Expr>,
        ret: &syn::Type,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<Expr> {
        let name = f.sig.ident.to_string();
        let mut body = self.renamed_body(f, scope)?;
        let value = match body.pop() {
            Some(Stmt::Expr(e, None)) => e,
            Some(Stmt::Expr(Expr::Return(syn::ExprReturn { expr: Some(v), .. }), _)) => *v,
            other => {
                let at = other
                    .map(|s| s.to_token_stream())
                    .unwrap_or_else(|| f.block.to_token_stream());
                return Err(err(at, format!("`{name}` is inlined into a kernel: its body is statements and a final value (a tail expression or `return e;`)")));
            }
        };
        check_no_return(&body, &value, &name)?;
        let stmts = self.kernel_block(body)?;
        out.extend(stmts);
        let mut value = value;
        self.hoist_calls(&mut value, out)?;
        let r = self.fresh(&f.sig.ident);
        out.push(syn::parse_quote!(let #r: #ret = #value;));
        Ok(path_expr(&r))
    }
}

enum Why {
    Time,
    Other(syn::Error),
}

/// Calls `f` on every expression of `e`.
fn check_pre(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    struct V<'f>(&'f mut dyn FnMut(&Expr));
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            (self.0)(e);
            syn::visit::visit_expr(self, e);
        }
    }
    syn::visit::Visit::visit_expr(&mut V(f), e);
}

/// `return` inside a kernel helper's body, other than as its last statement.
fn check_no_return(body: &[Stmt], value: &Expr, name: &str) -> syn::Result<()> {
    struct V(Option<syn::Error>, String);
    impl<'ast> syn::visit::Visit<'ast> for V {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            push(&mut self.0, err(r, format!("early `return` in `{}`, which pacc inlines into a kernel; give the body one final value (`if c {{ a }} else {{ b }}`)", self.1)));
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut v = V(None, name.to_string());
    for s in body {
        syn::visit::Visit::visit_stmt(&mut v, s);
    }
    syn::visit::Visit::visit_expr(&mut v, value);
    v.0.map_or(Ok(()), Err)
}

/// A swap in a time-loop helper exchanges the caller's arrays only when it swaps what its
/// `&mut` parameters point to (`std::mem::swap(a, b)`); `std::mem::swap(&mut a, &mut b)` swaps
/// the helper's own references, which the caller never sees.
fn check_helper_swaps(f: &syn::ItemFn) -> syn::Result<()> {
    let Ok((params, arrays)) = crate::parse::sig::params(&f.sig) else {
        return Ok(());
    };
    let name = f.sig.ident.to_string();
    let mut errors = None;
    let is_param = |e: &Expr| ident_of(e).is_some_and(|id| params.iter().any(|p| p.name == *id));
    let refs = |e: &Expr| {
        ident_of(e)
            .and_then(|id| arrays.iter().find(|a| a.name == *id))
            .map(|a| a.passing)
    };
    struct Swaps<'s>(Vec<&'s syn::ExprCall>);
    impl<'ast> syn::visit::Visit<'ast> for Swaps<'ast> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if is_swap(&c.func) {
                self.0.push(c);
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut v = Swaps(Vec::new());
    syn::visit::Visit::visit_block(&mut v, &f.block);
    for c in v.0 {
        for a in &c.args {
            let bad = match strip(a) {
                Expr::Reference(r) => is_param(strip(&r.expr)),
                x => !matches!(refs(x), Some(Passing::Ref { mutable: true }) | None),
            };
            if bad {
                push(
                    &mut errors,
                    err(a, format!("this swap exchanges `{name}`'s own references or views, which does not reach its caller; swap the arrays themselves through `&mut` parameters (`std::mem::swap(a, b)` with `a: &mut Array2<f32>`), or swap in the time loop")),
                );
            }
        }
    }
    errors.map_or(Ok(()), Err)
}

/// Strips borrows, dereferences and `.view()`/`.view_mut()`/`[..]` from an argument.
fn peel(e: &Expr) -> &Expr {
    match strip(e) {
        Expr::Reference(r) => peel(&r.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => peel(&u.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "view" | "view_mut" | "as_slice"
                ) =>
        {
            peel(&m.receiver)
        }
        Expr::Index(ix) if matches!(strip(&ix.index), Expr::Range(r) if r.start.is_none() && r.end.is_none()) => {
            peel(&ix.expr)
        }
        x => x,
    }
}

fn strip_helpers(stmts: &mut Vec<Stmt>) {
    stmts.retain(|s| !matches!(s, Stmt::Item(syn::Item::Fn(_))));
}

fn path_expr(id: &Ident) -> Expr {
    syn::parse_quote!(#id)
}

fn is_keyword(s: &str) -> bool {
    syn::parse_str::<Ident>(s).is_err()
}

fn collect_idents(ts: proc_macro2::TokenStream, out: &mut HashSet<String>) {
    for t in ts {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string().trim_start_matches("r#").to_string());
            }
            proc_macro2::TokenTree::Group(g) => collect_idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Renames a helper's body: parameters to what they stand for, each binding to a fresh name.
/// A name that is neither is an error: the body is inlined where the helper's scope is gone.
struct Renamer<'i, 'a> {
    inl: &'i mut Inliner<'a>,
    scopes: Vec<HashMap<String, Expr>>,
    helper: String,
    errors: Option<syn::Error>,
}

impl Renamer<'_, '_> {
    fn bind(&mut self, p: &mut Pat) {
        match p {
            Pat::Ident(pi) => {
                if let Some((_, sub)) = &mut pi.subpat {
                    self.bind(sub);
                }
                let v = self.inl.fresh(&pi.ident);
                if let Some(s) = self.scopes.last_mut() {
                    s.insert(pi.ident.to_string(), path_expr(&v));
                }
                pi.ident = v;
            }
            Pat::Type(pt) => self.bind(&mut pt.pat),
            Pat::Tuple(t) => t.elems.iter_mut().for_each(|e| self.bind(e)),
            Pat::Paren(pp) => self.bind(&mut pp.pat),
            Pat::Reference(r) => self.bind(&mut r.pat),
            Pat::Slice(s) => s.elems.iter_mut().for_each(|e| self.bind(e)),
            Pat::TupleStruct(t) => t.elems.iter_mut().for_each(|e| self.bind(e)),
            _ => {}
        }
    }

    fn lookup(&self, name: &str) -> Option<&Expr> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }
}

impl VisitMut for Renamer<'_, '_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.scopes.push(HashMap::new());
        for s in &mut b.stmts {
            match s {
                Stmt::Local(l) => {
                    if let Some(init) = &mut l.init {
                        self.visit_expr_mut(&mut init.expr);
                        if let Some((_, d)) = &mut init.diverge {
                            self.visit_expr_mut(d);
                        }
                    }
                    self.bind(&mut l.pat);
                }
                Stmt::Item(i) => push(
                    &mut self.errors,
                    err(&*i, format!("items inside `{}` are not supported: pacc inlines its body; move the item out of it", self.helper)),
                ),
                s => self.visit_stmt_mut(s),
            }
        }
        self.scopes.pop();
    }

    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        self.scopes.push(HashMap::new());
        self.bind(&mut f.pat);
        self.visit_block_mut(&mut f.body);
        self.scopes.pop();
    }

    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        self.scopes.push(HashMap::new());
        self.bind(&mut a.pat);
        if let Some((_, g)) = &mut a.guard {
            self.visit_expr_mut(g);
        }
        self.visit_expr_mut(&mut a.body);
        self.scopes.pop();
    }

    /// A called function's path is not a variable: helpers are looked up by name later.
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        if !matches!(&*c.func, Expr::Path(_)) {
            self.visit_expr_mut(&mut c.func);
        }
        for a in &mut c.args {
            self.visit_expr_mut(a);
        }
    }

    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        push(
            &mut self.errors,
            err(
                &*c,
                format!(
                    "closures inside `{}` are not supported by pacc's inlining",
                    self.helper
                ),
            ),
        );
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Path(p) = e {
            if p.qself.is_none() {
                if let Some(id) = p.path.get_ident() {
                    match self.lookup(&id.to_string()) {
                        Some(sub) => {
                            let mut sub = sub.clone();
                            if let Expr::Path(sp) = &mut sub {
                                if let Some(seg) = sp.path.segments.last_mut() {
                                    seg.ident.set_span(id.span());
                                }
                            }
                            *e = sub;
                        }
                        None => push(
                            &mut self.errors,
                            err(id, format!("`{id}` is neither a parameter nor a local of `{}`; pacc inlines the helper's body where its caller's names are in scope, so pass `{id}` as a parameter", self.helper)),
                        ),
                    }
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// Replaces kernel helper calls by their values' names (see [`Inliner::hoist_calls`]).
struct Hoister<'i, 'a, 'o> {
    inl: &'i mut Inliner<'a>,
    out: &'o mut Vec<Stmt>,
    /// Depth of conditional positions around the expression being visited.
    cond: usize,
    errors: Option<syn::Error>,
}

impl VisitMut for Hoister<'_, '_, '_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Call(c) => {
                for a in &mut c.args {
                    self.visit_expr_mut(a);
                }
                match self.inl.callee(&c.func) {
                    Callee::Helper(f) if self.cond > 0 => push(
                        &mut self.errors,
                        err(&*c, format!("`{}` is called where it may not be evaluated (a branch of an `if` value, or the right of `&&`/`||`); pacc inlines the call before the statement, so call it in a statement of its own: `let v = {}(..);` before the `if`, or inside an `if` statement's block", f.sig.ident, f.sig.ident)),
                    ),
                    Callee::Helper(f) => match self.inl.kernel_call(f, c, self.out) {
                        Ok(v) => *e = v,
                        Err(x) => push(&mut self.errors, x),
                    },
                    Callee::Unknown(n) if !n.contains("::") => {
                        push(&mut self.errors, self.inl.unknown(&c.func, &n, "in a kernel"))
                    }
                    _ => {}
                }
            }
            Expr::If(i) => {
                self.visit_expr_mut(&mut i.cond);
                self.cond += 1;
                self.visit_block_mut(&mut i.then_branch);
                if let Some((_, x)) = &mut i.else_branch {
                    self.visit_expr_mut(x);
                }
                self.cond -= 1;
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                self.visit_expr_mut(&mut b.left);
                self.cond += 1;
                self.visit_expr_mut(&mut b.right);
                self.cond -= 1;
            }
            Expr::Closure(_) => {}
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}
