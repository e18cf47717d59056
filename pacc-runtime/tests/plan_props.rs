//! Planner properties: transfer volumes computed by hand, and no races, over random programs.

use pacc_runtime::plan::{self, race, OpKind, PlanOptions, Scheme, Transfers};
use pacc_runtime::program::*;
use proptest::prelude::*;

fn array(name: &str, role: Role) -> ArrayDecl {
    ArrayDecl {
        name: name.into(),
        elem: Elem::F32,
        role,
    }
}

fn full(ndim: usize, halo: i64) -> Vec<AxisRange> {
    vec![
        AxisRange {
            lo: Bound::start(halo),
            hi: Bound::end(-halo)
        };
        ndim
    ]
}

/// The acoustic propagator's structure: prev = f(cur +-r, prev, vel); swap(prev, cur).
fn acoustic(r: i64) -> Program {
    Program {
        name: "acoustic".into(),
        ndim: 3,
        arrays: vec![
            array("prev", Role::InOut),
            array("cur", Role::InOut),
            array("vel", Role::Input),
        ],
        kernels: vec![KernelDecl {
            name: "k0".into(),
            ranges: full(3, r),
            reads: vec![
                ReadDecl {
                    array: 1,
                    lo: vec![-r; 3],
                    hi: vec![r; 3],
                },
                ReadDecl {
                    array: 0,
                    lo: vec![0; 3],
                    hi: vec![0; 3],
                },
                ReadDecl {
                    array: 2,
                    lo: vec![0; 3],
                    hi: vec![0; 3],
                },
            ],
            writes: vec![0],
            reductions: vec![],
            launch: Default::default(),
            guarded: Vec::new(),
        }],
        step: vec![Stage::Kernel(0), Stage::Swap(0, 1)],
        halo: r as usize,
        ..Default::default()
    }
}

