//! The occupancy guard: when nobody sets `minb`, no marching kernel runs with one thread block
//! per SM (a memory-bound kernel then cannot keep enough loads in flight); an explicit `minb`
//! is kept as asked. The guard watches the scalar forms; the vector forms ask for two blocks
//! per SM themselves. Needs a CUDA device: ignored by a plain `cargo test`.

mod gpu;

use ndarray::Array3;
use pacc::models::acoustic;
use pacc::runtime::{BackendChoice, MarchTuning, Options, Report};

fn sponge_run(march: Option<&str>) -> Report {
    gpu::device();
    let n = (40, 72, 136);
    let vel = Array3::from_elem(n, acoustic::courant2(2000.0, 0.001, 10.0));
    let damp = acoustic::sponge(n, 6, 0.05);
    let mut prev = Array3::from_shape_fn(n, |(z, y, x)| ((z + 2 * y + 3 * x) % 11) as f32 * 1e-2);
    let mut cur = prev.clone();
    let w = acoustic::ricker(15.0, 0.001, 6);
    let mut o = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(2)
        .block_steps(3);
    if let Some(m) = march {
        o = o.march(MarchTuning::parse(m).unwrap());
    }
    acoustic::propagate_sponge::run(
        &mut prev, &mut cur, &vel, &damp, &w, 20, 36, 68, 100.0, 6, &o,
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .1
}

#[test]
#[ignore = "needs a CUDA device"]
fn unset_minb_never_leaves_one_block_per_sm() {
    for march in [
        None,
        Some("vx=1"),
        Some("stage=0"),
        Some("stage=1,unroll=1"),
    ] {
        let r = sponge_run(march);
        for k in r.kernels.iter().filter(|k| k.form != "plain") {
            assert!(k.blocks_per_sm >= 2, "{march:?}: {k}\n{r}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn explicit_minb_is_kept_and_the_guard_says_when_it_acts() {
    let asked = sponge_run(Some("minb=1,vx=1"));
    let default = sponge_run(Some("vx=1"));
    let one_block = asked.kernels[0].blocks_per_sm == 1;
    let noted = default
        .adjustments
        .iter()
        .any(|a| a.contains("minb=2, since `pacc_propagate_sponge_k0` fitted one block"));
    // The guard acts exactly when the kernel as asked fits one block per SM.
    assert_eq!(one_block, noted, "{asked}\n{default}");
    assert!(
        !asked.adjustments.iter().any(|a| a.contains("since `")),
        "{asked}"
    );
    // The vector form (the default in 3D) is left alone.
    let vector = sponge_run(None);
    assert_eq!(vector.kernels[0].form, "vector", "{vector}");
    assert!(vector.kernels[0].blocks_per_sm >= 2, "{vector}");
    assert!(
        !vector.adjustments.iter().any(|a| a.contains("since `")),
        "{vector}"
    );
}
