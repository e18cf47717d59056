//! Assembling the plan: chunk geometry per block, transfers per scheme, streams, dependencies.

use super::access::accesses;
use super::infer::{returned, written_back};
use super::live::Live;
use super::ring::{self, RingChunk};
use super::tiling::{BlockSpec, BlockTiles, ChunkTile, Work};
use super::{
    slab_planes, BlockGeom, ChunkGeom, Compression, HostSide, Op, OpKind, Plan, PlanError,
    PlanOptions, Ring, Scheme, StreamRole,
};
use crate::codec::Rate;
use crate::program::{KernelDecl, Program};
use std::ops::Range;

/// Builds the plan for running `program` on arrays of `shape` for `steps` time steps.
/// `points[p]` is the plane (axis-0 index) that point statement `p` writes.
pub fn build(
    program: &Program,
    shape: &[usize],
    steps: usize,
    points: &[usize],
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    validate(program, shape, points, opts)?;
    let compression = compression(program, shape, opts)?;
    let compresses = compression.iter().any(Option::is_some);
    let n0 = shape[0];
    let k = opts.block_steps.min(steps.max(1));
    let mut adjustments = Vec::new();
    let mut chunks = opts.chunks;
    // Compression aligns chunks to slabs, which only matters when there is a later block.
    let aligned = compression.iter().any(Option::is_some) && steps > k;
    if compression.iter().any(Option::is_some) && !aligned {
        adjustments.push(
            "compression: the run is a single block, which loads the raw arrays and writes raw \
             results back, so nothing is compressed (compression works between blocks)"
                .to_string(),
        );
    }
    let slab = slab_planes(&compression);
    if aligned && chunks > n0.div_ceil(slab) {
        chunks = n0.div_ceil(slab);
        adjustments.push(format!(
            "compression: chunks are whole slabs of {slab} planes and {n0} planes make only \
             {chunks}; using {chunks} chunks instead of {}",
            opts.chunks
        ));
    }
    let asked = chunks;
    let slabs = aligned.then_some(compression.as_slice());
    let mut geometry = loop {
        match geometry(program, shape, steps, k, chunks, points, slabs, opts.scheme) {
            Ok(g) => break g,
            Err(_) if chunks > 1 => chunks -= 1,
            Err(need) => {
                return Err(PlanError::TooThin {
                    scheme: opts.scheme,
                    need,
                    block_steps: k,
                    planes: n0,
                })
            }
        }
    };
    if chunks != asked {
        adjustments.push(format!(
            "{}: with {} chunks of about {} planes, a chunk's halo for {k} block steps would reach \
             back to planes two chunks earlier, which are written back before it loads; using \
             {chunks} chunks instead (ask for fewer block steps to keep more chunks)",
            opts.scheme,
            asked,
            n0 / asked
        ));
    }
    let sets = opts.buffer_sets;
    let buffer_planes = (geometry.iter().flat_map(|b| &b.chunks))
        .map(|c| c.window.len())
        .max()
        .unwrap_or(0);
    let (ring, placed) = read_only_ring(program, opts, &compression, &mut geometry, n0)
        .map_or((None, Vec::new()), |(r, p)| (Some(r), p));
    let mut plan = Plan {
        shape: shape.to_vec(),
        steps,
        scheme: opts.scheme,
        chunks,
        requested_chunks: opts.chunks,
        block_steps: k,
        adjustments,
        buffer_sets: sets,
        buffer_planes,
        plane_len: shape[1..].iter().product(),
        elem_sizes: program.arrays.iter().map(|a| a.elem.size()).collect(),
        streams: StreamRole::LANES * sets + if compresses { sets } else { 0 },
        blocks: Vec::new(),
        ops: Vec::new(),
        final_binding: final_binding(program, steps),
        compression,
        ring,
    };
    emit_blocks(&mut plan, program, &geometry, &placed);
    derive_dependencies(program, &mut plan);
    Ok(plan)
}

