//! Translator robustness: random and mutated token streams, functions and attribute arguments
//! fed to `translate`, `expand` and `expand_file`. Errors are fine; a panic is a bug.
//!
//! Every input is built from a proptest "tape" of `u32` choices (choice 0 is always the
//! simplest), so proptest's shrinking of the tape shrinks the input. A bounded number of cases
//! runs in CI (`PACC_FUZZ_CASES`, default 256 per property); run more locally with e.g.
//! `PACC_FUZZ_CASES=20000 cargo test -p pacc-translate --test fuzz -- --nocapture` (not
//! `--release`: that turns off the overflow checks the fuzz relies on). Inputs that once
//! panicked are kept in `REGRESSIONS`.

mod programs;

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use quote::ToTokens;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

// ---------------------------------------------------------------------------------------------
// The corpus: every `#[pacc::pipeline]` function of the example programs and the UI tests.

const UI: &[&str] = &[
    include_str!("../../tests/translate_e2e.rs"),
    include_str!("../../tests/ui/bad_elem_type.rs"),
    include_str!("../../tests/ui/bound_wrong_axis.rs"),
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
        programs::HIMENO,
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

const CLAUSES: &[&str] = &[
    "halo = 1",
    "halo = 0",
    "halo = -1",
    "halo = 99999999999999999999",
    "halo = 18446744073709551615",
    "halo = 9223372036854775807",
    "halo = 9223372036854775808",
    "halo = 4294967296",
    "halo = 1.5",
    "halo = \"1\"",
    "halo = 1u8",
    "halo = 0x10",
    "halo = 1e400",
    "halo = N",
    "halo",
    "halo =",
    "halo(1)",
    "halo = 1 = 2",
    "chunks = 0",
    "chunks = 1",
    "chunks = 18446744073709551615",
    "chunks = 9223372036854775807",
    "block_steps = 0",
    "block_steps = 1",
    "block_steps = 18446744073709551615",
    "block_steps = 4294967296",
    "input(x, x)",
    "input(#0)",
    "input(#0, #0)",
    "inout(#0)",
    "scratch(#0)",
    "scratch(#1)",
    "input(#1, #0)",
    "input()",
    "input(,)",
    "input(a,,b)",
    "input",
    "input = a",
    "input[a]",
    "input{a}",
    "input(1)",
    "input(a::b)",
    "input(&a)",
    "scratch(self)",
    "inout(missing)",
    "tile = 3",
    "pacc::halo = 1",
    "= 1",
    "1",
    "\"halo\"",
    "#",
    "halo = 1 halo = 2",
];

// ---------------------------------------------------------------------------------------------
// The tape: the choices every generator draws from. Past its end every choice is 0.

struct Tape<'a> {
    t: &'a [u32],
    i: usize,
}

impl<'a> Tape<'a> {
    fn new(t: &'a [u32]) -> Self {
        Tape { t, i: 0 }
    }
    fn next(&mut self) -> u32 {
        let v = self.t.get(self.i).copied().unwrap_or(0);
        self.i += 1;
        v
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.next() as usize % n
        }
    }
    fn pick<'b, T>(&mut self, xs: &'b [T]) -> &'b T {
        &xs[self.below(xs.len())]
    }
    fn word(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len())]
    }
    /// True with `pct` percent; false for choice 0.
    fn chance(&mut self, pct: u32) -> bool {
        self.next() % 100 >= 100 - pct
    }
    fn exhausted(&self) -> bool {
        self.i >= self.t.len()
    }
}

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
// A grammar of stencil programs: mostly well formed, with rough edges (huge offsets, odd
// types, wrong ranks, inclusive ranges ..) so the analyses and code generators run.

