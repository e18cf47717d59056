//! The Gray-Scott reaction-diffusion model on a 2D grid: two chemical species whose
//! concentrations `u` and `v` diffuse at different rates and react through `u + 2v -> 3v`.
//!
//! ```text
//! du/dt = Du Lap u - u v^2 + F (1 - u)
//! dv/dt = Dv Lap v + u v^2 - (F + k) v
//! ```
//!
//! `u` is the substrate, fed from a reservoir at rate `F`; `v` is the autocatalyst, which
//! consumes `u` to make more of itself and is removed at rate `F + k`. Starting from a uniform
//! state (`u = 1`, `v = 0`) with a small seeded patch, the pair grows spots, stripes or
//! labyrinths depending on `F` and `k` (Pearson, Science 1993). It is a standard test of two
//! fields coupled point by point: an error in either field feeds the other at the next step.
//!
//! The scheme is forward Euler in time and the 5-point Laplacian in space, with unit grid
//! spacing: one step reads `u` and `v` and writes `u2` and `v2`, then both pairs swap, so after
//! the call `u` and `v` hold the newest concentrations. The outer row and column on each side
//! are never written: they keep their initial values (a fixed, Dirichlet boundary; [`init`]
//! puts the resting state `u = 1`, `v = 0` there). Explicit Euler needs `4 dt max(Du, Dv) <= 1`
//! for the diffusion part to be stable; [`DEFAULT`] has 0.64.

use ndarray::Array2;
use pacc_runtime::rng;

/// Parameters of one run: diffusion rates, feed and kill rates, time step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub du: f32,
    pub dv: f32,
    pub f: f32,
    pub k: f32,
    pub dt: f32,
}

/// A commonly used parameter set in the spot-forming part of Pearson's `(F, k)` map:
/// `Du = 0.16`, `Dv = 0.08`, `F = 0.035`, `k = 0.065`, `dt = 1`.
pub const DEFAULT: Params = Params {
    du: 0.16,
    dv: 0.08,
    f: 0.035,
    k: 0.065,
    dt: 1.0,
};

/// `steps` forward-Euler steps of the Gray-Scott equations (see the module documentation).
/// `u`, `v` hold the current concentrations, `u2`, `v2` receive the next ones; the pairs swap
/// every step. Boundary rows and columns are never written: give all four arrays the same
/// boundary values (see [`init`]).
#[allow(clippy::too_many_arguments)]
#[pacc::pipeline(halo = 1)]
pub fn step(
    u: &mut Array2<f32>,
    v: &mut Array2<f32>,
    u2: &mut Array2<f32>,
    v2: &mut Array2<f32>,
    du: f32,
    dv: f32,
    f: f32,
    k: f32,
    dt: f32,
    steps: usize,
) {
    let (ny, nx) = u.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let uc = u[[y, x]];
                let vc = v[[y, x]];
                let lap_u =
                    u[[y - 1, x]] + u[[y + 1, x]] + u[[y, x - 1]] + u[[y, x + 1]] - 4.0 * uc;
                let lap_v =
                    v[[y - 1, x]] + v[[y + 1, x]] + v[[y, x - 1]] + v[[y, x + 1]] - 4.0 * vc;
                let uvv = uc * vc * vc;
                u2[[y, x]] = uc + dt * (du * lap_u - uvv + f * (1.0 - uc));
                v2[[y, x]] = vc + dt * (dv * lap_v + uvv - (f + k) * vc);
            }
        }
        std::mem::swap(u, u2);
        std::mem::swap(v, v2);
    }
}

/// The classic start: `u = 1`, `v = 0` everywhere except a square in the middle (a fifth of
/// each side, at least one point) where `u = 0.5`, `v = 0.25`, with deterministic noise of
/// amplitude 0.01 (from `seed`) added to `u` and `v` on that square so the pattern loses its
/// symmetry. The boundary rows and columns keep the resting state. Returns `(u, v, u2, v2)`,
/// `u2`/`v2` copies of `u`/`v` (so they carry the same boundary values).
pub fn init(
    ny: usize,
    nx: usize,
    seed: u64,
) -> (Array2<f32>, Array2<f32>, Array2<f32>, Array2<f32>) {
    let (hy, hx) = ((ny / 10).max(1), (nx / 10).max(1));
    let (cy, cx) = (ny / 2, nx / 2);
    let inside = |y: usize, x: usize| {
        y > 0
            && x > 0
            && y + 1 < ny
            && x + 1 < nx
            && y + hy >= cy
            && y < cy + hy
            && x + hx >= cx
            && x < cx + hx
    };
    let noise = |y: usize, x: usize, which: u64| -> f32 {
        let h = rng::hash(seed, (y * nx + x) as u64 ^ which);
        0.01 * (rng::unit_f32(h) - 0.5)
    };
    let u = Array2::from_shape_fn((ny, nx), |(y, x)| {
        if inside(y, x) {
            0.5 + noise(y, x, 0)
        } else {
            1.0
        }
    });
    let v = Array2::from_shape_fn((ny, nx), |(y, x)| {
        if inside(y, x) {
            0.25 + noise(y, x, 0x5555_5555_5555_5555)
        } else {
            0.0
        }
    });
    (u.clone(), v.clone(), u, v)
}
