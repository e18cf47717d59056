//! Injected faults (CPU backend): a fault before the first write-back leaves the arrays exactly
//! as passed; after it, the error says which steps are complete, the arrays hold exactly that
//! state unless the failing block had started writing back, and the last checkpoint is intact.

mod common;
mod util;

use pacc_runtime::fault::{self, Site};
use pacc_runtime::plan::{self, OpKind, Scheme};
use pacc_runtime::program::Role;
use pacc_runtime::run::plan_options;
use pacc_runtime::{BackendChoice, Error, Options};
use std::collections::HashMap;
use util::*;

const SITES: [Site; 7] = [
    Site::Alloc,
    Site::HtoD,
    Site::DtoD,
    Site::HostCopy,
    Site::Kernel,
    Site::Point,
    Site::DtoH,
];

fn cases() -> Vec<Case> {
    vec![
        Case::new(Kind::Stencil(1), &[9, 4, 5], 11),
        Case::new(Kind::TwoKernel, &[10, 6], 12),
        Case::new(Kind::Source, &[8, 4, 4], 13),
    ]
}

/// Bits of the arrays the caller keeps (scratch arrays excluded).
fn kept(case: &Case, a: &Arrays) -> Vec<Vec<u64>> {
    let prog = case.program();
    a.bits()
        .into_iter()
        .zip(&prog.arrays)
        .filter(|(_, d)| d.role != Role::Scratch)
        .map(|(b, _)| b)
        .collect()
}

/// Every fault position of every kind, in several configurations: checks the promise of each
/// outcome.
#[test]
fn every_fault_position_keeps_its_promise() {
    let steps = 5;
    let mut fired: HashMap<Site, usize> = HashMap::new();
    let mut outcomes = [0usize; 3]; // untouched, consistent, torn
    for case in cases() {
        let initial = case.initial();
        let mut reference: HashMap<usize, Vec<Vec<u64>>> = HashMap::new();
        for scheme in Scheme::ALL {
            for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(7)] {
                let o = cpu(3, 2).scheme(scheme).backend(backend);
                for site in SITES {
                    for nth in 0.. {
                        let mut x = case.initial();
                        let r = {
                            let _f = fault::inject(site, nth);
                            case.run(&mut x, steps, &o)
                        };
                        let e = match r {
                            Ok(_) => break,
                            Err(e) => e,
                        };
                        *fired.entry(site).or_default() += 1;
                        let ctx = format!("{:?} {o:?} {site:?} #{nth}: {e}", case.kind);
                        assert!(
                            matches!(e.cause(), Error::Fault { site: s, index, .. } if *s == site && *index == nth),
                            "{ctx}"
                        );
                        match e.progress() {
                            None => {
                                assert_eq!(x.bits(), initial.bits(), "touched: {ctx}");
                                outcomes[0] += 1;
                            }
                            Some(p) if !p.torn => {
                                assert!(p.steps_complete < steps, "{ctx}");
                                assert!(p.checkpoint.is_none());
                                let want = reference.entry(p.steps_complete).or_insert_with(|| {
                                    kept(&case, &case.reference(p.steps_complete).0)
                                });
                                assert_eq!(
                                    &kept(&case, &x),
                                    want,
                                    "not the state after {} steps: {ctx}",
                                    p.steps_complete
                                );
                                outcomes[1] += 1;
                            }
                            Some(p) => {
                                assert!(p.steps_complete < steps, "{ctx}");
                                outcomes[2] += 1;
                            }
                        }
                        assert!(e.to_string().contains("Hint:"), "{ctx}");
                    }
                }
            }
        }
    }
    for site in SITES {
        assert!(
            fired.get(&site).copied().unwrap_or(0) > 0,
            "{site:?} never fired"
        );
    }
    assert!(outcomes.iter().all(|&n| n > 0), "{outcomes:?}");
    println!("faults: {outcomes:?} (untouched, consistent, torn); per site {fired:?}");
}

