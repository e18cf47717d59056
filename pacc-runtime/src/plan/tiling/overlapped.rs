//! Overlapped tiling: every chunk runs what bounds inference (`plan/infer.rs`) says its owned
//! planes need after the block, so neighbouring chunks recompute their common halos. With
//! shared transfers, the planes two consecutive chunks load in common are copied on the device
//! before the earlier chunk overwrites them.

use super::super::infer::{infer, ChunkWork};
use super::super::span::{hull, hull_minus, intersect, overlaps, subtract, Span};
use super::super::transfers::Transfers;
use super::super::{slab_planes, Compression};
use super::cost::{first_upload_and_last_download, BlockSeconds, TilingCost};
use super::{owned_slabs, BlockSpec, BlockTiles, ChunkTile, Tiling};
use crate::program::Program;
use std::ops::Range;

pub struct Overlapped;

struct Inferred {
    owned: Range<usize>,
    work: ChunkWork,
}

impl Tiling for Overlapped {
    fn tile(&self, spec: &BlockSpec<'_>, chunks: usize) -> Result<BlockTiles, usize> {
        let n0 = spec.shape[0];
        let block: Vec<Inferred> = (0..chunks)
            .map(|i| {
                let own = owned_slabs(n0, chunks, i, spec.slab());
                let mut work = infer(
                    spec.program,
                    spec.shape,
                    &own,
                    spec.steps,
                    spec.binding,
                    spec.returned,
                    spec.points,
                );
                if let Some(comp) = spec.slabs {
                    align_to_slabs(&mut work, &own, comp, spec.first, n0);
                }
                Inferred { owned: own, work }
            })
            .collect();
        let mut block = block;
        if spec.transfers.shares_regions() {
            forward(&mut block);
        }
        if let Some(need) = thin_chunk(&block, spec.transfers, spec.returned) {
            return Err(need);
        }
        let narrays = spec.returned.len();
        let chunks = (0..block.len())
            .map(|i| {
                let (loads, shared) = (0..narrays)
                    .map(|p| loads(&block, i, p, spec.transfers))
                    .unzip();
                let shared: Vec<Span> = shared;
                ChunkTile {
                    owned: block[i].owned.clone(),
                    window: block[i].work.window.clone(),
                    loads,
                    shared: shared
                        .into_iter()
                        .enumerate()
                        .filter_map(|(p, r)| Some((p, r?)))
                        .collect(),
                    work: block[i].work.work.clone(),
                }
            })
            .collect();
        Ok(BlockTiles {
            chunks,
            share_results: false,
        })
    }

    fn buffer_sets(&self) -> usize {
        3
    }

    fn recomputes_halos(&self) -> bool {
        true
    }

    fn keeps_read_only_ring(&self) -> bool {
        false
    }

    fn skews_windows(&self) -> bool {
        false
    }
}

impl TilingCost for Overlapped {
    /// Redundant work beyond twice the owned planes never pays (unless the caller fixed the
    /// chunk count).
    fn worth_planning(
        &self,
        program: &Program,
        planes: usize,
        chunks: usize,
        block_steps: usize,
        fixed_chunks: bool,
    ) -> bool {
        let (back, fwd) = program.axis0_reach();
        let owned = planes.div_ceil(chunks.max(1));
        fixed_chunks || chunks <= 1 || (back + fwd) * block_steps <= 2 * owned
    }

    /// The link and the device copies share the copy engines; the kernels, the host copies and
    /// the codec run beside them. Shared planes are block-start values, copied before the
    /// previous chunk overwrites them, so the copies need not wait for kernels.
    fn pipelined_block_seconds(&self, b: &BlockSeconds) -> f64 {
        (b.link + b.device_copies)
            .max(b.kernels)
            .max(b.host_copies)
            .max(b.codec)
    }

    fn fill_seconds(&self, block: &BlockSeconds, chunks: usize) -> f64 {
        first_upload_and_last_download(block, chunks)
    }
}

/// Shared transfers pass planes from a chunk to the next only, so a plane chunk `i` needs that
/// chunk `i - 1` does not, but an earlier chunk loads, would cross the link twice (chunks
/// thinner than the reach, near the end of a nest). Chunk `i - 1` then holds it too and passes
/// it on; from the last chunk backwards, so the planes travel as far as needed. Chunks at least
/// as thick as the reach need nothing forwarded, and their plans do not change.
fn forward(block: &mut [Inferred]) {
    for i in (2..block.len()).rev() {
        for p in 0..block[i].work.load.len() {
            let earlier = block[..i - 1]
                .iter()
                .fold(None, |acc, c| hull(&acc, &c.work.load[p]));
            let missing = hull_minus(&block[i].work.load[p], &block[i - 1].work.load[p]);
            let Some(extra) = intersect(&missing, &earlier) else {
                continue;
            };
            let prev = &mut block[i - 1].work;
            prev.window = prev.window.start.min(extra.start)..prev.window.end.max(extra.end);
            prev.load[p] = hull(&prev.load[p], &Some(extra));
        }
    }
}

/// Compression: rounds the window, and the loads of compressed arrays, outward to whole slabs, so
/// that every remnant and shared region is a whole number of slabs (the window's start, the
/// buffers' base, is then a slab boundary too). In block 0 a compressed input also loads its owned
/// planes, which the chunk compresses into the host's copy for the later blocks.
fn align_to_slabs(
    work: &mut ChunkWork,
    owned: &Range<usize>,
    comp: &[Option<Compression>],
    first_block: bool,
    n0: usize,
) {
    let slab = slab_planes(comp);
    work.window = slab_cover(&work.window, n0, slab);
    for (p, c) in comp.iter().enumerate() {
        let Some(c) = c else { continue };
        if first_block && !c.written {
            work.load[p] = hull(&work.load[p], &Some(owned.clone()));
        }
        work.load[p] = work.load[p].as_ref().map(|r| slab_cover(r, n0, slab));
    }
}

/// The smallest run of whole slabs covering `r` (the last slab ends at the last plane `n0`).
fn slab_cover(r: &Range<usize>, n0: usize, slab: usize) -> Range<usize> {
    (r.start / slab * slab)..(r.end.div_ceil(slab) * slab).min(n0)
}

/// In submission order a chunk's results are written back before the chunk two places later
/// loads its inputs; if that chunk's halo reaches back into them it would read the new values.
/// Returns the thickness a chunk would need, if some chunk is too thin.
fn thin_chunk(block: &[Inferred], transfers: Transfers, returned: &[bool]) -> Option<usize> {
    for j in 0..block.len() {
        for m in j + 2..block.len() {
            for p in (0..returned.len()).filter(|&p| returned[p]) {
                let reads = loads(block, m, p, transfers).0;
                if reads.iter().any(|r| overlaps(r, &block[j].owned)) {
                    let lowest = reads.iter().map(|r| r.start).min().unwrap_or(0);
                    return Some(block[m].owned.start - lowest);
                }
            }
        }
    }
    None
}

/// Planes of physical array `p` chunk `i` gets from the host, and those it gets from the
/// previous chunk's buffer (shared transfers).
fn loads(
    block: &[Inferred],
    i: usize,
    p: usize,
    transfers: Transfers,
) -> (Vec<Range<usize>>, Span) {
    let need = &block[i].work.load[p];
    if !transfers.shares_regions() || i == 0 {
        return (need.iter().cloned().collect(), None);
    }
    let shared = intersect(need, &block[i - 1].work.load[p]);
    (subtract(need, &shared), shared)
}
