//! The C emitter every CUDA form builds on: C names, kernel parameters, reduction code, and
//! the C of the nest body's statements and expressions. A form (marching, staged, vector,
//! fused) changes how the body's reads and writes are served through `Serve`; this module
//! knows none of them.

use crate::analysis::types::Env;
use crate::analysis::Analysis;
use crate::ir::{BinOp, Func, KExpr, KExprKind, KStmt, Ty};
use crate::typing::{resolve, unify};
use pacc_runtime::program::{Base, Bound, ReduceOp, REDUCTION_SLOTS};
use std::fmt::Write;

const C_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "case",
    "char",
    "class",
    "const",
    "default",
    "delete",
    "do",
    "double",
    "enum",
    "extern",
    "float",
    "goto",
    "int",
    "long",
    "new",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "short",
    "signed",
    "sizeof",
    "static",
    "switch",
    "template",
    "this",
    "throw",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "inline",
    "namespace",
    "using",
    "friend",
    "virtual",
    "explicit",
    "mutable",
    "catch",
    "export",
    "main",
    "NULL",
    "nullptr",
    "restrict",
    "signbit",
    "min",
    "max",
    "abs",
];

/// A user identifier as a C identifier.
pub fn c_ident(name: &str) -> String {
    let n = name.strip_prefix("r#").unwrap_or(name);
    if C_KEYWORDS.contains(&n) || n.starts_with("pacc_") || n.starts_with("__") {
        format!("{n}_")
    } else {
        n.to_string()
    }
}

pub fn kernel_name(f: &Func, i: usize) -> String {
    format!("pacc_{}_k{i}", syn::ext::IdentExt::unraw(&f.name))
}
pub fn point_name(f: &Func, i: usize) -> String {
    format!("pacc_{}_p{i}", syn::ext::IdentExt::unraw(&f.name))
}

/// An offset as a C identifier part: `m3` for -3, `p2` for 2 (`p0` for 0).
pub(super) fn offset_name(d: i64) -> String {
    if d < 0 {
        format!("m{}", -d)
    } else {
        format!("p{d}")
    }
}

/// An offset as a C term to append: `" - 3"`, `" + 2"`, nothing for 0.
pub(super) fn signed(d: i64) -> String {
    match d {
        0 => String::new(),
        d if d < 0 => format!(" - {}", -d),
        d => format!(" + {d}"),
    }
}

/// Static shared memory one kernel may declare (bytes): the staged form is compiled only
/// when its tiles and the reduction buffers fit.
pub const STATIC_SHARED: usize = 48 * 1024;

/// Bytes of one reduction buffer of the block reduction (`pacc_s<j>[REDUCTION_SLOTS]`).
pub fn reduction_buffer_bytes(ty: Ty) -> usize {
    let elem = if ty == Ty::F32 { 4 } else { 8 };
    elem * pacc_runtime::program::REDUCTION_SLOTS
}

/// How a kernel form serves the reads and writes of the body it wraps: from register queues,
/// tiles in shared memory, vector registers or a fused kernel's rings. What no form serves is
/// a plain load or store of global memory.
pub(super) trait Serve {
    /// C for a read of `array` at `offsets`, or `None` when this form does not serve it.
    fn read(&self, array: usize, offsets: &[i64]) -> Option<String>;
    /// C of the target of a write of `array`, or `None` when this form does not serve it.
    fn write(&self, _array: usize) -> Option<String> {
        None
    }
    /// C for a single-point statement's read of `array` at its point, or `None`.
    fn point_read(&self, _array: usize) -> Option<String> {
        None
    }
    /// Whether plain loads are addressed from the point's own index `pacc_at` (the marching
    /// forms) rather than from the loop variables.
    fn relative_to_point(&self) -> bool {
        false
    }
}

