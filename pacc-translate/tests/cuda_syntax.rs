//! The generated CUDA C parses as C++ (with a shim for the CUDA built-ins): catches syntax
//! slips without a CUDA toolkit. Skipped, saying why, when `g++` is absent.

use pacc_translate::codegen::fuse::FUSE_STEPS;

mod programs;
mod shim;

const SHIM: &str = r#"
static pacc_dim3 blockIdx, threadIdx, blockDim, gridDim;
static inline void __syncthreads() {}
"#;

fn check(name: &str, cuda: &str) {
    let ok = std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        eprintln!("skipping the CUDA syntax check of {name}: g++ is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("pacc-cuda-syntax-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.cpp"));
    std::fs::write(&file, format!("{}{SHIM}\n{cuda}", shim::CUDA_TYPES)).unwrap();
    let out = std::process::Command::new("g++")
        .args([
            "-fsyntax-only",
            "-Wall",
            "-Wno-unused-variable",
            "-x",
            "c++",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "g++ rejected the CUDA source of {name}:\n{}\n--- source ---\n{cuda}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The source after the preprocessor (`None` without g++).
fn preprocess(name: &str, cuda: &str) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("pacc-cuda-pp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.cpp"));
    std::fs::write(&file, cuda).unwrap();
    let out = std::process::Command::new("g++")
        .args(["-E", "-P", "-x", "c++"])
        .arg(&file)
        .output()
        .ok()?;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "g++ -E failed on {name}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Each fused form the source carries is compiled at the translator's default block: its
/// fit condition (window, rings and reduction buffers in 48 KB) holds there.
#[test]
fn fused_forms_compile_at_their_default_block() {
    for (name, src) in [
        ("laplace2d", programs::LAPLACE2D),
        ("acoustic3d", programs::ACOUSTIC3D),
        ("himeno", programs::himeno()),
    ] {
        for e in pacc_translate::expand_file(src, None).unwrap() {
            for s in FUSE_STEPS {
                let marker = format!("_f{s}(");
                if !e.cuda.contains(&marker) {
                    continue;
                }
                let Some(pp) = preprocess(name, &format!("#define PACC_FUSE {s}\n{}", e.cuda))
                else {
                    eprintln!("skipping the fused-form check of {name}: g++ is not installed");
                    return;
                };
                assert!(
                    pp.contains(&marker),
                    "{name}: the {s}-step form is not compiled"
                );
            }
        }
    }
}

#[test]
fn generated_cuda_parses() {
    for (name, src) in [
        ("laplace2d", programs::LAPLACE2D),
        ("acoustic3d", programs::ACOUSTIC3D),
        ("himeno", programs::himeno()),
    ] {
        for e in pacc_translate::expand_file(src, None).unwrap() {
            // Both marching forms: staged and L1, whichever is the default.
            assert!(e.cuda.contains("#ifndef PACC_STAGE"), "{name}");
            check(name, &e.cuda);
            check(
                &format!("{name}-staged"),
                &format!("#define PACC_STAGE 1\n{}", e.cuda),
            );
            check(
                &format!("{name}-l1"),
                &format!("#define PACC_STAGE 0\n{}", e.cuda),
            );
            // Four rows per thread (3D kernels; 2D sources ignore the macro).
            for stage in [0, 1] {
                check(
                    &format!("{name}-ry4-stage{stage}"),
                    &format!("#define PACC_STAGE {stage}\n#define PACC_RY 4\n{}", e.cuda),
                );
            }
            // The fused forms, compiled only when asked for (blocks wide enough for 3 steps).
            for s in FUSE_STEPS {
                assert!(
                    e.cuda.contains(&format!("_f{s}(")),
                    "{name}: no fused form of {s} steps"
                );
                check(
                    &format!("{name}-fused{s}"),
                    &format!(
                        "#define PACC_FUSE {s}\n#define PACC_FBX 64\n#define PACC_FBY 32\n{}",
                        e.cuda
                    ),
                );
            }
        }
    }
}

#[test]
fn generated_cuda_parses_for_every_construct() {
    let src = r#"
        #[pacc::pipeline]
        fn every(a: &mut Array3<f64>, b: &Array3<f64>, w: &[f64], k: i32, flag: bool, steps: u32) -> f64 {
            let (nz, ny, nx) = a.dim();
            let mut lo = f64::INFINITY;
            let mut hi: f64 = -1.0e300;
            let mut s = 0.0f64;
            for t in 0..steps {
                s = 0.0;
                for z in 1..nz - 1 {
                    for y in 0..ny {
                        for x in 1..=nx - 2 {
                            let mut v: f64 = b[[z - 1, y, x + 1]] * 2.0 - -b[[z + 1, y, x - 1]];
                            if flag && !(v < 0.0) || x % 2 == 0 {
                                v += (k as f64).powi(k) + w[t as usize] + std::f64::consts::PI;
                            } else if v.is_sign_negative_never() {
                                v = v % 3.0;
                            } else {
                                v = f64::min(v.exp().ln(), v.sin().cos().tan().floor().ceil().round());
                            }
                            let c = if x > nx / 2 { 1 } else { 2 };
                            a[[z, y, x]] = v.hypot(v).atan2(1.5) + c as f64 + (x as f64).recip() + (t as f64);
                            lo = lo.min(v);
                            hi = f64::max(hi, v);
                            s += v;
                        }
                    }
                }
            }
            lo + hi + s
        }
    "#;
    // `is_sign_negative_never` is not a float method: the translator must say so.
    let e = pacc_translate::expand_file(src, None).unwrap_err();
    assert!(
        e.contains("unsupported method `is_sign_negative_never`"),
        "{e}"
    );
    let src = src.replace("v.is_sign_negative_never()", "v > 10.0");
    for e in pacc_translate::expand_file(&src, None).unwrap() {
        if std::env::var_os("PACC_SHOW").is_some() {
            eprintln!("{}", e.cuda);
        }
        check("every", &e.cuda);
    }
}

#[test]
fn shadowed_raw_identifiers_get_plain_fresh_names() {
    let src = r#"
        #[pacc::pipeline]
        fn raw(a: &mut Array2<f32>, b: &mut Array2<f32>, steps: usize) {
            let (ny, nx) = a.dim();
            for _t in 0..steps {
                for y in 1..ny - 1 {
                    for x in 1..nx - 1 {
                        let r#loop = a[[y, x - 1]];
                        let r#loop = r#loop + a[[y + 1, x]];
                        let loop_1 = r#loop * 0.5;
                        let r#loop = loop_1 - r#loop;
                        b[[y, x]] = r#loop;
                    }
                }
                std::mem::swap(a, b);
            }
        }
    "#;
    let e = pacc_translate::expand_file(src, None).unwrap().remove(0);
    // The second `loop` is `loop_1`, so the user's own `loop_1` is renamed too, and the third
    // `loop` takes the next free name.
    assert!(e.cuda.contains("float loop_1 = loop + "), "{}", e.cuda);
    assert!(
        e.cuda.contains("float loop_1_1 = loop_1 * 0.5f;"),
        "{}",
        e.cuda
    );
    assert!(
        e.cuda.contains("float loop_2 = loop_1_1 - loop_1;"),
        "{}",
        e.cuda
    );
    check("raw", &e.cuda);
}

/// Whole-grid nests with guarded reads (if values, statement guards, clamped indices) have
/// their per-point, marching and vector forms, no fused form, and they parse.
#[test]
fn guarded_reads_generate_parsing_per_point_forms() {
    let src = r#"
        #[pacc::pipeline]
        fn guarded(t: &mut Array3<f32>, u: &mut Array3<f32>, steps: usize) {
            let (nz, ny, nx) = t.dim();
            for _s in 0..steps {
                for z in 0..nz {
                    for y in 0..ny {
                        for x in 0..nx {
                            let c = t[[z, y, x]];
                            let b = if z > 0 { t[[z - 1, y, x]] } else { c };
                            let a = if z + 1 < nz { t[[z + 1, y, x]] } else { c };
                            let e = t[[z, y, (x + 1).min(nx - 1)]];
                            let w = t[[z, y, x.max(1) - 1]];
                            let s = t[[z, (y + 1).clamp(0, ny - 1), x]];
                            if y >= 1 && y < ny - 1 {
                                u[[z, y, x]] = c + 0.1 * (a + b + e + w + s + t[[z, y - 1, x]]);
                            } else {
                                u[[z, y, x]] = c;
                            }
                        }
                    }
                }
                std::mem::swap(t, u);
            }
        }
    "#;
    let e = pacc_translate::expand_file(src, None).unwrap().remove(0);
    assert!(e.cuda.contains("pacc_guarded_k0_plain("), "{}", e.cuda);
    // The marching and vector forms, their queue loads along axis 0 tested against the
    // array's planes.
    assert!(e.cuda.contains("pacc_guarded_k0("), "{}", e.cuda);
    assert!(e.cuda.contains(" < pacc_n0) pacc_next0 = t["), "{}", e.cuda);
    assert!(e.cuda.contains("pacc_guarded_k0_vec("), "{}", e.cuda);
    assert!(
        e.cuda
            .contains(" < pacc_n0) pacc_ld4(t + pacc_av + (2) * pacc_pl, pacc_next0);"),
        "{}",
        e.cuda
    );
    assert!(!e.cuda.contains("_f2"), "{}", e.cuda);
    assert!(e.cuda.contains("? "), "{}", e.cuda);
    check("guarded", &e.cuda);
}
