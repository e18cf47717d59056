//! What a rank holds on its GPU for a whole distributed run. Every block is one executor call,
//! and between blocks the halos travel through host memory, so without this each call would
//! page-lock the rank's arrays again (29.2 s of a 67 s run of 2 ranks on one H100 at 1600^3)
//! and ranks sharing a device would each plan for all of its memory.

use crate::exec::cuda::{self, HostLock};
use crate::invocation::HostArray;

/// Restores the process's device-memory cap and unregisters the arrays when dropped (after
/// the last block).
pub(super) struct DeviceShare {
    limit_before: Option<u64>,
    _lock: Option<HostLock<'static>>,
}

impl DeviceShare {
    /// Caps the device memory this rank plans for at its share of the device (when ranks share
    /// one) and page-locks its arrays for the run; says what it did in `notes` and returns the
    /// seconds spent page-locking. A failure to page-lock is not fatal: each block's executor
    /// call then registers the arrays itself (or falls back to staged copies).
    pub fn new(arrays: &[HostArray], notes: &mut Vec<String>) -> (DeviceShare, f64) {
        let before = cuda::device_memory_limit();
        let devices = cuda::available().map_or(1, |d| d.count);
        let n = super::ranks_per_device(devices);
        if n > 1 {
            if let Ok((_, total)) = cuda::free_memory() {
                // Each rank's context and modules take memory too: leave them 1 GiB.
                let cap = (total / n as u64).saturating_sub(1 << 30);
                let cap = before.map_or(cap, |b| b.min(cap));
                cuda::set_device_memory_limit(Some(cap));
                notes.push(format!(
                    "{n} ranks share the device: this one plans within {cap} bytes of it"
                ));
            }
        }
        // SAFETY: the share lives in the run's `Session`, which the distributed call drops
        // before it returns, while it still borrows the arrays described by `arrays`.
        let (lock, seconds) = match unsafe { cuda::lock_host_unchecked(arrays) } {
            Ok(l) => {
                let s = l.seconds;
                notes.push(format!(
                    "the rank's arrays stay page-locked across its blocks ({} bytes, {s:.2} s)",
                    l.bytes
                ));
                (Some(l), s)
            }
            Err(e) => {
                notes.push(format!(
                    "the rank's arrays could not stay page-locked across blocks ({e}); each \
                     block registers them"
                ));
                (None, 0.0)
            }
        };
        let share = DeviceShare {
            limit_before: before,
            _lock: lock,
        };
        (share, seconds)
    }
}

impl Drop for DeviceShare {
    fn drop(&mut self) {
        cuda::set_device_memory_limit(self.limit_before);
    }
}
