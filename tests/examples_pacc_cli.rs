//! The `pacc` command-line tool on the example functions.

use pacc::Plan;
use std::process::Command;

fn pacc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pacc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run pacc");
    assert!(
        out.status.success(),
        "pacc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn expand_prints_cuda_and_host_code() {
    let out = pacc(&[
        "expand",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
    ]);
    assert!(out.contains("__global__"), "{out}");
    assert!(out.contains("pacc_propagate_k0"), "{out}");
    assert!(out.contains("mod propagate"), "{out}");
    assert!(
        !out.contains("propagate_sponge"),
        "--function selects one function"
    );
    // Every kernel form reads as C: the staged form under its condition, then the L1 form, and
    // the host code points to the CUDA section instead of repeating it as one escaped line.
    assert!(out.contains("#if PACC_STAGE && "), "{out}");
    assert!(out.contains("__shared__ float pacc_sm1["), "{out}");
    assert!(out.contains("pub const CUDA_SOURCE: &str = \"...\"; // the CUDA C section above ("));
    let longest = out.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 2000, "a {longest}-character line");
    let all = pacc(&["expand", "src/models/himeno.rs"]);
    assert!(
        all.contains("pacc_jacobi_k0") && all.contains("pacc_jacobi_k1"),
        "{all}"
    );
}

#[test]
fn plan_buffer_sets_default_to_the_schemes_and_zero_is_refused() {
    let sets = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "src/models/acoustic.rs",
            "--function",
            "propagate",
            "--shape",
            "64,32,32",
            "--json",
        ];
        args.extend_from_slice(extra);
        let v: serde_json::Value = serde_json::from_str(&pacc(&args)).expect("json");
        v["buffer_sets"].as_u64().expect("buffer_sets")
    };
    assert_eq!(sets(&["--scheme", "wavefront"]), 4);
    assert_eq!(sets(&["--scheme", "region-sharing"]), 3);
    assert_eq!(sets(&["--scheme", "wavefront", "--buffer-sets", "2"]), 2);
    let out = Command::new(env!("CARGO_BIN_EXE_pacc"))
        .args(["plan", "src/models/acoustic.rs", "--function", "propagate"])
        .args(["--shape", "64,32,32", "--buffer-sets", "0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run pacc");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("buffer_sets must be at least 1 (got 0)"),
        "{err}"
    );
}

/// Planes of each array moved to the device in block 0, from `pacc plan --json`.
fn planes_htod(scheme: &str) -> Vec<usize> {
    let json = pacc(&[
        "plan",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--shape",
        "1160,1160,1160",
        "--chunks",
        "8",
        "--block-steps",
        "12",
        "--scheme",
        scheme,
        "--json",
    ]);
    let plan: Plan = serde_json::from_str(json.trim()).expect("plan JSON");
    assert_eq!(plan.chunks, 8);
    assert_eq!(plan.block_steps, 12);
    (0..3).map(|a| plan.planes_htod(0, a)).collect()
}

/// The setting of Shen et al. (IEICE 2020): 1160^3, 8 chunks, 12 block steps. Region sharing
/// moves each array that is read once per block; direct mapping moves every chunk with its
/// halos, about 1.6 times as much (the paper counts 1160 against 1840 planes).
#[test]
fn plan_region_sharing_moves_each_array_once_per_block() {
    let shared = planes_htod("region-sharing");
    let direct = planes_htod("direct-map");
    // cur is read 4 planes away: exactly once. prev and vel are read at the centre only, and
    // the outer 4 planes of vel are never read, so they may move a few planes less.
    assert_eq!(shared[1], 1160, "cur");
    for (a, (&s, &d)) in shared.iter().zip(&direct).enumerate() {
        assert!(
            (1152..=1160).contains(&s),
            "array {a}: region-sharing moves {s} planes"
        );
        let ratio = d as f64 / 1160.0;
        assert!(
            (1.5..1.7).contains(&ratio),
            "array {a}: direct-map moves {d} planes ({ratio:.2}x)"
        );
    }
    let summary = pacc(&[
        "plan",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--shape",
        "1160,1160,1160",
        "--chunks",
        "8",
        "--block-steps",
        "12",
        "--scheme",
        "region-sharing",
    ]);
    assert!(summary.contains("operations per stream"), "{summary}");
    assert!(summary.contains("race check: passed"), "{summary}");
}

/// `pacc plan --json` for the acoustic setting above: the plan plus its `summary`.
fn plan_json(scheme: &str) -> serde_json::Value {
    let json = pacc(&[
        "plan",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--shape",
        "1160,1160,1160",
        "--chunks",
        "8",
        "--block-steps",
        "12",
        "--steps",
        "24",
        "--scheme",
        scheme,
        "--json",
    ]);
    serde_json::from_str(json.trim()).expect("plan JSON")
}

