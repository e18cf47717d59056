//! The generated fused kernels on a CUDA device (`Options::fuse`): s steps per launch give the
//! serial function's bits for the models (a source term, a reduction reset every step, two
//! nests, 2D), in core and out of core with region sharing and the wavefront, on shapes no tile
//! divides, and the report names the fused form. So do the programs of `tests/common`
//! (asymmetric reaches, a read-only array read diagonally, a sum over every step, two f64 nests,
//! 2D, an f64 source term), also in chunks thinner than what one launch reads beyond its planes,
//! and with direct mapping and staged copies, whose chunks load their halo from the host.
//! The comparisons are `tests/common/fused.rs`, which `fused_runs.rs` runs on the CPU. Each
//! needs a CUDA device: ignored by a plain `cargo test`.

mod common;
mod gpu;

use common::fused::{self, Combo, Shapes, Suite, Target};
use pacc::runtime::{BackendChoice, Scheme};
use pacc_translate::codegen::fuse::FUSE_STEPS;

/// In core, region sharing, the wavefront; and chunks of one or two planes, thinner than what
/// one launch reads beyond its output planes (a block of one launch and of two), with region
/// sharing and the wavefront.
fn suite() -> Suite {
    gpu::device();
    let cuda = BackendChoice::Cuda;
    let mut combos = Vec::new();
    for s in FUSE_STEPS {
        combos.push(Combo::new(cuda, 1, 12, Scheme::RegionSharing, s));
        combos.push(Combo::new(cuda, 3, 6, Scheme::RegionSharing, s));
        combos.push(Combo::new(cuda, 3, 6, Scheme::Wavefront, s));
        // The one-column form, which the vector form replaced by default.
        combos.push(Combo::new(cuda, 1, 12, Scheme::RegionSharing, s).scalar());
        combos.push(Combo::new(cuda, 3, 6, Scheme::Wavefront, s).scalar());
        // One launch per block: every block's results leave from the output buffers, while the
        // next chunk loads its halo from the same host memory (wrong on the H200 until the
        // plan ordered the two).
        for scheme in [Scheme::DirectMap, Scheme::StagedCopy] {
            combos.push(Combo::new(cuda, 2, s, scheme, s));
            combos.push(Combo::new(cuda, 3, 2 * s, scheme, s));
        }
    }
    let mut thin = Vec::new();
    for s in FUSE_STEPS {
        for scheme in [Scheme::RegionSharing, Scheme::Wavefront] {
            thin.push(Combo::new(cuda, 30, s, scheme, s));
            thin.push(Combo::new(cuda, 30, 2 * s, scheme, s));
        }
    }
    Suite {
        target: Target::Cuda,
        backend: cuda,
        combos,
        thin,
        group_combos: |s| {
            vec![
                Combo::new(BackendChoice::Cuda, 1, 12, Scheme::RegionSharing, s),
                Combo::new(BackendChoice::Cuda, 3, 2 * s, Scheme::Wavefront, s),
            ]
        },
        // Rows wider than two of the block's output tiles, and no whole number of them.
        shapes: Shapes {
            acoustic: (45, 38, 71),
            acoustic_source: (21, 17, 30),
            himeno: (33, 29, 70),
            laplace2d: (61, 300),
            row2d: (41, 1030),
            groups3d: (19, 13, 37),
            groups2d: (41, 1030),
        },
        himeno_noisy_b: [0, 2],
        acoustic_vector: &[2],
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_acoustic_on_cuda_equals_serial() {
    fused::acoustic_with_a_source(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_himeno_on_cuda_equals_serial_with_its_reduction() {
    fused::himeno_with_its_reduction(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_laplace2d_on_cuda_equals_serial() {
    fused::laplace2d(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_asymmetric_reaches_and_sums_on_cuda_equal_serial() {
    fused::asymmetric_reaches_and_sums(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_f64_diagonals_and_a_copy_nest_on_cuda_equal_serial() {
    fused::f64_diagonals_and_a_copy_nest(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_f64_source_term_on_cuda_equals_serial() {
    fused::f64_source_term(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_2d_forward_reads_on_cuda_equal_serial() {
    fused::forward_reads_2d(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_2d_asymmetric_rows_on_cuda_equal_serial() {
    fused::asymmetric_rows_2d(&suite());
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_runs_on_cuda_of_any_number_of_groups_leave_the_names_as_serial() {
    fused::any_number_of_groups(&suite());
}

/// The tuner weighing fusion on the GPU (`tune::fusion`; the test hook weighs this call, far
/// shorter than a weighing is worth): single steps and the fused forms compiled side by side
/// and timed on a slab of the call's arrays, the fused vector form's first blocks each timed.
/// Whichever form the tuner picks, the run equals serial.
#[test]
#[ignore = "needs a CUDA device"]
fn the_tuner_weighs_the_fused_forms_and_their_blocks_on_the_gpu() {
    use common::{differing, noise};
    use ndarray::Array3;
    use pacc::models::acoustic;
    gpu::device();
    let (shape, steps, (sz, sy, sx)) = ((70, 66, 72), 12, (35, 30, 40));
    let mut r = noise(11, -1.0, 1.0);
    let (p0, c0) = (
        Array3::from_shape_fn(shape, |_| r()),
        Array3::from_shape_fn(shape, |_| r()),
    );
    let mut rv = noise(13, 0.01, 0.2);
    let vel = Array3::from_shape_fn(shape, |_| rv());
    let w = acoustic::ricker(25.0, 0.002, steps);
    let (mut sp, mut sc) = (p0.clone(), c0.clone());
    acoustic::propagate::serial(&mut sp, &mut sc, &vel, &w, sz, sy, sx, 100.0, steps);
    let opts = pacc::Options {
        backend: BackendChoice::Cuda,
        ..Default::default()
    };
    let (mut p, mut q) = (p0.clone(), c0.clone());
    let weigh = pacc::runtime::tune::fusion::weigh_every_call();
    let ((), rep) =
        acoustic::propagate::run(&mut p, &mut q, &vel, &w, sz, sy, sx, 100.0, steps, &opts)
            .unwrap();
    drop(weigh);
    let notes = rep.adjustments.join("\n");
    let note = (rep.adjustments.iter())
        .find(|n| n.starts_with("fusion: predicted single step"))
        .unwrap_or_else(|| panic!("fusion was not weighed: {notes}"));
    assert!(note.contains("fused 2 (vector form, block "), "{note}");
    assert_eq!((differing(&p, &sp), differing(&q, &sc)), (0, 0), "{notes}");
    // The figures, for the log of a GPU run.
    eprintln!("{note}");
}
