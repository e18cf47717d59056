//! TODO(codec): a private stand-in for `pacc_runtime::codec` (branch `codec`, zfp fixed-rate),
//! with the same signatures, so that compression can be built and tested before the real codec
//! is merged. Delete this file (and the `#[path]` in lib.rs) once `codec` is merged.
//!
//! What it does: blocks of 4^d values in zfp's block order (axis 0 outermost, last axis
//! fastest), block `b` at bit `b * maxbits` with `maxbits = block_bits(rate, d)`; each value keeps
//! the top `floor(rate)` bits of its bit pattern (the rest read back as zero), so it is lossy
//! like zfp and a missing round trip shows up in tests. Partial blocks are padded with zeros.

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CodecError {
    #[error("rate {rate} is not a usable number of bits per value (expected a finite rate in 1..=64)")]
    Rate { rate: f64 },
    #[error("the blocks of 4 planes of shape {plane:?} at rate {rate} take {bits} bits, not a whole number of 64-bit words; use a rate r with r * 16 a multiple of 64 (2D), e.g. 8, 12, 16")]
    Unaligned { plane: Vec<usize>, rate: f64, bits: u64 },
    #[error("buffer of {got} {what}, expected {want}")]
    Size { what: &'static str, got: usize, want: usize },
    #[error("shape {0:?} is not 2D or 3D")]
    Shape(Vec<usize>),
}

/// Element types the codec handles.
pub trait CodecFloat: Copy + Default + Send + Sync + 'static {
    const BITS: u32;
    fn to_word(self) -> u64;
    fn from_word(w: u64) -> Self;
}

