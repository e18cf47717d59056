//! What lowering carries through one function: the arrays, the variables known before the time
//! loop, the scalars, slices and reductions kernels use so far, and the scope inside a kernel.

use crate::ir::{ArrayParam, PreVar, ReductionUse, ScalarUse, SliceUse, Ty};
use quote::ToTokens;
use std::collections::HashMap;
use syn::ext::IdentExt;
use syn::Ident;

pub(super) const KERNEL_SURFACE: &str = "kernels support `let`, arithmetic, comparisons, `&&`/`||`/`!`, `as` casts, `if`/`else`, float methods, scalars, the time variable, reads `a[[z + 1, y, x - 2]]`, slices `w[i]`, writes at the centre `a[[z, y, x]] = e` and reductions `s += e` / `m = m.min(e)` / `m = m.max(e)`";
pub(super) const STEP_SURFACE: &str = "the time loop's body may contain perfect loop nests (one `for` per array axis), `std::mem::swap(a, b)` of two arrays, reduction resets `s = 0.0;` and single-point statements `a[[i, j, k]] += e;`";

pub(super) fn err(t: impl ToTokens, msg: impl std::fmt::Display) -> syn::Error {
    syn::Error::new_spanned(t, msg)
}

/// Kernel scope: loop variables, locals, and (for point statements) the point's index.
#[derive(Default, Clone)]
pub(super) struct Scope {
    pub(super) loop_vars: Vec<String>,
    /// The locals in scope, innermost last: each one's name in the source and the name the
    /// kernels give it ([`Ctx::bind_local`]).
    pub(super) locals: Vec<(String, Ident)>,
    pub(super) point: Option<(usize, Vec<String>)>,
    /// The variables of the unrolled inner loops around the statement (`lower/forms.rs`):
    /// name, this copy's value, and how many locals were in scope when it was bound.
    pub(super) consts: Vec<(String, i64, usize)>,
    /// In a nest: its range per axis (a clamped index is resolved against it).
    pub(super) ranges: Vec<pacc_runtime::program::AxisRange>,
}

impl Scope {
    /// The value of the unrolled loop variable `id` names here, unless a later `let` shadows it.
    pub(super) fn constant(&self, id: &Ident) -> Option<i64> {
        let name = id.to_string();
        let (_, v, depth) = self.consts.iter().rev().find(|(n, _, _)| *n == name)?;
        let shadowed = self.locals[(*depth).min(self.locals.len())..]
            .iter()
            .any(|(s, _)| *s == name);
        (!shadowed).then_some(*v)
    }

    /// The kernels' name of the innermost local that `id` names in the source, spanned at `id`.
    pub(super) fn local(&self, id: &Ident) -> Option<Ident> {
        let name = id.to_string();
        let (_, k) = self.locals.iter().rev().find(|(s, _)| *s == name)?;
        let mut k = k.clone();
        k.set_span(id.span());
        Some(k)
    }
}

/// The lowering state of one function.
pub(super) struct Ctx<'a> {
    pub(super) arrays: &'a [ArrayParam],
    pub(super) ndim: usize,
    pub(super) pre: HashMap<String, PreVar>,
    pub(super) time_var: Option<String>,
    pub(super) scalars: Vec<ScalarUse>,
    pub(super) slices: Vec<SliceUse>,
    pub(super) reductions: Vec<ReductionUse>,
    /// The synthetic scalars of loop bounds that are expressions, with their expressions.
    pub(super) bound_exprs: Vec<(Ident, syn::Expr)>,
    /// Every pre-loop name a loop bound reads (checked against the reductions at the end).
    pub(super) bound_reads: Vec<Ident>,
    /// The scalars (indices) whose type nothing before the time loop tells.
    pub(super) untyped: Vec<usize>,
}

impl Ctx<'_> {
    /// Brings the `let` of `id` into scope and returns its name in the kernels: the source's,
    /// unless a local in scope has that name (in the source, or in the kernels after a
    /// renaming). A shadowing `let` gets a fresh name (`u_1`), since C++ refuses a second
    /// `float u` in one block, and in `float u = u + 1.0f` the initialiser would read the new
    /// `u`.
    pub(super) fn bind_local(&self, sc: &mut Scope, id: &Ident) -> Ident {
        let name = id.to_string();
        let in_scope = |n: &str| sc.locals.iter().any(|(s, k)| s == n || *k == n);
        let kernel = if !in_scope(&name) {
            id.clone()
        } else {
            let taken = |n: &str| {
                in_scope(n)
                    || sc.loop_vars.iter().any(|v| v == n)
                    || self.pre.contains_key(n)
                    || self.time_var.as_deref() == Some(n)
            };
            // `r#loop` shadowed becomes `loop_1`: a raw identifier takes no suffix.
            let stem = id.unraw().to_string();
            let mut k = 1;
            while taken(&format!("{stem}_{k}")) {
                k += 1;
            }
            Ident::new(&format!("{stem}_{k}"), id.span())
        };
        sc.locals.push((name, kernel.clone()));
        kernel
    }

    pub(super) fn array(&self, id: &Ident) -> Option<usize> {
        match self.pre.get(&id.to_string()) {
            Some(PreVar::Array(i)) => Some(*i),
            _ => None,
        }
    }

    pub(super) fn scalar(&mut self, id: &Ident, ty: Option<Ty>) -> syn::Result<usize> {
        if let Some(i) = self.scalars.iter().position(|s| s.name == *id) {
            return Ok(i);
        }
        // Of unknown type: kept with an open type, so the uses can say what it should be
        // (`lower/mod.rs`, `untyped_error`), and refused once the step is lowered.
        let ty = ty.unwrap_or_else(|| {
            self.untyped.push(self.scalars.len());
            Ty::FloatLit
        });
        let dim = match self.pre.get(&id.to_string()) {
            Some(PreVar::Dim(a)) => Some(*a),
            _ => None,
        };
        self.scalars.push(ScalarUse {
            name: id.clone(),
            ty,
            dim,
        });
        Ok(self.scalars.len() - 1)
    }

    /// The slice `id` (`literal`: a table whose element type its uses fix, `elem` a default).
    pub(super) fn slice(
        &mut self,
        id: &Ident,
        elem: pacc_runtime::program::Elem,
        literal: bool,
    ) -> usize {
        if let Some(i) = self.slices.iter().position(|s| s.name == *id) {
            return i;
        }
        self.slices.push(SliceUse {
            name: id.clone(),
            elem,
            literal,
        });
        self.slices.len() - 1
    }
}
