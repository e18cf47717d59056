//! CUDA C source of the fixed-rate zfp codec: the same bits as the CPU codec, a thread codes one
//! block at a time.
//!
//! Kernels (`extern "C"`, NVRTC-compilable, no includes):
//!
//! ```text
//! pacc_zfp_encode_{f32,f64}_2d(const T* src, long long n0, long long n1,
//!                              unsigned long long* out, unsigned int maxbits, unsigned int* err)
//! pacc_zfp_encode_{f32,f64}_3d(const T* src, long long n0, long long n1, long long n2,
//!                              unsigned long long* out, unsigned int maxbits, unsigned int* err)
//! pacc_zfp_decode_{f32,f64}_2d(const unsigned long long* src, long long n0, long long n1,
//!                              T* out, unsigned int maxbits)
//! pacc_zfp_decode_{f32,f64}_3d(const unsigned long long* src, long long n0, long long n1,
//!                              long long n2, T* out, unsigned int maxbits)
//! ```
//!
//! `n0` is the outermost (slowest) axis, as in the CPU API; thread `t = blockIdx.x * blockDim.x +
//! threadIdx.x` codes blocks `t, t + gridDim.x * blockDim.x, ..` in zfp order (x = last axis
//! fastest), so any grid codes every block (the executor sizes it, `cosched`); block
//! `b`'s bits are words
//! `b * maxbits / 64 ..` of the stream. **`maxbits` (= [`super::block_bits`]) must be a multiple
//! of 64**, so that threads never share a word and need no atomics; the host must check this
//! (e.g. integer rates in 3-D, multiples of 4 in 2-D) and fall back to the CPU codec otherwise.
//!
//! The encoder writes every word of its block (padding included), so `out` needs no clearing.
//! A NaN or infinity in a block makes its thread set `*err |= 1` and write nothing; the host
//! must check `err` and report [`ZfpError::NonFinite`] (find the index on the host).
//!
//! Compile without `--use_fast_math`/`--ftz=true`: tiny blocks need denormal arithmetic to get
//! zfp's bits. Block values, integers and coefficients stay in registers (all array indices are
//! compile-time constants after unrolling); the bit-plane coder stops when the block's budget is
//! spent, as zfp does, so low rates cost little.

use super::{block_bits, Zfp, ZfpError};
use crate::codec::{CodecError, CudaCoder, CudaLaunch, Rate};
use crate::program::Elem;

impl CudaCoder for Zfp {
    fn source(&self) -> &'static str {
        SOURCE
    }

    fn kernel(&self, encode: bool, elem: Elem, dims: usize) -> String {
        kernel_name(encode, elem, dims)
    }

    /// One thread per zfp block; `param` is the block's bits, which must be whole 64-bit words
    /// so that threads never share a word.
    fn launch(&self, shape: &[usize], rate: Rate) -> Result<CudaLaunch, CodecError> {
        let bits = block_bits(rate.bits(), shape.len())?;
        if bits % 64 != 0 || bits > u32::MAX as usize {
            return Err(ZfpError::GpuUnaligned {
                rate: rate.bits(),
                bits,
            }
            .into());
        }
        let inner = shape.get(1..).unwrap_or(&[]);
        Ok(CudaLaunch {
            threads_per_slab: inner.iter().map(|n| n.div_ceil(4)).product(),
            param: bits as u32,
        })
    }

    fn refusal(&self) -> &'static str {
        "the values to compress include NaN or infinity"
    }
}

/// The kernel for a direction, element type and dimensionality (2 or 3).
pub fn kernel_name(encode: bool, elem: Elem, dims: usize) -> String {
    format!(
        "pacc_zfp_{}_{}_{}d",
        if encode { "encode" } else { "decode" },
        elem.rust_name(),
        dims
    )
}

/// The CUDA C source of the codec kernels (see the module docs).
pub const SOURCE: &str = r##"
// ---- pacc fixed-rate zfp codec (zfp 1.0 stream format, 64-bit words, no header) ----

typedef unsigned long long pacc_u64;

