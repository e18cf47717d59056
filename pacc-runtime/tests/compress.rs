//! On-the-fly compression on the CPU backend.
//!
//! The reference model: the serial steps block by block, where at every block boundary each
//! compressed array the run writes is replaced by decode(encode(array)) of the *whole* array, and
//! each compressed input is round-tripped once before block 1; the last block's results stay raw.
//! The pipeline (chunks that compress their remnants and shared regions separately, region
//! sharing on decoded planes, any order the dependencies allow) must equal it bit for bit.

mod common;

use ndarray::{ArrayD, IxDyn};
use pacc_runtime::codec::{CodecKind, Rate, Value};
use pacc_runtime::exec::{CpuKernels, GridElem, KernelFrame};
use pacc_runtime::host::{host_array, host_array_mut};
use pacc_runtime::plan::{self, race, HostSide, OpKind, PlanOptions, Scheme};
use pacc_runtime::program::*;
use pacc_runtime::rng::SplitMix64;
use pacc_runtime::{BackendChoice, CompressError, Error, Invocation, Options};
use std::ops::{Add, Mul, Sub};

trait Val:
    GridElem
    + Value
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + PartialEq
    + std::fmt::Debug
{
    fn of(x: f64) -> Self;
    fn bits(self) -> u64;
}

impl Val for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Val for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Two shapes of time step: `leapfrog` (prev = f(cur, prev, vel); swap(prev, cur)) and `split`
/// (w = g(u, vel); u = (u + w) / 2; no swap, so u and w may have different rates).
#[derive(Clone, Copy, Debug)]
struct Case {
    leapfrog: bool,
    ndim: usize,
    /// Read reach along axis 0.
    r: usize,
}

fn range(lo: i64, hi: i64) -> AxisRange {
    AxisRange {
        lo: Bound::start(lo),
        hi: Bound::end(hi),
    }
}

fn read(array: usize, ndim: usize, r: i64, inner: i64) -> ReadDecl {
    let mut lo = vec![-inner; ndim];
    let mut hi = vec![inner; ndim];
    lo[0] = -r;
    hi[0] = r;
    ReadDecl { array, lo, hi }
}

fn program(c: Case, elem: Elem) -> Program {
    let r = c.r as i64;
    let arr = |name: &str, role| ArrayDecl {
        name: name.into(),
        elem,
        role,
    };
    let mut ranges = vec![range(1, -1); c.ndim];
    ranges[0] = range(r, -r);
    let kernel = |name: &str, reads, writes| KernelDecl {
        name: name.into(),
        ranges: ranges.clone(),
        reads,
        writes,
        reductions: vec![],
        launch: Default::default(),
        guarded: Vec::new(),
    };
    let (names, kernels, step) = if c.leapfrog {
        let k = kernel(
            "leap",
            vec![
                read(1, c.ndim, r, 1),
                read(0, c.ndim, 0, 0),
                read(2, c.ndim, 0, 0),
            ],
            vec![0],
        );
        (
            ["prev", "cur", "vel"],
            vec![k],
            vec![Stage::Kernel(0), Stage::Swap(0, 1)],
        )
    } else {
        let k0 = kernel(
            "spread",
            vec![read(0, c.ndim, r, 1), read(2, c.ndim, 0, 0)],
            vec![1],
        );
        let k1 = kernel(
            "mix",
            vec![read(0, c.ndim, 0, 0), read(1, c.ndim, 0, 0)],
            vec![0],
        );
        (
            ["u", "w", "vel"],
            vec![k0, k1],
            vec![Stage::Kernel(0), Stage::Kernel(1)],
        )
    };
    Program {
        name: if c.leapfrog { "leapfrog" } else { "split" }.into(),
        ndim: c.ndim,
        arrays: vec![
            arr(names[0], Role::InOut),
            arr(names[1], Role::InOut),
            arr(names[2], Role::Input),
        ],
        kernels,
        step,
        halo: c.r.max(1),
        ..Default::default()
    }
}

