//! The command line (`cargo bench --bench pipeline -- --help`).

use clap::Parser;

#[derive(Parser, Debug, Clone)]
#[command(about = "pacc pipeline benchmark: every configuration against the link floor")]
pub struct Args {
    /// acoustic, himeno or all.
    #[arg(long, default_value = "all")]
    pub program: String,
    /// Comma-separated sizes: presets `small`, `incore`, `ooc` (out of core, > 90 GB of arrays),
    /// or explicit `NZxNYxNX`. Default: `incore,ooc` with a GPU, `small` without.
    #[arg(long)]
    pub size: Option<String>,
    /// Time steps of the GPU configurations (default per program and size).
    #[arg(long)]
    pub steps: Option<usize>,
    /// Time steps of the CPU configuration (default: the GPU steps at in-core sizes, 1 out of core).
    #[arg(long)]
    pub cpu_steps: Option<usize>,
    /// Comma-separated configurations: default (what a call with no options runs),
    /// region-sharing, wavefront, wavefront-staircase (the
    /// wavefront without the read-only ring), wavefront-compressed, direct-map, compressed,
    /// staged-copy, in-core, um, um-prefetch, grid, cpu (default: all; the table in configs.rs).
    #[arg(long, value_delimiter = ',')]
    pub configs: Option<Vec<String>>,
    /// Grid-search chunk counts (comma-separated; default per size).
    #[arg(long, value_delimiter = ',')]
    pub grid_chunks: Option<Vec<usize>>,
    /// Grid-search block steps (comma-separated; default per size).
    #[arg(long, value_delimiter = ',')]
    pub grid_steps: Option<Vec<usize>>,
    /// Grid-search schemes (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "region-sharing,wavefront"
    )]
    pub grid_schemes: Vec<pacc_runtime::plan::Scheme>,
    /// Where to write the JSON (default `benches/results/<date>-<device>.json`); the plots go
    /// beside it (`<stem>-time.svg`, `<stem>-stages.svg` and the same as `.png`).
    #[arg(long)]
    pub json: Option<String>,
    /// Smaller grid and fewer steps.
    #[arg(long)]
    pub quick: bool,
    /// Kernels: `generated` (the translator's, from `pacc::models`) or `hand` (hand-written
    /// with the same structure).
    #[arg(long, default_value = "auto")]
    pub kernels: String,
    /// The `compressed` configuration: region sharing at the tuner's chunks and block steps for
    /// plain region sharing, with these arrays kept compressed on the host (default: every
    /// array the step writes) ...
    #[arg(long, value_delimiter = ',')]
    pub compress_arrays: Option<Vec<String>>,
    /// Run region-sharing, wavefront, direct-map and the compressed configurations at these
    /// chunks and block steps (`D,K`) instead of the tuner's choice (on the scheme's buffer
    /// sets, or the fewest that fit where the scheme allows fewer).
    #[arg(long, value_delimiter = ',')]
    pub at: Option<Vec<usize>>,
    /// ... at this rate (bits per value).
    #[arg(long, default_value_t = 16.0)]
    pub compress_rate: f64,
    /// ... with this codec: `zfp` or `f16` (f32 arrays, rate 16 only).
    #[arg(long, default_value = "zfp")]
    pub codec: pacc_runtime::codec::CodecKind,
    /// Run the compressed configurations once per codec grid (`queue`, `sized`,
    /// `partition[:SHARE]`; `PACC_CODEC_GRID`), named `<config>@<grid>` (default: pacc's
    /// default grid, no suffix).
    #[arg(long, value_delimiter = ',')]
    pub codec_grids: Option<Vec<pacc_runtime::cosched::CoSchedule>>,
    /// Let NVRTC contract multiply-adds (pacc's default is off).
    #[arg(long)]
    pub fma: bool,
    /// Form of the generated kernels: `marching` (pacc's default) or `plain` (one thread per
    /// point), to show what the kernels do to the pipeline.
    #[arg(long, default_value = "marching")]
    pub kernel_form: String,
    /// Pad each row of the device buffers to 128 bytes (pacc's default); `--pad-rows false`
    /// keeps the host's rows, to show what padding does.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub pad_rows: bool,
    // Help from `fuse_help` (the step counts the translator fuses).
    #[arg(long, default_value_t = 1, help = fuse_help())]
    pub fuse: usize,
    /// Compare the final arrays of every configuration (re-initialising before each); default
    /// on for sizes under 20 GB of arrays.
    #[arg(long)]
    pub verify: Option<bool>,
    /// Plan as if the GPU had this many GB (`--device-memory 80` runs an H100's out-of-core
    /// plans on a larger card).
    #[arg(long, value_name = "GB")]
    pub device_memory: Option<f64>,
    /// Host memory (GiB) the benchmark may use for arrays plus staging buffers.
    #[arg(long, default_value_t = 110.0)]
    pub max_host_gib: f64,
    /// Check the hand-written CPU configuration against the models' serial functions at the
    /// given size (default 48^3 / 40x40x72), bit for bit, and exit.
    #[arg(long)]
    pub check_serial: bool,
    /// Only re-render the table and plots from an earlier JSON file.
    #[arg(long)]
    pub from_json: Option<String>,
    /// Print the tuner's choices for every scheme from assumed rates (H100 link figures, 50
    /// Gpt/s kernels, 78 GB of device memory) without running anything.
    #[arg(long)]
    pub plan_only: bool,
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Args {
    /// `--at` as (chunks, block steps), if given (checked by [`Args::check`]).
    pub fn at_pair(&self) -> Option<(usize, usize)> {
        match self.at.as_deref() {
            Some(&[d, k]) => Some((d, k)),
            _ => None,
        }
    }

    /// Whether `--configs` asks for configuration `c` (every one without the flag).
    pub fn has(&self, c: &str) -> bool {
        self.configs
            .as_ref()
            .is_none_or(|v| v.iter().any(|x| x == c || x == "all"))
    }

    /// Refuses flags that cannot be right before anything runs (`configs`: the names
    /// `--configs` takes besides `all`); the kernel form asked for.
    pub fn check(&self, configs: &[&str]) -> Result<pacc_runtime::KernelForm, String> {
        if self
            .device_memory
            .is_some_and(|gb| gb.is_nan() || gb <= 0.0)
        {
            return Err("--device-memory takes a positive number of GB".into());
        }
        if self
            .at
            .as_ref()
            .is_some_and(|v| v.len() != 2 || v.contains(&0))
        {
            return Err("--at takes CHUNKS,BLOCK_STEPS (two positive numbers)".into());
        }
        if let Some(unknown) =
            (self.configs.iter().flatten()).find(|c| *c != "all" && !configs.contains(&c.as_str()))
        {
            return Err(format!(
                "--configs: unknown configuration `{unknown}`; expected all or {}",
                configs.join(", ")
            ));
        }
        self.kernel_form
            .parse()
            .map_err(|e| format!("--kernel-form: {e}"))
    }
}

/// `--fuse`'s help, with the step counts the translator fuses.
fn fuse_help() -> String {
    format!(
        "Steps per kernel launch in every GPU configuration: the translator's fused kernel \
         (`Options::fuse`; {}; the steps must be a multiple); 1 is the single-step kernels",
        pacc_translate::codegen::fuse::fuse_steps_text()
    )
}
