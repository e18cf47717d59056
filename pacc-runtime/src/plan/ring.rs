//! The read-only ring ([`super::Ring`]): which arrays live in it, how long it is, and where each
//! chunk's planes of them sit.
//!
//! The wavefront copies every held array's planes below the previous chunk's top from chunk to
//! chunk (the staircase). For an array no kernel writes those planes never change, so copying
//! them moves the same bytes across HBM once per chunk: for Himeno's twelve coefficient arrays
//! that was most of the block's device-to-device traffic. In the ring each such array has one
//! buffer; consecutive chunks' windows overlap, so a chunk finds the planes it shares with the
//! previous one in place and loads only the planes above. The chunks of a block form groups that
//! share one placement (`base`, the plane at slot 0); a group's first chunk moves its planes
//! back to slot 0 with one copy per array. Groups are as few as fit, and as even as those copies
//! allow, so that slots are rewritten only long after the chunks that read them.

use super::span::subtract;
use super::tiling::BlockTiles;
use super::Compression;
use std::ops::Range;

/// Where one chunk's planes of the ring's arrays are, and how they get there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RingChunk {
    /// The global plane at slot 0 of the ring while the chunk runs.
    pub base: usize,
    /// `(array, planes, from_base)`: planes an earlier chunk left in the ring at another base,
    /// copied to this chunk's base.
    pub copies: Vec<(usize, Range<usize>, usize)>,
    /// `(array, planes)` loaded from the host.
    pub loads: Vec<(usize, Range<usize>)>,
}

/// Per physical array, whether it belongs in the ring: some chunk loads it (it is read),
/// no kernel writes it under any binding (`written`), and it is not compressed (compressed
/// inputs are encoded from the chunks' buffers).
pub(super) fn arrays(
    blocks: &[BlockTiles],
    written: &[bool],
    compression: &[Option<Compression>],
) -> Vec<bool> {
    (0..written.len())
        .map(|p| {
            let loaded = blocks
                .iter()
                .flat_map(|b| &b.chunks)
                .any(|c| c.loads.get(p).is_some_and(|l| !l.is_empty()));
            let compressed = compression.get(p).is_some_and(Option::is_some);
            loaded && !written[p] && !compressed
        })
        .collect()
}

/// Planes of the ring's buffers: the memory the buffer sets would give those arrays
/// (`sets x buffer_planes`), at most the whole axis. `None` when that is under two windows and
/// not the whole axis: a group's first chunk could then not copy its planes down without
/// overwriting the ones it copies.
pub(super) fn len(n0: usize, sets: usize, buffer_planes: usize) -> Option<usize> {
    let len = sets.saturating_mul(buffer_planes).min(n0);
    (len == n0 || len >= 2 * buffer_planes).then_some(len)
}

/// The first chunk of each group of chunks that share one placement in a ring of `len` planes,
/// or `None` if no grouping works. A group fits when its windows span at most `len` planes; the
/// copy into a new group takes planes between its first window's start and the previous chunk's
/// top, and must not land on the slots it reads from, so the base must have moved at least that
/// far since the previous group's. Greedy packing gives the fewest groups (and, with `len` at
/// least two windows, always satisfies the copies); spreading the chunks evenly over as many
/// groups keeps the last group of a block long, whose slots the next block's first chunk
/// overwrites.
fn groups(windows: &[Range<usize>], len: usize) -> Option<Vec<usize>> {
    let n = windows.len();
    let fits = |a: usize, b: usize| windows[b].end.saturating_sub(windows[a].start) <= len;
    let copy_ok = |prev: usize, a: usize| {
        windows[a].start - windows[prev].start
            >= windows[a - 1].end.saturating_sub(windows[a].start)
    };
    let valid = |starts: &[usize]| {
        starts.iter().enumerate().all(|(j, &a)| {
            let last = starts.get(j + 1).map_or(n, |&next| next) - 1;
            fits(a, last) && (j == 0 || copy_ok(starts[j - 1], a))
        })
    };
    if n == 0 {
        return Some(Vec::new());
    }
    let mut greedy = vec![0];
    for i in 1..n {
        if !fits(greedy[greedy.len() - 1], i) {
            greedy.push(i);
        }
    }
    let g = greedy.len();
    let even: Vec<usize> = (0..g).map(|j| j * n / g).collect();
    [even, greedy].into_iter().find(|s| valid(s))
}