/// The discrete Laplacian around a point; `a(dz, dy, dx)` reads at an offset (dx unused in 2D).
fn lap<T: Val>(c: Case, a: impl Fn(isize, isize, isize) -> T) -> T {
    let mut s = T::of(0.0);
    for d in 1..=c.r as isize {
        s = s + a(-d, 0, 0) + a(d, 0, 0);
    }
    s = s + a(0, -1, 0) + a(0, 1, 0);
    if c.ndim == 3 {
        s = s + a(0, 0, -1) + a(0, 0, 1);
    }
    s - T::of((2 * c.r + 2 * (c.ndim - 1)) as f64) * a(0, 0, 0)
}

fn leap<T: Val>(c: Case, p: T, v: T, cur: impl Fn(isize, isize, isize) -> T) -> T {
    T::of(2.0) * cur(0, 0, 0) - p + v * lap(c, cur)
}

fn spread<T: Val>(c: Case, v: T, u: impl Fn(isize, isize, isize) -> T) -> T {
    u(0, 0, 0) + v * lap(c, u)
}

fn mix<T: Val>(u: T, w: T) -> T {
    T::of(0.5) * (u + w)
}

/// Flat index of (z, y, x) in `shape` (2D: (z, y)).
fn at(shape: &[usize], z: usize, y: usize, x: usize) -> usize {
    if shape.len() == 3 {
        (z * shape[1] + y) * shape[2] + x
    } else {
        z * shape[1] + y
    }
}

/// Interior points of the kernels' nest: (z, y, x).
fn interior(c: Case, shape: &[usize]) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    let nx = if c.ndim == 3 { shape[2] - 1 } else { 1 };
    for z in c.r..shape[0] - c.r {
        for y in 1..shape[1] - 1 {
            for x in (if c.ndim == 3 { 1 } else { 0 })..nx {
                v.push((z, y, x));
            }
        }
    }
    v
}

fn off(z: usize, y: usize, x: usize, d: (isize, isize, isize)) -> (usize, usize, usize) {
    (
        (z as isize + d.0) as usize,
        (y as isize + d.1) as usize,
        (x as isize + d.2) as usize,
    )
}

/// One serial time step on physical arrays; `binding[name]` = physical array.
fn serial_step<T: Val>(c: Case, shape: &[usize], a: &mut [Vec<T>], binding: &mut [usize]) {
    let pts = interior(c, shape);
    fn g<'a, T: Copy>(
        v: &'a [T],
        shape: &'a [usize],
        z: usize,
        y: usize,
        x: usize,
    ) -> impl Fn(isize, isize, isize) -> T + 'a {
        move |dz, dy, dx| {
            let (z, y, x) = off(z, y, x, (dz, dy, dx));
            v[at(shape, z, y, x)]
        }
    }
    if c.leapfrog {
        let (p, cu, ve) = (binding[0], binding[1], binding[2]);
        let (cur, vel) = (a[cu].clone(), a[ve].clone());
        for &(z, y, x) in &pts {
            let i = at(shape, z, y, x);
            a[p][i] = leap(c, a[p][i], vel[i], g(&cur, shape, z, y, x));
        }
        binding.swap(0, 1);
    } else {
        let (u, w, ve) = (binding[0], binding[1], binding[2]);
        let (uu, vel) = (a[u].clone(), a[ve].clone());
        for &(z, y, x) in &pts {
            let i = at(shape, z, y, x);
            a[w][i] = spread(c, vel[i], g(&uu, shape, z, y, x));
        }
        for &(z, y, x) in &pts {
            let i = at(shape, z, y, x);
            a[u][i] = mix(a[u][i], a[w][i]);
        }
    }
}

fn round_trip<T: Val>(v: &mut [T], shape: &[usize], rate: f64) {
    let (zfp, rate) = (CodecKind::Zfp.get(), Rate::new(rate).unwrap());
    let mut bytes = vec![0u8; zfp.compressed_bytes(shape, rate).unwrap()];
    zfp.encode(T::values(v), shape, rate, &mut bytes).unwrap();
    zfp.decode(&bytes, shape, rate, T::values_mut(v)).unwrap();
}

