//! The variables known before the time loop: parameters, array extents (`a.dim()`) and scalars,
//! with their types where the syntax tells them.

use super::syntax::{ident_of, int_lit, strip};
use crate::ir::{ArrayParam, Param, ParamKind, PreVar, Ty};
use crate::parse::sig::{scalar_ty, slice_elem};
use crate::typing::pre_infer;
use std::collections::HashMap;
use syn::{Expr, Pat, Stmt};

/// Variables known before the time loop: the parameters, then the locals bound before it.
pub(super) fn pre_vars(
    item: &syn::ItemFn,
    params: &[Param],
    arrays: &[ArrayParam],
    pre_stmts: &[Stmt],
) -> HashMap<String, PreVar> {
    let mut pre = HashMap::new();
    for (p, arg) in params.iter().zip(item.sig.inputs.iter()) {
        let mutable = matches!(arg, syn::FnArg::Typed(pt) if matches!(&*pt.pat, Pat::Ident(pi) if pi.mutability.is_some()));
        let v = match p.kind {
            ParamKind::Array(i) => PreVar::Array(i),
            ParamKind::Slice(e) => PreVar::Slice(e),
            ParamKind::Scalar(t) => PreVar::Scalar {
                ty: Some(t),
                mutable,
            },
            ParamKind::Other => PreVar::Other,
        };
        pre.insert(p.name.to_string(), v);
    }
    for s in pre_stmts {
        match s {
            Stmt::Local(l) => {
                bind_local(l, arrays, &mut pre);
                unpack_tuple_param(l, item, &mut pre);
            }
            // `const W: [f64; 5] = [..];` in the body: a table the kernels read as a slice.
            Stmt::Item(syn::Item::Const(c)) => {
                let v = table_type(&c.ty).unwrap_or(PreVar::Other);
                pre.insert(c.ident.to_string(), v);
            }
            Stmt::Item(syn::Item::Static(st)) => {
                let v = table_type(&st.ty).unwrap_or(PreVar::Other);
                pre.insert(st.ident.to_string(), v);
            }
            _ => {}
        }
    }
    pre
}

/// `[f32; N]` (or f64): a table of that element type, passed to the kernels as a slice.
fn table_type(t: &syn::Type) -> Option<PreVar> {
    let syn::Type::Array(a) = t else {
        return None;
    };
    match scalar_ty(&a.elem)? {
        Ty::F32 => Some(PreVar::Slice(pacc_runtime::program::Elem::F32)),
        Ty::F64 => Some(PreVar::Slice(pacc_runtime::program::Elem::F64)),
        _ => None,
    }
}

/// An array expression `[a, b, ..]` or `[a; N]` of floats: a table, typed by its elements
/// (a suffix or a typed scalar), else left to the kernels' uses ([`PreVar::LitTable`]).
fn table_init(e: &Expr, pre: &HashMap<String, PreVar>) -> Option<PreVar> {
    let elems: Vec<&Expr> = match strip(e) {
        Expr::Array(a) => a.elems.iter().collect(),
        Expr::Repeat(r) => vec![&*r.expr],
        _ => return None,
    };
    let mut t = Ty::FloatLit;
    for x in elems {
        let u = pre_infer(x, pre)?;
        if !u.is_float() {
            return None;
        }
        t = crate::typing::unify(t, u);
    }
    Some(match t {
        Ty::F32 => PreVar::Slice(pacc_runtime::program::Elem::F32),
        Ty::F64 => PreVar::Slice(pacc_runtime::program::Elem::F64),
        _ => PreVar::LitTable,
    })
}

/// `let (a, b) = coef;` where `coef: (f32, f64)` is a parameter: the names take the types of
/// the parameter's elements (the initialiser alone tells `bind_local` nothing).
fn unpack_tuple_param(l: &syn::Local, item: &syn::ItemFn, pre: &mut HashMap<String, PreVar>) {
    let (Pat::Tuple(t), Some(init)) = (&l.pat, &l.init) else {
        return;
    };
    let Some(id) = ident_of(&init.expr) else {
        return;
    };
    let elems = item.sig.inputs.iter().find_map(|arg| match arg {
        syn::FnArg::Typed(pt) => match (&*pt.pat, &*pt.ty) {
            (Pat::Ident(pi), syn::Type::Tuple(tt)) if pi.ident == *id => Some(tt),
            _ => None,
        },
        _ => None,
    });
    let Some(tt) = elems else {
        return;
    };
    for (p, ty) in t.elems.iter().zip(tt.elems.iter()) {
        if let (Pat::Ident(pi), Some(ty)) = (p, scalar_ty(ty)) {
            let mutable = pi.mutability.is_some();
            let v = PreVar::Scalar {
                ty: Some(ty),
                mutable,
            };
            pre.insert(pi.ident.to_string(), v);
        }
    }
}

