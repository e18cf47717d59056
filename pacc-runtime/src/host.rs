//! Turning the user's ndarray arrays and slices into raw host descriptions, with the checks
//! that must pass before any data is touched.

use crate::error::Error;
use crate::frame::GridElem;
use crate::invocation::{HostArray, HostSlice};
use ndarray::{ArrayBase, Data, DataMut, Dimension};

fn describe<S, T, D>(
    a: &ArrayBase<S, D>,
    name: &str,
    ptr: *mut u8,
    writable: bool,
) -> Result<HostArray, Error>
where
    S: Data<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    if !(2..=3).contains(&a.ndim()) {
        return Err(Error::Internal(format!(
            "array `{name}` has {} axes; pacc supports 2 and 3",
            a.ndim()
        )));
    }
    if !a.is_standard_layout() {
        return Err(Error::NotContiguous {
            name: name.to_string(),
        });
    }
    let mut shape = [1usize; 3];
    shape[..a.ndim()].copy_from_slice(a.shape());
    Ok(HostArray {
        ptr,
        elem: T::ELEM,
        shape,
        ndim: a.ndim(),
        writable,
    })
}

/// A read-only array argument.
pub fn host_array<S, T, D>(a: &ArrayBase<S, D>, name: &str) -> Result<HostArray, Error>
where
    S: Data<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    describe(a, name, a.as_ptr() as *mut u8, false)
}

/// An array argument the kernels may write.
pub fn host_array_mut<S, T, D>(a: &mut ArrayBase<S, D>, name: &str) -> Result<HostArray, Error>
where
    S: DataMut<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    let ptr = a.as_mut_ptr() as *mut u8;
    describe(a, name, ptr, true)
}

/// A read-only 1D slice argument (`&[f32]`, or a `Vec` computed before the time loop).
pub fn host_slice<T: GridElem>(s: &[T]) -> HostSlice {
    HostSlice {
        ptr: s.as_ptr() as *const u8,
        elem: T::ELEM,
        len: s.len(),
    }
}
