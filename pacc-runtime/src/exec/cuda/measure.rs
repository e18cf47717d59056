//! The CUDA backend's side of the tuner ([`crate::tune::Probe`]): the link rates, each
//! kernel's rate timed on a slab of the call's arrays, and the device memory a plan may use.
//! Link and kernel measurements are cached per process (kernel rates also on disk), so a run
//! pays for them once.

use super::memory::PinnedHost;
use crate::disk_cache::{self, Kind};
use crate::error::Error;
use crate::exec::cuda::{self, CudaOutput};
use crate::exec::{CpuKernelFn, CpuKernels, CpuPointFn, KernelFrame};
use crate::invocation::{HostArray, Invocation};
use crate::march::MarchTuning;
use crate::options::KernelForm;
use crate::plan::{self, PlanOptions, Scheme};
use crate::program::{Elem, Program};
use crate::settled::{CudaSettings, Settled};
use crate::tune::measure::{link_from_times, slab_planes};
use crate::tune::model::{plane_points, LinkRates, TuneInputs};
use crate::tune::Probe;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

/// Measures the link with `bytes`-byte pinned buffers: the best of `reps` timed copies host
/// to device, device to host, and both at once (two streams; the rate counts the bytes of
/// both).
pub fn measure_link(bytes: usize, reps: usize) -> Result<LinkRates, Error> {
    let t = cuda::time_link(bytes, reps)?;
    Ok(link_from_times(t.bytes, t.htod, t.dtoh, t.both))
}

/// [`link_rates`]' answer, once this process has one.
static LINK: OnceLock<Result<LinkRates, String>> = OnceLock::new();

/// Bytes of each copy that measures the link. On an H200 (2026-11-28) 32 MiB gave the rates
/// of 256 MiB within 1% (55.0 / 55.1 / 99.8 GB/s host to device, device to host, both,
/// against 55.4 / 55.3 / 95.5-99.0) in 0.045 s instead of 0.41-0.92 s: the larger buffers'
/// allocation, not their copies, was the cost (`benches/results/2026-11-28-h200-cold-link/`).
pub const LINK_PROBE_BYTES: usize = 32 << 20;

/// The link rates, measured once per host and device (`LINK_PROBE_BYTES`, best of 5) and
/// kept on disk, else once per process.
pub fn link_rates() -> Result<LinkRates, Error> {
    LINK.get_or_init(|| {
        let key = link_key().map_err(|e| e.to_string())?;
        if let Some(l) = disk_cache::load(Kind::Link, &key).and_then(|t| parse_link(&t)) {
            return Ok(l);
        }
        let l = measure_link(LINK_PROBE_BYTES, 5).map_err(|e| e.to_string())?;
        let text = format!("{:?} {:?} {:?} {}", l.htod, l.dtoh, l.both, l.bytes);
        disk_cache::store(Kind::Link, &key, &text);
        Ok(l)
    })
    .clone()
    .map_err(|m| Error::Cuda {
        what: "measuring the link".into(),
        message: m,
    })
}

/// The link's entry in the disk cache: the device and the host it is plugged into.
fn link_key() -> Result<String, Error> {
    let d = cuda::available().map_err(|reason| Error::no_cuda(reason, None))?;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    Ok(format!(
        "pacc {} link rates\ndevice {} ordinal {} of {}\nhost {}\n",
        env!("CARGO_PKG_VERSION"),
        d.name,
        d.ordinal,
        d.count,
        host.trim()
    ))
}

/// Rates stored by [`link_rates`]: three positive rates and the buffer size.
fn parse_link(text: &str) -> Option<LinkRates> {
    let v: Vec<&str> = text.split(' ').collect();
    let [h, d, b, n] = v.as_slice() else {
        return None;
    };
    let rate = |s: &str| s.parse::<f64>().ok().filter(|r| r.is_finite() && *r > 0.0);
    Some(LinkRates {
        htod: rate(h)?,
        dtoh: rate(d)?,
        both: rate(b)?,
        bytes: n.parse().ok()?,
    })
}

