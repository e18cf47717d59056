//! `pacc_runtime::run` end to end with the real planner: the CPU and shuffled executors equal the
//! serial references bit for bit over random shapes, reaches, chunk counts, block steps, schemes
//! and steps; errors are typed and leave the data untouched.

mod common;

use common::*;
use ndarray::{s, Array3, Axis};
use pacc_runtime::host::{host_array, host_array_mut};
use pacc_runtime::plan::{PlanError, Scheme};
use pacc_runtime::run::swap_replays;
use pacc_runtime::{run, BackendChoice, Error, Options, RunOutput, ScalarValue};
use proptest::prelude::*;

/// Planner refusals that are documented outcomes for some (shape, chunks, block steps, scheme)
/// combinations, not failures of the executor.
fn refused(e: &Error) -> bool {
    matches!(e, Error::Plan(PlanError::TooThin { .. }))
}

fn backends(seed: u64) -> [BackendChoice; 2] {
    [BackendChoice::Cpu, BackendChoice::Shuffled(seed)]
}

/// Runs the stencil through `run` and checks it against the reference. Returns false when the
/// planner refused the configuration.
fn check_stencil(shape: [usize; 3], r: usize, steps: usize, opts: &Options, seed: u64) -> bool {
    let prog = stencil_program(r);
    let (c, t0) = (0.3, -1);
    let a0 = random3(shape, seed);
    let b0 = random3(shape, seed ^ 1);
    let (mut ra, mut rb) = (a0.clone(), b0.clone());
    let (energy, peak) = stencil_reference(&mut ra, &mut rb, r, c, t0, steps, STENCIL_INIT);
    for backend in backends(seed) {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let inv = stencil_invocation(&mut a, &mut b, r, c, t0, steps);
        let out = match run(&prog, inv, &opts.clone().backend(backend)) {
            Ok(out) => out,
            Err(e) if refused(&e) => {
                assert_eq!(bits3(&a), bits3(&a0));
                return false;
            }
            Err(e) => panic!("{backend:?} {opts:?}: {e}"),
        };
        assert_eq!(out.swap_replays, swap_replays(&prog, steps));
        assert!(
            close(out.reductions[0], energy, 1e-12),
            "energy {} vs {energy}, {backend:?} {opts:?}",
            out.reductions[0]
        );
        assert_eq!(out.reductions[1], peak, "peak, {backend:?} {opts:?}");
        replay(&mut a, &mut b, out.swap_replays);
        assert_eq!(bits3(&a), bits3(&ra), "a differs, {backend:?} {opts:?}");
        assert_eq!(bits3(&b), bits3(&rb), "b differs, {backend:?} {opts:?}");
        check_report(&out, steps);
    }
    true
}

fn check_report(out: &RunOutput, steps: usize) {
    let r = &out.report;
    assert_eq!(r.steps, steps);
    if steps == 0 {
        assert_eq!(r.link_bytes(), 0);
    } else {
        assert!(r.bytes_htod > 0 && r.bytes_dtoh > 0);
        assert!(r.device_bytes > 0);
        assert!(r.chunks >= 1 && r.block_steps >= 1);
    }
}

fn check_two_kernel(shape: [usize; 2], steps: usize, opts: &Options, seed: u64) -> bool {
    let prog = two_kernel_program();
    let (k, t0, init, reset) = (0.1f32, 0, (3.0f32, 0.5f32), 1.0f32);
    let u0 = random2_f32(shape, seed);
    let w0 = random2_f32(shape, seed ^ 2);
    let (mut ru, mut rw) = (u0.clone(), w0.clone());
    let (change, lowest) = two_kernel_reference(&mut ru, &mut rw, k, t0, steps, init, reset);
    for backend in backends(seed) {
        let (mut u, mut w) = (u0.clone(), w0.clone());
        let inv = two_kernel_invocation(&mut u, &mut w, k, t0, steps, init, reset);
        let out = match run(&prog, inv, &opts.clone().backend(backend)) {
            Ok(out) => out,
            Err(e) if refused(&e) => return false,
            Err(e) => panic!("{backend:?} {opts:?}: {e}"),
        };
        assert_eq!(bits2(&u), bits2(&ru), "u differs, {backend:?} {opts:?}");
        assert!(
            close(out.reductions[0], change as f64, 1e-5),
            "sum {} vs {change}, {backend:?} {opts:?}",
            out.reductions[0]
        );
        assert_eq!(
            out.reductions[1], lowest as f64,
            "min, {backend:?} {opts:?}"
        );
        // The f64 carrying an f32 reduction holds an f32 exactly.
        assert_eq!(out.reductions[0], out.reductions[0] as f32 as f64);
        check_report(&out, steps);
    }
    true
}

