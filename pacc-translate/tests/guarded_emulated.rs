//! The marching kernels of nests whose edge reads are guarded (issue 49 item 2), run on the CPU
//! with every CUDA thread a host thread (`shim`): their queue, tile and halo loads along axis 0
//! test that the plane lies inside the array, since the guards keep the nest's reads there while
//! the queues would load the planes past both ends. Each form (staged and L1, one to three rows
//! per thread, and the vector form, 3D; the 2D form) must write the plain kernel's bits over the whole grid, with
//! segment boundaries inside the planes, and read nothing outside the arrays: each array lies
//! between poisoned planes, which AddressSanitizer reports when read. Skipped, saying why, when
//! `g++` is absent.

mod shim;

const SRC3: &str = r#"
#[pacc::pipeline]
fn g3(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = t.dim();
    for _s in 0..steps {
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let c = t[[z, y, x]];
                    let b = if z > 0 { t[[z - 1, y, x]] } else { c };
                    let a = if z + 1 < nz { t[[z + 1, y, x]] } else { c };
                    let a2 = if z + 2 < nz { t[[z + 2, y, x]] } else { a };
                    let n = if y > 0 { t[[z, y - 1, x]] } else { c };
                    let s = if y + 1 < ny { t[[z, y + 1, x]] } else { c };
                    let e = t[[z, y, (x + 1).min(nx - 1)]];
                    let w = t[[z, y, x.max(1) - 1]];
                    u[[z, y, x]] = c + 0.1 * (a + b + n + s + e + w - 6.0 * c) + 0.01 * a2;
                }
            }
        }
        std::mem::swap(t, u);
    }
}
"#;

const SRC2: &str = r#"
#[pacc::pipeline]
fn g2(t: &mut Array2<f64>, u: &mut Array2<f64>, steps: usize) {
    let (ny, nx) = t.dim();
    for _s in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                let c = t[[y, x]];
                let n = if y > 0 { t[[y - 1, x]] } else { c };
                let s = if y + 1 < ny { t[[y + 1, x]] } else { c };
                let e = t[[y, (x + 1).min(nx - 1)]];
                let w = if x > 0 { t[[y, x - 1]] } else { c };
                u[[y, x]] = c + 0.2 * (n + s + e + w - 4.0 * c);
            }
        }
        std::mem::swap(t, u);
    }
}
"#;

/// Arrays between two poisoned planes each, the plain and the marching launch over the whole
/// grid, compared. The element type, kernels, extents (`NZ` planes of `NY` rows of `NX`
/// points, rows `RP` apart, `PL` elements a plane), the kernels' `pacc_n1`, `pacc_n2` and
/// trailing extents, and the launches' grids come from the test.
const HARNESS: &str = r#"
#include <sanitizer/asan_interface.h>
static ELEM* fenced(std::vector<ELEM>& store, long long n, long long pad) {
    store.assign(n + 2 * pad, (ELEM)0);
    ASAN_POISON_MEMORY_REGION(store.data(), pad * sizeof(ELEM));
    ASAN_POISON_MEMORY_REGION(store.data() + pad + n, pad * sizeof(ELEM));
    return store.data() + pad;
}
int main() {
    const long long N = NZ * PL, PAD = 2 * PL;
    std::vector<ELEM> st, su1, su2;
    ELEM* t = fenced(st, N, PAD);
    ELEM* u1 = fenced(su1, N, PAD);
    ELEM* u2 = fenced(su2, N, PAD);
    for (long long i = 0; i < N; ++i) t[i] = (ELEM)((i * 7) % 29) * (ELEM)0.03 + (ELEM)0.5;
    const long long z0 = 0, z1 = NZ;
    launch(PGRID, PBLOCK, [&] {
        PLAIN(z0, z1, z0, z1, 0, NZ, N1, N2, RP, 0, t, u1, EXTS);
    });
    const long long seg = SEG, nseg = (z1 - z0 + seg - 1) / seg;
    launch(MGRID, MBLOCK, [&] {
        MARCH(z0, z1, z0, z1, 0, NZ, N1, N2, RP, 0, seg, t, u2, EXTS);
    });
    long long differ = 0, written = 0;
    for (long long i = 0; i < N; ++i) {
        if (i % RP >= NX) continue;
        differ += std::memcmp(&u1[i], &u2[i], sizeof(ELEM)) != 0;
        written += u1[i] != (ELEM)0;
    }
    std::printf("differ %lld written %lld\n", differ, written);
    return differ == 0 && written == NZ * NY * NX ? 0 : 1;
}
"#;

fn gxx() -> bool {
    std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok()
}

