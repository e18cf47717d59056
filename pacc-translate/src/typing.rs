//! The type facts lowering and the type analysis share: Rust's rules for literal types, the
//! float methods a kernel may call, how Rust's binary operators map onto the IR's, and the type
//! of a value computed before the time loop (probed on the syntax, before anything is lowered).
//! It imports neither: lowering (`lower/`) and `analysis/types.rs` both build on it.

use crate::ir::{BinOp, PreVar, Ty};
use crate::parse::sig::scalar_ty;
use std::collections::HashMap;

/// The common type of two operands, literals taking the other side's type as in Rust.
pub fn unify(a: Ty, b: Ty) -> Ty {
    match (a, b) {
        (x, y) if x == y => x,
        (Ty::FloatLit, t) | (t, Ty::FloatLit) if t.is_float() => t,
        (Ty::IntLit, t) | (t, Ty::IntLit) if t.is_int() => t,
        (x, _) => x,
    }
}

/// Resolves a literal type with the type the context wants.
pub fn resolve(t: Ty, want: Option<Ty>) -> Ty {
    match (t, want) {
        (Ty::FloatLit, Some(w)) if w.is_float() && !w.is_lit() => w,
        (Ty::IntLit, Some(w)) if w.is_int() && !w.is_lit() => w,
        (t, _) => t.defaulted(),
    }
}

/// Methods on floats (and `f32::name(recv, ..)` calls): name, number of arguments besides the
/// receiver.
pub const FLOAT_METHODS: &[(&str, usize)] = &[
    ("sqrt", 0),
    ("abs", 0),
    ("exp", 0),
    ("exp2", 0),
    ("ln", 0),
    ("log10", 0),
    ("log2", 0),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("asin", 0),
    ("acos", 0),
    ("atan", 0),
    ("sinh", 0),
    ("cosh", 0),
    ("tanh", 0),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("trunc", 0),
    ("cbrt", 0),
    ("recip", 0),
    ("min", 1),
    ("max", 1),
    ("powf", 1),
    ("powi", 1),
    ("atan2", 1),
    ("hypot", 1),
    ("copysign", 1),
    ("mul_add", 2),
    // Rust's `clamp` on floats and integers: NaN passes through, `lo > hi` panics (refused at
    // compile time when both bounds are literals, `lower/forms.rs`).
    ("clamp", 2),
];

pub fn method_arity(name: &str) -> Option<usize> {
    FLOAT_METHODS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
}

pub fn method_list() -> String {
    FLOAT_METHODS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The IR operator of a Rust binary operator (`+=` gives `+`), or `None` for one kernels lack.
pub fn bin_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) | B::AddAssign(_) => BinOp::Add,
        B::Sub(_) | B::SubAssign(_) => BinOp::Sub,
        B::Mul(_) | B::MulAssign(_) => BinOp::Mul,
        B::Div(_) | B::DivAssign(_) => BinOp::Div,
        B::Rem(_) | B::RemAssign(_) => BinOp::Rem,
        B::And(_) => BinOp::And,
        B::Or(_) => BinOp::Or,
        B::BitAnd(_) | B::BitAndAssign(_) => BinOp::BitAnd,
        B::BitOr(_) | B::BitOrAssign(_) => BinOp::BitOr,
        B::BitXor(_) | B::BitXorAssign(_) => BinOp::BitXor,
        B::Shl(_) | B::ShlAssign(_) => BinOp::Shl,
        B::Shr(_) | B::ShrAssign(_) => BinOp::Shr,
        B::Eq(_) => BinOp::Eq,
        B::Ne(_) => BinOp::Ne,
        B::Lt(_) => BinOp::Lt,
        B::Le(_) => BinOp::Le,
        B::Gt(_) => BinOp::Gt,
        B::Ge(_) => BinOp::Ge,
        _ => return None,
    })
}

