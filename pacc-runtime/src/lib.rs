//! The runtime behind `#[pacc::pipeline]`: the [`Program`] description that generated code hands
//! over, the [`plan`] that schedules an out-of-core run, and the executors that carry it out.

pub mod checkpoint;
pub mod codec;
pub mod compress;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod error;
pub mod exec;
pub mod fault;
pub mod host;
pub mod invocation;
pub mod options;
pub mod plan;
pub mod program;
pub mod report;
pub mod run;
pub mod tune;

pub use compress::CompressError;
pub use error::{CheckpointError, CheckpointRef, DistError, Error, Progress, Result};
pub use invocation::{HostArray, HostSlice, Invocation, RunOutput, ScalarValue};
pub use options::{BackendChoice, Checkpointing, KernelForm, Options, Resume};
pub use plan::{Compression, Plan, PlanOptions, Scheme};
pub use program::Program;
pub use report::Report;
pub use run::run;
