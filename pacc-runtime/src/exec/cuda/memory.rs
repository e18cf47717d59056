//! Host and device memory for CUDA runs: page-locking the user's arrays for a run, pacc's own
//! pinned arrays, pinned staging buffers and raw device buffers. Every owner frees on drop.

use super::device::context;
use super::driver::{self, range_page_locked, DevicePtr, RegisterError};
use crate::error::Error;
use crate::exec::GridElem;
use crate::invocation::HostArray;
use cudarc::driver::CudaContext;
use ndarray::{ArrayView, ArrayViewMut, Dimension, IntoDimension};
use std::marker::PhantomData;
use std::sync::Arc;

/// Host ranges registered (page-locked) for one run; unregistered on drop.
pub(crate) struct Registration {
    ctx: Arc<CudaContext>,
    ranges: Vec<(*mut u8, usize)>,
    /// How many of the arrays were already page-locked (skipped).
    pub already_locked: usize,
}

impl Registration {
    /// Registers every `(ptr, bytes)` range that is not already page-locked. Ranges are widened
    /// to whole pages and merged where they touch, so two small arrays sharing a page do not
    /// collide. On failure, what was registered is undone and the driver's refusal returned.
    pub fn new(ctx: &Arc<CudaContext>, arrays: &[(*mut u8, usize)]) -> Result<Self, RegisterError> {
        const PAGE: usize = 4096;
        let mut reg = Registration {
            ctx: ctx.clone(),
            ranges: Vec::new(),
            already_locked: 0,
        };
        let mut want: Vec<(usize, usize)> = Vec::new();
        for &(p, n) in arrays {
            if n == 0 {
                continue;
            }
            if range_page_locked(p, n) {
                reg.already_locked += 1;
                continue;
            }
            let lo = (p as usize) / PAGE * PAGE;
            let hi = (p as usize + n).div_ceil(PAGE) * PAGE;
            want.push((lo, hi));
        }
        want.sort();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (lo, hi) in want {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        for (lo, hi) in merged {
            // SAFETY: the range covers whole pages of live host memory (the user's arrays),
            // which stay borrowed for the whole run; unregistered in Drop.
            unsafe { driver::host_register(lo as *mut u8, hi - lo)? };
            reg.ranges.push((lo as *mut u8, hi - lo));
        }
        Ok(reg)
    }

    pub fn bytes(&self) -> usize {
        self.ranges.iter().map(|r| r.1).sum()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        for &(p, _) in &self.ranges {
            // SAFETY: registered by us in `new`.
            unsafe { driver::host_unregister(p) };
        }
    }
}

/// Page-locked host arrays; unregistered when dropped. The guard of [`lock_host`] borrows the
/// arrays for `'a`, so they cannot be freed, moved or resized while it lives; that of
/// [`lock_host_unchecked`] borrows nothing (`'static`) and its caller keeps them alive.
pub struct HostLock<'a> {
    _reg: Registration,
    /// Seconds spent registering.
    pub seconds: f64,
    pub bytes: usize,
    _arrays: PhantomData<&'a [u8]>,
}

/// Page-locks `arrays` (those not already page-locked) until the guard drops. While it lives,
/// CUDA runs over these arrays skip registering them (the report notes it).
///
/// The guard borrows the arrays for as long as their descriptions do (`'a`): an array described
/// with [`host_array`](crate::host::host_array) cannot be dropped, reassigned or written while
/// the guard lives. That keeps the registration from outliving the memory: a registration
/// left over freed memory serves a later allocation at the same address the old bytes and
/// swallows copies into it (reproduced on an H200 with the driver's own calls). A caller that
/// needs the arrays mutably while they stay page-locked (repeated runs of a `#[pacc::pipeline]`
/// function on the same arrays) uses [`lock_host_unchecked`].
pub fn lock_host<'a>(arrays: &[HostArray<'a>]) -> Result<HostLock<'a>, Error> {
    // SAFETY: the guard borrows the arrays' memory for `'a`, as their descriptions do, so the
    // memory outlives the registration.
    unsafe { register_arrays(arrays) }
}

/// [`lock_host`] with a guard that does not borrow the arrays, so that they can be passed
/// mutably to runs while it lives: for a caller that calls repeatedly on the same arrays,
/// which then pays registering (and unregistering, which each run otherwise does before it
/// returns) once.
///
/// # Safety
///
/// Every array's memory must stay allocated at the same address, neither freed, reallocated nor
/// resized (no `Vec` growth, no reassignment of the `Array` owning it), until the guard is
/// dropped. Breaking this leaves the driver's registration over memory the allocator hands out
/// again: copies then read stale bytes and writes into the new owner's memory are lost.
pub unsafe fn lock_host_unchecked(arrays: &[HostArray<'_>]) -> Result<HostLock<'static>, Error> {
    // SAFETY: the caller keeps the memory allocated until the guard drops.
    unsafe { register_arrays(arrays) }
}

/// Registers `arrays` for a guard of any lifetime.
///
/// # Safety
/// The arrays' memory stays allocated at its address for all of `'a`.
unsafe fn register_arrays<'a>(arrays: &[HostArray<'_>]) -> Result<HostLock<'a>, Error> {
    // An earlier run's pieces still being unregistered would count as locked.
    super::settle();
    let info = super::device::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = context(info.ordinal)?;
    let t = std::time::Instant::now();
    let ranges: Vec<(*mut u8, usize)> = arrays.iter().map(|a| (a.ptr, a.bytes())).collect();
    let reg = Registration::new(&ctx, &ranges)?;
    let bytes = reg.bytes();
    Ok(HostLock {
        _reg: reg,
        seconds: t.elapsed().as_secs_f64(),
        bytes,
        _arrays: PhantomData,
    })
}

