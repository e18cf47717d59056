//! Typed run-time errors. Every variant says what went wrong and how to fix it (a hint sentence).
//!
//! **What an error means for your arrays.** Any error other than [`Error::Failed`] is returned
//! before the run wrote to the arrays: they hold exactly what was passed in. [`Error::Failed`]
//! wraps the error of a run that had already written results back (or loaded a checkpoint into
//! the arrays); its [`Progress`] says which steps are complete and where the last checkpoint is.

use crate::fault::{Fault, Site};
use crate::plan::{PlanError, Scheme};
use std::path::PathBuf;

/// Why a pipelined call did not run, or stopped. Its `Display` is the full message with a
/// `Hint:` saying what to do; the plain call (`f(..)`) panics with it, `f::try_run` and
/// `f::run` return it. Each variant's doc says when it happens and what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two arrays of the call have different shapes (checked before anything runs). Give
    /// every array the shape of the first.
    #[error("array `{name}` has shape {got:?}, but `{first}` has shape {want:?}; all arrays of a pipeline must have the same shape. Hint: allocate every array with the shape of `{first}`")]
    ShapeMismatch {
        /// The array whose shape differs.
        name: String,
        /// Its shape.
        got: Vec<usize>,
        /// The first array of the call.
        first: String,
        /// The shape of `first`, which every array must have.
        want: Vec<usize>,
    },
    /// An array (often a view or a transposed array) is not laid out in standard C order.
    /// Pass `.as_standard_layout()` or an owned copy.
    #[error("array `{name}` is not contiguous in standard (C) order; pass `.as_standard_layout()` or a copy made with `.to_owned()`")]
    NotContiguous {
        /// The array at fault.
        name: String,
    },
    /// Two array arguments share memory (views of one array). Pass separate arrays.
    #[error("arrays `{a}` and `{b}` overlap in memory; pass separate arrays (e.g. `.to_owned()` copies of the views)")]
    Overlap {
        /// One of the arrays.
        a: String,
        /// The array it overlaps.
        b: String,
    },
    /// A kernel writes an array that was passed as `&` or a read-only view. Pass it as
    /// `&mut` or a mutable view.
    #[error("array `{name}` is written by the kernels but was passed read-only; pass it as `&mut` or a mutable view")]
    ReadOnly {
        /// The array at fault.
        name: String,
    },
    /// An array has an axis of length zero. Every axis needs at least one point.
    #[error("array `{name}` is empty (shape {shape:?}); nothing to compute. Hint: every axis needs at least one point")]
    Empty {
        /// The array at fault.
        name: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// An axis is shorter than the stencil's reach plus one, so the serial loop would do
    /// nothing or panic. Make the arrays longer along that axis, or check the order of the
    /// axes.
    #[error("axis {axis} of the arrays has {extent} points, fewer than the {need} the stencil needs to update a single point (its reach along that axis, {reach_lo} before and {reach_hi} after, plus one); the serial loop would do nothing or panic. Hint: make the arrays at least {need} points long along axis {axis}, or check the order of the axes")]
    SmallerThanHalo {
        /// The axis (0 is the outermost).
        axis: usize,
        /// Its length in the call.
        extent: usize,
        /// The smallest length that updates a point.
        need: usize,
        /// Planes the stencil reads before a point.
        reach_lo: usize,
        /// Planes the stencil reads after a point.
        reach_hi: usize,
    },
    /// A point statement (`a[[i, j, k]] += e` in the time loop) would write outside the
    /// arrays, where the serial code panics. Check its index expression against the shape.
    #[error("point statement `{point}` writes index {index:?}, outside the array shape {shape:?}; the serial code would panic here. Hint: check the index expression against the array shape")]
    PointOutOfBounds {
        /// The statement, as written.
        point: String,
        /// The index it would write.
        index: Vec<i64>,
        /// The arrays' shape.
        shape: Vec<usize>,
    },
    /// A slice read in the time loop (`w[t]`, `damp[z]`) is shorter than the indices the
    /// call reads; found before the run. Pass a longer slice or fewer steps.
    #[error("slice `{name}` has {len} elements, but the time loop reads `{name}[{first}..={last}]`; the serial code would panic here. Hint: {}", slice_hint(name, *first, *last))]
    SliceTooShort {
        /// The slice.
        name: String,
        /// Its length.
        len: usize,
        /// The smallest and largest index the reads take (inclusive; saturated to `i64`).
        first: i64,
        /// The largest index the reads take (inclusive; saturated to `i64`).
        last: i64,
    },
    /// An option or environment value that cannot be parsed or combined with the others
    /// (the message names it). Correct or unset it; the accepted values are listed in
    /// [`Options`](crate::Options).
    #[error("invalid option: {0}. Hint: correct or unset the setting the message names (the accepted values are listed in the documentation of `Options`)")]
    Option(String),
    /// A setting whose value cannot run (for example more chunks than planes), with where
    /// the value came from. Apply the fix the message gives, at the place it names.
    #[error("{setting} = {value} (from {from}): {problem}. Hint: {fix}")]
    Setting {
        /// The setting, as [`Options`](crate::Options) names it: `chunks`, `block_steps`, ...
        setting: &'static str,
        /// The value, as given.
        value: String,
        /// Where the value came from: `` `PACC_CHUNKS` ``, `` `--chunks` ``,
        /// `` `Options::chunks` `` or the directive's clause.
        from: String,
        /// Why it cannot run.
        problem: String,
        /// What to change.
        fix: String,
    },
    /// A loop bound counted from a scalar that has no value for the call
    /// (`Program::resolved`). Pass the scalar, or write the bound from the arrays' extents.
    #[error(transparent)]
    Bound(#[from] crate::program::BoundError),
    /// The planner cannot build a plan for the call (the [`PlanError`] says why, the hint
    /// what to change: usually fewer block steps or another scheme).
    #[error("cannot plan the run: {0}{hint}", hint = plan_hint(.0))]
    Plan(#[from] PlanError),
    /// The CUDA backend was asked for (`PACC_BACKEND=cuda`, `--backend cuda`,
    /// `Options::backend`) but no driver or device is usable, or pacc was built without its
    /// `cuda` feature. Use `auto` or `cpu`, or fix the CUDA installation the reason names.
    #[error("the CUDA backend was requested{} but is not available: {reason}. Hint: {}", requested_by(.from), no_cuda_fix(.from))]
    NoCuda {
        /// Why CUDA is unavailable.
        reason: String,
        /// Where the request came from (`` `PACC_BACKEND` ``, `` `--backend` ``,
        /// `` `Options::backend` ``), when known.
        from: Option<String>,
    },
    /// The plan's buffers do not fit the device's free memory. Use more chunks or fewer
    /// block steps (or leave them to the tuner).
    #[error("not enough device memory: the plan needs {need} bytes for {sets} buffer sets, but only {free} bytes are free; use more chunks (fewer planes per chunk) or fewer block steps")]
    DeviceMemory {
        /// Bytes the plan needs.
        need: u64,
        /// Bytes free on the device.
        free: u64,
        /// Buffer sets in flight.
        sets: usize,
    },
    /// NVRTC rejected the generated CUDA source: a pacc bug. Report it with the log and the
    /// function's `CUDA_SOURCE`; run on the CPU backend meanwhile.
    #[error("NVRTC failed to compile `{kernel}`:\n{log}\nHint: this is the generated CUDA source (`f::CUDA_SOURCE`); please report it")]
    Nvrtc {
        /// The kernel that failed.
        kernel: String,
        /// NVRTC's log.
        log: String,
    },
    /// A CUDA driver call failed during the run (device lost, out of resources). Check the
    /// device with `nvidia-smi`, or run on the CPU backend.
    #[error("CUDA error in {what}: {message}. Hint: check `nvidia-smi` for the device's state, or run on the CPU backend with PACC_BACKEND=cpu")]
    Cuda {
        /// The operation that failed.
        what: String,
        /// The driver's message.
        message: String,
    },
    /// An operation failed by the test-only fault injection hook (`pacc_runtime::fault`);
    /// never happens without it. Drop the guard `fault::inject` returned.
    #[error("injected fault: {site} operation #{index} failed ({op}). Hint: this comes from the test-only hook `pacc_runtime::fault`; drop the guard `fault::inject` returned to run normally")]
    Fault {
        /// The kind of operation that was failed.
        site: Site,
        /// 0-based count of the operations of this kind the thread had started.
        index: usize,
        /// The operation, as the executor describes it.
        op: String,
    },
    /// A `PACC_*` environment variable has a value pacc does not take ([`EnvError`] names
    /// it). Correct or unset the variable.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// Writing a checkpoint, or resuming from one, failed ([`CheckpointError`] says which
    /// and why): fix the directory or resume with the arguments the checkpoint was written
    /// with.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A compression request cannot be honoured (unknown array, rate out of range:
    /// [`CompressError`]). Correct the `compress` clause, option or `PACC_COMPRESS`.
    #[error(transparent)]
    Compress(#[from] CompressError),
    /// A distributed run (feature `mpi`) could not start, or another rank failed
    /// ([`DistError`] names the rank). Check the rank it names and `mpirun`'s arguments.
    #[error(transparent)]
    Dist(#[from] DistError),
    /// A run that had already written to the arrays failed. The arrays hold a mix of steps;
    /// `progress` says how far it got and where the last checkpoint is: resume from it, or
    /// start again from your own copy.
    #[error("the run failed after it had started writing to the arrays: {cause}\n{progress}")]
    Failed {
        /// The error that stopped the run.
        cause: Box<Error>,
        /// Steps and blocks complete, and the last checkpoint.
        progress: Progress,
    },
    /// The translator's description and the call disagree: a pacc bug. Report it with the function.
    #[error("internal error: the translator's description and the call disagree: {0}. Please report this")]
    Internal(String),
    /// A [`HostArray`](crate::HostArray) built with a number of axes pacc does not take.
    /// Give `HostArray::from_raw_parts` the array's extents, outermost first.
    #[error("a host array described with {ndim} axes; pacc's arrays have 2 or 3 (`exec::cuda::lock_host` also takes 1). Hint: give `HostArray::from_raw_parts` the array's extents, outermost first")]
    Axes {
        /// The number of axes given.
        ndim: usize,
    },
    /// A host buffer could not be allocated (or its size overflows). Use a smaller shape or
    /// free host memory.
    #[error("cannot allocate {what}: {}. Hint: use a smaller shape, or free host memory (a pipelined run needs the arrays in host memory, not on the device)", host_size(.bytes))]
    HostMemory {
        /// The size asked for, when it did not overflow.
        bytes: Option<u64>,
        /// What the buffer was for.
        what: String,
    },
}

fn who_missing(ranks: &[usize]) -> String {
    match ranks {
        [] => "a rank".into(),
        [r] => format!("rank {r}"),
        _ => format!(
            "ranks {}",
            crate::words::sentence_list(ranks.iter().map(|r| r.to_string()))
        ),
    }
}

fn host_size(bytes: &Option<u64>) -> String {
    match bytes {
        Some(b) => format!("the host has no room for {b} bytes"),
        None => "its size overflows the address space".into(),
    }
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Error {
        Error::Fault {
            site: f.site,
            index: f.index,
            op: f.op,
        }
    }
}

impl Error {
    /// The error that stopped the run, looking through [`Error::Failed`].
    pub fn cause(&self) -> &Error {
        match self {
            Error::Failed { cause, .. } => cause.cause(),
            e => e,
        }
    }

    /// How far the run got, if it had written to the arrays (`None`: the arrays are untouched).
    pub fn progress(&self) -> Option<&Progress> {
        match self {
            Error::Failed { progress, .. } => Some(progress),
            _ => None,
        }
    }
}

impl Error {
    /// The CUDA backend is not available; `from` names where it was asked for, if known.
    pub fn no_cuda(reason: impl Into<String>, from: Option<String>) -> Error {
        Error::NoCuda {
            reason: reason.into(),
            from,
        }
    }
}

fn requested_by(from: &Option<String>) -> String {
    from.as_ref()
        .map_or(String::new(), |f| format!(" (by {f})"))
}

fn no_cuda_fix(from: &Option<String>) -> String {
    match from {
        Some(f) => format!("set {f} to `auto` or `cpu` to run on the CPU backend"),
        None => "choose the `auto` or `cpu` backend to run on the CPU".into(),
    }
}

/// The schemes that can compress, as a hint lists them.
fn compressing_schemes() -> String {
    Scheme::names_where(|s| s.transfers().can_compress())
}

fn plan_hint(e: &PlanError) -> std::borrow::Cow<'static, str> {
    let hint = match e {
        PlanError::ZeroChunks(_) => ". Hint: use 1 or more chunks",
        PlanError::ZeroBlockSteps(_) => ". Hint: use 1 or more block steps",
        PlanError::ZeroBufferSets(_) => {
            return format!(
                ". Hint: use at least 1 buffer set (the default is the scheme's: {})",
                Scheme::buffer_sets_by_scheme()
            )
            .into()
        }
        PlanError::PointOutside { .. } => {
            ". Hint: check the point statement's index against the array shape"
        }
        PlanError::Rank { .. } | PlanError::PointCount { .. } => {
            ". Hint: the translator's description and the call disagree; please report this"
        }
        PlanError::CompressScheme { .. } => {
            return format!(". Hint: use {} with compression", compressing_schemes()).into()
        }
        PlanError::CompressRate { .. } => {
            ". Hint: choose another rate (bits per value), or leave the array uncompressed"
        }
        PlanError::CompressCount { .. } => {
            ". Hint: give one setting per array of the program (None for uncompressed)"
        }
        PlanError::EmptyAxis { .. } => ". Hint: give every axis of the shape at least one point",
        PlanError::TooSmall { .. }
        | PlanError::Bound(_)
        | PlanError::TooManyChunks { .. }
        | PlanError::TooThin { .. } => "",
    };
    hint.into()
}

/// A checkpoint that a run wrote or resumed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRef {
    /// The checkpoint directory (what `Options::checkpoint` / `Options::resume` name).
    pub dir: PathBuf,
    /// The time steps it holds the results of (counted from the call's first step).
    pub step: usize,
}

/// How far a failed run got (see [`Error::Failed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Time steps (from the call's first step) whose results are completely in the arrays.
    pub steps_complete: usize,
    /// Temporal blocks this call finished (counted from where it started: step 0, or the step
    /// it resumed at).
    pub blocks_complete: usize,
    /// True when the failing block had already written some of its planes back: the arrays then
    /// mix the state after `steps_complete` steps with later ones, and only a checkpoint gives a
    /// consistent state. False: the arrays hold exactly the state after `steps_complete` steps
    /// (with the names bound as after that many steps of the time loop).
    pub torn: bool,
    /// The last checkpoint written (or resumed from) by this call; it is complete and intact:
    /// later checkpoints replace it only once they are fully on disk.
    pub checkpoint: Option<CheckpointRef>,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Progress: {} blocks of this call complete; the arrays hold the results of the first {} steps",
            self.blocks_complete, self.steps_complete
        )?;
        if self.torn {
            write!(
                f,
                ", partly overwritten by the next block (they are not a consistent state)"
            )?;
        }
        match &self.checkpoint {
            Some(c) => write!(
                f,
                ". The last checkpoint, at step {}, is intact in `{}`. Hint: call again with \
                 `Options::resume` (or PACC_RESUME) naming that directory, and the same initial \
                 arguments, to continue from it",
                c.step,
                c.dir.display()
            ),
            None => write!(
                f,
                ". No checkpoint was written. Hint: enable `Options::checkpoint` (or \
                 PACC_CHECKPOINT_DIR) so that a failed run can be resumed"
            ),
        }
    }
}

