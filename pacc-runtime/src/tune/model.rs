//! The tuner's performance model: pure arithmetic over a plan's byte and point counts and the
//! machine's [`Rates`]. No device, no executor: everything here is testable with hand-made
//! rates.
//!
//! The plan is data, so the model needs no guesswork about what a configuration moves or
//! computes: for every candidate `(chunks, block_steps)` the tuner builds the plan of one block
//! with [`plan::build`] and counts its bytes each way, its device-to-device bytes, its host
//! staging bytes and the plane-points every kernel computes (redundant halo work included). With
//!
//! * the link rates (host to device, device to host, both at once),
//! * each kernel's throughput in points per second,
//! * the device memory the buffer sets must fit in,
//!
//! the model counts the seconds each resource is busy during one block ([`BlockSeconds`]: the
//! link, `max(in / htod, out / dtoh, (in + out) / both)`, over [`PIPELINED_LINK_SHARE`] when
//! several chunks' copies run beside the kernels; the kernels; the device copies; the
//! host copies; the codec's kernels in compressed runs), and [`block_time`] alone combines them:
//! with several chunks, as the plan's tiling says the resources overlap
//! ([`plan::TilingCost::pipelined_block_seconds`]: the overlapped tilings take
//! `max(link + device copies, kernels, host copies, codec)`, the copy engines being shared; the
//! wavefront `max(link, kernels + device copies, host copies, codec)`, its staircase copies
//! lengthening the kernel chain); with one chunk, nothing overlaps and the terms add up. A run is
//! its blocks plus the tiling's pipeline fill, and the same function prices compressed runs
//! ([`super::compression`]). With one chunk and every step in one block the arrays stay
//! resident, crossing the link once. The candidate with the smallest predicted time wins;
//! candidates whose buffer sets do not fit are skipped ([`super::search`]);
//! [`super::choose_scheme`] compares schemes too.
//!
//! What depends on the tiling (which candidates are worth planning, how a block's resources
//! overlap, the pipeline fill) the tiling says, through [`plan::TilingCost`]; the counting here
//! is the same for every tiling. The wavefront is priced by the same plan counts: no redundant
//! points, and wider buffers (a chunk plus the block's skew plus the reach), which the device
//! memory bounds.

use crate::plan::{self, BlockSeconds, OpKind, Plan, PlanOptions, Scheme};
use crate::program::Program;
use serde::Serialize;

/// Host <-> device bandwidth in bytes per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkRates {
    pub htod: f64,
    pub dtoh: f64,
    /// Both directions at once: bytes of both directions together per second.
    pub both: f64,
    /// Size of the buffers it was measured with.
    pub bytes: usize,
}

impl LinkRates {
    /// An H100's PCIe 5 link as pacc measured it (pinned 256 MiB buffers, 2026-11): what the
    /// model prices with where the link cannot be measured.
    pub const H100: LinkRates = LinkRates {
        htod: 54e9,
        dtoh: 54e9,
        both: 85e9,
        bytes: 0,
    };

    /// Seconds to move `htod` bytes in and `dtoh` bytes out, overlapped as the streams allow.
    pub fn seconds(&self, htod: u64, dtoh: u64) -> f64 {
        let (h, d) = (htod as f64, dtoh as f64);
        (h / self.htod).max(d / self.dtoh).max((h + d) / self.both)
    }
}

/// How fast the machine moves and computes: what the model knows about speed (measured by
/// `tune::measure`, or given).
#[derive(Clone, Debug, Serialize)]
pub struct Rates {
    pub link: LinkRates,
    /// Points per second of each kernel (program order). A single value applies to all.
    pub kernel_rate: Vec<f64>,
    /// Device-to-device copy rate in bytes copied per second ([`DTOD_RATE`] unless given).
    pub dtod_rate: f64,
    /// Host memcpy rate (staged-copy's staging copies) in bytes per second.
    pub host_copy_rate: f64,
    /// Fixed cost of one kernel launch (seconds; [`LAUNCH_OVERHEAD`] unless given).
    pub launch_overhead: f64,
    /// Page-locking rate of the user's arrays (`cuMemHostRegister`) in bytes per second.
    pub register_rate: f64,
}

/// Page-locking rate the model assumes: written 4 KiB pages on the H100's host registered at
/// 15-26 GB/s on 1-8 threads (`benches/pinning.rs`, 2026-11-26 and 2026-11-27); huge pages
/// (`pacc_runtime::pages`) at 38-40 GB/s, memory never written at about 3 GB/s.
pub const REGISTER_RATE: f64 = 20e9;

/// Device-to-device copy rate the model assumes, in bytes copied per second. Not measured on
/// the run's device: the H100's HBM moved about 2980 GB/s of traffic, read plus write, when
/// measured in 2026-11 (`exec::cuda::measure_dtod` measures it), which is 1.49e12 bytes copied
/// per second; rounded down. On a device with slower memory the model counts copies as cheaper
/// than they are.
pub const DTOD_RATE: f64 = 1.4e12;

