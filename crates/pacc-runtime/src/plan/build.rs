//! Assembling the plan: chunk geometry per block, transfers per scheme, streams, dependencies.

use super::access::{accesses, Access};
use super::infer::{bindings_through_step, infer, returned, ChunkWork, Work};
use super::span::{intersect, overlaps, subtract, Span};
use super::{BlockGeom, ChunkGeom, HostSide, Op, OpKind, Plan, PlanError, PlanOptions, Scheme};
use crate::program::Program;
use std::collections::HashMap;
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
    let n0 = shape[0];
    let k = opts.block_steps.min(steps.max(1));
    let mut adjustments = Vec::new();
    let mut chunks = opts.chunks;
    let geometry = loop {
        let g = geometry(program, shape, steps, k, chunks, points);
        match thin_chunk(&g, opts.scheme, &returned(program)) {
            None => break g,
            Some(need) if chunks > 1 => {
                let _ = need;
                chunks -= 1;
            }
            Some(need) => {
                return Err(PlanError::TooThin {
                    scheme: opts.scheme,
                    need,
                    block_steps: k,
                    planes: n0,
                })
            }
        }
    };
    if chunks != opts.chunks {
        adjustments.push(format!(
            "{}: with {} chunks of about {} planes, a chunk's halo for {k} block steps would reach \
             back to planes two chunks earlier, which are written back before it loads; using \
             {chunks} chunks instead (ask for fewer block steps to keep more chunks)",
            opts.scheme,
            opts.chunks,
            n0 / opts.chunks
        ));
    }
    let sets = opts.buffer_sets;
    let mut plan = Plan {
        shape: shape.to_vec(),
        steps,
        scheme: opts.scheme,
        chunks,
        requested_chunks: opts.chunks,
        block_steps: k,
        adjustments,
        buffer_sets: sets,
        buffer_planes: geometry
            .iter()
            .flatten()
            .map(|c| c.window.len())
            .max()
            .unwrap_or(0),
        plane_len: shape[1..].iter().product(),
        elem_sizes: program.arrays.iter().map(|a| a.elem.size()).collect(),
        streams: 2 * sets,
        blocks: Vec::new(),
        ops: Vec::new(),
        final_binding: final_binding(program, steps),
    };
    let ret = returned(program);
    let mut seq = 0usize;
    for (b, block) in geometry.iter().enumerate() {
        let first_step = b * k;
        let chunk_sets: Vec<usize> = (0..block.len()).map(|i| (seq + i) % sets).collect();
        seq += block.len();
        emit_block(&mut plan, b, first_step, block, &chunk_sets, &ret);
        plan.blocks.push(BlockGeom {
            first_step,
            steps: (steps - first_step).min(k),
            chunks: block
                .iter()
                .zip(&chunk_sets)
                .map(|(c, &set)| ChunkGeom {
                    owned: c.owned.clone(),
                    window: c.window.clone(),
                    set,
                })
                .collect(),
        });
    }
    derive_dependencies(program, &mut plan);
    Ok(plan)
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
    for k in &program.kernels {
        for (axis, (range, &n)) in k.ranges.iter().zip(shape).enumerate() {
            let (lo, hi) = (range.lo.eval(n), range.hi.eval(n));
            if lo >= hi {
                continue;
            }
            for r in &k.reads {
                let (first, last) = (lo + r.lo[axis], hi - 1 + r.hi[axis]);
                if first < 0 || last >= n as i64 || lo < 0 || hi > n as i64 {
                    return Err(PlanError::TooSmall {
                        kernel: k.name.clone(),
                        axis,
                        extent: n,
                        first: first.min(lo),
                        last: last.max(hi - 1),
                    });
                }
            }
        }
    }
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

struct ChunkPlan {
    owned: Range<usize>,
    window: Range<usize>,
    work: ChunkWork,
}

/// Owned planes of chunk `i` of `d`: as even as possible, the larger chunks last.
pub fn owned(n0: usize, d: usize, i: usize) -> Range<usize> {
    (i * n0 / d)..((i + 1) * n0 / d)
}

fn geometry(
    program: &Program,
    shape: &[usize],
    steps: usize,
    k: usize,
    d: usize,
    points: &[usize],
) -> Vec<Vec<ChunkPlan>> {
    let n0 = shape[0];
    let ret = returned(program);
    let mut binding: Vec<usize> = (0..program.arrays.len()).collect();
    let mut blocks = Vec::new();
    let mut first = 0;
    while first < steps {
        let s = k.min(steps - first);
        let block = (0..d)
            .map(|i| {
                let own = owned(n0, d, i);
                let work = infer(program, shape, &own, s, &binding, &ret, points);
                ChunkPlan {
                    owned: own,
                    window: work.window.clone(),
                    work,
                }
            })
            .collect();
        blocks.push(block);
        for _ in 0..s {
            binding = bindings_through_step(program, &binding).1;
        }
        first += s;
    }
    blocks
}

