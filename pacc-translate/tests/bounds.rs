//! Loop bounds that are expressions of values fixed before the time loop: how they lower (the
//! program's `Bound` bases, the synthetic scalars the wrapper computes, the CUDA guards), which
//! forms keep today's spelling, and the refusals that remain.

use pacc_runtime::program::{Base, Bound, ScalarType};
use pacc_translate::translate;
use quote::quote;

fn tr(item: proc_macro2::TokenStream) -> pacc_translate::Translation {
    translate(quote!(), item).unwrap_or_else(|e| panic!("{e}"))
}

fn err(item: proc_macro2::TokenStream) -> String {
    match translate(quote!(), item) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn scalars_and_extents_of_other_axes_are_scalar_bases() {
    let t = tr(quote! {
        fn f(a: &mut Array3<f32>, b: &mut Array3<f32>, n: usize, steps: usize) {
            let (nz, ny, nx) = a.dim();
            let hi = nx - 1;
            let lo: usize = 2;
            for _t in 0..steps {
                for z in 1..n - 1 {
                    for y in 1..=nz - 2 {
                        for x in lo..hi {
                            b[[z, y, x]] = a[[z, y, x - 1]] + a[[z + 1, y, x]];
                        }
                    }
                }
                std::mem::swap(a, b);
            }
        }
    });
    let p = &t.program;
    let scalar = |name: &str| p.scalars.iter().position(|s| s.name == name).unwrap();
    let r = &p.kernels[0].ranges;
    assert_eq!(r[0].lo, Bound::start(1));
    assert_eq!(r[0].hi, Bound::scalar(scalar("n"), -1));
    // `..=` adds one, whatever the base; another axis's extent is a usize scalar.
    assert_eq!(r[1].hi, Bound::scalar(scalar("nz"), -1));
    assert_eq!(p.scalars[scalar("nz")].ty, ScalarType::Usize);
    assert_eq!(r[2].lo, Bound::scalar(scalar("lo"), 0));
    assert_eq!(r[2].hi, Bound::scalar(scalar("hi"), 0));
    // The kernels read the scalars as parameters, signed.
    assert!(t.cuda.contains("unsigned long long n,"), "{}", t.cuda);
    assert!(t.cuda.contains("((long long)n - 1)"), "{}", t.cuda);
    assert!(t.cuda.contains("((long long)nz - 1)"), "{}", t.cuda);
    assert!(t.cuda.contains(">= ((long long)lo)"), "{}", t.cuda);
    // No expression: no synthetic scalar.
    assert!(!p.scalars.iter().any(|s| s.name.starts_with("__pacc_")));
}

#[test]
fn the_extent_forms_of_the_own_axis_keep_their_spelling() {
    let t = tr(quote! {
        fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 1..=ny - 2 {
                    for x in 0..nx + 0 {
                        b[[y, x]] = a[[y - 1, x]];
                    }
                }
                std::mem::swap(a, b);
            }
        }
    });
    let r = &t.program.kernels[0].ranges;
    assert_eq!((r[0].lo, r[0].hi), (Bound::start(1), Bound::end(-1)));
    assert_eq!((r[1].lo, r[1].hi), (Bound::start(0), Bound::end(0)));
    assert!(t.program.scalars.is_empty());
    assert!(t.cuda.contains("< pacc_n1 - 1") || t.cuda.contains("< pacc_n0 - 1"));
    assert!(!t.cuda.contains("(long long)ny"));
}