/// Every block's operations and geometry, chunk `i` of the run (counting through the blocks)
/// on buffer set `i mod buffer_sets`.
fn emit_blocks(
    plan: &mut Plan,
    program: &Program,
    geometry: &[BlockTiles],
    placed: &[Vec<RingChunk>],
) {
    let (k, steps, sets) = (plan.block_steps, plan.steps, plan.buffer_sets);
    let mut binding: Vec<usize> = (0..program.arrays.len()).collect();
    let mut seq = 0usize;
    let nblocks = geometry.len();
    for (b, block) in geometry.iter().enumerate() {
        let first_step = b * k;
        let n = (steps - first_step).min(k);
        let ret = written_back(program, &binding, n);
        binding = crate::binding::advance(program, &binding, n);
        let chunk_sets: Vec<usize> = (0..block.chunks.len()).map(|i| (seq + i) % sets).collect();
        seq += block.chunks.len();
        let pos = BlockPos {
            first: b == 0,
            last: b + 1 == nblocks,
        };
        let ring = placed.get(b).map(Vec::as_slice);
        emit_block(plan, b, first_step, block, &chunk_sets, ring, &ret, pos);
        plan.blocks.push(BlockGeom {
            first_step,
            steps: (steps - first_step).min(k),
            chunks: (block.chunks.iter().zip(&chunk_sets))
                .map(|(c, &set)| ChunkGeom {
                    owned: c.owned.clone(),
                    window: c.window.clone(),
                    set,
                })
                .collect(),
        });
    }
}

fn validate(
    program: &Program,
    shape: &[usize],
    points: &[usize],
    opts: &PlanOptions,
) -> Result<(), PlanError> {
    if shape.len() != program.ndim {
        return Err(PlanError::Rank {
            program: program.name.clone(),
            shape: shape.to_vec(),
            got: shape.len(),
            want: program.ndim,
        });
    }
    if let Some(axis) = shape.iter().position(|&n| n == 0) {
        return Err(PlanError::EmptyAxis {
            shape: shape.to_vec(),
            axis,
        });
    }
    if opts.chunks == 0 {
        return Err(PlanError::ZeroChunks(0));
    }
    if opts.block_steps == 0 {
        return Err(PlanError::ZeroBlockSteps(0));
    }
    if opts.buffer_sets == 0 {
        return Err(PlanError::ZeroBufferSets(0));
    }
    if opts.chunks > shape[0] {
        return Err(PlanError::TooManyChunks {
            chunks: opts.chunks,
            planes: shape[0],
        });
    }
    nests_in_bounds(program, shape)?;
    for (p, (&plane, decl)) in points.iter().zip(&program.points).enumerate() {
        let _ = p;
        if plane >= shape[0] {
            return Err(PlanError::PointOutside {
                point: decl.name.clone(),
                plane,
                planes: shape[0],
            });
        }
    }
    if points.len() != program.points.len() {
        return Err(PlanError::PointCount {
            got: points.len(),
            want: program.points.len(),
        });
    }
    Ok(())
}

/// The nests whose reach the shape must hold. A fused kernel reads across several steps and
/// writes whole planes, so a fused run is held to its original nests: what the single-step run
/// of the same program refuses, the fused run refuses too.
fn checked_nests(program: &Program) -> impl Iterator<Item = &KernelDecl> {
    let unfused = program.kernels.iter();
    let unfused = unfused.filter(|k| !matches!(k.launch, crate::program::Launch::Fused { .. }));
    let nests = program.fusion.active.iter().flat_map(|a| &a.nests);
    unfused.chain(nests)
}

/// Every nest's loop ranges, widened by its reads (and its writes, at the point itself), stay
/// inside arrays of `shape`; the program's bounds must be concrete ([`Program::resolved`]).
/// The session checks it before anything touches the arrays (`crate::validate::call`), the
/// planner again.
pub(crate) fn nests_in_bounds(program: &Program, shape: &[usize]) -> Result<(), PlanError> {
    program.unresolved()?;
    for (nest, k) in checked_nests(program).enumerate() {
        in_bounds(nest, k, shape)?;
    }
    Ok(())
}

