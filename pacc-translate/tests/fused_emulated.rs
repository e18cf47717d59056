//! The generated fused kernels (s steps per launch), run on the CPU as `cuda_emulated.rs` runs
//! the marching kernels: a host thread per CUDA thread, a barrier per `__syncthreads()`. Each
//! must leave in its output buffers the bits that s launches of the plain kernels (and the
//! point statements, and the swaps) leave, on shapes no tile divides, with several segments,
//! asymmetric reaches, a point statement, two nests with a reduction reset every step, a sum
//! over every step with a nest that only reduces, and 2D f64. Skipped, saying why, when `g++`
//! is absent.

mod shim;

/// Asymmetric reaches on every axis, a leap-frog swap and a source term at a point.
const LEAP: &str = r#"
#[pacc::pipeline]
fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, vel: &Array3<f32>, w: &[f32], sz: usize, sy: usize, sx: usize, steps: usize) {
    let (nz, ny, nx) = cur.dim();
    for t in 0..steps {
        for z in 2..nz - 2 {
            for y in 2..ny - 1 {
                for x in 1..nx - 2 {
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]]
                        + vel[[z, y, x]] * (cur[[z - 2, y, x]] + cur[[z + 1, y, x]] + cur[[z, y - 2, x]]
                            + cur[[z, y + 1, x]] + cur[[z, y, x - 1]] + cur[[z, y, x + 2]] - 6.0 * cur[[z, y, x]]);
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * w[t];
        std::mem::swap(prev, cur);
    }
}
"#;

/// Himeno's shape: diagonal reads, a reduction reset every step, a copy nest, a scratch array.
const HIM: &str = r#"
#[pacc::pipeline(scratch(w2))]
fn him(p: &mut Array3<f32>, a: &Array3<f32>, w2: &mut Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = p.dim();
    let mut gosa: f32 = 0.0;
    for _n in 0..steps {
        gosa = 0.0;
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let s0 = p[[z + 1, y + 1, x]] - p[[z - 1, y - 1, x]] + p[[z, y + 1, x - 1]]
                        + p[[z, y, x + 1]] + a[[z, y, x]] * p[[z - 1, y, x]];
                    let ss = (0.25 * s0 - p[[z, y, x]]) * a[[z, y, x]];
                    gosa += ss * ss;
                    w2[[z, y, x]] = p[[z, y, x]] + 0.8 * ss;
                }
            }
        }
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    p[[z, y, x]] = w2[[z, y, x]];
                }
            }
        }
    }
    gosa
}
"#;

/// Asymmetric in-plane reaches and a read at z + 1, diagonal reads of a read-only array across
/// three planes, a sum over every step (never reset), and a second nest that only adds to it,
/// reading the first's output two planes ahead and one behind.
const SKEW: &str = r#"
#[pacc::pipeline]
fn skew(a: &mut Array3<f32>, b: &mut Array3<f32>, c: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut total: f32 = 0.0;
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 2 {
                for x in 3..nx - 1 {
                    let s = a[[z, y - 1, x]] + 2.0 * a[[z, y + 2, x]] - a[[z, y, x - 3]]
                        + 0.5 * a[[z, y, x + 1]] + 0.25 * a[[z + 1, y, x]];
                    let d = c[[z - 1, y + 1, x - 1]] - c[[z + 1, y - 1, x + 1]] + c[[z, y, x]];
                    let v = 0.3 * s + 0.1 * d * a[[z, y, x]];
                    b[[z, y, x]] = v;
                    total += v;
                }
            }
        }
        std::mem::swap(a, b);
        for z in 1..nz - 2 {
            for y in 2..ny - 1 {
                for x in 1..nx - 1 {
                    total += 0.5 * a[[z + 2, y - 1, x - 1]] - a[[z - 1, y, x]];
                }
            }
        }
    }
    total
}
"#;

/// 2D, f64, asymmetric reaches, an `if` in the body.
const HEAT2: &str = r#"
#[pacc::pipeline]
fn heat2(a: &mut Array2<f64>, b: &mut Array2<f64>, k: f64, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 2 {
            for x in 2..nx - 1 {
                let d = a[[y - 1, x]] + a[[y + 2, x]] + a[[y, x - 2]] + a[[y, x + 1]] - 4.0 * a[[y, x]];
                if d > 0.0 {
                    b[[y, x]] = a[[y, x]] + k * d;
                } else {
                    b[[y, x]] = a[[y, x]] + 0.5 * k * d;
                }
            }
        }
        std::mem::swap(a, b);
    }
}
"#;