// Bit writer over whole 64-bit words; bits fill each word from the LSB.
struct pacc_zw {
  pacc_u64* p;
  pacc_u64 buf;
  unsigned int bits;
};

// Appends the n (0..64) low bits of v; v must have no bits at or above n.
__device__ __forceinline__ void pacc_zw_bits(pacc_zw& w, pacc_u64 v, unsigned int n) {
  if (n == 0) return;
  w.buf |= v << w.bits;
  unsigned int t = w.bits + n;
  if (t >= 64) {
    *w.p++ = w.buf;
    t -= 64;
    w.buf = t ? (v >> (n - t)) : 0ull;
  }
  w.bits = t;
}

__device__ __forceinline__ unsigned int pacc_zw_bit(pacc_zw& w, unsigned int b) {
  w.buf |= (pacc_u64)b << w.bits;
  if (++w.bits == 64) {
    *w.p++ = w.buf;
    w.buf = 0;
    w.bits = 0;
  }
  return b;
}

// Bit reader over whole 64-bit words.
struct pacc_zr {
  const pacc_u64* p;
  pacc_u64 buf;
  unsigned int bits;
};

__device__ __forceinline__ unsigned int pacc_zr_bit(pacc_zr& r) {
  if (r.bits == 0) {
    r.buf = *r.p++;
    r.bits = 64;
  }
  unsigned int b = (unsigned int)(r.buf & 1u);
  r.buf >>= 1;
  r.bits--;
  return b;
}

// Reads n (0..64) bits.
__device__ __forceinline__ pacc_u64 pacc_zr_bits(pacc_zr& r, unsigned int n) {
  if (n == 0) return 0;
  pacc_u64 v;
  if (r.bits >= n) {
    v = r.buf;
    r.buf = n == 64 ? 0ull : r.buf >> n;
    r.bits -= n;
  } else {
    pacc_u64 w = *r.p++;
    v = r.buf | (w << r.bits);
    unsigned int used = n - r.bits;
    r.buf = used == 64 ? 0ull : w >> used;
    r.bits = 64 - used;
  }
  return n == 64 ? v : v & ((1ull << n) - 1);
}

__device__ __forceinline__ float pacc_pow2f(int k) {
  if (k >= -126) return __int_as_float((k + 127) << 23);
  if (k >= -149) return __int_as_float(1 << (k + 149));
  return 0.0f;
}

__device__ __forceinline__ double pacc_pow2d(int k) {
  if (k >= -1022) return __longlong_as_double((long long)(k + 1023) << 52);
  if (k >= -1074) return __longlong_as_double(1ll << (k + 1074));
  return 0.0;
}

template <typename F> struct pacc_zfp_type;

template <> struct pacc_zfp_type<float> {
  typedef int I;
  typedef unsigned int U;
  enum { EBITS = 8, EBIAS = 127, PREC = 32 };
  static __device__ __forceinline__ U mag(float v) { return __float_as_uint(v) & 0x7fffffffu; }
  static __device__ __forceinline__ bool nonfinite(U m) { return m >= 0x7f800000u; }
  // frexp exponent of the largest magnitude, at least 1 - EBIAS; -EBIAS for zero.
  static __device__ __forceinline__ int exponent(U m) {
    if (m == 0) return -127;
    int e = (int)(m >> 23) - 126;
    return e < -126 ? -126 : e;
  }
  // trunc(v * 2^(30 - emax)), exactly: a scale that overflows is applied in two steps.
  static __device__ __forceinline__ I quantize(float v, int emax) {
    int k = 30 - emax;
    float y = k > 127 ? (v * pacc_pow2f(k - 127)) * pacc_pow2f(127) : v * pacc_pow2f(k);
    return (I)y;
  }
  static __device__ __forceinline__ float dequantize(I i, int emax) {
    return (float)i * pacc_pow2f(emax - 30);
  }
  static __device__ __forceinline__ U nega(I x) { return ((U)x + 0xaaaaaaaau) ^ 0xaaaaaaaau; }
  static __device__ __forceinline__ I unnega(U u) { return (I)((u ^ 0xaaaaaaaau) - 0xaaaaaaaau); }
};