/// The reference model (module docs).
fn model<T: Val>(
    c: Case,
    shape: &[usize],
    a: &mut [Vec<T>],
    steps: usize,
    k: usize,
    rates: &[Option<f64>],
) {
    let mut binding = vec![0, 1, 2];
    let blocks = steps.div_ceil(k);
    // The run never writes the caller's input: only the device sees its round trip.
    let input = a[2].clone();
    let compressing = blocks > 1;
    for b in 0..blocks {
        if b == 1 && compressing {
            if let Some(r) = rates[2] {
                round_trip(&mut a[2], shape, r);
            }
        }
        for _ in b * k..((b + 1) * k).min(steps) {
            serial_step(c, shape, a, &mut binding);
        }
        if b + 1 < blocks {
            for p in 0..2 {
                if let Some(r) = rates[p] {
                    round_trip(&mut a[p], shape, r);
                }
            }
        }
    }
    a[2] = input;
}

fn get<T: Val>(c: Case, f: &KernelFrame<'_>, a: usize, z: usize, y: usize, x: usize) -> T {
    let g = f.arrays[a].grid::<T>();
    if c.ndim == 3 {
        g.get3(z, y, x)
    } else {
        g.get2(z, y)
    }
}

fn set<T: Val>(c: Case, f: &KernelFrame<'_>, a: usize, p: (usize, usize, usize), v: T) {
    let g = f.arrays[a].grid::<T>();
    if c.ndim == 3 {
        g.set3(p.0, p.1, p.2, v)
    } else {
        g.set2(p.0, p.1, v)
    }
}

/// The interior points of plane `z`.
fn plane(c: Case, f: &KernelFrame<'_>, z: usize) -> Vec<(usize, usize, usize)> {
    interior(c, f.shape)
        .into_iter()
        .filter(|p| p.0 == z)
        .collect()
}

fn closures<T: Val>(c: Case) -> CpuKernels<'static> {
    if c.leapfrog {
        let k = move |f: &KernelFrame<'_>, z: usize, _: &mut [f64]| {
            for (z, y, x) in plane(c, f, z) {
                let cur = |dz, dy, dx| {
                    let (z, y, x) = off(z, y, x, (dz, dy, dx));
                    get::<T>(c, f, 1, z, y, x)
                };
                let v = leap(c, get(c, f, 0, z, y, x), get(c, f, 2, z, y, x), cur);
                set(c, f, 0, (z, y, x), v);
            }
        };
        // SAFETY: the closures compute what `program` declares for the case: each writes only
        // the plane it is handed, inside the kernel's ranges, and reads within its offsets.
        unsafe { CpuKernels::new(vec![Box::new(k)], vec![]) }
    } else {
        let k0 = move |f: &KernelFrame<'_>, z: usize, _: &mut [f64]| {
            for (z, y, x) in plane(c, f, z) {
                let u = |dz, dy, dx| {
                    let (z, y, x) = off(z, y, x, (dz, dy, dx));
                    get::<T>(c, f, 0, z, y, x)
                };
                let v = spread(c, get(c, f, 2, z, y, x), u);
                set(c, f, 1, (z, y, x), v);
            }
        };
        let k1 = move |f: &KernelFrame<'_>, z: usize, _: &mut [f64]| {
            for (z, y, x) in plane(c, f, z) {
                let v = mix::<T>(get(c, f, 0, z, y, x), get(c, f, 1, z, y, x));
                set(c, f, 0, (z, y, x), v);
            }
        };
        // SAFETY: the closures compute what `program` declares for the case: each writes only
        // the plane it is handed, inside the kernel's ranges, and reads within its offsets.
        unsafe { CpuKernels::new(vec![Box::new(k0), Box::new(k1)], vec![]) }
    }
}

/// Random state: two state arrays in [-1, 1], the velocity in [0.02, 0.1].
fn data<T: Val>(shape: &[usize], seed: u64) -> Vec<Vec<T>> {
    let n: usize = shape.iter().product();
    let mut r = SplitMix64(seed);
    let mut a: Vec<Vec<T>> = (0..2)
        .map(|_| (0..n).map(|_| T::of(r.signed_unit())).collect())
        .collect();
    a.push(
        (0..n)
            .map(|_| T::of(0.06 + 0.04 * r.signed_unit()))
            .collect(),
    );
    a
}

