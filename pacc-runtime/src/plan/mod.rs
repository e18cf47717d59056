//! Program + shape + options -> a [`Plan`]: the operations of an out-of-core run as plain data.
//!
//! A plan is a list of operations in *submission order*, which is also a valid sequential
//! execution order with the serial function's semantics. Each operation names the stream it runs
//! on and the earlier operations it waits for (`deps`); an operation also waits, implicitly, for
//! the previous operation on its stream (CUDA stream order). Every executor must respect both and
//! may run anything else in any order: [`race::check`] proves that any such order gives the same
//! result, by showing that every two operations touching overlapping bytes (one of them writing)
//! are ordered.
//!
//! Planes are global indices along axis 0 of the arrays. A device buffer set holds, for one
//! chunk, every array's planes `window.start .. window.start + buffer_planes`; an operation that
//! touches a buffer carries the global plane at the buffer's first slot (`base`).
//!
//! **Compression** ([`PlanOptions::compress`]): between blocks the host keeps compressed arrays
//! in compressed form, as whole *slabs* (the codec's [`slab_planes`](crate::codec::Codec::slab_planes),
//! 4 for zfp; the last slab may end at the last plane). Chunk boundaries and windows are then
//! multiples of the slab (the common one, [`slab_planes`], when arrays differ), so every
//! remnant and every shared region is a whole number of slabs, each an independent byte range of
//! the array's stream (Shen's separate compression). Block 0 loads raw user arrays; later blocks
//! load compressed bytes (`HtoD` from [`HostSide::Compressed`]) and [`OpKind::Decode`] them; every
//! block but the last writes back through [`OpKind::Encode`] and a compressed `DtoH`; the last
//! writes raw planes to the user's arrays. Compressed inputs get their compressed copy in block 0.

pub mod access;
mod build;
mod display;
pub mod exchange;
mod infer;
mod live;
pub mod race;
mod ring;
mod scheme;
mod span;
pub mod tiling;
mod transfers;

pub use build::build;
pub(crate) use build::nests_in_bounds;
pub use display::{
    block_runs, blocks_label, points_per_plane, Totals, SPELLED_OUT_BLOCKS, WASTEFUL_REDUNDANCY,
};
pub use scheme::Scheme;
pub use tiling::owned;
pub use tiling::{BlockSeconds, Tiling, TilingCost};
pub use transfers::Transfers;

use crate::codec::{CodecError, CodecKind, Rate};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What the planner is asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// Number of chunks the outermost axis is split into (requested; may be adjusted).
    pub chunks: usize,
    /// Time steps per block (temporal blocking depth).
    pub block_steps: usize,
    pub scheme: Scheme,
    /// Device buffer sets in flight (3 in Shen's Algorithm 2).
    pub buffer_sets: usize,
    /// Per physical array: the compression rate in bits per value, or `None`. Empty (or all
    /// `None`): no compression.
    #[serde(default)]
    pub compress: Vec<Option<f64>>,
    /// The codec of the compressed arrays (`crate::config::codec`).
    #[serde(default)]
    pub codec: CodecKind,
    /// Whether the wavefront keeps arrays that nothing writes in a [`Ring`] instead of copying
    /// them from chunk to chunk with the staircase (`Options::read_only_ring`, `PACC_RING`).
    #[serde(default = "yes")]
    pub read_only_ring: bool,
}

fn yes() -> bool {
    true
}

/// The wavefront's device buffers for arrays no kernel writes (`plan/ring.rs`): one buffer per
/// such array, `planes` planes long, that every chunk reads instead of a buffer of its own set.
///
/// Ops address it as buffer set [`Ring::set`] (one past the chunks' sets), with a `base` like
/// any set: the global plane at slot 0. Consecutive chunks' windows overlap, so a chunk finds
/// most of its planes already there and loads only the ones above; when a window would run past
/// the end, the chunk's planes start again at slot 0 (a new `base`) and the planes it shares
/// with the previous chunk are copied down once. Kernels keep one `base` per launch: the
/// executor passes a ring array's pointer offset by `(base - ring_base)` planes, so the
/// kernel's `(z - base) * plane` lands in the ring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ring {
    /// The set number of the ring in ops (= [`Plan::buffer_sets`]).
    pub set: usize,
    /// Planes of each ring buffer.
    pub planes: usize,
    /// Per physical array, whether it lives in the ring (and has no buffer in the sets).
    pub arrays: Vec<bool>,
}

