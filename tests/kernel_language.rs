//! The kernel language beyond plain arithmetic (issue 49, item 6): tuple `let`s (also from an
//! `if`), `clamp` on floats and integers, integer `min`/`max` calls, float tables defined in
//! the function (`let w = [..];`, `let w: [f64; 3]`, `const C: [f32; 3]`), `let mut`
//! accumulators, and inner loops over a literal range (unrolled). Each program equals its
//! serial function bit for bit on the CPU backend and the shuffled executor, every scheme,
//! single steps and fused 2 and 3; the CUDA comparison needs a device (ignored by a plain
//! `cargo test`). The translator tests check what the kernels are made of and the refusals'
//! words (item 7: in-place updates are not offered a swap).

mod common;

use common::fused::Combo;
use common::{differing, noise};
use ndarray::{Array2, Array3};
use pacc::{BackendChoice, Options, Scheme};

/// Tuple lets (one from an `if`), an unsuffixed table typed by its use (f32), a `const` table,
/// a five-tap inner loop into a `let mut` accumulator, `+=` / `= s * c` updates and a float
/// clamp.
#[pacc::pipeline]
pub fn taps3d(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    let w = [-1.0, 8.0, 0.0, -8.0, 1.0];
    const C: [f32; 3] = [0.25, 0.5, 0.25];
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 2..nx - 2 {
                    let (lo, hi) = (a[[z - 1, y, x]], a[[z + 1, y, x]]);
                    let (p, q) = if lo < hi { (lo, hi) } else { (hi, lo) };
                    let mut s = 0.0;
                    for k in 0..5 {
                        s += w[k] * a[[z, y, x + k - 2]];
                    }
                    let mut m = C[0] * a[[z, y - 1, x]];
                    m += C[1] * a[[z, y, x]];
                    m = m + C[2] * a[[z, y + 1, x]];
                    m = m * 0.5;
                    b[[z, y, x]] = (m + 0.1 * s + 0.75 * (q - p)).clamp(-0.8, 0.9);
                }
            }
        }
        std::mem::swap(a, b);
    }
}

/// f64 in 2D: integer `clamp`, `i64::max` and `.min`, an annotated table, a tuple of
/// neighbours swapped by an `if`, an inner loop over a negative literal range, and
/// `f64::clamp` called as a function.
#[pacc::pipeline]
pub fn mix2d(u: &mut Array2<f64>, v: &mut Array2<f64>, steps: usize) {
    let (ny, nx) = u.dim();
    let w: [f64; 3] = [0.25, 0.5, 0.25];
    for t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let band = (x as i64 - 5).clamp(0, 3);
                let j = i64::max(band, (y % 3) as i64).min(2);
                let (l, r) = (u[[y, x - 1]], u[[y, x + 1]]);
                let (l, r) = if x % 2 == 0 { (r, l) } else { (l, r) };
                let mut s = w[0] * l;
                for k in -1..=1 {
                    s += 0.01 * (k as f64) * u[[y + 1, x]];
                }
                let c = w[1] * u[[y, x]] + w[2] * r + 0.001 * (j as f64) + 0.0001 * (t as f64);
                v[[y, x]] = f64::clamp(s + c, -0.6, 0.7);
            }
        }
        std::mem::swap(u, v);
    }
}

/// Every scheme on the CPU backend, the halo-loading schemes on the shuffled executor, each
/// in single steps and fused 2 and 3.
fn combos() -> Vec<Combo> {
    let mut out = Vec::new();
    for fuse in [1, 2, 3] {
        for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
            out.push(Combo::new(BackendChoice::Cpu, 3, 2 * fuse, scheme, fuse));
        }
        for (i, scheme) in [Scheme::DirectMap, Scheme::StagedCopy]
            .into_iter()
            .enumerate()
        {
            let seed = (10 * fuse + i) as u64;
            out.push(Combo::new(
                BackendChoice::Shuffled(seed),
                3,
                2 * fuse,
                scheme,
                fuse,
            ));
        }
    }
    out
}

fn field3(n: (usize, usize, usize), seed: u64) -> Array3<f32> {
    let mut r = noise(seed, -1.0, 1.0);
    Array3::from_shape_fn(n, |_| r())
}

fn field2(n: (usize, usize), seed: u64) -> Array2<f64> {
    let mut r = noise(seed, -1.0, 1.0);
    Array2::from_shape_fn(n, |_| r() as f64)
}

