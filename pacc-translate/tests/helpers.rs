//! Helper functions (docs/internals.md §1): calls in the time loop and in kernels are inlined
//! when their bodies are in reach (nested in the annotated function, or in the same
//! `#[pacc::stencils]` module); the other time-loop spellings (`while` counters, an `if` on the
//! time variable around nests). Unknown functions, recursion and forms pacc cannot inline are
//! compile errors that say what to write.

use pacc_translate::{expand_module, translate, Translation};

fn ok(src: &str) -> Translation {
    translate(Default::default(), src.parse().unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

fn fails(src: &str) -> String {
    match translate(Default::default(), src.parse().unwrap()) {
        Ok(_) => panic!("accepted: {src}"),
        Err(e) => e
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A Rodinia-hotspot-like thermal step in C style: a `single_iteration` helper doing the nest,
/// a kernel helper for the update, and a swap in the time loop.
const HOTSPOT: &str = r#"
fn hotspot(temp: &mut Array2<f32>, out: &mut Array2<f32>, power: &Array2<f32>, cap: f32, rx: f32, iters: usize) {
    let (rows, cols) = temp.dim();
    fn delta(c: f32, n: f32, s: f32, e: f32, w: f32, p: f32, rx: f32) -> f32 {
        let lap = (n + s - 2.0 * c) + (e + w - 2.0 * c);
        p + lap * rx
    }
    fn single_iteration(result: &mut Array2<f32>, temp: &Array2<f32>, power: &Array2<f32>, row: usize, col: usize, cap: f32, rx: f32) {
        let step = cap * 0.5;
        for r in 1..row - 1 {
            for c in 1..col - 1 {
                let d = delta(temp[[r, c]], temp[[r - 1, c]], temp[[r + 1, c]], temp[[r, c + 1]], temp[[r, c - 1]], power[[r, c]], rx);
                result[[r, c]] = temp[[r, c]] + step * d;
            }
        }
    }
    for _t in 0..iters {
        single_iteration(out, temp, power, rows, cols, cap, rx);
        std::mem::swap(temp, out);
    }
}
"#;

/// The same step written out by hand.
const HOTSPOT_INLINE: &str = r#"
fn hotspot(temp: &mut Array2<f32>, out: &mut Array2<f32>, power: &Array2<f32>, cap: f32, rx: f32, iters: usize) {
    let (rows, cols) = temp.dim();
    let step = cap * 0.5;
    for _t in 0..iters {
        for r in 1..rows - 1 {
            for c in 1..cols - 1 {
                let cc = temp[[r, c]];
                let lap = (temp[[r - 1, c]] + temp[[r + 1, c]] - 2.0 * cc) + (temp[[r, c + 1]] + temp[[r, c - 1]] - 2.0 * cc);
                let d = power[[r, c]] + lap * rx;
                out[[r, c]] = temp[[r, c]] + step * d;
            }
        }
        std::mem::swap(temp, out);
    }
}
"#;

#[test]
fn a_c_style_helper_program_is_the_program_written_out() {
    let h = ok(HOTSPOT);
    let w = ok(HOTSPOT_INLINE);
    assert_eq!(h.program.kernels.len(), 1);
    assert_eq!(h.program.halo, w.program.halo);
    assert_eq!(
        format!("{:?}", h.program.kernels[0].reads),
        format!("{:?}", w.program.kernels[0].reads)
    );
    assert_eq!(
        format!("{:?}", h.program.kernels[0].writes),
        format!("{:?}", w.program.kernels[0].writes)
    );
    assert_eq!(
        h.program.scalars.len(),
        w.program.scalars.len(),
        "{:?}",
        h.program.scalars
    );
    // The swap and the roles are the caller's.
    assert_eq!(
        format!("{:?}", h.program.arrays),
        format!("{:?}", w.program.arrays)
    );
    // The kernels compute the helper's value: no call of it survives in the CUDA source.
    assert!(!h.cuda.contains("delta("), "{}", h.cuda);
    assert!(h.cuda.contains("float d = delta_1;"), "{}", h.cuda);
    assert!(
        h.cuda.contains("float c_1 = temp[") && h.cuda.contains("float rx_1 = rx;"),
        "{}",
        h.cuda
    );
    // The serial original calls the helpers as written.
    let host = h.host.to_string();
    assert!(host.contains("single_iteration (out , temp"), "{host}");
}

#[test]
fn a_stencils_module_hands_its_functions_to_each_pipeline() {
    let src = r#"
mod sim {
    use ndarray::Array2;
    fn avg4(a: f32, b: f32, c: f32, d: f32) -> f32 { 0.25 * (a + b + c + d) }
    fn sweep(dst: &mut Array2<f32>, src: &Array2<f32>) {
        let (ny, nx) = src.dim();
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                dst[[y, x]] = avg4(src[[y - 1, x]], src[[y + 1, x]], src[[y, x - 1]], src[[y, x + 1]]);
            }
        }
    }
    #[pacc::pipeline(halo = 1)]
    pub fn smooth(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
        for _t in 0..steps {
            sweep(b, a);
            std::mem::swap(a, b);
        }
    }
}
"#;
    let out = expand_module(Default::default(), src.parse().unwrap()).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("pub fn try_run") && out.contains("fn avg4"),
        "{out}"
    );
    // Without the module attribute's helpers the call is an error that says how to fix it.
    let file = pacc_translate::expand_file(&format!("#[pacc::stencils] {src}"), None).unwrap();
    assert_eq!(file.len(), 1);
    assert_eq!(file[0].program.halo, 1);
    let alone = pacc_translate::expand_file(src, None).unwrap_err();
    assert!(
        alone.contains("cannot inline `sweep`") && alone.contains("#[pacc::stencils]"),
        "{alone}"
    );
    let m = expand_module(Default::default(), "mod sim;".parse().unwrap()).to_string();
    assert!(m.contains("needs the module's items in place"), "{m}");
}

#[test]
fn helpers_call_helpers_and_swap_the_callers_arrays() {
    let t = ok(r#"
fn f(a: &mut Array2<f64>, b: &mut Array2<f64>, k: f64, steps: usize) {
    fn half(v: f64) -> f64 { twice(v) * 0.25 }
    fn twice(v: f64) -> f64 { v + v }
    fn sweep(dst: &mut Array2<f64>, src: &Array2<f64>, k: f64) {
        let (ny, nx) = src.dim();
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                dst[[y, x]] = half(src[[y, x - 1]] + src[[y, x + 1]]) * k;
            }
        }
    }
    fn step(p: &mut Array2<f64>, q: &mut Array2<f64>, k: f64) {
        sweep(q, p, k);
        std::mem::swap(p, q);
    }
    for _t in 0..steps {
        step(a, b, k * 2.0);
    }
}
"#);
    assert_eq!(t.program.kernels.len(), 1);
    assert_eq!(t.func.time.items.len(), 2);
    // The argument `k * 2.0` is evaluated once before the loop, as an f64.
    let pre: Vec<String> = t
        .func
        .pre
        .iter()
        .map(|s| quote::quote!(#s).to_string())
        .collect();
    assert!(pre.iter().any(|s| s.contains(": f64 = k * 2.0")), "{pre:?}");
    // The swap is replayed on the caller's names.
    assert!(t.host.to_string().contains("swap (a , b)"), "{}", t.host);
}

#[test]
fn while_counters_and_conditions_on_the_time_variable() {
    let t = ok(r#"
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    let mut t = 0;
    while t < steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = 0.5 * (a[[y, x - 1]] + a[[y, x + 1]]);
            }
        }
        if t % 3 == 0 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    b[[y, x]] = b[[y, x]] * 0.5;
                }
            }
        } else {
            for y in 0..ny {
                for x in 0..nx {
                    a[[y, x]] = a[[y, x]] + 1.0;
                }
            }
        }
        std::mem::swap(a, b);
        t += 1;
    }
}
"#);
    assert_eq!(t.program.kernels.len(), 3);
    assert_eq!(
        t.func.time.var.as_ref().map(|v| v.to_string()).as_deref(),
        Some("t")
    );
    let m = fails(
        r#"
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    let mut t = 0;
    while t < steps {
        for y in 1..ny - 1 { for x in 1..nx - 1 { b[[y, x]] = a[[y, x]]; } }
        t += 2;
    }
}
"#,
    );
    assert!(
        m.contains("does not end with `t += 1;`") && m.contains("for t in a..b"),
        "{m}"
    );
    let m = fails(
        r#"
fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for t in 0..steps {
        if t % 2 == 0 {
            for y in 1..ny - 1 { for x in 1..nx - 1 { b[[y, x]] = a[[y, x]]; } }
            std::mem::swap(a, b);
        }
    }
}
"#,
    );
    assert!(m.contains("may hold only loop nests"), "{m}");
}

