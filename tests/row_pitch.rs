//! Padded device rows (`exec/cuda/rows.rs`): on a CUDA device, rows whose length is not a
//! multiple of 128 bytes are padded in the device buffers, the report says so, and every scheme
//! gives the serial function's bits, padded or not (`Options::row_padding(false)`). The
//! transfers are then strided copies and the kernels index with the pitch, point statements
//! and reductions included. Needs a CUDA device: ignored by a plain `cargo test`.

mod gpu;

use ndarray::{Array2, Array3};
use pacc::runtime::{BackendChoice, Error, HostPath, Options, Report, Scheme};

/// A 7-point f32 update with a source term at one point and a sum over the owned points.
#[pacc::pipeline]
fn heat3d(a: &mut Array3<f32>, b: &mut Array3<f32>, k: &Array3<f32>, steps: usize) -> f32 {
    let (nz, ny, nx) = a.dim();
    let mut total: f32 = 0.0;
    for _t in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 2..nx - 1 {
                    b[[z, y, x]] = a[[z, y, x]]
                        + k[[z, y, x]]
                            * (a[[z - 1, y, x]] + a[[z + 1, y, x]] + a[[z, y - 1, x]]
                                - 0.5 * a[[z, y + 1, x]]
                                + a[[z, y, x - 2]]
                                + a[[z, y, x + 1]]
                                - 4.5 * a[[z, y, x]]);
                    total += b[[z, y, x]];
                }
            }
        }
        b[[3, 4, 5]] += 1.0;
        std::mem::swap(a, b);
    }
    total
}

/// 2D in f64: a plane is one row, so the pitch is the plane's.
#[pacc::pipeline]
fn relax2d(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) {
    let (ny, nx) = a.dim();
    for _t in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                b[[y, x]] = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
            }
        }
        std::mem::swap(a, b);
    }
}

/// What `f` returns on the device; any error fails the test.
fn on_cuda<R>(f: impl FnOnce() -> Result<R, Error>) -> R {
    gpu::device();
    f().unwrap_or_else(|e| panic!("{e}"))
}

fn padded_note(r: &Report) -> Option<&String> {
    r.adjustments.iter().find(|n| n.contains("rows padded"))
}

fn field3(n: (usize, usize, usize), k: f32) -> Array3<f32> {
    Array3::from_shape_fn(n, |(z, y, x)| {
        ((z * 7 + y * 13 + x * 3) % 29) as f32 * 0.03 + k
    })
}

#[test]
#[ignore = "needs a CUDA device"]
fn padded_rows_equal_serial_in_every_scheme() {
    // Rows of 45 f32 (180 bytes) are padded to 64 elements (256 bytes).
    let n = (21, 19, 45);
    let k = Array3::from_elem(n, 0.05f32);
    let (mut a1, mut b1) = (field3(n, 0.0), Array3::<f32>::zeros(n));
    let want = heat3d::serial(&mut a1, &mut b1, &k, 7);
    for scheme in [
        Scheme::StagedCopy,
        Scheme::DirectMap,
        Scheme::RegionSharing,
        Scheme::Wavefront,
    ] {
        for (chunks, steps) in [(1, 7), (3, 2)] {
            for pad in [true, false] {
                let o = Options::new()
                    .backend(BackendChoice::Cuda)
                    .scheme(scheme)
                    .chunks(chunks)
                    .block_steps(steps)
                    .row_padding(pad);
                let (mut a2, mut b2) = (field3(n, 0.0), Array3::<f32>::zeros(n));
                let (got, r) = on_cuda(|| heat3d::run(&mut a2, &mut b2, &k, 7, &o));
                let what = format!("{scheme:?} d{chunks} k{steps} pad {pad}");
                assert_eq!(a1, a2, "{what}");
                assert_eq!(b1, b2, "{what}");
                let rel = ((got - want) / want).abs();
                assert!(rel < 1e-4, "{what}: sum {got} vs {want}");
                match padded_note(&r) {
                    Some(note) => {
                        assert!(pad, "{what}: {note}");
                        assert!(note.contains("from 45 to 64 elements"), "{what}: {note}");
                    }
                    None => assert!(!pad, "{what}: no note in {:?}", r.adjustments),
                }
            }
        }
    }
}

