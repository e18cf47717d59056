//! Helper functions and the other time-loop spellings (docs/internals.md §1, "Helper
//! functions"): C-style programs whose time loop calls a `single_iteration`-like helper and
//! whose kernels call scalar helpers equal their serial originals bit for bit on the CPU
//! backend and the shuffled executor, every scheme, single-step and fused 2 and 3 steps per
//! launch; on a CUDA device too (ignored without one).

mod common;

use common::fused::Combo;
use common::{differing, noise};
use ndarray::{Array2, Array3};
use pacc::{BackendChoice, Options, Scheme};

/// Rodinia's hotspot in its C shape: the time loop calls `single_iteration`, which runs the
/// nest, the nest calls `delta` for the update, and the time loop swaps the two temperature
/// grids. `step` is computed in the helper from values known before the loop.
#[pacc::pipeline]
#[allow(clippy::too_many_arguments)]
pub fn hotspot(
    temp: &mut Array2<f32>,
    out: &mut Array2<f32>,
    power: &Array2<f32>,
    cap: f32,
    rx: f32,
    ry: f32,
    iters: usize,
) {
    let (rows, cols) = temp.dim();
    #[allow(clippy::too_many_arguments)]
    fn delta(c: f32, n: f32, s: f32, e: f32, w: f32, p: f32, rx: f32, ry: f32) -> f32 {
        let horiz = (e + w - 2.0 * c) * rx;
        let vert = (n + s - 2.0 * c) * ry;
        p + horiz + vert
    }
    #[allow(clippy::too_many_arguments)]
    fn single_iteration(
        result: &mut Array2<f32>,
        temp: &Array2<f32>,
        power: &Array2<f32>,
        row: usize,
        col: usize,
        cap: f32,
        rx: f32,
        ry: f32,
    ) {
        let step = 1.0 / cap;
        for r in 1..row - 1 {
            for c in 1..col - 1 {
                let d = delta(
                    temp[[r, c]],
                    temp[[r - 1, c]],
                    temp[[r + 1, c]],
                    temp[[r, c + 1]],
                    temp[[r, c - 1]],
                    power[[r, c]],
                    rx,
                    ry,
                );
                result[[r, c]] = temp[[r, c]] + step * d;
            }
        }
    }
    for _ in 0..iters {
        single_iteration(out, temp, power, rows, cols, cap, rx, ry);
        std::mem::swap(temp, out);
    }
}

/// A module whose plain functions every pipeline in it may call: a Jacobi relaxation in 3D,
/// the time loop a `while` counter calling `step`, which calls `sweep` and swaps the caller's
/// arrays; the kernel's helpers call each other.
#[pacc::stencils]
pub mod sim {
    use ndarray::Array3;

    fn avg6(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64) -> f64 {
        sum3(a, b, c) / 6.0 + sum3(d, e, f) / 6.0
    }

    fn sum3(a: f64, b: f64, c: f64) -> f64 {
        a + b + c
    }

    // A final `return` is one of the helper forms the inliner accepts.
    #[allow(clippy::needless_return)]
    fn relax(c: f64, avg: f64, w: f64) -> f64 {
        let diff = avg - c;
        return c + w * diff;
    }

    fn sweep(dst: &mut Array3<f64>, src: &Array3<f64>, w: f64) {
        let (nz, ny, nx) = src.dim();
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let a = avg6(
                        src[[z - 1, y, x]],
                        src[[z + 1, y, x]],
                        src[[z, y - 1, x]],
                        src[[z, y + 1, x]],
                        src[[z, y, x - 1]],
                        src[[z, y, x + 1]],
                    );
                    dst[[z, y, x]] = relax(src[[z, y, x]], a, w);
                }
            }
        }
    }

    fn step(p: &mut Array3<f64>, q: &mut Array3<f64>, w: f64) {
        sweep(q, p, w);
        std::mem::swap(p, q);
    }

    #[pacc::pipeline]
    pub fn jacobi(a: &mut Array3<f64>, b: &mut Array3<f64>, w: f64, steps: usize) {
        let mut t = 0;
        while t < steps {
            step(a, b, w * 0.5);
            t += 1;
        }
    }
}

/// An `if` on the time variable around a nest: every third step, starting at the second, the
/// new field is damped.
#[pacc::pipeline]
pub fn pulsed(u: &mut Array2<f32>, v: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = u.dim();
    fn avg4(a: f32, b: f32, c: f32, d: f32) -> f32 {
        0.25 * (a + b + c + d)
    }
    for t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                v[[y, x]] = avg4(u[[y - 1, x]], u[[y + 1, x]], u[[y, x - 1]], u[[y, x + 1]]);
            }
        }
        if t % 3 == 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    v[[y, x]] = v[[y, x]] * 0.5 + 0.125;
                }
            }
        }
        std::mem::swap(u, v);
    }
}

/// Every scheme on the CPU backend and the shuffled executor, single-step and fused.
fn combos(backends: &[BackendChoice]) -> Vec<Combo> {
    let mut out = Vec::new();
    for &b in backends {
        for scheme in Scheme::ALL {
            for fuse in [1, 2, 3] {
                out.push(Combo::new(b, 3, 2 * fuse, scheme, fuse));
                out.push(Combo::new(b, 2, fuse, scheme, fuse));
            }
        }
    }
    out
}