/// How one physical array is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compression {
    #[serde(default)]
    pub codec: CodecKind,
    pub rate: Rate,
    /// Axis-0 planes per slab ([`Codec::slab_planes`](crate::codec::Codec::slab_planes)).
    pub slab_planes: usize,
    /// Bytes of one slab of the array's stream ([`Codec::slab_bytes`](crate::codec::Codec::slab_bytes)).
    pub slab_bytes: usize,
    /// Whether the run writes the array (else it is an input, compressed once in block 0).
    pub written: bool,
}

impl Compression {
    /// `codec` at `rate` for arrays whose planes have shape `plane`, with the slab the codec
    /// gives them.
    pub fn new(
        codec: CodecKind,
        rate: Rate,
        plane: &[usize],
        written: bool,
    ) -> Result<Compression, CodecError> {
        Ok(Compression {
            codec,
            rate,
            slab_planes: codec.get().slab_planes(),
            slab_bytes: codec.get().slab_bytes(plane, rate)?,
            written,
        })
    }

    /// The slabs covering `planes` (whose start is a slab boundary).
    pub fn slabs(&self, planes: &Range<usize>) -> Range<usize> {
        planes.start / self.slab_planes..planes.end.div_ceil(self.slab_planes)
    }

    /// Compressed bytes of `planes` (whole slabs).
    pub fn bytes(&self, planes: &Range<usize>) -> usize {
        self.slabs(planes).len() * self.slab_bytes
    }

    /// Where plane `p` (a slab boundary) starts in a stream that starts at plane 0.
    pub fn offset(&self, p: usize) -> usize {
        p / self.slab_planes * self.slab_bytes
    }
}

/// Planes per slab common to all compressed arrays (the least common multiple of theirs; 1 when
/// nothing is compressed): chunks and windows aligned to it are whole slabs of every array.
pub fn slab_planes(compression: &[Option<Compression>]) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    compression
        .iter()
        .flatten()
        .fold(1, |l, c| l / gcd(l, c.slab_planes) * c.slab_planes)
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            chunks: 4,
            block_steps: 4,
            scheme: Scheme::DEFAULT,
            buffer_sets: Scheme::DEFAULT.buffer_sets(),
            compress: Vec::new(),
            codec: CodecKind::default(),
            read_only_ring: true,
        }
    }
}

impl PlanOptions {
    /// Whether any array is to be compressed.
    pub fn compresses(&self) -> bool {
        self.compress.iter().any(Option::is_some)
    }

    /// The steps of each segment a run of `steps` steps is planned in (`crate::run`: one plan
    /// for all full segments, executed once for each; the last may be shorter): every
    /// `checkpoint_blocks` blocks when the run checkpoints, else [`MAX_PLANNED_BLOCKS`] blocks,
    /// so that a long run's plan, and the memory and time making it takes, stay bounded. A
    /// segment ends with the arrays on the host like a block of the region-sharing scheme, so
    /// the result is the same; not so with compression (a segment writes raw results back,
    /// where a block in the middle of the run would write compressed ones), so a compressing
    /// run is one segment unless it checkpoints.
    pub fn segment_steps(&self, steps: usize, checkpoint_blocks: Option<usize>) -> usize {
        let k = self.block_steps.max(1);
        let blocks = match checkpoint_blocks {
            Some(every) => every,
            None if self.compresses() => usize::MAX,
            None => MAX_PLANNED_BLOCKS,
        };
        blocks.saturating_mul(k).min(steps).max(1)
    }
}

/// The most blocks a run plans at once, unless it compresses ([`PlanOptions::segment_steps`]):
/// planning takes about a microsecond and 200 bytes per operation, some 20 operations per block
/// of four chunks, so at most about 20 MB and 0.1 s.
pub const MAX_PLANNED_BLOCKS: usize = 4096;

