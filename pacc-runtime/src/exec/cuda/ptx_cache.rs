//! NVRTC's output kept on disk between processes.
//!
//! Compiling a program's CUDA source costs about a second on the H100's host (more for the
//! fused forms), and the tuner compiles several forms of it before a long run: paid again by
//! every process, that is most of a short call's set-up. The PTX is stored under the
//! directory `PACC_CACHE_DIR` names (default `$XDG_CACHE_HOME/pacc/ptx`, else
//! `~/.cache/pacc/ptx`; `PACC_CACHE_DIR=off` turns the cache off), one file per source and
//! compile options, holding both, so a hit is checked against the full text and a collision
//! of the file name is a miss. The driver keeps its own cache of the machine code it builds
//! from the PTX. Any I/O problem is a miss: the cache never fails a run.

use std::io::Write;
use std::path::PathBuf;

/// The cache directory, or `None` when it is off or no home is known.
fn dir() -> Option<PathBuf> {
    match std::env::var_os("PACC_CACHE_DIR") {
        Some(d) if d == "off" || d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("pacc").join("ptx")),
    }
}

/// The file of `(options, source)`: a checksum of both and the source's length.
fn file(options: &str, source: &str) -> Option<PathBuf> {
    let mut h = crc32fast::Hasher::new();
    h.update(options.as_bytes());
    h.update(&[0]);
    h.update(source.as_bytes());
    Some(dir()?.join(format!("{:08x}-{}.ptx", h.finalize(), source.len())))
}

/// What a file holds: the options line, the source's length line, the source, then the PTX.
fn header(options: &str, source: &str) -> String {
    format!("{options}\n{}\n{source}", source.len())
}

/// The PTX compiled earlier from `source` with `options` (which must name everything the
/// output depends on: architecture, FMA, the pacc and NVRTC versions).
pub(crate) fn load(options: &str, source: &str) -> Option<String> {
    let text = std::fs::read_to_string(file(options, source)?).ok()?;
    let head = header(options, source);
    text.strip_prefix(&head).map(str::to_string)
}

/// Keeps `ptx` for [`load`]; written to a temporary file and renamed, so a reader never sees
/// half of it.
pub(crate) fn store(options: &str, source: &str, ptx: &str) {
    let Some(path) = file(options, source) else {
        return;
    };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().unwrap_or(&path))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(header(options, source).as_bytes())?;
        f.write_all(ptx.as_bytes())?;
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
        let d = std::env::temp_dir().join(format!("pacc-ptx-cache-{}", std::process::id()));
        std::env::set_var("PACC_CACHE_DIR", &d);
        assert_eq!(load("sm_90 fma=0", "src"), None);
        store("sm_90 fma=0", "src", ".version 8.0\nptx");
        assert_eq!(
            load("sm_90 fma=0", "src").as_deref(),
            Some(".version 8.0\nptx")
        );
        assert_eq!(load("sm_90 fma=1", "src"), None, "other options");
        assert_eq!(load("sm_90 fma=0", "src2"), None, "other source");
        // A file whose name matches but whose text does not (a collision) is a miss.
        std::fs::write(file("o", "abc").unwrap(), "o\n3\nabd.ptx").unwrap();
        assert_eq!(load("o", "abc"), None);
        std::env::set_var("PACC_CACHE_DIR", "off");
        assert_eq!(load("sm_90 fma=0", "src"), None, "off");
        store("x", "y", "z");
        std::env::remove_var("PACC_CACHE_DIR");
        let _ = std::fs::remove_dir_all(&d);
    }
}
