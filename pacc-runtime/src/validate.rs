//! Call validation, in one place: the checks of a call against its program ([`call`], which the
//! session runs before planning) and of a plan against the call ([`execution`], which every
//! executor runs before it touches any data, so that a malformed plan or invocation is a typed
//! error instead of an out-of-bounds access on any backend). Touches no data.

use crate::binding::written_physically;
use crate::error::{Error, Result};
use crate::invocation::{Invocation, ScalarValue};
use crate::plan::{HostSide, Op, OpKind, Plan};
use crate::program::{Elem, Program, ScalarType};
use std::ops::Range;

/// The checks every executor runs first: that the invocation matches the program as far as
/// memory safety rests on it, that every operation of the plan stays inside the arrays and
/// buffers, then the call's own checks ([`call`]).
pub fn execution(program: &Program, plan: &Plan, inv: &Invocation<'_>) -> Result<()> {
    arrays_match(program, inv)?;
    plan_fits(program, plan, inv)?;
    call(program, inv)
}

/// Checks the call against the program: its description first (an internal error when the
/// translator's description and the call disagree), then what the user can get wrong (shapes,
/// sizes against the stencil's reach, read-only or overlapping arrays, point indices).
pub fn call(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    description(program, inv)?;
    let shape = inv.arrays[0].shape();
    shapes(program, inv)?;
    if inv.steps > 0 {
        check_halo(program, shape)?;
        // Before any tuner or executor touches the arrays: every nest's ranges and reads.
        crate::plan::nests_in_bounds(program, shape)?;
    }
    writable_and_disjoint(program, inv)?;
    scalars_and_slices(program, inv)?;
    if inv.steps > 0 {
        slice_lengths(program, inv, shape)?;
    }
    counts(program, inv)?;
    // The serial loop evaluates point statements only when it runs a step.
    if inv.steps > 0 {
        points_inside(program, inv, shape)?;
    }
    Ok(())
}

/// The program with every loop bound that counts from a scalar replaced by its value for this
/// call ([`Program::resolved`]): what the session plans, tunes and runs. Touches no data.
pub fn resolve<'p>(
    program: &'p Program,
    inv: &Invocation<'_>,
) -> Result<std::borrow::Cow<'p, Program>> {
    if inv.scalars.len() != program.scalars.len() {
        return internal(format!(
            "{} scalars passed, the program has {}",
            inv.scalars.len(),
            program.scalars.len()
        ));
    }
    Ok(program.resolved(|s| inv.scalars.get(s).and_then(integer))?)
}

fn internal<T>(m: String) -> Result<T> {
    Err(Error::Internal(m))
}

/// Axes, array count and element types of the call against the program's description.
fn description(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    if program.ndim != 2 && program.ndim != 3 {
        return internal(format!(
            "program `{}` has {} axes",
            program.name, program.ndim
        ));
    }
    if inv.arrays.len() != program.arrays.len() || inv.arrays.is_empty() {
        return internal(format!(
            "{} arrays passed, the program `{}` has {}",
            inv.arrays.len(),
            program.name,
            program.arrays.len()
        ));
    }
    for (a, (h, d)) in inv.arrays.iter().zip(&program.arrays).enumerate() {
        if h.elem != d.elem {
            return internal(format!(
                "array {a} `{}` holds {} but the program declares {}",
                d.name,
                elem_name(h.elem),
                elem_name(d.elem)
            ));
        }
        if h.ndim != program.ndim {
            return internal(format!(
                "array `{}` has {} axes but the program uses {}",
                d.name, h.ndim, program.ndim
            ));
        }
    }
    Ok(())
}

/// Every array has the first one's shape, and none is empty.
fn shapes(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    let first = &inv.arrays[0];
    for (h, d) in inv.arrays.iter().zip(&program.arrays) {
        if h.shape() != first.shape() {
            return Err(Error::ShapeMismatch {
                name: d.name.clone(),
                got: h.shape().to_vec(),
                first: program.arrays[0].name.clone(),
                want: first.shape().to_vec(),
            });
        }
    }
    for (h, d) in inv.arrays.iter().zip(&program.arrays) {
        if h.is_empty() {
            return Err(Error::Empty {
                name: d.name.clone(),
                shape: h.shape().to_vec(),
            });
        }
    }
    Ok(())
}

