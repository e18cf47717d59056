//! The tuner's choice for each kind of run, from assumed H100-like rates (no device): what a
//! call with no options would plan. The rates are those the H100 measured on 2026-11-26 (link
//! about 54 GB/s each way; kernels: the acoustic step 130 Gpt/s, Himeno's Jacobi 43 Gpt/s), and
//! each expectation is what the same day's grid measured as best
//! (`benches/results/2026-11-26-h100-default-grid`).

use pacc::runtime::plan::Scheme;
use pacc::runtime::tune::{choose_scheme, LinkRates, TuneChoice, TuneInputs, AUTO_SCHEMES};
use pacc::runtime::Program;

fn inputs(kernel_rates: Vec<f64>) -> TuneInputs {
    let link = LinkRates {
        htod: 54e9,
        dtoh: 54e9,
        both: 75e9,
        bytes: 256 << 20,
    };
    TuneInputs::new(link, kernel_rates, 78 << 30)
}

fn pick(program: &Program, shape: [usize; 3], steps: usize, rates: Vec<f64>) -> TuneChoice {
    choose_scheme(program, &shape, steps, &inputs(rates), &AUTO_SCHEMES).unwrap()
}

fn array_bytes(program: &Program, shape: [usize; 3]) -> u64 {
    (program.arrays.len() * shape.iter().product::<usize>() * 4) as u64
}

#[test]
fn in_core_short_runs_pipeline_and_long_runs_stay_resident() {
    let sponge = pacc::models::acoustic::propagate_sponge::program();
    let shape = [820, 820, 820];
    assert!(array_bytes(sponge, shape) < 78 << 30, "the arrays fit");
    // 144 steps: the resident run's upload and download are not hidden; the H100 ran the
    // wavefront at 0.00506 s/step and the resident run at 0.00602.
    let c = pick(sponge, shape, 144, vec![1.3e11]);
    assert_eq!(c.scheme, Scheme::Wavefront, "{}", c.summary());
    assert!(c.chunks > 1 && c.block_steps < 144, "{}", c.summary());
    // 18000 steps: one upload for all of them; every point computed once, resident.
    let c = pick(sponge, shape, 18000, vec![1.3e11]);
    assert_eq!((c.chunks, c.block_steps), (1, 18000), "{}", c.summary());
}

#[test]
fn out_of_core_runs_take_the_wavefront_within_device_memory() {
    let sponge = pacc::models::acoustic::propagate_sponge::program();
    let shape = [1800, 1800, 1800];
    let c = pick(sponge, shape, 144, vec![1.3e11]);
    assert!(array_bytes(sponge, shape) > 78 << 30, "out of core");
    assert_eq!(c.scheme, Scheme::Wavefront, "{}", c.summary());
    assert!(c.device_bytes <= 78 << 30, "{}", c.summary());
    assert!(
        c.block_steps >= 16,
        "deep blocks amortise the link: {}",
        c.summary()
    );

    let himeno = pacc::models::himeno::jacobi::program();
    let c = pick(himeno, [1200, 1200, 1200], 48, vec![4.3e10, 1.5e11]);
    assert_eq!(c.scheme, Scheme::Wavefront, "{}", c.summary());
    assert!(
        c.chunks > 1 && c.device_bytes <= 78 << 30,
        "{}",
        c.summary()
    );
}

#[test]
fn a_one_shot_call_blocks_all_its_steps_at_once() {
    // 8 steps on 96 GB: every array crosses the link once each way, so the block holds all
    // the steps (the H100's best of the grid was k = 8, the default ran 0.279 s/step).
    let propagate = pacc::models::acoustic::propagate::program();
    let shape = [2000, 2000, 2000];
    let c = pick(propagate, shape, 8, vec![1.58e11]);
    assert!(array_bytes(propagate, shape) > 78 << 30, "out of core");
    assert_eq!(c.block_steps, 8, "{}", c.summary());
    assert!(c.chunks > 1, "{}", c.summary());
    // The arrays not page-locked yet: registering 96 GB (at 20 GB/s) outlasts the pass over
    // the link, and the prediction waits for it; the plan stays the same.
    let mut t = inputs(vec![1.58e11]);
    t.unlocked_bytes = array_bytes(propagate, shape);
    let u = choose_scheme(propagate, &shape, 8, &t, &AUTO_SCHEMES).unwrap();
    assert_eq!((u.chunks, u.block_steps), (c.chunks, c.block_steps));
    assert!(u.page_lock_seconds > 4.5, "{}", u.summary());
    let waited = u.predicted_seconds - c.predicted_seconds;
    assert!(
        waited > 1.0 && (waited - u.page_lock_exposed).abs() < 1e-9,
        "{}",
        u.summary()
    );
}

/// Out of core on the H200 (2026-11-28, `benches/results/2026-11-28-h200-sweeps`, call 1, 144
/// steps planned as on an 80 GB card): blocks of 48 steps (three sweeps over the link) ran at
/// 0.0448, 0.0447 and 0.0427 s/step (`propagate_sponge` 1800^3, `propagate` 1970^3, Himeno
/// 1200^3); the best of blocks of 72 or 144 at 0.0395, 0.0421 and 0.0318. With that day's
/// measured rates the tuner picks one of the faster.
#[test]
fn out_of_core_runs_of_144_steps_cross_the_link_once_or_twice() {
    let sponge = pacc::models::acoustic::propagate_sponge::program();
    let propagate = pacc::models::acoustic::propagate::program();
    let himeno = pacc::models::himeno::jacobi::program();
    for (program, shape, rates, both) in [
        (sponge, [1800, 1800, 1800], vec![164.0e9], 99.2e9),
        (propagate, [1970, 1970, 1970], vec![199.1e9], 101.3e9),
        (himeno, [1200, 1200, 1200], vec![67.8e9, 235.5e9], 101.5e9),
    ] {
        let link = LinkRates {
            htod: 55.4e9,
            dtoh: 55.4e9,
            both,
            bytes: 256 << 20,
        };
        let t = TuneInputs::new(link, rates, 80_000_000_000);
        let c = choose_scheme(program, &shape, 144, &t, &AUTO_SCHEMES).unwrap();
        assert!(array_bytes(program, shape) > 80_000_000_000, "out of core");
        assert_eq!(c.scheme, Scheme::Wavefront, "{}", c.summary());
        assert!(c.chunks > 1 && c.block_steps >= 72, "{}", c.summary());
        assert!(c.device_bytes <= 80_000_000_000, "{}", c.summary());
    }
}
