//! The CPU coder: blocks to bits and back, in parallel over groups of slabs.

use rayon::prelude::*;

// The sizes and errors of the parent, and (for the tests) everything else it names.
use super::bits::{BitReader, BitWriter};
use super::transform::{self, BlockInt};
use super::*;
use super::{bitplane, block};
use crate::program::Elem;

mod sealed {
    use super::transform::BlockInt;

    /// What the codec needs of a float type; sealed so that only f32 and f64 implement it.
    pub trait Sealed: Copy + Send + Sync + 'static {
        /// zfp's block integer (`Int`).
        type Int: BlockInt;
        /// Bits of the biased exponent in a block header.
        const EBITS: u32;
        /// Exponent bias.
        const EBIAS: i32;
        const ZERO: Self;
        /// Magnitude as raw bits: ordered like the magnitude for finite values.
        fn abs_bits(self) -> u64;
        fn finite(self) -> bool;
        /// zfp's `exponent()` of a magnitude given by its bits: the frexp exponent, at least
        /// `1 - EBIAS`; `-EBIAS` for zero.
        fn exponent(abs_bits: u64) -> i32;
        /// `trunc(self * 2^(intprec - 2 - emax))`, exactly.
        fn quantize(self, emax: i32) -> Self::Int;
        /// `(float)i * 2^(emax - (intprec - 2))` computed in the float type, as zfp decodes.
        fn dequantize(i: Self::Int, emax: i32) -> Self;
    }
}

/// A float type the codec handles: `f32` or `f64`.
pub trait CodecFloat: sealed::Sealed {
    /// The element type tag pacc uses for this type.
    const ELEM: Elem;
}

/// `2^k` as an f64, with gradual underflow (denormal powers, then zero) like `ldexp(1.0, k)`.
#[inline(always)]
fn pow2_f64(k: i32) -> f64 {
    if k > 1023 {
        f64::INFINITY
    } else if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else if k >= -1074 {
        f64::from_bits(1u64 << (k + 1074))
    } else {
        0.0
    }
}

/// `2^k` as an f32, like `ldexpf(1.0f, k)`.
#[inline(always)]
fn pow2_f32(k: i32) -> f32 {
    if k > 127 {
        f32::INFINITY
    } else if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else if k >= -149 {
        f32::from_bits(1u32 << (k + 149))
    } else {
        0.0
    }
}

impl sealed::Sealed for f32 {
    type Int = i32;
    const EBITS: u32 = 8;
    const EBIAS: i32 = 127;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn abs_bits(self) -> u64 {
        (self.to_bits() & 0x7fff_ffff) as u64
    }
    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn exponent(abs_bits: u64) -> i32 {
        if abs_bits == 0 {
            -127
        } else {
            ((abs_bits >> 23) as i32 - 126).max(-126)
        }
    }
    #[inline(always)]
    fn quantize(self, emax: i32) -> i32 {
        // In f64 the scale 2^(30 - emax) <= 2^156 is exact and so is the product (< 2^30).
        (self as f64 * pow2_f64(30 - emax)) as i32
    }
    #[inline(always)]
    fn dequantize(i: i32, emax: i32) -> f32 {
        i as f32 * pow2_f32(emax - 30)
    }
}

impl sealed::Sealed for f64 {
    type Int = i64;
    const EBITS: u32 = 11;
    const EBIAS: i32 = 1023;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn abs_bits(self) -> u64 {
        self.to_bits() & 0x7fff_ffff_ffff_ffff
    }
    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn exponent(abs_bits: u64) -> i32 {
        if abs_bits == 0 {
            -1023
        } else {
            ((abs_bits >> 52) as i32 - 1022).max(-1022)
        }
    }
    #[inline(always)]
    fn quantize(self, emax: i32) -> i64 {
        let k = 62 - emax;
        let y = if k <= 1023 {
            self * pow2_f64(k)
        } else {
            // 2^k overflows: scale in two exact steps (both enlarge, the result is < 2^62).
            self * pow2_f64(k - 1023) * pow2_f64(1023)
        };
        y as i64
    }
    #[inline(always)]
    fn dequantize(i: i64, emax: i32) -> f64 {
        i as f64 * pow2_f64(emax - 62)
    }
}

impl CodecFloat for f32 {
    const ELEM: Elem = Elem::F32;
}

