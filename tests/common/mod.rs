//! Programs several test files run: the staged and vector forms (`staged_kernels.rs`) and the
//! fused forms (`fused_runs.rs` on the CPU, `fused_kernels.rs` on a device) compare the same
//! functions against their serial originals; [`fused`] holds the fused comparisons both
//! backends make.

#![allow(dead_code)]

pub mod fused;

use ndarray::{Array2, Array3};
use pacc::runtime::rng::Lcg64;

/// Asymmetric star reads of `a` (y -1..+2, x -3..+1), a column read at z + 1, and diagonal
/// reads of `c` across planes z - 1 ..= z + 1; a sum over the owned points. The sum reads `b`
/// at its point after writing it, which only the single-step kernels serve: no fused form.
#[pacc::pipeline]
pub fn asym3d(a: &mut Array3<f32>, b: &mut Array3<f32>, c: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut total: f32 = 0.0;
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 2 {
                for x in 3..nx - 1 {
                    let s = a[[z, y - 1, x]] + 2.0 * a[[z, y + 2, x]] - a[[z, y, x - 3]]
                        + 0.5 * a[[z, y, x + 1]]
                        + 0.25 * a[[z + 1, y, x]];
                    let d = c[[z - 1, y + 1, x - 1]] - c[[z + 1, y - 1, x + 1]] + c[[z, y, x]];
                    b[[z, y, x]] = 0.3 * s + 0.1 * d * a[[z, y, x]];
                    total += b[[z, y, x]];
                }
            }
        }
        std::mem::swap(a, b);
    }
    total
}

/// `asym3d` with the sum taken of the value before it is stored, so that it fuses: the same
/// asymmetric reads of `a`, diagonal reads of the read-only `c`, a sum over every step (never
/// reset); and a second nest that only adds to the sum, reading the new `a` two planes ahead and
/// one behind.
#[pacc::pipeline]
pub fn skew3d(a: &mut Array3<f32>, b: &mut Array3<f32>, c: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut total: f32 = 0.0;
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 2 {
                for x in 3..nx - 1 {
                    let s = a[[z, y - 1, x]] + 2.0 * a[[z, y + 2, x]] - a[[z, y, x - 3]]
                        + 0.5 * a[[z, y, x + 1]]
                        + 0.25 * a[[z + 1, y, x]];
                    let d = c[[z - 1, y + 1, x - 1]] - c[[z + 1, y - 1, x + 1]] + c[[z, y, x]];
                    let v = 0.3 * s + 0.1 * d * a[[z, y, x]];
                    b[[z, y, x]] = v;
                    total += v;
                }
            }
        }
        std::mem::swap(a, b);
        for z in 1..nz - 2 {
            for y in 2..ny - 1 {
                for x in 1..nx - 1 {
                    total += 0.5 * a[[z + 2, y - 1, x - 1]] - a[[z - 1, y, x]];
                }
            }
        }
    }
    total
}

/// A 19-point f64 relaxation (diagonals in every plane pair, like Himeno's) and a copy nest:
/// diagonal in-plane reads are not staged, so every tuning runs the L1 form.
#[pacc::pipeline]
pub fn diag3d(p: &mut Array3<f64>, w: &mut Array3<f64>, steps: usize) {
    let (nz, ny, nx) = p.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let s = p[[z + 1, y + 1, x]] - p[[z + 1, y - 1, x]] - p[[z - 1, y + 1, x]]
                        + p[[z - 1, y - 1, x]]
                        + p[[z, y + 1, x + 1]]
                        - p[[z, y - 1, x + 1]]
                        - p[[z, y + 1, x - 1]]
                        + p[[z, y - 1, x - 1]]
                        + p[[z + 1, y, x + 1]]
                        - p[[z - 1, y, x - 1]]
                        + p[[z, y, x + 1]]
                        + p[[z, y, x - 1]];
                    w[[z, y, x]] = 0.9 * p[[z, y, x]] + 0.01 * s;
                }
            }
        }
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    p[[z, y, x]] = w[[z, y, x]];
                }
            }
        }
    }
}

/// 2D, two nests reading only forward along y: a copy over every row, then each row from the
/// next. A fused group's second nest could compute a row below a chunk from rows inside it.
#[pacc::pipeline]
pub fn ahead2d(u: &mut Array2<f64>, v: &mut Array2<f64>, steps: usize) {
    let (ny, nx) = u.dim();
    for _t in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                v[[y, x]] = 0.5 * u[[y, x]] + 0.25;
            }
        }
        for y in 0..ny - 1 {
            for x in 1..nx {
                u[[y, x]] = 0.75 * v[[y + 1, x]] + 0.25 * v[[y, x - 1]];
            }
        }
    }
}