/// In submission order a chunk's results are written back before the chunk two places later
/// loads its inputs; if that chunk's halo reaches back into them it would read the new values.
/// Returns the thickness a chunk would need, if some chunk is too thin.
fn thin_chunk(blocks: &[Vec<ChunkPlan>], scheme: Scheme, returned: &[bool]) -> Option<usize> {
    for block in blocks {
        for j in 0..block.len() {
            for m in j + 2..block.len() {
                for p in (0..returned.len()).filter(|&p| returned[p]) {
                    let reads = loads(block, m, p, scheme).0;
                    if reads.iter().any(|r| overlaps(r, &block[j].owned)) {
                        let lowest = reads.iter().map(|r| r.start).min().unwrap_or(0);
                        return Some(block[m].owned.start - lowest);
                    }
                }
            }
        }
    }
    None
}

/// Planes of physical array `p` chunk `i` gets from the host, and those it gets from the
/// previous chunk's buffer (region sharing).
fn loads(block: &[ChunkPlan], i: usize, p: usize, scheme: Scheme) -> (Vec<Range<usize>>, Span) {
    let need = &block[i].work.load[p];
    if scheme != Scheme::RegionSharing || i == 0 {
        return (need.iter().cloned().collect(), None);
    }
    let shared = intersect(need, &block[i - 1].work.load[p]);
    (subtract(need, &shared), shared)
}

fn emit_block(
    plan: &mut Plan,
    b: usize,
    first_step: usize,
    block: &[ChunkPlan],
    sets: &[usize],
    ret: &[bool],
) {
    let scheme = plan.scheme;
    let narrays = ret.len();
    let push = |plan: &mut Plan, chunk: usize, input: bool, kind: OpKind| {
        let stream = 2 * sets[chunk] + usize::from(!input);
        plan.ops.push(Op {
            kind,
            stream,
            deps: Vec::new(),
            block: b,
            chunk,
        });
    };
    let write_back = |plan: &mut Plan, j: usize| {
        let (set, base) = (sets[j], block[j].window.start);
        for p in (0..narrays).filter(|&p| ret[p]) {
            let planes = block[j].owned.clone();
            if scheme == Scheme::StagedCopy {
                push(
                    plan,
                    j,
                    false,
                    OpKind::DtoH {
                        array: p,
                        set,
                        base,
                        planes: planes.clone(),
                        to: HostSide::Staging,
                    },
                );
                push(
                    plan,
                    j,
                    false,
                    OpKind::StageOut {
                        array: p,
                        set,
                        base,
                        planes,
                    },
                );
            } else {
                push(
                    plan,
                    j,
                    false,
                    OpKind::DtoH {
                        array: p,
                        set,
                        base,
                        planes,
                        to: HostSide::User,
                    },
                );
            }
        }
    };
    for (i, c) in block.iter().enumerate() {
        let (set, base) = (sets[i], c.window.start);
        for p in 0..narrays {
            for planes in loads(block, i, p, scheme).0 {
                if scheme == Scheme::StagedCopy {
                    push(
                        plan,
                        i,
                        true,
                        OpKind::StageIn {
                            array: p,
                            set,
                            base,
                            planes: planes.clone(),
                        },
                    );
                    push(
                        plan,
                        i,
                        true,
                        OpKind::HtoD {
                            array: p,
                            set,
                            base,
                            planes,
                            from: HostSide::Staging,
                        },
                    );
                } else {
                    push(
                        plan,
                        i,
                        true,
                        OpKind::HtoD {
                            array: p,
                            set,
                            base,
                            planes,
                            from: HostSide::User,
                        },
                    );
                }
            }
        }
        if scheme == Scheme::RegionSharing && i + 1 < block.len() {
            let next = &block[i + 1];
            for p in 0..narrays {
                if let (_, Some(planes)) = loads(block, i + 1, p, scheme) {
                    let kind = OpKind::DtoD {
                        array: p,
                        from_set: set,
                        from_base: base,
                        to_set: sets[i + 1],
                        to_base: next.window.start,
                        planes,
                    };
                    push(plan, i + 1, true, kind);
                }
            }
        }
        if i > 0 {
            write_back(plan, i - 1);
        }
        for w in &c.work.work {
            let kind = match w {
                Work::Kernel {
                    step,
                    kernel,
                    planes,
                    args,
                } => OpKind::Kernel {
                    kernel: *kernel,
                    set,
                    base,
                    step: first_step + step,
                    planes: planes.clone(),
                    owned: c.owned.clone(),
                    args: args.clone(),
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
                },
            };
            push(plan, i, false, kind);
        }
    }
    write_back(plan, block.len() - 1);
}

fn final_binding(program: &Program, steps: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..program.arrays.len()).collect();
    let period = super::swap_period(program);
    for _ in 0..steps % period {
        b = bindings_through_step(program, &b).1;
    }
    b
}

/// Every pair of operations that touch overlapping bytes, one of them writing, gets a
/// dependency from the later to the earlier (in submission order, which has the serial
/// semantics); dependencies implied by stream order are dropped.
fn derive_dependencies(program: &Program, plan: &mut Plan) {
    // Per resource, the accesses since the last write that covered them.
    let mut live: HashMap<super::access::Resource, Vec<(usize, Access)>> = HashMap::new();
    for i in 0..plan.ops.len() {
        let mut deps = Vec::new();
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
        // A stream runs its operations in order, so earlier ones on the same stream need no event.
        let stream = plan.ops[i].stream;
        deps.retain(|&j| j != i && plan.ops[j].stream != stream);
        deps.sort_unstable();
        deps.dedup();
        plan.ops[i].deps = deps;
    }
}