fn cpu_backends() -> Vec<BackendChoice> {
    vec![
        BackendChoice::Cpu,
        BackendChoice::Shuffled(3),
        BackendChoice::Shuffled(8),
    ]
}

fn field2(n: (usize, usize), seed: u64) -> Array2<f32> {
    let mut g = noise(seed, 0.0, 1.0);
    Array2::from_shape_fn(n, |_| g())
}

fn field3(n: (usize, usize, usize), seed: u64) -> Array3<f64> {
    let mut g = noise(seed, 0.0, 1.0);
    Array3::from_shape_fn(n, |_| g() as f64)
}

/// Runs every combo; a fused request the planner refuses must say why, and then the program
/// still runs single-step with the same bits (checked by the `fuse = 1` combos).
fn check<T>(combos: &[Combo], mut run: impl FnMut(&Options) -> Result<T, pacc::Error>) -> usize {
    let mut ran = 0;
    for c in combos {
        match run(&c.options()) {
            Ok(_) => ran += 1,
            Err(e) if c.fuse > 1 => {
                let m = e.to_string();
                assert!(m.contains("fus"), "{c:?}: {m}");
            }
            Err(e) => panic!("{c:?}: {e}"),
        }
    }
    ran
}

fn hotspot_case(combos: &[Combo], n: (usize, usize)) {
    let temp0 = field2(n, 1);
    let power = field2(n, 2);
    for iters in [6, 12] {
        let (mut t1, mut o1) = (temp0.clone(), temp0.clone());
        hotspot::serial(&mut t1, &mut o1, &power, 2.0, 0.2, 0.15, iters);
        let ran = check(combos, |opts| {
            let (mut t2, mut o2) = (temp0.clone(), temp0.clone());
            hotspot::run(&mut t2, &mut o2, &power, 2.0, 0.2, 0.15, iters, opts)?;
            assert_eq!(differing(&t2, &t1), 0, "{opts:?}");
            assert_eq!(differing(&o2, &o1), 0, "{opts:?}");
            Ok(())
        });
        // One nest and a swap: every setting runs, fused ones included.
        assert_eq!(ran, combos.len());
    }
}

fn jacobi_case(combos: &[Combo], n: (usize, usize, usize)) {
    let a0 = field3(n, 4);
    for steps in [6, 12] {
        let (mut a1, mut b1) = (a0.clone(), a0.clone());
        sim::jacobi::serial(&mut a1, &mut b1, 0.9, steps);
        let ran = check(combos, |opts| {
            let (mut a2, mut b2) = (a0.clone(), a0.clone());
            sim::jacobi::run(&mut a2, &mut b2, 0.9, steps, opts)?;
            assert_eq!(differing(&a2, &a1), 0, "{opts:?}");
            assert_eq!(differing(&b2, &b1), 0, "{opts:?}");
            Ok(())
        });
        assert_eq!(ran, combos.len());
    }
}

fn pulsed_case(combos: &[Combo], n: (usize, usize)) {
    let u0 = field2(n, 5);
    for steps in [6, 12] {
        let (mut u1, mut v1) = (u0.clone(), u0.clone());
        pulsed::serial(&mut u1, &mut v1, steps);
        let ran = check(combos, |opts| {
            let (mut u2, mut v2) = (u0.clone(), u0.clone());
            pulsed::run(&mut u2, &mut v2, steps, opts)?;
            assert_eq!(differing(&u2, &u1), 0, "{opts:?}");
            assert_eq!(differing(&v2, &v1), 0, "{opts:?}");
            Ok(())
        });
        // The conditional nest fuses like any other: every setting runs.
        assert_eq!(ran, combos.len());
    }
}

#[test]
fn a_c_style_hotspot_with_helpers_equals_serial() {
    hotspot_case(&combos(&cpu_backends()), (37, 29));
}

#[test]
fn a_stencils_module_with_a_while_loop_equals_serial() {
    jacobi_case(&combos(&cpu_backends()), (21, 13, 11));
}

#[test]
fn an_if_on_the_time_variable_around_a_nest_equals_serial() {
    pulsed_case(&combos(&cpu_backends()), (31, 23));
}

/// The plain call takes its options from the environment; its value equals the serial one.
#[test]
fn the_plain_call_runs_the_inlined_program() {
    let temp0 = field2((20, 18), 9);
    let power = field2((20, 18), 10);
    let (mut t1, mut o1) = (temp0.clone(), temp0.clone());
    let (mut t2, mut o2) = (temp0.clone(), temp0.clone());
    hotspot::serial(&mut t1, &mut o1, &power, 2.0, 0.2, 0.15, 5);
    hotspot::try_run(&mut t2, &mut o2, &power, 2.0, 0.2, 0.15, 5).unwrap();
    assert_eq!(differing(&t2, &t1), 0);
}

/// On a CUDA device: the generated kernels of the inlined helpers give the serial bits.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_helper_programs_equal_serial() {
    let cuda = combos(&[BackendChoice::Cuda]);
    hotspot_case(&cuda, (130, 300));
    jacobi_case(&cuda, (40, 37, 70));
    pulsed_case(&cuda, (90, 260));
}