/// Fixed cost the model adds per kernel launch and point statement, in seconds. Assumed, not
/// measured: the order of a launch's cost on the host and the device. It matters only where a
/// plan makes many launches of few points each (thin chunks).
pub const LAUNCH_OVERHEAD: f64 = 4e-6;

impl Rates {
    /// The given link and kernel rates; HBM copies at [`DTOD_RATE`], host copies at 12 GB/s
    /// (the tuner measures them on the host), [`LAUNCH_OVERHEAD`] per launch.
    pub fn new(link: LinkRates, kernel_rate: Vec<f64>) -> Self {
        Rates {
            link,
            kernel_rate,
            dtod_rate: DTOD_RATE,
            host_copy_rate: 12e9,
            launch_overhead: LAUNCH_OVERHEAD,
            register_rate: REGISTER_RATE,
        }
    }

    /// Points per second of kernel `k`.
    fn kernel(&self, k: usize) -> f64 {
        *self
            .kernel_rate
            .get(k)
            .or(self.kernel_rate.first())
            .unwrap_or(&1e10)
    }
}

/// What the model knows about the machine and the call.
#[derive(Clone, Debug, Serialize)]
pub struct TuneInputs {
    #[serde(flatten)]
    pub rates: Rates,
    /// Device memory the buffer sets (and the executor's scratch) may use, in bytes.
    pub device_memory: u64,
    /// Pinned host memory the staging buffers may use (staged-copy), if limited.
    pub host_memory: Option<u64>,
    pub scheme: Scheme,
    /// Buffer sets of the plans, if not the scheme's ([`Scheme::buffer_sets`]).
    pub buffer_sets: Option<usize>,
    /// Outermost-axis plane of each point statement (needed to build plans).
    pub point_planes: Vec<usize>,
    /// Fixed chunk count (the tuner then chooses block steps only).
    pub chunks: Option<usize>,
    /// Fixed block steps (the tuner then chooses the chunk count only).
    pub block_steps: Option<usize>,
    /// Candidate chunk counts (empty: the default list).
    pub chunk_candidates: Vec<usize>,
    /// Candidate block steps (empty: the default list).
    pub step_candidates: Vec<usize>,
    /// Whether the plans keep read-only arrays in a ring ([`PlanOptions::read_only_ring`]).
    pub read_only_ring: bool,
    /// Bytes of the call's arrays not page-locked yet, which schemes copying straight from
    /// them register during the run (0: already locked, or not known).
    pub unlocked_bytes: u64,
}

impl TuneInputs {
    /// Buffer sets of the plans the tuner weighs.
    pub fn sets(&self) -> usize {
        self.buffer_sets.unwrap_or(self.scheme.buffer_sets())
    }

    /// Inputs with the given link and kernel rates and defaults elsewhere ([`Rates::new`],
    /// [`Scheme::DEFAULT`], its buffer sets).
    pub fn new(link: LinkRates, kernel_rate: Vec<f64>, device_memory: u64) -> Self {
        TuneInputs {
            rates: Rates::new(link, kernel_rate),
            device_memory,
            host_memory: None,
            scheme: Scheme::DEFAULT,
            buffer_sets: None,
            point_planes: Vec::new(),
            chunks: None,
            block_steps: None,
            chunk_candidates: Vec::new(),
            step_candidates: Vec::new(),
            read_only_ring: true,
            unlocked_bytes: 0,
        }
    }

    /// Seconds of page-locking a run of `scheme` needs before its copies can all go.
    pub fn page_lock_seconds(&self, scheme: Scheme) -> f64 {
        match scheme.transfers().pins_user_arrays() {
            true => self.unlocked_bytes as f64 / self.rates.register_rate,
            false => 0.0,
        }
    }
}

/// The model's view of one plan (or one block of it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Prediction {
    pub bytes_htod: u64,
    pub bytes_dtoh: u64,
    pub bytes_dtod: u64,
    pub bytes_host_copy: u64,
    /// Plane-points computed by kernels, redundant work included.
    pub kernel_points: u64,
    pub link_seconds: f64,
    pub kernel_seconds: f64,
    pub dtod_seconds: f64,
    pub host_copy_seconds: f64,
    /// The codec's kernels (set by the compression decision, zero otherwise).
    pub codec_seconds: f64,
    /// The plan's time: the terms above combined by [`block_time`].
    pub seconds: f64,
}

impl Prediction {
    /// The seconds each resource is busy, as the tiling's cost hooks take them.
    fn busy(&self) -> BlockSeconds {
        BlockSeconds {
            link: self.link_seconds,
            kernels: self.kernel_seconds,
            device_copies: self.dtod_seconds,
            host_copies: self.host_copy_seconds,
            codec: self.codec_seconds,
        }
    }
}

/// One evaluated candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub chunks: usize,
    pub block_steps: usize,
    pub buffer_sets: usize,
    pub predicted_seconds: f64,
    pub device_bytes: u64,
    /// Why it was not eligible, if it was not.
    pub rejected: Option<String>,
}