/// With checkpoints every block: wherever the fault hits, the error names the last checkpoint,
/// and resuming from it gives the uninterrupted result.
#[test]
fn after_a_fault_the_last_checkpoint_is_intact() {
    let steps = 7;
    for case in cases() {
        let base = cpu(2, 2);
        let mut want = case.initial();
        let want_red = case.run(&mut want, steps, &base).unwrap().reductions;
        for site in [Site::Kernel, Site::DtoH, Site::HtoD] {
            let mut nth = 0;
            loop {
                let dir = TempDir::new("fault");
                let o = base.clone().checkpoint(dir.path(), 1);
                let mut x = case.initial();
                let r = {
                    let _f = fault::inject(site, nth);
                    case.run(&mut x, steps, &o)
                };
                let Err(e) = r else { break };
                let ctx = format!("{:?} {site:?} #{nth}: {e}", case.kind);
                let resume = match e.progress() {
                    None => {
                        assert!(
                            !pacc_runtime::checkpoint::own_dir(dir.path())
                                .join("LATEST")
                                .exists(),
                            "{ctx}"
                        );
                        false
                    }
                    Some(p) => {
                        // Checkpoints are written every 2 steps, after each segment.
                        let c = p.checkpoint.as_ref();
                        assert_eq!(c.map_or(0, |c| c.step), p.steps_complete / 2 * 2, "{ctx}");
                        assert_eq!(p.steps_complete % 2, 0, "{ctx}");
                        c.is_some()
                    }
                };
                if resume {
                    let mut y = case.initial();
                    let out = case
                        .run(&mut y, steps, &o.clone().resume(dir.path()))
                        .unwrap();
                    assert_eq!(y.bits(), want.bits(), "{ctx}");
                    assert_eq!(red_bits(&out.reductions), red_bits(&want_red), "{ctx}");
                }
                nth += 3;
            }
        }
    }
}

/// Counts the operations of `site` in block 0 of the plan `opts` makes.
fn ops_in_block0(
    case: &Case,
    steps: usize,
    opts: &Options,
    pred: impl Fn(&OpKind) -> bool,
) -> usize {
    let prog = case.program();
    let p = plan::build(
        &prog,
        &case.shape,
        steps,
        &[],
        &plan_options(&prog, case.shape[0], steps, opts),
    )
    .unwrap();
    p.ops
        .iter()
        .filter(|op| op.block == 0 && pred(&op.kind))
        .count()
}

#[test]
fn the_error_says_which_blocks_are_complete() {
    let case = Case::new(Kind::Stencil(1), &[9, 4, 5], 3);
    let (steps, o) = (6, cpu(3, 2));
    // The first kernel of block 1: block 0 is written back, block 1 has written nothing.
    let k0 = ops_in_block0(&case, steps, &o, |k| matches!(k, OpKind::Kernel { .. }));
    let mut x = case.initial();
    let e = {
        let _f = fault::inject(Site::Kernel, k0);
        case.run(&mut x, steps, &o).unwrap_err()
    };
    let p = e.progress().unwrap().clone();
    assert_eq!((p.steps_complete, p.blocks_complete, p.torn), (2, 1, false));
    assert_eq!(p.checkpoint, None);
    assert_eq!(x.bits(), case.reference(2).0.bits());
    let msg = e.to_string();
    assert!(msg.contains("1 blocks of this call complete"), "{msg}");
    assert!(msg.contains("first 2 steps"), "{msg}");
    assert!(msg.contains("No checkpoint was written"), "{msg}");
    assert!(msg.contains("kernel launch operation #"), "{msg}");
    // The second write-back of block 1: torn.
    let d0 = ops_in_block0(&case, steps, &o, |k| matches!(k, OpKind::DtoH { .. }));
    let mut x = case.initial();
    let e = {
        let _f = fault::inject(Site::DtoH, d0 + 1);
        case.run(&mut x, steps, &o).unwrap_err()
    };
    let p = e.progress().unwrap();
    assert_eq!((p.steps_complete, p.blocks_complete, p.torn), (2, 1, true));
    assert!(e.to_string().contains("not a consistent state"));
    // The very first operation of each kind: nothing written.
    for site in SITES {
        let mut x = case.initial();
        let _f = fault::inject(site, 0);
        match case.run(&mut x, steps, &o) {
            Ok(_) => assert!(matches!(site, Site::HostCopy | Site::Point), "{site:?}"),
            Err(e) => {
                assert!(matches!(e, Error::Fault { .. }), "{e:?}");
                assert_eq!(x.bits(), case.initial().bits());
            }
        }
    }
}

#[test]
fn a_failing_checkpoint_write_keeps_the_previous_one() {
    let case = Case::new(Kind::Source, &[9, 4, 4], 21);
    let dir = TempDir::new("ckfault");
    let o = cpu(2, 1).checkpoint(dir.path(), 2);
    let mut x = case.initial();
    let e = {
        let _f = fault::inject(Site::Checkpoint, 1);
        case.run(&mut x, 9, &o).unwrap_err()
    };
    let p = e.progress().unwrap();
    assert_eq!((p.steps_complete, p.torn), (4, false));
    assert_eq!(p.checkpoint.as_ref().unwrap().step, 2);
    // The arrays hold the state after 4 steps; the checkpoint holds step 2.
    assert_eq!(x.bits(), case.reference(4).0.bits());
    let mut y = case.initial();
    case.run(&mut y, 9, &o.clone().resume(dir.path())).unwrap();
    assert_eq!(y.bits(), case.reference(9).0.bits());
}

