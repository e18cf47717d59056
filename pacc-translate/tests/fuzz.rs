//! Translator robustness: random and mutated token streams, functions and attribute arguments
//! fed to `translate`, `expand` and `expand_file`. Errors are fine; a panic is a bug.
//!
//! Every input is built from a proptest "tape" of `u32` choices (choice 0 is always the
//! simplest), so proptest's shrinking of the tape shrinks the input. A bounded number of cases
//! runs in CI (`PACC_FUZZ_CASES`, default 256 per property); run more locally with e.g.
//! `PACC_FUZZ_CASES=20000 cargo test -p pacc-translate --test fuzz -- --nocapture` (not
//! `--release`: that turns off the overflow checks the fuzz relies on). Inputs that once
//! panicked are kept in `REGRESSIONS`.

mod progen;
mod programs;

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use quote::ToTokens;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use progen::{generate, Tape, CLAUSES};

// ---------------------------------------------------------------------------------------------
// The corpus: every `#[pacc::pipeline]` function of the example programs and the UI tests.

const UI: &[&str] = &[
    include_str!("../../tests/translate_e2e.rs"),
    include_str!("../../tests/ui/bad_elem_type.rs"),
    include_str!("../../tests/ui/bound_reads_loop_var.rs"),
    include_str!("../../tests/ui/clause_not_param.rs"),
    include_str!("../../tests/ui/halo_too_small.rs"),
    include_str!("../../tests/ui/imperfect_nest.rs"),
    include_str!("../../tests/ui/input_written.rs"),
    include_str!("../../tests/ui/method_self.rs"),
    include_str!("../../tests/ui/mixed_rank.rs"),
    include_str!("../../tests/ui/no_time_loop.rs"),
    include_str!("../../tests/ui/non_constant_offset.rs"),
    include_str!("../../tests/ui/race_read_offset.rs"),
    include_str!("../../tests/ui/scratch_read_first.rs"),
    include_str!("../../tests/ui/two_time_loops.rs"),
    include_str!("../../tests/ui/unknown_clause.rs"),
    include_str!("../../tests/ui/unsupported_expr.rs"),
    include_str!("../../tests/ui/unsupported_method.rs"),
    include_str!("../../tests/ui/unsupported_step_stmt.rs"),
    include_str!("../../tests/ui/unsupported_stmt.rs"),
    include_str!("../../tests/ui/untyped_scalar.rs"),
    include_str!("../../tests/ui/write_at_offset.rs"),
    include_str!("../../tests/ui/wrong_index_count.rs"),
];

/// More shapes of valid input: 1D, slices, points, min/max reductions, `if`, casts, constants.
const EXTRA: &str = r#"
#[pacc::pipeline]
fn types(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) -> f32 {
    let (ny, nx) = a.dim();
    let c = 0.5;
    let mut m = 0.0;
    for t in 0..n {
        for y in 0..ny {
            for x in 0..nx {
                let s = c * b[[y, x]] + t as f32;
                let h = 0.5;
                let k = 2;
                a[[y, x]] = s * h + (k as f32);
                m = m.max(s);
            }
        }
    }
    m
}

#[pacc::pipeline(halo = 1, chunks = 2, block_steps = 3, input(b), inout(a))]
fn methods(a: &mut Array3<f64>, b: ArrayView3<f64>, n: usize) {
    let (nz, ny, nx) = a.dim();
    for _ in 0..n {
        for z in 1..=nz - 2 {
            for y in 0..ny {
                for x in 0..nx {
                    let v = b[[z - 1, y, x]].abs().sqrt().mul_add(2.0, 1.0);
                    a[[z, y, x]] = if v > 1.0 { v.powi(2) } else { f64::max(v, 0.5) };
                }
            }
        }
    }
}

#[pacc::pipeline]
fn one_d(u: &mut Array1<f32>, v: &mut Array1<f32>, w: &[f32], k: f32, steps: usize) -> f32 {
    let nx = u.len_of(Axis(0));
    let mut lo: f32 = f32::INFINITY;
    for t in 1..=steps {
        lo = 1.0;
        for x in 1..nx - 1 {
            let mut s = u[[x - 1]] - 2.0 * u[[x]] + u[[x + 1]];
            if s < 0.0 { s = -s; } else if s > 1.0 { s = 1.0; } else { s *= 0.5; }
            v[[x]] = u[[x]] + k * s * f32::consts::PI + w[t] * (x as f32);
            lo = f32::min(lo, s);
        }
        u[[0]] += w[t];
        std::mem::swap(&mut *u, &mut *v);
    }
    lo
}