/// Where a host-side transfer endpoint lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HostSide {
    /// The user's array itself (direct mapping).
    User,
    /// The pinned staging buffer of the operation's buffer set (staged copy).
    Staging,
    /// The host's compressed copy of the array (compression): the transfer moves the compressed
    /// bytes of `planes` between it and the set's compressed staging area on the device, not the
    /// buffer itself.
    Compressed,
}

/// One operation of the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpKind {
    /// Host planes of a physical array -> the device buffer of `set`.
    HtoD {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
        from: HostSide,
    },
    /// Device buffer planes -> host (the user's array, or the staging buffer).
    DtoH {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
        to: HostSide,
    },
    /// User array planes -> staging buffer of `set` (a host copy; staged-copy only).
    StageIn {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
    },
    /// Staging buffer of `set` -> user array planes (a host copy; staged-copy only).
    StageOut {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
    },
    /// Region sharing: planes both chunks need, copied from one buffer set to the next.
    DtoD {
        array: usize,
        from_set: usize,
        from_base: usize,
        to_set: usize,
        to_base: usize,
        planes: Range<usize>,
    },
    /// Decompresses `planes` (whole slabs) from the set's compressed staging area into the
    /// array's buffer (compression; on the chunk's load stream, after its compressed HtoD).
    Decode {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
    },
    /// Compresses `planes` (whole slabs) of the array's buffer into the set's compressed staging
    /// area (compression; on the chunk's write-back stream, before its compressed DtoH).
    Encode {
        array: usize,
        set: usize,
        base: usize,
        planes: Range<usize>,
    },
    /// A kernel computing `planes` (global) of its outputs at time step `step` (0-based count
    /// from the first step of the run). `args[a]` is the physical array bound to the program's
    /// array `a` at that point of the time loop. Reductions count `owned` planes only.
    /// `ring_base`: with a [`Ring`], the plane at slot 0 of the ring buffers, where the kernel
    /// reads the ring's arrays.
    Kernel {
        kernel: usize,
        set: usize,
        base: usize,
        step: usize,
        planes: Range<usize>,
        owned: Range<usize>,
        args: Vec<usize>,
        #[serde(default)]
        ring_base: Option<usize>,
    },
    /// A single-point statement applied in this chunk's buffer (its plane lies in `planes`,
    /// the range of the written array that must be exact at that point). `ring_base` as for
    /// kernels.
    Point {
        point: usize,
        set: usize,
        base: usize,
        step: usize,
        plane: usize,
        args: Vec<usize>,
        #[serde(default)]
        ring_base: Option<usize>,
    },
    /// A distributed run's halo exchange with the neighbouring ranks, in one group: for every
    /// array of `arrays` and every link, the buffer's planes `send` go to the link's peer and
    /// its planes `recv` come from it. Only plans made by [`exchange::insert`] have them; the
    /// executor carries them out through the [`Peers`](crate::exec::Peers) it is given. On
    /// the loads stream, which a resident plan leaves idle after its upload.
    Exchange {
        set: usize,
        base: usize,
        /// Time steps done before the exchange (the step whose halos it refreshes).
        step: usize,
        arrays: Vec<usize>,
        links: Vec<HaloLink>,
    },
}

/// One neighbour of a distributed run's rank, as an [`OpKind::Exchange`] sees it: the planes
/// (in the rank's own plane numbers) it sends to the rank `peer` and receives from it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HaloLink {
    pub peer: usize,
    pub send: Range<usize>,
    pub recv: Range<usize>,
}

/// What a stream of a plan carries. Every buffer set has one stream of each role, in this order
/// ([`Plan::stream`]): loads (host-to-device copies, staging copies in, decoding, and the planes
/// shared from the previous chunk), kernels (loop nests and point statements), and write-backs
/// (encoding, device-to-host copies, staging copies out). Write-backs have a stream of their
/// own: on the H100, with write-backs queued on the kernels' stream, each chunk's first kernel
/// started only when the previous chunk's write-back had finished, although no dependency asked
/// for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamRole {
    Loads,
    Kernels,
    WriteBacks,
    /// The codec's encode and decode kernels (compressing plans only): on their own stream so
    /// that a chunk's decode does not hold up the next chunk's load, nor an encode the next
    /// write-back.
    Codec,
}

