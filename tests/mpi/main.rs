//! Distributed runs under `mpirun` (feature `mpi`; CPU backend).
//!
//! `cargo test --features mpi --test mpi` runs this binary without arguments: it is then the
//! driver, which starts itself under `mpirun -n N` once per case below and checks each
//! launch's exit status (a launch that does not finish within its time limit fails: no hang).
//! Under mpirun it runs the case its arguments name on every rank; a failed check panics,
//! which makes mpirun exit non-zero. Arguments to the driver that name cases (`cargo test
//! --features mpi --test mpi -- lost options`) keep only their launches.
//!
//! Without the feature this test does not exist (`required-features` in Cargo.toml).

mod cases;
// The examples' shared code: the `options` case runs their option reading under mpirun.
#[path = "../../examples/common/mod.rs"]
mod common;
mod faults;
mod gpu;
mod random;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The driver starts each rank as `--case NAME ARGS..`.
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("--case"), Some(case)) if cases::NAMES.contains(&case.as_str()) => {
            cases::run(case, &args[2..])
        }
        _ => driver(),
    }
}

/// One launch: ranks, arguments, whether it must succeed, what it checks, whether it needs
/// GPUs (then it runs only when asked: `--include-ignored` or `--ignored`, as libtest's
/// ignored tests do, and fails where there is no GPU).
struct Launch {
    ranks: usize,
    args: Vec<String>,
    must_succeed: bool,
    what: String,
    gpu: bool,
    /// More `mpirun` options.
    mpirun: Vec<String>,
    /// A rank started with one more environment variable (`VAR=value`).
    env_on: Option<(usize, String)>,
    /// The launch fails if it has not finished by then (and is killed, with its ranks).
    limit: Duration,
    /// A fault case: the directory where its live ranks report (`faults.rs`), and the ranks
    /// that must each report `ok`; the exit status does not count (the ranks skip
    /// `MPI_Finalize`).
    reports: Option<(PathBuf, Vec<usize>)>,
}

fn launch(ranks: usize, args: &[&str], must_succeed: bool, what: &str) -> Launch {
    Launch {
        ranks,
        args: args.iter().map(|s| s.to_string()).collect(),
        must_succeed,
        what: what.into(),
        gpu: false,
        mpirun: Vec::new(),
        env_on: None,
        limit: Duration::from_secs(240),
        reports: None,
    }
}

/// A fault case of `faults.rs` on 3 ranks in `dir`: `victim` is lost (`how`: stop or kill), and
/// every other rank must report its error within [`faults::BOUND`], as must the launch.
fn lost(dir: &str, how: &str, victim: usize, halo: &str, what: &str) -> Launch {
    let mut args = vec!["lost", dir, how];
    let v = victim.to_string();
    args.push(&v);
    if !halo.is_empty() {
        args.push(halo);
    }
    let mut l = launch(3, &args, false, what);
    if how == "kill" {
        // Without it mpirun ends the job as soon as a rank dies.
        l.mpirun.push("--enable-recovery".into());
    }
    l.limit = faults::BOUND;
    l.reports = Some((dir.into(), (0..3).filter(|&r| r != victim).collect()));
    l
}

fn gpu(ranks: usize, args: &[&str], what: &str) -> Launch {
    Launch {
        gpu: true,
        ..launch(ranks, args, true, what)
    }
}