const LEAP_MAIN: &str = r#"
int main() {
    const long long NZ = 14, NY = 12, NX = 19, RP = 20, N = NZ * NY * RP, SEG = 5;
    std::vector<float> p0(N), c0(N), vel(N), w(16);
    for (long long i = 0; i < N; ++i) {
        p0[i] = (float)((i * 7) % 29) * 0.03f;
        c0[i] = (float)((i * 11) % 23) * 0.02f;
        vel[i] = 0.05f + (float)((i * 3) % 5) * 0.01f;
    }
    for (int i = 0; i < 16; ++i) w[i] = 0.1f * (float)(i + 1);
    const long long SZ = 6, SY = 7, SX = 9;
    std::vector<float> P = p0, C = c0;
    float *pp = P.data(), *pc = C.data();
    for (int s = 0; s < PACC_FUSE; ++s) {
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 4)}, {8, 4, 1}, [&] {
            pacc_leap_k0_plain(2, NZ - 2, 2, NZ - 2, 0, NZ, NY, NX, RP, s, pp, pc, vel.data(), w.data());
        });
        launch({1, 1, 1}, {1, 1, 1}, [&] {
            pacc_leap_p0(0, NZ, NY, NX, RP, s, SZ, SY, SX, pp, pc, vel.data(), w.data());
        });
        std::swap(pp, pc);
    }
    std::vector<float> O0(N, -7.0f), O1(N, -7.0f);
    const long long TX = TILE_X, TY = TILE_Y;
    launch({(unsigned)((NX + TX - 1) / TX), (unsigned)((NY + TY - 1) / TY), (unsigned)((NZ + SEG - 1) / SEG)},
           {LBX, LBY, 1}, [&] {
        FUSED(0, NZ, 0, NZ, 0, NZ, NY, NX, RP, 0, SEG, p0.data(), c0.data(), vel.data(), O0.data(), O1.data(),
              w.data(), SZ, SY, SX);
    });
    const long long d = differ(P, O0, NX, RP) + differ(C, O1, NX, RP);
    std::printf("differ %lld source %g\n", d, (double)P[(SZ * NY + SY) * RP + SX]);
    return d == 0 ? 0 : 1;
}
"#;

