//! Devices, contexts and the per-process cache of NVRTC-compiled modules.

use super::driver::{self, cuda_err, Function};
use crate::disk_cache::{self, Kind};
use crate::error::Error;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// What `available()` found.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub total_mem: usize,
    pub count: usize,
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (sm_{}{}, {:.1} GiB)",
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_mem as f64 / (1u64 << 30) as f64
        )
    }
}

/// The probe's answer per preferred device.
static AVAILABLE: Mutex<BTreeMap<usize, Result<DeviceInfo, String>>> = Mutex::new(BTreeMap::new());

/// The device a process asks for, modulo the device count (a distributed run's local rank).
static PREFERRED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Makes the process use device `index % count` (call before the first CUDA run; a
/// distributed run passes the rank's index among the ranks of its node).
pub fn prefer_device(index: usize) {
    PREFERRED.store(index, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the CUDA backend can run here: the driver and NVRTC libraries load and a device is
/// present. Never panics (cudarc panics on a missing library, so the libraries are probed first).
/// The answer is computed once per process and preferred device.
pub fn available() -> Result<DeviceInfo, String> {
    // Per preferred device: a rank that asks before it states its preference (`prefer_device`)
    // must not keep device 0 for the rest of the process.
    let preferred = PREFERRED.load(std::sync::atomic::Ordering::Relaxed);
    let mut m = AVAILABLE.lock().unwrap_or_else(|e| e.into_inner());
    m.entry(preferred)
        .or_insert_with(|| probe(preferred))
        .clone()
}

fn probe(preferred: usize) -> Result<DeviceInfo, String> {
    driver::libraries_present()?;
    let r = std::panic::catch_unwind(|| -> Result<DeviceInfo, String> {
        driver::init()?;
        let count =
            CudaContext::device_count().map_err(|e| format!("cuDeviceGetCount failed: {e}"))?;
        if count < 1 {
            return Err("no CUDA device found".into());
        }
        let ordinal = preferred % count as usize;
        let ctx = context(ordinal).map_err(|e| e.to_string())?;
        Ok(DeviceInfo {
            ordinal,
            name: ctx.name().map_err(|e| e.to_string())?,
            compute_capability: ctx.compute_capability().map_err(|e| e.to_string())?,
            total_mem: ctx.total_mem().map_err(|e| e.to_string())?,
            count: count as usize,
        })
    });
    match r {
        Ok(r) => r,
        Err(_) => Err("the CUDA driver panicked while probing (missing symbol?)".into()),
    }
}

/// The primary context of device `ordinal`, created once per process, with cudarc's event
/// tracking disabled before anything is allocated in it (we order all work with our own events).
pub(crate) fn context(ordinal: usize) -> Result<Arc<CudaContext>, Error> {
    static CTX: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let mut m = CTX
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(c) = m.get(&ordinal) {
        c.bind_to_thread()
            .map_err(cuda_err("binding the context"))?;
        return Ok(c.clone());
    }
    let c = CudaContext::new(ordinal).map_err(cuda_err("creating the CUDA context"))?;
    // SAFETY: nothing has been allocated in this context by us yet; all pacc work is ordered by
    // explicit events and stream order.
    unsafe { c.disable_event_tracking() };
    m.insert(ordinal, c.clone());
    Ok(c)
}

/// A compiled module with its functions looked up by name.
pub(crate) struct Module {
    pub module: Arc<CudaModule>,
    funcs: Mutex<HashMap<String, CudaFunction>>,
}

impl Module {
    /// The function `name`, or `None` when the module does not define it (a form its source
    /// compiles only under some macros).
    pub fn try_function(&self, name: &str) -> Option<Function> {
        self.function(name).ok()
    }

    pub fn function(&self, name: &str) -> Result<Function, Error> {
        let mut f = self.funcs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = f.get(name) {
            return Ok(x.cu_function());
        }
        let x = self.module.load_function(name).map_err(|e| {
            Error::Internal(format!(
                "kernel `{name}` is not in the generated CUDA source ({e})"
            ))
        })?;
        let raw = x.cu_function();
        f.insert(name.to_string(), x);
        Ok(raw)
    }
}

fn arch(cc: (i32, i32)) -> &'static str {
    static ARCH: OnceLock<Mutex<HashMap<(i32, i32), &'static str>>> = OnceLock::new();
    let mut m = ARCH
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    m.entry(cc)
        .or_insert_with(|| Box::leak(format!("compute_{}{}", cc.0, cc.1).into_boxed_str()))
}

/// Compiles `source` with NVRTC for the context's device (once per process, device, program
/// name, source hash and FMA setting; the PTX also once per machine, `disk_cache`) and loads
/// it. `kernel` names the program in errors.
pub(crate) fn module(
    ctx: &Arc<CudaContext>,
    program: &str,
    source: &str,
    fma: bool,
) -> Result<Arc<Module>, Error> {
    type Key = (usize, String, u64, bool);
    static MODS: OnceLock<Mutex<HashMap<Key, Arc<Module>>>> = OnceLock::new();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    let key_of = (ctx.ordinal(), program.to_string(), h.finish(), fma);
    let mut m = MODS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(x) = m.get(&key_of) {
        return Ok(x.clone());
    }
    let cc = ctx
        .compute_capability()
        .map_err(cuda_err("querying the compute capability"))?;
    let opts = cudarc::nvrtc::CompileOptions {
        fmad: Some(fma),
        arch: Some(arch(cc)),
        name: Some(format!("{program}.cu")),
        ..Default::default()
    };
    let key = format!(
        "pacc {} {} fmad={fma} nvrtc {:?}",
        env!("CARGO_PKG_VERSION"),
        arch(cc),
        nvrtc_version()
    );
    let key = format!("{key}\n{source}");
    // Cached PTX the driver refuses (a damaged file whose checksum still matched, a driver
    // older than the one that compiled it) is a miss: compiled again, the entry overwritten.
    let cached = |ptx: String| ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).ok();
    let fresh = || {
        let ptx = compile(program, source, opts)?;
        let text = ptx.to_src();
        let module = ctx.load_module(ptx).map_err(cuda_err(format!(
            "loading the compiled module of `{program}`"
        )))?;
        Ok::<_, Error>((module, text))
    };
    let module = disk_cache::load_or_build(Kind::Ptx, &key, cached, fresh)?;
    let md = Arc::new(Module {
        module,
        funcs: Mutex::new(HashMap::new()),
    });
    m.insert(key_of, md.clone());
    Ok(md)
}

/// NVRTC's (major, minor) version.
fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-parameters; NVRTC is loaded (the caller compiles with it next).
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// NVRTC's PTX of `source`, or its log as an error naming `program`.
fn compile(
    program: &str,
    source: &str,
    opts: cudarc::nvrtc::CompileOptions,
) -> Result<cudarc::nvrtc::Ptx, Error> {
    cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| Error::Nvrtc {
        kernel: program.to_string(),
        log: match e {
            cudarc::nvrtc::CompileError::CompileError {
                log,
                options,
                nvrtc,
            } => format!(
                "{}\n(nvrtc: {nvrtc:?}; options: {})",
                log.to_string_lossy().trim_end(),
                options.join(" ")
            ),
            other => format!("{other:?}"),
        },
    })
}

