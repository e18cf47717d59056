//! Fixed-rate zfp, pacc's [`Codec`]: stream sizes, the CPU coder and the CUDA source
//! of the same coder.
//!
//! The compressed pieces of an out-of-core run must be cheap to produce on the GPU, of a size
//! known before compressing (so buffers and transfers can be planned), and addressable by plane
//! range (so a chunk's remainder and its shared region can be compressed separately, Shen et al.
//! PDCAT 2021). zfp's fixed-rate mode has all three, and following its stream format bit for bit
//! means any zfp tool can read what pacc writes (and tests can check us against an independent
//! implementation).
//!
//! # Stream layout
//!
//! The array (C-contiguous, axis 0 outermost) is seen as zfp sees a strided array whose x is the
//! last axis: shape `(n0, n1, n2)` is zfp's `(nx, ny, nz) = (n2, n1, n0)`. It is cut into 4^d
//! blocks, padded at the high ends as zfp pads partial blocks, and the blocks are coded in zfp's
//! order, x fastest, then y, then z. Every block takes exactly [`block_bits`] bits (zfp's
//! `minbits = maxbits`, set by `zfp_stream_set_rate` with `align = false`), so block `b` starts at
//! bit `b * block_bits`. The bits fill 64-bit words from the LSB, words stored little-endian, and
//! the stream is zero-padded to a whole word at the end ([`compressed_bytes`]): exactly the bytes
//! `zfp_compress` writes after the header (we write no header).
//!
//! Because blocks are ordered axis-0-major, the blocks covering planes `4j .. 4j + 4` (a *slab*)
//! are contiguous in the stream. When a slab is a whole number of words ([`slab_bytes`]), the
//! planes `4j .. 4j + 4m` compress on their own to exactly the bytes
//! `slab_bytes * j .. slab_bytes * (j + m)` of the whole array's stream, so any 4-aligned plane
//! range is an independently decodable byte range. The encoder and decoder use this to run
//! slabs in parallel.
//!
//! # Block coding
//!
//! Per block (zfp 1.0's fixed-rate path): the largest magnitude's exponent `emax` (frexp
//! convention, at least the smallest normal exponent); a zero block is one `0` bit and padding;
//! otherwise a `1` bit and `emax` + bias in 8 (f32) or 11 (f64) bits, the values converted to
//! 32/64-bit integers relative to `2^emax` with two guard bits, the lifting transform along each
//! axis (`transform`), the sequency reordering and negabinary mapping, and the embedded
//! bit-plane coder with group tests (`bitplane`), which stops when the budget is spent; then
//! zero padding to the block size.
//!
//! One deliberate difference from zfp's C code: for blocks whose largest magnitude is below
//! 2^-97 (f32) or 2^-961 (f64), C computes the scale `2^(30 - emax)` in the float type, which
//! overflows, and the conversion is undefined (the values are lost). We scale exactly, giving the
//! integers C would give without the overflow; zfp-rs does the same, and C decodes such streams.

#[cfg(feature = "runtime")]
mod bitplane;
#[cfg(feature = "runtime")]
mod bits;
mod block;
#[cfg(feature = "runtime")]
mod coder;
pub mod cuda;
#[cfg(feature = "runtime")]
mod transform;

#[cfg(feature = "runtime")]
pub use coder::{decode, encode, CodecFloat};

use super::{Codec, CodecError, CudaCoder, Elem, Rate};
#[cfg(feature = "runtime")]
use super::{Values, ValuesMut};
use block::Grid;

/// What zfp refuses that other codecs take: its fixed-rate mode's limits and alignment.
#[derive(Debug, thiserror::Error)]
pub enum ZfpError {
    #[error(
        "value at flat index {index} is NaN or infinite; zfp's fixed-rate mode only codes \
         finite values (check the data, or clamp it before compressing)"
    )]
    NonFinite { index: usize },
    #[error(
        "rate {rate} bits/value gives {bits} bits per {dims}-D block; fixed-rate zfp needs \
         {min}..={max} bits per block (use a finite rate between {} and {} for {dims}-D)",
        *min as f64 / (1u64 << (2 * *dims)) as f64,
        *max as f64 / (1u64 << (2 * *dims)) as f64
    )]
    BadRate {
        rate: f64,
        dims: usize,
        bits: f64,
        min: usize,
        max: usize,
    },
    #[error(
        "a slab (4 planes) of plane shape {plane:?} at rate {rate} is {bits} bits, not a whole \
         number of 64-bit words, so slabs are not byte-addressable; pick a rate whose bits per \
         block times blocks per slab is a multiple of 64 (e.g. an integer rate in 3-D, or a \
         multiple of 4 in 2-D)"
    )]
    UnalignedSlab {
        plane: Vec<usize>,
        rate: f64,
        bits: usize,
    },
    #[error("rate {rate} gives {bits}-bit blocks; the GPU codec needs whole 64-bit words")]
    GpuUnaligned { rate: f64, bits: usize },
    #[error(
        "a block of {values} values would take {bits} bits at rate {rate}, not a whole number of \
         64-bit words (use {hint})",
        values = 1usize << (2 * *dims),
        hint = if *dims == 2 { "a multiple of 4, e.g. 8, 12, 16" } else { "a whole number of bits" }
    )]
    UnalignedBlock { rate: f64, dims: usize, bits: usize },
}

/// Fixed-rate zfp as pacc's [`Codec`]: a slab is the 4 planes of one layer of blocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Zfp;

