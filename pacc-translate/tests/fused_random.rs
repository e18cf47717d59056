//! The fused kernels of RANDOM programs, run on the CPU as `fused_emulated.rs` runs them (a host
//! thread per CUDA thread, a barrier per `__syncthreads()`, g++ with FMA contraction off): for
//! programs of `progen` (the generator `fuzz.rs` uses) that translate, are 2D or 3D and have a
//! fused form of 2 or 3 steps, a driver written from the `Program` runs the plain kernels (and
//! the point statements, swaps and resets) step by step and the fused kernel group by group
//! (two groups, several blocks and segments, shapes no tile divides) and compares every buffer
//! bit for bit, and each reduction's per-kernel totals (exactly for min/max, to rounding for
//! sums, whose order differs). A step count without a fused form must say why in
//! `fusion.refused`.
//!
//! Bounded for CI: `PACC_FUSED_CASES` programs with a fused form (default 8), drawn from at most
//! 40 times as many generated ones; `PACC_FUSED_SEED` picks another sequence. Fails when fewer
//! programs ran, or when more than a quarter of the fused forms drew no shape that keeps their
//! accesses in bounds though a larger one would. Skipped, saying why, when `g++` is absent.

mod progen;
mod shim;

use pacc_runtime::program::{
    vector_halo, Base, Bound, FusedDecl, Launch, Program, ReduceEvent, ReduceOp, ScalarType, Stage,
    PLAIN_SUFFIX,
};
use pacc_translate::codegen::fuse::FUSE_STEPS;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use quote::ToTokens;
use std::fmt::Write as _;

/// A program that translated, with what the driver needs beyond its `Program`.
struct Case {
    src: String,
    program: Program,
    cuda: String,
    /// Per point statement: its constant index (outermost first).
    points: Vec<Vec<i64>>,
}

/// Translates `src` (one `#[pacc::pipeline]` function); `None` if it does not.
fn translate(src: &str) -> Option<Case> {
    let file = syn::parse_file(src).ok()?;
    let syn::Item::Fn(item) = file.items.first()? else {
        return None;
    };
    let mut item = item.clone();
    let args = match &item.attrs.remove(0).meta {
        syn::Meta::List(l) => l.tokens.clone(),
        _ => Default::default(),
    };
    let t = pacc_translate::translate(args, item.to_token_stream()).ok()?;
    let mut points = Vec::new();
    for p in t.func.points() {
        let mut idx = Vec::new();
        for e in &p.index {
            match e {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => idx.push(i.base10_parse::<i64>().ok()?),
                _ => return None,
            }
        }
        points.push(idx);
    }
    Some(Case {
        src: src.to_string(),
        cuda: t.cuda,
        program: t.program,
        points,
    })
}

/// Extents of the emulated arrays (outermost first; 2D: `n[2]` is 1) and the row pitch.
#[derive(Clone, Copy, Debug)]
struct Shape {
    n: [i64; 3],
    rp: i64,
}

impl Shape {
    fn extent(&self, _nd: usize, axis: usize) -> i64 {
        self.n[axis]
    }
}

/// Whether the serial program stays inside the arrays on `shape` (else it would panic, and the
/// kernels' results are not defined).
fn in_bounds(case: &Case, shape: Shape) -> bool {
    let p = &case.program;
    let nd = p.ndim;
    for k in &p.kernels {
        let r: Vec<(i64, i64)> = (0..nd)
            .map(|a| {
                let n = shape.extent(nd, a) as usize;
                (k.ranges[a].lo.eval(n), k.ranges[a].hi.eval(n))
            })
            .collect();
        if r.iter().any(|(lo, hi)| lo >= hi) {
            continue;
        }
        for (a, &(lo, hi)) in r.iter().enumerate() {
            let n = shape.extent(nd, a);
            if lo < 0 || hi > n {
                return false;
            }
            for rd in &k.reads {
                if lo + rd.lo[a] < 0 || hi - 1 + rd.hi[a] > n - 1 {
                    return false;
                }
            }
        }
    }
    case.points.iter().all(|idx| {
        idx.len() == nd
            && idx
                .iter()
                .enumerate()
                .all(|(a, &i)| i >= 0 && i < shape.extent(nd, a))
    })
}

fn scalar_value(ty: ScalarType, i: usize) -> String {
    match ty {
        ScalarType::F32 | ScalarType::F64 => format!("{}", 0.375 + 0.25 * i as f64),
        ScalarType::Bool => "true".into(),
        _ => format!("{}", 2 + i),
    }
}

