//! The marching kernel of a 1D program (planes of one point, `lower/line.rs`), run on the CPU
//! with every CUDA thread a host thread (`shim`): the block's threads split its segment of
//! planes, each marching its own, and must write the plain kernel's bits, with segments and
//! thread shares that do not divide the planes, and the same maximum. Skipped, saying why, when
//! `g++` is absent.

mod shim;

const SRC: &str = r#"
#[pacc::pipeline]
fn line(u: &mut Array1<f32>, v: &mut Array1<f32>, c: &Array1<f32>, steps: usize) -> f32 {
    let n = u.len();
    let mut m = f32::NEG_INFINITY;
    for _t in 0..steps {
        for i in 2..n - 1 {
            v[i] = c[i] * (u[i - 2] + u[i + 1]) + 0.5 * u[i];
            m = m.max(v[i]);
        }
        std::mem::swap(u, v);
    }
    m
}
"#;

const HARNESS: &str = r#"
int main() {
    const long long N = 203;
    std::vector<float> u(N), c(N), v1(N, 0.0f), v2(N, 0.0f);
    for (long long i = 0; i < N; ++i) {
        u[i] = (float)((i * 7) % 29) * 0.03f;
        c[i] = 0.2f + (float)((i * 3) % 11) * 0.01f;
    }
    std::vector<double> r1(4096, 0.0), r2(4096, 0.0);
    const long long z0 = 2, z1 = N - 1;
    // Plain: one block per plane, its thread 0 the point.
    launch({1, (unsigned)(z1 - z0), 1}, {PACC_BX, 1, 1}, [&] {
        pacc_line_k0_plain(z0, z1, z0, z1, 0, N, 1, 1, 1, 0, u.data(), v1.data(), c.data(), r1.data());
    });
    const long long seg = SEG, nseg = (z1 - z0 + seg - 1) / seg;
    launch({1, (unsigned)nseg, 1}, {PACC_BX, 1, 1}, [&] {
        pacc_line_k0(z0, z1, z0, z1, 0, N, 1, 1, 1, 0, seg, u.data(), v2.data(), c.data(), r2.data());
    });
    long long differ = 0, written = 0;
    for (long long i = 0; i < N; ++i) {
        differ += std::memcmp(&v1[i], &v2[i], sizeof(float)) != 0;
        written += v1[i] != 0.0f;
    }
    double m1 = 0, m2 = 0;
    for (double r : r1) m1 = r > m1 ? r : m1;
    for (double r : r2) m2 = r > m2 ? r : m2;
    std::printf("differ %lld written %lld max %.9g %.9g\n", differ, written, m1, m2);
    return differ == 0 && written == z1 - z0 && m1 == m2 && m1 > 0 ? 0 : 1;
}
"#;

#[test]
fn threads_split_the_segment_and_write_the_plain_kernels_bits() {
    if std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipping the emulated 1D kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SRC, None).unwrap().remove(0);
    // The threads' shares of the segment, not one thread per (one-point) column.
    assert!(e
        .cuda
        .contains("pacc_sub = (pacc_se - pacc_sb + PACC_BX - 1) / PACC_BX"));
    let dir = std::env::temp_dir().join(format!("pacc-line-emulated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // (threads, planes per segment): shares of several planes, of one, and threads left idle.
    for (bx, seg) in [(8, 64), (5, 37), (16, 10), (32, 200), (4, 3)] {
        let name = format!("bx{bx}-seg{seg}");
        let code = format!(
            "#define PACC_BX {bx}\n#define PACC_BY 1\n#define SEG {seg}\n{}{}\n{}\n{HARNESS}",
            shim::CUDA_TYPES,
            shim::THREAD_MODEL,
            e.cuda
        );
        let said = shim::compile_and_run(&dir, &name, &code, true);
        assert!(said.contains("differ 0 "), "{name}: {said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
