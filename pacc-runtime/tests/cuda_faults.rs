//! Injected faults and concurrent runs on the CUDA executor (docs/internals.md §5), with the
//! hand-written heat program of `tests/cuda_exec.rs`. A fault before the first write-back leaves
//! the arrays exactly as passed; after it, `Error::Failed` says how many steps are complete and
//! (unless torn) the arrays hold exactly the serial state after that many steps. Every test
//! needs a device: ignored by a plain `cargo test`, run with `--include-ignored` on the GPU
//! machine, where no device is a failure.
#![cfg(feature = "cuda")]

use ndarray::Array3;
use pacc_runtime::config::settle;
use pacc_runtime::exec::cuda;
use pacc_runtime::fault::{self, Site};
use pacc_runtime::host::{host_array, host_array_mut};
use pacc_runtime::plan::{self, Scheme};
use pacc_runtime::{Error, HostPath, Options};
use std::collections::HashMap;

#[macro_use]
mod cuda_heat;
use cuda_heat::*;
const SHAPE: (usize, usize, usize) = (16, 9, 33);
const STEPS: usize = 5;
const PT: [usize; 3] = [7, 4, 20];

/// The serial physical arrays after `steps` steps.
fn serial_after(steps: usize) -> [Array3<f32>; 3] {
    let mut a = heat_inputs(SHAPE);
    heat_serial(&mut a, steps, PT);
    a
}

fn run_heat(arrays: &mut [Array3<f32>; 3], plan: &plan::Plan) -> Result<f64, Error> {
    run_heat_with(arrays, plan, &Options::default())
}

fn run_heat_with(
    arrays: &mut [Array3<f32>; 3],
    plan: &plan::Plan,
    opts: &Options,
) -> Result<f64, Error> {
    let [a, b, k] = arrays;
    let host = vec![
        host_array_mut(a, "a").unwrap(),
        host_array_mut(b, "b").unwrap(),
        host_array(&*k, "k").unwrap(),
    ];
    let inv = heat_invocation(host, PT, STEPS);
    cuda::execute(&heat_program(), plan, &inv, &settle(&heat_program(), opts))
        .map(|o| o.reductions[0])
}

fn same_bits(x: &[Array3<f32>; 3], y: &[Array3<f32>; 3]) -> bool {
    x.iter()
        .zip(y)
        .all(|(a, b)| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits()))
}