/// 2D: asymmetric reads along x (-2..+1), one row above and below.
#[pacc::pipeline]
pub fn row2d(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 2..nx - 1 {
                b[[y, x]] = 0.2 * (a[[y, x - 2]] + a[[y, x - 1]] + a[[y, x + 1]])
                    + 0.15 * (a[[y - 1, x]] + a[[y + 1, x]])
                    + 0.1 * a[[y, x]];
            }
        }
        std::mem::swap(a, b);
    }
}

/// f64 with a source term: a leap-frog update reading two planes below and one above (y -1..+2,
/// x -2..+1), then `w[t]` added at one point of the array just written, then the swap.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[pacc::pipeline]
pub fn kick3d(
    u: &mut Array3<f64>,
    v: &mut Array3<f64>,
    m: &Array3<f64>,
    w: &[f64],
    sz: usize,
    sy: usize,
    sx: usize,
    steps: usize,
) {
    let (nz, ny, nx) = u.dim();
    for t in 0..steps {
        for z in 2..nz - 1 {
            for y in 1..ny - 2 {
                for x in 2..nx - 1 {
                    v[[z, y, x]] = 2.0 * u[[z, y, x]] - v[[z, y, x]]
                        + m[[z, y, x]]
                            * (u[[z - 2, y, x]]
                                + u[[z + 1, y, x]]
                                + u[[z, y - 1, x]]
                                + u[[z, y + 2, x]]
                                + u[[z, y, x - 2]]
                                + u[[z, y, x + 1]]
                                - 6.0 * u[[z, y, x]]);
                }
            }
        }
        v[[sz, sy, sx]] += m[[sz, sy, sx]] * w[t];
        std::mem::swap(u, v);
    }
}

/// Three time levels rotating through two swaps (`prev <- cur <- next`): after two steps the
/// name `next` refers to the array that was `cur`, which two steps do not write, so only three
/// steps fuse.
#[pacc::pipeline]
pub fn rot3(prev: &mut Array3<f32>, cur: &mut Array3<f32>, next: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = cur.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    next[[z, y, x]] = 1.5 * cur[[z, y, x]] - 0.5 * prev[[z, y, x]]
                        + 0.1
                            * (cur[[z - 1, y, x]] + cur[[z + 1, y, x]] + cur[[z, y + 1, x]]
                                - 3.0 * cur[[z, y, x]]);
                }
            }
        }
        std::mem::swap(prev, cur);
        std::mem::swap(cur, next);
    }
}

/// A smooth field of `n` with offset `k`, in any element type.
pub fn field3<T: From<f32>>(n: (usize, usize, usize), k: f32) -> Array3<T> {
    Array3::from_shape_fn(n, |(z, y, x)| {
        T::from(((z * 7 + y * 13 + x * 3) % 29) as f32 * 0.03 + k)
    })
}

/// An element type whose bits the tests compare.
pub trait Bits: Copy {
    fn bits(self) -> u64;
}

impl Bits for f32 {
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
}

impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Elements of `got` whose bits differ from `want`'s (arrays of one shape).
pub fn differing<T: Bits, D: ndarray::Dimension>(
    got: &ndarray::Array<T, D>,
    want: &ndarray::Array<T, D>,
) -> usize {
    assert_eq!(got.shape(), want.shape());
    got.iter()
        .zip(want)
        .filter(|(g, w)| g.bits() != w.bits())
        .count()
}

/// The widest read of `program`'s fused group of `s` steps along axis 0: how many planes beyond
/// a launch's output planes it reads on either side.
pub fn fused_reach(program: &pacc::runtime::Program, s: usize) -> usize {
    let decl = program.fusion.get(s).expect("a fused form");
    decl.reads
        .iter()
        .map(|r| (-r.lo[0]).max(r.hi[0]).max(0) as usize)
        .max()
        .unwrap_or(0)
}

/// A deterministic stream of values in `lo..hi`: the fused tests' initial fields.
pub fn noise(seed: u64, lo: f32, hi: f32) -> impl FnMut() -> f32 {
    // Seeded with increment 1, not the generator's own: the fields these tests were written
    // against.
    let mut g = Lcg64(seed.wrapping_mul(Lcg64::MULTIPLIER).wrapping_add(1));
    move || g.uniform(lo, hi)
}
