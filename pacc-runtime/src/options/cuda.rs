//! The CUDA backend's settings, kept apart from the settings every backend reads so that a new
//! backend adds its own struct beside this one instead of fields across [`Options`](super::Options).
//! The builder methods on `Options` (`fma`, `trace`, `kernel_form`, `march`, `row_padding`,
//! `page_locking`) set these fields; `crate::config::settle` resolves them into what the
//! backend reads (`crate::settled::CudaSettings`).

use super::env_usize;
use crate::env;
use crate::error::Error;
use crate::march::MarchTuning;
use std::path::PathBuf;

/// Settings only the CUDA backend (and the tuner's CUDA measurements) read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CudaOptions {
    /// Let the CUDA compiler contract multiply-adds into FMAs (faster; results then match the
    /// serial function within rounding instead of exactly).
    pub fma: bool,
    /// Write a Chrome/Perfetto trace of the streams here.
    pub trace: Option<PathBuf>,
    /// Which form of the generated CUDA kernels runs.
    pub kernel_form: KernelForm,
    /// The marching kernels' compile-time shape (see [`MarchTuning`]). Unset: `PACC_MARCH`,
    /// else the tuner's choice on long runs, else the translator's defaults
    /// (`crate::config::settle`).
    pub march: Option<MarchTuning>,
    /// Keep rows unpadded in the device buffers (`PACC_PAD_ROWS=0`). By default every row of a
    /// translated program's buffers starts on 128 bytes (see
    /// [`Options::row_padding`](super::Options::row_padding)).
    pub unpadded_rows: bool,
    /// Threads page-locking the user's arrays (`PACC_PIN_THREADS`; unset:
    /// `crate::settled::DEFAULT_PIN_THREADS`).
    pub pin_threads: Option<usize>,
    /// Page-lock every piece of the user's arrays before the first operation
    /// (`PACC_PIN_OVERLAP=0`) instead of beside the run's first transfers and kernels.
    pub pin_upfront: bool,
    /// How transfers reach the caller's arrays that are not page-locked already
    /// (`PACC_HOST_PATH`): registered, bounced through pacc's pinned rings, or the cheaper of
    /// the two by the tuner's prices (the default).
    pub host_path: HostPath,
    /// How the codec kernels' grid is sized beside the stencil (`PACC_CODEC_GRID`; see
    /// [`crate::cosched`]).
    pub codec_grid: crate::cosched::CoSchedule,
    /// Run every operation of the plan in order on one stream (`PACC_SERIAL_STREAM=1`): no
    /// overlap at all, the reference the co-scheduled runs are checked against.
    pub serial_stream: bool,
}

impl CudaOptions {
    /// Reads `PACC_FMA`, `PACC_TRACE`, `PACC_KERNELS`, `PACC_PAD_ROWS`, `PACC_PIN_THREADS`,
    /// `PACC_PIN_OVERLAP`, `PACC_HOST_PATH`, `PACC_CODEC_GRID` and `PACC_SERIAL_STREAM` into `self` (variables
    /// that are unset leave their field alone, except `PACC_TRACE`, whose absence means no
    /// trace).
    pub(super) fn read_env(&mut self) -> Result<(), Error> {
        let on = "let the CUDA compiler contract multiply-adds into FMAs";
        if let Some(fma) = env::flag("PACC_FMA", on)? {
            self.fma = fma;
        }
        self.trace = env::path("PACC_TRACE", "the trace file to write")?.map(PathBuf::from);
        if let Some(v) = env::var("PACC_KERNELS") {
            self.kernel_form = v.parse()?;
        }
        if let Some(v) = env::var("PACC_PAD_ROWS") {
            self.unpadded_rows = !pad_rows(&v)?;
        }
        self.pin_threads = env_usize("PACC_PIN_THREADS")?;
        let on = "page-lock the arrays beside the run's first transfers, the default";
        if let Some(overlap) = env::flag("PACC_PIN_OVERLAP", on)? {
            self.pin_upfront = !overlap;
        }
        if let Some(v) = env::var("PACC_HOST_PATH") {
            self.host_path = v.parse()?;
        }
        if let Some(v) = env::var("PACC_CODEC_GRID") {
            self.codec_grid = v.parse()?;
        }
        let on = "every operation in plan order on one stream";
        if let Some(serial) = env::flag("PACC_SERIAL_STREAM", on)? {
            self.serial_stream = serial;
        }
        Ok(())
    }
}

/// The form of a generated CUDA kernel (docs/internals.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum KernelForm {
    /// Thread blocks march along the outermost axis, keeping planes in registers: the fast
    /// form.
    #[default]
    Marching,
    /// One thread per point: the baseline the kernel benchmark compares against.
    Plain,
}

impl std::str::FromStr for KernelForm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "marching" => Ok(KernelForm::Marching),
            "plain" => Ok(KernelForm::Plain),
            _ => Err(Error::Option(format!(
                "unknown kernel form `{s}`; expected marching or plain"
            ))),
        }
    }
}

/// How a run's transfers reach the caller's arrays when they are not page-locked already.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HostPath {
    /// The cheaper of the two below, priced by the tuner from the host's copy rate, the link
    /// and the registration rate (`tune::host_path`).
    #[default]
    Auto,
    /// Page-lock (register) the arrays piece by piece beside the run.
    Register,
    /// Copy through a few small pinned buffers of pacc's own, in parallel on the host,
    /// overlapped with the link: nothing of the caller's is page-locked.
    Bounce,
}

impl HostPath {
    /// Every form with its name, in the order messages list them.
    pub const ALL: [(HostPath, &'static str); 3] = [
        (HostPath::Auto, "auto"),
        (HostPath::Register, "register"),
        (HostPath::Bounce, "bounce"),
    ];
}

impl std::str::FromStr for HostPath {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let found = HostPath::ALL.iter().find(|(_, n)| *n == s);
        found.map(|(p, _)| *p).ok_or_else(|| {
            let names: Vec<&str> = HostPath::ALL.iter().map(|(_, n)| *n).collect();
            Error::Option(format!("PACC_HOST_PATH={s}: expected {}", names.join(", ")))
        })
    }
}

/// `PACC_PAD_ROWS`: whether device rows are padded.
pub(super) fn pad_rows(v: &str) -> Result<bool, Error> {
    let on = "pad device rows to 128 bytes, the default";
    env::parse_bool("PACC_PAD_ROWS", v, on)
}
