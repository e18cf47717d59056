//! A call's settings once resolved: what the tuner, fusion and the executors read instead of
//! [`Options`](crate::options::Options). `crate::config::settle` builds it once per call (the
//! session, each distributed rank, `pacc plan`) from the options, the directive's clauses and
//! the environment; every value here is final, so no layer below the session applies a
//! precedence rule or reads a `PACC_*` variable of its own.
//!
//! [`Default`] is a call that sets nothing and reads no environment.

use crate::cosched::CoSchedule;
use crate::error::Error;
use crate::march::MarchTuning;
use crate::options::{CompressWhen, HostPath, KernelForm, Origin};
use crate::progress::OnProgress;
use std::path::PathBuf;

/// Threads page-locking the user's arrays when no option sets them.
pub const DEFAULT_PIN_THREADS: usize = 4;

/// The chunk count and blocking depth the caller fixed, by option or by the directive's clause
/// (`crate::config` applies that rule: `Fixed::of`); the tuner chooses the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    pub chunks: Option<usize>,
    pub block_steps: Option<usize>,
}

/// Everything below the session reads of a call's settings.
#[derive(Clone, Debug)]
pub struct Settled {
    /// The chunk count and blocking depth the caller fixed.
    pub fixed: Fixed,
    /// Whether the caller named the scheme (else the tuner may pick it).
    pub scheme_fixed: bool,
    /// Whether compression is forced or the tuner's decision.
    pub compress_when: CompressWhen,
    /// Steps per fused launch the caller forced (more than 1); `None`: single steps, or the
    /// tuner's choice when [`Settled::fusion_free`].
    pub fuse: Option<usize>,
    /// Whether the caller left fusion unset, so that the tuner may weigh it (asking for 1 step
    /// per launch fixes single steps).
    pub fusion_free: bool,
    /// Where the fused step count came from, for the refusals (`` `PACC_FUSE` ``, ...).
    pub fuse_from: String,
    /// Whether the call writes or resumes checkpoints (a fused run does neither).
    pub durable: bool,
    /// Called as time steps complete.
    pub on_progress: Option<OnProgress>,
    /// The CUDA backend's settings.
    pub cuda: CudaSettings,
}

/// The CUDA backend's settings (and the tuner's CUDA measurements'), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaSettings {
    /// Let the CUDA compiler contract multiply-adds into FMAs.
    pub fma: bool,
    /// Write a Chrome/Perfetto trace of the streams here.
    pub trace: Option<PathBuf>,
    /// Which form of the generated kernels runs.
    pub kernel_form: KernelForm,
    /// The marching kernels' compile-time shape.
    pub march: March,
    /// Whether the caller fixed that shape (the option, or `PACC_MARCH`), so the tuner leaves
    /// it alone.
    pub march_fixed: bool,
    /// Keep rows unpadded in the device buffers.
    pub unpadded_rows: bool,
    /// Threads page-locking the user's arrays (at least 1).
    pub pin_threads: usize,
    /// Page-lock beside the run's first transfers and kernels (else every piece before the
    /// first operation).
    pub pin_overlap: bool,
    /// How transfers reach the caller's arrays that are not page-locked already.
    pub host_path: HostPath,
    /// How the codec kernels' grid is sized beside the stencil.
    pub codec_grid: CoSchedule,
    /// Run every operation of the plan in order on one stream.
    pub serial_stream: bool,
}

impl Default for Settled {
    fn default() -> Self {
        Settled {
            fixed: Fixed::default(),
            scheme_fixed: false,
            compress_when: CompressWhen::default(),
            fuse: None,
            fusion_free: true,
            fuse_from: Origin::Code.name("fuse"),
            durable: false,
            on_progress: None,
            cuda: CudaSettings::default(),
        }
    }
}

impl Default for CudaSettings {
    fn default() -> Self {
        CudaSettings {
            fma: false,
            trace: None,
            kernel_form: KernelForm::default(),
            march: March::default(),
            march_fixed: false,
            unpadded_rows: false,
            pin_threads: DEFAULT_PIN_THREADS,
            pin_overlap: true,
            host_path: HostPath::default(),
            codec_grid: CoSchedule::default(),
            serial_stream: false,
        }
    }
}

/// The marching kernels' compile-time shape a CUDA run compiles with. A `PACC_MARCH` that does
/// not parse is kept as its message: only a CUDA run compiles kernels, so only a CUDA run
/// refuses it, where it compiles (the CPU backend never reads the shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct March(Result<MarchTuning, String>);

impl March {
    /// A shape that `PACC_MARCH` could not give: `message` is the option error's.
    pub fn unreadable(message: String) -> March {
        March(Err(message))
    }

    /// The shape, or the option error of the `PACC_MARCH` that did not parse.
    pub fn get(&self) -> Result<MarchTuning, Error> {
        self.0.clone().map_err(Error::Option)
    }
}

impl Default for March {
    fn default() -> Self {
        March(Ok(MarchTuning::default()))
    }
}

impl From<MarchTuning> for March {
    fn from(t: MarchTuning) -> Self {
        March(Ok(t))
    }
}