/// The tuner's pick.
#[derive(Clone, Debug, Serialize)]
pub struct TuneChoice {
    pub chunks: usize,
    pub block_steps: usize,
    pub scheme: Scheme,
    /// The scheme's buffer sets, or fewer where those did not fit
    /// ([`Scheme::fewest_buffer_sets`]).
    pub buffer_sets: usize,
    /// Predicted seconds for the whole run (all steps).
    pub predicted_seconds: f64,
    pub predicted_per_step: f64,
    /// The model of one full block of the pick.
    pub block: Prediction,
    /// Pipeline fill added once per run.
    pub fill_seconds: f64,
    /// Page-locking the arrays, beside the first block ([`TuneInputs::unlocked_bytes`]).
    pub page_lock_seconds: f64,
    /// The part of it the first block does not hide, included in the prediction.
    pub page_lock_exposed: f64,
    pub device_bytes: u64,
    pub candidates: Vec<Candidate>,
}

impl TuneChoice {
    /// `base` with this choice's chunks, block steps, scheme and buffer sets.
    pub fn plan_options(&self, base: &PlanOptions) -> PlanOptions {
        PlanOptions {
            chunks: self.chunks,
            block_steps: self.block_steps,
            scheme: self.scheme,
            buffer_sets: self.buffer_sets,
            ..base.clone()
        }
    }

    pub fn summary(&self) -> String {
        let locking = match self.page_lock_seconds {
            s if s > 0.0 => format!(
                "; page-locking {s:.3} s beside the first block, {:.3} s of it not hidden",
                self.page_lock_exposed
            ),
            _ => String::new(),
        };
        let sets = match self.buffer_sets == self.scheme.buffer_sets() {
            true => String::new(),
            false => format!(
                ", {} buffer sets (the scheme's {} do not fit)",
                self.buffer_sets,
                self.scheme.buffer_sets()
            ),
        };
        format!(
            "tuner: {} chunks x {} block steps ({}{sets}), predicted {:.4} s ({:.4} s/step; per block link {:.4} s, kernels {:.4} s{locking})",
            self.chunks,
            self.block_steps,
            self.scheme,
            self.predicted_seconds,
            self.predicted_per_step,
            self.block.link_seconds,
            self.block.kernel_seconds
        )
    }
}

/// Points the serial loop computes in `steps` steps (every kernel's full ranges): the work
/// without any redundancy, to compare a plan's [`Prediction::kernel_points`] with.
pub fn useful_points(program: &Program, shape: &[usize], steps: usize) -> u64 {
    (0..program.kernels.len())
        .map(|k| {
            let r = &program.kernels[k].ranges[0];
            let planes = (r.hi.eval(shape[0]) - r.lo.eval(shape[0])).max(0) as u64;
            planes * plane_points(program, shape, k)
        })
        .sum::<u64>()
        * steps as u64
}

/// Points per second over one plane of every kernel, each kernel at its rate in `rates`
/// (points per second, by kernel index).
pub fn plane_rate(program: &Program, shape: &[usize], rates: &[f64]) -> f64 {
    let pts: Vec<f64> = (0..rates.len())
        .map(|k| plane_points(program, shape, k) as f64)
        .collect();
    let secs: f64 = pts.iter().zip(rates).map(|(p, r)| p / r.max(1.0)).sum();
    pts.iter().sum::<f64>() / secs.max(f64::MIN_POSITIVE)
}

/// Which of several timed kernel shapes runs a step fastest: the index into `timed` (each
/// entry: every kernel's points per second) with the highest [`plane_rate`], the first on a
/// tie. `None` when `timed` is empty.
pub fn fastest_kernels(program: &Program, shape: &[usize], timed: &[Vec<f64>]) -> Option<usize> {
    let rate = |i: usize| plane_rate(program, shape, &timed[i]);
    (0..timed.len()).min_by(|&a, &b| rate(b).total_cmp(&rate(a)))
}

/// Points of one plane a kernel computes (its inner loop ranges).
pub fn plane_points(program: &Program, shape: &[usize], kernel: usize) -> u64 {
    plan::points_per_plane(program, shape, kernel)
}

/// The model of `plan` (all its ops).
pub fn predict(program: &Program, plan: &Plan, rates: &Rates) -> Prediction {
    let mut p = Prediction {
        bytes_htod: plan.bytes_htod(),
        bytes_dtoh: plan.bytes_dtoh(),
        bytes_dtod: plan.bytes_dtod(),
        ..Default::default()
    };
    let mut kt = 0.0;
    for op in &plan.ops {
        match &op.kind {
            OpKind::Kernel { kernel, planes, .. } => {
                let pts = planes.len() as u64 * plane_points(program, &plan.shape, *kernel);
                p.kernel_points += pts;
                kt += pts as f64 / rates.kernel(*kernel) + rates.launch_overhead;
            }
            OpKind::Point { .. } => kt += rates.launch_overhead,
            OpKind::StageIn { array, planes, .. } | OpKind::StageOut { array, planes, .. } => {
                p.bytes_host_copy +=
                    (planes.len() * plan.plane_len * plan.elem_sizes[*array]) as u64;
            }
            _ => {}
        }
    }
    p.kernel_seconds = kt;
    p.link_seconds = rates.link.seconds(p.bytes_htod, p.bytes_dtoh) / link_share(plan.chunks);
    p.dtod_seconds = p.bytes_dtod as f64 / rates.dtod_rate;
    p.host_copy_seconds = p.bytes_host_copy as f64 / rates.host_copy_rate;
    p.seconds = block_time(&p, plan.chunks, plan.scheme, rates);
    p
}

