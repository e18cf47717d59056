//! `pacc`: read what the translator generates and how a run is planned.
//!
//! ```text
//! pacc expand src/models/acoustic.rs --function propagate
//! pacc plan src/models/acoustic.rs --function propagate --shape 1160,1160,1160 \
//!     --chunks 8 --block-steps 12 --scheme region-sharing
//! pacc plan src/models/himeno.rs --shape 256,256,512 --block-steps 8 --fuse 2
//! ```

use clap::{Args, Parser, Subcommand};
use pacc_runtime::config;
use pacc_runtime::plan::{self, PlanOptions, Scheme};
use pacc_translate::codegen::fuse::fuse_steps_text;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use pacc_translate as translate;

#[derive(Parser, Debug)]
#[command(
    name = "pacc",
    version,
    about = "Inspect what #[pacc::pipeline] generates and how a run is planned"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print the CUDA C and the host Rust generated for the annotated functions of a file.
    Expand {
        /// A Rust source file with `#[pacc::pipeline]` functions.
        file: PathBuf,
        /// Only this function (default: every annotated function of the file).
        #[arg(long)]
        function: Option<String>,
        /// Print only the CUDA C.
        #[arg(long, conflicts_with = "host")]
        cuda: bool,
        /// Print only the host Rust.
        #[arg(long)]
        host: bool,
        /// Also print the program description (arrays, roles, kernels, reaches) as JSON.
        #[arg(long)]
        program: bool,
    },
    /// Translate a function and print the plan of a run: planes crossing the link per array
    /// and block, device memory per buffer set, operations per stream.
    Plan(PlanArgs),
}

/// `--scheme`'s help: the registered schemes (clap keeps an explicit help's last period, so
/// there is none).
fn scheme_help() -> String {
    Scheme::names_where(|_| true)
}

/// `--fuse`'s help.
fn fuse_help() -> String {
    format!(
        "Time steps per launch of the translator's fused kernel ({}), as `PACC_FUSE` runs them: \
         the plan counts groups of S steps; the steps must be a multiple of S (unset or 1: the \
         single-step kernels)",
        fuse_steps_text()
    )
}

/// `--buffer-sets`' help, with each scheme's default.
fn buffer_sets_help() -> String {
    format!(
        "Device buffer sets in flight (default: the scheme's, {})",
        Scheme::buffer_sets_by_scheme()
    )
}

/// The flags of `pacc plan`.
#[derive(Args, Debug)]
struct PlanArgs {
    /// A Rust source file with `#[pacc::pipeline]` functions.
    file: PathBuf,
    /// The function to plan (may be left out when the file has only one).
    #[arg(long)]
    function: Option<String>,
    /// Array shape, outermost axis first: Z,Y,X (3D) or Y,X (2D).
    #[arg(long, value_name = "Z,Y,X")]
    shape: String,
    /// Chunks the outermost axis is split into (default: the directive's, else 4).
    #[arg(long)]
    chunks: Option<usize>,
    /// Time steps per block (default: the directive's, else 4).
    #[arg(long)]
    block_steps: Option<usize>,
    #[arg(long, default_value = Scheme::DEFAULT.name(), help = scheme_help())]
    scheme: Scheme,
    /// Time steps of the run (default: one block).
    #[arg(long)]
    steps: Option<usize>,
    #[arg(long, help = buffer_sets_help())]
    buffer_sets: Option<usize>,
    /// Plane (outermost index) written by each point statement, comma-separated
    /// (default: the middle plane).
    #[arg(long, value_name = "P,...")]
    points: Option<String>,
    /// Compress arrays between blocks: NAME=RATE[,NAME=RATE] (bits per value), `all=RATE`,
    /// or `off` (default: the directive's `compress(..)` clause).
    #[arg(long, value_name = "NAME=RATE,...")]
    compress: Option<String>,
    /// Copy the wavefront's read-only arrays from chunk to chunk with the staircase instead
    /// of keeping them in the read-only ring (as `PACC_RING=0` does for a run).
    #[arg(long)]
    no_ring: bool,
    // Help from `fuse_help` (the step counts the translator fuses).
    #[arg(long, value_name = "S", help = fuse_help())]
    fuse: Option<usize>,
    /// Values of the integer scalars loop bounds count from: NAME=VALUE[,NAME=VALUE] (a
    /// bound that is an expression has a scalar named `__pacc_b<i>`, numbered as it appears).
    #[arg(long, value_name = "NAME=VALUE,...")]
    scalar: Option<String>,
    /// Print the plan as JSON (every operation) instead of the summary.
    #[arg(long)]
    json: bool,
}

