//! Whole-domain runs for measurements: the program's kernels over the entire arrays every step
//! (used by the unified-memory baseline, [`super::run_managed`]), and the device's own copy
//! bandwidth ([`measure_dtod`]), the kernel benchmark's yardstick.

use super::device::available;
use super::device::{context, Module};
use super::driver::{self, Function};
use super::launch::{self, Geometry, KernelArgs};
use super::memory::DeviceBuf;
use super::stream::{Events, Streams, SyncOnDrop};
use crate::error::Error;
use crate::invocation::Invocation;
use crate::options::KernelForm;
use crate::program::{Program, Stage};
use std::sync::Arc;

/// One non-blocking stream and `n` timing events, released when dropped.
pub(super) fn stream_and_events(n: usize) -> Result<(Streams, Events), Error> {
    Ok((Streams::new(1)?, Events::new(n)?))
}

/// What a whole-domain run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ResidentOutput {
    /// Event time of every launch of each kernel, summed over the steps.
    pub kernel_seconds: Vec<f64>,
    /// Launch shape used for each kernel: `[block x, block y, planes per segment]` (the last is
    /// 1 for a per-point kernel).
    pub launch: Vec<[usize; 3]>,
}

/// Device-to-device copy bandwidth: the best of `reps` copies of `bytes` bytes, counting the
/// bytes read and written (2 x `bytes` per copy), as memory-bound kernels count theirs.
pub fn measure_dtod(bytes: usize, reps: usize) -> Result<f64, Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = context(info.ordinal)?;
    let a = DeviceBuf::new(&ctx, bytes, "the copy measurement")?;
    let b = DeviceBuf::new(&ctx, bytes, "the copy measurement")?;
    let (st, ev) = stream_and_events(2)?;
    let _sync = SyncOnDrop(ctx.clone());
    let mut best = f64::INFINITY;
    // SAFETY: copies between two buffers we allocated, of their size, synchronized before the
    // events are read and before the buffers drop.
    unsafe {
        driver::memset_async(a.ptr, 1, bytes, st.0[0], "cuMemsetD8Async")?;
        for rep in 0..=reps.max(1) {
            driver::event_record(ev.0[0], st.0[0])?;
            driver::copy_dtod_async(b.ptr, a.ptr, bytes, st.0[0], "cuMemcpyDtoDAsync")?;
            driver::event_record(ev.0[1], st.0[0])?;
            driver::stream_sync(st.0[0], "synchronizing")?;
            let ms = driver::event_elapsed_ms(ev.0[0], ev.0[1])?;
            if rep > 0 {
                best = best.min(ms as f64 / 1e3);
            }
        }
    }
    Ok(2.0 * bytes as f64 / best)
}

/// The kernels, point statements and buffers a whole-domain run needs besides the arrays.
pub(super) struct Steps<'a> {
    ctx: Arc<cudarc::driver::CudaContext>,
    program: &'a Program,
    inv: &'a Invocation<'a>,
    geoms: Vec<Geometry>,
    pfuncs: Vec<Function>,
    slices: Vec<DeviceBuf>,
    scratch: DeviceBuf,
}

impl<'a> Steps<'a> {
    pub(super) fn new(
        ctx: &Arc<cudarc::driver::CudaContext>,
        md: &Module,
        program: &'a Program,
        inv: &'a Invocation<'a>,
        form: KernelForm,
        tuning: &launch::MarchTuning,
    ) -> Result<Self, Error> {
        let shape = inv.arrays[0].shape().to_vec();
        let sms = driver::sm_count(ctx);
        // Whole-domain buffers keep the host's rows.
        let pitch = *shape.last().unwrap_or(&1);
        let geoms = program
            .kernels
            .iter()
            .map(|k| launch::geometry(md, k, &shape, pitch, form, sms, tuning))
            .collect::<Result<Vec<_>, _>>()?;
        let pfuncs = program
            .points
            .iter()
            .map(|p| md.function(&p.name))
            .collect::<Result<Vec<_>, _>>()?;
        let mut slices = Vec::new();
        for s in &inv.slices {
            let n = s.len * s.elem.size();
            let b = DeviceBuf::new(ctx, n, "a slice")?;
            if n > 0 {
                // SAFETY: n readable bytes at s.ptr; b holds n bytes.
                unsafe { driver::copy_htod(b.ptr, s.ptr, n, "copying a slice") }?;
            }
            slices.push(b);
        }
        let partials = program
            .kernels
            .iter()
            .zip(&geoms)
            .map(|(k, g)| g.blocks(shape[0]) * k.reductions.len())
            .max()
            .unwrap_or(0);
        let scratch = DeviceBuf::new(ctx, partials * 8, "reduction partials")?;
        Ok(Steps {
            ctx: ctx.clone(),
            program,
            inv,
            geoms,
            pfuncs,
            slices,
            scratch,
        })
    }