/// The share of the link's measured rate ([`LinkRates`], 256 MiB pinned buffers) a plan of
/// `chunks` chunks reaches: [`PIPELINED_LINK_SHARE`] when its copies run beside kernels and
/// the other direction, all of it for a single chunk's copies, which run alone.
fn link_share(chunks: usize) -> f64 {
    match chunks {
        1 => 1.0,
        _ => PIPELINED_LINK_SHARE,
    }
}

/// The share of the link's measured rate a pipelined run's uploads reach. On the H200
/// (2026-11-28, `benches/results/2026-11-28-h200-sweeps`, 144 steps out of core, wavefront at
/// 48 block steps) the uploads were busy 0.0416, 0.0419 and 0.0281 s per step for 1.944,
/// 1.911 and 1.344 GB (`propagate_sponge` 1800^3, `propagate` 1970^3, Himeno 1200^3): 46.7,
/// 45.6 and 47.8 GB/s against 55.3-55.4 measured alone, 0.82-0.86 of it. Priced at the full
/// rate, the model took those runs as kernel-bound and kept three sweeps where two or one ran
/// 1.06-1.34x faster.
pub const PIPELINED_LINK_SHARE: f64 = 0.84;

/// Device memory the executor needs for `plan` beyond its buffer sets (reduction scratch,
/// driver reserve), approximately.
pub(super) fn extra_device_bytes(program: &Program, plan: &Plan) -> u64 {
    let nred: usize = program.kernels.iter().map(|k| k.reductions.len()).sum();
    let scratch = (plan.plane_len / 256 + 1) * plan.buffer_planes * 8 * nred * plan.streams;
    (64u64 << 20) + scratch as u64
}

/// The share of the device's copy bandwidth the generated kernels reach: `propagate` moved
/// 16 B/pt at 137.7 Gpt/s on the H100, 73% of a device-to-device copy's 2980 GB/s.
pub const KERNEL_BANDWIDTH_SHARE: f64 = 0.73;

/// Each kernel's points per second estimated from memory traffic alone, for when the kernels
/// cannot be timed (no arrays yet): every array the kernel reads is read once per point and
/// every array it writes written once, at [`KERNEL_BANDWIDTH_SHARE`] of the traffic of a device
/// copy at `dtod_rate` (bytes copied per second, so twice that in traffic).
pub fn roofline_rates(program: &Program, dtod_rate: f64) -> Vec<f64> {
    program
        .kernels
        .iter()
        .map(|k| {
            let mut read: Vec<usize> = k.reads.iter().map(|r| r.array).collect();
            read.sort_unstable();
            read.dedup();
            let size = |a: &usize| program.arrays[*a].elem.size();
            let bytes: usize =
                read.iter().map(size).sum::<usize>() + k.writes.iter().map(size).sum::<usize>();
            KERNEL_BANDWIDTH_SHARE * 2.0 * dtod_rate / bytes.max(1) as f64
        })
        .collect()
}

/// Pipeline fill of a run: none with one chunk, which overlaps nothing.
pub(super) fn fill(scheme: Scheme, block: &Prediction, chunks: usize) -> f64 {
    match chunks {
        1 => 0.0,
        _ => scheme.tiling().fill_seconds(&block.busy(), chunks),
    }
}

/// Seconds of one block: the resources overlap across chunks as the tiling says; a single chunk
/// runs its upload, kernels and download one after the other. The one place the model's terms
/// combine (see the module documentation).
pub fn block_time(p: &Prediction, chunks: usize, scheme: Scheme, rates: &Rates) -> f64 {
    if chunks > 1 {
        return scheme.tiling().pipelined_block_seconds(&p.busy());
    }
    rates.link.seconds(p.bytes_htod, 0)
        + rates.link.seconds(0, p.bytes_dtoh)
        + p.kernel_seconds
        + p.dtod_seconds
        + p.host_copy_seconds
        + p.codec_seconds
}

#[cfg(test)]
mod tests {
    use super::super::search::*;
    use super::*;
    use crate::error::Error;
    use crate::program::*;

