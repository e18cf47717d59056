//! Half precision, pacc's second [`Codec`]: each f32 value stored as the IEEE 754 binary16
//! nearest to it (round to nearest, ties to even), 16 bits a value, little-endian, in the
//! array's order. Lossy (11 significant bits, magnitudes up to 65504), but cheap on any
//! processor and often enough for wavefields and velocity models.
//!
//! A slab is one plane, so any plane range is an independent byte range of the stream. Only
//! rate 16 is accepted and only f32 arrays; values whose magnitude rounds past 65504 (and NaN
//! or infinity) are refused ([`F16Error::OutOfRange`]) rather than stored as infinity.
//!
//! The CPU coder and the CUDA kernels ([`SOURCE`]) convert with the same integer operations,
//! so they write the same bytes, subnormals and ties included.

use super::{Codec, CodecError, CudaCoder, CudaLaunch, Elem, Rate};
#[cfg(feature = "runtime")]
use super::{Values, ValuesMut};

/// What f16 refuses that other codecs take: rates other than its own, and values its range
/// does not hold.
#[derive(Debug, thiserror::Error)]
pub enum F16Error {
    #[error("f16 stores {bits} bits per value, so it takes rate {bits} only, not {rate} (use {bits}, or zfp for other rates)")]
    FixedRate { bits: usize, rate: f64 },
    #[error(
        "value {value} at flat index {index} is NaN, infinite or too large for f16, whose largest \
         finite value is 65504 (scale the data, or use zfp, which keeps f32's range)"
    )]
    OutOfRange { index: usize, value: f32 },
}

/// f32 as IEEE binary16: a slab is one plane, rate 16 only, f32 arrays only.
#[derive(Clone, Copy, Debug, Default)]
pub struct F16;

/// Bits per stored value.
const BITS: usize = 16;

/// The binary16 bits nearest to `x` (ties to even), or `None` when `x` is NaN, infinite, or of
/// a magnitude that rounds past 65504 (from 65520 on). The same steps as `pacc_f16_from_bits`
/// in [`SOURCE`].
pub fn to_bits(x: f32) -> Option<u16> {
    let b = x.to_bits();
    let sign = (b >> 16) & 0x8000;
    let a = b & 0x7fff_ffff;
    if a >= 0x477f_f000 {
        return None;
    }
    let (h, rem, half) = if a >= 0x3880_0000 {
        // Normal in binary16: rebias the exponent (127 -> 15) and drop 13 mantissa bits.
        let m = a - 0x3800_0000;
        (m >> 13, m & 0x1fff, 0x1000)
    } else if a <= 0x3300_0000 {
        // At most half the smallest subnormal (2^-25, a tie to the even 0).
        return Some(sign as u16);
    } else {
        // Subnormal in binary16: the significand in units of 2^-24.
        let shift = 126 - (a >> 23);
        let m = (a & 0x7f_ffff) | 0x80_0000;
        (m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1))
    };
    let up = rem > half || (rem == half && h & 1 == 1);
    Some((sign | (h + up as u32)) as u16)
}

/// The f32 holding binary16 bits `h` exactly. The same steps as `pacc_f16_to_bits` in
/// [`SOURCE`].
pub fn from_bits(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let (e, m) = ((h >> 10) & 0x1f, h & 0x3ff);
    let bits = if e == 31 {
        sign | 0x7f80_0000 | (m << 13)
    } else if e != 0 {
        sign | ((e + 112) << 23) | (m << 13)
    } else if m == 0 {
        sign
    } else {
        let p = 31 - m.leading_zeros();
        sign | ((p + 103) << 23) | ((m << (23 - p)) & 0x7f_ffff)
    };
    f32::from_bits(bits)
}

fn check_shape(shape: &[usize]) -> Result<usize, CodecError> {
    super::shape_size(shape, BITS / 8, "the compressed size overflows usize")
}

fn check_rate(rate: Rate) -> Result<(), CodecError> {
    if rate.bits() == BITS as f64 {
        Ok(())
    } else {
        Err(F16Error::FixedRate {
            bits: BITS,
            rate: rate.bits(),
        }
        .into())
    }
}

fn refuse_f64() -> CodecError {
    CodecError::UnsupportedElem {
        codec: "f16",
        elem: Elem::F64,
        hint: "it stores f32 values as binary16; compress f64 arrays with zfp",
    }
}

