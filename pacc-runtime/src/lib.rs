//! The runtime behind `#[pacc::pipeline]`: the [`Program`] description that generated code hands
//! over, the `plan` that schedules an out-of-core run, and the executors that carry it out.
//!
//! Everything that runs a pipeline sits behind the default `runtime` feature. Without it the crate
//! is [`program`] and the codec's rate arithmetic ([`codec`]), with serde and thiserror as the only
//! dependencies: what the translator needs to emit and check a Program. [`rng`], the seeded
//! generators of the models, examples and tests, needs nothing either.
//!
//! A generated function is called with [`Options`] (`f::run(.., &opts)`), or reads them from the
//! `PACC_*` environment variables (`f(..)`, `f::try_run(..)`); errors name where a setting
//! came from:
//!
//! ```
//! # #[cfg(feature = "runtime")] {
//! use pacc_runtime::{BackendChoice, Options, Origin, Scheme};
//!
//! let opts = Options::new()
//!     .backend(BackendChoice::Cpu)
//!     .chunks(8)
//!     .block_steps(12)
//!     .scheme(Scheme::Wavefront);
//! assert_eq!(opts.source_of("chunks"), "`Options::chunks`");
//! // A program that takes the value from its own flag says so.
//! let opts = opts.set_by("chunks", Origin::CommandLine);
//! assert_eq!(opts.source_of("chunks"), "`--chunks`");
//! assert_eq!(Origin::Environment.name("block_steps"), "`PACC_BLOCK_STEPS`");
//! # }
//! ```

pub mod codec;
pub mod program;
pub mod rng;
pub mod words;

#[cfg(feature = "runtime")]
pub mod binding;
#[cfg(feature = "runtime")]
pub mod checkpoint;
#[cfg(feature = "runtime")]
pub mod compress;
#[cfg(feature = "runtime")]
pub mod config;
#[cfg(feature = "runtime")]
pub mod cosched;
#[cfg(feature = "runtime")]
mod disk_cache;
#[cfg(feature = "runtime")]
pub mod dist;
#[cfg(feature = "runtime")]
pub mod env;
#[cfg(feature = "runtime")]
pub mod error;
#[cfg(feature = "runtime")]
pub mod exec;
#[cfg(feature = "runtime")]
pub mod fault;
#[cfg(feature = "runtime")]
pub mod frame;
#[cfg(feature = "runtime")]
pub mod fuse;
#[cfg(feature = "runtime")]
pub mod host;
#[cfg(feature = "runtime")]
pub mod invocation;
#[cfg(feature = "runtime")]
pub mod march;
#[cfg(feature = "runtime")]
pub mod memcopy;
#[cfg(feature = "runtime")]
pub mod npy;
#[cfg(feature = "runtime")]
pub mod options;
#[cfg(feature = "runtime")]
pub mod pages;
#[cfg(feature = "runtime")]
pub mod plan;
#[cfg(feature = "runtime")]
pub mod progress;
#[cfg(feature = "runtime")]
pub mod report;
#[cfg(feature = "runtime")]
pub mod run;
#[cfg(feature = "runtime")]
pub mod settled;
#[cfg(feature = "runtime")]
pub mod tune;
#[cfg(feature = "runtime")]
pub mod validate;

pub use program::Program;

#[cfg(feature = "runtime")]
pub use error::{
    CheckpointError, CheckpointRef, CompressError, DistError, EnvError, Error, Progress, Result,
};
#[cfg(feature = "runtime")]
pub use invocation::{HostArray, HostSlice, Invocation, RunOutput, ScalarValue};
#[cfg(feature = "runtime")]
pub use march::MarchTuning;
#[cfg(feature = "runtime")]
pub use options::{
    BackendChoice, Checkpointing, CompressWhen, HaloMode, HostPath, KernelForm, Options, Origin,
    Resume,
};
#[cfg(feature = "runtime")]
pub use plan::{Compression, Plan, PlanOptions, Scheme};
#[cfg(feature = "runtime")]
pub use progress::{OnProgress, StepsDone};
#[cfg(feature = "runtime")]
pub use report::{KernelStats, Report};
#[cfg(feature = "runtime")]
pub use run::run;
