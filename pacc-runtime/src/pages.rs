//! Host arrays whose memory page-locks quickly, for CUDA runs that start from the user's arrays.
//!
//! A CUDA run page-locks the caller's arrays (`cuMemHostRegister`) before it copies from them.
//! Registration walks the arrays page by page: memory never written faults each 4 KiB page in
//! on the way (about 3 GB/s on the H100 machine's VM), written memory registers at 15-26 GB/s,
//! both slower than the link. [`zeros`] allocates an ordinary [`ndarray::Array`], but hints the
//! kernel to back it with 2 MiB pages (`MADV_HUGEPAGE`, where transparent huge pages are
//! allowed) and maps every page before returning, zeroing them on all cores. The first touch is
//! paid once, in parallel, at allocation (2.4-3.8x faster than on 4 KiB pages), and a run then
//! registers the arrays at 38-40 GB/s (`benches/pinning.rs`, 2026-11-27). The arrays are plain
//! `Array`s: they drop, clone and pass to any function as usual.
//!
//! ```
//! use ndarray::Array3;
//! use pacc_runtime::pages;
//! let a: Array3<f32> = pages::zeros((8, 16, 16))?;
//! assert_eq!(a, Array3::<f32>::zeros((8, 16, 16)));
//! // Plane by plane along the first axis, on all cores:
//! let b: Array3<f32> = pages::from_planes((8, 16, 16), |z, plane| plane.fill(z as f32))?;
//! assert_eq!(b[[5, 3, 7]], 5.0);
//! # Ok::<(), pacc_runtime::Error>(())
//! ```

