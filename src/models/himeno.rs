//! The RIKEN Himeno benchmark (R. Himeno, version 3.0, `himenoBMTxpa.c`): point-Jacobi sweeps of
//! a pressure Poisson equation in curvilinear coordinates, a 19-point stencil over 14 arrays.
//!
//! Layout and indices follow the original: arrays of `(mimax, mjmax, mkmax)` points, `i` the
//! outermost (slowest) axis, `k` contiguous; the sweep covers `1 <= i < mimax - 1` (and alike for
//! `j`, `k`). The original's packed matrices `a[4]`, `b[3]`, `c[3]` are separate arrays here.

use ndarray::Array3;
use pacc_runtime::pages;

/// Relaxation parameter of the original.
pub const OMEGA: f32 = 0.8;

/// Floating-point operations the benchmark counts per interior point and sweep.
pub const FLOPS_PER_POINT: f64 = 34.0;

/// `iterations` Jacobi sweeps; returns `gosa`, the sum of squared residuals of the last sweep.
/// `wrk2` is scratch space: its final contents are not needed by the caller.
#[allow(clippy::too_many_arguments)]
#[pacc::pipeline(scratch(wrk2))]
pub fn jacobi(
    p: &mut Array3<f32>,
    a0: &Array3<f32>,
    a1: &Array3<f32>,
    a2: &Array3<f32>,
    a3: &Array3<f32>,
    b0: &Array3<f32>,
    b1: &Array3<f32>,
    b2: &Array3<f32>,
    c0: &Array3<f32>,
    c1: &Array3<f32>,
    c2: &Array3<f32>,
    bnd: &Array3<f32>,
    wrk1: &Array3<f32>,
    wrk2: &mut Array3<f32>,
    omega: f32,
    iterations: usize,
) -> f32 {
    let (ni, nj, nk) = p.dim();
    let mut gosa: f32 = 0.0;
    for _n in 0..iterations {
        gosa = 0.0;
        for i in 1..ni - 1 {
            for j in 1..nj - 1 {
                for k in 1..nk - 1 {
                    let s0 = a0[[i, j, k]] * p[[i + 1, j, k]]
                        + a1[[i, j, k]] * p[[i, j + 1, k]]
                        + a2[[i, j, k]] * p[[i, j, k + 1]]
                        + b0[[i, j, k]]
                            * (p[[i + 1, j + 1, k]] - p[[i + 1, j - 1, k]] - p[[i - 1, j + 1, k]]
                                + p[[i - 1, j - 1, k]])
                        + b1[[i, j, k]]
                            * (p[[i, j + 1, k + 1]] - p[[i, j - 1, k + 1]] - p[[i, j + 1, k - 1]]
                                + p[[i, j - 1, k - 1]])
                        + b2[[i, j, k]]
                            * (p[[i + 1, j, k + 1]] - p[[i - 1, j, k + 1]] - p[[i + 1, j, k - 1]]
                                + p[[i - 1, j, k - 1]])
                        + c0[[i, j, k]] * p[[i - 1, j, k]]
                        + c1[[i, j, k]] * p[[i, j - 1, k]]
                        + c2[[i, j, k]] * p[[i, j, k - 1]]
                        + wrk1[[i, j, k]];
                    let ss = (s0 * a3[[i, j, k]] - p[[i, j, k]]) * bnd[[i, j, k]];
                    gosa += ss * ss;
                    wrk2[[i, j, k]] = p[[i, j, k]] + omega * ss;
                }
            }
        }
        for i in 1..ni - 1 {
            for j in 1..nj - 1 {
                for k in 1..nk - 1 {
                    p[[i, j, k]] = wrk2[[i, j, k]];
                }
            }
        }
    }
    gosa
}

/// The benchmark's grid sizes `(mimax, mjmax, mkmax)`, as in `himenoBMTxpa.c`. (The static-array
/// variant `himenoBMTxps.c` pads each axis by one plane it never touches, 33x33x65 for XS, and
/// computes the same values.)
pub fn grid(size: &str) -> Option<(usize, usize, usize)> {
    match size.to_ascii_lowercase().as_str() {
        "xs" => Some((32, 32, 64)),
        "s" => Some((64, 64, 128)),
        "m" => Some((128, 128, 256)),
        "l" => Some((256, 256, 512)),
        "xl" => Some((512, 512, 1024)),
        _ => None,
    }
}

/// The 14 arrays of the benchmark, initialised as the original does.
#[derive(Clone)]
pub struct Himeno {
    pub p: Array3<f32>,
    pub a0: Array3<f32>,
    pub a1: Array3<f32>,
    pub a2: Array3<f32>,
    pub a3: Array3<f32>,
    pub b0: Array3<f32>,
    pub b1: Array3<f32>,
    pub b2: Array3<f32>,
    pub c0: Array3<f32>,
    pub c1: Array3<f32>,
    pub c2: Array3<f32>,
    pub bnd: Array3<f32>,
    pub wrk1: Array3<f32>,
    pub wrk2: Array3<f32>,
}