template <> struct pacc_zfp_type<double> {
  typedef long long I;
  typedef unsigned long long U;
  enum { EBITS = 11, EBIAS = 1023, PREC = 64 };
  static __device__ __forceinline__ U mag(double v) {
    return (U)__double_as_longlong(v) & 0x7fffffffffffffffull;
  }
  static __device__ __forceinline__ bool nonfinite(U m) { return m >= 0x7ff0000000000000ull; }
  static __device__ __forceinline__ int exponent(U m) {
    if (m == 0) return -1023;
    int e = (int)(m >> 52) - 1022;
    return e < -1022 ? -1022 : e;
  }
  static __device__ __forceinline__ I quantize(double v, int emax) {
    int k = 62 - emax;
    double y = k > 1023 ? (v * pacc_pow2d(k - 1023)) * pacc_pow2d(1023) : v * pacc_pow2d(k);
    return (I)y;
  }
  static __device__ __forceinline__ double dequantize(I i, int emax) {
    return (double)i * pacc_pow2d(emax - 62);
  }
  static __device__ __forceinline__ U nega(I x) {
    return ((U)x + 0xaaaaaaaaaaaaaaaaull) ^ 0xaaaaaaaaaaaaaaaaull;
  }
  static __device__ __forceinline__ I unnega(U u) {
    return (I)((u ^ 0xaaaaaaaaaaaaaaaaull) - 0xaaaaaaaaaaaaaaaaull);
  }
};

// Lifting steps; sums and left shifts wrap (done in the unsigned type), right shifts are
// arithmetic, as in zfp.
#define PACC_ADD(a, b) ((I)((U)(a) + (U)(b)))
#define PACC_SUB(a, b) ((I)((U)(a) - (U)(b)))
#define PACC_DBL(a) ((I)((U)(a) << 1))

template <typename I, typename U>
__device__ __forceinline__ void pacc_fwd_lift(I& x, I& y, I& z, I& w) {
  x = PACC_ADD(x, w); x >>= 1; w = PACC_SUB(w, x);
  z = PACC_ADD(z, y); z >>= 1; y = PACC_SUB(y, z);
  x = PACC_ADD(x, z); x >>= 1; z = PACC_SUB(z, x);
  w = PACC_ADD(w, y); w >>= 1; y = PACC_SUB(y, w);
  w = PACC_ADD(w, y >> 1); y = PACC_SUB(y, w >> 1);
}

template <typename I, typename U>
__device__ __forceinline__ void pacc_inv_lift(I& x, I& y, I& z, I& w) {
  y = PACC_ADD(y, w >> 1); w = PACC_SUB(w, y >> 1);
  y = PACC_ADD(y, w); w = PACC_DBL(w); w = PACC_SUB(w, y);
  z = PACC_ADD(z, x); x = PACC_DBL(x); x = PACC_SUB(x, z);
  y = PACC_ADD(y, z); z = PACC_DBL(z); z = PACC_SUB(z, y);
  w = PACC_ADD(w, x); x = PACC_DBL(x); x = PACC_SUB(x, w);
}

// zfp's sequency orders: P(i, j) lists coefficient j (at x + 4y + 16z) in position i.
#define PACC_ZFP_PERM2(P) \
  P(0, 0) P(1, 1) P(2, 4) P(3, 5) P(4, 2) P(5, 8) P(6, 6) P(7, 9) \
  P(8, 3) P(9, 12) P(10, 10) P(11, 7) P(12, 13) P(13, 11) P(14, 14) P(15, 15)