use crate::error::Error;
use crate::frame::GridElem;
use ndarray::{Array, Dimension, IntoDimension};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bytes of a huge page (x86-64 and aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// A zero-filled array backed by huge pages where the system allows them, every page mapped.
/// Errors name the size when the shape overflows or the host has no room for it (where
/// `Array::zeros` would panic or abort).
pub fn zeros<T: GridElem, Sh: IntoDimension>(shape: Sh) -> Result<Array<T, Sh::Dim>, Error> {
    from_planes(shape, |_, _| {})
}

/// [`zeros`], every element `value`.
pub fn full<T: GridElem, Sh: IntoDimension>(
    shape: Sh,
    value: T,
) -> Result<Array<T, Sh::Dim>, Error> {
    from_planes(shape, |_, plane| plane.fill(value))
}

/// [`zeros`], then `fill(i, plane)` on each plane `i` along axis 0 (its elements in standard
/// order, zero on entry), on all cores, while the pages are first mapped.
pub fn from_planes<T: GridElem, Sh: IntoDimension>(
    shape: Sh,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Array<T, Sh::Dim>, Error> {
    let dim = shape.into_dimension();
    let no_room = |bytes: Option<usize>| Error::HostMemory {
        bytes: bytes.map(|b| b as u64),
        what: format!("an array of shape {:?}", dim.slice()),
    };
    let n = dim.size_checked().ok_or_else(|| no_room(None))?;
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    let mut v: Vec<T> = Vec::new();
    (bytes.is_some() && v.try_reserve_exact(n).is_ok())
        .then_some(())
        .ok_or_else(|| no_room(bytes))?;
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    let plane = match dim.slice().first() {
        Some(&d) if d > 0 => n / d,
        _ => n,
    };
    (v.spare_capacity_mut()[..n].par_chunks_mut(plane.max(1)))
        .enumerate()
        .for_each(|(i, part)| fill(i, zero_fill(part)));
    // SAFETY: `zero_fill` initialised the first `n` elements.
    unsafe { v.set_len(n) };
    Ok(Array::from_shape_vec(dim, v).expect("the vector holds exactly the shape's elements"))
}

/// Zeroes `part` and returns it initialised.
fn zero_fill<T: GridElem>(part: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: writes whole elements inside the slice; all-zero bits are 0.0 for the element
    // types pacc takes (f32, f64), so every element is initialised afterwards.
    unsafe {
        std::ptr::write_bytes(part.as_mut_ptr(), 0, part.len());
        &mut *(part as *mut [MaybeUninit<T>] as *mut [T])
    }
}

/// Asks for huge pages on the whole 2 MiB pages inside `[ptr, ptr + bytes)`, which nothing has
/// touched yet. Only a hint: where transparent huge pages are off, or not on Linux, nothing
/// changes and the array is still correct.
fn advise_huge(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let lo = (ptr as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
        let hi = (ptr as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
        if hi > lo {
            // SAFETY: advice on whole pages of an allocation this function owns; MADV_HUGEPAGE
            // changes no data.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// Anonymous memory of pacc's own for buffers it page-locks: asked for in huge pages and
/// zeroed on all cores before it is handed out, so that registering it walks mapped huge pages
/// (tens of GB/s) instead of faulting 4 KiB pages in one at a time under the driver (the
/// driver's own `cuMemHostAlloc` ran at 0.7-1.2 GB/s on an H200's host, 2026-11-28). Unmapped
/// when dropped.
#[cfg(all(target_os = "linux", feature = "cuda"))]
pub(crate) struct Mapping {
    base: *mut u8,
    len: usize,
    /// The first byte, on a huge page boundary.
    pub ptr: *mut u8,
}

#[cfg(all(target_os = "linux", feature = "cuda"))]
impl Mapping {
    /// At least `bytes` bytes, or `None` where the system maps none.
    pub fn new(bytes: usize) -> Option<Mapping> {
        let len = bytes
            .checked_next_multiple_of(HUGE_PAGE)?
            .checked_add(HUGE_PAGE)?;
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base as *mut u8;
        let ptr = (base as usize).next_multiple_of(HUGE_PAGE) as *mut u8;
        let whole = len - (ptr as usize - base as usize);
        advise_huge(ptr, whole);
        let m = Mapping { base, len, ptr };
        // SAFETY: `ptr..ptr + whole` lies inside the mapping, which nothing else uses yet.
        let all = unsafe { std::slice::from_raw_parts_mut(ptr, whole) };
        all.par_chunks_mut(HUGE_PAGE).for_each(|c| c.fill(0));
        Some(m)
    }
}

#[cfg(all(target_os = "linux", feature = "cuda"))]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Host memory the kernel says it could give a process now without swapping
/// (`MemAvailable` in `/proc/meminfo`), in bytes; `None` where that is not known.
pub fn available() -> Option<u64> {
    mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// The pinned memory a run may allocate beside the caller's arrays: three quarters of what is
/// available, leaving the rest to the process and the system. `None` where not known.
pub fn pinned_budget() -> Option<u64> {
    available().map(|b| b / 4 * 3)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    #[cfg(all(target_os = "linux", feature = "cuda"))]
    #[test]
    fn a_mapping_is_zeroed_writable_and_starts_on_a_huge_page() {
        for bytes in [1, 4096, (5 << 20) + 3] {
            let m = super::Mapping::new(bytes).unwrap();
            assert_eq!(m.ptr as usize % super::HUGE_PAGE, 0);
            // SAFETY: the mapping holds at least `bytes` bytes.
            let s = unsafe { std::slice::from_raw_parts_mut(m.ptr, bytes) };
            assert!(s.iter().all(|&b| b == 0));
            s.fill(7);
            assert_eq!(s[bytes - 1], 7);
        }
    }

    #[test]
    fn mem_available_reads_the_kernels_figure() {
        let text = "MemTotal:       131072000 kB\nMemFree:         1000 kB\n\
                    MemAvailable:   120000000 kB\nBuffers: 1 kB\n";
        assert_eq!(super::mem_available(text), Some(120_000_000 * 1024));
        assert_eq!(super::mem_available("MemFree: 1 kB\n"), None);
        assert_eq!(super::mem_available("MemAvailable: lots kB\n"), None);
        assert_eq!(super::mem_available("MemAvailable: 5 MB\n"), None);
    }

    use super::*;
    use ndarray::{Array2, Array3};

    #[test]
    fn zeros_are_zero_in_every_shape() {
        // Below, at and above one huge page, and an empty array.
        for shape in [(1, 1, 1), (2, 512, 512), (3, 700, 513), (0, 4, 4)] {
            let a: Array3<f32> = zeros(shape).unwrap();
            assert_eq!(a.dim(), shape);
            assert!(a.is_standard_layout());
            assert!(a.iter().all(|&x| x == 0.0), "{shape:?}");
        }
        let b: Array2<f64> = zeros((1025, 1023)).unwrap();
        assert_eq!(b, Array2::<f64>::zeros((1025, 1023)));
    }

    #[test]
    fn planes_and_values_land_where_asked() {
        let a: Array3<f32> = from_planes((5, 300, 700), |i, p| p[i] = i as f32 + 1.0).unwrap();
        let want = Array3::from_shape_fn((5, 300, 700), |(i, y, x)| match (y * 700 + x) == i {
            true => i as f32 + 1.0,
            false => 0.0,
        });
        assert_eq!(a, want);
        let c: Array2<f64> = full((3, 4), -2.5).unwrap();
        assert_eq!(c, Array2::from_elem((3, 4), -2.5));
    }

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        let over = zeros::<f32, _>((usize::MAX, 2, 2)).unwrap_err();
        assert!(
            matches!(over, Error::HostMemory { bytes: None, .. }),
            "{over}"
        );
        // Fits usize but no host has it.
        let huge = zeros::<f64, _>((1 << 20, 1 << 20, 1 << 10)).unwrap_err();
        let msg = huge.to_string();
        assert!(msg.contains("9007199254740992 bytes"), "{msg}");
        assert!(msg.contains("[1048576, 1048576, 1024]"), "{msg}");
    }
}
