//! End to end: annotated functions expand, compile, and their serial path equals the original.
//! The CUDA comparisons need a device: ignored by a plain `cargo test`.

mod gpu;

use ndarray::{Array2, Array3};
use pacc::runtime::{BackendChoice, CompressWhen, Options};

#[pacc::pipeline]
fn heat2d(a: &mut Array2<f64>, b: &mut Array2<f64>, alpha: f64, steps: usize) -> f64 {
    let (ny, nx) = a.dim();
    let mut peak = f64::NEG_INFINITY;
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let c = a[[y, x]];
                let v = c + alpha
                    * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]] - 4.0 * c);
                b[[y, x]] = if v > 0.0 { v } else { 0.0 };
                peak = peak.max(v);
            }
        }
        std::mem::swap(a, b);
    }
    peak
}

#[pacc::pipeline(halo = 2)]
#[allow(clippy::too_many_arguments)]
fn wave3d(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: &Array3<f32>,
    w: &[f32],
    src: (usize, usize, usize),
    r: f32,
    steps: usize,
) -> f32 {
    let (nz, ny, nx) = cur.dim();
    let (sz, sy, sx) = src;
    let c = [-5.0f32 / 2.0, 4.0 / 3.0, -1.0 / 12.0];
    let (c0, c1, c2): (f32, f32, f32) = (c[0], c[1], c[2]);
    let mut total: f32 = 0.0;
    for t in 0..steps {
        for z in 2..nz - 2 {
            for y in 2..ny - 2 {
                for x in 2..nx - 2 {
                    let lap: f32 = 3.0 * c0 * cur[[z, y, x]]
                        + c1 * (cur[[z + 1, y, x]]
                            + cur[[z - 1, y, x]]
                            + cur[[z, y + 1, x]]
                            + cur[[z, y - 1, x]]
                            + cur[[z, y, x + 1]]
                            + cur[[z, y, x - 1]])
                        + c2 * (cur[[z + 2, y, x]]
                            + cur[[z - 2, y, x]]
                            + cur[[z, y + 2, x]]
                            + cur[[z, y - 2, x]]
                            + cur[[z, y, x + 2]]
                            + cur[[z, y, x - 2]]);
                    let v = vel[[z, y, x]];
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]] + v * v * r * lap;
                    total += prev[[z, y, x]].abs() * (t as f32 + 1.0).sqrt();
                }
            }
        }
        prev[[sz, sy, sx]] += w[t] * vel[[sz, sy, sx]];
        std::mem::swap(prev, cur);
    }
    total
}

fn ramp2(ny: usize, nx: usize) -> Array2<f64> {
    Array2::from_shape_fn((ny, nx), |(y, x)| ((y * 7 + x * 3) % 11) as f64 / 11.0)
}

fn ramp3(n: (usize, usize, usize), k: f32) -> Array3<f32> {
    Array3::from_shape_fn(n, |(z, y, x)| {
        (((z * 5 + y * 3 + x) % 13) as f32 / 13.0 - 0.5) * k
    })
}

fn set_serial() {
    std::env::set_var("PACC_BACKEND", "serial");
}

#[test]
fn heat2d_serial_matches_original() {
    set_serial();
    let (mut a1, mut b1) = (ramp2(17, 13), Array2::zeros((17, 13)));
    let (mut a2, mut b2) = (a1.clone(), b1.clone());
    let r1 = heat2d::serial(&mut a1, &mut b1, 0.1, 5);
    let r2 = heat2d(&mut a2, &mut b2, 0.1, 5);
    assert_eq!(r1.to_bits(), r2.to_bits());
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
    let (_, report) = heat2d::run(
        &mut a2,
        &mut b2,
        0.1,
        2,
        &Options::new().backend(BackendChoice::Serial),
    )
    .unwrap();
    assert_eq!(report.backend, "serial");
    assert_eq!(report.steps, 2);
    let p = heat2d::program();
    assert_eq!(p.ndim, 2);
    assert_eq!(p.halo, 1);
    assert!(heat2d::CUDA_SOURCE.contains("pacc_heat2d_k0"));
}

