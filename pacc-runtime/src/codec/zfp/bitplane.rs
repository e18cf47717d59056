//! zfp's embedded coder: bit planes from the most significant down, each plane's bits for the
//! coefficients already known to be significant sent verbatim, the rest by group tests.
//!
//! For plane `k` the first `n` bits (coefficients that had a one in an earlier plane) are written
//! as they are; then, while bits of the plane remain, one bit says whether any higher coefficient
//! has a one in this plane, and if so a unary run of zeros ending at that one follows (the last
//! coefficient's one is implied). Coding stops the moment the block's bit budget is spent, which
//! is what makes fixed-rate mode cheap for smooth data: low planes are never visited. The loops
//! mirror zfp's `encode_ints`/`decode_ints` step for step, including where a budget that runs
//! out mid-run leaves the decoder's state, because that decides the decoded values.

use super::bits::{BitReader, BitWriter};

/// Codes the `size` (≤ 64) negabinary coefficients `u` with at most `budget` bits, planes
/// `intprec-1` down to `kmin` (zfp's `intprec - maxprec`; nonzero only for f64 blocks below
/// about 2^-1014, where zfp's precision() drops below 64). Returns the bits written.
#[inline]
pub fn encode_ints(
    w: &mut BitWriter<'_>,
    budget: usize,
    intprec: u32,
    kmin: u32,
    u: &[u64],
) -> usize {
    let size = u.len();
    let mut bits = budget;
    let mut n = 0usize;
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        // Bit plane k, coefficient i at bit i.
        let mut x = 0u64;
        for (i, &c) in u.iter().enumerate() {
            x |= ((c >> k) & 1) << i;
        }
        // The already-significant coefficients, verbatim.
        let m = n.min(bits);
        bits -= m;
        x = w.write_bits(x, m as u32);
        // Group tests for the rest.
        while n < size && bits > 0 {
            bits -= 1;
            if !w.write_bit(x != 0) {
                break;
            }
            while n < size - 1 && bits > 0 {
                bits -= 1;
                if w.write_bit(x & 1 != 0) {
                    break;
                }
                x >>= 1;
                n += 1;
            }
            x >>= 1;
            n += 1;
        }
    }
    budget - bits
}

/// Decodes what [`encode_ints`] wrote into `u` (cleared first). Returns the bits read.
#[inline]
pub fn decode_ints(
    r: &mut BitReader<'_>,
    budget: usize,
    intprec: u32,
    kmin: u32,
    u: &mut [u64],
) -> usize {
    let size = u.len();
    u.fill(0);
    let mut bits = budget;
    let mut n = 0usize;
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        let m = n.min(bits);
        bits -= m;
        let mut x = r.read_bits(m as u32);
        while n < size && bits > 0 {
            bits -= 1;
            if !r.read_bit() {
                break;
            }
            while n < size - 1 && bits > 0 {
                bits -= 1;
                if r.read_bit() {
                    break;
                }
                n += 1;
            }
            // As zfp: the coefficient the run stopped at becomes significant, even when the
            // run stopped because the budget ran out.
            x = x.wrapping_add(1u64 << n);
            n += 1;
        }
        for c in u.iter_mut() {
            if x == 0 {
                break;
            }
            *c = c.wrapping_add((x & 1) << k);
            x >>= 1;
        }
    }
    budget - bits
}
