//! Distributed runs on GPUs (launched by the driver only with `--include-ignored` or
//! `--ignored`, on a machine with CUDA devices): bit-exact against serial with the slabs
//! resident on their GPUs and the halos through NCCL, and with the host exchange; a failing
//! rank, resident or relaying its halos through the GPUs, makes every rank return an error.

use crate::cases::{acoustic_equal, bits32, himeno_equal, laplace_equal, rank, size};
use ndarray::Array3;
use pacc::models::acoustic::{self, propagate_sponge};
use pacc::runtime::dist::{self, Communicator, Slab};
use pacc::runtime::fault::{self, Site};
use pacc::runtime::rng::SplitMix64;
use pacc::runtime::{BackendChoice, DistError, Error, HaloMode, Options};

fn cuda(k: usize, halo: HaloMode) -> Options {
    Options {
        backend: BackendChoice::Cuda,
        block_steps: Some(k),
        ..Options::default()
    }
    .halo(halo)
}

fn devices() -> usize {
    pacc::runtime::exec::cuda::available()
        .unwrap_or_else(|e| panic!("this case needs CUDA devices ({e}); run it on the GPU machine"))
        .count
}

/// Whether the placement is the one expected: resident through NCCL when every rank has a GPU
/// of its own, else the host exchange with its reason.
fn placed(slab: &Slab, halo: HaloMode, ranks: usize) {
    let note = slab.tuner.clone().unwrap_or_default();
    let own_gpu = ranks <= devices();
    match halo {
        HaloMode::Host => assert!(!slab.resident && !slab.relay, "{note}"),
        HaloMode::Relay => {
            assert!(!slab.resident && slab.relay, "{note}");
            assert!(note.contains("relayed GPU to GPU through NCCL"), "{note}");
        }
        _ if own_gpu => {
            assert!(slab.resident, "{note}");
            assert!(note.contains("GPU to GPU through NCCL"), "{note}");
        }
        _ => {
            assert!(!slab.resident, "{note}");
            assert!(note.contains("share each GPU"), "{note}");
        }
    }
}

pub fn equal(w: &Communicator) {
    let n = size(w);
    let own_gpu = n <= devices();
    for halo in [HaloMode::Auto, HaloMode::Relay, HaloMode::Host] {
        for k in [1, 3] {
            let opts = cuda(k, halo);
            // Where a hang stops shows in the launch's output (the driver prints it).
            eprintln!("rank {}: halo {halo:?}, block steps {k}", rank(w));
            let program = acoustic::propagate::program();
            let nz = 29 * n + 12;
            let slab = dist::slab(w, program, &[nz, 13, 12], 9, &opts);
            if halo == HaloMode::Relay && !own_gpu {
                // NCCL cannot relay between ranks sharing a GPU: a typed error on every rank.
                let e = slab.unwrap_err();
                assert!(e.to_string().contains("PACC_HALO=relay needs"), "{e}");
                continue;
            }
            let slab = slab.unwrap();
            placed(&slab, halo, n);
            let step = |what: &str| eprintln!("rank {}: halo {halo:?}, k {k}: {what}", rank(w));
            step("acoustic");
            acoustic_equal(w, nz, &opts);
            step("sponge");
            sponge_equal(w, 31 * n + 7, &opts, halo);
            step("himeno");
            himeno_equal(w, 17 * n + 5, &opts);
            step("laplace2d");
            laplace_equal(w, 23 * n + 3, &opts);
            // Out of core on every rank (host path): the window in three chunks.
            if halo != HaloMode::Auto {
                let chunked = Options {
                    chunks: Some(3),
                    ..opts.clone()
                };
                acoustic_equal(w, nz, &chunked);
            }
        }
    }
}