#[test]
fn wave3d_serial_matches_original() {
    set_serial();
    let n = (12, 10, 9);
    let w: Vec<f32> = (0..6).map(|i| (i as f32 * 0.7).sin()).collect();
    let vel = ramp3(n, 0.0) + 1.5;
    let (mut p1, mut c1) = (ramp3(n, 1.0), ramp3(n, 0.5));
    let (mut p2, mut c2) = (p1.clone(), c1.clone());
    let r1 = wave3d::serial(&mut p1, &mut c1, &vel, &w, (6, 5, 4), 0.1, 6);
    let r2 = wave3d(&mut p2, &mut c2, &vel, &w, (6, 5, 4), 0.1, 6);
    assert_eq!(r1.to_bits(), r2.to_bits());
    assert_eq!(p1, p2);
    assert_eq!(c1, c2);
    let p = wave3d::program();
    assert_eq!(p.halo, 2);
    assert_eq!(p.points.len(), 1);
    assert_eq!(p.slices.len(), 1);
}

#[pacc::pipeline(scratch(tmp))]
fn relax(
    p: &mut Array3<f32>,
    tmp: &mut Array3<f32>,
    rhs: &Array3<f32>,
    omega: f32,
    iters: u32,
) -> f32 {
    let (nz, ny, nx) = p.dim();
    let mut gosa = 0.0f32;
    for _ in 0..iters {
        gosa = 0.0;
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let s = (p[[z - 1, y, x]]
                        + p[[z + 1, y, x]]
                        + p[[z, y - 1, x]]
                        + p[[z, y + 1, x]]
                        + p[[z, y, x - 1]]
                        + p[[z, y, x + 1]])
                        / 6.0
                        - rhs[[z, y, x]];
                    let ss = s - p[[z, y, x]];
                    gosa += ss * ss;
                    tmp[[z, y, x]] = p[[z, y, x]] + omega * ss;
                }
            }
        }
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    p[[z, y, x]] = tmp[[z, y, x]];
                }
            }
        }
    }
    gosa
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1e-30)
}

fn cpu_options() -> Vec<Options> {
    vec![
        Options::new()
            .backend(BackendChoice::Cpu)
            .chunks(3)
            .block_steps(2),
        Options::new()
            .backend(BackendChoice::Cpu)
            .chunks(1)
            .block_steps(1),
        Options::new()
            .backend(BackendChoice::Shuffled(7))
            .chunks(4)
            .block_steps(3),
        Options::new()
            .backend(BackendChoice::Shuffled(11))
            .scheme(pacc::runtime::Scheme::Wavefront)
            .chunks(4)
            .block_steps(3),
        Options::new()
            .backend(BackendChoice::Cpu)
            .scheme(pacc::runtime::Scheme::Wavefront)
            .chunks(2)
            .block_steps(5),
    ]
}

#[test]
fn heat2d_cpu_backend_is_bit_identical() {
    for opts in cpu_options() {
        let (mut a1, mut b1) = (ramp2(23, 11), Array2::zeros((23, 11)));
        let (mut a2, mut b2) = (a1.clone(), b1.clone());
        let r1 = heat2d::serial(&mut a1, &mut b1, 0.1, 7);
        let (r2, report) = heat2d::run(&mut a2, &mut b2, 0.1, 7, &opts).unwrap();
        assert_eq!(r1.to_bits(), r2.to_bits(), "{opts:?}");
        assert_eq!(a1, a2, "{opts:?}");
        assert_eq!(b1, b2, "{opts:?}");
        assert_eq!(report.steps, 7);
    }
}

#[test]
fn wave3d_cpu_backend_is_bit_identical() {
    for opts in cpu_options() {
        let n = (14, 9, 8);
        let w: Vec<f32> = (0..5).map(|i| (i as f32 * 0.7).sin()).collect();
        let vel = ramp3(n, 0.0) + 1.5;
        let (mut p1, mut c1) = (ramp3(n, 1.0), ramp3(n, 0.5));
        let (mut p2, mut c2) = (p1.clone(), c1.clone());
        let r1 = wave3d::serial(&mut p1, &mut c1, &vel, &w, (7, 4, 4), 0.1, 5);
        let (r2, _) = wave3d::run(&mut p2, &mut c2, &vel, &w, (7, 4, 4), 0.1, 5, &opts).unwrap();
        assert!(close(r1 as f64, r2 as f64), "{r1} vs {r2} with {opts:?}");
        assert_eq!(p1, p2, "{opts:?}");
        assert_eq!(c1, c2, "{opts:?}");
    }
}

