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

// The public API users call (options, errors, reports, schemes) is documented item by item; the
// modules marked `allow(missing_docs)` are the machinery generated code, the executors and the
// benches reach into, documented where it helps rather than item by item.
#![warn(missing_docs)]

#[allow(missing_docs)]
pub mod codec;
#[allow(missing_docs)]
pub mod program;
#[allow(missing_docs)]
pub mod rng;
#[allow(missing_docs)]
pub mod words;

#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod binding;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod checkpoint;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod compress;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod config;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod cosched;
#[cfg(feature = "runtime")]
mod disk_cache;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod dist;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod env;
#[cfg(feature = "runtime")]
pub mod error;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod exec;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod fault;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod frame;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod fuse;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod host;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod invocation;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod march;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod memcopy;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod npy;
#[cfg(feature = "runtime")]
pub mod options;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod pages;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod plan;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod progress;
#[cfg(feature = "runtime")]
pub mod report;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod run;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod settled;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
pub mod tune;
#[cfg(feature = "runtime")]
#[allow(missing_docs)]
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
