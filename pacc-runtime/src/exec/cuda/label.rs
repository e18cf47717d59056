//! How an operation is named in traces, fault messages and the report's stage times: the plan's
//! labels (`crate::plan::display`), the one home of an operation's name.

use crate::plan::OpKind;
use crate::program::Program;

/// The stage an operation's time counts toward (`"htod"`, `"kernel"`, ...) and its trace name.
pub(super) fn op_label(program: &Program, k: &OpKind) -> (&'static str, String) {
    (k.stage(), k.describe(program))
}