/// A `PACC_*` environment variable whose value pacc does not take (read by
/// `Options::from_env`, before any run).
// Its variants are documented by their `#[error]` messages (each with a hint); item-by-item
// docs are still to write (issue 52).
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{var}={value} is not a boolean. Hint: set it to 1, true, on or yes ({on}), or to 0, false, off or no (any case), or unset it")]
    NotBoolean {
        var: String,
        value: String,
        /// What turning it on does.
        on: String,
    },
    #[error("{var} is set but empty. Hint: set it to {what}, or unset it")]
    Empty {
        var: String,
        /// What the variable names (`the checkpoint directory`, ...).
        what: String,
    },
}

/// Writing or resuming from a checkpoint went wrong. Errors while resuming are returned before
/// anything is loaded: the arrays are untouched.
// Its variants are documented by their `#[error]` messages (each with a hint); item-by-item
// docs are still to write (issue 52).
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot write the checkpoint in `{path}`: {message}. Hint: check that the directory is writable and that the disk has room for every array the run writes")]
    Write { path: PathBuf, message: String },
    #[error("cannot read the checkpoint `{path}`: {message}; the arrays are untouched. Hint: check the path and its permissions")]
    Read { path: PathBuf, message: String },
    #[error("`{dir}` holds no checkpoint (no LATEST file); the arrays are untouched. Hint: run once with `Options::checkpoint` (PACC_CHECKPOINT_DIR) to write one, or use `Options::resume_if_present` (PACC_RESUME=auto) to start from the beginning when there is none")]
    Missing { dir: PathBuf },
    #[error("checkpoint file `{path}` is corrupt: {reason}. Hint: the file changed after pacc wrote it (disk error, truncation, editing); restore the directory from a copy or start the run from the beginning")]
    Corrupt { path: PathBuf, reason: String },
    #[error("the checkpoint in `{dir}` was written by a run of {saved_steps} steps and this call asks for {call_steps}: a checkpoint extends to more steps only with the same arguments, but {what} is {saved} in the checkpoint and {call} in this call; the arrays are untouched. Hint: per-step inputs (a source wavelet, say) usually grow with the number of steps; resume with {saved_steps} steps to finish that run, then make a new call for the remaining {more} steps from the arrays it leaves, with the time loop's start and the per-step inputs moved on", more = .call_steps - .saved_steps)]
    Extend {
        dir: PathBuf,
        /// Steps of the run that wrote the checkpoint.
        saved_steps: usize,
        /// Steps this call asks for.
        call_steps: usize,
        /// The argument that differs (`slice `wavelet``, `scalar `sz``, ...).
        what: String,
        saved: String,
        call: String,
    },
    #[error("the checkpoint in `{dir}` does not belong to this call: {what} is {saved} in the checkpoint but {call} in this call; the arrays are untouched. Hint: resume with the same program, array shapes, input arrays, scalars and start time as the run that wrote it, or point the resume option at the right directory")]
    Mismatch {
        dir: PathBuf,
        what: String,
        saved: String,
        call: String,
    },
}

