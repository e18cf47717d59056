//! Fused runs: the program and invocation the planner and executors see when a kernel advances
//! several steps per launch (docs/internals.md §3).
//!
//! A fused kernel ([`FusedDecl`](crate::program::FusedDecl)) reads every array's input at its
//! group's start and writes the last version of each array the group writes into an output
//! buffer of its own: it cannot update in place, since a neighbouring block may still read the
//! old values of its halo. So
//! the run's program gets one array per output buffer, the *twins*, and its step becomes the
//! kernel, a swap of each written array with its twin (the name now refers to the buffer with
//! its new values), the step's own swaps repeated as often as the group has steps, and the same
//! renaming among the twins (each twin follows its array's name, so that at every group's start
//! a written name and its twin share host memory, and the names are bound to host memory as the
//! serial loop leaves them after as many steps). The planner and the executors need nothing
//! else: a twin is an array like the others whose host memory is its original's (one of the two
//! holds the current values at every block boundary, and only names the caller sees are loaded
//! or written back), so the invocation lists that memory twice.

use crate::error::Error;
use crate::invocation::Invocation;
use crate::program::{
    Active, ArrayDecl, AxisRange, Bound, FusionError, KernelDecl, Launch, Program, ReduceEvent,
    Role, Stage,
};
use crate::settled::Settled;

/// `program` prepared to run `steps` steps per launch through its fused kernel, or why it
/// cannot be.
pub fn program(program: &Program, steps: usize) -> Result<Program, FusionError> {
    let decl = program.fusion.get(steps)?.clone();
    let n = program.arrays.len();
    let mut arrays = program.arrays.clone();
    for (k, &a) in decl.outputs.iter().enumerate() {
        arrays.push(ArrayDecl {
            name: format!("{}~{k}", program.arrays[a].name),
            elem: program.arrays[a].elem,
            role: Role::Scratch,
        });
    }
    let full = AxisRange {
        lo: Bound::start(0),
        hi: Bound::end(0),
    };
    let kernel = KernelDecl {
        name: decl.name.clone(),
        ranges: vec![full; program.ndim],
        reads: decl.reads.clone(),
        writes: (n..n + decl.outputs.len()).collect(),
        reductions: decl
            .events
            .iter()
            .filter_map(|e| match e {
                ReduceEvent::Reduce(r) => Some(*r),
                ReduceEvent::Reset(_) => None,
            })
            .collect(),
        launch: Launch::Fused {
            block: decl.block,
            halo: decl.halo,
            vector: decl.vector_block(),
        },
        guarded: Vec::new(),
    };
    let mut step = vec![Stage::Kernel(0)];
    step.extend(
        decl.outputs
            .iter()
            .enumerate()
            .map(|(k, &a)| Stage::Swap(a, n + k)),
    );
    let swaps = program
        .step
        .iter()
        .filter(|s| matches!(s, Stage::Swap(..)))
        .copied();
    let swaps: Vec<Stage> = swaps.collect();
    for _ in 0..steps {
        step.extend(swaps.iter().copied());
    }
    step.extend(twin_swaps(program, &decl.outputs, steps)?);
    let halo = decl
        .reads
        .iter()
        .flat_map(|r| r.lo.iter().chain(&r.hi))
        .map(|v| v.unsigned_abs() as usize)
        .max()
        .unwrap_or(0);
    let twins = decl.outputs.clone();
    let mut out = program.clone();
    out.arrays = arrays;
    out.kernels = vec![kernel];
    out.step = step;
    out.halo = halo;
    out.fusion.active = Some(Active {
        decl,
        twins,
        nests: program.kernels.clone(),
        step: program.step.clone(),
    });
    Ok(out)
}

/// The fused run's program `fused` ([`program`]) launching its vector form with `block`, one
/// of the blocks the form fits (`FusedDecl::vector_blocks`), instead of the default: the block
/// compiled in (`PACC_FVBX`/`PACC_FVBY`) and launched with come from these two places.
pub fn with_vector_block(fused: &Program, block: [u32; 2]) -> Program {
    let mut out = fused.clone();
    if let Some(a) = out.fusion.active.as_mut() {
        let blocks = &mut a.decl.vector_blocks;
        blocks.retain(|&b| b != block);
        blocks.insert(0, block);
    }
    for k in &mut out.kernels {
        if let Launch::Fused { vector, .. } = &mut k.launch {
            *vector = Some(block);
        }
    }
    out
}