/// Program, source hash and kernel names, plane shape, slab planes, FMA, kernel form,
/// compile-time shape and unpadded rows: what a kernel's measured rate depends on.
type Key = (
    String,
    u64,
    Vec<usize>,
    usize,
    bool,
    KernelForm,
    MarchTuning,
    bool,
);

fn rate_cache() -> std::sync::MutexGuard<'static, HashMap<Key, Vec<f64>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Vec<f64>>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Points per second of each kernel of `program`, measured by running it (3 steps in core,
/// the first not counted) on a copy of the first planes of the call's arrays: a slab of the real plane size, as
/// deep as the program's reach needs ([`slab_planes`]). Cached per process, program,
/// plane shape and the settings the kernels depend on. The slab's page-locked buffers stay
/// held for the next measurement until [`release_slabs`].
pub fn measure_kernel_rates(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
) -> Result<Vec<f64>, Error> {
    let planes = slab_planes(program, inv.arrays[0].shape()[0]);
    measure_kernel_rates_at(program, inv, settled, planes)
}

/// [`measure_kernel_rates`] on a slab of `planes` planes (at most the call's). `program`
/// may be a fused run's (`crate::fuse::program`) with `inv` the call's own invocation: the
/// level buffers get copies of the arrays they stand for.
pub fn measure_kernel_rates_at(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    planes: usize,
) -> Result<Vec<f64>, Error> {
    let c = &settled.cuda;
    let shape = inv.arrays[0].shape().to_vec();
    let planes = planes.min(shape[0]);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    program.cuda_source.hash(&mut h);
    for k in &program.kernels {
        k.name.hash(&mut h);
    }
    let key = (
        program.name.clone(),
        h.finish(),
        shape[1..].to_vec(),
        planes,
        c.fma,
        c.kernel_form,
        c.march.get()?,
        c.unpadded_rows,
    );
    if let Some(v) = rate_cache().get(&key) {
        return Ok(v.clone());
    }
    let on_disk = disk_key(program, &key)?;
    if let Some(v) = load_rates(&on_disk, program.kernels.len()) {
        rate_cache().insert(key, v.clone());
        return Ok(v);
    }
    let slab = Slab::copy(program, inv, planes);
    let program = &crate::tune::measure::slab_program(program, slab.shape[0]);
    // The first step warms up (first launches, cold caches) and is not counted (`rates_from`).
    let steps = 3;
    let plan = plan::build(
        program,
        &slab.shape,
        steps,
        &slab.point_planes(),
        &PlanOptions {
            chunks: 1,
            block_steps: steps,
            scheme: Scheme::RegionSharing,
            buffer_sets: 1,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        },
    )?;
    let o = kernel_settings(c);
    let out = cuda::execute(program, &plan, &slab.invocation(program, inv, steps)?, &o)?;
    let rates = rates_from(program, &out);
    rate_cache().insert(key, rates.clone());
    let text: Vec<String> = rates.iter().map(|r| format!("{r:?}")).collect();
    disk_cache::store(Kind::Rates, &on_disk, &text.join(" "));
    Ok(rates)
}

/// The key of a measurement in the disk cache: [`Key`] with the device's name and the whole
/// source, which the entry holds and a look-up compares (a checksum of it could collide).
fn disk_key(program: &Program, key: &Key) -> Result<String, Error> {
    let device = cuda::available()
        .map_err(|reason| Error::no_cuda(reason, None))?
        .name;
    let (name, _, plane, planes, fma, form, march, unpadded) = key;
    let kernels: Vec<&str> = program.kernels.iter().map(|k| k.name.as_str()).collect();
    Ok(format!(
        "pacc {} kernel rates\ndevice {device}\nprogram {name}\nkernels {}\n\
         plane {plane:?} slab {planes} fma {fma} form {form:?} march {march:?} unpadded {unpadded}\n\
         source\n{}",
        env!("CARGO_PKG_VERSION"),
        kernels.join(" "),
        program.cuda_source,
    ))
}

/// Rates stored by an earlier process, if there is an entry with one per kernel.
fn load_rates(key: &str, kernels: usize) -> Option<Vec<f64>> {
    let text = disk_cache::load(Kind::Rates, key)?;
    let rates: Vec<f64> = text
        .split(' ')
        .map(|r| r.parse().ok())
        .collect::<Option<_>>()?;
    (rates.len() == kernels && rates.iter().all(|r| r.is_finite() && *r > 0.0)).then_some(rates)
}

