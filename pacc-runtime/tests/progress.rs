//! The progress hook (`Options::on_progress`): a run reports its steps as blocks complete,
//! monotone and ending at the call's total, also across checkpoint segments and resumed calls;
//! the hook changes nothing in the results. Runs on the CPU backend, or on CUDA with
//! `PACC_TEST_BACKEND=cuda`.

mod common;
mod util;

use pacc_runtime::plan::Scheme;
use pacc_runtime::{BackendChoice, Options, StepsDone};
use std::sync::{Arc, Mutex};
use util::*;

/// Options with a hook that records every call; the record.
fn recording(o: Options) -> (Options, Arc<Mutex<Vec<StepsDone>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (o.on_progress(move |p| s.lock().unwrap().push(p)), seen)
}

/// Monotone, every report of `total`, starting after `first`, ending at `total`.
fn check(seen: &[StepsDone], first: usize, total: usize, ctx: &str) {
    assert!(!seen.is_empty(), "{ctx}: the hook was never called");
    assert!(seen.iter().all(|p| p.total == total), "{ctx}: {seen:?}");
    assert!(seen[0].done > first, "{ctx}: {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].done < w[1].done),
        "{ctx}: not strictly increasing: {seen:?}"
    );
    assert_eq!(seen.last().unwrap().done, total, "{ctx}: {seen:?}");
}

#[test]
fn a_run_reports_monotone_steps_ending_at_the_total() {
    let case = Case::new(Kind::Stencil(1), &[11, 5, 6], 1);
    let steps = 10;
    for (chunks, k, scheme) in [
        (3, 3, Scheme::RegionSharing),
        (2, 1, Scheme::DirectMap),
        (4, 4, Scheme::StagedCopy),
    ] {
        let base = cpu(chunks, k).scheme(scheme);
        let mut want = case.initial();
        case.run(&mut want, steps, &base).unwrap();
        let backends = match test_backend() {
            BackendChoice::Cpu => vec![BackendChoice::Cpu, BackendChoice::Shuffled(7)],
            b => vec![b],
        };
        for backend in backends {
            let (o, seen) = recording(base.clone().backend(backend));
            let mut x = case.initial();
            let out = case.run(&mut x, steps, &o).unwrap();
            let ctx = format!("{chunks} chunks, k={k}, {scheme:?}, {backend:?}");
            let seen = seen.lock().unwrap().clone();
            check(&seen, 0, steps, &ctx);
            // One report per block.
            assert_eq!(seen.len(), steps.div_ceil(out.report.block_steps), "{ctx}");
            assert_eq!(x.bits(), want.bits(), "{ctx}: the hook changed the results");
        }
    }
}

#[test]
fn checkpoint_segments_and_resumed_calls_count_over_the_whole_call() {
    let case = Case::new(Kind::Source, &[10, 4, 5], 4);
    let steps = 9;
    let dir = TempDir::new("progress");
    // Segments of 2 blocks of 2 steps: the executors see plans of 4, 4 and 1 steps.
    let (o, seen) = recording(cpu(2, 2).checkpoint(dir.path(), 2));
    let mut x = case.initial();
    case.run(&mut x, steps, &o).unwrap();
    let got: Vec<usize> = seen.lock().unwrap().iter().map(|p| p.done).collect();
    assert_eq!(got, vec![2, 4, 6, 8, 9]);
    check(&seen.lock().unwrap(), 0, steps, "segments");

    // Resuming from the checkpoint after step 8 reports only the step left, out of 9.
    let (o, seen) = recording(cpu(2, 2).resume(dir.path()));
    let mut y = case.initial();
    case.run(&mut y, steps, &o).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![StepsDone { done: 9, total: 9 }]);
    assert_eq!(x.bits(), y.bits());
}

#[test]
fn options_without_a_hook_print_as_before() {
    let o = Options::new();
    assert!(o.on_progress.is_none());
    let (o, _) = recording(o);
    assert!(format!("{o:?}").contains("on_progress: Some(OnProgress"));
}
