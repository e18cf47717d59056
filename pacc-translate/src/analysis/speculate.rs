//! Whether a nest body may run at points outside the nest's ranges, its results discarded.
//!
//! A vector kernel computes several points per thread. Guarding each point's body with its own
//! branch keeps the points' dependency chains apart, which costs the latency hiding that several
//! points per thread are for; computing every point and keeping the previous value where a
//! point lies outside the ranges lets them interleave. That is only sound where no operation of
//! the body can go wrong on the values found outside the ranges: integer division and
//! remainder (by zero), shifts (by too much), float-to-integer casts (of values out of range)
//! are undefined behaviour in C++, and a slice read's index could leave the slice. Array reads
//! are the form's concern: a form speculates only where each read comes from a register or a
//! tile, since a load through the L1 at a point outside the ranges could leave the array
//! (`codegen/vector.rs`; the fused vector form serves every read so).

use super::types::Env;
use crate::ir::{BinOp, KExpr, KExprKind, KStmt};
use crate::typing::unify;

/// Whether every operation of `body` is defined whatever the values it reads.
pub fn speculation_safe(body: &[KStmt], env: &mut Env<'_>) -> bool {
    let scope = env.locals.len();
    let ok = stmts_safe(body, env);
    env.locals.truncate(scope);
    ok
}

fn stmts_safe(body: &[KStmt], env: &mut Env<'_>) -> bool {
    for (i, s) in body.iter().enumerate() {
        let ok = match s {
            KStmt::Let { name, ty, init } => {
                let ok = expr_safe(init, env);
                let t = match ty {
                    Some(t) => *t,
                    None => env.let_type(&name.to_string(), init, &body[i + 1..]),
                };
                env.locals.push((name.to_string(), t));
                ok
            }
            KStmt::Assign { value, .. }
            | KStmt::Write { value, .. }
            | KStmt::Reduce { value, .. } => expr_safe(value, env),
            KStmt::If { cond, then, els } => {
                expr_safe(cond, env)
                    && speculation_safe(then, env)
                    && els.as_ref().is_none_or(|e| speculation_safe(e, env))
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

fn expr_safe(e: &KExpr, env: &Env<'_>) -> bool {
    let mut ok = true;
    super::walk_expr(e, &mut |x| match &x.kind {
        KExprKind::Bin(BinOp::Div | BinOp::Rem, l, r)
            if !unify(env.infer(l), env.infer(r)).is_float() =>
        {
            ok = false
        }
        KExprKind::Bin(BinOp::Shl | BinOp::Shr, ..) | KExprKind::SliceRead(..) => ok = false,
        KExprKind::Cast(v, t) if t.is_int() && !env.infer(v).is_int() => ok = false,
        _ => {}
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the first nest of a one-nest function whose body is `body` may run speculatively.
    fn safe(body: &str) -> bool {
        let src = format!(
            "fn k(a: &mut Array3<f32>, b: &Array3<f32>, w: &[f32], n: i64, steps: usize) {{
                let (nz, ny, nx) = a.dim();
                for _t in 0..steps {{
                    for z in 1..nz - 1 {{
                        for y in 1..ny - 1 {{
                            for x in 1..nx - 1 {{ {body} }}
                        }}
                    }}
                }}
            }}"
        );
        let file: syn::File = syn::parse_str(&src).unwrap();
        let syn::Item::Fn(item) = &file.items[0] else {
            panic!()
        };
        let mut f = crate::lower::lower(item.clone(), Default::default()).unwrap();
        let an = crate::analysis::analyse(&mut f).unwrap();
        let elems: Vec<_> = f.arrays.iter().map(|a| a.elem).collect();
        let mut env = Env {
            arrays: &elems,
            scalars: &f.scalars,
            slices: &f.slices,
            reductions: &f.reductions,
            time: an.time_ty,
            locals: Vec::new(),
        };
        let nest = f.nests().next().unwrap().clone();
        speculation_safe(&nest.body, &mut env)
    }

    #[test]
    fn float_arithmetic_may_run_anywhere_and_what_can_go_wrong_may_not() {
        // The sponge model's update: float division is defined for any operands.
        assert!(safe(
            "let e = b[[z, y, x]]; a[[z, y, x]] = (2.0 * b[[z - 1, y, x]] - (1.0 - e) * a[[z, y, x]]) / (1.0 + e);"
        ));
        assert!(safe(
            "if b[[z, y, x]] > 0.0 { a[[z, y, x]] = b[[z, y, x]].sqrt(); } else { a[[z, y, x]] = 0.0; }"
        ));
        assert!(safe("a[[z, y, x]] = b[[z, y, x]] * (x as f32);"));
        // Integer division and remainder by an index, a shift, a float cast to an integer and a
        // slice read at an index: each could go wrong outside the ranges.
        assert!(!safe(
            "a[[z, y, x]] = b[[z, y, x]] * ((100 / (x - 1)) as f32);"
        ));
        assert!(!safe(
            "a[[z, y, x]] = b[[z, y, x]] * ((n % (x as i64 - 1)) as f32);"
        ));
        assert!(!safe("a[[z, y, x]] = b[[z, y, x]] * ((1i64 << x) as f32);"));
        assert!(!safe(
            "let k = b[[z, y, x]] as i64; a[[z, y, x]] = (k + 1) as f32;"
        ));
        assert!(!safe("a[[z, y, x]] = w[x];"));
        assert!(!safe(
            "if b[[z, y, x]] > 0.0 { let q = (x / 2) as f32; a[[z, y, x]] = q; }"
        ));
    }
}