/// The swaps that move the twins of `outputs` as `steps` steps of the program's swaps move the
/// names: afterwards the twin of `x` is the buffer the twin of `rho(x)` was, where `rho(x)` is
/// the array name `x` refers to after the steps. At a group's start each written name and its
/// twin share host memory; the group's new version of `x` goes to the twin, and the swaps of the
/// step then bind every name to the buffer the serial loop's name would have in host memory.
/// That holds only where `rho` takes the written names to written names (the translator fuses
/// no other group).
fn twin_swaps(
    program: &Program,
    outputs: &[usize],
    steps: usize,
) -> Result<Vec<Stage>, FusionError> {
    let n = program.arrays.len();
    let rho = crate::binding::binding_at(program, steps);
    let twin = |a: usize| outputs.iter().position(|&o| o == a);
    // Per twin k: the twin (index among the twins) whose buffer it takes.
    let target = outputs
        .iter()
        .map(|&x| {
            twin(rho[x]).ok_or_else(|| FusionError::Rebinds {
                steps,
                name: program.arrays[x].name.clone(),
                other: program.arrays[rho[x]].name.clone(),
            })
        })
        .collect::<Result<Vec<usize>, FusionError>>()?;
    // Swaps that leave twin k bound to what twin target[k] was bound to.
    let mut bound: Vec<usize> = (0..outputs.len()).collect();
    let mut out = Vec::new();
    for k in 0..outputs.len() {
        if bound[k] != target[k] {
            let j = (k + 1..outputs.len())
                .find(|&j| bound[j] == target[k])
                .expect("a permutation");
            bound.swap(k, j);
            out.push(Stage::Swap(n + k, n + j));
        }
    }
    Ok(out)
}

/// The invocation of a fused run: steps counted in groups, the twins' host memory their
/// originals' (listed a second time, by the crate-private `Invocation::with_twins`).
///
/// # Safety
///
/// The result describes each twin's memory twice, writable both times: it is handed whole to
/// executions of `program`, one at a time, and no array is taken out of it (a second run on a
/// twin taken out would share its memory with this one's).
pub unsafe fn invocation<'a>(
    program: &Program,
    inv: Invocation<'a>,
    steps: usize,
) -> Invocation<'a> {
    match &program.fusion.active {
        Some(a) => {
            let mut inv = inv.with_twins(&a.twins);
            inv.steps /= steps;
            inv
        }
        None => inv,
    }
}

/// The coordinates of the point statements a fused kernel applies, as its parameters take them
/// (one per axis, point after point); empty for other programs.
pub fn point_coords(program: &Program, points: &[Vec<i64>]) -> Vec<i64> {
    let Some(a) = &program.fusion.active else {
        return Vec::new();
    };
    a.decl
        .points
        .iter()
        .flat_map(|&p| (0..program.ndim).map(move |d| points[p].get(d).copied().unwrap_or(0)))
        .collect()
}

/// A call of `total` steps asked to run `steps` steps per launch, as `run` and `pacc plan` set
/// it up: refused where it cannot ([`refuse`], naming where the request came from), else
/// `popts`' block steps counted in launches (groups of `steps`). Returns the launches.
pub fn in_groups(
    program: &Program,
    total: usize,
    steps: usize,
    settled: &Settled,
    popts: &mut crate::plan::PlanOptions,
) -> Result<usize, Error> {
    let from = settled.fuse_from.clone();
    refuse(program, total, steps, from, settled, popts.compresses())?;
    popts.block_steps = popts.block_steps.div_ceil(steps);
    Ok(total / steps)
}

/// Why a call cannot run fused `steps` steps per launch: a step count that is no multiple of the
/// group, and the features a fused run does not combine with yet. `from` names where the
/// request came from.
pub fn refuse(
    program: &Program,
    total: usize,
    steps: usize,
    from: String,
    settled: &Settled,
    compressed: bool,
) -> Result<(), Error> {
    let problem = if let Err(why) = program.fusion.get(steps) {
        Some((
            format!(
                "`{}` has no kernel fusing {steps} steps: {why}",
                program.name
            ),
            "leave it unset (or 1) for the single-step kernels".to_string(),
        ))
    } else if total % steps != 0 {
        Some((
            format!("a fused run takes the steps in groups of {steps}, and the call has {total}"),
            format!("ask for a multiple of {steps} steps, or leave it unset"),
        ))
    } else if settled.durable {
        Some((
            "a fused run does not write or resume checkpoints yet".into(),
            "leave it unset for a checkpointed run".into(),
        ))
    } else if compressed {
        Some((
            "a fused run does not compress arrays yet".into(),
            "leave it unset for a compressed run".into(),
        ))
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some((problem, fix)) => Err(Error::Setting {
            setting: "fuse",
            value: steps.to_string(),
            from,
            problem,
            fix,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_count_without_a_kernel_is_a_typed_error_naming_the_generated_ones() {
        let arrays = [("a", Role::InOut), ("b", Role::InOut)];
        let mut p = crate::program::fixtures::one_kernel("p", &arrays, &[(0, 1)], 1, 1);
        let e = program(&p, 2).unwrap_err();
        let none = FusionError::NotGenerated {
            steps: 2,
            generated: vec![],
        };
        assert_eq!(e, none);
        assert_eq!(e.to_string(), "the program has no fused form");
        p.fusion.refused.push((3, "a reason".into()));
        let e = p.fusion.get(3).unwrap_err();
        assert!(matches!(&e, FusionError::Refused { steps: 3, why } if why == "a reason"));
        assert_eq!(e.to_string(), "a reason");
    }
}
