//! placeholder
pub const SOURCE: &str = "";