struct Gen<'a, 'b> {
    t: &'a mut Tape<'b>,
    /// How often the program leaves the well-formed path.
    bad: u32,
    nd: usize,
    /// Arrays: name, writable.
    arrays: Vec<(String, bool)>,
    vars: Vec<String>,
    dims: Vec<String>,
    /// Float scalars, slices, other values known before the time loop.
    floats: Vec<String>,
    slices: Vec<String>,
    others: Vec<String>,
    locals: Vec<String>,
    reds: Vec<String>,
    /// The array the current nest writes.
    target: String,
}

/// Small offsets mostly; sometimes huge or ill-typed ones.
const OFFSETS: &[&str] = &["1", "2", "3", "4"];
const BAD_OFFSETS: &[&str] = &[
    "0",
    "9223372036854775807",
    "18446744073709551615",
    "4294967296",
    "2147483648",
    "65536",
    "1u8",
    "1.0",
    "n",
];

impl Gen<'_, '_> {
    /// Whether to leave the well-formed path here: `pct` percent scaled by the program's
    /// badness (none for a third of the programs).
    fn deviate(&mut self, pct: u32) -> bool {
        let p = (pct * self.bad / 2).min(95);
        p > 0 && self.t.chance(p)
    }

    /// One of `good`, or (when deviating) one of `bad`.
    fn choose(&mut self, pct: u32, good: &[&str], bad: &[&str]) -> String {
        if self.deviate(pct) {
            self.t.pick(bad).to_string()
        } else {
            self.t.pick(good).to_string()
        }
    }

    fn offset(&mut self) -> String {
        self.choose(8, OFFSETS, BAD_OFFSETS)
    }