fn opts(chunks: usize, block_steps: usize, scheme: Scheme) -> PlanOptions {
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

/// Planes the chunks load in all: owned planes widened by `h` on both sides, clamped to
/// `lo..hi` (the planes any kernel reads).
fn with_halo(n: usize, d: usize, h: usize, lo: usize, hi: usize) -> usize {
    (0..d)
        .map(|i| {
            let o = plan::owned(n, d, i);
            (o.end + h).min(hi) - o.start.saturating_sub(h).max(lo)
        })
        .sum()
}

#[test]
fn ieice_setting_1160_cubed_8_chunks_12_steps() {
    let p = acoustic(4);
    let shape = [1160, 1160, 1160];
    let rs = plan::build(&p, &shape, 24, &[], &opts(8, 12, Scheme::RegionSharing)).unwrap();
    let dm = plan::build(&p, &shape, 24, &[], &opts(8, 12, Scheme::DirectMap)).unwrap();
    assert_eq!(rs.blocks.len(), 2);
    for b in 0..2 {
        for a in 0..2 {
            assert_eq!(
                rs.planes_htod(b, a),
                1160,
                "region sharing moves each array once per block"
            );
        }
        // vel is only read inside the nest's range 4..1156.
        assert_eq!(rs.planes_htod(b, 2), 1152);
        assert_eq!(rs.planes_dtoh(b, 0), 1160);
        assert_eq!(rs.planes_dtoh(b, 1), 1160);
        assert_eq!(rs.planes_dtoh(b, 2), 0, "read-only arrays never come back");
        // Direct mapping: the array holding the older time level at block start needs the full
        // 4 * 12 halo, the other two 4 * 11 (their last read is one step earlier).
        // 12 steps per block is even, so every block starts with `cur` in physical array 1.
        let (older, newer) = (1, 0);
        assert_eq!(dm.planes_htod(b, older), with_halo(1160, 8, 48, 0, 1160));
        assert_eq!(dm.planes_htod(b, newer), with_halo(1160, 8, 44, 0, 1160));
        assert_eq!(dm.planes_htod(b, 2), with_halo(1160, 8, 44, 4, 1156));
    }
    let ratio = dm.bytes_htod() as f64 / rs.bytes_htod() as f64;
    assert!(
        (1.5..1.65).contains(&ratio),
        "direct-map / region-sharing = {ratio}"
    );
    race::check(&p, &rs).unwrap();
    race::check(&p, &dm).unwrap();
}

#[test]
fn race_check_catches_a_missing_dependency() {
    let p = acoustic(2);
    let mut pl = plan::build(&p, &[40, 8, 8], 6, &[], &opts(4, 3, Scheme::RegionSharing)).unwrap();
    race::check(&p, &pl).unwrap();
    // Drop the event that makes a kernel wait for its chunk's region copy.
    let victim = pl
        .ops
        .iter()
        .position(|o| matches!(o.kind, OpKind::Kernel { .. }) && !o.deps.is_empty())
        .expect("a kernel waits for something");
    pl.ops[victim].deps.clear();
    assert!(race::check(&p, &pl).is_err());
}

#[test]
fn direct_map_adjusts_chunks_that_are_too_thin() {
    let p = acoustic(4);
    // 8 chunks of 8 planes cannot carry a halo of 4 * 4 = 16 planes without reaching two
    // chunks back.
    let pl = plan::build(&p, &[64, 16, 16], 8, &[], &opts(8, 4, Scheme::DirectMap)).unwrap();
    assert!(pl.chunks < 8);
    assert_eq!(pl.requested_chunks, 8);
    assert!(
        pl.adjustments[0].contains("two chunks earlier"),
        "{:?}",
        pl.adjustments
    );
    race::check(&p, &pl).unwrap();
    let rs = plan::build(
        &p,
        &[64, 16, 16],
        8,
        &[],
        &opts(8, 4, Scheme::RegionSharing),
    )
    .unwrap();
    assert_eq!(rs.chunks, 8, "region sharing needs no adjustment");
}

#[test]
fn refuses_what_cannot_run() {
    let p = acoustic(4);
    let e = plan::build(&p, &[6, 16, 16], 2, &[], &opts(8, 1, Scheme::RegionSharing)).unwrap_err();
    assert!(e.to_string().contains("more than the 6 planes"), "{e}");
    // A nest starting at y = 0 that reads y - 4 falls off the array.
    let mut bad = acoustic(4);
    bad.kernels[0].ranges[1].lo = Bound::start(0);
    let e = plan::build(
        &bad,
        &[64, 16, 16],
        2,
        &[],
        &opts(2, 1, Scheme::RegionSharing),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            plan::PlanError::TooSmall {
                axis: 1,
                first: -4,
                ..
            }
        ),
        "{e}"
    );
    let e = plan::build(&p, &[64, 16], 2, &[], &opts(2, 1, Scheme::RegionSharing)).unwrap_err();
    assert!(matches!(e, plan::PlanError::Rank { .. }), "{e}");
    let e = plan::build(
        &p,
        &[64, 16, 16],
        2,
        &[],
        &opts(0, 1, Scheme::RegionSharing),
    )
    .unwrap_err();
    assert!(matches!(e, plan::PlanError::ZeroChunks(_)), "{e}");
}

#[test]
fn zero_steps_is_an_empty_plan() {
    let p = acoustic(1);
    let pl = plan::build(&p, &[10, 4, 4], 0, &[], &opts(2, 3, Scheme::RegionSharing)).unwrap();
    assert!(pl.ops.is_empty());
    assert_eq!(pl.final_binding, vec![0, 1, 2]);
}

#[test]
fn final_binding_follows_the_swaps() {
    let p = acoustic(1);
    let pl = plan::build(&p, &[10, 4, 4], 3, &[], &opts(2, 2, Scheme::RegionSharing)).unwrap();
    assert_eq!(pl.final_binding, vec![1, 0, 2]);
    assert_eq!(plan::swap_period(&p), 2);
}

/// A random 2D program: `nk` kernels per step, each reading one or two arrays at random
/// reaches and writing another, with optional swaps and a reduction.
fn random_program(reaches: Vec<(i64, i64)>, swap: bool, reduce: bool) -> Program {
    let names = ["a", "b", "c", "d"];
    let mut kernels = Vec::new();
    let mut step = Vec::new();
    for (i, &(lo, hi)) in reaches.iter().enumerate() {
        let src = i % 3;
        let dst = (i + 1) % 3;
        let halo = lo.max(hi).max(1);
        kernels.push(KernelDecl {
            name: format!("k{i}"),
            ranges: vec![
                AxisRange {
                    lo: Bound::start(lo),
                    hi: Bound::end(-hi),
                },
                AxisRange {
                    lo: Bound::start(halo),
                    hi: Bound::end(-halo),
                },
            ],
            reads: vec![
                ReadDecl {
                    array: src,
                    lo: vec![-lo, -1],
                    hi: vec![hi, 1],
                },
                ReadDecl {
                    array: 3,
                    lo: vec![0, 0],
                    hi: vec![0, 0],
                },
            ],
            writes: vec![dst],
            reductions: if reduce && i == 0 { vec![0] } else { vec![] },
            launch: Default::default(),
            guarded: Vec::new(),
        });
        step.push(Stage::Kernel(i));
    }
    if swap {
        step.push(Stage::Swap(0, 1));
    }
    Program {
        name: "random".into(),
        ndim: 2,
        arrays: (0..4)
            .map(|i| array(names[i], if i == 3 { Role::Input } else { Role::InOut }))
            .collect(),
        reductions: if reduce {
            vec![ReductionDecl {
                name: "s".into(),
                op: ReduceOp::Sum,
                elem: Elem::F64,
            }]
        } else {
            vec![]
        },
        kernels,
        step,
        halo: 3,
        ..Default::default()
    }
}