impl CodecFloat for f64 {
    const ELEM: Elem = Elem::F64;
}

/// The size of a parallel work unit, in slabs: the fewest slabs that are a whole number of words,
/// raised until a unit holds about 64 Ki values (so small slabs do not make tiny tasks).
fn chunk_slabs(g: &Grid, maxbits: usize) -> usize {
    let b = g.blocks();
    let outer = g.outer();
    let slab_blocks: usize = (0..outer).map(|i| b[i]).product();
    let slab_bits = slab_blocks * maxbits;
    let mut gcd = (slab_bits % 64, 64usize);
    while gcd.0 != 0 {
        gcd = (gcd.1 % gcd.0, gcd.0);
    }
    let aligned = 64 / gcd.1;
    let slab_values = (slab_blocks << (2 * g.dims)).max(1);
    let want = (1usize << 16).div_ceil(slab_values * aligned).max(1);
    aligned * want
}

/// Encodes the block `q` (4^dims values) with exactly `maxbits` bits.
#[inline]
fn encode_block<T: CodecFloat>(w: &mut BitWriter<'_>, q: &[T], dims: usize, maxbits: usize) {
    let max = q.iter().fold(0u64, |m, v| m.max(v.abs_bits()));
    let emax = T::exponent(max);
    // zfp's precision(): fixed-rate mode has maxprec = 64 and minexp = -1074.
    let maxprec = (emax + 1074 + 2 * (dims as i32 + 1)).clamp(0, 64) as u32;
    if max == 0 || maxprec == 0 {
        w.write_bit(false);
        w.pad(maxbits - 1);
        return;
    }
    let head = 1 + T::EBITS as usize;
    let e = (emax + T::EBIAS) as u64;
    w.write_bits(2 * e + 1, head as u32);
    let size = q.len();
    let mut ints = [<T::Int as Default>::default(); 64];
    for (i, v) in ints.iter_mut().zip(q) {
        *i = v.quantize(emax);
    }
    transform::fwd_xform(&mut ints[..size], dims);
    let mut u = [0u64; 64];
    for (c, &p) in u.iter_mut().zip(transform::perm(dims)) {
        *c = ints[p as usize].to_nega();
    }
    let intprec = <T::Int as BlockInt>::BITS;
    let kmin = intprec.saturating_sub(maxprec);
    let used = bitplane::encode_ints(w, maxbits - head, intprec, kmin, &u[..size]);
    w.pad(maxbits - head - used);
}

/// Decodes one block of `maxbits` bits into `q`; leaves the reader at the next block.
#[inline]
fn decode_block<T: CodecFloat>(r: &mut BitReader<'_>, q: &mut [T], dims: usize, maxbits: usize) {
    let start = r.position();
    if !r.read_bit() {
        q.fill(T::ZERO);
    } else {
        let head = 1 + T::EBITS as usize;
        let emax = r.read_bits(T::EBITS) as i32 - T::EBIAS;
        let maxprec = (emax + 1074 + 2 * (dims as i32 + 1)).clamp(0, 64) as u32;
        let intprec = <T::Int as BlockInt>::BITS;
        let kmin = intprec.saturating_sub(maxprec);
        let size = q.len();
        let mut u = [0u64; 64];
        bitplane::decode_ints(r, maxbits - head, intprec, kmin, &mut u[..size]);
        let mut ints = [<T::Int as Default>::default(); 64];
        for (&c, &p) in u.iter().zip(transform::perm(dims)) {
            ints[p as usize] = <T::Int as BlockInt>::from_nega(c);
        }
        transform::inv_xform(&mut ints[..size], dims);
        for (v, &i) in q.iter_mut().zip(&ints) {
            *v = T::dequantize(i, emax);
        }
    }
    r.seek(start + maxbits);
}

/// Encodes a whole (sub-)array serially into `out` (its stream, word-padded).
fn encode_serial<T: CodecFloat>(src: &[T], g: &Grid, maxbits: usize, out: &mut [u8]) {
    let nb = g.blocks();
    let size = 1usize << (2 * g.dims);
    let mut q = [T::ZERO; 64];
    let mut w = BitWriter::new(out);
    for bz in 0..nb[2] {
        for by in 0..nb[1] {
            for bx in 0..nb[0] {
                block::gather(src, g, [bx, by, bz], &mut q[..size]);
                encode_block(&mut w, &q[..size], g.dims, maxbits);
            }
        }
    }
    w.flush();
}