#[test]
fn relax_cpu_backend_is_bit_identical() {
    for opts in cpu_options() {
        let n = (13, 7, 6);
        let rhs = ramp3(n, 0.01);
        let (mut p1, mut t1) = (ramp3(n, 1.0), Array3::zeros(n));
        let (mut p2, mut t2) = (p1.clone(), t1.clone());
        let g1 = relax::serial(&mut p1, &mut t1, &rhs, 0.8, 4);
        let (g2, _) = relax::run(&mut p2, &mut t2, &rhs, 0.8, 4, &opts).unwrap();
        assert!(close(g1 as f64, g2 as f64), "{g1} vs {g2} with {opts:?}");
        assert_eq!(p1, p2, "{opts:?}");
    }
}

/// Shadowing `let`s, in the body and in a branch (renamed in the kernels, since C++ has no
/// shadowing in one block).
#[pacc::pipeline]
fn shadow3d(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let u = a[[z, y, x]];
                    let u =
                        0.5 * u + 0.1 * (a[[z - 1, y, x]] + a[[z, y + 1, x]] + a[[z, y, x - 1]]);
                    if u > 0.3 {
                        let u = u - 0.2;
                        b[[z, y, x]] = u;
                    } else {
                        b[[z, y, x]] = u;
                    }
                }
            }
        }
        std::mem::swap(a, b);
    }
}

#[test]
fn shadowing_lets_cpu_backend_is_bit_identical() {
    assert!(shadow3d::CUDA_SOURCE.contains("float u_1 = 0.5f * u + "));
    for opts in cpu_options() {
        let n = (11, 8, 9);
        let (mut a1, mut b1) = (ramp3(n, 2.0), Array3::zeros(n));
        let (mut a2, mut b2) = (a1.clone(), b1.clone());
        shadow3d::serial(&mut a1, &mut b1, 5);
        shadow3d::run(&mut a2, &mut b2, 5, &opts).unwrap();
        assert_eq!(a1, a2, "{opts:?}");
        assert_eq!(b1, b2, "{opts:?}");
    }
}

/// On a machine with a CUDA device: the CUDA backend runs the generated kernels.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_backend_matches_serial() {
    gpu::device();
    let opts = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(3)
        .block_steps(2);
    let (mut a1, mut b1) = (ramp2(40, 37), Array2::zeros((40, 37)));
    let (mut a2, mut b2) = (a1.clone(), b1.clone());
    let r1 = heat2d::serial(&mut a1, &mut b1, 0.1, 7);
    let (r2, report) = heat2d::run(&mut a2, &mut b2, 0.1, 7, &opts).unwrap();
    eprintln!("{report}");
    assert_eq!(r1.to_bits(), r2.to_bits());
    assert_eq!(a1, a2);

    let n = (21, 19, 35);
    let w: Vec<f32> = (0..5).map(|i| (i as f32 * 0.7).sin()).collect();
    let vel = ramp3(n, 0.0) + 1.5;
    let (mut p1, mut c1) = (ramp3(n, 1.0), ramp3(n, 0.5));
    let (mut p2, mut c2) = (p1.clone(), c1.clone());
    let r1 = wave3d::serial(&mut p1, &mut c1, &vel, &w, (7, 4, 4), 0.1, 5);
    let (r2, _) = wave3d::run(&mut p2, &mut c2, &vel, &w, (7, 4, 4), 0.1, 5, &opts).unwrap();
    assert!(close(r1 as f64, r2 as f64), "{r1} vs {r2}");
    let d = (&p1 - &p2).iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(d < 1e-5, "wave3d differs by {d}");
    assert_eq!(c1, c2);

    let n = (33, 17, 20);
    let rhs = ramp3(n, 0.01);
    let (mut p1, mut t1) = (ramp3(n, 1.0), Array3::zeros(n));
    let (mut p2, mut t2) = (p1.clone(), t1.clone());
    let g1 = relax::serial(&mut p1, &mut t1, &rhs, 0.8, 4);
    let (g2, _) = relax::run(&mut p2, &mut t2, &rhs, 0.8, 4, &opts).unwrap();
    assert!(close(g1 as f64, g2 as f64), "{g1} vs {g2}");
    let d = (&p1 - &p2).iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(d < 1e-5, "relax differs by {d}");
}

