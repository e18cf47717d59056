//! Nests over the whole grid whose edge reads are guarded, as outside codes write them (issue 49
//! item 2): `if` guards, `if` values, `min`/`max`/`clamp` indices, `&&` with a read on its right
//! and an `if` around the update. They run and equal the serial function bit for bit on the CPU
//! backend and the shuffled executor, every scheme, several chunk counts and blocking depths;
//! their fused forms are refused with a reason, and a fused request is a typed error. The CUDA
//! comparison needs a device: ignored by a plain `cargo test`.

mod common;
mod gpu;

use common::differing;
use ndarray::{Array2, Array3};
use pacc::runtime::program::FusionError;
use pacc::{BackendChoice, Options, Scheme};

/// 2D heat, guards in `if` values and statements, the east/west reads clamped.
#[pacc::pipeline]
fn heat2g(t: &mut Array2<f32>, u: &mut Array2<f32>, steps: usize) {
    let (ny, nx) = t.dim();
    for _s in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                let c = t[[y, x]];
                let n = if y > 0 { t[[y - 1, x]] } else { c };
                let s = if y + 1 < ny { t[[y + 1, x]] } else { c };
                let e = t[[y, (x + 1).min(nx - 1)]];
                let w = t[[y, x.max(1) - 1]];
                let v = if x > 0 && x + 1 < nx {
                    t[[y, x - 1]] + t[[y, x + 1]]
                } else {
                    0.0
                };
                u[[y, x]] = c + 0.2 * (n + s + e + w - 4.0 * c) + 0.01 * v;
            }
        }
        std::mem::swap(t, u);
    }
}

/// 2D Jacobi whose boundary stays fixed: the update runs under a statement-level `if`, the
/// boundary copied in the `else`; a diagonal read behind `&&`, a `clamp`ed index.
#[pacc::pipeline]
fn jacobi2g(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) {
    let (ny, nx) = a.dim();
    for _s in 0..steps {
        for y in 0..ny {
            for x in 0..nx {
                if y >= 1 && y < ny - 1 && x >= 1 && x < nx - 1 {
                    let d = if y + 1 < ny && x > 0 && a[[y + 1, x - 1]] > 0.5 {
                        0.125
                    } else {
                        0.0
                    };
                    b[[y, x]] = 0.25
                        * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]])
                        + d * a[[y, (x + 1).clamp(1, nx - 1)]];
                } else {
                    b[[y, x]] = a[[y, x]];
                }
            }
        }
        std::mem::swap(a, b);
    }
}

#[path = "programs/heat7.rs"]
mod heat7;

use heat7::{heat_guarded as heat3g, heat_interior};

/// 3D Jacobi with a source, updated only in the interior planes (a statement-level `if` on the
/// plane axis guarding reads two planes away); rows and columns everywhere, clamped.
#[pacc::pipeline]
fn jacobi3g(a: &mut Array3<f32>, b: &mut Array3<f32>, src: &Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _s in 0..steps {
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    if z >= 2 && z < nz - 2 {
                        let zz = a[[z - 2, y, x]] + a[[z + 2, y, x]];
                        let yy = a[[z, y.max(1) - 1, x]] + a[[z, (y + 1).min(ny - 1), x]];
                        let xx = a[[z, y, x.max(1) - 1]] + a[[z, y, (x + 1).min(nx - 1)]];
                        b[[z, y, x]] = (zz + yy + xx) / 6.0 + src[[z, y, x]];
                    } else {
                        b[[z, y, x]] = a[[z, y, x]];
                    }
                }
            }
        }
        std::mem::swap(a, b);
    }
}

fn ramp2<T: From<f32>>(ny: usize, nx: usize) -> Array2<T> {
    Array2::from_shape_fn((ny, nx), |(y, x)| {
        T::from(((y * 7 + x * 3) % 11) as f32 * 0.1)
    })
}

/// Every scheme on the CPU backend and the shuffled executor, chunks of one plane up to the
/// whole array, blocks of one and several steps.
fn combos() -> Vec<Options> {
    let mut out = Vec::new();
    let schemes = [
        Scheme::StagedCopy,
        Scheme::DirectMap,
        Scheme::RegionSharing,
        Scheme::Wavefront,
    ];
    for (i, scheme) in schemes.into_iter().enumerate() {
        for (chunks, block_steps) in [(1, 1), (3, 2), (4, 3), (7, 1)] {
            for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(i as u64 + 3)] {
                out.push(
                    Options::new()
                        .backend(backend)
                        .scheme(scheme)
                        .chunks(chunks)
                        .block_steps(block_steps),
                );
            }
        }
    }
    out
}

/// `fuse 2` and `fuse 3` of a guarded program: no fused form, a reason, and a typed error.
fn fused_refused(p: &pacc::runtime::Program, run: impl Fn(&Options) -> Result<(), pacc::Error>) {
    for s in [2, 3] {
        match p.fusion.get(s) {
            Err(FusionError::Refused { why, .. }) => {
                assert!(why.contains("guards"), "fuse {s}: {why}")
            }
            other => panic!("fuse {s}: {other:?}"),
        }
        let o = Options::new().backend(BackendChoice::Cpu).fuse(s);
        let e = run(&o).expect_err("a fused run of a guarded program");
        assert!(e.to_string().contains("guards"), "fuse {s}: {e}");
    }
}

