//! The acoustic stencil against an analytic standing-wave solution.
//!
//! With no source and a uniform medium, `u_n = cos(omega n) * sin(tz z + pz) sin(ty y + py)
//! sin(tx x + px)` is an exact solution of the discrete scheme
//! `u[n+1] = 2 u[n] - u[n-1] + C^2 L u[n]`: the 8th-order stencil `L` maps
//! `sin(t i + p)` on each axis to `S(t) sin(t i + p)` with the symbol
//! `S(t) = c0 + 2 sum_m c_m cos(m t)`, so the update holds when
//! `cos(omega) = 1 + C^2 (S(tz) + S(ty) + S(tx)) / 2` (discrete dispersion relation of the
//! 8th-order stencil with 2nd-order time stepping). The model keeps a zero frame of 4 planes
//! instead of continuing the sine, so the solution is exact only where the frame has not been
//! felt: the stencil reaches 4 points per step, so after `N` steps every point at least
//! `4 + 4 N` points inside every face. There the computed field must equal the analytic one up
//! to f32 rounding.

use ndarray::Array3;
use pacc::models::acoustic::{self, COEFFS, HALO};
use pacc::{BackendChoice, Options, Scheme};

const SHAPE: (usize, usize, usize) = (120, 100, 108);
const STEPS: usize = 10;
/// Wavenumbers (radians per grid point) and phases per axis.
const THETA: [f64; 3] = [
    2.0 * std::f64::consts::PI / 10.0,
    2.0 * std::f64::consts::PI / 8.0,
    2.0 * std::f64::consts::PI / 12.0,
];
const PHASE: [f64; 3] = [0.3, 1.1, -0.4];
/// Squared Courant number of the uniform medium.
const C2: f64 = 0.15;

/// Symbol of the 8th-order second-derivative stencil.
fn symbol8(t: f64) -> f64 {
    COEFFS[0]
        + 2.0
            * COEFFS[1..]
                .iter()
                .enumerate()
                .map(|(m, c)| c * ((m + 1) as f64 * t).cos())
                .sum::<f64>()
}

/// Symbol of the 2nd-order stencil (used to show the test can tell stencils apart).
fn symbol2(t: f64) -> f64 {
    -2.0 + 2.0 * t.cos()
}

fn omega(symbol: fn(f64) -> f64) -> f64 {
    let s: f64 = THETA.iter().map(|&t| symbol(t)).sum();
    let c = 1.0 + C2 * s / 2.0;
    assert!(c.abs() <= 1.0, "the chosen mode is unstable");
    c.acos()
}

fn mode(z: usize, y: usize, x: usize) -> f64 {
    [z, y, x]
        .iter()
        .zip(THETA.iter().zip(PHASE))
        .map(|(&i, (&t, p))| (t * i as f64 + p).sin())
        .product()
}

fn initial() -> (Array3<f32>, Array3<f32>, Array3<f32>) {
    let (nz, ny, nx) = SHAPE;
    let inside = |z: usize, y: usize, x: usize| {
        (HALO..nz - HALO).contains(&z)
            && (HALO..ny - HALO).contains(&y)
            && (HALO..nx - HALO).contains(&x)
    };
    let w = omega(symbol8);
    let at = |n: f64| {
        Array3::from_shape_fn(SHAPE, |(z, y, x)| {
            if inside(z, y, x) {
                ((w * n).cos() * mode(z, y, x)) as f32
            } else {
                0.0
            }
        })
    };
    // prev = u_{-1}, cur = u_0.
    (at(-1.0), at(0.0), Array3::from_elem(SHAPE, C2 as f32))
}

/// L2 norm of `u - cos(omega n) * mode` over the region the frame has not reached, relative to
/// the norm of the mode there.
fn error(u: &Array3<f32>, n: usize, omega: f64) -> f64 {
    let m = HALO + HALO * STEPS;
    let (nz, ny, nx) = SHAPE;
    let (mut e2, mut r2) = (0.0, 0.0);
    for z in m..nz - m {
        for y in m..ny - m {
            for x in m..nx - m {
                let want = (omega * n as f64).cos() * mode(z, y, x);
                e2 += (u[[z, y, x]] as f64 - want).powi(2);
                r2 += mode(z, y, x).powi(2);
            }
        }
    }
    assert!(r2 > 0.0, "empty comparison region");
    (e2 / r2).sqrt()
}

fn check(prev: &Array3<f32>, cur: &Array3<f32>, what: &str) {
    let w8 = omega(symbol8);
    let e_cur = error(cur, STEPS, w8);
    let e_prev = error(prev, STEPS - 1, w8);
    eprintln!("{what}: relative L2 error {e_cur:e} (newest field), {e_prev:e} (previous field)");
    assert!(
        e_cur < 1e-5,
        "{what}: relative L2 error of the newest field {e_cur:e}"
    );
    assert!(
        e_prev < 1e-5,
        "{what}: relative L2 error of the previous field {e_prev:e}"
    );
    // The comparison is sharp: the 2nd-order stencil's dispersion relation, or no time
    // dependence at all, would be far off.
    let w2 = omega(symbol2);
    assert!(
        error(cur, STEPS, w2) > 1e-3,
        "{what}: the test cannot tell the stencils apart"
    );
    assert!(error(cur, 0, w8) > 1e-1, "{what}: the mode did not evolve");
}

#[test]
fn stability_limit_is_the_symbol_bound() {
    // At the Nyquist wavenumber on every axis the symbol is largest; C at the limit gives
    // cos(omega) = -1 exactly.
    let lim = acoustic::stability_limit();
    let s = 3.0 * symbol8(std::f64::consts::PI);
    assert!((1.0 + lim * lim * s / 2.0 + 1.0).abs() < 1e-12);
    assert!(lim > 0.45 && lim < 0.46, "{lim}");
}

#[test]
fn serial_matches_standing_wave() {
    let (mut prev, mut cur, vel) = initial();
    let silent = vec![0.0f32; STEPS];
    let (nz, ny, nx) = SHAPE;
    acoustic::propagate::serial(
        &mut prev,
        &mut cur,
        &vel,
        &silent,
        nz / 2,
        ny / 2,
        nx / 2,
        1.0,
        STEPS,
    );
    check(&prev, &cur, "serial");
}

#[test]
fn pipelined_matches_standing_wave() {
    let (mut prev, mut cur, vel) = initial();
    let silent = vec![0.0f32; STEPS];
    let (nz, ny, nx) = SHAPE;
    let opts = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(4)
        .scheme(Scheme::RegionSharing);
    acoustic::propagate::run(
        &mut prev,
        &mut cur,
        &vel,
        &silent,
        nz / 2,
        ny / 2,
        nx / 2,
        1.0,
        STEPS,
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    check(&prev, &cur, "cpu backend, 3 chunks, 4 block steps");
}