#[test]
fn faults_are_per_thread() {
    let case = Case::new(Kind::Stencil(1), &[9, 4, 5], 3);
    let _f = fault::inject(Site::Kernel, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut x = case.initial();
            case.run(&mut x, 3, &cpu(2, 2)).unwrap();
        });
    });
    let mut x = case.initial();
    assert!(case.run(&mut x, 3, &cpu(2, 2)).is_err());
    // Dropping the guard disarms it.
    drop(_f);
    case.run(&mut x, 3, &cpu(2, 2)).unwrap();
}

/// The tracker as an asynchronous executor uses it: an issued write-back counts as possibly
/// written until it is known to have finished.
#[test]
fn tracker_counts_issued_write_backs_as_written() {
    use pacc_runtime::exec::{writes_user_array, Tracker};
    let case = Case::new(Kind::Stencil(1), &[9, 4, 5], 3);
    let prog = case.program();
    let o = cpu(3, 2);
    let p = plan::build(&prog, &case.shape, 6, &[], &plan_options(&prog, 9, 6, &o)).unwrap();
    let wb: Vec<usize> = (0..p.ops.len())
        .filter(|&i| writes_user_array(&p.ops[i].kind))
        .collect();
    let block0: Vec<usize> = wb
        .iter()
        .copied()
        .filter(|&i| p.ops[i].block == 0)
        .collect();
    let mut t = Tracker::new(&p);
    assert!(!t.written());
    let cause = || Error::Internal("x".into());
    assert!(matches!(t.fail(cause()), Error::Internal(_)));
    t.started(&p, block0[0]);
    assert!(t.written());
    let pr = t.progress();
    assert_eq!(
        (pr.steps_complete, pr.blocks_complete, pr.torn),
        (0, 0, true)
    );
    for &i in &block0 {
        t.finished(&p, i);
    }
    let pr = t.progress();
    assert_eq!(
        (pr.steps_complete, pr.blocks_complete, pr.torn),
        (2, 1, false)
    );
    let next = wb.iter().copied().find(|&i| p.ops[i].block == 1).unwrap();
    t.started(&p, next);
    assert!(t.progress().torn);
    assert!(matches!(t.fail(cause()), Error::Failed { .. }));
}

/// With compression, blocks before the last keep their results in the compressed host copies,
/// so a fault anywhere before the last block's write-backs leaves the arrays untouched, and one
/// during them tears them (no block is ever complete in the arrays).
#[test]
fn compressed_runs_are_untouched_or_torn() {
    let case = Case::new(Kind::Stencil(1), &[9, 4, 5], 21);
    let steps = 5;
    let initial = case.initial();
    let mut fired: HashMap<Site, usize> = HashMap::new();
    for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(3)] {
        let o = cpu(2, 2)
            .backend(backend)
            .compress_all(16.0)
            .compress_inputs(true);
        for site in [
            Site::Encode,
            Site::Decode,
            Site::HtoD,
            Site::DtoH,
            Site::Kernel,
        ] {
            for nth in 0.. {
                let mut x = case.initial();
                let r = {
                    let _f = fault::inject(site, nth);
                    case.run(&mut x, steps, &o)
                };
                let Err(e) = r else { break };
                *fired.entry(site).or_default() += 1;
                let ctx = format!("{o:?} {site:?} #{nth}: {e}");
                match e.progress() {
                    None => assert_eq!(x.bits(), initial.bits(), "touched: {ctx}"),
                    Some(p) => assert!(p.torn && p.steps_complete == 0, "{ctx}"),
                }
            }
        }
    }
    assert!(
        fired[&Site::Encode] > 0 && fired[&Site::Decode] > 0,
        "{fired:?}"
    );
}

/// Compression with checkpoints: each checkpoint segment starts from raw arrays and ends with
/// raw results (a checkpoint boundary is like the end of a run), so resuming after a fault gives
/// the uninterrupted checkpointed run's bits.
#[test]
fn compressed_runs_resume_from_checkpoints() {
    let case = Case::new(Kind::Stencil(1), &[12, 4, 5], 22);
    let steps = 8;
    let dir0 = TempDir::new("cfault0");
    let base = cpu(2, 2).compress_all(16.0).compress_inputs(true);
    let mut want = case.initial();
    case.run(&mut want, steps, &base.clone().checkpoint(dir0.path(), 2))
        .unwrap();
    let mut resumed = 0;
    for nth in [1, 4, 7] {
        let dir = TempDir::new("cfault");
        let o = base.clone().checkpoint(dir.path(), 2);
        let mut x = case.initial();
        let r = {
            let _f = fault::inject(Site::Encode, nth);
            case.run(&mut x, steps, &o)
        };
        let Err(e) = r else { continue };
        if e.progress().and_then(|p| p.checkpoint.as_ref()).is_none() {
            continue;
        }
        let mut y = case.initial();
        case.run(&mut y, steps, &o.clone().resume(dir.path()))
            .unwrap();
        assert_eq!(y.bits(), want.bits(), "Encode #{nth}");
        resumed += 1;
    }
    assert!(resumed > 0);
}
