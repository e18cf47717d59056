//! The `PACC_*` environment variables: the one list of the names pacc reads ([`VARIABLES`]),
//! the only readers of them ([`var`], [`var_os`], [`flag`]), the one boolean parser
//! ([`parse_bool`]) and the warning about a `PACC_` variable that is on no list.

use crate::error::{EnvError, Error};
use std::ffi::OsString;

/// Every `PACC_*` variable the library reads. The readers below take only these names, and a
/// test checks that the sources read no other (and that each is read).
pub const VARIABLES: &[&str] = &[
    "PACC_BACKEND",
    "PACC_BLOCK_STEPS",
    "PACC_CACHE_DIR",
    "PACC_CHECKPOINT_DIR",
    "PACC_CHECKPOINT_EVERY",
    "PACC_CHUNKS",
    "PACC_CODEC",
    "PACC_CODEC_GRID",
    "PACC_COMPRESS",
    "PACC_COMPRESS_INPUTS",
    "PACC_COMPRESS_WHEN",
    "PACC_FMA",
    "PACC_FUSE",
    "PACC_HALO",
    "PACC_HOST_PATH",
    "PACC_KERNELS",
    "PACC_MARCH",
    "PACC_MPI_TIMEOUT",
    "PACC_PAD_ROWS",
    "PACC_PIN_OVERLAP",
    "PACC_PIN_THREADS",
    "PACC_RESUME",
    "PACC_RING",
    "PACC_SCHEME",
    "PACC_SERIAL_STREAM",
    "PACC_TRACE",
];

/// Variables read by pacc's own tests and benchmarks, not by the library: set while they run,
/// so not warned about.
pub const TOOL_VARIABLES: &[&str] = &[
    "PACC_FUSED_CASES",
    "PACC_FUSED_SEED",
    "PACC_FUZZ_CASES",
    "PACC_GPU_FUSED_CASES",
    "PACC_MPI_TEST_VERBOSE",
    "PACC_SHOW",
    "PACC_TEST_BACKEND",
    "PACC_TEST_CAP_MIB",
    "PACC_TEST_N",
    "PACC_TEST_SCHEME",
    "PACC_TEST_SIGKILL_DIR",
    "PACC_TEST_TRACE_DIR",
];

/// The value of `name` (one of [`VARIABLES`]); `None` when unset. A value that is not
/// Unicode counts as unset, as `std::env::var` makes it.
pub fn var(name: &'static str) -> Option<String> {
    var_os(name).and_then(|v| v.into_string().ok())
}

/// The value of `name` (one of [`VARIABLES`]), any bytes; `None` when unset.
pub fn var_os(name: &'static str) -> Option<OsString> {
    debug_assert!(VARIABLES.contains(&name), "{name} is not in env::VARIABLES");
    std::env::var_os(name)
}

/// Boolean variable `name`: `None` when unset, else [`parse_bool`] of its value; `on` says
/// what turning it on does, for the refusal.
pub fn flag(name: &'static str, on: &str) -> Result<Option<bool>, Error> {
    var(name).map(|v| parse_bool(name, &v, on)).transpose()
}

/// `value` of boolean variable `var`: 1, true, on, yes or 0, false, off, no, in any case
/// (surrounding blanks ignored); anything else is [`EnvError::NotBoolean`].
pub fn parse_bool(var: &str, value: &str, on: &str) -> Result<bool, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(EnvError::NotBoolean {
            var: var.to_string(),
            value: value.to_string(),
            on: on.to_string(),
        }
        .into()),
    }
}

/// Variable `name` naming a path: `None` when unset, [`EnvError::Empty`] when set to nothing
/// (an empty path names no directory, and a typo such as `PACC_RESUME=$DIR` with `DIR` unset
/// should not quietly turn the setting off).
pub fn path(name: &'static str, what: &str) -> Result<Option<OsString>, Error> {
    non_empty(name, var_os(name), what)
}

/// `value` of variable `var`, refused when empty; `what` says what it names.
fn non_empty(var: &str, value: Option<OsString>, what: &str) -> Result<Option<OsString>, Error> {
    match value {
        Some(v) if v.is_empty() => Err(EnvError::Empty {
            var: var.to_string(),
            what: what.to_string(),
        }
        .into()),
        v => Ok(v),
    }
}

/// The `PACC_` names among `names` that are on neither list, sorted.
pub fn unknown(names: impl IntoIterator<Item = OsString>) -> Vec<String> {
    let mut out: Vec<String> = names
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with("PACC_")
                && !VARIABLES.contains(&n.as_str())
                && !TOOL_VARIABLES.contains(&n.as_str())
        })
        .collect();
    out.sort();
    out
}

/// The warning for the `unknown` variables; `None` when there are none.
pub fn warning(unknown: &[String]) -> Option<String> {
    let (last, rest) = unknown.split_last()?;
    let names = match rest {
        [] => format!("{last} is"),
        _ => format!("{} and {last} are", rest.join(", ")),
    };
    Some(format!(
        "pacc: warning: {names} set but not a variable pacc reads, so ignored (a typo?); \
         the ones it reads: {}",
        VARIABLES.join(", ")
    ))
}

/// Writes [`warning`] for the process's environment to stderr, the first time only.
pub fn warn_unknown_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if let Some(w) = warning(&unknown(std::env::vars_os().map(|(k, _)| k))) {
            eprintln!("{w}");
        }
    });
}

#[cfg(test)]
mod tests;
