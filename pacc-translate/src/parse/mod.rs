//! From tokens to the IR's outer shell: the directive and the function's parameters.

pub mod args;
pub mod sig;
