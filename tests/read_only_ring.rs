//! The wavefront's read-only ring on the examples' own programs, at the sizes the issue measured
//! on the H100: the bytes the staircase moves across HBM per step with and without the ring.
//! Plans only (no device): `cargo test --test read_only_ring -- --nocapture` prints the figures.

use pacc::models::{acoustic, himeno};
use pacc::runtime::plan::{self, OpKind, PlanOptions, Scheme};
use pacc::{Plan, Program};

/// Device-to-device bytes of the arrays `which` selects.
fn dtod(plan: &Plan, which: impl Fn(usize) -> bool) -> u64 {
    (plan.ops.iter())
        .filter_map(|o| match &o.kind {
            OpKind::DtoD { array, planes, .. } if which(*array) => {
                Some(plan.raw_bytes(*array, planes))
            }
            _ => None,
        })
        .sum()
}

/// One block of `k` steps with `d` chunks on 4 buffer sets, with and without the ring.
fn plans(p: &Program, shape: &[usize], d: usize, k: usize, points: &[usize]) -> (Plan, Plan) {
    let o = PlanOptions {
        chunks: d,
        block_steps: k,
        scheme: Scheme::Wavefront,
        buffer_sets: Scheme::Wavefront.buffer_sets(),
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let on = plan::build(p, shape, k, points, &o).unwrap();
    let off = PlanOptions {
        read_only_ring: false,
        ..o
    };
    (on, plan::build(p, shape, k, points, &off).unwrap())
}

/// The ring holds exactly `ro`; the written arrays' staircase is unchanged; the read-only
/// arrays move at most `most` of what the staircase moved them; link bytes, kernels and device
/// memory stay. Returns the device-to-device bytes per step without and with the ring, and the
/// read-only arrays' share of each.
fn compare(p: &Program, on: &Plan, off: &Plan, ro: &[&str], most: f64) -> [f64; 4] {
    let names: Vec<&str> = (0..p.arrays.len())
        .filter(|&a| on.in_ring(a))
        .map(|a| p.arrays[a].name.as_str())
        .collect();
    assert_eq!(names, ro);
    let ring = |a: usize| on.in_ring(a);
    assert_eq!(dtod(on, |a| !ring(a)), dtod(off, |a| !ring(a)));
    let (before, after) = (dtod(off, ring), dtod(on, ring));
    assert!(
        after as f64 <= most * before as f64,
        "read-only arrays: {after} bytes with the ring, {before} without"
    );
    assert_eq!(on.bytes_htod(), off.bytes_htod());
    assert_eq!(on.bytes_dtoh(), off.bytes_dtoh());
    assert_eq!(on.device_bytes(), off.device_bytes());
    assert_eq!(on.totals(p).kernel_points, off.totals(p).kernel_points);
    let per_step = |b: u64| b as f64 / on.steps as f64;
    [
        per_step(off.bytes_dtod()),
        per_step(on.bytes_dtod()),
        per_step(before),
        per_step(after),
    ]
}

/// The figures of `compare` as a line of the test's output.
fn line(what: &str, f: [f64; 4]) -> String {
    format!(
        "{what}: {:.2} GB of device-to-device copies per step with the staircase ({:.2} of \
         read-only arrays), {:.2} with the ring ({:.2})",
        f[0] / 1e9,
        f[2] / 1e9,
        f[1] / 1e9,
        f[3] / 1e9
    )
}

/// Himeno at 1200^3: twelve coefficient arrays never change. Without the ring every chunk
/// copies each of them over the skew of the block; with it each moves once per group.
#[test]
fn himeno_1200_moves_its_coefficients_once_per_group() {
    let p = himeno::jacobi::program();
    let ro = [
        "a0", "a1", "a2", "a3", "b0", "b1", "b2", "c0", "c1", "c2", "bnd", "wrk1",
    ];
    for (d, k) in [(8, 24), (12, 32), (16, 48)] {
        let (on, off) = plans(p, &[1200, 1200, 1200], d, k, &[]);
        let f = compare(p, &on, &off, &ro, 0.25);
        println!("{}", line(&format!("himeno 1200^3 d{d} k{k}"), f));
        assert!(f[1] < 0.5 * f[0]);
    }
}

/// The sponge at 1800^3 (d16 k48, the measured wavefront): `vel` and `damp` never change.
#[test]
fn sponge_1800_keeps_vel_and_damp_in_the_ring() {
    let p = acoustic::propagate_sponge::program();
    let (on, off) = plans(p, &[1800, 1800, 1800], 16, 48, &[900]);
    let f = compare(p, &on, &off, &["vel", "damp"], 0.25);
    println!("{}", line("sponge 1800^3 d16 k48", f));
    let summary = on.summary(p);
    assert!(summary.contains("read-only ring: vel, damp"), "{summary}");
}
