//! What bytes each operation reads and writes: the basis of dependencies and of the race check.

use super::{HostSide, Op, OpKind, Plan};
use crate::program::Program;
use std::ops::Range;

/// A piece of memory a plan touches. Device and staging buffers are addressed by slot (plane
/// minus the buffer's base), since one buffer set serves different chunks (and the ring,
/// `Device { set: ring.set, .. }`, holds planes at several bases in turn). Compressed memory is
/// addressed by the planes its slabs cover (plane ranges are whole slabs there, so two ranges
/// share bytes exactly when they share planes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    Host {
        array: usize,
    },
    Device {
        set: usize,
        array: usize,
    },
    Staging {
        set: usize,
        array: usize,
    },
    /// The host's compressed copy of an array.
    HostCompressed {
        array: usize,
    },
    /// A set's compressed staging area on the device for an array.
    DeviceCompressed {
        set: usize,
        array: usize,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub resource: Resource,
    pub slots: Range<usize>,
    pub write: bool,
}

fn at(resource: Resource, planes: &Range<usize>, base: usize, write: bool) -> Access {
    Access {
        resource,
        slots: planes.start - base..planes.end - base,
        write,
    }
}

/// The user's memory behind `array`: a fused run's twin is its original's
/// (`Program::host_array`), so a twin's write-back and the next chunk's load of the original
/// are ordered like any two accesses of one array.
fn host(program: &Program, array: usize, planes: &Range<usize>, write: bool) -> Access {
    let array = program.host_array(array);
    at(Resource::Host { array }, planes, 0, write)
}

fn side(
    program: &Program,
    side: HostSide,
    set: usize,
    array: usize,
    planes: &Range<usize>,
    base: usize,
    write: bool,
) -> Access {
    match side {
        HostSide::User => host(program, array, planes, write),
        HostSide::Staging => at(Resource::Staging { set, array }, planes, base, write),
        HostSide::Compressed => at(Resource::HostCompressed { array }, planes, 0, write),
    }
}

/// The device end of a transfer: the buffer, or the compressed staging area when the host end is
/// the compressed copy.
fn device_end(side: HostSide, set: usize, array: usize) -> Resource {
    match side {
        HostSide::Compressed => Resource::DeviceCompressed { set, array },
        HostSide::User | HostSide::Staging => Resource::Device { set, array },
    }
}

/// The accesses of one operation.
pub fn accesses(program: &Program, plan: &Plan, op: &Op) -> Vec<Access> {
    match &op.kind {
        OpKind::Kernel { .. } | OpKind::Point { .. } => compute_accesses(program, plan, &op.kind),
        kind => transfer_accesses(program, kind),
    }
}

/// What a transfer, staging copy, device copy or codec operation reads and writes: its source
/// and its destination.
fn transfer_accesses(program: &Program, kind: &OpKind) -> Vec<Access> {
    let dev = |set, array| Resource::Device { set, array };
    match kind {
        OpKind::HtoD {
            array,
            set,
            base,
            planes,
            from,
        } => vec![
            side(program, *from, *set, *array, planes, *base, false),
            at(device_end(*from, *set, *array), planes, *base, true),
        ],
        OpKind::DtoH {
            array,
            set,
            base,
            planes,
            to,
        } => vec![
            at(device_end(*to, *set, *array), planes, *base, false),
            side(program, *to, *set, *array, planes, *base, true),
        ],
        OpKind::Decode {
            array,
            set,
            base,
            planes,
        } => vec![
            at(
                device_end(HostSide::Compressed, *set, *array),
                planes,
                *base,
                false,
            ),
            at(dev(*set, *array), planes, *base, true),
        ],
        OpKind::Encode {
            array,
            set,
            base,
            planes,
        } => vec![
            at(dev(*set, *array), planes, *base, false),
            at(
                device_end(HostSide::Compressed, *set, *array),
                planes,
                *base,
                true,
            ),
        ],
        OpKind::StageIn {
            array,
            set,
            base,
            planes,
        } => vec![
            host(program, *array, planes, false),
            at(
                Resource::Staging {
                    set: *set,
                    array: *array,
                },
                planes,
                *base,
                true,
            ),
        ],
        OpKind::StageOut {
            array,
            set,
            base,
            planes,
        } => vec![
            at(
                Resource::Staging {
                    set: *set,
                    array: *array,
                },
                planes,
                *base,
                false,
            ),
            host(program, *array, planes, true),
        ],
        OpKind::DtoD {
            array,
            from_set,
            from_base,
            to_set,
            to_base,
            planes,
        } => vec![
            at(dev(*from_set, *array), planes, *from_base, false),
            at(dev(*to_set, *array), planes, *to_base, true),
        ],
        OpKind::Exchange {
            set,
            base,
            arrays,
            links,
            ..
        } => arrays
            .iter()
            .flat_map(|&array| {
                links.iter().flat_map(move |l| {
                    [
                        at(dev(*set, array), &l.send, *base, false),
                        at(dev(*set, array), &l.recv, *base, true),
                    ]
                })
            })
            .collect(),
        // Kernels and point statements: `compute_accesses`.
        OpKind::Kernel { .. } | OpKind::Point { .. } => Vec::new(),
    }
}

/// What a kernel or point statement reads (its stencil's reach, clipped to the arrays) and
/// writes, in the buffers its arguments name: the ring's arrays in the ring, at `ring_base`.
fn compute_accesses(program: &Program, plan: &Plan, kind: &OpKind) -> Vec<Access> {
    let n0 = plan.shape[0];
    let buffer = |set: usize, base: usize, ring_base: Option<usize>, array: usize| match (
        &plan.ring, ring_base,
    ) {
        (Some(r), Some(rb)) if plan.in_ring(array) => (Resource::Device { set: r.set, array }, rb),
        _ => (Resource::Device { set, array }, base),
    };
    match kind {
        OpKind::Kernel {
            kernel,
            set,
            base,
            planes,
            args,
            ring_base,
            ..
        } => {
            let kd = &program.kernels[*kernel];
            let mut v: Vec<Access> = kd
                .reads
                .iter()
                .filter_map(|r| {
                    let lo = (planes.start as i64 + r.lo[0]).max(0) as usize;
                    let hi = ((planes.end as i64 + r.hi[0]).max(0) as usize).min(n0);
                    let (res, b) = buffer(*set, *base, *ring_base, args[r.array]);
                    (lo < hi).then(|| at(res, &(lo..hi), b, false))
                })
                .collect();
            v.extend(kd.writes.iter().map(|&w| {
                let (res, b) = buffer(*set, *base, *ring_base, args[w]);
                at(res, planes, b, true)
            }));
            v
        }
        OpKind::Point {
            point,
            set,
            base,
            plane,
            args,
            ring_base,
            ..
        } => {
            let pd = &program.points[*point];
            let p = *plane..*plane + 1;
            let access = |a: usize, write: bool| {
                let (res, b) = buffer(*set, *base, *ring_base, args[a]);
                at(res, &p, b, write)
            };
            let mut v: Vec<Access> = pd.reads.iter().map(|&r| access(r, false)).collect();
            v.push(access(pd.array, true));
            v
        }
        _ => transfer_accesses(program, kind),
    }
}