/// Per block and chunk, where the ring's arrays (`arrays`) sit in a ring of `len` planes and
/// what each chunk copies and loads there; `None` if the windows cannot be placed (see
/// [`groups`]). A chunk needs, of each ring array, the planes the tiling would have it receive
/// and load. Planes stay valid while the base does, across blocks too: when the ring holds the
/// whole axis, later blocks load nothing.
pub(super) fn place(
    blocks: &[BlockTiles],
    arrays: &[bool],
    len: usize,
) -> Option<Vec<Vec<RingChunk>>> {
    let mut base: Option<usize> = None;
    let mut valid: Vec<Option<Range<usize>>> = vec![None; arrays.len()];
    let mut out = Vec::with_capacity(blocks.len());
    for tiles in blocks {
        let windows: Vec<Range<usize>> = tiles.chunks.iter().map(|c| c.window.clone()).collect();
        let starts = groups(&windows, len)?;
        let mut placed = Vec::with_capacity(tiles.chunks.len());
        for (i, c) in tiles.chunks.iter().enumerate() {
            let need: Vec<Option<Range<usize>>> = (0..arrays.len())
                .map(|p| {
                    let shared = c.shared.iter().filter(|s| s.0 == p).map(|s| &s.1);
                    let pieces = c.loads[p].iter().chain(shared);
                    pieces.fold(None, |acc: Option<Range<usize>>, r| match acc {
                        None => Some(r.clone()),
                        Some(a) => Some(a.start.min(r.start)..a.end.max(r.end)),
                    })
                })
                .map(|r| r.filter(|r| !r.is_empty()))
                .collect();
            let mut rc = RingChunk::default();
            let new = c.window.start;
            if starts.contains(&i) && base != Some(new) {
                for p in (0..arrays.len()).filter(|&p| arrays[p]) {
                    // A block's first chunk starts from the host: its planes were left by the
                    // previous block's first chunks, long overwritten.
                    let keep = match (&valid[p], &need[p], base) {
                        (Some(v), Some(n), Some(old)) if i > 0 => {
                            let k = v.start.max(n.start)..v.end.min(n.end);
                            // Source slots k - old, destination k - new: disjoint?
                            (!k.is_empty() && new.abs_diff(old) >= k.len()).then_some((k, old))
                        }
                        _ => None,
                    };
                    valid[p] = keep.as_ref().map(|(k, _)| k.clone());
                    rc.copies.extend(keep.map(|(k, old)| (p, k, old)));
                }
                base = Some(new);
            }
            let b = *base.get_or_insert(new);
            rc.base = b;
            for p in (0..arrays.len()).filter(|&p| arrays[p]) {
                let Some(n) = need[p].clone() else { continue };
                if n.start < b || n.end > b + len {
                    return None;
                }
                for piece in subtract(&Some(n.clone()), &valid[p]) {
                    rc.loads.push((p, piece));
                }
                valid[p] = Some(match valid[p].take() {
                    Some(v) if v.start <= n.end && n.start <= v.end => {
                        v.start.min(n.start)..v.end.max(n.end)
                    }
                    _ => n,
                });
            }
            placed.push(rc);
        }
        out.push(placed);
    }
    Some(out)
}

