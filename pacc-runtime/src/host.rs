//! Turning the user's ndarray arrays and slices into raw host descriptions, with the checks
//! that must pass before any data is touched.

use crate::error::Error;
use crate::frame::GridElem;
use crate::invocation::{HostArray, HostSlice};
use ndarray::{ArrayBase, Data, DataMut, Dimension};

/// The description of `a`, whose first element is at `ptr`, once it passes the checks.
///
/// # Safety
///
/// The caller holds a borrow of `a` for `'a`, a mutable one where `writable`.
unsafe fn describe<'a, S, T, D>(
    a: &ArrayBase<S, D>,
    name: &str,
    ptr: *mut u8,
    writable: bool,
) -> Result<HostArray<'a>, Error>
where
    S: Data<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    if !(1..=3).contains(&a.ndim()) {
        return Err(Error::Internal(format!(
            "array `{name}` has {} axes; pacc supports 1, 2 and 3",
            a.ndim()
        )));
    }
    if !a.is_standard_layout() {
        return Err(Error::NotContiguous {
            name: name.to_string(),
        });
    }
    // A 1D array of `n` points is the 2D grid `[n, 1]` of a 1D program (planes of one point,
    // chunked along the one axis; pacc-translate's `lower/line.rs`): the same memory.
    let column;
    let shape = match a.shape() {
        &[n] => {
            column = [n, 1];
            &column[..]
        }
        s => s,
    };
    // SAFETY: the caller's borrow keeps `a`'s elements allocated, initialized and (when
    // writable) its own for `'a`; they are contiguous (checked above).
    unsafe { HostArray::from_raw_parts(ptr, T::ELEM, shape, writable) }
}

/// A read-only array argument, borrowed while the description lives.
pub fn host_array<'a, S, T, D>(a: &'a ArrayBase<S, D>, name: &str) -> Result<HostArray<'a>, Error>
where
    S: Data<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    // SAFETY: `a` is borrowed for `'a`, and the description is read only.
    unsafe { describe(a, name, a.as_ptr() as *mut u8, false) }
}

/// An array argument the kernels may write, borrowed mutably while the description lives.
pub fn host_array_mut<'a, S, T, D>(
    a: &'a mut ArrayBase<S, D>,
    name: &str,
) -> Result<HostArray<'a>, Error>
where
    S: DataMut<Elem = T>,
    T: GridElem,
    D: Dimension,
{
    let ptr = a.as_mut_ptr() as *mut u8;
    // SAFETY: `a` is borrowed mutably for `'a`.
    unsafe { describe(a, name, ptr, true) }
}

/// A read-only `Array1` (or 1D view) read as a slice, a series beside the grids; refused
/// unless its elements are contiguous.
pub fn host_series<'a, T: GridElem>(
    a: ndarray::ArrayView1<'a, T>,
    name: &str,
) -> Result<HostSlice<'a>, Error> {
    match a.to_slice() {
        Some(s) => Ok(host_slice(s)),
        None => Err(Error::NotContiguous {
            name: name.to_string(),
        }),
    }
}

/// A read-only 1D slice argument (`&[f32]`, or a `Vec` computed before the time loop).
pub fn host_slice<T: GridElem>(s: &[T]) -> HostSlice<'_> {
    // SAFETY: the borrow of `s` keeps it allocated and unwritten while the description lives.
    unsafe { HostSlice::from_raw_parts(s.as_ptr() as *const u8, T::ELEM, s.len()) }
}
