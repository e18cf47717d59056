//! Gathering 4^d blocks out of a C-contiguous array and scattering them back.
//!
//! zfp pads a partial block (at the high end of an axis whose length is not a multiple of 4)
//! from the values it has, axis by axis: with 1 valid value the line becomes `a a a a`, with 2
//! `a b b a`, with 3 `a b c a`. The padding is separable, so a block value at `(x, y, z)` is the
//! array value at `(px(x), py(y), pz(z))` for a per-axis index map, which is what we use. The
//! decoder writes back only the valid values.

/// Array extents in zfp's terms: `n[0]` = nx (the last, contiguous axis), then ny, nz; absent
/// axes have extent 1. `dims` is the number of real axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub dims: usize,
    pub n: [usize; 3],
}

impl Grid {
    /// From a pacc shape (axis 0 outermost): the last axis is zfp's x.
    pub fn from_shape(shape: &[usize]) -> Self {
        let mut n = [1usize; 3];
        for (i, &s) in shape.iter().rev().enumerate().take(3) {
            n[i] = s;
        }
        Grid {
            dims: shape.len(),
            n,
        }
    }

    /// Blocks along each zfp axis.
    pub fn blocks(&self) -> [usize; 3] {
        let mut b = [1usize; 3];
        for (i, bi) in b.iter_mut().enumerate().take(self.dims) {
            *bi = self.n[i].div_ceil(4);
        }
        b
    }

    /// The outermost axis (zfp's last), whose blocks are the slabs.
    #[cfg(feature = "runtime")]
    pub fn outer(&self) -> usize {
        self.dims - 1
    }
}

/// Index within the array for padded block position `i` (0..4) when `c` (1..=4) are valid.
#[cfg(feature = "runtime")]
#[inline(always)]
fn pad_map(c: usize, i: usize) -> usize {
    if i < c {
        i
    } else if c == 2 && i == 2 {
        1
    } else {
        0
    }
}

/// Copies block `b` (block coordinates, zfp axis order) of `src` into `q` (4^dims values, x
/// fastest), padding partial blocks as zfp does.
#[cfg(feature = "runtime")]
#[inline]
pub fn gather<T: Copy>(src: &[T], g: &Grid, b: [usize; 3], q: &mut [T]) {
    let [nx, ny, nz] = g.n;
    let (x0, y0, z0) = (4 * b[0], 4 * b[1], 4 * b[2]);
    let cx = (nx - x0).min(4);
    let (cy, cz) = match g.dims {
        1 => (1, 1),
        2 => ((ny - y0).min(4), 1),
        _ => ((ny - y0).min(4), (nz - z0).min(4)),
    };
    let ly = if g.dims >= 2 { 4 } else { 1 };
    let lz = if g.dims >= 3 { 4 } else { 1 };
    let full = cx == 4 && (g.dims < 2 || cy == 4) && (g.dims < 3 || cz == 4);
    let mut o = 0;
    for z in 0..lz {
        let sz = z0 + if full { z } else { pad_map(cz, z) };
        for y in 0..ly {
            let sy = y0 + if full { y } else { pad_map(cy, y) };
            let row = (sz * ny + sy) * nx + x0;
            if full {
                q[o..o + 4].copy_from_slice(&src[row..row + 4]);
            } else {
                for x in 0..4 {
                    q[o + x] = src[row + pad_map(cx, x)];
                }
            }
            o += 4;
        }
    }
}

/// Writes the valid values of block `b` from `q` into `dst`.
#[cfg(feature = "runtime")]
#[inline]
pub fn scatter<T: Copy>(q: &[T], g: &Grid, b: [usize; 3], dst: &mut [T]) {
    let [nx, ny, nz] = g.n;
    let (x0, y0, z0) = (4 * b[0], 4 * b[1], 4 * b[2]);
    let cx = (nx - x0).min(4);
    let (cy, cz) = match g.dims {
        1 => (1, 1),
        2 => ((ny - y0).min(4), 1),
        _ => ((ny - y0).min(4), (nz - z0).min(4)),
    };
    let ly = if g.dims >= 2 { 4 } else { 1 };
    for z in 0..cz {
        for y in 0..cy {
            let row = ((z0 + z) * ny + y0 + y) * nx + x0;
            let o = (z * ly + y) * 4;
            dst[row..row + cx].copy_from_slice(&q[o..o + cx]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_blocks_pad_like_zfp() {
        // 1-D: 7 values, second block has 3 valid values: a b c a.
        let v: Vec<f32> = (0..7).map(|i| i as f32).collect();
        let g = Grid::from_shape(&[7]);
        let mut q = [0f32; 4];
        gather(&v, &g, [1, 0, 0], &mut q);
        assert_eq!(q, [4.0, 5.0, 6.0, 4.0]);
        // 2-D, 2 valid columns and 1 valid row: a b b a on every row.
        let v: Vec<f32> = (0..5 * 6).map(|i| i as f32).collect();
        let g = Grid::from_shape(&[5, 6]);
        let mut q = [0f32; 16];
        gather(&v, &g, [1, 1, 0], &mut q);
        let row = [28.0, 29.0, 29.0, 28.0];
        for y in 0..4 {
            assert_eq!(q[4 * y..4 * y + 4], row);
        }
        let mut back = vec![0f32; 30];
        scatter(&q, &g, [1, 1, 0], &mut back);
        assert_eq!(back[28..30], [28.0, 29.0]);
        assert!(back[..28].iter().all(|&x| x == 0.0));
    }
}
