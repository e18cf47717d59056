//! What a process measured or compiled, kept on disk for the next one.
//!
//! Compiling a program's CUDA source costs about a second on the H100's host (more for the
//! fused forms), and before a long run the tuner compiles and times several kernel forms on a
//! slab of the call's arrays: paid again by every process, that was up to a fifth of a
//! minute-long call (docs/internals.md §3). Three kinds of entries are kept, each in its own
//! folder under the directory `PACC_CACHE_DIR` names (default `$XDG_CACHE_HOME/pacc`, else
//! `~/.cache/pacc`; `PACC_CACHE_DIR=off` turns the cache off): NVRTC's machine code ([`Kind::Cubin`]),
//! the kernels' measured rates ([`Kind::Rates`]) and the link's ([`Kind::Link`]: measuring it
//! page-locks two fresh 256 MiB buffers, a few tenths of a second of every call's set-up).
//!
//! An entry holds its whole key (for machine code and rates, the options and the full source), so a hit
//! is exact and a collision of file names is a miss. It also holds a CRC-32 of key and value
//! and both lengths: a truncated, damaged or foreign file is a miss too, and the next store
//! overwrites it. Writers never share a file: each writes its own temporary file (named after
//! the process and a per-process count, with a random tag for processes of equal ids on other
//! hosts sharing the folder), flushes it to the disk and renames it over the entry, so a reader
//! sees a whole entry or none. Temporary files a failed writer left behind are removed once
//! they are an hour old. Any I/O problem is a miss: the cache never fails a run.

#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The kinds of entries, each in its own folder.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// NVRTC's machine code (CUBIN) of a source with its compile options.
    Cubin,
    /// Kernel rates measured on a slab (`tune::measure`), per device.
    Rates,
    /// The link's rates, per host and device.
    Link,
}

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Cubin => "cubin",
            Kind::Rates => "rates",
            Kind::Link => "link",
        }
    }
}

/// The first line's opening: entries written by another format (or any other file) miss.
const MAGIC: &str = "pacc-cache 2";

/// What a temporary file's extension starts with.
const TMP: &str = "tmp";

/// Age after which a temporary file is taken for a failed writer's: no writer takes that long.
const STALE: Duration = Duration::from_secs(3600);

/// The cache's folder for `kind`, or `None` when the cache is off or no home is known.
fn dir(kind: Kind) -> Option<PathBuf> {
    let root = match crate::env::var_os("PACC_CACHE_DIR") {
        Some(d) if d == "off" || d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("pacc")),
    };
    Some(root?.join(kind.folder()))
}

/// The text stored under `key`, if an intact entry holds it.
pub(crate) fn load(kind: Kind, key: &str) -> Option<String> {
    String::from_utf8(Entry::new(kind, key)?.load()?).ok()
}

/// Keeps `value` under `key` for [`load`] (see the module documentation for how).
pub(crate) fn store(kind: Kind, key: &str, value: &str) {
    if let Some(e) = Entry::new(kind, key) {
        e.store(value.as_bytes());
    }
}

/// [`Entry::load_or_build`] for `key`; with the cache off, what `build` makes.
pub(crate) fn load_or_build<T, E>(
    kind: Kind,
    key: &str,
    usable: impl FnOnce(Vec<u8>) -> Option<T>,
    build: impl FnOnce() -> Result<(T, Vec<u8>), E>,
) -> Result<T, E> {
    match Entry::new(kind, key) {
        Some(e) => e.load_or_build(usable, build),
        None => build().map(|(v, _)| v),
    }
}

/// One key's file.
struct Entry<'k> {
    path: PathBuf,
    key: &'k str,
}

impl<'k> Entry<'k> {
    /// The entry of `key` in `kind`'s folder; `None` when the cache is off.
    fn new(kind: Kind, key: &'k str) -> Option<Self> {
        Some(Self::in_folder(&dir(kind)?, key))
    }

