//! Fused runs (`Options::fuse`): s steps per kernel launch equal the serial function bit for bit
//! on the CPU backend and the shuffled executor, for every scheme and several chunk counts and
//! blocking depths (the CPU runs a fused group nest by nest on private copies; the GPU runs the
//! generated fused kernel, `tests/fused_kernels.rs`); a request the program or the call cannot
//! honour is a typed error naming the setting, before any data is touched. Besides the models,
//! the programs of `tests/common` (asymmetric reaches, a read-only array read diagonally, a sum
//! over every step, two f64 nests, 2D, an f64 source term) on shapes no tile divides, also in
//! chunks thinner than the planes one fused launch reads beyond its own.

mod common;

use common::fused::{self, Combo, Shapes, Suite, Target};
use common::{asym3d, differing, field3, rot3};
use ndarray::{Array2, Array3};
use pacc::models::laplace2d;
use pacc::runtime::program::FusionError;
use pacc::{BackendChoice, Error, Options, Scheme};
use pacc_translate::codegen::fuse::FUSE_STEPS;

/// The CPU backend and the shuffled executor: every scheme, several chunk counts and blocking
/// depths; chunks of one or two planes, fewer than a fused launch reads beyond its output planes
/// (and a block of two launches reads twice as far): region sharing forwards planes through
/// several chunks, the wavefront's staircase spans several. Direct mapping cannot keep them
/// that thin (the planner takes fewer chunks) but runs with as many as it can.
fn suite() -> Suite {
    let cpu = BackendChoice::Cpu;
    let mut combos = Vec::new();
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
        for (d, k) in [(1, 12), (3, 4), (4, 6)] {
            for s in FUSE_STEPS {
                combos.push(Combo::new(cpu, d, k, scheme, s));
            }
        }
    }
    // The schemes that load each chunk's halo from the host, in any order the plan allows.
    for (i, s) in FUSE_STEPS.into_iter().enumerate() {
        for (j, scheme) in [Scheme::DirectMap, Scheme::StagedCopy]
            .into_iter()
            .enumerate()
        {
            let seed = (4 * i + 2 * j) as u64;
            combos.push(Combo::new(BackendChoice::Shuffled(seed), 2, s, scheme, s));
            combos.push(Combo::new(
                BackendChoice::Shuffled(seed + 1),
                3,
                2 * s,
                scheme,
                s,
            ));
        }
    }
    combos.push(Combo::new(
        BackendChoice::Shuffled(7),
        3,
        6,
        Scheme::Wavefront,
        2,
    ));
    combos.push(Combo::new(
        BackendChoice::Shuffled(11),
        3,
        6,
        Scheme::RegionSharing,
        3,
    ));
    let mut thin = Vec::new();
    for s in FUSE_STEPS {
        for scheme in [Scheme::RegionSharing, Scheme::Wavefront] {
            thin.push(Combo::new(cpu, 30, s, scheme, s));
            thin.push(Combo::new(cpu, 30, 2 * s, scheme, s));
        }
        thin.push(Combo::new(cpu, 12, s, Scheme::DirectMap, s));
    }
    thin.push(Combo::new(
        BackendChoice::Shuffled(5),
        30,
        6,
        Scheme::Wavefront,
        3,
    ));
    thin.push(Combo::new(
        BackendChoice::Shuffled(13),
        30,
        4,
        Scheme::RegionSharing,
        2,
    ));
    Suite {
        target: Target::Cpu,
        backend: cpu,
        combos,
        thin,
        // In core, and in several chunks and blocks, the planner choosing the scheme.
        group_combos: |s| {
            [(1, 12), (3, s), (4, 2 * s)]
                .map(|(chunks, block_steps)| Combo {
                    backend: BackendChoice::Cpu,
                    chunks,
                    block_steps,
                    scheme: None,
                    fuse: s,
                    scalar: false,
                })
                .to_vec()
        },
        shapes: Shapes {
            acoustic: (45, 18, 21),
            acoustic_source: (22, 9, 10),
            himeno: (33, 17, 20),
            laplace2d: (41, 29),
            row2d: (41, 29),
            groups3d: (17, 11, 13),
            groups2d: (23, 19),
        },
        himeno_noisy_b: [0, 1],
        acoustic_vector: &[],
    }
}

