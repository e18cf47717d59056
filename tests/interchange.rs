//! Nests written in another loop order than the arrays' layout run in the layout's order: every
//! scheme, the shuffled executor and fused runs equal the serial function bit for bit (arrays,
//! minima and maxima). The CUDA comparison needs a device: ignored by a plain `cargo test`.

mod common;
mod gpu;

use common::{differing, field3};
use ndarray::{Array2, Array3};
use pacc::runtime::{BackendChoice, Options, Scheme};

/// x outermost, z innermost: the bounds move with their loops; a maximum.
#[pacc::pipeline]
fn xyz(a: &mut Array3<f32>, b: &mut Array3<f32>, c: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut m = f32::NEG_INFINITY;
    for _ in 0..steps {
        for x in 1..nx - 2 {
            for y in 1..ny - 1 {
                for z in 2..nz - 1 {
                    let v = 0.2 * (a[[z - 2, y, x]] + a[[z + 1, y, x]] + a[[z, y - 1, x + 2]])
                        + c[[z, y + 1, x - 1]] * a[[z, y, x]];
                    b[[z, y, x]] = v;
                    m = m.max(v);
                }
            }
        }
        std::mem::swap(a, b);
    }
    m
}

/// y innermost of a 3D nest (z, x, y), and a 2D nest written x-then-y, with a minimum.
#[pacc::pipeline]
fn zxy(a: &mut Array3<f64>, b: &mut Array3<f64>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _ in 0..steps {
        for z in 1..nz - 1 {
            for x in 0..nx {
                for y in 1..ny - 1 {
                    b[[z, y, x]] =
                        a[[z - 1, y, x]] - 0.5 * a[[z, y + 1, x]] + 0.25 * a[[z + 1, y - 1, x]];
                }
            }
        }
        std::mem::swap(a, b);
    }
}

#[pacc::pipeline]
fn yx2d(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) -> f64 {
    let (ny, nx) = a.dim();
    let mut low = f64::INFINITY;
    for _ in 0..steps {
        for x in 1..nx - 1 {
            for y in 1..ny - 1 {
                let v = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
                b[[y, x]] = v;
                low = low.min(v);
            }
        }
        std::mem::swap(a, b);
    }
    low
}

fn settings() -> Vec<Options> {
    let mut all = Vec::new();
    for scheme in Scheme::ALL {
        for (chunks, depth) in [(1, 1), (3, 2), (6, 4)] {
            for backend in [
                BackendChoice::Cpu,
                BackendChoice::Shuffled(chunks as u64 + 1),
            ] {
                all.push(
                    Options::new()
                        .backend(backend)
                        .scheme(scheme)
                        .chunks(chunks)
                        .block_steps(depth),
                );
            }
        }
    }
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
        for s in [2, 3] {
            for (chunks, backend) in [
                (1, BackendChoice::Cpu),
                (4, BackendChoice::Cpu),
                (3, BackendChoice::Shuffled(9)),
            ] {
                all.push(
                    Options::new()
                        .backend(backend)
                        .scheme(scheme)
                        .chunks(chunks)
                        .block_steps(2 * s)
                        .fuse(s),
                );
            }
        }
    }
    all
}

fn check(o: &Options) {
    let steps = 6;
    let n = (19, 11, 13);
    let c: Array3<f32> = field3(n, 0.25);
    let a0: Array3<f32> = field3(n, 1.0);
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    let want = xyz::serial(&mut sa, &mut sb, &c, steps);
    let (mut a, mut b) = (a0.clone(), a0.clone());
    let (got, _) = xyz::run(&mut a, &mut b, &c, steps, o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    assert_eq!(got.to_bits(), want.to_bits(), "xyz {o:?}");
    assert_eq!(
        (differing(&a, &sa), differing(&b, &sb)),
        (0, 0),
        "xyz {o:?}"
    );

    let a0: Array3<f64> = field3(n, 0.5);
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    zxy::serial(&mut sa, &mut sb, steps);
    let (mut a, mut b) = (a0.clone(), a0.clone());
    zxy::run(&mut a, &mut b, steps, o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    assert_eq!(
        (differing(&a, &sa), differing(&b, &sb)),
        (0, 0),
        "zxy {o:?}"
    );

    let a0 = Array2::from_shape_fn((21, 17), |(y, x)| ((y * 5 + x * 3) % 13) as f64);
    let (mut sa, mut sb) = (a0.clone(), a0.clone());
    let want = yx2d::serial(&mut sa, &mut sb, steps);
    let (mut a, mut b) = (a0.clone(), a0.clone());
    let (got, _) = yx2d::run(&mut a, &mut b, steps, o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    assert_eq!(got.to_bits(), want.to_bits(), "yx2d {o:?}");
    assert_eq!(
        (differing(&a, &sa), differing(&b, &sb)),
        (0, 0),
        "yx2d {o:?}"
    );
}

#[test]
fn reordered_nests_equal_serial() {
    for o in settings() {
        check(&o);
    }
}

#[test]
fn the_reordering_is_noted() {
    let t = pacc_translate::expand_file(include_str!("interchange.rs"), Some("xyz")).unwrap();
    assert_eq!(
        t[0].notes,
        ["nest 0: loops reordered x,y,z -> z,y,x to follow the array layout"]
    );
}

/// On a CUDA device: the generated kernels of the reordered nests.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_reordered_nests_equal_serial() {
    gpu::device();
    for scheme in Scheme::ALL {
        for (chunks, depth) in [(1, 1), (3, 2)] {
            check(
                &Options::new()
                    .backend(BackendChoice::Cuda)
                    .scheme(scheme)
                    .chunks(chunks)
                    .block_steps(depth),
            );
        }
    }
    for s in [2, 3] {
        check(
            &Options::new()
                .backend(BackendChoice::Cuda)
                .chunks(3)
                .block_steps(2 * s)
                .fuse(s),
        );
    }
}
