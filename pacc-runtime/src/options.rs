//! Run-time options: backend choice, chunking, blocking depth, scheme.

mod cuda;

pub use cuda::{CudaOptions, HostPath, KernelForm};

use crate::env;
use crate::error::Error;
use crate::march::MarchTuning;
use crate::plan::Scheme;
use crate::progress::{OnProgress, StepsDone};
use std::path::PathBuf;

/// Which backend runs a pipelined function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// CUDA when a device is present, else the CPU backend (saying so once per process).
    #[default]
    Auto,
    /// The CUDA backend; [`Error::NoCuda`] when no device or driver is usable.
    Cuda,
    /// The CPU backend: the same plan (chunks, blocks, scheme) run by rayon threads, giving the
    /// serial function's arrays bit for bit.
    Cpu,
    /// The original serial function, untouched.
    Serial,
    /// The CPU backend running the plan's operations in a random order the dependencies allow
    /// (seeded); for testing plans.
    Shuffled(u64),
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" | "" => Ok(BackendChoice::Auto),
            "cuda" => Ok(BackendChoice::Cuda),
            "cpu" => Ok(BackendChoice::Cpu),
            "serial" => Ok(BackendChoice::Serial),
            s if s.starts_with("shuffled") => {
                let seed = s.trim_start_matches("shuffled").trim_start_matches(':');
                let seed = if seed.is_empty() {
                    0
                } else {
                    seed.parse().map_err(|_| {
                        Error::Option(format!(
                            "backend `{s}`: the seed after `shuffled:` must be an unsigned integer"
                        ))
                    })?
                };
                Ok(BackendChoice::Shuffled(seed))
            }
            _ => Err(Error::Option(format!(
                "unknown backend `{s}`; expected {}",
                BackendChoice::names_text()
            ))),
        }
    }
}

impl BackendChoice {
    /// The names `PACC_BACKEND`, `Options::backend`'s parser and the examples' `--backend` take,
    /// each with what it runs: the one list their messages and help read.
    pub const NAMES: [(&'static str, &'static str); 5] = [
        (
            "auto",
            "CUDA when a device is present, else the CPU backend",
        ),
        ("cuda", "the CUDA backend"),
        ("cpu", "the CPU backend"),
        ("serial", "the untouched serial function"),
        (
            "shuffled[:SEED]",
            "the CPU backend running the plan's operations in a random order its dependencies \
             allow",
        ),
    ];

    /// The names, as a sentence's list (`auto, cuda, ... or shuffled[:SEED]`).
    pub fn names_text() -> String {
        crate::words::sentence_list(Self::NAMES.iter().map(|(name, _)| name))
    }
}

/// Options of one call. Unset fields fall back to the directive's clauses, then to defaults.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Which backend runs the call (`PACC_BACKEND`); [`BackendChoice::Auto`] by default.
    pub backend: BackendChoice,
    /// Chunks the outermost axis is cut into (`PACC_CHUNKS`); unset: the directive's clause,
    /// else the tuner's choice.
    pub chunks: Option<usize>,
    /// Time steps per block, run on a chunk before it goes back to the host
    /// (`PACC_BLOCK_STEPS`); unset: the directive's clause, else the tuner's choice.
    pub block_steps: Option<usize>,
    /// The tiling scheme (`PACC_SCHEME`); unset: the tuner's choice ([`Scheme::RegionSharing`]
    /// on the CPU backend).
    pub scheme: Option<Scheme>,
    /// The CUDA backend's own settings.
    pub cuda: CudaOptions,
    /// Write a checkpoint every so many blocks (see [`Checkpointing`]).
    pub checkpoint: Option<Checkpointing>,
    /// Resume from a checkpoint instead of starting at the first step (see [`Resume`]).
    pub resume: Option<Resume>,
    /// On-the-fly compression: (array name, rate in bits per value); overrides the directive's
    /// `compress(..)` clause array by array (see [`Options::compress`]).
    pub compress: Vec<(String, f64)>,
    /// Compress every array the host keeps (inputs and returned arrays) at this rate, unless
    /// named in `compress`.
    pub compress_all: Option<f64>,
    /// Ignore the directive's `compress(..)` clause (and `compress_all`): no compression.
    pub compress_off: bool,
    /// The codec of the compressed arrays (`PACC_CODEC`); unset: the directive's `compress(..,
    /// codec = ..)`, else zfp (see [`Options::codec`]).
    pub codec: Option<crate::codec::CodecKind>,
    /// Copy the wavefront's read-only arrays from chunk to chunk with the staircase
    /// (`PACC_RING=0`) instead of keeping them in the ring (see [`Options::read_only_ring`]).
    pub no_ring: bool,
    /// Whether compression is the tuner's decision or forced (`PACC_COMPRESS_WHEN`).
    pub compress_when: CompressWhen,
    /// Lossy compression of inputs (arrays no kernel writes) is allowed for `compress_all`
    /// (`PACC_COMPRESS_INPUTS=1`); naming an input in `compress(..)` allows it for that array.
    pub compress_inputs: bool,
    /// Run the translator's fused kernel of this many steps per launch (`PACC_FUSE`; 1 or unset:
    /// the single-step kernels). See [`Options::fuse`].
    pub fuse: Option<usize>,
    /// How a distributed run's ranks exchange halos (`PACC_HALO`; see [`HaloMode`]).
    pub halo: HaloMode,
    /// How long a distributed run's ranks wait for one another before they give up with
    /// `DistError::NoAnswer` (`PACC_MPI_TIMEOUT`, seconds; see [`Options::mpi_timeout`]).
    pub mpi_timeout: Option<std::time::Duration>,
    /// Called as time steps complete (see [`Options::on_progress`]).
    pub on_progress: Option<OnProgress>,
    /// Where settings came from, for error hints (see [`Options::set_by`]); a setting not
    /// listed was set in code.
    pub origins: Vec<(&'static str, Origin)>,
}