/// On a CUDA device: the wavefront scheme (FMA off) gives the CPU backend's bits for heat2d and
/// the region-sharing CUDA run's bits for wave3d and relax (whose kernels may round differently
/// from the CPU's only where the device's math library does).
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_wavefront_matches_cpu_bits() {
    gpu::device();
    let wf = |d, k| {
        Options::new()
            .backend(BackendChoice::Cuda)
            .scheme(pacc::runtime::Scheme::Wavefront)
            .chunks(d)
            .block_steps(k)
    };
    let rs = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(3)
        .block_steps(2);
    let (mut a1, mut b1) = (ramp2(40, 37), Array2::zeros((40, 37)));
    let r1 = heat2d::serial(&mut a1, &mut b1, 0.1, 7);
    for (d, k) in [(3, 2), (4, 7), (1, 3)] {
        let (mut a2, mut b2) = (ramp2(40, 37), Array2::zeros((40, 37)));
        let (r2, report) = heat2d::run(&mut a2, &mut b2, 0.1, 7, &wf(d, k)).unwrap();
        eprintln!("{report}");
        assert_eq!(
            r1.to_bits(),
            r2.to_bits(),
            "heat2d peak, {d} chunks {k} steps"
        );
        assert_eq!(a1, a2, "heat2d a, {d} chunks {k} steps");
        assert_eq!(b1, b2, "heat2d b, {d} chunks {k} steps");
    }

    let n = (21, 19, 35);
    let w: Vec<f32> = (0..9).map(|i| (i as f32 * 0.7).sin()).collect();
    let vel = ramp3(n, 0.0) + 1.5;
    let (mut p1, mut c1) = (ramp3(n, 1.0), ramp3(n, 0.5));
    let (mut p2, mut c2) = (p1.clone(), c1.clone());
    let (mut p3, mut c3) = (p1.clone(), c1.clone());
    let r1 = wave3d::serial(&mut p1, &mut c1, &vel, &w, (7, 4, 4), 0.1, 9);
    let (r2, _) = wave3d::run(&mut p2, &mut c2, &vel, &w, (7, 4, 4), 0.1, 9, &wf(4, 4)).unwrap();
    let (r3, _) = wave3d::run(&mut p3, &mut c3, &vel, &w, (7, 4, 4), 0.1, 9, &rs).unwrap();
    assert!(close(r1 as f64, r2 as f64), "{r1} vs {r2}");
    assert!(close(r3 as f64, r2 as f64), "{r3} vs {r2}");
    assert_eq!(p2, p3, "wave3d: wavefront and region sharing on the device");
    assert_eq!(c2, c3, "wave3d: wavefront and region sharing on the device");
    let d = (&p1 - &p2).iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(d < 1e-5, "wave3d differs from serial by {d}");

    let n = (33, 17, 20);
    let rhs = ramp3(n, 0.01);
    let (mut p1, mut t1) = (ramp3(n, 1.0), Array3::zeros(n));
    let (mut p2, mut t2) = (p1.clone(), t1.clone());
    let (mut p3, mut t3) = (p1.clone(), t1.clone());
    let g1 = relax::serial(&mut p1, &mut t1, &rhs, 0.8, 6);
    let (g2, _) = relax::run(&mut p2, &mut t2, &rhs, 0.8, 6, &wf(5, 3)).unwrap();
    let (g3, _) = relax::run(&mut p3, &mut t3, &rhs, 0.8, 6, &rs).unwrap();
    assert!(close(g1 as f64, g2 as f64), "{g1} vs {g2}");
    assert!(close(g3 as f64, g2 as f64), "{g3} vs {g2}");
    assert_eq!(p2, p3, "relax: wavefront and region sharing on the device");
    let d = (&p1 - &p2).iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(d < 1e-5, "relax differs from serial by {d}");
}

/// The `compress(..)` clause reaches the program; the run compresses between blocks (lossy),
/// and `no_compression()` gives the serial bits back.
#[pacc::pipeline(compress(a = 16, b = 16))]
fn heat3d_compressed(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    b[[z, y, x]] = a[[z, y, x]]
                        + 0.1 * (a[[z - 1, y, x]] + a[[z + 1, y, x]] - 2.0 * a[[z, y, x]]);
                }
            }
        }
        std::mem::swap(a, b);
    }
}

