//! What each rank runs for one launch of the driver (see main.rs).

use crate::random::{self, Case};
use ndarray::{Array2, Array3};
use pacc::models::{acoustic, himeno, laplace2d};
use pacc::runtime::dist::tune::{self as dtune, DistRates};
use pacc::runtime::dist::{self, mpi, Communicator, Slab};
use pacc::runtime::fault::{self, Site};
use pacc::runtime::host::host_array_mut;
use pacc::runtime::rng::SplitMix64;
use pacc::runtime::tune::{LinkRates, TuneInputs};
use pacc::runtime::{BackendChoice, DistError, Error, HaloMode, HostArray, Options};
use std::path::Path;

pub const NAMES: &[&str] = &[
    "equal", "tuned", "errors", "fail", "kill", "resume", "relayout", "gpu", "gpu-fail", "lost",
    "options",
];

pub fn run(case: &str, args: &[String]) {
    // A failed check exits at once: unwinding would finalize MPI, which waits for the ranks
    // that are still running, and mpirun would not notice the failure until they time out.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::exit(101);
    }));
    let universe = mpi::initialize().expect("MPI initializes once");
    let world = universe.world();
    let dir = args.first().map(Path::new);
    match case {
        "equal" => equal(&world, args.first().map(String::as_str) == Some("device")),
        "tuned" => tuned(&world),
        "errors" => errors(&world),
        "fail" => fail(&world),
        "kill" => kill(&world, dir.expect("a directory"), device(args)),
        "resume" => resume(&world, dir.expect("a directory"), device(args)),
        "relayout" => relayout(&world, dir.expect("a directory")),
        "gpu" => crate::gpu::equal(&world),
        "gpu-fail" => crate::gpu::fail(&world),
        // lost DIR stop|kill VICTIM [device]
        "lost" => crate::faults::lost(
            &world,
            dir.expect("a directory"),
            &args[1],
            args[2].parse().expect("the victim's rank"),
            device(args),
        ),
        "options" => crate::faults::options(&world, args[0].parse().expect("the bad rank")),
        _ => unreachable!(),
    }
    if rank(&world) == 0 {
        println!("{case}: ok on {} ranks", size(&world));
    }
}

/// Whether the launch's last argument asks for resident runs (`PACC_HALO=device`).
fn device(args: &[String]) -> HaloMode {
    match args.last().map(String::as_str) {
        Some("device") => HaloMode::Device,
        _ => HaloMode::Auto,
    }
}

pub(crate) fn rank(w: &Communicator) -> usize {
    use mpi::traits::Communicator as _;
    w.rank() as usize
}

pub(crate) fn size(w: &Communicator) -> usize {
    use mpi::traits::Communicator as _;
    w.size() as usize
}

fn cpu(chunks: usize, block_steps: usize) -> Options {
    Options {
        backend: BackendChoice::Cpu,
        chunks: Some(chunks),
        block_steps: Some(block_steps),
        ..Options::default()
    }
}

pub(crate) fn bits64(a: &Array3<f64>) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

pub(crate) fn bits32<'a>(a: impl IntoIterator<Item = &'a f32>) -> Vec<u32> {
    a.into_iter().map(|v| v.to_bits()).collect()
}

pub(crate) fn random3(shape: [usize; 3], seed: u64) -> Array3<f64> {
    let mut g = SplitMix64(seed);
    Array3::from_shape_fn((shape[0], shape[1], shape[2]), |_| g.unit() - 0.5)
}

