//! Reductions across chunks and time steps, as every executor must combine them (contract §4).

use crate::invocation::Invocation;
use crate::program::{Elem, Program, ReduceEvent, ReduceOp, Stage};

use super::reduction_identity;

/// `a op b` in the reduction's own type (values travel as f64 holding that type exactly, so
/// f32 sums are added as f32).
pub fn combine(op: ReduceOp, elem: Elem, a: f64, b: f64) -> f64 {
    match elem {
        Elem::F64 => match op {
            ReduceOp::Sum => a + b,
            ReduceOp::Min => a.min(b),
            ReduceOp::Max => a.max(b),
        },
        Elem::F32 => {
            let (a, b) = (a as f32, b as f32);
            (match op {
                ReduceOp::Sum => a + b,
                ReduceOp::Min => a.min(b),
                ReduceOp::Max => a.max(b),
            }) as f64
        }
    }
}

/// The final value of every reduction: walks the steps as the serial loop would, starting from
/// the values before the loop. A reset sets its reduction; a kernel combines in its step total,
/// the combination of `parts(step, kernel)`: each chunk's partials (one per reduction of the
/// kernel), in chunk order.
pub fn walk_steps<'p>(
    program: &Program,
    inv: &Invocation<'_>,
    steps: usize,
    mut parts: impl FnMut(usize, usize) -> Vec<&'p [f64]>,
) -> Vec<f64> {
    let mut value = inv.reduction_init.clone();
    // A fused kernel's resets sit between its partials, in the order of the steps it fuses.
    let events = program
        .fusion
        .active
        .as_ref()
        .map(|a| a.decl.events.as_slice());
    for step in 0..steps {
        for stage in &program.step {
            match *stage {
                Stage::Reset(r) => value[program.resets[r].reduction] = inv.reset_values[r],
                Stage::Kernel(k) if events.is_some_and(|e| !e.is_empty()) => {
                    let chunks = parts(step, k);
                    let mut j = 0;
                    for e in events.unwrap_or_default() {
                        match *e {
                            ReduceEvent::Reset(i) => {
                                value[program.resets[i].reduction] = inv.reset_values[i]
                            }
                            ReduceEvent::Reduce(r) => {
                                fold(program, r, &chunks, j, &mut value);
                                j += 1;
                            }
                        }
                    }
                }
                Stage::Kernel(k) if !program.kernels[k].reductions.is_empty() => {
                    let chunks = parts(step, k);
                    for (j, &r) in program.kernels[k].reductions.iter().enumerate() {
                        fold(program, r, &chunks, j, &mut value);
                    }
                }
                _ => {}
            }
        }
    }
    value
}

/// Adds partial `j` of every chunk, in chunk order, into reduction `r`'s value.
fn fold(program: &Program, r: usize, chunks: &[&[f64]], j: usize, value: &mut [f64]) {
    let d = &program.reductions[r];
    let total = chunks.iter().fold(reduction_identity(d.op), |acc, p| {
        combine(d.op, d.elem, acc, p[j])
    });
    value[r] = combine(d.op, d.elem, value[r], total);
}
