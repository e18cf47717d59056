//! What a process measured or compiled, kept on disk for the next one.
//!
//! Compiling a program's CUDA source costs about a second on the H100's host (more for the
//! fused forms), and before a long run the tuner compiles and times several kernel forms on a
//! slab of the call's arrays: paid again by every process, that was up to a fifth of a
//! minute-long call (docs/internals.md §3). Three kinds of entries are kept, each in its own
//! folder under the directory `PACC_CACHE_DIR` names (default `$XDG_CACHE_HOME/pacc`, else
//! `~/.cache/pacc`; `PACC_CACHE_DIR=off` turns the cache off): NVRTC's PTX ([`Kind::Ptx`]),
//! the kernels' measured rates ([`Kind::Rates`]) and the link's ([`Kind::Link`]: measuring it
//! page-locks two fresh 256 MiB buffers, a few tenths of a second of every call's set-up). An entry holds its whole key (for PTX, the
//! options and the full source), so a hit is exact and a collision of file names is a miss.
//! Any I/O problem is a miss too: the cache never fails a run.

#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

use std::io::Write;
use std::path::PathBuf;

/// The kinds of entries, each in its own folder.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// NVRTC's PTX of a source with its compile options.
    Ptx,
    /// Kernel rates measured on a slab (`tune::measure`), per device.
    Rates,
    /// The link's rates, per host and device.
    Link,
}

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Ptx => "ptx",
            Kind::Rates => "rates",
            Kind::Link => "link",
        }
    }
}

/// The cache's folder for `kind`, or `None` when the cache is off or no home is known.
fn dir(kind: Kind) -> Option<PathBuf> {
    let root = match std::env::var_os("PACC_CACHE_DIR") {
        Some(d) if d == "off" || d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("pacc")),
    };
    Some(root?.join(kind.folder()))
}

/// The file of `key`: a checksum of it and its length.
fn file(kind: Kind, key: &str) -> Option<PathBuf> {
    let sum = crc32fast::hash(key.as_bytes());
    Some(dir(kind)?.join(format!("{sum:08x}-{}", key.len())))
}

/// What a file holds before the value: the key's length on a line, then the key.
fn header(key: &str) -> String {
    format!("{}\n{key}", key.len())
}

/// The value stored under `key`, if any.
pub(crate) fn load(kind: Kind, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file(kind, key)?).ok()?;
    text.strip_prefix(&header(key)).map(str::to_string)
}

/// Keeps `value` under `key` for [`load`]; written to a temporary file and renamed, so a
/// reader never sees half of it.
pub(crate) fn store(kind: Kind, key: &str, value: &str) {
    let Some(path) = file(kind, key) else {
        return;
    };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().unwrap_or(&path))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(header(key).as_bytes())?;
        f.write_all(value.as_bytes())?;
        drop(f);
        std::fs::rename(&tmp, &path)
    };
    let _ = write();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test touches the environment, so the cases run in order.
    #[test]
    fn stores_loads_and_misses_on_any_difference() {
        let d = std::env::temp_dir().join(format!("pacc-cache-{}", std::process::id()));
        std::env::set_var("PACC_CACHE_DIR", &d);
        let key = "sm_90 fma=0\nsource";
        assert_eq!(load(Kind::Ptx, key), None);
        store(Kind::Ptx, key, ".version 8.0\nptx");
        assert_eq!(load(Kind::Ptx, key).as_deref(), Some(".version 8.0\nptx"));
        assert_eq!(load(Kind::Rates, key), None, "each kind in its own folder");
        assert_eq!(
            load(Kind::Ptx, "sm_90 fma=1\nsource"),
            None,
            "other options"
        );
        assert_eq!(load(Kind::Ptx, "sm_90 fma=0\nsourcf"), None, "other source");
        // A file whose name matches but whose key does not (a collision) is a miss.
        std::fs::write(file(Kind::Ptx, "abc").unwrap(), "3\nabd value").unwrap();
        assert_eq!(load(Kind::Ptx, "abc"), None);
        std::env::set_var("PACC_CACHE_DIR", "off");
        assert_eq!(load(Kind::Ptx, key), None, "off");
        store(Kind::Ptx, "x", "y");
        std::env::remove_var("PACC_CACHE_DIR");
        let _ = std::fs::remove_dir_all(&d);
    }
}