pub(super) struct Gen<'a> {
    pub(super) f: &'a Func,
    pub(super) env: Env<'a>,
    pub(super) out: String,
    /// C names of the loop variables (nest) or none (point).
    pub(super) loop_vars: Vec<String>,
    /// In a point statement: the flat index expression of the point.
    pub(super) point_at: Option<String>,
    /// The forms serving the body's reads and writes, asked in order (empty: plain loads and
    /// stores).
    pub(super) serve: Vec<Box<dyn Serve>>,
    /// The marching form of a nest with guarded reads: its loads along axis 0 test that the
    /// plane lies inside the array, since its guards keep its reads there while its queues and
    /// tiles would load planes past the ends (`Gen::plane_ok`).
    pub(super) guard_planes: bool,
}

fn fmt_float(digits: &str, t: Ty) -> String {
    let mut d = digits.to_string();
    if !d.contains(['.', 'e', 'E']) {
        d.push_str(".0");
    } else if d.ends_with('.') {
        d.push('0');
    }
    if t == Ty::F32 {
        d.push('f');
    }
    d
}

fn method_c(name: &str, t: Ty) -> Option<&'static str> {
    let f = t == Ty::F32;
    Some(match (name, f) {
        ("sqrt", true) => "sqrtf",
        ("sqrt", false) => "sqrt",
        ("abs", true) => "fabsf",
        ("abs", false) => "fabs",
        ("exp", true) => "expf",
        ("exp", false) => "exp",
        ("exp2", true) => "exp2f",
        ("exp2", false) => "exp2",
        ("ln", true) => "logf",
        ("ln", false) => "log",
        ("log10", true) => "log10f",
        ("log10", false) => "log10",
        ("log2", true) => "log2f",
        ("log2", false) => "log2",
        ("sin", true) => "sinf",
        ("sin", false) => "sin",
        ("cos", true) => "cosf",
        ("cos", false) => "cos",
        ("tan", true) => "tanf",
        ("tan", false) => "tan",
        ("asin", true) => "asinf",
        ("asin", false) => "asin",
        ("acos", true) => "acosf",
        ("acos", false) => "acos",
        ("atan", true) => "atanf",
        ("atan", false) => "atan",
        ("sinh", true) => "sinhf",
        ("sinh", false) => "sinh",
        ("cosh", true) => "coshf",
        ("cosh", false) => "cosh",
        ("tanh", true) => "tanhf",
        ("tanh", false) => "tanh",
        ("floor", true) => "floorf",
        ("floor", false) => "floor",
        ("ceil", true) => "ceilf",
        ("ceil", false) => "ceil",
        ("round", true) => "roundf",
        ("round", false) => "round",
        ("trunc", true) => "truncf",
        ("trunc", false) => "trunc",
        ("cbrt", true) => "cbrtf",
        ("cbrt", false) => "cbrt",
        ("min", true) => "fminf",
        ("min", false) => "fmin",
        ("max", true) => "fmaxf",
        ("max", false) => "fmax",
        ("powf", true) => "powf",
        ("powf", false) => "pow",
        ("atan2", true) => "atan2f",
        ("atan2", false) => "atan2",
        ("hypot", true) => "hypotf",
        ("hypot", false) => "hypot",
        ("copysign", true) => "copysignf",
        ("copysign", false) => "copysign",
        ("mul_add", true) => "fmaf",
        ("mul_add", false) => "fma",
        _ => return None,
    })
}

/// `a op b` for a reduction operator.
pub(super) fn combine(op: ReduceOp, t: Ty, a: &str, b: &str) -> String {
    match op {
        ReduceOp::Sum => format!("{a} + {b}"),
        ReduceOp::Min => format!("{}({a}, {b})", method_c("min", t).unwrap_or("fmin")),
        ReduceOp::Max => format!("{}({a}, {b})", method_c("max", t).unwrap_or("fmax")),
    }
}

pub(super) fn identity(op: ReduceOp, t: Ty) -> String {
    match (op, t == Ty::F32) {
        (ReduceOp::Sum, true) => "0.0f".into(),
        (ReduceOp::Sum, false) => "0.0".into(),
        (ReduceOp::Min, _) => format!("({})(1.0 / 0.0)", t.cuda_name()),
        (ReduceOp::Max, _) => format!("({})(-1.0 / 0.0)", t.cuda_name()),
    }
}
impl<'a> Gen<'a> {
    pub(super) fn new(
        f: &'a Func,
        an: &Analysis,
        elems: &'a [pacc_runtime::program::Elem],
    ) -> Self {
        Gen {
            f,
            env: Env {
                arrays: elems,
                scalars: &f.scalars,
                slices: &f.slices,
                reductions: &f.reductions,
                time: an.time_ty,
                locals: Vec::new(),
            },
            out: String::new(),
            loop_vars: Vec::new(),
            point_at: None,
            serve: Vec::new(),
            guard_planes: false,
        }
    }