#define PACC_ZFP_PERM3(P) \
  P(0, 0) P(1, 1) P(2, 4) P(3, 16) P(4, 20) P(5, 17) P(6, 5) P(7, 2) \
  P(8, 8) P(9, 32) P(10, 21) P(11, 6) P(12, 18) P(13, 24) P(14, 9) P(15, 33) \
  P(16, 36) P(17, 3) P(18, 12) P(19, 48) P(20, 22) P(21, 25) P(22, 37) P(23, 40) \
  P(24, 34) P(25, 10) P(26, 7) P(27, 19) P(28, 28) P(29, 13) P(30, 49) P(31, 52) \
  P(32, 41) P(33, 38) P(34, 26) P(35, 23) P(36, 29) P(37, 53) P(38, 11) P(39, 35) \
  P(40, 44) P(41, 14) P(42, 50) P(43, 56) P(44, 42) P(45, 27) P(46, 39) P(47, 45) \
  P(48, 30) P(49, 54) P(50, 57) P(51, 60) P(52, 51) P(53, 15) P(54, 43) P(55, 46) \
  P(56, 58) P(57, 61) P(58, 55) P(59, 31) P(60, 62) P(61, 59) P(62, 47) P(63, 63)
#define PACC_FWD_P(i, j) u[i] = T::nega(q[j]);
#define PACC_INV_P(i, j) q[j] = T::unnega(u[i]);

template <int D> struct pacc_zfp_dim;

template <> struct pacc_zfp_dim<2> {
  enum { N = 16 };
  template <typename T, typename I, typename U>
  static __device__ __forceinline__ void fwd(I* q, U* u) {
#pragma unroll
    for (int y = 0; y < 4; y++) pacc_fwd_lift<I, U>(q[4 * y], q[4 * y + 1], q[4 * y + 2], q[4 * y + 3]);
#pragma unroll
    for (int x = 0; x < 4; x++) pacc_fwd_lift<I, U>(q[x], q[x + 4], q[x + 8], q[x + 12]);
    PACC_ZFP_PERM2(PACC_FWD_P)
  }
  template <typename T, typename I, typename U>
  static __device__ __forceinline__ void inv(const U* u, I* q) {
    PACC_ZFP_PERM2(PACC_INV_P)
#pragma unroll
    for (int x = 0; x < 4; x++) pacc_inv_lift<I, U>(q[x], q[x + 4], q[x + 8], q[x + 12]);
#pragma unroll
    for (int y = 0; y < 4; y++) pacc_inv_lift<I, U>(q[4 * y], q[4 * y + 1], q[4 * y + 2], q[4 * y + 3]);
  }
};

template <> struct pacc_zfp_dim<3> {
  enum { N = 64 };
  template <typename T, typename I, typename U>
  static __device__ __forceinline__ void fwd(I* q, U* u) {
#pragma unroll
    for (int r = 0; r < 16; r++) pacc_fwd_lift<I, U>(q[4 * r], q[4 * r + 1], q[4 * r + 2], q[4 * r + 3]);
#pragma unroll
    for (int z = 0; z < 4; z++)
#pragma unroll
      for (int x = 0; x < 4; x++) {
        int b = 16 * z + x;
        pacc_fwd_lift<I, U>(q[b], q[b + 4], q[b + 8], q[b + 12]);
      }
#pragma unroll
    for (int r = 0; r < 16; r++) pacc_fwd_lift<I, U>(q[r], q[r + 16], q[r + 32], q[r + 48]);
    PACC_ZFP_PERM3(PACC_FWD_P)
  }
  template <typename T, typename I, typename U>
  static __device__ __forceinline__ void inv(const U* u, I* q) {
    PACC_ZFP_PERM3(PACC_INV_P)
#pragma unroll
    for (int r = 0; r < 16; r++) pacc_inv_lift<I, U>(q[r], q[r + 16], q[r + 32], q[r + 48]);
#pragma unroll
    for (int z = 0; z < 4; z++)
#pragma unroll
      for (int x = 0; x < 4; x++) {
        int b = 16 * z + x;
        pacc_inv_lift<I, U>(q[b], q[b + 4], q[b + 8], q[b + 12]);
      }
#pragma unroll
    for (int r = 0; r < 16; r++) pacc_inv_lift<I, U>(q[4 * r], q[4 * r + 1], q[4 * r + 2], q[4 * r + 3]);
  }
};

// Padded block position i (0..3) to array offset when c (1..4) positions are valid, as zfp
// pads partial blocks: a -> a a a a, a b -> a b b a, a b c -> a b c a.
__device__ __forceinline__ long long pacc_pad(long long c, int i) {
  return i < c ? i : (c == 2 && i == 2 ? 1 : 0);
}