/// A raw device allocation.
pub(crate) struct DeviceBuf {
    ctx: Arc<CudaContext>,
    pub ptr: DevicePtr,
    #[allow(dead_code)]
    pub bytes: usize,
}

impl DeviceBuf {
    pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Self, Error> {
        if bytes == 0 {
            return Ok(DeviceBuf {
                ctx: ctx.clone(),
                ptr: 0,
                bytes: 0,
            });
        }
        crate::fault::hit(crate::fault::Site::Alloc, || {
            format!("{bytes} bytes of device memory for {what}")
        })?;
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe {
            driver::malloc(
                bytes,
                format_args!("allocating {bytes} bytes of device memory for {what}"),
            )
        }?;
        Ok(DeviceBuf {
            ctx: ctx.clone(),
            ptr,
            bytes,
        })
    }
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        if self.ptr != 0 {
            let _ = self.ctx.bind_to_thread();
            // SAFETY: allocated in `new`; all work using it was synchronized by the executor.
            unsafe { driver::free(self.ptr) };
        }
    }
}

/// Page-locked host memory, cached (not write-combined, so the CPU reads it at full speed):
/// from [`REGISTER_FROM`] bytes up, pacc's own huge-page mapping registered with the driver
/// (`pages::Mapping`); below that, or where that fails, `cuMemHostAlloc`, whose page-by-page
/// allocation ran at 0.7-1.2 GB/s on an H200's host (a 1 GB tuning slab took 1.4 s, the link
/// measurement's two 256 MiB buffers 0.4-0.9 s; 2026-11-28).
pub(crate) struct PinnedHost {
    ctx: Arc<CudaContext>,
    pub ptr: *mut u8,
    pub bytes: usize,
    /// The registered mapping behind `ptr`; `None`: the driver's allocation.
    #[cfg(target_os = "linux")]
    mapping: Option<crate::pages::Mapping>,
}

/// Buffers at least this large are mapped by pacc and registered ([`PinnedHost`]).
const REGISTER_FROM: usize = 4 << 20;

unsafe impl Send for PinnedHost {}
unsafe impl Sync for PinnedHost {}

impl PinnedHost {
    /// `bytes` of page-locked host memory for `what` (a run's: its allocation is a fault site).
    pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Self, Error> {
        if bytes > 0 {
            crate::fault::hit(crate::fault::Site::Alloc, || {
                format!("{bytes} bytes of pinned host memory for {what}")
            })?;
        }
        Self::allocate(ctx, bytes, what)
    }

    /// [`PinnedHost::new`] for the tuner's own copies of a slab, which no run's fault site
    /// counts (their allocation is not the run's). Never null, even for no bytes.
    pub fn for_tuning(ctx: &Arc<CudaContext>, bytes: usize) -> Result<Self, Error> {
        Self::allocate(ctx, bytes.max(1), "the tuner")
    }

    fn allocate(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Self, Error> {
        ctx.bind_to_thread()
            .map_err(driver::cuda_err("binding the context"))?;
        if bytes == 0 {
            return Ok(PinnedHost {
                ctx: ctx.clone(),
                ptr: std::ptr::null_mut(),
                bytes: 0,
                #[cfg(target_os = "linux")]
                mapping: None,
            });
        }
        #[cfg(target_os = "linux")]
        if let Some(m) = (bytes >= REGISTER_FROM)
            .then(|| crate::pages::Mapping::new(bytes))
            .flatten()
        {
            // SAFETY: the mapping holds `bytes` bytes and lives as long as the registration
            // (unregistered in Drop before it is unmapped).
            if unsafe { driver::host_register(m.ptr, bytes) }.is_ok() {
                return Ok(PinnedHost {
                    ctx: ctx.clone(),
                    ptr: m.ptr,
                    bytes,
                    mapping: Some(m),
                });
            }
        }
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe {
            driver::malloc_host(
                bytes,
                format_args!("allocating {bytes} bytes of pinned host memory for {what}"),
            )
        }?;
        Ok(PinnedHost {
            ctx: ctx.clone(),
            ptr,
            bytes,
            #[cfg(target_os = "linux")]
            mapping: None,
        })
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        let _ = self.ctx.bind_to_thread();
        #[cfg(target_os = "linux")]
        if self.mapping.is_some() {
            // SAFETY: registered in `allocate`; the mapping is unmapped after this, when the
            // field drops.
            unsafe { driver::host_unregister(self.ptr) };
            return;
        }
        // SAFETY: allocated in `allocate` by the driver.
        unsafe { driver::free_host(self.ptr) };
    }
}

/// The bytes of a C-order array of `shape` with `elem` bytes per element, or
/// `Error::HostMemory` where the bytes of its non-empty axes do not fit in `isize` (the most one
/// allocation, a slice over it and an ndarray view of any shape may span): a wrapped product
/// would hand out a view far larger than the allocation.
fn array_bytes(shape: &[usize], elem: usize) -> Result<usize, Error> {
    let spanned = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(elem, |n, &d| n.checked_mul(d))
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| Error::HostMemory {
            bytes: None,
            what: format!("a pinned array of shape {shape:?} ({elem}-byte elements)"),
        })?;
    Ok(if shape.contains(&0) { 0 } else { spanned })
}

