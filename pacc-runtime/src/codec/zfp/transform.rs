//! zfp's decorrelating transform and coefficient ordering.
//!
//! After block-floating-point conversion, each 4-value line along each axis goes through zfp's
//! (non-orthogonal) lifting transform, x first, then y, then z; the coefficients are then
//! listed by sequency (zfp's `perm_d` tables) and mapped to negabinary so that the bit planes of
//! small signed numbers have leading zeros. All integer arithmetic wraps in the integer's own
//! width: the encoder never overflows (two guard bits), but a decoder fed arbitrary bits must not
//! panic, and zfp's C code relies on two's-complement wrap there too.

/// The block integer of a float type: `i32` for `f32`, `i64` for `f64` (zfp's `Int`).
pub trait BlockInt: Copy + Default + Send + Sync + 'static {
    /// Bits of the integer, zfp's `intprec`: the number of bit planes.
    const BITS: u32;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    /// Arithmetic shift right by one.
    fn half(self) -> Self;
    /// Shift left by one, wrapping.
    fn twice(self) -> Self;
    /// Two's complement to negabinary (zfp's `int2uint`), zero-extended to `u64`.
    fn to_nega(self) -> u64;
    /// Negabinary to two's complement (zfp's `uint2int`); only the low `BITS` bits count.
    fn from_nega(u: u64) -> Self;
}

impl BlockInt for i32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn half(self) -> Self {
        self >> 1
    }
    #[inline(always)]
    fn twice(self) -> Self {
        self.wrapping_shl(1)
    }
    #[inline(always)]
    fn to_nega(self) -> u64 {
        const M: u32 = 0xaaaa_aaaa;
        ((self as u32).wrapping_add(M) ^ M) as u64
    }
    #[inline(always)]
    fn from_nega(u: u64) -> Self {
        const M: u32 = 0xaaaa_aaaa;
        ((u as u32) ^ M).wrapping_sub(M) as i32
    }
}

impl BlockInt for i64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn half(self) -> Self {
        self >> 1
    }
    #[inline(always)]
    fn twice(self) -> Self {
        self.wrapping_shl(1)
    }
    #[inline(always)]
    fn to_nega(self) -> u64 {
        const M: u64 = 0xaaaa_aaaa_aaaa_aaaa;
        (self as u64).wrapping_add(M) ^ M
    }
    #[inline(always)]
    fn from_nega(u: u64) -> Self {
        const M: u64 = 0xaaaa_aaaa_aaaa_aaaa;
        (u ^ M).wrapping_sub(M) as i64
    }
}

/// zfp's forward lifting step on the 4 values `p[b], p[b+s], p[b+2s], p[b+3s]`.
///
/// It is a cheap approximation of an orthogonal transform that maps a linear ramp to a single
/// nonzero coefficient; the `>> 1` steps keep the range within the two guard bits.
#[inline(always)]
fn fwd_lift<I: BlockInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    x = x.add(w).half();
    w = w.sub(x);
    z = z.add(y).half();
    y = y.sub(z);
    x = x.add(z).half();
    z = z.sub(x);
    w = w.add(y).half();
    y = y.sub(w);
    w = w.add(y.half());
    y = y.sub(w.half());
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

/// zfp's inverse lifting step (the steps of [`fwd_lift`] undone in reverse order).
#[inline(always)]
fn inv_lift<I: BlockInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    y = y.add(w.half());
    w = w.sub(y.half());
    y = y.add(w);
    w = w.twice();
    w = w.sub(y);
    z = z.add(x);
    x = x.twice();
    x = x.sub(z);
    y = y.add(z);
    z = z.twice();
    z = z.sub(y);
    w = w.add(x);
    x = x.twice();
    x = x.sub(w);
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

/// Forward transform of a 4^dims block stored x fastest: along x, then y, then z.
pub fn fwd_xform<I: BlockInt>(p: &mut [I], dims: usize) {
    match dims {
        1 => fwd_lift(p, 0, 1),
        2 => {
            for y in 0..4 {
                fwd_lift(p, 4 * y, 1);
            }
            for x in 0..4 {
                fwd_lift(p, x, 4);
            }
        }
        _ => {
            for zy in 0..16 {
                fwd_lift(p, 4 * zy, 1);
            }
            for z in 0..4 {
                for x in 0..4 {
                    fwd_lift(p, 16 * z + x, 4);
                }
            }
            for yx in 0..16 {
                fwd_lift(p, yx, 16);
            }
        }
    }
}