    /// ` && q >= 0 && q < pacc_n0` for global plane `q` in a nest with guarded reads, else
    /// nothing, so the other nests' code is unchanged.
    pub(super) fn plane_ok(&self, q: &str) -> String {
        if self.guard_planes {
            format!(" && {q} >= 0 && {q} < pacc_n0")
        } else {
            String::new()
        }
    }

    /// Arrays, scalars and slices. `restrict`: distinct arrays never alias (each has its own
    /// device buffer), which lets read-only arrays go through the non-coherent cache.
    pub(super) fn common_params(&self, written: &[usize], restrict: bool) -> Vec<String> {
        let mut p = Vec::new();
        let r = if restrict { " __restrict__" } else { "" };
        for (i, a) in self.f.arrays.iter().enumerate() {
            let c = if written.contains(&i) { "" } else { "const " };
            p.push(format!(
                "{c}{}*{r} {}",
                a.elem.cuda_name(),
                c_ident(&a.name.to_string())
            ));
        }
        for s in &self.f.scalars {
            p.push(format!(
                "{} {}",
                s.ty.cuda_name(),
                c_ident(&s.name.to_string())
            ));
        }
        for s in &self.f.slices {
            p.push(format!(
                "const {}* {}",
                s.elem.cuda_name(),
                c_ident(&s.name.to_string())
            ));
        }
        p
    }

    pub(super) fn time_binding(&mut self, ind: &str, used: bool) {
        if let (Some(v), true) = (&self.f.time.var, used) {
            let t = self.env.time;
            let _ = writeln!(
                self.out,
                "{ind}const {} {} = ({})pacc_t;",
                t.cuda_name(),
                c_ident(&v.to_string()),
                t.cuda_name()
            );
        }
    }

    pub(super) fn bound(&self, b: Bound, axis: usize) -> String {
        self.bound_of(b, &format!("pacc_n{axis}"))
    }

    /// [`Self::bound`] with the axis's extent named `n` (e.g. a 32-bit copy of it). A bound
    /// counted from a scalar reads the kernel's parameter of that scalar, signed, as the
    /// runtime resolves it (`Program::resolved`).
    pub(super) fn bound_of(&self, b: Bound, n: &str) -> String {
        let plus = |base: String| match b.offset {
            0 => base,
            o if o < 0 => format!("{base} - {}", o.unsigned_abs()),
            o => format!("{base} + {o}"),
        };
        match b.base {
            Base::Extent => plus(n.to_string()),
            Base::Zero => b.offset.to_string(),
            Base::Scalar(s) => {
                let name =
                    (self.f.scalars.get(s)).map_or("0".into(), |s| c_ident(&s.name.to_string()));
                format!("({})", plus(format!("(long long){name}")))
            }
        }
    }

    /// The launch parameters every kernel starts with (docs/internals.md §3).
    pub(super) fn fixed_params() -> Vec<String> {
        [
            "pacc_z0",
            "pacc_z1",
            "pacc_own0",
            "pacc_own1",
            "pacc_base",
            "pacc_n0",
            "pacc_n1",
            "pacc_n2",
            "pacc_rp",
            "pacc_t",
        ]
        .iter()
        .map(|p| format!("long long {p}"))
        .collect()
    }