    fn prog(halo: i64) -> Program {
        let f = |n: &str, role| ArrayDecl {
            name: n.into(),
            elem: Elem::F32,
            role,
        };
        let r = AxisRange {
            lo: Bound::start(halo),
            hi: Bound::end(-halo),
        };
        Program {
            name: "p".into(),
            ndim: 3,
            arrays: vec![
                f("a", Role::InOut),
                f("b", Role::InOut),
                f("v", Role::Input),
            ],
            kernels: vec![KernelDecl {
                name: "k".into(),
                ranges: vec![r; 3],
                reads: vec![
                    ReadDecl {
                        array: 0,
                        lo: vec![-halo; 3],
                        hi: vec![halo; 3],
                    },
                    ReadDecl {
                        array: 2,
                        lo: vec![0; 3],
                        hi: vec![0; 3],
                    },
                ],
                writes: vec![1],
                reductions: vec![],
                launch: Default::default(),
                guarded: Vec::new(),
            }],
            step: vec![Stage::Kernel(0), Stage::Swap(0, 1)],
            halo: halo as usize,
            ..Default::default()
        }
    }

    fn link() -> LinkRates {
        LinkRates {
            htod: 54e9,
            dtoh: 54e9,
            both: 80e9,
            bytes: 1 << 28,
        }
    }

    #[test]
    fn page_locking_counts_where_the_first_block_does_not_hide_it() {
        let p = prog(4);
        let shape = [512, 256, 256];
        let arrays = 3 * 512 * 256 * 256 * 4u64;
        let mut t = TuneInputs::new(link(), vec![1e12], arrays);
        t.chunks = Some(8);
        let base = choose(&p, &shape, 4, &t).unwrap();
        assert_eq!((base.page_lock_seconds, base.page_lock_exposed), (0.0, 0.0));
        // Registering every byte at 20 GB/s is slower than one pass over the link at 54 GB/s:
        // a one-block run waits for the rest.
        t.unlocked_bytes = arrays;
        let locked = choose(&p, &shape, 4, &t).unwrap();
        let pin = arrays as f64 / REGISTER_RATE;
        assert!((locked.page_lock_seconds - pin).abs() < 1e-12);
        assert!(locked.page_lock_exposed > 0.0 && locked.page_lock_exposed < pin);
        let grown = locked.predicted_seconds - locked.page_lock_exposed;
        assert!((grown - base.predicted_seconds).abs() < 1e-9, "{locked:?}");
        assert!(
            locked.summary().contains("page-locking"),
            "{}",
            locked.summary()
        );
        // Staging copies register nothing.
        t.scheme = Scheme::StagedCopy;
        assert_eq!(t.page_lock_seconds(Scheme::StagedCopy), 0.0);
        let staged = choose(&p, &shape, 4, &t).unwrap();
        assert_eq!(staged.page_lock_exposed, 0.0);
        // A long run's first block hides it all.
        t.scheme = Scheme::RegionSharing;
        t.rates.kernel_rate = vec![1e9];
        let slow = choose(&p, &shape, 4, &t).unwrap();
        assert_eq!(slow.page_lock_exposed, 0.0, "{slow:?}");
    }

    #[test]
    fn link_bound_runs_block_deeper_and_memory_limits_the_buffers() {
        let p = prog(4);
        let shape = [512, 256, 256];
        // Memory for the arrays once: one chunk (three buffer sets of everything) does not fit,
        // so the run is out of core (with everything fitting, one resident chunk would win).
        let arrays = 3 * 512 * 256 * 256 * 4u64;
        // Fast kernels: the link dominates, so deeper blocking pays until memory stops it.
        let mut t = TuneInputs::new(link(), vec![1e12], arrays);
        let c = choose(&p, &shape, 32, &t).unwrap();
        assert!(c.block_steps >= 8, "{c:?}");
        // Slow kernels: the redundant work of deep blocks costs more than it saves.
        t.rates.kernel_rate = vec![1e8];
        let slow = choose(&p, &shape, 32, &t).unwrap();
        assert!(slow.block_steps < c.block_steps, "{slow:?} vs {c:?}");
        // A memory limit of a quarter of the arrays forces several chunks.
        t.rates.kernel_rate = vec![1e12];
        t.device_memory = arrays / 4;
        let m = choose(&p, &shape, 32, &t).unwrap();
        assert!(m.device_bytes <= arrays / 4);
        assert!(m.chunks >= 4, "{m:?}");
        // Fixed values are kept.
        t.device_memory = 1 << 40;
        t.chunks = Some(16);
        t.block_steps = Some(3);
        let f = choose(&p, &shape, 32, &t).unwrap();
        assert_eq!((f.chunks, f.block_steps), (16, 3));
        // Nothing fits.
        t.device_memory = 1000;
        assert!(matches!(
            choose(&p, &shape, 32, &t),
            Err(Error::DeviceMemory { .. })
        ));
    }