#[test]
fn plan_json_has_a_summary_for_every_scheme() {
    let n = 1160u64;
    let plane = n * n * 4;
    // The nest covers 4..n-4 on every axis, 24 steps.
    let serial = 24 * (n - 8).pow(3);
    for scheme in ["staged-copy", "direct-map", "region-sharing", "wavefront"] {
        let v = plan_json(scheme);
        let s = &v["summary"];
        let field = |k: &str| {
            s[k].as_u64()
                .unwrap_or_else(|| panic!("{scheme}: summary.{k} in {s}"))
        };
        assert_eq!(field("serial_points"), serial, "{scheme}");
        let plan: Plan = serde_json::from_value(v.clone()).expect("plan");
        assert_eq!(field("bytes_htod"), plan.bytes_htod(), "{scheme}");
        assert_eq!(field("bytes_dtoh"), plan.bytes_dtoh(), "{scheme}");
        if scheme == "wavefront" {
            assert_eq!(field("kernel_points"), serial, "computed once");
            // prev, cur and vel are loaded once per block, prev and cur written back once.
            assert_eq!(field("bytes_htod"), 2 * 3 * n * plane);
            assert_eq!(field("bytes_dtoh"), 2 * 2 * n * plane);
        } else {
            assert!(
                field("kernel_points") > serial,
                "{scheme}: overlapped halos"
            );
        }
    }
    let text = pacc(&[
        "plan",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--shape",
        "64,32,32",
        "--chunks",
        "4",
        "--block-steps",
        "3",
        "--scheme",
        "wavefront",
    ]);
    assert!(text.contains("redundancy 1.000"), "{text}");
    assert!(text.contains("windows of block 0"), "{text}");
    assert!(text.contains("from chunk 0"), "staircase: {text}");
    assert!(text.contains("race check: passed"), "{text}");
}

/// `pacc plan` labels streams by the role the plan gives them (set 0's third stream carries its
/// write-backs), warns about wasteful settings and refuses an empty axis by name.
#[test]
fn plan_labels_streams_by_role_and_warns_about_waste() {
    let args = |shape: &'static str, chunks: &'static str| {
        vec![
            "plan",
            "src/models/laplace2d.rs",
            "--shape",
            shape,
            "--chunks",
            chunks,
            "--block-steps",
            "4",
        ]
    };
    let out = pacc(&args("100,100", "4"));
    assert!(
        out.contains("stream 0 (set 0, loads + shared planes): "),
        "{out}"
    );
    assert!(out.contains("stream 1 (set 0, kernels): "), "{out}");
    let wb = out
        .lines()
        .find(|l| l.contains("stream 2 ("))
        .expect("stream 2");
    assert!(wb.contains("write-backs") && wb.contains("DtoH"), "{wb}");
    assert!(!wb.contains("Kernel") && !wb.contains("HtoD"), "{wb}");
    assert!(!out.contains("warning:"), "{out}");

    let out = pacc(&args("100,100", "50"));
    assert!(out.contains("warning: redundancy "), "{out}");
    assert!(
        out.contains("warning: more chunks than make sense: 50 chunks"),
        "{out}"
    );

    let res = Command::new(env!("CARGO_BIN_EXE_pacc"))
        .args(args("0,100", "4"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run pacc");
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(!res.status.success());
    assert!(err.contains("no points along axis 0"), "{err}");
    assert!(!err.contains("at most 0 chunks"), "{err}");
}

#[test]
fn plan_counts_kernel_launches_per_block() {
    let out = pacc(&[
        "plan",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--shape",
        "200,64,64",
        "--chunks",
        "4",
        "--block-steps",
        "6",
        "--scheme",
        "wavefront",
    ]);
    // Single-step kernels: one launch per nest, chunk and step.
    assert!(
        out.contains(
            "kernel launches: 24 per block on average (1 nest(s) x 4 chunks x up to 6 steps"
        ),
        "{out}"
    );
}

/// `pacc plan` shows the wavefront's read-only ring (the sponge's `vel` and `damp`), where each
/// chunk reads it, and leaves it out with `--no-ring`.
#[test]
fn plan_shows_the_read_only_ring() {
    let args = |extra: &'static str| {
        let mut v = vec![
            "plan",
            "src/models/acoustic.rs",
            "--function",
            "propagate_sponge",
            "--shape",
            "400,64,64",
            "--chunks",
            "8",
            "--block-steps",
            "4",
            "--scheme",
            "wavefront",
        ];
        v.extend(extra.split_whitespace());
        v
    };
    let with = pacc(&args(""));
    assert!(
        with.contains("read-only ring: vel, damp in one device buffer each"),
        "{with}"
    );
    assert!(with.contains("vel 0.."), "{with}");
    assert!(with.contains("from host into the ring"), "{with}");
    assert!(with.contains("reads the ring at base"), "{with}");
    assert!(with.contains("race check: passed"), "{with}");
    let without = pacc(&args("--no-ring"));
    for ring in ["read-only ring", "into the ring", "reads the ring"] {
        assert!(!without.contains(ring), "{without}");
    }
    assert!(without.contains("vel 38..54 from chunk 0"), "{without}");
}