fn check_source(
    shape: [usize; 3],
    src: [usize; 3],
    steps: usize,
    opts: &Options,
    seed: u64,
) -> bool {
    let prog = source_program();
    let (amp, t0) = (0.75, 2i64);
    let wavelet: Vec<f64> = (0..t0 as usize + steps + 1)
        .map(|i| (i as f64 * 0.7).sin())
        .collect();
    let cur0 = random3(shape, seed);
    let nxt0 = random3(shape, seed ^ 3);
    let vel = random3(shape, seed ^ 4);
    let (mut rc, mut rn) = (cur0.clone(), nxt0.clone());
    source_reference(&mut rc, &mut rn, &vel, src, amp, &wavelet, t0, steps);
    for backend in backends(seed) {
        let (mut cur, mut nxt) = (cur0.clone(), nxt0.clone());
        let inv = source_invocation(&mut cur, &mut nxt, &vel, src, amp, &wavelet, t0, steps);
        let out = match run(&prog, inv, &opts.clone().backend(backend)) {
            Ok(out) => out,
            Err(e) if refused(&e) => return false,
            Err(e) => panic!("{backend:?} {opts:?}: {e}"),
        };
        replay(&mut cur, &mut nxt, out.swap_replays);
        assert_eq!(bits3(&cur), bits3(&rc), "cur differs, {backend:?} {opts:?}");
        assert_eq!(bits3(&nxt), bits3(&rn), "nxt differs, {backend:?} {opts:?}");
        check_report(&out, steps);
    }
    true
}

fn scheme_strategy() -> impl Strategy<Value = Scheme> {
    prop::sample::select(Scheme::ALL.to_vec())
}

fn opts(chunks: usize, block_steps: usize, scheme: Scheme) -> Options {
    Options::new()
        .chunks(chunks)
        .block_steps(block_steps)
        .scheme(scheme)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn stencil_equals_serial(
        r in 1usize..=2, extra in (0usize..10, 0usize..3, 0usize..3),
        chunk_frac in 0.0f64..1.0, block_steps in 1usize..=5, scheme in scheme_strategy(),
        steps in 0usize..=6, seed in any::<u64>(),
    ) {
        let shape = [2 * r + 1 + extra.0, 2 * r + 1 + extra.1, 2 * r + 1 + extra.2];
        let chunks = (1 + (chunk_frac * shape[0] as f64) as usize).min(shape[0]);
        check_stencil(shape, r, steps, &opts(chunks, block_steps, scheme), seed);
    }

    #[test]
    fn two_kernels_equal_serial(
        extra in (0usize..12, 0usize..4),
        chunk_frac in 0.0f64..1.0, block_steps in 1usize..=5, scheme in scheme_strategy(),
        steps in 0usize..=6, seed in any::<u64>(),
    ) {
        let shape = [5 + extra.0, 5 + extra.1];
        let chunks = (1 + (chunk_frac * shape[0] as f64) as usize).min(shape[0]);
        check_two_kernel(shape, steps, &opts(chunks, block_steps, scheme), seed);
    }

    #[test]
    fn point_source_equals_serial(
        extra in (0usize..10, 0usize..3, 0usize..3), src_frac in (0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0),
        chunk_frac in 0.0f64..1.0, block_steps in 1usize..=5, scheme in scheme_strategy(),
        steps in 0usize..=6, seed in any::<u64>(),
    ) {
        let shape = [3 + extra.0, 3 + extra.1, 3 + extra.2];
        let src = [
            (src_frac.0 * shape[0] as f64) as usize,
            (src_frac.1 * shape[1] as f64) as usize,
            (src_frac.2 * shape[2] as f64) as usize,
        ];
        let chunks = (1 + (chunk_frac * shape[0] as f64) as usize).min(shape[0]);
        check_source(shape, src, steps, &opts(chunks, block_steps, scheme), seed);
    }
}

