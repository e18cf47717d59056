//! The CUDA sources of the codecs, compiled as C++ with g++ and run on the CPU (one call per
//! GPU thread of a small grid, which strides over the zfp blocks or f16 values), must produce
//! the same bits as the Rust coders. This checks the kernels' logic without a GPU;
//! NVRTC-specific syntax is kept to what the shim below defines. Skipped, saying why, when g++ is absent.

use pacc_runtime::codec::{CodecKind, Rate, Value};
use pacc_runtime::rng::XorShift64;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
struct pacc_dim3 { unsigned int x, y, z; };
static pacc_dim3 blockIdx, threadIdx, blockDim, gridDim;
// The drivers launch a grid of PACC_GRID one-thread blocks, fewer than the units to code, so
// the kernels' grid-stride loops must reach every unit.
static const unsigned int PACC_GRID = 5;
static inline unsigned int atomicOr(unsigned int* p, unsigned int v) { unsigned int o = *p; *p = o | v; return o; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline long long __double_as_longlong(double d) { long long l; std::memcpy(&l, &d, 8); return l; }
static inline double __longlong_as_double(long long l) { double d; std::memcpy(&d, &l, 8); return d; }
"#;

/// The drivers' file I/O: read a whole file, write a buffer.
const FILE_IO: &str = r#"
static std::vector<char> slurp(const char* path) {
  std::vector<char> v;
  FILE* f = std::fopen(path, "rb");
  if (!f) { std::perror(path); std::exit(2); }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}
static void spit(const char* path, const void* p, size_t n) {
  FILE* f = std::fopen(path, "wb");
  if (!f || std::fwrite(p, 1, n, f) != n) { std::perror(path); std::exit(2); }
  std::fclose(f);
}
"#;

const MAIN: &str = r#"
// usage: enc|dec f32|f64 maxbits in out n0 n1 [n2]
int main(int argc, char** argv) {
  if (argc < 8) return 2;
  bool enc = argv[1][0] == 'e';
  bool f64 = std::strcmp(argv[2], "f64") == 0;
  unsigned int maxbits = (unsigned int)std::atoi(argv[3]);
  int dims = argc - 6;
  long long n[3] = {1, 1, 1};
  for (int i = 0; i < dims; i++) n[i] = std::atoll(argv[6 + i]);
  long long nx = n[dims - 1], ny = n[dims - 2], nz = dims == 3 ? n[0] : 1;
  long long blocks = ((nx + 3) / 4) * ((ny + 3) / 4) * ((nz + 3) / 4);
  long long values = nx * ny * nz;
  std::vector<char> in = slurp(argv[4]);
  blockDim.x = 1;
  gridDim.x = PACC_GRID;
  threadIdx.x = 0;
  unsigned int err = 0;
  if (enc) {
    std::vector<unsigned long long> out(blocks * maxbits / 64, 0x0123456789abcdefull);
    for (long long b = 0; b < PACC_GRID; b++) {
      blockIdx.x = (unsigned int)b;
      if (f64 && dims == 2) pacc_zfp_encode_f64_2d((const double*)in.data(), n[0], n[1], out.data(), maxbits, &err);
      if (f64 && dims == 3) pacc_zfp_encode_f64_3d((const double*)in.data(), n[0], n[1], n[2], out.data(), maxbits, &err);
      if (!f64 && dims == 2) pacc_zfp_encode_f32_2d((const float*)in.data(), n[0], n[1], out.data(), maxbits, &err);
      if (!f64 && dims == 3) pacc_zfp_encode_f32_3d((const float*)in.data(), n[0], n[1], n[2], out.data(), maxbits, &err);
    }
    if (err) { std::printf("NONFINITE\n"); return 3; }
    spit(argv[5], out.data(), out.size() * 8);
  } else {
    std::vector<unsigned long long> src(in.size() / 8);
    std::memcpy(src.data(), in.data(), src.size() * 8);
    size_t size = f64 ? 8 : 4;
    std::vector<char> out(values * size, (char)0x77);
    for (long long b = 0; b < PACC_GRID; b++) {
      blockIdx.x = (unsigned int)b;
      if (f64 && dims == 2) pacc_zfp_decode_f64_2d(src.data(), n[0], n[1], (double*)out.data(), maxbits);
      if (f64 && dims == 3) pacc_zfp_decode_f64_3d(src.data(), n[0], n[1], n[2], (double*)out.data(), maxbits);
      if (!f64 && dims == 2) pacc_zfp_decode_f32_2d(src.data(), n[0], n[1], (float*)out.data(), maxbits);
      if (!f64 && dims == 3) pacc_zfp_decode_f32_3d(src.data(), n[0], n[1], n[2], (float*)out.data(), maxbits);
    }
    spit(argv[5], out.data(), out.size());
  }
  return 0;
}
"#;

/// Compiles `kind`'s kernels plus the file I/O and the driver `main`; None (with the reason printed) without g++.
fn build(dir: &Path, kind: CodecKind, main: &str) -> Option<PathBuf> {
    if Command::new("g++").arg("--version").output().is_err() {
        eprintln!("skipping the CPU run of the CUDA {kind} codec: g++ is not installed");
        return None;
    }
    let src = dir.join(format!("{kind}_cuda.cpp"));
    let source = kind.get().cuda().unwrap().source();
    std::fs::write(&src, format!("{SHIM}\n{source}\n{FILE_IO}\n{main}")).unwrap();
    let exe = dir.join(format!("{kind}_cuda"));
    let out = Command::new("g++")
        .args([
            "-O1",
            "-std=c++14",
            "-Wall",
            "-Wno-unknown-pragmas",
            "-x",
            "c++",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "g++ rejected or warned about the CUDA codec source:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

trait Raw: Value + Default + std::fmt::Debug {
    const NAME: &'static str;
    fn from_f64(v: f64) -> Self;
    fn to_le(self) -> Vec<u8>;
    fn from_le(b: &[u8]) -> Self;
    fn bits(self) -> u64;
}
impl Raw for f32 {
    const NAME: &'static str = "f32";
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_le(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().unwrap())
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Raw for f64 {
    const NAME: &'static str = "f64";
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_le(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().unwrap())
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

fn values<T: Raw>(n: usize, kind: u32) -> Vec<T> {
    let mut g = XorShift64(0x2545_f491_4f6c_dd1d ^ kind as u64);
    (0..n)
        .map(|i| {
            let r = g.unit() - 0.5;
            let smooth = (0.21 * i as f64).sin() + 0.01 * i as f64;
            T::from_f64(match kind {
                0 => smooth,
                1 => r,
                2 if i % 50 < 20 => 0.0,
                2 => r * 10f64.powi((i % 13) as i32 - 6),
                3 => r * 1e-39,  // f32 denormals, tiny f64
                4 => r * 1e-311, // f64 denormals (zero in f32)
                _ => 0.0,
            })
        })
        .collect()
}

fn run(exe: &Path, dir: &Path, args: &[String], input: &[u8]) -> (bool, Vec<u8>) {
    let inp = dir.join("in.bin");
    let outp = dir.join("out.bin");
    std::fs::write(&inp, input).unwrap();
    let _ = std::fs::remove_file(&outp);
    let st = Command::new(exe)
        .args(&args[..3])
        .arg(&inp)
        .arg(&outp)
        .args(&args[3..])
        .status()
        .unwrap();
    if st.code() == Some(3) {
        return (false, Vec::new());
    }
    assert!(st.success(), "driver failed: {st}");
    (true, std::fs::read(&outp).unwrap())
}

fn check<T: Raw>(exe: &Path, dir: &Path, shape: &[usize], rate: f64, kind: u32) {
    let n: usize = shape.iter().product();
    let src: Vec<T> = values(n, kind);
    let zfp = CodecKind::Zfp.get();
    let r = Rate::new(rate).unwrap();
    let maxbits = zfp.cuda().unwrap().launch(shape, r).unwrap().param as usize;
    assert_eq!(maxbits % 64, 0);
    let mut ours = vec![0u8; zfp.compressed_bytes(shape, r).unwrap()];
    zfp.encode(T::values(&src), shape, r, &mut ours).unwrap();
    let dims: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    let what = format!("{} {shape:?} rate {rate} kind {kind}", T::NAME);
    let mut args = vec!["enc".to_string(), T::NAME.to_string(), maxbits.to_string()];
    args.extend(dims.iter().cloned());
    let raw: Vec<u8> = src.iter().flat_map(|v| v.to_le()).collect();
    let (ok, theirs) = run(exe, dir, &args, &raw);
    assert!(ok, "{what}: kernel reported a non-finite value");
    assert_eq!(theirs.len(), ours.len(), "{what}: stream size");
    if let Some(at) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
        panic!(
            "{what}: CUDA encoder differs at byte {at} (block {})",
            at * 8 / maxbits
        );
    }
    let mut back = vec![T::default(); n];
    zfp.decode(&ours, shape, r, T::values_mut(&mut back))
        .unwrap();
    args[0] = "dec".into();
    let (_, dec) = run(exe, dir, &args, &ours);
    let size = std::mem::size_of::<T>();
    for (i, v) in back.iter().enumerate() {
        let g = T::from_le(&dec[i * size..(i + 1) * size]);
        assert_eq!(
            g.bits(),
            v.bits(),
            "{what}: CUDA decoder differs at value {i}"
        );
    }
}

#[test]
fn codec_cuda_source_matches_rust_codec_on_cpu() {
    let dir = std::env::temp_dir().join(format!("pacc-zfp-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(exe) = build(&dir, CodecKind::Zfp, MAIN) else {
        return;
    };
    for kind in 0..5 {
        for shape in [&[9usize, 5, 11][..], &[8, 8, 4]] {
            for rate in [8.0, 16.0, 24.0] {
                check::<f32>(&exe, &dir, shape, rate, kind);
                check::<f64>(&exe, &dir, shape, rate, kind);
            }
        }
        for shape in [&[13usize, 6][..], &[8, 8]] {
            for rate in [8.0, 16.0] {
                check::<f32>(&exe, &dir, shape, rate, kind);
                check::<f64>(&exe, &dir, shape, rate, kind);
            }
        }
    }
    // Rates past lossless (every bit plane coded) and the smallest word-sized 3-D budget.
    check::<f64>(&exe, &dir, &[5, 6, 7], 64.0, 1);
    check::<f32>(&exe, &dir, &[5, 6, 7], 1.0, 0);
    // A NaN sets the error flag.
    let mut src: Vec<f32> = values(4 * 4 * 5, 0);
    src[33] = f32::NAN;
    let raw: Vec<u8> = src.iter().flat_map(|v| v.to_le()).collect();
    let args: Vec<String> = ["enc", "f32", "512", "4", "4", "5"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(!run(&exe, &dir, &args, &raw).0, "NaN not flagged");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The f16 kernels' driver: `enc|dec f32 16 in out n0 n1 [n2]` (the zfp driver's form), one
/// call per value.
const MAIN_F16: &str = r#"
int main(int argc, char** argv) {
  if (argc < 8) return 2;
  bool enc = argv[1][0] == 'e';
  int dims = argc - 6;
  long long n[3] = {1, 1, 1};
  for (int i = 0; i < dims; i++) n[i] = std::atoll(argv[6 + i]);
  long long values = n[0] * n[1] * n[2];
  std::vector<char> in = slurp(argv[4]);
  blockDim.x = 1;
  gridDim.x = PACC_GRID;
  threadIdx.x = 0;
  unsigned int err = 0;
  if (enc) {
    std::vector<unsigned long long> out((values * 2 + 7) / 8, 0x0123456789abcdefull);
    for (long long i = 0; i < PACC_GRID; i++) {
      blockIdx.x = (unsigned int)i;
      if (dims == 2) pacc_f16_encode_f32_2d((const float*)in.data(), n[0], n[1], out.data(), 16, &err);
      if (dims == 3) pacc_f16_encode_f32_3d((const float*)in.data(), n[0], n[1], n[2], out.data(), 16, &err);
    }
    if (err) { std::printf("OUT OF RANGE\n"); return 3; }
    spit(argv[5], out.data(), values * 2);
  } else {
    std::vector<unsigned long long> src((in.size() + 7) / 8);
    std::memcpy(src.data(), in.data(), in.size());
    std::vector<float> out(values, 7.0f);
    for (long long i = 0; i < PACC_GRID; i++) {
      blockIdx.x = (unsigned int)i;
      if (dims == 2) pacc_f16_decode_f32_2d(src.data(), n[0], n[1], out.data(), 16);
      if (dims == 3) pacc_f16_decode_f32_3d(src.data(), n[0], n[1], n[2], out.data(), 16);
    }
    spit(argv[5], out.data(), values * 4);
  }
  return 0;
}
"#;

/// f32 values at f16's edges: signed zeros, the subnormal boundaries and ties, the rounding
/// ties of normals, the largest finite value and just below the overflow threshold, then
/// random bit patterns across f16's range.
fn f16_edge_values(n: usize) -> Vec<f32> {
    let p = |k: i32| 2f32.powi(k);
    let mut v = vec![
        0.0,
        -0.0,
        p(-25),
        -p(-25),
        f32::from_bits(0x3300_0001),
        p(-24),
        1.5 * p(-24),
        2.5 * p(-24),
        p(-14) - p(-24),
        p(-14) - p(-25),
        p(-14) - p(-26),
        p(-14),
        1.0,
        1.0 + p(-11),
        1.0 + 3.0 * p(-11),
        -(1.0 + p(-11)),
        65504.0,
        -65504.0,
        65519.996,
        f32::MIN_POSITIVE,
        1e-40,
    ];
    let mut g = XorShift64(0x2545_f491_4f6c_dd1d);
    while v.len() < n {
        let s = g.next_u64();
        let e = 100 + (s >> 40) as u32 % 43;
        v.push(f32::from_bits(((s as u32) & 0x807f_ffff) | (e << 23)));
    }
    v.truncate(n);
    v
}

fn f16_check(exe: &Path, dir: &Path, shape: &[usize]) {
    let f16 = CodecKind::F16.get();
    let r = Rate::new(16.0).unwrap();
    let n: usize = shape.iter().product();
    let src = f16_edge_values(n);
    let mut ours = vec![0u8; f16.compressed_bytes(shape, r).unwrap()];
    f16.encode(f32::values(&src), shape, r, &mut ours).unwrap();
    let mut args: Vec<String> = ["enc", "f32", "16"].map(String::from).to_vec();
    args.extend(shape.iter().map(|s| s.to_string()));
    let raw: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
    let (ok, theirs) = run(exe, dir, &args, &raw);
    assert!(ok, "{shape:?}: the kernel refused a value in range");
    if let Some(at) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
        panic!(
            "{shape:?}: CUDA f16 encoder differs at value {} ({:e})",
            at / 2,
            src[at / 2]
        );
    }
    assert_eq!(theirs.len(), ours.len(), "{shape:?}: stream size");
    let mut back = vec![0f32; n];
    f16.decode(&ours, shape, r, f32::values_mut(&mut back))
        .unwrap();
    args[0] = "dec".into();
    let (_, dec) = run(exe, dir, &args, &ours);
    for (i, v) in back.iter().enumerate() {
        let g = f32::from_le_bytes(dec[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(
            g.to_bits(),
            v.to_bits(),
            "{shape:?}: CUDA f16 decoder differs at value {i}"
        );
        // Round to nearest: within half a unit of the last place (2^-11 relative for normals,
        // 2^-25 absolute for subnormals).
        let tol = (src[i].abs() * 2f32.powi(-11)).max(2f32.powi(-25));
        assert!(
            (v - src[i]).abs() <= tol,
            "value {i}: {:e} -> {v:e}",
            src[i]
        );
    }
}

#[test]
fn f16_cuda_source_matches_rust_codec_on_cpu() {
    let dir = std::env::temp_dir().join(format!("pacc-f16-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(exe) = build(&dir, CodecKind::F16, MAIN_F16) else {
        return;
    };
    for shape in [&[7usize, 5, 11][..], &[8, 8, 4], &[13, 6], &[1, 1000]] {
        f16_check(&exe, &dir, shape);
    }
    // Values f16 cannot hold set the error flag, as the CPU coder refuses them.
    for bad in [65520.0f32, -1e6, f32::INFINITY, f32::NAN] {
        let mut src = f16_edge_values(24);
        src[9] = bad;
        let raw: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
        let args: Vec<String> = ["enc", "f32", "16", "4", "6"].map(String::from).to_vec();
        assert!(!run(&exe, &dir, &args, &raw).0, "{bad} not flagged");
        let mut out = vec![0u8; 48];
        let r = Rate::new(16.0).unwrap();
        let e = (CodecKind::F16.get())
            .encode(f32::values(&src), &[4, 6], r, &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("index 9"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