    /// The parameters of nest `k`'s kernel: the fixed ones, `pacc_seg` in the marching form,
    /// the program's arrays, scalars and slices, and one partials pointer per reduction. The
    /// marching form marks pointers `__restrict__` (every array has its own buffer).
    pub(super) fn kernel_params(&self, k: usize, an: &Analysis, marching: bool) -> Vec<String> {
        let mut params = Self::fixed_params();
        if marching {
            params.push("long long pacc_seg".into());
        }
        params.extend(self.common_params(&an.writes[k], marching));
        let r = if marching { " __restrict__" } else { "" };
        for (j, _) in an.reductions[k].iter().enumerate() {
            params.push(format!("double*{r} pacc_red{j}"));
        }
        params
    }

    /// Declares every reduction of nest `k` at its identity: the accumulators of a marching
    /// kernel (`outer`), or the variables the body updates (one point's contribution).
    pub(super) fn reduction_accumulators(&mut self, reds: &[usize], outer: bool, ind: &str) {
        let f = self.f;
        for (j, &r) in reds.iter().enumerate() {
            let red = &f.reductions[r];
            let name = if outer {
                format!("pacc_acc{j}")
            } else {
                c_ident(&red.name.to_string())
            };
            let _ = writeln!(
                self.out,
                "{ind}{} {name} = {};",
                red.ty.cuda_name(),
                identity(red.op, red.ty)
            );
        }
    }

    /// A marching kernel adds one point's contribution to its accumulators when the point is
    /// computed and lies in an owned plane.
    pub(super) fn fold_reductions(&mut self, reds: &[usize]) {
        let f = self.f;
        let z = self.loop_vars[0].clone();
        for (j, &r) in reds.iter().enumerate() {
            let red = &f.reductions[r];
            let name = c_ident(&red.name.to_string());
            let v = combine(red.op, red.ty, &format!("pacc_acc{j}"), &name);
            let _ = writeln!(
                self.out,
                "        if (pacc_xy && {z} >= pacc_own0 && {z} < pacc_own1) pacc_acc{j} = {v};"
            );
        }
    }

    /// Combines each thread's value of every reduction over the block and stores the block's
    /// partial at its slot. `acc` empty: the user's variable (plain kernel), else the
    /// marching accumulators.
    pub(super) fn block_reductions(&mut self, reds: &[usize], acc: bool) {
        let f = self.f;
        for (j, &r) in reds.iter().enumerate() {
            let red = &f.reductions[r];
            let name = if !acc {
                c_ident(&red.name.to_string())
            } else {
                format!("pacc_acc{j}")
            };
            let ty = red.ty.cuda_name();
            let comb = combine(
                red.op,
                red.ty,
                &format!("pacc_s{j}[pacc_tid]"),
                &format!("pacc_s{j}[pacc_tid + pacc_w]"),
            );
            let _ = write!(
                self.out,
                "    {{\n        \
                 __shared__ {ty} pacc_s{j}[{REDUCTION_SLOTS}];\n        \
                 const unsigned int pacc_tid = threadIdx.x + blockDim.x * threadIdx.y;\n        \
                 const unsigned int pacc_nt = blockDim.x * blockDim.y;\n        \
                 pacc_s{j}[pacc_tid] = {name};\n        \
                 __syncthreads();\n        \
                 for (unsigned int pacc_w = 1; pacc_w < pacc_nt; pacc_w *= 2) {{\n            \
                 if (pacc_tid % (2 * pacc_w) == 0 && pacc_tid + pacc_w < pacc_nt) pacc_s{j}[pacc_tid] = {comb};\n            \
                 __syncthreads();\n        \
                 }}\n        \
                 if (pacc_tid == 0) pacc_red{j}[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = (double)pacc_s{j}[0];\n    \
                 }}\n",
            );
        }
    }

    pub(super) fn arith(&self, op: BinOp, l: &str, r: &str, t: Ty) -> String {
        if op == BinOp::Rem && t.is_float() {
            format!("{}({l}, {r})", if t == Ty::F32 { "fmodf" } else { "fmod" })
        } else {
            format!("{l} {} ({r})", op.c())
        }
    }

