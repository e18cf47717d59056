//! What the three example programs share: the pipeline options on the command line, the
//! comparison with the serial function, and the one-line JSON summary.

#![allow(dead_code)] // each example uses a different subset

#[cfg(feature = "mpi")]
pub mod dist;

use clap::Args;
use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacc::runtime::Origin;
use pacc::runtime::StepsDone;
use pacc::{BackendChoice, Options, Report, Scheme};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of the pipelined run (every one falls back to the `PACC_*` environment variables,
/// then to the directive's clauses and pacc's defaults).
#[derive(Args, Debug, Clone)]
pub struct PipelineArgs {
    // Help from `backend_help` (the names the runtime's parser takes).
    #[arg(long, help = backend_help())]
    pub backend: Option<String>,
    /// Number of chunks the outermost axis is split into.
    #[arg(long)]
    pub chunks: Option<usize>,
    /// Time steps per block (temporal blocking depth).
    #[arg(long)]
    pub block_steps: Option<usize>,
    /// How data moves between host and device (the wavefront: skewed tiling, every point
    /// computed once, the boundary staircase shared on the device).
    #[arg(long, help = scheme_help())]
    pub scheme: Option<String>,
    /// Let the CUDA compiler contract multiply-adds into FMAs (results then match the serial
    /// function within rounding only).
    #[arg(long)]
    pub fma: bool,
    /// Also run the serial function on a copy of the inputs and compare (exit status 1 on a
    /// mismatch).
    #[arg(long)]
    pub verify: bool,
    /// Largest difference allowed by --verify for the CUDA backend, relative to the largest
    /// magnitude of the serial result (other backends must match bit for bit).
    #[arg(long, default_value_t = 1e-4)]
    pub tolerance: f64,
    /// Print one JSON object with the results on the last line of standard output.
    #[arg(long)]
    pub json: bool,
    /// Write a Chrome/Perfetto trace of the streams to this file (CUDA backend).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Compress these arrays between blocks at RATE bits per value (lossy; `--verify` then
    /// reports the differences within --tolerance): NAME=RATE per array, with NAME a parameter
    /// of the program's pipelined function (`pacc expand --program` lists them), `all=RATE`,
    /// or `off`.
    #[arg(long, value_name = "NAME=RATE[,NAME=RATE]")]
    pub compress: Option<String>,
    /// Compress every array the run writes at RATE bits per value between blocks (inputs too
    /// with PACC_COMPRESS_INPUTS=1). On CUDA the tuner compresses only where it predicts a gain
    /// and the report says why; PACC_COMPRESS_WHEN=always compresses regardless.
    #[arg(long, value_name = "RATE")]
    pub compress_all: Option<f64>,
    /// Plan as if the GPU had only this many GB free (CUDA): tries out-of-core runs, and ranks
    /// whose slabs do not fit their GPUs, on a GPU that would hold the whole domain.
    #[arg(long, value_name = "GB")]
    pub device_memory: Option<f64>,
}

impl PipelineArgs {
    pub fn options(&self) -> Result<Options, String> {
        let mut o = Options::from_env().map_err(|e| e.to_string())?;
        // Flags override the environment; errors about their values then name the flag.
        let flag = Origin::CommandLine;
        if let Some(b) = &self.backend {
            o.backend = b
                .parse::<BackendChoice>()
                .map_err(|e| format!("--backend: {e}"))?;
            o = o.set_by("backend", flag);
        }
        if let Some(d) = self.chunks {
            o.chunks = Some(d);
            o = o.set_by("chunks", flag);
        }
        if let Some(k) = self.block_steps {
            o.block_steps = Some(k);
            o = o.set_by("block_steps", flag);
        }
        if let Some(s) = &self.scheme {
            o.scheme = Some(s.parse::<Scheme>().map_err(|e| format!("--scheme: {e}"))?);
            o = o.set_by("scheme", flag);
        }
        o.cuda.fma |= self.fma;
        if let Some(t) = &self.trace {
            o.cuda.trace = Some(t.clone());
        }
        if let Some(list) = &self.compress {
            let l = pacc::runtime::compress::parse_list(list)
                .map_err(|e| format!("--compress: {e}"))?;
            if l.off {
                o = o.no_compression();
            }
            if let Some(r) = l.all {
                o = o.compress_all(r);
            }
            for (name, rate) in l.arrays {
                o = o.compress(name, rate);
            }
        }
        if let Some(r) = self.compress_all {
            o = o.compress_all(r);
        }
        if let Some(gb) = self.device_memory {
            if gb.is_nan() || gb <= 0.0 {
                return Err(format!(
                    "--device-memory {gb}: expected a positive number of GB"
                ));
            }
            #[cfg(feature = "cuda")]
            pacc::runtime::exec::cuda::set_device_memory_limit(Some((gb * 1e9) as u64));
        }
        // A progress bar where a person watches (not with --json, not into a file or pipe).
        if !self.json && std::io::stderr().is_terminal() {
            let bar = StepBar::new();
            o = o.on_progress(move |p| bar.update(p));
        }
        Ok(o)
    }
}

/// A progress bar on stderr fed by the executors' progress hook: steps done, seconds per step
/// and time left. It shows only once the run looks like lasting more than a couple of seconds,
/// and clears itself when the run ends (the report follows on stdout). One bar serves every run
/// made with the same options, one after the other.
pub struct StepBar(Mutex<BarState>);

struct BarState {
    /// When the run began (options made, or the previous run ended).
    start: Instant,
    /// The first report of the run: when, and at how many steps (the rate is measured from it).
    first: Option<(Instant, usize)>,
    bar: Option<ProgressBar>,
    last: usize,
}

/// Runs expected to take less than this get no bar.
const BAR_AFTER: Duration = Duration::from_secs(2);

impl StepBar {
    pub fn new() -> StepBar {
        StepBar(Mutex::new(BarState {
            start: Instant::now(),
            first: None,
            bar: None,
            last: 0,
        }))
    }

    pub fn update(&self, p: StepsDone) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if p.done < s.last {
            // A new run with the same options.
            s.first = None;
        }
        s.last = p.done;
        let (t1, d1) = *s.first.get_or_insert((now, p.done));
        if p.done >= p.total {
            if let Some(bar) = s.bar.take() {
                bar.finish_and_clear();
            }
            s.start = now;
            s.first = None;
            return;
        }
        // Seconds per step: since the first report once there is a second, else since the start.
        let per_step = if p.done > d1 {
            (now - t1).as_secs_f64() / (p.done - d1) as f64
        } else {
            (now - s.start).as_secs_f64() / p.done.max(1) as f64
        };
        let expected = Duration::from_secs_f64(per_step * p.total as f64);
        if s.bar.is_none() && expected.max(now - s.start) >= BAR_AFTER {
            s.bar = Some(new_bar(p.total as u64, now - s.start));
        }
        if let Some(bar) = &s.bar {
            bar.set_position(p.done as u64);
            let left = Duration::from_secs_f64(per_step * (p.total - p.done) as f64);
            bar.set_message(format!(
                "{per_step:.3} s/step, {} left",
                HumanDuration(left)
            ));
        }
    }
}

