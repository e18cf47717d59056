//! The CUDA built-ins the generated source uses, as C++ for g++ (shared by the syntax check and
//! the emulator, which add their own thread model).

/// Qualifiers, vector types and their constructors.
pub const CUDA_TYPES: &str = r#"
#include <cmath>
#define __global__
#define __device__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__ __restrict
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static inline double2 make_double2(double x, double y) { return {x, y}; }
struct pacc_dim3 { unsigned int x, y, z; };
using std::min; using std::max; using std::abs;
"#;

/// Compiles `code` with g++ as `dir/name` (under AddressSanitizer if `asan`), runs it and
/// returns what it printed, asserting that both steps succeeded.
#[allow(dead_code)] // the syntax check only parses
pub fn compile_and_run(dir: &std::path::Path, name: &str, code: &str, asan: bool) -> String {
    let cpp = dir.join(format!("{name}.cpp"));
    std::fs::write(&cpp, code).unwrap();
    let exe = dir.join(name);
    let out = std::process::Command::new("g++")
        .args([
            "-std=c++20",
            "-O1",
            "-fno-strict-aliasing",
            "-pthread",
            "-w",
        ])
        .args(asan.then_some("-fsanitize=address"))
        .arg("-o")
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: g++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    let said = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{name}: {said}");
    said
}