#[pacc::pipeline(scratch(tmp))]
fn two_kernels(a: &mut Array2<f64>, tmp: &mut Array2<f64>, e: f64, flag: bool, steps: usize) {
    let ny = a.nrows();
    let nx = a.ncols();
    let c: f64 = std::f64::consts::E;
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                tmp[[y, x]] = (a[[y + 1, x]] - a[[y - 1, x]]).hypot(a[[y, x + 1]] - a[[y, x - 1]]);
            }
        }
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let g = tmp[[y, x]];
                a[[y, x]] = if flag && g > e { g.ln() * c } else { (g as f32) as f64 };
            }
        }
    }
}

#[pipeline(halo = 2)]
fn generic_dim(a: &mut Array<f32, Ix2>, b: &mut Array<f32, Ix2>, steps: usize) {
    let nx = a.shape()[1];
    let ny = a.shape()[0];
    for _t in 0..steps {
        for y in 2..ny - 2 {
            for x in 2..nx - 2 {
                b[[y, x]] = a[[y - 2, x]] + a[[y + 2, x]] + a[[y, x - 2]] + a[[y, x + 2]];
            }
        }
        std::mem::swap(a, b);
    }
}
"#;

/// One annotated function: the attribute's arguments and the function without the attribute.
#[derive(Clone)]
struct Seed {
    args: TokenStream,
    item: TokenStream,
    params: Vec<String>,
}

fn collect(items: &[syn::Item], out: &mut Vec<Seed>) {
    for it in items {
        match it {
            syn::Item::Fn(f) => {
                let Some(a) = f.attrs.iter().find(|a| pacc_translate::is_pipeline_attr(a)) else {
                    continue;
                };
                let args = match &a.meta {
                    syn::Meta::List(l) => l.tokens.clone(),
                    _ => TokenStream::new(),
                };
                let mut item = f.clone();
                item.attrs.retain(|a| !pacc_translate::is_pipeline_attr(a));
                let params = f
                    .sig
                    .inputs
                    .iter()
                    .filter_map(|p| match p {
                        syn::FnArg::Typed(pt) => match &*pt.pat {
                            syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                out.push(Seed {
                    args,
                    item: item.to_token_stream(),
                    params,
                });
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect(items, out);
                }
            }
            _ => {}
        }
    }
}

fn files() -> Vec<&'static str> {
    let mut v = vec![
        programs::LAPLACE2D,
        programs::ACOUSTIC3D,
        programs::himeno(),
        EXTRA,
    ];
    v.extend_from_slice(UI);
    v
}

struct Corpus {
    seeds: Vec<Seed>,
    idents: Vec<String>,
}

/// Per thread (token streams are not `Sync`), built once and leaked.
fn corpus() -> &'static Corpus {
    thread_local! {
        static C: &'static Corpus = Box::leak(Box::new(build_corpus()));
    }
    C.with(|c| *c)
}

fn build_corpus() -> Corpus {
    let mut seeds = Vec::new();
    for f in files() {
        let file = syn::parse_file(f).expect("corpus files parse");
        collect(&file.items, &mut seeds);
    }
    let mut idents = Vec::new();
    for s in &seeds {
        visit_leaves(s.item.clone(), &mut |t| {
            if let TokenTree::Ident(i) = t {
                idents.push(i.to_string());
            }
        });
    }
    idents.sort();
    idents.dedup();
    Corpus { seeds, idents }
}