/// The executor's own kernels: combine a buffer of per-block reduction partials into one value
/// in a fixed order (one block of 256 threads), so repeated runs give identical reductions; and
/// copy planes between buffer sets. The copy is a kernel rather than `cuMemcpyDtoDAsync`: on
/// the H100 a device-to-device copy whose dependencies were met while another stream's
/// host-to-device copy ran waited for that copy to finish (95 ms at a wavefront block boundary,
/// 1800^3), as the copy engines take work in the order it became ready.
pub(crate) const INTERNAL_SOURCE: &str = r#"
extern "C" __global__ void pacc_copy(const unsigned char* __restrict__ src,
                                     unsigned char* __restrict__ dst, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long a = (unsigned long long)src | (unsigned long long)dst | n;
    if ((a & 15) == 0) {
        const uint4* s = (const uint4*)src; uint4* d = (uint4*)dst;
        for (unsigned long long k = i; k < n / 16; k += stride) { d[k] = s[k]; }
    } else if ((a & 3) == 0) {
        const unsigned int* s = (const unsigned int*)src; unsigned int* d = (unsigned int*)dst;
        for (unsigned long long k = i; k < n / 4; k += stride) { d[k] = s[k]; }
    } else {
        for (unsigned long long k = i; k < n; k += stride) { dst[k] = src[k]; }
    }
}
#define PACC_ADD(a, b) ((a) + (b))
#define PACC_MIN(a, b) fmin((a), (b))
#define PACC_MAX(a, b) fmax((a), (b))
#define PACC_COMBINE(NAME, T, INIT, OP) \
extern "C" __global__ void NAME(const double* in, long long n, double* out) { \
    __shared__ T s[256]; \
    T acc = INIT; \
    for (long long i = threadIdx.x; i < n; i += blockDim.x) { T v = (T)in[i]; acc = OP(acc, v); } \
    s[threadIdx.x] = acc; \
    __syncthreads(); \
    for (int w = blockDim.x / 2; w > 0; w >>= 1) { \
        if (threadIdx.x < w) { s[threadIdx.x] = OP(s[threadIdx.x], s[threadIdx.x + w]); } \
        __syncthreads(); \
    } \
    if (threadIdx.x == 0) { out[0] = (double)s[0]; } \
}
PACC_COMBINE(pacc_combine_sum_f32, float, 0.0f, PACC_ADD)
PACC_COMBINE(pacc_combine_sum_f64, double, 0.0, PACC_ADD)
PACC_COMBINE(pacc_combine_min_f32, float, __int_as_float(0x7f800000), PACC_MIN)
PACC_COMBINE(pacc_combine_min_f64, double, __longlong_as_double(0x7ff0000000000000LL), PACC_MIN)
PACC_COMBINE(pacc_combine_max_f32, float, __int_as_float(0xff800000), PACC_MAX)
PACC_COMBINE(pacc_combine_max_f64, double, __longlong_as_double(0xfff0000000000000LL), PACC_MAX)
"#;
