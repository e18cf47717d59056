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

/// `pacc` with `args`, expected to fail: its standard error.
fn pacc_fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pacc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run pacc");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "pacc {args:?} succeeded");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// `pacc plan` prints each block's launches: one per nest, chunk and step for the single-step
/// kernels, one per group of S steps with `--fuse S`, planned as a fused run plans (the fused
/// kernel, its output buffers, groups of S steps per block).
#[test]
fn plan_shows_launches_per_block_plain_and_fused() {
    let himeno = |extra: &[&'static str]| {
        let mut args = vec![
            "plan",
            "src/models/himeno.rs",
            "--shape",
            "64,64,96",
            "--block-steps",
            "8",
        ];
        args.extend_from_slice(extra);
        args
    };
    let plain = pacc(&himeno(&[]));
    assert!(
        plain.contains(
            "block 0: kernel launches: 8 steps = 8 launches of `pacc_jacobi_k0` + 8 launches of \
             `pacc_jacobi_k1` per chunk (64 over 4 chunks)\n"
        ),
        "{plain}"
    );
    // 1 step per launch is the single-step kernels, as for a run.
    assert_eq!(pacc(&himeno(&["--fuse", "1"])), plain);

    let fused = pacc(&himeno(&["--fuse", "2"]));
    assert!(
        fused.contains(
            "block 0: kernel launches: 8 steps = 4 launches of `pacc_jacobi_f2` (2 steps each) per \
             chunk (16 over 4 chunks) + output buffers: p~0, wrk2~1 (4.5 MiB on the device)"
        ),
        "{fused}"
    );
    assert!(
        fused.contains(
            "8 steps (4 launches of 2), scheme region-sharing, 4 chunks, 8 block steps (4 \
             launches) (1 blocks)"
        ),
        "{fused}"
    );
    assert!(fused.contains("2 time steps per launch"), "{fused}");
    assert!(fused.contains("race check: passed"), "{fused}");
    // The same serial loop as the plain plan (in time steps, not launches), and the output
    // buffers, which never cross the link, have no row in the link table.
    let serial = |out: &str| -> Option<u64> {
        let line = out.lines().find(|l| l.starts_with("kernel points:"))?;
        let (_, rest) = line.split_once(", ")?;
        rest.split_once(" in the serial loop")?.0.parse().ok()
    };
    // Two nests (the update and the copy back) over the 62 x 62 x 94 interior, 8 steps.
    assert_eq!(serial(&plain), Some(8 * 2 * 62 * 62 * 94), "{plain}");
    assert_eq!(serial(&fused), serial(&plain), "{fused}");
    assert!(
        !fused.lines().any(|l| l.trim_start().starts_with("p~0")),
        "{fused}"
    );
    assert!(!fused.contains("pacc_jacobi_k0"), "{fused}");

    // Three blocks of 4, 4 and 2 launches; the wavefront plans the fused program too.
    let blocks = pacc(&himeno(&["--fuse", "2", "--steps", "20"]));
    assert!(blocks.contains("block 2: kernel launches: 4 steps = 2 launches of `pacc_jacobi_f2`"));
    let wave = pacc(&himeno(&[
        "--fuse",
        "3",
        "--steps",
        "18",
        "--scheme",
        "wavefront",
    ]));
    assert!(
        wave.contains(
            "block 1: kernel launches: 9 steps = 3 launches of `pacc_jacobi_f3` (3 steps each)"
        ),
        "{wave}"
    );
    assert!(wave.contains("race check: passed"), "{wave}");

    let v: serde_json::Value =
        serde_json::from_str(&pacc(&himeno(&["--fuse", "2", "--json"]))).expect("json");
    let f = &v["fusion"];
    assert_eq!(f["kernel"], "pacc_jacobi_f2", "{f}");
    assert_eq!(
        (f["steps_per_launch"].as_u64(), f["steps"].as_u64()),
        (Some(2), Some(8))
    );
    assert_eq!(f["launches_per_chunk"], serde_json::json!([4]), "{f}");
    assert_eq!(f["output_buffers"][0]["name"], "p~0", "{f}");
    assert_eq!(f["output_buffers"][0]["array"], "p", "{f}");
    // Himeno has no vector form: one block, its 30x14 output tile; the first step's two nests
    // run on the whole 32x16 block (the second step reads a point around), the second's on
    // the tile.
    let b = &f["blocks"];
    assert_eq!(b.as_array().map(Vec::len), Some(1), "{f}");
    assert_eq!(b[0]["threads"], serde_json::json!([32, 16]), "{f}");
    assert_eq!(b[0]["output_tile"], serde_json::json!([30, 14]), "{f}");
    let e = b[0]["evaluations_per_point_step"].as_f64().unwrap();
    let want = (2.0 * 32.0 * 16.0 + 2.0 * 30.0 * 14.0) / (4.0 * 30.0 * 14.0);
    assert!((e - want).abs() < 1e-9, "{e} {want} {f}");
    let plan: Plan = serde_json::from_value(v.clone()).expect("plan");
    assert_eq!(
        (plan.steps, plan.block_steps),
        (4, 4),
        "the plan counts launches"
    );
    let v: serde_json::Value = serde_json::from_str(&pacc(&himeno(&["--json"]))).expect("json");
    assert!(v.get("fusion").is_none(), "no fusion without --fuse");

    // The acoustic step: its point statement is folded into the fused kernel.
    let acoustic = |extra: &[&'static str]| {
        let mut args = vec![
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
        ];
        args.extend_from_slice(extra);
        pacc(&args)
    };
    let out = acoustic(&[]);
    assert!(
        out.contains(
            "block 0: kernel launches: 6 steps = 6 launches of `pacc_propagate_k0` per chunk (24 \
             over 4 chunks) + 11 launches of point statement `pacc_propagate_p0` in the chunks \
             holding its plane\n"
        ),
        "{out}"
    );
    let out = acoustic(&["--fuse", "2"]);
    assert!(
        out.contains("6 steps = 3 launches of `pacc_propagate_f2` (2 steps each) per chunk"),
        "{out}"
    );
    assert!(out.contains("output buffers: prev~0, cur~1 ("), "{out}");
    // The fused kernel's work: at 8x48 the first step runs on all 32x48 points, the second on
    // the 24x40 output, in 10 of the 12 warps (each lane 4 points): (1536 + 960) / 1920
    // evaluations and (1536 + 1280) / 1920 lanes per point-step.
    assert!(
        out.contains(
            "fused kernel `pacc_propagate_f2`, vector form (the default), 8x48 threads: output \
             tile 24x40, in the plane 1.30 evaluations and 1.47 thread lanes per point-step\n"
        ),
        "{out}"
    );
    assert!(out.contains("one-column form (PACC_MARCH=vx=1), 32x16 threads: output tile 24x8, in the plane 1.83 evaluations"), "{out}");
    // Three steps at 8x32: (32x32 + 24x24 + 16x16) / (3 x 16x16).
    let out = acoustic(&["--fuse", "3"]);
    assert!(
        out.contains("8x32 threads: output tile 16x16, in the plane 2.42 evaluations"),
        "{out}"
    );
    assert!(!acoustic(&[]).contains("fused kernel"));
}

