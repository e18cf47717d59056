//! The interface between generated CPU kernels and the executors.
//!
//! The translator turns each loop nest into a closure that computes one plane of the outermost
//! axis; executors call it for the planes a plan operation asks for, in parallel. The closure
//! reads and writes chunk buffers through [`Grid`], which maps global indices to the buffer
//! (whose first plane is `base`) and checks bounds, so a planning bug is a panic with a message,
//! never an out-of-bounds access.
//!
//! Two things keep this sound (docs/internals.md §1-2):
//! - **Lifetimes.** A [`BufView<'f>`] and the [`Grid<'f, T>`] made from it borrow the buffer for
//!   the frame's lifetime `'f`, and a kernel closure ([`CpuKernelFn`]) is higher-ranked over
//!   `'f`: it cannot keep a view or grid past the call (the buffer is freed after the run).
//! - **An unsafe constructor.** [`Grid::set3`] and [`Grid::set2`] write through `&self` while
//!   the grid is shared between the threads computing different planes. That is sound only
//!   because each closure writes the planes it is handed and nothing else, which the compiler
//!   cannot check; so closures reach the executors only through the unsafe [`CpuKernels::new`],
//!   whose contract says so.

use crate::program::Elem;
use std::marker::PhantomData;

/// A view of one chunk buffer (or a whole host array) holding planes `base..base + planes`,
/// borrowed for `'f`. The executors make them; the fields are private because [`BufView::grid`]
/// reads and writes through `ptr` (code outside the crate uses the unsafe
/// [`BufView::from_raw_parts`]).
#[derive(Clone, Copy, Debug)]
pub struct BufView<'f> {
    pub(crate) ptr: *mut u8,
    pub(crate) elem: Elem,
    /// Global index of the buffer's first plane.
    pub(crate) base: usize,
    /// Number of planes held.
    pub(crate) planes: usize,
    /// Extents of the inner axes (`[ny, nx]` for 3D, `[nx]` for 2D).
    pub(crate) inner: [usize; 2],
    pub(crate) ndim: usize,
    pub(crate) _buf: PhantomData<&'f [u8]>,
}

// SAFETY: a BufView is a description of memory borrowed for `'f`; executors guarantee (and
// `plan::race::check` proves for every plan) that concurrent operations never write bytes
// another operation touches, and within a kernel each plane is written by one thread (the
// contract of `CpuKernels::new` binds the closures to the planes they are handed).
unsafe impl Send for BufView<'_> {}
unsafe impl Sync for BufView<'_> {}

impl<'f> BufView<'f> {
    /// A view of `planes` planes (from global plane `base`) of `elem` at `ptr`, with inner
    /// extents `inner` (`[ny, nx]` in 3D, `[nx, _]` in 2D; `ndim` says which).
    ///
    /// # Safety
    ///
    /// For all of `'f`, `ptr` points to `planes * ny * nx` (3D) or `planes * nx` (2D)
    /// initialized elements of `elem` in one allocation, aligned for it, that nothing else
    /// writes, and that nothing reads while a kernel writes them; kernels running at once
    /// through copies of the view write disjoint planes.
    pub unsafe fn from_raw_parts(
        ptr: *mut u8,
        elem: Elem,
        base: usize,
        planes: usize,
        inner: [usize; 2],
        ndim: usize,
    ) -> BufView<'f> {
        BufView {
            ptr,
            elem,
            base,
            planes,
            inner,
            ndim,
            _buf: PhantomData,
        }
    }

    fn plane_len(&self) -> usize {
        if self.ndim == 3 {
            self.inner[0] * self.inner[1]
        } else {
            self.inner[0]
        }
    }

    /// Typed access for generated code, for as long as the view's buffer is borrowed. Panics if
    /// the element type differs (a translator bug).
    pub fn grid<T: GridElem>(&self) -> Grid<'f, T> {
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

/// Typed, bounds-checked access to a buffer by global indices, borrowed for `'a` (the
/// [`BufView`]'s lifetime).
///
/// Writes go through `&self` so that the threads computing different planes can share one
/// grid; the contract of [`CpuKernels::new`] is what keeps them from writing the same element.
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

/// What a generated kernel sees for one invocation: views borrowed for `'f`.
pub struct KernelFrame<'f> {
    /// One view per program array (index = the program's array index), bound to the physical
    /// buffer the name refers to at this point of the time loop.
    pub arrays: &'f [BufView<'f>],
    /// The value of the time loop's variable at this step.
    pub t: i64,
    /// The full shape of the arrays.
    pub shape: &'f [usize],
}

