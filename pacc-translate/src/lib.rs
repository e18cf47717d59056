//! The pacc translator: a serial stencil function annotated with `#[pacc::pipeline(...)]`
//! -> stencil IR -> analyses -> CUDA C, CPU closures, a `Program` description and the wrapper.
//!
//! Pipeline: [`parse`] (directive, signature) -> [`lower`] (body -> [`ir`]) -> [`analysis`]
//! (reach/halo, roles, races, types) -> [`codegen`]; [`typing`] holds the type facts lowering
//! and analysis share.
//!
//! Users reach it through `#[pacc::pipeline]`; [`translate`] gives the pieces for inspection
//! (`pacc expand` prints them):
//!
//! ```
//! let item = "
//!     fn heat(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) {
//!         let (ny, nx) = a.dim();
//!         for _t in 0..steps {
//!             for y in 1..ny - 1 {
//!                 for x in 1..nx - 1 {
//!                     b[[y, x]] = a[[y, x]] + 0.1 * (a[[y - 1, x]] + a[[y + 1, x]]
//!                         + a[[y, x - 1]] + a[[y, x + 1]] - 4.0 * a[[y, x]]);
//!                 }
//!             }
//!             std::mem::swap(a, b);
//!         }
//!     }";
//! let t = pacc_translate::translate(Default::default(), item.parse().unwrap()).unwrap();
//! assert_eq!(t.program.halo, 1); // the reach the code reads
//! assert_eq!(t.program.kernels.len(), 1); // one loop nest, one kernel
//! assert!(t.cuda.contains("__global__ void pacc_heat_k0"));
//! ```

pub mod analysis;
pub mod codegen;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod typing;

use proc_macro2::TokenStream;
use quote::quote;

pub use analysis::Analysis;

/// Everything the translator produced for one function.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The IR (for inspection and tests).
    pub func: ir::Func,
    pub analysis: Analysis,
    /// The program description the generated code hands the runtime.
    pub program: pacc_runtime::Program,
    /// CUDA C of every kernel and point statement.
    pub cuda: String,
    /// The generated Rust: the wrapper fn and `mod <name>`.
    pub host: TokenStream,
    /// What the translator changed in the user's code that a reader should know of (loops
    /// reordered to the arrays' layout); `pacc plan` and [`Translation::summary`] print them.
    pub notes: Vec<String>,
}

impl Translation {
    /// A short human-readable summary of the IR.
    pub fn summary(&self) -> String {
        let p = &self.program;
        let mut s = format!(
            "fn {}: {}D, halo {}, {} array(s), {} kernel(s), {} point(s), {} reduction(s)\n",
            p.name,
            p.ndim,
            p.halo,
            p.arrays.len(),
            p.kernels.len(),
            p.points.len(),
            p.reductions.len()
        );
        for a in &p.arrays {
            s += &format!("  array {}: {} {:?}\n", a.name, a.elem.rust_name(), a.role);
        }
        for k in &p.kernels {
            s += &format!(
                "  kernel {}: writes {:?}, reductions {:?}\n",
                k.name, k.writes, k.reductions
            );
            for r in &k.reads {
                s += &format!(
                    "    reads {}: {:?}..={:?}\n",
                    p.arrays[r.array].name, r.lo, r.hi
                );
            }
        }
        for n in &self.notes {
            s += &format!("  note: {n}\n");
        }
        s
    }
}

/// Whether an attribute is `#[pacc::pipeline(..)]` or `#[pipeline(..)]`.
pub fn is_pipeline_attr(a: &syn::Attribute) -> bool {
    let segs = parse::path_names(a.path());
    matches!(
        segs.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .as_slice(),
        ["pipeline"] | ["pacc", "pipeline"]
    )
}

/// Whether an attribute is `#[pacc::stencils]` or `#[stencils]`.
pub fn is_stencils_attr(a: &syn::Attribute) -> bool {
    let segs = parse::path_names(a.path());
    matches!(
        segs.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .as_slice(),
        ["stencils"] | ["pacc", "stencils"]
    )
}

/// Translates one annotated function (`args`: the attribute's arguments, `item`: the fn).
pub fn translate(args: TokenStream, item: TokenStream) -> Result<Translation, syn::Error> {
    translate_with(args, item, &[])
}

