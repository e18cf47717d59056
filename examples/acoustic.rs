//! 3D acoustic wave propagation (2nd order in time, 8th order in space) with a Ricker source,
//! run through the pipeline: the main example.
//!
//! ```text
//! cargo run --release --example acoustic -- --size 128 --steps 200 --verify
//! ```
//!
//! It runs on the GPU when there is one, otherwise on the CPU backend, and says which. The figure
//! of merit is the L2 norm of the newest wavefield.

mod common;

use clap::Parser;
use common::{diff, fail, json_summary, parse_list, PipelineArgs, Verifier};
use pacc::models::acoustic::{self, propagate, propagate_sponge, HALO};
use pacc::runtime::rng;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(about = "3D acoustic wave propagation (8th order in space), through pacc's pipeline")]
struct Cli {
    /// Grid points per side of a cubic domain.
    #[arg(long, default_value_t = 128)]
    size: usize,
    /// Domain shape Z,Y,X (Z is split into chunks); overrides --size.
    #[arg(long, value_name = "Z,Y,X")]
    shape: Option<String>,
    /// Time steps.
    #[arg(long, default_value_t = 200)]
    steps: usize,
    /// Grid spacing (m), the same on every axis.
    #[arg(long, default_value_t = 10.0)]
    dx: f64,
    /// Time step (s).
    #[arg(long, default_value_t = 0.001)]
    dt: f64,
    /// Velocity (m/s) of a uniform medium, or of the top layer with --layers.
    #[arg(long, default_value_t = 2000.0)]
    velocity: f64,
    /// Layered medium: this many horizontal layers of equal thickness along Z, velocities rising
    /// linearly from --velocity to --vmax (0 or 1: uniform).
    #[arg(long, default_value_t = 0)]
    layers: usize,
    /// Velocity (m/s) of the bottom layer with --layers.
    #[arg(long, default_value_t = 4000.0)]
    vmax: f64,
    /// Peak frequency (Hz) of the Ricker source.
    #[arg(long, default_value_t = 15.0)]
    f0: f64,
    /// Source point Z,Y,X (default: the centre).
    #[arg(long, value_name = "Z,Y,X")]
    source: Option<String>,
    /// Width (points) of an absorbing sponge along every face (0: none, the faces reflect).
    #[arg(long, default_value_t = 0)]
    sponge: usize,
    /// Damping at the outer edge of the sponge (e = gamma dt / 2).
    #[arg(long, default_value_t = 0.1)]
    sponge_strength: f32,
    /// Write the middle Z slice of the newest wavefield as a PNG (blue - white - red).
    #[arg(long, value_name = "FILE.png")]
    snapshot: Option<PathBuf>,
    /// Start from a deterministic pseudo-random field of this amplitude in both time levels
    /// (inside the zero frame) instead of rest, so every plane carries data; for checking large
    /// runs plane by plane.
    #[arg(long, value_name = "AMPLITUDE")]
    init_noise: Option<f32>,
    /// After the run, run again from the same start with D chunks and K block steps, and compare
    /// every plane of both wavefields exactly (by 64-bit hashes, so it needs no second copy of
    /// the arrays: the check for runs too large to verify against the serial function).
    #[arg(long, value_name = "D,K")]
    compare_with: Option<String>,
    /// Allocate the arrays with `Array3::zeros` (4 KiB pages, mapped when first written) instead
    /// of `pacc::runtime::pages::zeros` (huge pages, mapped on all cores at allocation), to
    /// compare how fast a CUDA run page-locks them.
    #[arg(long)]
    plain_pages: bool,
    /// Page-lock the arrays before the call (`pacc::runtime::exec::cuda::lock_host_unchecked`), as a
    /// program calling the pipeline repeatedly would once, and time it apart: the call then
    /// registers nothing. CUDA only.
    #[arg(long)]
    lock_first: bool,
    #[command(flatten)]
    pipe: PipelineArgs,
}

