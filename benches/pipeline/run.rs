//! One program at one size: allocate and initialise its arrays, set up the GPU side once
//! (page-locking, kernel rates, the tuner's inputs), run every configuration asked for in the
//! order of the table in configs.rs, and check that they all computed the same.

use crate::bench::{Bench, Gpu};
use crate::cli::Args;
use crate::configs::{self, CONFIGS};
use crate::programs::Model;
use crate::results::{analyse, gb, Output, RunResult};
use pacc_runtime::tune::LinkRates;

/// Runs every configuration asked for on `model` at `size` (`shape`) and adds the result to
/// `out`; GPU configurations only with a `link`.
pub fn bench_one(
    args: &Args,
    model: Model,
    size: &str,
    shape: [usize; 3],
    link: Option<&LinkRates>,
    out: &mut Output,
) {
    let steps = args
        .steps
        .unwrap_or_else(|| model.default_steps(size, args.quick));
    let mut res = RunResult {
        program: model.name().into(),
        size: size.into(),
        shape: shape.to_vec(),
        steps,
        ..Default::default()
    };
    let avail = mem_available();
    let nbytes_est = shape.iter().product::<usize>() as u64 * 4 * model.arrays();
    if let Err(why) = fits_host(args, nbytes_est, avail) {
        let why = format!("{} {size} {shape:?}: {why}; skipped", model.name());
        println!("{why}");
        res.skipped.push(why);
        out.runs.push(res);
        return;
    }
    let verify = args.verify.unwrap_or(nbytes_est < 20_000_000_000);
    let mut b = match Bench::new(args, model, size, shape, steps, verify, res) {
        Ok(b) => b,
        Err(res) => return out.runs.push(*res),
    };
    if let Some(link) = link {
        match Gpu::setup(&mut b, link, avail) {
            Ok(g) => b.gpu = Some(g),
            Err(why) => {
                b.res.skipped.push(why);
                return out.runs.push(b.res);
            }
        }
    } else if args.has("region-sharing") {
        b.res
            .skipped
            .push("GPU configurations: no CUDA device; only the CPU configuration ran".into());
    }
    // The GPU configurations first, with the arrays page-locked; then the rest without.
    for gpu_side in [true, false] {
        if !gpu_side {
            b.gpu = None;
        }
        for c in CONFIGS.iter().filter(|c| c.gpu == gpu_side) {
            if args.has(c.name) && (b.gpu.is_some() || !c.gpu) {
                (c.run)(&mut b);
            }
        }
    }
    if verify {
        configs::compare_checksums(&mut b.configs);
    }
    b.res.configs = b.configs;
    analyse(&mut b.res);
    out.runs.push(b.res);
}

/// Whether `bytes` of arrays (plus 2 GiB) fit the host memory `--max-host-gib` allows and the
/// `avail` bytes the system has; else why not.
fn fits_host(args: &Args, bytes: u64, avail: u64) -> Result<(), String> {
    let host_limit = (args.max_host_gib * (1u64 << 30) as f64) as u64;
    if bytes + (2 << 30) > host_limit.min(avail) {
        return Err(format!(
            "{:.1} GB of arrays do not fit the host memory allowed ({:.1} GB, {:.1} GB available)",
            gb(bytes),
            gb(host_limit),
            gb(avail)
        ));
    }
    Ok(())
}

fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                })
        })
        .map(|kb| kb * 1024)
        .unwrap_or(u64::MAX)
}