/// A nest's loop bounds plus its read offsets stay inside the shape. A nest with an empty
/// range along any axis runs no iteration (as a Rust range `lo..hi` with `hi <= lo`), so it
/// touches nothing.
fn in_bounds(nest: usize, k: &KernelDecl, shape: &[usize]) -> Result<(), PlanError> {
    let bounds =
        |(range, &n): (&crate::program::AxisRange, &usize)| (range.lo.eval(n), range.hi.eval(n));
    if k.ranges
        .iter()
        .zip(shape)
        .map(bounds)
        .any(|(lo, hi)| lo >= hi)
    {
        return Ok(());
    }
    if !k.guarded.is_empty() {
        return guarded_in_bounds(nest, k, shape);
    }
    for (axis, (range, &n)) in k.ranges.iter().zip(shape).enumerate() {
        let (lo, hi) = (range.lo.eval(n), range.hi.eval(n));
        // The write is at the point itself: offset 0 whatever the reads.
        let below = (k.reads.iter().filter_map(|r| r.lo.get(axis))).fold(0, |m, &o| o.min(m));
        let above = (k.reads.iter().filter_map(|r| r.hi.get(axis))).fold(0, |m, &o| o.max(m));
        // In i128: a bound from a scalar may lie anywhere in i64.
        let first = i128::from(lo) + i128::from(below);
        let last = i128::from(hi) - 1 + i128::from(above);
        if first < 0 || last >= n as i128 {
            let clamp = |v: i128| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
            return Err(PlanError::TooSmall {
                kernel: k.name.clone(),
                nest,
                axis,
                extent: n,
                lo,
                hi,
                first: clamp(first),
                last: clamp(last),
            });
        }
    }
    Ok(())
}

/// [`in_bounds`] for a nest with guarded reads: the ranges inside the shape (the nest writes
/// at its point), and each read inside the array at the points where it executes.
fn guarded_in_bounds(nest: usize, k: &KernelDecl, shape: &[usize]) -> Result<(), PlanError> {
    let range = |axis: usize| {
        let n = shape[axis];
        (k.ranges[axis].lo.eval(n), k.ranges[axis].hi.eval(n))
    };
    let too_small = |axis: usize, first: i64, last: i64| PlanError::TooSmall {
        kernel: k.name.clone(),
        nest,
        axis,
        extent: shape[axis],
        lo: range(axis).0,
        hi: range(axis).1,
        first,
        last,
    };
    for (axis, (range, &n)) in k.ranges.iter().zip(shape).enumerate() {
        let (lo, hi) = (range.lo.eval(n), range.hi.eval(n));
        if lo < 0 || hi > n as i64 {
            return Err(too_small(axis, lo, hi - 1));
        }
    }
    for g in &k.guarded {
        let Some(vars) = g.executes(&k.ranges, shape) else {
            continue;
        };
        for (axis, ((lo, hi), &n)) in vars.into_iter().zip(shape).enumerate() {
            let off = g.offsets.get(axis).copied().unwrap_or(0);
            let (first, last) = (lo + off, hi - 1 + off);
            if first < 0 || last >= n as i64 {
                return Err(too_small(axis, first, last));
            }
        }
    }
    Ok(())
}

/// Per physical array, how it is compressed; refuses settings the plan cannot honour.
fn compression(
    program: &Program,
    shape: &[usize],
    opts: &PlanOptions,
) -> Result<Vec<Option<Compression>>, PlanError> {
    if !opts.compresses() {
        return Ok(Vec::new());
    }
    if opts.compress.len() != program.arrays.len() {
        return Err(PlanError::CompressCount {
            program: program.name.clone(),
            got: opts.compress.len(),
            want: program.arrays.len(),
        });
    }
    if !opts.scheme.transfers().can_compress() {
        return Err(PlanError::CompressScheme {
            scheme: opts.scheme,
        });
    }
    let ret = returned(program);
    let mut out = Vec::with_capacity(program.arrays.len());
    for (a, rate) in opts.compress.iter().enumerate() {
        let Some(rate) = *rate else {
            out.push(None);
            continue;
        };
        let bad = |reason: String| PlanError::CompressRate {
            array: program.arrays[a].name.clone(),
            rate,
            reason,
        };
        let comp = Rate::new(rate)
            .and_then(|rate| Compression::new(opts.codec, rate, &shape[1..], ret[a]))
            .map_err(|e| bad(e.to_string()))?;
        if !ret[a] && crate::binding::written_physically(program, a) {
            return Err(bad(
                "it is a scratch array, whose contents never go back to the host".into(),
            ));
        }
        out.push(Some(comp));
    }
    Ok(out)
}

