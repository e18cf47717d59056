//! `pacc`: read what the translator generates and how a run is planned.
//!
//! ```text
//! pacc expand src/models/acoustic.rs --function propagate
//! pacc plan src/models/acoustic.rs --function propagate --shape 1160,1160,1160 \
//!     --chunks 8 --block-steps 12 --scheme region-sharing
//! ```

use clap::{Parser, Subcommand};
use pacc_runtime::config;
use pacc_runtime::plan::{self, PlanOptions, Scheme};
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
    Plan {
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
        /// staged-copy, direct-map, region-sharing or wavefront.
        #[arg(long, default_value = "region-sharing")]
        scheme: Scheme,
        /// Time steps of the run (default: one block).
        #[arg(long)]
        steps: Option<usize>,
        /// Device buffer sets in flight (default: the scheme's, 4 for the wavefront, else 3).
        #[arg(long)]
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
        /// Print the plan as JSON (every operation) instead of the summary.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let mut out = String::new();
    match run(Cli::parse(), &mut out) {
        Ok(()) => {
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

/// The host code with its `CUDA_SOURCE` literal (the whole CUDA C as one escaped line) replaced
/// by a pointer to the CUDA section, which prints the same text readably.
fn elide_cuda_literal(host: &str, cuda_lines: usize) -> String {
    const DECL: &str = "pub const CUDA_SOURCE: &str = \"";
    host.lines()
        .map(|l| match l.find(DECL) {
            Some(at) => format!(
                "{}\"...\"; // the CUDA C section above ({cuda_lines} lines)",
                &l[..at + DECL.len() - 1]
            ),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
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
        if !host {
            section(format!("`{name}`: CUDA C (`{name}::CUDA_SOURCE`)"), &f.cuda);
        }
        if !cuda {
            section(
                format!("`{name}`: host Rust (the wrapper and `mod {name}`)"),
                &elide_cuda_literal(&f.host, f.cuda.lines().count()),
            );
        }
        if program {
            let json = serde_json::to_string_pretty(&f.program).map_err(|e| e.to_string())?;
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
        Cmd::Plan {
            file,
            function,
            shape,
            chunks,
            block_steps,
            scheme,
            steps,
            buffer_sets,
            points,
            compress,
            no_ring,
            json,
        } => {
            let program = one_function(&file, function.as_deref())?.program;
            let shape = numbers(&shape)
                .map_err(|_| format!("--shape `{shape}`: expected numbers like 512,512,512"))?;
            let mut o = pacc_runtime::Options::new().read_only_ring(!no_ring);
            (o.chunks, o.block_steps, o.scheme) = (chunks, block_steps, Some(scheme));
            // One block by default: as many steps as the blocking depth the run would use.
            let steps = steps.unwrap_or_else(|| {
                config::Fixed::of(&program, &o)
                    .block_steps
                    .unwrap_or(config::DEFAULT_BLOCK_STEPS)
            });
            let point_planes: Vec<usize> = match points {
                Some(p) => {
                    numbers(&p).map_err(|_| format!("--points `{p}`: expected plane numbers"))?
                }
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
            if let Some(c) = &compress {
                let l = pacc_runtime::compress::parse_list(c)
                    .map_err(|e| format!("--compress: {e}"))?;
                (o.compress, o.compress_all, o.compress_off) = (l.arrays, l.all, l.off);
            }
            let rates = pacc_runtime::compress::rates(&program, &shape, scheme, &o)
                .map_err(|e| e.to_string())?;
            let base =
                config::plan_options(&program, shape.first().copied().unwrap_or(0), steps, &o);
            let opts = PlanOptions {
                buffer_sets: buffer_sets.unwrap_or(base.buffer_sets),
                compress: rates,
                ..base
            };
            let plan = plan::build(&program, &shape, steps, &point_planes, &opts)
                .map_err(|e| format!("cannot plan the run: {e}"))?;
            if json {
                let mut v = serde_json::to_value(&plan).map_err(|e| e.to_string())?;
                let totals = serde_json::to_value(plan.totals(&program));
                v["summary"] = totals.map_err(|e| e.to_string())?;
                v["warnings"] = serde_json::Value::from(plan.warnings(&program));
                let _ = writeln!(out, "{v}");
                return Ok(());
            }
            out.push_str(&plan.summary(&program));
            for w in plan.warnings(&program) {
                let _ = writeln!(out, "warning: {w}");
            }
            if plan.scheme.tiling() == plan::Tiling::Wavefront {
                out.push_str(&plan.windows(&program));
            }
            print_link_per_block(out, &program, &plan);
            match plan::race::check(&program, &plan) {
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
    }
}

/// Planes per block crossing the link, summed over arrays and compared with the extent of the
/// outermost axis (region sharing moves every array that is read once per block).
fn print_link_per_block(
    out: &mut String,
    program: &pacc_runtime::Program,
    plan: &pacc_runtime::Plan,
) {
    let n0 = plan.shape.first().copied().unwrap_or(0).max(1);
    for b in 0..plan.blocks.len() {
        let mut parts = Vec::new();
        for (a, decl) in program.arrays.iter().enumerate() {
            let h = plan.planes_htod(b, a);
            if h > 0 {
                parts.push(format!("{} {h} ({:.2}x)", decl.name, h as f64 / n0 as f64));
            }
        }
        let _ = writeln!(
            out,
            "block {b}: planes to device per array (x the {n0} planes of axis 0): {}",
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join(", ")
            }
        );
    }
}