/// Checks the sizes of a coding call: (values, stream bytes).
#[cfg(feature = "runtime")]
fn check_sizes(shape: &[usize], rate: Rate, values: usize, bytes: usize) -> Result<(), CodecError> {
    check_rate(rate)?;
    let want = check_shape(shape)?;
    let mismatch = |what, unit, expected, got| CodecError::ShapeMismatch {
        what,
        unit,
        shape: shape.to_vec(),
        rate: rate.bits(),
        expected,
        got,
    };
    if values != want / 2 {
        return Err(mismatch("the value slice", "values", want / 2, values));
    }
    if bytes != want {
        return Err(mismatch("the stream", "bytes", want, bytes));
    }
    Ok(())
}

/// Values per parallel task of the CPU coder.
#[cfg(feature = "runtime")]
const TASK: usize = 1 << 16;

impl Codec for F16 {
    fn name(&self) -> &'static str {
        "f16"
    }

    fn slab_planes(&self) -> usize {
        1
    }

    fn check_rate(&self, elem: Elem, dims: usize, rate: Rate) -> Result<(), CodecError> {
        if elem != Elem::F32 {
            return Err(refuse_f64());
        }
        check_shape(&vec![0; dims])?;
        check_rate(rate)
    }

    fn slab_bytes(&self, plane: &[usize], rate: Rate) -> Result<usize, CodecError> {
        check_rate(rate)?;
        let mut shape = vec![1];
        shape.extend_from_slice(plane);
        check_shape(&shape)
    }

    fn compressed_bytes(&self, shape: &[usize], rate: Rate) -> Result<usize, CodecError> {
        check_rate(rate)?;
        check_shape(shape)
    }

    /// Refuses NaN, infinity and magnitudes past binary16's range, naming the first such value,
    /// before anything is written.
    #[cfg(feature = "runtime")]
    fn encode(
        &self,
        src: Values<'_>,
        shape: &[usize],
        rate: Rate,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        use rayon::prelude::*;
        let Values::F32(src) = src else {
            return Err(refuse_f64());
        };
        check_sizes(shape, rate, src.len(), out.len())?;
        if let Some(index) = src.par_iter().position_first(|v| to_bits(*v).is_none()) {
            return Err(F16Error::OutOfRange {
                index,
                value: src[index],
            }
            .into());
        }
        out.par_chunks_mut(2 * TASK)
            .zip(src.par_chunks(TASK))
            .for_each(|(out, src)| {
                for (o, v) in out.chunks_exact_mut(2).zip(src) {
                    o.copy_from_slice(&to_bits(*v).unwrap_or(0).to_le_bytes());
                }
            });
        Ok(())
    }

    #[cfg(feature = "runtime")]
    fn decode(
        &self,
        src: &[u8],
        shape: &[usize],
        rate: Rate,
        out: ValuesMut<'_>,
    ) -> Result<(), CodecError> {
        use rayon::prelude::*;
        let ValuesMut::F32(out) = out else {
            return Err(refuse_f64());
        };
        check_sizes(shape, rate, out.len(), src.len())?;
        out.par_chunks_mut(TASK)
            .zip(src.par_chunks(2 * TASK))
            .for_each(|(out, src)| {
                for (v, b) in out.iter_mut().zip(src.chunks_exact(2)) {
                    *v = from_bits(u16::from_le_bytes([b[0], b[1]]));
                }
            });
        Ok(())
    }

    fn cuda(&self) -> Option<&dyn CudaCoder> {
        Some(self)
    }
}

impl CudaCoder for F16 {
    fn source(&self) -> &'static str {
        SOURCE
    }

    fn kernel(&self, encode: bool, elem: Elem, dims: usize) -> String {
        kernel_name(encode, elem, dims)
    }

    /// One thread per value; `param` is unused (the rate is always 16).
    fn launch(&self, shape: &[usize], rate: Rate) -> Result<CudaLaunch, CodecError> {
        check_rate(rate)?;
        check_shape(shape)?;
        Ok(CudaLaunch {
            threads_per_slab: shape.get(1..).unwrap_or(&[]).iter().product(),
            param: BITS as u32,
        })
    }

    fn refusal(&self) -> &'static str {
        "the values to compress include NaN, infinity or a magnitude past f16's largest value \
         (65504)"
    }
}

/// The kernel for a direction, element type (f32 only has kernels) and dimensionality (2, 3).
pub fn kernel_name(encode: bool, elem: Elem, dims: usize) -> String {
    format!(
        "pacc_f16_{}_{}_{}d",
        if encode { "encode" } else { "decode" },
        elem.rust_name(),
        dims
    )
}

