//! The staged marching kernels (in-plane reads from shared memory) and the vector forms (4
//! points along x per thread) give the serial function's bits on a CUDA device, in every tile
//! shape, and fall back to the L1 form when the halo is wider than the block (to the scalar
//! forms when the rows are no whole number of vectors). Programs with asymmetric and diagonal in-plane reads, reads at several
//! axis-0 offsets, two nests, a reduction, 2D and 3D, f32 and f64, on shapes no tile divides.
//! The comparisons need a CUDA device: ignored by a plain `cargo test`.

mod common;
mod gpu;

use common::{asym3d, diag3d, field3, row2d};
use ndarray::{Array2, Array3};
use pacc::runtime::{BackendChoice, Error, MarchTuning, Options, Report, Scheme};

/// The tile shapes: the default (the vector form in 3D), the L1 form, the default staged block,
/// a tall and a narrow tile, no unrolling; vector blocks of odd sizes.
fn tunings() -> Vec<(Option<MarchTuning>, &'static str)> {
    let t = |s: &str| Some(MarchTuning::parse(s).unwrap());
    vec![
        (None, "vector"),
        (t("vx=4,bx=3,by=5"), "vector"),
        (t("bx=32,by=8,unroll=2"), "vector"),
        (t("vx=4,minb=1"), "vector"),
        (t("vx=1"), "staged"),
        (t("stage=0"), "l1"),
        (t("stage=1"), "staged"),
        (t("stage=1,bx=32,by=16"), "staged"),
        (t("stage=1,bx=16,by=4,unroll=1"), "staged"),
        (t("stage=1,bx=128,by=4,minb=2"), "staged"),
        // Several rows per thread (3D), rows the tile does not divide.
        (t("ry=2"), "staged"),
        (t("stage=1,ry=4,bx=32"), "staged"),
        (t("stage=0,ry=3"), "l1"),
    ]
}

fn opts(t: Option<MarchTuning>, scheme: Scheme) -> Options {
    let o = Options::new()
        .backend(BackendChoice::Cuda)
        .scheme(scheme)
        .chunks(3)
        .block_steps(2);
    match t {
        Some(t) => o.march(t),
        None => o,
    }
}

fn form(r: &Report) -> &str {
    r.kernels.first().map_or("none", |k| k.form.as_str())
}

