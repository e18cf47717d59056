//! The generated marching kernels, run on the CPU: every CUDA thread of a block is a host
//! thread, `__syncthreads()` a barrier, blocks run one after another (so `__shared__` statics
//! are the block's shared memory). Each form (staged and L1, one to three rows per thread, and
//! the vector form) must write the plain kernel's bits, with rows padded (`pacc_rp` > `n2`) and
//! a segment boundary inside the planes. Catches wrong indices, guards and ring turns without a
//! GPU. Skipped, saying why, when `g++` is absent.

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

mod shim;

/// The driver: plain and marching launches of the kernels, compared.
const HARNESS: &str = r#"
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
    // Marching: segments of 4 planes, PACC_RY rows per thread, or the vector form (PACC_VEC):
    // 4 columns per thread.
    const long long seg = 4, nseg = (z1 - z0 + seg - 1) / seg;
#if PACC_VEC
    launch({(unsigned)((NX + 4 * PACC_VBX - 1) / (4 * PACC_VBX)), (unsigned)((NY + PACC_VBY - 1) / PACC_VBY), (unsigned)nseg},
           {PACC_VBX, PACC_VBY, 1}, [&] {
        pacc_emu_k0_vec(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, seg, a.data(), b2.data(), c.data(), r2.data());
    });
#else
    launch({(unsigned)((NX + PACC_BX - 1) / PACC_BX), (unsigned)((NY + PACC_BY * PACC_RY - 1) / (PACC_BY * PACC_RY)), (unsigned)nseg},
           {PACC_BX, PACC_BY, 1}, [&] {
        pacc_emu_k0(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, seg, a.data(), b2.data(), c.data(), r2.data());
    });
#endif
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
    // (PACC_STAGE, PACC_RY, PACC_BX, PACC_BY, vector form): the staged and the L1 form, one to
    // three rows; the vector form with blocks of 2 x 4 and 3 x 3 threads (8 and 12 columns, so
    // the 21 columns end inside a block and inside a vector).
    for (stage, ry, bx, by, vec) in [
        (1, 1, 8, 4, false),
        (1, 2, 8, 4, false),
        (1, 3, 4, 4, false),
        (0, 1, 8, 4, false),
        (0, 3, 8, 2, false),
        (1, 1, 2, 4, true),
        (1, 1, 3, 3, true),
    ] {
        let name = format!("s{stage}-ry{ry}-{bx}x{by}-v{}", u8::from(vec));
        let defs = if vec {
            format!("#define PACC_VEC 1\n#define PACC_VBX {bx}\n#define PACC_VBY {by}\n")
        } else {
            format!(
                "#define PACC_VEC 0\n#define PACC_STAGE {stage}\n#define PACC_RY {ry}\n#define PACC_BX {bx}\n#define PACC_BY {by}\n"
            )
        };
        let code = format!(
            "{defs}{}{}\n{}\n{HARNESS}",
            shim::CUDA_TYPES,
            shim::THREAD_MODEL,
            e.cuda
        );
        let said = shim::compile_and_run(&dir, &name, &code, true);
        assert!(said.contains("differ 0 "), "{name}: {said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// f64, diagonal in-plane reads (through the L1 in the vector form, beside a staged array), a
/// gathered store, and a conditional write (stored point by point). The first nest reads the
/// corner below its ranges (`p[[z - 1, y - 1, x - 1]]`, index 0 at the first point): a vector
/// point outside the ranges that ran the body would load before the array, which
/// AddressSanitizer reports.
const SRC2: &str = r#"
#[pacc::pipeline]
fn emu2(p: &mut Array3<f64>, q: &mut Array3<f64>, w: &Array3<f64>, steps: usize) {
    let (nz, ny, nx) = p.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 2 {
                    let d = p[[z, y + 1, x + 1]] - p[[z, y - 1, x - 1]] + p[[z + 1, y - 1, x]]
                        - p[[z - 1, y - 1, x - 1]];
                    q[[z, y, x]] = w[[z, y, x + 1]] * d + p[[z, y, x + 2]] + w[[z, y, x]];
                }
            }
        }
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 2 {
                    if q[[z, y, x]] > 0.0 {
                        p[[z, y, x]] = q[[z, y, x]] + 0.5 * w[[z, y - 1, x]];
                    } else {
                        p[[z, y, x]] = -0.5 * q[[z, y, x]];
                    }
                }
            }
        }
    }
}
"#;