/// A compression setting that cannot be honoured, or a codec failure during a run (checked in
/// `crate::compress`; defined here so that this module stays a leaf).
// Its variants are documented by their `#[error]` messages (each with a hint); item-by-item
// docs are still to write (issue 52).
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    #[error("compress: `{name}` is not an array of `{program}` (its arrays: {arrays}). Hint: name one of the function's array parameters")]
    UnknownArray {
        name: String,
        program: String,
        arrays: String,
    },
    #[error("compress: array `{array}` ({elem}, {ndim}D) cannot use rate {rate}: {reason}. Hint: use a rate in bits per value below {bits} (the raw size) that the codec takes (zfp: codec blocks of whole 64-bit words, for 2D arrays a multiple of 4, e.g. 8, 12, 16; f16: 16), choose the codec with `Options::codec` or `PACC_CODEC`, or leave the array uncompressed")]
    Rate {
        array: String,
        elem: &'static str,
        ndim: usize,
        rate: f64,
        bits: usize,
        reason: String,
    },
    #[error("compress: `{a}` ({ra}) and `{b}` ({rb}) trade places through `std::mem::swap`, so they share the same buffers and host copies. Hint: give every array of the swap group the same rate, e.g. compress({a} = R, {b} = R)")]
    SwapGroup {
        a: String,
        ra: String,
        b: String,
        rb: String,
    },
    #[error("compress: the {scheme} scheme cannot compress (its host staging buffers hold raw planes). Hint: use {}", compressing_schemes())]
    Scheme { scheme: Scheme },
    #[error("compress: `{array}` is a scratch array; its contents never go back to the host, so there is nothing to compress. Hint: leave it out of compress(..)")]
    Scratch { array: String },
    #[error("compress: the program `{program}` names a codec this runtime does not have: {reason}. Hint: name one of the codecs in the directive's `compress(.., codec = NAME)`")]
    UnknownCodec { program: String, reason: String },
    #[error("compress: `{array}` is to be compressed with {codec}, which has no CUDA kernels; nothing was run. Hint: run on the CPU backend (`PACC_BACKEND=cpu`), or choose a codec with CUDA kernels (`PACC_CODEC=zfp`)")]
    NoCudaCoder { array: String, codec: &'static str },
    #[error("compressing `{array}` failed: {message}. Hint: NaN or infinite values cannot be compressed; they usually mean the simulation became unstable (check the time step), or run without compression to see where they appear")]
    Codec { array: String, message: String },
}