/// The run's arrays over planes `w` of the global `shape` (all of them, or a rank's window):
/// both time levels at rest or filled with reproducible noise inside the zero frame, the
/// velocity, and the sponge when there is one. Each is filled plane by plane in parallel as
/// `pacc::runtime::pages::from_planes` maps it (huge pages, which a CUDA run page-locks about
/// twice as fast), or after `Array3::zeros` with `--plain-pages`.
struct Fields {
    prev: Field,
    cur: Field,
    vel: Field,
    damp: Option<Field>,
}

fn fields(
    cli: &Cli,
    shape: (usize, usize, usize),
    (vtop, vbottom): (f64, f64),
    w: Range,
) -> Fields {
    let local = (w.len(), shape.1, shape.2);
    let alloc = |fill: &PlaneFill<'_>| filled(local, cli.plain_pages, fill);
    let field = |seed| alloc(&|z, p| start_plane(p, w.start + z, shape, cli.init_noise, seed));
    let column = acoustic::layered_vel((shape.0, 1, 1), cli.layers, vtop, vbottom, cli.dt, cli.dx);
    let vel = alloc(&|z, p| p.fill(column[[w.start + z, 0, 0]]));
    let damp = (cli.sponge > 0).then(|| {
        alloc(&|z, p| {
            let z = w.start + z;
            let one = acoustic::sponge_planes(shape, cli.sponge, cli.sponge_strength, z..z + 1);
            p.copy_from_slice(one.as_slice().expect("a new array is contiguous"));
        })
    });
    Fields {
        prev: field(1),
        cur: field(2),
        vel,
        damp,
    }
}

/// Fills plane `z` (along Z) of an array, given the plane's elements.
type PlaneFill<'a> = dyn Fn(usize, &mut [f32]) + Sync + 'a;

/// An array of `shape` filled plane by plane in parallel: from `pacc::runtime::pages`, or
/// (`plain`) `Array3::zeros`.
fn filled(shape: (usize, usize, usize), plain: bool, fill: &PlaneFill<'_>) -> Field {
    match plain {
        true => {
            let mut a = Field::zeros(shape);
            fill_planes(&mut a, fill);
            a
        }
        false => pacc::runtime::pages::from_planes(shape, fill).unwrap_or_else(|e| fail(e)),
    }
}

/// `fill(z, plane)` on every plane of `a`, in parallel.
fn fill_planes(a: &mut Field, fill: &PlaneFill<'_>) {
    use rayon::prelude::*;
    let plane = (a.shape()[1] * a.shape()[2]).max(1);
    let slice = a
        .as_slice_mut()
        .expect("the example's arrays are contiguous");
    (slice.par_chunks_mut(plane).enumerate()).for_each(|(z, p)| fill(z, p));
}

type Range = std::ops::Range<usize>;

/// Overwrites `a` with the start [`fields`] gives it, in place and in parallel (a second copy
/// of a 30 GB wavefield may not fit in host memory).
fn reset_field(a: &mut ndarray::Array3<f32>, noise: Option<f32>, seed: u64) {
    let shape = a.dim();
    fill_planes(a, &|z, p| start_plane(p, z, shape, noise, seed));
}

/// Plane `z` of a time level at the start, the field being `shape` globally: zero, or
/// reproducible noise of amplitude `noise` inside the zero frame.
fn start_plane(
    p: &mut [f32],
    z: usize,
    (nz, ny, nx): (usize, usize, usize),
    noise: Option<f32>,
    seed: u64,
) {
    p.fill(0.0);
    let Some(amp) = noise else { return };
    if z < HALO || z + HALO >= nz {
        return;
    }
    for y in HALO..ny - HALO {
        for x in HALO..nx - HALO {
            let i = ((z * ny + y) * nx + x) as u64;
            let h = rng::hash(seed, i);
            p[y * nx + x] = amp * (rng::unit_f32(h) - 0.5);
        }
    }
}