/// Decodes a whole (sub-)array serially from `src`.
fn decode_serial<T: CodecFloat>(src: &[u8], g: &Grid, maxbits: usize, out: &mut [T]) {
    let nb = g.blocks();
    let size = 1usize << (2 * g.dims);
    let mut q = [T::ZERO; 64];
    let mut r = BitReader::new(src);
    for bz in 0..nb[2] {
        for by in 0..nb[1] {
            for bx in 0..nb[0] {
                decode_block(&mut r, &mut q[..size], g.dims, maxbits);
                block::scatter(&q[..size], g, [bx, by, bz], out);
            }
        }
    }
}

/// Common checks of encode and decode; returns the grid and the bits per block.
fn prepare(
    shape: &[usize],
    rate: f64,
    values: usize,
    bytes: usize,
) -> Result<(Grid, usize), CodecError> {
    let count = check_shape(shape)?;
    let maxbits = block_bits(rate, shape.len())?;
    let need = compressed_bytes(shape, rate)?;
    let mismatch = |what, unit, expected, got| CodecError::ShapeMismatch {
        what,
        unit,
        shape: shape.to_vec(),
        rate,
        expected,
        got,
    };
    if values != count {
        return Err(mismatch("the array", "values", count, values));
    }
    if bytes != need {
        return Err(mismatch("the stream buffer", "bytes", need, bytes));
    }
    Ok((Grid::from_shape(shape), maxbits))
}

/// The parallel work unit: (axis-0 planes, stream bytes) per unit of whole slabs.
fn split_units(g: &Grid, maxbits: usize) -> (usize, usize) {
    let per = chunk_slabs(g, maxbits);
    let b = g.blocks();
    let slab_blocks: usize = (0..g.outer()).map(|i| b[i]).product();
    (4 * per, per * slab_blocks * maxbits / 8)
}

/// Compresses `src` (C-contiguous, `shape` with axis 0 outermost) at `rate` bits/value into
/// `out`, which must be exactly [`compressed_bytes`] long. The input is scanned for NaN and
/// infinity before anything is written. Runs in parallel over groups of slabs (any group of
/// slabs that is a whole number of words is an independent piece of the stream).
pub fn encode<T: CodecFloat>(
    src: &[T],
    shape: &[usize],
    rate: f64,
    out: &mut [u8],
) -> Result<(), CodecError> {
    let (g, maxbits) = prepare(shape, rate, src.len(), out.len())?;
    if let Some(index) = src.par_iter().position_first(|v| !v.finite()) {
        return Err(ZfpError::NonFinite { index }.into());
    }
    if src.is_empty() {
        return Ok(());
    }
    let (planes, unit_bytes) = split_units(&g, maxbits);
    let plane_len: usize = shape[1..].iter().product();
    let outer = shape[0];
    out.par_chunks_mut(unit_bytes)
        .enumerate()
        .for_each(|(c, dst)| {
            let p0 = c * planes;
            let p1 = (p0 + planes).min(outer);
            let mut sub = g;
            sub.n[g.outer()] = p1 - p0;
            encode_serial(&src[p0 * plane_len..p1 * plane_len], &sub, maxbits, dst);
        });
    Ok(())
}

/// Decompresses a stream written by [`encode`] (or by zfp in fixed-rate mode, without header,
/// with the same shape and rate) into `out`. `src` must be exactly [`compressed_bytes`] long.
/// Never panics on corrupt input: any bits decode to some finite or infinite values.
pub fn decode<T: CodecFloat>(
    src: &[u8],
    shape: &[usize],
    rate: f64,
    out: &mut [T],
) -> Result<(), CodecError> {
    let (g, maxbits) = prepare(shape, rate, out.len(), src.len())?;
    if out.is_empty() {
        return Ok(());
    }
    let (planes, unit_bytes) = split_units(&g, maxbits);
    let plane_len: usize = shape[1..].iter().product();
    out.par_chunks_mut(planes * plane_len)
        .enumerate()
        .for_each(|(c, dst)| {
            let mut sub = g;
            sub.n[g.outer()] = dst.len() / plane_len;
            let from = (c * unit_bytes).min(src.len());
            decode_serial(&src[from..], &sub, maxbits, dst);
        });
    Ok(())
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