/// The settings of `c` that a kernel's rate depends on (the rest of [`Key`]), and defaults for
/// everything else.
fn kernel_settings(c: &CudaSettings) -> Settled {
    Settled {
        cuda: CudaSettings {
            fma: c.fma,
            kernel_form: c.kernel_form,
            march: c.march.clone(),
            unpadded_rows: c.unpadded_rows,
            ..CudaSettings::default()
        },
        ..Settled::default()
    }
}

/// Each candidate compile-time shape with every kernel's points per second, timed as
/// [`measure_kernel_rates`] times them (and cached the same way). A candidate that fails
/// to compile or run is left out.
pub fn measure_march_candidates(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    candidates: &[MarchTuning],
) -> Vec<(MarchTuning, Vec<f64>)> {
    candidates
        .iter()
        .filter_map(|&c| {
            let mut o = kernel_settings(&settled.cuda);
            o.cuda.march = c.into();
            measure_kernel_rates(program, inv, &o).ok().map(|r| (c, r))
        })
        .collect()
}

/// Each kernel's points per second in a run's timeline (1e10 where it computed nothing),
/// leaving out its first launch, which warms up (when it has later ones).
fn rates_from(program: &Program, out: &CudaOutput) -> Vec<f64> {
    (0..program.kernels.len())
        .map(|k| {
            let prefix = format!("{} ", program.kernels[k].name);
            let mut secs: Vec<(f64, f64)> = (out.report.timeline.iter())
                .filter(|e| e.name.starts_with(&prefix))
                .map(|e| (e.start_us, e.dur_us * 1e-6))
                .collect();
            secs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pts: Vec<u64> = (out.plan.kernel_launches(k).into_iter())
                .map(|planes| planes as u64 * plane_points(program, &out.plan.shape, k))
                .collect();
            // Launches and operations pair up in order; drop the first of each.
            let skip = usize::from(secs.len() == pts.len() && pts.len() > 1);
            let secs: f64 = secs[skip.min(secs.len())..].iter().map(|e| e.1).sum();
            let pts: u64 = pts[skip.min(pts.len())..].iter().sum();
            if secs > 0.0 && pts > 0 {
                pts as f64 / secs
            } else {
                1e10
            }
        })
        .collect()
}

/// Page-locked buffers the tuner's slabs are copied into, kept from one measurement to the
/// next: a fresh slab of ordinary memory costs its page faults, its registration for the
/// transfers and its unregistration at every timing run (most of a second per kernel form at
/// 1600² planes on a fresh machine), where the copy into a held buffer costs a few tens of
/// milliseconds. [`release_slabs`] frees them once the tuner is done.
static SLAB_BUFFERS: Mutex<Vec<PinnedHost>> = Mutex::new(Vec::new());

/// Frees the page-locked buffers the tuner keeps its slabs in between measurements.
pub fn release_slabs() {
    SLAB_BUFFERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
}

/// Room for `bytes` bytes of a slab: a held page-locked buffer, else a new one, else (no
/// page-locked memory to be had) ordinary memory.
fn slab_buffer(bytes: usize) -> SlabBuffer {
    let mut held = SLAB_BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = held.iter().position(|b| b.bytes >= bytes) {
        return SlabBuffer::Pinned(held.swap_remove(i));
    }
    drop(held);
    let pinned = cuda::available()
        .map_err(|reason| Error::no_cuda(reason, None))
        .and_then(|d| super::device::context(d.ordinal))
        .and_then(|ctx| PinnedHost::for_tuning(&ctx, bytes));
    match pinned {
        Ok(p) => SlabBuffer::Pinned(p),
        Err(_) => SlabBuffer::Plain(vec![0u64; bytes.div_ceil(8)]),
    }
}

/// One array of a slab.
enum SlabBuffer {
    Pinned(PinnedHost),
    /// u64 storage for alignment.
    Plain(Vec<u64>),
}