impl CodecFloat for f32 {
    const BITS: u32 = 32;
    fn to_word(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_word(w: u64) -> Self {
        f32::from_bits(w as u32)
    }
}

impl CodecFloat for f64 {
    const BITS: u32 = 64;
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    fn from_word(w: u64) -> Self {
        f64::from_bits(w)
    }
}

fn check_rate(rate: f64) -> Result<(), CodecError> {
    if !(rate.is_finite() && (1.0..=64.0).contains(&rate)) {
        return Err(CodecError::Rate { rate });
    }
    Ok(())
}

/// Bits of one block of `4^dims` values at `rate` bits per value (3D: rounded up to whole
/// 64-bit words, as zfp's word-aligned fixed rate does).
pub fn block_bits(rate: f64, dims: usize) -> Result<usize, CodecError> {
    check_rate(rate)?;
    let bits = (rate * 4f64.powi(dims as i32)).floor() as usize;
    Ok(if dims == 3 { bits.div_ceil(64) * 64 } else { bits })
}

fn blocks_per_slab(plane: &[usize]) -> usize {
    plane.iter().map(|n| n.div_ceil(4)).product()
}

/// Bytes of the blocks covering 4 consecutive axis-0 planes of the given inner shape.
pub fn slab_bytes(plane: &[usize], rate: f64) -> Result<usize, CodecError> {
    let bits = (block_bits(rate, plane.len() + 1)? * blocks_per_slab(plane)) as u64;
    if bits % 64 != 0 {
        return Err(CodecError::Unaligned {
            plane: plane.to_vec(),
            rate,
            bits,
        });
    }
    Ok((bits / 8) as usize)
}

/// Bytes of the whole array's stream.
pub fn compressed_bytes(shape: &[usize], rate: f64) -> Result<usize, CodecError> {
    check_shape(shape)?;
    Ok(shape[0].div_ceil(4) * slab_bytes(&shape[1..], rate)?)
}

fn check_shape(shape: &[usize]) -> Result<(), CodecError> {
    if shape.len() == 2 || shape.len() == 3 {
        Ok(())
    } else {
        Err(CodecError::Shape(shape.to_vec()))
    }
}

/// Visits every block in zfp order: `f(block index, flat indices of its 4^d values or None for
/// padding)`.
fn for_blocks(shape: &[usize], mut f: impl FnMut(usize, &[Option<usize>])) {
    let s3 = if shape.len() == 3 {
        [shape[0], shape[1], shape[2]]
    } else {
        [shape[0], 1, shape[1]]
    };
    let nb = [s3[0].div_ceil(4), s3[1].div_ceil(4), s3[2].div_ceil(4)];
    let mut idx = Vec::with_capacity(64);
    let mut b = 0;
    for bz in 0..nb[0] {
        for by in 0..nb[1] {
            for bx in 0..nb[2] {
                idx.clear();
                let (ys, zs) = if shape.len() == 3 { (4, 4) } else { (1, 4) };
                for dz in 0..zs {
                    for dy in 0..ys {
                        for dx in 0..4 {
                            let (z, y, x) = if shape.len() == 3 {
                                (4 * bz + dz, 4 * by + dy, 4 * bx + dx)
                            } else {
                                (4 * bz + dz, 0, 4 * bx + dx)
                            };
                            let inside = z < s3[0] && y < s3[1] && x < s3[2];
                            idx.push(inside.then(|| (z * s3[1] + y) * s3[2] + x));
                        }
                    }
                }
                f(b, &idx);
                b += 1;
            }
        }
    }
}

fn bits_per_value<T: CodecFloat>(rate: f64) -> u32 {
    (rate.floor() as u32).min(T::BITS)
}

fn sizes<T>(shape: &[usize], rate: f64, values: usize, bytes: usize) -> Result<(), CodecError> {
    let want_v: usize = shape.iter().product();
    let want_b = compressed_bytes(shape, rate)?;
    if values != want_v {
        return Err(CodecError::Size {
            what: "values",
            got: values,
            want: want_v,
        });
    }
    if bytes != want_b {
        return Err(CodecError::Size {
            what: "bytes",
            got: bytes,
            want: want_b,
        });
    }
    Ok(())
}

/// Compresses `src` (C order, `shape`) into `out` (exactly `compressed_bytes` long).
pub fn encode<T: CodecFloat>(
    src: &[T],
    shape: &[usize],
    rate: f64,
    out: &mut [u8],
) -> Result<(), CodecError> {
    sizes::<T>(shape, rate, src.len(), out.len())?;
    let maxbits = block_bits(rate, shape.len())?;
    let r = bits_per_value::<T>(rate);
    out.fill(0);
    for_blocks(shape, |b, idx| {
        for (j, i) in idx.iter().enumerate() {
            let w = i.map_or(0, |i| src[i].to_word() >> (T::BITS - r));
            put(out, b * maxbits + j * r as usize, r, w);
        }
    });
    Ok(())
}

/// Decompresses `src` into `out` (C order, `shape`).
pub fn decode<T: CodecFloat>(
    src: &[u8],
    shape: &[usize],
    rate: f64,
    out: &mut [T],
) -> Result<(), CodecError> {
    sizes::<T>(shape, rate, out.len(), src.len())?;
    let maxbits = block_bits(rate, shape.len())?;
    let r = bits_per_value::<T>(rate);
    for_blocks(shape, |b, idx| {
        for (j, i) in idx.iter().enumerate() {
            if let Some(i) = i {
                let w = get(src, b * maxbits + j * r as usize, r);
                out[*i] = T::from_word(w << (T::BITS - r));
            }
        }
    });
    Ok(())
}

fn put(out: &mut [u8], bit: usize, n: u32, w: u64) {
    for k in 0..n as usize {
        if w >> (n as usize - 1 - k) & 1 == 1 {
            let p = bit + k;
            out[p / 8] |= 1 << (p % 8);
        }
    }
}

fn get(src: &[u8], bit: usize, n: u32) -> u64 {
    let mut w = 0u64;
    for k in 0..n as usize {
        let p = bit + k;
        w = (w << 1) | u64::from(src[p / 8] >> (p % 8) & 1);
    }
    w
}

/// CUDA kernels of the same codec (NVRTC source).
pub mod cuda {
    use crate::program::Elem;

    pub fn kernel_name(encode: bool, elem: Elem, dims: usize) -> String {
        format!(
            "pacc_zfp_{}_{}_{}d",
            if encode { "encode" } else { "decode" },
            elem.rust_name(),
            dims
        )
    }