pub(crate) fn close(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

// ---- equal: random programs and the examples' functions equal serial ----------------------

/// With `device`, every run keeps its slab in the CPU backend's buffers and exchanges halos
/// inside the run (`PACC_HALO=device`): the resident plans with their exchanges.
fn equal(w: &Communicator, device: bool) {
    let n = size(w);
    let mut uneven = 0;
    let halo = if device {
        HaloMode::Device
    } else {
        HaloMode::Auto
    };
    let cpu = |chunks, k| cpu(chunks, k).halo(halo);
    for seed in 0..14u64 {
        let mut c = random::case(seed * 7919 + n as u64, 4);
        let mut g = SplitMix64(seed ^ 0x5eed);
        let k = 1 + g.below(3) as usize;
        let mut opts = cpu(1 + g.below(3) as usize, k);
        if g.below(3) == 0 {
            opts.backend = BackendChoice::Shuffled(seed);
        }
        let (b, f) = dist::reach_per_step(&c.program);
        let need = n * (k * b.max(f) + 1);
        c.shape[0] = c.shape[0].max(need + (seed as usize % 3));
        uneven += usize::from(c.shape[0] % n != 0);
        random_equal(w, &c, &opts, seed);
    }
    assert!(n == 1 || uneven > 0, "no uneven split was exercised");
    acoustic_equal(w, 41 + n, &cpu(2, 2));
    acoustic_equal(w, 37 + 5 * n, &cpu(1, 3));
    himeno_equal(w, 23 + n, &cpu(2, 2));
    laplace_equal(w, 30 + n, &cpu(3, 4));
}

/// Runs `c` distributed on windows of the same random start as the serial loop; compares
/// every array bit for bit and the reductions within summation-order rounding.
pub(crate) fn random_equal(w: &Communicator, c: &Case, opts: &Options, seed: u64) {
    let narrays = c.program.arrays.len();
    let global: Vec<Array3<f64>> = (0..narrays)
        .map(|a| random3(c.shape, seed * 31 + a as u64))
        .collect();
    let mut want = global.clone();
    let hs: Vec<HostArray> = want
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    let want_red = random::serial(c, &hs);
    let slab = dist::slab(w, &c.program, &c.shape, c.steps, opts).expect("a split");
    let mut local: Vec<Array3<f64>> = global.iter().map(|g| dist::window(g, &slab)).collect();
    let hs: Vec<HostArray> = local
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    let inv = random::invocation(c, hs, None);
    let out = dist::run(w, &slab, &c.program, inv, opts)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{c:?}"));
    for (a, l) in local.iter().enumerate() {
        if let Some(got) = dist::gather(w, &slab, l) {
            assert!(
                bits64(&got) == bits64(&want[a]),
                "seed {seed}: array {a} differs from serial ({:?}, slab {slab:?})\n{c:?}",
                opts
            );
        }
    }
    for (r, (&got, &want)) in out.reductions.iter().zip(&want_red).enumerate() {
        assert!(
            close(got, want),
            "seed {seed}: reduction {r} {got} != {want}"
        );
    }
}

pub(crate) fn acoustic_equal(w: &Communicator, nz: usize, opts: &Options) {
    use acoustic::propagate;
    let (ny, nx, steps) = (13, 12, 9);
    let shape = (nz, ny, nx);
    let mut g = SplitMix64(nz as u64);
    let vel = Array3::from_shape_fn(shape, |_| (0.05 + 0.1 * g.unit()) as f32);
    let prev = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let cur = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let wavelet = acoustic::ricker(15.0, 0.001, steps);
    let (sz, sy, sx, dx2) = (nz / 3, 6, 5, 100.0f32);
    let (mut sp, mut sc) = (prev.clone(), cur.clone());
    propagate::serial(&mut sp, &mut sc, &vel, &wavelet, sz, sy, sx, dx2, steps);
    let slab = dist::slab(w, propagate::program(), &[nz, ny, nx], steps, opts).unwrap();
    let (mut lp, mut lc, lv) = (
        dist::window(&prev, &slab),
        dist::window(&cur, &slab),
        dist::window(&vel, &slab),
    );
    let ((), report) = propagate::run_distributed(
        &mut lp, &mut lc, &lv, &wavelet, sz, sy, sx, dx2, steps, w, &slab, opts,
    )
    .unwrap();
    assert!(report.adjustments.iter().any(|a| a.starts_with("rank 0:")));
    if opts.halo == HaloMode::Device {
        let notes = report.adjustments.join("\n");
        assert!(notes.contains("halos through MPI every"), "{notes}");
        assert!(notes.contains("stepping on the device"), "{notes}");
    }
    for (name, l, s) in [("prev", &lp, &sp), ("cur", &lc, &sc)] {
        if let Some(got) = dist::gather(w, &slab, l) {
            assert!(
                bits32(&got) == bits32(s),
                "acoustic nz {nz}: `{name}` differs from serial"
            );
        }
    }
}

pub(crate) fn himeno_equal(w: &Communicator, ni: usize, opts: &Options) {
    let shape = (ni, 9, 10);
    let mut want = himeno::Himeno::new(shape);
    let h = himeno::Himeno::new(shape);
    let gosa = want.serial(4);
    let slab = dist::slab(w, himeno::jacobi::program(), &[ni, 9, 10], 4, opts).unwrap();
    let win = |a: &Array3<f32>| dist::window(a, &slab);
    let mut p = win(&h.p);
    let mut wrk2 = win(&h.wrk2);
    let (got, _) = himeno::jacobi::run_distributed(
        &mut p,
        &win(&h.a0),
        &win(&h.a1),
        &win(&h.a2),
        &win(&h.a3),
        &win(&h.b0),
        &win(&h.b1),
        &win(&h.b2),
        &win(&h.c0),
        &win(&h.c1),
        &win(&h.c2),
        &win(&h.bnd),
        &win(&h.wrk1),
        &mut wrk2,
        himeno::OMEGA,
        4,
        w,
        &slab,
        opts,
    )
    .unwrap();
    let rel = ((got - gosa) / gosa).abs();
    assert!(rel < 1e-5, "himeno gosa {got} vs serial {gosa}");
    if let Some(p) = dist::gather(w, &slab, &p) {
        assert!(
            bits32(&p) == bits32(&want.p),
            "himeno: `p` differs from serial"
        );
    }
}

pub(crate) fn laplace_equal(w: &Communicator, ny: usize, opts: &Options) {
    let (a, b) = laplace2d::init(ny, 17, 1.0);
    let (mut sa, mut sb) = (a.clone(), b.clone());
    laplace2d::jacobi::serial(&mut sa, &mut sb, 11);
    let slab = dist::slab(w, laplace2d::jacobi::program(), &[ny, 17], 11, opts).unwrap();
    let (mut la, mut lb): (Array2<f32>, Array2<f32>) =
        (dist::window(&a, &slab), dist::window(&b, &slab));
    laplace2d::jacobi::run_distributed(&mut la, &mut lb, 11, w, &slab, opts).unwrap();
    for (l, s) in [(&la, &sa), (&lb, &sb)] {
        if let Some(got) = dist::gather(w, &slab, l) {
            assert!(bits32(&got) == bits32(s), "laplace2d differs from serial");
        }
    }
}

// ---- tuned: the distributed tuner's depth, the same on every rank, results bit-exact -------

/// Assumed rates for rank `r`: a slow link (every block passes the window over it) and kernels
/// that get slower with the rank, so the ranks would not all pick alike on their own.
fn assumed(r: usize) -> TuneInputs {
    let link = LinkRates {
        htod: 2e9,
        dtoh: 2e9,
        both: 3e9,
        bytes: 1 << 20,
    };
    TuneInputs::new(link, vec![2e9 / (1 + r) as f64], 1 << 30)
}

fn tuned(w: &Communicator) {
    use mpi::traits::CommunicatorCollectives as _;
    let (n, me) = (size(w), rank(w));
    let program = acoustic::propagate::program();
    let (nz, steps) = (40 * n + 3, 20);
    let opts = Options {
        backend: BackendChoice::Cpu,
        chunks: Some(2),
        ..Options::default()
    };
    let rates = DistRates {
        call_overhead: 0.2,
        ..DistRates::default()
    };
    let global = [nz, 13, 12];
    let slab = dist::slab_tuned(
        w,
        program,
        &global,
        steps,
        &opts,
        Some(&assumed(me)),
        &rates,
    )
    .expect("a split");
    // Every rank has the same depth: the one the model gives the slowest rank the least time,
    // computed here for all ranks from the same assumed rates.
    let mut all = vec![0u64; n];
    w.all_gather_into(&(slab.block_steps as u64), &mut all[..]);
    assert!(all.iter().all(|&k| k == all[0]), "ranks disagree: {all:?}");
    let ks = pacc::runtime::tune::block_step_candidates(steps);
    let costs: Vec<Vec<f64>> = (0..n)
        .map(|r| {
            let c = dtune::rank_costs(
                program,
                &global,
                steps,
                n,
                r,
                &opts,
                &assumed(r),
                &rates,
                &ks,
            );
            c.iter().map(|c| c.seconds).collect()
        })
        .collect();
    let slowest: Vec<(usize, f64)> = (ks.iter().enumerate())
        .map(|(i, &k)| (k, costs.iter().map(|c| c[i]).fold(0.0, f64::max)))
        .collect();
    assert_eq!(
        Some(slab.block_steps),
        dtune::agree(&slowest),
        "{slowest:?}"
    );
    assert!(slab
        .tuner
        .as_ref()
        .is_some_and(|t| t.starts_with("distributed tuner:")));
    if n > 1 {
        assert!(
            slab.block_steps > 4,
            "costly blocks call for deep ones: {slowest:?}"
        );
        assert_eq!(
            slab.halo.0,
            4 * slab.block_steps,
            "the halo is the depth times the reach"
        );
    }
    acoustic_on(w, &slab, &opts);
    // A rank without inputs leaves every rank at the default depth, untuned.
    let none = (me != 0).then(|| assumed(me));
    let slab = dist::slab_tuned(w, program, &global, steps, &opts, none.as_ref(), &rates)
        .expect("a split");
    assert_eq!(slab.block_steps, pacc::runtime::config::DEFAULT_BLOCK_STEPS);
    assert!(slab.tuner.is_none());
}

/// The acoustic propagator on `slab` (nz x 13 x 12, 20 steps) against serial, bit for bit.
fn acoustic_on(w: &Communicator, slab: &Slab, opts: &Options) {
    use acoustic::propagate;
    let (nz, ny, nx, steps) = (slab.global[0], 13, 12, 20);
    let shape = (nz, ny, nx);
    let mut g = SplitMix64(nz as u64 + 7);
    let vel = Array3::from_shape_fn(shape, |_| (0.05 + 0.1 * g.unit()) as f32);
    let prev = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let cur = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let wavelet = acoustic::ricker(15.0, 0.001, steps);
    let (sz, sy, sx, dx2) = (nz / 3, 6, 5, 100.0f32);
    let (mut sp, mut sc) = (prev.clone(), cur.clone());
    propagate::serial(&mut sp, &mut sc, &vel, &wavelet, sz, sy, sx, dx2, steps);
    let (mut lp, mut lc, lv) = (
        dist::window(&prev, slab),
        dist::window(&cur, slab),
        dist::window(&vel, slab),
    );
    let ((), report) = propagate::run_distributed(
        &mut lp, &mut lc, &lv, &wavelet, sz, sy, sx, dx2, steps, w, slab, opts,
    )
    .unwrap();
    assert!(
        report
            .adjustments
            .iter()
            .any(|a| a.starts_with("distributed tuner:")),
        "{:?}",
        report.adjustments
    );
    for (name, l, s) in [("prev", &lp, &sp), ("cur", &lc, &sc)] {
        if let Some(got) = dist::gather(w, slab, l) {
            assert!(
                bits32(&got) == bits32(s),
                "tuned acoustic: `{name}` differs from serial"
            );
        }
    }
}

// ---- errors: typed errors on every rank, found before any data is touched ------------------

pub(crate) fn dist_err(e: &Error) -> &DistError {
    match e {
        Error::Dist(d) => d,
        other => panic!("expected a distributed-run error, got: {other}"),
    }
}

/// Relaying halos through the GPUs needs them: on the CPU backend a typed error on every rank,
/// which names the mode and why.
fn relay_needs_gpus(w: &Communicator, nz: usize) {
    let program = acoustic::propagate::program();
    let opts = cpu(1, 1).halo(HaloMode::Relay);
    let e = dist::slab(w, program, &[nz, 12, 12], 6, &opts).unwrap_err();
    match dist_err(&e) {
        DistError::DeviceHalo { mode, why, .. } => {
            assert_eq!(*mode, "relay");
            assert!(why.contains("CPU backend"), "{e}");
        }
        other => panic!("expected DeviceHalo, got {other}"),
    }
}

fn errors(w: &Communicator) {
    let n = size(w);
    let me = rank(w);
    let program = acoustic::propagate::program();
    // More ranks than planes.
    let e = dist::split(program, &[n - 1, 12, 12], 4, n, &cpu(1, 1)).unwrap_err();
    assert!(
        matches!(dist_err(&e), DistError::TooManyRanks { .. }),
        "{e}"
    );
    // A slab thinner than the halo: 4 planes of reach per step, 3 steps per block.
    let nz = 10 * n;
    let e = dist::split(program, &[nz, 12, 12], 6, n, &cpu(1, 3)).unwrap_err();
    match dist_err(&e) {
        DistError::SlabThinnerThanHalo { planes, halo, .. } => assert!(planes < halo),
        other => panic!("expected SlabThinnerThanHalo, got {other}"),
    }
    relay_needs_gpus(w, nz);
    // One block step fits: the same domain splits.
    let slabs = dist::split(program, &[nz, 12, 12], 6, n, &cpu(1, 1)).unwrap();
    assert_eq!(slabs.iter().map(|s| s.owned.len()).sum::<usize>(), nz);

    let opts = cpu(1, 1);
    let wavelet = vec![0.0f32; 6];
    let call = |slab: &Slab, dx2: f32, extra: usize| {
        let mut local = slab.local_shape();
        local[0] += extra;
        let l = || Array3::<f32>::zeros((local[0], local[1], local[2]));
        let (mut p, mut c, v) = (l(), l(), l());
        acoustic::propagate::run_distributed(
            &mut p,
            &mut c,
            &v,
            &wavelet,
            nz / 2,
            6,
            6,
            dx2,
            6,
            w,
            slab,
            &opts,
        )
        .map(|_| ())
    };
    let mine = dist::slab(w, program, &[nz, 12, 12], 6, &opts).unwrap();
    call(&mine, 1.0, 0).expect("the well-formed call runs");
    if n > 1 {
        // Another rank's slab: every rank refuses (no rank waits for the others).
        let other = &slabs[(me + 1) % n];
        let e = call(other, 1.0, 0).unwrap_err();
        assert!(
            matches!(
                dist_err(&e),
                DistError::WrongSlab { .. } | DistError::RankFailed { .. }
            ),
            "{e}"
        );
        // Rank 1's arrays have the wrong shape.
        let e = call(&mine, 1.0, usize::from(me == 1)).unwrap_err();
        match (me, dist_err(&e)) {
            (1, DistError::SlabShape { .. }) => {}
            (_, DistError::RankFailed { rank: 1, message }) => {
                assert!(message.contains("slab with halos"), "{message}")
            }
            (_, other) => panic!("unexpected {other}"),
        }
        // The ranks disagree on a scalar.
        let e = call(&mine, 1.0 + me as f32, 0).unwrap_err();
        assert!(matches!(dist_err(&e), DistError::Disagree { .. }), "{e}");
    }
    // Fused kernels are refused, not ignored.
    let fused = Options {
        fuse: Some(2),
        ..opts.clone()
    };
    let (mut p, mut c, v) = (
        Array3::<f32>::zeros(dims(&mine)),
        Array3::<f32>::zeros(dims(&mine)),
        Array3::<f32>::zeros(dims(&mine)),
    );
    let e = acoustic::propagate::run_distributed(
        &mut p,
        &mut c,
        &v,
        &wavelet,
        nz / 2,
        6,
        6,
        1.0,
        6,
        w,
        &mine,
        &fused,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Setting {
                setting: "fuse",
                ..
            }
        ),
        "{e}"
    );
    // The serial backend does not run distributed.
    let serial = Options {
        backend: BackendChoice::Serial,
        ..opts.clone()
    };
    let (mut p, mut c, v) = (
        Array3::<f32>::zeros(dims(&mine)),
        Array3::<f32>::zeros(dims(&mine)),
        Array3::<f32>::zeros(dims(&mine)),
    );
    let e = acoustic::propagate::run_distributed(
        &mut p,
        &mut c,
        &v,
        &wavelet,
        nz / 2,
        6,
        6,
        1.0,
        6,
        w,
        &mine,
        &serial,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Option(_)), "{e}");
}

