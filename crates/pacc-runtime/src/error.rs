//! Typed run-time errors. Every variant says what went wrong and how to fix it.

use crate::plan::PlanError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("array `{name}` has shape {got:?}, but `{first}` has shape {want:?}; all arrays of a pipeline must have the same shape")]
    ShapeMismatch {
        name: String,
        got: Vec<usize>,
        first: String,
        want: Vec<usize>,
    },
    #[error("array `{name}` is not contiguous in standard (C) order; pass `.as_standard_layout()` or a copy made with `.to_owned()`")]
    NotContiguous { name: String },
    #[error("arrays `{a}` and `{b}` overlap in memory; pass separate arrays")]
    Overlap { a: String, b: String },
    #[error("array `{name}` is written by the kernels but was passed read-only; pass it as `&mut` or a mutable view")]
    ReadOnly { name: String },
    #[error("array `{name}` is empty (shape {shape:?}); nothing to compute")]
    Empty { name: String, shape: Vec<usize> },
    #[error("point statement `{point}` writes index {index:?}, outside the array shape {shape:?}; the serial code would panic here")]
    PointOutOfBounds {
        point: String,
        index: Vec<i64>,
        shape: Vec<usize>,
    },
    #[error("invalid option: {0}")]
    Option(String),
    #[error("cannot plan the run: {0}")]
    Plan(#[from] PlanError),
    #[error("the CUDA backend was requested but is not available: {reason}. Hint: unset PACC_BACKEND (or set it to `auto` or `cpu`) to run on the CPU backend")]
    NoCuda { reason: String },
    #[error("not enough device memory: the plan needs {need} bytes for {sets} buffer sets, but only {free} bytes are free; use more chunks (fewer planes per chunk) or fewer block steps")]
    DeviceMemory { need: u64, free: u64, sets: usize },
    #[error("NVRTC failed to compile `{kernel}`:\n{log}")]
    Nvrtc { kernel: String, log: String },
    #[error("CUDA error in {what}: {message}")]
    Cuda { what: String, message: String },
    #[error("internal error: the translator's description and the call disagree: {0}. Please report this")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