/// Whether the arrays given a rate are compressed on every run or only where the tuner predicts
/// that compression pays (`PACC_COMPRESS_WHEN=auto|always`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CompressWhen {
    /// On backends with a tuner (CUDA): only when the run is link-bound and compressing is
    /// predicted at least 5% faster ([`crate::tune::compression`]); the report says why. Where
    /// no tuner runs (the CPU backends) the arrays are compressed as asked.
    #[default]
    Auto,
    /// Always, as asked.
    Always,
}

/// How the ranks of a distributed run (`crate::dist`) keep their slabs and exchange halos
/// (`PACC_HALO=auto|device|relay|host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HaloMode {
    /// Each rank's slab stays on its GPU for the whole run and the halos go GPU to GPU through
    /// NCCL, where that can be done (the CUDA backend, NCCL loadable, one rank per GPU, the
    /// slab fits its GPU); otherwise the host exchange. The report says which and why.
    #[default]
    Auto,
    /// The slab stays where the backend computes (the GPU, or the CPU backend's buffers) and
    /// the halos are exchanged inside the run: through NCCL on the GPU, through MPI on the
    /// CPU backend; an error where that cannot be done.
    Device,
    /// Every block runs the single-node pipeline on the rank's host arrays, with the halos
    /// relayed between blocks through the ranks' GPUs (host to device, NCCL, device to host):
    /// what `Auto` does when a slab does not fit its GPU; an error where NCCL cannot carry
    /// them (no library, ranks sharing a GPU, the CPU backend).
    Relay,
    /// Every block runs the single-node pipeline on the rank's host arrays, with the halos
    /// exchanged through host MPI between blocks.
    Host,
}

impl std::str::FromStr for HaloMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(HaloMode::Auto),
            "device" => Ok(HaloMode::Device),
            "relay" => Ok(HaloMode::Relay),
            "host" => Ok(HaloMode::Host),
            _ => Err(Error::Option(format!(
                "PACC_HALO={s}: expected auto (slabs stay on their GPUs where they can, the \
                 default), device, relay or host"
            ))),
        }
    }
}

impl std::str::FromStr for CompressWhen {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(CompressWhen::Auto),
            "always" => Ok(CompressWhen::Always),
            _ => Err(Error::Option(format!(
                "PACC_COMPRESS_WHEN={s}: expected auto (the tuner decides, the default) or always"
            ))),
        }
    }
}

/// Where a setting's value came from, so that an error names the thing to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Origin {
    /// Set in code through [`Options`]' fields or methods.
    #[default]
    Code,
    /// Read from a `PACC_*` environment variable by [`Options::from_env`].
    Environment,
    /// Set from a program's command-line flag (`--chunks`, `--backend`, ...), as the examples
    /// do.
    CommandLine,
}

impl Origin {
    /// How the setting `key` (`backend`, `chunks`, `block_steps`, `scheme`, `checkpoint_dir`,
    /// `checkpoint_every`, `resume`, `compress`, ...) is named where it came from:
    /// `` `Options::chunks` ``, `` `PACC_CHUNKS` `` or `` `--chunks` ``.
    pub fn name(self, key: &str) -> String {
        match self {
            Origin::Code => {
                let method = match key {
                    "checkpoint_dir" | "checkpoint_every" => "checkpoint",
                    k => k,
                };
                format!("`Options::{method}`")
            }
            Origin::Environment => format!("`PACC_{}`", key.to_ascii_uppercase()),
            Origin::CommandLine => format!("`--{}`", key.replace('_', "-")),
        }
    }
}