#[test]
fn compress_clause_flows_to_the_run() {
    assert_eq!(
        heat3d_compressed::program().compress,
        vec![(0, 16.0), (1, 16.0)]
    );
    let init = Array3::from_shape_fn((16, 8, 8), |(z, y, x)| ((z * 7 + y * 3 + x) as f32).sin());
    let (mut a0, mut b0) = (init.clone(), init.clone());
    heat3d_compressed::serial(&mut a0, &mut b0, 6);
    let o = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(2)
        .block_steps(2);
    let (mut a, mut b) = (init.clone(), init.clone());
    let (_, rep) = heat3d_compressed::run(&mut a, &mut b, 6, &o).unwrap();
    assert!(rep.link_bytes() < rep.link_bytes_raw(), "{rep}");
    assert_ne!(a, a0, "compression is lossy");
    assert!(a.iter().zip(&a0).all(|(x, y)| (x - y).abs() < 1e-2));
    let (mut a, mut b) = (init.clone(), init);
    heat3d_compressed::run(&mut a, &mut b, 6, &o.no_compression()).unwrap();
    assert_eq!(a, a0);
}

/// On a machine with a CUDA device: a compressed run on the GPU (codec kernels, compressed
/// transfers, shared regions decoded on the device) gives exactly the CPU backend's bits, which
/// the CPU tests tie to the round-trip model.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_compression_matches_cpu() {
    gpu::device();
    let cpu = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(2);
    // Compressed as asked, not where the tuner predicts it pays: these arrays are tiny.
    let gpu = (cpu.clone().backend(BackendChoice::Cuda)).compress_when(CompressWhen::Always);
    let init = Array3::from_shape_fn((40, 12, 20), |(z, y, x)| {
        ((z * 7 + y * 3 + x) as f32 * 0.1).sin()
    });
    let (mut a1, mut b1) = (init.clone(), init.clone());
    let (_, r1) = heat3d_compressed::run(&mut a1, &mut b1, 9, &cpu).unwrap();
    let (mut a2, mut b2) = (init.clone(), init);
    let (_, r2) = heat3d_compressed::run(&mut a2, &mut b2, 9, &gpu).unwrap();
    eprintln!("{r2}");
    assert_eq!(r1.link_bytes(), r2.link_bytes());
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);

    // f64 in 2D, and an input array (vel) compressed once in the first block.
    let c2 = cpu.clone().compress_all(16.0).compress_inputs(true);
    let g2 = gpu.clone().compress_all(16.0).compress_inputs(true);
    let (mut a1, mut b1) = (ramp2(44, 36), Array2::zeros((44, 36)));
    let (mut a2, mut b2) = (a1.clone(), b1.clone());
    heat2d::run(&mut a1, &mut b1, 0.1, 7, &c2).unwrap();
    heat2d::run(&mut a2, &mut b2, 0.1, 7, &g2).unwrap();
    assert_eq!(a1, a2);
    let n = (36, 16, 20);
    let w: Vec<f32> = (0..9).map(|i| (i as f32 * 0.7).sin()).collect();
    let vel = ramp3(n, 0.0) + 1.5;
    let (mut p1, mut q1) = (ramp3(n, 1.0), ramp3(n, 0.5));
    let (mut p2, mut q2) = (p1.clone(), q1.clone());
    wave3d::run(&mut p1, &mut q1, &vel, &w, (7, 4, 4), 0.1, 9, &c2).unwrap();
    wave3d::run(&mut p2, &mut q2, &vel, &w, (7, 4, 4), 0.1, 9, &g2).unwrap();
    assert_eq!(p1, p2);
    assert_eq!(q1, q2);
}

/// The clause's codec reaches the program and the plan: `codec = f16` stores the arrays as
/// binary16 (twice smaller than raw), close to the serial run; the option overrides it.
#[pacc::pipeline(compress(a = 16, b = 16, codec = f16))]
fn heat3d_f16(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) {
    let (nz, ny, nx) = a.dim();
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    b[[z, y, x]] = a[[z, y, x]]
                        + 0.1 * (a[[z - 1, y, x]] + a[[z + 1, y, x]] - 2.0 * a[[z, y, x]]);
                }
            }
        }
        std::mem::swap(a, b);
    }
}

