//! The codec kernels' throughput on one resident array, and a check of their bits against the
//! CPU codec: the compression benchmark's measurement.

use super::device;
use super::device::available;
use super::driver;
use super::memory::DeviceBuf;
use super::stream::{Events, Streams, SyncOnDrop};
use crate::codec::{CodecError, CodecKind, Rate, Value};
use crate::error::Error;
use std::ffi::c_void;

/// Threads per block of the codec kernels in this measurement (as the executor launches them).
const THREADS: u32 = 128;

/// What the codec kernels achieved on one array.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CodecRates {
    /// The codec's name (`zfp`, `f16`).
    pub codec: String,
    pub shape: Vec<usize>,
    pub rate: f64,
    pub elem: String,
    /// Uncompressed bytes per second encoded, best of the repetitions.
    pub encode_bytes_per_s: f64,
    /// Uncompressed bytes per second decoded, best of the repetitions.
    pub decode_bytes_per_s: f64,
    /// Uncompressed bytes / compressed bytes.
    pub ratio: f64,
    /// Whether the GPU stream equals the CPU codec's, byte for byte.
    pub matches_cpu: bool,
    /// Whether the GPU's decoded values equal the CPU coder's decode of the same stream, bit for
    /// bit.
    pub decode_matches_cpu: bool,
    /// Relative L2 error of decode(encode(values)).
    pub rel_l2_error: f64,
}

/// `kind`'s encode and decode rates at `rate` for `elem` arrays on the whole GPU (uncompressed
/// bytes per second), timed once per process on a smooth 64 x 512 x 512 array: what the tuner's
/// compression decision needs.
pub fn codec_throughput(
    kind: CodecKind,
    elem: crate::program::Elem,
    rate: f64,
) -> Result<crate::tune::compression::CodecSpeed, Error> {
    use crate::program::Elem;
    use crate::tune::compression::CodecSpeed;
    use std::sync::Mutex;
    type Key = (CodecKind, Elem, u64);
    static CACHE: Mutex<Vec<(Key, CodecSpeed)>> = Mutex::new(Vec::new());
    let key = (kind, elem, rate.to_bits());
    let cached = |c: &Vec<(Key, CodecSpeed)>| c.iter().find(|(k, _)| *k == key).map(|e| e.1);
    if let Some(r) = cached(&CACHE.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(r);
    }
    let shape = [64usize, 512, 512];
    let smooth = |i: usize| ((i % 512) as f64 * 0.01).sin() + ((i / 512) as f64 * 0.003).cos();
    let n: usize = shape.iter().product();
    let best = match elem {
        Elem::F32 => {
            let v: Vec<f32> = (0..n).map(|i| smooth(i) as f32).collect();
            code_on_gpu(kind, &v, &shape, rate, 2)?.best
        }
        Elem::F64 => {
            let v: Vec<f64> = (0..n).map(smooth).collect();
            code_on_gpu(kind, &v, &shape, rate, 2)?.best
        }
    };
    let bytes = (n * elem.size()) as f64;
    let r = CodecSpeed {
        encode: bytes / best[0],
        decode: bytes / best[1],
    };
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, r));
    Ok(r)
}

/// What the GPU coded: the best encode and decode seconds, the stream and the decoded values.
struct Coded<T> {
    best: [f64; 2],
    stream: Vec<u8>,
    back: Vec<T>,
}

/// Encodes and decodes `values` (an array of `shape`, axis 0 outermost) with `kind`'s CUDA
/// kernels `reps` times each, timing the kernels with events, then compares the stream with the
/// CPU coder's.
pub fn measure_codec<T: Value>(
    kind: CodecKind,
    values: &[T],
    shape: &[usize],
    rate: f64,
    reps: usize,
) -> Result<CodecRates, Error> {
    let bad = |e: CodecError| Error::Option(format!("the codec measurement ({kind}): {e}"));
    let codec = kind.get();
    let r = Rate::new(rate).map_err(bad)?;
    let nbytes = codec.compressed_bytes(shape, r).map_err(bad)?;
    let mut cpu = vec![0u8; nbytes];
    let coded = code_on_gpu(kind, values, shape, rate, reps)?;
    codec
        .encode(T::values(values), shape, r, &mut cpu)
        .map_err(bad)?;
    let (best, gpu, back) = (coded.best, coded.stream, coded.back);
    let (elem, vbytes) = (T::ELEM, std::mem::size_of_val(values));
    let mut want: Vec<T> = values.to_vec();
    (codec.decode(&cpu, shape, r, T::values_mut(&mut want))).map_err(bad)?;
    let same = |a: &T, b: &T| {
        let (a, b): (f64, f64) = ((*a).into(), (*b).into());
        a.to_bits() == b.to_bits()
    };
    let decode_matches_cpu = back.iter().zip(&want).all(|(a, b)| same(a, b));
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (a, b) in values.iter().zip(&back) {
        let (a, b): (f64, f64) = ((*a).into(), (*b).into());
        num += (a - b) * (a - b);
        den += a * a;
    }
    Ok(CodecRates {
        codec: kind.to_string(),
        shape: shape.to_vec(),
        rate,
        elem: format!("{elem:?}"),
        encode_bytes_per_s: vbytes as f64 / best[0],
        decode_bytes_per_s: vbytes as f64 / best[1],
        ratio: vbytes as f64 / nbytes as f64,
        matches_cpu: gpu == cpu,
        decode_matches_cpu,
        rel_l2_error: (num / den.max(f64::MIN_POSITIVE)).sqrt(),
    })
}