#[test]
fn defaults_and_directive_clauses() {
    // No options: default chunks and block steps, region sharing.
    assert!(check_stencil([12, 5, 5], 1, 5, &Options::new(), 1));
    assert!(check_two_kernel([10, 8], 3, &Options::new(), 2));
    assert!(check_source([9, 4, 5], [4, 1, 2], 7, &Options::new(), 3));
    let p = stencil_program(1);
    let o = pacc_runtime::run::plan_options(&p, 3, 2, &Options::new());
    assert_eq!(
        (o.chunks, o.block_steps, o.scheme),
        (3, 2, Scheme::RegionSharing)
    );
    let mut p = stencil_program(1);
    p.default_chunks = Some(2);
    p.default_block_steps = Some(3);
    let o = pacc_runtime::run::plan_options(&p, 30, 20, &Options::new());
    assert_eq!((o.chunks, o.block_steps), (2, 3));
    let o = pacc_runtime::run::plan_options(&p, 30, 20, &Options::new().chunks(5).block_steps(1));
    assert_eq!((o.chunks, o.block_steps), (5, 1));
}

#[test]
fn auto_backend_runs_on_the_cpu_without_cuda() {
    let prog = stencil_program(1);
    let (mut a, mut b) = (random3([6, 4, 4], 1), random3([6, 4, 4], 2));
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 2);
    let out = run(&prog, inv, &Options::new()).unwrap();
    if cfg!(not(feature = "cuda")) {
        assert_eq!(out.report.backend, "cpu");
    }
}

#[test]
fn zero_steps_touch_nothing() {
    let prog = two_kernel_program();
    let u0 = random2_f32([8, 8], 5);
    let w0 = random2_f32([8, 8], 6);
    let (mut u, mut w) = (u0.clone(), w0.clone());
    let inv = two_kernel_invocation(&mut u, &mut w, 0.1, 0, 0, (3.5, -2.0), 0.0);
    let out = run(&prog, inv, &Options::new()).unwrap();
    assert_eq!(out.reductions, vec![3.5, -2.0]);
    assert_eq!(out.swap_replays, 0);
    assert_eq!(out.report.link_bytes(), 0);
    assert_eq!(bits2(&u), bits2(&u0));
    assert_eq!(bits2(&w), bits2(&w0));
    // A point outside the array is not an error when no step runs (the serial loop never
    // evaluates it).
    let prog = source_program();
    let (mut cur, mut nxt, vel) = (
        random3([5, 4, 4], 1),
        random3([5, 4, 4], 2),
        random3([5, 4, 4], 3),
    );
    let wavelet = vec![0.0; 4];
    let mut inv = source_invocation(&mut cur, &mut nxt, &vel, [1, 1, 1], 1.0, &wavelet, 0, 0);
    inv.points[0] = vec![9, 9, 9];
    run(&prog, inv, &Options::new()).unwrap();
}

// ------------------------------------------------------------------------------------------------
// Errors: the right variant, data untouched.

fn stencil_pair(shape_a: [usize; 3], shape_b: [usize; 3]) -> (Array3<f64>, Array3<f64>) {
    (random3(shape_a, 7), random3(shape_b, 8))
}

#[test]
fn shape_mismatch() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([6, 5, 5], [7, 5, 5]);
    let (a0, b0) = (a.clone(), b.clone());
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new()).unwrap_err();
    match &e {
        Error::ShapeMismatch {
            name,
            got,
            first,
            want,
        } => {
            assert_eq!((name.as_str(), first.as_str()), ("b", "a"));
            assert_eq!(
                (got.as_slice(), want.as_slice()),
                (&[7, 5, 5][..], &[6, 5, 5][..])
            );
        }
        e => panic!("wrong error {e:?}"),
    }
    assert!(e.to_string().contains("same shape"));
    assert_eq!((bits3(&a), bits3(&b)), (bits3(&a0), bits3(&b0)));
}