    fn index(&self, offsets: &[i64]) -> String {
        if self.serve.iter().any(|s| s.relative_to_point()) {
            // `pacc_at` is the point's own index; offsets are relative to it.
            let strides = if self.f.ndim == 3 {
                vec!["pacc_pl", "pacc_rp", ""]
            } else {
                vec!["pacc_pl", ""]
            };
            let terms: Vec<String> = offsets
                .iter()
                .zip(strides)
                .filter(|(o, _)| **o != 0)
                .map(|(o, s)| {
                    if s.is_empty() {
                        format!("({o})")
                    } else {
                        format!("({o}) * {s}")
                    }
                })
                .collect();
            return if terms.is_empty() {
                "pacc_at".into()
            } else {
                format!("pacc_at + {}", terms.join(" + "))
            };
        }
        let term = |axis: usize| {
            let v = &self.loop_vars[axis];
            let o = offsets[axis];
            let base = if axis == 0 { " - pacc_base" } else { "" };
            match o {
                0 => format!("{v}{base}"),
                o if o < 0 => format!("{v} - {}{base}", -o),
                o => format!("{v} + {o}{base}"),
            }
        };
        if self.f.ndim == 3 {
            format!(
                "(({}) * pacc_n1 + ({})) * pacc_rp + ({})",
                term(0),
                term(1),
                term(2)
            )
        } else {
            format!("({}) * pacc_rp + ({})", term(0), term(1))
        }
    }

    pub(super) fn stmts(&mut self, body: &[KStmt], depth: usize) {
        let ind = "    ".repeat(depth);
        let scope = self.env.locals.len();
        for (i, s) in body.iter().enumerate() {
            match s {
                KStmt::Let { name, ty, init } => {
                    let t = match ty {
                        Some(t) => *t,
                        None => self.env.let_type(&name.to_string(), init, &body[i + 1..]),
                    };
                    let v = self.expr(init, Some(t));
                    let _ = writeln!(
                        self.out,
                        "{ind}{} {} = {v};",
                        t.cuda_name(),
                        c_ident(&name.to_string())
                    );
                    self.env.locals.push((name.to_string(), t));
                }
                KStmt::Assign { name, op, value } => {
                    let t = self.env.local(&name.to_string()).unwrap_or(Ty::F64);
                    let n = c_ident(&name.to_string());
                    let v = self.expr(value, Some(t));
                    let rhs = match op {
                        None => v,
                        Some(op) => self.arith(*op, &n, &v, t),
                    };
                    let _ = writeln!(self.out, "{ind}{n} = {rhs};");
                }
                KStmt::Write { access, op, value } => {
                    let a = &self.f.arrays[access.array];
                    let t = Ty::from_elem(a.elem);
                    let gathered = self.serve.iter().find_map(|s| s.write(access.array));
                    let target = gathered.unwrap_or_else(|| {
                        format!(
                            "{}[{}]",
                            c_ident(&a.name.to_string()),
                            self.index(&access.offsets)
                        )
                    });
                    let v = self.expr(value, Some(t));
                    let rhs = match op {
                        None => v,
                        Some(op) => self.arith(*op, &target, &v, t),
                    };
                    let _ = writeln!(self.out, "{ind}{target} = {rhs};");
                }
                KStmt::Reduce {
                    reduction,
                    op,
                    value,
                } => {
                    let red = &self.f.reductions[*reduction];
                    let n = c_ident(&red.name.to_string());
                    let v = self.expr(value, Some(red.ty));
                    let rhs = match op {
                        ReduceOp::Sum => format!("{n} + ({v})"),
                        ReduceOp::Min => {
                            format!("{}({n}, {v})", method_c("min", red.ty).unwrap_or("fmin"))
                        }
                        ReduceOp::Max => {
                            format!("{}({n}, {v})", method_c("max", red.ty).unwrap_or("fmax"))
                        }
                    };
                    let _ = writeln!(self.out, "{ind}{n} = {rhs};");
                }
                KStmt::If { cond, then, els } => {
                    let c = self.expr(cond, Some(Ty::Bool));
                    let _ = writeln!(self.out, "{ind}if ({c}) {{");
                    self.stmts(then, depth + 1);
                    if let Some(e) = els {
                        let _ = writeln!(self.out, "{ind}}} else {{");
                        self.stmts(e, depth + 1);
                    }
                    let _ = writeln!(self.out, "{ind}}}");
                }
            }
        }
        self.env.locals.truncate(scope);
    }