impl Default for StepBar {
    fn default() -> Self {
        Self::new()
    }
}

fn new_bar(total: u64, elapsed: Duration) -> ProgressBar {
    let style =
        ProgressStyle::with_template("{elapsed:>4} [{bar:40.cyan/blue}] {pos}/{len} steps, {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
        .with_style(style)
        .with_elapsed(elapsed);
    bar.enable_steady_tick(Duration::from_millis(500));
    bar
}

/// Host memory available for new allocations (`MemAvailable` of `/proc/meminfo`); `None` where
/// the system does not say (then nothing is checked).
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Exits with the figures, before anything is allocated, when `arrays` arrays of `points`
/// elements of `elem` bytes do not fit in the host memory available (the examples keep every
/// array in host memory; copies for `--verify` count as arrays).
pub fn check_host_memory(what: &str, arrays: usize, points: usize, elem: usize) {
    const GIB: f64 = (1u64 << 30) as f64;
    let need = (arrays as u64)
        .checked_mul(points as u64)
        .and_then(|n| n.checked_mul(elem as u64));
    let avail = mem_available();
    match (need, avail) {
        (None, _) => fail(format!(
            "{what}: {arrays} arrays of {points} points do not fit in any memory; use a smaller size"
        )),
        (Some(need), Some(avail)) if need > avail => fail(format!(
            "{what} needs {:.1} GiB of host memory ({arrays} arrays of {points} points, {elem} \
             bytes each; copies kept for --verify count), but only {:.1} GiB is available \
             (MemAvailable in /proc/meminfo); use a smaller size",
            need as f64 / GIB,
            avail as f64 / GIB
        )),
        _ => {}
    }
}

/// Prints `error: msg` and exits with status 2.
pub fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

/// Where a result differs from the serial function's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Diff {
    /// Elements whose bits differ.
    pub differing: usize,
    pub max_abs: f64,
    /// `max_abs` over the largest magnitude of the reference.
    pub max_rel: f64,
}

impl Diff {
    pub fn identical(&self) -> bool {
        self.differing == 0
    }
}

/// Compares two arrays of the same shape element by element.
pub fn diff<'a>(
    got: impl IntoIterator<Item = &'a f32>,
    want: impl IntoIterator<Item = &'a f32>,
) -> Diff {
    let mut d = Diff::default();
    let mut scale = 0f64;
    for (g, w) in got.into_iter().zip(want) {
        if g.to_bits() != w.to_bits() {
            d.differing += 1;
        }
        let e = (*g as f64 - *w as f64).abs();
        d.max_abs = if e.is_nan() {
            f64::INFINITY
        } else {
            d.max_abs.max(e)
        };
        scale = scale.max((*w as f64).abs());
    }
    d.max_rel = if scale > 0.0 {
        d.max_abs / scale
    } else {
        d.max_abs
    };
    d
}