/// Takes the ring's arrays out of the tiles: they are neither loaded into nor shared between
/// the chunks' sets.
pub(super) fn strip(blocks: &mut [BlockTiles], arrays: &[bool]) {
    for c in blocks.iter_mut().flat_map(|b| b.chunks.iter_mut()) {
        for (p, loads) in c.loads.iter_mut().enumerate() {
            if arrays[p] {
                loads.clear();
            }
        }
        c.shared.retain(|(p, _)| !arrays[*p]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tiling::ChunkTile;
    use super::*;

    fn tile(window: Range<usize>, load: Range<usize>, shared: Option<Range<usize>>) -> ChunkTile {
        ChunkTile {
            owned: window.clone(),
            window,
            loads: vec![vec![load]],
            shared: shared.into_iter().map(|s| (0, s)).collect(),
            work: Vec::new(),
        }
    }

    /// The acoustic wavefront's shape: chunks of 10 planes, windows reaching 12 below and 2
    /// above their owned planes.
    fn block(d: usize) -> BlockTiles {
        let z = |i: usize| 10 * i;
        let top = |i: usize| if i + 1 == d { z(d) } else { z(i + 1) + 2 };
        BlockTiles {
            chunks: (0..d)
                .map(|i| {
                    let start = z(i).saturating_sub(12);
                    let load = if i == 0 { 0 } else { top(i - 1) }..top(i);
                    let shared = (i > 0).then(|| start..top(i - 1));
                    tile(start..top(i), load, shared)
                })
                .collect(),
            share_results: true,
        }
    }

    #[test]
    fn groups_are_as_few_as_fit_and_even() {
        let w: Vec<Range<usize>> = block(8).chunks.iter().map(|c| c.window.clone()).collect();
        // Windows 0..12, 0..22, 8..32, 18..42, .., 58..80. 60 planes: greedy packs 0..=4 and
        // 5..=7; spread evenly, 0..=3 (0..42) and 4..=7 (28..80).
        assert_eq!(groups(&w, 60), Some(vec![0, 4]));
        // 48 planes: greedy 0..=3, 4..=6, 7. Evenly (0, 2, 5) the copy into chunk 2 (planes
        // 8..22) would land on the slots it reads, since chunks 0..=2 start within 8 planes.
        assert_eq!(groups(&w, 48), Some(vec![0, 4, 7]));
        assert_eq!(groups(&w, 80), Some(vec![0]));
        assert_eq!(groups(&[], 10), Some(vec![]));
    }

    #[test]
    fn each_plane_is_loaded_once_per_block_and_moved_once_per_group() {
        let blocks = vec![block(8), block(8)];
        let placed = place(&blocks, &[true], 60).unwrap();
        for b in &placed {
            let mut loaded: Vec<Range<usize>> = b
                .iter()
                .flat_map(|c| &c.loads)
                .map(|l| l.1.clone())
                .collect();
            loaded.sort_by_key(|r| r.start);
            let mut at = 0;
            for r in &loaded {
                assert_eq!(r.start, at, "{loaded:?}");
                at = r.end;
            }
            assert_eq!(at, 80);
            // Group 2 starts at chunk 4 (window 28..52): it copies 28..42 down from base 0.
            assert_eq!(b[4].base, 28);
            assert_eq!(b[4].copies, vec![(0, 28..42, 0)]);
            assert!(b
                .iter()
                .enumerate()
                .all(|(i, c)| i == 4 || c.copies.is_empty()));
            for (i, c) in b.iter().enumerate() {
                let w = &blocks[0].chunks[i].window;
                assert!(c.base <= w.start && w.end <= c.base + 60, "chunk {i}");
            }
        }
    }

    #[test]
    fn a_ring_holding_the_axis_loads_nothing_after_the_first_block() {
        let blocks = vec![block(4), block(4), block(4)];
        let placed = place(&blocks, &[true], len(40, 4, 24).unwrap()).unwrap();
        assert!(placed[0].iter().all(|c| c.base == 0 && c.copies.is_empty()));
        assert_eq!(placed[0].iter().map(|c| c.loads.len()).sum::<usize>(), 4);
        for b in &placed[1..] {
            assert!(b.iter().all(|c| c.loads.is_empty() && c.copies.is_empty()));
        }
    }

    #[test]
    fn the_ring_needs_room_for_two_windows_or_the_whole_axis() {
        assert_eq!(len(1000, 4, 100), Some(400));
        assert_eq!(len(300, 4, 100), Some(300));
        assert_eq!(len(1000, 1, 100), None);
        assert_eq!(len(100, 1, 100), Some(100));
        assert_eq!(len(1000, 2, 100), Some(200));
    }

    #[test]
    fn only_read_unwritten_uncompressed_arrays_go_to_the_ring() {
        let mut b = block(2);
        for c in &mut b.chunks {
            c.loads = vec![
                c.loads[0].clone(),
                c.loads[0].clone(),
                c.loads[0].clone(),
                vec![],
            ];
        }
        let z = Compression {
            codec: Default::default(),
            rate: crate::codec::Rate::new(8.0).unwrap(),
            slab_planes: 4,
            slab_bytes: 64,
            written: false,
        };
        let got = arrays(
            &[b],
            &[true, false, false, false],
            &[None, None, Some(z), None],
        );
        assert_eq!(got, vec![false, true, false, false]);
    }
}
