//! The 7-point heat stencil two ways: over the whole grid with its edge reads guarded (planes
//! and rows by `if` values, columns clamped), as outside codes write it, and over the interior
//! only. Shared by `tests/guarded_reads.rs` and `benches/guarded.rs` (issue 49 item 2).

use ndarray::Array3;

/// Whole grid: the edge reads guarded (planes, rows) and clamped (columns).
#[pacc::pipeline]
pub fn heat_guarded(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = t.dim();
    for _s in 0..steps {
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let c = t[[z, y, x]];
                    let b = if z > 0 { t[[z - 1, y, x]] } else { c };
                    let a = if z + 1 < nz { t[[z + 1, y, x]] } else { c };
                    let n = if y > 0 { t[[z, y - 1, x]] } else { c };
                    let s = if y + 1 < ny { t[[z, y + 1, x]] } else { c };
                    let e = t[[z, y, (x + 1).min(nx - 1)]];
                    let w = t[[z, y, x.max(1) - 1]];
                    u[[z, y, x]] = c + 0.1 * (a + b + n + s + e + w - 6.0 * c);
                }
            }
        }
        std::mem::swap(t, u);
    }
}

/// The same stencil over the interior only (the boundary keeps its values).
#[pacc::pipeline]
pub fn heat_interior(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = t.dim();
    for _s in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let c = t[[z, y, x]];
                    u[[z, y, x]] = c + 0.1
                        * (t[[z - 1, y, x]]
                            + t[[z + 1, y, x]]
                            + t[[z, y - 1, x]]
                            + t[[z, y + 1, x]]
                            + t[[z, y, x + 1]]
                            + t[[z, y, x - 1]]
                            - 6.0 * c);
                }
            }
        }
        std::mem::swap(t, u);
    }
}
