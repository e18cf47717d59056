//! `#[pacc::pipeline(...)]`: a thin entry point over [`pacc_translate::expand`]. On a
//! translation error it emits `compile_error!`s followed by the unchanged function.
//!
//! Use the attribute through the `pacc` crate (`#[pacc::pipeline]`): the code it generates
//! names the runtime as `::pacc::runtime`. What it expands to can be looked at without a
//! compiler run, through the translator:
//!
//! ```
//! let item: proc_macro2::TokenStream = "
//!     fn smooth(a: &mut ndarray::Array2<f32>, b: &mut ndarray::Array2<f32>, steps: usize) {
//!         let (ny, nx) = a.dim();
//!         for _t in 0..steps {
//!             for y in 1..ny - 1 {
//!                 for x in 1..nx - 1 {
//!                     b[[y, x]] = 0.5 * a[[y, x]] + 0.125 * (a[[y - 1, x]] + a[[y + 1, x]]
//!                         + a[[y, x - 1]] + a[[y, x + 1]]);
//!                 }
//!             }
//!             std::mem::swap(a, b);
//!         }
//!     }"
//! .parse()
//! .unwrap();
//! let out = pacc_translate::expand("halo = 1".parse().unwrap(), item).to_string();
//! assert!(out.contains("pub fn try_run"));
//! assert!(!out.contains("compile_error"));
//! ```

use proc_macro::TokenStream;

/// Turns a serial stencil function into a chunked, temporally blocked pipeline with the same
/// signature, plus a module of the same name (`serial`, `run`, `try_run`, `CUDA_SOURCE`,
/// `program`).
///
/// Clauses, all optional and checked against the code:
///
/// | clause | meaning |
/// | --- | --- |
/// | `halo = H` | the read reach; an error if smaller than what the code reads |
/// | `chunks = D` | default number of chunks of the outermost axis |
/// | `block_steps = K` | default number of time steps per block (temporal blocking depth) |
/// | `input(a, ..)` | arrays the kernels only read (inferred otherwise) |
/// | `inout(a, ..)` | arrays the kernels write and the caller gets back (inferred otherwise) |
/// | `scratch(a, ..)` | arrays the kernels write whose final contents the caller does not need (never copied back) |
/// | `compress(a = R, ..)` | keep these arrays compressed between blocks at `R` bits per value (fixed-rate zfp; lossy) |
/// | `compress(a = R, .., codec = f16)` | the same with another codec: `zfp` (the default) or `f16` (f32 arrays as IEEE binary16, rate 16 only); `Options::codec` and `PACC_CODEC` override it |
///
/// Run-time options (`pacc::Options`, or the `PACC_*` environment variables for the plain
/// call and `try_run`) override `chunks`, `block_steps` and `compress`. The function's body
/// must be: statements, one time loop `for t in a..b { .. }`, statements; the time loop holds
/// perfect loop nests over the arrays, `std::mem::swap` of arrays, reduction resets and
/// single-point statements. Anything else is a compile error that points at the construct.
/// See the `pacc` crate's documentation and its README for the whole surface.
#[proc_macro_attribute]
pub fn pipeline(args: TokenStream, item: TokenStream) -> TokenStream {
    pacc_translate::expand(args.into(), item.into()).into()
}

/// Hands the plain functions of an inline module to each `#[pacc::pipeline]` function in it,
/// so that calls of them in a time loop or a kernel are inlined (a `#[pacc::pipeline]` macro
/// alone sees only the function it annotates, and functions nested in its body):
///
/// ```ignore
/// #[pacc::stencils]
/// mod sim {
///     fn avg4(a: f32, b: f32, c: f32, d: f32) -> f32 { 0.25 * (a + b + c + d) }
///     #[pacc::pipeline]
///     pub fn smooth(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) { .. }
/// }
/// ```
///
/// The module's items are kept as they are, the pipelined functions expanded as
/// `#[pacc::pipeline]` expands them; their `serial` originals call the helpers as written.
#[proc_macro_attribute]
pub fn stencils(args: TokenStream, item: TokenStream) -> TokenStream {
    pacc_translate::expand_module(args.into(), item.into()).into()
}
