//! Parsing, analysis and type-inference behaviour, through the public API.

mod programs;

use pacc_runtime::program::{Bound, ReduceOp, Role, ScalarType, Stage};
use pacc_translate::{expand, translate};
use quote::quote;

fn tr(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> pacc_translate::Translation {
    translate(args, item).unwrap_or_else(|e| panic!("{e}"))
}

fn err(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    match translate(args, item) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn laplace_program() {
    let t = pacc_translate::expand_file(programs::LAPLACE2D, None)
        .unwrap()
        .remove(0);
    let p = t.program;
    assert_eq!(p.ndim, 2);
    assert_eq!(p.halo, 1);
    assert_eq!(p.default_block_steps, Some(4));
    assert_eq!(p.arrays[0].role, Role::InOut);
    assert_eq!(p.arrays[1].role, Role::InOut);
    assert_eq!(p.kernels[0].ranges[0].lo, Bound::start(1));
    assert_eq!(p.kernels[0].ranges[1].hi, Bound::end(-1));
    assert_eq!(p.kernels[0].reads[0].lo, vec![-1, -1]);
    assert_eq!(p.kernels[0].reads[0].hi, vec![1, 1]);
    assert_eq!(
        p.step,
        vec![Stage::Reset(0), Stage::Kernel(0), Stage::Swap(0, 1)]
    );
    assert_eq!(p.reductions[0].op, ReduceOp::Sum);
    assert_eq!(p.reductions[0].elem, pacc_runtime::program::Elem::F32);
}

#[test]
fn acoustic_program() {
    let p = pacc_translate::expand_file(programs::ACOUSTIC3D, Some("acoustic"))
        .unwrap()
        .remove(0)
        .program;
    assert_eq!(p.halo, 4);
    assert_eq!(p.default_chunks, Some(8));
    // prev is written, cur is swapped with it: both in/out; vel is input.
    assert_eq!(
        p.arrays.iter().map(|a| a.role).collect::<Vec<_>>(),
        vec![Role::InOut, Role::InOut, Role::Input]
    );
    assert_eq!(
        p.kernels[0].reads.iter().find(|r| r.array == 1).unwrap().lo,
        vec![-4, -4, -4]
    );
    assert_eq!(p.points.len(), 1);
    assert_eq!(p.points[0].array, 0);
    assert_eq!(p.points[0].reads, vec![2]);
    assert_eq!(p.slices.len(), 1);
    assert_eq!(
        p.step,
        vec![Stage::Kernel(0), Stage::Point(0), Stage::Swap(0, 1)]
    );
    assert_eq!(p.axis0_reach(), (4, 4));
}

#[test]
fn himeno_program() {
    let p = pacc_translate::expand_file(programs::himeno(), None)
        .unwrap()
        .remove(0)
        .program;
    assert_eq!(p.kernels.len(), 2);
    assert_eq!(p.kernels[0].writes, vec![13]);
    assert_eq!(p.kernels[1].writes, vec![0]);
    assert_eq!(p.kernels[0].reductions, vec![0]);
    assert_eq!(
        p.step,
        vec![Stage::Reset(0), Stage::Kernel(0), Stage::Kernel(1)]
    );
    assert_eq!(p.scalars.len(), 1);
    assert_eq!(p.scalars[0].ty, ScalarType::F32);
    assert_eq!(p.arrays[13].role, Role::Scratch);
}

#[test]
fn scalar_and_reduction_types_come_from_use() {
    let t = tr(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) -> f32 {
                let (ny, nx) = a.dim();
                let c = 0.5;
                let mut m = 0.0;
                for t in 0..n {
                    for y in 0..ny {
                        for x in 0..nx {
                            let s = c * b[[y, x]] + t as f32;
                            let h = 0.5;
                            let k = 2;
                            a[[y, x]] = s * h + (k as f32);
                            m = m.max(s);
                        }
                    }
                }
                m
            }
        },
    );
    assert_eq!(t.program.scalars[0].ty, ScalarType::F32);
    assert_eq!(t.program.reductions[0].op, ReduceOp::Max);
    assert_eq!(
        t.program.reductions[0].elem,
        pacc_runtime::program::Elem::F32
    );
    assert!(t.cuda.contains("float s = c * b["), "{}", t.cuda);
    assert!(t
        .cuda
        .contains("const unsigned long long t = (unsigned long long)pacc_t;"));
    assert!(t.cuda.contains("m = fmaxf(m, s);"));
    // A literal-initialised local takes the type of its use, as in Rust.
    assert!(t.cuda.contains("float h = 0.5f;"), "{}", t.cuda);
    assert!(t.cuda.contains("int k = 2;"), "{}", t.cuda);
    assert!(t.cuda.contains("(float)(t)"));
}

