//! Checkpoint and resume: checkpointed runs equal uninterrupted ones bit for bit; a process
//! killed with SIGKILL mid-run and resumed ends with exactly the uninterrupted arrays; damaged or
//! foreign checkpoints are typed errors that leave the arrays untouched; numpy reads the files.

mod common;
mod util;

use pacc_runtime::checkpoint::{binding_at, own_dir, State, LATEST, SUBDIR};
use pacc_runtime::fault::{self, Site};
use pacc_runtime::npy::parse_npy_header;
use pacc_runtime::plan::Scheme;
use pacc_runtime::{BackendChoice, CheckpointError, Error, Options};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use util::*;

fn all_cases() -> Vec<Case> {
    vec![
        Case::new(Kind::Stencil(1), &[11, 5, 6], 1),
        Case::new(Kind::Stencil(2), &[13, 6, 5], 2),
        Case::new(Kind::TwoKernel, &[12, 7], 3),
        Case::new(Kind::Source, &[10, 4, 5], 4),
    ]
    .into_iter()
    .filter(|c| !(on_cuda() && c.kind == Kind::TwoKernel))
    .collect()
}

/// The uninterrupted run: physical arrays and reductions.
fn uninterrupted(case: &Case, steps: usize, opts: &Options) -> (Arrays, Vec<f64>) {
    let mut x = case.initial();
    let out = case.run(&mut x, steps, opts).unwrap();
    (x, out.reductions)
}

/// The checkpoint `LATEST` names, and its parsed state.
fn latest(dir: &Path) -> (PathBuf, State) {
    let own = own_dir(dir);
    let pointer = std::fs::read_to_string(own.join(LATEST)).unwrap();
    let name = pointer.lines().next().unwrap();
    let ck = own.join(name);
    let state: State =
        serde_json::from_slice(&std::fs::read(ck.join("state.json")).unwrap()).unwrap();
    (ck, state)
}

/// The sorted names of the entries of `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn checkpointed_runs_equal_uninterrupted_runs_bit_for_bit() {
    for case in all_cases() {
        for (chunks, k, scheme) in [
            (3, 2, Scheme::RegionSharing),
            (2, 1, Scheme::DirectMap),
            (4, 3, Scheme::StagedCopy),
            (1, 2, Scheme::RegionSharing),
            (3, 2, Scheme::Wavefront),
        ] {
            let steps = 9;
            let base = cpu(chunks, k).scheme(scheme);
            let (want, want_red) = uninterrupted(&case, steps, &base);
            for every in [1, 2, 5] {
                let backends = match test_backend() {
                    BackendChoice::Cpu => {
                        vec![BackendChoice::Cpu, BackendChoice::Shuffled(every as u64)]
                    }
                    b => vec![b],
                };
                for backend in backends {
                    let dir = TempDir::new("equal");
                    let o = base.clone().backend(backend).checkpoint(dir.path(), every);
                    let mut x = case.initial();
                    let out = case.run(&mut x, steps, &o).unwrap();
                    let ctx = format!("{:?} {o:?}", case.kind);
                    assert_eq!(x.bits(), want.bits(), "{ctx}");
                    assert_eq!(red_bits(&out.reductions), red_bits(&want_red), "{ctx}");
                    assert_eq!(out.report.steps, steps);
                    let seg = every * k;
                    let expect_ckpts = (steps - 1) / seg;
                    assert!(
                        out.report
                            .adjustments
                            .iter()
                            .any(|a| a.contains(&format!("{expect_ckpts} checkpoints"))),
                        "{ctx}: {:?}",
                        out.report.adjustments
                    );
                    if expect_ckpts > 0 {
                        // Exactly one checkpoint left, at the last segment boundary.
                        let (_, state) = latest(dir.path());
                        assert_eq!(state.step, expect_ckpts * seg, "{ctx}");
                        assert_eq!(names(dir.path()), [SUBDIR], "{ctx}");
                        assert_eq!(names(&own_dir(dir.path())).len(), 2, "{ctx}");
                    }
                }
            }
        }
    }
}

