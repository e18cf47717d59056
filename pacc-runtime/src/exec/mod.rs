//! Executors: run a [`crate::plan::Plan`] on some hardware.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
mod frame;
pub mod reduce;

pub use frame::{
    reduction_identity, BufView, CpuKernelFn, CpuKernels, CpuPointFn, Grid, GridElem, KernelFrame,
};