#[test]
fn fused_acoustic_with_a_source_equals_serial() {
    fused::acoustic_with_a_source(&suite());
}

#[test]
fn fused_himeno_equals_serial_with_its_reduction() {
    fused::himeno_with_its_reduction(&suite());
}

#[test]
fn fused_laplace2d_equals_serial() {
    fused::laplace2d(&suite());
}

#[test]
fn a_fused_request_the_call_cannot_honour_is_refused_before_any_data_is_touched() {
    let (ny, nx) = (20, 16);
    let a0 = Array2::from_shape_fn((ny, nx), |(y, x)| (y * 3 + x) as f32);
    let cases: Vec<(usize, Options, &str)> = vec![
        (
            7,
            Options::new().backend(BackendChoice::Cpu).fuse(2),
            "groups of 2, and the call has 7",
        ),
        (
            8,
            Options::new().backend(BackendChoice::Cpu).fuse(4),
            "no kernel fusing 4 steps",
        ),
        (
            8,
            Options::new()
                .backend(BackendChoice::Cpu)
                .fuse(2)
                .checkpoint(std::env::temp_dir().join("pacc-fused-refused"), 1),
            "checkpoints",
        ),
        (
            8,
            Options::new()
                .backend(BackendChoice::Cpu)
                .fuse(2)
                .compress_all(16.0)
                .compress_inputs(true)
                .block_steps(2),
            "compress",
        ),
    ];
    // Zero steps per launch is no fused run and no single-step run either: refused, not run.
    let (mut a, mut b) = (a0.clone(), a0.clone());
    let o = Options::new().backend(BackendChoice::Cpu).fuse(0);
    match laplace2d::jacobi::run(&mut a, &mut b, 4, &o) {
        Err(e @ Error::Option(_)) => {
            assert!(e.to_string().contains("0 steps per fused launch"), "{e}")
        }
        other => panic!("fuse(0): {other:?}"),
    }
    assert_eq!((&a, &b), (&a0, &a0), "fuse(0): the arrays were touched");
    for (steps, o, why) in cases {
        let (mut a, mut b) = (a0.clone(), a0.clone());
        match laplace2d::jacobi::run(&mut a, &mut b, steps, &o) {
            Err(
                e @ Error::Setting {
                    setting: "fuse", ..
                },
            ) => {
                let m = e.to_string();
                assert!(m.contains(why), "{m}");
                assert!(m.contains("Options::fuse"), "{m}");
            }
            other => panic!("{why}: {other:?}"),
        }
        assert_eq!((&a, &b), (&a0, &a0), "{why}: the arrays were touched");
    }
}

#[test]
fn fused_asymmetric_reaches_with_a_read_only_array_and_sums_equal_serial() {
    fused::asymmetric_reaches_and_sums(&suite());
}

#[test]
fn fused_f64_diagonals_and_a_copy_nest_equal_serial() {
    fused::f64_diagonals_and_a_copy_nest(&suite());
}

#[test]
fn fused_f64_source_term_equals_serial_on_the_first_a_middle_and_the_last_plane() {
    fused::f64_source_term(&suite());
}

#[test]
fn fused_2d_asymmetric_rows_equal_serial() {
    fused::asymmetric_rows_2d(&suite());
}

#[test]
fn fused_2d_forward_reads_equal_serial() {
    fused::forward_reads_2d(&suite());
}

#[test]
fn fused_runs_of_any_number_of_groups_leave_the_names_as_serial() {
    fused::any_number_of_groups(&suite());
}