/// Stack of the thread that parses and translates: the parser recurses per nesting level, and
/// `translate::MAX_NESTING` levels take more than a main thread's 8 MiB in a debug build.
const STACK: usize = 256 << 20;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let work = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let mut out = String::new();
            run(cli, &mut out).map(|()| out)
        });
    let result = match work.map(|t| t.join()) {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => Err(format!("cannot start the worker thread: {e}")),
    };
    match result {
        Ok(out) => {
            // A closed pipe (`pacc expand ... | head`) is not an error.
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("error: writing the output: {e}");
                    ExitCode::FAILURE
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read(file: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// Comma-separated numbers.
fn numbers(s: &str) -> Result<Vec<usize>, std::num::ParseIntError> {
    s.split(',').map(|x| x.trim().parse::<usize>()).collect()
}

/// The pipelined functions of `file` (or the one named `function`); at least one.
fn pipelined(
    file: &PathBuf,
    function: Option<&str>,
) -> Result<Vec<translate::FileExpansion>, String> {
    let fns = translate::expand_file(&read(file)?, function)?;
    if fns.is_empty() {
        return Err(format!(
            "no function with #[pacc::pipeline] in {}",
            file.display()
        ));
    }
    Ok(fns)
}

/// The one pipelined function of `file` (or the one named `function`).
fn one_function(
    file: &PathBuf,
    function: Option<&str>,
) -> Result<translate::FileExpansion, String> {
    let mut fns = pipelined(file, function)?;
    if fns.len() > 1 {
        let names: Vec<_> = fns.iter().map(|f| f.name.as_str()).collect();
        return Err(format!(
            "{} has several pipelined functions ({}); pick one with --function",
            file.display(),
            names.join(", ")
        ));
    }
    Ok(fns.remove(0))
}

/// Where the host code's `CUDA_SOURCE` literal and the program description's `cuda_source`
/// send the reader: the CUDA section printed above, or the command that prints it.
fn cuda_pointer(printed: bool, lines: usize) -> String {
    if printed {
        format!("the CUDA C section above ({lines} lines)")
    } else {
        format!("`pacc expand --cuda` prints it ({lines} lines)")
    }
}

/// The host code with its `CUDA_SOURCE` literal (the whole CUDA C as one escaped line) replaced
/// by `pointer` to the CUDA section, which prints the same text readably.
fn elide_cuda_literal(host: &str, pointer: &str) -> String {
    const DECL: &str = "pub const CUDA_SOURCE: &str = \"";
    host.lines()
        .map(|l| match l.find(DECL) {
            Some(at) => format!("{}\"...\"; // {pointer}", &l[..at + DECL.len() - 1]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the `__global__` function `name` of `program`'s CUDA source is: which nest, point
/// statement or fused group, in which form. `stage` is whether it is the branch of an
/// `#if PACC_STAGE ..` (true) or its `#else` (false), if either.
fn kernel_form(program: &pacc_runtime::Program, name: &str, stage: Option<bool>) -> String {
    use pacc_runtime::program::{PLAIN_SUFFIX, VECTOR_SUFFIX, VECTOR_WIDTH};
    for k in &program.kernels {
        if name == k.name {
            return match stage {
                Some(true) => "marching, staged: in-plane reads from shared-memory tiles",
                Some(false) => "marching, L1: in-plane reads through the cache",
                None => "marching",
            }
            .to_string();
        }
        if name.strip_prefix(k.name.as_str()) == Some(PLAIN_SUFFIX) {
            return "plain: one thread per point".to_string();
        }
        if name.strip_prefix(k.name.as_str()) == Some(VECTOR_SUFFIX) {
            return format!("vector marching: {VECTOR_WIDTH} points along x per thread");
        }
    }
    if program.points.iter().any(|p| p.name == name) {
        return "point statement".to_string();
    }
    match program.fusion.kernels.iter().find(|f| f.name == name) {
        Some(f) => format!("fused: {} steps per launch", f.steps),
        None => "helper".to_string(),
    }
}

/// A comment that lists the `__global__` functions of `cuda` (the CUDA source of `program`): the
/// line of each in the source (NVRTC's messages count the same lines), its name and form, and
/// the preprocessor condition it is compiled under. Empty when the source has none.
fn kernel_index(cuda: &str, program: &pacc_runtime::Program) -> String {
    // Open conditionals: the condition, its line, and whether we are in its `#else`.
    let mut open: Vec<(String, usize, bool)> = Vec::new();
    let mut rows = Vec::new();
    for (i, line) in cuda.lines().enumerate() {
        let t = line.trim_start();
        if let Some(c) = t.strip_prefix("#if ") {
            open.push((c.trim().to_string(), i + 1, false));
        } else if let Some(c) = t.strip_prefix("#ifdef ") {
            open.push((format!("defined({})", c.trim()), i + 1, false));
        } else if let Some(c) = t.strip_prefix("#ifndef ") {
            open.push((format!("!defined({})", c.trim()), i + 1, false));
        } else if let Some(c) = t.strip_prefix("#elif ") {
            if let Some(top) = open.last_mut() {
                *top = (c.trim().to_string(), i + 1, false);
            }
        } else if t.starts_with("#else") {
            if let Some(top) = open.last_mut() {
                top.2 = true;
            }
        } else if t.starts_with("#endif") {
            open.pop();
        } else if t.contains("__global__") {
            let Some(name) = t
                .rsplit_once('(')
                .and_then(|(h, _)| h.split_whitespace().last())
            else {
                continue;
            };
            let stage = open
                .iter()
                .rev()
                .find(|(c, ..)| c.starts_with("PACC_STAGE"))
                .map(|&(_, _, e)| !e);
            let under: Vec<String> = open
                .iter()
                .map(|(c, at, e)| match e {
                    false => format!("#if {c}"),
                    true => format!("#else of the #if at line {at}"),
                })
                .collect();
            rows.push((i + 1, name, kernel_form(program, name, stage), under));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let mut s = String::from(
        "// Kernel forms below (line in the source: function, form; the condition it is compiled \
         under):\n",
    );
    for (line, name, form, under) in rows {
        let _ = writeln!(s, "// {line:>6}  {name:<width$}  {form}");
        if !under.is_empty() {
            let _ = writeln!(s, "// {:>6}  {:<width$}    {}", "", "", under.join(", in "));
        }
    }
    s
}

/// `pacc expand`: the generated CUDA, host Rust and program description of `file`'s functions.
fn expand(
    file: &PathBuf,
    function: Option<&str>,
    (cuda, host, program): (bool, bool, bool),
    out: &mut String,
) -> Result<(), String> {
    let mut section = |title: String, body: &str| {
        let _ = writeln!(out, "// ===== {title} =====\n{}\n", body.trim_end());
    };
    for f in &pipelined(file, function)? {
        let name = &f.name;
        let pointer = cuda_pointer(!host, f.cuda.lines().count());
        if !host {
            let index = kernel_index(&f.cuda, &f.program);
            section(
                format!("`{name}`: CUDA C (`{name}::CUDA_SOURCE`)"),
                &format!(
                    "{index}{}{}",
                    if index.is_empty() { "" } else { "\n" },
                    f.cuda
                ),
            );
        }
        if !cuda {
            section(
                format!("`{name}`: host Rust (the wrapper and `mod {name}`)"),
                &elide_cuda_literal(&f.host, &pointer),
            );
        }
        if program {
            let mut v = serde_json::to_value(&f.program).map_err(|e| e.to_string())?;
            v["cuda_source"] = serde_json::Value::from(format!("/* {pointer} */"));
            let json = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
            section(format!("`{name}`: program description"), &json);
        }
    }
    Ok(())
}

fn run(cli: Cli, out: &mut String) -> Result<(), String> {
    match cli.cmd {
        Cmd::Expand {
            file,
            function,
            cuda,
            host,
            program,
        } => expand(&file, function.as_deref(), (cuda, host, program), out),
        Cmd::Plan(args) => plan_run(args, out),
    }
}

/// `pacc plan`: the plan of a run as `pacc_runtime::run` would make it with these settings (on
/// the CPU path: the CUDA tuner is not consulted), its summary or JSON, and the race check.
fn plan_run(a: PlanArgs, out: &mut String) -> Result<(), String> {
    let translated = one_function(&a.file, a.function.as_deref())?;
    let (program, notes) = (translated.program, translated.notes);
    let program = with_scalars(&program, a.scalar.as_deref())?;
    let shape = numbers(&a.shape)
        .map_err(|_| format!("--shape `{}`: expected numbers like 512,512,512", a.shape))?;
    let elem = program.arrays.iter().map(|x| x.elem.size()).max();
    array_bytes(&shape, elem.unwrap_or(1)).map_err(|e| format!("--shape `{}`: {e}", a.shape))?;
    let mut o = pacc_runtime::Options::new()
        .read_only_ring(!a.no_ring)
        .set_by("fuse", pacc_runtime::Origin::CommandLine);
    (o.chunks, o.block_steps, o.scheme) = (a.chunks, a.block_steps, Some(a.scheme));
    o.fuse = a.fuse;
    // As a run: settled once (0 or 1 step per launch is the single-step kernels).
    let settled = config::settle(&program, &o);
    let fuse = settled.fuse;
    // One block by default: as many steps as the blocking depth the run would use (for a fused
    // run, rounded up to whole groups: the block it would run).
    let steps = a.steps.unwrap_or_else(|| {
        let k = (settled.fixed.block_steps).unwrap_or(config::DEFAULT_BLOCK_STEPS);
        fuse.map_or(k, |s| k.div_ceil(s) * s)
    });
    let point_planes: Vec<usize> = match &a.points {
        Some(p) => numbers(p).map_err(|_| format!("--points `{p}`: expected plane numbers"))?,
        None => vec![shape.first().copied().unwrap_or(0) / 2; program.points.len()],
    };
    if point_planes.len() != program.points.len() {
        return Err(format!(
            "`{}` has {} point statement(s) but --points gives {}",
            program.name,
            program.points.len(),
            point_planes.len()
        ));
    }
    if let Some(c) = &a.compress {
        let l = pacc_runtime::compress::parse_list(c).map_err(|e| format!("--compress: {e}"))?;
        (o.compress, o.compress_all, o.compress_off) = (l.arrays, l.all, l.off);
    }
    let rates =
        config::compress_rates(&program, &shape, a.scheme, &o).map_err(|e| e.to_string())?;
    let base = config::plan_options(&program, shape.first().copied().unwrap_or(0), steps, &o);
    let mut opts = PlanOptions {
        buffer_sets: a.buffer_sets.unwrap_or(base.buffer_sets),
        compress: rates,
        ..base
    };
    // A fused run (`pacc_runtime::run`): the options resolved on the original program, then the
    // program with its fused kernel and output buffers, planned in groups of `s` steps.
    let (program, plan_steps) = match fuse {
        None => (program, steps),
        Some(s) => {
            let groups = pacc_runtime::fuse::in_groups(&program, steps, s, &settled, &mut opts)
                .map_err(|e| e.to_string())?;
            (
                pacc_runtime::fuse::program(&program, s).map_err(|e| e.to_string())?,
                groups,
            )
        }
    };
    // A long run is planned in segments, one plan run again for each (fused runs: one).
    let segment = match fuse {
        None => opts.segment_steps(plan_steps, None),
        Some(_) => plan_steps.max(1),
    };
    let plan = plan::build(
        &program,
        &shape,
        segment.min(plan_steps),
        &point_planes,
        &opts,
    )
    .map_err(|e| format!("cannot plan the run: {e}"))?;
    let segments = (segment < plan_steps).then(|| Segmented {
        steps: plan_steps,
        full: plan_steps / segment,
        each: segment,
        tail: plan_steps % segment,
    });
    if a.json {
        return plan_json(out, &program, &plan, segments.as_ref(), notes);
    }
    plan_text(out, &program, &plan, segments.as_ref(), &notes)
}

/// `pacc plan --json`: the plan, its segments, summary, warnings, notes and fusion as one object.
fn plan_json(
    out: &mut String,
    program: &pacc_runtime::Program,
    plan: &plan::Plan,
    segments: Option<&Segmented>,
    notes: Vec<String>,
) -> Result<(), String> {
    let mut v = serde_json::to_value(plan).map_err(|e| e.to_string())?;
    if let Some(s) = segments {
        v["segments"] = serde_json::json!({
            "steps": s.steps, "full": s.full, "steps_each": s.each, "tail_steps": s.tail,
        });
    }
    let totals = serde_json::to_value(plan.totals(program));
    v["summary"] = totals.map_err(|e| e.to_string())?;
    v["warnings"] = serde_json::Value::from(plan.warnings(program));
    v["notes"] = serde_json::Value::from(notes);
    if let Some(f) = fusion_json(program, plan) {
        v["fusion"] = f;
    }
    let _ = writeln!(out, "{v}");
    Ok(())
}

/// `pacc plan`'s text: notes, segments, the summary, warnings, windows, link and launches per
/// block, fused work, and the race check.
fn plan_text(
    out: &mut String,
    program: &pacc_runtime::Program,
    plan: &plan::Plan,
    segments: Option<&Segmented>,
    notes: &[String],
) -> Result<(), String> {
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    if let Some(s) = segments {
        let _ = writeln!(
            out,
            "segments: the run's {} steps are planned in {} segments of {} steps{} (at most {} \
             blocks per plan), each from the arrays on the host; the plan below is one segment's",
            s.steps,
            s.full + usize::from(s.tail > 0),
            s.each,
            match s.tail {
                0 => String::new(),
                t => format!(", the last of {t}"),
            },
            plan::MAX_PLANNED_BLOCKS
        );
    }
    out.push_str(&plan.summary(program));
    for w in plan.warnings(program) {
        let _ = writeln!(out, "warning: {w}");
    }
    if plan.scheme.tiling().skews_windows() {
        out.push_str(&plan.windows(program));
    }
    print_link_per_block(out, program, plan);
    print_launches_per_block(out, program, plan);
    print_fused_work(out, program);
    match plan::race::check(program, plan) {
        Ok(()) => {
            let _ = writeln!(
                out,
                "race check: passed (every two conflicting operations are ordered)"
            );
        }
        Err(e) => return Err(format!("race check FAILED: {e}")),
    }
    Ok(())
}

/// `program` with its loop bounds resolved from `--scalar NAME=VALUE,...` (the run takes the
/// call's values, `Program::resolved`); a bound whose scalar has no value is refused, naming it.
fn with_scalars(
    program: &pacc_runtime::Program,
    list: Option<&str>,
) -> Result<pacc_runtime::Program, String> {
    let mut values = vec![None; program.scalars.len()];
    for item in list
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.trim().is_empty())
    {
        let bad = || format!("--scalar `{item}`: expected NAME=VALUE with an integer VALUE");
        let (name, value) = item.split_once('=').ok_or_else(bad)?;
        let value: i128 = value.trim().parse().map_err(|_| bad())?;
        let Some(s) = program.scalars.iter().position(|d| d.name == name.trim()) else {
            let names = program.scalars.iter().map(|d| format!("`{}`", d.name));
            return Err(format!(
                "--scalar `{item}`: `{}` has no scalar `{}` (its scalars: {})",
                program.name,
                name.trim(),
                names.collect::<Vec<_>>().join(", ")
            ));
        };
        values[s] = Some(value);
    }
    use pacc_runtime::program::BoundError;
    let resolved = program.resolved(|s| values.get(s).copied().flatten());
    // A scalar without a value here is one the command line did not give.
    let resolved = resolved.map_err(|e| match e {
        BoundError::NotInteger {
            nest,
            kernel,
            axis,
            scalar,
        } => BoundError::Unresolved {
            nest,
            kernel,
            axis,
            scalar,
        },
        e => e,
    });
    Ok(resolved.map_err(|e| e.to_string())?.into_owned())
}

/// The bytes of one array of `shape` with `elem`-byte elements; refused (the planner's
/// arithmetic would wrap) where no array can have that shape: more than `isize::MAX` bytes.
fn array_bytes(shape: &[usize], elem: usize) -> Result<usize, String> {
    shape
        .iter()
        .try_fold(elem, |n, &d| n.checked_mul(d))
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| {
            format!(
                "an array of this shape ({elem}-byte elements) would hold more bytes than the \
                 address space ({}); no array has this shape",
                isize::MAX
            )
        })
}

/// How a long run is planned ([`PlanOptions::segment_steps`]): `full` segments of `each`
/// steps, then one of `tail` (if not 0), `steps` in all.
struct Segmented {
    steps: usize,
    full: usize,
    each: usize,
    tail: usize,
}

/// Planes per block crossing the link, summed over arrays and compared with the extent of the
/// outermost axis (region sharing moves every array that is read once per block). Runs of
/// equal blocks share a line in long plans ([`plan::block_runs`]).
fn print_link_per_block(
    out: &mut String,
    program: &pacc_runtime::Program,
    plan: &pacc_runtime::Plan,
) {
    let n0 = plan.shape.first().copied().unwrap_or(0).max(1);
    let lines: Vec<String> = (plan.link_planes().iter())
        .map(|arrays| {
            let parts: Vec<String> = (program.arrays.iter().zip(arrays))
                .filter(|(_, &[h, _])| h > 0)
                .map(|(decl, &[h, _])| format!("{} {h} ({:.2}x)", decl.name, h as f64 / n0 as f64))
                .collect();
            match parts.is_empty() {
                true => "none".to_string(),
                false => parts.join(", "),
            }
        })
        .collect();
    for run in plan::block_runs(&lines) {
        let _ = writeln!(
            out,
            "{}: planes to device per array (x the {n0} planes of axis 0): {}",
            plan::blocks_label(&run),
            lines[run.start]
        );
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A fused plan's output buffers (the twins `name~k` of the arrays the group writes): program
/// array indices, and their bytes on the device over all buffer sets. Empty for other plans.
fn output_buffers(program: &pacc_runtime::Program, plan: &pacc_runtime::Plan) -> (Vec<usize>, u64) {
    let Some(active) = &program.fusion.active else {
        return (Vec::new(), 0);
    };
    let first = program.arrays.len() - active.twins.len();
    let twins: Vec<usize> = (first..program.arrays.len()).collect();
    let bytes = twins
        .iter()
        .map(|&t| (plan.device_planes(t) * plan.plane_len * plan.elem_sizes[t]) as u64)
        .sum();
    (twins, bytes)
}

/// Launches of one block: per kernel of `program` its launches per chunk (min and max over the
/// block's chunks), per point statement its launches in all, and the kernel launches in all.
type BlockLaunches = (Vec<(usize, usize)>, Vec<usize>, usize);

/// The launches of every block, in one pass over the operations.
fn launches(program: &pacc_runtime::Program, plan: &pacc_runtime::Plan) -> Vec<BlockLaunches> {
    let mut kernels: Vec<Vec<Vec<usize>>> = (plan.blocks.iter())
        .map(|b| vec![vec![0usize; b.chunks.len().max(1)]; program.kernels.len()])
        .collect();
    let mut points = vec![vec![0usize; program.points.len()]; plan.blocks.len()];
    let mut total = vec![0usize; plan.blocks.len()];
    for op in plan.ops.iter().filter(|op| op.block < plan.blocks.len()) {
        if op.kind.kernel_planes().is_some() {
            total[op.block] += 1;
        }
        match op.kind {
            plan::OpKind::Kernel { kernel, .. } => {
                let chunk = kernels[op.block]
                    .get_mut(kernel)
                    .and_then(|k| k.get_mut(op.chunk));
                if let Some(c) = chunk {
                    *c += 1;
                }
            }
            plan::OpKind::Point { point, .. } => points[op.block][point] += 1,
            _ => {}
        }
    }
    let per_chunk = |k: &Vec<Vec<usize>>| -> Vec<(usize, usize)> {
        k.iter()
            .map(|c| {
                let min = c.iter().copied().min().unwrap_or(0);
                (min, c.iter().copied().max().unwrap_or(0))
            })
            .collect()
    };
    (kernels.iter().zip(points).zip(total))
        .map(|((k, p), t)| (per_chunk(k), p, t))
        .collect()
}

/// Per block: the time steps it advances and the launches that take, per chunk (for a fused
/// plan, of the fused kernel, and the output buffers it writes to on the device). Runs of
/// equal blocks share a line in long plans ([`plan::block_runs`]).
fn print_launches_per_block(
    out: &mut String,
    program: &pacc_runtime::Program,
    plan: &pacc_runtime::Plan,
) {
    let per = program.fusion.active.as_ref().map(|a| a.decl.steps);
    let (twins, twin_bytes) = output_buffers(program, plan);
    let each = match per {
        Some(s) => format!(" ({s} steps each)"),
        None => String::new(),
    };
    let lines: Vec<String> = (plan.blocks.iter().zip(launches(program, plan)))
        .map(|(block, (per_chunk, points, total))| {
            let kernels: Vec<String> = (per_chunk.iter().zip(&program.kernels))
                .map(|(&(min, max), k)| {
                    let n = match min == max {
                        true => max.to_string(),
                        false => format!("{min}-{max}"),
                    };
                    format!("{n} launches of `{}`{each}", k.name)
                })
                .collect();
            let mut line = format!(
                "kernel launches: {} steps = {} per chunk ({total} over {} chunks)",
                block.steps * per.unwrap_or(1),
                kernels.join(" + "),
                block.chunks.len()
            );
            for (n, p) in points.iter().zip(&program.points) {
                if *n > 0 {
                    let _ = write!(
                        line,
                        " + {n} launches of point statement `{}` in the chunks holding its plane",
                        p.name
                    );
                }
            }
            if !twins.is_empty() {
                let names: Vec<&str> = (twins.iter())
                    .map(|&t| program.arrays[t].name.as_str())
                    .collect();
                let _ = write!(
                    line,
                    " + output buffers: {} ({} on the device)",
                    names.join(", "),
                    mib(twin_bytes)
                );
            }
            line
        })
        .collect();
    for run in plan::block_runs(&lines) {
        let _ = writeln!(out, "{}: {}", plan::blocks_label(&run), lines[run.start]);
    }
}

/// Segments long enough for the planes a fused block computes below and above them to vanish
/// from its work: `pacc plan` knows no GPU, whose resident blocks set the segments.
const IN_THE_PLANE: usize = 1 << 40;

/// A thread block a fused plan's kernel may launch with: the vector form's (the first is the
/// default) or the one-column form's, its output tile and its work in the plane.
struct FusedBlock {
    block: [u32; 2],
    vector: bool,
    tile: [u32; 2],
    work: pacc_runtime::program::FusedWork,
}

/// Every block of a fused plan's kernel ([`FusedBlock`]); empty for other plans, or where the
/// program does not say where its invocations compute.
fn fused_blocks(program: &pacc_runtime::Program) -> Vec<FusedBlock> {
    let Some(active) = &program.fusion.active else {
        return Vec::new();
    };
    let (d, nd) = (&active.decl, program.ndim);
    let forms = (d.vector_blocks.iter().map(|&b| (b, true))).chain([(d.block, false)]);
    forms
        .filter_map(|(block, vector)| {
            Some(FusedBlock {
                block,
                vector,
                tile: pacc_runtime::program::fused_tile(block, d.halo, nd, vector),
                work: d.work(block, vector, nd, IN_THE_PLANE)?,
            })
        })
        .collect()
}

/// A fused plan's kernel: for each block its forms take ([`fused_blocks`]), the output tile and
/// the work per point-step in the plane (the GPU's segments add the planes below and above).
fn print_fused_work(out: &mut String, program: &pacc_runtime::Program) {
    let Some(active) = &program.fusion.active else {
        return;
    };
    for (i, b) in fused_blocks(program).iter().enumerate() {
        let form = match (b.vector, i) {
            (true, 0) => "vector form (the default)",
            (true, _) => "vector form",
            (false, 0) => "one-column form",
            (false, _) => "one-column form (PACC_MARCH=vx=1)",
        };
        let _ = writeln!(
            out,
            "fused kernel `{}`, {form}, {}x{} threads: output tile {}x{}, in the plane {:.2} \
             evaluations and {:.2} thread lanes per point-step",
            active.decl.name,
            b.block[0],
            b.block[1],
            b.tile[0],
            b.tile[1],
            b.work.evaluations,
            b.work.lanes
        );
    }
}

/// What `pacc plan --json` says of a fused plan (none for other plans): steps per launch, the
/// kernel, the run's steps and block steps (the plan's own count launches), the output buffers.
fn fusion_json(
    program: &pacc_runtime::Program,
    plan: &pacc_runtime::Plan,
) -> Option<serde_json::Value> {
    let active = program.fusion.active.as_ref()?;
    let s = active.decl.steps;
    let (twins, bytes) = output_buffers(program, plan);
    let buffers: Vec<serde_json::Value> = twins
        .iter()
        .zip(&active.twins)
        .map(|(&t, &of)| {
            serde_json::json!({
                "name": program.arrays[t].name,
                "array": program.arrays[of].name,
                "device_bytes": plan.device_planes(t) * plan.plane_len * plan.elem_sizes[t],
            })
        })
        .collect();
    Some(serde_json::json!({
        "steps_per_launch": s,
        "kernel": active.decl.name,
        "steps": plan.steps * s,
        "block_steps": plan.block_steps * s,
        "launches_per_chunk": (launches(program, plan).iter())
            .map(|(per_chunk, _, _)| per_chunk.iter().map(|&(_, max)| max).sum::<usize>())
            .collect::<Vec<_>>(),
        "output_buffers": buffers,
        "output_buffer_bytes": bytes,
        "blocks": fused_blocks(program)
            .iter()
            .map(|b| {
                serde_json::json!({
                    "threads": b.block,
                    "vector": b.vector,
                    "output_tile": b.tile,
                    "evaluations_per_point_step": b.work.evaluations,
                    "lanes_per_point_step": b.work.lanes,
                })
            })
            .collect::<Vec<_>>(),
    }))
}
