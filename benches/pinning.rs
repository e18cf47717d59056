//! Page-locking rate (pacc's registration: `cuMemHostRegister`, portable) against
//! piece size, thread count and the state of the host pages: `fresh` (allocated, never
//! written: the kernel maps them only when touched), `touched` (written by the program, as
//! arrays it filled are), `populated` (fresh, then mapped by `madvise(MADV_POPULATE_WRITE)` on
//! the same threads before registering, timed apart; the data is not changed) and `huge`
//! (fresh, with the `MADV_HUGEPAGE` hint: 2 MiB pages where the kernel allows them) and
//! `huge-touched` (hinted, then written: what `pacc_runtime::pages::zeros` hands out). For the
//! written states the populate column is the time the writes took.
//!
//! ```text
//! cargo bench --bench pinning -- --gib 8 --threads 1,4,8 --piece-mib 64,1024
//! ```
//! Prints one row per case: seconds to populate, to register and to unregister, and the
//! registration rate in GB/s. Needs a CUDA device.

use clap::Parser;
use pacc_runtime::exec::cuda;
use pacc_runtime::invocation::HostArray;
use pacc_runtime::program::Elem;
use std::time::Instant;

#[derive(Parser, Debug)]
struct Args {
    /// GiB registered per case.
    #[arg(long, default_value_t = 8)]
    gib: usize,
    /// Registering threads (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,4,8")]
    threads: Vec<usize>,
    /// Piece sizes in MiB (comma-separated; each thread registers its share piece by piece).
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    piece_mib: Vec<usize>,
    /// Page states: fresh, touched, populated, huge, huge-touched.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "fresh,touched,populated,huge,huge-touched"
    )]
    states: Vec<String>,
    /// Accepted for `cargo bench` compatibility.
    #[arg(long, hide = true)]
    bench: bool,
}

/// A page-aligned allocation the kernel maps lazily (mmap, like a large `calloc`).
struct Region {
    ptr: *mut u8,
    bytes: usize,
}

unsafe impl Send for Region {}
unsafe impl Sync for Region {}

impl Region {
    fn new(bytes: usize) -> Region {
        // SAFETY: an anonymous private mapping; unmapped in Drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(ptr != libc::MAP_FAILED, "mmap of {bytes} bytes failed");
        Region {
            ptr: ptr as *mut u8,
            bytes,
        }
    }

    fn at(&self, offset: usize) -> *mut u8 {
        // SAFETY: callers stay inside the mapping.
        unsafe { self.ptr.add(offset) }
    }

    /// The `i`th of `n` equal parts (whole pages).
    fn part(&self, i: usize, n: usize) -> (usize, usize) {
        let per = (self.bytes / n) & !4095;
        let lo = i * per;
        let hi = if i + 1 == n { self.bytes } else { lo + per };
        (lo, hi)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: mapped in `new`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
    }
}

/// The `MADV_HUGEPAGE` hint on the whole mapping, before anything touches it.
fn hint_huge(r: &Region) {
    // SAFETY: advice on our own mapping.
    let rc = unsafe { libc::madvise(r.at(0) as *mut libc::c_void, r.bytes, libc::MADV_HUGEPAGE) };
    assert_eq!(rc, 0, "madvise(MADV_HUGEPAGE) failed");
}

/// Runs `f(lo, hi)` on `threads` threads over equal parts of `r`; the wall seconds.
fn on_threads(r: &Region, threads: usize, f: impl Fn(usize, usize) + Sync) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for i in 0..threads {
            let f = &f;
            let (lo, hi) = r.part(i, threads);
            s.spawn(move || f(lo, hi));
        }
    });
    t.elapsed().as_secs_f64()
}

fn case(args: &Args, state: &str, threads: usize, piece: usize) -> Result<String, String> {
    let bytes = args.gib << 30;
    let r = Region::new(bytes);
    let mut populate = 0.0;
    match state {
        "fresh" => {}
        "huge" => hint_huge(&r),
        "touched" | "huge-touched" => {
            if state == "huge-touched" {
                hint_huge(&r);
            }
            populate = on_threads(&r, threads, |lo, hi| {
                // SAFETY: inside the mapping; each thread writes its own part.
                unsafe { std::ptr::write_bytes(r.at(lo), 1, hi - lo) };
            });
        }
        "populated" => {
            populate = on_threads(&r, threads, |lo, hi| {
                // SAFETY: advice on our own mapping; MADV_POPULATE_WRITE changes no data.
                let rc = unsafe {
                    libc::madvise(
                        r.at(lo) as *mut libc::c_void,
                        hi - lo,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
                assert_eq!(rc, 0, "madvise(MADV_POPULATE_WRITE) failed");
            });
        }
        other => return Err(format!("unknown state `{other}`")),
    }
    // Each thread keeps its registrations (they stay on the thread that made them) and drops
    // them once every thread has registered; the times are the slowest thread's.
    let start = Instant::now();
    let barrier = std::sync::Barrier::new(threads);
    let done = std::sync::Mutex::new((0f64, 0f64));
    on_threads(&r, threads, |lo, hi| {
        let mut locks = Vec::new();
        let mut at = lo;
        while at < hi {
            let n = piece.min(hi - at);
            // SAFETY: `n` bytes inside the mapping, which outlives the lock; nothing else
            // touches them meanwhile.
            let a = unsafe { HostArray::from_raw_parts(r.at(at), Elem::F32, &[n / 4], true) }
                .expect("one axis");
            locks.push(cuda::lock_host(&[a]).expect("registration failed"));
            at += n;
        }
        let registered = start.elapsed().as_secs_f64();
        barrier.wait();
        let t = Instant::now();
        drop(locks);
        let unregistered = t.elapsed().as_secs_f64();
        let mut d = done.lock().unwrap();
        d.0 = d.0.max(registered);
        d.1 = d.1.max(unregistered);
    });
    let (register, unregister) = done.into_inner().unwrap();
    Ok(format!(
        "{state:>9} {threads:>7} {:>9} {populate:>10.3} {register:>10.3} {unregister:>10.3} {:>8.2}",
        piece >> 20,
        bytes as f64 / register / 1e9
    ))
}

fn main() {
    let args = Args::parse();
    match cuda::available() {
        Ok(d) => println!("device: {}", d.name),
        Err(e) => {
            println!("pinning: no CUDA device ({e}); nothing to measure");
            return;
        }
    }
    println!(
        "{} GiB per case\n{:>9} {:>7} {:>9} {:>10} {:>10} {:>10} {:>8}",
        args.gib, "state", "threads", "piece MiB", "populate s", "register s", "unreg s", "GB/s"
    );
    for state in &args.states {
        for &threads in &args.threads {
            for &mib in &args.piece_mib {
                match case(&args, state, threads.max(1), (mib.max(1)) << 20) {
                    Ok(row) => println!("{row}"),
                    Err(e) => {
                        eprintln!("error: {e}");
                        std::process::exit(2);
                    }
                }
            }
        }
    }
}