/// Arrays larger than two of the bounce rings' slots (40 MB each, 32 MiB slots), rows padded
/// from 517 to 544 elements, no chunk count dividing the 45 planes: bouncing through pacc's
/// pinned rings and page-locking the arrays both give the serial function's bits, the same
/// sum (the serial f32 sum of 9.6 million points rounds differently from any parallel one),
/// and the report says which ran.
#[test]
#[ignore = "needs a CUDA device"]
fn bounced_transfers_equal_registered_ones_on_padded_rows() {
    let n = (45, 431, 517);
    let k = Array3::from_elem(n, 0.05f32);
    let (mut a1, mut b1) = (field3(n, 0.0), Array3::<f32>::zeros(n));
    heat3d::serial(&mut a1, &mut b1, &k, 3);
    for scheme in [Scheme::DirectMap, Scheme::RegionSharing, Scheme::Wavefront] {
        for (chunks, steps) in [(1, 3), (4, 2)] {
            let mut sums = Vec::new();
            for path in [HostPath::Bounce, HostPath::Register] {
                let o = Options::new()
                    .backend(BackendChoice::Cuda)
                    .scheme(scheme)
                    .chunks(chunks)
                    .block_steps(steps)
                    .host_path(path);
                let (mut a2, mut b2) = (field3(n, 0.0), Array3::<f32>::zeros(n));
                let (got, r) = on_cuda(|| heat3d::run(&mut a2, &mut b2, &k, 3, &o));
                let what = format!("{scheme:?} d{chunks} k{steps} {path:?}");
                assert!(a1 == a2 && b1 == b2, "{what}: arrays differ from serial");
                let bounced = r.adjustments.iter().any(|a| a.contains("bounced"));
                assert_eq!(
                    bounced,
                    path == HostPath::Bounce,
                    "{what}: {:?}",
                    r.adjustments
                );
                sums.push(got);
            }
            let what = format!("{scheme:?} d{chunks} k{steps}");
            assert_eq!(
                sums[0].to_bits(),
                sums[1].to_bits(),
                "{what}: sums {sums:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn aligned_rows_and_compressed_runs_stay_unpadded() {
    let o = || {
        Options::new()
            .backend(BackendChoice::Cuda)
            .scheme(Scheme::RegionSharing)
            .chunks(2)
            .block_steps(2)
    };
    // 64 f32 are 256 bytes: already aligned, nothing to pad and nothing to say.
    let n = (12, 10, 64);
    let k = Array3::from_elem(n, 0.05f32);
    let (mut a1, mut b1) = (field3(n, 0.0), Array3::<f32>::zeros(n));
    heat3d::serial(&mut a1, &mut b1, &k, 4);
    let (mut a2, mut b2) = (field3(n, 0.0), Array3::<f32>::zeros(n));
    let (_, r) = on_cuda(|| heat3d::run(&mut a2, &mut b2, &k, 4, &o()));
    assert!(
        !r.adjustments.iter().any(|n| n.contains("rows")),
        "{:?}",
        r.adjustments
    );
    assert_eq!((a1, b1), (a2, b2));
    // The codec reads whole planes: a compressed run keeps the host's rows and says why (`a`
    // and `b` trade places, so both are compressed).
    let n = (24, 16, 45);
    let k = Array3::from_elem(n, 0.05f32);
    let (mut a3, mut b3) = (field3(n, 0.0), Array3::<f32>::zeros(n));
    let (_, r) = on_cuda(|| {
        heat3d::run(
            &mut a3,
            &mut b3,
            &k,
            4,
            &(o().compress("a", 16.0).compress("b", 16.0))
                .compress_when(pacc::runtime::CompressWhen::Always),
        )
    });
    let note = r.adjustments.iter().find(|n| n.contains("not padded"));
    assert!(
        note.is_some_and(|n| n.contains("codec")),
        "{:?}",
        r.adjustments
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn padded_2d_f64_planes_equal_serial() {
    // Planes of 100 f64 (800 bytes) are padded to 112 elements (896 bytes).
    let n = (40, 100);
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x * 11) % 23) as f64 * 0.05);
    let (mut a1, mut b1) = (init.clone(), Array2::<f64>::zeros(n));
    relax2d::serial(&mut a1, &mut b1, 6);
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront] {
        let o = Options::new()
            .backend(BackendChoice::Cuda)
            .scheme(scheme)
            .chunks(3)
            .block_steps(3);
        let (mut a2, mut b2) = (init.clone(), Array2::<f64>::zeros(n));
        let ((), r) = on_cuda(|| relax2d::run(&mut a2, &mut b2, 6, &o));
        let note = padded_note(&r).unwrap_or_else(|| panic!("{:?}", r.adjustments));
        assert!(note.contains("from 100 to 112"), "{note}");
        assert_eq!(a1, a2, "{scheme:?}");
        assert_eq!(b1, b2, "{scheme:?}");
    }
}