/// Default for `PACC_CHECKPOINT_EVERY`: blocks between checkpoints.
pub const DEFAULT_CHECKPOINT_EVERY: usize = 10;

/// Checkpointing: after every `every_blocks` blocks of `block_steps` time steps, the arrays the
/// run writes, the step counter and the reductions are written to `dir` (see
/// [`crate::checkpoint`] for the layout). The run then proceeds in segments of
/// `every_blocks * block_steps` steps; each segment is its own plan, so on the CUDA backend each
/// segment pays the set-up (registering the arrays) again: checkpoint every few minutes of
/// work, not every block. Arrays the run never writes (inputs) are not saved but checksummed
/// once per call (a resumed call must pass the same contents). One run at a time per directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpointing {
    /// The directory; pacc writes and cleans only `dir/pacc-checkpoints/`.
    pub dir: PathBuf,
    /// Blocks between checkpoints.
    pub every_blocks: usize,
}

/// Where a run resumes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Resume from the checkpoint in this directory; it is an error if there is none.
    From(PathBuf),
    /// Resume from the checkpoint in this directory if it holds one, else start at the first
    /// step (the idiom for a job script that is simply restarted after a crash).
    IfPresent(PathBuf),
}

impl Resume {
    /// The directory the checkpoint is read from.
    pub fn dir(&self) -> &std::path::Path {
        match self {
            Resume::From(d) | Resume::IfPresent(d) => d,
        }
    }
}

impl Options {
    /// Options with nothing set: the directive's clauses and the tuner decide, the backend is
    /// [`BackendChoice::Auto`]. Unlike the plain call, `new` does not read the `PACC_*`
    /// variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that setting `key` (see [`Origin::name`]) came from `origin`, so that an error
    /// about its value names the flag, variable or method to change. [`Options::from_env`]
    /// records the variables it read; a program that sets options from its own flags records
    /// [`Origin::CommandLine`] for them.
    pub fn set_by(mut self, key: &'static str, origin: Origin) -> Self {
        self.origins.retain(|(k, _)| *k != key);
        if origin != Origin::Code {
            self.origins.push((key, origin));
        }
        self
    }

    /// Where setting `key` came from ([`Origin::Code`] unless recorded by [`Options::set_by`]).
    pub fn origin(&self, key: &str) -> Origin {
        self.origins
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(Origin::Code, |(_, o)| *o)
    }

    /// The name of setting `key` where it came from: `` `PACC_CHUNKS` ``, `` `--chunks` `` or
    /// `` `Options::chunks` ``.
    pub fn source_of(&self, key: &str) -> String {
        self.origin(key).name(key)
    }