#[test]
fn overlapping_views_are_refused() {
    let prog = stencil_program(1);
    let mut big = random3([9, 5, 5], 9);
    let big0 = big.clone();
    let (va, vb) = overlapping_views(&mut big, 8);
    let inv = stencil_invocation_raw(vec![va, vb], 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new()).unwrap_err();
    assert!(
        matches!(&e, Error::Overlap { a, b } if a == "a" && b == "b"),
        "{e:?}"
    );
    assert_eq!(bits3(&big), bits3(&big0));
    // Adjacent but disjoint views are fine.
    let mut big = random3([8, 5, 5], 9);
    let (mut lo, mut hi) = big.view_mut().split_at(Axis(0), 4);
    let va = host_array_mut(&mut lo, "a").unwrap();
    let vb = host_array_mut(&mut hi, "b").unwrap();
    let inv = stencil_invocation_raw(vec![va, vb], 1, 0.3, 0, 1);
    run(&prog, inv, &Options::new().backend(BackendChoice::Cpu)).unwrap();
}

#[test]
fn non_contiguous_views_are_refused() {
    let mut a = random3([6, 5, 4], 1);
    let e = host_array(&a.t(), "a").unwrap_err();
    assert!(
        matches!(&e, Error::NotContiguous { name } if name == "a"),
        "{e:?}"
    );
    let e = host_array(&a.slice(s![.., .., 0..3]), "a").unwrap_err();
    assert!(matches!(e, Error::NotContiguous { .. }), "{e:?}");
    let e = host_array_mut(&mut a.slice_mut(s![.., ..;2, ..]), "a").unwrap_err();
    assert!(matches!(e, Error::NotContiguous { .. }), "{e:?}");
    assert!(e.to_string().contains("as_standard_layout"));
}

#[test]
fn too_many_chunks() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([6, 5, 5], [6, 5, 5]);
    let (a0, b0) = (a.clone(), b.clone());
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new().chunks(7)).unwrap_err();
    // Refused before planning, naming where the count came from.
    assert!(
        matches!(
            &e,
            Error::Setting { setting: "chunks", value, from, problem, .. }
                if value == "7" && from == "`Options::chunks`"
                    && problem.contains("7 chunks are more than the 6 planes")
        ),
        "{e:?}"
    );
    assert_eq!((bits3(&a), bits3(&b)), (bits3(&a0), bits3(&b0)));
}

#[test]
fn read_only_array_that_is_written() {
    let prog = stencil_program(1);
    let (mut a, b) = stencil_pair([6, 5, 5], [6, 5, 5]);
    let (a0, b0) = (a.clone(), b.clone());
    let arrays = vec![
        host_array_mut(&mut a, "a").unwrap(),
        host_array(&b, "b").unwrap(),
    ];
    let inv = stencil_invocation_raw(arrays, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new()).unwrap_err();
    assert!(
        matches!(&e, Error::ReadOnly { name } if name == "b"),
        "{e:?}"
    );
    // `a` is only read by name, but it trades places with `b` every step.
    let (a, mut b) = (a0.clone(), b0.clone());
    let arrays = vec![
        host_array(&a, "a").unwrap(),
        host_array_mut(&mut b, "b").unwrap(),
    ];
    let inv = stencil_invocation_raw(arrays, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new()).unwrap_err();
    assert!(
        matches!(&e, Error::ReadOnly { name } if name == "a"),
        "{e:?}"
    );
    assert_eq!((bits3(&a), bits3(&b)), (bits3(&a0), bits3(&b0)));
}

#[test]
fn empty_arrays() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([0, 5, 5], [0, 5, 5]);
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new()).unwrap_err();
    assert!(
        matches!(&e, Error::Empty { name, .. } if name == "a"),
        "{e:?}"
    );
}

#[test]
fn point_out_of_bounds() {
    let prog = source_program();
    let shape = [6, 4, 4];
    let (mut cur, mut nxt, vel) = (random3(shape, 1), random3(shape, 2), random3(shape, 3));
    let (c0, n0) = (cur.clone(), nxt.clone());
    let wavelet = vec![0.5; 8];
    for bad in [vec![6, 1, 1], vec![-1, 1, 1], vec![1, 1, 4], vec![1, 1]] {
        let mut inv = source_invocation(&mut cur, &mut nxt, &vel, [1, 1, 1], 1.0, &wavelet, 0, 3);
        inv.points[0] = bad.clone();
        let e = run(&prog, inv, &Options::new()).unwrap_err();
        assert!(
            matches!(&e, Error::PointOutOfBounds { point, index, .. } if point == "pacc_source3d_p0" && *index == bad),
            "{e:?}"
        );
    }
    assert_eq!((bits3(&cur), bits3(&nxt)), (bits3(&c0), bits3(&n0)));
}

