//! Tiling: how one block of time steps is cut into chunks along axis 0.
//!
//! A scheme is two choices: the tiling (which planes each chunk computes, holds and returns) and
//! the transfers (`plan/transfers.rs`: how planes reach the chunk's buffers). A [`Tiling`] turns
//! one block into a [`BlockTiles`]: per chunk the window its buffers hold, the
//! planes each array loads from the host and receives from the previous chunk's buffer, the
//! planes it writes back, and its work list. The emitter in `build.rs` turns that into
//! operations the same way for every tiling; dependencies come from byte-range hazards, so a
//! tiling never orders anything itself. What else differs between tilings is a method of the
//! trait: its default buffer sets, the properties the planner and `pacc plan` ask, and its cost
//! in the tuner's model ([`TilingCost`]). A new tiling is a file here implementing [`Tiling`] and
//! its row in `plan/scheme.rs`.
//!
//! - [`Overlapped`] (trapezoids): every chunk computes what its owned planes need after the
//!   block, redundantly in the halos; shared planes are block-start values.
//! - [`Wavefront`] (skewed windows): every point of every step is computed once; the chunk
//!   receives the previous chunk's final staircase of levels.

mod cost;
mod overlapped;
mod wavefront;

pub use cost::{first_upload_and_last_download, BlockSeconds, TilingCost};
pub use overlapped::Overlapped;
pub use wavefront::Wavefront;

use super::transfers::Transfers;
use super::{slab_planes, Compression};
use crate::program::Program;
use std::ops::Range;

/// One kernel or point statement a chunk runs, in forward order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Work {
    Kernel {
        /// Step within the block.
        step: usize,
        kernel: usize,
        planes: Range<usize>,
        /// Planes whose points this chunk contributes to the kernel's reductions.
        owned: Range<usize>,
        args: Vec<usize>,
    },
    Point {
        step: usize,
        point: usize,
        plane: usize,
        args: Vec<usize>,
    },
}

/// What the emitter needs for one chunk of one block.
#[derive(Clone, Debug)]
pub struct ChunkTile {
    /// Planes written back to the host (every returned array's final values).
    pub owned: Range<usize>,
    /// Planes the chunk's buffers hold; the buffers' base is `window.start`.
    pub window: Range<usize>,
    /// Per physical array, the planes loaded from the host.
    pub loads: Vec<Vec<Range<usize>>>,
    /// `(physical array, planes)` received from the previous chunk's buffer, in the order they
    /// are copied (one stream runs them in turn, so a piece that is ready early goes first).
    pub shared: Vec<(usize, Range<usize>)>,
    pub work: Vec<Work>,
}

/// One block, tiled.
#[derive(Clone, Debug)]
pub struct BlockTiles {
    pub chunks: Vec<ChunkTile>,
    /// Whether the shared planes are the previous chunk's results (copied after its work) rather
    /// than block-start values (copied before it overwrites them).
    pub share_results: bool,
}

/// What tiling one block depends on.
pub struct BlockSpec<'a> {
    pub program: &'a Program,
    pub shape: &'a [usize],
    /// Steps in this block.
    pub steps: usize,
    /// Name -> physical array at the block's first step.
    pub binding: &'a [usize],
    /// Per array, whether the caller gets it back (closed under swaps, so it holds for the
    /// physical arrays too).
    pub returned: &'a [bool],
    /// The plane each point statement writes.
    pub points: &'a [usize],
    pub first: bool,
    /// Compression settings when chunk boundaries are whole slabs (a compressing plan with more
    /// than one block), else `None`.
    pub slabs: Option<&'a [Option<Compression>]>,
    pub transfers: Transfers,
}

impl BlockSpec<'_> {
    /// Planes chunk boundaries and windows are multiples of (1 when nothing needs aligning).
    pub fn slab(&self) -> usize {
        self.slabs.map_or(1, slab_planes)
    }
}

/// A way to tile blocks; see the module documentation.
pub trait Tiling: TilingCost + Sync {
    /// Tiles one block into `chunks` chunks. `Err(need)`: some chunk is too thin for this
    /// tiling; it would need to be `need` planes thick (the planner then tries fewer chunks).
    fn tile(&self, spec: &BlockSpec<'_>, chunks: usize) -> Result<BlockTiles, usize>;

    /// Buffer sets the chunks cycle through unless the call says otherwise.
    fn buffer_sets(&self) -> usize;

    /// The fewest buffer sets a plan of `blocks` blocks may cycle through when the default ones
    /// do not fit in device memory (the tuner tries fewer, down to this): by default none fewer.
    fn fewest_buffer_sets(&self, blocks: usize) -> usize {
        let _ = blocks;
        self.buffer_sets()
    }

    /// Whether neighbouring chunks recompute each other's halos, so that chunks thinner than
    /// their halo mostly add work (`Plan::warnings` then says so).
    fn recomputes_halos(&self) -> bool;

    /// Whether consecutive chunks' windows slide over each other, so that arrays no kernel
    /// writes can stay in one device buffer each (a [`super::Ring`]) instead of being copied
    /// from chunk to chunk.
    fn keeps_read_only_ring(&self) -> bool;

    /// Whether the chunks' windows are skewed (a staircase of time levels), so that `pacc plan`
    /// lists each chunk's window and what moves into it.
    fn skews_windows(&self) -> bool;
}

/// Owned planes of chunk `i` of `d`: as even as possible, the larger chunks last.
pub fn owned(n0: usize, d: usize, i: usize) -> Range<usize> {
    (i * n0 / d)..((i + 1) * n0 / d)
}

/// Owned planes of chunk `i` of `d` in whole slabs of `slab` planes, as even as possible (the
/// last slab may end at the last plane; `slab = 1` is [`owned`]).
pub fn owned_slabs(n0: usize, d: usize, i: usize, slab: usize) -> Range<usize> {
    let s = owned(n0.div_ceil(slab), d, i);
    (s.start * slab).min(n0)..(s.end * slab).min(n0)
}