/// A 64-bit FNV-1a hash of every plane's bits, computed in parallel.
fn plane_hashes(a: &ndarray::Array3<f32>) -> Vec<u64> {
    use rayon::prelude::*;
    let plane = a.shape()[1] * a.shape()[2];
    let slice = a.as_slice().expect("pipelined arrays are contiguous");
    slice
        .par_chunks(plane)
        .map(|p| {
            p.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                (h ^ v.to_bits() as u64).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect()
}

/// The checked domain, source point and medium of the command line.
struct Problem {
    shape: (usize, usize, usize),
    src: Vec<usize>,
    layered: bool,
    vtop: f64,
    vbottom: f64,
    courant: f64,
    limit: f64,
}

/// Reads the domain, the source and the medium from the command line; exits with a message on
/// a shape, source point or time step the scheme cannot run.
fn problem(cli: &Cli) -> Problem {
    let shape = match &cli.shape {
        Some(s) => {
            let v = parse_list::<usize>(s, 3, "--shape").unwrap_or_else(|e| fail(e));
            (v[0], v[1], v[2])
        }
        None => (cli.size, cli.size, cli.size),
    };
    let (nz, ny, nx) = shape;
    if nz.min(ny).min(nx) <= 2 * HALO {
        fail(format!(
            "every axis needs more than {} points (the zero frame is {HALO} planes on each face)",
            2 * HALO
        ));
    }
    let src = match &cli.source {
        Some(s) => parse_list::<usize>(s, 3, "--source").unwrap_or_else(|e| fail(e)),
        None => vec![nz / 2, ny / 2, nx / 2],
    };
    for (a, (&i, n)) in src.iter().zip([nz, ny, nx]).enumerate() {
        if i < HALO || i >= n - HALO {
            fail(format!(
                "--source: index {i} on axis {a} lies in the zero frame; use {HALO}..{}",
                n - HALO
            ));
        }
    }
    let layered = cli.layers > 1;
    let vtop = cli.velocity;
    let vbottom = if layered { cli.vmax } else { cli.velocity };
    let courant = vtop.max(vbottom) * cli.dt / cli.dx;
    let limit = acoustic::stability_limit();
    if courant > limit {
        fail(format!(
            "unstable: the Courant number v dt / dx = {courant:.4} exceeds {limit:.4} for this \
             scheme; lower --dt or the velocity, or raise --dx"
        ));
    }
    Problem {
        shape,
        src,
        layered,
        vtop,
        vbottom,
        courant,
        limit,
    }
}

/// The run's one-line description.
fn print_setting(cli: &Cli, p: &Problem) {
    let (nz, ny, nx) = p.shape;
    let (sz, sy, sx) = (p.src[0], p.src[1], p.src[2]);
    let (vtop, vbottom) = (p.vtop, p.vbottom);
    println!(
        "acoustic: {nz}x{ny}x{nx} grid, {} steps, dx {} m, dt {} s, {}, Courant {:.3} \
         (limit {:.3}), Ricker {} Hz at ({sz},{sy},{sx}), {}",
        cli.steps,
        cli.dx,
        cli.dt,
        if p.layered {
            format!("{} layers {vtop}..{vbottom} m/s", cli.layers)
        } else {
            format!("v = {vtop} m/s")
        },
        p.courant,
        p.limit,
        cli.f0,
        match cli.sponge {
            0 => "no sponge".to_string(),
            w => format!("sponge {w} points"),
        }
    );
}

type Field = ndarray::Array3<f32>;

/// One pipelined run of the example's function over `prev` and `cur`.
type Run<'a> =
    dyn Fn(&mut Field, &mut Field, &pacc::Options) -> Result<((), pacc::Report), pacc::Error> + 'a;

/// `--compare-with D,K`: runs again from the same start with `d` chunks and `k` block steps
/// and compares every plane of both wavefields by hash. Whether they are identical.
fn compare_with(
    cli: &Cli,
    run: &Run<'_>,
    opts: &pacc::Options,
    (prev, cur): (&mut Field, &mut Field),
    (d, k): (usize, usize),
) -> bool {
    let nz = prev.dim().0;
    let first = (plane_hashes(prev), plane_hashes(cur));
    reset_field(prev, cli.init_noise, 1);
    reset_field(cur, cli.init_noise, 2);
    let opts2 = opts.clone().chunks(d).block_steps(k);
    let ((), report2) = run(prev, cur, &opts2).unwrap_or_else(|e| fail(e));
    print!("second run: {report2}");
    let again = (plane_hashes(prev), plane_hashes(cur));
    let differ = |a: &[u64], b: &[u64]| a.iter().zip(b).filter(|(x, y)| x != y).count();
    let (dp, dc) = (differ(&first.0, &again.0), differ(&first.1, &again.1));
    let same = dp == 0 && dc == 0;
    println!(
        "compare with {d} chunks, {k} block steps: {} of {nz} planes differ in prev, {} in cur: {}",
        dp,
        dc,
        if same { "identical" } else { "MISMATCH" }
    );
    same
}

fn main() {
    let cli = Cli::parse();
    let p = problem(&cli);
    let (shape, src) = (p.shape, &p.src);
    let (nz, ny, nx) = shape;
    let wavelet = acoustic::ricker(cli.f0, cli.dt, cli.steps);
    let dx2 = (cli.dx * cli.dx) as f32;
    // Under mpirun each rank builds only its window of the arrays.
    #[cfg(feature = "mpi")]
    if common::dist::launched() {
        let setup = Setup {
            shape,
            src: src.clone(),
            vtop: p.vtop,
            vbottom: p.vbottom,
            wavelet: &wavelet,
            dx2,
        };
        std::process::exit(distributed(&cli, &setup));
    }
    let opts = cli.pipe.options().unwrap_or_else(|e| fail(e));

    // prev, cur, vel (and the sponge); --verify and --compare-with keep two more each.
    let arrays = 3
        + usize::from(cli.sponge > 0)
        + 2 * usize::from(cli.pipe.verify)
        + 2 * usize::from(cli.compare_with.is_some());
    common::check_host_memory(
        "acoustic",
        arrays,
        nz.saturating_mul(ny).saturating_mul(nx),
        4,
    );
    let Fields {
        mut prev,
        mut cur,
        vel,
        damp,
    } = fields(&cli, shape, (p.vtop, p.vbottom), 0..nz);
    let (sz, sy, sx) = (src[0], src[1], src[2]);
    let second = cli.compare_with.as_deref().map(|s| {
        let v = parse_list::<usize>(s, 2, "--compare-with").unwrap_or_else(|e| fail(e));
        (v[0], v[1])
    });
    print_setting(&cli, &p);

    // SAFETY: the arrays are only written in place by the runs below, and dropped after the
    // guard (declared after them, so dropped first).
    let _lock = cli
        .lock_first
        .then(|| unsafe { lock_first(&[&prev, &cur, &vel], damp.as_ref()) })
        .flatten();
    let run = |prev: &mut Field, cur: &mut Field, opts: &pacc::Options| match &damp {
        None => propagate::run(prev, cur, &vel, &wavelet, sz, sy, sx, dx2, cli.steps, opts),
        Some(d) => propagate_sponge::run(
            prev, cur, &vel, d, &wavelet, sz, sy, sx, dx2, cli.steps, opts,
        ),
    };
    let ((), report) = run(&mut prev, &mut cur, &opts).unwrap_or_else(|e| fail(e));
    print!("{report}");
    let norm = acoustic::l2_norm(&cur);
    println!("L2 norm of the newest wavefield: {norm:.9e}");

    if let Some(path) = &cli.snapshot {
        write_png(path, &cur, nz / 2).unwrap_or_else(|e| fail(e));
        println!(
            "snapshot of slice z = {} written to {}",
            nz / 2,
            path.display()
        );
    }

    let mut verified = second.map(|dk| compare_with(&cli, &run, &opts, (&mut prev, &mut cur), dk));
    if cli.pipe.verify {
        let mut v = Verifier::new(&report, cli.pipe.tolerance);
        let (sprev, scur) = serial_fields(&cli, &vel, damp.as_ref(), &wavelet, src, dx2);
        v.array("cur", diff(&cur, &scur));
        v.array("prev", diff(&prev, &sprev));
        v.finish();
        verified = Some(v.ok && verified.unwrap_or(true));
    }
    if cli.pipe.json {
        println!(
            "{}",
            json_summary(
                "acoustic",
                &report,
                "l2_norm",
                norm,
                verified,
                serde_json::json!({ "source": src, "sponge": cli.sponge, "layers": cli.layers }),
            )
        );
    }
    if verified == Some(false) {
        std::process::exit(1);
    }
}

/// `--lock-first`: the arrays page-locked until the guard drops, or `None` (saying why) where
/// that is not possible; the call then registers them itself.
///
/// # Safety
/// The arrays must stay allocated, and not be reallocated, until the guard drops (the guard
/// does not borrow them, so that the runs can take them mutably).
#[cfg(feature = "cuda")]
unsafe fn lock_first(
    arrays: &[&Field],
    damp: Option<&Field>,
) -> Option<pacc::runtime::exec::cuda::HostLock<'static>> {
    let host: Result<Vec<_>, _> = (arrays.iter().copied().chain(damp))
        .map(|a| pacc::runtime::host::host_array(a, "field"))
        .collect();
    // SAFETY: the caller keeps the arrays allocated while the guard lives.
    match host.and_then(|h| unsafe { pacc::runtime::exec::cuda::lock_host_unchecked(&h) }) {
        Ok(lock) => {
            println!(
                "page-locked {:.1} GiB of the arrays in {:.2} s before the call (--lock-first)",
                lock.bytes as f64 / (1u64 << 30) as f64,
                lock.seconds
            );
            Some(lock)
        }
        Err(e) => {
            println!("--lock-first: {e}; the call page-locks the arrays itself");
            None
        }
    }
}

#[cfg(not(feature = "cuda"))]
unsafe fn lock_first(_: &[&Field], _: Option<&Field>) -> Option<()> {
    println!("--lock-first: built without CUDA; nothing to page-lock");
    None
}

/// The serial function's wavefields `(prev, cur)` from the same start (for `--verify`).
fn serial_fields(
    cli: &Cli,
    vel: &ndarray::Array3<f32>,
    damp: Option<&ndarray::Array3<f32>>,
    wavelet: &[f32],
    src: &[usize],
    dx2: f32,
) -> (ndarray::Array3<f32>, ndarray::Array3<f32>) {
    let shape = vel.dim();
    let (sz, sy, sx) = (src[0], src[1], src[2]);
    let (mut sprev, mut scur) = (Field::zeros(shape), Field::zeros(shape));
    reset_field(&mut sprev, cli.init_noise, 1);
    reset_field(&mut scur, cli.init_noise, 2);
    match damp {
        None => propagate::serial(
            &mut sprev, &mut scur, vel, wavelet, sz, sy, sx, dx2, cli.steps,
        ),
        Some(d) => propagate_sponge::serial(
            &mut sprev, &mut scur, vel, d, wavelet, sz, sy, sx, dx2, cli.steps,
        ),
    }
    (sprev, scur)
}

/// What the distributed run needs from `main`'s set-up.
#[cfg(feature = "mpi")]
struct Setup<'a> {
    shape: (usize, usize, usize),
    src: Vec<usize>,
    vtop: f64,
    vbottom: f64,
    wavelet: &'a [f32],
    dx2: f32,
}