/// `--fuse` with no fused form of that many steps, or a step count that is no multiple of it:
/// an error that says why, no plan.
#[test]
fn plan_refuses_a_fusion_it_cannot_run() {
    let args = |fuse: &'static str, steps: &'static str| {
        vec![
            "plan",
            "src/models/himeno.rs",
            "--shape",
            "64,64,96",
            "--block-steps",
            "8",
            "--fuse",
            fuse,
            "--steps",
            steps,
        ]
    };
    let err = pacc_fails(&args("5", "10"));
    let want = format!(
        "fuse = 5 (from `--fuse`): `jacobi` has no kernel fusing 5 steps: the translator fuses \
         {} steps only",
        pacc_translate::codegen::fuse::fuse_steps_text()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("leave it unset (or 1)"), "{err}");
    let err = pacc_fails(&args("2", "7"));
    assert!(
        err.contains("a fused run takes the steps in groups of 2"),
        "{err}"
    );
    assert!(err.contains("and the call has 7"), "{err}");
}

/// `pacc expand` prints the CUDA C once, as text: the host code and the program description
/// point to it instead of repeating it as an escaped string, and an index names every kernel
/// form with its line and the condition it is compiled under.
#[test]
fn expand_prints_no_escaped_cuda_and_lists_every_kernel_form() {
    for file in [
        "src/models/himeno.rs",
        "src/models/acoustic.rs",
        "src/models/laplace2d.rs",
    ] {
        let out = pacc(&["expand", file, "--program"]);
        assert!(!out.contains("\\n"), "{file}: an escaped line break");
        assert!(
            out.contains("\"cuda_source\": \"/* the CUDA C section above ("),
            "{file}"
        );
        let host = pacc(&["expand", file, "--host"]);
        assert!(!host.contains("__global__"), "{file}");
        assert!(!host.contains("\\n"), "{file}");
        assert!(
            host.contains(
                "pub const CUDA_SOURCE: &str = \"...\"; // `pacc expand --cuda` prints it ("
            ),
            "{file}"
        );
    }
    let cuda = pacc(&["expand", "src/models/himeno.rs", "--cuda"]);
    assert!(!cuda.contains("mod jacobi"), "{cuda}");
    let index: Vec<&str> = cuda
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("//"))
        .collect();
    for (name, form) in [
        ("pacc_jacobi_k0 ", "marching"),
        ("pacc_jacobi_k0_plain", "plain: one thread per point"),
        ("pacc_jacobi_k1 ", "marching"),
        ("pacc_jacobi_f2", "fused: 2 steps per launch"),
        ("pacc_jacobi_f3", "fused: 3 steps per launch"),
    ] {
        assert!(
            index.iter().any(|l| l.contains(name) && l.ends_with(form)),
            "{name}: {index:#?}"
        );
    }
    assert!(
        index.iter().any(|l| l.contains("#if PACC_FUSE == 2 &&")),
        "{index:#?}"
    );
    // The line an index row gives is the line of `__global__` in the source.
    let source = cuda.lines().skip(index.len() + 2).collect::<Vec<_>>();
    let row = index.iter().find(|l| l.contains("pacc_jacobi_f3")).unwrap();
    let line: usize = row[2..].split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        source[line - 1].contains("__global__") && source[line - 1].contains("pacc_jacobi_f3(")
    );

    let acoustic = pacc(&[
        "expand",
        "src/models/acoustic.rs",
        "--function",
        "propagate",
        "--cuda",
    ]);
    for form in [
        "pacc_propagate_k0        marching, staged: in-plane reads from shared-memory tiles",
        "pacc_propagate_k0        marching, L1: in-plane reads through the cache",
        "pacc_propagate_k0_vec    vector marching: 4 points along x per thread",
        "pacc_propagate_k0_plain  plain: one thread per point",
        "pacc_propagate_p0        point statement",
        "pacc_propagate_f2        fused: 2 steps per launch",
    ] {
        assert!(acoustic.contains(form), "{form}");
    }
    assert!(acoustic.contains("#else of the #if at line "), "{acoustic}");
}