    #[test]
    fn fastest_kernels_weighs_rates_by_points() {
        let p = prog(4);
        let shape = [64, 32, 32];
        assert_eq!(fastest_kernels(&p, &shape, &[]), None);
        let timed = vec![vec![5e10], vec![8e10], vec![7e10]];
        assert_eq!(fastest_kernels(&p, &shape, &timed), Some(1));
        // One kernel: the plane rate is its rate; a tie keeps the first.
        assert!((plane_rate(&p, &shape, &[8e10]) - 8e10).abs() < 1.0);
        assert_eq!(
            fastest_kernels(&p, &shape, &[vec![8e10], vec![8e10]]),
            Some(0)
        );
    }

    #[test]
    fn resident_when_the_arrays_fit() {
        let p = prog(4);
        let shape = [256, 128, 128];
        let t = TuneInputs::new(link(), vec![5e10], 1 << 40);
        let c = choose_scheme(&p, &shape, 144, &t, &AUTO_SCHEMES).unwrap();
        assert_eq!((c.chunks, c.block_steps), (1, 144), "{}", c.summary());
        assert_eq!(c.fill_seconds, 0.0);
        // The whole run: in once, the kernels, out once.
        let pts = useful_points(&p, &shape, 144) as f64;
        let l = &t.rates.link;
        let link = l.seconds(c.block.bytes_htod, 0) + l.seconds(0, c.block.bytes_dtoh);
        let want = link + pts / 5e10 + 4e-6 * 144.0;
        assert!((c.predicted_seconds - want).abs() < 1e-6 * want, "{c:?}");
    }

    #[test]
    fn a_short_run_pipelines_when_that_clearly_beats_resident() {
        let p = prog(4);
        let shape = [256, 128, 128];
        let t = TuneInputs::new(link(), vec![5e10], 1 << 40);
        let pick = |steps| choose_scheme(&p, &shape, steps, &t, &AUTO_SCHEMES).unwrap();
        let resident = |steps| {
            let mut r = t.clone();
            r.chunks = Some(1);
            r.block_steps = Some(steps);
            choose(&p, &shape, steps, &r).unwrap()
        };
        for steps in [4, 16, 144, 2000] {
            let (c, r) = (pick(steps), resident(steps));
            if c.chunks == 1 {
                assert_eq!(c.block_steps, steps);
            } else {
                assert!(
                    c.predicted_seconds < RESIDENT_MARGIN * r.predicted_seconds,
                    "{steps} steps: {} against resident {:.5} s",
                    c.summary(),
                    r.predicted_seconds
                );
            }
        }
        // Long runs amortise the upload: resident; a few steps cannot hide it: pipelined.
        assert_eq!(pick(2000).chunks, 1);
        assert!(pick(4).chunks > 1, "{}", pick(4).summary());
    }

    #[test]
    fn kernel_bound_out_of_core_picks_the_wavefront() {
        let p = prog(4);
        let shape = [512, 256, 256];
        let arrays = 3 * 512 * 256 * 256 * 4u64;
        // Memory for the arrays once (out of core), kernels as slow as the link: the overlapped
        // tiling's redundant halo work costs more than the wavefront's wider buffers.
        let t = TuneInputs::new(link(), vec![2e10], arrays);
        let c = choose_scheme(&p, &shape, 48, &t, &AUTO_SCHEMES).unwrap();
        assert_eq!(c.scheme, Scheme::Wavefront, "{}", c.summary());
        assert!(c.chunks > 1 && c.device_bytes <= arrays, "{}", c.summary());
        assert_eq!(
            c.block.kernel_points,
            useful_points(&p, &shape, c.block_steps),
            "the wavefront computes every point once"
        );
        let rs = choose(&p, &shape, 48, &t).unwrap();
        assert_eq!(rs.scheme, Scheme::RegionSharing);
        assert!(rs.predicted_seconds > c.predicted_seconds);
    }

    /// Reading two f32 arrays (one of them at 13 offsets) and writing a third is 12 B/pt: at
    /// 1.4 TB/s of copies (2.8 TB/s of traffic) and 73% of it, 170 Gpt/s. (The acoustic step,
    /// 16 B/pt, comes out at 128; the H100 ran it at 138 at 512^3.)
    #[test]
    fn roofline_rates_count_reads_and_writes() {
        let p = prog(4);
        let r = roofline_rates(&p, 1.4e12);
        let want = 0.73 * 2.8e12 / 12.0;
        assert!((r[0] - want).abs() < 1.0, "{r:?}");
        let mut rw = p.clone();
        rw.kernels[0].reads[1].array = 1;
        assert_eq!(
            roofline_rates(&rw, 1.4e12),
            r,
            "a read of the written array counts"
        );
    }

    #[test]
    fn prediction_counts_the_plan() {
        let p = prog(1);
        let shape = [64, 32, 32];
        let plan = plan::build(
            &p,
            &shape,
            4,
            &[],
            &PlanOptions {
                chunks: 4,
                block_steps: 4,
                scheme: Scheme::RegionSharing,
                buffer_sets: 3,
                compress: Vec::new(),
                codec: Default::default(),
                read_only_ring: true,
            },
        )
        .unwrap();
        let t = TuneInputs::new(link(), vec![1e9], 1 << 40);
        let pr = predict(&p, &plan, &t.rates);
        assert_eq!(pr.bytes_htod, plan.bytes_htod());
        // At least every interior point of every step, plus redundant halo work.
        assert!(pr.kernel_points >= 4 * 62 * 30 * 30);
        assert!(pr.seconds >= pr.link_seconds && pr.seconds >= pr.kernel_seconds);
    }

