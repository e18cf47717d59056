//! What a generated wrapper hands the runtime for one call.

use crate::error::Error;
use crate::frame::CpuKernels;
use crate::program::{Elem, ScalarType};
use std::marker::PhantomData;

/// One of the user's arrays, as raw memory borrowed for `'a`.
///
/// Made by [`crate::host::host_array`] and [`crate::host::host_array_mut`], which check
/// contiguity and hold the borrow of the array for `'a`: the array cannot be dropped, moved or
/// touched while the description (or an [`Invocation`] holding it) lives. Memory pacc cannot
/// see borrowed is described with the unsafe [`HostArray::from_raw_parts`]. The fields are
/// private because the executors write through `ptr`: a description made up in safe code
/// would let them write anywhere.
///
/// Neither `Copy` nor `Clone`: a writable description stands for the exclusive borrow it was
/// made from, and a copy would be a second one (two runs at once on one array). The one
/// duplication pacc makes, a fused run's twins ([`crate::fuse`]), is crate-private and puts
/// the copy in the invocation that holds the original, so that one run orders every access to
/// both.
#[derive(Debug)]
pub struct HostArray<'a> {
    pub(crate) ptr: *mut u8,
    pub(crate) elem: Elem,
    pub(crate) shape: [usize; 3],
    pub(crate) ndim: usize,
    /// False for arrays passed by shared reference or as read-only views.
    pub(crate) writable: bool,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a HostArray is a description of memory whose owner lends it for `'a`; the executors
// order every access to it (`crate::validate` refuses overlapping arrays and writes to
// read-only ones).
unsafe impl Send for HostArray<'_> {}
unsafe impl Sync for HostArray<'_> {}

impl<'a> HostArray<'a> {
    /// Describes `shape` (outermost axis first, 1 to 3 axes) elements of `elem` at `ptr`.
    ///
    /// # Safety
    ///
    /// For all of `'a`:
    /// - `ptr` points to `shape.iter().product() * elem.size()` initialized bytes in one
    ///   allocation, aligned for `elem`, that stay allocated;
    /// - if `writable`, nothing but the run the description is handed to reads or writes
    ///   those bytes while it runs (and they may be written through `ptr`); if not, nothing
    ///   writes them while it runs.
    ///
    /// Overlapping descriptions in one call are refused by the run (`Error::Overlap`), not
    /// undefined behaviour.
    pub unsafe fn from_raw_parts(
        ptr: *mut u8,
        elem: Elem,
        shape: &[usize],
        writable: bool,
    ) -> Result<HostArray<'a>, Error> {
        if !(1..=3).contains(&shape.len()) {
            return Err(Error::Axes { ndim: shape.len() });
        }
        let mut full = [1usize; 3];
        full[..shape.len()].copy_from_slice(shape);
        Ok(HostArray {
            ptr,
            elem,
            shape: full,
            ndim: shape.len(),
            writable,
            _borrow: PhantomData,
        })
    }

    /// The same memory, read only: the run refuses to write it.
    pub fn read_only(self) -> HostArray<'a> {
        HostArray {
            writable: false,
            ..self
        }
    }

    /// A second description of the same memory. Private to this module: its one use is
    /// [`Invocation::with_twins`], which keeps both in one invocation.
    fn alias(&self) -> HostArray<'a> {
        HostArray {
            _borrow: PhantomData,
            ..*self
        }
    }

    /// The address of the first element.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn elem(&self) -> Elem {
        self.elem
    }
    /// Whether the run may write the array.
    pub fn writable(&self) -> bool {
        self.writable
    }
    pub fn ndim(&self) -> usize {
        self.ndim
    }
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

/// A read-only 1D slice (copied whole to the device), borrowed for `'a`. Made by
/// [`crate::host::host_slice`], or the unsafe [`HostSlice::from_raw_parts`].
#[derive(Clone, Copy, Debug)]
pub struct HostSlice<'a> {
    pub(crate) ptr: *const u8,
    pub(crate) elem: Elem,
    pub(crate) len: usize,
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: as for HostArray; a slice is only read.
unsafe impl Send for HostSlice<'_> {}
unsafe impl Sync for HostSlice<'_> {}

impl<'a> HostSlice<'a> {
    /// Describes `len` elements of `elem` at `ptr`.
    ///
    /// # Safety
    ///
    /// For all of `'a`, `ptr` points to `len * elem.size()` initialized bytes in one
    /// allocation, aligned for `elem`, that stay allocated and that nothing writes while a
    /// run the description is handed to runs.
    pub unsafe fn from_raw_parts(ptr: *const u8, elem: Elem, len: usize) -> HostSlice<'a> {
        HostSlice {
            ptr,
            elem,
            len,
            _borrow: PhantomData,
        }
    }

    /// The address of the first element.
    pub fn ptr(&self) -> *const u8 {
        self.ptr
    }
    pub fn elem(&self) -> Elem {
        self.elem
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

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
    pub arrays: Vec<HostArray<'a>>,
    /// One per program scalar.
    pub scalars: Vec<ScalarValue>,
    /// One per program slice.
    pub slices: Vec<HostSlice<'a>>,
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

impl<'a> Invocation<'a> {
    /// The invocation with a second description of each of the arrays `of` appended, in
    /// order: a fused run's twins, which share their original's host memory
    /// ([`crate::fuse::invocation`]).
    ///
    /// Sound by construction: the copies join the invocation that holds the originals, so they
    /// reach only the run that invocation is handed to, which orders every access to both (the
    /// overlap check lets exactly the program's twins share memory); crate-private, so nothing
    /// outside pacc can take a copy out and run it elsewhere.
    pub(crate) fn with_twins(mut self, of: &[usize]) -> Invocation<'a> {
        let twins: Vec<HostArray<'a>> = of.iter().map(|&a| self.arrays[a].alias()).collect();
        self.arrays.extend(twins);
        self
    }
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

/// Calls for the runtime's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{HostArray, Invocation};
    use crate::program::Elem;

    /// `f` of a call of `steps` steps over `arrays` zeroed f32 arrays of `shape`, with no
    /// scalars, slices, points or CPU kernels: what a tuner's decisions need, not a run.
    pub(crate) fn zeros<R>(
        arrays: usize,
        shape: [usize; 3],
        steps: usize,
        f: impl FnOnce(&Invocation<'_>) -> R,
    ) -> R {
        let n: usize = shape.iter().product();
        let mut data = vec![0f32; arrays * n];
        let arrays = (data.chunks_mut(n.max(1)))
            .take(arrays)
            // SAFETY: disjoint live buffers of `shape` f32 each, untouched while `f` runs.
            .map(|x| unsafe {
                HostArray::from_raw_parts(x.as_mut_ptr().cast(), Elem::F32, &shape, true)
            })
            .collect::<Result<Vec<_>, _>>()
            .expect("a 3-axis shape");
        f(&Invocation {
            arrays,
            scalars: vec![],
            slices: vec![],
            points: vec![],
            t0: 0,
            steps,
            reduction_init: vec![],
            reset_values: vec![],
            // SAFETY: no closures; the callers (tuners' decisions) run nothing.
            cpu: unsafe { crate::frame::CpuKernels::new(vec![], vec![]) },
        })
    }
}
