//! The static description of a translated stencil program.
//!
//! The translator emits one [`Program`] per annotated function. It is plain data: the planner
//! reads it to infer bounds and transfers, the CUDA backend reads its kernel source, and
//! `pacc plan` prints it. Nothing here refers to generated Rust code; the CPU kernels travel
//! separately as closures (`exec::CpuKernels`, with the `runtime` feature).

use serde::{Deserialize, Serialize};

mod bounds;
pub use bounds::{bound_value, AxisRange, Base, Bound, BoundError, SYNTHETIC_PREFIX};

/// Element type of an array, a 1D slice or a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Elem {
    F32,
    F64,
}

impl Elem {
    pub const fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
        }
    }
    pub const fn rust_name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }
    pub const fn cuda_name(self) -> &'static str {
        match self {
            Elem::F32 => "float",
            Elem::F64 => "double",
        }
    }
}

/// What the caller gets back in an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Read only: copied to the device, never written back.
    Input,
    /// Read and written: copied both ways; the caller sees the final contents.
    InOut,
    /// Written (and possibly read) by the kernels; its final contents are not returned.
    Scratch,
}

/// Type of a scalar that kernels read (a parameter or a local computed before the time loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    F32,
    F64,
    I32,
    I64,
    U32,
    U64,
    Usize,
    Isize,
    Bool,
}

impl ScalarType {
    pub const fn cuda_name(self) -> &'static str {
        match self {
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
            ScalarType::I32 => "int",
            ScalarType::I64 | ScalarType::Isize => "long long",
            ScalarType::U32 => "unsigned int",
            ScalarType::U64 | ScalarType::Usize => "unsigned long long",
            ScalarType::Bool => "bool",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayDecl {
    pub name: String,
    pub elem: Elem,
    pub role: Role,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScalarDecl {
    pub name: String,
    pub ty: ScalarType,
}

/// A small read-only 1D slice (e.g. a source wavelet), copied whole to the device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceDecl {
    pub name: String,
    pub elem: Elem,
    /// The index of each read of the slice in the time loop. The translator records every
    /// read (it refuses an index it cannot bound), so that the run checks the slice's length
    /// first ([`SliceIndex::bounds`]). Empty in descriptions written before it did: nothing
    /// is checked then.
    #[serde(default)]
    pub reads: Vec<SliceIndex>,
}

/// The index of one read of a slice: `offset + time * t + Σ coef * v`, `t` the time loop's
/// variable, each `v` a loop variable of the nest the read sits in or an integer scalar.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SliceIndex {
    pub offset: i64,
    pub time: i64,
    #[serde(default)]
    pub axes: Vec<AxisTerm>,
    #[serde(default)]
    pub scalars: Vec<ScalarTerm>,
}

/// `coef` times the loop variable of `axis`, which runs over `range` of that axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AxisTerm {
    pub axis: usize,
    pub coef: i64,
    pub range: AxisRange,
}

/// `coef` times the program's scalar `scalar` (an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScalarTerm {
    pub scalar: usize,
    pub coef: i64,
}

impl SliceIndex {
    /// The smallest and largest index the read takes while `t` runs over `times` (inclusive)
    /// and the loop variables over their ranges on arrays of `shape`, with `scalar(s)` the value
    /// of scalar `s`. `None` when it takes none: a loop range is empty (or names an axis the
    /// shape lacks).
    pub fn bounds(
        &self,
        times: (i64, i64),
        shape: &[usize],
        scalar: impl Fn(usize) -> i128,
    ) -> Option<(i128, i128)> {
        // An affine index takes its extremes at the corners: each term at one end of its range.
        let term = |coef: i64, lo: i128, hi: i128| {
            let (a, b) = (coef as i128 * lo, coef as i128 * hi);
            (a.min(b), a.max(b))
        };
        let mut lo = self.offset as i128;
        let mut hi = lo;
        let mut add = |(a, b): (i128, i128)| {
            lo += a;
            hi += b;
        };
        add(term(self.time, times.0 as i128, times.1 as i128));
        for a in &self.axes {
            let n = *shape.get(a.axis)?;
            let (first, end) = (a.range.lo.eval(n) as i128, a.range.hi.eval(n) as i128);
            if first >= end {
                return None;
            }
            add(term(a.coef, first, end - 1));
        }
        for s in &self.scalars {
            let v = scalar(s.scalar);
            add(term(s.coef, v, v));
        }
        Some((lo, hi))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
}

/// A scalar declared before the time loop and accumulated inside loop nests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReductionDecl {
    pub name: String,
    pub op: ReduceOp,
    pub elem: Elem,
}

