//! Checkpoints: what a run writes every N blocks so that it can be resumed after a crash.
//!
//! # Layout
//!
//! pacc writes only inside `DIR/pacc-checkpoints/` ([`SUBDIR`]), a directory of its own, and
//! removes only entries there whose names it generates; the rest of `DIR` is the user's.
//!
//! ```text
//! DIR/pacc-checkpoints/LATEST           "ckpt-<step>-<id>\n<crc32 of its state.json, 8 hex digits>\n"
//! DIR/pacc-checkpoints/ckpt-<step>-<id>/state.json
//!                                       program, shape, t0, step counter, binding, reductions,
//!                                       scalars, checksums (see `State`)
//! DIR/pacc-checkpoints/ckpt-<step>-<id>/<arg>.npy
//!                                       one per array the run writes, named after the
//!                                       function's argument: the contents of that argument's memory
//! ```
//!
//! `<step>` is the step counter in at least 12 decimal digits and `<id>` is
//! `<pid>-<hex nanoseconds>-<counter>` (see [`is_own_entry`]).
//!
//! Older pacc versions wrote the same files straight into `DIR` (`DIR/LATEST`,
//! `DIR/ckpt-...`). Resuming reads that layout when `DIR/pacc-checkpoints/LATEST` does not
//! exist; new checkpoints always go to the subdirectory, and the old files are left as they are
//! (remove them by hand once a new checkpoint exists).
//!
//! Every `.npy` is numpy format 1.0 (`numpy.load` reads it): C order, little-endian `<f4`/`<f8`
//! (the machine's byte order), the arrays' shape. A file holds the memory of the argument it is
//! named after; after `step` steps the *name* `a` of the loop refers to the argument
//! `binding[a]` (swaps trade arrays between names). `state.json` says so in each array's
//! `bound_to` entry: the loop variable that refers to that memory at the checkpoint's step. Arrays
//! the run never writes (inputs such as a velocity model) are not saved: their checksum is, and a
//! resumed call must pass the same contents.
//!
//! # Atomicity
//!
//! A checkpoint is written into `pacc-checkpoints/tmp-<id>`, each file fsynced, then the
//! directory is renamed to `ckpt-<step>-<id>` and `LATEST` is replaced (write
//! `LATEST.tmp-ckpt-<step>-<id>`, fsync, rename) — the rename of `LATEST` is the commit point.
//! A crash at any moment leaves `LATEST` naming a complete checkpoint (or no `LATEST` before the
//! first commit). After the commit, older checkpoints and leftovers of interrupted writes are
//! removed: entries of `pacc-checkpoints/` whose names have exactly the forms above, nothing
//! else. Every file's CRC-32 is in `state.json`, and `state.json`'s CRC-32 is in `LATEST`;
//! resuming checks them all before it touches the arrays.
//!
//! One run at a time may use a directory.

use crate::error::{CheckpointError, CheckpointRef, Error};
use crate::fault::{self, Site};
use crate::invocation::{HostArray, Invocation};
use crate::npy::{self, parse_npy_header};
use crate::options::{Checkpointing, Resume};
use crate::program::Program;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `state.json`'s `format` field.
pub const FORMAT: &str = "pacc-checkpoint";
/// `state.json`'s `version` field; a checkpoint of another version is refused.
pub const VERSION: u32 = 1;
/// Name of the pointer file (in [`SUBDIR`]).
pub const LATEST: &str = "LATEST";
/// The directory inside the checkpoint directory that holds everything pacc writes there.
pub const SUBDIR: &str = "pacc-checkpoints";
const STATE: &str = "state.json";
/// Bytes read or written at a time.
const PIECE: usize = 16 << 20;