    fn program(&mut self) -> String {
        self.bad = *self.t.pick(&[0, 1, 2, 4, 0, 1]);
        self.nd = if self.deviate(8) {
            *self.t.pick(&[1, 4, 0, 5])
        } else {
            *self.t.pick(&[2, 3])
        };
        let nd = self.nd;
        let names = ["w", "z", "y", "x"];
        self.vars = names[4usize.saturating_sub(nd)..]
            .iter()
            .map(|s| s.to_string())
            .collect();
        while self.vars.len() < nd {
            self.vars.insert(0, format!("v{}", self.vars.len()));
        }
        self.dims = self.vars.iter().map(|v| format!("n{v}")).collect();
        let n_arrays = 1 + self.t.below(3);
        let elem0 = self.choose(5, &["f32", "f64"], &["i32", "u8", "bool", "T", "f16"]);
        let mut params = Vec::new();
        for k in 0..n_arrays {
            let name = ["a", "b", "c"][k].to_string();
            let elem = self.choose(5, &[elem0.as_str()], &["f32", "f64", "i32", "usize"]);
            let rank = if self.deviate(4) { self.t.below(6) } else { nd };
            let (ty, mutable) = if self.deviate(10) {
                let ty = match self.t.below(4) {
                    0 => format!("&Array<{elem}, IxDyn>"),
                    1 => format!("Array{rank}<{elem}>"),
                    2 => format!("&mut ArrayView{rank}<{elem}>"),
                    _ => format!("&mut [{elem}]"),
                };
                (ty, true)
            } else {
                match self.t.below(8) {
                    0..=2 => (format!("&mut Array{rank}<{elem}>"), true),
                    3 => (format!("ArrayViewMut{rank}<{elem}>"), true),
                    4 => (format!("&mut Array<{elem}, Ix{rank}>"), true),
                    5 => (format!("ArrayView{rank}<{elem}>"), false),
                    _ => (format!("&Array{rank}<{elem}>"), false),
                }
            };
            params.push(format!("{name}: {ty}"));
            self.arrays.push((name, mutable));
        }
        if !self.arrays.iter().any(|a| a.1) {
            // Something to write.
            params[0] = format!("a: &mut Array{nd}<{elem0}>");
            self.arrays[0].1 = true;
        }
        params.push("n: usize".into());
        for (name, ty) in [
            ("s", "f32"),
            ("d", "f64"),
            ("k", "i32"),
            ("flag", "bool"),
            ("w", "&[f32]"),
            ("v", "&Vec<f64>"),
            ("src", "(usize, usize, usize)"),
            ("q", "u8"),
        ] {
            if self.t.chance(30) {
                params.push(format!("{name}: {ty}"));
                match ty {
                    "f32" | "f64" => self.floats.push(name.into()),
                    "&[f32]" | "&Vec<f64>" => self.slices.push(name.into()),
                    _ => self.others.push(name.into()),
                }
            }
        }
        if self.deviate(5) {
            let i = self.t.below(params.len());
            params.swap(0, i);
        }
        let mut body = String::new();
        // Extents.
        let a0 = self.arrays[0].0.clone();
        match self.t.below(10) {
            0..=6 => body += &format!("let ({}) = {a0}.dim();\n", self.dims.join(", ")),
            7 => {
                for (i, d) in self.dims.iter().enumerate() {
                    body += &format!("let {d} = {a0}.shape()[{i}];\n");
                }
            }
            8 => {
                for (i, d) in self.dims.iter().enumerate() {
                    body += &format!("let {d} = {a0}.len_of(Axis({i}));\n");
                }
            }
            _ if self.bad > 0 => {}
            _ => body += &format!("let ({}) = {a0}.dim();\n", self.dims.join(", ")),
        }
        // Values known before the time loop.
        for (decl, name, red) in [
            ("let mut sum = 0.0f32;", "sum", true),
            ("let mut m: f64 = f64::NEG_INFINITY;", "m", true),
            ("let mut acc = 0.0;", "acc", true),
            ("let cc: f32 = 0.5;", "cc", false),
            ("let hh = 0.25;", "hh", false),
            ("let ee = 1e400;", "ee", false),
            ("let jj = 3;", "jj", false),
        ] {
            if self.t.chance(25) {
                body += decl;
                body += "\n";
                if red {
                    self.reds.push(name.into());
                } else if name == "jj" {
                    self.others.push(name.into());
                } else {
                    self.floats.push(name.into());
                }
            }
        }
        let tvar = self.choose(5, &["t", "_t", "_"], &["(t, u)", "t @ _", "mut t"]);
        let trange = self.choose(
            5,
            &["0..n", "1..=n"],
            &["0..", "n", "0..18446744073709551615", "n..0", "..n"],
        );
        body += &format!("for {tvar} in {trange} {{\n");
        let items = 1 + self.t.below(4);
        for _ in 0..items {
            body += &self.step_item();
        }
        body += "}\n";
        let ret = if !self.reds.is_empty() && self.t.chance(60) {
            let r = self.t.pick(&self.reds).clone();
            body += &format!("{r} as f32\n");
            " -> f32"
        } else {
            ""
        };
        let attr = self.attr();
        format!(
            "#[pacc::pipeline({attr})]\nfn f({}){ret} {{\n{body}}}\n",
            params.join(", ")
        )
    }

    fn attr(&mut self) -> String {
        let mut v = Vec::new();
        if self.deviate(30) {
            for _ in 0..1 + self.t.below(3) {
                let c = self.t.pick(CLAUSES).to_string();
                let a = self.array(false);
                let b = self.array(false);
                v.push(c.replace("#0", &a).replace("#1", &b));
            }
        } else if self.t.chance(30) {
            let c = self.choose(
                0,
                &[
                    "halo = 4",
                    "chunks = 2",
                    "block_steps = 3",
                    "halo = 5, chunks = 4",
                ],
                &[],
            );
            v.push(c);
        }
        v.join(", ")
    }

    /// An array's name; a writable one if `write` (unless deviating).
    fn array(&mut self, write: bool) -> String {
        let pool: Vec<String> = self
            .arrays
            .iter()
            .filter(|a| a.1 || !write)
            .map(|a| a.0.clone())
            .collect();
        if self.deviate(5) || pool.is_empty() {
            return self.t.pick(&self.arrays).0.clone();
        }
        self.t.pick(&pool).clone()
    }

