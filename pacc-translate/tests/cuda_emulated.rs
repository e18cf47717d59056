//! The generated marching kernels, run on the CPU: every CUDA thread of a block is a host
//! thread, `__syncthreads()` a barrier, blocks run one after another (so `__shared__` statics
//! are the block's shared memory). Each form (staged and L1, one to three rows per thread)
//! must write the plain kernel's bits, with rows padded (`pacc_rp` > `n2`) and a segment
//! boundary inside the planes. Catches wrong indices, guards and ring turns without a GPU.
//! Skipped, saying why, when `g++` is absent.

const SRC: &str = r#"
#[pacc::pipeline]
fn emu(a: &mut Array3<f32>, b: &mut Array3<f32>, c: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut s: f32 = 0.0;
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 2 {
                for x in 2..nx - 1 {
                    b[[z, y, x]] = 0.5 * a[[z, y, x]]
                        + 0.1 * (a[[z - 1, y, x]] + a[[z + 1, y, x]] + a[[z, y - 1, x]]
                            + a[[z, y + 2, x]] + a[[z, y, x - 2]] + a[[z, y, x + 1]])
                            * c[[z, y, x]];
                    s += b[[z, y, x]];
                }
            }
        }
        std::mem::swap(a, b);
    }
    s
}
"#;

const SHIM: &str = r#"
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#define __global__
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__ __restrict
struct pacc_dim3 { unsigned int x, y, z; };
static pacc_dim3 blockIdx, blockDim, gridDim;
static thread_local pacc_dim3 threadIdx;
static std::barrier<>* pacc_bar;
static inline void __syncthreads() { pacc_bar->arrive_and_wait(); }
using std::min; using std::max; using std::abs;
"#;

/// Runs every block of a launch, each with one host thread per CUDA thread.
const HARNESS: &str = r#"
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

int main() {
    const long long NZ = 13, NY = 11, NX = 21, RP = 24, N = NZ * NY * RP;
    std::vector<float> a(N), c(N), b1(N, 0.0f), b2(N, 0.0f);
    for (long long i = 0; i < N; ++i) {
        a[i] = (float)((i * 7) % 29) * 0.03f;
        c[i] = 0.2f + (float)((i * 3) % 11) * 0.01f;
    }
    std::vector<double> r1(4096, 0.0), r2(4096, 0.0);
    const long long z0 = 1, z1 = NZ - 1;
    // Plain: one thread per point, 8 x 4 blocks, one plane per grid slice.
    launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(z1 - z0)}, {8, 4, 1}, [&] {
        pacc_emu_k0_plain(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, a.data(), b1.data(), c.data(), r1.data());
    });
    // Marching: segments of 4 planes, PACC_RY rows per thread.
    const long long seg = 4, nseg = (z1 - z0 + seg - 1) / seg;
    launch({(unsigned)((NX + PACC_BX - 1) / PACC_BX), (unsigned)((NY + PACC_BY * PACC_RY - 1) / (PACC_BY * PACC_RY)), (unsigned)nseg},
           {PACC_BX, PACC_BY, 1}, [&] {
        pacc_emu_k0(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, seg, a.data(), b2.data(), c.data(), r2.data());
    });
    long long differ = 0, written = 0;
    for (long long i = 0; i < N; ++i) {
        differ += std::memcmp(&b1[i], &b2[i], sizeof(float)) != 0;
        written += b1[i] != 0.0f;
    }
    double s1 = 0, s2 = 0;
    for (double v : r1) s1 += v;
    for (double v : r2) s2 += v;
    std::printf("differ %lld written %lld sums %.9g %.9g\n", differ, written, s1, s2);
    return differ == 0 && written > 500 && std::fabs(s1 - s2) <= 1e-4 * std::fabs(s1) ? 0 : 1;
}
"#;

fn gxx() -> bool {
    std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok()
}

#[test]
fn marching_forms_write_the_plain_kernels_bits_on_the_cpu() {
    if !gxx() {
        eprintln!("skipping the emulated kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SRC, None).unwrap().remove(0);
    let dir = std::env::temp_dir().join(format!("pacc-cuda-emulated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // (PACC_STAGE, PACC_RY, PACC_BX, PACC_BY): the staged and the L1 form, one to three rows.
    for (stage, ry, bx, by) in [
        (1, 1, 8, 4),
        (1, 2, 8, 4),
        (1, 3, 4, 4),
        (0, 1, 8, 4),
        (0, 3, 8, 2),
    ] {
        let name = format!("s{stage}-ry{ry}-{bx}x{by}");
        let defs = format!(
            "#define PACC_STAGE {stage}\n#define PACC_RY {ry}\n#define PACC_BX {bx}\n#define PACC_BY {by}\n"
        );
        let cpp = dir.join(format!("{name}.cpp"));
        std::fs::write(&cpp, format!("{defs}{SHIM}\n{}\n{HARNESS}", e.cuda)).unwrap();
        let exe = dir.join(&name);
        let out = std::process::Command::new("g++")
            .args(["-std=c++20", "-O1", "-pthread", "-w", "-o"])
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
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{name}: {said}");
        assert!(said.contains("differ 0 "), "{name}: {said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
