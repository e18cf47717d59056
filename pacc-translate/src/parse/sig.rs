//! The function's parameters: arrays, slices, scalars.

use crate::ir::{ArrayParam, Param, ParamKind, Passing, Ty};
use crate::parse::args::push;
use pacc_runtime::program::Elem;
use syn::{FnArg, GenericArgument, Pat, PathArguments, Type};

/// An array type recognised in a parameter: element, rank, and whether it is a view.
struct ArrayTy {
    elem: Result<Elem, syn::Error>,
    ndim: usize,
    view: Option<bool>, // Some(mutable) for views
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn type_args(seg: &syn::PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn elem_of(ty: &Type) -> Result<Elem, syn::Error> {
    match last_segment(ty).map(|s| s.ident.to_string()).as_deref() {
        Some("f32") => Ok(Elem::F32),
        Some("f64") => Ok(Elem::F64),
        _ => Err(syn::Error::new_spanned(
            ty,
            format!(
                "unsupported element type `{}`; pacc arrays and slices hold `f32` or `f64`",
                quote::quote!(#ty).to_string().replace(' ', "")
            ),
        )),
    }
}

fn dim_of(ty: &Type) -> Option<usize> {
    match last_segment(ty)?.ident.to_string().as_str() {
        "Ix1" => Some(1),
        "Ix2" => Some(2),
        "Ix3" => Some(3),
        "Ix4" => Some(4),
        "IxDyn" => Some(0),
        _ => None,
    }
}

fn array_ty(ty: &Type) -> Option<ArrayTy> {
    let seg = last_segment(ty)?;
    let name = seg.ident.to_string();
    let args = type_args(seg);
    let (base, digits) = name.split_at(name.trim_end_matches(|c: char| c.is_ascii_digit()).len());
    let view = match base {
        "Array" => None,
        "ArrayView" => Some(false),
        "ArrayViewMut" => Some(true),
        _ => return None,
    };
    let (elem_ty, ndim) = if digits.is_empty() {
        // Array<T, Ix3>
        let e = args.first()?;
        (*e, args.get(1).and_then(|d| dim_of(d)).unwrap_or(0))
    } else {
        (*args.first()?, digits.parse().ok()?)
    };
    Some(ArrayTy {
        elem: elem_of(elem_ty),
        ndim,
        view,
    })
}

/// Classifies every parameter; arrays are numbered in parameter order.
pub fn params(sig: &syn::Signature) -> syn::Result<(Vec<Param>, Vec<ArrayParam>)> {
    let mut errors = None;
    let mut params = Vec::new();
    let mut arrays = Vec::new();
    // Lifetime parameters are fine (two views that trade places through `std::mem::swap` need
    // a common one); type and const parameters are not.
    let generic = sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)));
    if generic || sig.generics.where_clause.is_some() {
        push(
            &mut errors,
            syn::Error::new_spanned(
                &sig.generics,
                "generic functions are not supported by #[pacc::pipeline] (lifetime parameters are); use concrete types (`&mut Array3<f32>`, `f32`, ..)",
            ),
        );
    }
    for arg in &sig.inputs {
        let pt = match arg {
            FnArg::Receiver(r) => {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        r,
                        "#[pacc::pipeline] applies to free functions, not methods taking `self`; move the stencil into a function that takes the arrays as parameters",
                    ),
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let name = match &*pt.pat {
            Pat::Ident(pi) if pi.subpat.is_none() => pi.ident.clone(),
            other => {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        other,
                        "parameters of a pipelined function must be plain names (`a: &mut Array3<f32>`)",
                    ),
                );
                continue;
            }
        };
        let (inner, reference) = match &*pt.ty {
            Type::Reference(r) => (&*r.elem, Some(r.mutability.is_some())),
            t => (t, None),
        };
        let kind = if let Some(a) = array_ty(inner) {
            let elem = match a.elem {
                Ok(e) => e,
                Err(e) => {
                    push(&mut errors, e);
                    continue;
                }
            };
            if !(1..=3).contains(&a.ndim) {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        &pt.ty,
                        "pacc supports arrays of 1, 2 or 3 dimensions (`Array1`, `Array2`, `Array3`, their views, or `Array<T, Ix1|Ix2|Ix3>`)",
                    ),
                );
                continue;
            }
            let passing = match (reference, a.view) {
                (Some(m), None) => Passing::Ref { mutable: m },
                (None, Some(m)) => Passing::View { mutable: m },
                (Some(m), Some(v)) => Passing::Ref { mutable: m && v },
                (None, None) => {
                    push(
                        &mut errors,
                        syn::Error::new_spanned(
                            &pt.ty,
                            "arrays are passed as `&mut Array3<T>`, `&Array3<T>`, `ArrayView3<T>` or `ArrayViewMut3<T>` (likewise for 2D), not by value",
                        ),
                    );
                    continue;
                }
            };
            arrays.push(ArrayParam {
                name: name.clone(),
                elem,
                ndim: a.ndim,
                passing,
            });
            ParamKind::Array(arrays.len() - 1)
        } else if let (Some(_), Type::Slice(s)) = (reference, inner) {
            match elem_of(&s.elem) {
                Ok(e) => ParamKind::Slice(e),
                Err(_) => ParamKind::Other,
            }
        } else if let (Some(_), Some(seg)) = (reference, last_segment(inner)) {
            if seg.ident == "Vec" {
                match type_args(seg).first().map(|t| elem_of(t)) {
                    Some(Ok(e)) => ParamKind::Slice(e),
                    _ => ParamKind::Other,
                }
            } else {
                ParamKind::Other
            }
        } else if let (None, Some(seg)) = (reference, last_segment(inner)) {
            match Ty::from_name(&seg.ident.to_string()) {
                Some(t) if seg.arguments.is_empty() => ParamKind::Scalar(t),
                _ => ParamKind::Other,
            }
        } else {
            ParamKind::Other
        };
        params.push(Param { name, kind });
    }
    if let Some(e) = errors {
        return Err(e);
    }
    Ok((params, arrays))
}

