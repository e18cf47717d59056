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

/// One launch: ranks, arguments, whether it must succeed, what it checks.
struct Launch {
    ranks: usize,
    args: Vec<String>,
    must_succeed: bool,
    what: String,
}

fn launch(ranks: usize, args: &[&str], must_succeed: bool, what: &str) -> Launch {
    Launch {
        ranks,
        args: args.iter().map(|s| s.to_string()).collect(),
        must_succeed,
        what: what.into(),
    }
}

fn driver() {
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
    launches.push(launch(
        2,
        &["relayout", &d],
        true,
        "-n 2: resuming with another rank count is a typed error",
    ));
    let exe = std::env::current_exe().expect("the test binary's path");
    let (mut passed, mut failed) = (0, 0);
    for l in &launches {
        let ok = run_launch(&exe, l);
        println!(
            "test mpirun {} ... {}",
            l.what,
            if ok { "ok" } else { "FAILED" }
        );
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("\n{passed} passed, {failed} failed");
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
        .arg(exe)
        .args(&l.args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting mpirun");
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
    let out = child.wait_with_output().expect("mpirun's output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
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
