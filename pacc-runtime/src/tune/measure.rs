//! What the model needs from the machine that no device is asked for: the host memcpy rate,
//! the slab the kernels are timed on, rates from copy times. The device's own measurements
//! (link, kernel rates, memory) come through a backend's [`Probe`](super::Probe); the model
//! ([`super::model`]) only ever sees the [`Rates`](super::Rates) that come out.

use super::model::LinkRates;
use crate::memcopy::Stores;
use crate::program::{Bound, Program};

/// Host memcpy rate in bytes per second, as the staged-copy executor and the bounce rings copy
/// (pieces of `piece` bytes in parallel on the same pool, writing as `stores` says): the best of
/// 3 copies of `bytes` bytes between two buffers written beforehand, so that no copy times the
/// kernel's first touch of a page (a one-shot call's process, its 96 GB arrays just written,
/// measured 18-30 GB/s on fresh buffers where others measured 46-60; H200, 2026-11-28).
pub fn measure_host_copy_rate(bytes: usize, piece: usize, stores: Stores) -> f64 {
    let bytes = bytes.max(4 * piece);
    let (src, mut dst) = (written(bytes, 1), written(bytes, 0));
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        // SAFETY: two live buffers of `bytes` bytes.
        unsafe { crate::memcopy::copy_with(src.as_ptr(), dst.as_mut_ptr(), bytes, piece, stores) };
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    bytes as f64 / best.max(1e-9)
}

/// `bytes` bytes of `value`, written on all cores.
fn written(bytes: usize, value: u8) -> Vec<u8> {
    use rayon::prelude::*;
    let mut v = Vec::with_capacity(bytes);
    (v.spare_capacity_mut().par_chunks_mut(1 << 21))
        .for_each(|c| c.fill(std::mem::MaybeUninit::new(value)));
    // SAFETY: every byte of the capacity was written above.
    unsafe { v.set_len(bytes) };
    v
}

/// This host's copy rate as the bounce rings copy, measured once per process on 64 MiB
/// ([`measure_host_copy_rate`]; 256 MiB cost 75-80 ms a process on an H200's host, 64 MiB
/// about a quarter of that, and the tuner's price of bouncing was calibrated on 64 MiB).
pub fn host_copy_rate() -> f64 {
    static RATE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *RATE.get_or_init(|| {
        use crate::memcopy::{BOUNCE_PIECE, BOUNCE_STORES};
        measure_host_copy_rate(64 << 20, BOUNCE_PIECE, BOUNCE_STORES)
    })
}

/// The slab planes kernels reaching `halo` planes need for their rate: four reaches and
/// eight planes, so that most of the slab is computed in full.
pub fn reach_planes(halo: usize) -> usize {
    4 * halo + 8
}

/// `program` with every kernel's axis-0 range inside a slab of `planes` planes, for timing its
/// kernels there: a rank's local program (`dist::local`) computes fixed planes of its window,
/// which the slab may not have. Ranges that fit stay as they are. For a backend's
/// [`Probe`](super::Probe), as the CUDA one uses it.
pub fn slab_program(program: &Program, planes: usize) -> Program {
    let mut p = program.clone();
    for k in &mut p.kernels {
        let (back, fwd) = k.axis0_reach();
        let r = &mut k.ranges[0];
        if r.lo.eval(planes) < back as i64 || r.hi.eval(planes) + fwd as i64 > planes as i64 {
            r.lo = Bound::start(back as i64);
            r.hi = Bound::end(-(fwd as i64));
        }
    }
    p
}

/// The planes of the slab the kernels are timed on for a call of `n` planes: deep enough for
/// the program's reach ([`reach_planes`]), at least 16.
pub fn slab_planes(program: &Program, n: usize) -> usize {
    n.min(reach_planes(program.halo).max(16))
}

/// Rates from the link's copy times (`bytes` each way), for a backend's
/// [`Probe`](super::Probe).
pub fn link_from_times(bytes: usize, htod_s: f64, dtoh_s: f64, both_s: f64) -> LinkRates {
    let b = bytes as f64;
    LinkRates {
        htod: b / htod_s,
        dtoh: b / dtoh_s,
        both: 2.0 * b / both_s,
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::slab_program;
    use crate::program::{fixtures::one_kernel, Bound, Role};

    #[test]
    fn slab_program_moves_fixed_ranges_inside_the_slab_and_keeps_fitting_ones() {
        let arrays = [("a", Role::InOut), ("b", Role::InOut)];
        let p = one_kernel("p", &arrays, &[(0, 4)], 1, 4);
        assert_eq!(slab_program(&p, 24).kernels, p.kernels);
        // A rank's local program: planes 4..700 of its window, fixed.
        let mut local = p.clone();
        local.kernels[0].ranges[0].lo = Bound::start(4);
        local.kernels[0].ranges[0].hi = Bound::start(700);
        let s = slab_program(&local, 24);
        let r = s.kernels[0].ranges[0];
        assert_eq!((r.lo.eval(24), r.hi.eval(24)), (4, 20));
        assert_eq!(s.kernels[0].ranges[1..], local.kernels[0].ranges[1..]);
    }
}