fn visit_leaves(ts: TokenStream, f: &mut dyn FnMut(&TokenTree)) {
    for t in ts {
        match &t {
            TokenTree::Group(g) => visit_leaves(g.stream(), f),
            _ => f(&t),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary.

const KEYWORDS: &[&str] = &[
    "for", "in", "let", "mut", "fn", "if", "else", "loop", "while", "return", "as", "self", "Self",
    "crate", "super", "async", "await", "move", "unsafe", "match", "struct", "impl", "where",
    "dyn", "ref", "static", "const", "type", "break", "continue", "pub", "use", "mod", "true",
    "false", "_", "r#fn", "r#type", "union", "extern", "yield", "box", "gen", "try",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4",
    "0.0",
    "1.0",
    "-1.0",
    "0.5",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "340282366920938463463374607431768211455",
    "99999999999999999999999999999999999999999",
    "1e400",
    "-1e400",
    "1e-400",
    "1.0e38f32",
    "3.5e39f32",
    "1e308f64",
    "1.5f32",
    "2.0f64",
    "0x10",
    "0xffff_ffff_ffff_ffff_ffff",
    "0b101",
    "0o17",
    "1_000",
    "1u8",
    "256u8",
    "1i128",
    "7usize",
    "0isize",
    "1f32",
    "1e3",
    "'c'",
    "\"s\"",
    "b'x'",
    "b\"xy\"",
    "r\"raw\"",
    "c\"c\"",
    "true",
    "false",
    "1.",
    "0.1e-2_f64",
    "1foo",
];

const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "^", "!", "&", "|", "&&", "||", "<<", ">>", "+=", "-=", "*=", "/=",
    "%=", "^=", "&=", "|=", "<<=", ">>=", "=", "==", "!=", ">", "<", ">=", "<=", "@", ".", "..",
    "...", "..=", ",", ";", ":", "::", "->", "=>", "#", "$", "?", "~", "'a",
];

const SNIPPETS: &[&str] = &[
    "for",
    "in",
    "..",
    "..=",
    ";",
    ",",
    "[[]]",
    "[[x]]",
    "[[y, x]]",
    "[[z, y, x]]",
    "[[0, 0, 0, 0]]",
    "std::mem::swap(a, a);",
    "std::mem::swap(a, b);",
    "std::mem::swap(&mut a, &mut b);",
    "swap(a, b, c);",
    "loop {}",
    "while true {}",
    "for t in 0..n {}",
    "for y in 0..ny { for x in 0..nx { a[[y, x]] = 1.0; } }",
    "for x in 0..=18446744073709551615 {}",
    "for x in 0..=9223372036854775807 {}",
    "for y in 0..9223372036854775807 {}",
    "for x in ny - 9223372036854775807..nx + 9223372036854775807 {}",
    "let x = 1;",
    "let mut s: f32 = 0.0;",
    "let (nz, ny, nx) = a.dim();",
    "let (ny, nx) = a.dim();",
    "let nx = a.shape()[18446744073709551615];",
    "let nx = a.len_of(Axis(9223372036854775807));",
    "let _ = a;",
    "a[[y, x]]",
    "a[[y + 18446744073709551615, x]]",
    "a[[y - 9223372036854775807, x]]",
    "a[[y, x - 9223372036854775808]]",
    "a[[9223372036854775807 + y, x]]",
    "a[[y + 1, x + 1, z + 1]]",
    "a[[]]",
    "w[t]",
    "w[[t]]",
    "return;",
    "return 1.0;",
    "?",
    "break;",
    "continue;",
    "unsafe {}",
    "|x| x",
    "async {}",
    "{}",
    "()",
    "[]",
    "(a, b)",
    "macro_rules! m { () => {} }",
    "println!(\"x\");",
    "#[inline]",
    "#![allow(x)]",
    "'a:",
    "as f32",
    "as u8",
    "as Array2<f32>",
    ".dim()",
    ".max(1.0)",
    ".min()",
    ".powi(100000)",
    ".powi(-2147483648)",
    ".powi(18446744073709551615)",
    ".powi(2.5)",
    ".mul_add(1.0)",
    ".foo::<f32>()",
    ".0",
    "f32::max(a, b)",
    "f64::sqrt()",
    "f32::consts::PI",
    "f16::consts::PI",
    "::std::f64::consts::TAU",
    "f32::NAN",
    "<f32 as X>::max(1.0, 2.0)",
    "&mut Array3<f32>",
    "&Array0<f32>",
    "Array4<f64>",
    "ArrayView99<f32>",
    "Array18446744073709551616<f32>",
    "Array<f32, IxDyn>",
    "Array<f32>",
    "Array<>",
    "ArrayViewMut2<'a, f32>",
    "&[f32]",
    "&[f32; 4]",
    "Vec<f64>",
    "&mut [f32]",
    "(usize, usize, usize)",
    "impl Fn()",
    "dyn Any",
    "<T>",
    "where T: Copy",
    "-> f32",
    "-> !",
    "const",
    "async",
    "unsafe",
    "extern \"C\"",
    "self",
    "&mut self",
    "...",
    "match x { _ => 1.0 }",
    "if x { 1.0 } else { 2.0 }",
    "if true { a[[y, x]] = 1.0; }",
    "m = m.max(a[[y, x]]);",
    "m = f32::min(m, m);",
    "s += s;",
    "s = 0.0;",
    "s *= 2.0;",
    "a = b;",
    "a[[y, x]] += w[t];",
    "a[[0, 0]] = a[[1, 1]];",
    "t = 1;",
    "x = 1;",
];

fn tokens(s: &str) -> TokenStream {
    s.parse()
        .unwrap_or_else(|e| panic!("vocabulary `{s}` lexes: {e}"))
}

fn random_ident(t: &mut Tape) -> String {
    const FIRST: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCXYZ_";
    const REST: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";
    let mut s = String::new();
    s.push(*t.pick(FIRST) as char);
    for _ in 0..t.below(6) {
        s.push(*t.pick(REST) as char);
    }
    if s == "_" {
        s.push('x');
    }
    s
}

fn any_ident(t: &mut Tape) -> String {
    let c = corpus();
    match t.below(4) {
        0 | 1 => t.pick(&c.idents).clone(),
        2 => t.pick(KEYWORDS).to_string(),
        _ => random_ident(t),
    }
}

fn any_leaf(t: &mut Tape) -> TokenStream {
    match t.below(5) {
        0 => tokens(&any_ident(t)),
        1 => tokens(t.word(LITERALS)),
        2 => tokens(t.word(PUNCTS)),
        _ => tokens(t.word(SNIPPETS)),
    }
}

fn delim(t: &mut Tape) -> Delimiter {
    *t.pick(&[
        Delimiter::Parenthesis,
        Delimiter::Bracket,
        Delimiter::Brace,
        Delimiter::None,
    ])
}

// ---------------------------------------------------------------------------------------------
// Token-tree mutation.

#[derive(Clone, Debug)]
enum Tok {
    Leaf(TokenTree),
    Group(Delimiter, Span, Vec<Tok>),
}

fn to_toks(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), g.span(), to_toks(g.stream())),
            other => Tok::Leaf(other),
        })
        .collect()
}