fn taps3d_matches(options: &[Options]) {
    let n = (19, 13, 23);
    let steps = 6;
    let (mut sa, mut sb) = (field3(n, 1), field3(n, 2));
    taps3d::serial(&mut sa, &mut sb, steps);
    for o in options {
        let (mut a, mut b) = (field3(n, 1), field3(n, 2));
        taps3d::run(&mut a, &mut b, steps, o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let d = (differing(&a, &sa), differing(&b, &sb));
        assert_eq!(d, (0, 0), "taps3d {o:?}");
    }
}

fn mix2d_matches(options: &[Options]) {
    let n = (37, 29);
    let steps = 12;
    let (mut su, mut sv) = (field2(n, 3), field2(n, 4));
    mix2d::serial(&mut su, &mut sv, steps);
    for o in options {
        let (mut u, mut v) = (field2(n, 3), field2(n, 4));
        mix2d::run(&mut u, &mut v, steps, o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let d = (differing(&u, &su), differing(&v, &sv));
        assert_eq!(d, (0, 0), "mix2d {o:?}");
    }
}

#[test]
fn taps_tables_tuples_and_clamps_equal_serial() {
    let o: Vec<Options> = combos().iter().map(|c| c.options()).collect();
    taps3d_matches(&o);
}

#[test]
fn integer_clamps_and_negative_inner_ranges_equal_serial() {
    let o: Vec<Options> = combos().iter().map(|c| c.options()).collect();
    mix2d_matches(&o);
}

/// The fused forms exist for both programs (the CPU runs above took them; a refusal would
/// have been an error).
#[test]
fn both_programs_have_fused_forms() {
    for p in [taps3d::program(), mix2d::program()] {
        for s in [2, 3] {
            if let Err(e) = p.fusion.get(s) {
                panic!("no fused form of {s} steps: {e:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn cuda_kernel_language_matches_serial() {
    let mut o = Vec::new();
    for fuse in [1, 2, 3] {
        for scheme in [Scheme::RegionSharing, Scheme::DirectMap] {
            o.push(
                Options::new()
                    .backend(BackendChoice::Cuda)
                    .chunks(2)
                    .block_steps(2 * fuse)
                    .scheme(scheme)
                    .fuse(fuse),
            );
        }
    }
    taps3d_matches(&o);
    mix2d_matches(&o);
}

fn translation_error(src: &str) -> String {
    match pacc_translate::expand_file(src, None) {
        Ok(_) => panic!("expected an error:\n{src}"),
        Err(e) => e,
    }
}

const TEMPLATE: &str = r#"
    #[pacc::pipeline]
    fn f(a: &mut Array2<ELEM>, b: &mut Array2<ELEM>, steps: usize) {
        let (ny, nx) = a.dim();
        PRE
        for _t in 0..steps {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    BODY
                }
            }
            std::mem::swap(a, b);
        }
    }
"#;

fn program(elem: &str, pre: &str, body: &str) -> String {
    TEMPLATE
        .replace("ELEM", elem)
        .replace("PRE", pre)
        .replace("BODY", body)
}

#[test]
fn clamp_keeps_nan_and_refuses_crossed_literal_bounds() {
    let src = program("f32", "", "b[[y, x]] = a[[y, x]].clamp(-1.0, 1.0);");
    let e = pacc_translate::expand_file(&src, None).unwrap().remove(0);
    // Rust's tests in Rust's order: a NaN fails both and stays NaN (`fmaxf` would return -1).
    assert!(e.cuda.contains("< (-1.0f) ? (-1.0f) :"), "{}", e.cuda);
    assert!(!e.cuda.contains("fmaxf"), "{}", e.cuda);
    for body in [
        "b[[y, x]] = a[[y, x]].clamp(1.0, -1.0);",
        "b[[y, x]] = f32::clamp(a[[y, x]], 2.0, 1.5);",
        "let i = (x as i32).clamp(5, 3); b[[y, x]] = a[[y, x]] * (i as f32);",
    ] {
        let m = translation_error(&program("f32", "", body));
        assert!(
            m.contains("`clamp` panics when its lower bound is above"),
            "{m}"
        );
    }
}

#[test]
fn tables_unroll_into_constant_offsets() {
    let src = program(
        "f64",
        "let w = [0.25, 0.5, 0.25];",
        "let mut s = 0.0; for k in 0..3 { s += w[k] * a[[y, x + k - 1]]; } b[[y, x]] = s;",
    );
    let e = pacc_translate::expand_file(&src, None).unwrap().remove(0);
    let p = &e.program;
    // The table is a slice of f64 (typed by its use), the reads reach one point either way.
    assert_eq!(p.slices.len(), 1);
    assert_eq!(p.slices[0].elem, pacc::runtime::program::Elem::F64);
    assert_eq!(p.kernels[0].reads[0].lo, vec![0, -1]);
    assert_eq!(p.kernels[0].reads[0].hi, vec![0, 1]);
    assert!(e.cuda.contains("double s = 0.0;"), "{}", e.cuda);
    // f32 arrays make the same unsuffixed table f32, and the accumulator too.
    let e = pacc_translate::expand_file(&src.replace("f64", "f32"), None)
        .unwrap()
        .remove(0);
    assert_eq!(e.program.slices[0].elem, pacc::runtime::program::Elem::F32);
    assert!(e.cuda.contains("float s = 0.0f;"), "{}", e.cuda);
    // Too many iterations, and a range that is not literal.
    let m = translation_error(&program(
        "f32",
        "",
        "let mut s = 0.0; for _k in 0..65 { s += a[[y, x]]; } b[[y, x]] = s;",
    ));
    assert!(m.contains("at most 64 times"), "{m}");
    let m = translation_error(&program(
        "f32",
        "",
        "let mut s = 0.0; for k in 0..nx { s += a[[y, x]]; } b[[y, x]] = s;",
    ));
    assert!(m.contains("runs over a range of integer literals"), "{m}");
}

#[test]
fn names_the_macro_cannot_see_say_where_to_define_them() {
    let m = translation_error(&program("f32", "", "b[[y, x]] = W[1] * a[[y, x]];"));
    assert!(m.contains("module-level `const`"), "{m}");
    assert!(m.contains("define the table inside the function"), "{m}");
    assert!(m.contains("`&[f64]` parameter"), "{m}");
    let m = translation_error(&program("f32", "", "b[[y, x]] = K * a[[y, x]];"));
    assert!(m.contains("module-level `const`"), "{m}");
}

#[test]
fn the_annotation_hint_names_the_type_the_value_is_used_at() {
    let pre = "let c = coefficient();";
    let m = translation_error(&program("f64", pre, "b[[y, x]] = c * a[[y, x]];"));
    assert!(m.contains("`let c: f64 = ..;`"), "{m}");
    let m = translation_error(&program("f32", pre, "b[[y, x]] = c * a[[y, x]];"));
    assert!(m.contains("`let c: f32 = ..;`"), "{m}");
    // Nothing tells: both float types are offered.
    let m = translation_error(&program("f64", pre, "b[[y, x]] = (c as f64) * a[[y, x]];"));
    assert!(
        m.contains("`let c: f32 = ..;` or `let c: f64 = ..;`"),
        "{m}"
    );
}

#[test]
fn in_place_updates_are_refused_without_offering_a_swap() {
    for body in [
        // Gauss-Seidel.
        "a[[y, x]] = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);",
        // A prefix sum along x.
        "a[[y, x]] = a[[y, x - 1]] + b[[y, x]];",
    ] {
        let m = translation_error(&program("f32", "", body));
        assert!(m.contains("the same sweep has already updated"), "{m}");
        assert!(m.contains("Gauss-Seidel"), "{m}");
        assert!(
            m.contains("a Jacobi iteration, a different algorithm"),
            "{m}"
        );
        assert!(!m.contains("std::mem::swap"), "{m}");
        let n = m.matches("the same sweep has already updated").count();
        assert_eq!(n, 1, "one error per array: {m}");
    }
    // Reading only ahead of the point sees the old values: there a second array is the same.
    let m = translation_error(&program(
        "f32",
        "",
        "a[[y, x]] = a[[y + 1, x]] + b[[y, x]];",
    ));
    assert!(m.contains("ahead of the point"), "{m}");
    assert!(m.contains("std::mem::swap"), "{m}");
}

#[test]
fn tuple_lets_bind_after_every_part() {
    // `(l, r) = (r, l)` reads the old `l` and `r`: the kernels keep both values.
    let src = program(
        "f32",
        "",
        "let (l, r) = (a[[y, x - 1]], a[[y, x + 1]]); let (l, r) = (r, l); b[[y, x]] = l - r;",
    );
    let e = pacc_translate::expand_file(&src, None).unwrap().remove(0);
    assert!(e.cuda.contains("float l_1 = r;"), "{}", e.cuda);
    assert!(e.cuda.contains("float r_1 = l;"), "{}", e.cuda);
    let m = translation_error(&program(
        "f32",
        "",
        "let (l, r) = a[[y, x]]; b[[y, x]] = l - r;",
    ));
    assert!(m.contains("a tuple `let` in a kernel takes a tuple"), "{m}");
}
