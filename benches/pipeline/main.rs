//! The benchmark program (issue 4): the acoustic model (25-point, 4 arrays) and the Himeno
//! benchmark (19-point, 14 arrays) in every configuration side by side, in one process:
//!
//! * `region-sharing` (pacc's default: direct mapping + sharing), `direct-map`, `staged-copy`
//!   (PACC's original scheme) and `wavefront` (skewed tiling, every point once; with
//!   `wavefront-compressed`, the same with the compressed arrays), each at the tuner's choice of
//!   chunks and block steps for that scheme;
//! * `in-core`: the same kernels with everything resident (a plan of 1 chunk, 1 buffer set and
//!   block steps = steps), counting the initial upload and the final download;
//! * `um` / `um-prefetch`: the arrays in managed memory, the same kernels over the whole domain
//!   every step, without / with `cuMemPrefetchAsync` (only where the arrays fit in free device
//!   memory);
//! * `cpu`: hand-written rayon loops over planes on all cores (the OpenMP baseline);
//! * a grid search of region-sharing over chunks x block steps, against the tuner's pick.
//!
//! Every GPU configuration is shown against its floor: the bytes it moves over the link divided
//! by the link rates measured at the start of the same run (both directions at once where
//! transfers overlap). Without a GPU only the CPU configuration runs, and the program says so.
//!
//! `cargo bench --bench pipeline -- --help` lists the options; the README's "Benchmarks" section
//! says how the committed results were made.
//!
//! Modules, one concern each: `cli` (the flags), `programs` (the programs, sizes and host
//! arrays), `configs` (the table of configurations and how each runs), `bench` (what one program
//! at one size shares across its configurations: arrays, results, the GPU side), `run` (one
//! program at one size: set-up, the configurations in turn, verification), `gpu` (pacc's CUDA
//! executor and unified memory for one run), `cpu` (the hand-written CPU configuration), `link`
//! (the link measurement), `tuner` (`--at`, `--plan-only`), `results` (the JSON, derived figures
//! and `gb`), `report` (text and JSON output), `plot` (the SVG and PNG plots), `kernels`
//! (hand-written kernels). `run` sits on top (only `main` imports it), and no imports form a
//! cycle.

mod bench;
mod cli;
mod configs;
mod cpu;
mod gpu;
mod kernels;
mod link;
mod plot;
mod programs;
mod report;
mod results;
mod run;
mod tuner;

use clap::Parser;
use cli::Args;
use programs::Model;
use results::Output;

fn main() {
    let args = Args::parse();
    let names: Vec<&str> = configs::CONFIGS.iter().map(|c| c.name).collect();
    match args.check(&names) {
        Ok(form) => {
            let _ = gpu::KERNEL_FORM.set(form);
            let _ = gpu::PAD_ROWS.set(args.pad_rows);
            let _ = gpu::FUSE.set(args.fuse);
            #[cfg(feature = "cuda")]
            if let Some(gb) = args.device_memory {
                pacc_runtime::exec::cuda::set_device_memory_limit(Some((gb * 1e9) as u64));
            }
        }
        Err(e) => fail(e),
    }
    if let Some(list) = &args.from_json {
        return rerender(&args, list);
    }
    if args.check_serial {
        return cpu::check_serial(&args);
    }
    if args.plan_only {
        return tuner::plan_only(&args);
    }
    let models = Model::parse_list(&args.program).unwrap_or_else(|e| fail(e));
    let (date, stamp) = report::today();
    let gpu = gpu::available();
    let threads = rayon::current_num_threads();
    let mut out = Output {
        device: match &gpu {
            Ok(n) => n.clone(),
            Err(_) => format!("CPU only ({threads} threads)"),
        },
        date: stamp,
        command: std::env::args()
            .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
            .collect::<Vec<_>>()
            .join(" "),
        host_threads: threads,
        gpu: gpu.is_ok(),
        ..Default::default()
    };
    let link = link::measure(&gpu, &mut out);
    let default_sizes = if link.is_some() {
        "incore,ooc"
    } else {
        "small"
    };
    let sizes = args.size.clone().unwrap_or_else(|| default_sizes.into());
    let json_path = report::json_path_of(&args, &date, &out);
    for size in sizes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        for &m in &models {
            let shape = m.shape(size).unwrap_or_else(|e| fail(e));
            run::bench_one(&args, m, size, shape, link.as_ref(), &mut out);
            // Keep what is done so far on disk (a run cut short still leaves its results).
            let _ = report::write_json(&json_path, &out);
        }
    }
    report::print_tables(&out);
    match report::write_json(&json_path, &out) {
        Ok(()) => println!("\nwrote {json_path}"),
        Err(e) => println!("could not write {json_path}: {e}"),
    }
    plots(&out, &json_path);
}

/// `--from-json`: the tables and plots of earlier results (written to `--json` if given).
fn rerender(args: &Args, list: &str) {
    let out = report::read_json(list).unwrap_or_else(|e| fail(e));
    report::print_tables(&out);
    let first = list.split(',').next().unwrap_or(list);
    let p = args.json.clone().unwrap_or_else(|| first.to_string());
    if args.json.is_some() {
        match report::write_json(&p, &out) {
            Ok(()) => println!("\nwrote {p}"),
            Err(e) => fail(format!("could not write {p}: {e}")),
        }
    }
    plots(&out, &p);
}

fn plots(out: &Output, json_path: &str) {
    match plot::write_plots(out, json_path.trim_end_matches(".json")) {
        Ok(w) => println!("wrote {}", w.join(", ")),
        Err(e) => println!("could not write the plots: {e}"),
    }
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}
