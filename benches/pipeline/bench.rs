//! The state one program at one size shares across its configurations: the arrays, the
//! results so far and the GPU side (page-locking, kernel rates, the tuner's inputs).

use crate::cli::Args;
use crate::gpu;
use crate::programs::{Model, Workload};
use crate::report;
use crate::results::{gb, Measurement, RunResult};
use pacc_runtime::plan::Scheme;
use pacc_runtime::program::Program;
use pacc_runtime::tune::{self, LinkRates, TuneChoice, TuneInputs};
use std::time::Instant;

/// Everything a configuration's run reads and adds to.
pub struct Bench<'a> {
    pub args: &'a Args,
    pub model: Model,
    pub size: &'a str,
    /// Time steps of the GPU configurations.
    pub steps: usize,
    /// Re-initialise the arrays before each configuration and compare the results.
    pub verify: bool,
    pub w: Workload,
    pub res: RunResult,
    pub configs: Vec<Measurement>,
    /// The GPU side; `None` without a GPU, and once the GPU configurations are done.
    pub gpu: Option<Gpu>,
}

/// What the GPU configurations share, set up once per program and size.
pub struct Gpu {
    pub link: LinkRates,
    /// The tuner's inputs measured for this program (kernel rates, host copy rate).
    pub inputs: TuneInputs,
    /// Free device memory.
    pub budget: u64,
    /// Pinned staging for staged-copy: what the host has left beside the arrays.
    pub staging_budget: u64,
    /// The arrays stay page-locked while this lives (dropped before the CPU configuration).
    _lock: Option<gpu::Lock>,
}

impl Bench<'_> {
    /// Gives the next configuration the initial arrays (only when results are compared).
    pub fn reinit(&mut self) {
        if self.verify {
            self.w.init();
        }
    }

    /// Adds a configuration's measurement (with its checksum when verifying) or says why it
    /// failed.
    pub fn record(&mut self, name: &str, m: Result<Measurement, String>) {
        match m {
            Ok(mut m) => {
                if self.verify {
                    m.checksum = Some(self.w.checksum());
                }
                println!("{}", report::line(&m));
                self.configs.push(m);
            }
            Err(e) => println!("{name}: failed: {e}"),
        }
    }

    /// Records why a configuration did not run.
    pub fn skip(&mut self, why: String) {
        println!("{why}");
        self.res.skipped.push(why);
    }
}

impl Gpu {
    /// Page-locks the arrays and measures what the tuner needs; `Err` when the kernel rates
    /// cannot be measured (then no configuration runs).
    pub fn setup(b: &mut Bench, link: &LinkRates, avail: u64) -> Result<Gpu, String> {
        let lock = match gpu::lock(&mut b.w) {
            Ok((l, s)) => {
                b.res.register_seconds = Some(s);
                println!("page-locked the arrays in {s:.2} s (once, kept for every run)");
                Some(l)
            }
            Err(e) => {
                let why = format!("page-locking failed ({e}); runs register themselves");
                b.res.skipped.push(why);
                None
            }
        };
        b.res.kernel_shape = gpu::choose_march(&mut b.w, b.steps, b.args.fma);
        if let Some(n) = &b.res.kernel_shape {
            println!("{n}");
        }
        let rates = gpu::kernel_rates(&mut b.w, b.args.fma).map_err(|e| {
            println!("kernel rate measurement failed: {e}");
            format!("kernel rates: {e}")
        })?;
        b.res.kernel_rates = rates.clone();
        let shown: Vec<String> = rates
            .iter()
            .map(|r| format!("{:.1} Gpt/s", r / 1e9))
            .collect();
        println!("kernel rates (slab): {}", shown.join(", "));
        let budget = gpu::budget().unwrap_or(0);
        let mut inputs = TuneInputs::new(*link, rates, budget);
        inputs.rates.host_copy_rate = tune::measure_host_copy_rate(
            1 << 30,
            pacc::runtime::memcopy::STAGE_PIECE,
            pacc::runtime::memcopy::STAGE_STORES,
        );
        b.res.host_copy_gbps = inputs.rates.host_copy_rate / 1e9;
        println!(
            "host memcpy (parallel, 4 MiB pieces): {:.1} GB/s",
            b.res.host_copy_gbps
        );
        inputs.point_planes = b.w.program.points.iter().map(|_| b.w.src[0]).collect();
        Ok(Gpu {
            link: *link,
            inputs,
            budget,
            staging_budget: avail
                .saturating_sub(b.res.array_bytes)
                .saturating_sub(12 << 30)
                .min(16 << 30),
            _lock: lock,
        })
    }