impl Codec for Zfp {
    fn name(&self) -> &'static str {
        "zfp"
    }

    fn slab_planes(&self) -> usize {
        4
    }

    /// Below the raw size, and blocks of whole 64-bit words: the GPU kernels need them, and the
    /// CPU coder then writes the same stream.
    fn check_rate(&self, elem: Elem, dims: usize, rate: Rate) -> Result<(), CodecError> {
        let rate = rate.bits();
        if rate >= (8 * elem.size()) as f64 {
            return Err(CodecError::NoSmaller { elem, rate });
        }
        let bits = block_bits(rate, dims)?;
        if bits % 64 != 0 {
            return Err(ZfpError::UnalignedBlock { rate, dims, bits }.into());
        }
        Ok(())
    }

    fn slab_bytes(&self, plane: &[usize], rate: Rate) -> Result<usize, CodecError> {
        slab_bytes(plane, rate.bits())
    }

    fn compressed_bytes(&self, shape: &[usize], rate: Rate) -> Result<usize, CodecError> {
        compressed_bytes(shape, rate.bits())
    }

    #[cfg(feature = "runtime")]
    fn encode(
        &self,
        src: Values<'_>,
        shape: &[usize],
        rate: Rate,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        match src {
            Values::F32(v) => encode(v, shape, rate.bits(), out),
            Values::F64(v) => encode(v, shape, rate.bits(), out),
        }
    }

    #[cfg(feature = "runtime")]
    fn decode(
        &self,
        src: &[u8],
        shape: &[usize],
        rate: Rate,
        out: ValuesMut<'_>,
    ) -> Result<(), CodecError> {
        match out {
            ValuesMut::F32(v) => decode(src, shape, rate.bits(), v),
            ValuesMut::F64(v) => decode(src, shape, rate.bits(), v),
        }
    }

    fn cuda(&self) -> Option<&dyn CudaCoder> {
        Some(self)
    }
}

/// zfp's `ZFP_MAX_BITS`: the largest block budget zfp accepts.
pub const MAX_BLOCK_BITS: usize = 16658;

/// The smallest block budget we accept: the 12-bit header of an f64 block. (zfp raises smaller
/// budgets to the type's header size, 9 bits for f32 and 12 for f64, which would make the block
/// size depend on the type; such rates carry no information past the exponent anyway.)
pub const MIN_BLOCK_BITS: usize = 12;

/// Bits per 4^d block in fixed-rate mode, as zfp computes it for `rate` bits/value (align =
/// false): `floor(4^dims * rate + 0.5)`. Rates giving fewer than [`MIN_BLOCK_BITS`] or more than
/// [`MAX_BLOCK_BITS`] bits are rejected rather than raised or clamped.
pub fn block_bits(rate: f64, dims: usize) -> Result<usize, CodecError> {
    if !(1..=3).contains(&dims) {
        return Err(CodecError::BadShape {
            shape: vec![0; dims],
            reason: "the codec handles 1 to 3 dimensions",
        });
    }
    let n = (1u32 << (2 * dims)) as f64;
    let bits = (n * rate + 0.5).floor();
    if !bits.is_finite() || bits < MIN_BLOCK_BITS as f64 || bits > MAX_BLOCK_BITS as f64 {
        return Err(ZfpError::BadRate {
            rate,
            dims,
            bits,
            min: MIN_BLOCK_BITS,
            max: MAX_BLOCK_BITS,
        }
        .into());
    }
    Ok(bits as usize)
}

fn check_shape(shape: &[usize]) -> Result<usize, CodecError> {
    super::shape_size(shape, 1, "the element count overflows usize")
}

fn total_bits(shape: &[usize], maxbits: usize) -> Result<usize, CodecError> {
    let g = Grid::from_shape(shape);
    g.blocks()
        .iter()
        .try_fold(maxbits, |a, &b| a.checked_mul(b))
        .and_then(|b| b.checked_add(63))
        .ok_or(CodecError::BadShape {
            shape: shape.to_vec(),
            reason: "the compressed size overflows usize",
        })
}

/// Bytes of the zfp stream for an array of `shape` (1..=3 dims, axis 0 outermost), rounded up to
/// whole u64 words as zfp's stream flush does. An array with a zero-length axis takes 0 bytes.
pub fn compressed_bytes(shape: &[usize], rate: f64) -> Result<usize, CodecError> {
    check_shape(shape)?;
    let maxbits = block_bits(rate, shape.len())?;
    Ok(total_bits(shape, maxbits)? / 64 * 8)
}

/// Bytes of one "slab": the blocks covering 4 consecutive axis-0 planes (exactly, no rounding),
/// for plane shape `plane` (the other axes; empty for 1-D, where a slab is one block). Errors if
/// the slab is not a whole number of 64-bit words: the pipeline needs word-aligned slabs to
/// address plane ranges in the stream (3-D with an integer rate always is; 2-D needs
/// `rate * 16 * blocks_per_row % 64 == 0`, e.g. a rate that is a multiple of 4).
pub fn slab_bytes(plane: &[usize], rate: f64) -> Result<usize, CodecError> {
    let dims = plane.len() + 1;
    let maxbits = block_bits(rate, dims)?;
    let mut shape = vec![4usize];
    shape.extend_from_slice(plane);
    check_shape(&shape)?;
    let bits = total_bits(&shape, maxbits)? - 63;
    if bits % 64 != 0 {
        return Err(ZfpError::UnalignedSlab {
            plane: plane.to_vec(),
            rate,
            bits,
        }
        .into());
    }
    Ok(bits / 8)
}