/// Started under mpirun: every rank runs its slab; rank 0 prints. Returns the exit status.
#[cfg(feature = "mpi")]
fn distributed(cli: &Cli, setup: &Setup<'_>) -> i32 {
    let universe = common::dist::init();
    let world = universe.world();
    // The options (`PACC_*` variables may differ between ranks) only once MPI runs, agreed on
    // by every rank: one rank's bad value stops them all.
    let run = common::dist::options(&world, &cli.pipe)
        .and_then(|opts| distributed_run(cli, &opts, setup, &world));
    match run {
        Ok(ok) => i32::from(!common::dist::verdict(&world, ok)),
        Err(e) => {
            common::dist::report_error(&world, &e);
            1
        }
    }
}

#[cfg(feature = "mpi")]
fn distributed_run(
    cli: &Cli,
    opts: &pacc::Options,
    s: &Setup<'_>,
    world: &pacc::runtime::dist::Communicator,
) -> Result<bool, pacc::Error> {
    use pacc::runtime::dist;
    let root = common::dist::root(world);
    let (nz, ny, nx) = s.shape;
    let program = match cli.sponge {
        0 => propagate::program(),
        _ => propagate_sponge::program(),
    };
    let slab = dist::slab(world, program, &[nz, ny, nx], cli.steps, opts)?;
    let w = slab.window.clone();
    // Each rank builds only its window.
    let Fields {
        mut prev,
        mut cur,
        vel,
        damp,
    } = fields(cli, s.shape, (s.vtop, s.vbottom), w.clone());
    if root {
        println!(
            "acoustic: {nz}x{ny}x{nx} grid, {} steps on {} MPI ranks (slabs of ~{} planes along Z, \
             halos {:?}), Ricker {} Hz at {:?}",
            cli.steps,
            common::dist::ranks(world),
            slab.owned.len(),
            slab.halo,
            cli.f0,
            s.src
        );
    }
    let (sz, sy, sx, steps) = (s.src[0], s.src[1], s.src[2], cli.steps);
    let ((), report) = match &damp {
        None => propagate::run_distributed(
            &mut prev, &mut cur, &vel, s.wavelet, sz, sy, sx, s.dx2, steps, world, &slab, opts,
        )?,
        Some(d) => propagate_sponge::run_distributed(
            &mut prev, &mut cur, &vel, d, s.wavelet, sz, sy, sx, s.dx2, steps, world, &slab, opts,
        )?,
    };
    let own = slab.owned_local();
    let mine: f64 = cur
        .slice(ndarray::s![own, .., ..])
        .iter()
        .map(|&v| (v as f64) * (v as f64))
        .sum();
    let norm = common::dist::sum_in_rank_order(world, mine).sqrt();
    if root {
        print!("{report}");
        println!("L2 norm of the newest wavefield: {norm:.9e}");
    }
    let mut verified = None;
    if cli.pipe.verify {
        let (gp, gc) = (
            dist::gather(world, &slab, &prev),
            dist::gather(world, &slab, &cur),
        );
        if let (Some(gp), Some(gc)) = (gp, gc) {
            let vel = acoustic::layered_vel(s.shape, cli.layers, s.vtop, s.vbottom, cli.dt, cli.dx);
            let damp = (cli.sponge > 0)
                .then(|| acoustic::sponge(s.shape, cli.sponge, cli.sponge_strength));
            let (sprev, scur) = serial_fields(cli, &vel, damp.as_ref(), s.wavelet, &s.src, s.dx2);
            let mut v = Verifier::new(&report, cli.pipe.tolerance);
            v.array("cur", diff(&gc, &scur));
            v.array("prev", diff(&gp, &sprev));
            v.finish();
            verified = Some(v.ok);
        }
    }
    if root && cli.pipe.json {
        let extra = serde_json::json!({
            "source": s.src, "sponge": cli.sponge, "layers": cli.layers,
            "ranks": common::dist::ranks(world),
        });
        println!(
            "{}",
            json_summary("acoustic", &report, "l2_norm", norm, verified, extra)
        );
    }
    Ok(verified != Some(false))
}