    fn step_item(&mut self) -> String {
        match self.t.below(10) {
            7 => {
                let a = self.array(true);
                let mut b = self.array(true);
                if a == b && !self.deviate(10) {
                    match self.arrays.iter().find(|x| x.1 && x.0 != a) {
                        Some(x) => b = x.0.clone(),
                        None => return self.nest(),
                    }
                }
                match self.t.below(3) {
                    0 => format!("std::mem::swap({a}, {b});\n"),
                    1 => format!("std::mem::swap(&mut {a}, &mut {b});\n"),
                    _ => format!("core::mem::swap(&mut *{a}, {b});\n"),
                }
            }
            8 => {
                let a = self.array(true);
                let idx: Vec<String> = (0..self.nd)
                    .map(|_| self.choose(10, &["0", "1", "2"], &["n", "18446744073709551615", "t"]))
                    .collect();
                let op = self.choose(30, &["+="], &["=", "-=", "*="]);
                let e = self.point_value();
                format!("{a}[[{}]] {op} {e};\n", idx.join(", "))
            }
            9 if !self.reds.is_empty() => {
                let r = self.t.pick(&self.reds).clone();
                let v = self.choose(30, &["0.0"], &["1e400", "t as f32", "f32::MAX"]);
                format!("{r} = {v};\n")
            }
            _ => self.nest(),
        }
    }

    /// The value of a single-point statement: no array reads (unless deviating).
    fn point_value(&mut self) -> String {
        let mut pool: Vec<String> = vec!["1.0".into(), "0.5".into()];
        pool.extend(self.floats.iter().cloned());
        pool.extend(self.slices.iter().map(|s| format!("{s}[t]")));
        if self.deviate(20) {
            return self.expr(2, true);
        }
        self.t.pick(&pool).clone()
    }

    fn bound(&mut self, axis: usize, hi: bool) -> String {
        let d = if !self.dims.is_empty() && self.deviate(5) {
            self.t.pick(&self.dims).clone()
        } else {
            self.dims.get(axis).cloned().unwrap_or_else(|| "n".into())
        };
        let k = self.offset();
        if self.deviate(10) {
            return match self.t.below(3) {
                0 => format!("{d} + {k}"),
                1 => format!("{k} - {d}"),
                _ => format!("({d} - {k}) * 2"),
            };
        }
        if hi {
            match self.t.below(8) {
                0..=5 => format!("{d} - {k}"),
                6 => d,
                _ => k,
            }
        } else {
            match self.t.below(8) {
                0..=5 => k,
                6 => "0".into(),
                _ => format!("{d} - {k}"),
            }
        }
    }

    fn nest(&mut self) -> String {
        let mut s = String::new();
        let depth = if self.deviate(5) {
            self.t.below(self.nd + 2)
        } else {
            self.nd
        };
        for axis in 0..depth {
            let v = self.vars.get(axis).cloned().unwrap_or_else(|| "i".into());
            let lo = self.bound(axis, false);
            let hi = self.bound(axis, true);
            let dots = if self.t.chance(15) { "..=" } else { ".." };
            s += &format!("for {v} in {lo}{dots}{hi} {{\n");
        }
        self.locals.clear();
        self.target = self.array(true);
        for _ in 0..1 + self.t.below(4) {
            s += &self.stmt(2);
        }
        for _ in 0..depth {
            s += "}\n";
        }
        s
    }

    /// An index: the loop variables, at offsets when reading (`write`: at the centre).
    fn index(&mut self, write: bool) -> String {
        let n = if self.deviate(3) {
            self.t.below(5)
        } else {
            self.nd
        };
        let idx: Vec<String> = (0..n)
            .map(|axis| {
                let v = if !self.vars.is_empty() && self.deviate(3) {
                    self.t.pick(&self.vars).clone()
                } else {
                    self.vars.get(axis).cloned().unwrap_or_else(|| "x".into())
                };
                if write && !self.deviate(4) {
                    return v;
                }
                let k = self.offset();
                match self.t.below(8) {
                    0..=2 => v,
                    3 | 4 => format!("{v} + {k}"),
                    5 | 6 => format!("{v} - {k}"),
                    _ => format!("{k} + {v}"),
                }
            })
            .collect();
        idx.join(", ")
    }

