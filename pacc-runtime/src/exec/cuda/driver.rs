//! The one module that calls the CUDA driver directly (cudarc's `sys` and `result` levels).
//!
//! Layering, as in cudarc itself: raw driver calls here, each a thin wrapper that turns the
//! driver's status into the crate's [`Error`] (`Error::Cuda { what, message }`, `what` naming
//! the step that failed); the owning types that free what they hold ([`super::memory`],
//! [`super::stream`]) on top; the executor's phases above those. Everything else in
//! `exec/cuda` names driver handles through the aliases below and never touches `sys`.
//!
//! Most wrappers stay `unsafe`: the driver cannot check that pointers and sizes describe live
//! memory, or that an asynchronous operation's buffers outlive it. Each states what the caller
//! must guarantee. Error messages are built only when a call fails.

use crate::error::Error;
use cudarc::driver::{result, sys, CudaContext, DriverError};
use std::ffi::c_void;
use std::fmt::Display;

/// A stream handle (destroyed by [`super::stream::Streams`]).
pub(crate) type Stream = sys::CUstream;
/// An event handle (destroyed by [`super::stream::Events`]).
pub(crate) type Event = sys::CUevent;
/// A loaded kernel (owned by its module, which the per-process module cache keeps alive).
pub(crate) type Function = sys::CUfunction;
/// A device address.
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// The crate's error for a failed driver call made through cudarc's safe layer (contexts,
/// modules): `what` names the step.
pub(crate) fn cuda_err(what: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let what = what.into();
    move |e| Error::Cuda {
        what,
        message: e.to_string(),
    }
}

/// As [`cuda_err`], formatting `what` only on failure.
fn fail(what: impl Display) -> impl FnOnce(DriverError) -> Error {
    move |e| Error::Cuda {
        what: what.to_string(),
        message: e.to_string(),
    }
}

/// Why the CUDA backend cannot run here: each case has its own remedy (install or point to a
/// library, use a machine with a GPU, look at the driver's state).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("the CUDA driver library (libcuda.so) was not found")]
    NoDriver,
    #[error(
        "the NVRTC library (libnvrtc.so) was not found; add the CUDA toolkit's lib64 to \
         LD_LIBRARY_PATH"
    )]
    NoNvrtc,
    #[error("no CUDA device found")]
    NoDevice,
    /// The driver refused (initialisation, a context, a query), in its own words.
    #[error("{0}")]
    Driver(String),
}

impl From<Unavailable> for String {
    fn from(u: Unavailable) -> String {
        u.to_string()
    }
}

/// Whether the driver and NVRTC libraries can be loaded (cudarc panics on a missing library, so
/// this runs before any other call); `Err` says which is missing.
pub(crate) fn libraries_present() -> Result<(), Unavailable> {
    // SAFETY: these only try to dlopen the libraries.
    if !unsafe { sys::is_culib_present() } {
        return Err(Unavailable::NoDriver);
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Unavailable::NoNvrtc);
    }
    Ok(())
}

/// `cuInit`.
pub(crate) fn init() -> Result<(), Unavailable> {
    result::init().map_err(|e| Unavailable::Driver(format!("cuInit failed: {e}")))
}

/// The compute capability (major, minor) of device `ordinal`, asked without a context.
pub(crate) fn compute_capability(ordinal: i32) -> Option<(i32, i32)> {
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    let dev = result::device::get(ordinal).ok()?;
    // SAFETY: `dev` is a device handle the driver just gave.
    unsafe {
        Some((
            result::device::get_attribute(dev, MAJOR).ok()?,
            result::device::get_attribute(dev, MINOR).ok()?,
        ))
    }
}

/// Free and total memory of the current context's device, in bytes.
pub(crate) fn mem_get_info() -> Result<(u64, u64), Error> {
    let (free, total) = result::mem_get_info().map_err(fail("cuMemGetInfo"))?;
    Ok((free as u64, total as u64))
}

/// Streaming multiprocessors of the context's device (1 if the driver will not say).
pub(crate) fn sm_count(ctx: &CudaContext) -> usize {
    ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map(|n| n.max(1) as usize)
        .unwrap_or(1)
}