/// The contents of `state.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub format: String,
    pub version: u32,
    pub program: String,
    pub shape: Vec<usize>,
    /// Value of the time variable at the call's first step.
    pub t0: i64,
    /// Time steps done (counted from the call's first step).
    pub step: usize,
    /// Steps of the call that wrote it (for information; a resumed call may run more).
    pub steps_total: usize,
    pub block_steps: usize,
    pub every_blocks: usize,
    /// Logical -> physical: the loop's array name `a` refers to the argument `binding[a]`.
    pub binding: Vec<usize>,
    pub arrays: Vec<SavedArray>,
    pub reductions: Vec<SavedReduction>,
    pub scalars: Vec<SavedScalar>,
    pub slices: Vec<SavedSlice>,
}

/// One argument array (physical array = argument position).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedArray {
    /// The argument's name.
    pub name: String,
    pub elem: String,
    /// The `.npy` file, for arrays the run writes; `None` for inputs (not saved).
    pub file: Option<String>,
    /// CRC-32 of the whole `.npy` file; for inputs, of the array's contents.
    pub crc32: u32,
    /// Size of the `.npy` file (inputs: of the contents), in bytes.
    pub bytes: u64,
    /// The loop's array name that refers to this memory at `step`.
    pub bound_to: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedReduction {
    pub name: String,
    /// `f64::to_bits` of the value (an f64 holding the reduction's type exactly).
    pub bits: u64,
    /// The value, for people reading the file.
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedScalar {
    pub name: String,
    /// `{:?}` of the `ScalarValue` (exact: Rust prints floats round-trip).
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedSlice {
    pub name: String,
    pub len: usize,
    pub crc32: u32,
}

pub use crate::binding::binding_at;

/// What a resumed call must agree with, computed once per call (reads the input arrays).
pub(crate) struct Fingerprint {
    /// Per physical array: whether it is saved (the run may write it).
    saved: Vec<bool>,
    /// Per physical array: CRC-32 of the contents of the arrays that are not saved.
    inputs: Vec<Option<u32>>,
    scalars: Vec<SavedScalar>,
    slices: Vec<SavedSlice>,
}

pub(crate) fn fingerprint(
    program: &Program,
    inv: &Invocation<'_>,
    saved: Vec<bool>,
) -> Fingerprint {
    let inputs = inv
        .arrays
        .iter()
        .zip(&saved)
        .map(|(h, &s)| (!s).then(|| crc32fast::hash(unsafe { host_bytes(h) })))
        .collect();
    let scalars = inv
        .scalars
        .iter()
        .zip(&program.scalars)
        .map(|(v, d)| SavedScalar {
            name: d.name.clone(),
            value: format!("{v:?}"),
        })
        .collect();
    let slices = inv
        .slices
        .iter()
        .zip(&program.slices)
        .map(|(s, d)| SavedSlice {
            name: d.name.clone(),
            len: s.len,
            // SAFETY: the wrapper made the slice from a live `&[T]` of `len` elements.
            crc32: crc32fast::hash(unsafe {
                std::slice::from_raw_parts(s.ptr, s.len * s.elem.size())
            }),
        })
        .collect();
    Fingerprint {
        saved,
        inputs,
        scalars,
        slices,
    }
}

/// The bytes of a host array.
///
/// # Safety
/// The array must be alive and not written concurrently (the run holds the caller's borrows and
/// no executor runs while checkpoints are read or written).
unsafe fn host_bytes<'h>(h: &'h HostArray<'_>) -> &'h [u8] {
    std::slice::from_raw_parts(h.ptr, h.bytes())
}

/// Where a run stands when it writes a checkpoint.
pub(crate) struct At<'a> {
    pub t0: i64,
    pub step: usize,
    pub steps_total: usize,
    pub block_steps: usize,
    pub reductions: &'a [f64],
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Checkpoint(CheckpointError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn unique_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}-{:x}-{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_err(dir, e))
}

/// The directory inside the checkpoint directory `dir` that pacc writes in ([`SUBDIR`]).
pub fn own_dir(dir: &Path) -> PathBuf {
    dir.join(SUBDIR)
}

/// Whether `name` has one of the forms pacc gives what it writes in [`SUBDIR`]:
/// `ckpt-<step>-<id>`, `tmp-<id>`, `tmp-probe-<id>` or `LATEST.tmp-ckpt-<step>-<id>`, where
/// `<step>` is 12 or more decimal digits and `<id>` is `<pid>-<hex>-<counter>`. Only such
/// entries are ever removed, so a file of the user's that strayed into the subdirectory stays.
pub fn is_own_entry(name: &str) -> bool {
    if let Some(ckpt) = name.strip_prefix(&format!("{LATEST}.tmp-")) {
        return is_checkpoint_name(ckpt);
    }
    if let Some(id) = name.strip_prefix("tmp-") {
        return is_id(id.strip_prefix("probe-").unwrap_or(id));
    }
    is_checkpoint_name(name)
}

fn is_checkpoint_name(name: &str) -> bool {
    name.strip_prefix("ckpt-")
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(step, id)| step.len() >= 12 && is_decimal(step) && is_id(id))
}