/// The checkpoint's files hold the serial reference's state at its step, and state.json says how
/// names map to files.
#[test]
fn checkpoint_contents_are_the_state_at_its_step() {
    for case in all_cases() {
        let dir = TempDir::new("contents");
        let (k, every, steps) = (2, 2, 11);
        let mut x = case.initial();
        case.run(&mut x, steps, &cpu(3, k).checkpoint(dir.path(), every))
            .unwrap();
        let (ck, state) = latest(dir.path());
        assert_eq!(state.step, 8);
        assert_eq!(state.steps_total, steps);
        assert_eq!(state.binding, binding_at(&case.program(), 8));
        let (want, want_red) = case.reference(8);
        let want_bits = want.bits();
        let prog = case.program();
        for (p, a) in state.arrays.iter().enumerate() {
            assert_eq!(a.name, prog.arrays[p].name);
            let Some(file) = &a.file else {
                assert_eq!(a.name, "vel", "only the input is not saved");
                continue;
            };
            let bytes = std::fs::read(ck.join(file)).unwrap();
            let h = parse_npy_header(&bytes).unwrap();
            assert_eq!(h.shape, case.shape);
            assert_eq!(h.data_offset % 64, 0, "numpy aligns the data to 64 bytes");
            assert!(!h.fortran_order);
            let data = &bytes[h.data_offset..];
            let got: Vec<u64> = match h.descr.as_str() {
                "<f8" => data
                    .chunks(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
                "<f4" => data
                    .chunks(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as u64)
                    .collect(),
                d => panic!("descr {d}"),
            };
            if prog.arrays[p].role != pacc_runtime::program::Role::Scratch {
                assert_eq!(got, want_bits[p], "{:?} array {}", case.kind, a.name);
            }
            // `bound_to` is the loop name that refers to this memory at the step.
            let bound = state.binding.iter().position(|&q| q == p).unwrap();
            assert_eq!(a.bound_to, prog.arrays[bound].name);
        }
        // Reductions at the step: close to the serial ones (summation order differs).
        for (r, w) in state.reductions.iter().zip(&want_red) {
            let v = f64::from_bits(r.bits);
            assert!(common::close(v, *w, 1e-5), "{} {v} vs {w}", r.name);
        }
    }
}

/// Stops a checkpointing run after each checkpoint in turn (a fault on the next checkpoint
/// write), resumes from it, and compares with the uninterrupted run.
#[test]
fn resume_from_every_checkpoint_equals_uninterrupted() {
    for case in all_cases() {
        let (chunks, k, every, steps) = (3, 2, 1, 9);
        let base = cpu(chunks, k);
        let (want, want_red) = uninterrupted(&case, steps, &base);
        for stop_after in 1..=3 {
            let dir = TempDir::new("resume");
            let o = base.clone().checkpoint(dir.path(), every);
            let mut x = case.initial();
            {
                let _f = fault::inject(Site::Checkpoint, stop_after);
                let e = case.run(&mut x, steps, &o).unwrap_err();
                let p = e.progress().expect("the arrays were written");
                assert!(matches!(
                    e.cause(),
                    Error::Fault {
                        site: Site::Checkpoint,
                        ..
                    }
                ));
                assert_eq!(p.steps_complete, (stop_after + 1) * k);
                assert!(!p.torn);
                let c = p.checkpoint.as_ref().unwrap();
                assert_eq!((c.dir.as_path(), c.step), (dir.path(), stop_after * k));
            }
            // No half-written checkpoint is left behind.
            let names = names(&own_dir(dir.path()));
            assert_eq!(names.len(), 2, "{names:?}");
            // Resume with the initial arguments, as a restarted program would.
            let mut y = case.initial();
            let out = case
                .run(&mut y, steps, &o.clone().resume(dir.path()))
                .unwrap();
            assert_eq!(y.bits(), want.bits(), "{:?} stop {stop_after}", case.kind);
            assert_eq!(red_bits(&out.reductions), red_bits(&want_red));
            assert!(out.report.adjustments.iter().any(|a| a.contains("resumed")));
            // Resuming with a different geometry still gives the same arrays.
            let mut z = case.initial();
            let o2 = cpu(2, 3).scheme(Scheme::StagedCopy).resume(dir.path());
            case.run(&mut z, steps, &o2).unwrap();
            assert_eq!(z.bits(), want.bits());
            let mut w = case.initial();
            let o3 = cpu(4, 2).scheme(Scheme::Wavefront).resume(dir.path());
            case.run(&mut w, steps, &o3).unwrap();
            assert_eq!(w.bits(), want.bits(), "resumed with the wavefront");
        }
    }
}

#[test]
fn resume_if_present_starts_fresh_without_a_checkpoint() {
    let case = Case::new(Kind::Stencil(1), &[9, 5, 5], 5);
    let dir = TempDir::new("ifpresent");
    let (want, want_red) = uninterrupted(&case, 6, &cpu(2, 2));
    let o = cpu(2, 2)
        .checkpoint(dir.path(), 1)
        .resume_if_present(dir.path());
    let mut x = case.initial();
    let out = case.run(&mut x, 6, &o).unwrap();
    assert_eq!(x.bits(), want.bits());
    assert_eq!(red_bits(&out.reductions), red_bits(&want_red));
    // Now there is one (at step 4): resuming again gives the same.
    let mut y = case.initial();
    let out = case.run(&mut y, 6, &o).unwrap();
    assert_eq!(y.bits(), want.bits());
    assert_eq!(red_bits(&out.reductions), red_bits(&want_red));
    assert!(out
        .report
        .adjustments
        .iter()
        .any(|a| a.contains("at step 4")));
    // A run extended past the original end continues from the checkpoint.
    let (want8, _) = uninterrupted(&case, 8, &cpu(2, 2));
    let mut z = case.initial();
    case.run(&mut z, 8, &cpu(2, 2).resume(dir.path())).unwrap();
    assert_eq!(z.bits(), want8.bits());
}

/// Files of the user's in the checkpoint directory, with names like pacc's own entries, survive
/// a checkpointed run; pacc's own stale entries are removed, and a file of the user's inside
/// pacc's subdirectory stays too.
#[test]
fn checkpoints_leave_the_users_files_alone() {
    let dir = TempDir::new("userfiles");
    let d = dir.path();
    let user_files = [
        "tmp-my-results/data.txt",
        "ckpt-notes/todo.txt",
        "tmp-file.txt",
        "LATEST.tmp-mine",
        "ckpt-000000000002-1-a-0/mine.txt",
        "pacc-checkpoints/notes.txt",
        "pacc-checkpoints/tmp-my-results/data.txt",
        "pacc-checkpoints/ckpt-notes",
        "pacc-checkpoints/LATEST.tmp-mine",
    ];
    for f in user_files {
        let p = d.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, f).unwrap();
    }
    std::fs::create_dir(d.join("ckpt-empty")).unwrap();
    // What an interrupted run of pacc's leaves: a checkpoint, a half-written one, a pointer.
    let own = own_dir(d);
    let stale = [
        "ckpt-000000000002-4242-18f3a-0",
        "tmp-4242-18f3b-1",
        "tmp-probe-4242-18f3c-2",
        "LATEST.tmp-ckpt-000000000004-4242-18f3d-3",
    ];
    for s in &stale[..2] {
        std::fs::create_dir(own.join(s)).unwrap();
        std::fs::write(own.join(s).join("cur.npy"), "stale").unwrap();
    }
    for s in &stale[2..] {
        std::fs::write(own.join(s), "stale").unwrap();
    }
    let case = Case::new(Kind::Stencil(1), &[9, 5, 5], 5);
    let (want, _) = uninterrupted(&case, 9, &cpu(2, 2));
    let mut x = case.initial();
    case.run(&mut x, 9, &cpu(2, 2).checkpoint(d, 1)).unwrap();
    assert_eq!(x.bits(), want.bits());
    for f in user_files {
        let p = d.join(f);
        assert_eq!(std::fs::read_to_string(&p).ok().as_deref(), Some(f), "{f}");
    }
    assert!(d.join("ckpt-empty").is_dir());
    let (ck, state) = latest(d);
    assert_eq!(state.step, 8);
    let ck = ck.file_name().unwrap().to_str().unwrap().to_string();
    let mut left = vec![
        LATEST.to_string(),
        ck,
        "ckpt-notes".into(),
        "notes.txt".into(),
    ];
    left.extend(["LATEST.tmp-mine".into(), "tmp-my-results".into()]);
    left.sort();
    assert_eq!(
        names(&own),
        left,
        "pacc's stale entries are gone, the user's stay"
    );
}