/// The C++ `main` that runs `groups` groups of `s` steps both ways and compares them.
/// `fb`: the launch block; in the vector form (`vector`) its threads along x each compute 4
/// points.
fn driver(
    case: &Case,
    s: usize,
    shape: Shape,
    fb: (u32, u32),
    seg: i64,
    groups: usize,
    vector: bool,
) -> String {
    let p = &case.program;
    let nd = p.ndim;
    let decl = p.fusion.get(s).unwrap();
    let na = p.arrays.len();
    let elem = |i: usize| p.arrays[i].elem.cuda_name();
    let mut c = String::new();
    let [n0, n1, n2] = shape.n;
    let pl = if nd == 3 { n1 * shape.rp } else { shape.rp };
    let _ = writeln!(
        c,
        "int main() {{\n    const long long N0 = {n0}, N1 = {n1}, N2 = {n2}, RP = {}, NX = {}, N = N0 * {pl}, SEG = {seg}, T0 = 1;",
        shape.rp,
        if nd == 3 { n2 } else { n1 }
    );
    // Inputs.
    for i in 0..na {
        let _ = writeln!(
            c,
            "    std::vector<{t}> in{i}(N);\n    for (long long j = 0; j < N; ++j) in{i}[j] = ({t})(0.5 + (double)((j * {m} + {i}) % 23) * 0.045);",
            t = elem(i),
            m = 7 + 4 * i
        );
    }
    let mut common = String::new();
    for (i, sc) in p.scalars.iter().enumerate() {
        let _ = writeln!(
            c,
            "    const {} sc{i} = {};",
            sc.ty.cuda_name(),
            scalar_value(sc.ty, i)
        );
        let _ = write!(common, ", sc{i}");
    }
    for (i, sl) in p.slices.iter().enumerate() {
        let _ = writeln!(
            c,
            "    std::vector<{t}> sl{i}(64);\n    for (int j = 0; j < 64; ++j) sl{i}[j] = ({t})(0.25 + 0.0625 * (j % 9));",
            t = sl.elem.cuda_name()
        );
        let _ = write!(common, ", sl{i}.data()");
    }
    let _ = writeln!(
        c,
        "    std::vector<std::vector<double>> part(64, std::vector<double>(8192));\n    \
         auto zero = [&] {{ for (auto& v : part) std::fill(v.begin(), v.end(), 0.0); }};\n    \
         std::vector<int> ops = {{{}}};\n    \
         auto fold = [&](int r, int j, long long nb) {{ double v = part[j][0]; for (long long b = 1; b < nb; ++b) v = ops[r] == 0 ? v + part[j][b] : ops[r] == 1 ? std::fmin(v, part[j][b]) : std::fmax(v, part[j][b]); return v; }};\n    \
         std::vector<std::pair<int, double>> tp, tf;",
        (p.reductions.iter())
            .map(|r| match r.op {
                ReduceOp::Sum => "0",
                ReduceOp::Min => "1",
                ReduceOp::Max => "2",
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    // The plain steps.
    for i in 0..na {
        let _ = writeln!(c, "    std::vector<{t}> P{i} = in{i};", t = elem(i));
    }
    let cur: Vec<String> = (0..na).map(|i| format!("P{i}.data()")).collect();
    let _ = writeln!(c, "    void* cur[] = {{{}}};", cur.join(", "));
    let arrs = |v: &str| -> String {
        (0..na)
            .map(|i| format!(", ({}*){v}[{i}]", elem(i)))
            .collect()
    };
    let _ = writeln!(
        c,
        "    for (long long st = 0; st < {}; ++st) {{\n        const long long t = T0 + st;",
        groups * s
    );
    for stage in &p.step {
        match *stage {
            Stage::Kernel(k) => {
                let kd = &p.kernels[k];
                let name = match kd.launch {
                    Launch::PerPoint => kd.name.clone(),
                    _ => format!("{}{}", kd.name, PLAIN_SUFFIX),
                };
                let b = |bd: Bound| {
                    if bd.base == Base::Extent {
                        format!("(N0 + ({}))", bd.offset)
                    } else {
                        format!("({})", bd.offset)
                    }
                };
                let (z0, z1) = (b(kd.ranges[0].lo), b(kd.ranges[0].hi));
                let (grid, block) = if nd == 3 {
                    (
                        "(unsigned)((N2 + 7) / 8), (unsigned)((N1 + 3) / 4), (unsigned)(z1 - z0)",
                        "8, 4, 1",
                    )
                } else {
                    (
                        "(unsigned)((N1 + 7) / 8), (unsigned)(z1 - z0), 1",
                        "8, 1, 1",
                    )
                };
                let reds: String = (0..kd.reductions.len())
                    .map(|j| format!(", part[{j}].data()"))
                    .collect();
                let _ = writeln!(
                    c,
                    "        {{\n        const long long z0 = {z0}, z1 = {z1};\n        if (z1 > z0) {{\n            zero();\n            \
                     const pacc_dim3 g = {{{grid}}};\n            \
                     launch(g, {{{block}}}, [&] {{ {name}(z0, z1, 0, N0, 0, N0, N1, N2, RP, t{}{common}{reds}); }});"
                    , arrs("cur")
                );
                for (j, &r) in kd.reductions.iter().enumerate() {
                    let _ = writeln!(
                        c,
                        "            tp.push_back({{{r}, fold({r}, {j}, (long long)g.x * g.y * g.z)}});"
                    );
                }
                // An empty nest adds its reductions' identities, as the fused kernel's
                // partials do.
                let _ = write!(c, "        }} else {{");
                for &r in &kd.reductions {
                    let id = match p.reductions[r].op {
                        ReduceOp::Sum => "0.0",
                        ReduceOp::Min => "INFINITY",
                        ReduceOp::Max => "-INFINITY",
                    };
                    let _ = write!(c, " tp.push_back({{{r}, {id}}});");
                }
                let _ = writeln!(c, "\n        }}\n        }}");
            }
            Stage::Point(i) => {
                let mut idx = case.points[i].clone();
                idx.resize(3, 0);
                let _ = writeln!(
                    c,
                    "        launch({{1, 1, 1}}, {{1, 1, 1}}, [&] {{ {}(0, N0, N1, N2, RP, t, {}, {}, {}{}{common}); }});",
                    p.points[i].name,
                    idx[0],
                    idx[1],
                    idx[2],
                    arrs("cur")
                );
            }
            Stage::Swap(a, b) => {
                let _ = writeln!(c, "        std::swap(cur[{a}], cur[{b}]);");
            }
            Stage::Reset(_) => {}
        }
    }
    c.push_str("    }\n");
    // The fused groups.
    let _ = writeln!(
        c,
        "    int pm[] = {{{}}};",
        (0..na)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for i in 0..na {
        let _ = writeln!(c, "    std::vector<{t}> F{i} = in{i};", t = elem(i));
    }
    let fb_ptrs: Vec<String> = (0..na).map(|i| format!("F{i}.data()")).collect();
    let _ = writeln!(c, "    void* fb[] = {{{}}};", fb_ptrs.join(", "));
    let hx = (decl.halo[1][0] + decl.halo[1][1]) as i64;
    let hy = (decl.halo[0][0] + decl.halo[0][1]) as i64;
    let (cols, hx) = match vector {
        true => (
            4,
            (vector_halo(decl.halo[1][0]) + vector_halo(decl.halo[1][1])) as i64,
        ),
        false => (1, hx),
    };
    let (grid, block) = if nd == 3 {
        (
            format!(
                "(unsigned)((N2 + {tx} - 1) / {tx}), (unsigned)((N1 + {ty} - 1) / {ty}), (unsigned)((N0 + SEG - 1) / SEG)",
                tx = cols * fb.0 as i64 - hx,
                ty = fb.1 as i64 - hy
            ),
            format!("{}, {}, 1", fb.0, fb.1),
        )
    } else {
        (
            format!(
                "(unsigned)((N1 + {tx} - 1) / {tx}), (unsigned)((N0 + SEG - 1) / SEG), 1",
                tx = fb.0 as i64 - hx
            ),
            format!("{}, 1, 1", fb.0),
        )
    };
    let mut pts = decl.points.clone();
    pts.sort_unstable();
    pts.dedup();
    let coords: String = (pts.iter())
        .flat_map(|&i| case.points[i].iter().map(|v| format!(", {v}LL")))
        .collect();
    let reduces: Vec<usize> = (decl.events.iter())
        .filter_map(|e| match e {
            ReduceEvent::Reduce(r) => Some(*r),
            ReduceEvent::Reset(_) => None,
        })
        .collect();
    let reds: String = (0..reduces.len())
        .map(|j| format!(", part[{j}].data()"))
        .collect();
    let outs: String = (0..decl.outputs.len())
        .map(|k| format!(", O{k}.data()"))
        .collect();
    let _ = writeln!(c, "    for (int g = 0; g < {groups}; ++g) {{");
    let _ = writeln!(
        c,
        "        void* in[] = {{{}}};",
        (0..na)
            .map(|i| format!("fb[pm[{i}]]"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, &o) in decl.outputs.iter().enumerate() {
        let _ = writeln!(c, "        std::vector<{t}> O{k}(N, ({t})-7);", t = elem(o));
    }
    let _ = writeln!(
        c,
        "        zero();\n        const pacc_dim3 gr = {{{grid}}};\n        \
         launch(gr, {{{block}}}, [&] {{ FUSED(0, N0, 0, N0, 0, N0, N1, N2, RP, T0 + g * {s}, SEG{}{outs}{common}{coords}{reds}); }});",
        arrs("in")
    );
    for (k, &o) in decl.outputs.iter().enumerate() {
        let _ = writeln!(
            c,
            "        std::memcpy(fb[pm[{o}]], O{k}.data(), N * sizeof({}));",
            elem(o)
        );
    }
    for (j, &r) in reduces.iter().enumerate() {
        let _ = writeln!(
            c,
            "        tf.push_back({{{r}, fold({r}, {j}, (long long)gr.x * gr.y * gr.z)}});"
        );
    }
    for _ in 0..s {
        for stage in &p.step {
            if let Stage::Swap(a, b) = *stage {
                let _ = writeln!(c, "        std::swap(pm[{a}], pm[{b}]);");
            }
        }
    }
    c.push_str("    }\n    long long d = 0;\n");
    for i in 0..na {
        let _ = writeln!(c, "    d += differ(P{i}, F{i}, NX, RP);");
    }
    c.push_str(
        "    long long bad = tp.size() == tf.size() ? 0 : 1000000;\n    \
         for (size_t i = 0; !bad && i < tp.size(); ++i) {\n        \
         const double a = tp[i].second, b = tf[i].second;\n        \
         const bool same = tp[i].first == tf[i].first && (std::memcmp(&a, &b, 8) == 0 || (std::isnan(a) && std::isnan(b))\n            \
         || (ops[tp[i].first] == 0 && std::fabs(a - b) <= 1e-4 * std::fmax(std::fabs(a), std::fabs(b)) + 1e-3));\n        \
         if (!same) { ++bad; std::printf(\"reduction %zu (of %d): %.17g %.17g\\n\", i, tp[i].first, a, b); }\n    }\n    \
         std::printf(\"differ %lld reductions %zu/%zu bad %lld\\n\", d, tp.size(), tf.size(), bad);\n    \
         return d == 0 && bad == 0 ? 0 : 1;\n}\n",
    );
    c
}

fn gxx() -> bool {
    std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok()
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One emulated comparison to run: the C++, a label, and the program's label.
struct Job {
    label: String,
    program: String,
    code: String,
}

/// Fused forms of a program that got no job, by why.
#[derive(Default)]
struct Unrun {
    /// Every shape drawn had an access out of bounds, though a larger one has none.
    missed: usize,
    /// No shape has none: the serial loop itself would index out of bounds.
    impossible: usize,
}

/// Whether some shape keeps every access of `case` in bounds: a large one does if any does
/// (nest bounds and reads are constant offsets from the start or the end of an axis).
fn some_shape_fits(case: &Case) -> bool {
    let n = if case.program.ndim == 3 {
        [64, 64, 64]
    } else {
        [64, 64, 1]
    };
    in_bounds(case, Shape { n, rp: 65 })
}

/// The jobs of one program (one per fused step count with a shape its accesses fit), and the
/// fused forms without one; asserts the refusals.
fn jobs(case: &Case, rng: &mut TestRng, label: &str) -> (Vec<Job>, Unrun) {
    let p = &case.program;
    let mut out = Vec::new();
    let mut unrun = Unrun::default();
    for s in FUSE_STEPS {
        let Ok(decl) = p.fusion.get(s) else {
            let why = (p.fusion.refused.iter()).find(|(k, _)| *k == s);
            assert!(
                why.is_some_and(|(_, w)| !w.trim().is_empty()),
                "{label}: no fused form of {s} steps and no reason in `fusion.refused` ({:?})\n{}",
                p.fusion.refused,
                case.src
            );
            continue;
        };
        let nd = p.ndim;
        assert_windows(decl, s, p.kernels.len(), label);
        let hx = decl.halo[1][0] + decl.halo[1][1];
        let hy = decl.halo[0][0] + decl.halo[0][1];
        let mut shape = None;
        for _ in 0..20 {
            let sh = if nd == 3 {
                let nx = 10 + rng.next_u32() as i64 % 10;
                Shape {
                    n: [
                        9 + rng.next_u32() as i64 % 6,
                        9 + rng.next_u32() as i64 % 6,
                        nx,
                    ],
                    rp: nx + 1 + rng.next_u32() as i64 % 3,
                }
            } else {
                let nx = 13 + rng.next_u32() as i64 % 20;
                Shape {
                    n: [12 + rng.next_u32() as i64 % 12, nx, 1],
                    rp: nx + 1 + rng.next_u32() as i64 % 3,
                }
            };
            if in_bounds(case, sh) {
                shape = Some(sh);
                break;
            }
        }
        let Some(shape) = shape else {
            match some_shape_fits(case) {
                true => unrun.missed += 1,
                false => unrun.impossible += 1,
            }
            continue;
        };
        let fb = if nd == 3 {
            (hx + 4 + rng.next_u32() % 4, hy + 3 + rng.next_u32() % 3)
        } else {
            (hx + 6 + rng.next_u32() % 8, 1)
        };
        let seg = 3 + rng.next_u32() as i64 % 3;
        let main = driver(case, s, shape, fb, seg, 2, false);
        let defs = format!(
            "#define PACC_FUSE {s}\n#define PACC_FVX 1\n#define PACC_FBX {}\n#define PACC_FBY {}\n#define FUSED {}\n",
            fb.0, fb.1, decl.name
        );
        out.push(job(case, format!("{label}-s{s}"), label, &defs, &main));
        // The vector form, on rows whole vectors long.
        if decl.vector_blocks.is_empty() {
            continue;
        }
        let vx = vector_halo(decl.halo[1][0]) + vector_halo(decl.halo[1][1]);
        let fb = (
            (vx / 4 + 1 + rng.next_u32() % 2).max(2),
            (hy + 3 + rng.next_u32() % 3).max(9),
        );
        let shape = Shape {
            rp: (shape.n[2] + 3) / 4 * 4 + 4 * (rng.next_u32() as i64 % 2),
            ..shape
        };
        let main = driver(case, s, shape, fb, seg, 2, true);
        let defs = format!(
            "#define PACC_FUSE {s}\n#define PACC_FVBX {}\n#define PACC_FVBY {}\n#define FUSED {}_vec\n",
            fb.0, fb.1, decl.name
        );
        out.push(job(case, format!("{label}-s{s}-vec"), label, &defs, &main));
    }
    (out, unrun)
}

/// Where the group's invocations compute (`FusedDecl::invocations`, which the work figures
/// read): one entry per nest and step, the block's window the widest of theirs on every side,
/// and at least one invocation that computes.
fn assert_windows(decl: &FusedDecl, s: usize, nests: usize, label: &str) {
    let invs = &decl.invocations;
    assert_eq!(invs.len(), s * nests, "{label}: {invs:?}");
    for axis in 0..2 {
        for side in 0..2 {
            let widest = invs.iter().flatten().map(|i| i.window[axis][side]).max();
            assert_eq!(
                widest,
                Some(decl.halo[axis][side]),
                "{label}: {invs:?} {:?}",
                decl.halo
            );
        }
    }
}

/// The emulation job of one fused form: its macros (`defs`), the shim, the program's CUDA and
/// the driver (`main`).
fn job(case: &Case, label: String, program: &str, defs: &str, main: &str) -> Job {
    let code = format!(
        "{defs}{}{}\n{}\n{main}",
        shim::CUDA_TYPES,
        shim::THREAD_MODEL,
        case.cuda
    );
    Job {
        label,
        program: program.to_string(),
        code,
    }
}

/// Programs the random test once flagged, kept as named cases: (name, source).
const NAMED: &[(&str, &str)] = &[
    // A nest with an empty range (`ny - 1..1`) and a max reduction: the plain driver launched
    // nothing and recorded no total while the fused kernel reports the identity (a driver
    // bug, not the translator's).
    (
        "empty_nest_max",
        r#"
#[pacc::pipeline()]
fn f(a: &mut Array2<f32>, b: &Array2<f32>, c: ArrayViewMut2<f32>, n: usize, s: f32) -> f32 {
    let (ny, nx) = a.dim();
    let mut m: f64 = f64::NEG_INFINITY;
    for _ in 0..n {
        for y in 2..ny - 3 {
            for x in 3..nx - 3 {
                a[[y, x]] = c[[y + 1, x]] + b[[y + 2, x - 3]];
            }
        }
        for y in ny - 1..1 {
            for x in 2..nx - 1 {
                m = m.max(b[[4 + y, x]]);
            }
        }
        for y in 1..ny - 4 {
            for x in 2..nx - 1 {
                m = m.max(b[[4 + y, x]] * a[[y, x]] - s);
            }
        }
    }
    m as f32
}
"#,
    ),
];

/// Runs `todo` on up to 8 threads; how many programs had a job run to a verdict, and the
/// failures.
fn run_all(todo: &[(Job, String)], dir: &std::path::Path) -> (usize, Vec<String>) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let ran = std::sync::Mutex::new(std::collections::BTreeSet::new());
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((job, src)) = todo.get(i) else {
                    break;
                };
                let said = shim::try_compile_and_run(dir, &job.label, &job.code, false);
                if said.is_ok() {
                    ran.lock().unwrap().insert(job.program.as_str());
                }
                match said {
                    Ok(said) if said.contains("differ 0 ") && said.contains("bad 0") => {
                        eprintln!("{}: {}", job.label, said.trim())
                    }
                    Ok(said) | Err(said) => failures.lock().unwrap().push(format!(
                        "{}: {said}\nsource:\n{src}\n(C++ in {})",
                        job.label,
                        dir.join(format!("{}.cpp", job.label)).display()
                    )),
                }
            });
        }
    });
    (
        ran.into_inner().unwrap().len(),
        failures.into_inner().unwrap(),
    )
}

#[test]
fn fused_kernels_of_named_programs_equal_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut todo = Vec::new();
    for (name, src) in NAMED {
        let case = translate(src).unwrap_or_else(|| panic!("{name} translates"));
        let (js, _) = jobs(&case, &mut rng, name);
        assert!(!js.is_empty(), "{name}: no fused form to run");
        todo.extend(js.into_iter().map(|j| (j, case.src.clone())));
    }
    let dir = std::env::temp_dir().join(format!("pacc-fused-named-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ran, failures) = run_all(&todo, &dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(ran, NAMED.len(), "named programs that ran");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Random programs of `progen`, drawn from a seeded proptest runner.
struct Draw {
    runner: TestRunner,
}

impl Draw {
    fn new(seed: &[u8; 32]) -> Draw {
        Draw {
            runner: TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, seed),
            ),
        }
    }

    /// The next program's source.
    fn program(&mut self) -> String {
        let tape = proptest::collection::vec(any::<u32>(), 0..400);
        let mut t = tape.new_tree(&mut self.runner).unwrap().current();
        // Mostly well-formed programs: those are the ones with fused forms.
        if t.first().is_some_and(|v| v % 3 != 0) {
            t[0] -= t[0] % 6;
        }
        progen::generate(&mut progen::Tape::new(&t))
    }
}

#[test]
fn fused_kernels_of_random_programs_equal_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    let want = env("PACC_FUSED_CASES", 8) as usize;
    let seed = env("PACC_FUSED_SEED", 0x5eed);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut draw = Draw::new(&seed_bytes);
    let (mut generated, mut translated, mut multi_d, mut refused) = (0, 0, 0, 0);
    let (mut forms, mut missed, mut impossible) = (0, 0, 0);
    let mut todo = Vec::new();
    let mut fused_programs = 0;
    while fused_programs < want && generated < 40 * want {
        generated += 1;
        let src = draw.program();
        let Some(case) = translate(&src) else {
            continue;
        };
        translated += 1;
        if !(2..=3).contains(&case.program.ndim) {
            continue;
        }
        multi_d += 1;
        let label = format!("p{generated}");
        let (js, unrun) = jobs(&case, draw.runner.rng(), &label);
        refused += 2 - case.program.fusion.kernels.len().min(2);
        forms += js.len() + unrun.missed + unrun.impossible;
        (missed, impossible) = (missed + unrun.missed, impossible + unrun.impossible);
        if !js.is_empty() {
            fused_programs += 1;
            todo.extend(js.into_iter().map(|j| (j, case.src.clone())));
        }
    }
    eprintln!(
        "fused_random: {generated} generated, {translated} translated, {multi_d} 2D/3D, \
         {fused_programs} with a fused form ({} emulated runs), {refused} step counts refused with a reason, \
         of {forms} fused forms {missed} drew no in-bounds shape and {impossible} have none",
        todo.len()
    );
    // Shapes too small for the programs the generator makes would leave fused forms unrun
    // without a word.
    assert!(
        4 * missed <= forms,
        "{missed} of {forms} fused forms drew no shape that keeps their accesses in bounds, \
         though larger shapes would"
    );
    let dir = std::env::temp_dir().join(format!("pacc-fused-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ran, failures) = run_all(&todo, &dir);
    assert!(
        failures.is_empty(),
        "{} of {} fused runs differ from the plain steps:\n{}",
        failures.len(),
        todo.len(),
        failures.join("\n\n")
    );
    assert!(
        ran >= want,
        "{ran} programs ran, fewer than the {want} asked for (PACC_FUSED_CASES): {generated} \
         generated, {translated} translated, {fused_programs} with a fused form"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- Random programs as Rust, for the GPU: fused on the device against `serial` -------------

/// Where [`regenerate_gpu_cases`] writes the programs (the root crate's test
/// `tests/fused_random_gpu.rs` compiles them).
const GPU_CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fused_random_gpu/cases.rs"
);

/// Rust that passes a value for one parameter of a generated function (`arrays` and `vecs`
/// name the buffers the harness made), or `None` for a type the harness does not make.
fn argument(ty: &syn::Type, i: usize, steps: usize) -> Option<(String, Option<String>)> {
    let text = ty.to_token_stream().to_string().replace(' ', "");
    let elem = if text.contains("f64") { "f64" } else { "f32" };
    let nd = if text.contains('3') { 3 } else { 2 };
    let array = |how: &str| {
        let make = format!("let mut a{i} = arr{nd}::<{elem}>(shape, {i});");
        Some((how.replace('#', &format!("a{i}")), Some(make)))
    };
    match text.as_str() {
        // A read-only view the body writes through would not compile as Rust.
        t if t.starts_with("&mutArrayView") => None,
        t if t.starts_with("&mutArray") => array("&mut #"),
        t if t.starts_with("&Array") => array("&#"),
        t if t.starts_with("ArrayViewMut") => array("#.view_mut()"),
        t if t.starts_with("ArrayView") => array("#.view()"),
        "&[f32]" | "&[f64]" => Some((
            format!("&v{i}"),
            Some(format!("let v{i} = vec_of::<{elem}>(64, {i});")),
        )),
        "usize" => Some((format!("{steps}"), None)),
        "f32" | "f64" => Some((format!("{}{text}", 0.375 + 0.25 * i as f64), None)),
        "i32" | "i64" | "u32" | "u64" | "isize" => Some((format!("{}{text}", 2 + i), None)),
        "bool" => Some(("true".into(), None)),
        _ => None,
    }
}

/// One generated case: the function (renamed `f`, in a module of its own) and `check`, which
/// runs it fused `s` steps per launch with `opts` and serially on the same start and compares
/// every array bit for bit and the result within summation-order rounding.
fn gpu_case(name: &str, case: &Case, s: usize, shape: Shape) -> Option<String> {
    let file = syn::parse_file(&case.src).ok()?;
    let syn::Item::Fn(item) = file.items.first()? else {
        return None;
    };
    let steps = 6;
    let mut made = Vec::new();
    let mut args = Vec::new();
    for (i, input) in item.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else {
            return None;
        };
        let (arg, make) = argument(&pt.ty, i, steps)?;
        made.extend(make);
        args.push(arg);
    }
    let arrays: Vec<String> = (0..item.sig.inputs.len())
        .filter(|i| args[*i].contains(&format!("a{i}")))
        .map(|i| format!("a{i}"))
        .collect();
    let dims = if case.program.ndim == 3 {
        format!("({}, {}, {})", shape.n[0], shape.n[1], shape.n[2])
    } else {
        format!("({}, {})", shape.n[0], shape.n[1])
    };
    let tuple = |f: &dyn Fn(&String) -> String| {
        let v: Vec<String> = arrays.iter().map(f).collect();
        format!("({},)", v.join(", "))
    };
    let compare: Vec<String> = (arrays.iter().enumerate())
        .map(|(k, a)| format!("same(\"{name} {a}\", &ran.{k}, &{a});"))
        .collect();
    let src = case.src.trim().replacen("fn f", "pub fn f", 1);
    Some(format!(
        "pub mod {name} {{
    #![allow(unused, clippy::all)]
    use super::*;

{src}

    /// Fused {s} steps per launch with `opts` against `serial`.
    pub fn check(opts: &Options) {{
        let shape = {dims};
        {made}
        let start = {clones};
        let got = f::run({call}, &opts.clone().fuse({s})).expect(\"{name}: the fused run\").0;
        let ran = {clones};
        let {bind} = start;
        let want = f::serial({call});
        {compare}
        close(\"{name}\", got, want);
    }}
}}
",
        made = made.join("\n        "),
        call = args.join(", "),
        clones = tuple(&|a| format!("{a}.clone()")),
        bind = tuple(&|a| format!("mut {a}")),
        compare = compare.join("\n        "),
    ))
}

/// Generated programs whose Rust does not type-check (the translator takes mixed `f32`/`f64`
/// arithmetic, ambiguous float literals and index types that Rust refuses; it only emits C):
/// left out of [`GPU_CASES`], which must compile. Found by compiling the generated file.
const RUST_REFUSES: &[&str] = &[
    "p10", "p23", "p28", "p53", "p55", "p69", "p111", "p124", "p152", "p160", "p173", "p174",
    "p201", "p202", "p237", "p260", "p261", "p278", "p280", "p293", "p322", "p328", "p340", "p342",
    "p383", "p391",
];

/// Writes [`GPU_CASES`] (then `cargo fmt` it): the first `PACC_GPU_FUSED_CASES` (default 12)
/// random programs of the
/// default seed that translate, are 2D or 3D, have a fused form and a shape their accesses fit,
/// with a harness. Run when the generator or the translator changes what it accepts; the
/// file is then compiled and each case checked (`tests/fused_random_gpu.rs`).
#[test]
#[ignore = "regenerates tests/fused_random_gpu/cases.rs"]
fn regenerate_gpu_cases() {
    let want = env("PACC_GPU_FUSED_CASES", 12) as usize;
    let mut draw = Draw::new(&[0x5e; 32]);
    let mut out = Vec::new();
    let mut generated = 0;
    while out.len() < want && generated < 400 * want {
        generated += 1;
        let src = draw.program();
        let Some(case) = translate(&src) else {
            continue;
        };
        if !(2..=3).contains(&case.program.ndim) || !src.contains("fn f(") {
            continue;
        }
        let Some(s) = FUSE_STEPS
            .into_iter()
            .find(|&s| case.program.fusion.get(s).is_ok())
        else {
            continue;
        };
        let shape = (0..40).find_map(|i| {
            let n = if case.program.ndim == 3 {
                [13 + i % 7, 11 + i % 5, 21 + i % 9]
            } else {
                [29 + i % 11, 37 + i % 13, 1]
            };
            let sh = Shape { n, rp: n[2] };
            in_bounds(&case, sh).then_some(sh)
        });
        let Some(shape) = shape else { continue };
        let name = format!("p{generated}");
        if RUST_REFUSES.contains(&name.as_str()) {
            continue;
        }
        if let Some(code) = gpu_case(&name, &case, s, shape) {
            out.push(code);
        }
    }
    let names: Vec<String> = out
        .iter()
        .map(|c| c.split_whitespace().nth(2).unwrap_or("").to_string())
        .collect();
    let text = format!(
        "// Generated by `cargo test -p pacc-translate --test fused_random -- --ignored \
         regenerate_gpu_cases`: random programs of `progen` with a fused form, each with a \
         check against its serial function. Do not edit.\n\nuse super::*;\n\n{}\n\
         /// Each case's name and check.\n\
         pub const CASES: &[(&str, Check)] = &[{}];\n",
        out.join("\n"),
        names
            .iter()
            .map(|n| format!("(\"{n}\", {n}::check)"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::fs::create_dir_all(std::path::Path::new(GPU_CASES).parent().unwrap()).unwrap();
    std::fs::write(GPU_CASES, text).unwrap();
    assert_eq!(out.len(), want, "{generated} programs generated");
}