fn from_toks(v: &[Tok]) -> TokenStream {
    v.iter()
        .map(|t| match t {
            Tok::Leaf(l) => l.clone(),
            Tok::Group(d, sp, inner) => {
                let mut g = Group::new(*d, from_toks(inner));
                g.set_span(*sp);
                TokenTree::Group(g)
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Any,
    Ident,
    Literal,
    Punct,
    Group,
}

fn paths(v: &[Tok], kind: Kind, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, t) in v.iter().enumerate() {
        prefix.push(i);
        let hit = matches!(
            (kind, t),
            (Kind::Any, _)
                | (Kind::Group, Tok::Group(..))
                | (Kind::Ident, Tok::Leaf(TokenTree::Ident(_)))
                | (Kind::Literal, Tok::Leaf(TokenTree::Literal(_)))
                | (Kind::Punct, Tok::Leaf(TokenTree::Punct(_)))
        );
        if hit {
            out.push(prefix.clone());
        }
        if let Tok::Group(_, _, inner) = t {
            paths(inner, kind, prefix, out);
        }
        prefix.pop();
    }
}

fn pick_path(v: &[Tok], kind: Kind, t: &mut Tape) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    paths(v, kind, &mut Vec::new(), &mut out);
    if out.is_empty() {
        None
    } else {
        Some(out.swap_remove(t.below(out.len())))
    }
}

/// The vector holding the token at `path`, and its index there.
fn parent<'a>(v: &'a mut Vec<Tok>, path: &[usize]) -> (&'a mut Vec<Tok>, usize) {
    let (last, up) = path.split_last().expect("non-empty path");
    let mut cur = v;
    for &i in up {
        cur = match &mut cur[i] {
            Tok::Group(_, _, inner) => inner,
            Tok::Leaf(_) => unreachable!("paths descend through groups"),
        };
    }
    (cur, *last)
}