const HIM_MAIN: &str = r#"
int main() {
    const long long NZ = 13, NY = 11, NX = 17, RP = 20, N = NZ * NY * RP, SEG = 4;
    std::vector<float> p0(N), a(N), w0(N, 0.0f);
    for (long long i = 0; i < N; ++i) {
        p0[i] = (float)((i * 13) % 31) * 0.05f - 0.7f;
        a[i] = 0.3f + (float)((i * 5) % 7) * 0.1f;
    }
    std::vector<float> P = p0, W = w0;
    std::vector<double> r(4096, 0.0);
    double last = 0;
    for (int s = 0; s < PACC_FUSE; ++s) {
        std::fill(r.begin(), r.end(), 0.0);
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 2)}, {8, 4, 1}, [&] {
            pacc_him_k0_plain(1, NZ - 1, 1, NZ - 1, 0, NZ, NY, NX, RP, s, P.data(), a.data(), W.data(), r.data());
        });
        last = 0;
        for (double v : r) last += v;
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 2)}, {8, 4, 1}, [&] {
            pacc_him_k1_plain(1, NZ - 1, 1, NZ - 1, 0, NZ, NY, NX, RP, s, P.data(), a.data(), W.data());
        });
    }
    std::vector<float> O0(N, -7.0f), O1(N, -7.0f);
    std::vector<std::vector<double>> red(PACC_FUSE, std::vector<double>(4096, 0.0));
    const long long TX = TILE_X, TY = TILE_Y;
    launch({(unsigned)((NX + TX - 1) / TX), (unsigned)((NY + TY - 1) / TY), (unsigned)((NZ + SEG - 1) / SEG)},
           {LBX, LBY, 1}, [&] {
        FUSED(0, NZ, 0, NZ, 0, NZ, NY, NX, RP, 0, SEG, p0.data(), a.data(), w0.data(), O0.data(), O1.data(),
              REDS);
    });
    double got = 0;
    for (double v : red[PACC_FUSE - 1]) got += v;
    // p is slot 0, w2 slot 2: outputs in slot order.
    long long d = differ(P, O0, NX, RP) + differ(W, O1, NX, RP);
    // A slab z0..z1 as the runtime launches it: each array's buffer holds only the planes the
    // group reads of it (REACH), its pointer shifted to the common base as the read-only
    // ring's is; AddressSanitizer stops any load outside.
    {
        const long long Z0 = 4, Z1 = 9, PL = NY * RP;
        const long long lo[3] = {LO0, LO1, LO2}, hi[3] = {HI0, HI1, HI2};
        const long long BASE = Z0 + std::min({lo[0], lo[1], lo[2], 0LL});
        std::vector<std::vector<float>> buf;
        const std::vector<float>* full[3] = {&p0, &a, &w0};
        for (int k = 0; k < 3; ++k) {
            std::vector<float> b((Z1 + hi[k] - Z0 - lo[k]) * PL);
            for (long long z = Z0 + lo[k]; z < Z1 + hi[k]; ++z)
                std::copy(full[k]->begin() + z * PL, full[k]->begin() + (z + 1) * PL, b.begin() + (z - Z0 - lo[k]) * PL);
            buf.push_back(std::move(b));
        }
        auto at = [&](std::vector<float>& b, long long first) { return b.data() - (first - BASE) * PL; };
        std::vector<float> S0((Z1 - Z0) * PL, -7.0f), S1((Z1 - Z0) * PL, -7.0f);
        launch({(unsigned)((NX + TX - 1) / TX), (unsigned)((NY + TY - 1) / TY), (unsigned)((Z1 - Z0 + SEG - 1) / SEG)},
               {LBX, LBY, 1}, [&] {
            FUSED(Z0, Z1, Z0, Z1, BASE, NZ, NY, NX, RP, 0, SEG, at(buf[0], Z0 + lo[0]), at(buf[1], Z0 + lo[1]),
                  at(buf[2], Z0 + lo[2]), at(S0, Z0), at(S1, Z0), REDS);
        });
        std::vector<float> P1(P.begin() + Z0 * PL, P.begin() + Z1 * PL), W1(W.begin() + Z0 * PL, W.begin() + Z1 * PL);
        d += differ(P1, S0, NX, RP) + differ(W1, S1, NX, RP);
    }
    std::printf("differ %lld gosa %.9g %.9g\n", d, last, got);
    return d == 0 && std::fabs(got - last) <= 1e-5 * std::fabs(last) && last > 0 ? 0 : 1;
}
"#;

const SKEW_MAIN: &str = r#"
int main() {
    const long long NZ = 13, NY = 11, NX = 17, RP = 20, N = NZ * NY * RP, SEG = 4;
    std::vector<float> a0(N), b0(N, 0.0f), c(N);
    for (long long i = 0; i < N; ++i) {
        a0[i] = (float)((i * 7) % 29) * 0.03f - 0.2f;
        c[i] = 0.5f + (float)((i * 3) % 11) * 0.02f;
    }
    std::vector<float> A = a0, B = b0;
    float *pa = A.data(), *pb = B.data();
    std::vector<double> r(4096, 0.0);
    double want = 0;
    auto sum = [&] { double t = 0; for (double v : r) t += v; return t; };
    for (int s = 0; s < PACC_FUSE; ++s) {
        std::fill(r.begin(), r.end(), 0.0);
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 2)}, {8, 4, 1}, [&] {
            pacc_skew_k0_plain(1, NZ - 1, 0, NZ, 0, NZ, NY, NX, RP, s, pa, pb, c.data(), r.data());
        });
        want += sum();
        std::swap(pa, pb);
        std::fill(r.begin(), r.end(), 0.0);
        launch({(unsigned)((NX + 7) / 8), (unsigned)((NY + 3) / 4), (unsigned)(NZ - 3)}, {8, 4, 1}, [&] {
            pacc_skew_k1_plain(1, NZ - 2, 0, NZ, 0, NZ, NY, NX, RP, s, pa, pb, c.data(), r.data());
        });
        want += sum();
    }
    std::vector<float> O0(N, -7.0f), O1(N, -7.0f);
    std::vector<std::vector<double>> red(2 * PACC_FUSE, std::vector<double>(4096, 0.0));
    const long long TX = TILE_X, TY = TILE_Y;
    // Several segments: a segment's first nest computes planes its neighbours own, which its
    // sums must not count.
    launch({(unsigned)((NX + TX - 1) / TX), (unsigned)((NY + TY - 1) / TY), (unsigned)((NZ + SEG - 1) / SEG)},
           {LBX, LBY, 1}, [&] {
        FUSED(0, NZ, 0, NZ, 0, NZ, NY, NX, RP, 0, SEG, a0.data(), b0.data(), c.data(), O0.data(), O1.data(),
              REDS);
    });
    double got = 0;
    for (auto& v : red) for (double x : v) got += x;
    const long long d = differ(A, O0, NX, RP) + differ(B, O1, NX, RP);
    std::printf("differ %lld total %.9g %.9g\n", d, want, got);
    return d == 0 && std::fabs(got - want) <= 1e-5 * std::fabs(want) && want != 0 ? 0 : 1;
}
"#;