/// A result whose error is pacc's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in a distributed run (feature `mpi`, `crate::dist`). Errors other than
/// [`DistError::RankFailed`] are found before any data is touched, on every rank alike.
// Its variants are documented by their `#[error]` messages (each with a hint); item-by-item
// docs are still to write (issue 52).
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    #[error("{ranks} ranks for {planes} planes along axis 0: every rank needs at least one plane. Hint: start fewer ranks (at most {planes}) or use a larger domain")]
    TooManyRanks { ranks: usize, planes: usize },
    #[error("rank {rank} owns {planes} planes along axis 0, fewer than the {halo} halo planes its neighbour needs per block ({block_steps} steps x {reach} planes of reach per step). Hint: start fewer ranks, use fewer block steps (PACC_BLOCK_STEPS) or a larger domain")]
    SlabThinnerThanHalo {
        rank: usize,
        planes: usize,
        halo: usize,
        block_steps: usize,
        reach: usize,
    },
    #[error("the slab was computed for rank {slab_rank} of {slab_ranks}, but this is rank {rank} of a communicator of {ranks}. Hint: compute the slab with `dist::split` from this communicator's size and rank")]
    WrongSlab {
        slab_rank: usize,
        slab_ranks: usize,
        rank: usize,
        ranks: usize,
    },
    #[error("array `{name}` holds {got:?} on rank {rank}, but its slab with halos is {want:?} (planes {window:?} of the global shape {global:?}). Hint: allocate each rank's arrays with `Slab::local_shape()` and fill planes `Slab::window` of the global data")]
    SlabShape {
        name: String,
        rank: usize,
        got: Vec<usize>,
        want: Vec<usize>,
        window: std::ops::Range<usize>,
        global: Vec<usize>,
    },
    #[error("the ranks disagree on {what}. Hint: {hint}")]
    Disagree { what: String, hint: String },
    #[error("the checkpoint in `{dir}` was written by {found}, but this run has {want}. Hint: resume with the same number of ranks and the same split (the same global shape and block steps), or start from step 0 without resuming")]
    CheckpointLayout {
        dir: PathBuf,
        found: String,
        want: String,
    },
    #[error("rank {rank} failed: {message}")]
    RankFailed { rank: usize, message: String },
    #[error("MPI: {0}. Hint: check the MPI installation and the mpirun command line")]
    Mpi(String),
    /// Ranks that did not answer within the timeout (`ranks` empty: a collective step, which
    /// cannot tell who is missing). Every live rank of the run returns it; MPI on this
    /// communicator can no longer be relied on.
    #[error("{} did not answer within {seconds} s ({during}): stopped, killed or cut off. Hint: every rank that still runs returned this error, and MPI can no longer be relied on here: end the processes (`MPI_Abort`, or exit without `MPI_Finalize`, which would wait for the missing rank). If the ranks only wait this long for one another (uneven slabs, slow checkpoints), raise PACC_MPI_TIMEOUT (seconds)", who_missing(.ranks))]
    NoAnswer {
        ranks: Vec<usize>,
        seconds: f64,
        during: &'static str,
    },
    #[error("the halo exchange through {carrier} failed: {message}. Hint: PACC_HALO=host exchanges the halos through host memory instead")]
    Exchange {
        carrier: &'static str,
        message: String,
    },
    #[error("PACC_HALO={mode} needs {needs}, but {why}. Hint: leave PACC_HALO unset (auto) to fall back to the host exchange")]
    DeviceHalo {
        mode: &'static str,
        needs: &'static str,
        why: String,
    },
}

/// What to do about a slice too short for its reads ([`Error::SliceTooShort`]).
fn slice_hint(name: &str, first: i64, last: i64) -> String {
    match first < 0 {
        true => format!(
            "the index goes below 0; check the index expression of `{name}` against the time range"
        ),
        false => format!("pass at least {} elements", last.saturating_add(1)),
    }
}