#[test]
fn f64_literals_and_methods() {
    let t = tr(
        quote!(),
        quote! {
            fn f(a: &mut Array3<f64>, b: ArrayView3<f64>, n: usize) {
                let (nz, ny, nx) = a.dim();
                for _ in 0..n {
                    for z in 1..=nz - 2 {
                        for y in 0..ny {
                            for x in 0..nx {
                                let v = b[[z - 1, y, x]].abs().sqrt().mul_add(2.0, 1.0);
                                a[[z, y, x]] = if v > 1.0 { v.powi(2) } else { f64::max(v, 0.5) };
                            }
                        }
                    }
                }
            }
        },
    );
    assert!(t.cuda.contains("fma(sqrt(fabs(b["), "{}", t.cuda);
    assert!(t.cuda.contains(", 2.0, 1.0)"));
    assert!(t.cuda.contains("((v) * (v))"));
    assert!(t.cuda.contains("fmax(v, 0.5)"));
    assert_eq!(t.program.kernels[0].ranges[0].hi, Bound::end(-1));
    assert_eq!(t.program.arrays[1].role, Role::Input);
}

#[test]
fn errors_are_spanned_and_combined() {
    let m = err(
        quote!(halo = 1, tiles = 2),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 0..ny { for x in 0..nx { a[[y, x]] = b[[y, x]]; } }
                }
            }
        },
    );
    assert!(m.contains("unknown clause `tiles`"), "{m}");

    let m = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 0..ny { for x in 0..nx { a[[y, x]] = b[[y, x]].foo() + b[[y, x, 1]]; } }
                }
            }
        },
    );
    assert!(m.contains("unsupported method `foo`"), "{m}");

    let m = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 0..ny { for x in 0..nx { a[[y, x]] = b[[x, y]]; } }
                }
            }
        },
    );
    assert!(m.contains("`x` indexes axis 0"), "{m}");

    let m = err(
        quote!(scratch(a)),
        quote! {
            fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 0..ny { for x in 0..nx { a[[y, x]] = b[[y, x]]; } }
                    std::mem::swap(a, b);
                }
            }
        },
    );
    assert!(m.contains("same role"), "{m}");
}

#[test]
fn reading_a_reduction_in_a_kernel_is_an_error() {
    let m = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, n: usize) -> f32 {
                let (ny, nx) = a.dim();
                let mut s: f32 = 0.0;
                for _ in 0..n {
                    for y in 0..ny { for x in 0..nx { b[[y, x]] = a[[y, x]] * s; } }
                    for y in 0..ny { for x in 0..nx { s += b[[y, x]]; } }
                }
                s
            }
        },
    );
    assert!(
        m.contains("reduction variable `s` is read by a kernel"),
        "{m}"
    );
}

#[test]
fn expand_on_error_keeps_the_function() {
    let out = expand(
        quote!(bogus),
        quote!(
            fn f(a: &mut Array2<f32>) {
                let _ = a;
            }
        ),
    );
    let s = out.to_string();
    assert!(s.contains("compile_error"), "{s}");
    assert!(s.contains("fn f"), "{s}");
    let out = expand(
        quote!(),
        quote!(
            struct S;
        ),
    );
    assert!(out.to_string().contains("compile_error"));
}

/// No input makes the translator panic: every program with one word removed.
#[test]
fn never_panics_on_mutilated_programs() {
    for src in [
        programs::LAPLACE2D,
        programs::ACOUSTIC3D,
        programs::himeno(),
    ] {
        let words: Vec<&str> = src.split_whitespace().collect();
        for i in 0..words.len() {
            let mut w = words.clone();
            w.remove(i);
            let s = w.join(" ");
            let _ = std::panic::catch_unwind(|| pacc_translate::expand_file(&s, None))
                .unwrap_or_else(|_| panic!("panicked without word {i} `{}`", words[i]));
        }
    }
}

/// An index offset past any stencil's reach is a compile error naming the offset and the
/// limit; the largest allowed one translates.
#[test]
fn an_offset_too_large_is_refused_saying_the_limit() {
    let m = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 1..ny - 1 { for x in 1..nx - 1 { a[[y, x]] = b[[y + 65537, x]]; } }
                }
            }
        },
    );
    assert!(
        m.contains("the offset 65537 from `y` is too large") && m.contains("at most 65536 points"),
        "{m}"
    );
    let m = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 1..ny - 1 { for x in 1..nx - 1 { a[[y, x]] = b[[y, x - 9223372036854775807]]; } }
                }
            }
        },
    );
    assert!(
        m.contains("the offset -9223372036854775807 from `x`"),
        "{m}"
    );
    let ok = pacc_translate::translate(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) {
                let (ny, nx) = a.dim();
                for _ in 0..n {
                    for y in 1..ny - 1 { for x in 1..nx - 1 { a[[y, x]] = b[[y + 65536, x]]; } }
                }
            }
        },
    );
    assert!(ok.is_ok(), "{:?}", ok.err());
}

