//! Compression on the device: the codec's kernels (NVRTC, compiled once per process like the
//! program's), each buffer set's compressed staging areas, the host's compressed copies
//! (page-locked, so compressed transfers run asynchronously at full speed) and the flags the
//! encode kernels raise on NaN or infinite values.
//!
//! Addressing (see `plan` module docs): a set's staging area for an array holds slab `s` of the
//! window at byte `s * slab_bytes` (slab 0 = the buffer's base, a slab boundary); the host copy
//! holds the whole array's stream, slab `j` at `j * slab_bytes`.

use super::device;
use super::driver::{self, DevicePtr, Function, Stream};
use super::launch::Geometry;
use super::memory::{DeviceBuf, PinnedHost};
use crate::cosched::{self, CoSchedule, CodecGrid, Footprint};
use crate::error::CompressError;
use crate::error::Error;
use crate::fault::{self, Site};
use crate::plan::Plan;
use crate::program::Program;
use cudarc::driver::CudaContext;
use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

/// Threads per block of the codec kernels (each thread codes one unit at a time: a zfp block,
/// an f16 value).
const THREADS: u32 = 128;

/// One compressed array's kernels and their launch.
struct Kernels {
    encode: Function,
    decode: Function,
    /// Threads per slab and the kernels' rate parameter ([`crate::codec::CudaLaunch`]).
    threads_per_slab: usize,
    param: u32,
    /// What a raised error flag means ([`crate::codec::CudaCoder::refusal`]).
    refusal: &'static str,
    /// The grids of the encode and decode kernels beside the stencil ([`cosched`]).
    encode_grid: CodecGrid,
    decode_grid: CodecGrid,
}

pub(super) struct DeviceCodec {
    kernels: Vec<Option<Kernels>>,
    /// `[set][array]`: compressed staging areas (0 bytes for uncompressed arrays).
    staging: Vec<Vec<DeviceBuf>>,
    /// `[array]`: the host's compressed copies.
    host: Vec<PinnedHost>,
    /// One `unsigned int` per array, set by the encode kernels on values they cannot code (NaN
    /// or infinity; such values are not written; the run then fails with a typed error).
    flags: DeviceBuf,
}

impl DeviceCodec {
    /// Compiles (cached) and allocates everything a compressing plan needs, and sizes the
    /// codec's grids beside the stencil kernels `geoms` under `strategy`; `None` when the plan
    /// compresses nothing. Runs before any user data is touched.
    pub fn new(
        ctx: &Arc<CudaContext>,
        program: &Program,
        plan: &Plan,
        geoms: &[Geometry],
        strategy: CoSchedule,
    ) -> Result<Option<DeviceCodec>, Error> {
        if !plan.compresses() {
            return Ok(None);
        }
        let sizer = GridSizer::new(ctx, geoms, strategy);
        fault::hit(Site::Compile, || {
            "NVRTC compile of the codec kernels".into()
        })?;
        let ndim = plan.shape.len();
        let mut kernels = Vec::with_capacity(program.arrays.len());
        for (a, decl) in program.arrays.iter().enumerate() {
            let Some(c) = plan.compressed(a) else {
                kernels.push(None);
                continue;
            };
            let bad = |reason: String| {
                Error::Compress(CompressError::Codec {
                    array: decl.name.clone(),
                    message: reason,
                })
            };
            let codec = c.codec.get();
            let gpu = codec.cuda().ok_or_else(|| {
                Error::Compress(CompressError::NoCudaCoder {
                    array: decl.name.clone(),
                    codec: codec.name(),
                })
            })?;
            let launch = gpu
                .launch(&plan.shape, c.rate)
                .map_err(|e| bad(e.to_string()))?;
            // Cached per source: arrays sharing a codec share one module.
            let module = device::module(ctx, "pacc_codec", gpu.source(), false)?;
            let encode = module.function(&gpu.kernel(true, decl.elem, ndim))?;
            let decode = module.function(&gpu.kernel(false, decl.elem, ndim))?;
            kernels.push(Some(Kernels {
                encode,
                decode,
                threads_per_slab: launch.threads_per_slab,
                param: launch.param,
                refusal: gpu.refusal(),
                encode_grid: sizer.grid(encode),
                decode_grid: sizer.grid(decode),
            }));
        }
        let mut staging = Vec::with_capacity(plan.buffer_sets);
        for s in 0..plan.buffer_sets {
            let mut v = Vec::with_capacity(program.arrays.len());
            for (a, decl) in program.arrays.iter().enumerate() {
                let what = format!("compressed staging of set {s} of `{}`", decl.name);
                v.push(DeviceBuf::new(
                    ctx,
                    plan.staging_compressed_bytes(a) as usize,
                    &what,
                )?);
            }
            staging.push(v);
        }
        let mut host = Vec::with_capacity(program.arrays.len());
        for (a, decl) in program.arrays.iter().enumerate() {
            let what = format!("the compressed copy of `{}`", decl.name);
            host.push(PinnedHost::new(
                ctx,
                plan.host_compressed_bytes(a) as usize,
                &what,
            )?);
        }
        let flags = DeviceBuf::new(ctx, 4 * program.arrays.len(), "codec error flags")?;
        // SAFETY: `flags` holds 4 bytes per array.
        unsafe { driver::memset(flags.ptr, 0, flags.bytes, "clearing the codec error flags") }?;
        Ok(Some(DeviceCodec {
            kernels,
            staging,
            host,
            flags,
        }))
    }