fn splice(v: &mut Vec<Tok>, path: &[usize], with: TokenStream) {
    let (p, i) = parent(v, path);
    p.splice(i..=i, to_toks(with));
}

fn mutate_once(v: &mut Vec<Tok>, t: &mut Tape) {
    if v.is_empty() {
        *v = to_toks(any_leaf(t));
        return;
    }
    match t.below(14) {
        // Delete a token tree.
        0 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let (par, i) = parent(v, &p);
                par.remove(i);
            }
        }
        // Duplicate one.
        1 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let (par, i) = parent(v, &p);
                let x = par[i].clone();
                par.insert(i, x);
            }
        }
        // Swap two siblings.
        2 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let n = t.next() as usize;
                let (par, i) = parent(v, &p);
                let j = n % par.len();
                par.swap(i, j);
            }
        }
        // Another identifier.
        3 => {
            if let Some(p) = pick_path(v, Kind::Ident, t) {
                let id = any_ident(t);
                splice(v, &p, tokens(&id));
            }
        }
        // Another literal.
        4 => {
            if let Some(p) = pick_path(v, Kind::Literal, t) {
                let l: &str = t.word(LITERALS);
                splice(v, &p, tokens(l));
            }
        }
        // Another operator.
        5 => {
            if let Some(p) = pick_path(v, Kind::Punct, t) {
                let l: &str = t.word(PUNCTS);
                splice(v, &p, tokens(l));
            }
        }
        // Wrap a run of siblings in a group.
        6 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let len = 1 + t.below(4);
                let d = delim(t);
                let (par, i) = parent(v, &p);
                let end = (i + len).min(par.len());
                let inner: Vec<Tok> = par.drain(i..end).collect();
                par.insert(i, Tok::Group(d, Span::call_site(), inner));
            }
        }
        // Unwrap a group.
        7 => {
            if let Some(p) = pick_path(v, Kind::Group, t) {
                let (par, i) = parent(v, &p);
                if let Tok::Group(_, _, inner) = par.remove(i) {
                    par.splice(i..i, inner);
                }
            }
        }
        // Change a group's delimiter.
        8 => {
            if let Some(p) = pick_path(v, Kind::Group, t) {
                let d = delim(t);
                let (par, i) = parent(v, &p);
                if let Tok::Group(od, _, _) = &mut par[i] {
                    *od = d;
                }
            }
        }
        // Truncate: drop everything from a token on, closing the open groups.
        9 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let mut cur = &mut *v;
                for (k, &i) in p.iter().enumerate() {
                    if k + 1 == p.len() {
                        cur.truncate(i);
                        break;
                    }
                    cur.truncate(i + 1);
                    cur = match &mut cur[i] {
                        Tok::Group(_, _, inner) => inner,
                        Tok::Leaf(_) => unreachable!(),
                    };
                }
            }
        }
        // Move a token tree elsewhere.
        10 => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let (par, i) = parent(v, &p);
                let x = par.remove(i);
                let q = pick_path(v, Kind::Any, t);
                match q {
                    Some(q) => {
                        let (par, j) = parent(v, &q);
                        par.insert(j, x);
                    }
                    None => v.push(x),
                }
            }
        }
        // Insert random tokens (before a token tree, or at the end of its group).
        _ => {
            if let Some(p) = pick_path(v, Kind::Any, t) {
                let new = to_toks(any_leaf(t));
                let at_end = t.chance(20);
                let (par, i) = parent(v, &p);
                let i = if at_end { par.len() } else { i };
                par.splice(i..i, new);
            }
        }
    }
}

fn mutate(ts: TokenStream, t: &mut Tape, max_ops: usize) -> TokenStream {
    let mut v = to_toks(ts);
    // Mostly one or two edits, so that mutants stay close to translatable programs.
    let n = if t.chance(40) {
        1 + t.below(max_ops)
    } else {
        1 + t.below(2)
    };
    for _ in 0..n {
        mutate_once(&mut v, t);
    }
    from_toks(&v)
}