/// Shapes whose arrays could not exist are refused before any arithmetic on them wraps (the
/// plan printed "1 elements per plane" for this one).
#[test]
fn plan_refuses_a_shape_that_overflows() {
    let max = usize::MAX.to_string();
    let half = (usize::MAX / 2).to_string();
    for (file, shape) in [
        ("src/models/acoustic.rs", format!("100,{max},{max}")),
        ("src/models/acoustic.rs", format!("2,{half},1")),
        ("src/models/laplace2d.rs", format!("{half},2")),
    ] {
        let mut args = vec!["plan", file, "--shape", &shape];
        if file.contains("acoustic") {
            args.extend(["--function", "propagate"]);
        }
        let err = pacc_fails(&args);
        assert!(
            err.contains(&format!("--shape `{shape}`")) && err.contains("address space"),
            "{err}"
        );
    }
}

/// A pipelined function whose stencil expression sits inside `depth` parentheses.
fn nested_source(depth: usize) -> String {
    format!(
        "use ndarray::Array2;\n\
         #[pacc::pipeline]\n\
         pub fn deep(a: &mut Array2<f32>, b: &mut Array2<f32>, iterations: usize) {{\n\
         let (ny, nx) = a.dim();\n\
         for _it in 0..iterations {{\n\
         for y in 1..ny - 1 {{\n\
         for x in 1..nx - 1 {{\n\
         b[[y, x]] = 0.25 * {}a[[y - 1, x]] + a[[y + 1, x]]{};\n\
         }}\n}}\n\
         std::mem::swap(a, b);\n\
         }}\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

/// Deep nesting is refused with an error (5,000 parentheses overflowed the stack: abort, rc
/// 134), and code nested close to the limit still expands.
#[test]
fn expand_bounds_the_nesting_depth() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let deep = dir.join("pacc_cli_nested_5000.rs");
    std::fs::write(&deep, nested_source(5000)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pacc"))
        .args(["expand", deep.to_str().unwrap()])
        .output()
        .expect("run pacc");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {err}", out.status);
    assert!(err.contains("nest more than 256 deep at line 8"), "{err}");
    let near = dir.join("pacc_cli_nested_240.rs");
    std::fs::write(&near, nested_source(240)).unwrap();
    let out = pacc(&["expand", near.to_str().unwrap(), "--cuda"]);
    assert!(out.contains("pacc_deep_k0"), "{out}");
}