/// `<pid>-<hex nanoseconds>-<counter>`, as [`unique_id`] makes them.
fn is_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    matches!(parts.as_slice(), [pid, nanos, n]
        if is_decimal(pid) && !nanos.is_empty() && nanos.bytes().all(|b| b.is_ascii_hexdigit())
            && is_decimal(n))
}

fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Makes sure checkpoints can be written to `cfg.dir` (creates it and its [`SUBDIR`], writes
/// and removes a probe file), so that an unusable directory is an error before the run touches
/// any data.
pub(crate) fn prepare_dir(cfg: &Checkpointing) -> Result<(), Error> {
    let own = own_dir(&cfg.dir);
    fs::create_dir_all(&own).map_err(|e| io_err(&own, e))?;
    // The subdirectory's own entry must survive a crash as well as what goes into it.
    sync_dir(&cfg.dir)?;
    let probe = own.join(format!("tmp-probe-{}", unique_id()));
    let r = write_synced(&probe, b"pacc");
    let _ = fs::remove_file(&probe);
    r
}

/// Removes (best effort) the earlier checkpoints and the leftovers of interrupted writes in
/// `own`, except the checkpoint `keep`: the entries whose names [`is_own_entry`] takes for
/// pacc's, and nothing else.
fn remove_stale(own: &Path, keep: &str) {
    let Ok(entries) = fs::read_dir(own) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(n) = name.to_str() else { continue };
        if n == keep || !is_own_entry(n) {
            continue;
        }
        // `file_type` does not follow links: a link is removed, never what it points to.
        let _ = match e.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(e.path()),
            _ => fs::remove_file(e.path()),
        };
    }
}

/// Writes a checkpoint of `arrays` (the call's arguments, physical order) and makes it current.
pub(crate) fn write(
    cfg: &Checkpointing,
    program: &Program,
    arrays: &[HostArray],
    fp: &Fingerprint,
    at: At<'_>,
) -> Result<CheckpointRef, Error> {
    let own = own_dir(&cfg.dir);
    fs::create_dir_all(&own).map_err(|e| io_err(&own, e))?;
    let id = unique_id();
    let tmp = own.join(format!("tmp-{id}"));
    let name = format!("ckpt-{:012}-{id}", at.step);
    let fin = own.join(&name);
    let result = write_into(&own, &tmp, &fin, &name, cfg, program, arrays, fp, &at);
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
        let _ = fs::remove_dir_all(&fin);
        let _ = fs::remove_file(own.join(format!("{LATEST}.tmp-{name}")));
        return result.map(|_| unreachable!());
    }
    remove_stale(&own, &name);
    Ok(CheckpointRef {
        dir: cfg.dir.clone(),
        step: at.step,
    })
}

