//! Bad input at run time (typed errors with hints, arrays untouched) and concurrent calls.

mod common;
mod util;

use common::*;
use pacc_runtime::fault::{self, Site};
use pacc_runtime::host::{host_array, host_array_mut};
use pacc_runtime::plan::{PlanError, Scheme};
use pacc_runtime::program::Role;
use pacc_runtime::{BackendChoice, CheckpointError, Error, HostArray, Options, Progress};
use std::path::PathBuf;
use std::sync::Barrier;
use util::*;

// ------------------------------------------------------------------------------------------------
// Bad input

#[test]
fn arrays_smaller_than_the_halo() {
    // Reach 2 needs 5 points along every axis.
    for (shape, axis, extent) in [([4, 6, 6], 0, 4), ([6, 6, 3], 2, 3), ([6, 1, 6], 1, 1)] {
        let case = Case::new(Kind::Stencil(2), &shape, 1);
        let mut x = case.initial();
        let e = case.run(&mut x, 3, &Options::new()).unwrap_err();
        match &e {
            Error::SmallerThanHalo {
                axis: a,
                extent: n,
                need: 5,
                reach_lo: 2,
                reach_hi: 2,
            } => assert_eq!((*a, *n), (axis, extent)),
            e => panic!("{e:?}"),
        }
        assert!(e.to_string().contains("Hint:"), "{e}");
        assert_eq!(x.bits(), case.initial().bits());
        // Zero steps: the serial loop never runs; a no-op, not an error.
        case.run(&mut x, 0, &Options::new()).unwrap();
        assert_eq!(x.bits(), case.initial().bits());
    }
    // 2D, two kernels of reach 1: 3 points along each axis are enough.
    let case = Case::new(Kind::TwoKernel, &[5, 2], 1);
    let mut x = case.initial();
    let e = case.run(&mut x, 2, &Options::new()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SmallerThanHalo {
                axis: 1,
                need: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let case = Case::new(Kind::TwoKernel, &[3, 3], 1);
    let mut x = case.initial();
    case.run(&mut x, 2, &cpu(1, 1)).unwrap();
}

#[test]
fn zero_steps_are_a_no_op_with_every_option() {
    let dir = TempDir::new("zero");
    let case = Case::new(Kind::Source, &[6, 4, 4], 2);
    for o in [
        Options::new(),
        cpu(6, 3).scheme(Scheme::StagedCopy),
        cpu(2, 2).checkpoint(dir.path(), 1),
        // No checkpoint there: with zero steps there is nothing to resume.
        cpu(2, 2).resume(dir.path().join("nothing")),
    ] {
        let mut x = case.initial();
        let out = case.run(&mut x, 0, &o).unwrap();
        assert_eq!(x.bits(), case.initial().bits(), "{o:?}");
        assert_eq!((out.swap_replays, out.report.link_bytes()), (0, 0));
        assert!(out.reductions.is_empty());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn too_many_chunks_and_zero_options() {
    let case = Case::new(Kind::Stencil(1), &[6, 5, 5], 3);
    let dir = TempDir::new("chunks");
    for (o, check) in [
        (
            cpu(7, 2),
            (|e: &Error| {
                matches!(
                    e,
                    Error::Setting { setting: "chunks", value, from, problem, .. }
                        if value == "7" && from == "`Options::chunks`"
                            && problem.contains("more than the 6 planes")
                )
            }) as fn(&Error) -> bool,
        ),
        (cpu(7, 2).checkpoint(dir.path(), 1), |e| {
            matches!(
                e,
                Error::Setting {
                    setting: "chunks",
                    ..
                }
            )
        }),
        // Zero chunks or block steps: refused naming the setting and where it came from.
        (
            cpu(0, 2),
            |e| matches!(e, Error::Setting { setting: "chunks", from, .. } if from == "`Options::chunks`"),
        ),
        (
            cpu(2, 0),
            |e| matches!(e, Error::Setting { setting: "block_steps", from, .. } if from == "`Options::block_steps`"),
        ),
        (
            cpu(0, 2).set_by("chunks", pacc_runtime::Origin::CommandLine),
            |e| {
                matches!(e, Error::Setting { setting: "chunks", from, .. } if from == "`--chunks`")
                    && e.to_string().contains("Hint: set `--chunks` to 1 or more")
            },
        ),
        (
            cpu(2, 0).set_by("block_steps", pacc_runtime::Origin::Environment),
            |e| {
                matches!(e, Error::Setting { from, .. } if from == "`PACC_BLOCK_STEPS`")
                    && !e.to_string().contains("Options::")
            },
        ),
        (cpu(2, 2).checkpoint(dir.path(), 0), |e| {
            matches!(e, Error::Option(_))
        }),
    ] {
        let mut x = case.initial();
        let e = case.run(&mut x, 4, &o).unwrap_err();
        assert!(check(&e), "{o:?}: {e:?}");
        assert!(e.progress().is_none());
        assert!(has_hint(&e.to_string()), "{e}");
        assert_eq!(x.bits(), case.initial().bits());
    }
    // Nothing was written to the checkpoint directory either.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_same_array_twice_and_an_input_overlapping_an_output() {
    let prog = stencil_program(1);
    let mut a = random3([6, 5, 5], 1);
    let a0 = a.clone();
    let h = host_array_mut(&mut a, "a").unwrap();
    // A description is not `Copy`: the second comes from the unsafe constructor, whose contract
    // makes overlapping descriptions in one call an error of the run (the point of the test).
    // SAFETY: `a` stays borrowed by `h` while both live, and only this call is handed them.
    let again = unsafe { HostArray::from_raw_parts(h.ptr(), h.elem(), h.shape(), true) }.unwrap();
    let inv = stencil_invocation_raw(vec![h, again], 1, 0.3, 0, 2);
    let e = pacc_runtime::run(&prog, inv, &Options::new()).unwrap_err();
    assert!(matches!(e, Error::Overlap { .. }), "{e:?}");
    assert!(has_hint(&e.to_string()));
    assert_eq!(bits3(&a), bits3(&a0));
    // The read-only velocity model overlapping the wavefield.
    let prog = source_program();
    let mut big = random3([12, 4, 4], 2);
    let big0 = big.clone();
    let wavelet = vec![0.1; 8];
    let (c, v) = overlapping_views(&mut big, 6);
    let mut n = random3([6, 4, 4], 3);
    let (mut n2, vel) = (n.clone(), random3([6, 4, 4], 4));
    let mut inv = source_invocation(&mut n2, &mut n, &vel, [1, 1, 1], 1.0, &wavelet, 0, 2);
    inv.arrays[0] = c;
    inv.arrays[2] = v.read_only();
    let e = pacc_runtime::run(&prog, inv, &Options::new()).unwrap_err();
    assert!(
        matches!(&e, Error::Overlap { a, b } if a == "cur" && b == "vel"),
        "{e:?}"
    );
    assert_eq!(bits3(&big), bits3(&big0));
}

#[test]
fn non_contiguous_read_only_views() {
    let a = random3([6, 5, 4], 1);
    let e = host_array(&a.slice(ndarray::s![..;2, .., ..]), "vel").unwrap_err();
    assert!(
        matches!(&e, Error::NotContiguous { name } if name == "vel"),
        "{e:?}"
    );
    assert!(has_hint(&e.to_string()));
}

/// Whether a message suggests what to do.
fn has_hint(msg: &str) -> bool {
    [
        "Hint:",
        "; use ",
        "; pass ",
        "make the arrays",
        "lower ",
        "Please report",
    ]
    .iter()
    .any(|h| msg.contains(h))
}

/// Every error the runtime can return says how to fix it.
#[test]
fn every_error_message_has_a_hint() {
    let p = || PathBuf::from("/tmp/x");
    let s = || String::from("x");
    let errors = vec![
        Error::ShapeMismatch {
            name: s(),
            got: vec![1],
            first: s(),
            want: vec![2],
        },
        Error::NotContiguous { name: s() },
        Error::Overlap { a: s(), b: s() },
        Error::ReadOnly { name: s() },
        Error::Empty {
            name: s(),
            shape: vec![0],
        },
        Error::SmallerThanHalo {
            axis: 0,
            extent: 1,
            need: 3,
            reach_lo: 1,
            reach_hi: 1,
        },
        Error::PointOutOfBounds {
            point: s(),
            index: vec![9],
            shape: vec![3],
        },
        Error::Option(s()),
        Error::Env(pacc_runtime::EnvError::NotBoolean {
            var: s(),
            value: s(),
            on: s(),
        }),
        Error::Env(pacc_runtime::EnvError::Empty {
            var: s(),
            what: s(),
        }),
        Error::Compress(pacc_runtime::CompressError::UnknownArray {
            name: s(),
            program: s(),
            arrays: s(),
        }),
        Error::Compress(pacc_runtime::CompressError::Rate {
            array: s(),
            elem: "f32",
            ndim: 3,
            rate: 1.0,
            bits: 32,
            reason: s(),
        }),
        Error::Compress(pacc_runtime::CompressError::SwapGroup {
            a: s(),
            ra: s(),
            b: s(),
            rb: s(),
        }),
        Error::Compress(pacc_runtime::CompressError::Scheme {
            scheme: pacc_runtime::Scheme::StagedCopy,
        }),
        Error::Compress(pacc_runtime::CompressError::Scratch { array: s() }),
        Error::Compress(pacc_runtime::CompressError::Codec {
            array: s(),
            message: s(),
        }),
        Error::Plan(pacc_runtime::plan::PlanError::CompressScheme {
            scheme: pacc_runtime::Scheme::StagedCopy,
        }),
        Error::Setting {
            setting: "chunks",
            value: s(),
            from: s(),
            problem: s(),
            fix: s(),
        },
        Error::Checkpoint(pacc_runtime::CheckpointError::Extend {
            dir: p(),
            saved_steps: 4,
            call_steps: 8,
            what: s(),
            saved: s(),
            call: s(),
        }),
        Error::NoCuda {
            reason: s(),
            from: None,
        },
        Error::NoCuda {
            reason: s(),
            from: Some(s()),
        },
        Error::DeviceMemory {
            need: 2,
            free: 1,
            sets: 3,
        },
        Error::Nvrtc {
            kernel: s(),
            log: s(),
        },
        Error::Cuda {
            what: s(),
            message: s(),
        },
        Error::Fault {
            site: Site::Kernel,
            index: 0,
            op: s(),
        },
        Error::Failed {
            cause: Box::new(Error::Cuda {
                what: s(),
                message: s(),
            }),
            progress: Progress {
                steps_complete: 4,
                blocks_complete: 2,
                torn: true,
                checkpoint: None,
            },
        },
        Error::Internal(s()),
        Error::Axes { ndim: 4 },
        CheckpointError::Write {
            path: p(),
            message: s(),
        }
        .into(),
        CheckpointError::Read {
            path: p(),
            message: s(),
        }
        .into(),
        CheckpointError::Missing { dir: p() }.into(),
        CheckpointError::Corrupt {
            path: p(),
            reason: s(),
        }
        .into(),
        CheckpointError::Mismatch {
            dir: p(),
            what: s(),
            saved: s(),
            call: s(),
        }
        .into(),
        PlanError::Rank {
            program: s(),
            shape: vec![],
            got: 1,
            want: 2,
        }
        .into(),
        PlanError::TooSmall {
            kernel: s(),
            nest: 0,
            axis: 0,
            extent: 1,
            lo: 0,
            hi: 1,
            first: -1,
            last: 1,
        }
        .into(),
        PlanError::PointCount { got: 1, want: 2 }.into(),
        PlanError::ZeroChunks(0).into(),
        PlanError::ZeroBlockSteps(0).into(),
        PlanError::ZeroBufferSets(0).into(),
        PlanError::TooManyChunks {
            chunks: 9,
            planes: 3,
        }
        .into(),
        PlanError::TooThin {
            scheme: Scheme::DirectMap,
            need: 4,
            block_steps: 3,
            planes: 5,
        }
        .into(),
        PlanError::PointOutside {
            point: s(),
            plane: 9,
            planes: 3,
        }
        .into(),
    ];
    for e in errors {
        assert!(has_hint(&e.to_string()), "no hint in: {e}");
    }
    // Progress with a checkpoint says how to resume.
    let e = Error::Failed {
        cause: Box::new(Error::Internal(s())),
        progress: Progress {
            steps_complete: 4,
            blocks_complete: 2,
            torn: false,
            checkpoint: Some(pacc_runtime::CheckpointRef { dir: p(), step: 4 }),
        },
    };
    assert!(e.to_string().contains("Options::resume"), "{e}");
}

#[test]
fn checkpoint_environment_variables() {
    // The only test of this binary that reads the environment.
    let vars = [
        "PACC_CHECKPOINT_DIR",
        "PACC_CHECKPOINT_EVERY",
        "PACC_RESUME",
        "PACC_FMA",
        "PACC_RING",
        "PACC_COMPRESS",
    ];
    let with = |set: &[(&str, &str)]| {
        for v in vars {
            std::env::remove_var(v);
        }
        for (k, v) in set {
            std::env::set_var(k, v);
        }
        let o = Options::from_env();
        for v in vars {
            std::env::remove_var(v);
        }
        o
    };
    let o = with(&[
        ("PACC_CHECKPOINT_DIR", "/d"),
        ("PACC_CHECKPOINT_EVERY", "3"),
    ])
    .unwrap();
    assert_eq!(
        o.checkpoint,
        Some(pacc_runtime::Checkpointing {
            dir: "/d".into(),
            every_blocks: 3
        })
    );
    assert_eq!(o.resume, None);
    let o = with(&[("PACC_CHECKPOINT_DIR", "/d")]).unwrap();
    assert_eq!(
        o.checkpoint.unwrap().every_blocks,
        pacc_runtime::options::DEFAULT_CHECKPOINT_EVERY
    );
    let o = with(&[("PACC_CHECKPOINT_DIR", "/d"), ("PACC_RESUME", "auto")]).unwrap();
    assert_eq!(o.resume, Some(pacc_runtime::Resume::IfPresent("/d".into())));
    let o = with(&[("PACC_RESUME", "/e")]).unwrap();
    assert_eq!(o.resume, Some(pacc_runtime::Resume::From("/e".into())));
    assert!(o.checkpoint.is_none());
    for bad in [
        &[("PACC_CHECKPOINT_EVERY", "3")][..],
        &[("PACC_RESUME", "auto")],
        &[
            ("PACC_CHECKPOINT_DIR", "/d"),
            ("PACC_CHECKPOINT_EVERY", "0"),
        ],
        &[
            ("PACC_CHECKPOINT_DIR", "/d"),
            ("PACC_CHECKPOINT_EVERY", "often"),
        ],
    ] {
        let e = with(bad).unwrap_err();
        assert!(matches!(e, Error::Option(_)), "{bad:?}: {e:?}");
    }
    // An empty directory is refused, not taken for unset (issue 48: it was ignored).
    for var in ["PACC_CHECKPOINT_DIR", "PACC_RESUME"] {
        match with(&[(var, "")]) {
            Err(Error::Env(pacc_runtime::EnvError::Empty { var: v, .. })) => assert_eq!(v, var),
            other => panic!("{var}: {other:?}"),
        }
    }
    // Every boolean variable takes the usual spellings through one parser (PACC_FMA=on was
    // silently off) and refuses the rest, naming the variable.
    for (v, on) in [
        ("on", true),
        ("TRUE", true),
        ("Yes", true),
        ("1", true),
        ("off", false),
    ] {
        let o = with(&[("PACC_FMA", v), ("PACC_RING", v)]).unwrap();
        assert_eq!((o.cuda.fma, o.no_ring), (on, !on), "{v}");
    }
    for var in ["PACC_FMA", "PACC_RING"] {
        match with(&[(var, "maybe")]) {
            Err(Error::Env(pacc_runtime::EnvError::NotBoolean { var: v, value, .. })) => {
                assert_eq!((v.as_str(), value.as_str()), (var, "maybe"))
            }
            other => panic!("{var}: {other:?}"),
        }
    }
    // A name given twice in PACC_COMPRESS is refused (the second rate silently won).
    let e = with(&[("PACC_COMPRESS", "all=16,all=8")]).unwrap_err();
    assert!(e.to_string().contains("`all` is given twice"), "{e}");
    let o = with(&[("PACC_COMPRESS", "all=16,cur=8")]).unwrap();
    assert_eq!((o.compress_all, o.compress.len()), (Some(16.0), 1));
}

/// The child's side of `an_unknown_pacc_variable_is_warned_about_once` (does nothing unless
/// started by it, with the unknown variable set).
#[test]
fn unknown_variable_child() {
    if std::env::var_os("PACC_TYPO_CHUNKS").is_none() {
        return;
    }
    for _ in 0..3 {
        Options::from_env().unwrap();
    }
}

/// A `PACC_` variable pacc does not read is named on stderr, once per process, with the ones it
/// reads (it was silently ignored).
#[test]
fn an_unknown_pacc_variable_is_warned_about_once() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "unknown_variable_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PACC_TYPO_CHUNKS", "4")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("PACC_TYPO_CHUNKS is set but not a variable pacc reads"),
        "{err}"
    );
    for known in pacc_runtime::env::VARIABLES {
        assert!(warnings[0].contains(known), "{known}: {err}");
    }
}

// ------------------------------------------------------------------------------------------------
// Concurrency

fn kept(case: &Case, a: &Arrays) -> Vec<Vec<u64>> {
    a.bits()
        .into_iter()
        .zip(&case.program().arrays)
        .filter(|(_, d)| d.role != Role::Scratch)
        .map(|(b, _)| b)
        .collect()
}

/// Four different calls at once, several rounds, on every backend: each equals its serial
/// reference and the same call made alone.
#[test]
fn concurrent_calls_equal_serial_references() {
    let cases = [
        Case::new(Kind::Stencil(1), &[14, 6, 7], 1),
        Case::new(Kind::Stencil(2), &[13, 7, 6], 2),
        Case::new(Kind::TwoKernel, &[20, 9], 3),
        Case::new(Kind::Source, &[12, 5, 6], 4),
    ];
    let steps = 7;
    let refs: Vec<_> = cases
        .iter()
        .map(|c| kept(c, &c.reference(steps).0))
        .collect();
    let alone: Vec<_> = cases
        .iter()
        .map(|c| {
            let mut x = c.initial();
            let r = c.run(&mut x, steps, &cpu(3, 2)).unwrap().reductions;
            (x, r)
        })
        .collect();
    for backend in [
        BackendChoice::Auto,
        BackendChoice::Cpu,
        BackendChoice::Shuffled(5),
    ] {
        let barrier = Barrier::new(cases.len());
        std::thread::scope(|s| {
            for (i, case) in cases.iter().enumerate() {
                let (barrier, refs, alone) = (&barrier, &refs, &alone);
                s.spawn(move || {
                    for round in 0..3 {
                        let mut x = case.initial();
                        barrier.wait();
                        let o = cpu(3, 2).backend(backend);
                        let out = case.run(&mut x, steps, &o).unwrap();
                        assert_eq!(
                            kept(case, &x),
                            refs[i],
                            "{:?} round {round} {backend:?}",
                            case.kind
                        );
                        if backend != BackendChoice::Shuffled(5) {
                            assert_eq!(x.bits(), alone[i].0.bits());
                            assert_eq!(red_bits(&out.reductions), red_bits(&alone[i].1));
                        }
                    }
                });
            }
        });
    }
}

/// Concurrent calls that checkpoint (to their own directories), resume, and fail by injected
/// faults do not disturb each other.
#[test]
fn concurrent_checkpoints_resumes_and_faults() {
    let case = Case::new(Kind::Source, &[12, 5, 6], 8);
    let steps = 9;
    let want = case.reference(steps).0.bits();
    let dirs: Vec<TempDir> = (0..4).map(|_| TempDir::new("concurrent")).collect();
    let barrier = Barrier::new(4);
    std::thread::scope(|s| {
        for (i, dir) in dirs.iter().enumerate() {
            let (case, want, barrier) = (&case, &want, &barrier);
            s.spawn(move || {
                let o = cpu(2 + i % 2, 2).checkpoint(dir.path(), 1);
                barrier.wait();
                let mut x = case.initial();
                if i % 2 == 0 {
                    // Fails after some blocks, then resumes.
                    let e = {
                        let _f = fault::inject(Site::Kernel, 10 + i);
                        case.run(&mut x, steps, &o).unwrap_err()
                    };
                    assert!(e.progress().is_some_and(|p| p.checkpoint.is_some()), "{e}");
                    x = case.initial();
                    case.run(&mut x, steps, &o.clone().resume(dir.path()))
                        .unwrap();
                } else {
                    case.run(&mut x, steps, &o).unwrap();
                }
                assert_eq!(&x.bits(), want, "thread {i}");
            });
        }
    });
}

#[test]
fn an_unusable_checkpoint_directory_is_refused_before_anything_is_touched() {
    let dir = TempDir::new("notadir");
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let case = Case::new(Kind::Stencil(1), &[8, 4, 4], 1);
    for bad in [file.clone(), file.join("sub")] {
        let mut x = case.initial();
        let e = case
            .run(&mut x, 5, &cpu(2, 1).checkpoint(&bad, 1))
            .unwrap_err();
        assert!(
            matches!(e, Error::Checkpoint(CheckpointError::Write { .. })),
            "{e:?}"
        );
        assert!(e.progress().is_none() && e.to_string().contains("Hint:"));
        assert_eq!(x.bits(), case.initial().bits());
    }
}