/// Records what a `let` before the time loop binds.
pub(super) fn bind_local(l: &syn::Local, arrays: &[ArrayParam], pre: &mut HashMap<String, PreVar>) {
    let (pat, ann) = match &l.pat {
        Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
        p => (p, None),
    };
    let init = l.init.as_ref().map(|i| &*i.expr);
    match pat {
        Pat::Ident(pi) => {
            let name = pi.ident.to_string();
            let mutable = pi.mutability.is_some();
            let v = if let Some(t) = ann {
                if let Some(s) = scalar_ty(t) {
                    PreVar::Scalar {
                        ty: Some(s),
                        mutable,
                    }
                } else if let Some(e) = slice_elem(t) {
                    PreVar::Slice(e)
                } else if let Some(v) = table_type(t) {
                    v
                } else {
                    PreVar::Other
                }
            } else if let Some(axis) = init.and_then(|e| dim_call(e, arrays, pre)) {
                PreVar::Dim(axis)
            } else if let Some(v) = init.and_then(|e| table_init(e, pre)) {
                v
            } else {
                match init.map(|e| pre_infer(e, pre)) {
                    Some(Some(t)) => PreVar::Scalar {
                        ty: Some(t),
                        mutable,
                    },
                    _ => PreVar::Scalar { ty: None, mutable },
                }
            };
            pre.insert(name, v);
        }
        Pat::Tuple(t) => {
            let dims = init.map(|e| is_dim_tuple(e, arrays, pre)).unwrap_or(false);
            let anns: Vec<Option<Ty>> = match ann {
                Some(syn::Type::Tuple(tt)) => tt.elems.iter().map(scalar_ty).collect(),
                _ => Vec::new(),
            };
            let inits: Vec<Option<Ty>> = match init.map(strip) {
                Some(Expr::Tuple(et)) => et.elems.iter().map(|e| pre_infer(e, pre)).collect(),
                _ => Vec::new(),
            };
            for (i, p) in t.elems.iter().enumerate() {
                if let Pat::Ident(pi) = p {
                    let v = if dims {
                        PreVar::Dim(i)
                    } else {
                        PreVar::Scalar {
                            ty: anns
                                .get(i)
                                .copied()
                                .flatten()
                                .or(inits.get(i).copied().flatten()),
                            mutable: pi.mutability.is_some(),
                        }
                    };
                    pre.insert(pi.ident.to_string(), v);
                }
            }
        }
        _ => {}
    }
}

pub(super) fn is_array(e: &Expr, arrays: &[ArrayParam], pre: &HashMap<String, PreVar>) -> bool {
    ident_of(e)
        .map(|id| {
            matches!(pre.get(&id.to_string()), Some(PreVar::Array(_)))
                || arrays.iter().any(|a| a.name == *id)
        })
        .unwrap_or(false)
}

/// `a.dim()` (any array).
pub(super) fn is_dim_tuple(e: &Expr, arrays: &[ArrayParam], pre: &HashMap<String, PreVar>) -> bool {
    matches!(strip(e), Expr::MethodCall(m) if m.method == "dim" && m.args.is_empty() && is_array(&m.receiver, arrays, pre))
}

/// `a.shape()[i]`, `a.len_of(Axis(i))`, `a.nrows()`, `a.ncols()`, and `u.len()` / `u.dim()` of a
/// 1D array: the axis.
pub(super) fn dim_call(
    e: &Expr,
    arrays: &[ArrayParam],
    pre: &HashMap<String, PreVar>,
) -> Option<usize> {
    match strip(e) {
        Expr::Index(ix) => {
            let Expr::MethodCall(m) = strip(&ix.expr) else {
                return None;
            };
            if m.method != "shape" || !is_array(&m.receiver, arrays, pre) {
                return None;
            }
            int_lit(&ix.index).map(|v| v as usize)
        }
        Expr::MethodCall(m) if is_array(&m.receiver, arrays, pre) => {
            let one_axis = ident_of(&m.receiver)
                .and_then(|id| arrays.iter().find(|a| a.name == *id))
                .is_some_and(|a| a.ndim == 1);
            if one_axis && super::line::is_len(m) {
                return Some(0);
            }
            match m.method.to_string().as_str() {
                "nrows" => Some(0),
                "ncols" => Some(1),
                "len_of" => {
                    let Expr::Call(c) = strip(m.args.first()?) else {
                        return None;
                    };
                    int_lit(c.args.first()?).map(|v| v as usize)
                }
                _ => None,
            }
        }
        _ => None,
    }
}
