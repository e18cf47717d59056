//! The stencil IR: what the translator understood of the annotated function.
//!
//! Every node keeps the span (or the tokens) of the source it came from, so analyses can point
//! at the construct at fault.

use pacc_runtime::program::{AxisRange, Elem, ReduceOp};
use proc_macro2::{Span, TokenStream};
use syn::Ident;

/// Scalar types of kernel expressions. `IntLit`/`FloatLit` are literals (or pre-loop locals
/// initialised by one) whose type is fixed by context, as in Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    F32,
    F64,
    I32,
    I64,
    U32,
    U64,
    Usize,
    Isize,
    Bool,
    IntLit,
    FloatLit,
}

impl Ty {
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64 | Ty::FloatLit)
    }
    pub fn is_int(self) -> bool {
        matches!(
            self,
            Ty::I32 | Ty::I64 | Ty::U32 | Ty::U64 | Ty::Usize | Ty::Isize | Ty::IntLit
        )
    }
    pub fn is_lit(self) -> bool {
        matches!(self, Ty::IntLit | Ty::FloatLit)
    }
    /// The type Rust picks for an unconstrained literal.
    pub fn defaulted(self) -> Ty {
        match self {
            Ty::IntLit => Ty::I32,
            Ty::FloatLit => Ty::F64,
            t => t,
        }
    }
    pub fn from_name(s: &str) -> Option<Ty> {
        Some(match s {
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "i32" => Ty::I32,
            "i64" => Ty::I64,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "usize" => Ty::Usize,
            "isize" => Ty::Isize,
            "bool" => Ty::Bool,
            _ => return None,
        })
    }
    pub fn rust_name(self) -> &'static str {
        match self.defaulted() {
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::Usize => "usize",
            Ty::Isize => "isize",
            _ => "bool",
        }
    }
    pub fn cuda_name(self) -> &'static str {
        match self.defaulted() {
            Ty::F32 => "float",
            Ty::F64 => "double",
            Ty::I32 => "int",
            Ty::I64 | Ty::Isize => "long long",
            Ty::U32 => "unsigned int",
            Ty::U64 | Ty::Usize => "unsigned long long",
            _ => "bool",
        }
    }
    pub fn elem(self) -> Option<Elem> {
        match self {
            Ty::F32 => Some(Elem::F32),
            Ty::F64 => Some(Elem::F64),
            _ => None,
        }
    }
    pub fn from_elem(e: Elem) -> Ty {
        match e {
            Elem::F32 => Ty::F32,
            Elem::F64 => Ty::F64,
        }
    }
}

/// How an array parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passing {
    /// `&ArrayN<T>` or `&mut ArrayN<T>`.
    Ref { mutable: bool },
    /// `ArrayViewN<T>` / `ArrayViewMutN<T>` by value.
    View { mutable: bool },
}

#[derive(Clone, Debug)]
pub struct ArrayParam {
    pub name: Ident,
    pub elem: Elem,
    /// The rank as declared: 1, 2 or 3 (a 1D program's grids are 2D of shape `[n, 1]` past
    /// lowering: `Func::ndim` is 2).
    pub ndim: usize,
    pub passing: Passing,
}

#[derive(Clone, Debug)]
pub enum ParamKind {
    Array(usize),
    Slice(Elem),
    Scalar(Ty),
    Other,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
}

/// What is known of a variable bound before the time loop (a parameter or a local).
#[derive(Clone, Debug)]
pub enum PreVar {
    Array(usize),
    Slice(Elem),
    /// A table of float literals without suffix defined before the time loop (`let w = [1.0,
    /// -2.0];`): a slice whose element type the kernels' uses fix, as in Rust.
    LitTable,
    /// A scalar; `None` when its type could not be inferred.
    Scalar {
        ty: Option<Ty>,
        mutable: bool,
    },
    /// The extent of an axis (`let (nz, ny, nx) = a.dim();`).
    Dim(usize),
    Other,
    /// Bound by a statement that was itself an error (uses are not reported again).
    Poisoned,
}

/// One parsed `#[pipeline(...)]` directive.
#[derive(Clone, Debug, Default)]
pub struct Directive {
    pub halo: Option<(usize, Span)>,
    pub chunks: Option<usize>,
    pub block_steps: Option<usize>,
    pub input: Vec<Ident>,
    pub inout: Vec<Ident>,
    pub scratch: Vec<Ident>,
    /// `compress(a = R, ..)`: array name, rate in bits per value, the rate literal's span.
    pub compress: Vec<(Ident, f64, Span)>,
    /// `compress(.., codec = NAME)`: the codec it names.
    pub codec: Option<Ident>,
}