    /// Options from `PACC_BACKEND`, `PACC_CHUNKS`, `PACC_BLOCK_STEPS`, `PACC_SCHEME`,
    /// `PACC_FMA` (switch), `PACC_TRACE`, `PACC_KERNELS` (`marching` or `plain`),
    /// `PACC_PAD_ROWS` (switch), `PACC_RING` (switch), `PACC_PIN_THREADS`, `PACC_PIN_OVERLAP`
    /// (switch), `PACC_FUSE` (steps per launch), and for checkpoints:
    ///
    /// - `PACC_CHECKPOINT_DIR=DIR`: checkpoint to `DIR` every `PACC_CHECKPOINT_EVERY` blocks
    ///   (default [`DEFAULT_CHECKPOINT_EVERY`]);
    /// - `PACC_RESUME=DIR`: resume from the checkpoint in `DIR` (an error if there is none);
    /// - `PACC_RESUME=auto`: resume from `PACC_CHECKPOINT_DIR` if it holds a checkpoint, else
    ///   start from the beginning.
    ///
    /// and `PACC_COMPRESS=cur=16,prev=16` (per array), `PACC_COMPRESS=all=16` (every array),
    /// `PACC_COMPRESS=off` (ignore the directive's `compress(..)` clause), `PACC_CODEC=zfp`
    /// or `f16` (the codec of the compressed arrays), `PACC_COMPRESS_WHEN=auto|always` and
    /// `PACC_COMPRESS_INPUTS=1` (see [`Options::compress_when`], [`Options::compress_inputs`]),
    /// and `PACC_HALO=auto|device|relay|host` and `PACC_MPI_TIMEOUT=SECONDS` for distributed
    /// runs (see [`HaloMode`], [`Options::mpi_timeout`]).
    ///
    /// A switch takes 1, true, on, yes or 0, false, off, no in any case
    /// ([`crate::env::parse_bool`]); other values, and a path variable set to nothing, are
    /// [`crate::EnvError`]s. The first call in a process names on stderr any `PACC_` variable
    /// that is set but not read ([`crate::env::VARIABLES`]).
    pub fn from_env() -> Result<Self, Error> {
        crate::env::warn_unknown_once();
        let mut o = Options::default();
        for (key, var) in [
            ("backend", "PACC_BACKEND"),
            ("chunks", "PACC_CHUNKS"),
            ("block_steps", "PACC_BLOCK_STEPS"),
            ("scheme", "PACC_SCHEME"),
            ("compress", "PACC_COMPRESS"),
            ("codec", "PACC_CODEC"),
            ("checkpoint_dir", "PACC_CHECKPOINT_DIR"),
            ("checkpoint_every", "PACC_CHECKPOINT_EVERY"),
            ("resume", "PACC_RESUME"),
            ("fuse", "PACC_FUSE"),
        ] {
            if env::var_os(var).is_some() {
                o = o.set_by(key, Origin::Environment);
            }
        }
        if let Some(v) = env::var("PACC_BACKEND") {
            o.backend = v
                .parse()
                .map_err(|e| Error::Option(format!("PACC_BACKEND={v}: {}", reason(e))))?;
        }
        o.chunks = env_usize("PACC_CHUNKS")?;
        o.block_steps = env_usize("PACC_BLOCK_STEPS")?;
        if let Some(v) = env::var("PACC_SCHEME") {
            o.scheme = Some(
                v.parse()
                    .map_err(|e: String| Error::Option(format!("PACC_SCHEME={v}: {e}")))?,
            );
        }
        o.cuda.read_env()?;
        o.fuse = env_usize("PACC_FUSE")?;
        let on = "keep the wavefront's read-only arrays in one device buffer each, the default";
        if let Some(ring) = env::flag("PACC_RING", on)? {
            o.no_ring = !ring;
        }
        if let Some(v) = env::var("PACC_COMPRESS") {
            let l = parse_list(&v).map_err(|m| Error::Option(format!("PACC_COMPRESS={v}: {m}")))?;
            o.compress = l.arrays;
            o.compress_all = l.all;
            o.compress_off = l.off;
        }
        if let Some(v) = env::var("PACC_COMPRESS_WHEN") {
            o.compress_when = v.parse()?;
        }
        if let Some(v) = env::var("PACC_HALO") {
            o.halo = v.parse()?;
        }
        let on = "compress_all also compresses inputs, lossily";
        if let Some(inputs) = env::flag("PACC_COMPRESS_INPUTS", on)? {
            o.compress_inputs = inputs;
        }
        if let Some(v) = env::var("PACC_CODEC") {
            o.codec = Some(
                v.parse()
                    .map_err(|m| Error::Option(format!("PACC_CODEC={v}: {m}")))?,
            );
        }
        if let Some(v) = env::var("PACC_MPI_TIMEOUT") {
            o.mpi_timeout = Some(parse_seconds("PACC_MPI_TIMEOUT", &v)?);
        }
        let every = env_usize("PACC_CHECKPOINT_EVERY")?;
        let dir = env::path(
            "PACC_CHECKPOINT_DIR",
            "the directory to write checkpoints to",
        )?
        .map(PathBuf::from);
        match (&dir, every) {
            (Some(d), every) => {
                o.checkpoint = Some(Checkpointing {
                    dir: d.clone(),
                    every_blocks: every.unwrap_or(DEFAULT_CHECKPOINT_EVERY),
                })
            }
            (None, Some(_)) => {
                return Err(Error::Option(
                    "PACC_CHECKPOINT_EVERY is set but PACC_CHECKPOINT_DIR is not; set the \
                     directory the checkpoints go to"
                        .into(),
                ))
            }
            (None, None) => {}
        }
        match env::path("PACC_RESUME", "a checkpoint directory or auto")? {
            Some(v) if v == "auto" => {
                match dir {
                    Some(d) => o.resume = Some(Resume::IfPresent(d)),
                    None => return Err(Error::Option(
                        "PACC_RESUME=auto resumes from PACC_CHECKPOINT_DIR, which is not set; set \
                         it, or name the directory: PACC_RESUME=DIR"
                            .into(),
                    )),
                }
            }
            Some(v) => o.resume = Some(Resume::From(PathBuf::from(v))),
            None => {}
        }
        o.validate()?;
        Ok(o)
    }