#[test]
fn expressions_become_synthetic_scalars_the_wrapper_computes() {
    let t = tr(quote! {
        fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, r: usize, m: usize, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in r..ny - r {
                    for x in (nx / 2)..nx {
                        b[[y, x]] = a[[y, x]];
                    }
                }
                for y in r..ny - r {
                    for x in 0..nx.min(m) {
                        a[[y, x]] = b[[y, x]] * 2.0;
                    }
                }
            }
        }
    });
    let p = &t.program;
    let synth: Vec<&str> = (p.scalars.iter())
        .filter(|s| s.name.starts_with("__pacc_"))
        .map(|s| s.name.as_str())
        .collect();
    // `ny - r` (twice: one scalar), `nx / 2`, `nx.min(m)`.
    assert_eq!(synth.len(), 3, "{synth:?}");
    assert!(p
        .scalars
        .iter()
        .filter(|s| s.name.starts_with("__pacc_"))
        .all(|s| s.ty == ScalarType::I64));
    let k0 = &p.kernels[0].ranges;
    let k1 = &p.kernels[1].ranges;
    assert_eq!(k0[0].hi, k1[0].hi);
    assert!(matches!(k0[1].lo.base, Base::Scalar(_)));
    assert_eq!(k0[1].hi, Bound::end(0));
    assert!(matches!(k1[1].hi.base, Base::Scalar(_)));
    // The wrapper evaluates each from the user's tokens, refusing a value that is no i64.
    let host = t.host.to_string();
    assert!(host.contains("bound_value"), "{host}");
    assert!(host.contains("\"nx.min(m)\""), "{host}");
    // C names for the reserved prefix get the usual suffix.
    assert!(t.cuda.contains("long long __pacc_b0_"), "{}", t.cuda);
}

#[test]
fn bounds_that_are_not_fixed_before_the_time_loop_are_refused() {
    let m = err(quote! {
        fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 0..ny { for x in 0..y + 1 { a[[y, x]] = b[[y, x]]; } }
            }
        }
    });
    assert!(m.contains("reads loop variable `y`"), "{m}");
    assert!(
        m.contains("integer expression of values fixed before the time loop"),
        "{m}"
    );

    let m = err(quote! {
        fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for t in 0..steps {
                for y in 0..ny { for x in 0..nx - t { a[[y, x]] = b[[y, x]]; } }
            }
        }
    });
    assert!(m.contains("reads the time variable `t`"), "{m}");

    let m = err(quote! {
        fn f(a: &mut Array2<f32>, b: &Array2<f32>, w: f32, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 0..ny { for x in 0..w { a[[y, x]] = b[[y, x]]; } }
            }
        }
    });
    assert!(m.contains("`w` is not an integer"), "{m}");

    let m = err(quote! {
        fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 0..ny { for x in 0..half(nx) { a[[y, x]] = b[[y, x]]; } }
            }
        }
    });
    assert!(m.contains("`min`/`max`"), "{m}");

    let m = err(quote! {
        fn f(a: &mut Array2<f32>, b: &Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 0..ny { for x in 0..(nx << 1) { a[[y, x]] = b[[y, x]]; } }
            }
        }
    });
    assert!(m.contains("integer expression"), "{m}");
}

/// Not a bound, but a pre-loop value of the same family: `let (a, b) = coef;` of a tuple
/// parameter gives its names the elements' types (Himeno-style coefficients), so a kernel can
/// read them; a name the kernel reads whose type nothing tells stays a refusal.
#[test]
fn tuple_parameter_unpacked_before_the_loop_types_its_names() {
    let t = tr(quote! {
        fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, coef: (f32, f64), steps: usize) {
            let (ny, nx) = a.dim();
            let (c0, c1) = coef;
            for _t in 0..steps {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        b[[y, x]] = c0 * a[[y, x - 1]] + (c1 as f32) * a[[y, x + 1]];
                    }
                }
                std::mem::swap(a, b);
            }
        }
    });
    let ty = |n: &str| {
        (t.program.scalars.iter())
            .find(|s| s.name == n)
            .map(|s| s.ty)
    };
    assert_eq!(ty("c0"), Some(ScalarType::F32));
    assert_eq!(ty("c1"), Some(ScalarType::F64));
    let e = err(quote! {
        fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, coef: Coef, steps: usize) {
            let (ny, nx) = a.dim();
            let (c0, c1) = coef;
            for _t in 0..steps {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        b[[y, x]] = c0 * a[[y, x - 1]];
                    }
                }
                std::mem::swap(a, b);
            }
        }
    });
    assert!(e.contains("cannot infer the type of `c0`"), "{e}");
}
