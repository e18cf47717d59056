//! The generator of random `#[pacc::pipeline]` programs shared by `fuzz.rs` and
//! `fused_random.rs`: a grammar of stencil programs driven by a [`Tape`] of proptest choices.
#![allow(dead_code)] // each test uses part of it

pub const CLAUSES: &[&str] = &[
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

pub struct Tape<'a> {
    t: &'a [u32],
    i: usize,
}

impl<'a> Tape<'a> {
    pub fn new(t: &'a [u32]) -> Self {
        Tape { t, i: 0 }
    }
    pub fn next(&mut self) -> u32 {
        let v = self.t.get(self.i).copied().unwrap_or(0);
        self.i += 1;
        v
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.next() as usize % n
        }
    }
    pub fn pick<'b, T>(&mut self, xs: &'b [T]) -> &'b T {
        &xs[self.below(xs.len())]
    }
    pub fn word(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len())]
    }
    /// True with `pct` percent; false for choice 0.
    pub fn chance(&mut self, pct: u32) -> bool {
        self.next() % 100 >= 100 - pct
    }
    pub fn exhausted(&self) -> bool {
        self.i >= self.t.len()
    }
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
pub const OFFSETS: &[&str] = &["1", "2", "3", "4"];
pub const BAD_OFFSETS: &[&str] = &[
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
                    &["foo", "lerp", "len", "dim"],
                );
                let r = self.expr(d, true);
                let nargs = match m.as_str() {
                    "powi" | "powf" | "max" | "min" | "hypot" | "atan2" => 1,
                    // `lerp`: not a kernel method (`clamp` is, and panics on crossed bounds).
                    "mul_add" | "lerp" => 2,
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

pub fn generate(t: &mut Tape) -> String {
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