impl StreamRole {
    /// The roles in the order of a buffer set's streams; a compressing plan adds one codec
    /// stream per set after every set's first three ([`Plan::stream_of`]).
    pub const ALL: [StreamRole; 4] = [
        StreamRole::Loads,
        StreamRole::Kernels,
        StreamRole::WriteBacks,
        StreamRole::Codec,
    ];

    /// Streams every buffer set has (the codec's comes after all of them).
    pub const LANES: usize = 3;

    /// How `pacc plan` names the role.
    pub fn label(self) -> &'static str {
        match self {
            StreamRole::Loads => "loads + shared planes",
            StreamRole::Kernels => "kernels",
            StreamRole::WriteBacks => "write-backs",
            StreamRole::Codec => "codec",
        }
    }
}

/// The planes of one array's buffer in one set that a transfer, staging copy or codec operation
/// works on ([`OpKind::buffer_planes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferPlanes<'a> {
    pub array: usize,
    pub set: usize,
    /// The global plane at the buffer's first slot.
    pub base: usize,
    pub planes: &'a Range<usize>,
}

impl OpKind {
    /// The buffer planes of the kinds that touch one array's buffer in one set (host-device
    /// transfers, staging copies, encode and decode); `None` for device copies (two sets),
    /// kernels and point statements.
    pub fn buffer_planes(&self) -> Option<BufferPlanes<'_>> {
        match self {
            OpKind::HtoD {
                array,
                set,
                base,
                planes,
                ..
            }
            | OpKind::DtoH {
                array,
                set,
                base,
                planes,
                ..
            }
            | OpKind::StageIn {
                array,
                set,
                base,
                planes,
            }
            | OpKind::StageOut {
                array,
                set,
                base,
                planes,
            }
            | OpKind::Encode {
                array,
                set,
                base,
                planes,
            }
            | OpKind::Decode {
                array,
                set,
                base,
                planes,
            } => Some(BufferPlanes {
                array: *array,
                set: *set,
                base: *base,
                planes,
            }),
            OpKind::DtoD { .. }
            | OpKind::Kernel { .. }
            | OpKind::Point { .. }
            | OpKind::Exchange { .. } => None,
        }
    }

    /// The array and planes a transfer moves to or from the user's own array (not staging
    /// buffers or compressed copies): what must be page-locked, and what a write-back makes
    /// final.
    pub fn user_planes(&self) -> Option<(usize, &Range<usize>)> {
        match self {
            OpKind::HtoD {
                array,
                planes,
                from: HostSide::User,
                ..
            }
            | OpKind::DtoH {
                array,
                planes,
                to: HostSide::User,
                ..
            } => Some((*array, planes)),
            _ => None,
        }
    }

    /// The array and planes an operation writes into the user's own array (a write-back to
    /// it, or a staging copy out): what must be writable, and what makes results final.
    pub fn written_user_planes(&self) -> Option<(usize, &Range<usize>)> {
        match self {
            OpKind::DtoH {
                array,
                planes,
                to: HostSide::User,
                ..
            }
            | OpKind::StageOut { array, planes, .. } => Some((*array, planes)),
            _ => None,
        }
    }

    /// The kernel a kernel launch runs and the planes it computes.
    pub fn kernel_planes(&self) -> Option<(usize, &Range<usize>)> {
        match self {
            OpKind::Kernel { kernel, planes, .. } => Some((*kernel, planes)),
            _ => None,
        }
    }

    /// Whether the operation computes (a kernel or a point statement), which advances the
    /// time steps.
    pub fn computes(&self) -> bool {
        matches!(self, OpKind::Kernel { .. } | OpKind::Point { .. })
    }

    /// The role of the stream an operation of this kind runs on.
    pub fn role(&self) -> StreamRole {
        match self {
            OpKind::HtoD { .. }
            | OpKind::StageIn { .. }
            | OpKind::DtoD { .. }
            | OpKind::Exchange { .. } => StreamRole::Loads,
            OpKind::Kernel { .. } | OpKind::Point { .. } => StreamRole::Kernels,
            OpKind::DtoH { .. } | OpKind::StageOut { .. } => StreamRole::WriteBacks,
            OpKind::Encode { .. } | OpKind::Decode { .. } => StreamRole::Codec,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    pub kind: OpKind,
    pub stream: usize,
    /// Earlier operations (indices into [`Plan::ops`]) this one waits for, besides the
    /// previous operation on its stream.
    pub deps: Vec<usize>,
    pub block: usize,
    pub chunk: usize,
}

/// Geometry of one chunk in one block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkGeom {
    /// Planes whose final values this chunk produces.
    pub owned: Range<usize>,
    /// Planes held in the chunk's buffers (owned plus halos): `base = window.start`.
    pub window: Range<usize>,
    pub set: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockGeom {
    /// First time step of the block (0-based from the start of the run).
    pub first_step: usize,
    pub steps: usize,
    pub chunks: Vec<ChunkGeom>,
}

/// The full, deterministic schedule of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub shape: Vec<usize>,
    pub steps: usize,
    pub scheme: Scheme,
    pub chunks: usize,
    pub requested_chunks: usize,
    pub block_steps: usize,
    /// Human-readable notes on anything the planner changed from what was asked.
    pub adjustments: Vec<String>,
    pub buffer_sets: usize,
    /// Planes per array buffer in every set (the widest chunk window).
    pub buffer_planes: usize,
    /// Elements in one plane (product of all axes but the outermost).
    pub plane_len: usize,
    /// Element size in bytes of each program array.
    pub elem_sizes: Vec<usize>,
    pub streams: usize,
    pub blocks: Vec<BlockGeom>,
    pub ops: Vec<Op>,
    /// Logical -> physical array binding after the last step (`final_binding[a]` is the
    /// physical array the name `a` refers to when the time loop ends).
    pub final_binding: Vec<usize>,
    /// Per physical array, how it is compressed (empty: nothing is).
    #[serde(default)]
    pub compression: Vec<Option<Compression>>,
    /// The read-only arrays' shared buffers, if the plan keeps any there.
    #[serde(default)]
    pub ring: Option<Ring>,
}