/// Writes slice `z` of `u` as an RGB PNG, blue (negative) - white (0) - red (positive). The
/// colour scale saturates at the 99.5th percentile of the slice's magnitudes, so that the
/// wavefronts stay visible next to the source point.
fn write_png(path: &std::path::Path, u: &ndarray::Array3<f32>, z: usize) -> std::io::Result<()> {
    let (_, ny, nx) = u.dim();
    let slice = u.index_axis(ndarray::Axis(0), z);
    let mut mags: Vec<f32> = slice.iter().map(|v| v.abs()).collect();
    mags.sort_by(f32::total_cmp);
    let max = mags
        .get(mags.len().saturating_sub(1) * 995 / 1000)
        .copied()
        .unwrap_or(0.0)
        .max(f32::MIN_POSITIVE);
    let mut pixels = Vec::with_capacity(ny * nx * 3);
    for v in slice.iter() {
        let s = (v / max).clamp(-1.0, 1.0);
        let fade = |s: f32| (255.0 * (1.0 - s)).round() as u8;
        let (r, g, b) = if s >= 0.0 {
            (255, fade(s), fade(s))
        } else {
            (fade(-s), fade(-s), 255)
        };
        pixels.extend_from_slice(&[r, g, b]);
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, nx as u32, ny as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(&pixels).map_err(std::io::Error::other)?;
    Ok(())
}