    /// An operand of a binary operator, parenthesised where C's precedence differs from Rust's
    /// (bitwise operators against comparisons and arithmetic).
    fn operand(&self, parent: BinOp, e: &KExpr, t: Ty) -> String {
        let s = self.expr(e, Some(t));
        let bitwise = |o: BinOp| {
            matches!(
                o,
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr
            )
        };
        match &e.kind {
            KExprKind::Bin(child, _, _)
                if bitwise(parent) || bitwise(*child) || (parent.is_cmp() && child.is_cmp()) =>
            {
                format!("({s})")
            }
            _ => s,
        }
    }

    /// C for an expression; `want` fixes the type of literals the context leaves open.
    pub(super) fn expr(&self, e: &KExpr, want: Option<Ty>) -> String {
        let name = |id: &syn::Ident| c_ident(&id.to_string());
        match &e.kind {
            KExprKind::Float(d, suf) => {
                let t = suf.unwrap_or_else(|| resolve(Ty::FloatLit, want));
                fmt_float(d, t)
            }
            KExprKind::Int(d, suf) => int_lit(d, suf.unwrap_or_else(|| resolve(Ty::IntLit, want))),
            KExprKind::Bool(b) => b.to_string(),
            KExprKind::Local(n) => name(n),
            KExprKind::LoopVar(a) => self.loop_vars[*a].clone(),
            KExprKind::Time => c_ident(
                &self
                    .f
                    .time
                    .var
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            ),
            KExprKind::Scalar(i) => name(&self.f.scalars[*i].name),
            KExprKind::Reduction(i) => name(&self.f.reductions[*i].name),
            KExprKind::Read(a) => {
                let served = self.serve.iter().find_map(|s| s.read(a.array, &a.offsets));
                if let Some(r) = served {
                    return r;
                }
                let array = name(&self.f.arrays[a.array].name);
                format!("{array}[{}]", self.index(&a.offsets))
            }
            KExprKind::PointRead(a) => match self.serve.iter().find_map(|s| s.point_read(*a)) {
                Some(r) => r,
                None => format!(
                    "{}[{}]",
                    name(&self.f.arrays[*a].name),
                    self.point_at.clone().unwrap_or_default()
                ),
            },
            KExprKind::SliceRead(s, i) => format!(
                "{}[{}]",
                name(&self.f.slices[*s].name),
                self.expr(i, Some(Ty::Usize))
            ),
            KExprKind::Bin(op, l, r) => self.binary(*op, l, r, want),
            KExprKind::Neg(x) => {
                let v = self.expr(x, want);
                if v.starts_with('-') {
                    format!("-({v})")
                } else {
                    format!("-{v}")
                }
            }
            KExprKind::Not(x) => {
                let t = resolve(self.env.infer(x), want);
                if t == Ty::Bool {
                    format!("!{}", self.expr(x, Some(t)))
                } else {
                    format!("~{}", self.expr(x, Some(t)))
                }
            }
            KExprKind::Paren(x) => format!("({})", self.expr(x, want)),
            KExprKind::Cast(x, t) => {
                let inner = resolve(self.env.infer(x), None);
                format!("({})({})", t.cuda_name(), self.expr(x, Some(inner)))
            }
            KExprKind::Method(name, recv, args, explicit) => {
                self.method(name, recv, args, *explicit, want)
            }
            KExprKind::If(c, a, b) => {
                let t = resolve(unify(self.env.infer(a), self.env.infer(b)), want);
                format!(
                    "({} ? {} : {})",
                    self.expr(c, Some(Ty::Bool)),
                    self.expr(a, Some(t)),
                    self.expr(b, Some(t))
                )
            }
        }
    }