    fn plan_of(p: &Program, shape: &[usize], chunks: usize, block_steps: usize) -> Plan {
        plan::build(
            p,
            shape,
            block_steps,
            &[],
            &PlanOptions {
                chunks,
                block_steps,
                scheme: Scheme::RegionSharing,
                buffer_sets: 3,
                compress: Vec::new(),
                codec: Default::default(),
                read_only_ring: true,
            },
        )
        .unwrap()
    }

    #[test]
    fn prediction_is_the_slowest_resource_over_hand_made_rates() {
        let p = prog(1);
        let plan = plan_of(&p, &[64, 32, 32], 4, 2);
        let bytes = (plan.bytes_htod() + plan.bytes_dtoh()) as f64;
        // A 1 kB/s link: the link decides, and its time is the bytes over the rate.
        let slow_link = LinkRates {
            htod: 1e3,
            dtoh: 1e3,
            both: 2e3,
            bytes: 0,
        };
        let pr = predict(&p, &plan, &Rates::new(slow_link, vec![1e12]));
        assert!(pr.link_seconds >= bytes / 2e3 && pr.link_seconds > pr.kernel_seconds);
        // Four chunks: the copies run beside each other, at a share of the measured rate.
        let alone = slow_link.seconds(plan.bytes_htod(), plan.bytes_dtoh());
        assert_eq!(pr.link_seconds, alone / PIPELINED_LINK_SHARE);
        assert_eq!(pr.seconds, pr.link_seconds + pr.dtod_seconds);
        // One point per second: the kernels decide, one second per point plus the launches.
        let mut r = Rates::new(link(), vec![1.0]);
        r.launch_overhead = 0.0;
        let pr = predict(&p, &plan, &r);
        assert_eq!(pr.kernel_seconds, pr.kernel_points as f64);
        assert_eq!(pr.seconds, pr.kernel_seconds);
        // Two kernels' rates fall back to the first when only one is given; none at all uses
        // a default rather than dividing by nothing.
        let pr0 = predict(&p, &plan, &Rates::new(link(), vec![]));
        assert!(pr0.kernel_seconds.is_finite() && pr0.kernel_seconds > 0.0);
    }