/// An array in page-locked host memory allocated by pacc, for users who call a pipelined
/// function repeatedly: runs detect that it is already page-locked and skip registering it.
/// Use it through [`PinnedArray::view`] / [`PinnedArray::view_mut`] (ndarray views).
/// Dropping it frees the memory.
pub struct PinnedArray<T: GridElem, D: Dimension> {
    mem: PinnedHost,
    dim: D,
    _t: PhantomData<T>,
}

impl<T: GridElem, D: Dimension> PinnedArray<T, D> {
    /// A zero-filled pinned array on CUDA device 0.
    pub fn zeros<Sh: IntoDimension<Dim = D>>(shape: Sh) -> Result<Self, Error> {
        let dim = shape.into_dimension();
        let bytes = array_bytes(dim.slice(), std::mem::size_of::<T>())?;
        super::available().map_err(|reason| Error::no_cuda(reason, None))?;
        let ctx = context(0)?;
        let mem = PinnedHost::new(&ctx, bytes, "a pinned array")?;
        if bytes > 0 {
            // SAFETY: `bytes` bytes were just allocated; all-zero bits are 0.0 for f32/f64.
            unsafe { std::ptr::write_bytes(mem.ptr, 0, bytes) };
        }
        Ok(PinnedArray {
            mem,
            dim,
            _t: PhantomData,
        })
    }

    /// A pinned copy of `a` (any layout).
    pub fn from_array<S: ndarray::Data<Elem = T>>(
        a: &ndarray::ArrayBase<S, D>,
    ) -> Result<Self, Error> {
        let mut p = Self::zeros(a.raw_dim())?;
        p.view_mut().assign(a);
        Ok(p)
    }

    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    fn ptr(&self) -> *mut T {
        if self.mem.ptr.is_null() {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            self.mem.ptr as *mut T
        }
    }

    pub fn view(&self) -> ArrayView<'_, T, D> {
        // SAFETY: the allocation holds dim.size() elements in C order and lives as long as self.
        unsafe { ArrayView::from_shape_ptr(self.dim.clone(), self.ptr() as *const T) }
    }

    pub fn view_mut(&mut self) -> ArrayViewMut<'_, T, D> {
        // SAFETY: as above, borrowed mutably.
        unsafe { ArrayViewMut::from_shape_ptr(self.dim.clone(), self.ptr()) }
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.dim.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.dim.size()) }
    }

    /// An ordinary (pageable) copy.
    pub fn to_owned(&self) -> ndarray::Array<T, D> {
        self.view().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::array_bytes;
    use crate::error::Error;

    #[test]
    fn pinned_array_sizes_are_checked() {
        assert_eq!(array_bytes(&[3, 5, 7], 4).unwrap(), 420);
        assert_eq!(array_bytes(&[0, 1 << 40], 8).unwrap(), 0);
        // ndarray refuses views whose non-empty axes overflow, even with no element.
        assert!(array_bytes(&[0, usize::MAX], 8).is_err());
        assert_eq!(array_bytes(&[], 4).unwrap(), 4);
        // 2^62 elements of 4 bytes wrap to 0 unchecked; 2^61 of 4 bytes pass isize::MAX.
        for shape in [
            vec![1usize << 31, 1 << 31],
            vec![2, 1 << 60],
            vec![100, usize::MAX, usize::MAX],
        ] {
            let e = array_bytes(&shape, 4).unwrap_err();
            assert!(matches!(e, Error::HostMemory { bytes: None, .. }), "{e:?}");
            assert!(e.to_string().contains(&format!("{shape:?}")), "{e}");
        }
        let most = isize::MAX as usize;
        assert_eq!(array_bytes(&[most], 1).unwrap(), most);
        assert!(array_bytes(&[most / 2 + 1], 2).is_err());
    }
}