/// What one multiprocessor of the context's device holds at once (the co-scheduling model's
/// limits; a limit the driver will not give reads as the H100's).
pub(crate) fn sm_limits(ctx: &CudaContext) -> crate::cosched::SmLimits {
    use sys::CUdevice_attribute as A;
    let h100 = crate::cosched::SmLimits::H100;
    let get = |a: A, or: u32| ctx.attribute(a).map_or(or, |v| v.max(1) as u32);
    crate::cosched::SmLimits {
        sms: sm_count(ctx) as u32,
        threads: get(
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            h100.threads,
        ),
        registers: get(
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
            h100.registers,
        ),
        shared_bytes: get(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            h100.shared_bytes,
        ),
        blocks: get(
            A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            h100.blocks,
        ),
    }
}

/// Thread blocks of `threads` threads of `f` one multiprocessor holds at once, if the driver
/// says.
pub(crate) fn max_active_blocks_per_sm(f: Function, threads: u32) -> Option<usize> {
    let mut per_sm = 0i32;
    // SAFETY: a query on a loaded function.
    let r = unsafe {
        sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, f, threads as i32, 0)
    };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(per_sm.max(0) as usize)
}

/// Registers per thread and static shared memory per block of `f` (0 where the driver does not
/// say).
pub(crate) fn function_resources(f: Function) -> (u32, u32) {
    let attr = |a: sys::CUfunction_attribute| {
        let mut v = 0i32;
        // SAFETY: a query on a loaded function.
        let r = unsafe { sys::cuFuncGetAttribute(&mut v, a, f) };
        if r == sys::CUresult::CUDA_SUCCESS {
            v.max(0) as u32
        } else {
            0
        }
    };
    (
        attr(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS),
        attr(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
    )
}

/// The occupancy API's suggested block size for `f` (at most 1024 threads), if the driver says.
pub(crate) fn suggested_block_size(f: Function) -> Option<u32> {
    let (mut min_grid, mut bs) = (0i32, 0i32);
    // SAFETY: a query on a loaded function.
    let r =
        unsafe { sys::cuOccupancyMaxPotentialBlockSize(&mut min_grid, &mut bs, f, None, 0, 1024) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(bs.max(0) as u32)
}

// ---- Memory ----------------------------------------------------------------------------------

/// Allocates `bytes` (> 0) of device memory.
///
/// # Safety
/// The context must be current; the caller frees it with [`free`].
pub(crate) unsafe fn malloc(bytes: usize, what: impl Display) -> Result<DevicePtr, Error> {
    result::malloc_sync(bytes).map_err(fail(what))
}

/// Frees device memory from [`malloc`] or [`malloc_managed`], ignoring errors (used in `Drop`).
///
/// # Safety
/// Nothing may use the memory any more (the work using it is synchronized).
pub(crate) unsafe fn free(ptr: DevicePtr) {
    let _ = result::free_sync(ptr);
}

/// Allocates `bytes` (> 0) of page-locked host memory (flags 0: cached, not write-combined, so
/// the CPU reads it at full speed).
///
/// # Safety
/// As [`malloc`]; freed with [`free_host`].
pub(crate) unsafe fn malloc_host(bytes: usize, what: impl Display) -> Result<*mut u8, Error> {
    Ok(result::malloc_host(bytes, 0).map_err(fail(what))? as *mut u8)
}

/// Frees memory from [`malloc_host`], ignoring errors (used in `Drop`).
///
/// # Safety
/// As [`free`].
pub(crate) unsafe fn free_host(ptr: *mut u8) {
    let _ = result::free_host(ptr as *mut c_void);
}

/// Allocates `bytes` of managed (unified) memory attached globally.
///
/// # Safety
/// As [`malloc`].
#[cfg(feature = "bench")]
pub(crate) unsafe fn malloc_managed(bytes: usize, what: impl Display) -> Result<DevicePtr, Error> {
    result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL).map_err(fail(what))
}

/// Prefetches `bytes` of managed memory at `ptr` to device `ordinal` (`Some`) or to the host
/// (`None`) on stream `st`.
///
/// # Safety
/// `ptr..ptr + bytes` must be managed memory from [`malloc_managed`].
#[cfg(feature = "bench")]
pub(crate) unsafe fn prefetch(
    ptr: DevicePtr,
    bytes: usize,
    device: Option<usize>,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    let loc = match device {
        Some(d) => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: d as i32,
        },
        None => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        },
    };
    result::mem_prefetch_async(ptr, bytes, loc, st).map_err(fail(what))
}