const HEAT2_MAIN: &str = r#"
int main() {
    const long long NY = 23, NX = 37, RP = 40, N = NY * RP, SEG = 6;
    std::vector<double> a0(N), b0(N, 0.0);
    for (long long i = 0; i < N; ++i) a0[i] = (double)((i * 17) % 19) * 0.1 - 0.9;
    std::vector<double> A = a0, B = b0;
    double *pa = A.data(), *pb = B.data();
    const double k = 0.2;
    for (int s = 0; s < PACC_FUSE; ++s) {
        launch({(unsigned)((NX + 7) / 8), (unsigned)(NY - 3), 1}, {8, 1, 1}, [&] {
            pacc_heat2_k0_plain(1, NY - 2, 1, NY - 2, 0, NY, NX, 1, RP, s, pa, pb, k);
        });
        std::swap(pa, pb);
    }
    std::vector<double> O0(N, -7.0), O1(N, -7.0);
    const long long TX = TILE_X;
    launch({(unsigned)((NX + TX - 1) / TX), (unsigned)((NY + SEG - 1) / SEG), 1}, {LBX, 1, 1}, [&] {
        FUSED(0, NY, 0, NY, 0, NY, NX, 1, RP, 0, SEG, a0.data(), b0.data(), O0.data(), O1.data(), k);
    });
    const long long d = differ(A, O0, NX, RP) + differ(B, O1, NX, RP);
    std::printf("differ %lld\n", d);
    return d == 0 ? 0 : 1;
}
"#;

/// Per array: the planes the translator says the fused group of `s` steps reads, `(lo, hi)`
/// beyond the output planes (`(0, 0)` for an array it does not read).
fn reach(src: &str, s: usize) -> Vec<(i64, i64)> {
    use quote::ToTokens;
    let file = syn::parse_file(src).unwrap();
    let syn::Item::Fn(item) = &file.items[0] else {
        panic!("no function")
    };
    let mut item = item.clone();
    let args = match &item.attrs.remove(0).meta {
        syn::Meta::List(l) => l.tokens.clone(),
        _ => Default::default(),
    };
    let t = pacc_translate::translate(args, item.to_token_stream()).unwrap();
    let decl = (t.program.fusion.kernels.iter())
        .find(|k| k.steps == s)
        .unwrap();
    let mut out = vec![(0, 0); t.program.arrays.len()];
    for r in &decl.reads {
        out[r.array] = (r.lo[0], r.hi[0]);
    }
    out
}

fn gxx() -> bool {
    std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok()
}

/// The block's extent beyond the output tile, from the kernel's comment: `(x, y)`.
fn halo(cuda: &str, s: usize) -> (i64, i64) {
    let head = format!("// Fused form: {s} steps per launch");
    let line = cuda
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no fused form of {s} steps:\n{cuda}"));
    let num = |key: &str| -> i64 {
        let rest = &line[line.find(key).unwrap() + key.len()..];
        let part: String = rest
            .chars()
            .take_while(|c| *c != ',' && *c != '.')
            .collect();
        part.split('/')
            .map(|v| v.trim().parse::<i64>().unwrap())
            .sum()
    };
    (num(" x "), num(" y "))
}

/// The vector form's x window beyond the output tile (both sides, rounded out to whole
/// vectors), from its comment.
fn vector_halo_x(cuda: &str, s: usize) -> i64 {
    let head = format!("// Fused vector form: {s} steps per launch");
    let line = cuda
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no fused vector form of {s} steps:\n{cuda}"));
    let rest = &line[line.find(" tile x ").unwrap() + 8..];
    let part: String = rest.chars().take_while(|c| *c != ' ').collect();
    part.split('/').map(|v| v.parse::<i64>().unwrap()).sum()
}

/// Which form of the fused kernel a test launches.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    Scalar,
    /// The vector form (`_vec`): `block` is its threads along x and rows.
    Vector,
}

