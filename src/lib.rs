//! pacc: write the serial stencil loop nest, add `#[pacc::pipeline]`, run it out of core.
pub use pacc_macros::pipeline;
pub use pacc_runtime as runtime;
pub use pacc_runtime::{BackendChoice, Error, Options, Plan, Program, Report, Scheme};