    /// Checks the options that can be checked without a call.
    pub fn validate(&self) -> Result<(), Error> {
        if self.fuse == Some(0) {
            return Err(Error::Option(format!(
                "0 steps per fused launch ({}); use 1 for the single-step kernels, 2 or 3 to fuse, \
                 or leave it unset for the tuner's choice",
                self.source_of("fuse")
            )));
        }
        if let Some(c) = &self.checkpoint {
            if c.every_blocks == 0 {
                return Err(Error::Option(format!(
                    "checkpoint every 0 blocks ({}); use 1 or more",
                    self.source_of("checkpoint_every")
                )));
            }
            if c.dir.as_os_str().is_empty() {
                return Err(Error::Option(format!(
                    "the checkpoint directory is empty ({}); name a directory",
                    self.source_of("checkpoint_dir")
                )));
            }
        }
        Ok(())
    }

    /// Runs the call on backend `b` (see [`BackendChoice`]).
    pub fn backend(mut self, b: BackendChoice) -> Self {
        self.backend = b;
        self
    }
    /// Run `steps` time steps per launch through the translator's fused kernel (2 or 3): every
    /// array is read once per group and the intermediate levels stay on chip, so memory-bound
    /// programs with many arrays gain (Himeno 1.6x on the H100); stencils of wide reach lose to
    /// the halo they recompute. Needs a step count that is a multiple of `steps`, and no
    /// compression or checkpoints. `1` is the single-step kernels.
    pub fn fuse(mut self, steps: usize) -> Self {
        self.fuse = Some(steps);
        self
    }

    /// Cuts the outermost axis into `d` chunks (at most one per plane; fewer when the plan
    /// needs it, which the [`Report`](crate::Report)'s adjustments say).
    pub fn chunks(mut self, d: usize) -> Self {
        self.chunks = Some(d);
        self
    }
    /// Runs `k` time steps on a chunk per visit (temporal blocking): more steps move fewer bytes
    /// per step but recompute a wider halo and need more device memory per chunk.
    pub fn block_steps(mut self, k: usize) -> Self {
        self.block_steps = Some(k);
        self
    }
    /// Tiles the run with scheme `s` (see [`Scheme`]); every scheme gives the same arrays.
    pub fn scheme(mut self, s: Scheme) -> Self {
        self.scheme = Some(s);
        self
    }
    /// Whether the CUDA backend pads each row of the device buffers to start on 128 bytes
    /// (default `true`; `PACC_PAD_ROWS=0` turns it off). Rows whose length is not a multiple
    /// of 128 bytes otherwise start inside a cache line, which cost the marching kernels
    /// 13-15% on an H100; the host arrays keep their layout either way.
    pub fn row_padding(mut self, on: bool) -> Self {
        self.cuda.unpadded_rows = !on;
        self
    }

    /// Whether the wavefront keeps arrays that no kernel writes in one device buffer each that
    /// every chunk reads (default `true`; `PACC_RING=0` turns it off). Off, they are copied
    /// from chunk to chunk on the device with the written arrays' staircase, which moved
    /// 2.4 GB per step across HBM for Himeno's coefficients at 1200^3.
    pub fn read_only_ring(mut self, on: bool) -> Self {
        self.no_ring = !on;
        self
    }

    /// How the CUDA backend page-locks the user's arrays for direct and shared transfers:
    /// `threads` threads register them piece by piece (default 4), and with `overlap` (the
    /// default) the run's first transfers and kernels go ahead as soon as the pieces they touch
    /// are registered; without it every piece is registered before the first operation.
    pub fn page_locking(mut self, threads: usize, overlap: bool) -> Self {
        self.cuda.pin_threads = Some(threads.max(1));
        self.cuda.pin_upfront = !overlap;
        self
    }

    /// How the CUDA backend's transfers reach arrays that are not page-locked already:
    /// [`HostPath::Register`] page-locks them for the call, [`HostPath::Bounce`] copies
    /// through a few small pinned buffers of pacc's own, and [`HostPath::Auto`] (the default,
    /// `PACC_HOST_PATH`) takes the cheaper by the tuner's prices. The report says which ran
    /// and why.
    pub fn host_path(mut self, path: HostPath) -> Self {
        self.cuda.host_path = path;
        self
    }