    /// The tuner's choice for `scheme` (with `host` bytes of pinned staging), at `at` (chunks,
    /// block steps) when given.
    pub fn choose(
        &self,
        w: &Workload,
        steps: usize,
        scheme: Scheme,
        host: Option<u64>,
        at: Option<(usize, usize)>,
    ) -> Result<TuneChoice, String> {
        let mut i = self.inputs.clone();
        i.scheme = scheme;
        i.host_memory = host;
        i.chunks = at.map(|a| a.0);
        i.block_steps = at.map(|a| a.1);
        as_run(w, steps, |p, s| tune::choose(p, &w.shape, s, &i))
    }

    /// What `run` picks with no options: chunks, depth and scheme among the tuner's candidates.
    pub fn choose_default(&self, w: &Workload, steps: usize) -> Result<TuneChoice, String> {
        as_run(w, steps, |p, s| {
            tune::choose_scheme(p, &w.shape, s, &self.inputs, &tune::AUTO_SCHEMES)
        })
    }

    /// The tuner's choice for `scheme` at `d` chunks and `k` block steps (its prediction, and
    /// the buffer sets that fit), if they can be planned.
    pub fn choice_at(
        &self,
        w: &Workload,
        steps: usize,
        scheme: Scheme,
        (d, k): (usize, usize),
    ) -> Option<TuneChoice> {
        let mut i = self.inputs.clone();
        i.scheme = scheme;
        i.chunks = Some(d);
        i.block_steps = Some(k);
        as_run(w, steps, |p, s| tune::choose(p, &w.shape, s, &i)).ok()
    }

    /// The tuner's prediction for the whole run resident on the device.
    pub fn predict_in_core(&self, w: &Workload, steps: usize) -> Option<f64> {
        let mut i = self.inputs.clone();
        i.chunks = Some(1);
        i.block_steps = Some(steps);
        i.buffer_sets = Some(1);
        i.device_memory = u64::MAX;
        tune::choose(&w.program, &w.shape, steps, &i)
            .ok()
            .map(|c| c.predicted_seconds)
    }
}

/// `tune` over the program the GPU configurations plan: with `--fuse S`, the fused program
/// (its twin buffers) over the steps in groups, the block steps given back in steps as
/// `gpu::run_plan` takes them. The fused kernels are not timed (the single-step rates stand in),
/// so a fused pick carries no prediction.
fn as_run(
    w: &Workload,
    steps: usize,
    tune: impl FnOnce(&Program, usize) -> Result<TuneChoice, pacc_runtime::Error>,
) -> Result<TuneChoice, String> {
    let s = gpu::FUSE.get().copied().unwrap_or(1).max(1);
    if s == 1 {
        return tune(&w.program, steps).map_err(|e| e.to_string());
    }
    let fused = pacc_runtime::fuse::program(&w.program, s).map_err(|e| e.to_string())?;
    let mut c = tune(&fused, steps / s).map_err(|e| e.to_string())?;
    c.block_steps *= s;
    c.predicted_seconds = f64::NAN;
    c.predicted_per_step = f64::NAN;
    Ok(c)
}

impl<'a> Bench<'a> {
    /// Allocates and initialises the arrays and checks the call against the program; `Err`
    /// (the result, saying why) when the call does not fit the program.
    pub fn new(
        args: &'a Args,
        model: Model,
        size: &'a str,
        shape: [usize; 3],
        steps: usize,
        verify: bool,
        mut res: RunResult,
    ) -> Result<Bench<'a>, Box<RunResult>> {
        let t = Instant::now();
        let mut w = Workload::new(model, shape, &args.kernels, steps);
        res.init_seconds = t.elapsed().as_secs_f64();
        res.kernels = format!("{}, {} form", w.kernels, args.kernel_form);
        res.arrays = w.program.arrays.len();
        res.array_bytes = w.array_bytes();
        println!(
            "\n=== {} ({} kernels), {size} {:?}: {} arrays, {:.2} GB; {} steps; initialised in {:.1} s{}",
            model.name(),
            w.kernels,
            shape,
            res.arrays,
            gb(res.array_bytes),
            steps,
            res.init_seconds,
            if verify { "; verifying results" } else { "" }
        );
        // The call must satisfy the program (types, counts) before any configuration runs.
        let program = w.program.clone();
        let inv = w.invocation(steps);
        if let Err(e) = pacc_runtime::run::validate(&program, &inv) {
            println!("the benchmark's call does not match the program: {e}");
            res.skipped.push(format!("invalid call: {e}"));
            return Err(Box::new(res));
        }
        drop(inv);
        Ok(Bench {
            args,
            model,
            size,
            steps,
            verify,
            w,
            res,
            configs: Vec::new(),
            gpu: None,
        })
    }
}
