//! The CPU executor on hand-made (naive, unblocked) plans, independent of the planner: submission
//! and shuffled orders equal the serial references.

mod common;

use common::*;
use pacc_runtime::exec::cpu::{execute, shuffled_order, Order};
use pacc_runtime::run::swap_replays;
use proptest::prelude::*;

fn orders(seed: u64) -> [Order; 2] {
    [Order::Submission, Order::Shuffled(seed)]
}

fn check_stencil(shape: [usize; 3], r: usize, chunks: usize, steps: usize, seed: u64) {
    let prog = stencil_program(r);
    let (c, t0) = (0.3, 2);
    let mut a0 = random3(shape, seed);
    let mut b0 = random3(shape, seed ^ 1);
    let (mut ra, mut rb) = (a0.clone(), b0.clone());
    let (energy, peak) = stencil_reference(&mut ra, &mut rb, r, c, t0, steps, STENCIL_INIT);
    let plan = naive_plan(&prog, &shape, steps, chunks, &[]);
    for order in orders(seed) {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let inv = stencil_invocation(&mut a, &mut b, r, c, t0, steps);
        let out = execute(&prog, &plan, &inv, order).unwrap();
        drop(inv);
        assert!(
            close(out.reductions[0], energy, 1e-12),
            "{} vs {energy}",
            out.reductions[0]
        );
        assert_eq!(out.reductions[1], peak);
        replay(&mut a, &mut b, swap_replays(&prog, steps));
        assert_eq!(bits3(&a), bits3(&ra), "a differs, {order:?}");
        assert_eq!(bits3(&b), bits3(&rb), "b differs, {order:?}");
    }
    // Keep the originals alive until here (the invocations point into clones only).
    a0.fill(0.0);
    b0.fill(0.0);
}

fn check_two_kernel(shape: [usize; 2], chunks: usize, steps: usize, seed: u64) {
    let prog = two_kernel_program();
    let (k, t0, init, reset) = (0.1f32, 5, (7.0f32, 0.25f32), 0.0f32);
    let u0 = random2_f32(shape, seed);
    let w0 = random2_f32(shape, seed ^ 2);
    let (mut ru, mut rw) = (u0.clone(), w0.clone());
    let (change, lowest) = two_kernel_reference(&mut ru, &mut rw, k, t0, steps, init, reset);
    let plan = naive_plan(&prog, &shape, steps, chunks, &[]);
    for order in orders(seed) {
        let (mut u, mut w) = (u0.clone(), w0.clone());
        let inv = two_kernel_invocation(&mut u, &mut w, k, t0, steps, init, reset);
        let out = execute(&prog, &plan, &inv, order).unwrap();
        drop(inv);
        assert_eq!(bits2(&u), bits2(&ru), "u differs, {order:?}");
        assert!(
            close(out.reductions[0], change as f64, 1e-5),
            "sum {} vs {change}",
            out.reductions[0]
        );
        assert_eq!(out.reductions[1], lowest as f64);
    }
}

fn check_source(shape: [usize; 3], chunks: usize, steps: usize, src: [usize; 3], seed: u64) {
    let prog = source_program();
    let (amp, t0) = (0.75, 3i64);
    let wavelet: Vec<f64> = (0..t0 as usize + steps + 1)
        .map(|i| (i as f64 * 0.7).sin())
        .collect();
    let cur0 = random3(shape, seed);
    let nxt0 = random3(shape, seed ^ 3);
    let vel = random3(shape, seed ^ 4);
    let (mut rc, mut rn) = (cur0.clone(), nxt0.clone());
    source_reference(&mut rc, &mut rn, &vel, src, amp, &wavelet, t0, steps);
    let plan = naive_plan(&prog, &shape, steps, chunks, &[src[0]]);
    for order in orders(seed) {
        let (mut cur, mut nxt) = (cur0.clone(), nxt0.clone());
        let inv = source_invocation(&mut cur, &mut nxt, &vel, src, amp, &wavelet, t0, steps);
        execute(&prog, &plan, &inv, order).unwrap();
        drop(inv);
        replay(&mut cur, &mut nxt, swap_replays(&prog, steps));
        assert_eq!(bits3(&cur), bits3(&rc), "cur differs, {order:?}");
        assert_eq!(bits3(&nxt), bits3(&rn), "nxt differs, {order:?}");
    }
}

#[test]
fn stencil_on_naive_plans() {
    check_stencil([9, 5, 6], 1, 3, 4, 11);
    check_stencil([11, 6, 5], 2, 4, 3, 12);
    check_stencil([5, 5, 5], 2, 1, 2, 13);
}