/// A kernel expression.
#[derive(Clone, Debug)]
pub struct KExpr {
    pub kind: KExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum KExprKind {
    Float(String, Option<Ty>),
    Int(String, Option<Ty>),
    Bool(bool),
    /// A `let` inside the kernel.
    Local(Ident),
    /// A loop variable (axis).
    LoopVar(usize),
    /// The time loop's variable.
    Time,
    /// A program scalar (index into the scalar list).
    Scalar(usize),
    /// A reduction variable, read only as the accumulator of its own min/max.
    Reduction(usize),
    /// `a[[z + 1, y, x]]`: array, offset per axis.
    Read(Access),
    /// In a point statement: the array at the statement's point.
    PointRead(usize),
    /// `w[i]`: slice index, index expression.
    SliceRead(usize, Box<KExpr>),
    Bin(BinOp, Box<KExpr>, Box<KExpr>),
    Neg(Box<KExpr>),
    Not(Box<KExpr>),
    Paren(Box<KExpr>),
    Cast(Box<KExpr>, Ty),
    /// Float method or `f32::name(..)` call: name, receiver, other args, explicit type.
    Method(String, Box<KExpr>, Vec<KExpr>, Option<Ty>),
    If(Box<KExpr>, Box<KExpr>, Box<KExpr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn c(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }
    pub fn is_cmp(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    pub fn is_logic(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
}

/// An array access at constant offsets from the loop variables.
#[derive(Clone, Debug)]
pub struct Access {
    pub array: usize,
    pub offsets: Vec<i64>,
    /// The source tokens of the access, for messages.
    pub tokens: TokenStream,
}

#[derive(Clone, Debug)]
pub enum KStmt {
    Let {
        name: Ident,
        ty: Option<Ty>,
        init: KExpr,
    },
    /// Assignment to a kernel local (`v = e`, `v += e`).
    Assign {
        name: Ident,
        op: Option<BinOp>,
        value: KExpr,
    },
    /// Write at the centre point (`a[[z, y, x]] = e`, `op=`).
    Write {
        access: Access,
        op: Option<BinOp>,
        value: KExpr,
    },
    Reduce {
        reduction: usize,
        op: ReduceOp,
        value: KExpr,
    },
    If {
        cond: KExpr,
        then: Vec<KStmt>,
        els: Option<Vec<KStmt>>,
    },
}

/// One perfect loop nest (a kernel).
#[derive(Clone, Debug)]
pub struct Nest {
    pub vars: Vec<Ident>,
    pub ranges: Vec<AxisRange>,
    /// The `for` expression of each axis (source), outermost first.
    pub loops: Vec<syn::ExprForLoop>,
    pub body: Vec<KStmt>,
    pub span: Span,
    /// The loop variables in the order written, when it was not the layout's and the loops
    /// were reordered to it (`lower/interchange.rs`); `vars`, `ranges` and `loops` are in the
    /// layout's order.
    pub written: Option<Vec<Ident>>,
}

/// A single-point statement in the time loop (source injection).
#[derive(Clone, Debug)]
pub struct Point {
    pub array: usize,
    pub index: Vec<syn::Expr>,
    pub op: Option<BinOp>,
    pub value: KExpr,
    /// The original statement.
    pub stmt: syn::Stmt,
}

#[derive(Clone, Debug)]
pub enum StepItem {
    Nest(Nest),
    Swap { a: usize, b: usize, stmt: syn::Stmt },
    Reset { reduction: usize, value: syn::Expr },
    Point(Point),
}

#[derive(Clone, Debug)]
pub struct ScalarUse {
    pub name: Ident,
    pub ty: Ty,
    /// `Some(axis)` where the scalar is that axis' extent (`let (nz, ny, nx) = a.dim();`): the
    /// guard analysis reads comparisons against it as bounds.
    pub dim: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct SliceUse {
    pub name: Ident,
    pub elem: Elem,
    /// A [`PreVar::LitTable`]: `elem` is fixed by the analysis from the uses (f64 if none
    /// tells).
    pub literal: bool,
}

#[derive(Clone, Debug)]
pub struct ReductionUse {
    pub name: Ident,
    pub op: ReduceOp,
    /// Declared type before the time loop (`None`/literal: fixed by the accumulated values).
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub struct TimeLoop {
    pub var: Option<Ident>,
    pub start: syn::Expr,
    pub end: syn::Expr,
    pub inclusive: bool,
    pub items: Vec<StepItem>,
}

/// The whole annotated function.
#[derive(Clone, Debug)]
pub struct Func {
    pub item: syn::ItemFn,
    pub name: Ident,
    pub params: Vec<Param>,
    pub arrays: Vec<ArrayParam>,
    pub ndim: usize,
    pub pre: Vec<syn::Stmt>,
    pub post: Vec<syn::Stmt>,
    pub time: TimeLoop,
    pub scalars: Vec<ScalarUse>,
    pub slices: Vec<SliceUse>,
    pub reductions: Vec<ReductionUse>,
    /// Loop bounds that are expressions: each one's synthetic `i64` scalar (in `scalars`) and
    /// the user's expression, which the wrapper evaluates before the run.
    pub bounds: Vec<(Ident, syn::Expr)>,
    pub directive: Directive,
    /// The `Array1` parameters used as slices (`lower/line.rs`), which the wrapper describes
    /// with `host_series`.
    pub series: Vec<Ident>,
}

impl Func {
    pub fn nests(&self) -> impl Iterator<Item = &Nest> {
        self.time.items.iter().filter_map(|i| match i {
            StepItem::Nest(n) => Some(n),
            _ => None,
        })
    }
    /// Whether this is a 1D program: its grids are 2D of shape `[n, 1]` past lowering
    /// (`lower/line.rs`).
    pub fn is_line(&self) -> bool {
        self.arrays.iter().all(|a| a.ndim == 1)
    }
    pub fn points(&self) -> impl Iterator<Item = &Point> {
        self.time.items.iter().filter_map(|i| match i {
            StepItem::Point(p) => Some(p),
            _ => None,
        })
    }
}