#[allow(clippy::too_many_arguments)]
fn write_into(
    own: &Path,
    tmp: &Path,
    fin: &Path,
    name: &str,
    cfg: &Checkpointing,
    program: &Program,
    arrays: &[HostArray],
    fp: &Fingerprint,
    at: &At<'_>,
) -> Result<(), Error> {
    fs::create_dir(tmp).map_err(|e| io_err(tmp, e))?;
    let binding = binding_at(program, at.step);
    let mut held_by = vec![String::new(); arrays.len()];
    for (a, &p) in binding.iter().enumerate() {
        held_by[p] = program.arrays[a].name.clone();
    }
    let mut saved = Vec::with_capacity(arrays.len());
    for (p, h) in arrays.iter().enumerate() {
        let decl = &program.arrays[p];
        let entry = if fp.saved[p] {
            let file = format!("{}.npy", decl.name);
            let path = tmp.join(&file);
            // SAFETY: see `host_bytes`.
            let (bytes, crc) =
                npy::write(&path, h.elem, h.shape(), unsafe { host_bytes(h) }, PIECE)
                    .map_err(|e| io_err(&path, e))?;
            SavedArray {
                name: decl.name.clone(),
                elem: decl.elem.rust_name().into(),
                file: Some(file),
                crc32: crc,
                bytes,
                bound_to: held_by[p].clone(),
            }
        } else {
            SavedArray {
                name: decl.name.clone(),
                elem: decl.elem.rust_name().into(),
                file: None,
                crc32: fp.inputs[p].unwrap_or(0),
                bytes: h.bytes() as u64,
                bound_to: held_by[p].clone(),
            }
        };
        saved.push(entry);
    }
    fault::hit(Site::Checkpoint, || {
        format!("checkpoint at step {} in `{}`", at.step, cfg.dir.display())
    })?;
    let state = State {
        format: FORMAT.into(),
        version: VERSION,
        program: program.name.clone(),
        shape: arrays[0].shape().to_vec(),
        t0: at.t0,
        step: at.step,
        steps_total: at.steps_total,
        block_steps: at.block_steps,
        every_blocks: cfg.every_blocks,
        binding,
        arrays: saved,
        reductions: program
            .reductions
            .iter()
            .zip(at.reductions)
            .map(|(d, &v)| SavedReduction {
                name: d.name.clone(),
                bits: v.to_bits(),
                value: format!("{v:?}"),
            })
            .collect(),
        scalars: fp.scalars.clone(),
        slices: fp.slices.clone(),
    };
    let json = serde_json::to_vec_pretty(&state).map_err(|e| io_err(tmp, e))?;
    let state_path = tmp.join(STATE);
    write_synced(&state_path, &json)?;
    sync_dir(tmp)?;
    fs::rename(tmp, fin).map_err(|e| io_err(fin, e))?;
    sync_dir(own)?;
    let latest_tmp = own.join(format!("{LATEST}.tmp-{name}"));
    let pointer = format!("{name}\n{:08x}\n", crc32fast::hash(&json));
    write_synced(&latest_tmp, pointer.as_bytes())?;
    let latest = own.join(LATEST);
    fs::rename(&latest_tmp, &latest).map_err(|e| io_err(&latest, e))?;
    sync_dir(own)
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut f = File::create(path).map_err(|e| io_err(path, e))?;
    f.write_all(bytes).map_err(|e| io_err(path, e))?;
    f.sync_all().map_err(|e| io_err(path, e))
}

/// A checkpoint found, checked against the call and verified; nothing loaded yet.
pub(crate) struct Found {
    /// The checkpoint's own directory (`DIR/ckpt-...`).
    path: PathBuf,
    pub state: State,
    pub at: CheckpointRef,
}

impl Found {
    pub fn reductions(&self) -> Vec<f64> {
        self.state
            .reductions
            .iter()
            .map(|r| f64::from_bits(r.bits))
            .collect()
    }
}

fn read_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Checkpoint(CheckpointError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Checkpoint(CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    })
}