    /// Every step, each stage in program order on one stream (kernels over the whole domain,
    /// point statements, swaps by renaming), over the arrays at `ptrs`; kernels timed by events.
    pub(super) fn run(&self, ptrs: &[u64]) -> Result<ResidentOutput, Error> {
        let (program, inv) = (self.program, self.inv);
        let shape = inv.arrays[0].shape();
        let ndim = shape.len();
        let n0 = shape[0];
        let n = [
            n0 as i64,
            shape[1] as i64,
            if ndim == 3 { shape[2] as i64 } else { 1 },
        ];
        // Whole-domain buffers keep the host's rows.
        let rp = program.row_pitch.then_some(n[ndim - 1]);
        let (st, ev) = stream_and_events(2 * inv.steps * program.kernels.len())?;
        let st0 = st.0[0];
        let _sync = SyncOnDrop(self.ctx.clone());
        let sptrs: Vec<u64> = self.slices.iter().map(|s| s.ptr).collect();
        let pts = crate::fuse::point_coords(program, &inv.points);
        let mut timed = Vec::new();
        let mut bind: Vec<usize> = (0..program.arrays.len()).collect();
        // SAFETY: launches over whole-domain buffers of the arrays' shape with the ABI of
        // internals.md §3, all on one stream, synchronized before the buffers drop.
        unsafe {
            for step in 0..inv.steps {
                let t = program.time_of(inv.t0, step);
                for stage in &program.step {
                    let arrays: Vec<u64> = bind.iter().map(|&p| ptrs[p]).collect();
                    match *stage {
                        Stage::Kernel(k) => {
                            let kd = &program.kernels[k];
                            let z0 = kd.ranges[0].lo.eval(n0).max(0) as usize;
                            let z1 = (kd.ranges[0].hi.eval(n0).max(0) as usize).min(n0);
                            let (es, ee) = (ev.0[2 * timed.len()], ev.0[2 * timed.len() + 1]);
                            driver::event_record(es, st0)?;
                            if z1 > z0 {
                                let a = KernelArgs {
                                    owned: (0, n0),
                                    base: 0,
                                    n,
                                    rp,
                                    t,
                                    arrays: &arrays,
                                    scalars: &inv.scalars,
                                    slices: &sptrs,
                                    points: &pts,
                                    partials: self.scratch.ptr,
                                    reductions: kd.reductions.len(),
                                };
                                launch::launch(&self.geoms[k], &kd.name, z0, z1, &a, st0, ndim)?;
                            }
                            driver::event_record(ee, st0)?;
                            timed.push((k, es, ee));
                        }
                        Stage::Point(pi) => {
                            let a = KernelArgs {
                                owned: (0, n0),
                                base: 0,
                                n,
                                rp,
                                t,
                                arrays: &arrays,
                                scalars: &inv.scalars,
                                slices: &sptrs,
                                points: &[],
                                partials: 0,
                                reductions: 0,
                            };
                            let name = &program.points[pi].name;
                            let at = &inv.points[pi];
                            launch::launch_point(self.pfuncs[pi], name, at, &a, st0)?;
                        }
                        Stage::Swap(x, y) => bind.swap(x, y),
                        Stage::Reset(_) => {}
                    }
                }
            }
            driver::stream_sync(st0, "running the steps")?;
        }
        let mut out = ResidentOutput {
            kernel_seconds: vec![0.0; program.kernels.len()],
            launch: self
                .geoms
                .iter()
                .map(|g| [g.bx as usize, g.by as usize, g.segment(n0)])
                .collect(),
        };
        for (k, es, ee) in timed {
            // SAFETY: both events were recorded on a stream that has been synchronized.
            let ms = unsafe { driver::event_elapsed_ms(es, ee) }?;
            out.kernel_seconds[k] += ms as f64 / 1e3;
        }
        Ok(out)
    }
}