fn dims(s: &Slab) -> (usize, usize, usize) {
    let l = s.local_shape();
    (l[0], l[1], l[2])
}

// ---- fail: one rank's error reaches every rank ---------------------------------------------

fn fail(w: &Communicator) {
    let me = rank(w);
    let n = size(w);
    let c = random::case(12, 12 * n);
    let opts = cpu(2, 1);
    let global: Vec<Array3<f64>> = (0..c.program.arrays.len())
        .map(|a| random3(c.shape, a as u64))
        .collect();
    let slab = dist::slab(w, &c.program, &c.shape, c.steps.max(3), &opts).unwrap();
    let mut c = c;
    c.steps = c.steps.max(3);
    let mut local: Vec<Array3<f64>> = global.iter().map(|g| dist::window(g, &slab)).collect();
    let hs: Vec<HostArray> = local
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    let guard = (me == 1 % n).then(|| fault::inject(Site::HtoD, 2));
    let e = dist::run(
        w,
        &slab,
        &c.program,
        random::invocation(&c, hs, None),
        &opts,
    )
    .unwrap_err();
    drop(guard);
    let text = e.to_string();
    assert!(text.contains("injected fault"), "rank {me}: {text}");
    if me != 1 % n {
        assert!(
            matches!(dist_err(&e), DistError::RankFailed { rank, .. } if *rank == 1 % n),
            "rank {me}: {e}"
        );
    }
}