/// Tiles every block of the run with the scheme's tiling. `Err(need)`: a chunk is too thin.
#[allow(clippy::too_many_arguments)]
fn geometry(
    program: &Program,
    shape: &[usize],
    steps: usize,
    k: usize,
    d: usize,
    points: &[usize],
    slabs: Option<&[Option<Compression>]>,
    scheme: Scheme,
) -> Result<Vec<BlockTiles>, usize> {
    let ret = returned(program);
    let tiling = scheme.tiling();
    let mut binding: Vec<usize> = (0..program.arrays.len()).collect();
    let mut blocks = Vec::new();
    let mut first = 0;
    while first < steps {
        let s = k.min(steps - first);
        let spec = BlockSpec {
            program,
            shape,
            steps: s,
            binding: &binding,
            returned: &ret,
            points,
            first: first == 0,
            slabs,
            transfers: scheme.transfers(),
        };
        blocks.push(tiling.tile(&spec, d)?);
        binding = crate::binding::advance(program, &binding, s);
        first += s;
    }
    Ok(blocks)
}

/// Where a block's transfers of compressed arrays go: block 0 loads raw arrays, every later block
/// loads compressed ones; every block but the last writes back compressed.
#[derive(Clone, Copy)]
struct BlockPos {
    first: bool,
    last: bool,
}

struct Emitter<'a> {
    plan: &'a mut Plan,
    b: usize,
    sets: &'a [usize],
    /// Per chunk, its place in the plan's ring.
    ring: Option<&'a [RingChunk]>,
}