    /// Forces the CUDA marching kernels' form (see [`KernelForm`]); unset: the tuner's.
    pub fn kernel_form(mut self, k: KernelForm) -> Self {
        self.cuda.kernel_form = k;
        self
    }
    /// Forces the CUDA marching kernels' shape (`PACC_MARCH`, see [`MarchTuning`]).
    pub fn march(mut self, t: MarchTuning) -> Self {
        self.cuda.march = Some(t);
        self
    }
    /// Lets NVRTC contract multiply-adds (`PACC_FMA=1`): faster, but results equal the serial
    /// function's within rounding instead of bit for bit.
    pub fn fma(mut self, on: bool) -> Self {
        self.cuda.fma = on;
        self
    }
    /// Writes a Chrome/Perfetto trace of the CUDA streams to `path` (`PACC_TRACE`).
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.cuda.trace = Some(path.into());
        self
    }
    /// Checkpoint to `dir` every `every_blocks` blocks (see [`Checkpointing`]).
    pub fn checkpoint(mut self, dir: impl Into<PathBuf>, every_blocks: usize) -> Self {
        self.checkpoint = Some(Checkpointing {
            dir: dir.into(),
            every_blocks,
        });
        self
    }
    /// Resume from the checkpoint in `dir` (an error if there is none). The call must pass the
    /// same initial arguments as the run that wrote it; the arrays it writes are overwritten
    /// with the checkpoint's contents.
    pub fn resume(mut self, dir: impl Into<PathBuf>) -> Self {
        self.resume = Some(Resume::From(dir.into()));
        self
    }
    /// Compress array `name` at `rate` bits per value between blocks (overrides the directive's
    /// `compress(..)` for that array). Lossy: see the README's "Compression" section.
    pub fn compress(mut self, name: impl Into<String>, rate: f64) -> Self {
        let name = name.into();
        self.compress.retain(|(n, _)| *n != name);
        self.compress.push((name, rate));
        self
    }
    /// Compress every array the run writes and the host keeps between blocks (not scratch
    /// arrays) at `rate`; inputs too with [`Options::compress_inputs`].
    pub fn compress_all(mut self, rate: f64) -> Self {
        self.compress_all = Some(rate);
        self
    }
    /// Let `compress_all` compress inputs (arrays no kernel writes, e.g. a velocity model):
    /// they are then compressed once, in the first block, and every later pass moves fewer
    /// bytes, but the run sees them through the codec's error. Off by default.
    pub fn compress_inputs(mut self, on: bool) -> Self {
        self.compress_inputs = on;
        self
    }
    /// How a distributed run's ranks keep their slabs and exchange halos (default
    /// [`HaloMode::Auto`]; `PACC_HALO`). Single-process runs ignore it.
    pub fn halo(mut self, mode: HaloMode) -> Self {
        self.halo = mode;
        self
    }
    /// How long each wait of a distributed run (a halo exchange, the ranks agreeing on a step's
    /// outcome) lasts at most before every rank still running returns
    /// `DistError::NoAnswer`, naming the rank it missed where it knows it (`PACC_MPI_TIMEOUT`,
    /// seconds; default `dist::DEFAULT_MPI_TIMEOUT`, 300 s). Longer than the ranks ever
    /// legitimately wait for one another (uneven slabs, checkpoints). Single-process runs
    /// ignore it.
    pub fn mpi_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.mpi_timeout = Some(timeout);
        self
    }
    /// Compress the arrays given a rate on every run (`Always`), or only where the tuner
    /// predicts it pays (`Auto`, the default; see [`CompressWhen`]).
    pub fn compress_when(mut self, when: CompressWhen) -> Self {
        self.compress_when = when;
        self
    }
    /// Compress with `codec` (zfp, the default, or f16), whatever the directive's `compress(..,
    /// codec = ..)` says. Each codec takes its own rates: f16 takes 16 only, and f32 arrays only.
    pub fn codec(mut self, codec: crate::codec::CodecKind) -> Self {
        self.codec = Some(codec);
        self
    }
    /// No compression, whatever the directive's `compress(..)` clause says.
    pub fn no_compression(mut self) -> Self {
        self.compress_off = true;
        self.compress.clear();
        self.compress_all = None;
        self
    }
    /// Call `f` with the steps done so far each time a block's kernels complete (see
    /// [`crate::progress`]); for a progress bar.
    pub fn on_progress(mut self, f: impl Fn(StepsDone) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(OnProgress::new(f));
        self
    }
    /// Resume from the checkpoint in `dir` if there is one, else start from the beginning.
    pub fn resume_if_present(mut self, dir: impl Into<PathBuf>) -> Self {
        self.resume = Some(Resume::IfPresent(dir.into()));
        self
    }
}