/// Encodes and decodes `values` on the GPU `reps` times each (plus a warm-up), at the full grid
/// of one thread per unit.
fn code_on_gpu<T: Value>(
    kind: CodecKind,
    values: &[T],
    shape: &[usize],
    rate: f64,
    reps: usize,
) -> Result<Coded<T>, Error> {
    let info = available().map_err(|reason| Error::no_cuda(reason, None))?;
    let ctx = device::context(info.ordinal)?;
    let bad = |e: CodecError| Error::Option(format!("the codec measurement ({kind}): {e}"));
    let (codec, elem) = (kind.get(), T::ELEM);
    let gpu = codec.cuda().ok_or_else(|| {
        Error::Option(format!("the codec measurement: {kind} has no CUDA kernels"))
    })?;
    let r = Rate::new(rate).map_err(bad)?;
    codec.check_rate(elem, shape.len(), r).map_err(bad)?;
    let launch = gpu.launch(shape, r).map_err(bad)?;
    let nbytes = codec.compressed_bytes(shape, r).map_err(bad)?;
    if !(2..=3).contains(&shape.len()) {
        return Err(Error::Option(format!(
            "the GPU codec takes 2D or 3D arrays, not {}D",
            shape.len()
        )));
    }
    let md = device::module(&ctx, "pacc_codec", gpu.source(), false)?;
    let enc = md.function(&gpu.kernel(true, elem, shape.len()))?;
    let dec = md.function(&gpu.kernel(false, elem, shape.len()))?;
    let vbytes = std::mem::size_of_val(values);
    let src = DeviceBuf::new(&ctx, vbytes, "codec input")?;
    let out = DeviceBuf::new(&ctx, vbytes, "codec output")?;
    let bytes = DeviceBuf::new(&ctx, nbytes, "compressed stream")?;
    let flag = DeviceBuf::new(&ctx, 4, "codec flag")?;
    let (st, ev) = (Streams::new(1)?, Events::new(2)?);
    let _sync = SyncOnDrop(ctx.clone());
    let slabs = shape[0].div_ceil(codec.slab_planes());
    let threads = slabs * launch.threads_per_slab;
    let grid = (threads.div_ceil(THREADS as usize) as u32, 1, 1);
    let mut best = [f64::INFINITY; 2];
    let mut gpu = vec![0u8; nbytes];
    let mut back: Vec<T> = values.to_vec();
    // SAFETY: the kernels' ABI (`codec::CudaLaunch`) over buffers of the sizes computed above, on one
    // stream, synchronized before the events are read and the buffers drop.
    unsafe {
        let input = values.as_ptr() as *const u8;
        driver::copy_htod(src.ptr, input, vbytes, "copying the codec input")?;
        driver::memset(flag.ptr, 0, 4, "clearing the flag")?;
        for (k, best) in best.iter_mut().enumerate() {
            for rep in 0..=reps.max(1) {
                let (from, to) = if k == 0 {
                    (src.ptr, bytes.ptr)
                } else {
                    (bytes.ptr, out.ptr)
                };
                let mut slots: Vec<u64> = vec![from];
                slots.extend(shape.iter().map(|&n| n as u64));
                slots.push(to);
                slots.push(u64::from(launch.param));
                if k == 0 {
                    slots.push(flag.ptr);
                }
                let mut params: Vec<*mut c_void> = slots
                    .iter_mut()
                    .map(|s| s as *mut u64 as *mut c_void)
                    .collect();
                let f = if k == 0 { enc } else { dec };
                let what = "launching a codec kernel";
                driver::event_record(ev.0[0], st.0[0])?;
                driver::launch(f, grid, (THREADS, 1, 1), st.0[0], &mut params, what)?;
                driver::event_record(ev.0[1], st.0[0])?;
                driver::stream_sync(st.0[0], "running the codec")?;
                let ms = driver::event_elapsed_ms(ev.0[0], ev.0[1])?;
                if rep > 0 {
                    *best = best.min(ms as f64 / 1e3);
                }
            }
        }
        driver::copy_dtoh(
            gpu.as_mut_ptr(),
            bytes.ptr,
            nbytes,
            "copying the stream back",
        )?;
        let decoded = back.as_mut_ptr() as *mut u8;
        driver::copy_dtoh(decoded, out.ptr, vbytes, "copying the decoded values back")?;
    }
    Ok(Coded {
        best,
        stream: gpu,
        back,
    })
}
