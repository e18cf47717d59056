//! The entry point generated wrappers call: validate, plan, pick a backend, execute, report.

use crate::error::Error;
use crate::invocation::{Invocation, RunOutput};
use crate::options::Options;
use crate::program::Program;

/// Runs one call of a translated function.
pub fn run(program: &Program, inv: Invocation<'_>, opts: &Options) -> Result<RunOutput, Error> {
    let _ = (program, inv, opts);
    todo!("helper implements")
}