/// CUDA C source of the half-precision codec (NVRTC, no includes): thread `t = blockIdx.x *
/// blockDim.x + threadIdx.x` codes values `t, t + gridDim.x * blockDim.x, ..` of the `n0 * n1
/// [* n2]` values (any grid codes every value), value `i` into 16-bit word `i` of the stream,
/// which needs only 2-byte alignment. The ABI of
/// [`CudaLaunch`]: `pacc_f16_encode_f32_{2d,3d}(const float* src, long long n0, long long n1
/// [, long long n2], unsigned long long* out, unsigned int param, unsigned int* err)` (a value
/// it cannot code sets `*err |= 1` and writes nothing), `pacc_f16_decode_f32_{2d,3d}(const
/// unsigned long long* src, n0, n1[, n2], float* out, unsigned int param)`.
pub const SOURCE: &str = r##"
// ---- pacc half-precision codec: f32 as IEEE binary16, round to nearest even ----

// The binary16 bits nearest to the f32 with bits b, or 0x7c00 (infinity, with the sign) when b
// is NaN, infinite or rounds past 65504.
__device__ __forceinline__ unsigned int pacc_f16_from_bits(unsigned int b) {
  unsigned int sign = (b >> 16) & 0x8000u;
  unsigned int a = b & 0x7fffffffu;
  unsigned int h, rem, half;
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a >= 0x38800000u) {
    unsigned int m = a - 0x38000000u;
    h = m >> 13;
    rem = m & 0x1fffu;
    half = 0x1000u;
  } else if (a <= 0x33000000u) {
    return sign;
  } else {
    unsigned int shift = 126u - (a >> 23);
    unsigned int m = (a & 0x7fffffu) | 0x800000u;
    h = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  }
  if (rem > half || (rem == half && (h & 1u))) h += 1u;
  return sign | h;
}

// The f32 bits of binary16 bits h (exact).
__device__ __forceinline__ unsigned int pacc_f16_to_bits(unsigned int h) {
  unsigned int sign = (h & 0x8000u) << 16;
  unsigned int e = (h >> 10) & 0x1fu;
  unsigned int m = h & 0x3ffu;
  if (e == 31u) return sign | 0x7f800000u | (m << 13);
  if (e != 0u) return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0u) return sign;
  unsigned int p = 9u;
  while (!((m >> p) & 1u)) p--;
  return sign | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7fffffu);
}

// The grid strides over the values, so the executor may launch fewer threads than values and
// leave SMs to the stencil kernels running beside the codec.
#define PACC_F16_FOR_EACH(i, n)                                                        \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);      \
       i += (long long)gridDim.x * blockDim.x)

__device__ __forceinline__ void pacc_f16_encode(const float* src, long long n,
                                                unsigned long long* out, unsigned int* err) {
  PACC_F16_FOR_EACH(i, n) {
    unsigned int h = pacc_f16_from_bits(__float_as_uint(src[i]));
    if ((h & 0x7c00u) == 0x7c00u) {
      atomicOr(err, 1u);
      continue;
    }
    ((unsigned short*)out)[i] = (unsigned short)h;
  }
}

__device__ __forceinline__ void pacc_f16_decode(const unsigned long long* src, long long n,
                                                float* out) {
  PACC_F16_FOR_EACH(i, n) {
    unsigned int h = ((const unsigned short*)src)[i];
    out[i] = __int_as_float((int)pacc_f16_to_bits(h));
  }
}

extern "C" __global__ void pacc_f16_encode_f32_2d(const float* src, long long n0, long long n1,
                                                  unsigned long long* out, unsigned int param,
                                                  unsigned int* err) {
  pacc_f16_encode(src, n0 * n1, out, err);
}

extern "C" __global__ void pacc_f16_encode_f32_3d(const float* src, long long n0, long long n1,
                                                  long long n2, unsigned long long* out,
                                                  unsigned int param, unsigned int* err) {
  pacc_f16_encode(src, n0 * n1 * n2, out, err);
}

extern "C" __global__ void pacc_f16_decode_f32_2d(const unsigned long long* src, long long n0,
                                                  long long n1, float* out, unsigned int param) {
  pacc_f16_decode(src, n0 * n1, out);
}