fn scheme() -> impl Strategy<Value = Scheme> {
    prop_oneof![
        Just(Scheme::StagedCopy),
        Just(Scheme::DirectMap),
        Just(Scheme::RegionSharing),
        Just(Scheme::Wavefront)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn plans_are_race_free_and_share_regions(
        reaches in prop::collection::vec((0i64..3, 0i64..3), 1..4),
        swap in any::<bool>(),
        reduce in any::<bool>(),
        n0 in 8usize..60,
        d in 1usize..9,
        k in 1usize..5,
        steps in 0usize..9,
        scheme in scheme(),
        sets in 1usize..5,
        ring in any::<bool>(),
    ) {
        let p = random_program(reaches, swap, reduce);
        let d = d.min(n0);
        let o = PlanOptions { buffer_sets: sets, read_only_ring: ring, ..opts(d, k, scheme) };
        let pl = plan::build(&p, &[n0, 9], steps, &[], &o).unwrap();
        race::check(&p, &pl).unwrap();
        if ring {
            let off = plan::build(&p, &[n0, 9], steps, &[], &PlanOptions { read_only_ring: false, ..o.clone() }).unwrap();
            ring_against_staircase(&p, &pl, &off)?;
        }
        // Loads from the host run one after another, in plan order.
        let loads: Vec<usize> = (0..pl.ops.len())
            .filter(|&i| matches!(pl.ops[i].kind, OpKind::HtoD { .. }))
            .collect();
        for w in loads.windows(2) {
            let (a, b) = (&pl.ops[w[0]], &pl.ops[w[1]]);
            prop_assert!(a.stream == b.stream || b.deps.contains(&w[0]), "load {} does not wait for load {}", w[1], w[0]);
        }
        // A chunk receives each plane of an array from the previous chunk at most once.
        for blk in 0..pl.blocks.len() {
            for c in 0..pl.blocks[blk].chunks.len() {
                let mut got: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
                for op in pl.ops.iter().filter(|o| o.block == blk && o.chunk == c) {
                    if let OpKind::DtoD { array, planes, .. } = &op.kind {
                        let clash = got.iter().any(|(a, r)| a == array && r.start < planes.end && planes.start < r.end);
                        prop_assert!(!clash, "block {} chunk {}: array {} planes {:?} copied twice", blk, c, array, planes);
                        got.push((*array, planes.clone()));
                    }
                }
            }
        }
        prop_assert_eq!(pl.chunks == d, pl.adjustments.is_empty());
        if scheme.transfers() == Transfers::Shared {
            // Each array crosses the link at most once per block.
            for b in 0..pl.blocks.len() {
                for a in 0..4 {
                    prop_assert!(pl.planes_htod(b, a) <= n0);
                }
            }
        }
        for op in &pl.ops {
            if let OpKind::Kernel { planes, owned, .. } = &op.kind {
                // Every kernel computes inside its chunk's window and its nest's range.
                let g = &pl.blocks[op.block].chunks[op.chunk];
                prop_assert!(g.window.start <= planes.start && planes.end <= g.window.end);
                if scheme == Scheme::Wavefront {
                    // Every point once: reductions count what the kernel computes.
                    prop_assert!(planes == owned);
                } else {
                    prop_assert!(g.owned == *owned);
                }
            }
        }
        // Owned planes tile the axis exactly.
        for blk in &pl.blocks {
            let mut next = 0;
            for c in &blk.chunks {
                prop_assert_eq!(c.owned.start, next);
                next = c.owned.end;
            }
            prop_assert_eq!(next, n0);
        }
    }
}

/// The read-only ring (`on`) against the same plan without it (`off`): only the wavefront has
/// one, holding exactly the arrays that are read and written under no binding; its arrays are
/// loaded and copied only within it, each plane loaded at most once per block; the kernels are
/// the same, and no more bytes cross the link or HBM or sit on the device.
fn ring_against_staircase(
    p: &Program,
    on: &plan::Plan,
    off: &plan::Plan,
) -> Result<(), TestCaseError> {
    prop_assert!(off.ring.is_none());
    let Some(ring) = &on.ring else {
        return Ok(());
    };
    prop_assert_eq!(on.scheme, Scheme::Wavefront);
    prop_assert_eq!(ring.set, on.buffer_sets);
    for a in 0..p.arrays.len() {
        let read = p
            .kernels
            .iter()
            .any(|k| k.reads.iter().any(|r| r.array == a));
        let ro = read && !pacc_runtime::binding::written_physically(p, a);
        prop_assert_eq!(on.in_ring(a), ro, "array {}", a);
    }
    let kernels = |pl: &plan::Plan| -> Vec<_> {
        (pl.ops.iter())
            .filter_map(|o| match &o.kind {
                OpKind::Kernel {
                    kernel,
                    step,
                    planes,
                    owned,
                    args,
                    ..
                } => Some((
                    o.block,
                    o.chunk,
                    *kernel,
                    *step,
                    planes.clone(),
                    owned.clone(),
                    args.clone(),
                )),
                _ => None,
            })
            .collect()
    };
    prop_assert!(kernels(on) == kernels(off), "the ring changes no kernel");
    prop_assert!(on.bytes_htod() <= off.bytes_htod());
    prop_assert_eq!(on.bytes_dtoh(), off.bytes_dtoh());
    prop_assert!(on.bytes_dtod() <= off.bytes_dtod());
    prop_assert!(on.device_bytes() <= off.device_bytes());
    let mut loaded: Vec<(usize, usize, std::ops::Range<usize>)> = Vec::new();
    for op in &on.ops {
        match &op.kind {
            OpKind::HtoD {
                array, set, planes, ..
            } if on.in_ring(*array) => {
                prop_assert_eq!(*set, ring.set);
                let twice = (loaded.iter()).any(|(b, a, r)| {
                    *b == op.block && a == array && r.start < planes.end && planes.start < r.end
                });
                prop_assert!(
                    !twice,
                    "block {} loads {:?} of array {} again",
                    op.block,
                    planes,
                    array
                );
                loaded.push((op.block, *array, planes.clone()));
            }
            OpKind::DtoD {
                array,
                from_set,
                to_set,
                ..
            } if on.in_ring(*array) => {
                prop_assert!(*from_set == ring.set && *to_set == ring.set);
            }
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Compression: random programs, rates per swap group (inputs too), the schemes that
    /// compress. Host compressed copies, staging areas and buffers are all race-checked
    /// resources; compressed planes are whole slabs; each array still crosses once per block.
    #[test]
    fn compressed_plans_are_race_free_and_slab_aligned(
        reaches in prop::collection::vec((0i64..3, 0i64..3), 1..4),
        swap in any::<bool>(),
        n0 in 8usize..60,
        d in 1usize..9,
        k in 1usize..5,
        steps in 1usize..9,
        which in 0usize..3,
        picks in prop::collection::vec(0usize..3, 4),
    ) {
        let p = random_program(reaches, swap, false);
        let groups = pacc_runtime::compress::swap_groups(&p);
        let rate = |i: usize| [None, Some(8.0), Some(16.0)][picks[i]];
        let compress: Vec<Option<f64>> = (0..4).map(|a| rate(groups[a])).collect();
        let scheme = [Scheme::RegionSharing, Scheme::DirectMap, Scheme::Wavefront][which];
        let sharing = scheme.transfers() == Transfers::Shared;
        let o = PlanOptions { compress, ..opts(d.min(n0), k, scheme) };
        let pl = match plan::build(&p, &[n0, 9], steps, &[], &o) {
            Ok(pl) => pl,
            Err(plan::PlanError::TooThin { .. }) => return Ok(()),
            Err(e) => panic!("{e}"),
        };
        race::check(&p, &pl).unwrap();
        for op in &pl.ops {
            if let OpKind::Encode { planes, base, .. } | OpKind::Decode { planes, base, .. } = &op.kind {
                prop_assert!(base % 4 == 0 && planes.start % 4 == 0);
                prop_assert!(planes.end % 4 == 0 || planes.end == n0);
            }
        }
        if pl.compresses() {
            for blk in &pl.blocks {
                for c in &blk.chunks {
                    prop_assert!(c.owned.start % 4 == 0 && c.window.start % 4 == 0);
                }
            }
        }
        if sharing {
            for b in 0..pl.blocks.len() {
                for a in 0..4 {
                    prop_assert!(pl.planes_htod(b, a) <= n0);
                }
            }
        }
    }
}

/// A nest over `1..ny - 1` leaves the rim of each plane alone: the rim's old values must reach
/// the device with the planes, or the write-back would return garbage there.
#[test]
fn nests_that_leave_a_rim_load_the_planes_they_write() {
    let mut p = acoustic(1);
    // prev = f(cur, vel) without reading prev: only the rim makes prev's old values matter.
    p.kernels[0].reads.retain(|r| r.array != 0);
    let pl = plan::build(&p, &[20, 8, 8], 1, &[], &opts(2, 1, Scheme::DirectMap)).unwrap();
    for b in 0..pl.blocks.len() {
        assert_eq!(
            pl.planes_htod(b, 0),
            20,
            "prev's planes come in for their rims"
        );
    }
    // The same nest over whole planes (0..ny, 0..nx on the inner axes) needs no prev at all.
    let mut whole = p.clone();
    for ax in 1..3 {
        whole.kernels[0].ranges[ax] = AxisRange {
            lo: Bound::start(0),
            hi: Bound::end(0),
        };
        for r in &mut whole.kernels[0].reads {
            r.lo[ax] = 0;
            r.hi[ax] = 0;
        }
    }
    let pl = plan::build(&whole, &[20, 8, 8], 1, &[], &opts(2, 1, Scheme::DirectMap)).unwrap();
    assert_eq!(
        pl.planes_htod(0, 0),
        2,
        "only the two boundary planes the nest skips"
    );
}

/// Each buffer set's loads, kernels and write-backs have a stream each: no stream holds both a
/// kernel and a write-back (on the H100 a kernel queued behind a write-back on its stream waited
/// for other streams' write-backs too), and every stream belongs to one set.
#[test]
fn the_wavefront_cycles_through_four_buffer_sets_and_copies_read_only_arrays_first() {
    use pacc_runtime::run::plan_options;
    let p = acoustic(2);
    for scheme in Scheme::ALL {
        let o = pacc_runtime::Options::new().scheme(scheme);
        let want = if scheme == Scheme::Wavefront { 4 } else { 3 };
        assert_eq!(plan_options(&p, 96, 8, &o).buffer_sets, want, "{scheme:?}");
    }
    // The staircase alone (no ring) copies read-only arrays too.
    let staircase = PlanOptions {
        read_only_ring: false,
        ..opts(4, 4, Scheme::Wavefront)
    };
    let plan = plan::build(&p, &[96, 20, 20], 8, &[], &staircase).unwrap();
    assert_eq!(plan.buffer_sets, 4);
    let chunk_sets: Vec<usize> = plan
        .blocks
        .iter()
        .flat_map(|b| &b.chunks)
        .map(|c| c.set)
        .collect();
    assert_eq!(chunk_sets, vec![0, 1, 2, 3, 0, 1, 2, 3]);
    // Chunk 1 of block 0: the velocity (array 2, never written) first, then the two wavefields
    // in pieces from the top down.
    let copies: Vec<(usize, std::ops::Range<usize>)> = plan
        .ops
        .iter()
        .filter(|o| o.block == 0 && o.chunk == 1)
        .filter_map(|o| match &o.kind {
            OpKind::DtoD { array, planes, .. } => Some((*array, planes.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(copies[0].0, 2, "{copies:?}");
    assert!(copies[1..].iter().all(|c| c.0 != 2), "{copies:?}");
    assert!(
        copies.len() > 3,
        "the staircase is copied in pieces: {copies:?}"
    );
    for a in [0, 1] {
        let starts: Vec<usize> = copies
            .iter()
            .filter(|c| c.0 == a)
            .map(|c| c.1.start)
            .collect();
        assert!(
            starts.windows(2).all(|w| w[0] > w[1]),
            "array {a} not top-down: {copies:?}"
        );
    }
}

#[test]
fn write_backs_have_their_own_stream() {
    let p = acoustic(2);
    for scheme in Scheme::ALL {
        let plan = plan::build(&p, &[96, 20, 20], 8, &[], &opts(4, 4, scheme)).unwrap();
        assert_eq!(plan.streams, 3 * plan.buffer_sets, "{scheme:?}");
        let mut kinds = vec![(false, false, false); plan.streams];
        let mut set_of = vec![None; plan.streams];
        for op in &plan.ops {
            let k = &mut kinds[op.stream];
            match op.kind {
                OpKind::Kernel { set, .. } | OpKind::Point { set, .. } => {
                    k.0 = true;
                    assert_eq!(*set_of[op.stream].get_or_insert(set), set);
                }
                OpKind::DtoH { set, .. } | OpKind::StageOut { set, .. } => {
                    k.1 = true;
                    assert_eq!(*set_of[op.stream].get_or_insert(set), set);
                }
                OpKind::HtoD { .. } | OpKind::StageIn { .. } | OpKind::DtoD { .. } => k.2 = true,
                _ => {}
            }
        }
        for (s, &(kernel, out, load)) in kinds.iter().enumerate() {
            assert!(
                [kernel, out, load].iter().filter(|&&b| b).count() <= 1,
                "{scheme:?}: stream {s} mixes kernels {kernel}, write-backs {out}, loads {load}"
            );
        }
        assert!(
            kinds.iter().any(|k| k.1),
            "{scheme:?}: no write-back at all"
        );
    }
}

/// Every stream of every plan carries only operations of the role the plan gives it, and the
/// summary (what `pacc plan` prints) labels each stream with that role. (The summary once
/// labelled streams by the parity of their number, which names the write-back stream of set 0,
/// stream 2, "transfers in".) Compressing plans add one codec stream per set, after the others,
/// so that the rest keep their numbers.
#[test]
fn stream_labels_come_from_the_plan_s_stream_roles() {
    use plan::{Plan, StreamRole};
    let p = acoustic(2);
    let compressed = |scheme: Scheme| PlanOptions {
        compress: vec![Some(16.0); p.arrays.len()],
        ..opts(4, 4, scheme)
    };
    let compressing = Scheme::ALL
        .into_iter()
        .filter(|s| s.transfers().can_compress());
    let cases = (Scheme::ALL.into_iter().map(|s| (s, opts(4, 4, s))))
        .chain(compressing.map(|s| (s, compressed(s))));
    for (scheme, o) in cases {
        let plan = plan::build(&p, &[96, 20, 20], 8, &[], &o).unwrap();
        let codec = o.compresses() as usize * plan.buffer_sets;
        assert_eq!(plan.streams, 3 * plan.buffer_sets + codec, "{scheme:?}");
        for op in &plan.ops {
            assert_eq!(
                plan.role_of(op.stream).0,
                op.kind.role(),
                "{scheme:?}: {:?} on stream {}",
                op.kind,
                op.stream
            );
        }
        let summary = plan.summary(&p);
        for stream in 0..plan.streams {
            let (role, set) = plan.role_of(stream);
            let line = summary
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("stream {stream} (")))
                .unwrap_or_else(|| panic!("{scheme:?}: no line for stream {stream}:\n{summary}"));
            let label = format!("(set {set}, {})", role.label());
            assert!(line.contains(&label), "{scheme:?}: {line}");
            let allowed: &[&str] = match role {
                StreamRole::Loads => &["HtoD", "StageIn", "DtoD"],
                StreamRole::Kernels => &["Kernel", "Point"],
                StreamRole::WriteBacks => &["DtoH", "StageOut"],
                StreamRole::Codec => &["Encode", "Decode"],
            };
            let counts = line.split("): ").nth(1).unwrap().split(';').next().unwrap();
            for part in counts.split(", ").filter(|c| *c != "idle") {
                let kind = part.split(' ').nth(1).unwrap();
                assert!(allowed.contains(&kind), "{scheme:?}: {line}");
            }
        }
        // Set 0's write-back stream is stream 2; codec streams follow every set's three.
        assert_eq!(Plan::stream(0, StreamRole::WriteBacks), 2);
        assert_eq!(Plan::stream_of(3, 1, StreamRole::Codec), 10);
        assert!(
            summary.contains("stream 2 (set 0, write-backs): "),
            "{summary}"
        );
        if codec > 0 {
            assert!(summary.contains("(set 0, codec): "), "{summary}");
        }
    }
}

/// `Plan::warnings` flags wasteful settings (50 chunks on 100 planes: each recomputes a halo
/// wider than itself) and stays quiet for a sensible one.
#[test]
fn wasteful_settings_are_warned_about() {
    let p = acoustic(1);
    let plan = plan::build(
        &p,
        &[100, 16, 16],
        4,
        &[],
        &opts(50, 4, Scheme::RegionSharing),
    )
    .unwrap();
    let w = plan.warnings(&p);
    assert!(plan.totals(&p).redundancy > 2.0);
    assert!(w.iter().any(|w| w.starts_with("redundancy ")), "{w:?}");
    assert!(
        w.iter()
            .any(|w| w.starts_with("more chunks than make sense: 50 chunks")),
        "{w:?}"
    );
    let fine = plan::build(
        &p,
        &[100, 16, 16],
        4,
        &[],
        &opts(4, 4, Scheme::RegionSharing),
    )
    .unwrap();
    assert_eq!(fine.warnings(&p), Vec::<String>::new());
    // The wavefront computes every point once: thin chunks are not flagged for redundancy.
    let wf = plan::build(&p, &[100, 16, 16], 4, &[], &opts(10, 4, Scheme::Wavefront)).unwrap();
    assert_eq!(wf.warnings(&p), Vec::<String>::new());
}

/// A shape with an empty axis is refused as such, not as "too many chunks".
#[test]
fn an_empty_axis_is_refused_by_name() {
    let p = acoustic(1);
    for shape in [[0, 100, 100], [100, 0, 100]] {
        let e = plan::build(&p, &shape, 4, &[], &opts(4, 4, Scheme::RegionSharing)).unwrap_err();
        let axis = shape.iter().position(|&n| n == 0).unwrap();
        assert!(
            matches!(&e, plan::PlanError::EmptyAxis { axis: a, .. } if *a == axis),
            "{e}"
        );
        assert!(e.to_string().contains("no points along axis"), "{e}");
    }
}

/// With the ring, the velocity (never written) stays in one buffer: chunks copy only the
/// wavefields' staircase, the velocity is loaded once per block, and the device-to-device bytes
/// drop by the velocity's share.
#[test]
fn the_wavefront_keeps_read_only_arrays_in_the_ring() {
    let p = acoustic(2);
    let o = opts(8, 4, Scheme::Wavefront);
    let on = plan::build(&p, &[400, 20, 20], 8, &[], &o).unwrap();
    let off = plan::build(
        &p,
        &[400, 20, 20],
        8,
        &[],
        &PlanOptions {
            read_only_ring: false,
            ..o
        },
    )
    .unwrap();
    race::check(&p, &on).unwrap();
    let ring = on.ring.as_ref().expect("a ring");
    assert_eq!(ring.arrays, vec![false, false, true]);
    // Windows of 50 + 8 (skew) + 2 + 2 planes; four sets' worth.
    assert_eq!(ring.planes, 4 * on.buffer_planes);
    for b in 0..on.blocks.len() {
        assert_eq!(
            on.planes_htod(b, 2),
            off.planes_htod(b, 2),
            "loaded once per block"
        );
    }
    let vel_dtod = |pl: &plan::Plan| -> u64 {
        (pl.ops.iter())
            .filter_map(|o| match &o.kind {
                OpKind::DtoD {
                    array: 2, planes, ..
                } => Some(pl.raw_bytes(2, planes)),
                _ => None,
            })
            .sum()
    };
    // The staircase copied the velocity into every chunk but the first: it is read at the
    // centre only, so from the last step's start (6 planes of skew below the boundary) to the
    // previous chunk's top (2 above, the reach of `cur`). The ring moves it back to slot 0
    // once per group.
    let plane = (20 * 20 * 4) as u64;
    assert_eq!(vel_dtod(&off), 2 * 7 * 8 * plane);
    assert!(
        vel_dtod(&on) < vel_dtod(&off) / 3,
        "{} vs {}",
        vel_dtod(&on),
        vel_dtod(&off)
    );
    assert_eq!(
        on.bytes_dtod() + vel_dtod(&off) - vel_dtod(&on),
        off.bytes_dtod()
    );
    assert_eq!(on.device_bytes(), off.device_bytes());
    let summary = on.summary(&p);
    assert!(
        summary.contains("read-only ring: vel in one device buffer each"),
        "{summary}"
    );
}