impl Himeno {
    /// `a0..a2 = 1`, `a3 = 1/6`, `b = 0`, `c = 1`, `bnd = 1`, `wrk1 = wrk2 = 0` and
    /// `p[i][j][k] = i^2 / (mimax - 1)^2` (f32 arithmetic, as in the original). Panics where
    /// the host has no room for the arrays; [`Himeno::try_new`] returns the error instead.
    pub fn new(shape: (usize, usize, usize)) -> Himeno {
        Himeno::try_new(shape).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Himeno::new`], the arrays from `pacc_runtime::pages` (huge pages, filled on all
    /// cores, so that a CUDA run page-locks them quickly); an error names the shape when they
    /// cannot be allocated.
    pub fn try_new(shape: (usize, usize, usize)) -> Result<Himeno, pacc_runtime::Error> {
        let full = |v: f32| pages::full(shape, v);
        let denom = ((shape.0 - 1) * (shape.0 - 1)) as f32;
        Ok(Himeno {
            p: pages::from_planes(shape, |i, plane| plane.fill((i * i) as f32 / denom))?,
            a0: full(1.0)?,
            a1: full(1.0)?,
            a2: full(1.0)?,
            // The original stores the double 1.0/6.0 into a float.
            a3: full((1.0f64 / 6.0) as f32)?,
            b0: full(0.0)?,
            b1: full(0.0)?,
            b2: full(0.0)?,
            c0: full(1.0)?,
            c1: full(1.0)?,
            c2: full(1.0)?,
            bnd: full(1.0)?,
            wrk1: full(0.0)?,
            wrk2: full(0.0)?,
        })
    }

    pub fn shape(&self) -> (usize, usize, usize) {
        self.p.dim()
    }

    /// Runs `iterations` sweeps with the serial function.
    pub fn serial(&mut self, iterations: usize) -> f32 {
        let h = self;
        jacobi::serial(
            &mut h.p,
            &h.a0,
            &h.a1,
            &h.a2,
            &h.a3,
            &h.b0,
            &h.b1,
            &h.b2,
            &h.c0,
            &h.c1,
            &h.c2,
            &h.bnd,
            &h.wrk1,
            &mut h.wrk2,
            OMEGA,
            iterations,
        )
    }

    /// Runs `iterations` sweeps through the pipeline with `opts`.
    pub fn run(
        &mut self,
        iterations: usize,
        opts: &pacc_runtime::Options,
    ) -> Result<(f32, pacc_runtime::Report), pacc_runtime::Error> {
        let h = self;
        jacobi::run(
            &mut h.p,
            &h.a0,
            &h.a1,
            &h.a2,
            &h.a3,
            &h.b0,
            &h.b1,
            &h.b2,
            &h.c0,
            &h.c1,
            &h.c2,
            &h.bnd,
            &h.wrk1,
            &mut h.wrk2,
            OMEGA,
            iterations,
            opts,
        )
    }
}

/// Floating-point operations the original counts per sweep: 34 per point of
/// `(mimax - 3) x (mjmax - 3) x (mkmax - 3)` (`himenoBMTxpa.c` passes `imax = mimax - 1` to a
/// function that subtracts 2 more), so MFLOPS figures compare with published Himeno results.
/// The sweep itself updates `(mimax - 2) x (mjmax - 2) x (mkmax - 2)` points.
pub fn flops_per_sweep(shape: (usize, usize, usize)) -> f64 {
    let (ni, nj, nk) = shape;
    ni.saturating_sub(3) as f64
        * nj.saturating_sub(3) as f64
        * nk.saturating_sub(3) as f64
        * FLOPS_PER_POINT
}

/// How far a gosa computed in another summation order (the pipeline sums each plane, then the
/// planes) may lie from the serial one, relative: both are f32 sums of the same `n` non-negative
/// terms (`n` = interior points), each within `(n - 1) u` of the exact sum relatively
/// (`u = 2^-24`, recursive summation), so they differ by at most about `n * f32::EPSILON`.
/// The original's own sequential f32 sum carries that much rounding: at XS the pipeline's
/// per-plane sums land about 4e-4 away from it, and closer to the exact value.
pub fn gosa_tolerance(shape: (usize, usize, usize)) -> f64 {
    let (ni, nj, nk) = shape;
    let n = ni.saturating_sub(2) * nj.saturating_sub(2) * nk.saturating_sub(2);
    (n as f64 * f32::EPSILON as f64).max(f32::EPSILON as f64)
}

/// Formats like C's `printf("%e", x)`: six decimals and an exponent of at least two digits.
pub fn c_exp(x: f64) -> String {
    let s = format!("{x:.6e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}