/// [`translate`] with `helpers` in reach: the plain functions of the `#[pacc::stencils]`
/// module holding the function, which calls in its time loop and kernels inline.
pub fn translate_with(
    args: TokenStream,
    item: TokenStream,
    helpers: &[syn::ItemFn],
) -> Result<Translation, syn::Error> {
    let item: syn::ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("#[pacc::pipeline] applies to a function: {e}"),
        )
    })?;
    parse::reserved::check(&item)?;
    let directive = parse::args::parse(args);
    let lowered = lower::lower_with(item, directive.clone().unwrap_or_default(), helpers);
    let (directive, mut func) = match (directive, lowered) {
        (Ok(d), Ok(f)) => (d, f),
        (Err(mut a), Err(b)) => {
            a.combine(b);
            return Err(a);
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    func.directive = directive;
    let analysis = analysis::analyse(&mut func)?;
    let elems: Vec<_> = func.arrays.iter().map(|a| a.elem).collect();
    let cuda = codegen::cuda::source(&func, &analysis, &elems);
    let program = codegen::program::build(&func, &analysis, cuda.clone());
    let host = codegen::wrapper::generate(&func, &analysis, &program);
    let notes = reorder_notes(&func);
    Ok(Translation {
        func,
        analysis,
        program,
        cuda,
        host,
        notes,
    })
}

/// The attribute macro's expansion: the generated code, or `compile_error!`s followed by the
/// unchanged function.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    match translate(args, item.clone()) {
        Ok(t) => t.host,
        Err(e) => {
            let errs = e.to_compile_error();
            quote!(#errs #item)
        }
    }
}