/// Whether `ptr` lies in memory the driver already knows as page-locked host memory
/// (allocated with `cuMemHostAlloc`, e.g. a [`super::PinnedArray`], or registered).
pub(crate) fn is_page_locked(ptr: *const u8) -> bool {
    let mut ty: u32 = 0;
    // SAFETY: a query; pageable or unknown pointers give an error code, not UB.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut ty as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr as sys::CUdeviceptr,
        )
    };
    r == sys::CUresult::CUDA_SUCCESS && ty == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
}

/// Whether the `bytes` bytes at `ptr` (not empty) are page-locked already, every page of them:
/// two registrations with a pageable gap between them lock the first and the last byte but
/// not the range, and a copy through the gap is not safe to overlap.
pub(crate) fn range_page_locked(ptr: *const u8, bytes: usize) -> bool {
    let lo = ptr as usize;
    bytes > 0
        && lo
            .checked_add(bytes)
            .is_some_and(|hi| covered(lo..hi, locked_region))
}

/// Page size the per-page walk steps by (the smallest the host maps).
const PAGE: usize = 4096;

/// The page-locked region the driver knows around `at`: the registration or allocation it
/// belongs to (`cuPointerGetAttribute`'s range), or just `at`'s page where the driver locks
/// it but gives no range; `None` where `at` is not page-locked.
fn locked_region(at: usize) -> Option<std::ops::Range<usize>> {
    if !is_page_locked(at as *const u8) {
        return None;
    }
    let mut start: sys::CUdeviceptr = 0;
    let mut size: usize = 0;
    // SAFETY: queries of a pointer the driver knows (checked above); each writes one value of
    // the attribute's type into the given variable.
    let ok = unsafe {
        sys::cuPointerGetAttribute(
            &mut start as *mut sys::CUdeviceptr as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            at as sys::CUdeviceptr,
        ) == sys::CUresult::CUDA_SUCCESS
            && sys::cuPointerGetAttribute(
                &mut size as *mut usize as *mut c_void,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                at as sys::CUdeviceptr,
            ) == sys::CUresult::CUDA_SUCCESS
    };
    let page = at / PAGE * PAGE..(at / PAGE * PAGE).saturating_add(PAGE);
    let range = (start as usize)..(start as usize).saturating_add(size);
    Some(if ok && range.contains(&at) {
        range
    } else {
        page
    })
}

/// Whether the regions `region` reports cover all of `range`: from each address not yet
/// covered, the region around it (`None`: a hole) moves the walk to that region's end, so a
/// range costs one query per region it spans. A region that does not contain the address it
/// was asked about counts as a hole.
fn covered(
    range: std::ops::Range<usize>,
    mut region: impl FnMut(usize) -> Option<std::ops::Range<usize>>,
) -> bool {
    let mut at = range.start;
    while at < range.end {
        match region(at) {
            Some(r) if r.contains(&at) => at = r.end,
            _ => return false,
        }
    }
    true
}

/// Why host memory was not page-locked. Kept apart from the crate's [`Error`]: a run whose
/// registration fails has touched nothing and can go ahead without page-locked arrays
/// (staged-copy), which it cannot after other driver errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RegisterError {
    /// The driver refused the range (`reason` is its error).
    #[error("cuMemHostRegister of {bytes} bytes failed: {reason}")]
    Refused { bytes: usize, reason: String },
    /// The registering thread could not make the run's context current.
    #[error("binding the context: {0}")]
    Context(String),
    /// The registering threads ended before every piece was registered.
    #[error("the page-locking threads stopped early")]
    Stopped,
}

impl From<RegisterError> for Error {
    fn from(e: RegisterError) -> Error {
        Error::Cuda {
            what: "page-locking the arrays".into(),
            message: e.to_string(),
        }
    }
}

/// Page-locks `bytes` of host memory at `ptr` (portable: every context sees it).
///
/// # Safety
/// The range must be whole pages of live host memory that stays alive until
/// [`host_unregister`].
pub(crate) unsafe fn host_register(ptr: *mut u8, bytes: usize) -> Result<(), RegisterError> {
    let r = sys::cuMemHostRegister_v2(ptr as *mut c_void, bytes, sys::CU_MEMHOSTREGISTER_PORTABLE);
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(RegisterError::Refused {
            bytes,
            reason: result::DriverError(r).to_string(),
        });
    }
    Ok(())
}

/// Undoes [`host_register`], ignoring errors (used in `Drop`).
///
/// # Safety
/// `ptr` must have been registered by [`host_register`]; nothing may be copying from it.
pub(crate) unsafe fn host_unregister(ptr: *mut u8) {
    let _ = sys::cuMemHostUnregister(ptr as *mut c_void);
}

