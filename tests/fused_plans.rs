//! A fused run moves what the single-step run moves across the link: its output buffers (the
//! twins) share host memory with their originals and are written whole before anything reads
//! them, so no plan loads them. Before, the wavefront loaded every twin from the host: Himeno
//! 1200³ fused 2 moved 331.8 GB to the device against 290.3 GB in single steps (H100,
//! `benches/results/2026-11-26-h100-fusion/`). Plans only (no device).

use pacc::models::{acoustic, himeno};
use pacc::runtime::plan::{self, OpKind, PlanOptions, Scheme};
use pacc::Program;

fn options(scheme: Scheme, chunks: usize, block_steps: usize) -> PlanOptions {
    PlanOptions {
        chunks,
        block_steps,
        scheme,
        buffer_sets: scheme.buffer_sets(),
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    }
}

/// Bytes to and from the device of `steps` single steps and of the same steps fused `s` at a
/// time, each in blocks of `k` steps; and the arrays of the fused run loaded from the host.
fn link_bytes(
    p: &Program,
    shape: &[usize],
    scheme: Scheme,
    (steps, k, s): (usize, usize, usize),
) -> ([(u64, u64); 2], Vec<usize>) {
    let points = vec![shape[0] / 2; p.points.len()];
    let single = plan::build(p, shape, steps, &points, &options(scheme, 4, k)).unwrap();
    let fused = pacc::runtime::fuse::program(p, s).unwrap();
    let grouped = plan::build(
        &fused,
        shape,
        steps / s,
        &points,
        &options(scheme, 4, k / s),
    );
    let grouped = grouped.unwrap();
    let mut loaded: Vec<usize> = (grouped.ops.iter())
        .filter_map(|o| match o.kind {
            OpKind::HtoD { array, .. } => Some(array),
            _ => None,
        })
        .collect();
    loaded.sort_unstable();
    loaded.dedup();
    let bytes = [
        (single.bytes_htod(), single.bytes_dtoh()),
        (grouped.bytes_htod(), grouped.bytes_dtoh()),
    ];
    (bytes, loaded)
}

#[test]
fn fused_plans_move_no_more_link_bytes_than_single_steps() {
    let cases: [(&Program, Vec<usize>); 3] = [
        (himeno::jacobi::program(), vec![96, 40, 44]),
        (acoustic::propagate::program(), vec![120, 30, 36]),
        (acoustic::propagate_sponge::program(), vec![120, 30, 36]),
    ];
    for (p, shape) in &cases {
        for scheme in [Scheme::Wavefront, Scheme::RegionSharing] {
            for s in [2, 3] {
                let ([single, fused], loaded) = link_bytes(p, shape, scheme, (24, 12, s));
                let what = format!("{} {scheme:?} fused {s}", p.name);
                // No output buffer (arrays after the program's own) crosses the link inward.
                assert!(
                    loaded.iter().all(|&a| a < p.arrays.len()),
                    "{what}: {loaded:?}"
                );
                assert!(single.0 > 0, "{what}: nothing moves");
                if scheme == Scheme::Wavefront {
                    assert_eq!(fused, single, "{what}: (to, from) device");
                } else {
                    // The fused kernel spans every plane, so region sharing also loads the
                    // boundary planes a nest of `h..n - h` never reads.
                    let (n, h) = (shape[0] as u64, p.halo as u64);
                    assert!(
                        fused.0 * (n - 2 * h) <= single.0 * n,
                        "{what}: {fused:?} {single:?}"
                    );
                    assert_eq!(fused.1, single.1, "{what}: from device");
                }
            }
        }
    }
}

/// Device-to-device bytes of the wavefront's staircase for `steps` single steps and the same
/// steps fused `s` at a time, in blocks of `k` steps over `d` chunks.
fn staircase_bytes(
    p: &Program,
    shape: &[usize],
    (steps, k, s, d): (usize, usize, usize, usize),
) -> [u64; 2] {
    let points = vec![shape[0] / 2; p.points.len()];
    let opts = |k| options(Scheme::Wavefront, d, k);
    let single = plan::build(p, shape, steps, &points, &opts(k)).unwrap();
    let fused = pacc::runtime::fuse::program(p, s).unwrap();
    let grouped = plan::build(&fused, shape, steps / s, &points, &opts(k / s)).unwrap();
    [single.bytes_dtod(), grouped.bytes_dtod()]
}

/// A fused run's arrays and their output buffers trade places every launch, so each buffer is
/// read at every other level of the staircase: a chunk receives only the planes it reads
/// before computing them. Sharing all four of the acoustic run's buffers whole copied 2.09x
/// the single steps' planes (14.2 against 6.8 MiB: `pacc plan --fuse 2` on either acoustic
/// function, 200x64x64, 4 chunks, 8 steps a block); receiving what is read copies 10.5 against
/// 6.4 MiB (the single steps' staircase shrank too), 1.64x.
#[test]
fn a_fused_staircase_copies_only_what_the_next_chunk_reads() {
    for p in [
        acoustic::propagate::program(),
        acoustic::propagate_sponge::program(),
    ] {
        let [single, fused] = staircase_bytes(p, &[200, 64, 64], (16, 8, 2, 4));
        assert!(single > 0, "{}", p.name);
        let ratio = fused as f64 / single as f64;
        assert!(
            ratio < 1.75,
            "{}: fused {fused} single {single} ({ratio:.2}x)",
            p.name
        );
    }
}