/// All reads of one array in one kernel: the smallest and largest constant offset per axis
/// (outermost axis first). A kernel reading `a[[z - 1, y, x]]` and `a[[z + 2, y, x + 1]]`
/// has `lo = [-1, 0, 0]`, `hi = [2, 0, 1]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadDecl {
    pub array: usize,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

/// One perfect loop nest of the time step, run in parallel over all its points.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDecl {
    /// Name of the CUDA `__global__` function in [`Program::cuda_source`].
    pub name: String,
    /// Loop range per axis, outermost first.
    pub ranges: Vec<AxisRange>,
    pub reads: Vec<ReadDecl>,
    /// Arrays written at the centre point.
    pub writes: Vec<usize>,
    /// Reductions accumulated in this nest.
    pub reductions: Vec<usize>,
    /// How the CUDA kernel expects to be launched.
    #[serde(default)]
    pub launch: Launch,
    /// Where some read of the nest runs only under a guard (`if y > 0 { a[[y - 1, x]] }`, a
    /// clamped index): every read access of the nest with the limits its guards put on the loop
    /// variables, so the run-time bounds check holds each read to the points where it executes.
    /// Empty: every read runs at every point of the ranges (the check uses `reads`). `reads`
    /// keeps the reach of all accesses either way (halos and chunk dependencies).
    #[serde(default)]
    pub guarded: Vec<GuardedRead>,
}

/// One read access `array[[v0 + offsets[0], ..]]` of a nest and where it executes: at the points
/// of the nest's ranges whose loop variable `v_i` is at least every bound of `from[i]` and below
/// every bound of `to[i]` (the guards' limits, in the axis' extent like the ranges).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardedRead {
    pub array: usize,
    pub offsets: Vec<i64>,
    pub from: Vec<Vec<Bound>>,
    pub to: Vec<Vec<Bound>>,
}

impl GuardedRead {
    /// The loop variables' half-open intervals where the read executes in a nest with `ranges`
    /// over `shape`, or `None` where it never executes.
    pub fn executes(&self, ranges: &[AxisRange], shape: &[usize]) -> Option<Vec<(i64, i64)>> {
        let mut out = Vec::with_capacity(ranges.len());
        for (axis, (r, &n)) in ranges.iter().zip(shape).enumerate() {
            let lo = (self.from.get(axis).into_iter().flatten())
                .fold(r.lo.eval(n), |m, b| m.max(b.eval(n)));
            let hi = (self.to.get(axis).into_iter().flatten())
                .fold(r.hi.eval(n), |m, b| m.min(b.eval(n)));
            if lo >= hi {
                return None;
            }
            out.push((lo, hi));
        }
        Some(out)
    }
}

/// The launch convention of a CUDA kernel (docs/internals.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Launch {
    /// One thread per point: the grid's x (and y in 3D) cover the plane, its last dimension the
    /// planes `z0..z1`, one plane per grid slice.
    #[default]
    PerPoint,
    /// Thread blocks of `block = [x, y]` threads cover the plane; grid slice `s` walks planes
    /// `z0 + s * seg ..` (at most `seg`, passed as `pacc_seg` after `pacc_t`). The source also
    /// holds the per-point form under the name with [`PLAIN_SUFFIX`].
    Marching { block: [u32; 2] },
    /// A fused kernel ([`FusedDecl`]): marching blocks of `block` threads, each writing the
    /// columns left after `halo` (`[[y below, y above], [x below, x above]]`), compiled with
    /// `PACC_FUSE` set to the group's steps; the point statements' coordinates follow the
    /// slices.
    /// `vector`: the block of the vector form (`<name>_vec`, [`VECTOR_WIDTH`] points along x
    /// per thread, its x window rounded out by [`vector_halo`]), where the source has one.
    Fused {
        block: [u32; 2],
        halo: [[u32; 2]; 2],
        vector: Option<[u32; 2]>,
    },
}

