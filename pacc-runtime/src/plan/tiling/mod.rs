//! Tiling: how one block of time steps is cut into chunks along axis 0.
//!
//! A scheme is two choices: the tiling (which planes each chunk computes, holds and returns) and
//! the transfers (staged, direct or shared: how planes reach the chunk's buffers). A tiling
//! strategy turns one block into a [`BlockTiles`]: per chunk the window its buffers hold, the
//! planes each array loads from the host and receives from the previous chunk's buffer, the
//! planes it writes back, and its work list. The emitter in `build.rs` turns that into
//! operations the same way for every strategy; dependencies come from byte-range hazards, so a
//! strategy never orders anything itself.
//!
//! - [`Overlapped`] (trapezoids): every chunk computes what its owned planes need after the
//!   block, redundantly in the halos; shared planes are block-start values.
//! - [`Wavefront`] (skewed windows): every point of every step is computed once; the chunk
//!   receives the previous chunk's final staircase of levels.

mod overlapped;
mod wavefront;

pub use overlapped::Overlapped;
pub use wavefront::Wavefront;

use super::{slab_planes, Compression};
use crate::program::Program;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Which planes each chunk of a block computes (one axis of a [`super::Scheme`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tiling {
    /// Trapezoids with redundant halo work, inferred backwards from the owned planes.
    Overlapped,
    /// Skewed windows, every point once; the boundary staircase is shared on the device.
    Wavefront,
}

impl Tiling {
    /// The strategy that tiles blocks this way.
    pub fn strategy(self) -> &'static dyn TilingStrategy {
        match self {
            Tiling::Overlapped => &Overlapped,
            Tiling::Wavefront => &Wavefront,
        }
    }
}

/// How planes move between host arrays and device buffers (the other axis of a scheme).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Transfers {
    /// Through pinned staging buffers on the host.
    Staged,
    /// Straight between the user's arrays and the device, every chunk its own halos.
    Direct,
    /// Direct, and the planes consecutive chunks have in common are copied on the device.
    Shared,
}

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
pub trait TilingStrategy {
    /// Tiles one block into `chunks` chunks. `Err(need)`: some chunk is too thin for this
    /// tiling; it would need to be `need` planes thick (the planner then tries fewer chunks).
    fn tile(&self, spec: &BlockSpec<'_>, chunks: usize) -> Result<BlockTiles, usize>;
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