/// What `f` returns on the device; any error fails the test.
fn on_cuda<R>(f: impl FnOnce() -> Result<R, Error>) -> R {
    gpu::device();
    f().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_asymmetric_and_diagonal_3d_f32_equal_serial() {
    let n = (23, 37, 70);
    let c: Array3<f32> = field3(n, 0.5);
    let (mut a1, mut b1) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
    let want = asym3d::serial(&mut a1, &mut b1, &c, 5);
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront] {
        for (t, expect) in tunings() {
            let (mut a2, mut b2) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
            let (got, r) = on_cuda(|| asym3d::run(&mut a2, &mut b2, &c, 5, &opts(t, scheme)));
            // 70 columns: the vector form needs the padded rows (96).
            assert_eq!(form(&r), expect, "{t:?} {scheme:?}: {:?}", r.kernels);
            assert_eq!(a1, a2, "{t:?} {scheme:?}");
            assert_eq!(b1, b2, "{t:?} {scheme:?}");
            // The serial sum runs through 300 000 f32 additions in one order, the kernels in
            // another: only the arrays keep their bits.
            let rel = ((got - want) / want).abs();
            assert!(rel < 1e-3, "{t:?} {scheme:?}: sum {got} vs {want}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_diagonal_3d_f64_two_nests_equal_serial() {
    let n = (19, 29, 67);
    let (mut p1, mut w1) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
    diag3d::serial(&mut p1, &mut w1, 4);
    for (t, expect) in tunings() {
        let (mut p2, mut w2) = (field3::<f64>(n, 1.0), Array3::<f64>::zeros(n));
        let ((), r) = on_cuda(|| diag3d::run(&mut p2, &mut w2, 4, &opts(t, Scheme::RegionSharing)));
        // Nothing to stage: no vector form either, every tuning runs the L1 form.
        assert_eq!(
            form(&r),
            "l1",
            "{t:?} ({expect} if it were a star): {:?}",
            r.kernels
        );
        assert_eq!(r.kernels[1].form, "l1", "{:?}", r.kernels);
        assert_eq!(p1, p2, "{t:?}");
        assert_eq!(w1, w2, "{t:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_2d_rows_equal_serial() {
    let n = (45, 301);
    let init = Array2::from_shape_fn(n, |(y, x)| ((y * 5 + x * 11) % 23) as f32 * 0.05);
    let (mut a1, mut b1) = (init.clone(), Array2::<f32>::zeros(n));
    row2d::serial(&mut a1, &mut b1, 6);
    let t = |s: &str| Some(MarchTuning::parse(s).unwrap());
    for (t, expect) in [
        // 2D stages only when asked: a warp's in-plane neighbours are its own row.
        (None, "l1"),
        (t("stage=0"), "l1"),
        (t("stage=1"), "staged"),
        (t("stage=1,bx=64"), "staged"),
        (t("stage=1,bx=32,unroll=1"), "staged"),
        // A block narrower than the halo cannot load it from its edge threads: the L1 form.
        (t("stage=1,bx=1"), "l1"),
    ] {
        let (mut a2, mut b2) = (init.clone(), Array2::<f32>::zeros(n));
        let ((), r) = on_cuda(|| row2d::run(&mut a2, &mut b2, 6, &opts(t, Scheme::RegionSharing)));
        assert_eq!(form(&r), expect, "{t:?}: {:?}", r.kernels);
        assert_eq!(a1, a2, "{t:?}");
        assert_eq!(b1, b2, "{t:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn rows_of_no_whole_vector_run_the_scalar_forms() {
    // 70 columns in the host's layout: the vector form's 16-byte accesses do not fit the rows,
    // so the default falls back to the staged form, with the same bits.
    let n = (23, 37, 70);
    let c: Array3<f32> = field3(n, 0.5);
    let (mut a1, mut b1) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
    asym3d::serial(&mut a1, &mut b1, &c, 3);
    let (mut a2, mut b2) = (field3::<f32>(n, 0.0), Array3::<f32>::zeros(n));
    let o = opts(None, Scheme::RegionSharing).row_padding(false);
    let (_, r) = on_cuda(|| asym3d::run(&mut a2, &mut b2, &c, 3, &o));
    assert_eq!(form(&r), "staged", "{:?}", r.kernels);
    assert_eq!((a1, b1), (a2, b2));
}

#[test]
fn the_staged_source_names_its_condition() {
    // CPU-side: the generated source holds both forms, the staged one behind PACC_STAGE and a
    // shared-memory budget, with one barrier per plane.
    let src = asym3d::CUDA_SOURCE;
    assert!(src.contains("#define PACC_STAGE 1"), "{src}");
    assert!(
        src.contains("#if PACC_STAGE && PACC_BX >= 4 && PACC_BY >= 3 && "),
        "{src}"
    );
    assert!(src.contains("#else"), "{src}");
    // `c` is read diagonally: only `a` has a tile.
    assert!(src.contains("__shared__ float pacc_sm0["), "{src}");
    assert!(!src.contains("__shared__ float pacc_sm2["), "{src}");
    // row2d: one staged nest, one barrier per plane (the fused forms follow, with their own).
    let r = row2d::CUDA_SOURCE;
    assert!(r.contains("#define PACC_STAGE 0"), "{r}");
    let marching = r.split("// Fused form").next().unwrap_or(r);
    assert_eq!(marching.matches("__syncthreads()").count(), 1, "{r}");
    // diag3d reads `p` diagonally in the plane: no staged form at all.
    let d = diag3d::CUDA_SOURCE;
    assert_eq!(d.matches("#if PACC_STAGE").count(), 0, "{d}");
    // 3D nests that stage an array have vector forms: asym3d stages `a` (y halo 3, x halo
    // within one vector), not `c`; diag3d stages nothing, and 2D nests have none.
    assert!(
        src.contains("#if PACC_VX == 4 && PACC_VBX >= 2 && PACC_VBY >= 3 && "),
        "{src}"
    );
    assert!(src.contains("pacc_asym3d_k0_vec("), "{src}");
    assert!(
        src.contains("__shared__ __align__(16) float pacc_vm0["),
        "{src}"
    );
    assert!(!src.contains("pacc_vm2["), "{src}");
    assert!(!d.contains("_vec("), "{d}");
    assert!(!r.contains("_vec("), "{r}");
}