/// Finds the checkpoint to resume from, checks it against the program and the call, and
/// verifies every checksum. Touches none of the call's arrays. `Ok(None)`: there is none and
/// `resume` allows starting from the beginning.
pub(crate) fn find(
    resume: &Resume,
    program: &Program,
    inv: &Invocation<'_>,
    fp: &Fingerprint,
) -> Result<Option<Found>, Error> {
    let root = resume.dir();
    let Some((base, pointer)) = read_pointer(root)? else {
        return match resume {
            Resume::IfPresent(_) => Ok(None),
            Resume::From(d) => Err(Error::Checkpoint(CheckpointError::Missing {
                dir: d.clone(),
            })),
        };
    };
    let latest = base.join(LATEST);
    let mut lines = pointer.lines();
    let (name, want_crc) = match (
        lines.next(),
        lines.next().map(|c| u32::from_str_radix(c, 16)),
    ) {
        (Some(n), Some(Ok(c)))
            if n.starts_with("ckpt-") && !n.contains(['/', '\\']) && !n.contains("..") =>
        {
            (n.to_string(), c)
        }
        _ => {
            return Err(corrupt(
                &latest,
                "it does not name a checkpoint and its checksum",
            ))
        }
    };
    let path = base.join(&name);
    let state_path = path.join(STATE);
    let json = fs::read(&state_path).map_err(|e| read_err(&state_path, e))?;
    if crc32fast::hash(&json) != want_crc {
        return Err(corrupt(
            &state_path,
            format!(
                "its CRC-32 is {:08x}, but {LATEST} says {want_crc:08x}",
                crc32fast::hash(&json)
            ),
        ));
    }
    let state: State =
        serde_json::from_slice(&json).map_err(|e| corrupt(&state_path, e.to_string()))?;
    check_state(&state, root, &state_path, program, inv, fp)?;
    // Verify every saved file before anything is loaded.
    for (p, a) in state.arrays.iter().enumerate() {
        if let Some(file) = &a.file {
            let fpath = path.join(file);
            verify_npy(&fpath, &inv.arrays[p], a)?;
        }
    }
    let at = CheckpointRef {
        dir: root.to_path_buf(),
        step: state.step,
    };
    Ok(Some(Found { path, state, at }))
}