impl Emitter<'_> {
    /// Appends an op of chunk `chunk` on its buffer set's stream for the op's role
    /// ([`OpKind::role`], [`Plan::stream`]).
    fn push(&mut self, chunk: usize, kind: OpKind) {
        let sets = self.plan.buffer_sets;
        let stream = Plan::stream_of(sets, self.sets[chunk], kind.role());
        self.plan.ops.push(Op {
            kind,
            stream,
            deps: Vec::new(),
            block: self.b,
            chunk,
        });
    }

    /// Planes `planes` of `array` from the host into chunk `i`'s buffer.
    fn load(&mut self, i: usize, base: usize, array: usize, planes: Range<usize>, pos: BlockPos) {
        let set = self.sets[i];
        let compressed = self.plan.compressed(array).is_some() && !pos.first;
        let staged = self.plan.scheme.transfers().stages_through_pinned_buffers();
        if staged {
            let p = planes.clone();
            self.push(
                i,
                OpKind::StageIn {
                    array,
                    set,
                    base,
                    planes: p,
                },
            );
        }
        let from = if staged {
            HostSide::Staging
        } else if compressed {
            HostSide::Compressed
        } else {
            HostSide::User
        };
        let p = planes.clone();
        self.push(
            i,
            OpKind::HtoD {
                array,
                set,
                base,
                planes: p,
                from,
            },
        );
        if compressed {
            self.push(
                i,
                OpKind::Decode {
                    array,
                    set,
                    base,
                    planes,
                },
            );
        }
    }

    /// Chunk `j`'s owned planes of `array` back to the host: raw into the user's array, or
    /// compressed into the host's compressed copy.
    fn store(
        &mut self,
        j: usize,
        base: usize,
        array: usize,
        planes: Range<usize>,
        compressed: bool,
    ) {
        let set = self.sets[j];
        let staged = self.plan.scheme.transfers().stages_through_pinned_buffers();
        let to = match (compressed, staged) {
            (true, _) => HostSide::Compressed,
            (false, true) => HostSide::Staging,
            (false, false) => HostSide::User,
        };
        if compressed {
            self.push(
                j,
                OpKind::Encode {
                    array,
                    set,
                    base,
                    planes: planes.clone(),
                },
            );
        }
        self.push(
            j,
            OpKind::DtoH {
                array,
                set,
                base,
                planes: planes.clone(),
                to,
            },
        );
        if to == HostSide::Staging {
            self.push(
                j,
                OpKind::StageOut {
                    array,
                    set,
                    base,
                    planes,
                },
            );
        }
    }

    /// Chunk `i`'s planes that come from the host into the ring.
    fn ring_loads(&mut self, i: usize) {
        let (Some(rc), Some(set)) = (self.ring.map(|r| &r[i]), self.ring_set()) else {
            return;
        };
        for (p, planes) in &rc.loads {
            let kind = OpKind::HtoD {
                array: *p,
                set,
                base: rc.base,
                planes: planes.clone(),
                from: HostSide::User,
            };
            self.push(i, kind);
        }
    }

    /// Chunk `i`'s planes that an earlier chunk left in the ring at another base.
    fn ring_copies(&mut self, i: usize) {
        let (Some(rc), Some(set)) = (self.ring.map(|r| &r[i]), self.ring_set()) else {
            return;
        };
        for (p, planes, from_base) in &rc.copies {
            let kind = OpKind::DtoD {
                array: *p,
                from_set: set,
                from_base: *from_base,
                to_set: set,
                to_base: rc.base,
                planes: planes.clone(),
            };
            self.push(i, kind);
        }
    }

    fn ring_set(&self) -> Option<usize> {
        self.plan.ring.as_ref().map(|r| r.set)
    }

    /// Chunk `i`'s shared planes, copied from chunk `i - 1`'s buffer in the tiling's order.
    fn share(&mut self, block: &[ChunkTile], i: usize) {
        for (p, planes) in &block[i].shared {
            let kind = OpKind::DtoD {
                array: *p,
                from_set: self.sets[i - 1],
                from_base: block[i - 1].window.start,
                to_set: self.sets[i],
                to_base: block[i].window.start,
                planes: planes.clone(),
            };
            self.push(i, kind);
        }
    }

    /// Chunk `j`'s write-backs: returned arrays (compressed except in the last block), and in
    /// block 0 of a compressing plan the compressed copies of compressed inputs.
    fn write_back(&mut self, block: &[ChunkTile], j: usize, ret: &[bool], pos: BlockPos) {
        let (base, owned) = (block[j].window.start, block[j].owned.clone());
        for (p, &returned) in ret.iter().enumerate() {
            let comp = self.plan.compressed(p).copied();
            if returned {
                let compressed = comp.is_some() && !pos.last;
                self.store(j, base, p, owned.clone(), compressed);
            } else if comp.is_some_and(|c| !c.written) && pos.first && !pos.last {
                self.store(j, base, p, owned.clone(), true);
            }
        }
    }

    fn work(&mut self, i: usize, c: &ChunkTile, first_step: usize) {
        let (set, base) = (self.sets[i], c.window.start);
        let ring_base = self.ring.map(|r| r[i].base);
        for w in &c.work {
            let kind = match w {
                Work::Kernel {
                    step,
                    kernel,
                    planes,
                    owned,
                    args,
                } => OpKind::Kernel {
                    kernel: *kernel,
                    set,
                    base,
                    step: first_step + step,
                    planes: planes.clone(),
                    owned: owned.clone(),
                    args: args.clone(),
                    ring_base,
                },
                Work::Point {
                    step,
                    point,
                    plane,
                    args,
                } => OpKind::Point {
                    point: *point,
                    set,
                    base,
                    step: first_step + step,
                    plane: *plane,
                    args: args.clone(),
                    ring_base,
                },
            };
            self.push(i, kind);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_block(
    plan: &mut Plan,
    b: usize,
    first_step: usize,
    tiles: &BlockTiles,
    sets: &[usize],
    ring: Option<&[RingChunk]>,
    ret: &[bool],
    pos: BlockPos,
) {
    let block = &tiles.chunks;
    let mut e = Emitter {
        plan,
        b,
        sets,
        ring,
    };
    for (i, c) in block.iter().enumerate() {
        for (p, loads) in c.loads.iter().enumerate() {
            for planes in loads {
                e.load(i, c.window.start, p, planes.clone(), pos);
            }
        }
        // The ring's planes after the sets': they may wait for chunks that still read the slots.
        // Its copies come first, since the loads may land on the slots they copy from; and
        // before the staircase, since their planes were final when loaded, while the
        // staircase waits for the previous chunk's kernels.
        e.ring_copies(i);
        e.ring_loads(i);
        // Block-start values are shared before the previous chunk overwrites them; results (the
        // wavefront's staircase) once it has computed them, after this chunk's loads on the same
        // stream, so that the loads need not wait for the previous chunk's kernels.
        if tiles.share_results && i > 0 {
            e.share(block, i);
        }
        if !tiles.share_results && i + 1 < block.len() {
            e.share(block, i + 1);
        }
        if i > 0 {
            e.write_back(block, i - 1, ret, pos);
        }
        e.work(i, c, first_step);
    }
    e.write_back(block, block.len() - 1, ret, pos);
}

/// The ring of the arrays no kernel writes, and each chunk's place in it (wavefront plans that
/// ask for it; `plan/ring.rs`). Its arrays leave the tiles' loads and shared planes. `None`
/// when nothing qualifies or the windows cannot be placed: the staircase then carries every
/// array, as without the ring.
fn read_only_ring(
    program: &Program,
    opts: &PlanOptions,
    compression: &[Option<Compression>],
    geometry: &mut [BlockTiles],
    n0: usize,
) -> Option<(Ring, Vec<Vec<RingChunk>>)> {
    if !opts.read_only_ring || !opts.scheme.tiling().keeps_read_only_ring() {
        return None;
    }
    let written: Vec<bool> = (0..program.arrays.len())
        .map(|a| crate::binding::written_physically(program, a))
        .collect();
    let arrays = ring::arrays(geometry, &written, compression);
    if !arrays.contains(&true) {
        return None;
    }
    let buffer_planes = (geometry.iter().flat_map(|b| &b.chunks))
        .map(|c| c.window.len())
        .max()?;
    let len = ring::len(n0, opts.buffer_sets, buffer_planes)?;
    let placed = ring::place(geometry, &arrays, len)?;
    ring::strip(geometry, &arrays);
    let ring = Ring {
        set: opts.buffer_sets,
        planes: len,
        arrays,
    };
    Some((ring, placed))
}

fn final_binding(program: &Program, steps: usize) -> Vec<usize> {
    crate::binding::binding_at(program, steps)
}

/// Every pair of operations that touch overlapping bytes, one of them writing, is ordered: the
/// later waits for the earlier, directly or through operations that wait for it (in submission
/// order, which has the serial semantics). Only the accesses a later operation can still
/// conflict with are kept ([`Live`]), so the work is linear in the operations; dependencies
/// implied by stream order are dropped.
///
/// Besides, each load from the host waits for the previous one: the link runs one copy at a
/// time at its full rate, and copies from several streams at once share it unevenly (on the
/// H100 the wavefront's second chunk got its inputs after 350 ms instead of 230 while later
/// chunks' loads ran beside them), so the chunk that computes next gets its planes first.
pub(super) fn derive_dependencies(program: &Program, plan: &mut Plan) {
    let mut live = Live::default();
    let mut conflicts = Vec::new();
    let mut last_load = None;
    for i in 0..plan.ops.len() {
        let mut deps = Vec::new();
        if matches!(plan.ops[i].kind, OpKind::HtoD { .. }) {
            deps.extend(last_load.replace(i));
        }
        let stream = plan.ops[i].stream;
        for acc in accesses(program, plan, &plan.ops[i]) {
            live.access(i, stream, &acc, &mut conflicts);
        }
        deps.extend(conflicts.drain(..).map(|c| c.op));
        // A stream runs its operations in order, so earlier ones on the same stream need no event.
        deps.retain(|&j| j != i && plan.ops[j].stream != stream);
        deps.sort_unstable();
        deps.dedup();
        plan.ops[i].deps = deps;
    }
}

#[cfg(test)]
mod tests {
    use super::super::access::Access;
    use super::super::span::overlaps;
    use super::*;
    use crate::program::fixtures::{leap_and_jacobi, one_kernel};
    use crate::program::Role;
    use std::collections::{HashMap, HashSet};

    /// The dependencies as first written: one list of live accesses per resource, every
    /// access checked against all of them (quadratic in a block's steps, obviously right).
    fn reference(program: &Program, plan: &Plan) -> Vec<Vec<usize>> {
        let mut live: HashMap<super::super::access::Resource, Vec<(usize, Access)>> =
            HashMap::new();
        let mut last_load = None;
        let mut out = Vec::new();
        for i in 0..plan.ops.len() {
            let mut deps = Vec::new();
            if matches!(plan.ops[i].kind, OpKind::HtoD { .. }) {
                deps.extend(last_load.replace(i));
            }
            for acc in accesses(program, plan, &plan.ops[i]) {
                let list = live.entry(acc.resource).or_default();
                for (j, prev) in list.iter() {
                    if (acc.write || prev.write) && overlaps(&prev.slots, &acc.slots) {
                        deps.push(*j);
                    }
                }
                if acc.write {
                    list.retain(|(_, prev)| {
                        !(prev.slots.start >= acc.slots.start && prev.slots.end <= acc.slots.end)
                    });
                }
                list.push((i, acc));
            }
            let stream = plan.ops[i].stream;
            deps.retain(|&j| j != i && plan.ops[j].stream != stream);
            deps.sort_unstable();
            deps.dedup();
            out.push(deps);
        }
        out
    }

    /// Per operation, every earlier operation it is ordered after: through `deps` and the
    /// previous operation on its stream.
    fn ancestors(plan: &Plan) -> Vec<HashSet<usize>> {
        let mut out: Vec<HashSet<usize>> = Vec::with_capacity(plan.ops.len());
        let mut last: HashMap<usize, usize> = HashMap::new();
        for (i, op) in plan.ops.iter().enumerate() {
            let mut anc = HashSet::new();
            for d in op.deps.iter().copied().chain(last.insert(op.stream, i)) {
                anc.insert(d);
                anc.extend(out[d].iter().copied());
            }
            out.push(anc);
        }
        out
    }

    /// The derivation keeps fewer accesses than the reference: an edge the reference adds to an
    /// access that a later write hid is implied through that write, and of two reads of one
    /// stream only the later is waited for. So: (a) every reference edge is implied by the
    /// derived edges and stream order, and (b) every derived edge is one the reference has.
    #[test]
    fn dependencies_imply_the_quadratic_reference_on_every_scheme() {
        let programs = leap_and_jacobi();
        let mut checked = 0;
        for p in &programs {
            for scheme in [
                Scheme::RegionSharing,
                Scheme::Wavefront,
                Scheme::StagedCopy,
                Scheme::DirectMap,
            ] {
                for (chunks, k, steps) in [(1, 7, 7), (3, 2, 5), (4, 3, 9), (2, 1, 4)] {
                    let o = PlanOptions {
                        chunks,
                        block_steps: k,
                        scheme,
                        buffer_sets: scheme.buffer_sets(),
                        ..PlanOptions::default()
                    };
                    let Ok(plan) = build(p, &[40, 12, 12], steps, &[], &o) else {
                        continue;
                    };
                    let want = reference(p, &plan);
                    let anc = ancestors(&plan);
                    let what = format!("{} {scheme} c{chunks} k{k}", p.name);
                    for (i, op) in plan.ops.iter().enumerate() {
                        for j in &want[i] {
                            assert!(anc[i].contains(j), "{what}: op {i} is not after {j}");
                        }
                        for j in &op.deps {
                            assert!(want[i].contains(j), "{what}: op {i} waits for {j}");
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked >= 24, "only {checked} plans built");
    }

    /// Dependency edges per operation of a Jacobi run at one step per block.
    fn edges_per_op(scheme: Scheme, steps: usize) -> (usize, usize) {
        let arrays = [("a", Role::InOut), ("b", Role::InOut)];
        let p = one_kernel("jacobi", &arrays, &[(0, 1)], 1, 1);
        let o = PlanOptions {
            chunks: 4,
            block_steps: 1,
            scheme,
            buffer_sets: scheme.buffer_sets(),
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        let plan = build(&p, &[16, 4, 4], steps, &[], &o).unwrap();
        let edges = plan.ops.iter().map(|o| o.deps.len()).sum();
        (edges, plan.ops.len())
    }

    /// Long runs plan in linear time: the dependency edges grow with the operations, not with
    /// their square. (Region sharing's loads overlap the write-backs only partly, and a host
    /// read used to be dropped only once one write covered it whole: every write-back of a
    /// 1,000-step run depended on all earlier ones, about 500,000 edges.)
    #[test]
    fn dependency_edges_grow_linearly_with_the_steps() {
        for scheme in Scheme::ALL {
            let (edges, ops) = edges_per_op(scheme, 1_000);
            assert!(edges <= 4 * ops, "{scheme}: {edges} edges for {ops} ops");
        }
        let (edges, ops) = edges_per_op(Scheme::RegionSharing, 100_000);
        assert!(ops >= 100_000, "{ops} ops");
        assert!(edges <= 4 * ops, "{edges} edges for {ops} ops");
    }
}
