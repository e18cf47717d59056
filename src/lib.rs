//! pacc: write the serial stencil loop nest, add `#[pacc::pipeline]`, run it out of core.
//!
//! See the README for a tour. The examples of the repository live in [`models`], so that the
//! examples, the tests and `pacc expand` all use the same annotated functions; [`fidelity`]
//! holds the error metrics of the compression fidelity study (`examples/fidelity.rs`).

// Generated code names the runtime as `::pacc::runtime`; this alias makes that path resolve
// inside this crate too (the models below are annotated with `#[pacc::pipeline]`).
extern crate self as pacc;

pub use pacc_macros::pipeline;
pub use pacc_runtime as runtime;
pub use pacc_runtime::{BackendChoice, Error, Options, Plan, Program, Report, Scheme};

/// Expands to its input when pacc is built with its `mpi` feature, and to nothing without it.
/// Generated modules wrap their distributed entry point (`run_distributed`) in it: a `cfg`
/// in generated code would test the features of the user's crate, not pacc's.
#[cfg(feature = "mpi")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_mpi {
    ($($item:tt)*) => { $($item)* };
}

/// Expands to its input when pacc is built with its `mpi` feature, and to nothing without it.
#[cfg(not(feature = "mpi"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_mpi {
    ($($item:tt)*) => {};
}

pub mod fidelity;
pub mod models;

/// `use pacc::prelude::*;` brings the attribute, the option and report types and the `ndarray`
/// array types a pipelined function is written with.
pub mod prelude {
    pub use crate::pipeline;
    pub use ndarray::{Array2, Array3, ArrayView2, ArrayView3, ArrayViewMut2, ArrayViewMut3};
    pub use pacc_runtime::{BackendChoice, Error, Options, Report, Scheme};
}
