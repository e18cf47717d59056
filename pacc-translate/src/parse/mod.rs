//! From tokens to the IR's outer shell: the directive and the function's parameters.

pub mod args;
pub mod reserved;
pub mod sig;

/// The identifiers of a path's segments (`std::mem::swap` -> `["std", "mem", "swap"]`), which
/// the translator matches paths against.
pub fn path_names(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}