/// A single-point statement in the time loop (e.g. source injection): writes `array` at one
/// point whose index the wrapper evaluates before the run; reads arrays only at that point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointDecl {
    /// Name of the CUDA `__global__` function in [`Program::cuda_source`].
    pub name: String,
    pub array: usize,
    pub reads: Vec<usize>,
}

/// A reduction reset (`gosa = 0.0;`) inside the time loop; the value is evaluated by the
/// wrapper before the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetDecl {
    pub reduction: usize,
}

/// One statement of the time loop's body, in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    Kernel(usize),
    Point(usize),
    /// `std::mem::swap(a, b)`: the two names exchange their buffers.
    Swap(usize, usize),
    Reset(usize),
}

/// Suffix of the plain (one thread per point) form of a marching kernel in the CUDA source.
pub const PLAIN_SUFFIX: &str = "_plain";

/// The translator's fused forms: kernels that advance several time steps of the whole step
/// body per launch (docs/internals.md §3), and why a step count has none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fusion {
    pub kernels: Vec<FusedDecl>,
    /// `(steps, why)` for each step count the translator tried and could not fuse.
    pub refused: Vec<(usize, String)>,
    /// In a program prepared for a fused run (`crate::fuse`, with the `runtime` feature): its
    /// one kernel is this group, and its last arrays are the kernel's output buffers.
    #[serde(default)]
    pub active: Option<Active>,
}

/// The fused group a program prepared for a fused run executes per step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Active {
    pub decl: FusedDecl,
    /// The array output buffer `k` holds the last version of: program array `arrays.len() -
    /// twins.len() + k` shares that array's host memory (one of the two holds the current
    /// values at any block boundary).
    pub twins: Vec<usize>,
    /// The original program's nests and step: what the group computes, for executors that run
    /// it nest by nest (the CPU backend).
    pub nests: Vec<KernelDecl>,
    pub step: Vec<Stage>,
}

impl Fusion {
    /// The kernel fusing `steps` steps, or why there is none.
    pub fn get(&self, steps: usize) -> Result<&FusedDecl, FusionError> {
        if let Some(k) = self.kernels.iter().find(|k| k.steps == steps) {
            return Ok(k);
        }
        Err(match self.refused.iter().find(|(s, _)| *s == steps) {
            Some((_, why)) => FusionError::Refused {
                steps,
                why: why.clone(),
            },
            None => FusionError::NotGenerated {
                steps,
                generated: self.kernels.iter().map(|k| k.steps).collect(),
            },
        })
    }
}

/// Why a program cannot run `steps` steps per launch of a fused kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FusionError {
    /// The translator refused this step count, saying why.
    #[error("{why}")]
    Refused { steps: usize, why: String },
    /// The translator does not fuse this step count (it generated the forms `generated`).
    #[error("{}", not_generated(generated))]
    NotGenerated { steps: usize, generated: Vec<usize> },
    /// After the group the step's swaps leave a name bound to an array the group does not
    /// write, so the output buffers cannot follow the names.
    #[error(
        "after {steps} steps the swaps leave `{name}` naming the array that was `{other}`, \
         which the group does not write"
    )]
    Rebinds {
        steps: usize,
        name: String,
        other: String,
    },
}

fn not_generated(generated: &[usize]) -> String {
    if generated.is_empty() {
        return "the program has no fused form".into();
    }
    let have = crate::words::sentence_list(generated.iter().map(|s| s.to_string()));
    format!("the translator fuses {have} steps only")
}