/// The plain functions among `items`: the helpers a `#[pacc::stencils]` module hands each of
/// its pipelined functions.
pub fn module_helpers(items: &[syn::Item]) -> Vec<syn::ItemFn> {
    (items.iter())
        .filter_map(|it| match it {
            syn::Item::Fn(f) if !f.attrs.iter().any(is_pipeline_attr) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

/// The `#[pacc::stencils]` attribute's expansion: the inline module with each
/// `#[pacc::pipeline(..)]` function in it expanded, the module's plain functions in reach as
/// helpers (a pipeline macro alone sees only its own function). The module's other items are
/// kept as they are.
pub fn expand_module(args: TokenStream, item: TokenStream) -> TokenStream {
    let fail = |e: syn::Error, item: &TokenStream| {
        let errs = e.to_compile_error();
        quote!(#errs #item)
    };
    if !args.is_empty() {
        let e = syn::Error::new_spanned(&args, "`#[pacc::stencils]` takes no arguments; give the clauses to each `#[pacc::pipeline(..)]` inside the module");
        return fail(e, &item);
    }
    let mut m: syn::ItemMod = match syn::parse2(item.clone()) {
        Ok(m) => m,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                format!("#[pacc::stencils] applies to an inline module `mod m {{ .. }}`: {e}"),
            );
            return fail(e, &item);
        }
    };
    let Some((_, items)) = &mut m.content else {
        let e = syn::Error::new_spanned(&m, "#[pacc::stencils] needs the module's items in place (`mod m { .. }`, not `mod m;`): a macro sees only the tokens it annotates");
        return fail(e, &item);
    };
    let helpers = module_helpers(items);
    let mut out = Vec::new();
    for it in items.drain(..) {
        let syn::Item::Fn(f) = &it else {
            out.push(quote!(#it));
            continue;
        };
        let Some(attr) = f.attrs.iter().find(|a| is_pipeline_attr(a)) else {
            out.push(quote!(#it));
            continue;
        };
        let args = match &attr.meta {
            syn::Meta::List(l) => l.tokens.clone(),
            _ => TokenStream::new(),
        };
        let mut f = f.clone();
        f.attrs.retain(|a| !is_pipeline_attr(a));
        let tokens = quote!(#f);
        out.push(match translate_with(args, tokens.clone(), &helpers) {
            Ok(t) => t.host,
            Err(e) => fail(e, &tokens),
        });
    }
    let (attrs, vis, unsafety, mod_token, ident) =
        (&m.attrs, &m.vis, &m.unsafety, &m.mod_token, &m.ident);
    quote!(#(#attrs)* #vis #unsafety #mod_token #ident { #(#out)* })
}

/// One function of a file, expanded.
#[derive(Clone, Debug)]
pub struct FileExpansion {
    pub name: String,
    pub cuda: String,
    /// The generated Rust, pretty-printed.
    pub host: String,
    pub program: pacc_runtime::Program,
    /// [`Translation::notes`].
    pub notes: Vec<String>,
}

/// The deepest nesting of brackets (`()`, `[]`, `{}`) [`expand_file`] takes. The parser and
/// the translator recurse once or more per level, so a deeper file would exhaust the stack
/// (5,000 parentheses aborted the process); real stencil code nests a few tens deep.
pub const MAX_NESTING: usize = 256;

/// Refuses a source whose brackets nest deeper than [`MAX_NESTING`], naming where. Lexes
/// without recursing (proc-macro2 keeps its own stack), and walks the groups with an explicit
/// stack too.
fn check_nesting(source: &str) -> Result<(), String> {
    // A source that does not lex is left to the parser, which says why.
    let Ok(tokens) = source.parse::<TokenStream>() else {
        return Ok(());
    };
    let mut stack = vec![(tokens.into_iter(), 0usize)];
    while let Some((mut trees, depth)) = stack.pop() {
        let Some(tree) = trees.next() else { continue };
        stack.push((trees, depth));
        if let proc_macro2::TokenTree::Group(g) = tree {
            if depth + 1 > MAX_NESTING {
                let s = g.span().start();
                return Err(format!(
                    "the brackets nest more than {MAX_NESTING} deep at line {}, column {}; \
                     pacc expands code nested at most {MAX_NESTING} deep (split the expression \
                     with `let` bindings)",
                    s.line,
                    s.column + 1
                ));
            }
            stack.push((g.stream().into_iter(), depth + 1));
        }
    }
    Ok(())
}

/// Finds the functions carrying `#[pacc::pipeline(..)]` (or `#[pipeline(..)]`) in a source file
/// (also inside inline modules) and translates each, or only `function` if given. A file whose
/// brackets nest deeper than [`MAX_NESTING`] is refused.
pub fn expand_file(source: &str, function: Option<&str>) -> Result<Vec<FileExpansion>, String> {
    check_nesting(source)?;
    let file = syn::parse_file(source).map_err(|e| {
        let s = e.span().start();
        format!(
            "cannot parse the file: {e} (line {}, column {})",
            s.line,
            s.column + 1
        )
    })?;
    let mut fns = Vec::new();
    collect_fns(&file.items, &[], &mut fns);
    let mut out = Vec::new();
    for (f, attr, helpers) in fns {
        if function.map(|n| f.sig.ident != n).unwrap_or(false) {
            continue;
        }
        let args = match &attr.meta {
            syn::Meta::List(l) => l.tokens.clone(),
            _ => TokenStream::new(),
        };
        let mut item = f.clone();
        item.attrs.retain(|a| !is_pipeline_attr(a));
        let name = f.sig.ident.to_string();
        let t = translate_with(args, quote!(#item), &helpers).map_err(|e| {
            let s = e.span().start();
            format!("`{name}` (line {}, column {}): {e}", s.line, s.column + 1)
        })?;
        let host = match syn::parse2::<syn::File>(t.host.clone()) {
            Ok(f) => prettyplease::unparse(&f),
            Err(_) => t.host.to_string(),
        };
        out.push(FileExpansion {
            name,
            cuda: t.cuda,
            host,
            program: t.program,
            notes: t.notes,
        });
    }
    if let Some(n) = function {
        if out.is_empty() {
            return Err(format!(
                "no function `{n}` with #[pacc::pipeline] in the file"
            ));
        }
    }
    Ok(out)
}

/// The pipelined functions of `items` (inline modules included), each with the helpers of
/// the `#[pacc::stencils]` module holding it (`helpers`: those of the module `items` is).
type Found<'a> = (&'a syn::ItemFn, &'a syn::Attribute, Vec<syn::ItemFn>);

fn collect_fns<'a>(items: &'a [syn::Item], helpers: &[syn::ItemFn], out: &mut Vec<Found<'a>>) {
    for it in items {
        match it {
            syn::Item::Fn(f) => {
                if let Some(a) = f.attrs.iter().find(|a| is_pipeline_attr(a)) {
                    out.push((f, a, helpers.to_vec()));
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    let inner = if m.attrs.iter().any(is_stencils_attr) {
                        module_helpers(items)
                    } else {
                        Vec::new()
                    };
                    collect_fns(items, &inner, out);
                }
            }
            _ => {}
        }
    }
}

/// The notes of [`Translation::notes`]: each nest whose loops were reordered (here, above the
/// IR, analysis and lowering, which it takes from: in `ir.rs` it closed an import cycle).
fn reorder_notes(f: &ir::Func) -> Vec<String> {
    let sums_in = |n: &ir::Nest| {
        let mut sums = false;
        analysis::walk_stmts(
            &n.body,
            &mut |s| {
                sums |= matches!(
                    s,
                    ir::KStmt::Reduce {
                        op: pacc_runtime::program::ReduceOp::Sum,
                        ..
                    }
                );
            },
            &mut |_| {},
        );
        sums
    };
    (f.nests().enumerate())
        .filter_map(|(k, n)| {
            let written = n.written.as_ref()?;
            Some(lower::interchange::note(k, written, &n.vars, sums_in(n)))
        })
        .collect()
}