#[test]
fn guarded_2d_heat_equals_serial_on_every_scheme() {
    let (t0, u0) = (ramp2::<f32>(23, 17), Array2::<f32>::zeros((23, 17)));
    let (mut ts, mut us) = (t0.clone(), u0.clone());
    heat2g::serial(&mut ts, &mut us, 5);
    for o in combos() {
        let (mut t, mut u) = (t0.clone(), u0.clone());
        heat2g::run(&mut t, &mut u, 5, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!(differing(&t, &ts) + differing(&u, &us), 0, "{o:?}");
    }
    fused_refused(heat2g::program(), |o| {
        let (mut t, mut u) = (t0.clone(), u0.clone());
        heat2g::run(&mut t, &mut u, 4, o).map(|_| ())
    });
}

#[test]
fn guarded_2d_jacobi_with_a_statement_guard_equals_serial() {
    let (a0, b0) = (ramp2::<f64>(19, 21), ramp2::<f64>(19, 21));
    let (mut a_s, mut b_s) = (a0.clone(), b0.clone());
    jacobi2g::serial(&mut a_s, &mut b_s, 6);
    for o in combos() {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        jacobi2g::run(&mut a, &mut b, 6, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!(differing(&a, &a_s) + differing(&b, &b_s), 0, "{o:?}");
    }
    fused_refused(jacobi2g::program(), |o| {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        jacobi2g::run(&mut a, &mut b, 4, o).map(|_| ())
    });
}

#[test]
fn guarded_3d_heat_equals_serial_on_every_scheme() {
    let n = (13, 9, 11);
    let (t0, u0) = (common::field3::<f32>(n, 0.5), Array3::<f32>::zeros(n));
    let (mut ts, mut us) = (t0.clone(), u0.clone());
    heat3g::serial(&mut ts, &mut us, 5);
    for o in combos() {
        let (mut t, mut u) = (t0.clone(), u0.clone());
        heat3g::run(&mut t, &mut u, 5, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!(differing(&t, &ts) + differing(&u, &us), 0, "{o:?}");
    }
    fused_refused(heat3g::program(), |o| {
        let (mut t, mut u) = (t0.clone(), u0.clone());
        heat3g::run(&mut t, &mut u, 4, o).map(|_| ())
    });
    // The interior-only form the benchmark compares against computes what its serial does.
    let (mut ts, mut us) = (t0.clone(), t0.clone());
    heat_interior::serial(&mut ts, &mut us, 5);
    let (mut t, mut u) = (t0.clone(), t0.clone());
    heat_interior::run(
        &mut t,
        &mut u,
        5,
        &Options::new().backend(BackendChoice::Cpu),
    )
    .unwrap();
    assert_eq!(differing(&t, &ts) + differing(&u, &us), 0);
}

#[test]
fn guarded_3d_jacobi_in_the_interior_planes_equals_serial() {
    let n = (14, 8, 10);
    let (a0, b0) = (common::field3::<f32>(n, 0.2), common::field3::<f32>(n, 0.7));
    let src = common::field3::<f32>(n, 0.01);
    let (mut a_s, mut b_s) = (a0.clone(), b0.clone());
    jacobi3g::serial(&mut a_s, &mut b_s, &src, 5);
    for o in combos() {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        jacobi3g::run(&mut a, &mut b, &src, 5, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!(differing(&a, &a_s) + differing(&b, &b_s), 0, "{o:?}");
    }
}

/// Arrays thinner than the guarded reads' reach along the planes are refused with a typed
/// error before any data is touched (the reach, not the guards, sets the halo the plan needs).
#[test]
fn a_guarded_program_on_arrays_thinner_than_its_reach_is_refused() {
    let n = (2, 5, 6);
    let (a0, b0) = (common::field3::<f32>(n, 0.2), common::field3::<f32>(n, 0.7));
    let src = common::field3::<f32>(n, 0.01);
    let (mut a, mut b) = (a0.clone(), b0.clone());
    let o = Options::new().backend(BackendChoice::Cpu);
    let e = jacobi3g::run(&mut a, &mut b, &src, 3, &o).expect_err("two planes, reach 2");
    assert!(
        matches!(e, pacc::Error::SmallerThanHalo { axis: 0, .. }),
        "{e:?}"
    );
    assert_eq!((a, b), (a0, b0), "data touched");
}

/// On a machine with a CUDA device: the guarded nests run their per-point CUDA form and equal
/// the CPU backend's bits (FMA contraction aside, the same operations in the same order).
#[test]
#[ignore = "needs a CUDA device"]
fn guarded_reads_on_cuda_equal_serial() {
    gpu::device();
    let n = (37, 21, 45);
    let (t0, u0) = (common::field3::<f32>(n, 0.5), Array3::<f32>::zeros(n));
    let (mut ts, mut us) = (t0.clone(), u0.clone());
    heat3g::serial(&mut ts, &mut us, 6);
    let (a0, b0) = (ramp2::<f64>(70, 90), ramp2::<f64>(70, 90));
    let (mut a_s, mut b_s) = (a0.clone(), b0.clone());
    jacobi2g::serial(&mut a_s, &mut b_s, 6);
    for scheme in [Scheme::DirectMap, Scheme::RegionSharing, Scheme::Wavefront] {
        let o = Options::new()
            .backend(BackendChoice::Cuda)
            .scheme(scheme)
            .chunks(3)
            .block_steps(2);
        let (mut t, mut u) = (t0.clone(), u0.clone());
        heat3g::run(&mut t, &mut u, 6, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let d = (&t - &ts).iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(d < 1e-5, "{scheme}: heat3g differs by {d}");
        let (mut a, mut b) = (a0.clone(), b0.clone());
        jacobi2g::run(&mut a, &mut b, 6, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let d = (&a - &a_s).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(d < 1e-12, "{scheme}: jacobi2g differs by {d}");
    }
}