/// Inverse transform: along z, then y, then x (the reverse of [`fwd_xform`]).
pub fn inv_xform<I: BlockInt>(p: &mut [I], dims: usize) {
    match dims {
        1 => inv_lift(p, 0, 1),
        2 => {
            for x in 0..4 {
                inv_lift(p, x, 4);
            }
            for y in 0..4 {
                inv_lift(p, 4 * y, 1);
            }
        }
        _ => {
            for yx in 0..16 {
                inv_lift(p, yx, 16);
            }
            for z in 0..4 {
                for x in 0..4 {
                    inv_lift(p, 16 * z + x, 4);
                }
            }
            for zy in 0..16 {
                inv_lift(p, 4 * zy, 1);
            }
        }
    }
}

/// zfp's 1-D coefficient order (the identity).
pub const PERM_1: [u8; 4] = [0, 1, 2, 3];

/// zfp's 2-D sequency order of coefficient `(i, j)` at `i + 4j`: by `i + j`, then by
/// `i² + j²`, then larger `i` first.
pub const PERM_2: [u8; 16] = [0, 1, 4, 5, 2, 8, 6, 9, 3, 12, 10, 7, 13, 11, 14, 15];

/// zfp's 3-D sequency order of coefficient `(i, j, k)` at `i + 4j + 16k`: grouped by `i + j + k`,
/// then `i² + j² + k²`; the order within a group is zfp's table (part of the stream format).
pub const PERM_3: [u8; 64] = [
    0, 1, 4, 16, // sum 0, 1
    20, 17, 5, 2, 8, 32, // sum 2
    21, 6, 18, 24, 9, 33, 36, 3, 12, 48, // sum 3
    22, 25, 37, 40, 34, 10, 7, 19, 28, 13, 49, 52, // sum 4
    41, 38, 26, 23, 29, 53, 11, 35, 44, 14, 50, 56, // sum 5
    42, 27, 39, 45, 30, 54, 57, 60, 51, 15, // sum 6
    43, 46, 58, 61, 55, 31, // sum 7
    62, 59, 47, // sum 8
    63, // sum 9
];

/// The sequency permutation for `dims`.
pub fn perm(dims: usize) -> &'static [u8] {
    match dims {
        1 => &PERM_1,
        2 => &PERM_2,
        _ => &PERM_3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perm_tables_are_permutations_grouped_by_sequency() {
        for dims in 1..=3 {
            let p = perm(dims);
            let mut seen = vec![false; p.len()];
            let mut last = 0;
            for &i in p {
                assert!(!seen[i as usize]);
                seen[i as usize] = true;
                let i = i as usize;
                let s = i % 4 + (i / 4) % 4 + i / 16;
                assert!(s >= last, "dims {dims}: not ordered by sequency");
                last = s;
            }
        }
    }

    #[test]
    fn negabinary_round_trips() {
        for v in [0i32, 1, -1, 2, -2, i32::MAX, i32::MIN, 12345, -98765] {
            assert_eq!(i32::from_nega(v.to_nega()), v);
        }
        for v in [0i64, 1, -1, i64::MAX, i64::MIN, 1 << 40, -(1 << 50)] {
            assert_eq!(i64::from_nega(v.to_nega()), v);
        }
        // Small magnitudes have leading zeros.
        assert_eq!(1i32.to_nega(), 1);
        assert_eq!((-1i32).to_nega(), 3);
    }

    #[test]
    fn lifting_maps_a_constant_to_one_coefficient_and_inverts_it() {
        let mut p = [8i32; 4];
        fwd_lift(&mut p, 0, 1);
        assert_eq!(p, [8, 0, 0, 0]);
        inv_lift(&mut p, 0, 1);
        assert_eq!(p, [8; 4]);
    }
}
