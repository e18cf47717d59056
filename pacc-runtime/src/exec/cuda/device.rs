//! Devices, contexts and the per-process cache of NVRTC-compiled modules.

use super::cubin;
use super::driver::{self, cuda_err, Function, Unavailable};
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
static AVAILABLE: Mutex<BTreeMap<usize, Result<DeviceInfo, Unavailable>>> =
    Mutex::new(BTreeMap::new());

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
pub fn available() -> Result<DeviceInfo, Unavailable> {
    // Per preferred device: a rank that asks before it states its preference (`prefer_device`)
    // must not keep device 0 for the rest of the process.
    let preferred = PREFERRED.load(std::sync::atomic::Ordering::Relaxed);
    let mut m = AVAILABLE.lock().unwrap_or_else(|e| e.into_inner());
    m.entry(preferred)
        .or_insert_with(|| probe(preferred))
        .clone()
}

fn probe(preferred: usize) -> Result<DeviceInfo, Unavailable> {
    driver::libraries_present()?;
    let r = std::panic::catch_unwind(|| -> Result<DeviceInfo, Unavailable> {
        driver::init()?;
        let count = CudaContext::device_count()
            .map_err(|e| Unavailable::Driver(format!("cuDeviceGetCount failed: {e}")))?;
        if count < 1 {
            return Err(Unavailable::NoDevice);
        }
        let ordinal = preferred % count as usize;
        let said = |e: &dyn std::fmt::Display| Unavailable::Driver(e.to_string());
        let ctx = context(ordinal).map_err(|e| said(&e))?;
        Ok(DeviceInfo {
            ordinal,
            name: ctx.name().map_err(|e| said(&e))?,
            compute_capability: ctx.compute_capability().map_err(|e| said(&e))?,
            total_mem: ctx.total_mem().map_err(|e| said(&e))?,
            count: count as usize,
        })
    });
    match r {
        Ok(r) => r,
        Err(_) => Err(Unavailable::Driver(
            "the CUDA driver panicked while probing (missing symbol?)".into(),
        )),
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

/// The process's loaded modules, by device, program name, source hash and FMA setting.
type ModuleKey = (usize, String, u64, bool);

fn loaded() -> std::sync::MutexGuard<'static, HashMap<ModuleKey, Arc<Module>>> {
    static MODS: OnceLock<Mutex<HashMap<ModuleKey, Arc<Module>>>> = OnceLock::new();
    MODS.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Compiles `source` with NVRTC for the context's device (once per process, device, program
/// name, source hash and FMA setting; the machine code also once per machine, `disk_cache`)
/// and loads it. `program` names it in errors. The cache is not held while compiling, so
/// [`compile_ahead`]'s threads compile side by side.
pub(crate) fn module(
    ctx: &Arc<CudaContext>,
    program: &str,
    source: &str,
    fma: bool,
) -> Result<Arc<Module>, Error> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    let key_of = (ctx.ordinal(), program.to_string(), h.finish(), fma);
    if let Some(x) = loaded().get(&key_of) {
        return Ok(x.clone());
    }
    let md = Arc::new(Module {
        module: build(ctx, program, source, fma)?,
        funcs: Mutex::new(HashMap::new()),
    });
    Ok(loaded().entry(key_of).or_insert(md).clone())
}

/// Runs `each` on every item on up to one thread per core: the tuner's candidates, each a
/// whole NVRTC compile, cost the longest one instead of their sum.
pub(crate) fn side_by_side<T: Sync>(items: &[T], each: impl Fn(&T) + Sync) {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.min(items.len()) {
            s.spawn(|| {
                while let Some(item) =
                    items.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    each(item);
                }
            });
        }
    });
}

/// The module of `source` ([`cubin::code`]: compiled once per key and process, cached on
/// disk).
fn build(
    ctx: &Arc<CudaContext>,
    program: &str,
    source: &str,
    fma: bool,
) -> Result<Arc<CudaModule>, Error> {
    let cc = ctx
        .compute_capability()
        .map_err(cuda_err("querying the compute capability"))?;
    let job = cubin::Job::new(cc, source, fma);
    let load = |cubin: Vec<u8>| ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin));
    if let Some(m) = cubin::code(&job, program, source).and_then(|c| load(c).ok()) {
        return Ok(m);
    }
    // NVRTC refused the source (compiled again here for its log), or the driver refused the
    // machine code (a damaged cache entry whose checksum still matched, a driver older than
    // the compiler): compiled again and the entry overwritten.
    let fresh = || {
        let cubin = cubin::nvrtc(program, source, &job.options)?;
        let module = load(cubin.clone()).map_err(cuda_err(format!(
            "loading the compiled module of `{program}`"
        )))?;
        Ok::<_, Error>((module, cubin))
    };
    disk_cache::load_or_build(Kind::Cubin, &job.key, |_| None, fresh)
}

/// Whether this process has asked for the preferred device already (its context exists, or
/// the driver said why not).
pub(super) fn probed() -> bool {
    let preferred = PREFERRED.load(std::sync::atomic::Ordering::Relaxed);
    (AVAILABLE.lock().unwrap_or_else(|e| e.into_inner())).contains_key(&preferred)
}

/// The compute capability of the device [`available`] will pick, asked of the driver without
/// creating a context; `None` where the driver cannot say.
pub(super) fn capability_without_context() -> Option<(i32, i32)> {
    driver::libraries_present().ok()?;
    std::panic::catch_unwind(|| {
        driver::init().ok()?;
        let count = CudaContext::device_count().ok().filter(|&c| c > 0)? as usize;
        let preferred = PREFERRED.load(std::sync::atomic::Ordering::Relaxed);
        driver::compute_capability((preferred % count) as i32)
    })
    .ok()
    .flatten()
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

#[cfg(test)]
mod tests {
    #[test]
    fn side_by_side_runs_every_item_once_on_up_to_a_thread_per_core() {
        let items: Vec<usize> = (0..100).collect();
        let seen = std::sync::Mutex::new(Vec::new());
        super::side_by_side(&items, |&i| seen.lock().unwrap().push(i));
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, items);
        super::side_by_side(&Vec::<usize>::new(), |_| panic!("no items, no calls"));
    }
}