// ---- Copies ----------------------------------------------------------------------------------

/// Enqueues a copy of `n` bytes host -> device on `st`.
///
/// # Safety
/// `src` must hold `n` readable bytes and `dst` `n` writable device bytes until the stream has
/// run the copy; the host side should be page-locked for the copy to be asynchronous.
pub(crate) unsafe fn copy_htod_async(
    dst: DevicePtr,
    src: *const u8,
    n: usize,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, n, st)
        .result()
        .map_err(fail(what))
}

/// Enqueues a copy of `n` bytes device -> host on `st`.
///
/// # Safety
/// As [`copy_htod_async`], the other way round.
pub(crate) unsafe fn copy_dtoh_async(
    dst: *mut u8,
    src: DevicePtr,
    n: usize,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, n, st)
        .result()
        .map_err(fail(what))
}

/// The shape of a strided copy between host and device: `rows` rows of `width` bytes, `host`
/// and `device` bytes apart on each side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strided {
    pub width: usize,
    pub rows: usize,
    pub host: usize,
    pub device: usize,
}

/// Enqueues a strided copy between `host` and `dev` on `st` (`to_device`: host -> device),
/// one copy engine operation for all rows.
///
/// # Safety
/// Both sides must hold `rows` rows of `width` bytes at their pitch (the last row needs only
/// `width`), alive until the stream has run the copy; the host side should be page-locked.
pub(crate) unsafe fn copy_strided_async(
    dev: DevicePtr,
    host: *mut u8,
    shape: Strided,
    to_device: bool,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST};
    let (src_type, dst_type) = if to_device {
        (HOST, DEVICE)
    } else {
        (DEVICE, HOST)
    };
    // The host side is read through `srcHost` or written through `dstHost`, the device side
    // likewise; the unused pointer of each side is ignored by the driver.
    let p = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: host as *const c_void,
        srcDevice: dev,
        srcArray: std::ptr::null_mut(),
        srcPitch: if to_device { shape.host } else { shape.device },
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: host as *mut c_void,
        dstDevice: dev,
        dstArray: std::ptr::null_mut(),
        dstPitch: if to_device { shape.device } else { shape.host },
        WidthInBytes: shape.width,
        Height: shape.rows,
    };
    sys::cuMemcpy2DAsync_v2(&p, st).result().map_err(fail(what))
}

/// Enqueues a copy of `n` bytes device -> device on `st` (a copy engine's copy: only the
/// benchmarks' copy-rate yardstick and tests use it; plans copy between buffer sets with a
/// kernel).
///
/// # Safety
/// Both ranges must be device memory of at least `n` bytes, alive until the stream has run it.
#[cfg(any(feature = "bench", test))]
pub(crate) unsafe fn copy_dtod_async(
    dst: DevicePtr,
    src: DevicePtr,
    n: usize,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemcpyDtoDAsync_v2(dst, src, n, st)
        .result()
        .map_err(fail(what))
}

/// Copies `n` bytes host -> device and waits for it.
///
/// # Safety
/// `src` must hold `n` readable bytes and `dst` `n` writable device bytes.
pub(crate) unsafe fn copy_htod(
    dst: DevicePtr,
    src: *const u8,
    n: usize,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemcpyHtoD_v2(dst, src as *const c_void, n)
        .result()
        .map_err(fail(what))
}

/// Copies `n` bytes device -> host and waits for it.
///
/// # Safety
/// As [`copy_htod`], the other way round.
pub(crate) unsafe fn copy_dtoh(
    dst: *mut u8,
    src: DevicePtr,
    n: usize,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemcpyDtoH_v2(dst as *mut c_void, src, n)
        .result()
        .map_err(fail(what))
}

/// Sets `n` device bytes at `ptr` to `value` and waits for it.
///
/// # Safety
/// `ptr` must hold `n` device bytes.
pub(crate) unsafe fn memset(
    ptr: DevicePtr,
    value: u8,
    n: usize,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemsetD8_v2(ptr, value, n)
        .result()
        .map_err(fail(what))
}

/// Enqueues setting `n` device bytes at `ptr` to `value` on `st`.
///
/// # Safety
/// As [`memset`], alive until the stream has run it.
#[cfg(feature = "bench")]
pub(crate) unsafe fn memset_async(
    ptr: DevicePtr,
    value: u8,
    n: usize,
    st: Stream,
    what: impl Display,
) -> Result<(), Error> {
    sys::cuMemsetD8Async(ptr, value, n, st)
        .result()
        .map_err(fail(what))
}

