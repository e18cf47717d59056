//! On a machine with a CUDA device: compressed runs whose codec kernels share the device with
//! the stencil (grids sized by `tune::cosched`: queue, sized, priority, partition) give exactly the bits
//! of the same compressed plan run serially on one stream, for zfp at rate 16 and f16, on every
//! scheme that compresses. The codec kernels loop grid-stride, so their grid must not change a
//! bit; the serial run orders every operation as the plan lists them, so any race between the
//! codec's streams and the kernel stream would show. Skips (saying why) where there is no
//! device.

use ndarray::Array3;
use pacc::runtime::codec::CodecKind;
use pacc::runtime::tune::cosched::CoSchedule;
use pacc::runtime::{BackendChoice, CompressWhen, Error, Options, Report, Scheme};

/// An acoustic-like leapfrog step (4th order in space, velocity model, point source) with a
/// reduction, so kernels, codec kernels, transfers and the reduction's combine all run.
#[pacc::pipeline(halo = 2)]
#[allow(clippy::too_many_arguments)]
fn acoustic(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: &Array3<f32>,
    w: &[f32],
    src: (usize, usize, usize),
    r: f32,
    steps: usize,
) -> f32 {
    let (nz, ny, nx) = cur.dim();
    let (sz, sy, sx) = src;
    let (c0, c1, c2): (f32, f32, f32) = (-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0);
    let mut energy: f32 = 0.0;
    for t in 0..steps {
        for z in 2..nz - 2 {
            for y in 2..ny - 2 {
                for x in 2..nx - 2 {
                    let lap: f32 = 3.0 * c0 * cur[[z, y, x]]
                        + c1 * (cur[[z + 1, y, x]]
                            + cur[[z - 1, y, x]]
                            + cur[[z, y + 1, x]]
                            + cur[[z, y - 1, x]]
                            + cur[[z, y, x + 1]]
                            + cur[[z, y, x - 1]])
                        + c2 * (cur[[z + 2, y, x]]
                            + cur[[z - 2, y, x]]
                            + cur[[z, y + 2, x]]
                            + cur[[z, y - 2, x]]
                            + cur[[z, y, x + 2]]
                            + cur[[z, y, x - 2]]);
                    let v = vel[[z, y, x]];
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]] + v * v * r * lap;
                    energy += prev[[z, y, x]] * prev[[z, y, x]];
                }
            }
        }
        prev[[sz, sy, sx]] += w[t] * vel[[sz, sy, sx]];
        std::mem::swap(prev, cur);
    }
    energy
}

/// Planes of 64 x 128 values: 512 zfp blocks or 8192 f16 values a plane, so a launch over a
/// chunk has more units than the smallest grids below have threads and their threads loop.
const SHAPE: (usize, usize, usize) = (48, 64, 128);
const STEPS: usize = 9;

/// The wavefields, velocity and wavelet of the runs (smooth, so zfp codes them at rate 16
/// without saturating).
fn inputs() -> [Array3<f32>; 3] {
    let wave = |k: f32| {
        Array3::from_shape_fn(SHAPE, |(z, y, x)| {
            k * ((z as f32 * 0.21).sin() * (y as f32 * 0.13).cos() + (x as f32 * 0.07).sin())
        })
    };
    let vel = Array3::from_shape_fn(SHAPE, |(z, _, x)| 1.5 + 0.3 * ((z + x) % 7) as f32 / 7.0);
    [wave(0.5), wave(0.45), vel]
}

/// The bits of both wavefields and the reduction after a run with `opts`, and its report;
/// `None` (printed) when there is no CUDA device.
fn run(opts: &Options) -> Option<(Vec<u32>, Report)> {
    let [mut prev, mut cur, vel] = inputs();
    let w: Vec<f32> = (0..STEPS).map(|i| (i as f32 * 0.7).sin()).collect();
    match acoustic::run(
        &mut prev,
        &mut cur,
        &vel,
        &w,
        (20, 30, 60),
        0.05,
        STEPS,
        opts,
    ) {
        Ok((energy, report)) => {
            let mut bits: Vec<u32> = prev.iter().chain(&cur).map(|v| v.to_bits()).collect();
            bits.push(energy.to_bits());
            Some((bits, report))
        }
        Err(Error::NoCuda { reason, .. }) => {
            eprintln!("skipping the co-scheduled codec comparison: {reason}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// The options of one run: a fixed compressed plan (chunks, block steps, scheme, every array
/// compressed at rate 16 with `codec`, the input `vel` included, whatever the tuner would
/// decide), the codec grid `grid`, serial or not.
fn options(codec: CodecKind, scheme: Scheme, grid: CoSchedule, serial: bool) -> Options {
    let mut o = Options::new()
        .backend(BackendChoice::Cuda)
        .chunks(3)
        .block_steps(2)
        .scheme(scheme)
        .compress_all(16.0)
        .compress_inputs(true)
        .compress_when(CompressWhen::Always)
        .codec(codec);
    o.cuda.codec_grid = grid;
    o.cuda.serial_stream = serial;
    o
}

/// The report's line on the grid of a codec encode kernel, which a compressed run must have.
fn grid_note<'r>(report: &'r Report, what: &str) -> &'r str {
    report
        .adjustments
        .iter()
        .find(|a| a.starts_with("encode: codec grid"))
        .unwrap_or_else(|| panic!("{what}: no codec grid in the report: {report}"))
}

#[test]
fn co_scheduled_codec_equals_serial_one_stream_run() {
    let grids = [
        CoSchedule::Queue,
        CoSchedule::Sized,
        CoSchedule::Priority,
        CoSchedule::Partition(0.25),
        // One SM's worth of blocks: the codec's threads each code many units.
        CoSchedule::Partition(1e-3),
    ];
    let schemes = Scheme::ALL
        .into_iter()
        .filter(|s| s.transfers().can_compress());
    for scheme in schemes {
        for codec in [CodecKind::Zfp, CodecKind::F16] {
            let what = format!("{scheme} {codec}");
            let Some((want, serial)) = run(&options(codec, scheme, CoSchedule::Sized, true)) else {
                return;
            };
            assert!(
                serial.link_bytes() < serial.link_bytes_raw(),
                "{what}: the run did not compress: {serial}"
            );
            assert!(
                serial.adjustments.iter().any(|a| a.contains("one stream")),
                "{what}: the serial run does not say so: {serial}"
            );
            for grid in grids {
                let what = format!("{what} grid {grid}");
                let (got, report) = run(&options(codec, scheme, grid, false)).unwrap();
                assert_eq!(report.chunks, serial.chunks, "{what}: another plan");
                assert_eq!(report.block_steps, serial.block_steps, "{what}");
                assert_eq!(report.link_bytes(), serial.link_bytes(), "{what}");
                let note = grid_note(&report, &what);
                assert!(note.contains(&format!("grid {grid}:")), "{what}: {note}");
                if grid == CoSchedule::Partition(1e-3) {
                    assert!(note.contains("; 1 of "), "{what}: {note}");
                }
                if let Some(i) = got.iter().zip(&want).position(|(a, b)| a != b) {
                    panic!(
                        "{what}: differs from the serial run at value {i} of {}",
                        got.len()
                    );
                }
                println!("{what}: {note}");
            }
        }
    }
}