extern "C" __global__ void pacc_f16_decode_f32_3d(const unsigned long long* src, long long n0,
                                                  long long n1, long long n2, float* out,
                                                  unsigned int param) {
  pacc_f16_decode(src, n0 * n1 * n2, out);
}
"##;

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary16 values nearest to `x` by exhaustive search over finite binary16 values.
    fn nearest_by_search(x: f32) -> u16 {
        let mut best = 0u16;
        let mut best_err = f64::INFINITY;
        for h in 0..=0xffffu16 {
            if (h >> 10) & 0x1f == 31 {
                continue;
            }
            let err = (from_bits(h) as f64 - x as f64).abs();
            let better = err < best_err
                || (err == best_err && (h & 1 == 0) && best & 1 == 1)
                || (err == best_err
                    && from_bits(h) == 0.0
                    && (h >> 15) == (x.to_bits() >> 31) as u16);
            if better {
                (best, best_err) = (h, err);
            }
        }
        best
    }

    #[test]
    fn edge_cases_round_to_nearest_even() {
        let cases: [(f32, Option<u16>); 16] = [
            (0.0, Some(0)),
            (-0.0, Some(0x8000)),
            (1.0, Some(0x3c00)),
            (-2.0, Some(0xc000)),
            (65504.0, Some(0x7bff)),
            (65519.996, Some(0x7bff)),
            (65520.0, None),
            (-65520.0, None),
            (f32::MAX, None),
            (f32::INFINITY, None),
            (f32::NAN, None),
            (2f32.powi(-14), Some(0x0400)),
            (2f32.powi(-24), Some(0x0001)),
            (2f32.powi(-25), Some(0x0000)),
            (1.5 * 2f32.powi(-24), Some(0x0002)),
            // 1 + 2^-11: a tie between 1 and 1 + 2^-10, to the even 1.
            (1.0 + 2f32.powi(-11), Some(0x3c00)),
        ];
        for (x, want) in cases {
            assert_eq!(to_bits(x), want, "{x:e}");
        }
        // 1 + 3 * 2^-11: a tie to the even 1 + 2^-9.
        assert_eq!(to_bits(1.0 + 3.0 * 2f32.powi(-11)), Some(0x3c02));
        // Just above half the smallest subnormal rounds up; the largest subnormal to the next normal.
        assert_eq!(to_bits(f32::from_bits(0x3300_0001)), Some(1));
        assert_eq!(to_bits(2f32.powi(-14) - 2f32.powi(-26)), Some(0x0400));
        for h in [0u16, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x8001, 0xfbff] {
            assert_eq!(to_bits(from_bits(h)), Some(h), "{h:#x} round trips");
        }
    }

    #[test]
    fn random_values_match_an_exhaustive_search() {
        let mut g = crate::rng::XorShift64(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let s = g.next_u64();
            // Bit patterns across binary16's range: exponents 2^-27 .. 2^16.
            let e = 100 + (s >> 40) as u32 % 44;
            let x = f32::from_bits(((s as u32) & 0x807f_ffff) | (e << 23));
            let got = to_bits(x);
            if x.abs() >= 65520.0 {
                assert_eq!(got, None, "{x:e}");
            } else {
                assert_eq!(
                    got,
                    Some(nearest_by_search(x)),
                    "{x:e} ({:#x})",
                    x.to_bits()
                );
            }
        }
    }

    #[cfg(feature = "runtime")]
    #[test]
    fn codes_through_the_trait_and_refuses_clearly() {
        let c = super::super::CodecKind::F16.get();
        let rate = Rate::new(16.0).unwrap();
        let shape = [3usize, 5, 7];
        let v: Vec<f32> = (0..105).map(|i| (i as f32 * 0.61).sin() * 300.0).collect();
        let mut bytes = vec![0u8; c.compressed_bytes(&shape, rate).unwrap()];
        assert_eq!(bytes.len(), 210);
        c.encode(Values::F32(&v), &shape, rate, &mut bytes).unwrap();
        let mut back = vec![0f32; 105];
        c.decode(&bytes, &shape, rate, ValuesMut::F32(&mut back))
            .unwrap();
        for (a, b) in v.iter().zip(&back) {
            assert!((a - b).abs() <= a.abs() * 2f32.powi(-11), "{a} {b}");
        }
        let mut bad = v.clone();
        bad[17] = 70000.0;
        let e = c
            .encode(Values::F32(&bad), &shape, rate, &mut bytes)
            .unwrap_err();
        assert!(
            matches!(e, CodecError::F16(F16Error::OutOfRange { index: 17, .. })),
            "{e}"
        );
        assert!(e.to_string().contains("65504"), "{e}");
        let e = c
            .encode(Values::F64(&[0.0; 105]), &shape, rate, &mut bytes)
            .unwrap_err();
        assert!(matches!(e, CodecError::UnsupportedElem { .. }), "{e}");
        let e = c.compressed_bytes(&shape, Rate::new(8.0).unwrap());
        assert!(
            e.unwrap_err().to_string().contains("16 bits per value"),
            "rate 8"
        );
    }
}
