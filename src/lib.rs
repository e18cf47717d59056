//! pacc: write the serial stencil loop nest, add `#[pacc::pipeline]`, run it out of core.
//!
//! The attribute keeps the function's signature and adds a module of the same name:
//!
//! ```
//! use ndarray::Array3;
//! use pacc::prelude::*;
//!
//! /// Explicit heat diffusion in 3D; `a` holds the newest state afterwards.
//! #[pacc::pipeline]
//! pub fn heat(a: &mut Array3<f64>, b: &mut Array3<f64>, alpha: f64, steps: usize) {
//!     let (nz, ny, nx) = a.dim();
//!     for _t in 0..steps {
//!         for z in 1..nz - 1 {
//!             for y in 1..ny - 1 {
//!                 for x in 1..nx - 1 {
//!                     let c = a[[z, y, x]];
//!                     b[[z, y, x]] = c + alpha
//!                         * (a[[z - 1, y, x]] + a[[z + 1, y, x]] + a[[z, y - 1, x]]
//!                             + a[[z, y + 1, x]] + a[[z, y, x - 1]] + a[[z, y, x + 1]]
//!                             - 6.0 * c);
//!                 }
//!             }
//!         }
//!         std::mem::swap(a, b);
//!     }
//! }
//!
//! fn main() -> Result<(), pacc::Error> {
//!     let start = Array3::from_shape_fn((24, 16, 16), |(z, y, x)| (z * y + x) as f64);
//!     let (mut a, mut b) = (start.clone(), start.clone());
//!     // The pipeline on the CPU backend, 3 chunks of the z axis, 4 steps per block.
//!     let opts = Options::new().backend(BackendChoice::Cpu).chunks(3).block_steps(4);
//!     let ((), report) = heat::run(&mut a, &mut b, 0.1, 10, &opts)?;
//!     assert_eq!(report.backend, "cpu");
//!     // The untouched original gives the same bits.
//!     let (mut sa, mut sb) = (start.clone(), start);
//!     heat::serial(&mut sa, &mut sb, 0.1, 10);
//!     assert_eq!(a, sa);
//!     Ok(())
//! }
//! ```
//!
//! `heat(..)` itself takes its options from the `PACC_*` environment variables and panics on
//! a run-time error, naming the option or variable; `heat::try_run(..)` returns the error
//! instead. See the README for the options, the schemes and the tools.
//!
//! Features: `cuda` (default) the CUDA backend; `mpi` distributed runs; `cli` the `pacc`
//! command line (`pacc expand`, `pacc plan`); `models` the repository's example programs
//! (`pacc::models`, so that the examples, the tests and `pacc expand` all use the same annotated
//! functions) and the compression fidelity metrics (`pacc::fidelity`). A crate that only runs
//! its own pipelines needs none of the last two.

#![warn(missing_docs)]

// Generated code names the runtime as `::pacc::runtime`; this alias makes that path resolve
// inside this crate too (the models below are annotated with `#[pacc::pipeline]`).
extern crate self as pacc;

pub use pacc_macros::{pipeline, stencils};
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

// The repository's own programs, not the user-facing API; their generated modules are the
// translator's to document.
#[cfg(feature = "models")]
#[allow(missing_docs)]
pub mod fidelity;
#[cfg(feature = "models")]
#[allow(missing_docs)]
pub mod models;

/// The README's Rust blocks, compiled and run as doc tests so that the code it shows stays
/// true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `use pacc::prelude::*;` brings the attribute, the option and report types and the `ndarray`
/// array types a pipelined function is written with.
pub mod prelude {
    pub use crate::{pipeline, stencils};
    pub use ndarray::{Array2, Array3, ArrayView2, ArrayView3, ArrayViewMut2, ArrayViewMut3};
    pub use pacc_runtime::{BackendChoice, Error, Options, Report, Scheme};
}