// ---- Launches --------------------------------------------------------------------------------

/// Enqueues kernel `f` on `st` (no dynamic shared memory).
///
/// # Safety
/// `params` must point at values matching the kernel's parameter list, and every device pointer
/// among them must stay alive until the stream has run the kernel.
pub(crate) unsafe fn launch(
    f: Function,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    st: Stream,
    params: &mut [*mut c_void],
    what: impl Display,
) -> Result<(), Error> {
    result::launch_kernel(f, grid, block, 0, st, params).map_err(fail(what))
}

/// Enqueues host function `f(arg)` on `st` (the driver runs it on its own thread, in stream
/// order).
///
/// # Safety
/// `arg` must stay valid until `f` has run, and `f` must not call the driver.
pub(crate) unsafe fn launch_host_func(
    st: Stream,
    f: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
) -> Result<(), Error> {
    sys::cuLaunchHostFunc(st, Some(f), arg)
        .result()
        .map_err(fail("cuLaunchHostFunc"))
}

// ---- Streams and events ----------------------------------------------------------------------

/// A new non-blocking stream (destroy it with [`stream_destroy`]).
pub(crate) fn stream_create() -> Result<Stream, Error> {
    result::stream::create(result::stream::StreamKind::NonBlocking)
        .map_err(fail("creating a stream"))
}

/// Creates a non-blocking stream whose kernels the block scheduler serves before those of
/// lower-priority streams (`high`) or after them; the default priority where the device has no
/// range.
pub(crate) fn stream_create_prioritized(high: bool) -> Result<Stream, Error> {
    let (mut least, mut greatest) = (0i32, 0i32);
    // SAFETY: a query on the current context.
    let r = unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return stream_create();
    }
    let mut st = std::ptr::null_mut();
    let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
    let priority = if high { greatest } else { least };
    // SAFETY: creates a stream on the current context; destroyed by `stream_destroy`.
    unsafe { sys::cuStreamCreateWithPriority(&mut st, flags, priority) }
        .result()
        .map_err(fail("creating a prioritized stream"))?;
    Ok(st)
}

/// Destroys a stream, ignoring errors (used in `Drop`).
///
/// # Safety
/// Created by [`stream_create`]; its work is synchronized.
pub(crate) unsafe fn stream_destroy(st: Stream) {
    let _ = result::stream::destroy(st);
}

/// Waits until everything enqueued on `st` has run.
///
/// # Safety
/// `st` must be a live stream.
pub(crate) unsafe fn stream_sync(st: Stream, what: impl Display) -> Result<(), Error> {
    result::stream::synchronize(st).map_err(fail(what))
}