impl SlabBuffer {
    fn ptr(&mut self) -> *mut u8 {
        match self {
            SlabBuffer::Pinned(p) => p.ptr,
            SlabBuffer::Plain(v) => v.as_mut_ptr().cast(),
        }
    }
}

/// Copies of the first planes of a call's arrays, with the call's point statements moved
/// into them.
struct Slab {
    /// The arrays' storage; `ptrs` point into it. Page-locked buffers go back to
    /// [`SLAB_BUFFERS`] when the slab is dropped.
    store: Vec<SlabBuffer>,
    /// Each array's first byte and element type.
    ptrs: Vec<(*mut u8, Elem)>,
    points: Vec<Vec<i64>>,
    shape: Vec<usize>,
}

impl Slab {
    /// The first `slab` planes of the arrays of `program`: the call's, and for a fused
    /// run's level buffers those of the arrays they stand for.
    fn copy(program: &Program, inv: &Invocation<'_>, slab: usize) -> Slab {
        let shape = inv.arrays[0].shape().to_vec();
        let plane_elems: usize = shape[1..].iter().product();
        let mut store = Vec::new();
        let mut ptrs = Vec::new();
        for a in (0..program.arrays.len()).map(|a| &inv.arrays[program.host_array(a)]) {
            let bytes = slab * plane_elems * a.elem.size();
            let mut v = slab_buffer(bytes);
            // SAFETY: the first `bytes` bytes of the caller's array (it has >= slab planes)
            // into a buffer of at least `bytes` bytes that only this slab uses.
            unsafe { crate::memcopy::copy(a.ptr, v.ptr(), bytes, crate::memcopy::STAGE_PIECE) };
            ptrs.push((v.ptr(), a.elem));
            store.push(v);
        }
        let points = inv
            .points
            .iter()
            .map(|p| {
                let mut q = p.clone();
                if let Some(z) = q.first_mut() {
                    *z = (slab / 2) as i64;
                }
                q
            })
            .collect();
        let mut shape = shape;
        shape[0] = slab;
        Slab {
            store,
            ptrs,
            points,
            shape,
        }
    }

    /// The slab's arrays, borrowed from it.
    fn arrays(&self) -> Result<Vec<HostArray<'_>>, Error> {
        (self.ptrs.iter())
            // SAFETY: each pointer is the start of a buffer of the slab's shape that the slab
            // owns (and nothing else touches) for as long as it is borrowed.
            .map(|&(p, e)| unsafe { HostArray::from_raw_parts(p, e, &self.shape, true) })
            .collect()
    }

    fn point_planes(&self) -> Vec<usize> {
        self.points.iter().map(|p| p[0] as usize).collect()
    }

    /// A call of `steps` steps over the slab, with `inv`'s scalars and slices and no CPU
    /// kernels (the run is on the device).
    fn invocation<'s>(
        &'s self,
        program: &Program,
        inv: &Invocation<'s>,
        steps: usize,
    ) -> Result<Invocation<'s>, Error> {
        Ok(Invocation {
            arrays: self.arrays()?,
            scalars: inv.scalars.clone(),
            slices: inv.slices.clone(),
            points: self.points.clone(),
            t0: inv.t0,
            steps,
            reduction_init: inv.reduction_init.clone(),
            reset_values: inv.reset_values.clone(),
            cpu: inert_kernels(program),
        })
    }
}

