//! The interface between generated CPU kernels and the executors.
//!
//! The translator turns each loop nest into a closure that computes one plane of the outermost
//! axis; executors call it for the planes a plan operation asks for, in parallel. The closure
//! reads and writes chunk buffers through [`Grid`], which maps global indices to the buffer
//! (whose first plane is `base`) and checks bounds, so a planning bug is a panic with a message,
//! never an out-of-bounds access.

use crate::program::Elem;
use std::marker::PhantomData;

/// A raw view of one chunk buffer (or a whole host array) holding planes `base..base + planes`.
/// The executors make them; the fields are private because [`BufView::grid`] reads and writes
/// through `ptr` (code outside the crate uses the unsafe [`BufView::from_raw_parts`]).
#[derive(Clone, Copy, Debug)]
pub struct BufView {
    pub(crate) ptr: *mut u8,
    pub(crate) elem: Elem,
    /// Global index of the buffer's first plane.
    pub(crate) base: usize,
    /// Number of planes held.
    pub(crate) planes: usize,
    /// Extents of the inner axes (`[ny, nx]` for 3D, `[nx]` for 2D).
    pub(crate) inner: [usize; 2],
    pub(crate) ndim: usize,
}

// SAFETY: a BufView is a plain description of memory owned elsewhere; executors guarantee
// (and `plan::race::check` proves for every plan) that concurrent operations never write
// bytes another operation touches, and within a kernel each plane is written by one thread.
unsafe impl Send for BufView {}
unsafe impl Sync for BufView {}

impl BufView {
    /// A view of `planes` planes (from global plane `base`) of `elem` at `ptr`, with inner
    /// extents `inner` (`[ny, nx]` in 3D, `[nx, _]` in 2D; `ndim` says which).
    ///
    /// # Safety
    ///
    /// While the view (or a [`Grid`] made from it) is used, `ptr` points to
    /// `planes * ny * nx` (3D) or `planes * nx` (2D) initialized elements of `elem` in one
    /// allocation, aligned for it, that nothing else writes, and that nothing reads while a
    /// kernel writes them; kernels running at once through copies of the view write
    /// disjoint planes.
    pub unsafe fn from_raw_parts(
        ptr: *mut u8,
        elem: Elem,
        base: usize,
        planes: usize,
        inner: [usize; 2],
        ndim: usize,
    ) -> BufView {
        BufView {
            ptr,
            elem,
            base,
            planes,
            inner,
            ndim,
        }
    }

    fn plane_len(&self) -> usize {
        if self.ndim == 3 {
            self.inner[0] * self.inner[1]
        } else {
            self.inner[0]
        }
    }

    /// Typed access for generated code. Panics if the element type differs (a translator bug).
    pub fn grid<T: GridElem>(&self) -> Grid<'_, T> {
        assert_eq!(
            self.elem,
            T::ELEM,
            "pacc internal error: buffer element type mismatch"
        );
        Grid {
            ptr: self.ptr as *mut T,
            base: self.base,
            planes: self.planes,
            inner: self.inner,
            len: self.planes * self.plane_len(),
            _life: PhantomData,
        }
    }
}

/// Element types a [`Grid`] can hold: `f32` and `f64`.
///
/// Sealed: code outside this crate cannot implement it. Allocation (`pages::zeros`,
/// `PinnedArray::zeros`) hands out zeroed memory as values of the type, and the executors copy
/// elements as plain bytes, both sound only for types whose every bit pattern is a value and
/// which own nothing.
pub trait GridElem: sealed::Sealed + Copy + Send + Sync + 'static {
    const ELEM: Elem;
}
impl GridElem for f32 {
    const ELEM: Elem = Elem::F32;
}
impl GridElem for f64 {
    const ELEM: Elem = Elem::F64;
}

/// The supertrait that seals [`GridElem`]: public, so it may bound a public trait, in a
/// private module, so nothing outside the crate can name it to implement it.
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Typed, bounds-checked access to a buffer by global indices.
#[derive(Clone, Copy)]
pub struct Grid<'a, T> {
    ptr: *mut T,
    base: usize,
    planes: usize,
    inner: [usize; 2],
    len: usize,
    _life: PhantomData<&'a T>,
}