/// Arrays the run writes were passed mutably, and share memory with no other array.
fn writable_and_disjoint(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    for (a, (h, d)) in inv.arrays.iter().zip(&program.arrays).enumerate() {
        if !h.writable && written_physically(program, a) {
            return Err(Error::ReadOnly {
                name: d.name.clone(),
            });
        }
    }
    for i in 0..inv.arrays.len() {
        for j in i + 1..inv.arrays.len() {
            if program.host_array(i) == program.host_array(j) {
                continue; // a fused run's output buffer and its array
            }
            if !written_physically(program, i) && !written_physically(program, j) {
                continue; // memory the run only reads may be passed twice (`f(&u, &u, ..)`)
            }
            let (x, y) = (&inv.arrays[i], &inv.arrays[j]);
            let (x0, y0) = (x.ptr as usize, y.ptr as usize);
            if x0 < y0 + y.bytes() && y0 < x0 + x.bytes() {
                return Err(Error::Overlap {
                    a: program.arrays[i].name.clone(),
                    b: program.arrays[j].name.clone(),
                });
            }
        }
    }
    Ok(())
}

fn scalars_and_slices(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    if inv.scalars.len() != program.scalars.len() {
        return internal(format!(
            "{} scalars passed, the program has {}",
            inv.scalars.len(),
            program.scalars.len()
        ));
    }
    for (v, d) in inv.scalars.iter().zip(&program.scalars) {
        if v.ty() != d.ty {
            return internal(format!(
                "scalar `{}` passed as {} but declared {}",
                d.name,
                scalar_type_name(v.ty()),
                scalar_type_name(d.ty)
            ));
        }
    }
    if inv.slices.len() != program.slices.len() {
        return internal(format!(
            "{} slices passed, the program has {}",
            inv.slices.len(),
            program.slices.len()
        ));
    }
    for (s, d) in inv.slices.iter().zip(&program.slices) {
        if s.elem != d.elem {
            return internal(format!(
                "slice `{}` holds {} but is declared {}",
                d.name,
                elem_name(s.elem),
                elem_name(d.elem)
            ));
        }
    }
    Ok(())
}

/// Every slice holds the elements the time loop reads (`SliceDecl::reads`): the CPU closures
/// index it with the user's expression, which would panic past its end, and a CUDA kernel
/// would read past the device copy.
fn slice_lengths(program: &Program, inv: &Invocation<'_>, shape: &[usize]) -> Result<()> {
    let last_t = i64::try_from(inv.steps - 1)
        .ok()
        .and_then(|s| inv.t0.checked_add(s));
    let Some(last_t) = last_t else {
        return internal(format!("{} steps from t = {}", inv.steps, inv.t0));
    };
    for (s, d) in inv.slices.iter().zip(&program.slices) {
        for read in &d.reads {
            let mut values = Vec::with_capacity(read.scalars.len());
            for term in &read.scalars {
                match inv.scalars.get(term.scalar).and_then(integer) {
                    Some(v) => values.push(v),
                    None => {
                        return internal(format!(
                            "slice `{}` is indexed by scalar {}, which is not an integer",
                            d.name, term.scalar
                        ))
                    }
                }
            }
            let value = |scalar: usize| {
                let at = read.scalars.iter().position(|t| t.scalar == scalar);
                at.map_or(0, |i| values[i])
            };
            let Some((first, last)) = read.bounds((inv.t0, last_t), shape, value) else {
                continue;
            };
            if first < 0 || last >= s.len() as i128 {
                return Err(slice_error(&d.name, s.len(), first, last));
            }
        }
    }
    Ok(())
}

fn slice_error(name: &str, len: usize, first: i128, last: i128) -> Error {
    let clamp = |v: i128| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
    Error::SliceTooShort {
        name: name.to_string(),
        len,
        first: clamp(first),
        last: clamp(last),
    }
}