    fn stmt(&mut self, depth: usize) -> String {
        match self.t.below(10) {
            4 => {
                let name = format!("l{}", self.locals.len());
                let ty = self.choose(
                    30,
                    &["", ": f32", ": f64"],
                    &[": i32", ": usize", ": bool", ": u8", ": T"],
                );
                let e = self.expr(3, true);
                self.locals.push(name.clone());
                format!("let {name}{ty} = {e};\n")
            }
            5 | 6 if !self.reds.is_empty() => {
                let r = self.t.pick(&self.reds).clone();
                let e = self.expr(2, true);
                // One operation per reduction variable (unless deviating).
                let k = if self.deviate(5) {
                    self.t.below(6)
                } else {
                    r.len()
                };
                match k {
                    3 => format!("{r} += {e};\n"),
                    1 => format!("{r} = {r}.max({e});\n"),
                    0 => format!("{r} = f64::max({r}, {e});\n"),
                    2 => format!("{r} = ({e}).min({r});\n"),
                    _ => format!("{r} *= {e};\n"),
                }
            }
            7 if depth > 0 => {
                let c = self.expr(2, false);
                let th = self.stmt(depth - 1);
                if self.t.chance(50) {
                    let el = self.stmt(depth - 1);
                    format!("if {c} {{\n{th}}} else {{\n{el}}}\n")
                } else {
                    format!("if {c} {{\n{th}}}\n")
                }
            }
            8 if !self.locals.is_empty() => {
                let l = self.t.pick(&self.locals).clone();
                let e = self.expr(2, true);
                format!("{l} = {e};\n")
            }
            _ => {
                let a = if self.deviate(5) {
                    self.array(true)
                } else {
                    self.target.clone()
                };
                let i = self.index(true);
                let op = self.choose(15, &["="], &["+=", "-=", "*=", "/=", "%=", "<<="]);
                let e = self.expr(3, true);
                format!("{a}[[{i}]] {op} {e};\n")
            }
        }
    }

    fn name(&mut self) -> String {
        let mut pool: Vec<String> = Vec::new();
        pool.extend(self.locals.iter().cloned());
        pool.extend(self.floats.iter().cloned());
        if self.deviate(20) {
            pool.extend(self.others.iter().cloned());
            pool.extend(self.reds.iter().cloned());
            pool.extend(self.slices.iter().cloned());
            pool.extend(self.vars.iter().cloned());
            pool.extend(self.dims.iter().cloned());
            pool.push("t".into());
            pool.push("n".into());
            pool.push("unknown".into());
        } else {
            pool.extend(self.vars.iter().map(|v| format!("({v} as f32)")));
        }
        if pool.is_empty() {
            return "1.0".into();
        }
        self.t.pick(&pool).clone()
    }