#[test]
fn compress_clause_codec_flows_to_the_run() {
    use pacc::runtime::codec::CodecKind;
    let p = heat3d_f16::program();
    assert_eq!(p.compress_codec(), Some("f16"));
    assert_eq!((p.compress[1].array, p.compress[1].rate), (1, 16.0));
    let init = Array3::from_shape_fn((16, 8, 8), |(z, y, x)| ((z * 7 + y * 3 + x) as f32).sin());
    let (mut a0, mut b0) = (init.clone(), init.clone());
    heat3d_f16::serial(&mut a0, &mut b0, 6);
    let o = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(2)
        .block_steps(2);
    let (mut a, mut b) = (init.clone(), init.clone());
    let (_, rep) = heat3d_f16::run(&mut a, &mut b, 6, &o).unwrap();
    assert!(rep.link_bytes() < rep.link_bytes_raw(), "{rep}");
    assert_ne!(a, a0, "f16 is lossy");
    assert!(a.iter().zip(&a0).all(|(x, y)| (x - y).abs() < 2e-3));
    let (mut az, mut bz) = (init.clone(), init);
    heat3d_f16::run(&mut az, &mut bz, 6, &o.codec(CodecKind::Zfp)).unwrap();
    assert_ne!(a, az, "the option's codec wins over the clause's");
}

/// On a machine with a CUDA device: the f16 codec's kernels write the CPU coder's bytes and
/// decode to its values (edge values included), and an f16-compressed run on the GPU gives the
/// CPU backend's bits.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_f16_compression_matches_cpu() {
    use pacc::runtime::codec::CodecKind;
    gpu::device();
    let shape = [37usize, 19, 23];
    let mut values: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|i| (i as f32 * 0.37).sin() * 10f32.powi((i % 11) as i32 - 6))
        .collect();
    let edges = [
        0.0,
        -0.0,
        2f32.powi(-25),
        1.5 * 2f32.powi(-24),
        65504.0,
        65519.0,
        1.0 + 2f32.powi(-11),
    ];
    values[..edges.len()].copy_from_slice(&edges);
    let m =
        pacc_runtime::exec::cuda::measure_codec(CodecKind::F16, &values, &shape, 16.0, 1).unwrap();
    assert!(m.matches_cpu && m.decode_matches_cpu, "{m:?}");
    let cpu = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(2)
        .codec(CodecKind::F16);
    let gpu = (cpu.clone().backend(BackendChoice::Cuda)).compress_when(CompressWhen::Always);
    let init = Array3::from_shape_fn((40, 12, 20), |(z, y, x)| {
        ((z * 7 + y * 3 + x) as f32 * 0.1).sin()
    });
    let (mut a1, mut b1) = (init.clone(), init.clone());
    let (_, r1) = heat3d_compressed::run(&mut a1, &mut b1, 9, &cpu).unwrap();
    let (mut a2, mut b2) = (init.clone(), init);
    let (_, r2) = heat3d_compressed::run(&mut a2, &mut b2, 9, &gpu).unwrap();
    assert_eq!(r1.link_bytes(), r2.link_bytes());
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
}