/// An integer scalar's value.
fn integer(v: &ScalarValue) -> Option<i128> {
    Some(match *v {
        ScalarValue::I32(x) => x.into(),
        ScalarValue::I64(x) => x.into(),
        ScalarValue::U32(x) => x.into(),
        ScalarValue::U64(x) => x.into(),
        ScalarValue::Usize(x) => x as i128,
        ScalarValue::Isize(x) => x as i128,
        ScalarValue::F32(_) | ScalarValue::F64(_) | ScalarValue::Bool(_) => return None,
    })
}

/// Reduction initial values, reset values and point indices: one per declaration. (The CPU
/// closures are checked by the CPU executor: the CUDA backend does not need them.)
fn counts(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    let counts = [
        (
            "reduction initial values",
            inv.reduction_init.len(),
            program.reductions.len(),
        ),
        ("reset values", inv.reset_values.len(), program.resets.len()),
        ("point indices", inv.points.len(), program.points.len()),
    ];
    for (what, got, want) in counts {
        if got != want {
            return internal(format!("{got} {what} passed, the program has {want}"));
        }
    }
    Ok(())
}

fn points_inside(program: &Program, inv: &Invocation<'_>, shape: &[usize]) -> Result<()> {
    for (idx, d) in inv.points.iter().zip(&program.points) {
        let inside = idx.len() == shape.len()
            && idx
                .iter()
                .zip(shape)
                .all(|(&i, &n)| i >= 0 && (i as u64) < n as u64);
        if !inside {
            return Err(Error::PointOutOfBounds {
                point: d.name.clone(),
                index: idx.clone(),
                shape: shape.to_vec(),
            });
        }
    }
    Ok(())
}

/// Refuses arrays too small along some axis for the widest stencil to update a single point
/// (its nest is then empty; the serial loop would do nothing or panic on a `usize` underflow).
fn check_halo(program: &Program, shape: &[usize]) -> Result<()> {
    for (axis, &extent) in shape.iter().enumerate() {
        for k in &program.kernels {
            let reach_lo = k
                .reads
                .iter()
                .filter_map(|r| r.lo.get(axis))
                .map(|&l| (-l).max(0) as usize)
                .max()
                .unwrap_or(0);
            let reach_hi = k
                .reads
                .iter()
                .filter_map(|r| r.hi.get(axis))
                .map(|&h| h.max(0) as usize)
                .max()
                .unwrap_or(0);
            let need = reach_lo + reach_hi + 1;
            if extent < need {
                return Err(Error::SmallerThanHalo {
                    axis,
                    extent,
                    need,
                    reach_lo,
                    reach_hi,
                });
            }
        }
    }
    Ok(())
}

fn scalar_type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::I32 => "i32",
        ScalarType::I64 => "i64",
        ScalarType::U32 => "u32",
        ScalarType::U64 => "u64",
        ScalarType::Usize => "usize",
        ScalarType::Isize => "isize",
        ScalarType::Bool => "bool",
    }
}

fn elem_name(e: Elem) -> &'static str {
    e.rust_name()
}

/// What memory safety rests on even when an executor is called without `run`: the arrays, their
/// element types and the per-declaration values match the program.
fn arrays_match(program: &Program, inv: &Invocation<'_>) -> Result<()> {
    let ok = inv.arrays.len() == program.arrays.len()
        && inv
            .arrays
            .iter()
            .zip(&program.arrays)
            .all(|(h, d)| h.elem == d.elem)
        && inv.reduction_init.len() == program.reductions.len()
        && inv.reset_values.len() == program.resets.len();
    if !ok {
        return internal(
            "the invocation's arrays, element types or reduction values do not match the program"
                .into(),
        );
    }
    Ok(())
}