fn run(name: &str, src: &str, main: &str, fused: &str, extra: &str, s: usize, block: (u32, u32)) {
    run_form(name, src, main, fused, extra, s, block, Form::Scalar)
}

#[allow(clippy::too_many_arguments)]
fn run_form(
    name: &str,
    src: &str,
    main: &str,
    fused: &str,
    extra: &str,
    s: usize,
    block: (u32, u32),
    form: Form,
) {
    let e = pacc_translate::expand_file(src, None).unwrap().remove(0);
    let (hx, hy) = halo(&e.cuda, s);
    let tag = if form == Form::Vector { "v" } else { "" };
    let dir =
        std::env::temp_dir().join(format!("pacc-fused-{name}-{s}{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let launch = match form {
        Form::Scalar => format!(
            "#define PACC_FVX 1\n#define PACC_FBX {bx}\n#define PACC_FBY {by}\n#define LBX {bx}\n#define LBY {by}\n\
             #define TILE_X ({bx} - {hx})\n#define TILE_Y ({by} - {hy})\n#define FUSED {fused}{s}\n",
            bx = block.0,
            by = block.1
        ),
        Form::Vector => format!(
            "#define PACC_FVBX {bx}\n#define PACC_FVBY {by}\n#define LBX {bx}\n#define LBY {by}\n\
             #define TILE_X (4 * {bx} - {vx})\n#define TILE_Y ({by} - {hy})\n#define FUSED {fused}{s}_vec\n",
            bx = block.0,
            by = block.1,
            vx = vector_halo_x(&e.cuda, s)
        ),
    };
    let defs = format!("#define PACC_FUSE {s}\n#define HX {hx}\n#define HY {hy}\n{launch}{extra}");
    let code = format!(
        "{defs}{}{}\n{}\n{main}",
        shim::CUDA_TYPES,
        shim::THREAD_MODEL,
        e.cuda
    );
    // Slab launches read from buffers cut to the group's reach: any load past it is a bug.
    let asan = extra.contains("LO0");
    let said = shim::compile_and_run(&dir, &format!("{name}-{s}{tag}"), &code, asan);
    assert!(said.contains("differ 0"), "{name} s={s} {tag}: {said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fused_leapfrog_with_a_source_equals_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    for (s, block) in [(2, (10, 9)), (3, (16, 12))] {
        run("leap", LEAP, LEAP_MAIN, "pacc_leap_f", "", s, block);
    }
}

#[test]
fn fused_himeno_shape_equals_the_plain_steps_and_its_reductions() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    for (s, block) in [(2, (7, 6)), (3, (9, 8))] {
        let reds: Vec<String> = (0..s).map(|i| format!("red[{i}].data()")).collect();
        let mut extra = format!("#define REDS {}\n", reds.join(", "));
        for (k, (lo, hi)) in reach(HIM, s).into_iter().enumerate() {
            extra.push_str(&format!("#define LO{k} {lo}\n#define HI{k} {hi}\n"));
        }
        run("him", HIM, HIM_MAIN, "pacc_him_f", &extra, s, block);
    }
}

#[test]
fn fused_asymmetric_reaches_and_sums_over_every_step_equal_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    for (s, block) in [(2, (9, 7)), (3, (13, 10))] {
        let reds: Vec<String> = (0..2 * s).map(|i| format!("red[{i}].data()")).collect();
        let extra = format!("#define REDS {}\n", reds.join(", "));
        run("skew", SKEW, SKEW_MAIN, "pacc_skew_f", &extra, s, block);
    }
}

#[test]
fn fused_2d_f64_equals_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    for (s, block) in [(2, (16, 1)), (3, (24, 1))] {
        run("heat2", HEAT2, HEAT2_MAIN, "pacc_heat2_f", "", s, block);
    }
}

#[test]
fn fused_vector_forms_equal_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    // Blocks of 3 to 5 vectors: rows no tile divides, several blocks along x and y.
    for (s, block) in [(2, (3, 7)), (3, (5, 10))] {
        run_form(
            "leap",
            LEAP,
            LEAP_MAIN,
            "pacc_leap_f",
            "",
            s,
            block,
            Form::Vector,
        );
    }
}