/// Runs the pipeline on copies of `a`; returns the arrays (physical) and the report.
fn pipeline<T: Val>(
    c: Case,
    prog: &Program,
    shape: &[usize],
    a: &[Vec<T>],
    steps: usize,
    opts: &Options,
) -> Result<(Vec<Vec<T>>, pacc_runtime::Report), Error> {
    let mut arrs: Vec<ArrayD<T>> = a
        .iter()
        .map(|v| ArrayD::from_shape_vec(IxDyn(shape), v.clone()).unwrap())
        .collect();
    let (s, rest) = arrs.split_at_mut(2);
    let (x, y) = s.split_at_mut(1);
    let inv = Invocation {
        arrays: vec![
            host_array_mut(&mut x[0], "0").unwrap(),
            host_array_mut(&mut y[0], "1").unwrap(),
            host_array(&rest[0], "2").unwrap(),
        ],
        scalars: vec![],
        slices: vec![],
        points: vec![],
        t0: 0,
        steps,
        reduction_init: vec![],
        reset_values: vec![],
        cpu: closures::<T>(c),
    };
    let out = pacc_runtime::run(prog, inv, opts)?;
    Ok((
        arrs.into_iter()
            .map(|a| a.into_raw_vec_and_offset().0)
            .collect(),
        out.report,
    ))
}

fn bits<T: Val>(a: &[Vec<T>]) -> Vec<Vec<u64>> {
    a.iter()
        .map(|v| v.iter().map(|x| x.bits()).collect())
        .collect()
}

/// Rates the codec accepts for every shape of `ndim` axes (2D: multiples of 4).
fn random_rate(r: &mut SplitMix64, ndim: usize) -> f64 {
    let x = 8 + (r.next_u64() % 17) as usize;
    (if ndim == 2 { x / 4 * 4 } else { x }) as f64
}