/// Parses `PACC_COMPRESS`-style lists: `a=16,b=12.5`, or `all=16`, or `off`.
pub fn parse_list(s: &str) -> Result<ParsedList, String> {
    let mut out = ParsedList::default();
    let s = s.trim();
    if s.is_empty() {
        return Ok(out);
    }
    if s == "off" || s == "none" {
        out.off = true;
        return Ok(out);
    }
    for item in s.split(',') {
        let (name, rate) = item.split_once('=').ok_or_else(|| {
            format!("`{item}`: expected NAME=RATE (e.g. `cur=16,prev=16`), `all=RATE` or `off`")
        })?;
        let rate: f64 = rate.trim().parse().map_err(|_| {
            format!("`{item}`: the rate must be a number of bits per value, e.g. 16 or 12.5")
        })?;
        let name = name.trim();
        let given =
            (name == "all" && out.all.is_some()) || out.arrays.iter().any(|(n, _)| n == name);
        if given {
            return Err(format!(
                "`{name}` is given twice; name each array (or `all`) once"
            ));
        }
        match name {
            "all" => out.all = Some(rate),
            n => out.arrays.push((n.to_string(), rate)),
        }
    }
    Ok(out)
}

/// What [`parse_list`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedList {
    /// `NAME=RATE` entries, in the order given.
    pub arrays: Vec<(String, f64)>,
    /// The rate of an `all=RATE` entry.
    pub all: Option<f64>,
    /// Whether the list was `off`.
    pub off: bool,
}

/// An option error's message without the variant's own prefix.
fn reason(e: Error) -> String {
    match e {
        Error::Option(m) => m,
        e => e.to_string(),
    }
}

/// Count variable `key`: `None` when unset.
pub(crate) fn env_usize(key: &'static str) -> Result<Option<usize>, Error> {
    env::var(key).map(|v| parse_usize(key, &v)).transpose()
}

/// `v`, the value of variable `key`, as a count; an error that says whether it is not a
/// number or a number too large.
fn parse_usize(key: &str, v: &str) -> Result<usize, Error> {
    v.trim().parse().map_err(|_| {
        let digits = !v.trim().is_empty() && v.trim().bytes().all(|b| b.is_ascii_digit());
        Error::Option(match digits {
            true => format!(
                "{key}={v}: larger than the largest count this machine takes ({}); fix or unset it",
                usize::MAX
            ),
            false => format!("{key}={v}: expected a non-negative integer; fix or unset it"),
        })
    })
}