const HARNESS2: &str = r#"
int main() {
    const long long NZ = 9, NY = 10, NX = 19, RP = 20, N = NZ * NY * RP;
    std::vector<double> p1(N), w(N), q1(N, 0.0);
    for (long long i = 0; i < N; ++i) {
        p1[i] = (double)((i * 13) % 31) * 0.05 - 0.7;
        w[i] = 0.3 + (double)((i * 5) % 7) * 0.1;
    }
    std::vector<double> p2 = p1, q2 = q1;
    const long long z0 = 1, z1 = NZ - 1, seg = 3, nseg = (z1 - z0 + seg - 1) / seg;
    for (int k = 0; k < 2; ++k) {
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(z1 - z0)}, {8, 4, 1}, [&] {
            if (k == 0) pacc_emu2_k0_plain(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, p1.data(), q1.data(), w.data());
            else pacc_emu2_k1_plain(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, p1.data(), q1.data(), w.data());
        });
        launch({(unsigned)((NX + 4 * PACC_VBX - 1) / (4 * PACC_VBX)), (unsigned)((NY + PACC_VBY - 1) / PACC_VBY), (unsigned)nseg},
               {PACC_VBX, PACC_VBY, 1}, [&] {
            if (k == 0) pacc_emu2_k0_vec(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, seg, p2.data(), q2.data(), w.data());
            else pacc_emu2_k1_vec(z0, z1, z0, z1, 0, NZ, NY, NX, RP, 0, seg, p2.data(), q2.data(), w.data());
        });
    }
    long long differ = 0, changed = 0;
    for (long long i = 0; i < N; ++i) {
        differ += std::memcmp(&p1[i], &p2[i], sizeof(double)) != 0;
        differ += std::memcmp(&q1[i], &q2[i], sizeof(double)) != 0;
        changed += q1[i] != 0.0;
    }
    std::printf("differ %lld changed %lld\n", differ, changed);
    return differ == 0 && changed > 500 ? 0 : 1;
}
"#;

#[test]
fn the_vector_form_serves_diagonals_conditional_writes_and_f64_on_the_cpu() {
    if !gxx() {
        eprintln!("skipping the emulated kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SRC2, None).unwrap().remove(0);
    assert!(e.cuda.contains("pacc_emu2_k0_vec(") && e.cuda.contains("pacc_emu2_k1_vec("));
    let dir = std::env::temp_dir().join(format!("pacc-cuda-emulated2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (bx, by) in [(2, 3), (4, 2)] {
        let name = format!("vec-{bx}x{by}");
        let defs = format!("#define PACC_VBX {bx}\n#define PACC_VBY {by}\n");
        let code = format!(
            "{defs}{}{}\n{}\n{HARNESS2}",
            shim::CUDA_TYPES,
            shim::THREAD_MODEL,
            e.cuda
        );
        let said = shim::compile_and_run(&dir, &name, &code, true);
        assert!(said.contains("differ 0 "), "{name}: {said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Shadowing `let`s, in the block and in a branch: C++ has no shadowing in one block, and in
/// `float u = u * 2.0f` the initialiser would read the new `u`, so the translator renames.
const SHADOW: &str = r#"
#[pacc::pipeline]
fn sh(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let u = a[[z, y, x]];
                    let u = u * 2.0 + 1.0;
                    if u > 2.0 {
                        let u = u - 4.0;
                        b[[z, y, x]] = u;
                    } else {
                        b[[z, y, x]] = u + a[[z, y, x - 1]];
                    }
                }
            }
        }
        std::mem::swap(a, b);
    }
}
"#;

/// The plain and the vector kernel against the serial loop body written out in C++.
const SHADOW_MAIN: &str = r#"
int main() {
    const long long NZ = 7, NY = 9, NX = 19, RP = 20, N = NZ * NY * RP;
    std::vector<float> a(N), b1(N, 0.0f), b2(N, 0.0f), want(N, 0.0f);
    for (long long i = 0; i < N; ++i) a[i] = (float)((i * 7) % 29) * 0.05f;
    for (long long z = 1; z < NZ - 1; ++z)
        for (long long y = 1; y < NY - 1; ++y)
            for (long long x = 1; x < NX - 1; ++x) {
                const long long i = (z * NY + y) * RP + x;
                const float u = a[i] * 2.0f + 1.0f;
                want[i] = u > 2.0f ? u - 4.0f : u + a[i - 1];
            }
    launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 2)}, {8, 4, 1}, [&] {
        pacc_sh_k0_plain(1, NZ - 1, 1, NZ - 1, 0, NZ, NY, NX, RP, 0, a.data(), b1.data());
    });
    launch({(unsigned)((NX + 4 * PACC_VBX - 1) / (4 * PACC_VBX)), (unsigned)((NY + PACC_VBY - 1) / PACC_VBY), 2},
           {PACC_VBX, PACC_VBY, 1}, [&] {
        pacc_sh_k0_vec(1, NZ - 1, 1, NZ - 1, 0, NZ, NY, NX, RP, 0, 3, a.data(), b2.data());
    });
    long long differ = 0;
    for (long long i = 0; i < N; ++i)
        differ += (std::memcmp(&b1[i], &want[i], 4) != 0) + (std::memcmp(&b2[i], &want[i], 4) != 0);
    std::printf("differ %lld\n", differ);
    return differ == 0 ? 0 : 1;
}
"#;

#[test]
fn shadowing_lets_compute_what_the_serial_loop_does() {
    if !gxx() {
        eprintln!("skipping the emulated kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SHADOW, None).unwrap().remove(0);
    assert!(
        e.cuda.contains("float u_1 = u * 2.0f + 1.0f;"),
        "{}",
        e.cuda
    );
    assert!(e.cuda.contains("float u_2 = u_1 - 4.0f;"), "{}", e.cuda);
    let dir = std::env::temp_dir().join(format!("pacc-cuda-shadow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let code = format!(
        "#define PACC_VBX 2\n#define PACC_VBY 4\n{}{}\n{}\n{SHADOW_MAIN}",
        shim::CUDA_TYPES,
        shim::THREAD_MODEL,
        e.cuda
    );
    let said = shim::compile_and_run(&dir, "shadow", &code, false);
    assert!(said.contains("differ 0"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
