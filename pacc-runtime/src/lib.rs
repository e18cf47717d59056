//! The runtime behind `#[pacc::pipeline]`: the [`Program`] description that generated code hands
//! over, the `plan` that schedules an out-of-core run, and the executors that carry it out.
//!
//! Everything that runs a pipeline sits behind the default `runtime` feature. Without it the crate
//! is [`program`] and the codec's rate arithmetic ([`codec`]), with serde and thiserror as the only
//! dependencies: what the translator needs to emit and check a Program.

pub mod codec;
pub mod program;

#[cfg(feature = "runtime")]
pub mod binding;
#[cfg(feature = "runtime")]
pub mod checkpoint;
#[cfg(feature = "runtime")]
pub mod compress;
#[cfg(feature = "runtime")]
pub mod config;
#[cfg(feature = "mpi")]
pub mod dist;
#[cfg(feature = "runtime")]
pub mod error;
#[cfg(feature = "runtime")]
pub mod exec;
#[cfg(feature = "runtime")]
pub mod fault;
#[cfg(feature = "runtime")]
pub mod host;
#[cfg(feature = "runtime")]
pub mod invocation;
#[cfg(feature = "runtime")]
pub mod march;
#[cfg(feature = "runtime")]
pub mod options;
#[cfg(feature = "runtime")]
pub mod plan;
#[cfg(feature = "runtime")]
pub mod progress;
#[cfg(feature = "runtime")]
pub mod report;
#[cfg(feature = "runtime")]
pub mod run;
#[cfg(feature = "runtime")]
pub mod tune;
#[cfg(feature = "runtime")]
pub mod validate;

pub use program::Program;

#[cfg(feature = "runtime")]
pub use error::{
    CheckpointError, CheckpointRef, CompressError, DistError, Error, Progress, Result,
};
#[cfg(feature = "runtime")]
pub use invocation::{HostArray, HostSlice, Invocation, RunOutput, ScalarValue};
#[cfg(feature = "runtime")]
pub use march::MarchTuning;
#[cfg(feature = "runtime")]
pub use options::{BackendChoice, Checkpointing, KernelForm, Options, Resume};
#[cfg(feature = "runtime")]
pub use plan::{Compression, Plan, PlanOptions, Scheme};
#[cfg(feature = "runtime")]
pub use progress::{OnProgress, StepsDone};
#[cfg(feature = "runtime")]
pub use report::{KernelStats, Report};
#[cfg(feature = "runtime")]
pub use run::run;