/// `v`, the value of variable `key`, as a positive number of seconds (fractions allowed).
fn parse_seconds(key: &str, v: &str) -> Result<std::time::Duration, Error> {
    let secs: Option<f64> = v.trim().parse().ok().filter(|s: &f64| *s > 0.0);
    secs.and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            Error::Option(format!(
                "{key}={v}: expected a positive number of seconds; fix or unset it"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::cuda::pad_rows;
    use super::*;

    #[test]
    fn every_listed_backend_parses_and_the_refusal_lists_them_all() {
        for (name, _) in BackendChoice::NAMES {
            let name = name.replace("[:SEED]", ":7");
            assert!(name.parse::<BackendChoice>().is_ok(), "{name}");
        }
        let e = "gpu".parse::<BackendChoice>().unwrap_err().to_string();
        for (name, _) in BackendChoice::NAMES {
            assert!(e.contains(name), "{e}");
        }
        assert!(
            e.contains("auto, cuda, cpu, serial or shuffled[:SEED]"),
            "{e}"
        );
    }

    #[test]
    fn a_count_too_large_says_so() {
        let e = parse_usize("PACC_BLOCK_STEPS", "99999999999999999999999").unwrap_err();
        assert!(
            e.to_string().contains("larger than the largest count"),
            "{e}"
        );
        let e = parse_usize("PACC_BLOCK_STEPS", "-3").unwrap_err();
        assert!(
            e.to_string().contains("expected a non-negative integer"),
            "{e}"
        );
        assert_eq!(parse_usize("PACC_CHUNKS", " 12 ").unwrap(), 12);
        assert_eq!(
            parse_seconds("PACC_MPI_TIMEOUT", " 2.5 ").unwrap(),
            std::time::Duration::from_millis(2500)
        );
        for bad in ["abc", "0", "-3", "inf", "NaN", "1e300", ""] {
            match parse_seconds("PACC_MPI_TIMEOUT", bad) {
                Err(Error::Option(m)) => {
                    assert!(m.contains(&format!("PACC_MPI_TIMEOUT={bad}:")), "{m}")
                }
                other => panic!("PACC_MPI_TIMEOUT={bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn halo_parses_and_names_what_it_takes() {
        for (text, mode) in [
            ("auto", HaloMode::Auto),
            ("device", HaloMode::Device),
            ("relay", HaloMode::Relay),
            ("host", HaloMode::Host),
        ] {
            assert_eq!(text.parse::<HaloMode>().unwrap(), mode);
        }
        assert_eq!(HaloMode::default(), HaloMode::Auto);
        assert_eq!(Options::new().halo(HaloMode::Host).halo, HaloMode::Host);
        for bad in ["", "nccl", "Device", "1"] {
            let e = bad.parse::<HaloMode>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("PACC_HALO={bad}:"))
                    && e.contains("auto")
                    && e.contains("device, relay or host"),
                "{e}"
            );
        }
    }

    #[test]
    fn host_path_parses_and_names_what_it_takes() {
        for (path, name) in HostPath::ALL {
            assert_eq!(name.parse::<HostPath>().unwrap(), path);
        }
        assert_eq!(HostPath::default(), HostPath::Auto);
        let o = Options::new().host_path(HostPath::Bounce);
        assert_eq!(o.cuda.host_path, HostPath::Bounce);
        for bad in ["", "pinned", "Bounce", "1"] {
            let e = bad.parse::<HostPath>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("PACC_HOST_PATH={bad}:"))
                    && e.contains("auto, register, bounce"),
                "{e}"
            );
        }
    }

    #[test]
    fn compress_when_parses_and_names_what_it_takes() {
        assert_eq!("auto".parse::<CompressWhen>().unwrap(), CompressWhen::Auto);
        assert_eq!(
            "always".parse::<CompressWhen>().unwrap(),
            CompressWhen::Always
        );
        assert_eq!(CompressWhen::default(), CompressWhen::Auto);
        for bad in ["", "never", "Always", "1"] {
            let e = bad.parse::<CompressWhen>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("PACC_COMPRESS_WHEN={bad}:"))
                    && e.contains("auto")
                    && e.contains("or always"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn pad_rows_parses_and_refuses_clearly() {
        assert!(pad_rows("1").unwrap() && pad_rows("yes").unwrap() && pad_rows("ON").unwrap());
        assert!(!pad_rows("0").unwrap() && !pad_rows("false").unwrap());
        assert!(!pad_rows("off").unwrap() && !pad_rows("No").unwrap());
        match pad_rows("of") {
            Err(Error::Env(crate::error::EnvError::NotBoolean { var, value, .. })) => {
                assert_eq!((var.as_str(), value.as_str()), ("PACC_PAD_ROWS", "of"))
            }
            other => panic!("{other:?}"),
        }
        assert!(Options::new().row_padding(false).cuda.unpadded_rows);
        assert!(!Options::new().cuda.unpadded_rows);
        assert_eq!(
            crate::env::parse_bool("PACC_RING", "maybe", "keep the ring")
                .unwrap_err()
                .to_string(),
            "PACC_RING=maybe is not a boolean. Hint: set it to 1, true, on or yes (keep the \
             ring), or to 0, false, off or no (any case), or unset it"
        );
        assert!(Options::new().read_only_ring(false).no_ring);
        assert!(!Options::new().no_ring);
        let o = Options::new().page_locking(0, false);
        assert_eq!((o.cuda.pin_threads, o.cuda.pin_upfront), (Some(1), true));
        let o = Options::new();
        assert_eq!((o.cuda.pin_threads, o.cuda.pin_upfront), (None, false));
    }

    #[test]
    fn kernel_form_parses_and_refuses_clearly() {
        assert_eq!("plain".parse::<KernelForm>().unwrap(), KernelForm::Plain);
        assert_eq!(
            "marching".parse::<KernelForm>().unwrap(),
            KernelForm::Marching
        );
        match "fast".parse::<KernelForm>() {
            Err(Error::Option(m)) => assert!(m.contains("expected marching or plain"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lists_parse() {
        let p = parse_list("a=16, b = 12.5").unwrap();
        assert_eq!(p.arrays, vec![("a".into(), 16.0), ("b".into(), 12.5)]);
        assert_eq!(parse_list("all=8").unwrap().all, Some(8.0));
        assert!(parse_list("off").unwrap().off);
        assert!(parse_list("a").is_err());
        assert!(parse_list("a=x").is_err());
        // Each name once: a second rate for it would silently win.
        for twice in ["all=16,all=8", "a=16,b=8,a=16", "a=16, a =12"] {
            let e = parse_list(twice).unwrap_err();
            assert!(e.contains("given twice"), "{twice}: {e}");
        }
        assert_eq!(
            parse_list("all=16,a=8").unwrap(),
            ParsedList {
                arrays: vec![("a".into(), 8.0)],
                all: Some(16.0),
                off: false
            }
        );
    }
}
