//! `#[pacc::pipeline(...)]`: a thin entry point over [`pacc_translate::expand`]. On a
//! translation error it emits `compile_error!`s followed by the unchanged function.

use proc_macro::TokenStream;

/// Turns a serial stencil function into a chunked, temporally blocked pipeline. Clauses (all
/// optional): `halo = N`, `chunks = N`, `block_steps = N`, `input(..)`, `inout(..)`,
/// `scratch(..)`. See the pacc documentation for the supported surface.
#[proc_macro_attribute]
pub fn pipeline(args: TokenStream, item: TokenStream) -> TokenStream {
    pacc_translate::expand(args.into(), item.into()).into()
}
