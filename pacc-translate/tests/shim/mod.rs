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

/// The emulation tests' thread model: a host thread per CUDA thread, a
/// barrier per `__syncthreads()`, blocks one after another; and `differ`, which counts the
/// elements of two buffers whose bits differ (columns below `nx` of rows `rp` long).
#[allow(dead_code)] // the emulation tests only
pub const THREAD_MODEL: &str = r#"
#include <barrier>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
static pacc_dim3 blockIdx, blockDim, gridDim;
static thread_local pacc_dim3 threadIdx;
static std::barrier<>* pacc_bar;
static inline void __syncthreads() { pacc_bar->arrive_and_wait(); }
static void launch(pacc_dim3 grid, pacc_dim3 block, const std::function<void()>& k) {
    gridDim = grid; blockDim = block;
    const unsigned nt = block.x * block.y;
    for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = {bx, by, bz};
        std::barrier<> bar(nt);
        pacc_bar = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < nt; ++t)
            ts.emplace_back([&, t] { threadIdx = {t % block.x, t / block.x, 0}; k(); });
        for (auto& t : ts) t.join();
    }
}
template <class T> static long long differ(const std::vector<T>& a, const std::vector<T>& b, long long nx, long long rp) {
    long long d = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if ((long long)(i % rp) < nx) d += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
    return d;
}
"#;

/// Compiles `code` with g++ as `dir/name` (under AddressSanitizer if `asan`), runs it and
/// returns what it printed, asserting that both steps succeeded.
#[allow(dead_code)] // the syntax check only parses
pub fn compile_and_run(dir: &std::path::Path, name: &str, code: &str, asan: bool) -> String {
    try_compile_and_run(dir, name, code, asan).unwrap_or_else(|e| panic!("{e}"))
}

/// As [`compile_and_run`], returning a failure as `Err` with g++'s or the program's output.
/// FMA contraction is off, so a kernel's arithmetic rounds as its source says.
#[allow(dead_code)] // the syntax check only parses
pub fn try_compile_and_run(
    dir: &std::path::Path,
    name: &str,
    code: &str,
    asan: bool,
) -> Result<String, String> {
    let cpp = dir.join(format!("{name}.cpp"));
    std::fs::write(&cpp, code).unwrap();
    let exe = dir.join(name);
    let out = std::process::Command::new("g++")
        .args([
            "-std=c++20",
            "-O1",
            "-ffp-contract=off",
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
    if !out.status.success() {
        return Err(format!(
            "{name}: g++ failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = std::process::Command::new(&exe).output().unwrap();
    let said = String::from_utf8_lossy(&run.stdout).into_owned();
    if !run.status.success() {
        return Err(format!(
            "{name}: {said}{}",
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    Ok(said)
}
