//! 3D acoustic wave propagation: 2nd order in time, 8th order in space, a Ricker source and an
//! optional absorbing sponge.
//!
//! The update of one step is the textbook leap-frog scheme
//!
//! ```text
//! u[n+1] = 2 u[n] - u[n-1] + (v dt / dx)^2 * L u[n]
//! ```
//!
//! with `L` the 8th-order Laplacian stencil (coefficients [`COEFFS`] on each axis, uniform
//! spacing `dx`). The array `vel` holds the squared Courant number `(v dt / dx)^2` per point (see
//! [`courant2`]), so the kernel needs no division. The outer [`HALO`] planes on every face are
//! never written and stay zero. After the update of step `n` the source adds
//! `v^2 dt^2 w(n dt) = vel * dx^2 * w(n dt)` at the source point, `w` being the Ricker wavelet
//! precomputed by [`ricker`]. The arrays rotate `prev <- cur <- new` by a swap, so after the call
//! `cur` holds the newest wavefield and `prev` the one before.

use ndarray::Array3;

/// Width of the stencil's reach and of the zero frame around the domain.
pub const HALO: usize = 4;

/// 8th-order central second-derivative coefficients, centre first: `-205/72, 8/5, -1/5, 8/315,
/// -1/560`.
pub const COEFFS: [f64; 5] = [
    -205.0 / 72.0,
    8.0 / 5.0,
    -1.0 / 5.0,
    8.0 / 315.0,
    -1.0 / 560.0,
];

