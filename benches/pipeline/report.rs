//! Text and JSON output: the line each configuration prints as it finishes, the tables at the
//! end, the JSON file (written after every program so a run cut short keeps its results) and
//! `--from-json`, which reads results back.

use crate::cli::Args;
use crate::results::{gb, Measurement, Output, RunResult};

/// Writes `out` as pretty JSON to `path` (creating its directory).
pub fn write_json(path: &str, out: &Output) -> std::io::Result<()> {
    if let Some(dir) = std::path::Path::new(path).parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(out).map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}

/// `--from-json`: one file, or several merged (runs concatenated; the first file's header, the
/// others' commands appended).
pub fn read_json(list: &str) -> Result<Output, String> {
    let mut out: Option<Output> = None;
    for p in list.split(',') {
        let text = std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"))?;
        let o: Output =
            serde_json::from_str(&text).map_err(|e| format!("cannot parse {p}: {e}"))?;
        match &mut out {
            None => out = Some(o),
            Some(x) => {
                x.command = format!("{} ; {}", x.command, o.command);
                x.runs.extend(o.runs);
            }
        }
    }
    out.ok_or_else(|| "--from-json: no file named".into())
}

pub fn line(m: &Measurement) -> String {
    format!(
        "  {:<15} d={:<3} k={:<3} {:>3} steps {:>10.5} s/step  link {:>6.1} GB/s  floor {:>9.5} s/step  eff {:>5.2}{}",
        m.config,
        m.chunks,
        m.block_steps,
        m.steps,
        m.per_step,
        m.link_gbps,
        m.floor_seconds / m.steps.max(1) as f64,
        m.efficiency,
        m.predicted_seconds
            .map(|p| format!("  predicted {:.5} s/step", p / m.steps.max(1) as f64))
            .unwrap_or_default()
    )
}

pub fn print_tables(out: &Output) {
    println!("\n# pacc pipeline benchmark: {} ({})", out.device, out.date);
    println!("command: {}", out.command);
    if let Some(l) = &out.link {
        println!(
            "link (pinned, {} MiB buffers): HtoD {:.1} GB/s, DtoH {:.1} GB/s, both at once {:.1} GB/s",
            l.buffer_bytes >> 20,
            l.htod_gbps,
            l.dtoh_gbps,
            l.both_gbps
        );
    }
    if !out.note.is_empty() {
        println!("note: {}", out.note);
    }
    for r in &out.runs {
        print_run(r);
    }
}

/// One program at one size: the configurations, speedups, the tuner and the targets.
fn print_run(r: &RunResult) {
    println!(
        "\n## {} {} {:?} ({} kernels): {} arrays, {:.1} GB, {} steps",
        r.program,
        r.size,
        r.shape,
        r.kernels,
        r.arrays,
        gb(r.array_bytes),
        r.steps
    );
    for s in &r.skipped {
        println!("  skipped: {s}");
    }
    if r.configs.is_empty() {
        return;
    }
    print_configs(r);
    print_speedups(r);
    if let Some(t) = &r.tuner {
        println!(
            "\ntuner ({}): {} d={} k={} predicted {:.5} s/step, measured {:.5} s/step; grid best \
             {} d={} k={} {:.5} s/step; ratio {:.3} ({})",
            t.config,
            t.scheme,
            t.chunks,
            t.block_steps,
            t.predicted_per_step,
            t.measured_per_step,
            t.grid_best_scheme,
            t.grid_best_chunks,
            t.grid_best_steps,
            t.grid_best_per_step,
            t.ratio_to_best,
            match (t.within_5_percent, t.within_10_percent) {
                (true, _) => "within 5%",
                (false, true) => "within 10%, NOT within 5%",
                _ => "NOT within 10%",
            }
        );
    }
    for t in &r.targets {
        println!(
            "target: {} {} -> {} [{}]",
            t.what,
            t.want,
            t.got,
            if t.met { "met" } else { "MISSED" }
        );
    }
    for m in &r.configs {
        for n in &m.notes {
            println!("  {}: {n}", m.config);
        }
    }
}

/// The table of configurations (one row each).
fn print_configs(r: &RunResult) {
    println!(
        "| config | d | k | steps | s/step | GB in | GB out | GB d2d | link GB/s | floor s/step | eff | htod | dtoh | dtod | kernel | encode | decode | host copy | predicted s/step | model link | model kernel | redundancy |"
    );
    println!(
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for m in &r.configs {
        let st = m.steps.max(1) as f64;
        println!(
            "| {} | {} | {} | {} | {:.5} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {} | {} | {} | {} |",
            m.config,
            m.chunks,
            m.block_steps,
            m.steps,
            m.per_step,
            gb(m.bytes_htod),
            gb(m.bytes_dtoh),
            gb(m.bytes_dtod),
            m.link_gbps,
            if m.floor_seconds > 0.0 { format!("{:.5}", m.floor_seconds / st) } else { "-".into() },
            if m.floor_seconds > 0.0 { format!("{:.2}", m.efficiency) } else { "-".into() },
            m.stages.htod / st,
            m.stages.dtoh / st,
            m.stages.dtod / st,
            m.stages.kernel / st,
            m.stages.encode / st,
            m.stages.decode / st,
            m.stages.host_copy / st,
            m.predicted_seconds.map(|p| format!("{:.5}", p / st)).unwrap_or("-".into()),
            if m.model_link_seconds > 0.0 { format!("{:.4}", m.model_link_seconds / st) } else { "-".into() },
            if m.model_kernel_seconds > 0.0 { format!("{:.4}", m.model_kernel_seconds / st) } else { "-".into() },
            if m.redundancy > 0.0 { format!("{:.2}", m.redundancy) } else { "-".into() }
        );
    }
    println!("(stage columns: busy seconds per step summed over streams; they overlap; kernel is the stencil's, encode and decode the codec's. model link/kernel: the tuner's model of the plan that ran, s/step; redundancy: kernel points computed / points of the serial loop)");
}

/// Speedup of every configuration over every other.
fn print_speedups(r: &RunResult) {
    let names: Vec<&String> = r.speedups.keys().collect();
    if names.len() > 1 {
        println!("\nspeedup of row over column (column s/step / row s/step):");
        print!("| |");
        for n in &names {
            print!(" {n} |");
        }
        println!();
        print!("|---|");
        for _ in &names {
            print!("---|");
        }
        println!();
        for a in &names {
            print!("| {a} |");
            for b in &names {
                print!(" {:.2} |", r.speedups[*a][*b]);
            }
            println!();
        }
    }
}

pub fn json_path_of(args: &Args, date: &str, out: &Output) -> String {
    args.json
        .clone()
        .unwrap_or_else(|| format!("benches/results/{}-{}.json", date, slug(&out.device)))
}

fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}

pub fn today() -> (String, String) {
    // UTC date and time without a date crate: days since the epoch -> civil date.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86400) as i64;
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    let t = secs % 86400;
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            t / 3600,
            t / 60 % 60,
            t % 60
        ),
    )
}