/// Fault positions tried per site: every one of the first few, then sparser, until a run
/// succeeds (the site has fewer hits than that).
fn positions() -> impl Iterator<Item = usize> {
    (0..4).chain([5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987])
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_fault_site_keeps_its_promise() {
    fault_sites(&Options::default().host_path(HostPath::Register));
}

/// The same with the transfers bounced through pacc's pinned rings instead of page-locking
/// the arrays: a fault while bouncing leaves them untouched or consistent as well.
#[test]
#[ignore = "needs a CUDA device"]
fn every_fault_site_keeps_its_promise_when_bouncing() {
    fault_sites(&Options::default().host_path(HostPath::Bounce));
}

fn fault_sites(opts: &Options) {
    let dev = need_device!();
    println!("device: {dev}, {:?}", opts.cuda.host_path);
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    let initial = heat_inputs(SHAPE);
    let mut reference: HashMap<usize, [Array3<f32>; 3]> = HashMap::new();
    let sites = [
        Site::Alloc,
        Site::Compile,
        Site::Register,
        Site::HtoD,
        Site::DtoD,
        Site::HostCopy,
        Site::Kernel,
        Site::Point,
        Site::DtoH,
    ];
    let mut fired: HashMap<Site, usize> = HashMap::new();
    let mut outcomes = [0usize; 3]; // untouched, consistent, torn
    for scheme in Scheme::ALL {
        let plan = plan_for(&prog, &shape, STEPS, &[PT[0]], 3, 2, scheme);
        // The run without faults equals the serial function.
        let mut x = heat_inputs(SHAPE);
        run_heat_with(&mut x, &plan, opts)
            .unwrap_or_else(|e| panic!("{scheme} without faults: {e}"));
        assert!(
            same_bits(&x, &serial_after(STEPS)),
            "{scheme} without faults"
        );
        for site in sites {
            for nth in positions() {
                let mut x = heat_inputs(SHAPE);
                let r = {
                    let _f = fault::inject(site, nth);
                    run_heat_with(&mut x, &plan, opts)
                };
                let e = match r {
                    Ok(_) => {
                        // No such hit: the run is complete and correct.
                        assert!(
                            same_bits(&x, &serial_after(STEPS)),
                            "{scheme} {site:?} #{nth}"
                        );
                        break;
                    }
                    Err(e) => e,
                };
                *fired.entry(site).or_default() += 1;
                let ctx = format!("{scheme} {site:?} #{nth}: {e}");
                assert!(
                    matches!(e.cause(), Error::Fault { site: s, index, .. } if *s == site && *index == nth),
                    "{ctx}"
                );
                match e.progress() {
                    None => {
                        assert!(!matches!(e, Error::Failed { .. }), "{ctx}");
                        assert!(same_bits(&x, &initial), "touched: {ctx}");
                        outcomes[0] += 1;
                    }
                    Some(p) if !p.torn => {
                        assert!(p.steps_complete <= STEPS, "{ctx}");
                        let want = reference
                            .entry(p.steps_complete)
                            .or_insert_with(|| serial_after(p.steps_complete));
                        assert!(
                            same_bits(&x, want),
                            "not the state after {} steps: {ctx}",
                            p.steps_complete
                        );
                        outcomes[1] += 1;
                    }
                    Some(p) => {
                        assert!(p.steps_complete < STEPS, "{ctx}");
                        outcomes[2] += 1;
                    }
                }
                println!(
                    "{scheme} {site:?} #{nth}: {}",
                    match e.progress() {
                        None => "untouched".to_string(),
                        Some(p) => format!(
                            "failed after {} steps ({} blocks){}",
                            p.steps_complete,
                            p.blocks_complete,
                            if p.torn { ", torn" } else { "" }
                        ),
                    }
                );
            }
        }
    }
    // Bounced runs register nothing.
    let register = (opts.cuda.host_path != HostPath::Bounce).then_some(Site::Register);
    for site in [
        Site::Alloc,
        Site::Compile,
        Site::HtoD,
        Site::HostCopy,
        Site::Kernel,
        Site::Point,
        Site::DtoH,
    ]
    .into_iter()
    .chain(register)
    {
        assert!(
            fired.get(&site).copied().unwrap_or(0) > 0,
            "{site:?} never fired"
        );
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    println!("cuda faults: {outcomes:?} (untouched, consistent, torn); per site {fired:?}");
}

/// Whether the driver has `p` page-locked.
fn page_locked(p: *const f32) -> bool {
    use cudarc::driver::sys;
    let mut flags = 0u32;
    // SAFETY: a query; `flags` is a valid output location.
    let r = unsafe { sys::cuMemHostGetFlags(&mut flags, p as *mut std::ffi::c_void) };
    r == sys::CUresult::CUDA_SUCCESS
}

/// A fault while page-locking any piece of the arrays, registered beside the run or before it,
/// on one thread or several: the error names the fault, the arrays are exactly as passed, and
/// nothing of them stays page-locked.
#[test]
#[ignore = "needs a CUDA device"]
fn a_registration_fault_leaves_the_arrays_untouched_and_unlocked() {
    let _dev = need_device!();
    let _ctx = cudarc::driver::CudaContext::new(0).unwrap();
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    let initial = heat_inputs(SHAPE);
    let mut fired = 0;
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
        for (threads, overlap) in [(1, true), (3, true), (2, false)] {
            let plan = plan_for(&prog, &shape, STEPS, &[PT[0]], 4, 2, scheme);
            let opts = Options::default().page_locking(threads, overlap);
            for nth in positions() {
                let mut x = heat_inputs(SHAPE);
                let r = {
                    let _f = fault::inject(Site::Register, nth);
                    let [a, b, k] = &mut x;
                    let host = vec![
                        host_array_mut(a, "a").unwrap(),
                        host_array_mut(b, "b").unwrap(),
                        host_array(&*k, "k").unwrap(),
                    ];
                    let inv = heat_invocation(host, PT, STEPS);
                    cuda::execute(&prog, &plan, &inv, &settle(&prog, &opts)).map(|o| o.report)
                };
                let what = format!("{scheme} threads {threads} overlap {overlap} #{nth}");
                let e = match r {
                    Ok(report) => {
                        assert!(same_bits(&x, &serial_after(STEPS)), "{what}");
                        let note = report
                            .adjustments
                            .iter()
                            .any(|a| a.starts_with("page-locked"));
                        assert!(note, "{what}: {:?}", report.adjustments);
                        break;
                    }
                    Err(e) => e,
                };
                fired += 1;
                assert!(
                    matches!(&e, Error::Fault { site: Site::Register, index, .. } if *index == nth),
                    "{what}: {e}"
                );
                assert!(same_bits(&x, &initial), "touched: {what}");
                for a in &x {
                    let n = a.len();
                    let s = a.as_slice().unwrap();
                    for p in [&s[0], &s[n / 2], &s[n - 1]] {
                        assert!(!page_locked(p), "{what}: still page-locked");
                    }
                }
            }
        }
    }
    assert!(fired > 0, "no registration fault fired");
    println!("page-locking faults: {fired}, each left the arrays untouched and unlocked");
}

/// A completed run returns while its arrays' pieces are still being unregistered on the
/// background thread; once that settles nothing of them is page-locked, and a run straight
/// after on the same arrays (which waits for it first) registers them again and is right.
#[test]
#[ignore = "needs a CUDA device"]
fn a_completed_run_unregisters_its_arrays_before_it_returns() {
    let _dev = need_device!();
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
        let plan = plan_for(&prog, &shape, STEPS, &[PT[0]], 4, 2, scheme);
        let mut x = heat_inputs(SHAPE);
        let gosa = run_heat(&mut x, &plan).expect("first run");
        // No `settle()`: the caller may free or reuse the memory the moment the call returns.
        for a in &x {
            let s = a.as_slice().unwrap();
            for p in [&s[0], &s[s.len() / 2], &s[s.len() - 1]] {
                assert!(
                    !page_locked(p),
                    "{scheme}: still page-locked after the call"
                );
            }
        }
        assert!(same_bits(&x, &serial_after(STEPS)), "{scheme}");
        let mut y = heat_inputs(SHAPE);
        run_heat(&mut y, &plan).expect("second run");
        let again = run_heat(&mut heat_inputs(SHAPE), &plan).expect("third run");
        assert!(same_bits(&y, &serial_after(STEPS)), "{scheme}: second run");
        assert_eq!(gosa.to_bits(), again.to_bits(), "{scheme}: reduction");
    }
}

