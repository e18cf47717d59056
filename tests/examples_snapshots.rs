//! Snapshots of the code the translator generates for every example function, taken from the
//! very files the examples and tests compile (`src/models/*.rs`). A change to the generated CUDA
//! or host code shows up here as a diff to review (`cargo insta review`).

fn expand(source: &str, function: &str) -> pacc_translate::FileExpansion {
    let mut v = pacc_translate::expand_file(source, Some(function))
        .unwrap_or_else(|e| panic!("expanding `{function}`: {e}"));
    assert_eq!(v.len(), 1, "`{function}`");
    v.remove(0)
}

const LAPLACE2D: &str = include_str!("../src/models/laplace2d.rs");
const ACOUSTIC: &str = include_str!("../src/models/acoustic.rs");
const HIMENO: &str = include_str!("../src/models/himeno.rs");

#[test]
fn laplace2d_jacobi() {
    let e = expand(LAPLACE2D, "jacobi");
    insta::assert_snapshot!("laplace2d_jacobi_cuda", e.cuda);
    insta::assert_snapshot!("laplace2d_jacobi_host", e.host);
    assert_eq!(e.program.ndim, 2);
    assert_eq!(e.program.halo, 1);
}

#[test]
fn acoustic_propagate() {
    let e = expand(ACOUSTIC, "propagate");
    insta::assert_snapshot!("acoustic_propagate_cuda", e.cuda);
    insta::assert_snapshot!("acoustic_propagate_host", e.host);
    let p = &e.program;
    assert_eq!(p.halo, 4);
    assert_eq!((p.kernels.len(), p.points.len(), p.slices.len()), (1, 1, 1));
    let cur = p.array_index("cur").unwrap();
    let reach = p.kernels[0].reads.iter().find(|r| r.array == cur).unwrap();
    assert_eq!(
        (reach.lo.clone(), reach.hi.clone()),
        (vec![-4; 3], vec![4; 3])
    );
}

#[test]
fn acoustic_propagate_sponge() {
    let e = expand(ACOUSTIC, "propagate_sponge");
    insta::assert_snapshot!("acoustic_propagate_sponge_cuda", e.cuda);
    insta::assert_snapshot!("acoustic_propagate_sponge_host", e.host);
    assert_eq!(e.program.arrays.len(), 4);
}

#[test]
fn himeno_jacobi() {
    let e = expand(HIMENO, "jacobi");
    insta::assert_snapshot!("himeno_jacobi_cuda", e.cuda);
    insta::assert_snapshot!("himeno_jacobi_host", e.host);
    let p = &e.program;
    assert_eq!(
        (p.arrays.len(), p.kernels.len(), p.reductions.len()),
        (14, 2, 1)
    );
}
