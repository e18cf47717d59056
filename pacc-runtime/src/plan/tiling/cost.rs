//! What the tuner's cost model (`tune/model.rs`) asks a tiling: which configurations are worth
//! planning, how the busy times of one block's resources combine when chunks overlap, and the
//! pipeline fill. The model itself counts a plan's bytes and points and turns them into
//! [`BlockSeconds`]; everything that depends on how a tiling cuts the block is here, in its
//! implementations, so the model is the same for every tiling.

use crate::program::Program;

/// Seconds each resource is busy during one block of a plan, as the tuner's model predicts them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlockSeconds {
    /// Host <-> device transfers.
    pub link: f64,
    /// Kernels and point statements, launches included.
    pub kernels: f64,
    /// Device-to-device copies (shared planes, the ring's moves).
    pub device_copies: f64,
    /// Host staging copies.
    pub host_copies: f64,
    /// The codec's kernels (compressed runs), on streams of their own beside the stencil's.
    pub codec: f64,
}

/// The tiling's part of the tuner's cost model; see the module documentation.
pub trait TilingCost {
    /// Whether `chunks` chunks of `block_steps` block steps over `planes` planes are worth
    /// planning at all. `fixed_chunks`: the caller fixed the chunk count, so it is planned
    /// whatever it costs.
    fn worth_planning(
        &self,
        program: &Program,
        planes: usize,
        chunks: usize,
        block_steps: usize,
        fixed_chunks: bool,
    ) -> bool;

    /// Seconds of one block of several chunks, whose resources run concurrently on their own
    /// streams.
    fn pipelined_block_seconds(&self, block: &BlockSeconds) -> f64;

    /// Seconds added once per run of `chunks` (more than one) chunks to fill and drain the
    /// pipeline, given one full block.
    fn fill_seconds(&self, block: &BlockSeconds, chunks: usize) -> f64;
}

/// The pipeline fill when only the first chunk's upload (before any kernel) and the last chunk's
/// download (after the last kernel) stand alone: `(in + kernels + out) / chunks` of one block.
pub fn first_upload_and_last_download(block: &BlockSeconds, chunks: usize) -> f64 {
    (block.link + block.kernels + block.host_copies) / chunks as f64
}