/// A kernel: computes plane `plane` (global index along axis 0) of its outputs and adds its
/// reductions over that plane into `red` (one slot per reduction of the *kernel*, in the order of
/// `KernelDecl::reductions`, as f64 holding the reduction's own type exactly).
///
/// Higher-ranked over the frame's lifetime `'f`: the closure works for every frame, so nothing
/// it borrows from one (a [`BufView`], a [`Grid`]) can outlive the call.
pub type CpuKernelFn<'a> = dyn for<'f> Fn(&KernelFrame<'f>, usize, &mut [f64]) + Sync + 'a;

/// A single-point statement: applies itself to the frame's buffers (its index was fixed when
/// the closure was made). Higher-ranked over the frame as [`CpuKernelFn`] is.
pub type CpuPointFn<'a> = dyn for<'f> Fn(&KernelFrame<'f>) + Sync + 'a;

/// Initial value of a reduction's per-plane partial: 0 for sums, +inf for min, -inf for max.
pub fn reduction_identity(op: crate::program::ReduceOp) -> f64 {
    match op {
        crate::program::ReduceOp::Sum => 0.0,
        crate::program::ReduceOp::Min => f64::INFINITY,
        crate::program::ReduceOp::Max => f64::NEG_INFINITY,
    }
}

/// The CPU side of a translated program: one closure per kernel and per point statement.
///
/// Made only by the unsafe [`CpuKernels::new`], so that no run reaches a closure (or a
/// [`Program`](crate::program::Program) it trusts) that safe code made up; every run takes its
/// [`Invocation`](crate::invocation::Invocation), which holds one.
pub struct CpuKernels<'a> {
    pub(crate) kernels: Vec<Box<CpuKernelFn<'a>>>,
    pub(crate) points: Vec<Box<CpuPointFn<'a>>>,
}

impl<'a> CpuKernels<'a> {
    /// The closures of a program's kernels (`kernels[k]` computes the program's kernel `k`) and
    /// point statements (`points[i]` applies its point statement `i`).
    ///
    /// # Safety
    ///
    /// An invocation holding these closures is run (by [`crate::run::run`], an
    /// [`Executor`](crate::exec::Executor) or [`crate::exec::cpu::execute`]) only with a
    /// [`Program`](crate::program::Program) that describes them truthfully, which
    /// `#[pacc::pipeline]`'s generated `program()` does for the closures generated beside it:
    /// - `kernels[k]`, called for plane `p`, writes only plane `p` of the arrays in the
    ///   program's `kernels[k].writes`, inside that kernel's `ranges`, and reads only the
    ///   elements its `reads` declare (offsets from the points it writes); it writes no slot of
    ///   the reduction slice beyond the kernel's `reductions`;
    /// - `points[i]` writes only the element of the program's point statement `i` (at the
    ///   index the invocation gives it) and reads only what that statement declares;
    /// - the program's CUDA code (`cuda_source`, fused forms included) computes with the same
    ///   accesses, inside the halo the program declares, and its fusion description (the
    ///   twins that share an array's memory) is the translator's or [`crate::fuse::program`]'s.
    ///
    /// The executors rely on this to let threads share a [`Grid`] and write through `&self`,
    /// and to size and place device buffers: a closure that writes another plane, or a program
    /// that understates what its code touches, is a data race or an out-of-bounds access.
    /// Everything else (shapes, counts, element types, overlap, points out of range) the run
    /// checks and refuses with an error.
    pub unsafe fn new(
        kernels: Vec<Box<CpuKernelFn<'a>>>,
        points: Vec<Box<CpuPointFn<'a>>>,
    ) -> CpuKernels<'a> {
        CpuKernels { kernels, points }
    }

    /// The kernels' closures, in the program's order.
    pub fn kernels(&self) -> &[Box<CpuKernelFn<'a>>] {
        &self.kernels
    }

    /// The point statements' closures, in the program's order.
    pub fn points(&self) -> &[Box<CpuPointFn<'a>>] {
        &self.points
    }

    /// The closures, to wrap or reorder (putting them back takes [`CpuKernels::new`] again).
    #[allow(clippy::type_complexity)]
    pub fn into_parts(self) -> (Vec<Box<CpuKernelFn<'a>>>, Vec<Box<CpuPointFn<'a>>>) {
        (self.kernels, self.points)
    }
}