/// `steps` steps without absorbing boundaries. `vel` is `(v dt / dx)^2` per point, `wavelet[n]`
/// the source amplitude of step `n` (at least `steps` values), `(sz, sy, sx)` the source point
/// and `dx2 = dx * dx`.
// `t` indexes the wavelet: the time index of a point statement.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[pacc::pipeline(halo = 4)]
pub fn propagate(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: &Array3<f32>,
    wavelet: &[f32],
    sz: usize,
    sy: usize,
    sx: usize,
    dx2: f32,
    steps: usize,
) {
    let (nz, ny, nx) = cur.dim();
    let c0: f32 = -205.0 / 72.0;
    let c1: f32 = 8.0 / 5.0;
    let c2: f32 = -1.0 / 5.0;
    let c3: f32 = 8.0 / 315.0;
    let c4: f32 = -1.0 / 560.0;
    for t in 0..steps {
        for z in 4..nz - 4 {
            for y in 4..ny - 4 {
                for x in 4..nx - 4 {
                    let u = cur[[z, y, x]];
                    let lap = 3.0 * c0 * u
                        + c1 * (cur[[z - 1, y, x]]
                            + cur[[z + 1, y, x]]
                            + cur[[z, y - 1, x]]
                            + cur[[z, y + 1, x]]
                            + cur[[z, y, x - 1]]
                            + cur[[z, y, x + 1]])
                        + c2 * (cur[[z - 2, y, x]]
                            + cur[[z + 2, y, x]]
                            + cur[[z, y - 2, x]]
                            + cur[[z, y + 2, x]]
                            + cur[[z, y, x - 2]]
                            + cur[[z, y, x + 2]])
                        + c3 * (cur[[z - 3, y, x]]
                            + cur[[z + 3, y, x]]
                            + cur[[z, y - 3, x]]
                            + cur[[z, y + 3, x]]
                            + cur[[z, y, x - 3]]
                            + cur[[z, y, x + 3]])
                        + c4 * (cur[[z - 4, y, x]]
                            + cur[[z + 4, y, x]]
                            + cur[[z, y - 4, x]]
                            + cur[[z, y + 4, x]]
                            + cur[[z, y, x - 4]]
                            + cur[[z, y, x + 4]]);
                    prev[[z, y, x]] = 2.0 * u - prev[[z, y, x]] + vel[[z, y, x]] * lap;
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * dx2 * wavelet[t];
        std::mem::swap(prev, cur);
    }
}

/// [`propagate()`] with an absorbing layer: `damp` holds `e = gamma dt / 2` of the damped wave
/// equation `u_tt + gamma u_t = v^2 Lap u` (0 in the interior, rising towards the faces, see
/// [`sponge`]), discretised as
/// `u[n+1] = (2 u[n] - (1 - e) u[n-1] + vel * L u[n]) / (1 + e)`.
// `t` indexes the wavelet: the time index of a point statement.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[pacc::pipeline(halo = 4)]
pub fn propagate_sponge(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: &Array3<f32>,
    damp: &Array3<f32>,
    wavelet: &[f32],
    sz: usize,
    sy: usize,
    sx: usize,
    dx2: f32,
    steps: usize,
) {
    let (nz, ny, nx) = cur.dim();
    let c0: f32 = -205.0 / 72.0;
    let c1: f32 = 8.0 / 5.0;
    let c2: f32 = -1.0 / 5.0;
    let c3: f32 = 8.0 / 315.0;
    let c4: f32 = -1.0 / 560.0;
    for t in 0..steps {
        for z in 4..nz - 4 {
            for y in 4..ny - 4 {
                for x in 4..nx - 4 {
                    let u = cur[[z, y, x]];
                    let lap = 3.0 * c0 * u
                        + c1 * (cur[[z - 1, y, x]]
                            + cur[[z + 1, y, x]]
                            + cur[[z, y - 1, x]]
                            + cur[[z, y + 1, x]]
                            + cur[[z, y, x - 1]]
                            + cur[[z, y, x + 1]])
                        + c2 * (cur[[z - 2, y, x]]
                            + cur[[z + 2, y, x]]
                            + cur[[z, y - 2, x]]
                            + cur[[z, y + 2, x]]
                            + cur[[z, y, x - 2]]
                            + cur[[z, y, x + 2]])
                        + c3 * (cur[[z - 3, y, x]]
                            + cur[[z + 3, y, x]]
                            + cur[[z, y - 3, x]]
                            + cur[[z, y + 3, x]]
                            + cur[[z, y, x - 3]]
                            + cur[[z, y, x + 3]])
                        + c4 * (cur[[z - 4, y, x]]
                            + cur[[z + 4, y, x]]
                            + cur[[z, y - 4, x]]
                            + cur[[z, y + 4, x]]
                            + cur[[z, y, x - 4]]
                            + cur[[z, y, x + 4]]);
                    let e = damp[[z, y, x]];
                    prev[[z, y, x]] =
                        (2.0 * u - (1.0 - e) * prev[[z, y, x]] + vel[[z, y, x]] * lap) / (1.0 + e);
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * dx2 * wavelet[t];
        std::mem::swap(prev, cur);
    }
}

/// The Ricker wavelet `w(t) = (1 - 2 r^2) exp(-r^2)`, `r = pi f0 (t - 1/f0)`, sampled at
/// `t = n dt` for `n = 0..steps` (computed in f64, stored as f32).
pub fn ricker(f0: f64, dt: f64, steps: usize) -> Vec<f32> {
    (0..steps)
        .map(|n| {
            let r = std::f64::consts::PI * f0 * (n as f64 * dt - 1.0 / f0);
            let r2 = r * r;
            ((1.0 - 2.0 * r2) * (-r2).exp()) as f32
        })
        .collect()
}

/// The squared Courant number `(v dt / dx)^2` that [`propagate()`] reads from `vel`.
pub fn courant2(v: f64, dt: f64, dx: f64) -> f32 {
    let c = v * dt / dx;
    (c * c) as f32
}

/// Largest Courant number `v dt / dx` for which the scheme is stable in 3D: the leap-frog
/// update needs `C^2 * max|symbol of L| <= 4`, and the symbol's largest magnitude, at the
/// Nyquist wavenumber on all three axes, is `3 * (-c0 + 2 * sum_m c_m (-1)^(m+1))`.
pub fn stability_limit() -> f64 {
    let per_axis = -COEFFS[0]
        + 2.0
            * COEFFS[1..]
                .iter()
                .enumerate()
                .map(|(m, c)| if m % 2 == 0 { *c } else { -*c })
                .sum::<f64>();
    (4.0 / (3.0 * per_axis)).sqrt()
}

/// A medium of `layers` horizontal layers of equal thickness along z, velocities rising
/// linearly from `v_top` to `v_bottom` (one layer: `v_top` everywhere). Returns `vel` as
/// [`propagate()`] wants it, `(v dt / dx)^2`.
pub fn layered_vel(
    shape: (usize, usize, usize),
    layers: usize,
    v_top: f64,
    v_bottom: f64,
    dt: f64,
    dx: f64,
) -> Array3<f32> {
    let layers = layers.max(1);
    let nz = shape.0;
    Array3::from_shape_fn(shape, |(z, _, _)| {
        let layer = (z * layers / nz.max(1)).min(layers - 1);
        let v = if layers == 1 {
            v_top
        } else {
            v_top + (v_bottom - v_top) * layer as f64 / (layers - 1) as f64
        };
        courant2(v, dt, dx)
    })
}

/// Damping factors `e` for [`propagate_sponge()`]: 0 in the interior, `strength * (1 - d/width)^2`
/// within `width` points (distance `d`) of the first computed plane of any face.
pub fn sponge(shape: (usize, usize, usize), width: usize, strength: f32) -> Array3<f32> {
    sponge_planes(shape, width, strength, 0..shape.0)
}

/// The planes `planes` (along z) of [`sponge`]`(shape, width, strength)`, built without the
/// others: a distributed rank's window.
pub fn sponge_planes(
    shape: (usize, usize, usize),
    width: usize,
    strength: f32,
    planes: std::ops::Range<usize>,
) -> Array3<f32> {
    let dist = |i: usize, n: usize| -> usize {
        let lo = i.saturating_sub(HALO);
        let hi = (n - 1 - HALO).saturating_sub(i);
        lo.min(hi)
    };
    let local = (planes.len(), shape.1, shape.2);
    Array3::from_shape_fn(local, |(z, y, x)| {
        let z = planes.start + z;
        let d = dist(z, shape.0).min(dist(y, shape.1)).min(dist(x, shape.2));
        if width == 0 || d >= width {
            0.0
        } else {
            let s = (width - d) as f32 / width as f32;
            strength * s * s
        }
    })
}

/// L2 norm of a wavefield, accumulated in f64 (the example's figure of merit).
pub fn l2_norm(u: &Array3<f32>) -> f64 {
    u.iter()
        .map(|&v| (v as f64) * (v as f64))
        .sum::<f64>()
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sponge_planes_are_the_planes_of_the_whole_sponge() {
        let shape = (30, 24, 26);
        let whole = sponge(shape, 6, 0.5);
        assert!(whole.iter().any(|&e| e > 0.0) && whole.iter().any(|&e| e == 0.0));
        for planes in [0..30, 3..11, 20..30] {
            let part = sponge_planes(shape, 6, 0.5, planes.clone());
            assert_eq!(part, whole.slice(ndarray::s![planes, .., ..]));
        }
    }
}