/// Closures that do nothing, one per kernel and point statement of `program`: a measurement
/// runs on the device, whose code is `program`'s (the caller's invocation vouches for it).
fn inert_kernels<'s>(program: &Program) -> CpuKernels<'s> {
    let kernels = (program.kernels.iter())
        .map(|_| {
            Box::new(|_: &KernelFrame<'_>, _: usize, _: &mut [f64]| {}) as Box<CpuKernelFn<'_>>
        })
        .collect();
    let points = (program.points.iter())
        .map(|_| Box::new(|_: &KernelFrame<'_>| {}) as Box<CpuPointFn<'_>>)
        .collect();
    // SAFETY: the closures touch nothing; `program` is the one the caller's invocation was
    // made for (its own `CpuKernels::new` contract covers the CUDA code and declarations).
    unsafe { CpuKernels::new(kernels, points) }
}

impl Drop for Slab {
    fn drop(&mut self) {
        let mut held = SLAB_BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
        held.extend(self.store.drain(..).filter_map(|b| match b {
            SlabBuffer::Pinned(p) => Some(p),
            SlabBuffer::Plain(_) => None,
        }));
    }
}

/// Measured inputs for a call: link (cached), kernel rates (cached), the device memory
/// available to the plan now, the call's point planes.
pub fn measure_inputs(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
) -> Result<TuneInputs, Error> {
    let planes = slab_planes(program, inv.arrays[0].shape()[0]);
    measure_inputs_at(program, inv, settled, planes)
}

/// [`measure_inputs`] with the kernels timed on a slab of `planes` planes
/// ([`measure_kernel_rates_at`]).
pub fn measure_inputs_at(
    program: &Program,
    inv: &Invocation<'_>,
    settled: &Settled,
    planes: usize,
) -> Result<TuneInputs, Error> {
    // A process's first measurement compiles the program while the link is timed: the one
    // keeps the host's cores busy, the other its copy engines. Later ones find both done.
    if LINK.get().is_none() {
        let _ = super::compile::ahead(&[(program, &settled.cuda)]);
    }
    let link = link_rates()?;
    let rates = measure_kernel_rates_at(program, inv, settled, planes)?;
    let budget = cuda::device_memory_budget()?;
    let mut t = TuneInputs::new(link, rates, budget);
    // Staging buffers are pinned beside the caller's arrays: a staged-copy candidate must fit
    // what the host has left (one at 96 GB allocated past it and was killed).
    t.host_memory = crate::pages::pinned_budget();
    t.point_planes = inv
        .points
        .iter()
        .map(|p| p.first().copied().unwrap_or(0).max(0) as usize)
        .collect();
    cuda::settle();
    t.unlocked_bytes = (inv.arrays.iter())
        .filter(|a| !cuda::driver::range_page_locked(a.ptr, a.bytes()))
        .map(|a| a.bytes() as u64)
        .sum();
    Ok(t)
}

/// The tuner's probe of the CUDA device (`crate::exec::backend::Backend::probe`).
pub struct CudaProbe;

impl Probe for CudaProbe {
    fn inputs_at(
        &self,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        planes: usize,
    ) -> Result<TuneInputs, Error> {
        measure_inputs_at(program, inv, settled, planes)
    }

    fn compile_ahead(&self, forms: &[(&Program, &Settled)]) {
        // What a module depends on (the shape, FMA) is what the timing runs compile with.
        let pairs: Vec<(&Program, &CudaSettings)> =
            forms.iter().map(|(p, s)| (*p, &s.cuda)).collect();
        let _ = super::compile::ahead(&pairs);
        // A process's first tuning also times the link meanwhile, before any timing run: the
        // compiles keep the host's cores busy, the link its copy engines.
        let _ = link_rates();
    }

    fn release(&self) {
        super::compile::wait_ahead();
        release_slabs();
    }

    fn march_candidates(
        &self,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        candidates: &[MarchTuning],
    ) -> Vec<(MarchTuning, Vec<f64>)> {
        let timed = measure_march_candidates(program, inv, settled, candidates);
        super::compile::wait_ahead();
        timed
    }

    fn codec_rates(
        &self,
        codec: crate::codec::CodecKind,
        elem: crate::program::Elem,
        rate: f64,
    ) -> Result<crate::tune::compression::CodecSpeed, Error> {
        super::codec_throughput(codec, elem, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_link_rates_read_back_and_damaged_ones_are_misses() {
        let l = parse_link("53400000000.0 54100000000.5 75000000000.0 268435456").unwrap();
        assert_eq!(
            (l.htod, l.dtoh, l.both, l.bytes),
            (53.4e9, 54.1000000005e9, 75e9, 1 << 28)
        );
        for bad in [
            "",
            "1 2 3",
            "1 2 3 4 5",
            "0 2 3 4",
            "1 NaN 3 4",
            "1 2 -3 4",
            "1 2 3 x",
        ] {
            assert!(parse_link(bad).is_none(), "{bad:?}");
        }
    }
}