    /// An expression; `float`: of a float type (else a condition).
    fn expr(&mut self, depth: usize, float: bool) -> String {
        let leaf = depth == 0 || self.t.chance(35);
        if leaf {
            if !float && !self.deviate(20) {
                let a = self.expr(0, true);
                let op = self.choose(10, &["<", ">", "<=", ">="], &["==", "!=", "&&"]);
                return format!("{a} {op} 0.5");
            }
            return match self.t.below(8) {
                0..=3 => {
                    // The array this nest writes is read only at the centre (unless deviating).
                    let a = self.array(false);
                    let centre = a == self.target && !self.deviate(10);
                    let i = self.index(centre);
                    format!("{a}[[{i}]]")
                }
                4 | 5 => self.choose(
                    15,
                    &["1.0", "0.5", "2.0", "0.25"],
                    &[
                        "2",
                        "0",
                        "1e400",
                        "18446744073709551615",
                        "3.0f64",
                        "1.5f32",
                        "true",
                        "2.0e-50f32",
                        "f32::consts::PI",
                        "std::f64::consts::E",
                        "f32::EPSILON",
                        "'c'",
                        "f16::consts::PI",
                    ],
                ),
                6 => self.name(),
                7 if self.bad == 0 => self.name(),
                _ if !self.slices.is_empty() && !self.deviate(10) => {
                    let s = self.t.pick(&self.slices).clone();
                    format!("{s}[t]")
                }
                _ => {
                    let s = self.choose(20, &["w", "v"], &["a", "q", "unknown"]);
                    let i = self.choose(20, &["t"], &["x", "0", "n", "18446744073709551615"]);
                    format!("{s}[{i}]")
                }
            };
        }
        let d = depth - 1;
        match self.t.below(12) {
            0..=3 => {
                let good: &[&str] = if float {
                    &["+", "-", "*", "/"]
                } else {
                    &["&&", "||"]
                };
                let op = self.choose(
                    10,
                    good,
                    &["%", "<", "==", "&&", "||", "&", "|", "^", "<<", ">>"],
                );
                let l = self.expr(d, float);
                let r = self.expr(d, float);
                format!("{l} {op} {r}")
            }
            4 => {
                let op = self.choose(10, &["-"], &["!", "*", "&"]);
                let e = self.expr(d, float);
                format!("{op}{e}")
            }
            5 => {
                let ty = self.choose(
                    20,
                    &["f32", "f64"],
                    &["i32", "i64", "u32", "u64", "usize", "isize", "bool", "u8"],
                );
                let e = self.expr(d, float);
                format!("({e} as {ty})")
            }
            6 | 7 => {
                let m = self.choose(
                    10,
                    &[
                        "sqrt", "abs", "powi", "powf", "max", "min", "mul_add", "exp", "sin",
                        "recip", "hypot", "atan2", "ln", "floor",
                    ],
                    &["foo", "clamp", "len", "dim"],
                );
                let r = self.expr(d, true);
                let nargs = match m.as_str() {
                    "powi" | "powf" | "max" | "min" | "hypot" | "atan2" => 1,
                    "mul_add" | "clamp" => 2,
                    _ => 0,
                } + usize::from(self.deviate(3));
                let args: Vec<String> = (0..nargs)
                    .map(|_| {
                        if m == "powi" {
                            self.choose(
                                30,
                                &["2", "0", "3", "5"],
                                &["-1", "2147483648", "k", "100000", "1.5", "-2147483648"],
                            )
                        } else {
                            self.expr(d, true)
                        }
                    })
                    .collect();
                format!("({r}).{m}({})", args.join(", "))
            }
            8 => {
                let f = self.choose(
                    15,
                    &["f32::max", "f64::min", "f32::hypot"],
                    &["f32::sqrt", "f64::mul_add", "foo", "f16::max"],
                );
                let a = self.expr(d, true);
                let b = self.expr(d, true);
                format!("{f}({a}, {b})")
            }
            9 => {
                let c = self.expr(d, false);
                let a = self.expr(d, float);
                let b = self.expr(d, float);
                format!("if {c} {{ {a} }} else {{ {b} }}")
            }
            _ => {
                let e = self.expr(d, float);
                format!("({e})")
            }
        }
    }
}

fn generate(t: &mut Tape) -> String {
    Gen {
        t,
        bad: 0,
        nd: 0,
        arrays: Vec::new(),
        vars: Vec::new(),
        dims: Vec::new(),
        floats: Vec::new(),
        slices: Vec::new(),
        others: Vec::new(),
        locals: Vec::new(),
        reds: Vec::new(),
        target: String::new(),
    }
    .program()
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