/// A checkpoint in the layout of older versions (`DIR/LATEST`, `DIR/ckpt-...`) still resumes.
#[test]
fn the_old_layout_resumes() {
    let dir = TempDir::new("oldlayout");
    let d = dir.path();
    let case = make_checkpoint(d);
    let own = own_dir(d);
    for n in names(&own) {
        std::fs::rename(own.join(&n), d.join(&n)).unwrap();
    }
    std::fs::remove_dir(&own).unwrap();
    let (want, want_red) = uninterrupted(&case, 6, &cpu(2, 2));
    let mut x = case.initial();
    let out = case.run(&mut x, 6, &cpu(2, 2).resume(d)).unwrap();
    assert_eq!(x.bits(), want.bits());
    assert_eq!(red_bits(&out.reductions), red_bits(&want_red));
    assert!(out
        .report
        .adjustments
        .iter()
        .any(|a| a.contains("at step 4")));
}

/// Makes a checkpoint of the stencil at step 4 in `dir`; returns the case.
fn make_checkpoint(dir: &Path) -> Case {
    let case = Case::new(Kind::Source, &[10, 5, 4], 9);
    let mut x = case.initial();
    case.run(&mut x, 6, &cpu(2, 2).checkpoint(dir, 2)).unwrap();
    assert_eq!(latest(dir).1.step, 4);
    case
}

