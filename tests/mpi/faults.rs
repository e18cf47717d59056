//! Lost ranks and options that fail on one rank: every other rank returns a typed error within
//! the bound instead of waiting (see main.rs for the driver's side).
//!
//! A lost rank leaves MPI unusable (`MPI_Finalize` would wait for it), so the live ranks of a
//! fault case report through files in the launch's directory: each writes `done-RANK` (`ok`
//! and the seconds from the fault to its error, or what went wrong), waits until every live
//! rank has written its file, and exits without finalizing. The driver reads the files.

use crate::cases::{random3, rank, size};
use crate::random;
use ndarray::Array3;
use pacc::runtime::dist::{self, Communicator};
use pacc::runtime::host::host_array_mut;
use pacc::runtime::{BackendChoice, DistError, Error, HaloMode, HostArray, Options};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The ranks' timeout in these cases (`Options::mpi_timeout`): a lost rank costs the others at
/// most two of it (a wait, then the agreement) or, waiting for rank 0's verdict, two.
pub const TIMEOUT: Duration = Duration::from_secs(4);

/// What every live rank must do after the fault, from the fault to its error.
pub const BOUND: Duration = Duration::from_secs(30);

/// The file the lost rank writes before it goes (its pid, and when).
pub const LOST: &str = "lost";

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `how` (`stop`: SIGSTOP; `kill`: abort, under `mpirun --enable-recovery`) rank `victim` in
/// the middle of a run of 12 steps (blocks of 2), halos exchanged as `halo` says: with
/// `device` inside the run (the others then wait in the halo exchange), else between blocks
/// (they wait agreeing on the block's outcome). Every other rank must return
/// `DistError::NoAnswer` naming the victim.
pub fn lost(w: &Communicator, dir: &Path, how: &str, victim: usize, halo: HaloMode) {
    let (me, n) = (rank(w), size(w));
    let mut c = random::case(4242, 8 * n + 20);
    c.steps = 12;
    let opts = Options {
        backend: BackendChoice::Cpu,
        chunks: Some(2),
        block_steps: Some(2),
        ..Options::default()
    }
    .halo(halo)
    .mpi_timeout(TIMEOUT);
    let global: Vec<Array3<f64>> = (0..c.program.arrays.len())
        .map(|a| random3(c.shape, 7 + a as u64))
        .collect();
    let slab = dist::slab(w, &c.program, &c.shape, c.steps, &opts).expect("a split");
    let mut local: Vec<Array3<f64>> = global.iter().map(|g| dist::window(g, &slab)).collect();
    let hs: Vec<HostArray> = local
        .iter_mut()
        .map(|a| host_array_mut(a, "a").unwrap())
        .collect();
    // Step 7 of 12 (t0 = 3): the fourth block, after three exchanges.
    let gone = Arc::new(AtomicBool::new(false));
    let (lost_file, how) = (dir.join(LOST), how.to_string());
    let hook: random::Hook = Arc::new(move |t, _| {
        if me != victim || t != 3 + 7 || gone.swap(true, Ordering::SeqCst) {
            return;
        }
        let note = format!("{} {}", std::process::id(), now());
        std::fs::write(&lost_file, note).expect("writing the lost rank's note");
        match how.as_str() {
            // SAFETY: raising a signal in this process.
            "stop" => unsafe {
                libc::raise(libc::SIGSTOP);
            },
            _ => std::process::abort(),
        }
    });
    let inv = random::invocation(&c, hs, Some(hook));
    let r = dist::run(w, &slab, &c.program, inv, &opts);
    let at = now();
    let verdict = check_lost(r.map(|_| ()), victim, dir, at);
    report(dir, me, (0..n).filter(|&r| r != victim), verdict);
}

/// `ok <seconds from the fault>` when `r` is the error naming `victim` within the bound.
fn check_lost(r: Result<(), Error>, victim: usize, dir: &Path, at: f64) -> String {
    let e = match r {
        Ok(()) => return "the run finished although a rank was lost".into(),
        Err(e) => e,
    };
    let note = std::fs::read_to_string(dir.join(LOST)).unwrap_or_default();
    let Some(since) = note
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
    else {
        return format!("no note from the lost rank; the error: {e}");
    };
    let secs = at - since;
    match e.cause() {
        Error::Dist(DistError::NoAnswer { ranks, .. }) if ranks == &[victim] => {
            match secs < BOUND.as_secs_f64() {
                true => format!("ok {secs:.1} s: {e}"),
                false => format!("the error came {secs:.1} s after the fault: {e}"),
            }
        }
        _ => format!("expected NoAnswer naming rank {victim}, got: {e}"),
    }
}

/// Writes `done-ME`, waits (within the bound) until every rank of `live` has written its own,
/// and exits without finalizing MPI.
fn report(dir: &Path, me: usize, live: impl Iterator<Item = usize>, verdict: String) -> ! {
    let live: Vec<usize> = live.collect();
    std::fs::write(dir.join(format!("done-{me}")), &verdict).expect("writing the verdict");
    let start = Instant::now();
    while start.elapsed() < BOUND && !live.iter().all(|r| dir.join(format!("done-{r}")).exists()) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::process::exit(0)
}

/// One rank's environment has `PACC_CHUNKS=abc` (the driver starts it through `env`): every
/// rank returns the error from the examples' option reading (`examples/common/dist.rs`), the
/// bad rank its own, the others `RankFailed` naming it with its message.
pub fn options(w: &Communicator, bad: usize) {
    let me = rank(w);
    let pipe = crate::common::PipelineArgs {
        backend: None,
        chunks: None,
        block_steps: None,
        scheme: None,
        fma: false,
        verify: false,
        tolerance: 1e-4,
        json: true,
        trace: None,
        compress: None,
        compress_all: None,
        device_memory: None,
    };
    match (me == bad, crate::common::dist::options(w, &pipe)) {
        (true, Err(Error::Option(m))) => assert!(m.contains("PACC_CHUNKS=abc"), "{m}"),
        (false, Err(Error::Dist(DistError::RankFailed { rank, message }))) => {
            assert_eq!(rank, bad, "{message}");
            assert!(message.contains("PACC_CHUNKS=abc"), "{message}");
        }
        (_, Err(e)) => panic!("rank {me}: unexpected error: {e}"),
        (_, Ok(_)) => panic!("rank {me}: the options were accepted"),
    }
}