/// The leap-frog at radius 4 reading `cur` at only three planes along z (4 apart) and `vel` at
/// the point: the vector form loads both at their planes each step instead of queueing them,
/// and stages `cur`'s plane from a register of its own.
const SPARSE: &str = r#"
#[pacc::pipeline]
fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, vel: &Array3<f32>, w: &[f32], sz: usize, sy: usize, sx: usize, steps: usize) {
    let (nz, ny, nx) = cur.dim();
    for t in 0..steps {
        for z in 4..nz - 4 {
            for y in 4..ny - 4 {
                for x in 4..nx - 4 {
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]]
                        + vel[[z, y, x]] * (cur[[z - 4, y, x]] + cur[[z + 4, y, x]] + cur[[z, y - 4, x]]
                            + cur[[z, y + 3, x]] + cur[[z, y, x - 4]] + cur[[z, y, x + 2]] - 6.0 * cur[[z, y, x]]);
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * w[t];
        std::mem::swap(prev, cur);
    }
}
"#;

#[test]
fn fused_vector_form_loading_columns_directly_equals_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SPARSE, None).unwrap().remove(0);
    assert!(
        e.cuda.contains("loaded each step at planes"),
        "no direct loads"
    );
    // The nest spans planes 4 .. NZ - 4.
    let main = LEAP_MAIN
        .replace(
            "(unsigned)(NZ - 4)}, {8, 4, 1}",
            "(unsigned)(NZ - 8)}, {8, 4, 1}",
        )
        .replace(
            "pacc_leap_k0_plain(2, NZ - 2, 2, NZ - 2,",
            "pacc_leap_k0_plain(4, NZ - 4, 4, NZ - 4,",
        );
    for (s, block) in [(2, (4, 19)), (3, (6, 28))] {
        run_form(
            "sparse",
            SPARSE,
            &main,
            "pacc_leap_f",
            "",
            s,
            block,
            Form::Vector,
        );
    }
}

/// The leap-frog with its update in leading `let`s: a plain read, a long sum of mixed signs
/// with a literal and the time step among its terms, and a short sum of the two. The vector
/// form computes them before its point loop, the long sum a term at a time (`sums.rs`).
const SUMS: &str = r#"
#[pacc::pipeline]
fn leap(prev: &mut Array3<f32>, cur: &mut Array3<f32>, vel: &Array3<f32>, w: &[f32], sz: usize, sy: usize, sx: usize, steps: usize) {
    let (nz, ny, nx) = cur.dim();
    for t in 0..steps {
        for z in 2..nz - 2 {
            for y in 2..ny - 1 {
                for x in 1..nx - 2 {
                    let u = cur[[z, y, x]];
                    let lap = -6.0 * u + (cur[[z - 2, y, x]] + cur[[z + 1, y, x]]) - 0.5 * cur[[z, y - 2, x]]
                        + cur[[z, y + 1, x]] + 0.001 - cur[[z, y, x - 1]] * 0.75
                        + cur[[z, y, x + 2]] + 0.0001 * (t as f32);
                    let k = lap * vel[[z, y, x]] - u;
                    prev[[z, y, x]] = 2.0 * u - prev[[z, y, x]] + k;
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * w[t];
        std::mem::swap(prev, cur);
    }
}
"#;

#[test]
fn fused_vector_form_summing_a_term_at_a_time_equals_the_plain_steps() {
    if !gxx() {
        eprintln!("skipping the emulated fused kernels: g++ is not installed");
        return;
    }
    let e = pacc_translate::expand_file(SUMS, None).unwrap().remove(0);
    // `lap` (the second let) is summed a term at a time; `k` and `u` are computed whole.
    assert!(
        e.cuda.contains("pacc_h1[pacc_i] = pacc_h1[pacc_i] - ("),
        "{}",
        e.cuda
    );
    assert!(e.cuda.contains("pacc_h2[pacc_i] = lap * "), "{}", e.cuda);
    for (s, block) in [(2, (3, 7)), (3, (5, 10))] {
        run_form(
            "sums",
            SUMS,
            LEAP_MAIN,
            "pacc_leap_f",
            "",
            s,
            block,
            Form::Vector,
        );
    }
}

#[test]
fn programs_read_off_the_axes_have_no_fused_vector_form() {
    // Himeno's diagonals, and `skew`'s diagonal reads of `c`: one load per point.
    for src in [HIM, SKEW] {
        let e = pacc_translate::expand_file(src, None).unwrap().remove(0);
        assert!(e.cuda.contains("// Fused form: 2 steps"), "{}", e.cuda);
        assert!(!e.cuda.contains("Fused vector form"), "{}", e.cuda);
    }
    let e = pacc_translate::expand_file(LEAP, None).unwrap().remove(0);
    assert!(e.cuda.contains("// Fused vector form: 2 steps"));
}