#[test]
fn two_kernels_with_reductions_on_naive_plans() {
    check_two_kernel([12, 9], 3, 5, 21);
    check_two_kernel([7, 7], 7, 2, 22);
}

#[test]
fn point_source_on_naive_plans() {
    check_source([8, 5, 5], 3, 5, [4, 2, 3], 31);
    check_source([6, 4, 4], 2, 3, [0, 0, 0], 32);
}

#[test]
fn shuffled_order_respects_streams_and_deps() {
    let prog = source_program();
    let plan = naive_plan(&prog, &[10, 4, 4], 3, 4, &[5]);
    for seed in 0..20 {
        let order = shuffled_order(&plan.ops, seed);
        let mut pos = vec![usize::MAX; order.len()];
        for (i, &o) in order.iter().enumerate() {
            pos[o] = i;
        }
        assert!(pos.iter().all(|&p| p != usize::MAX));
        let mut last = std::collections::HashMap::new();
        for (i, op) in plan.ops.iter().enumerate() {
            for &d in &op.deps {
                assert!(pos[d] < pos[i]);
            }
            if let Some(prev) = last.insert(op.stream, i) {
                assert!(pos[prev] < pos[i]);
            }
        }
    }
    // Different seeds give different orders.
    assert_ne!(shuffled_order(&plan.ops, 1), shuffled_order(&plan.ops, 2));
}

#[test]
fn swap_replays_follow_the_permutation_order() {
    assert_eq!(swap_replays(&stencil_program(1), 0), 0);
    assert_eq!(swap_replays(&stencil_program(1), 5), 1);
    assert_eq!(swap_replays(&stencil_program(1), 6), 0);
    assert_eq!(swap_replays(&two_kernel_program(), 7), 0);
    let mut p = source_program();
    // A 3-cycle: (0 1) then (1 2).
    p.step.push(pacc_runtime::program::Stage::Swap(1, 2));
    assert_eq!(swap_replays(&p, 7), 1);
    assert_eq!(swap_replays(&p, 9), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn naive_plans_equal_reference(
        r in 1usize..=2, n0 in 0usize..8, n1 in 0usize..3, n2 in 0usize..3,
        chunk_frac in 0.0f64..1.0, steps in 0usize..5, seed in any::<u64>(),
    ) {
        let shape = [2 * r + 1 + n0, 2 * r + 1 + n1, 2 * r + 1 + n2];
        let chunks = 1 + (chunk_frac * shape[0] as f64) as usize;
        check_stencil(shape, r, chunks.min(shape[0]), steps, seed);
        let shape2 = [5 + n0, 5 + n1];
        let chunks2 = 1 + (chunk_frac * shape2[0] as f64) as usize;
        check_two_kernel(shape2, chunks2.min(shape2[0]), steps, seed);
    }
}

/// The shuffled executor exists to catch missing dependencies: drop one from a real plan and
/// some seed must give a wrong result, while the intact plan is right for every seed.
#[test]
fn shuffled_executor_catches_a_missing_dependency() {
    use pacc_runtime::plan::{build, OpKind, PlanOptions, Scheme};
    let prog = stencil_program(1);
    let shape = [24, 4, 4];
    let steps = 4;
    let a0 = random3(shape, 1);
    let b0 = random3(shape, 2);
    let (mut ra, mut rb) = (a0.clone(), b0.clone());
    stencil_reference(&mut ra, &mut rb, 1, 0.3, 0, steps, STENCIL_INIT);
    let opts = PlanOptions {
        chunks: 4,
        block_steps: 2,
        scheme: Scheme::RegionSharing,
        buffer_sets: 3,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: true,
    };
    let plan = build(&prog, &shape, steps, &[], &opts).unwrap();
    let matches = |plan: &pacc_runtime::Plan, seed: u64| {
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, steps);
        execute(&prog, plan, &inv, Order::Shuffled(seed)).unwrap();
        drop(inv);
        replay(&mut a, &mut b, swap_replays(&prog, steps));
        bits3(&a) == bits3(&ra) && bits3(&b) == bits3(&rb)
    };
    assert!((0..20).all(|s| matches(&plan, s)));
    let mut broken = plan.clone();
    let victim = broken
        .ops
        .iter()
        .position(|o| matches!(o.kind, OpKind::Kernel { .. }) && !o.deps.is_empty())
        .expect("a kernel waits for something");
    broken.ops[victim].deps.clear();
    assert!((0..200).any(|s| !matches(&broken, s)));
}

