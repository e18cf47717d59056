//! Machine code: what a module is compiled with (its cache key), NVRTC's compile, and the
//! one compile per key and process ([`code`]): a thread that asks for a form another thread is
//! compiling (a compile started before the context, `compile::start_early`, or a tuner's
//! compile ahead) waits for that compile instead of starting another.

use crate::disk_cache::{self, Kind};
use crate::error::Error;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The options and the disk cache's key of one compile.
pub(super) struct Job {
    pub options: Vec<String>,
    pub key: String,
}

impl Job {
    /// `source` compiled for compute capability `cc`, with FMA contraction or without.
    pub fn new(cc: (i32, i32), source: &str, fma: bool) -> Job {
        let options = vec![
            format!("--gpu-architecture={}", arch(cc)),
            format!("--fmad={fma}"),
        ];
        let key = format!(
            "pacc {} cubin {} nvrtc {:?}\n{source}",
            env!("CARGO_PKG_VERSION"),
            options.join(" "),
            nvrtc_version()
        );
        Job { options, key }
    }
}

/// The real architecture NVRTC compiles for: machine code (CUBIN) the driver loads as it is.
/// PTX instead would leave the driver to compile every module again at load time, one module
/// at a time under the context (seconds for a program's forms on a fresh machine), where
/// NVRTC runs on any thread.
fn arch(cc: (i32, i32)) -> String {
    format!("sm_{}{}", cc.0, cc.1)
}

/// NVRTC's (major, minor) version.
fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-parameters; NVRTC is loaded (the caller compiles with it next).
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// NVRTC's machine code of `source`, or its log as an error naming `program`.
pub(super) fn nvrtc(program: &str, source: &str, options: &[String]) -> Result<Vec<u8>, Error> {
    use cudarc::nvrtc::{result, sys};
    let failed = |log: String| Error::Nvrtc {
        kernel: program.to_string(),
        log,
    };
    let src = std::ffi::CString::new(source)
        .map_err(|_| failed("the generated source holds a NUL byte".into()))?;
    let name = std::ffi::CString::new(format!("{program}.cu"))
        .map_err(|_| failed("the program's name holds a NUL byte".into()))?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| failed(format!("{e:?}")))?;
    // SAFETY: `prog` was created above and is destroyed once, below; the out-buffers are as
    // long as NVRTC says.
    let out = unsafe {
        match result::compile_program(prog, options) {
            Err(e) => {
                // The log as NVRTC wrote it, up to its NUL (none when it could not be read).
                let log = result::get_program_log(prog).unwrap_or_default();
                let bytes: Vec<u8> = log
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect();
                let log = String::from_utf8_lossy(&bytes);
                Err(failed(format!(
                    "{}\n(nvrtc: {e:?}; options: {})",
                    log.trim_end(),
                    options.join(" ")
                )))
            }
            Ok(()) => {
                let mut size = 0usize;
                let mut cubin = Vec::new();
                let r = sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .and_then(|()| {
                        cubin = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()).result()
                    });
                r.map(|()| cubin)
                    .map_err(|e| failed(format!("reading the machine code: {e:?}")))
            }
        }
    };
    // SAFETY: `prog` is live and not used after this.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// One key's machine code in this process: `None` where the compile failed.
type Slot = Arc<OnceLock<Option<Vec<u8>>>>;

fn slot(key: &str) -> Slot {
    static SLOTS: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let mut slots = (SLOTS.get_or_init(Default::default).lock()).unwrap_or_else(|e| e.into_inner());
    slots.entry(key.to_string()).or_default().clone()
}

/// The machine code of `job`: compiled once per process and key, by whichever thread asks
/// first (an early compile, a tuner's compile ahead, a run), the others waiting for it; from
/// the disk cache where it has the key, else by NVRTC and stored there. `None` where NVRTC
/// refused the source (the caller compiles it again for the error).
pub(super) fn code(job: &Job, program: &str, source: &str) -> Option<Vec<u8>> {
    once_per_key(&job.key, || {
        let build = || nvrtc(program, source, &job.options).map(|c| (c.clone(), c));
        disk_cache::load_or_build(Kind::Cubin, &job.key, Some, build).ok()
    })
}

/// `make`'s value for `key`, made by the first thread that asks in this process.
fn once_per_key(key: &str, make: impl FnOnce() -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    slot(key).get_or_init(make).clone()
}

#[cfg(test)]
mod tests {
    use super::once_per_key;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_key_asked_for_by_many_threads_at_once_is_made_once_and_all_get_it() {
        let made = AtomicUsize::new(0);
        let got: Vec<Option<Vec<u8>>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        once_per_key("cubin test key one", || {
                            made.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(30));
                            Some(vec![7, 1])
                        })
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert!(
            got.iter().all(|g| g.as_deref() == Some(&[7, 1][..])),
            "{got:?}"
        );
        // Another key is made on its own; a failed make is remembered as such.
        assert_eq!(once_per_key("cubin test key two", || None), None);
        assert_eq!(once_per_key("cubin test key two", || Some(vec![1])), None);
        assert_eq!(
            once_per_key("cubin test key one", || None),
            Some(vec![7, 1])
        );
    }
}