/// Resumes from `dir`, expecting an error; checks that the arrays are untouched.
fn resume_fails(case: &Case, dir: &Path, steps: usize) -> Error {
    let mut x = case.initial();
    let x0 = x.clone();
    let e = case.run(&mut x, steps, &cpu(2, 2).resume(dir)).unwrap_err();
    assert_eq!(
        x.bits(),
        x0.bits(),
        "arrays touched by a failed resume: {e}"
    );
    assert!(e.progress().is_none(), "{e}");
    assert!(e.to_string().contains("Hint:"), "{e}");
    e
}

fn corrupt_reason(e: &Error) -> (&Path, &str) {
    match e {
        Error::Checkpoint(CheckpointError::Corrupt { path, reason }) => (path, reason),
        e => panic!("expected a corrupt checkpoint, got {e:?}"),
    }
}

#[test]
fn corrupted_checkpoints_are_typed_errors_and_touch_nothing() {
    // A flipped bit in the data of an array.
    let dir = TempDir::new("corrupt");
    let case = make_checkpoint(dir.path());
    let (ck, _) = latest(dir.path());
    let f = ck.join("nxt.npy");
    let mut bytes = std::fs::read(&f).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x10;
    std::fs::write(&f, &bytes).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    let (path, reason) = corrupt_reason(&e);
    assert_eq!(path, f);
    assert!(reason.contains("CRC-32"), "{reason}");

    // A truncated file.
    let dir = TempDir::new("truncated");
    let case = make_checkpoint(dir.path());
    let f = latest(dir.path()).0.join("cur.npy");
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    assert!(corrupt_reason(&e).1.contains("bytes"), "{e}");

    // A damaged header (same length).
    let dir = TempDir::new("header");
    let case = make_checkpoint(dir.path());
    let f = latest(dir.path()).0.join("cur.npy");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[0] = b'X';
    std::fs::write(&f, &bytes).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    assert!(corrupt_reason(&e).1.contains("magic"), "{e}");

    // An edited state.json (valid JSON, different step).
    let dir = TempDir::new("state");
    let case = make_checkpoint(dir.path());
    let f = latest(dir.path()).0.join("state.json");
    let s = std::fs::read_to_string(&f)
        .unwrap()
        .replace("\"step\": 4", "\"step\": 2");
    std::fs::write(&f, s).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    assert!(corrupt_reason(&e).1.contains("LATEST"), "{e}");

    // Garbage in LATEST; a missing array file; a missing state.json.
    let dir = TempDir::new("latest");
    let case = make_checkpoint(dir.path());
    std::fs::write(own_dir(dir.path()).join(LATEST), "../../etc\n").unwrap();
    corrupt_reason(&resume_fails(&case, dir.path(), 6));
    let dir = TempDir::new("missingfile");
    let case = make_checkpoint(dir.path());
    std::fs::remove_file(latest(dir.path()).0.join("cur.npy")).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    assert!(
        matches!(e, Error::Checkpoint(CheckpointError::Read { .. })),
        "{e:?}"
    );
    let dir = TempDir::new("missingstate");
    let case = make_checkpoint(dir.path());
    std::fs::remove_file(latest(dir.path()).0.join("state.json")).unwrap();
    let e = resume_fails(&case, dir.path(), 6);
    assert!(
        matches!(e, Error::Checkpoint(CheckpointError::Read { .. })),
        "{e:?}"
    );

    // No checkpoint at all.
    let dir = TempDir::new("none");
    let e = resume_fails(&case, dir.path(), 6);
    assert!(
        matches!(e, Error::Checkpoint(CheckpointError::Missing { .. })),
        "{e:?}"
    );
}