/// A kernel that advances `steps` steps of the step body per launch. It reads every array's
/// input at the group's start and writes the last version of each array the group writes to an
/// output buffer of its own (neighbouring blocks still read the old values), whole planes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusedDecl {
    /// The CUDA function, compiled when the source is built with `PACC_FUSE` = `steps`.
    pub name: String,
    pub steps: usize,
    /// Arrays (names at the group's start) whose last version leaves the kernel, in the order
    /// of the output parameters that follow the program's arrays.
    pub outputs: Vec<usize>,
    /// Reads of each array's input over the group, relative to the planes written: the planes
    /// an output plane depends on across all the steps.
    pub reads: Vec<ReadDecl>,
    /// The default thread block `[x, y]` (the runtime launches with the same values).
    pub block: [u32; 2],
    /// The block's columns beyond the output tile, `[[y below, y above], [x below, x above]]`
    /// (2D: y is zero): a block writes `block - below - above` columns.
    pub halo: [[u32; 2]; 2],
    /// The blocks `[x threads, y rows]` the vector form (`<name>_vec`, compiled with `PACC_FVX`
    /// = [`VECTOR_WIDTH`]) fits, by preference (the first is the default; the tuner may time
    /// others); empty where the group has no vector form.
    pub vector_blocks: Vec<[u32; 2]>,
    /// What the serial loop does with the reductions inside the group, in order: the kernel
    /// writes the partials of each `Reduce` in turn.
    pub events: Vec<ReduceEvent>,
    /// Point statements applied inside; their coordinates follow the slices.
    pub points: Vec<usize>,
    /// What each invocation of the group (every nest of every step, in serial order) computes
    /// around the block's output tile; `None` where it computes nothing. Empty in programs
    /// written before the field (the figures of [`FusedDecl::work`] are then unknown).
    #[serde(default)]
    pub invocations: Vec<Option<FusedInvocation>>,
}

/// Where one invocation of a fused group computes, beyond the output a block writes: the
/// block computes it on its output tile widened by `window`, at the output planes of a
/// segment and `planes` more below and above (what later invocations read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusedInvocation {
    /// `[[y below, y above], [x below, x above]]`, within [`FusedDecl::halo`] (2D: y is zero).
    pub window: [[u32; 2]; 2],
    pub planes: [u32; 2],
}

/// A fused kernel's work for each point-step it delivers, where the serial loop does one
/// evaluation per invocation ([`FusedDecl::work`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FusedWork {
    /// Points the block evaluates (its windows, at the planes around its segments): the
    /// redundant halo work of overlapped tiling, 1 for none.
    pub evaluations: f64,
    /// Thread lanes of the warps that run an invocation, times the points a lane computes: a
    /// warp with one thread inside an invocation's window pays for all 32 (the lanes outside
    /// sit idle behind the mask).
    pub lanes: f64,
    /// The planes a segment's invocations compute over those it writes (the `along z` share of
    /// `evaluations`).
    pub planes: f64,
}

impl FusedDecl {
    /// The block the vector form launches with unless the tuner chose another.
    pub fn vector_block(&self) -> Option<[u32; 2]> {
        self.vector_blocks.first().copied()
    }

