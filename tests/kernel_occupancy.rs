//! The occupancy guard: when nobody sets `minb`, no marching kernel runs with one thread block
//! per SM (a memory-bound kernel then cannot keep enough loads in flight); an explicit `minb`
//! is kept as asked. The guard watches the scalar forms; the vector forms ask for two blocks
//! per SM themselves. Skips, saying why, where there is no CUDA device.

use ndarray::Array3;
use pacc::models::acoustic;
use pacc::runtime::{BackendChoice, Error, MarchTuning, Options, Report};

fn sponge_run(march: Option<&str>) -> Option<Report> {
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
    match acoustic::propagate_sponge::run(
        &mut prev, &mut cur, &vel, &damp, &w, 20, 36, 68, 100.0, 6, &o,
    ) {
        Ok((_, r)) => Some(r),
        Err(Error::NoCuda { reason, .. }) => {
            eprintln!("skipping the occupancy guard test: {reason}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn unset_minb_never_leaves_one_block_per_sm() {
    for march in [
        None,
        Some("vx=1"),
        Some("stage=0"),
        Some("stage=1,unroll=1"),
    ] {
        let Some(r) = sponge_run(march) else { return };
        for k in r.kernels.iter().filter(|k| k.form != "plain") {
            assert!(k.blocks_per_sm >= 2, "{march:?}: {k}\n{r}");
        }
    }
}

#[test]
fn explicit_minb_is_kept_and_the_guard_says_when_it_acts() {
    let Some(asked) = sponge_run(Some("minb=1,vx=1")) else {
        return;
    };
    let Some(default) = sponge_run(Some("vx=1")) else {
        return;
    };
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
    let Some(vector) = sponge_run(None) else {
        return;
    };
    assert_eq!(vector.kernels[0].form, "vector", "{vector}");
    assert!(vector.kernels[0].blocks_per_sm >= 2, "{vector}");
    assert!(
        !vector.adjustments.iter().any(|a| a.contains("since `")),
        "{vector}"
    );
}