/// Makes later work on `st` wait for `ev`.
///
/// # Safety
/// Both must be live.
pub(crate) unsafe fn stream_wait(st: Stream, ev: Event) -> Result<(), Error> {
    result::stream::wait_event(st, ev, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
        .map_err(fail("cuStreamWaitEvent"))
}

/// A new timing event (destroy it with [`event_destroy`]).
pub(crate) fn event_create() -> Result<Event, Error> {
    result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(fail("creating an event"))
}

/// Destroys an event, ignoring errors (used in `Drop`).
///
/// # Safety
/// Created by [`event_create`].
pub(crate) unsafe fn event_destroy(ev: Event) {
    let _ = result::event::destroy(ev);
}

/// Records `ev` on `st`.
///
/// # Safety
/// Both must be live.
pub(crate) unsafe fn event_record(ev: Event, st: Stream) -> Result<(), Error> {
    result::event::record(ev, st).map_err(fail("recording an event"))
}

/// Waits until the work before `ev`'s recording has run.
///
/// # Safety
/// `ev` must be live and recorded.
pub(crate) unsafe fn event_sync(ev: Event, what: impl Display) -> Result<(), Error> {
    result::event::synchronize(ev).map_err(fail(what))
}

/// Milliseconds between two completed events.
///
/// # Safety
/// Both must be live and recorded.
pub(crate) unsafe fn event_elapsed_ms(start: Event, end: Event) -> Result<f32, Error> {
    result::event::elapsed(start, end).map_err(fail("cuEventElapsedTime"))
}

/// Whether the work before `ev`'s recording is known complete.
///
/// # Safety
/// `ev` must be live.
pub(crate) unsafe fn event_done(ev: Event) -> bool {
    sys::cuEventQuery(ev) == sys::CUresult::CUDA_SUCCESS
}

/// Whether the work before `ev`'s recording has run: `Ok(false)` while it has not, an error
/// when the device reports one.
///
/// # Safety
/// `ev` must be live and recorded.
pub(crate) unsafe fn event_ready(ev: Event, what: impl Display) -> Result<bool, Error> {
    match sys::cuEventQuery(ev) {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        e => Err(fail(what)(cudarc::driver::DriverError(e))),
    }
}

/// Whether everything enqueued on `st` has run (see [`event_ready`]).
///
/// # Safety
/// `st` must be live.
pub(crate) unsafe fn stream_ready(st: Stream, what: impl Display) -> Result<bool, Error> {
    match sys::cuStreamQuery(st) {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        e => Err(fail(what)(cudarc::driver::DriverError(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::covered;
    use std::ops::Range;

    /// The region of `regions` holding `at`, as the driver would report it.
    fn lookup(regions: &[Range<usize>]) -> impl FnMut(usize) -> Option<Range<usize>> + '_ {
        |at| regions.iter().find(|r| r.contains(&at)).cloned()
    }

    #[test]
    fn a_range_is_covered_only_without_holes() {
        let two = [0x1000..0x5000, 0x5000..0x9000];
        assert!(covered(0x1000..0x9000, lookup(&two)));
        assert!(covered(0x1800..0x8fff, lookup(&two)));
        // First and last byte locked, a pageable page between: the old check said yes.
        let gap = [0x1000..0x4000, 0x5000..0x9000];
        assert!(!covered(0x1000..0x9000, lookup(&gap)));
        assert!(covered(0x5000..0x9000, lookup(&gap)));
        assert!(!covered(0x3000..0x4001, lookup(&gap)));
        assert!(!covered(0x0fff..0x2000, lookup(&gap)));
        assert!(!covered(0x8000..0x9001, lookup(&gap)));
        // One query per region, not per page.
        let mut asked = 0;
        let big = [Range {
            start: 0,
            end: 1 << 40,
        }];
        let mut look = lookup(&big);
        assert!(covered(4096..(1 << 40), |at| {
            asked += 1;
            look(at)
        }));
        assert_eq!(asked, 1);
        // A region that does not hold the address asked about is a hole, never a loop.
        assert!(!covered(0x1000..0x2000, |_| Some(0..0x1000)));
        assert!(!covered(0x1000..0x2000, |_| Some(0x1000..0x1000)));
    }

    /// On a device: the driver reports a registration's whole range (one query covers 64 MiB),
    /// and two registrations with a pageable page between them do not cover the span.
    #[test]
    #[ignore = "needs a CUDA device"]
    fn registrations_cover_exactly_their_pages_on_a_device() {
        use super::super::device::{available, context};
        use super::{host_register, host_unregister, locked_region, range_page_locked, PAGE};
        available().unwrap_or_else(|r| panic!("this test needs a CUDA device ({r})"));
        let _ctx = context(0).expect("a context");
        let bytes = 64 << 20;
        let mut v = vec![0u8; bytes + PAGE];
        let lo = (v.as_mut_ptr() as usize).div_ceil(PAGE) * PAGE;
        let p = lo as *mut u8;
        // SAFETY: `bytes` bytes from `p` lie inside `v`, which outlives the registrations.
        unsafe { host_register(p, bytes).expect("registering") };
        let whole = locked_region(lo).expect("a registered page is page-locked");
        assert!(whole.start <= lo && whole.end >= lo + bytes, "{whole:x?}");
        assert!(range_page_locked(p, bytes));
        assert!(
            !range_page_locked(p, bytes + 1),
            "a byte past the registration"
        );
        // SAFETY: registered above; nothing copies from it.
        unsafe { host_unregister(p) };
        let half = bytes / 2;
        let second = p.wrapping_add(half);
        // SAFETY: two disjoint page ranges inside `v`, a page apart.
        unsafe {
            host_register(p, half - PAGE).expect("registering the first half");
            host_register(second, half).expect("registering the second half");
        }
        assert!(range_page_locked(p, half - PAGE));
        assert!(range_page_locked(second, half));
        assert!(
            !range_page_locked(p, bytes),
            "the pageable page between is a hole"
        );
        // SAFETY: both registered above; nothing copies from them.
        unsafe {
            host_unregister(p);
            host_unregister(second);
        }
        assert!(!range_page_locked(p, PAGE));
    }
}
