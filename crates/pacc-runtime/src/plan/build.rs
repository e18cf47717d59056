use super::{Plan, PlanError, PlanOptions};
use crate::program::Program;

/// Builds the plan for running `program` on arrays of `shape` for `steps` time steps.
/// `points[p]` is the plane (axis-0 index) point statement `p` writes.
pub fn build(
    program: &Program,
    shape: &[usize],
    steps: usize,
    points: &[usize],
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    let _ = (program, shape, steps, points, opts);
    todo!()
}