/// Each read of a slice is recorded with its index as an affine function of the time variable,
/// the loop variables (with their ranges) and integer scalars, for the runtime's length check.
#[test]
fn slice_reads_are_recorded_as_affine_indices() {
    use pacc_runtime::program::{AxisRange, AxisTerm, ScalarTerm, SliceIndex};
    let t = tr(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, w: &[f32], c: &[f32], k: usize, n: usize) {
                let (ny, nx) = a.dim();
                for t in 2..n {
                    for y in 1..ny - 1 {
                        for x in 1..nx - 1 {
                            b[[y, x]] = a[[y, x - 1]] * c[2 * (x - 1) + k] + c[y as usize];
                        }
                    }
                    b[[1, 1]] += w[t - 2] + w[3 * t + 1] + w[(t - 2)];
                    std::mem::swap(a, b);
                }
            }
        },
    );
    let s = &t.program.slices;
    assert_eq!((s[0].name.as_str(), s[1].name.as_str()), ("c", "w"));
    let x = AxisRange {
        lo: Bound::start(1),
        hi: Bound::end(-1),
    };
    let axis = |axis, coef| AxisTerm {
        axis,
        coef,
        range: x,
    };
    let k = t
        .program
        .scalars
        .iter()
        .position(|d| d.name == "k")
        .unwrap();
    assert_eq!(
        s[0].reads,
        vec![
            SliceIndex {
                offset: -2,
                time: 0,
                axes: vec![axis(1, 2)],
                scalars: vec![ScalarTerm { scalar: k, coef: 1 }],
            },
            SliceIndex {
                axes: vec![axis(0, 1)],
                ..Default::default()
            },
        ]
    );
    // `w[(t - 2)]` is `w[t - 2]` again: recorded once.
    assert_eq!(
        s[1].reads,
        vec![
            SliceIndex {
                offset: -2,
                time: 1,
                ..Default::default()
            },
            SliceIndex {
                offset: 1,
                time: 3,
                ..Default::default()
            },
        ]
    );
    // On a 10 x 12 grid, t in 2..=9 (k = 5): c[2x - 2 + 5] for x in 1..=10 is c[5..=23].
    let shape = [10, 12];
    assert_eq!(s[0].reads[0].bounds((2, 9), &shape, |_| 5), Some((5, 23)));
    assert_eq!(s[1].reads[1].bounds((2, 9), &shape, |_| 0), Some((7, 28)));
}

/// A slice index the translator cannot bound is refused at compile time, naming the slice.
#[test]
fn an_unbounded_slice_index_is_refused() {
    let e = err(
        quote!(),
        quote! {
            fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, w: &[f32], n: usize) {
                let (ny, nx) = a.dim();
                for t in 0..n {
                    for y in 1..ny - 1 {
                        for x in 1..nx - 1 {
                            b[[y, x]] = a[[y, x]] * w[x * y] + w[t % 4];
                        }
                    }
                    std::mem::swap(a, b);
                }
            }
        },
    );
    assert_eq!(
        e.matches("cannot bound this index of slice `w`").count(),
        2,
        "{e}"
    );
}

/// A whole-grid 2D heat step with guarded edge reads (issue 49 item 2).
const GUARDED2D: &str = r#"
    #[pacc::pipeline]
    fn g(t: &mut Array2<f32>, u: &mut Array2<f32>, steps: usize) {
        let (ny, nx) = t.dim();
        for _s in 0..steps {
            for y in 0..ny {
                for x in 0..nx {
                    let n = if y > 0 { t[[y - 1, x]] } else { t[[y, x]] };
                    let s = if !(y + 1 >= ny) { t[[y + 1, x]] } else { t[[y, x]] };
                    let e = t[[y, (x + 1).min(nx - 1)]];
                    let w = t[[y, x.max(1) - 1]];
                    u[[y, x]] = n + s + e + w;
                }
            }
            std::mem::swap(t, u);
        }
    }
"#;