/// A random token stream from scratch.
fn random_stream(t: &mut Tape, depth: usize) -> TokenStream {
    let mut v = Vec::new();
    let n = t.below(12);
    for _ in 0..n {
        if depth > 0 && t.chance(20) {
            let d = delim(t);
            v.push(TokenTree::Group(Group::new(d, random_stream(t, depth - 1))));
        } else {
            v.extend(any_leaf(t));
        }
        if t.exhausted() {
            break;
        }
    }
    v.into_iter().collect()
}

/// Attribute arguments from the clause vocabulary (`#0`, `#1`: parameters of the function).
fn random_args(t: &mut Tape, params: &[String]) -> TokenStream {
    let mut s = String::new();
    let n = t.below(5);
    for k in 0..n {
        let mut c = t.pick(CLAUSES).to_string();
        for tag in ["#0", "#1"] {
            let name = if params.is_empty() || t.chance(10) {
                random_ident(t)
            } else {
                t.pick(params).clone()
            };
            c = c.replace(tag, &name);
        }
        s += &c;
        if k + 1 < n || t.chance(10) {
            s += match t.below(10) {
                0 => "",
                1 => ",,",
                2 => ";",
                _ => ",",
            };
            s += " ";
        }
    }
    tokens(&s)
}

// ---------------------------------------------------------------------------------------------
// The oracle.

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Panics inside [`guard`] are recorded (message and location) instead of printed.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                LAST_PANIC.with(|l| *l.borrow_mut() = info.to_string());
            } else {
                prev(info);
            }
        }));
    });
}

fn guard<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    CATCHING.with(|c| c.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    r.map_err(|_| LAST_PANIC.with(|l| l.borrow().clone()))
}

thread_local! {
    /// Inputs checked and inputs translated without error, per test (thread).
    static RUNS: Cell<usize> = const { Cell::new(0) };
    static TRANSLATED: Cell<usize> = const { Cell::new(0) };
}

fn count(c: &'static std::thread::LocalKey<Cell<usize>>, n: usize) {
    c.with(|c| c.set(c.get() + n));
}

/// `translate` and `expand` on one input: no panic; a success re-parses and has CUDA.
fn check(args: &TokenStream, item: &TokenStream) -> Result<(), TestCaseError> {
    count(&RUNS, 1);
    let show = || format!("args: `{args}`\nitem: `{item}`");
    let r = guard(|| pacc_translate::translate(args.clone(), item.clone()))
        .map_err(|p| TestCaseError::fail(format!("translate panicked: {p}\n{}", show())))?;
    match r {
        Ok(t) => {
            count(&TRANSLATED, 1);
            if let Err(e) = syn::parse2::<syn::File>(t.host.clone()) {
                return Err(TestCaseError::fail(format!(
                    "generated host code does not parse: {e}\n{}\nhost: {}",
                    show(),
                    t.host
                )));
            }
            prop_assert!(!t.cuda.trim().is_empty(), "empty CUDA source\n{}", show());
            let names = t.program.kernels.iter().map(|k| &k.name);
            for n in names.chain(t.program.points.iter().map(|p| &p.name)) {
                prop_assert!(
                    n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "kernel name `{n}` is not a C identifier\n{}",
                    show()
                );
            }
            let file = format!("#[pacc::pipeline({args})]\n{item}");
            // (Printing loses invisible groups, so the file may legitimately fail to translate.)
            guard(|| pacc_translate::expand_file(&file, None))
                .map_err(|p| TestCaseError::fail(format!("expand_file panicked: {p}\n{file}")))?
                .ok();
        }
        Err(e) => {
            let msgs = guard(|| {
                let _ = e.to_compile_error();
                e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>()
            })
            .map_err(|p| {
                TestCaseError::fail(format!("error rendering panicked: {p}\n{}", show()))
            })?;
            prop_assert!(
                msgs.iter().all(|m| !m.is_empty()),
                "empty error message\n{}",
                show()
            );
        }
    }
    guard(|| pacc_translate::expand(args.clone(), item.clone()))
        .map_err(|p| TestCaseError::fail(format!("expand panicked: {p}\n{}", show())))?;
    Ok(())
}

