//! Baselines around the executor for the benchmark program (feature `bench`):
//!
//! * [`run_managed`]: the unified-memory baseline: the program's own kernels launched over the
//!   whole domain every step on arrays in managed memory, with or without `cuMemPrefetchAsync`.
//!   It refuses (an error, nothing allocated) when the arrays would not fit in free device memory:
//!   oversubscribed managed memory can hang a shared GPU.

use super::device::available;
use super::device::{context, module};
use super::driver::{self, DevicePtr};
use super::probe::free_memory;
use super::stream::{Streams, SyncOnDrop};
use crate::error::Error;
use crate::invocation::Invocation;
use crate::program::Program;
use crate::settled::CudaSettings;
use std::time::Instant;

/// What a unified-memory run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ManagedOutput {
    /// From the first prefetch / kernel to the results being back in host memory.
    pub seconds: f64,
    /// Sum of the kernels' event times (they include page-fault migration without prefetch).
    pub kernel_seconds: f64,
    /// Prefetching to the device before the first step.
    pub prefetch_in_seconds: f64,
    /// Getting the results back to the host (prefetch to the host, or the host touching every
    /// page of the written arrays).
    pub back_seconds: f64,
    /// Bytes of managed memory.
    pub managed_bytes: u64,
    /// Setup: allocating managed memory and filling it from the caller's arrays (not timed).
    pub setup_seconds: f64,
}

struct Managed(Vec<DevicePtr>);
impl Drop for Managed {
    fn drop(&mut self) {
        for &p in &self.0 {
            if p != 0 {
                // SAFETY: allocated by `malloc_managed` below; work synchronized before drop.
                unsafe { driver::free(p) };
            }
        }
    }
}

/// Bytes kept free beside a managed allocation (context, modules, other tenants' slack).
const MANAGED_MARGIN: u64 = 2 << 30;

/// Why managed arrays are not allocated: the free memory could not be read, or they would
/// oversubscribe the device (a caller skips the baseline then).
#[derive(Debug, thiserror::Error)]
pub enum ManagedFitError {
    #[error("{0}")]
    Unknown(Error),
    #[error(
        "{:.1} GiB of managed arrays (+{:.0} GiB margin) would not fit in the {:.1} GiB of free \
         device memory; not oversubscribing a shared GPU",
        gib(*.bytes), gib(MANAGED_MARGIN), gib(*.free)
    )]
    TooLarge { bytes: u64, free: u64 },
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// Whether `bytes` of managed memory fit in free device memory with a margin. Never allocate
/// managed memory without asking this first.
pub fn managed_fits(bytes: u64) -> Result<(), ManagedFitError> {
    let (free, _) = free_memory().map_err(ManagedFitError::Unknown)?;
    if bytes + MANAGED_MARGIN > free {
        return Err(ManagedFitError::TooLarge { bytes, free });
    }
    Ok(())
}

/// Runs `inv.steps` steps of `program` with every array in managed memory: per step, each stage
/// in program order (kernels over the whole domain, point statements, swaps by renaming). The
/// caller's arrays are copied into managed memory first and the results copied back at the end
/// (both untimed); reductions are computed by the kernels but not combined (not returned).
pub fn run_managed(
    program: &Program,
    inv: &Invocation<'_>,
    cuda: &CudaSettings,
    prefetch: bool,
) -> Result<ManagedOutput, Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = context(info.ordinal)?;
    let t_setup = Instant::now();
    let total: u64 = inv.arrays.iter().map(|a| a.bytes() as u64).sum();
    managed_fits(total).map_err(|m| Error::Cuda {
        what: "the unified-memory baseline".into(),
        message: m.to_string(),
    })?;
    let tuning = cuda.march.get()?;
    let md = module(
        &ctx,
        &program.name,
        &super::compile::source(program, &tuning),
        cuda.fma,
    )?;
    let mut managed = Managed(Vec::new());
    for a in &inv.arrays {
        // SAFETY: plain allocation, freed by `Managed`.
        let p = unsafe { driver::malloc_managed(a.bytes(), "cuMemAllocManaged") }?;
        managed.0.push(p);
        // SAFETY: `a.bytes()` bytes on both sides; managed memory is host-accessible.
        par_copy(a.ptr as *const u8, p as *mut u8, a.bytes());
    }
    let steps = super::resident::Steps::new(&ctx, &md, program, inv, cuda.kernel_form, &tuning)?;
    let streams = Streams::new(1)?;
    let st = streams.0[0];
    let sync = SyncOnDrop(ctx.clone());
    // Make sure the host-side fill is complete and nothing is in flight.
    ctx.synchronize()
        .map_err(driver::cuda_err("synchronizing"))?;
    let setup_seconds = t_setup.elapsed().as_secs_f64();

    let dev = Some(info.ordinal);
    let mut out = ManagedOutput {
        managed_bytes: total,
        setup_seconds,
        ..Default::default()
    };
    let t0 = Instant::now();
    // SAFETY: launches over managed arrays of the full shape with the ABI of internals.md §3;
    // everything is on one stream and synchronized before the buffers drop.
    unsafe {
        if prefetch {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                driver::prefetch(p, a.bytes(), dev, st, "cuMemPrefetchAsync to the device")?;
            }
            driver::stream_sync(st, "prefetching")?;
        }
        out.prefetch_in_seconds = t0.elapsed().as_secs_f64();
        let ran = steps.run(&managed.0)?;
        out.kernel_seconds = ran.kernel_seconds.iter().sum();
        let t_back = Instant::now();
        if prefetch {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                if a.writable {
                    driver::prefetch(p, a.bytes(), None, st, "cuMemPrefetchAsync to the host")?;
                }
            }
            driver::stream_sync(st, "prefetching back")?;
        } else {
            for (a, &p) in inv.arrays.iter().zip(&managed.0) {
                if a.writable {
                    touch_pages(p as *const u8, a.bytes());
                }
            }
        }
        out.back_seconds = t_back.elapsed().as_secs_f64();
    }
    out.seconds = t0.elapsed().as_secs_f64();
    // Results back into the caller's arrays (untimed).
    for (a, &p) in inv.arrays.iter().zip(&managed.0) {
        if a.writable {
            par_copy(p as *const u8, a.ptr, a.bytes());
        }
    }
    drop(sync);
    Ok(out)
}

/// Parallel memcpy of `n` bytes (non-overlapping).
fn par_copy(src: *const u8, dst: *mut u8, n: usize) {
    use rayon::prelude::*;
    const PIECE: usize = 8 << 20;
    let (s, d) = (src as usize, dst as usize);
    (0..n.div_ceil(PIECE)).into_par_iter().for_each(|i| {
        let o = i * PIECE;
        let len = PIECE.min(n - o);
        // SAFETY: disjoint pieces of two valid, non-overlapping ranges of n bytes.
        unsafe { std::ptr::copy_nonoverlapping((s + o) as *const u8, (d + o) as *mut u8, len) };
    });
}

/// Reads one byte of every 4 KiB page, in parallel (forces managed pages back to the host).
fn touch_pages(p: *const u8, n: usize) {
    use rayon::prelude::*;
    const PAGE: usize = 4096;
    let base = p as usize;
    let sum: u64 = (0..n.div_ceil(PAGE))
        .into_par_iter()
        .map(|i| {
            // SAFETY: inside the n-byte managed allocation.
            unsafe { std::ptr::read_volatile((base + i * PAGE) as *const u8) as u64 }
        })
        .sum();
    std::hint::black_box(sum);
}