fn random_case<T: Val>(seed: u64) {
    let mut r = SplitMix64(seed);
    let mut pick = |n: u64| (r.next_u64() % n) as usize;
    let c = Case {
        leapfrog: pick(2) == 0,
        ndim: 2 + pick(2),
        r: 1 + pick(2),
    };
    let shape: Vec<usize> = if c.ndim == 3 {
        vec![9 + pick(24), 4 + pick(6), 4 + pick(7)]
    } else {
        vec![9 + pick(40), 4 + pick(12)]
    };
    let (steps, k, chunks) = (1 + pick(9), 1 + pick(4), 1 + pick(5));
    let scheme = [Scheme::RegionSharing, Scheme::DirectMap, Scheme::Wavefront][pick(3)];
    let prog = program(c, <T as GridElem>::ELEM);
    let mut rr = SplitMix64(seed ^ 0xABCD);
    let mut rates = vec![None; 3];
    for rate in rates.iter_mut() {
        if rr.next_u64() % 3 != 0 {
            *rate = Some(random_rate(&mut rr, c.ndim));
        }
    }
    if c.leapfrog {
        rates[1] = rates[0]; // one swap group
    }
    let names: Vec<String> = prog.arrays.iter().map(|a| a.name.clone()).collect();
    let a0 = data::<T>(&shape, seed);
    let what = format!("seed {seed}: {c:?} shape {shape:?} steps {steps} k {k} chunks {chunks} {scheme} rates {rates:?}");
    let mut outs = Vec::new();
    for backend in [BackendChoice::Cpu, BackendChoice::Shuffled(seed)] {
        let mut o = Options::new()
            .backend(backend)
            .chunks(chunks.min(shape[0]))
            .block_steps(k)
            .scheme(scheme);
        for (p, rate) in rates.iter().enumerate() {
            if let Some(rate) = rate {
                o = o.compress(names[p].clone(), *rate);
            }
        }
        let (got, report) =
            pipeline(c, &prog, &shape, &a0, steps, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut want = a0.clone();
        model(c, &shape, &mut want, steps, report.block_steps, &rates);
        assert!(
            bits(&got) == bits(&want),
            "{what} ({backend:?}): pipeline != model"
        );
        outs.push(report);
    }
    // Compressed transfers count compressed bytes (small inner axes pad codec blocks, so they
    // are not always fewer).
    let r = &outs[0];
    let blocks = steps.div_ceil(r.block_steps);
    if blocks > 1 && rates.iter().any(Option::is_some) {
        assert!(r.link_bytes() != r.link_bytes_raw(), "{what}: {r}");
    } else {
        assert_eq!(r.link_bytes(), r.link_bytes_raw(), "{what}");
    }
}

#[test]
fn pipeline_equals_the_block_boundary_model_bit_for_bit() {
    for seed in 0..24 {
        random_case::<f32>(seed);
        random_case::<f64>(1000 + seed);
    }
}

#[test]
fn plans_with_compression_have_no_races() {
    let mut r = SplitMix64(7);
    for i in 0..60 {
        let mut pick = |n: u64| (r.next_u64() % n) as usize;
        let c = Case {
            leapfrog: pick(2) == 0,
            ndim: 3,
            r: 1 + pick(3),
        };
        let prog = program(c, Elem::F32);
        let shape = [12 + pick(60), 8, 8];
        let rate = 8.0 + pick(12) as f64;
        let mut compress = vec![Some(rate), Some(rate), None];
        if pick(2) == 0 {
            compress[2] = Some(rate + 2.0);
        }
        if !c.leapfrog && pick(2) == 0 {
            compress[1] = None;
        }
        let opts = PlanOptions {
            chunks: 1 + pick(8),
            block_steps: 1 + pick(5),
            scheme: [Scheme::RegionSharing, Scheme::DirectMap, Scheme::Wavefront][pick(3)],
            buffer_sets: 1 + pick(3),
            compress,
            codec: Default::default(),
            read_only_ring: true,
        };
        let steps = 1 + pick(14);
        let p = match plan::build(&prog, &shape, steps, &[], &opts) {
            Ok(p) => p,
            Err(plan::PlanError::TooThin { .. }) => continue,
            Err(e) => panic!("case {i}: {e}"),
        };
        race::check(&prog, &p).unwrap_or_else(|e| panic!("case {i} {opts:?}: {e}"));
        for op in &p.ops {
            if let OpKind::Encode { planes, base, .. } | OpKind::Decode { planes, base, .. } =
                &op.kind
            {
                assert!(planes.start % 4 == 0 && base % 4 == 0);
                assert!(planes.end % 4 == 0 || planes.end == shape[0]);
            }
        }
    }
}

/// A hand-worked plan: leapfrog, reach 1, 3D 32 x 8 x 8 f32, 4 chunks, 2 blocks of 2 steps,
/// prev/cur at rate 16 and vel at rate 8.
#[test]
fn compressed_bytes_are_whole_slabs_as_computed_by_hand() {
    let c = Case {
        leapfrog: true,
        ndim: 3,
        r: 1,
    };
    let prog = program(c, Elem::F32);
    let opts = PlanOptions {
        chunks: 4,
        block_steps: 2,
        scheme: Scheme::RegionSharing,
        buffer_sets: 3,
        compress: vec![Some(16.0), Some(16.0), Some(8.0)],
        codec: Default::default(),
        read_only_ring: true,
    };
    let p = plan::build(&prog, &[32, 8, 8], 4, &[], &opts).unwrap();
    race::check(&prog, &p).unwrap();
    // A slab of 4 x 8 x 8 values is 4 codec blocks: 4 * 64 * 16 bits = 512 bytes at rate 16,
    // 256 bytes at rate 8 (raw: 1024 bytes of f32).
    let slab = |a: usize| {
        let rate = Rate::new(opts.compress[a].unwrap()).unwrap();
        CodecKind::Zfp.get().slab_bytes(&[8, 8], rate).unwrap()
    };
    assert_eq!((slab(0), slab(2)), (512, 256));
    let owned: Vec<_> = p.blocks[0].chunks.iter().map(|c| c.owned.clone()).collect();
    assert_eq!(owned, vec![0..8, 8..16, 16..24, 24..32]);
    // Block 0 writes prev and cur compressed (8 slabs each) and vel's compressed copy (8 slabs).
    // Block 1 reads each array once, compressed (region sharing: 8 slabs each), and writes prev
    // and cur raw.
    let comp_dtoh: u64 = (2 * 8 * 512 + 8 * 256) as u64;
    let comp_htod: u64 = (2 * 8 * 512 + 8 * 256) as u64;
    let raw_block0_htod = 3 * 32 * 256u64;
    let raw_block1_dtoh = 2 * 32 * 256u64;
    assert_eq!(p.bytes_htod(), raw_block0_htod + comp_htod);
    assert_eq!(p.bytes_dtoh(), comp_dtoh + raw_block1_dtoh);
    assert_eq!(p.bytes_htod_raw(), 2 * 3 * 32 * 256);
    assert_eq!(p.bytes_dtoh_raw(), 2 * 2 * 32 * 256 + 32 * 256);
    let compressed_htod: usize = p
        .ops
        .iter()
        .filter(|o| {
            matches!(
                o.kind,
                OpKind::HtoD {
                    from: HostSide::Compressed,
                    ..
                }
            )
        })
        .count();
    assert!(
        compressed_htod >= 3,
        "each array arrives compressed in block 1"
    );
    assert!(p.summary(&prog).contains("encode"), "{}", p.summary(&prog));
}

#[test]
fn compression_is_lossy_but_close() {
    let c = Case {
        leapfrog: true,
        ndim: 3,
        r: 2,
    };
    let prog = program(c, Elem::F32);
    let shape = [24, 8, 8];
    let a0 = data::<f32>(&shape, 5);
    let base = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(2);
    let (raw, _) = pipeline(c, &prog, &shape, &a0, 6, &base).unwrap();
    let (lossy, rep) = pipeline(
        c,
        &prog,
        &shape,
        &a0,
        6,
        &base.clone().compress_all(16.0).compress_inputs(true),
    )
    .unwrap();
    assert!(rep.compression_ratio() > 1.2, "{rep}");
    assert!(
        bits(&raw) != bits(&lossy),
        "compression must change the bits"
    );
    let err = raw[0]
        .iter()
        .zip(&lossy[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(err < 0.05, "max error {err}");
}

/// The half-precision codec through the whole pipeline (CPU backend): every block boundary
/// rounds the compressed arrays to f16, so the run stays within a few f16 units of the
/// uncompressed one; f16 takes rate 16 only and f32 arrays only, refused before anything runs.
#[test]
fn f16_compression_is_close_to_the_raw_run() {
    let c = Case {
        leapfrog: true,
        ndim: 3,
        r: 2,
    };
    let prog = program(c, Elem::F32);
    let shape = [24, 8, 8];
    let a0 = data::<f32>(&shape, 5);
    let base = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(3)
        .block_steps(2);
    let (raw, _) = pipeline(c, &prog, &shape, &a0, 6, &base).unwrap();
    let f16 = base.clone().codec(CodecKind::F16);
    let (lossy, rep) = pipeline(
        c,
        &prog,
        &shape,
        &a0,
        6,
        &f16.clone().compress_all(16.0).compress_inputs(true),
    )
    .unwrap();
    assert!(rep.compression_ratio() > 1.2, "{rep}");
    assert!(bits(&raw) != bits(&lossy), "f16 must change the bits");
    let (err, top) = raw[0]
        .iter()
        .zip(&lossy[0])
        .fold((0.0f32, 0.0f32), |(e, t), (a, b)| {
            (e.max((a - b).abs()), t.max(a.abs()))
        });
    // Three round trips of half a unit in the last place (2^-11 relative) each, spread by the
    // stencil: well below 2^-8 of the largest value.
    assert!(
        err > 0.0 && err < top * 2f32.powi(-8),
        "max error {err} of {top}"
    );
    for (o, rate) in [
        (f16.clone().compress_all(8.0).compress_inputs(true), 8.0),
        (f16.compress("vel", 12.0), 12.0),
    ] {
        match pipeline(c, &prog, &shape, &a0, 6, &o) {
            Err(Error::Compress(e @ CompressError::Rate { .. })) => {
                assert!(
                    e.to_string().contains("16 bits per value"),
                    "rate {rate}: {e}"
                )
            }
            other => panic!("rate {rate}: {:?}", other.map(|r| r.1)),
        }
    }
    let prog64 = program(c, Elem::F64);
    let a64 = data::<f64>(&shape, 5);
    let o = base
        .codec(CodecKind::F16)
        .compress_all(16.0)
        .compress_inputs(true);
    match pipeline(c, &prog64, &shape, &a64, 6, &o) {
        Err(Error::Compress(e @ CompressError::Rate { .. })) => {
            assert!(e.to_string().contains("f64"), "{e}")
        }
        other => panic!("f64 with f16: {:?}", other.map(|r| r.1)),
    }
}

/// Each validation error comes back before anything is touched.
#[test]
fn bad_settings_are_typed_errors_and_touch_nothing() {
    let c = Case {
        leapfrog: true,
        ndim: 2,
        r: 1,
    };
    let prog = program(c, Elem::F32);
    let shape = [20, 8];
    let a0 = data::<f32>(&shape, 9);
    let base = Options::new()
        .backend(BackendChoice::Cpu)
        .chunks(2)
        .block_steps(2);
    type Want = fn(&CompressError) -> bool;
    let cases: Vec<(Options, Want)> = vec![
        (base.clone().compress("nope", 16.0), |e| {
            matches!(e, CompressError::UnknownArray { .. })
        }),
        (base.clone().compress("prev", 16.0), |e| {
            matches!(e, CompressError::SwapGroup { .. })
        }),
        (base.clone().compress("vel", 10.0), |e| {
            matches!(e, CompressError::Rate { .. })
        }),
        (base.clone().compress("vel", 40.0), |e| {
            matches!(e, CompressError::Rate { .. })
        }),
        (base.clone().compress("vel", -1.0), |e| {
            matches!(e, CompressError::Rate { .. })
        }),
        (
            base.clone()
                .compress("vel", 16.0)
                .scheme(Scheme::StagedCopy),
            |e| matches!(e, CompressError::Scheme { .. }),
        ),
    ];
    for (o, want) in cases {
        let mut arrs: Vec<ArrayD<f32>> = a0
            .iter()
            .map(|v| ArrayD::from_shape_vec(IxDyn(&shape), v.clone()).unwrap())
            .collect();
        let before: Vec<ArrayD<f32>> = arrs.clone();
        let (s, rest) = arrs.split_at_mut(2);
        let (x, y) = s.split_at_mut(1);
        let inv = Invocation {
            arrays: vec![
                host_array_mut(&mut x[0], "prev").unwrap(),
                host_array_mut(&mut y[0], "cur").unwrap(),
                host_array(&rest[0], "vel").unwrap(),
            ],
            scalars: vec![],
            slices: vec![],
            points: vec![],
            t0: 0,
            steps: 6,
            reduction_init: vec![],
            reset_values: vec![],
            cpu: closures::<f32>(c),
        };
        match pacc_runtime::run(&prog, inv, &o) {
            Err(Error::Compress(e)) if want(&e) => {
                assert!(e.to_string().contains("Hint"), "{e}")
            }
            Err(e) => panic!("{o:?}: unexpected error {e}"),
            Ok(_) => panic!("{o:?}: accepted"),
        }
        assert_eq!(arrs, before, "{o:?} touched the arrays");
    }
}

/// A scratch array cannot be compressed; one block never compresses (and says so).
#[test]
fn scratch_arrays_and_single_blocks() {
    let mut prog = program(
        Case {
            leapfrog: false,
            ndim: 3,
            r: 1,
        },
        Elem::F64,
    );
    prog.arrays[1].role = Role::Scratch;
    let opts = PlanOptions {
        compress: vec![None, Some(16.0), None],
        ..PlanOptions::default()
    };
    assert!(matches!(
        plan::build(&prog, &[16, 8, 8], 8, &[], &opts),
        Err(plan::PlanError::CompressRate { .. })
    ));
    let opts = PlanOptions {
        compress: vec![Some(16.0), None, None],
        block_steps: 8,
        ..PlanOptions::default()
    };
    let p = plan::build(&prog, &[16, 8, 8], 8, &[], &opts).unwrap();
    assert!(!p.compresses());
    assert!(p.adjustments.iter().any(|a| a.contains("single block")));
}
