//! Run-time options: backend choice, chunking, blocking depth, scheme.

use crate::error::Error;
use crate::plan::Scheme;
use std::path::PathBuf;

/// Which backend runs a pipelined function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// CUDA when a device is present, else the CPU backend (saying so once per process).
    #[default]
    Auto,
    Cuda,
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
                "unknown backend `{s}`; expected auto, cuda, cpu, serial or shuffled[:SEED]"
            ))),
        }
    }
}

/// Options of one call. Unset fields fall back to the directive's clauses, then to defaults.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub backend: BackendChoice,
    pub chunks: Option<usize>,
    pub block_steps: Option<usize>,
    pub scheme: Option<Scheme>,
    /// Let the CUDA compiler contract multiply-adds into FMAs (faster; results then match the
    /// serial function within rounding instead of exactly).
    pub fma: bool,
    /// Write a Chrome/Perfetto trace of the streams here (CUDA backend).
    pub trace: Option<PathBuf>,
}

impl Options {
    pub fn new() -> Self {
        Self::default()
    }

    /// Options from `PACC_BACKEND`, `PACC_CHUNKS`, `PACC_BLOCK_STEPS`, `PACC_SCHEME`,
    /// `PACC_FMA` (0/1) and `PACC_TRACE`.
    pub fn from_env() -> Result<Self, Error> {
        let mut o = Options::default();
        if let Ok(v) = std::env::var("PACC_BACKEND") {
            o.backend = v.parse()?;
        }
        o.chunks = env_usize("PACC_CHUNKS")?;
        o.block_steps = env_usize("PACC_BLOCK_STEPS")?;
        if let Ok(v) = std::env::var("PACC_SCHEME") {
            o.scheme = Some(v.parse().map_err(Error::Option)?);
        }
        if let Ok(v) = std::env::var("PACC_FMA") {
            o.fma = matches!(v.as_str(), "1" | "true" | "yes");
        }
        o.trace = std::env::var_os("PACC_TRACE").map(PathBuf::from);
        Ok(o)
    }

    pub fn backend(mut self, b: BackendChoice) -> Self {
        self.backend = b;
        self
    }
    pub fn chunks(mut self, d: usize) -> Self {
        self.chunks = Some(d);
        self
    }
    pub fn block_steps(mut self, k: usize) -> Self {
        self.block_steps = Some(k);
        self
    }
    pub fn scheme(mut self, s: Scheme) -> Self {
        self.scheme = Some(s);
        self
    }
    pub fn fma(mut self, on: bool) -> Self {
        self.fma = on;
        self
    }
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.trace = Some(path.into());
        self
    }
}

fn env_usize(key: &str) -> Result<Option<usize>, Error> {
    match std::env::var(key) {
        Ok(v) => v
            .parse()
            .map(Some)
            .map_err(|_| Error::Option(format!("{key}={v}: expected a positive integer"))),
        Err(_) => Ok(None),
    }
}