    /// One thread per block; `err` is set when a value is NaN or infinite.
    pub const SOURCE: &str = r#"
template <typename T, typename U, int BITS>
__device__ void pacc_fake_block(bool enc, T* v, unsigned long long* s, long long n0, long long n1,
    long long n2, int dims, unsigned int maxbits, unsigned int* err) {
  long long nb2 = (n2 + 3) / 4, nb1 = dims == 3 ? (n1 + 3) / 4 : 1, nb0 = (n0 + 3) / 4;
  long long b = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (b >= nb0 * nb1 * nb2) return;
  long long bx = b % nb2, by = (b / nb2) % nb1, bz = b / (nb2 * nb1);
  unsigned int r = (unsigned int)(maxbits / (dims == 3 ? 64 : 16));
  if (r > BITS) r = BITS;
  int ys = dims == 3 ? 4 : 1;
  unsigned long long bit = (unsigned long long)b * maxbits;
  if (enc) for (unsigned int k = 0; k < maxbits / 64; k++) s[bit / 64 + k] = 0;
  int j = 0;
  for (int dz = 0; dz < 4; dz++) for (int dy = 0; dy < ys; dy++) for (int dx = 0; dx < 4; dx++, j++) {
    long long z = 4 * bz + dz, y = dims == 3 ? 4 * by + dy : 0, x = 4 * bx + dx;
    long long ny = dims == 3 ? n1 : 1, nx = dims == 3 ? n2 : n1;
    bool in = z < n0 && y < ny && x < nx;
    long long i = (z * ny + y) * nx + x;
    unsigned long long p0 = bit + (unsigned long long)j * r;
    if (enc) {
      U w = 0;
      if (in) { T t = v[i]; if (!isfinite(t)) atomicOr(err, 1u); w = *(U*)&t; }
      unsigned long long q = (unsigned long long)(w >> (BITS - r));
      for (unsigned int k = 0; k < r; k++) if (q >> (r - 1 - k) & 1) {
        unsigned long long p = p0 + k;
        atomicOr(&s[p / 64], 1ull << ((p % 64) / 8 * 8 + (p % 8)));
      }
    } else if (in) {
      unsigned long long q = 0;
      for (unsigned int k = 0; k < r; k++) {
        unsigned long long p = p0 + k;
        q = (q << 1) | ((s[p / 64] >> ((p % 64) / 8 * 8 + (p % 8))) & 1);
      }
      U w = (U)(q << (BITS - r)); v[i] = *(T*)&w;
    }
  }
}
#define PACC_FAKE(E, T, U, B) \
extern "C" __global__ void pacc_zfp_encode_##E##_3d(const T* src, long long n0, long long n1, long long n2, unsigned long long* out, unsigned int maxbits, unsigned int* err) { pacc_fake_block<T, U, B>(true, (T*)src, out, n0, n1, n2, 3, maxbits, err); } \
extern "C" __global__ void pacc_zfp_decode_##E##_3d(const unsigned long long* src, long long n0, long long n1, long long n2, T* out, unsigned int maxbits, unsigned int* err) { pacc_fake_block<T, U, B>(false, out, (unsigned long long*)src, n0, n1, n2, 3, maxbits, err); } \
extern "C" __global__ void pacc_zfp_encode_##E##_2d(const T* src, long long n0, long long n1, unsigned long long* out, unsigned int maxbits, unsigned int* err) { pacc_fake_block<T, U, B>(true, (T*)src, out, n0, 1, n1, 2, maxbits, err); } \
extern "C" __global__ void pacc_zfp_decode_##E##_2d(const unsigned long long* src, long long n0, long long n1, T* out, unsigned int maxbits, unsigned int* err) { pacc_fake_block<T, U, B>(false, out, (unsigned long long*)src, n0, 1, n1, 2, maxbits, err); }
PACC_FAKE(f32, float, unsigned int, 32)
PACC_FAKE(f64, double, unsigned long long, 64)
"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_ranges_encode_alone_to_the_same_bytes() {
        let shape = [10usize, 5, 6];
        let v: Vec<f32> = (0..300).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut whole = vec![0u8; compressed_bytes(&shape, 16.0).unwrap()];
        encode(&v, &shape, 16.0, &mut whole).unwrap();
        let slab = slab_bytes(&shape[1..], 16.0).unwrap();
        let mut part = vec![0u8; compressed_bytes(&[6, 5, 6], 16.0).unwrap()];
        encode(&v[4 * 30..], &[6, 5, 6], 16.0, &mut part).unwrap();
        assert_eq!(&whole[slab..], &part[..]);
        let mut back = vec![0f32; 300];
        decode(&whole, &shape, 16.0, &mut back).unwrap();
        assert!(back.iter().zip(&v).all(|(a, b)| (a - b).abs() < 1e-2));
        assert!(back != v);
    }
}