#[test]
fn checkpoints_of_another_call_are_refused() {
    let dir = TempDir::new("mismatch");
    let case = make_checkpoint(dir.path());
    let what = |e: Error| match e {
        Error::Checkpoint(CheckpointError::Mismatch { what, .. }) => what,
        e => panic!("expected a mismatch, got {e:?}"),
    };
    // Fewer steps than the checkpoint has done.
    assert_eq!(what(resume_fails(&case, dir.path(), 3)), "the step counter");
    // Another input (velocity model).
    let mut other = Case::new(Kind::Source, &[10, 5, 4], 9);
    other.vel[[3, 2, 1]] += 1.0;
    assert!(what(resume_fails(&other, dir.path(), 6)).contains("input array `vel`"));
    // Another slice (wavelet).
    let mut other = Case::new(Kind::Source, &[10, 5, 4], 9);
    other.wavelet[7] = 0.0;
    assert!(what(resume_fails(&other, dir.path(), 6)).contains("slice `wavelet`"));
    // Another scalar (the source position).
    let mut other = Case::new(Kind::Source, &[10, 5, 4], 9);
    other.src[0] += 1;
    assert!(what(resume_fails(&other, dir.path(), 6)).contains("scalar `sz`"));
    // Another shape, another program.
    let other = Case::new(Kind::Source, &[11, 5, 4], 9);
    assert_eq!(what(resume_fails(&other, dir.path(), 6)), "the array shape");
    let other = Case::new(Kind::Stencil(1), &[10, 5, 4], 9);
    assert_eq!(what(resume_fails(&other, dir.path(), 6)), "the program");
}

/// Extending a run from its checkpoint with another per-step slice (a longer call usually has
/// a longer wavelet) is refused with its own error, which names the slice and both step
/// counts; the arrays stay untouched. (Extending with the same arguments works: see
/// `resume_if_present_starts_fresh_without_a_checkpoint`.)
#[test]
fn extending_a_run_with_other_arguments_is_its_own_error() {
    let dir = TempDir::new("extend");
    make_checkpoint(dir.path());
    let mut longer = Case::new(Kind::Source, &[10, 5, 4], 9);
    longer.wavelet.push(0.5);
    match resume_fails(&longer, dir.path(), 10) {
        Error::Checkpoint(CheckpointError::Extend {
            saved_steps,
            call_steps,
            what,
            ..
        }) => {
            assert_eq!((saved_steps, call_steps), (6, 10));
            assert_eq!(what, "slice `wavelet`");
        }
        e => panic!("expected Extend, got {e:?}"),
    }
    let e = resume_fails(&longer, dir.path(), 10).to_string();
    assert!(
        e.contains("written by a run of 6 steps and this call asks for 10"),
        "{e}"
    );
    assert!(e.contains("the remaining 4 steps"), "{e}");
    // Without extending, the same difference is the plain mismatch.
    assert!(matches!(
        resume_fails(&longer, dir.path(), 6),
        Error::Checkpoint(CheckpointError::Mismatch { .. })
    ));
}

/// numpy (when installed) reads the `.npy` files; without numpy, a pure-Python reader following
/// numpy's format description does.
#[test]
fn numpy_reads_the_files() {
    let Ok(out) = std::process::Command::new("python3")
        .arg("--version")
        .output()
    else {
        println!("skipped: python3 is not available");
        return;
    };
    assert!(out.status.success());
    let dir = TempDir::new("numpy");
    let mut cases = vec![Case::new(Kind::Stencil(1), &[9, 4, 5], 3)];
    if !on_cuda() {
        cases.push(Case::new(Kind::TwoKernel, &[9, 6], 4));
    }
    for case in cases {
        let mut x = case.initial();
        case.run(&mut x, 5, &cpu(2, 2).checkpoint(dir.path(), 1))
            .unwrap();
        let (ck, state) = latest(dir.path());
        for a in state.arrays.iter() {
            let path = ck.join(a.file.as_ref().unwrap());
            // What the file holds, as this crate reads it (`checkpoint_contents_are_the_state_at_
            // its_step` compares that with the serial reference).
            let bytes = std::fs::read(&path).unwrap();
            let h = parse_npy_header(&bytes).unwrap();
            let size = if h.descr == "<f4" { 4 } else { 8 };
            let want: Vec<u64> = bytes[h.data_offset..]
                .chunks(size)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..size].copy_from_slice(c);
                    u64::from_le_bytes(w)
                })
                .collect();
            let script = r#"
import sys, ast, struct
path = sys.argv[1]
try:
    import numpy as np
    a = np.load(path)
    assert a.flags['C_CONTIGUOUS']
    bits = a.reshape(-1).view('<u%d' % a.dtype.itemsize).tolist()
    print('numpy', a.dtype.str, tuple(a.shape), sum(bits) % (1 << 61), bits[0])