fn with_body(helpers: &str, step: &str) -> String {
    format!(
        "fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, k: f32, steps: usize) {{
            let (ny, nx) = a.dim();
            {helpers}
            for t in 0..steps {{ {step} std::mem::swap(a, b); }}
        }}"
    )
}

#[test]
fn what_cannot_be_inlined_is_an_error_that_says_what_to_write() {
    let nest =
        |e: &str| format!("for y in 1..ny - 1 {{ for x in 1..nx - 1 {{ b[[y, x]] = {e}; }} }}");
    let cases: Vec<(String, &str)> = vec![
        (with_body("", "advance(b, a);"), "define `fn advance` inside `fn f`'s body"),
        (with_body("", &nest("flux(a[[y, x]])")), "cannot inline `flux` in a kernel"),
        (with_body("fn g(v: f32) -> f32 { g(v) }", &nest("g(a[[y, x]])")), "recursive helper: `g` calls itself (g -> g)"),
        (with_body("fn g(v: f32) -> f32 { h(v) } fn h(v: f32) -> f32 { g(v) }", &nest("g(a[[y, x]])")), "(g -> h -> g)"),
        (
            with_body("fn s(p: &mut Array2<f32>, n: usize, t: usize) { let w = t as f32; for y in 1..n - 1 { for x in 1..n - 1 { p[[y, x]] = w; } } }", "s(b, ny, t);"),
            "depends on the time variable `t`",
        ),
        (
            with_body("fn s(mut p: &mut Array2<f32>, mut q: &mut Array2<f32>) { std::mem::swap(&mut p, &mut q); }", "s(a, b);"),
            "does not reach its caller",
        ),
        (with_body("fn g(v: f32) -> f32 { v * 2.0 }", &nest("if x > 1 { g(a[[y, x]]) } else { 0.0 }")), "where it may not be evaluated"),
        (with_body("fn g(p: &Array2<f32>) -> f32 { 1.0 }", &nest("g(a)")), "read the arrays at the call"),
        (with_body("fn g(v: f32) -> f32 { v * k }", &nest("g(a[[y, x]])")), "`k` is neither a parameter nor a local of `g`"),
        (with_body("fn g(v: f32) -> f32 { if v > 0.0 { return v; } 0.0 }", &nest("g(a[[y, x]])")), "early `return` in `g`"),
        (with_body("fn g(v: f32) -> f32 { v }", "g(k);"), "a time-loop helper returns nothing"),
    ];
    for (src, want) in cases {
        let m = fails(&src);
        assert!(m.contains(want), "want {want:?} in:\n{m}\nfor {src}");
    }
}

#[test]
fn inlined_names_never_capture_the_callers() {
    // The helper's local `y` and parameter `x` meet the caller's loop variables of the same
    // names; each keeps its meaning.
    let t = ok(&with_body(
        "fn g(x: f32, y: f32) -> f32 { let d = y - x; d * 0.5 }",
        "for y in 1..ny - 1 { for x in 1..nx - 1 { let d = g(a[[y, x + 1]], a[[y, x - 1]]); b[[y, x]] = d + g(d, 1.0); } }",
    ));
    let cuda = &t.cuda;
    assert!(
        cuda.contains("float x_1 = ") && cuda.contains("float y_1 = "),
        "{cuda}"
    );
    assert!(
        cuda.contains("float d_1 = (y_1 - x_1)") || cuda.contains("float d_1 = y_1 - x_1"),
        "{cuda}"
    );
}