/// Compiles each configuration (`defines`, a name) of `cuda` with the harness under
/// AddressSanitizer and asserts the marching kernel wrote the plain kernel's bits.
fn run(cuda: &str, tag: &str, defs: &str, configs: &[(String, String)]) {
    let dir = std::env::temp_dir().join(format!(
        "pacc-guarded-emulated-{tag}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, cfg) in configs {
        let code = format!(
            "{defs}{cfg}{}{}\n{cuda}\n{HARNESS}",
            shim::CUDA_TYPES,
            shim::THREAD_MODEL,
        );
        let said = shim::compile_and_run(&dir, name, &code, true);
        assert!(said.contains("differ 0 "), "{name}: {said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The guarded nest's forms: the marching kernel, its axis-0 loads tested against the array's
/// planes.
fn expand(src: &str) -> String {
    let e = pacc_translate::expand_file(src, None).unwrap().remove(0);
    assert!(e.cuda.contains(" < pacc_n0) pacc_q0_m1 = t["), "{}", e.cuda);
    e.cuda
}

#[test]
fn guarded_3d_marching_forms_write_the_plain_kernels_bits_inside_the_arrays() {
    if !gxx() {
        eprintln!("skipping the emulated guarded kernels: g++ is not installed");
        return;
    }
    let cuda = expand(SRC3);
    assert!(cuda.contains("if (pacc_hyv0 && pacc_zb + (0) >= 0 && pacc_zb + (0) < pacc_n0)"));
    // The vector form's queue loads test the plane too.
    assert!(
        cuda.contains("if (pacc_zb + (-1) >= 0 && pacc_zb + (-1) < pacc_n0) pacc_ld4(t + "),
        "{cuda}"
    );
    // 9 planes in segments of 2 and 4 (a boundary inside the planes, a short last segment),
    // 21 columns in rows of 24 (blocks ending inside the row), 11 rows.
    let defs = "#define ELEM float\n#define PLAIN pacc_g3_k0_plain\n#define MARCH pacc_g3_k0\n\
                #define NZ 9\n#define NY 11\n#define NX 21\n#define RP 24\n#define PL (NY * RP)\n\
                #define N1 NY\n#define N2 NX\n#define EXTS NZ, NY, NX\n\
                #define PGRID {(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)NZ}\n\
                #define PBLOCK {8, 4, 1}\n\
                #define MGRID {(unsigned)((NX + PACC_BX - 1) / PACC_BX), (unsigned)((NY + PACC_BY * PACC_RY - 1) / (PACC_BY * PACC_RY)), (unsigned)nseg}\n\
                #define MBLOCK {PACC_BX, PACC_BY, 1}\n";
    let mut configs = Vec::new();
    // The vector form: 4 points along x a thread, the last vector of a row partly outside
    // (21 columns), blocks of 2 to 4 vectors and 2 to 4 rows.
    for (vbx, vby, seg) in [(2, 4, 4), (4, 2, 2), (3, 3, 9)] {
        configs.push((
            format!("vec-{vbx}x{vby}-seg{seg}"),
            format!(
                "#define PACC_STAGE 1\n#define PACC_RY 1\n#define PACC_BX 8\n#define PACC_BY 4\n#define SEG {seg}\n\
                 #define PACC_VBX {vbx}\n#define PACC_VBY {vby}\n#undef MARCH\n#define MARCH pacc_g3_k0_vec\n\
                 #undef MGRID\n#define MGRID {{(unsigned)((NX + 4 * PACC_VBX - 1) / (4 * PACC_VBX)), (unsigned)((NY + PACC_VBY - 1) / PACC_VBY), (unsigned)nseg}}\n\
                 #undef MBLOCK\n#define MBLOCK {{PACC_VBX, PACC_VBY, 1}}\n"
            ),
        ));
    }
    for (stage, ry, bx, by, seg) in [
        (1, 1, 8, 4, 4),
        (1, 2, 8, 4, 2),
        (1, 3, 4, 4, 4),
        (0, 1, 8, 4, 2),
        (0, 3, 8, 2, 4),
    ] {
        configs.push((
            format!("s{stage}-ry{ry}-{bx}x{by}-seg{seg}"),
            format!("#define PACC_STAGE {stage}\n#define PACC_RY {ry}\n#define PACC_BX {bx}\n#define PACC_BY {by}\n#define SEG {seg}\n"),
        ));
    }
    run(&cuda, "3d", defs, &configs);
}

#[test]
fn guarded_2d_marching_forms_write_the_plain_kernels_bits_inside_the_arrays() {
    if !gxx() {
        eprintln!("skipping the emulated guarded kernels: g++ is not installed");
        return;
    }
    let cuda = expand(SRC2);
    // 2D: the rows are the planes, the plane one row of `RP` elements.
    let defs = "#define ELEM double\n#define PLAIN pacc_g2_k0_plain\n#define MARCH pacc_g2_k0\n\
                #define NZ 13\n#define NY 1\n#define NX 37\n#define RP 40\n#define PL RP\n\
                #define N1 NX\n#define N2 1\n#define EXTS NZ, NX\n\
                #define PGRID {(unsigned)((NX + 7) / 8), (unsigned)NZ, 1}\n#define PBLOCK {8, 1, 1}\n\
                #define MGRID {(unsigned)((NX + PACC_BX - 1) / PACC_BX), (unsigned)nseg, 1}\n\
                #define MBLOCK {PACC_BX, PACC_BY, 1}\n";
    let mut configs = Vec::new();
    for (stage, bx, seg) in [(1, 16, 4), (1, 8, 5), (0, 16, 3), (0, 32, 13)] {
        configs.push((
            format!("s{stage}-{bx}-seg{seg}"),
            format!("#define PACC_STAGE {stage}\n#define PACC_RY 1\n#define PACC_BX {bx}\n#define PACC_BY 1\n#define SEG {seg}\n"),
        ));
    }
    run(&cuda, "2d", defs, &configs);
}
