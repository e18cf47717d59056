mod programs;

fn expand_one(src: &str) -> pacc_translate::FileExpansion {
    let mut v = pacc_translate::expand_file(src, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.len(), 1);
    v.remove(0)
}

#[test]
fn laplace2d() {
    let e = expand_one(programs::LAPLACE2D);
    insta::assert_snapshot!("laplace2d_cuda", e.cuda);
    insta::assert_snapshot!("laplace2d_host", e.host);
}

#[test]
fn acoustic3d() {
    let e = expand_one(programs::ACOUSTIC3D);
    insta::assert_snapshot!("acoustic3d_cuda", e.cuda);
    insta::assert_snapshot!("acoustic3d_host", e.host);
}

/// Himeno is the model's own function (`programs::himeno`), whose expansion the root crate's
/// `examples_snapshots` test records: this test holds it to the same snapshots.
#[test]
fn himeno() {
    let e = expand_one(programs::himeno());
    insta::with_settings!({
        snapshot_path => "../../tests/snapshots",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!("examples_snapshots__himeno_jacobi_cuda", e.cuda);
        insta::assert_snapshot!("examples_snapshots__himeno_jacobi_host", e.host);
    });
    let p = &e.program;
    assert_eq!(p.arrays.len(), 14);
    assert_eq!(p.kernels.len(), 2);
    assert_eq!(p.halo, 1);
    assert_eq!(p.arrays[13].role, pacc_runtime::program::Role::Scratch);
}
