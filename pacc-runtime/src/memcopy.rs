//! Large host copies in parallel, on a pool of their own: the staged-copy scheme's copies, the
//! bounce rings' copies (both run inside CUDA host functions, on the driver's thread), and the
//! tuner's measurement of how fast they go, which must time the same thing.

use rayon::prelude::*;
use std::sync::OnceLock;

/// The piece of the staged-copy scheme's copies (whole staging buffers, one per operation).
pub const STAGE_PIECE: usize = 4 << 20;
/// The piece of the bounce rings' copies (32 MiB slots: 32 pieces for the pool).
pub const BOUNCE_PIECE: usize = 1 << 20;

/// Threads of the pool: the host's cores, at most 32 (more adds nothing to a memory-bound
/// copy).
fn pool() -> Option<&'static rayon::ThreadPool> {
    // A pool of its own: the caller's threads may fill rayon's global pool with calls waiting
    // for the very run whose host function copies here.
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(4, |n| n.get().min(32));
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("pacc-copy-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Copies `len` bytes from `src` to `dst`, in pieces of `piece` bytes on the pool when there
/// are at least four.
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes, and the ranges do not overlap.
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize, piece: usize) {
    let piece = piece.max(1);
    if len < 4 * piece {
        std::ptr::copy_nonoverlapping(src, dst, len);
        return;
    }
    let (s, d) = (src as usize, dst as usize);
    let run = || {
        (0..len.div_ceil(piece)).into_par_iter().for_each(|i| {
            let o = i * piece;
            let n = piece.min(len - o);
            // SAFETY: disjoint pieces of the two non-overlapping ranges.
            unsafe { std::ptr::copy_nonoverlapping((s + o) as *const u8, (d + o) as *mut u8, n) };
        })
    };
    match pool() {
        Some(p) => p.install(run),
        None => run(),
    }
}