fn driver() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |f: &str| flags.iter().any(|a| a == f);
    let (with_gpu, only_gpu) = (
        has("--include-ignored") || has("--ignored"),
        has("--ignored"),
    );
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!(
            "mpi tests: `mpirun` was not found; install OpenMPI (`apt-get install openmpi-bin \
             libopenmpi-dev`; .ci/run does) to run them"
        );
        println!("0 passed, 1 failed");
        std::process::exit(1);
    }
    let dir = std::env::temp_dir().join(format!("pacc-mpi-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_string_lossy().to_string();
    let mut launches = Vec::new();
    for n in 1..=4 {
        launches.push(launch(
            n,
            &["equal"],
            true,
            &format!("-n {n}: random programs and the examples' functions equal serial"),
        ));
    }
    for n in [1, 2, 4] {
        launches.push(launch(
            n,
            &["tuned"],
            true,
            &format!(
                "-n {n}: the ranks agree on the distributed tuner's depth; results equal serial"
            ),
        ));
    }
    for n in 1..=4 {
        launches.push(launch(
            n,
            &["equal", "device"],
            true,
            &format!(
                "-n {n}: resident plans (PACC_HALO=device, halos exchanged inside the run) equal \
                 serial"
            ),
        ));
    }
    for n in [2, 3] {
        launches.push(gpu(
            n,
            &["gpu"],
            &format!(
                "-n {n} on the GPUs: acoustic, sponge, Himeno and a 2D program equal serial, \
                 resident through NCCL (host exchange where ranks share a GPU), relayed through \
                 NCCL (an error where ranks share a GPU) and host path"
            ),
        ));
    }
    launches.push(gpu(
        2,
        &["gpu-fail"],
        "-n 2 on the GPUs: a rank failing mid-run, resident or relaying its halos, makes every \
         rank return",
    ));
    launches.push(launch(3, &["errors"], true, "-n 3: thin slabs, bad rank counts, wrong slabs and shapes, disagreeing ranks are typed errors on every rank"));
    launches.push(launch(
        4,
        &["errors"],
        true,
        "-n 4: the same with four ranks",
    ));
    launches.push(launch(
        3,
        &["fail"],
        true,
        "-n 3: a failing rank makes every rank return its error",
    ));
    launches.push(launch(
        3,
        &["kill", &d],
        false,
        "-n 3: rank 1 dies after some checkpoints (mpirun must fail)",
    ));
    launches.push(launch(
        3,
        &["resume", &d],
        true,
        "-n 3: every rank resumes from its last checkpoint to the uninterrupted result",
    ));
    let dd = format!("{d}-device");
    launches.push(launch(
        3,
        &["kill", &dd, "device"],
        false,
        "-n 3: resident runs (PACC_HALO=device) checkpoint between segments; rank 1 dies",
    ));
    launches.push(launch(
        3,
        &["resume", &dd, "device"],
        true,
        "-n 3: the resident run resumes from its last checkpoint to the uninterrupted result",
    ));
    launches.push(launch(
        2,
        &["relayout", &d],
        true,
        "-n 2: resuming with another rank count is a typed error",
    ));
    let lost_dir = |i: usize| format!("{d}-lost-{i}");
    launches.push(lost(
        &lost_dir(0),
        "stop",
        1,
        "device",
        "-n 3: rank 1 stops (SIGSTOP) mid-run; ranks 0 and 2, waiting in the halo exchange \
         (host MPI, inside the run), return NoAnswer naming it within 30 s",
    ));
    launches.push(lost(
        &lost_dir(1),
        "stop",
        1,
        "",
        "-n 3: rank 1 stops mid-block; the others, agreeing on the block, name it within 30 s",
    ));
    launches.push(lost(
        &lost_dir(2),
        "stop",
        0,
        "",
        "-n 3: rank 0 (which collects the agreements) stops; the others name it within 30 s",
    ));
    launches.push(lost(
        &lost_dir(3),
        "kill",
        1,
        "",
        "-n 3 --enable-recovery: rank 1 dies mid-run; the others name it within 30 s",
    ));
    let mut bad = launch(
        3,
        &["options", "1"],
        true,
        "-n 3: PACC_CHUNKS=abc on rank 1 only: every rank returns the error (the examples' \
         options are read once MPI runs, and agreed on)",
    );
    bad.env_on = Some((1, "PACC_CHUNKS=abc".into()));
    bad.limit = faults::BOUND;
    launches.push(bad);
    let exe = std::env::current_exe().expect("the test binary's path");
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    // Like libtest: arguments that are not flags keep only the launches whose case they name.
    let names: Vec<&String> = flags.iter().filter(|f| !f.starts_with('-')).collect();
    for l in &launches {
        if !names.is_empty() && !names.iter().any(|n| l.args.first() == Some(*n)) {
            continue;
        }
        if l.gpu != only_gpu && !(l.gpu && with_gpu) {
            if l.gpu {
                println!("test mpirun {} ... ignored, needs CUDA devices", l.what);
                ignored += 1;
            }
            continue;
        }
        let start = Instant::now();
        let ok = run_launch(&exe, l);
        println!(
            "test mpirun {} ... {} ({:.1} s)",
            l.what,
            if ok { "ok" } else { "FAILED" },
            start.elapsed().as_secs_f64()
        );
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(format!("{d}-device"));
    for i in 0..4 {
        let _ = std::fs::remove_dir_all(lost_dir(i));
    }
    println!("\n{passed} passed, {failed} failed, {ignored} skipped");
    if failed > 0 {
        std::process::exit(1);
    }
}

fn run_launch(exe: &PathBuf, l: &Launch) -> bool {
    use std::os::unix::process::CommandExt;
    let limit = l.limit;
    if let Some((dir, _)) = &l.reports {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).expect("the fault case's directory");
    }
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "--allow-run-as-root"])
        .args(&l.mpirun)
        .args(["-x", "RAYON_NUM_THREADS=1"])
        // NVLink multicast off in every process: the exchanges are point to point, and
        // multicast can take a shared machine's GPUs out of service.
        .args(["-x", "NCCL_NVLS_ENABLE=0"]);
    match &l.env_on {
        None => {
            cmd.args(["-n", &l.ranks.to_string()])
                .arg(exe)
                .arg("--case")
                .args(&l.args);
        }
        // One app context per rank, the odd one started through `env`.
        Some((r, var)) => {
            for i in 0..l.ranks {
                if i > 0 {
                    cmd.arg(":");
                }
                cmd.args(["-n", "1"]);
                if i == *r {
                    cmd.args(["env", var]);
                }
                cmd.arg(exe).arg("--case").args(&l.args);
            }
        }
    }
    // A group of its own, so that a launch past its limit goes with all its ranks.
    let mut child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting mpirun");
    // Read both pipes while the launch runs: a child writing more than a pipe holds would
    // otherwise block forever and look like a hang.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for mpirun") {
            break Some(s);
        }
        if start.elapsed() > limit {
            // SAFETY: signalling the process group this launch created.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.wait();
    let lost = l.reports.as_ref().map(|(dir, _)| end_lost_rank(dir));
    let (out, err) = (stdout.join(), stderr.join());
    let mut text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.unwrap_or_default()),
        String::from_utf8_lossy(&err.unwrap_or_default())
    );
    let ok = match (status, &l.reports) {
        (None, _) => {
            eprintln!(
                "mpirun {:?} did not finish within {limit:?} (a hang)",
                l.args
            );
            false
        }
        (Some(_), Some((dir, live))) => {
            let (ok, said) = reports(dir, live);
            text.push_str(&said);
            text.push_str(&lost.unwrap_or_default());
            ok
        }
        (Some(s), None) => s.success() == l.must_succeed,
    };
    if !ok || std::env::var_os("PACC_MPI_TEST_VERBOSE").is_some() {
        eprintln!("---- mpirun -n {} {:?} ----\n{text}", l.ranks, l.args);
    }
    ok
}

/// Whether every rank of `live` reported `ok` in `dir` (`faults.rs`), and what they said.
fn reports(dir: &std::path::Path, live: &[usize]) -> (bool, String) {
    let mut ok = true;
    let mut said = String::new();
    for r in live {
        let v = std::fs::read_to_string(dir.join(format!("done-{r}")))
            .unwrap_or_else(|_| "no report".into());
        ok &= v.starts_with("ok");
        said.push_str(&format!("rank {r}: {v}\n"));
    }
    (ok, said)
}

/// Kills the rank a fault case stopped, if mpirun left it (its pid is in its note).
fn end_lost_rank(dir: &std::path::Path) -> String {
    let note = std::fs::read_to_string(dir.join(faults::LOST)).unwrap_or_default();
    let Some(pid) = note
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return "the lost rank left no note\n".into();
    };
    // SAFETY: signal 0 only asks whether the process exists; then the rank this launch stopped
    // is killed, by its pid.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    if alive {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    format!(
        "the lost rank (pid {pid}) was {}\n",
        match alive {
            true => "still there after mpirun; killed",
            false => "gone with mpirun",
        }
    )
}