    /// The work of a block of `block` threads (the vector form where `vector`) marching
    /// segments of `segment` planes, for each point-step it writes; `None` where the program
    /// does not say where its invocations compute. Blocks at the array's edges, which
    /// compute nothing outside it, do less.
    pub fn work(
        &self,
        block: [u32; 2],
        vector: bool,
        ndim: usize,
        segment: usize,
    ) -> Option<FusedWork> {
        if self.invocations.is_empty() || segment == 0 {
            return None;
        }
        let cols = if vector { VECTOR_WIDTH as u32 } else { 1 };
        let [bx, by] = [block[0], if ndim == 3 { block[1] } else { 1 }];
        let [tx, ty] = fused_tile([bx, by], self.halo, ndim, vector);
        // The output tile's first row and column in the block; a 2D block is one row.
        let (flat, x0) = (ndim != 3, x_halo(self.halo, vector)[0]);
        let y0 = if flat { 0 } else { self.halo[0][0] };
        let seg = segment as f64;
        let (mut points, mut lanes, mut planes) = (0.0, 0.0, 0.0);
        for inv in self.invocations.iter().flatten() {
            let [[wyl, wyh], [wxl, wxh]] = inv.window;
            let (wyl, wyh) = if flat { (0, 0) } else { (wyl, wyh) };
            let rows = y0.saturating_sub(wyl)..(y0 + ty + wyh);
            let xs = x0.saturating_sub(wxl)..(x0 + tx + wxh);
            let depth = seg + f64::from(inv.planes[0] + inv.planes[1]);
            let inside = |t: u32| {
                let (c, r) = (t % bx, t / bx);
                rows.contains(&r) && (c * cols..(c + 1) * cols).any(|x| xs.contains(&x))
            };
            let warps = (0..(bx * by).div_ceil(32))
                .filter(|w| (32 * w..(32 * w + 32).min(bx * by)).any(inside))
                .count();
            points += f64::from(rows.len() as u32 * xs.len() as u32) * depth;
            lanes += (warps * 32 * cols as usize) as f64 * depth;
            planes += depth;
        }
        let useful = f64::from(tx * ty) * seg * self.invocations.len() as f64;
        Some(FusedWork {
            evaluations: points / useful,
            lanes: lanes / useful,
            planes: planes / (seg * self.invocations.len() as f64),
        })
    }
}

/// The columns below and above the output tile a fused block's window takes along x: the
/// group's, rounded out to whole vectors in the vector form ([`vector_halo`]).
fn x_halo(halo: [[u32; 2]; 2], vector: bool) -> [u32; 2] {
    match vector {
        true => [vector_halo(halo[1][0]), vector_halo(halo[1][1])],
        false => halo[1],
    }
}

/// The columns and rows a fused block of `block` threads writes (the vector form where
/// `vector`: [`VECTOR_WIDTH`] columns a thread): the block's minus the window `halo` beyond
/// them, at least one each (2D: one row).
pub fn fused_tile(block: [u32; 2], halo: [[u32; 2]; 2], ndim: usize, vector: bool) -> [u32; 2] {
    let cols = if vector { VECTOR_WIDTH as u32 } else { 1 };
    let xh = x_halo(halo, vector);
    let tx = (block[0] * cols).saturating_sub(xh[0] + xh[1]).max(1);
    let ty = match ndim {
        3 => block[1].saturating_sub(halo[0][0] + halo[0][1]).max(1),
        _ => 1,
    };
    [tx, ty]
}

/// A reduction event inside a fused group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceEvent {
    /// `Program::resets[i]`.
    Reset(usize),
    /// The next partials of the kernel, of reduction `r`.
    Reduce(usize),
}

/// Suffix of the vector form of a 3D marching kernel in the CUDA source: each thread computes
/// [`VECTOR_WIDTH`] consecutive points along x. The source compiles it under `#if PACC_VX ==
/// VECTOR_WIDTH` and only where its tiles fit, so a module may lack it; the runtime then
/// launches the scalar form.
pub const VECTOR_SUFFIX: &str = "_vec";

/// Points along x each thread of a vector form computes. Its loads move this many elements at
/// once, so the rows of the device buffers must be a multiple of it long.
pub const VECTOR_WIDTH: usize = 4;

/// The window of a fused vector form beyond its output tile along x, on one side: `h` columns
/// rounded up to whole vectors, so that no thread's vector straddles the output tile.
pub fn vector_halo(h: u32) -> u32 {
    h.next_multiple_of(VECTOR_WIDTH as u32)
}

/// The vector forms' default thread block `[x, y]` (threads; a block covers
/// `x * VECTOR_WIDTH` columns).
pub const VECTOR_BLOCK: [u32; 2] = [16, 16];

/// Elements of each reduction's per-block buffer in a kernel's shared memory: one per thread
/// (a block has at most 1024 threads). The translator sizes the buffer with it; the runtime
/// counts it when it reads a kernel's static shared memory.
pub const REDUCTION_SLOTS: usize = 1024;