/// Collects the verdicts of `--verify`.
pub struct Verifier {
    /// Bit-for-bit equality required (every backend but CUDA).
    pub exact: bool,
    pub tolerance: f64,
    pub ok: bool,
}

impl Verifier {
    pub fn new(report: &Report, tolerance: f64) -> Verifier {
        // Compression is lossy: the differences measure its fidelity.
        let compressed = report.link_bytes() != report.link_bytes_raw();
        let exact = report.backend != "cuda" && !compressed;
        println!(
            "verify: comparing with the serial function ({}{})",
            if compressed {
                "compressed run, lossy: "
            } else {
                ""
            },
            if exact {
                "arrays must match bit for bit".to_string()
            } else {
                format!("arrays within {tolerance:e} relative")
            }
        );
        Verifier {
            exact,
            tolerance,
            ok: true,
        }
    }

    pub fn array(&mut self, name: &str, d: Diff) {
        let pass = if self.exact {
            d.identical()
        } else {
            d.max_rel <= self.tolerance
        };
        println!(
            "verify: {name:<6} {}: {} elements differ, max abs diff {:e}, max rel diff {:e}",
            if pass { "ok" } else { "MISMATCH" },
            d.differing,
            d.max_abs,
            d.max_rel
        );
        self.ok &= pass;
    }

    /// A reduction value: equal up to the rounding of a different summation order.
    pub fn value(&mut self, name: &str, got: f64, want: f64, rel_tol: f64) {
        let rel = if want != 0.0 {
            ((got - want) / want).abs()
        } else {
            got.abs()
        };
        let pass = rel <= rel_tol;
        println!(
            "verify: {name:<6} {}: {got:e} vs serial {want:e} (rel diff {rel:e}, allowed {rel_tol:e})",
            if pass { "ok" } else { "MISMATCH" }
        );
        self.ok &= pass;
    }

    /// Exits with status 1 if anything mismatched.
    pub fn finish(&self) {
        if self.ok {
            println!("verify: PASSED");
        } else {
            eprintln!("verify: FAILED: the pipelined result differs from the serial function's");
        }
    }
}

/// Prints what ran, as the report says.
pub fn print_report(report: &Report) {
    print!("{report}");
}

/// The JSON summary every example prints last with `--json`.
pub fn json_summary(
    example: &str,
    report: &Report,
    merit_name: &str,
    merit: f64,
    verified: Option<bool>,
    extra: serde_json::Value,
) -> String {
    let mut v = serde_json::json!({
        "example": example,
        "backend": report.backend,
        "device": report.device,
        "shape": report.shape,
        "steps": report.steps,
        "chunks": report.chunks,
        "block_steps": report.block_steps,
        "scheme": report.scheme.name(),
        "wall_seconds": report.wall_seconds,
        "bytes_htod": report.bytes_htod,
        "bytes_dtoh": report.bytes_dtoh,
        "bytes_dtod": report.bytes_dtod,
        "device_bytes": report.device_bytes,
        "bytes_htod_raw": report.bytes_htod_raw,
        "bytes_dtoh_raw": report.bytes_dtoh_raw,
        "compression_ratio": report.compression_ratio(),
        "encode_seconds": report.stages.encode,
        "decode_seconds": report.stages.decode,
        "stages": report.stages,
        "setup_parts": report.setup_parts,
        "notes": report.adjustments,
        "figure_of_merit": { "name": merit_name, "value": merit },
        "verified": verified,
    });
    if let (Some(obj), serde_json::Value::Object(more)) = (v.as_object_mut(), extra) {
        obj.extend(more);
    }
    v.to_string()
}

/// Parses `A,B,C` into numbers.
pub fn parse_list<T: std::str::FromStr>(s: &str, n: usize, what: &str) -> Result<Vec<T>, String> {
    let v: Result<Vec<T>, _> = s.split(',').map(|p| p.trim().parse::<T>()).collect();
    match v {
        Ok(v) if v.len() == n => Ok(v),
        _ => Err(format!(
            "{what}: expected {n} comma-separated numbers, got `{s}`"
        )),
    }
}

/// `--scheme`'s help: the registered schemes (`plan/scheme.rs`), so a new one shows up here.
fn backend_help() -> String {
    let names =
        (pacc::runtime::BackendChoice::NAMES.iter()).map(|(n, what)| format!("{n} ({what})"));
    format!("Backend: {}", pacc::runtime::words::sentence_list(names))
}

fn scheme_help() -> String {
    format!(
        "How data moves between host and device: {} (the wavefront: skewed tiling, every point \
         computed once, the boundary staircase shared on the device)",
        Scheme::names_where(|_| true)
    )
}