/// Four threads run at once, sharing one read-only array (page-locked by each run's
/// registration): CUDA runs are serialized, and every result equals the serial function.
#[test]
#[ignore = "needs a CUDA device"]
fn concurrent_runs_sharing_a_read_only_array() {
    let _dev = need_device!();
    let prog = heat_program();
    let shape = [SHAPE.0, SHAPE.1, SHAPE.2];
    let want = serial_after(STEPS);
    let k = heat_inputs(SHAPE)[2].clone();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let (k, prog, want) = (&k, &prog, &want);
                s.spawn(move || {
                    for rep in 0..3 {
                        let scheme = Scheme::ALL[(t + rep) % 3];
                        let plan = plan_for(prog, &shape, STEPS, &[PT[0]], 1 + t % 3, 2, scheme);
                        let [mut a, mut b, _] = heat_inputs(SHAPE);
                        let arrays = vec![
                            host_array_mut(&mut a, "a").unwrap(),
                            host_array_mut(&mut b, "b").unwrap(),
                            host_array(k, "k").unwrap(),
                        ];
                        let inv = heat_invocation(arrays, PT, STEPS);
                        cuda::execute(prog, &plan, &inv, &settle(prog, &Options::default()))
                            .unwrap_or_else(|e| panic!("thread {t} run {rep} {scheme}: {e}"));
                        drop(inv);
                        assert_bits_eq3(&a, &want[0], &format!("thread {t} run {rep} a"));
                        assert_bits_eq3(&b, &want[1], &format!("thread {t} run {rep} b"));
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    assert_bits_eq3(&k, &want[2], "shared k");
    println!("4 threads x 3 runs sharing `k`: all equal the serial function");
}

/// Arrays of several GiB run through a pipelined plan, then dropped; new arrays of the same
/// size (which the allocator may place at the same addresses) move to and from the device
/// through plain driver copies of pageable memory. A registration left behind by the run would
/// serve the copy the old bytes, or swallow the copy back (seen on an H200 with registrations
/// that outlived the call): the bytes must be the new arrays' own.
#[test]
#[ignore = "needs a CUDA device"]
fn dropped_arrays_leave_no_registration_behind() {
    let _dev = need_device!();
    // Three arrays of 1.5 GiB each.
    let shape = (768, 512, 1024);
    let prog = heat_program();
    let dims = [shape.0, shape.1, shape.2];
    let plan = plan_for(&prog, &dims, 2, &[PT[0]], 6, 2, Scheme::RegionSharing);
    let mut x = heat_inputs(shape);
    let addresses: Vec<usize> = x.iter().map(|a| a.as_ptr() as usize).collect();
    run_heat(&mut x, &plan).expect("the run");
    drop(x);
    let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let n = shape.0 * shape.1 * shape.2;
    let mut reused = 0;
    for (i, &was) in addresses.iter().enumerate() {
        let mine: Vec<f32> = (0..n).map(|j| (j % 1013) as f32 + i as f32 * 0.5).collect();
        reused += usize::from(mine.as_ptr() as usize == was);
        assert!(!page_locked(mine.as_ptr()), "array {i}: page-locked");
        // Host to device from the new memory: the device must see the new bytes.
        let dev = stream.clone_htod(&mine).unwrap();
        let back: Vec<f32> = stream.clone_dtoh(&dev).unwrap();
        assert!(
            back == mine,
            "array {i}: the device got other bytes than the array's"
        );
        // Device to host into the new memory: the array must receive them.
        let other: Vec<f32> = (0..n).map(|j| -((j % 977) as f32)).collect();
        let dev = stream.clone_htod(&other).unwrap();
        let mut into = mine;
        stream.memcpy_dtoh(&dev, &mut into).unwrap();
        stream.synchronize().unwrap();
        assert!(
            into == other,
            "array {i}: the copy back did not land in the array"
        );
    }
    println!("{reused} of 3 new arrays reused an old array's address");
}