// ---- kill / resume / relayout: checkpoints survive a rank's death ---------------------------

const KILL_STEPS: usize = 12;

fn checkpointed(
    w: &Communicator,
    dir: &Path,
    resume: bool,
    hook: Option<random::Hook>,
    halo: HaloMode,
) -> Result<Vec<f64>, Error> {
    let n = size(w);
    let mut c = random::case(4242, 8 * n + 20);
    c.steps = KILL_STEPS;
    let mut opts = cpu(2, 2).checkpoint(dir, 1).halo(halo);
    if resume {
        opts = opts.resume(dir);
    }
    let global: Vec<Array3<f64>> = (0..c.program.arrays.len())
        .map(|a| random3(c.shape, 7 + a as u64))
        .collect();
    let slab = dist::slab(w, &c.program, &c.shape, c.steps, &opts)?;
    let mut local: Vec<Array3<f64>> = global.iter().map(|g| dist::window(g, &slab)).collect();
    let hs: Vec<HostArray> = local
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    let out = dist::run(
        w,
        &slab,
        &c.program,
        random::invocation(&c, hs, hook),
        &opts,
    )?;
    // The uninterrupted serial result.
    let mut want = global.clone();
    let hs: Vec<HostArray> = want
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    let want_red = random::serial(&c, &hs);
    for (a, l) in local.iter().enumerate() {
        if let Some(got) = dist::gather(w, &slab, l) {
            assert!(
                bits64(&got) == bits64(&want[a]),
                "array {a} differs after resuming"
            );
        }
    }
    for (&g, &s) in out.reductions.iter().zip(&want_red) {
        assert!(close(g, s), "reduction {g} != {s} after resuming");
    }
    Ok(out.reductions)
}

