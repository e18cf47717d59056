//! The fidelity metrics (`pacc::fidelity::compare`) on hand-made arrays, and a compressed
//! Gray-Scott run against an uncompressed one.

use ndarray::{arr1, arr2, Array2};
use pacc::fidelity::compare;
use pacc::models::grayscott;
use pacc::{BackendChoice, Options};

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{what}: got {got:e}, want {want:e}"
    );
}

#[test]
fn metrics_by_hand() {
    // Values exact in binary, so the expected figures are exact too.
    let b = arr1(&[1.0f32, -2.0, 4.0, 0.0]);
    let a = arr1(&[1.125f32, -2.0, 3.0, 0.0]);
    // max|b| = 4, floor 0.1 * 4 = 0.4: pointwise errors 0.125/1, 0, 1/4, 0/0.4.
    let e = compare(&a, &b, 0.1);
    close(e.ref_max, 4.0, "ref_max");
    close(e.floor, 0.4, "floor");
    close(e.max_rel, 0.25, "max_rel");
    close(e.mean_rel, (0.125 + 0.25) / 4.0, "mean_rel");
    close(
        e.rel_l2,
        (0.125f64 * 0.125 + 1.0).sqrt() / 21f64.sqrt(),
        "rel_l2",
    );
    close(e.max_abs_over_max, 0.25, "max_abs_over_max");
}

#[test]
fn floor_replaces_small_denominators() {
    // |b_0| = 0 is below the floor 0.01 * 10 = 0.1: its error is 0.5 / 0.1 = 5, not infinite.
    let b = arr2(&[[0.0f32, 10.0], [10.0, -10.0]]);
    let a = arr2(&[[0.5f32, 10.0], [10.0, -10.0]]);
    let e = compare(&a, &b, 0.01);
    close(e.max_rel, 5.0, "max_rel");
    close(e.mean_rel, 5.0 / 4.0, "mean_rel");
    close(e.rel_l2, 0.5 / 300f64.sqrt(), "rel_l2");
    close(e.max_abs_over_max, 0.05, "max_abs_over_max");
    // A |b_i| above the floor is its own denominator: 0.02 against 0.2, not against 0.1.
    let b = arr1(&[0.2f32, 10.0]);
    let a = arr1(&[0.22f32, 10.0]);
    let e = compare(&a, &b, 0.01);
    close(
        e.max_rel,
        (0.22f32 as f64 - 0.2f32 as f64) / 0.2f32 as f64,
        "max_rel",
    );
}

#[test]
fn degenerate_cases() {
    let z = Array2::<f32>::zeros((3, 4));
    // Identical arrays: no error, even an all-zero pair.
    let e = compare(&z, &z, 1e-6);
    assert_eq!(
        (e.max_rel, e.mean_rel, e.rel_l2, e.max_abs_over_max),
        (0.0, 0.0, 0.0, 0.0)
    );
    // Something against an all-zero reference: infinite relative errors.
    let mut a = z.clone();
    a[[1, 2]] = 1e-3;
    let e = compare(&a, &z, 1e-6);
    assert!(e.max_rel.is_infinite() && e.rel_l2.is_infinite() && e.max_abs_over_max.is_infinite());
    // A NaN counts as an infinite error, not as no error.
    let b = arr1(&[1.0f32, 2.0]);
    let a = arr1(&[f32::NAN, 2.0]);
    let e = compare(&a, &b, 1e-6);
    assert!(e.max_rel.is_infinite() && e.mean_rel.is_infinite() && e.rel_l2.is_infinite());
    // Logical order, not memory order: a transposed view compares point by point.
    let b = arr2(&[[1.0f32, 2.0], [3.0, 4.0]]);
    let a = b.t().to_owned();
    let a_t = a.t();
    assert_eq!(compare(&a_t, &b, 1e-6).rel_l2, 0.0);
}

#[test]
#[should_panic(expected = "different shapes")]
fn shapes_must_match() {
    compare(
        &Array2::<f32>::zeros((2, 3)),
        &Array2::<f32>::zeros((3, 2)),
        1e-6,
    );
}

/// A Gray-Scott run compressed at 24 bits per value stays close to the uncompressed run.
#[test]
fn grayscott_rate_24_stays_close() {
    let (n, steps) = (64, 40);
    let p = grayscott::DEFAULT;
    // 2 chunks, 5 block steps: 8 blocks, so every array goes through 7 lossy round trips.
    let opts = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(2)
        .block_steps(5);
    let run = |opts: &Options| {
        let (mut u, mut v, mut u2, mut v2) = grayscott::init(n, n, 1);
        let ((), report) = grayscott::step::run(
            &mut u, &mut v, &mut u2, &mut v2, p.du, p.dv, p.f, p.k, p.dt, steps, opts,
        )
        .expect("run");
        (u, v, report)
    };
    let (u_ref, v_ref, _) = run(&opts.clone().no_compression());
    let (u, v, report) = run(&opts.clone().compress_all(24.0).compress_inputs(true));
    assert!(
        report.link_bytes() < report.link_bytes_raw(),
        "the run did not compress: {report}"
    );
    let eu = compare(&u, &u_ref, 1e-6);
    let ev = compare(&v, &v_ref, 1e-6);
    // Measured (CPU backend, this configuration; the CPU backend and the codec are
    // deterministic): rel L2 8.5e-9 for u and 1.05e-7 for v. The bounds leave a margin of about
    // 10x: a change that makes compression noticeably less faithful (or breaks it) fails here.
    const BOUND_U: f64 = 1e-7;
    const BOUND_V: f64 = 1e-6;
    assert!(
        eu.rel_l2 > 0.0 && ev.rel_l2 > 0.0,
        "rate 24 is lossy: {eu:?} {ev:?}"
    );
    assert!(
        eu.rel_l2 <= BOUND_U,
        "u: rel L2 {:e} > {BOUND_U:e}",
        eu.rel_l2
    );
    assert!(
        ev.rel_l2 <= BOUND_V,
        "v: rel L2 {:e} > {BOUND_V:e}",
        ev.rel_l2
    );
    eprintln!("rate 24 after {steps} steps: u {eu:?}\nv {ev:?}");
}