/// Why a plan cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("shape {shape:?} has {got} axes but the program `{program}` uses {want}")]
    Rank {
        program: String,
        shape: Vec<usize>,
        got: usize,
        want: usize,
    },
    #[error("the loop along axis {axis} of nest {nest} (`{kernel}`) runs {lo}..{hi}, so with its read offsets the nest would touch indices {first}..={last} along axis {axis}, but the arrays' extent along axis {axis} is {extent}; make the arrays larger or the loop range smaller (the loop bounds plus the read offsets must stay inside the array, as the serial code requires)")]
    TooSmall {
        kernel: String,
        /// The nest's position in the time step (0-based).
        nest: usize,
        axis: usize,
        extent: usize,
        /// The loop's range along `axis`, `lo..hi`.
        lo: i64,
        hi: i64,
        first: i64,
        last: i64,
    },
    /// A loop bound counted from a scalar reached the planner without the call's value
    /// (`Program::resolved` makes every bound concrete first).
    #[error(transparent)]
    Bound(#[from] crate::program::BoundError),
    #[error("the call supplied {got} point-statement positions, the program has {want}")]
    PointCount { got: usize, want: usize },
    #[error("chunks must be at least 1 (got {0})")]
    ZeroChunks(usize),
    #[error("block_steps must be at least 1 (got {0})")]
    ZeroBlockSteps(usize),
    #[error("buffer_sets must be at least 1 (got {0})")]
    ZeroBufferSets(usize),
    #[error(
        "the shape {shape:?} has no points along axis {axis}; every axis needs at least one point"
    )]
    EmptyAxis { shape: Vec<usize>, axis: usize },
    #[error("{chunks} chunks are more than the {planes} planes of the outermost axis; use at most {planes} chunks")]
    TooManyChunks { chunks: usize, planes: usize },
    #[error("{scheme} needs every chunk to be at least {need} planes thick for {block_steps} block steps, but even 1 chunk of {planes} planes does not allow that; lower block_steps or use {}", Scheme::DEFAULT)]
    TooThin {
        scheme: Scheme,
        need: usize,
        block_steps: usize,
        planes: usize,
    },
    #[error("compression needs {}, not {scheme}: its host staging buffers hold raw planes", Scheme::names_where(|s| s.transfers().can_compress()))]
    CompressScheme { scheme: Scheme },
    #[error("array `{array}` cannot be compressed at rate {rate}: {reason}")]
    CompressRate {
        array: String,
        rate: f64,
        reason: String,
    },
    #[error("compression settings for {got} arrays, the program `{program}` has {want}")]
    CompressCount {
        program: String,
        got: usize,
        want: usize,
    },
    #[error(
        "point statement `{point}` writes plane {plane} but the outermost axis has {planes} planes"
    )]
    PointOutside {
        point: String,
        plane: usize,
        planes: usize,
    },
}