/// On a machine with a CUDA device: compressed runs whose codec kernels share the device with
/// the stencil (grids sized by `cosched`: queue, sized, priority, partition) give exactly
/// the bits of the same compressed plan run in plan order on one stream, for zfp and f16, on
/// every scheme that compresses, reduction included. The codec kernels stride over their units,
/// so the grid must not change a bit (a one-SM partition makes every thread loop); the serial
/// run orders every operation as the plan lists them, so a race between the codec's streams
/// and the kernel stream would show.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_co_scheduled_codec_matches_one_stream() {
    use pacc::runtime::codec::CodecKind;
    use pacc::runtime::cosched::CoSchedule;
    use pacc::runtime::Scheme;
    gpu::device();
    // Planes of 64 x 128 values: 512 zfp blocks or 8192 f16 values a plane, more than the
    // smallest grids below have threads. Smooth, so zfp codes them at rate 16 easily.
    let n = (48, 64, 128);
    let wave = |k: f32| {
        Array3::from_shape_fn(n, |(z, y, x)| {
            k * ((z as f32 * 0.21).sin() * (y as f32 * 0.13).cos() + (x as f32 * 0.07).sin())
        })
    };
    let vel = Array3::from_shape_fn(n, |(z, _, x)| 1.5 + 0.3 * ((z + x) % 7) as f32 / 7.0);
    let w: Vec<f32> = (0..9).map(|i| (i as f32 * 0.7).sin()).collect();
    // Every array compressed at rate 16 (the input `vel` included), whatever the tuner would say.
    let options = |codec, scheme, grid, serial| {
        let mut o = Options::new()
            .backend(BackendChoice::Cuda)
            .chunks(3)
            .block_steps(2)
            .scheme(scheme)
            .compress_all(16.0)
            .compress_inputs(true)
            .compress_when(CompressWhen::Always)
            .codec(codec);
        o.cuda.codec_grid = grid;
        o.cuda.serial_stream = serial;
        o
    };
    // The bits of both wavefields and the reduction, and the report.
    let run = |o: &Options| {
        let (mut prev, mut cur) = (wave(0.5), wave(0.45));
        let (total, r) =
            wave3d::run(&mut prev, &mut cur, &vel, &w, (20, 30, 60), 0.05, 9, o).unwrap();
        let mut bits: Vec<u32> = prev.iter().chain(&cur).map(|v| v.to_bits()).collect();
        bits.push(total.to_bits());
        (bits, r)
    };
    let grids = [
        CoSchedule::Queue,
        CoSchedule::Sized,
        CoSchedule::Priority,
        CoSchedule::Partition(0.25),
        CoSchedule::Partition(1e-3),
    ];
    let schemes = Scheme::ALL
        .into_iter()
        .filter(|s| s.transfers().can_compress());
    for scheme in schemes {
        for codec in [CodecKind::Zfp, CodecKind::F16] {
            let what = format!("{scheme} {codec}");
            let (want, serial) = run(&options(codec, scheme, CoSchedule::Sized, true));
            assert!(
                serial.link_bytes() < serial.link_bytes_raw(),
                "{what}: {serial}"
            );
            assert!(
                serial.adjustments.iter().any(|a| a.contains("one stream")),
                "{what}: the serial run does not say so: {serial}"
            );
            for grid in grids {
                let what = format!("{what} grid {grid}");
                let (got, r) = run(&options(codec, scheme, grid, false));
                assert_eq!(
                    (r.chunks, r.block_steps),
                    (serial.chunks, serial.block_steps)
                );
                assert_eq!(r.link_bytes(), serial.link_bytes(), "{what}");
                let note = r
                    .adjustments
                    .iter()
                    .find(|a| a.starts_with("encode: codec grid"));
                let note = note.unwrap_or_else(|| panic!("{what}: no codec grid: {r}"));
                assert!(note.contains(&format!("grid {grid}:")), "{what}: {note}");
                if grid == CoSchedule::Partition(1e-3) {
                    assert!(note.contains("; 1 of "), "{what}: {note}");
                }
                if let Some(i) = got.iter().zip(&want).position(|(a, b)| a != b) {
                    panic!("{what}: value {i} of {} differs from one stream", got.len());
                }
            }
        }
    }
}

/// One read-only array passed for two parameters (`f(.., &vel, &vel, ..)`) is sound: the run
/// only reads it. It runs, as serial, on the CPU backend and the shuffled executor; an array
/// the run writes sharing memory with another is still refused.
#[test]
fn one_read_only_array_for_two_parameters_runs_as_serial() {
    use pacc::models::acoustic::propagate_sponge;
    let n = (14, 9, 10);
    let field = |k: f32| ramp3(n, k);
    let vel = field(0.02);
    let wavelet = vec![0.5f32, -0.25, 0.125, 0.0, 0.3, -0.1];
    let steps = wavelet.len();
    let (mut sp, mut sc) = (field(0.1), field(0.3));
    propagate_sponge::serial(&mut sp, &mut sc, &vel, &vel, &wavelet, 7, 4, 5, 0.01, steps);
    for o in [
        Options::new()
            .backend(BackendChoice::Cpu)
            .chunks(3)
            .block_steps(2),
        Options::new()
            .backend(BackendChoice::Shuffled(3))
            .chunks(2)
            .block_steps(3),
    ] {
        let (mut p, mut c) = (field(0.1), field(0.3));
        propagate_sponge::run(
            &mut p, &mut c, &vel, &vel, &wavelet, 7, 4, 5, 0.01, steps, &o,
        )
        .unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!((&p, &c), (&sp, &sc), "{o:?}");
    }
}