/// `expand_file` (and `translate` of the whole file's tokens) on source text.
fn check_file(src: &str) -> Result<(), TestCaseError> {
    count(&RUNS, 1);
    let r = guard(|| pacc_translate::expand_file(src, None))
        .map_err(|p| TestCaseError::fail(format!("expand_file panicked: {p}\nsource:\n{src}")))?;
    if let Ok(v) = r {
        count(&TRANSLATED, v.len());
        for e in v {
            prop_assert!(!e.cuda.trim().is_empty(), "empty CUDA source\n{src}");
        }
    }
    if let Ok(ts) = src.parse::<TokenStream>() {
        guard(|| pacc_translate::expand(TokenStream::new(), ts))
            .map_err(|p| TestCaseError::fail(format!("expand panicked: {p}\nsource:\n{src}")))?;
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PACC_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

fn tape() -> impl Strategy<Value = Vec<u32>> {
    vec(any::<u32>(), 0..400)
}

fn report(name: &str) {
    eprintln!(
        "fuzz {name}: {} inputs, {} translated",
        RUNS.with(|c| c.get()),
        TRANSLATED.with(|c| c.get())
    );
}

// ---------------------------------------------------------------------------------------------
// The properties.

#[test]
fn corpus_translates() {
    let c = corpus();
    assert!(c.seeds.len() >= 20, "{} seeds", c.seeds.len());
    for s in &c.seeds {
        check(&s.args, &s.item).unwrap();
    }
}

#[test]
fn mutated_functions() {
    let seeds = corpus().seeds.len();
    proptest!(config(), |(seed in 0..seeds, t in tape())| {
        let s = &corpus().seeds[seed];
        let mut t = Tape::new(&t);
        let item = mutate(s.item.clone(), &mut t, 8);
        let args = if t.chance(20) { mutate(s.args.clone(), &mut t, 3) } else { s.args.clone() };
        check(&args, &item)?;
    });
    report("mutated_functions");
}

#[test]
fn mutated_attributes() {
    let seeds = corpus().seeds.len();
    proptest!(config(), |(seed in 0..seeds, t in tape())| {
        let s = &corpus().seeds[seed];
        let mut t = Tape::new(&t);
        let mut args = if t.chance(50) { s.args.clone() } else { random_args(&mut t, &s.params) };
        if t.chance(40) {
            args = mutate(args, &mut t, 4);
        }
        let item = if t.chance(15) { mutate(s.item.clone(), &mut t, 2) } else { s.item.clone() };
        check(&args, &item)?;
    });
    report("mutated_attributes");
}

#[test]
fn mutated_source_text() {
    const RAW: &[&str] = &[
        "[[", "]]", "{", "}", "(", ")", "\"", "'", "/*", "*/", "//", "#", "r#\"", "\\", "ü",
        "\u{0}", "'a", "0x", "1e", "b'", "#!", "\n", "é", "𝕏", "..", "for", ";",
    ];
    let files = files();
    proptest!(config(), |(f in 0..files.len(), t in tape())| {
        let mut src: Vec<char> = files[f].chars().collect();
        let mut t = Tape::new(&t);
        for _ in 0..1 + t.below(4) {
            let at = t.below(src.len() + 1);
            match t.below(4) {
                0 => {
                    let len = t.below(40).min(src.len() - at);
                    src.drain(at..at + len);
                }
                1 => {
                    let len = t.below(40).min(src.len() - at);
                    let dup: Vec<char> = src[at..at + len].to_vec();
                    src.splice(at..at, dup);
                }
                2 => src.truncate(at),
                _ => {
                    let s: &str = t.word(RAW);
                    src.splice(at..at, s.chars());
                }
            }
        }
        let src: String = src.into_iter().collect();
        check_file(&src)?;
    });
    report("mutated_source_text");
}

#[test]
fn random_streams() {
    proptest!(config(), |(t in tape())| {
        let mut t = Tape::new(&t);
        let (args, item) = match t.below(4) {
            0 => (random_stream(&mut t, 3), random_stream(&mut t, 3)),
            1 => {
                let p = random_stream(&mut t, 2);
                let b = random_stream(&mut t, 3);
                (TokenStream::new(), quote::quote!(fn f(#p) { #b }))
            }
            2 => {
                let b = random_stream(&mut t, 3);
                (TokenStream::new(), quote::quote!(
                    fn f(a: &mut Array2<f32>, b: &Array2<f32>, w: &[f32], s: f32, n: usize) {
                        let (ny, nx) = a.dim();
                        for t in 0..n { #b }
                    }
                ))
            }
            _ => {
                let b = random_stream(&mut t, 3);
                (TokenStream::new(), quote::quote!(
                    fn f(a: &mut Array2<f32>, b: &Array2<f32>, w: &[f32], s: f32, n: usize) -> f32 {
                        let (ny, nx) = a.dim();
                        let mut m = 0.0f32;
                        for t in 0..n {
                            for y in 1..ny - 1 { for x in 1..nx - 1 { #b } }
                        }
                        m
                    }
                ))
            }
        };
        check(&args, &item)?;
    });
    report("random_streams");
}

#[test]
fn generated_programs() {
    proptest!(config(), |(t in tape())| {
        let mut t = Tape::new(&t);
        let src = generate(&mut t);
        check_file(&src)?;
        if let Ok(file) = syn::parse_file(&src) {
            let mut seeds = Vec::new();
            collect(&file.items, &mut seeds);
            for s in seeds {
                let item = if t.chance(30) { mutate(s.item, &mut t, 3) } else { s.item };
                check(&s.args, &item)?;
            }
        }
    });
    report("generated_programs");
}

// ---------------------------------------------------------------------------------------------
// Inputs that once made the translator panic or emit bad code: (attribute arguments,
// function, whether it translates).

const REGRESSIONS: &[(&str, &str, bool)] = &[
    // `..=` with a bound at i64::MAX: `hi.offset += 1` overflowed (lower.rs, `range`).
    (
        "",
        "fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) { let (ny, nx) = a.dim(); \
         for t in 0..n { for x in 0..=9223372036854775807 {} } }",
        false,
    ),
    (
        "",
        "fn f(a: &mut Array2<f32>, b: &Array2<f32>, n: usize) { let (ny, nx) = a.dim(); \
         for t in 0..n { for y in 1..ny - 1 { for x in 0..=nx + 9223372036854775807 { \
         a[[y, x]] = b[[y, x]]; } } } }",
        false,
    ),
    // A read offset of i64::MAX: the staged form's `dhi + 1` overflowed (codegen/stage.rs).
    (
        "",
        "fn f(a: &mut Array2<f32>, b: &mut Array2<f32>, n: usize) { let (ny, nx) = a.dim(); \
         for t in 0..n { for y in 1..ny - 1 { for x in 1..nx - 1 { \
         a[[y, x]] = b[[y + 9223372036854775807, x + 1]]; } } } }",
        false,
    ),
    (
        "",
        "fn f(a: &mut Array3<f32>, b: &Array3<f32>, n: usize) { let (nz, ny, nx) = a.dim(); \
         for t in 0..n { for z in 1..nz - 1 { for y in 1..ny - 1 { for x in 1..nx - 1 { \
         a[[z, y, x]] = b[[z - 9223372036854775807, y, x]]; } } } } }",
        false,
    ),
    // Raw identifiers: the kernel names were `pacc_r#fn_k0`, not C identifiers.
    (
        "",
        "fn r#fn(r#type: &mut Array2<f32>, r#in: &Array2<f32>, r#loop: f32, r#n: usize) -> f32 { \
         let (r#ny, nx) = r#type.dim(); let mut r#sum = 0.0f32; \
         for r#t in 0..r#n { for r#y in 1..r#ny - 1 { for x in 1..nx - 1 { \
         let r#let = r#in[[r#y, x]] * r#loop; r#type[[r#y, x]] = r#let; r#sum += r#let; } } \
         r#type[[1, 1]] += r#loop; } r#sum }",
        true,
    ),
];

#[test]
fn regressions() {
    for (args, item, ok) in REGRESSIONS {
        let (args, item) = (tokens(args), tokens(item));
        check(&args, &item).unwrap_or_else(|e| panic!("{e}"));
        let r = pacc_translate::translate(args, item.clone());
        assert_eq!(r.is_ok(), *ok, "{item}: {:?}", r.err());
    }
}