/// Per array (name = physical index at the start), whether the caller gets its final contents
/// back: written by the kernels (or swapped with a written array) and not scratch.
pub fn returned_arrays(program: &crate::program::Program) -> Vec<bool> {
    infer::returned(program)
}

/// After how many steps the step's swaps bring every name back to its own array.
pub fn swap_period(program: &crate::program::Program) -> usize {
    crate::binding::period(program)
}

impl Plan {
    /// The stream of buffer set `set` that carries operations of `role` (not the codec's, see
    /// [`Plan::stream_of`]): each set has [`StreamRole::LANES`] streams, in the order of
    /// [`StreamRole::ALL`].
    pub fn stream(set: usize, role: StreamRole) -> usize {
        let lanes = StreamRole::LANES;
        set * lanes + StreamRole::ALL.iter().position(|r| *r == role).unwrap_or(0)
    }

    /// The role of stream `stream` of a plan without codec streams (the inverse of
    /// [`Plan::stream`]; [`Plan::role_of`] for any plan).
    pub fn stream_role(stream: usize) -> StreamRole {
        StreamRole::ALL[stream % StreamRole::LANES]
    }

    /// The stream of set `set` for `role` in a plan of `sets` buffer sets: the codec streams
    /// follow every set's others, so plans without compression number their streams as
    /// before.
    pub fn stream_of(sets: usize, set: usize, role: StreamRole) -> usize {
        match role {
            StreamRole::Codec => StreamRole::LANES * sets + set,
            _ => Plan::stream(set, role),
        }
    }

    /// The role and buffer set of stream `stream` of this plan.
    pub fn role_of(&self, stream: usize) -> (StreamRole, usize) {
        let base = StreamRole::LANES * self.buffer_sets;
        if stream >= base {
            (StreamRole::Codec, stream - base)
        } else {
            (Plan::stream_role(stream), stream / StreamRole::LANES)
        }
    }

    /// Bytes that cross the link host -> device (compressed bytes for compressed transfers).
    pub fn bytes_htod(&self) -> u64 {
        self.sum_link(true, false)
    }

    /// Bytes that cross the link device -> host (compressed bytes for compressed transfers).
    pub fn bytes_dtoh(&self) -> u64 {
        self.sum_link(false, false)
    }

    /// What [`Plan::bytes_htod`] would be if the compressed transfers moved raw planes.
    pub fn bytes_htod_raw(&self) -> u64 {
        self.sum_link(true, true)
    }

    /// What [`Plan::bytes_dtoh`] would be if the compressed transfers moved raw planes.
    pub fn bytes_dtoh_raw(&self) -> u64 {
        self.sum_link(false, true)
    }

    pub fn bytes_dtod(&self) -> u64 {
        self.ops
            .iter()
            .map(|op| match &op.kind {
                OpKind::DtoD { array, planes, .. } => self.raw_bytes(*array, planes),
                _ => 0,
            })
            .sum()
    }

    /// Raw bytes of `planes` of `array`.
    pub fn raw_bytes(&self, array: usize, planes: &Range<usize>) -> u64 {
        (planes.len() * self.plane_len * self.elem_sizes[array]) as u64
    }