/// The scalar type named by a type, if it is one.
pub fn scalar_ty(ty: &Type) -> Option<Ty> {
    let seg = last_segment(ty)?;
    if !seg.arguments.is_empty() {
        return None;
    }
    Ty::from_name(&seg.ident.to_string())
}

/// `Vec<f32>` / `&[f64]` / `&Vec<f32>`: a slice's element type.
pub fn slice_elem(ty: &Type) -> Option<Elem> {
    match ty {
        Type::Reference(r) => slice_elem(&r.elem),
        Type::Slice(s) => elem_of(&s.elem).ok(),
        t => {
            let seg = last_segment(t)?;
            if seg.ident == "Vec" {
                type_args(seg).first().and_then(|t| elem_of(t).ok())
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(s: &str) -> syn::Signature {
        syn::parse_str::<syn::ItemFn>(&format!("{s} {{}}"))
            .unwrap()
            .sig
    }

    #[test]
    fn classifies() {
        let (p, a) = params(&sig(
            "fn f(a: &mut Array3<f32>, b: &Array3<f32>, c: ArrayView3<'_, f32>, d: ArrayViewMut3<f32>, e: &ndarray::Array<f64, Ix2>, w: &[f32], v: &Vec<f64>, dt: f32, n: usize, s: &str)",
        ))
        .unwrap();
        assert_eq!(a.len(), 5);
        assert_eq!(a[0].passing, Passing::Ref { mutable: true });
        assert_eq!(a[2].passing, Passing::View { mutable: false });
        assert_eq!(a[3].passing, Passing::View { mutable: true });
        assert_eq!(a[4].ndim, 2);
        assert_eq!(a[4].elem, Elem::F64);
        assert!(matches!(p[5].kind, ParamKind::Slice(Elem::F32)));
        assert!(matches!(p[6].kind, ParamKind::Slice(Elem::F64)));
        assert!(matches!(p[7].kind, ParamKind::Scalar(Ty::F32)));
        assert!(matches!(p[8].kind, ParamKind::Scalar(Ty::Usize)));
        assert!(matches!(p[9].kind, ParamKind::Other));
    }

    #[test]
    fn rejects() {
        let e = params(&sig("fn f(a: &mut Array3<i32>)")).unwrap_err();
        assert!(
            e.to_string().contains("unsupported element type `i32`"),
            "{e}"
        );
        assert!(params(&sig("fn f(&self, a: &mut Array3<f32>)")).is_err());
        assert!(params(&sig("fn f(a: &mut Array4<f32>)")).is_err());
    }
}