/// Type of an expression computed before the time loop, when it is simple enough to tell.
pub fn pre_infer(e: &syn::Expr, pre: &HashMap<String, PreVar>) -> Option<Ty> {
    use syn::{Expr, Lit};
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Float(f) => Some(Ty::from_name(f.suffix()).unwrap_or(Ty::FloatLit)),
            Lit::Int(i) => Some(Ty::from_name(i.suffix()).unwrap_or(Ty::IntLit)),
            Lit::Bool(_) => Some(Ty::Bool),
            _ => None,
        },
        Expr::Path(p) => {
            let id = p.path.get_ident()?;
            match pre.get(&id.to_string())? {
                PreVar::Scalar { ty, .. } => *ty,
                PreVar::Dim(_) => Some(Ty::Usize),
                _ => None,
            }
        }
        Expr::Paren(p) => pre_infer(&p.expr, pre),
        Expr::Group(g) => pre_infer(&g.expr, pre),
        Expr::Unary(u) => pre_infer(&u.expr, pre),
        Expr::Cast(c) => scalar_ty(&c.ty),
        Expr::Binary(b) => {
            let op = bin_op(&b.op)?;
            if op.is_cmp() || op.is_logic() {
                Some(Ty::Bool)
            } else {
                let l = pre_infer(&b.left, pre)?;
                if op.is_shift() {
                    return Some(l);
                }
                let r = pre_infer(&b.right, pre)?;
                Some(unify(l, r))
            }
        }
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            if name == "len" {
                return Some(Ty::Usize);
            }
            method_arity(&name)?;
            let t = pre_infer(&m.receiver, pre)?;
            if t.is_float() {
                Some(t)
            } else {
                None
            }
        }
        Expr::Call(c) => {
            if let Expr::Path(p) = &*c.func {
                let segs = crate::parse::path_names(&p.path);
                if segs.len() == 2 && method_arity(&segs[1]).is_some() {
                    return Ty::from_name(&segs[0]).filter(|t| t.is_float());
                }
            }
            None
        }
        Expr::Index(i) => {
            if let Expr::Path(p) = &*i.expr {
                if let Some(PreVar::Slice(e)) =
                    p.path.get_ident().and_then(|id| pre.get(&id.to_string()))
                {
                    return Some(Ty::from_elem(*e));
                }
            }
            None
        }
        Expr::If(_) | Expr::Block(_) => None,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unify_literals() {
        assert_eq!(unify(Ty::FloatLit, Ty::F32), Ty::F32);
        assert_eq!(unify(Ty::F64, Ty::FloatLit), Ty::F64);
        assert_eq!(unify(Ty::IntLit, Ty::Usize), Ty::Usize);
        assert_eq!(unify(Ty::IntLit, Ty::IntLit), Ty::IntLit);
        assert_eq!(resolve(Ty::FloatLit, Some(Ty::F32)), Ty::F32);
        assert_eq!(resolve(Ty::FloatLit, None), Ty::F64);
        assert_eq!(resolve(Ty::IntLit, Some(Ty::F32)), Ty::I32);
    }

    #[test]
    fn pre_loop_inference() {
        let mut pre = HashMap::new();
        pre.insert(
            "dt".to_string(),
            PreVar::Scalar {
                ty: Some(Ty::F32),
                mutable: false,
            },
        );
        pre.insert("nx".to_string(), PreVar::Dim(2));
        let e: syn::Expr = syn::parse_str("dt * dt * 0.5").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F32));
        let e: syn::Expr = syn::parse_str("(nx - 1) as f64").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F64));
        let e: syn::Expr = syn::parse_str("nx - 1").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::Usize));
        let e: syn::Expr = syn::parse_str("dt.sqrt()").unwrap();
        assert_eq!(pre_infer(&e, &pre), Some(Ty::F32));
        let e: syn::Expr = syn::parse_str("foo(dt)").unwrap();
        assert_eq!(pre_infer(&e, &pre), None);
    }
}