fn kill(w: &Communicator, dir: &Path, halo: HaloMode) {
    let me = rank(w);
    // Rank 1 dies (abort: no unwinding, no MPI_Finalize) in step 7 of 12, after the
    // checkpoints of steps 2, 4 and 6.
    let hook: random::Hook = std::sync::Arc::new(move |t, _| {
        if me == 1 && t == 3 + 7 {
            std::process::abort();
        }
    });
    let _ = checkpointed(w, dir, false, Some(hook), halo);
    panic!("rank {me}: the run should not have finished");
}

fn resume(w: &Communicator, dir: &Path, halo: HaloMode) {
    let committed = std::fs::read_to_string(dir.join("DIST.json")).expect("a committed checkpoint");
    let v: serde_json::Value = serde_json::from_str(&committed).unwrap();
    let step = v["step"].as_u64().unwrap();
    assert!(
        step > 0 && (step as usize) < KILL_STEPS,
        "committed step {step}"
    );
    checkpointed(w, dir, true, None, halo).unwrap_or_else(|e| panic!("resuming: {e}"));
}

fn relayout(w: &Communicator, dir: &Path) {
    let e = checkpointed(w, dir, true, None, HaloMode::Auto).unwrap_err();
    // Every rank finds the layout wrong by itself.
    assert!(
        matches!(dist_err(&e), DistError::CheckpointLayout { .. }),
        "resuming with another rank count: {e}"
    );
}
