//! Distributed runs under `mpirun` (feature `mpi`; CPU backend).
//!
//! `cargo test --features mpi --test mpi` runs this binary without arguments: it is then the
//! driver, which starts itself under `mpirun -n N` once per case below and checks each
//! launch's exit status (a launch that does not finish within its time limit fails: no hang).
//! Under mpirun it runs the case its arguments name on every rank; a failed check panics,
//! which makes mpirun exit non-zero.
//!
//! Without the feature this test does not exist (`required-features` in Cargo.toml).

mod cases;
mod gpu;
mod random;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(case) if cases::NAMES.contains(&case) => cases::run(case, &args[1..]),
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
}

fn launch(ranks: usize, args: &[&str], must_succeed: bool, what: &str) -> Launch {
    Launch {
        ranks,
        args: args.iter().map(|s| s.to_string()).collect(),
        must_succeed,
        what: what.into(),
        gpu: false,
    }
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
    let exe = std::env::current_exe().expect("the test binary's path");
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    for l in &launches {
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
    println!("\n{passed} passed, {failed} failed, {ignored} skipped");
    if failed > 0 {
        std::process::exit(1);
    }
}

fn run_launch(exe: &PathBuf, l: &Launch) -> bool {
    let limit = Duration::from_secs(240);
    let mut child = Command::new("mpirun")
        .args([
            "-n",
            &l.ranks.to_string(),
            "--oversubscribe",
            "--allow-run-as-root",
        ])
        .args(["-x", "RAYON_NUM_THREADS=1"])
        // NVLink multicast off in every process: the exchanges are point to point, and
        // multicast can take a shared machine's GPUs out of service.
        .args(["-x", "NCCL_NVLS_ENABLE=0"])
        .arg(exe)
        .args(&l.args)
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
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.wait();
    let (out, err) = (stdout.join(), stderr.join());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.unwrap_or_default()),
        String::from_utf8_lossy(&err.unwrap_or_default())
    );
    let ok = match status {
        None => {
            eprintln!(
                "mpirun {:?} did not finish within {limit:?} (a hang)",
                l.args
            );
            false
        }
        Some(s) => s.success() == l.must_succeed,
    };
    if !ok || std::env::var_os("PACC_MPI_TEST_VERBOSE").is_some() {
        eprintln!("---- mpirun -n {} {:?} ----\n{text}", l.ranks, l.args);
    }
    ok
}