except ImportError:
    b = open(path, 'rb').read()
    assert b[:6] == b'\x93NUMPY' and b[6] == 1 and b[7] == 0
    n = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode('latin1'))
    assert (10 + n) % 64 == 0 and not h['fortran_order']
    size = int(h['descr'][2:])
    fmt = '<' + {4: 'I', 8: 'Q'}[size]
    bits = [struct.unpack(fmt, b[i:i + size])[0] for i in range(10 + n, len(b), size)]
    count = 1
    for d in h['shape']:
        count *= d
    assert len(bits) == count
    print('python', h['descr'], tuple(h['shape']), sum(bits) % (1 << 61), bits[0])
"#;
            let out = std::process::Command::new("python3")
                .args(["-c", script])
                .arg(&path)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let words: Vec<&str> = stdout.split_whitespace().collect();
            if words[0] == "python" && a.name == state.arrays[0].name {
                println!("numpy is not installed: checked with a pure-Python .npy reader instead");
            }
            let sum: u128 = want.iter().map(|&b| b as u128).sum();
            let expect_descr = if case.kind == Kind::TwoKernel {
                "<f4"
            } else {
                "<f8"
            };
            let shape = format!(
                "({})",
                case.shape
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let line = stdout.trim().splitn(3, ' ').nth(2).unwrap().to_string();
            assert_eq!(words[1], expect_descr, "{stdout}");
            assert_eq!(
                line,
                format!("{shape} {} {}", sum % (1u128 << 61), want[0]),
                "{stdout}"
            );
        }
    }
}

// ------------------------------------------------------------------------------------------------
// SIGKILL: a child process (this test binary, re-executed) runs a long checkpointing computation
// with a slow kernel; the parent kills it once a checkpoint exists, then resumes in-process.

const CHILD_ENV: &str = "PACC_TEST_SIGKILL_DIR";

/// Steps of the killed run: on the GPU the slow CPU kernel does not run, so more steps.
fn kill_steps() -> usize {
    if test_backend() == BackendChoice::Cpu {
        400
    } else {
        4000
    }
}

fn kill_case() -> Case {
    Case::new(Kind::Stencil(1), &[12, 6, 6], 77)
}

fn kill_opts(dir: &Path) -> Options {
    cpu(3, 2).checkpoint(dir, 1)
}

/// The child's side (does nothing unless started by `sigkill_mid_run_then_resume`).
#[test]
fn sigkill_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let case = kill_case();
    let mut x = case.initial();
    case.run_slow(
        &mut x,
        kill_steps(),
        &kill_opts(Path::new(&dir)),
        Some(Duration::from_millis(2)),
    )
    .unwrap();
    // Reaching here means the parent did not kill us in time.
    std::process::exit(3);
}

#[cfg(unix)]
#[test]
fn sigkill_mid_run_then_resume() {
    use std::os::unix::process::ExitStatusExt;
    let dir = TempDir::new("sigkill");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "sigkill_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the second checkpoint, then kill in the middle of the next segment.
    let start = Instant::now();
    let step_of = |d: &Path| {
        std::fs::read_to_string(own_dir(d).join(LATEST))
            .ok()
            .and_then(|p| p.lines().next().map(str::to_string))
            .and_then(|n| n.split('-').nth(1).and_then(|s| s.parse::<usize>().ok()))
    };
    loop {
        if step_of(dir.path()).is_some_and(|s| s >= 4) {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child ended before it was killed: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint after 120 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(30));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    let killed_at = step_of(dir.path()).unwrap();
    assert!(killed_at < kill_steps(), "the child got to the end");
    println!("killed the child with SIGKILL; its last checkpoint is at step {killed_at}");

    // Resume with the initial arguments (fast kernel now).
    let case = kill_case();
    let mut x = case.initial();
    let out = case
        .run(
            &mut x,
            kill_steps(),
            &kill_opts(dir.path()).resume(dir.path()),
        )
        .unwrap();
    assert!(out.report.adjustments.iter().any(|a| a.contains("resumed")));
    let mut y = case.initial();
    let want = case.run(&mut y, kill_steps(), &cpu(3, 2)).unwrap();
    assert_eq!(
        x.bits(),
        y.bits(),
        "resumed arrays differ from the uninterrupted run"
    );
    assert_eq!(red_bits(&out.reductions), red_bits(&want.reductions));
    let (reference, _) = case.reference(kill_steps());
    assert_eq!(x.bits(), reference.bits(), "and from the serial function");
}