// Blocks of the array.
template <int D>
__device__ __forceinline__ long long pacc_zfp_blocks(long long nx, long long ny, long long nz) {
  return ((nx + 3) / 4) * ((ny + 3) / 4) * (D == 3 ? (nz + 3) / 4 : 1);
}

// First value of block b, in zfp order (x fastest).
__device__ __forceinline__ void pacc_zfp_origin(long long nx, long long ny, long long b,
                                                long long& x0, long long& y0, long long& z0) {
  long long nbx = (nx + 3) / 4, nby = (ny + 3) / 4;
  x0 = 4 * (b % nbx);
  y0 = 4 * ((b / nbx) % nby);
  z0 = 4 * (b / (nbx * nby));
}

// The grid strides over the blocks, so the executor may launch fewer threads than blocks and
// leave SMs to the stencil kernels running beside the codec.
#define PACC_ZFP_FOR_EACH_BLOCK(D, nx, ny, nz, b)                                        \
  for (long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x,                 \
                 pacc_n_ = pacc_zfp_blocks<D>(nx, ny, nz);                             \
       b < pacc_n_; b += (long long)gridDim.x * blockDim.x)

// zfp's encode_ints: bit planes from the top down to kmin, group tests, stop at the budget.
template <int N, typename U>
__device__ __forceinline__ unsigned int pacc_zfp_encode_ints(pacc_zw& w, unsigned int budget,
                                                              unsigned int prec, unsigned int kmin,
                                                              const U* u) {
  unsigned int bits = budget, n = 0, k = prec;
  while (bits && k > kmin) {
    k--;
    pacc_u64 x = 0;
#pragma unroll
    for (int i = 0; i < N; i++) x |= (pacc_u64)((u[i] >> k) & 1u) << i;
    unsigned int m = n < bits ? n : bits;
    bits -= m;
    if (m) {
      pacc_zw_bits(w, m == 64 ? x : x & ((1ull << m) - 1), m);
      x = m == 64 ? 0ull : x >> m;
    }
    while (n < N && bits) {
      bits--;
      if (!pacc_zw_bit(w, x != 0)) break;
      while (n < N - 1 && bits) {
        bits--;
        if (pacc_zw_bit(w, (unsigned int)(x & 1u))) break;
        x >>= 1;
        n++;
      }
      x >>= 1;
      n++;
    }
  }
  return budget - bits;
}

// zfp's decode_ints (mirrors the encoder, including where an exhausted budget stops a run).
template <int N, typename U>
__device__ __forceinline__ void pacc_zfp_decode_ints(pacc_zr& r, unsigned int budget,
                                                      unsigned int prec, unsigned int kmin, U* u) {
#pragma unroll
  for (int i = 0; i < N; i++) u[i] = 0;
  unsigned int bits = budget, n = 0, k = prec;
  while (bits && k > kmin) {
    k--;
    unsigned int m = n < bits ? n : bits;
    bits -= m;
    pacc_u64 x = pacc_zr_bits(r, m);
    while (n < N && bits) {
      bits--;
      if (!pacc_zr_bit(r)) break;
      while (n < N - 1 && bits) {
        bits--;
        if (pacc_zr_bit(r)) break;
        n++;
      }
      x += 1ull << n;
      n++;
    }
#pragma unroll
    for (int i = 0; i < N; i++) u[i] += (U)((x >> i) & 1u) << k;
  }
}