unsafe impl<T: Send> Send for Grid<'_, T> {}
unsafe impl<T: Sync> Sync for Grid<'_, T> {}

impl<T: GridElem> Grid<'_, T> {
    #[inline(always)]
    fn offset3(&self, z: usize, y: usize, x: usize) -> usize {
        let p = z.wrapping_sub(self.base);
        if p >= self.planes || y >= self.inner[0] || x >= self.inner[1] {
            out_of_window(z, self.base, self.planes);
        }
        (p * self.inner[0] + y) * self.inner[1] + x
    }

    #[inline(always)]
    fn offset2(&self, y: usize, x: usize) -> usize {
        let p = y.wrapping_sub(self.base);
        if p >= self.planes || x >= self.inner[0] {
            out_of_window(y, self.base, self.planes);
        }
        p * self.inner[0] + x
    }

    #[inline(always)]
    pub fn get3(&self, z: usize, y: usize, x: usize) -> T {
        let o = self.offset3(z, y, x);
        debug_assert!(o < self.len);
        // SAFETY: offset3 checked every index against the buffer's extents.
        unsafe { *self.ptr.add(o) }
    }

    #[inline(always)]
    pub fn set3(&self, z: usize, y: usize, x: usize, v: T) {
        let o = self.offset3(z, y, x);
        debug_assert!(o < self.len);
        // SAFETY: in bounds as above; the plan gives each written plane to one thread only.
        unsafe { *self.ptr.add(o) = v }
    }

    #[inline(always)]
    pub fn get2(&self, y: usize, x: usize) -> T {
        let o = self.offset2(y, x);
        // SAFETY: offset2 checked every index against the buffer's extents.
        unsafe { *self.ptr.add(o) }
    }

    #[inline(always)]
    pub fn set2(&self, y: usize, x: usize, v: T) {
        let o = self.offset2(y, x);
        // SAFETY: in bounds as above; the plan gives each written plane to one thread only.
        unsafe { *self.ptr.add(o) = v }
    }
}

#[cold]
#[inline(never)]
fn out_of_window(plane: usize, base: usize, planes: usize) -> ! {
    panic!(
        "pacc internal error: access at plane {plane} outside the chunk window {base}..{} \
         (or an inner index out of range); please report this with the plan (`pacc plan`)",
        base + planes
    )
}

/// What a generated kernel sees for one invocation.
pub struct KernelFrame<'a> {
    /// One view per program array (index = the program's array index), bound to the physical
    /// buffer the name refers to at this point of the time loop.
    pub arrays: &'a [BufView],
    /// The value of the time loop's variable at this step.
    pub t: i64,
    /// The full shape of the arrays.
    pub shape: &'a [usize],
}

/// A kernel: computes plane `plane` (global index along axis 0) of its outputs and adds its
/// reductions over that plane into `red` (one slot per reduction of the *kernel*, in the order of
/// `KernelDecl::reductions`, as f64 holding the reduction's own type exactly).
pub type CpuKernelFn<'a> = dyn Fn(&KernelFrame<'_>, usize, &mut [f64]) + Sync + 'a;

/// A single-point statement: applies itself to the frame's buffers (its index was fixed when
/// the closure was made).
pub type CpuPointFn<'a> = dyn Fn(&KernelFrame<'_>) + Sync + 'a;

/// Initial value of a reduction's per-plane partial: 0 for sums, +inf for min, -inf for max.
pub fn reduction_identity(op: crate::program::ReduceOp) -> f64 {
    match op {
        crate::program::ReduceOp::Sum => 0.0,
        crate::program::ReduceOp::Min => f64::INFINITY,
        crate::program::ReduceOp::Max => f64::NEG_INFINITY,
    }
}

/// The CPU side of a translated program: one closure per kernel and per point statement.
pub struct CpuKernels<'a> {
    pub kernels: Vec<Box<CpuKernelFn<'a>>>,
    pub points: Vec<Box<CpuPointFn<'a>>>,
}