#[test]
fn a_program_reading_a_point_it_wrote_has_no_fused_form_and_says_why() {
    // asym3d sums `b` at its point after storing it: the single-step kernels serve it.
    let why = "reads an array at its point after writing it";
    let n = (13, 11, 17);
    let c: Array3<f32> = field3(n, 0.5);
    for s in FUSE_STEPS {
        let e = asym3d::program().fusion.get(s).unwrap_err();
        assert!(
            matches!(&e, FusionError::Refused { steps, .. } if *steps == s),
            "{e:?}"
        );
        assert!(e.to_string().contains(why), "{e}");
        assert!(!asym3d::CUDA_SOURCE.contains(&format!("pacc_asym3d_f{s}")));
        let (a0, b0) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let o = Options::new().backend(BackendChoice::Cpu).chunks(3).fuse(s);
        match asym3d::run(&mut a, &mut b, &c, 6, &o) {
            Err(
                e @ Error::Setting {
                    setting: "fuse", ..
                },
            ) => {
                let m = e.to_string();
                assert!(m.contains(why), "{m}");
                assert!(m.contains(&format!("no kernel fusing {s} steps")), "{m}");
            }
            other => panic!("s = {s}: {other:?}"),
        }
        assert_eq!((&a, &b), (&a0, &b0), "s = {s}: the arrays were touched");
    }
}

