//! What a generated wrapper hands the runtime for one call.

use crate::frame::CpuKernels;
use crate::program::{Elem, ScalarType};

/// One of the user's arrays, as raw memory. Made by [`crate::host::host_array`] and
/// [`crate::host::host_array_mut`], which check contiguity.
#[derive(Clone, Copy, Debug)]
pub struct HostArray {
    pub ptr: *mut u8,
    pub elem: Elem,
    pub shape: [usize; 3],
    pub ndim: usize,
    /// False for arrays passed by shared reference or as read-only views.
    pub writable: bool,
}

unsafe impl Send for HostArray {}
unsafe impl Sync for HostArray {}

impl HostArray {
    pub fn shape(&self) -> &[usize] {
        &self.shape[..self.ndim]
    }
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn bytes(&self) -> usize {
        self.len() * self.elem.size()
    }
}

/// A read-only 1D slice (copied whole to the device).
#[derive(Clone, Copy, Debug)]
pub struct HostSlice {
    pub ptr: *const u8,
    pub elem: Elem,
    pub len: usize,
}

unsafe impl Send for HostSlice {}
unsafe impl Sync for HostSlice {}

/// A scalar argument of the kernels, with its type (for the CUDA backend's launch arguments).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    F32(f32),
    F64(f64),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    Usize(usize),
    Isize(isize),
    Bool(bool),
}

impl ScalarValue {
    pub fn ty(&self) -> ScalarType {
        match self {
            ScalarValue::F32(_) => ScalarType::F32,
            ScalarValue::F64(_) => ScalarType::F64,
            ScalarValue::I32(_) => ScalarType::I32,
            ScalarValue::I64(_) => ScalarType::I64,
            ScalarValue::U32(_) => ScalarType::U32,
            ScalarValue::U64(_) => ScalarType::U64,
            ScalarValue::Usize(_) => ScalarType::Usize,
            ScalarValue::Isize(_) => ScalarType::Isize,
            ScalarValue::Bool(_) => ScalarType::Bool,
        }
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for ScalarValue {
            fn from(x: $t) -> Self { ScalarValue::$v(x) }
        }
    )*};
}
scalar_from!(f32 => F32, f64 => F64, i32 => I32, i64 => I64, u32 => U32, u64 => U64,
             usize => Usize, isize => Isize, bool => Bool);

/// Everything a call provides besides the [`crate::program::Program`].
pub struct Invocation<'a> {
    /// One per program array, in the program's order.
    pub arrays: Vec<HostArray>,
    /// One per program scalar.
    pub scalars: Vec<ScalarValue>,
    /// One per program slice.
    pub slices: Vec<HostSlice>,
    /// One per program point statement: its index (one entry per axis), evaluated by the
    /// wrapper. Entries may be out of range; the runtime reports that as an error.
    pub points: Vec<Vec<i64>>,
    /// Value of the time variable at the first step.
    pub t0: i64,
    /// Number of time steps.
    pub steps: usize,
    /// Value of each reduction variable before the time loop (as f64 holding its type exactly).
    pub reduction_init: Vec<f64>,
    /// Value each reset statement assigns (one per program reset).
    pub reset_values: Vec<f64>,
    pub cpu: CpuKernels<'a>,
}

/// What a run returns to the wrapper.
#[derive(Debug)]
pub struct RunOutput {
    /// Final value of each reduction variable (f64 holding its type exactly).
    pub reductions: Vec<f64>,
    /// How many times the wrapper must replay the time step's `swap` statements on its own
    /// variables so that each name refers to the array it would after the serial loop.
    pub swap_replays: usize,
    pub report: crate::report::Report,
}