/// A plan that would step outside a buffer or write a read-only array is refused before any
/// operation runs.
#[test]
fn malformed_plans_are_internal_errors() {
    use pacc_runtime::plan::OpKind;
    use pacc_runtime::Error;
    let prog = stencil_program(1);
    let shape = [8, 4, 4];
    let plan = naive_plan(&prog, &shape, 2, 2, &[]);
    let a0 = random3(shape, 1);
    let b0 = random3(shape, 2);
    type Mutation = Box<dyn Fn(&mut pacc_runtime::Plan)>;
    let mutations: Vec<Mutation> = vec![
        Box::new(|p| p.buffer_planes -= 1),
        Box::new(|p| {
            if let OpKind::HtoD { base, .. } = &mut p.ops[0].kind {
                *base += 1;
            }
        }),
        Box::new(|p| {
            let last = p.ops.len() - 1;
            p.ops[0].deps.push(last);
        }),
        Box::new(|p| {
            let k = p
                .ops
                .iter()
                .position(|o| matches!(o.kind, OpKind::Kernel { .. }))
                .unwrap();
            if let OpKind::Kernel { args, .. } = &mut p.ops[k].kind {
                args.push(0);
            }
        }),
        Box::new(|p| p.buffer_sets = 1),
    ];
    for m in mutations {
        let mut bad = plan.clone();
        m(&mut bad);
        let (mut a, mut b) = (a0.clone(), b0.clone());
        let inv = stencil_invocation(&mut a, &mut b, 1, 0.3, 0, 2);
        let e = execute(&prog, &bad, &inv, Order::Submission).unwrap_err();
        drop(inv);
        assert!(matches!(e, Error::Internal(_)), "{e:?}");
        assert_eq!((bits3(&a), bits3(&b)), (bits3(&a0), bits3(&b0)));
    }
    // Writing back into an array passed read-only.
    let (mut a, b) = (a0.clone(), b0.clone());
    let arrays = vec![
        pacc_runtime::host::host_array_mut(&mut a, "a").unwrap(),
        pacc_runtime::host::host_array(&b, "b").unwrap(),
    ];
    let inv = stencil_invocation_raw(arrays, 1, 0.3, 0, 2);
    let e = execute(&prog, &plan, &inv, Order::Submission).unwrap_err();
    assert!(matches!(e, Error::Internal(_)), "{e:?}");
}

/// `validate::execution`, which every executor runs first, refuses an operation outside its
/// buffers or the host arrays, or one that writes a read-only array, naming what is wrong.
#[test]
fn execution_validation_names_each_bad_operation() {
    use pacc_runtime::plan::{self, OpKind, PlanOptions};
    use pacc_runtime::validate::execution;
    let program = stencil_program(1);
    let shape = [12, 6, 6];
    let popts = PlanOptions {
        chunks: 2,
        block_steps: 2,
        ..PlanOptions::default()
    };
    let plan = plan::build(&program, &shape, 2, &[], &popts).unwrap();
    let (mut a, mut b) = (random3(shape, 1), random3(shape, 2));
    let mut inv = stencil_invocation(&mut a, &mut b, 1, 0.1, 0, 2);
    execution(&program, &plan, &inv).unwrap();
    let load = (plan.ops.iter())
        .position(|o| matches!(o.kind, OpKind::HtoD { .. }) && o.kind.user_planes().is_some())
        .unwrap();
    let mut far = plan.clone();
    if let OpKind::HtoD { planes, .. } = &mut far.ops[load].kind {
        *planes = 40..41;
    }
    let e = execution(&program, &far, &inv).unwrap_err().to_string();
    assert!(e.contains("array or planes out of range"), "{e}");
    let mut other_set = plan.clone();
    if let OpKind::HtoD { set, .. } = &mut other_set.ops[load].kind {
        *set = plan.buffer_sets + 5;
    }
    let e = execution(&program, &other_set, &inv)
        .unwrap_err()
        .to_string();
    assert!(e.contains("names a buffer set"), "{e}");
    // The plan writes both arrays back; an invocation whose first array is read-only cannot
    // take it.
    let (w, _) = (plan.ops.iter())
        .find_map(|o| o.kind.written_user_planes())
        .unwrap();
    let h = inv.arrays.remove(w);
    inv.arrays.insert(w, h.read_only());
    let e = execution(&program, &plan, &inv).unwrap_err().to_string();
    assert!(e.contains("writes a read-only host array"), "{e}");
}