    fn sum_link(&self, htod: bool, raw: bool) -> u64 {
        let bytes = |array: usize, planes: &Range<usize>, side: HostSide| match side {
            HostSide::Compressed if !raw => {
                self.compressed(array).map_or(0, |c| c.bytes(planes) as u64)
            }
            _ => self.raw_bytes(array, planes),
        };
        self.ops
            .iter()
            .map(|op| match &op.kind {
                OpKind::HtoD {
                    array,
                    planes,
                    from,
                    ..
                } if htod => bytes(*array, planes, *from),
                OpKind::DtoH {
                    array, planes, to, ..
                } if !htod => bytes(*array, planes, *to),
                _ => 0,
            })
            .sum()
    }

    /// How physical array `a` is compressed, if it is.
    pub fn compressed(&self, a: usize) -> Option<&Compression> {
        self.compression.get(a).and_then(Option::as_ref)
    }

    /// Whether the plan compresses anything (it has encode or decode operations).
    pub fn compresses(&self) -> bool {
        self.ops
            .iter()
            .any(|op| matches!(op.kind, OpKind::Encode { .. } | OpKind::Decode { .. }))
    }

    /// Bytes of one set's compressed staging area for array `a` (0 when not compressed).
    pub fn staging_compressed_bytes(&self, a: usize) -> u64 {
        if !self.compresses() {
            return 0;
        }
        self.compressed(a)
            .map_or(0, |c| c.bytes(&(0..self.buffer_planes)) as u64)
    }

    /// Bytes of the host's compressed copy of array `a` (0 when not compressed or when the plan
    /// never compresses, e.g. a one-block run).
    pub fn host_compressed_bytes(&self, a: usize) -> u64 {
        if !self.compresses() {
            return 0;
        }
        self.compressed(a)
            .map_or(0, |c| c.bytes(&(0..self.shape[0])) as u64)
    }

    /// Whether physical array `a` lives in the plan's [`Ring`].
    pub fn in_ring(&self, a: usize) -> bool {
        self.ring
            .as_ref()
            .is_some_and(|r| r.arrays.get(a).copied().unwrap_or(false))
    }

    /// Whether buffer set `set` has a buffer for physical array `a`: the chunks' sets for the
    /// arrays outside the ring, the ring's set for the arrays in it.
    pub fn has_buffer(&self, set: usize, a: usize) -> bool {
        match &self.ring {
            Some(r) if set == r.set => self.in_ring(a),
            _ => set < self.buffer_sets && !self.in_ring(a) && a < self.elem_sizes.len(),
        }
    }

    /// Planes of the buffers of set `set` (the ring's length for the ring's set).
    pub fn buffer_len(&self, set: usize) -> usize {
        match &self.ring {
            Some(r) if set == r.set => r.planes,
            _ => self.buffer_planes,
        }
    }

    /// The planes of each launch of kernel `k`, in plan order.
    pub fn kernel_launches(&self, k: usize) -> Vec<usize> {
        (self.ops.iter())
            .filter_map(|op| op.kind.kernel_planes())
            .filter(|&(kernel, _)| kernel == k)
            .map(|(_, planes)| planes.len())
            .collect()
    }

    /// Planes of physical array `a` the device holds in all: `buffer_planes` per set, or the
    /// ring's length.
    pub fn device_planes(&self, a: usize) -> usize {
        match &self.ring {
            Some(r) if self.in_ring(a) => r.planes,
            _ => self.buffer_planes * self.buffer_sets,
        }
    }

    /// Bytes of one buffer set (every array's buffer but the ring's, and the compressed staging
    /// areas) on the device.
    pub fn set_bytes(&self) -> u64 {
        let per_plane: usize = (self.elem_sizes.iter().enumerate())
            .filter(|&(a, _)| !self.in_ring(a))
            .map(|(_, e)| e)
            .sum::<usize>()
            * self.plane_len;
        let staging: u64 = (0..self.elem_sizes.len())
            .map(|a| self.staging_compressed_bytes(a))
            .sum();
        (per_plane * self.buffer_planes) as u64 + staging
    }

    /// Bytes of the ring's buffers (0 without a ring).
    pub fn ring_bytes(&self) -> u64 {
        (0..self.elem_sizes.len())
            .filter(|&a| self.in_ring(a))
            .map(|a| (self.device_planes(a) * self.plane_len * self.elem_sizes[a]) as u64)
            .sum()
    }