/// Everything the runtime needs to know about a translated function.
///
/// `Program::default()` is an empty program (no arrays, no kernels, `ndim` 0). Hand-built
/// programs (tests, benchmarks) name the fields they need and take the rest from it, so that a
/// field added later does not break them:
///
/// ```
/// use pacc_runtime::program::Program;
/// let p = Program {
///     name: "heat".into(),
///     ndim: 3,
///     halo: 1,
///     ..Default::default()
/// };
/// assert!(p.kernels.is_empty() && p.compress.is_empty() && !p.row_pitch);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// The user's function name.
    pub name: String,
    /// 2 or 3 (a translated 1D program is 2D, of shape `[n, 1]`). The outermost axis (axis 0)
    /// is the one split into chunks.
    pub ndim: usize,
    /// Arrays in the order of the function's parameters.
    pub arrays: Vec<ArrayDecl>,
    pub scalars: Vec<ScalarDecl>,
    pub slices: Vec<SliceDecl>,
    pub reductions: Vec<ReductionDecl>,
    pub resets: Vec<ResetDecl>,
    pub kernels: Vec<KernelDecl>,
    pub points: Vec<PointDecl>,
    /// The body of one time step.
    pub step: Vec<Stage>,
    /// The halo stated in the directive, or the inferred one (largest |offset| on any axis).
    pub halo: usize,
    /// `chunks = N` from the directive, if given.
    pub default_chunks: Option<usize>,
    /// `block_steps = K` from the directive, if given.
    pub default_block_steps: Option<usize>,
    /// `compress(a = R, .., codec = NAME)` from the directive: one entry per array it names.
    #[serde(default)]
    pub compress: Vec<CompressDecl>,
    /// CUDA C source of every kernel and point statement, ready for NVRTC.
    pub cuda_source: String,
    /// Whether every kernel and point kernel of `cuda_source` takes `long long pacc_rp` after
    /// `pacc_n2`: the elements between the starts of consecutive rows of the last axis in the
    /// device buffers (3D; in 2D between planes), so the runtime may pad rows to 128 bytes
    /// (docs/internals.md §3). The translator's programs do; hand-written sources without the
    /// parameter keep unpadded buffers.
    #[serde(default)]
    pub row_pitch: bool,
    /// The fused forms of the step body (the translator's programs; empty otherwise).
    #[serde(default)]
    pub fusion: Fusion,
}

/// One array of the directive's `compress(..)` clause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressDecl {
    /// The array's index in [`Program::arrays`].
    pub array: usize,
    /// Bits per value.
    pub rate: f64,
    /// The codec the clause names (`codec = f16`), by its name; `None`: the clause names none,
    /// so the options or the default choose (resolved by `crate::config::codec`).
    #[serde(default)]
    pub codec: Option<String>,
}

/// `(array, rate)`: an entry that names no codec, as the clause's entries were written before
/// it could name one.
impl PartialEq<(usize, f64)> for CompressDecl {
    fn eq(&self, &(array, rate): &(usize, f64)) -> bool {
        self.array == array && self.rate == rate && self.codec.is_none()
    }
}

impl KernelDecl {
    /// The widest read of this kernel along axis 0: (planes before, planes after).
    pub fn axis0_reach(&self) -> (usize, usize) {
        self.reads.iter().fold((0, 0), |(b, f), r| {
            (
                b.max((-r.lo[0]).max(0) as usize),
                f.max(r.hi[0].max(0) as usize),
            )
        })
    }
}

impl Program {
    /// Largest backward (negative) and forward read offset along axis 0 over all kernels.
    pub fn axis0_reach(&self) -> (usize, usize) {
        self.kernels
            .iter()
            .map(KernelDecl::axis0_reach)
            .fold((0, 0), |(b, f), (kb, kf)| (b.max(kb), f.max(kf)))
    }

    /// The value of the time variable at step `step` of a run whose first step has `t0`: a
    /// step of a fused run is a group of several of the program's steps.
    pub fn time_of(&self, t0: i64, step: usize) -> i64 {
        let per = self.fusion.active.as_ref().map_or(1, |a| a.decl.steps);
        t0 + (step * per) as i64
    }