/// The directory the current checkpoint's pointer is in and the pointer's text: that of
/// [`SUBDIR`], else (the layout of older versions) that of `root` itself; `None` if neither
/// has a `LATEST`.
fn read_pointer(root: &Path) -> Result<Option<(PathBuf, String)>, Error> {
    for base in [own_dir(root), root.to_path_buf()] {
        let latest = base.join(LATEST);
        match fs::read_to_string(&latest) {
            Ok(p) => return Ok(Some((base, p))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(read_err(&latest, e)),
        }
    }
    Ok(None)
}

fn check_state(
    state: &State,
    root: &Path,
    state_path: &Path,
    program: &Program,
    inv: &Invocation<'_>,
    fp: &Fingerprint,
) -> Result<(), Error> {
    let mismatch = |what: &str, saved: String, call: String| {
        Error::Checkpoint(CheckpointError::Mismatch {
            dir: root.to_path_buf(),
            what: what.into(),
            saved,
            call,
        })
    };
    check_call(state, state_path, program, inv, &mismatch)?;
    let values = check_values(state, fp, &mismatch)
        .and_then(|()| check_arrays(state, state_path, fp, &mismatch));
    match values {
        // A call that extends the run (more steps than the one that wrote the checkpoint) can
        // continue it only with the same arguments; per-step inputs such as a source wavelet
        // usually grow with the steps, so say that it is the extension that cannot be done.
        Err(Error::Checkpoint(CheckpointError::Mismatch {
            what, saved, call, ..
        })) if inv.steps > state.steps_total => {
            return Err(Error::Checkpoint(CheckpointError::Extend {
                dir: root.to_path_buf(),
                saved_steps: state.steps_total,
                call_steps: inv.steps,
                what,
                saved,
                call,
            }))
        }
        r => r?,
    }
    let binding = binding_at(program, state.step);
    if state.binding != binding {
        return Err(corrupt(
            state_path,
            format!(
                "its binding {:?} is not the one after {} steps, {:?}",
                state.binding, state.step, binding
            ),
        ));
    }
    let saved_red: Vec<&str> = state.reductions.iter().map(|r| r.name.as_str()).collect();
    let call_red: Vec<&str> = program.reductions.iter().map(|r| r.name.as_str()).collect();
    if saved_red != call_red {
        return Err(mismatch(
            "the reductions",
            saved_red.join(", "),
            call_red.join(", "),
        ));
    }
    Ok(())
}

/// Builds the error for a checkpoint that does not belong to the call: what, saved, in the call.
type Mismatch<'a> = dyn Fn(&str, String, String) -> Error + 'a;

/// The format, program, shape, arrays, first time value and step counter against the call.
fn check_call(
    state: &State,
    state_path: &Path,
    program: &Program,
    inv: &Invocation<'_>,
    mismatch: &Mismatch<'_>,
) -> Result<(), Error> {
    if state.format != FORMAT {
        return Err(corrupt(state_path, format!("format `{}`", state.format)));
    }
    if state.version != VERSION {
        return Err(mismatch(
            "the checkpoint format version",
            state.version.to_string(),
            format!("{VERSION} (what this pacc reads)"),
        ));
    }
    if state.program != program.name {
        return Err(mismatch(
            "the program",
            format!("`{}`", state.program),
            format!("`{}`", program.name),
        ));
    }
    let shape = inv.arrays[0].shape();
    if state.shape != shape {
        return Err(mismatch(
            "the array shape",
            format!("{:?}", state.shape),
            format!("{shape:?}"),
        ));
    }
    let saved_arrays: Vec<String> = state
        .arrays
        .iter()
        .map(|a| format!("{}: {}", a.name, a.elem))
        .collect();
    let call_arrays: Vec<String> = program
        .arrays
        .iter()
        .map(|a| format!("{}: {}", a.name, a.elem.rust_name()))
        .collect();
    if saved_arrays != call_arrays {
        return Err(mismatch(
            "the arrays",
            saved_arrays.join(", "),
            call_arrays.join(", "),
        ));
    }
    if state.t0 != inv.t0 {
        return Err(mismatch(
            "the time loop's first value",
            state.t0.to_string(),
            inv.t0.to_string(),
        ));
    }
    if state.step > inv.steps {
        return Err(mismatch(
            "the step counter",
            format!("{} steps done", state.step),
            format!("a run of {} steps", inv.steps),
        ));
    }
    Ok(())
}

/// The scalars and slices against the call's fingerprint.
fn check_values(state: &State, fp: &Fingerprint, mismatch: &Mismatch<'_>) -> Result<(), Error> {
    for (s, c) in state.scalars.iter().zip(&fp.scalars) {
        if s != c {
            return Err(mismatch(
                &format!("scalar `{}`", c.name),
                s.value.clone(),
                c.value.clone(),
            ));
        }
    }
    if state.scalars.len() != fp.scalars.len() {
        return Err(mismatch(
            "the number of scalars",
            state.scalars.len().to_string(),
            fp.scalars.len().to_string(),
        ));
    }
    if state.slices.len() != fp.slices.len() {
        return Err(mismatch(
            "the number of slices",
            state.slices.len().to_string(),
            fp.slices.len().to_string(),
        ));
    }
    for (s, c) in state.slices.iter().zip(&fp.slices) {
        if s != c {
            return Err(mismatch(
                &format!("slice `{}`", c.name),
                format!("{} elements with CRC-32 {:08x}", s.len, s.crc32),
                format!("{} elements with CRC-32 {:08x}", c.len, c.crc32),
            ));
        }
    }
    Ok(())
}

/// Every array the run writes is saved, and every input has the contents it had.
fn check_arrays(
    state: &State,
    state_path: &Path,
    fp: &Fingerprint,
    mismatch: &Mismatch<'_>,
) -> Result<(), Error> {
    for (p, a) in state.arrays.iter().enumerate() {
        match (&a.file, fp.saved[p], fp.inputs[p]) {
            (Some(_), true, _) => {}
            (None, false, Some(crc)) => {
                if a.crc32 != crc {
                    return Err(mismatch(
                        &format!("the contents of input array `{}`", a.name),
                        format!("CRC-32 {:08x}", a.crc32),
                        format!("CRC-32 {crc:08x}"),
                    ));
                }
            }
            _ => {
                return Err(corrupt(
                    state_path,
                    format!(
                        "array `{}` is saved where it should not be, or missing",
                        a.name
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Reads and checks the header of a saved array's file; returns the open file positioned at
/// the data, the header bytes, and the data length.
fn open_npy(path: &Path, h: &HostArray, a: &SavedArray) -> Result<(File, Vec<u8>), Error> {
    let mut f = File::open(path).map_err(|e| read_err(path, e))?;
    let len = f.metadata().map_err(|e| read_err(path, e))?.len();
    if len != a.bytes {
        return Err(corrupt(
            path,
            format!("it has {len} bytes, state.json says {}", a.bytes),
        ));
    }
    let mut head = vec![0u8; 12];
    let n = read_up_to(&mut f, &mut head).map_err(|e| read_err(path, e))?;
    head.truncate(n);
    let need = match head.get(6) {
        Some(1) if n >= 10 => 10 + u16::from_le_bytes([head[8], head[9]]) as usize,
        Some(2 | 3) if n >= 12 => {
            12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize
        }
        _ => return Err(corrupt(path, "not a .npy file (bad magic or version)")),
    };
    if need as u64 > len {
        return Err(corrupt(path, "the .npy header is truncated"));
    }
    head.resize(need, 0);
    if need > n {
        f.read_exact(&mut head[n..])
            .map_err(|e| read_err(path, e))?;
    } else {
        // Read past the header: reopen at the data.
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(need as u64))
            .map_err(|e| read_err(path, e))?;
    }
    let hdr = parse_npy_header(&head).map_err(|r| corrupt(path, r))?;
    if hdr.descr != npy::descr(h.elem) || hdr.fortran_order || hdr.shape != h.shape() {
        return Err(corrupt(
            path,
            format!(
                "its header says {} {:?}{}, the array is {} {:?}",
                hdr.descr,
                hdr.shape,
                if hdr.fortran_order {
                    " in Fortran order"
                } else {
                    ""
                },
                npy::descr(h.elem),
                h.shape()
            ),
        ));
    }
    if len - need as u64 != h.bytes() as u64 {
        return Err(corrupt(
            path,
            format!(
                "{} data bytes, the array has {}",
                len - need as u64,
                h.bytes()
            ),
        ));
    }
    Ok((f, head))
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn verify_npy(path: &Path, h: &HostArray, a: &SavedArray) -> Result<(), Error> {
    let (mut f, head) = open_npy(path, h, a)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&head);
    let mut buf = vec![0u8; PIECE.min(h.bytes().max(1))];
    loop {
        let n = f.read(&mut buf).map_err(|e| read_err(path, e))?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
    }
    let got = crc.finalize();
    if got != a.crc32 {
        return Err(corrupt(
            path,
            format!("its CRC-32 is {got:08x}, state.json says {:08x}", a.crc32),
        ));
    }
    Ok(())
}

/// Loads a verified checkpoint into the call's arrays (physical order). An error here (the
/// files changed since [`find`] verified them) may leave arrays partly loaded.
pub(crate) fn load(found: &Found, arrays: &[HostArray]) -> Result<(), Error> {
    for (h, a) in arrays.iter().zip(&found.state.arrays) {
        let Some(file) = &a.file else { continue };
        let path = found.path.join(file);
        let (mut f, head) = open_npy(&path, h, a)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        // SAFETY: the array is writable (the run writes it, `validate` checked), alive, and
        // nothing else accesses it while the run holds the caller's borrows.
        let dst = unsafe { std::slice::from_raw_parts_mut(h.ptr, h.bytes()) };
        for piece in dst.chunks_mut(PIECE) {
            f.read_exact(piece).map_err(|e| read_err(&path, e))?;
            crc.update(piece);
        }
        if crc.finalize() != a.crc32 {
            return Err(corrupt(&path, "it changed while it was being loaded"));
        }
    }
    Ok(())
}