    /// The entry of `key` in `folder`: a checksum of the key and its length name the file.
    fn in_folder(folder: &Path, key: &'k str) -> Self {
        let sum = crc32fast::hash(key.as_bytes());
        Entry {
            path: folder.join(format!("{sum:08x}-{}", key.len())),
            key,
        }
    }

    fn load(&self) -> Option<Vec<u8>> {
        decode(&std::fs::read(&self.path).ok()?, self.key)
    }

    /// The value if there is one and `usable` takes it; else what `build` makes, stored over
    /// the entry for the next process. An entry that reads back but cannot be used (machine
    /// code the driver refuses) is a miss like any other.
    fn load_or_build<T, E>(
        &self,
        usable: impl FnOnce(Vec<u8>) -> Option<T>,
        build: impl FnOnce() -> Result<(T, Vec<u8>), E>,
    ) -> Result<T, E> {
        if let Some(v) = self.load().and_then(usable) {
            return Ok(v);
        }
        let (v, bytes) = build()?;
        self.store(&bytes);
        Ok(v)
    }

    fn store(&self, value: &[u8]) {
        let Some(folder) = self.path.parent() else {
            return;
        };
        if std::fs::create_dir_all(folder).is_err() {
            return;
        }
        sweep_once(folder);
        let tmp = temporary(&self.path);
        let written = write_synced(&tmp, &encode(self.key, value));
        if written
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The bytes of an entry: a header line (format, checksum, lengths), then key and value.
fn encode(key: &str, value: &[u8]) -> Vec<u8> {
    let mut h = crc32fast::Hasher::new();
    h.update(key.as_bytes());
    h.update(value);
    let head = format!(
        "{MAGIC} crc32 {:08x} key {} value {}\n",
        h.finalize(),
        key.len(),
        value.len()
    );
    [head.as_bytes(), key.as_bytes(), value].concat()
}

/// The value of an entry read whole, if it is intact and holds `key`.
fn decode(bytes: &[u8], key: &str) -> Option<Vec<u8>> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let head = std::str::from_utf8(&bytes[..nl]).ok()?;
    let body = &bytes[nl + 1..];
    let fields: Vec<&str> = head.strip_prefix(MAGIC)?.split_whitespace().collect();
    let ["crc32", sum, "key", k, "value", v] = fields.as_slice() else {
        return None;
    };
    let (sum, k, v) = (
        u32::from_str_radix(sum, 16).ok()?,
        k.parse::<usize>().ok()?,
        v.parse::<usize>().ok()?,
    );
    if k.checked_add(v)? != body.len() || crc32fast::hash(body) != sum {
        return None;
    }
    let (stored_key, value) = body.split_at(k);
    if stored_key != key.as_bytes() {
        return None;
    }
    Some(value.to_vec())
}

/// Writes `bytes` to a new file at `path` and waits until they are on the disk, so that the
/// rename that follows never publishes a file whose bytes a crash lost.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// A name beside `path` that no other writer uses: this process's tag and id, and a count
/// that differs for every write of the process (threads included).
fn temporary(path: &Path) -> PathBuf {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    path.with_extension(format!(
        "{TMP}-{:016x}-{}-{n}",
        process_tag(),
        std::process::id()
    ))
}

/// A random number per process: ranks on other hosts may have the same process id and share
/// the cache folder through a network home.
fn process_tag() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static TAG: OnceLock<u64> = OnceLock::new();
    *TAG.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            h.write_u128(t.as_nanos());
        }
        h.finish()
    })
}

/// [`sweep`] once per process and folder: listing a folder on every store would cost more
/// than the rare leftover does.
fn sweep_once(folder: &Path) {
    static SWEPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !swept.iter().any(|f| f == folder) {
        swept.push(folder.to_path_buf());
        sweep(folder, STALE);
    }
}

/// Removes the temporary files in `folder` at least `age` old.
fn sweep(folder: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let ext = path.extension().and_then(|x| x.to_str());
        let old = (e.metadata().and_then(|m| m.modified()).ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|a| a >= age);
        if ext.is_some_and(|x| x.starts_with(TMP)) && old {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests;