/// The plan was made for these arrays, and every operation stays inside the arrays and buffers,
/// so running it cannot touch memory the executor does not own.
fn plan_fits(program: &Program, plan: &Plan, inv: &Invocation<'_>) -> Result<()> {
    if plan.shape.len() != program.ndim || plan.shape.is_empty() {
        return internal(format!(
            "plan shape {:?} does not match the program's {} axes",
            plan.shape, program.ndim
        ));
    }
    if let Some(first) = inv.arrays.first() {
        if first.shape() != plan.shape.as_slice() {
            return Err(Error::ShapeMismatch {
                name: program.arrays[0].name.clone(),
                got: first.shape().to_vec(),
                first: "the plan".into(),
                want: plan.shape.clone(),
            });
        }
    }
    if plan.elem_sizes.len() != program.arrays.len() {
        return internal("the plan and the program disagree on the arrays".into());
    }
    let plane_len: usize = plan.shape[1..].iter().product();
    if plane_len != plan.plane_len {
        return internal(format!(
            "plan plane_len {} but the shape {:?} has {plane_len} elements per plane",
            plan.plane_len, plan.shape
        ));
    }
    if !plan.compression.is_empty() && plan.compression.len() != program.arrays.len() {
        return internal("the plan's compression settings do not match the arrays".into());
    }
    if let Some(r) = &plan.ring {
        // The ring holds each array once for every chunk: only arrays nothing writes.
        let written =
            (0..program.arrays.len()).any(|a| plan.in_ring(a) && written_physically(program, a));
        if r.set != plan.buffer_sets || r.arrays.len() != program.arrays.len() || written {
            return internal(
                "the plan's ring is not one past the buffer sets, or holds an array the program \
                 writes"
                    .into(),
            );
        }
    }
    for (i, op) in plan.ops.iter().enumerate() {
        if let Some(what) = op_fault(program, plan, inv, i, op) {
            return internal(format!("plan operation {i} ({:?}): {what}", op.kind));
        }
    }
    Ok(())
}

/// Why operation `i` could touch memory outside what the executor allocates from the plan (or
/// run before what it depends on), if it could.
fn op_fault(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    i: usize,
    op: &Op,
) -> Option<String> {
    if let Some(d) = op.deps.iter().find(|&&d| d >= i) {
        return Some(format!("depends on operation {d}, which is not earlier"));
    }
    let ring = plan.ring.as_ref().map(|r| r.set);
    let sets_ok = match (&op.kind, op.kind.buffer_planes()) {
        (_, Some(b)) => plan.has_buffer(b.set, b.array),
        (OpKind::Kernel { set, ring_base, .. } | OpKind::Point { set, ring_base, .. }, None) => {
            *set < plan.buffer_sets && ring_base.is_some() == ring.is_some()
        }
        (
            OpKind::DtoD {
                array,
                from_set,
                to_set,
                ..
            },
            None,
        ) => plan.has_buffer(*from_set, *array) && plan.has_buffer(*to_set, *array),
        (OpKind::Exchange { set, arrays, .. }, None) => {
            arrays.iter().all(|&a| plan.has_buffer(*set, a))
        }
        // Every other kind has buffer planes (the first arm).
        (_, None) => false,
    };
    if !sets_ok {
        return Some(format!(
            "names a buffer set the plan has no buffer of for its array (sets 0..{}{})",
            plan.buffer_sets,
            ring.map_or(String::new(), |r| format!(", ring {r}"))
        ));
    }
    compressed_op_fault(program, plan, &op.kind).or_else(|| range_fault(program, plan, inv, op))
}

/// A plane range inside the host array and inside the window at `base` of set `set`'s buffers.
fn in_window(plan: &Plan, set: usize, planes: &Range<usize>, base: usize) -> bool {
    planes.is_empty()
        || (planes.start >= base
            && planes.end <= plan.shape[0]
            && planes.end - base <= plan.buffer_len(set))
}

/// A kernel's or point statement's planes inside its chunk's window and, with a ring, inside
/// the ring's window at `ring_base` (where it reads the ring's arrays).
fn compute_in_window(
    plan: &Plan,
    set: usize,
    planes: &Range<usize>,
    base: usize,
    ring_base: Option<usize>,
) -> bool {
    // The executors offset the ring's pointers by `base - ring_base` planes.
    let ring = match (&plan.ring, ring_base) {
        (Some(r), Some(rb)) => rb <= base && in_window(plan, r.set, planes, rb),
        _ => true,
    };
    ring && in_window(plan, set, planes, base)
}

