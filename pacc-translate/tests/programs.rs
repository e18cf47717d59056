//! The example programs the snapshot and CUDA syntax tests translate.

pub const LAPLACE2D: &str = r#"
use ndarray::Array2;

#[pacc::pipeline(block_steps = 4)]
pub fn laplace(a: &mut Array2<f32>, b: &mut Array2<f32>, iters: usize) -> f32 {
    let (ny, nx) = a.dim();
    let mut sum = 0.0f32;
    for _t in 0..iters {
        sum = 0.0;
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let v = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
                b[[y, x]] = v;
                sum += v;
            }
        }
        std::mem::swap(a, b);
    }
    sum / ((ny - 2) * (nx - 2)) as f32
}
"#;

pub const ACOUSTIC3D: &str = r#"
use ndarray::{Array3, ArrayView3};

#[pacc::pipeline(halo = 4, chunks = 8)]
pub fn acoustic(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: ArrayView3<f32>,
    wavelet: &[f32],
    src: (usize, usize, usize),
    dt: f32,
    dx: f32,
    steps: usize,
) {
    let (nz, ny, nx) = cur.dim();
    let (sz, sy, sx) = src;
    let c0: f32 = -205.0 / 72.0;
    let c1: f32 = 8.0 / 5.0;
    let c2: f32 = -1.0 / 5.0;
    let c3: f32 = 8.0 / 315.0;
    let c4: f32 = -1.0 / 560.0;
    let r = dt * dt / (dx * dx);
    for t in 0..steps {
        for z in 4..nz - 4 {
            for y in 4..ny - 4 {
                for x in 4..nx - 4 {
                    let lap = 3.0 * c0 * cur[[z, y, x]]
                        + c1 * (cur[[z + 1, y, x]] + cur[[z - 1, y, x]] + cur[[z, y + 1, x]] + cur[[z, y - 1, x]] + cur[[z, y, x + 1]] + cur[[z, y, x - 1]])
                        + c2 * (cur[[z + 2, y, x]] + cur[[z - 2, y, x]] + cur[[z, y + 2, x]] + cur[[z, y - 2, x]] + cur[[z, y, x + 2]] + cur[[z, y, x - 2]])
                        + c3 * (cur[[z + 3, y, x]] + cur[[z - 3, y, x]] + cur[[z, y + 3, x]] + cur[[z, y - 3, x]] + cur[[z, y, x + 3]] + cur[[z, y, x - 3]])
                        + c4 * (cur[[z + 4, y, x]] + cur[[z - 4, y, x]] + cur[[z, y + 4, x]] + cur[[z, y - 4, x]] + cur[[z, y, x + 4]] + cur[[z, y, x - 4]]);
                    let v = vel[[z, y, x]];
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]] + v * v * r * lap;
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * vel[[sz, sy, sx]] * dt * dt * wavelet[t];
        std::mem::swap(prev, cur);
    }
}
"#;

pub const HIMENO: &str = r#"
use ndarray::Array3;

#[pacc::pipeline(scratch(wrk2))]
#[allow(clippy::too_many_arguments)]
pub fn himeno(
    p: &mut Array3<f32>,
    a0: &Array3<f32>, a1: &Array3<f32>, a2: &Array3<f32>, a3: &Array3<f32>,
    b0: &Array3<f32>, b1: &Array3<f32>, b2: &Array3<f32>,
    c0: &Array3<f32>, c1: &Array3<f32>, c2: &Array3<f32>,
    bnd: &Array3<f32>, wrk1: &Array3<f32>, wrk2: &mut Array3<f32>,
    omega: f32,
    nn: usize,
) -> f32 {
    let (imax, jmax, kmax) = p.dim();
    let mut gosa: f32 = 0.0;
    for _n in 0..nn {
        gosa = 0.0;
        for i in 1..imax - 1 {
            for j in 1..jmax - 1 {
                for k in 1..kmax - 1 {
                    let s0 = a0[[i, j, k]] * p[[i + 1, j, k]]
                        + a1[[i, j, k]] * p[[i, j + 1, k]]
                        + a2[[i, j, k]] * p[[i, j, k + 1]]
                        + b0[[i, j, k]] * (p[[i + 1, j + 1, k]] - p[[i + 1, j - 1, k]] - p[[i - 1, j + 1, k]] + p[[i - 1, j - 1, k]])
                        + b1[[i, j, k]] * (p[[i, j + 1, k + 1]] - p[[i, j - 1, k + 1]] - p[[i, j + 1, k - 1]] + p[[i, j - 1, k - 1]])
                        + b2[[i, j, k]] * (p[[i + 1, j, k + 1]] - p[[i - 1, j, k + 1]] - p[[i + 1, j, k - 1]] + p[[i - 1, j, k - 1]])
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
        for i in 1..imax - 1 {
            for j in 1..jmax - 1 {
                for k in 1..kmax - 1 {
                    p[[i, j, k]] = wrk2[[i, j, k]];
                }
            }
        }
    }
    gosa
}
"#;