    /// C for `l op r`: logic operands are bool, a shift keeps its left operand's type, others
    /// unify their operands' types (comparisons leave literals at their default type).
    fn binary(&self, op: BinOp, l: &KExpr, r: &KExpr, want: Option<Ty>) -> String {
        let (lt, rt) = (self.env.infer(l), self.env.infer(r));
        if op.is_logic() {
            return format!(
                "{} {} {}",
                self.expr(l, Some(Ty::Bool)),
                op.c(),
                self.expr(r, Some(Ty::Bool))
            );
        }
        if op.is_shift() {
            let t = resolve(lt, want);
            let rt = resolve(rt, None);
            return format!(
                "{} {} {}",
                self.operand(op, l, t),
                op.c(),
                self.operand(op, r, rt)
            );
        }
        let u = unify(lt, rt);
        let t = if op.is_cmp() {
            resolve(u, None)
        } else {
            resolve(u, want)
        };
        let (a, b) = (self.operand(op, l, t), self.operand(op, r, t));
        if op == BinOp::Rem && t.is_float() {
            format!("{}({a}, {b})", if t == Ty::F32 { "fmodf" } else { "fmod" })
        } else {
            format!("{a} {} {b}", op.c())
        }
    }

    /// C for a float (or integer `min`/`max`/`abs`) method call; `recip` and small `powi`s are
    /// written out as arithmetic.
    fn method(
        &self,
        name: &str,
        recv: &KExpr,
        args: &[KExpr],
        explicit: Option<Ty>,
        want: Option<Ty>,
    ) -> String {
        let mut t = explicit.unwrap_or_else(|| self.env.infer(recv));
        if name != "powi" {
            for a in args {
                t = unify(t, self.env.infer(a));
            }
        }
        let t = resolve(t, want);
        let r = self.expr(recv, Some(t));
        if name == "recip" {
            return format!("({} / ({r}))", fmt_float("1", t));
        }
        if name == "powi" {
            let n = self.expr(&args[0], Some(Ty::I32));
            if let Ok(k) = n.parse::<i32>() {
                if (0..=4).contains(&k) {
                    if k == 0 {
                        return fmt_float("1", t);
                    }
                    return format!("({})", vec![format!("({r})"); k as usize].join(" * "));
                }
            }
            return format!(
                "{}({r}, ({})({n}))",
                method_c("powf", t).unwrap_or("pow"),
                t.cuda_name()
            );
        }
        let a: Vec<String> = std::iter::once(r)
            .chain(args.iter().map(|a| self.expr(a, Some(t))))
            .collect();
        if name == "clamp" {
            // Rust's order of tests: below `lo` gives `lo`, above `hi` gives `hi`, anything else
            // (NaN included, and -0.0 against a 0.0 bound) the value itself. `fmaxf`/`fminf`
            // would turn a NaN into a bound.
            let (v, lo, hi) = (&a[0], &a[1], &a[2]);
            return format!("(({v}) < ({lo}) ? ({lo}) : (({v}) > ({hi}) ? ({hi}) : ({v})))");
        }
        if t.is_int() && (name == "min" || name == "max" || name == "abs") {
            return format!("{name}({})", a.join(", "));
        }
        let fname = method_c(name, t).unwrap_or("/*unsupported*/");
        format!("{fname}({})", a.join(", "))
    }

    pub(super) fn elem_c(&self, array: usize) -> &'static str {
        self.f.arrays[array].elem.cuda_name()
    }

    pub(super) fn array_c(&self, array: usize) -> String {
        c_ident(&self.f.arrays[array].name.to_string())
    }
}

/// An integer literal's digits as C of type `t` (a float type when the context is float).
fn int_lit(d: &str, t: Ty) -> String {
    if t.is_float() {
        return fmt_float(d, t);
    }
    match t {
        Ty::U64 | Ty::Usize => format!("{d}ULL"),
        Ty::I64 | Ty::Isize => format!("{d}LL"),
        Ty::U32 => format!("{d}U"),
        _ => d.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(fmt_float("1", Ty::F32), "1.0f");
        assert_eq!(fmt_float("0.25", Ty::F64), "0.25");
        assert_eq!(fmt_float("1e-3", Ty::F32), "1e-3f");
    }

    #[test]
    fn idents() {
        assert_eq!(c_ident("int"), "int_");
        assert_eq!(c_ident("pacc_t"), "pacc_t_");
        assert_eq!(c_ident("cur"), "cur");
    }
}