#[test]
fn guarded_reads_are_described_where_they_execute() {
    use pacc_runtime::program::{GuardedRead, Launch};
    let p = pacc_translate::expand_file(GUARDED2D, None)
        .unwrap()
        .remove(0)
        .program;
    let k = &p.kernels[0];
    // The reach is every access's, as before: halos and dependencies come from it.
    assert_eq!(k.reads[0].lo, vec![-1, -1]);
    assert_eq!(k.reads[0].hi, vec![1, 1]);
    assert_eq!(p.halo, 1);
    let find = |offsets: [i64; 2]| {
        (k.guarded.iter().filter(|g| g.offsets == offsets)).collect::<Vec<&GuardedRead>>()
    };
    // `if y > 0`: the north read runs from y = 1; `!(y + 1 >= ny)`: the south one below ny - 1.
    assert_eq!(find([-1, 0])[0].from[0], vec![Bound::start(1)]);
    assert_eq!(find([1, 0])[0].to[0], vec![Bound::end(-1)]);
    // The clamps are selects: offset +1 where x + 2 <= nx, else 0; -1 where x >= 1, else 0.
    assert_eq!(find([0, 1])[0].to[1], vec![Bound::end(-1)]);
    assert_eq!(find([0, -1])[0].from[1], vec![Bound::start(1)]);
    assert!(find([0, 0]).len() >= 2, "{:?}", k.guarded);
    // The nest marches (its axis-0 loads kept inside the array); no fused form, saying why.
    assert!(
        matches!(k.launch, Launch::Marching { .. }),
        "{:?}",
        k.launch
    );
    assert!(
        !k.name.ends_with(pacc_runtime::program::PLAIN_SUFFIX),
        "{}",
        k.name
    );
    assert!(p.fusion.kernels.is_empty());
    assert!(p
        .fusion
        .refused
        .iter()
        .all(|(_, why)| why.contains("guards")));
    // The run-time check accepts every shape: each read stays inside where it runs.
    for n in [1, 2, 3, 40] {
        let ranges = &k.ranges;
        for g in &k.guarded {
            if let Some(v) = g.executes(ranges, &[n, n]) {
                for (axis, (lo, hi)) in v.into_iter().enumerate() {
                    assert!(lo + g.offsets[axis] >= 0, "{g:?} at {n}");
                    assert!(hi - 1 + g.offsets[axis] < n as i64, "{g:?} at {n}");
                }
            }
        }
    }
}

#[test]
fn interior_nests_with_guards_keep_their_description() {
    // Reads inside the array over the ranges need no guard: no description, marching form.
    let src = r#"
        #[pacc::pipeline]
        fn h(t: &mut Array2<f32>, u: &mut Array2<f32>, steps: usize) {
            let (ny, nx) = t.dim();
            for _s in 0..steps {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        let v = if x > 3 { t[[y - 1, x]] } else { t[[y + 1, x]] };
                        u[[y, x]] = v;
                    }
                }
                std::mem::swap(t, u);
            }
        }
    "#;
    let p = pacc_translate::expand_file(src, None)
        .unwrap()
        .remove(0)
        .program;
    assert!(p.kernels[0].guarded.is_empty());
    assert!(matches!(
        p.kernels[0].launch,
        pacc_runtime::program::Launch::Marching { .. }
    ));
    assert!(!p.fusion.kernels.is_empty());
}

#[test]
fn a_guard_that_does_not_keep_a_read_inside_is_a_compile_error() {
    let e = err(
        quote!(),
        quote! {
            fn g(t: &mut Array2<f32>, u: &mut Array2<f32>, k: usize, steps: usize) {
                let (ny, nx) = t.dim();
                for _s in 0..steps {
                    for y in 0..ny {
                        for x in 0..nx {
                            let n = if y * 2 > k { t[[y - 1, x]] } else { 0.0 };
                            u[[y, x]] = n;
                        }
                    }
                    std::mem::swap(t, u);
                }
            }
        },
    );
    assert!(
        e.contains("`t[[y - 1, x]]` reads outside the array along axis 0"),
        "{e}"
    );
    assert!(e.contains("this guard of `t[[y - 1, x]]`"), "{e}");
}

#[test]
fn a_clamp_pinning_more_than_the_range_end_is_refused() {
    let e = err(
        quote!(),
        quote! {
            fn g(t: &mut Array2<f32>, u: &mut Array2<f32>, steps: usize) {
                let (ny, nx) = t.dim();
                for _s in 0..steps {
                    for y in 0..ny {
                        for x in 0..nx {
                            u[[y, x]] = t[[y, (x + 1).min(nx - 3)]];
                        }
                    }
                    std::mem::swap(t, u);
                }
            }
        },
    );
    assert!(e.contains("a clamped index is"), "{e}");
}