template <typename F, int D>
__device__ __forceinline__ void pacc_zfp_encode_block(const F* __restrict__ src, long long nx,
                                                      long long ny, long long nz,
                                                      pacc_u64* __restrict__ out,
                                                      unsigned int maxbits, unsigned int* err,
                                                      long long b) {
  typedef pacc_zfp_type<F> T;
  typedef typename T::I I;
  typedef typename T::U U;
  const int N = pacc_zfp_dim<D>::N;
  long long x0, y0, z0;
  pacc_zfp_origin(nx, ny, b, x0, y0, z0);
  long long cx = nx - x0 < 4 ? nx - x0 : 4;
  long long cy = ny - y0 < 4 ? ny - y0 : 4;
  long long cz = D == 3 ? (nz - z0 < 4 ? nz - z0 : 4) : 1;
  F f[N];
#pragma unroll
  for (int z = 0; z < (D == 3 ? 4 : 1); z++)
#pragma unroll
    for (int y = 0; y < 4; y++) {
      const F* row = src + ((z0 + pacc_pad(cz, z)) * ny + y0 + pacc_pad(cy, y)) * nx + x0;
#pragma unroll
      for (int x = 0; x < 4; x++) f[16 * z + 4 * y + x] = row[pacc_pad(cx, x)];
    }
  U mx = 0;
#pragma unroll
  for (int i = 0; i < N; i++) {
    U m = T::mag(f[i]);
    mx = m > mx ? m : mx;
  }
  if (T::nonfinite(mx)) {
    atomicOr(err, 1u);
    return;
  }
  pacc_zw w;
  w.p = out + (unsigned long long)b * (maxbits / 64);
  w.buf = 0;
  w.bits = 0;
  pacc_u64* end = w.p + maxbits / 64;
  int emax = T::exponent(mx);
  int maxprec = emax + 1074 + 2 * (D + 1);
  maxprec = maxprec < 0 ? 0 : (maxprec > 64 ? 64 : maxprec);
  if (mx != 0 && maxprec != 0) {
    // Header: 1, then the biased exponent.
    pacc_zw_bits(w, 2ull * (pacc_u64)(emax + T::EBIAS) + 1ull, 1 + T::EBITS);
    I q[N];
#pragma unroll
    for (int i = 0; i < N; i++) q[i] = T::quantize(f[i], emax);
    U u[N];
    pacc_zfp_dim<D>::template fwd<T, I, U>(q, u);
    unsigned int kmin = T::PREC > maxprec ? T::PREC - maxprec : 0;
    pacc_zfp_encode_ints<N, U>(w, maxbits - 1 - T::EBITS, T::PREC, kmin, u);
  }
  // Zero block (a single 0 bit) or coefficients: flush and zero-pad to maxbits.
  if (w.bits) *w.p++ = w.buf;
  while (w.p < end) *w.p++ = 0ull;
}

template <typename F, int D>
__device__ __forceinline__ void pacc_zfp_decode_block(const pacc_u64* __restrict__ src,
                                                      long long nx, long long ny, long long nz,
                                                      F* __restrict__ out, unsigned int maxbits,
                                                      long long b) {
  typedef pacc_zfp_type<F> T;
  typedef typename T::I I;
  typedef typename T::U U;
  const int N = pacc_zfp_dim<D>::N;
  long long x0, y0, z0;
  pacc_zfp_origin(nx, ny, b, x0, y0, z0);
  long long cx = nx - x0 < 4 ? nx - x0 : 4;
  long long cy = ny - y0 < 4 ? ny - y0 : 4;
  long long cz = D == 3 ? (nz - z0 < 4 ? nz - z0 : 4) : 1;
  pacc_zr r;
  r.p = src + (unsigned long long)b * (maxbits / 64);
  r.buf = 0;
  r.bits = 0;
  F f[N];
  if (!pacc_zr_bit(r)) {
#pragma unroll
    for (int i = 0; i < N; i++) f[i] = (F)0;
  } else {
    int emax = (int)pacc_zr_bits(r, T::EBITS) - T::EBIAS;
    int maxprec = emax + 1074 + 2 * (D + 1);
    maxprec = maxprec < 0 ? 0 : (maxprec > 64 ? 64 : maxprec);
    unsigned int kmin = T::PREC > maxprec ? T::PREC - maxprec : 0;
    U u[N];
    pacc_zfp_decode_ints<N, U>(r, maxbits - 1 - T::EBITS, T::PREC, kmin, u);
    I q[N];
    pacc_zfp_dim<D>::template inv<T, I, U>(u, q);
#pragma unroll
    for (int i = 0; i < N; i++) f[i] = T::dequantize(q[i], emax);
  }
#pragma unroll
  for (int z = 0; z < (D == 3 ? 4 : 1); z++)
#pragma unroll
    for (int y = 0; y < 4; y++)
      if (z < cz && y < cy) {
        F* row = out + ((z0 + z) * ny + y0 + y) * nx + x0;
#pragma unroll
        for (int x = 0; x < 4; x++)
          if (x < cx) row[x] = f[16 * z + 4 * y + x];
      }
}