    /// Enqueues a compressed transfer of `planes` (whole slabs) on `st`: host copy -> set's
    /// staging area (`htod`), or back.
    ///
    /// # Safety
    /// The plan must have passed the race check and `planes` must lie in the window at `base`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn copy(
        &self,
        plan: &Plan,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        htod: bool,
        st: Stream,
    ) -> Result<(), Error> {
        let Some(c) = plan.compressed(array) else {
            return Err(Error::Internal(
                "a compressed transfer of an uncompressed array".into(),
            ));
        };
        let n = c.bytes(planes);
        if n == 0 {
            return Ok(());
        }
        let host = self.host[array].ptr.add(c.offset(planes.start));
        let dev = self.staging[set][array].ptr + c.offset(planes.start - base) as u64;
        if htod {
            driver::copy_htod_async(dev, host, n, st, "cuMemcpyHtoDAsync (compressed)")
        } else {
            driver::copy_dtoh_async(host, dev, n, st, "cuMemcpyDtoHAsync (compressed)")
        }
    }

    /// Launches the encode (buffer -> staging) or decode kernel on `planes` of `array` in `set`,
    /// whose buffer starts at device address `buf` (plane `base`).
    ///
    /// # Safety
    /// As [`DeviceCodec::copy`]; `buf` must be the set's buffer of `array`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch(
        &self,
        plan: &Plan,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        encode: bool,
        buf: DevicePtr,
        st: Stream,
    ) -> Result<(), Error> {
        let (Some(c), Some(k)) = (plan.compressed(array), &self.kernels[array]) else {
            return Err(Error::Internal(
                "a codec operation on an uncompressed array".into(),
            ));
        };
        let total = c.slabs(planes).len() * k.threads_per_slab;
        if total == 0 {
            return Ok(());
        }
        let elem = plan.elem_sizes[array];
        let values = buf + ((planes.start - base) * plan.plane_len * elem) as u64;
        let bytes = self.staging[set][array].ptr + c.offset(planes.start - base) as u64;
        // The kernels' ABI (`codec::CudaLaunch`): encode (values, n0, n1[, n2], bytes, param,
        // err), decode (bytes, n0, n1[, n2], values, param).
        let mut slots: Vec<u64> = vec![if encode { values } else { bytes }];
        slots.push(planes.len() as u64);
        slots.extend(plan.shape[1..].iter().map(|&n| n as u64));
        slots.push(if encode { bytes } else { values });
        slots.push(u64::from(k.param));
        if encode {
            slots.push(self.flags.ptr + 4 * array as u64);
        }
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        let sized = if encode {
            &k.encode_grid
        } else {
            &k.decode_grid
        };
        let grid = (sized.blocks_for(total, THREADS), 1, 1);
        let f = if encode { k.encode } else { k.decode };
        let what = if encode {
            "launching the encode kernel"
        } else {
            "launching the decode kernel"
        };
        driver::launch(f, grid, (THREADS, 1, 1), st, &mut params, what)
    }

    /// The report's line on the codec's grids (the first compressed array's; every array's
    /// kernels share the strategy).
    pub fn note(&self) -> Option<String> {
        let k = self.kernels.iter().flatten().next()?;
        Some(format!(
            "encode: {}; decode: {}",
            k.encode_grid.reason, k.decode_grid.reason
        ))
    }

    /// After the run (streams synchronized): an error naming the first array whose values could
    /// not be compressed (NaN or infinity; for f16 also magnitudes past its range), if any.
    pub fn check(&self, ctx: &Arc<CudaContext>, program: &Program) -> Result<(), Error> {
        let n = program.arrays.len();
        let bounce = PinnedHost::new(ctx, 4 * n, "codec flag bounce buffer")?;
        // SAFETY: both hold 4 * n bytes; the streams are synchronized.
        let flags = unsafe {
            driver::copy_dtoh(
                bounce.ptr,
                self.flags.ptr,
                4 * n,
                "reading the codec error flags",
            )?;
            std::slice::from_raw_parts(bounce.ptr as *const u32, n).to_vec()
        };
        match flags.iter().position(|&f| f != 0) {
            None => Ok(()),
            Some(a) => Err(Error::Compress(CompressError::Codec {
                array: program.arrays[a].name.clone(),
                message: (self.kernels[a].as_ref())
                    .map_or("the codec refused a value", |k| k.refusal)
                    .into(),
            })),
        }
    }
}

/// What the co-scheduling model needs from the device and the stencil kernels.
struct GridSizer {
    strategy: CoSchedule,
    sm: cosched::SmLimits,
    /// The stencil kernel with the largest blocks, and its blocks per SM alone.
    stencil: Footprint,
    stencil_blocks: u32,
}

impl GridSizer {
    fn new(ctx: &Arc<CudaContext>, geoms: &[Geometry], strategy: CoSchedule) -> GridSizer {
        let footprint = |g: &Geometry| {
            let (registers, shared_bytes) = driver::function_resources(g.func);
            Footprint {
                threads: g.bx * g.by,
                registers,
                shared_bytes,
            }
        };
        let widest = (geoms.iter().map(|g| (footprint(g), g.func)))
            .max_by_key(|(f, _)| (f.threads * f.registers, f.shared_bytes));
        let (stencil, stencil_blocks) = widest.map_or((Footprint::default(), 0), |(f, func)| {
            let per_sm = driver::max_active_blocks_per_sm(func, f.threads).unwrap_or(1);
            (f, per_sm as u32)
        });
        GridSizer {
            strategy,
            sm: driver::sm_limits(ctx),
            stencil,
            stencil_blocks,
        }
    }

    /// The grid of codec kernel `f` ([`THREADS`] threads per block).
    fn grid(&self, f: Function) -> CodecGrid {
        let (registers, shared_bytes) = driver::function_resources(f);
        let codec = Footprint {
            threads: THREADS,
            registers,
            shared_bytes,
        };
        let (sm, stencil) = (&self.sm, &self.stencil);
        cosched::codec_grid(self.strategy, sm, stencil, self.stencil_blocks, &codec)
    }
}