#[test]
fn three_rotating_levels_fuse_three_steps_and_say_why_not_two() {
    let n = (19, 13, 17);
    let lv = |k: f32| field3::<f32>(n, k);
    // After two steps `next` names the array that was `cur`, which two steps do not write.
    let e = rot3::program().fusion.get(2).unwrap_err();
    assert!(matches!(e, FusionError::Refused { steps: 2, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("`next` naming the array that was `cur`"), "{e}");
    let (mut p, mut c, mut x) = (lv(0.0), lv(0.3), lv(0.7));
    let o = Options::new().backend(BackendChoice::Cpu).fuse(2);
    match rot3::run(&mut p, &mut c, &mut x, 6, &o) {
        Err(
            e @ Error::Setting {
                setting: "fuse", ..
            },
        ) => assert!(
            e.to_string().contains("which the 2 steps do not write"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!((&p, &c, &x), (&lv(0.0), &lv(0.3), &lv(0.7)));
    // Three steps bring every name back to its array.
    for steps in [3, 6, 9, 12] {
        let (mut sp, mut sc, mut sx) = (lv(0.0), lv(0.3), lv(0.7));
        rot3::serial(&mut sp, &mut sc, &mut sx, steps);
        for (d, k, scheme) in [
            (1, 12, Scheme::RegionSharing),
            (3, 3, Scheme::Wavefront),
            (10, 6, Scheme::RegionSharing),
        ] {
            let o = Options::new()
                .backend(BackendChoice::Cpu)
                .chunks(d)
                .block_steps(k)
                .scheme(scheme)
                .fuse(3);
            let (mut p, mut c, mut x) = (lv(0.0), lv(0.3), lv(0.7));
            let ((), report) = rot3::run(&mut p, &mut c, &mut x, steps, &o).unwrap();
            // Block steps are time steps in the report, whatever the launches.
            assert_eq!(report.block_steps, k.min(steps), "{steps} steps, k {k}");
            let got = (differing(&p, &sp), differing(&c, &sc), differing(&x, &sx));
            assert_eq!(got, (0, 0, 0), "{steps} steps, {d} chunks, {k}, {scheme:?}");
        }
    }
}

/// Direct mapping and staged copies load a chunk's halo from the host, where the previous
/// chunk's results land: a fused run writes them from its output buffers (the twins), whose host
/// memory is their original's, so the write-back must wait for the next chunk's loads. With one
/// launch per block (`block_steps == fuse`) every block's results come from the twins; on the
/// shuffled executor, which runs the operations in any order the dependencies allow, 143 of 144
/// such runs differed from serial before the twins' host memory was aliased in the plan.
#[test]
fn fused_direct_map_and_staged_copy_in_any_valid_order_equal_serial() {
    let (ny, nx) = (37, 23);
    let (a0, b0) = laplace2d::init(ny, nx, 1.0);
    let n3 = (21, 9, 11);
    let (p0, w0) = (field3::<f64>(n3, 0.3), field3::<f64>(n3, 0.0));
    let mut runs = 0;
    for s in FUSE_STEPS {
        let steps = 4 * s;
        let (mut sa, mut sb) = (a0.clone(), b0.clone());
        laplace2d::jacobi::serial(&mut sa, &mut sb, steps);
        let (mut sp, mut sw) = (p0.clone(), w0.clone());
        common::diag3d::serial(&mut sp, &mut sw, steps);
        for scheme in [Scheme::DirectMap, Scheme::StagedCopy] {
            for chunks in [2, 3] {
                for seed in 0..4u64 {
                    let o = Options::new()
                        .backend(BackendChoice::Shuffled(seed))
                        .chunks(chunks)
                        .block_steps(s)
                        .scheme(scheme)
                        .fuse(s);
                    let at = format!("fuse {s}, {scheme}, {chunks} chunks, seed {seed}");
                    let (mut a, mut b) = (a0.clone(), b0.clone());
                    let ((), r) = laplace2d::jacobi::run(&mut a, &mut b, steps, &o)
                        .unwrap_or_else(|e| panic!("{at}: {e}"));
                    assert_eq!(r.chunks, chunks, "{at}: the planner changed the chunks");
                    assert_eq!(differing(&a, &sa) + differing(&b, &sb), 0, "{at}: jacobi");
                    let (mut p, mut w) = (p0.clone(), w0.clone());
                    common::diag3d::run(&mut p, &mut w, steps, &o)
                        .unwrap_or_else(|e| panic!("{at}: {e}"));
                    assert_eq!(differing(&p, &sp) + differing(&w, &sw), 0, "{at}: diag3d");
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 16 * FUSE_STEPS.len());
}

/// A 2D heat step over the whole grid whose edge reads are guarded, as outside codes write it.
#[pacc::pipeline]
fn guarded_heat(t: &mut Array2<f32>, u: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = t.dim();
    for _s in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                let n = if y > 0 { t[[y - 1, x]] } else { t[[y, x]] };
                let s = if y + 1 < ny { t[[y + 1, x]] } else { t[[y, x]] };
                u[[y, x]] = t[[y, x]] + 0.2 * (n + s - 2.0 * t[[y, x]]);
            }
        }
        std::mem::swap(t, u);
    }
}

/// A guarded program (its edge reads understood, issue 49 item 2) runs single steps as serial,
/// and its fused forms are refused with the translator's reason, a typed error before any data
/// is touched (the fused CPU path once panicked on it: "a fused group left planes .. inexact").
#[test]
fn a_guarded_program_runs_single_steps_and_refuses_fused_ones_by_name() {
    let (ny, nx) = (24, 16);
    let t0 = Array2::from_shape_fn((ny, nx), |(y, x)| ((y * 7 + x * 3) % 11) as f32);
    let (mut ts, mut us) = (t0.clone(), t0.clone());
    guarded_heat::serial(&mut ts, &mut us, 4);
    for s in FUSE_STEPS {
        assert!(matches!(
            guarded_heat::program().fusion.get(s),
            Err(FusionError::Refused { .. })
        ));
        for scheme in [Scheme::StagedCopy, Scheme::DirectMap, Scheme::RegionSharing] {
            let single = Options::new().backend(BackendChoice::Cpu).scheme(scheme);
            let fused = single.clone().chunks(2).block_steps(s).fuse(s);
            let at = format!("fuse {s}, {scheme}");
            let (mut t, mut u) = (t0.clone(), t0.clone());
            guarded_heat::run(&mut t, &mut u, 4, &single).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(differing(&t, &ts) + differing(&u, &us), 0, "{at}");
            let (mut t, mut u) = (t0.clone(), t0.clone());
            let e = guarded_heat::run(&mut t, &mut u, 2 * s, &fused).expect_err(&at);
            assert!(e.to_string().contains("guards"), "{at}: {e}");
            assert_eq!((t, u), (t0.clone(), t0.clone()), "{at}: data touched");
        }
    }
}