/// An operation's arrays, kernels, steps and planes out of range, or a write to a read-only
/// host array.
fn range_fault(program: &Program, plan: &Plan, inv: &Invocation<'_>, op: &Op) -> Option<String> {
    let narrays = program.arrays.len();
    let out = |array: usize, set: usize, planes: &Range<usize>, base: usize| {
        array >= narrays || !in_window(plan, set, planes, base)
    };
    let read_only =
        |array: usize, planes: &Range<usize>| !planes.is_empty() && !inv.arrays[array].writable;
    let args_ok = |args: &[usize]| {
        args.len() == narrays
            && args
                .iter()
                .enumerate()
                .all(|(a, &p)| p < narrays && program.arrays[p].elem == program.arrays[a].elem)
    };
    let bad = |what: &str| Some(what.to_string());
    let range = "array or planes out of range";
    if let Some(b) = op.kind.buffer_planes() {
        return if out(b.array, b.set, b.planes, b.base) {
            bad(range)
        } else if (op.kind.written_user_planes()).is_some_and(|(a, p)| read_only(a, p)) {
            bad("writes a read-only host array")
        } else {
            None
        };
    }
    match &op.kind {
        OpKind::DtoD {
            array,
            from_set,
            from_base,
            to_set,
            to_base,
            planes,
        } => (out(*array, *from_set, planes, *from_base) || out(*array, *to_set, planes, *to_base))
            .then(|| range.to_string()),
        OpKind::Kernel {
            kernel,
            set,
            base,
            step,
            planes,
            args,
            ring_base,
            ..
        } => (*kernel >= program.kernels.len()
            || *step >= plan.steps
            || !compute_in_window(plan, *set, planes, *base, *ring_base)
            || !args_ok(args))
        .then(|| "kernel, step, planes or arguments out of range".to_string()),
        OpKind::Point {
            point,
            set,
            base,
            step,
            plane,
            args,
            ring_base,
        } => (*point >= program.points.len()
            || *step >= plan.steps
            || !compute_in_window(plan, *set, &(*plane..*plane + 1), *base, *ring_base)
            || !args_ok(args))
        .then(|| "point, step, plane or arguments out of range".to_string()),
        OpKind::Exchange {
            set,
            base,
            arrays,
            links,
            ..
        } => {
            // Sent and received planes must not overlap: the two ends move at once.
            let bad_link =
                |l: &crate::plan::HaloLink| l.send.start < l.recv.end && l.recv.start < l.send.end;
            let outside = arrays.iter().any(|&a| {
                links
                    .iter()
                    .any(|l| out(a, *set, &l.send, *base) || out(a, *set, &l.recv, *base))
            });
            (outside || links.iter().any(bad_link))
                .then(|| "exchanged array or planes out of range, or overlapping".to_string())
        }
        // The kinds with buffer planes were checked above.
        _ => None,
    }
}

/// For an operation on compressed data: why it could touch bytes outside the compressed copies
/// and staging areas the executor allocates from the plan, if it could.
fn compressed_op_fault(program: &Program, plan: &Plan, kind: &OpKind) -> Option<String> {
    let (array, base, planes) = match kind {
        OpKind::Encode {
            array,
            base,
            planes,
            ..
        }
        | OpKind::Decode {
            array,
            base,
            planes,
            ..
        }
        | OpKind::HtoD {
            array,
            base,
            planes,
            from: HostSide::Compressed,
            ..
        }
        | OpKind::DtoH {
            array,
            base,
            planes,
            to: HostSide::Compressed,
            ..
        } => (*array, *base, planes),
        _ => return None,
    };
    let n0 = plan.shape[0];
    let Some(c) = plan
        .compressed(array)
        .filter(|_| array < program.arrays.len())
    else {
        return Some("moves compressed data of an array the plan does not compress".into());
    };
    let codec = c.codec.get();
    if codec.slab_bytes(&plan.shape[1..], c.rate).ok() != Some(c.slab_bytes)
        || codec.slab_planes() != c.slab_planes
    {
        return Some("the plan's slab size disagrees with the codec".into());
    }
    let slab = c.slab_planes;
    let aligned = base % slab == 0
        && planes.start % slab == 0
        && (planes.end % slab == 0 || planes.end == n0)
        && planes.start >= base
        && planes.end <= n0
        && planes.end - base <= plan.buffer_planes;
    (!aligned || !plan.compresses())
        .then(|| "compressed planes not in whole slabs inside the window".into())
}
