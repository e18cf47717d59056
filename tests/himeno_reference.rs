//! The Himeno sweep against the original benchmark.
//!
//! Reference gosa values: the original C source `himenoBMTxpa.c` (R. Himeno, RIKEN, version 3.0),
//! its `jacobi`, `mat_set`, `mat_set_init` and `set_param` unchanged, driven by a small main that
//! initialises the matrices as the original's main does and calls `jacobi(nn, ...)` once,
//! compiled with `gcc -O2 -ffp-contract=off` (and `-O0`: same values) on x86-64, 2026-11-22.

use pacc::models::himeno::{self, Himeno};
use pacc::{BackendChoice, Options, Scheme};

/// (grid (mimax, mjmax, mkmax), iterations, gosa printed by the original with %.9e).
const REFERENCE: &[((usize, usize, usize), usize, f64)] = &[
    ((32, 32, 64), 1, 6.711067632e-03),
    ((32, 32, 64), 2, 6.436054129e-03),
    ((32, 32, 64), 3, 6.227474194e-03),
    ((32, 32, 64), 10, 5.357910879e-03),
    ((64, 64, 128), 3, 3.288627835e-03),
    ((16, 12, 20), 3, 4.475348163e-03),
    ((16, 12, 20), 5, 3.833332099e-03),
];

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn grids_are_the_originals() {
    assert_eq!(himeno::grid("xs"), Some((32, 32, 64)));
    assert_eq!(himeno::grid("S"), Some((64, 64, 128)));
    assert_eq!(himeno::grid("m"), Some((128, 128, 256)));
    assert_eq!(himeno::grid("l"), Some((256, 256, 512)));
    assert_eq!(himeno::grid("XL"), Some((512, 512, 1024)));
    assert_eq!(himeno::grid("xxl"), None);
    assert_eq!(himeno::c_exp(5.357910879e-03), "5.357911e-03");
    assert_eq!(himeno::c_exp(1.5e12), "1.500000e+12");
}

#[test]
fn serial_gosa_matches_the_original() {
    for &(shape, nn, want) in REFERENCE {
        let got = Himeno::new(shape).serial(nn) as f64;
        // Same operations in the same order as the C code: in fact equal to its 10 printed digits.
        assert!(
            rel(got, want) < 1e-4,
            "grid {shape:?}, {nn} sweeps: gosa {got:e}, the original gives {want:e}"
        );
    }
}

#[test]
fn pipelined_gosa_matches_the_original_and_the_serial_function() {
    for &(shape, nn, want) in REFERENCE.iter().filter(|r| r.0 .0 <= 32) {
        let mut serial = Himeno::new(shape);
        let sgosa = serial.serial(nn);
        for (backend, d, k, scheme) in [
            (BackendChoice::Cpu, 3, 2, Scheme::RegionSharing),
            (BackendChoice::Cpu, 2, 3, Scheme::DirectMap),
            (BackendChoice::Shuffled(9), 4, 1, Scheme::StagedCopy),
        ] {
            let mut h = Himeno::new(shape);
            let o = Options::new()
                .backend(backend)
                .chunks(d)
                .block_steps(k)
                .scheme(scheme);
            let (gosa, _) = h.run(nn, &o).unwrap_or_else(|e| panic!("{e}"));
            let what =
                format!("grid {shape:?}, {nn} sweeps, {backend:?} {d} chunks {k} steps {scheme}");
            // The pipeline sums gosa plane by plane: equal up to the rounding of f32 sums in a
            // different order (about 4e-4 relative at XS; see `himeno::gosa_tolerance`).
            let tol = himeno::gosa_tolerance(shape);
            assert!(
                rel(gosa as f64, want) <= tol,
                "{what}: gosa {gosa:e} vs the original's {want:e}"
            );
            assert!(
                rel(gosa as f64, sgosa as f64) <= tol,
                "{what}: gosa {gosa:e} vs serial {sgosa:e}"
            );
            assert!(
                h.p.iter()
                    .zip(serial.p.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{what}: p differs from the serial function's"
            );
        }
    }
}

#[test]
fn gosa_falls_over_iterations() {
    let shape = (24, 16, 32);
    let serial: Vec<f32> = (1..=8).map(|n| Himeno::new(shape).serial(n)).collect();
    for w in serial.windows(2) {
        assert!(w[1] < w[0], "gosa did not fall: {serial:?}");
    }
    let o = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(2);
    let piped: Vec<f32> = (1..=8)
        .map(|n| {
            Himeno::new(shape)
                .run(n, &o)
                .unwrap_or_else(|e| panic!("{e}"))
                .0
        })
        .collect();
    for w in piped.windows(2) {
        assert!(w[1] < w[0], "pipelined gosa did not fall: {piped:?}");
    }
}