    /// Device memory for all buffer sets and the ring.
    pub fn device_bytes(&self) -> u64 {
        self.set_bytes() * self.buffer_sets as u64 + self.ring_bytes()
    }

    /// Planes of `array` moved host -> device in `block`.
    pub fn planes_htod(&self, block: usize, array: usize) -> usize {
        self.ops
            .iter()
            .filter(|op| op.block == block)
            .filter_map(|op| match &op.kind {
                OpKind::HtoD {
                    array: a, planes, ..
                } if *a == array => Some(planes.len()),
                _ => None,
            })
            .sum()
    }

    /// Planes of `array` moved device -> host in `block`.
    pub fn planes_dtoh(&self, block: usize, array: usize) -> usize {
        self.ops
            .iter()
            .filter(|op| op.block == block)
            .filter_map(|op| match &op.kind {
                OpKind::DtoH {
                    array: a, planes, ..
                } if *a == array => Some(planes.len()),
                _ => None,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_slab_is_the_lcm_of_the_arrays_slabs() {
        let c = |slab_planes| {
            Some(Compression {
                codec: CodecKind::Zfp,
                rate: Rate::new(8.0).unwrap(),
                slab_planes,
                slab_bytes: 64,
                written: true,
            })
        };
        assert_eq!(slab_planes(&[]), 1);
        assert_eq!(slab_planes(&[None, c(4), None]), 4);
        assert_eq!(slab_planes(&[c(4), c(6), c(4)]), 12);
        let z = c(4).unwrap();
        assert_eq!(z.slabs(&(8..18)), 2..5);
        assert_eq!((z.bytes(&(8..18)), z.offset(8)), (3 * 64, 2 * 64));
    }

    #[test]
    fn long_runs_are_planned_in_segments_unless_they_compress() {
        let o = PlanOptions {
            chunks: 4,
            block_steps: 3,
            scheme: Scheme::RegionSharing,
            buffer_sets: 3,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        let most = MAX_PLANNED_BLOCKS * 3;
        assert_eq!(o.segment_steps(most + 1, None), most);
        assert_eq!(o.segment_steps(100, None), 100);
        assert_eq!(o.segment_steps(100, Some(5)), 15);
        assert_eq!(o.segment_steps(0, None), 1);
        let c = PlanOptions {
            compress: vec![Some(8.0)],
            ..o
        };
        assert_eq!(c.segment_steps(10 * most, None), 10 * most);
        assert_eq!(c.segment_steps(10 * most, Some(5)), 15);
    }

    #[test]
    fn accessors_read_the_common_fields_of_each_kind() {
        let htod = OpKind::HtoD {
            array: 2,
            set: 1,
            base: 8,
            planes: 9..12,
            from: HostSide::User,
        };
        let staged = OpKind::HtoD {
            array: 2,
            set: 1,
            base: 8,
            planes: 9..12,
            from: HostSide::Staging,
        };
        let b = htod.buffer_planes().unwrap();
        assert_eq!((b.array, b.set, b.base, b.planes), (2, 1, 8, &(9..12)));
        assert_eq!(htod.user_planes(), Some((2, &(9..12))));
        assert_eq!(
            staged.user_planes(),
            None,
            "staging buffers are not the user's"
        );
        let enc = OpKind::Encode {
            array: 0,
            set: 2,
            base: 4,
            planes: 4..8,
        };
        assert_eq!(enc.buffer_planes().map(|b| b.set), Some(2));
        assert!(!enc.computes() && enc.kernel_planes().is_none());
        let dtod = OpKind::DtoD {
            array: 0,
            from_set: 0,
            from_base: 0,
            to_set: 1,
            to_base: 4,
            planes: 4..6,
        };
        assert!(dtod.buffer_planes().is_none() && dtod.user_planes().is_none());
        let k = OpKind::Kernel {
            kernel: 3,
            set: 0,
            base: 0,
            step: 1,
            planes: 1..5,
            owned: 1..5,
            args: vec![0],
            ring_base: None,
        };
        assert_eq!(k.kernel_planes(), Some((3, &(1..5))));
        assert!(k.computes() && k.buffer_planes().is_none());
    }
}
