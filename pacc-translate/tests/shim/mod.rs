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
