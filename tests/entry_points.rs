//! The generated entry points: the plain call (options from the environment, panics on a
//! run-time error, naming the variable), `try_run` (the same, returning the error) and
//! swappable view parameters (a lifetime parameter). One test function: it sets environment
//! variables, which are process-wide.

use ndarray::{Array2, ArrayViewMut2};
use pacc::runtime::{BackendChoice, Error, Options};

/// Jacobi sweeps between two caller-owned arrays passed as views; the views trade places, which
/// needs the common lifetime `'a`.
#[pacc::pipeline]
fn sweep<'a>(mut a: ArrayViewMut2<'a, f64>, mut b: ArrayViewMut2<'a, f64>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
            }
        }
        std::mem::swap(&mut a, &mut b);
    }
}

fn start() -> (Array2<f64>, Array2<f64>) {
    let a = Array2::from_shape_fn((24, 17), |(y, x)| ((y * 31 + x * 7) % 13) as f64 / 13.0);
    (a.clone(), a)
}

fn bits(a: &Array2<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn entry_points_and_swapped_views() {
    for v in [
        "PACC_BACKEND",
        "PACC_CHUNKS",
        "PACC_BLOCK_STEPS",
        "PACC_SCHEME",
    ] {
        std::env::remove_var(v);
    }
    // Swapped views: the pipeline equals the serial function bit for bit (odd and even steps).
    for steps in [5, 6] {
        let (mut a0, mut b0) = start();
        sweep::serial(a0.view_mut(), b0.view_mut(), steps);
        let (mut a1, mut b1) = start();
        let opts = Options::new()
            .backend(BackendChoice::Cpu)
            .chunks(3)
            .block_steps(2);
        sweep::run(a1.view_mut(), b1.view_mut(), steps, &opts).expect("run");
        assert_eq!(bits(&a0), bits(&a1), "a after {steps} steps");
        assert_eq!(bits(&b0), bits(&b1), "b after {steps} steps");
    }

    // try_run with a valid environment runs and returns the value.
    std::env::set_var("PACC_BACKEND", "cpu");
    let (mut a, mut b) = start();
    sweep::try_run(a.view_mut(), b.view_mut(), 3).expect("try_run");

    // PACC_CHUNKS=0: a typed error naming the variable; the plain call panics saying so.
    std::env::set_var("PACC_CHUNKS", "0");
    let e = sweep::try_run(a.view_mut(), b.view_mut(), 3).unwrap_err();
    assert!(
        matches!(&e, Error::Setting { setting: "chunks", from, .. } if from == "`PACC_CHUNKS`"),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("set `PACC_CHUNKS` to 1 or more"),
        "{e}"
    );
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sweep(a.view_mut(), b.view_mut(), 3)
    }))
    .unwrap_err();
    let m = panic_message(p);
    assert!(m.starts_with("pacc: `sweep` failed: "), "{m}");
    assert!(m.contains("`PACC_CHUNKS`"), "{m}");

    // PACC_CHUNKS=abc: refused while reading the environment, naming variable and value.
    std::env::set_var("PACC_CHUNKS", "abc");
    let e = sweep::try_run(a.view_mut(), b.view_mut(), 3).unwrap_err();
    assert!(
        matches!(&e, Error::Option(m) if m.contains("PACC_CHUNKS=abc")),
        "{e}"
    );
    std::env::remove_var("PACC_CHUNKS");

    // PACC_BACKEND=cuda: without a device, the error names the variable, not an option.
    std::env::set_var("PACC_BACKEND", "cuda");
    match sweep::try_run(a.view_mut(), b.view_mut(), 3) {
        Ok(()) => {} // a machine with a GPU
        Err(e) => {
            assert!(
                matches!(&e, Error::NoCuda { from: Some(f), .. } if f == "`PACC_BACKEND`"),
                "{e:?}"
            );
            assert!(
                e.to_string()
                    .contains("set `PACC_BACKEND` to `auto` or `cpu`"),
                "{e}"
            );
        }
    }
    std::env::set_var("PACC_BACKEND", "gpu");
    let e = sweep::try_run(a.view_mut(), b.view_mut(), 3).unwrap_err();
    assert!(
        matches!(&e, Error::Option(m) if m.starts_with("PACC_BACKEND=gpu: unknown backend")),
        "{e}"
    );
    std::env::remove_var("PACC_BACKEND");
}