/// `propagate_sponge` on an odd, unevenly split domain, 11 steps, against serial.
fn sponge_equal(w: &Communicator, nz: usize, opts: &Options, halo: HaloMode) {
    let (ny, nx, steps) = (19, 21, 11);
    let shape = (nz, ny, nx);
    let mut g = SplitMix64(nz as u64 * 3);
    let vel = Array3::from_shape_fn(shape, |_| (0.05 + 0.1 * g.unit()) as f32);
    let prev = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let cur = Array3::from_shape_fn(shape, |_| (g.unit() - 0.5) as f32);
    let damp = acoustic::sponge(shape, 5, 0.05);
    let wavelet = acoustic::ricker(15.0, 0.001, steps);
    let (sz, sy, sx, dx2) = (nz / 2 + 1, 9, 10, 100.0f32);
    let (mut sp, mut sc) = (prev.clone(), cur.clone());
    propagate_sponge::serial(
        &mut sp, &mut sc, &vel, &damp, &wavelet, sz, sy, sx, dx2, steps,
    );
    let slab = dist::slab(w, propagate_sponge::program(), &[nz, ny, nx], steps, opts).unwrap();
    placed(&slab, halo, size(w));
    let win = |a: &Array3<f32>| dist::window(a, &slab);
    let (mut lp, mut lc) = (win(&prev), win(&cur));
    let ((), report) = propagate_sponge::run_distributed(
        &mut lp,
        &mut lc,
        &win(&vel),
        &win(&damp),
        &wavelet,
        sz,
        sy,
        sx,
        dx2,
        steps,
        w,
        &slab,
        opts,
    )
    .unwrap();
    assert_eq!(report.backend, "cuda");
    let notes = report.adjustments.join("\n");
    if slab.resident {
        assert!(notes.contains("stepping on the device"), "{notes}");
    }
    if slab.relay {
        assert!(notes.contains("relayed GPU to GPU through NCCL"), "{notes}");
    }
    assert!(!notes.contains("could not start"), "{notes}");
    if slab.resident || slab.relay {
        // The acoustic run before this one made the communicator; every rank kept it.
        assert!(notes.contains("communicator of an earlier call"), "{notes}");
    }
    for (name, l, s) in [("prev", &lp, &sp), ("cur", &lc, &sc)] {
        if let Some(got) = dist::gather(w, &slab, l) {
            assert!(
                bits32(&got) == bits32(s),
                "sponge nz {nz} {opts:?}: `{name}` differs from serial"
            );
        }
    }
}

/// Rank 1 fails at its second exchange, in a resident run (an exchange op of the plan) and in
/// a run on the host path whose halos are relayed through the GPUs (a relay round): every rank
/// returns an error (the others `RankFailed` naming rank 1), none waits forever for its halos.
pub fn fail(w: &Communicator) {
    for (halo, site) in [
        (HaloMode::Device, Site::Exchange),
        (HaloMode::Relay, Site::Relay),
    ] {
        eprintln!("rank {}: rank 1 fails at its second {site}", rank(w));
        fail_at(w, halo, site);
    }
}

fn fail_at(w: &Communicator, halo: HaloMode, site: Site) {
    let (me, n) = (rank(w), size(w));
    let opts = cuda(1, halo);
    let nz = 20 * n;
    let shape = (nz, 16, 16);
    let prev = Array3::<f32>::zeros(shape);
    let vel = Array3::<f32>::from_elem(shape, 0.1);
    let wavelet = acoustic::ricker(15.0, 0.001, 12);
    let program = acoustic::propagate::program();
    let slab = dist::slab(w, program, &[nz, 16, 16], 12, &opts).unwrap();
    assert_eq!(slab.resident, halo == HaloMode::Device, "{:?}", slab.tuner);
    assert_eq!(slab.relay, halo == HaloMode::Relay, "{:?}", slab.tuner);
    let win = |a: &Array3<f32>| dist::window(a, &slab);
    let (mut lp, mut lc) = (win(&prev), win(&prev));
    let guard = (me == 1).then(|| fault::inject(site, 1));
    let e = acoustic::propagate::run_distributed(
        &mut lp,
        &mut lc,
        &win(&vel),
        &wavelet,
        nz / 2,
        8,
        8,
        100.0,
        12,
        w,
        &slab,
        &opts,
    )
    .unwrap_err();
    drop(guard);
    let text = e.to_string();
    assert!(
        text.contains("injected fault"),
        "rank {me} ({site}): {text}"
    );
    if me != 1 {
        assert!(
            matches!(
                e.cause(),
                Error::Dist(DistError::RankFailed { rank: 1, .. })
            ),
            "rank {me} ({site}): {e}"
        );
    }
    if halo == HaloMode::Device && me != 1 {
        // Rank 0 learns of it while its stream waits for rank 1's halos: its own run fails
        // with rank 1's error, after its write-backs may have started (nothing counts as
        // complete: what followed the abandoned exchange ran on halos that never came).
        if let Some(p) = e.progress() {
            assert_eq!(p.steps_complete, 0, "rank {me}: {e}");
        }
    }
}
