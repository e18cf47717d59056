//! Large host copies in parallel, on a pool of their own: the staged-copy scheme's copies, the
//! bounce rings' copies (both run inside CUDA host functions, on the driver's thread), and the
//! tuner's measurement of how fast they go, which must time the same thing.

use rayon::prelude::*;
use std::sync::OnceLock;

/// The piece of the staged-copy scheme's copies (whole staging buffers, one per operation).
pub const STAGE_PIECE: usize = 4 << 20;
/// How the staged-copy scheme's copies write: through the caches (its staging buffers are
/// written and read in turn by the host and the DMA engine, as they always were).
pub const STAGE_STORES: Stores = Stores::Cached;
/// The piece of the bounce rings' copies (64 MiB slots: 64 pieces for the pool).
pub const BOUNCE_PIECE: usize = 1 << 20;

/// How the bounce rings' copies write: around the caches both ways. Neither the slot an
/// upload fills nor the caller's array a download fills is read by the host soon (the DMA
/// engine reads the slot from memory), so a cached write's read of each line first is wasted
/// traffic on the memory the copies and the DMA share. A one-shot call bouncing 55 GB through
/// 64 MiB slots took 1.66 s with streaming stores both ways, 1.75 s with them on downloads
/// only (H200, 2026-11-28); with 32 MiB slots the runs' spread (1.89-2.30 s) was wider than
/// the difference.
pub const BOUNCE_STORES: Stores = Stores::Streaming;

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

/// How a copy writes its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stores {
    /// Through the caches, as `memcpy` does for pieces this size: each destination line is
    /// read before it is written, and stays cached for whoever reads it next.
    Cached,
    /// Around the caches (x86-64 streaming stores; `Cached` elsewhere): a line is written
    /// without being read first, so a copy to memory nobody reads soon moves a third fewer
    /// bytes through host memory.
    Streaming,
}

/// Copies `len` bytes from `src` to `dst`, in pieces of `piece` bytes on the pool when there
/// are at least four.
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes, and the ranges do not overlap.
#[cfg(feature = "cuda")]
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize, piece: usize) {
    copy_with(src, dst, len, piece, Stores::Cached)
}

/// [`copy`], writing the destination as `stores` says.
///
/// # Safety
/// As [`copy`].
pub(crate) unsafe fn copy_with(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    piece: usize,
    stores: Stores,
) {
    let piece = piece.max(1);
    if len < 4 * piece {
        copy_piece(src, dst, len, stores);
        return;
    }
    let (s, d) = (src as usize, dst as usize);
    let run = || {
        (0..len.div_ceil(piece)).into_par_iter().for_each(|i| {
            let o = i * piece;
            let n = piece.min(len - o);
            // SAFETY: disjoint pieces of the two non-overlapping ranges.
            unsafe { copy_piece((s + o) as *const u8, (d + o) as *mut u8, n, stores) };
        })
    };
    match pool() {
        Some(p) => p.install(run),
        None => run(),
    }
}

/// One thread's part of a copy.
///
/// # Safety
/// As [`copy`].
unsafe fn copy_piece(src: *const u8, dst: *mut u8, len: usize, stores: Stores) {
    match stores {
        #[cfg(target_arch = "x86_64")]
        Stores::Streaming => stream(src, dst, len),
        _ => std::ptr::copy_nonoverlapping(src, dst, len),
    }
}

/// Copies with SSE2 streaming stores (every x86-64 has them), 64 bytes a round; the unaligned
/// head and the tail go through `memcpy`. The fence makes the stores visible before this
/// thread reports the piece done: streaming stores are not ordered by the release that
/// follows.
///
/// # Safety
/// As [`copy`].
#[cfg(target_arch = "x86_64")]
unsafe fn stream(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = ((dst as usize).wrapping_neg() & 15).min(len);
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 64 <= len {
        let s = src.add(i) as *const __m128i;
        let d = dst.add(i) as *mut __m128i;
        let (a, b, c, e) = (
            _mm_loadu_si128(s),
            _mm_loadu_si128(s.add(1)),
            _mm_loadu_si128(s.add(2)),
            _mm_loadu_si128(s.add(3)),
        );
        _mm_stream_si128(d, a);
        _mm_stream_si128(d.add(1), b);
        _mm_stream_si128(d.add(2), c);
        _mm_stream_si128(d.add(3), e);
        i += 64;
    }
    while i + 16 <= len {
        _mm_stream_si128(
            dst.add(i) as *mut __m128i,
            _mm_loadu_si128(src.add(i) as *const __m128i),
        );
        i += 16;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    _mm_sfence();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_of_stores_copy_every_byte_at_any_alignment() {
        let src: Vec<u8> = (0..(5 << 20) + 77)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        for stores in [Stores::Cached, Stores::Streaming] {
            for (s_off, d_off, len, piece) in [
                (0, 0, src.len(), 1 << 20),
                (3, 5, src.len() - 3, 1 << 20),
                (1, 0, 4097, 64),
                (7, 9, 63, 1 << 20),
                (0, 3, 0, 16),
            ] {
                let mut dst = vec![0xAAu8; src.len() + 16];
                // SAFETY: both ranges lie inside their buffers and the buffers are distinct.
                unsafe {
                    copy_with(
                        src.as_ptr().add(s_off),
                        dst.as_mut_ptr().add(d_off),
                        len,
                        piece,
                        stores,
                    )
                };
                assert_eq!(
                    &dst[d_off..d_off + len],
                    &src[s_off..s_off + len],
                    "{stores:?} {s_off} {d_off} {len}"
                );
                assert!(
                    dst[..d_off].iter().all(|&b| b == 0xAA),
                    "{stores:?}: wrote before"
                );
                assert!(
                    dst[d_off + len..].iter().all(|&b| b == 0xAA),
                    "{stores:?}: wrote past"
                );
            }
        }
    }
}