template <typename F, int D>
__device__ __forceinline__ void pacc_zfp_encode(const F* __restrict__ src, long long nx,
                                                long long ny, long long nz,
                                                pacc_u64* __restrict__ out, unsigned int maxbits,
                                                unsigned int* err) {
  PACC_ZFP_FOR_EACH_BLOCK(D, nx, ny, nz, b)
  pacc_zfp_encode_block<F, D>(src, nx, ny, nz, out, maxbits, err, b);
}

template <typename F, int D>
__device__ __forceinline__ void pacc_zfp_decode(const pacc_u64* __restrict__ src, long long nx,
                                                long long ny, long long nz, F* __restrict__ out,
                                                unsigned int maxbits) {
  PACC_ZFP_FOR_EACH_BLOCK(D, nx, ny, nz, b)
  pacc_zfp_decode_block<F, D>(src, nx, ny, nz, out, maxbits, b);
}

extern "C" __global__ void pacc_zfp_encode_f32_2d(const float* src, long long n0, long long n1,
                                                  unsigned long long* out, unsigned int maxbits,
                                                  unsigned int* err) {
  pacc_zfp_encode<float, 2>(src, n1, n0, 1, out, maxbits, err);
}
extern "C" __global__ void pacc_zfp_encode_f64_2d(const double* src, long long n0, long long n1,
                                                  unsigned long long* out, unsigned int maxbits,
                                                  unsigned int* err) {
  pacc_zfp_encode<double, 2>(src, n1, n0, 1, out, maxbits, err);
}
extern "C" __global__ void pacc_zfp_encode_f32_3d(const float* src, long long n0, long long n1,
                                                  long long n2, unsigned long long* out,
                                                  unsigned int maxbits, unsigned int* err) {
  pacc_zfp_encode<float, 3>(src, n2, n1, n0, out, maxbits, err);
}
extern "C" __global__ void pacc_zfp_encode_f64_3d(const double* src, long long n0, long long n1,
                                                  long long n2, unsigned long long* out,
                                                  unsigned int maxbits, unsigned int* err) {
  pacc_zfp_encode<double, 3>(src, n2, n1, n0, out, maxbits, err);
}
extern "C" __global__ void pacc_zfp_decode_f32_2d(const unsigned long long* src, long long n0,
                                                  long long n1, float* out,
                                                  unsigned int maxbits) {
  pacc_zfp_decode<float, 2>(src, n1, n0, 1, out, maxbits);
}
extern "C" __global__ void pacc_zfp_decode_f64_2d(const unsigned long long* src, long long n0,
                                                  long long n1, double* out,
                                                  unsigned int maxbits) {
  pacc_zfp_decode<double, 2>(src, n1, n0, 1, out, maxbits);
}
extern "C" __global__ void pacc_zfp_decode_f32_3d(const unsigned long long* src, long long n0,
                                                  long long n1, long long n2, float* out,
                                                  unsigned int maxbits) {
  pacc_zfp_decode<float, 3>(src, n2, n1, n0, out, maxbits);
}
extern "C" __global__ void pacc_zfp_decode_f64_3d(const unsigned long long* src, long long n0,
                                                  long long n1, long long n2, double* out,
                                                  unsigned int maxbits) {
  pacc_zfp_decode<double, 3>(src, n2, n1, n0, out, maxbits);
}
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_cuda_kernel_names_are_in_the_source() {
        for encode in [true, false] {
            for elem in [Elem::F32, Elem::F64] {
                for dims in [2, 3] {
                    let name = kernel_name(encode, elem, dims);
                    assert!(SOURCE.contains(&format!("void {name}(")), "{name} missing");
                }
            }
        }
        assert!(!SOURCE.contains("#include"));
    }
}