    /// The caller's array whose memory program array `a` uses: itself, or for a fused run's
    /// output buffer the array it stands for.
    pub fn host_array(&self, a: usize) -> usize {
        match &self.fusion.active {
            Some(act) if a >= self.arrays.len() - act.twins.len() => {
                act.twins[a - (self.arrays.len() - act.twins.len())]
            }
            _ => a,
        }
    }

    /// The codec the directive's `compress(..)` clause names, if any (one clause names one).
    pub fn compress_codec(&self) -> Option<&str> {
        self.compress.iter().find_map(|c| c.codec.as_deref())
    }

    pub fn array_index(&self, name: &str) -> Option<usize> {
        self.arrays.iter().position(|a| a.name == name)
    }

    /// Whether any kernel or point statement writes the array.
    pub fn is_written(&self, array: usize) -> bool {
        self.kernels.iter().any(|k| k.writes.contains(&array))
            || self.points.iter().any(|p| p.array == array)
    }
}

/// Test programs for the runtime's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// Two steps of a radius-4 stencil: the first invocation on the output tile widened by 4
    /// on every side and 4 planes below and above, the second on the tile itself (3 steps: 8,
    /// 4 and 0).
    pub(crate) fn radius4(steps: usize) -> FusedDecl {
        let r = 4 * (steps as u32 - 1);
        FusedDecl {
            name: "k_f2".into(),
            steps,
            outputs: vec![0],
            reads: vec![],
            block: [32, 16],
            halo: [[r, r], [r, r]],
            vector_blocks: vec![[8, 48]],
            events: vec![],
            points: vec![],
            invocations: (0..steps as u32)
                .map(|i| {
                    let w = 4 * (steps as u32 - 1 - i);
                    Some(FusedInvocation {
                        window: [[w, w], [w, w]],
                        planes: [w, w],
                    })
                })
                .collect(),
        }
    }

    /// A leap-frog (reach 2, reading its own level and a coefficient array) and a Jacobi step
    /// (reach 1 into a scratch array) over the same four arrays: the planner's test programs.
    pub(crate) fn leap_and_jacobi() -> [Program; 2] {
        let arrays = [
            ("p", Role::InOut),
            ("q", Role::InOut),
            ("c", Role::Input),
            ("w", Role::Scratch),
        ];
        [
            one_kernel("leap", &arrays, &[(0, 2), (1, 0), (2, 1)], 1, 2),
            one_kernel("jacobi", &arrays, &[(0, 1), (2, 0), (3, 1)], 3, 1),
        ]
    }

    /// One 3D f32 kernel over `margin..n - margin` on every axis reading `reads` (array,
    /// symmetric reach), writing `write`, then swapping arrays 0 and 1: the shape of the
    /// leap-frog and Jacobi models. The halo is the widest reach.
    pub(crate) fn one_kernel(
        name: &str,
        arrays: &[(&str, Role)],
        reads: &[(usize, i64)],
        write: usize,
        margin: i64,
    ) -> Program {
        let halo = reads.iter().map(|&(_, h)| h as usize).max().unwrap_or(0);
        Program {
            name: name.into(),
            ndim: 3,
            arrays: (arrays.iter())
                .map(|&(n, role)| ArrayDecl {
                    name: n.into(),
                    elem: Elem::F32,
                    role,
                })
                .collect(),
            kernels: vec![KernelDecl {
                name: "k".into(),
                ranges: vec![
                    AxisRange {
                        lo: Bound::start(margin),
                        hi: Bound::end(-margin)
                    };
                    3
                ],
                reads: (reads.iter())
                    .map(|&(array, h)| ReadDecl {
                        array,
                        lo: vec![-h; 3],
                        hi: vec![h; 3],
                    })
                    .collect(),
                writes: vec![write],
                reductions: vec![],
                launch: Default::default(),
                guarded: Vec::new(),
            }],
            step: vec![Stage::Kernel(0), Stage::Swap(0, 1)],
            halo,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::radius4;
    use super::*;

    /// Descriptions written before slices recorded their reads still load, with nothing to
    /// check; a read's bounds take each term at the end of its range that extends it.
    #[test]
    fn slice_reads_default_to_none_and_bound_affine_indices() {
        let d: SliceDecl = serde_json::from_str(r#"{"name": "w", "elem": "F32"}"#).unwrap();
        assert!(d.reads.is_empty());
        let z = AxisRange {
            lo: Bound::start(2),
            hi: Bound::end(-2),
        };
        let i = SliceIndex {
            offset: 10,
            time: -1,
            axes: vec![AxisTerm {
                axis: 0,
                coef: 3,
                range: z,
            }],
            scalars: vec![ScalarTerm { scalar: 0, coef: 2 }],
        };
        // t in 0..=4, z in 2..=5 (8 planes), scalar 7: 10 - 4 + 6 + 14 ..= 10 + 15 + 14.
        assert_eq!(i.bounds((0, 4), &[8, 3], |_| 7), Some((26, 39)));
        let empty = AxisRange {
            lo: Bound::start(2),
            hi: Bound::end(-6),
        };
        let none = SliceIndex {
            axes: vec![AxisTerm {
                axis: 0,
                coef: 1,
                range: empty,
            }],
            ..Default::default()
        };
        assert_eq!(none.bounds((0, 4), &[8, 3], |_| 0), None);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn fused_work_counts_the_windows_the_idle_lanes_and_the_planes() {
        let d = radius4(2);
        // The vector form at 8x48: 32x48 points, the output 24x40; segments of 86 planes,
        // the first invocation on 94 of them.
        let w = d.work([8, 48], true, 3, 86).unwrap();
        let useful = 2.0 * 24.0 * 40.0 * 86.0;
        assert!(close(
            w.evaluations,
            (32.0 * 48.0 * 94.0 + 24.0 * 40.0 * 86.0) / useful
        ));
        // Warps of 4 rows: all 12 run the first invocation, the 10 of rows 4..44 the second,
        // each lane for 4 points (those of the outer columns idle).
        let lanes = (12.0 * 128.0 * 94.0 + 10.0 * 128.0 * 86.0) / useful;
        assert!(close(w.lanes, lanes), "{} {lanes}", w.lanes);
        assert!(close(w.planes, (94.0 + 86.0) / (2.0 * 86.0)));
        // Long segments: the in-plane share alone, (32x48 + 24x40) / (2 x 24x40).
        let long = d.work([8, 48], true, 3, 1 << 40).unwrap();
        assert!(
            (long.evaluations - 1.3).abs() < 1e-6,
            "{}",
            long.evaluations
        );
        // The one-column form at 32x16: a warp per row, rows 4..12 run the second.
        let s = d.work([32, 16], false, 3, 1 << 40).unwrap();
        assert!((s.evaluations - (512.0 + 192.0) / 384.0).abs() < 1e-6);
        assert!((s.lanes - (512.0 + 256.0) / 384.0).abs() < 1e-6);
        assert_eq!(fused_tile([32, 16], d.halo, 3, false), [24, 8]);
        assert_eq!(fused_tile([8, 48], d.halo, 3, true), [24, 40]);
    }

    #[test]
    fn fused_work_of_2d_and_of_invocations_that_compute_nothing() {
        let mut d = radius4(3);
        // 2D: rows of 256 threads, the output 256 - 16 columns; y windows do not count.
        let w = d.work([256, 1], false, 2, 1 << 40).unwrap();
        let out = 240.0;
        assert!((w.evaluations - (256.0 + 248.0 + 240.0) / (3.0 * out)).abs() < 1e-6);
        assert!((w.lanes - 3.0 * 256.0 / (3.0 * out)).abs() < 1e-6);
        // An invocation the group overwrites before anything reads it costs nothing, and the
        // serial loop's evaluation of it still counts: fewer than one a point-step is possible.
        d.invocations[0] = None;
        let less = d.work([256, 1], false, 2, 1 << 40).unwrap();
        assert!((less.evaluations - (248.0 + 240.0) / (3.0 * out)).abs() < 1e-6);
        // Unknown windows (a program written before the field), or no segment: no figure.
        d.invocations.clear();
        assert!(d.work([256, 1], false, 2, 64).is_none());
        assert!(radius4(2).work([8, 48], true, 3, 0).is_none());
    }
}