#[test]
fn call_disagreeing_with_the_program_is_internal() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([6, 5, 5], [6, 5, 5]);
    let mut inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    inv.scalars[0] = ScalarValue::F32(0.3);
    assert!(matches!(
        run(&prog, inv, &Options::new()),
        Err(Error::Internal(_))
    ));
    let mut inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    inv.arrays.pop();
    assert!(matches!(
        run(&prog, inv, &Options::new()),
        Err(Error::Internal(_))
    ));
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new().backend(BackendChoice::Serial));
    assert!(matches!(e, Err(Error::Internal(_))));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_requested_without_the_feature() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([6, 5, 5], [6, 5, 5]);
    let a0 = a.clone();
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let e = run(&prog, inv, &Options::new().backend(BackendChoice::Cuda)).unwrap_err();
    assert!(
        matches!(&e, Error::NoCuda { reason, .. } if reason.contains("`cuda` feature")),
        "{e:?}"
    );
    assert_eq!(bits3(&a), bits3(&a0));
}

/// Every scheme x chunk count x block depth on a few fixed shapes, with the race check on each
/// plan and the shuffled order actually differing from submission order.
#[test]
fn sweep_schemes_chunks_and_block_steps() {
    use pacc_runtime::plan::{build, race};
    use pacc_runtime::run::plan_options;
    let (mut ran, mut refusals) = (0, 0);
    for scheme in Scheme::ALL {
        for block_steps in 1..=4 {
            for chunks in 1..=9 {
                let o = opts(chunks, block_steps, scheme);
                let seed = (chunks * 31 + block_steps) as u64;
                let steps = 1 + (chunks + block_steps) % 5;
                for ok in [
                    check_stencil([9, 4, 5], 1, steps, &o, seed),
                    check_stencil([9, 6, 5], 2, steps, &o, seed),
                    check_two_kernel([9, 6], steps, &o, seed),
                    check_source([9, 4, 4], [chunks - 1, 2, 1], steps, &o, seed),
                ] {
                    if ok {
                        ran += 1
                    } else {
                        refusals += 1
                    }
                }
                let prog = stencil_program(1);
                if let Ok(plan) = build(
                    &prog,
                    &[9, 4, 5],
                    steps,
                    &[],
                    &plan_options(&prog, 9, steps, &o),
                ) {
                    race::check(&prog, &plan).unwrap();
                    if plan.chunks > 1 {
                        let sub: Vec<usize> = (0..plan.ops.len()).collect();
                        assert!((0..4)
                            .any(|s| pacc_runtime::exec::cpu::shuffled_order(&plan.ops, s) != sub));
                    }
                }
            }
        }
    }
    assert!(refusals * 4 < ran, "{refusals} refusals, {ran} runs");
}

/// Settings honoured otherwise than they read say so in the report: more block steps than the
/// call has steps, and a trace asked of the CPU backend (which writes none).
#[test]
fn block_steps_beyond_the_steps_and_a_cpu_trace_are_noted() {
    let prog = stencil_program(1);
    let (mut a, mut b) = stencil_pair([9, 5, 5], [9, 5, 5]);
    let trace = std::env::temp_dir().join(format!("pacc-cpu-trace-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&trace);
    let opts = Options::new()
        .backend(BackendChoice::Cpu)
        .block_steps(1_000_000)
        .trace(&trace);
    let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 3);
    let out = run(&prog, inv, &opts).unwrap();
    let notes = out.report.adjustments.join("\n");
    assert!(
        notes.contains(
            "block_steps 1000000 (`Options::block_steps`) is more than the call's 3 steps"
        ),
        "{notes}"
    );
    assert!(notes.contains("no trace written to"), "{notes}");
    assert!(!trace.exists(), "the CPU backend wrote a trace");
    assert_eq!(out.report.block_steps, 3);
}