    /// The device memory a one-block wavefront plan of `chunks` x `k` needs on `sets` sets.
    fn wavefront_need(p: &Program, shape: &[usize], chunks: usize, k: usize, sets: usize) -> u64 {
        let o = PlanOptions {
            chunks,
            block_steps: k,
            scheme: Scheme::Wavefront,
            buffer_sets: sets,
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        let plan = plan::build(p, shape, k, &[], &o).unwrap();
        plan.device_bytes() + extra_device_bytes(p, &plan)
    }

    #[test]
    fn a_run_in_one_wavefront_block_takes_two_sets_where_four_do_not_fit() {
        let p = prog(4);
        let shape = [2048, 32, 32];
        let (two, three) = (
            wavefront_need(&p, &shape, 16, 144, 2),
            wavefront_need(&p, &shape, 16, 144, 3),
        );
        assert!(two < three);
        let mut t = TuneInputs::new(link(), vec![1e12], two);
        t.scheme = Scheme::Wavefront;
        (t.chunks, t.block_steps) = (Some(16), Some(144));
        let c = choose(&p, &shape, 144, &t).unwrap();
        assert_eq!((c.chunks, c.block_steps, c.buffer_sets), (16, 144, 2));
        assert!(
            c.summary()
                .contains("(wavefront, 2 buffer sets (the scheme's 4 do not fit))"),
            "{}",
            c.summary()
        );
        assert_eq!(c.device_bytes, two);
        assert_eq!(c.plan_options(&PlanOptions::default()).buffer_sets, 2);
        // Two blocks of 144: a block boundary would wait for a set, so four or nothing.
        let e = choose(&p, &shape, 288, &t).unwrap_err();
        assert!(matches!(e, Error::DeviceMemory { sets: 4, .. }), "{e}");
        // Sets the caller fixed are kept.
        t.buffer_sets = Some(4);
        assert!(choose(&p, &shape, 144, &t).is_err());
        // With room for four, four.
        t.buffer_sets = None;
        t.device_memory = wavefront_need(&p, &shape, 16, 144, 4);
        assert_eq!(choose(&p, &shape, 144, &t).unwrap().buffer_sets, 4);
    }

    #[test]
    fn pipelined_runs_are_planned_at_the_depths_that_save_sweeps() {
        let p = prog(4);
        let shape = [2048, 32, 32];
        let mut t = TuneInputs::new(link(), vec![1e12], 1 << 40);
        t.scheme = Scheme::Wavefront;
        let deep = |steps: usize, t: &TuneInputs| {
            let c = choose(&p, &shape, steps, t).unwrap();
            let deep: Vec<&Candidate> = (c.candidates.iter())
                .filter(|x| x.chunks > 1 && x.block_steps > 64)
                .collect();
            assert!(deep.iter().all(|x| x.chunks * x.block_steps <= 4096));
            let mut ks: Vec<usize> = deep.iter().map(|x| x.block_steps).collect();
            ks.sort_unstable();
            ks.dedup();
            ks
        };
        // 144 steps: one sweep or two; 1000: one to four sweeps, over fewer chunks; 10000:
        // blocks of 2500 and more would be too many launches to plan.
        assert_eq!(deep(144, &t), [72, 144]);
        assert_eq!(deep(1000, &t), [250, 334, 500, 1000]);
        assert_eq!(deep(10000, &t), Vec::<usize>::new());
        // A link-bound run out of core takes the fewest sweeps.
        t.rates.link.htod = 1e6;
        (t.rates.link.dtoh, t.rates.link.both) = (1e6, 2e6);
        t.device_memory = (64 << 20) + 3 * 2048 * 32 * 32 * 4 * 3 / 4;
        let c = choose(&p, &shape, 144, &t).unwrap();
        assert!(c.chunks > 1, "{}", c.summary());
        assert_eq!(c.block_steps, 144, "{}", c.summary());
    }

    #[test]
    fn link_bound_moves_fewer_bytes_and_kernel_bound_computes_fewer_points() {
        let p = prog(2);
        let shape = [512, 128, 128];
        let steps = 32;
        // A quarter of the arrays fits (besides the executor's 64 MiB): several chunks, so deep
        // blocks cost redundant halo work.
        let memory = (64 << 20) + 3 * 512 * 128 * 128 * 4u64 / 4;
        let per_step = |c: &TuneChoice| {
            let k = c.block_steps as f64;
            let bytes = (c.block.bytes_htod + c.block.bytes_dtoh) as f64 / k;
            (bytes, c.block.kernel_points as f64 / k)
        };
        let slow_link = LinkRates {
            htod: 1e9,
            dtoh: 1e9,
            both: 2e9,
            bytes: 0,
        };
        let link_bound = choose(
            &p,
            &shape,
            steps,
            &TuneInputs::new(slow_link, vec![1e14], memory),
        )
        .unwrap();
        let fast_link = LinkRates {
            htod: 1e14,
            dtoh: 1e14,
            both: 2e14,
            bytes: 0,
        };
        let kernel_bound = choose(
            &p,
            &shape,
            steps,
            &TuneInputs::new(fast_link, vec![1e8], memory),
        )
        .unwrap();
        let (lb_bytes, lb_points) = per_step(&link_bound);
        let (kb_bytes, kb_points) = per_step(&kernel_bound);
        assert!(lb_bytes < kb_bytes, "{link_bound:?}\n{kernel_bound:?}");
        assert!(kb_points < lb_points, "{link_bound:?}\n{kernel_bound:?}");
        assert!(link_bound.block_steps > kernel_bound.block_steps);
        // The kernel-bound pick does no more work than the serial loop plus its halos need.
        let useful = useful_points(&p, &shape, 1) as f64;
        assert!(
            kb_points >= useful && kb_points < 1.5 * useful,
            "{kb_points} vs {useful}"
        );
        // Every eligible candidate was predicted no faster than the pick.
        for c in link_bound
            .candidates
            .iter()
            .filter(|c| c.rejected.is_none())
        {
            assert!(c.predicted_seconds >= link_bound.predicted_seconds * (1.0 - 1e-9));
        }
    }

    #[test]
    fn one_rule_combines_the_terms_as_the_tiling_overlaps_them() {
        let r = Rates::new(link(), vec![]);
        let b = Prediction {
            link_seconds: 1.0,
            kernel_seconds: 2.0,
            dtod_seconds: 0.5,
            host_copy_seconds: 0.1,
            ..Default::default()
        };
        // Overlapped tilings share the copy engines between the link and the device copies;
        // the wavefront's staircase copies lengthen the kernel chain.
        assert_eq!(block_time(&b, 4, Scheme::RegionSharing, &r), 2.0);
        assert_eq!(block_time(&b, 4, Scheme::Wavefront, &r), 2.5);
        // The codec's kernels run beside everything else.
        let c = Prediction {
            codec_seconds: 3.0,
            ..b.clone()
        };
        assert_eq!(block_time(&c, 4, Scheme::RegionSharing, &r), 3.0);
        assert_eq!(block_time(&c, 4, Scheme::Wavefront, &r), 3.0);
        // One chunk overlaps nothing (no bytes here, so no link time).
        assert_eq!(
            block_time(&c, 1, Scheme::Wavefront, &r),
            2.0 + 0.5 + 0.1 + 3.0
        );
    }
}
