//! Distributed runs whose slabs stay where they compute: the plan of a resident segment (one
//! chunk, the halo exchanges inside it: `crate::plan::exchange`), and the model that picks the
//! halo depth for it.
//!
//! The host path pays for its depth with link traffic; a resident rank does not. Its costs are
//! the local kernels, whose window grows by one reach per side and step of depth (redundant
//! planes), and one exchange per `k` steps: a latency, and bytes that travel while the last
//! step's interior is computed (the planes the neighbours need come first). Over NVLink the
//! bytes of a reach-4 halo are a fraction of a millisecond, so shallow halos win.
//!
//! Pure: no MPI, no device. `dist::slab` feeds it measured rates; tests feed it assumed ones.

use super::local;
use super::slab::{exchanged, links, Slab};
use super::tune::{middle_points, slab_at, RankCost};
use crate::error::Error;
use crate::plan::{self, exchange, Plan, PlanOptions, Scheme};
use crate::program::{Program, Stage};
use crate::report::Report;
use crate::tune::TuneInputs;
use serde::Serialize;

/// What one halo exchange between resident ranks costs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PeerRates {
    /// Bytes per second a rank receives while its neighbours send (all directions at once).
    pub bandwidth: f64,
    /// Seconds per exchange besides its bytes (the group's launch, the slowest neighbour).
    pub latency: f64,
}

impl Default for PeerRates {
    /// NCCL between two GPUs joined by NVLink: 16 MiB each way in 0.099 ms, 256 MiB at
    /// 305 GB/s (two H200s, NV18, 2026-11-28), taken as 20 us plus 200 GB/s.
    fn default() -> Self {
        PeerRates {
            bandwidth: 200e9,
            latency: 20e-6,
        }
    }
}

/// Bytes of device memory a resident rank needs besides its arrays' planes: the context, the
/// modules, NCCL's buffers and the rows' padding.
pub const RESIDENT_SLACK: u64 = 2 << 30;

/// Rank `rank`'s predicted resident run at each depth of `candidates`: its window's arrays on
/// the device (rejected when they do not fit `inputs.device_memory`), the local kernels at
/// `inputs`' kernel rates every step, and one exchange every `k` steps, of which what the
/// last step's interior does not hide counts.
#[allow(clippy::too_many_arguments)]
pub fn costs(
    program: &Program,
    global: &[usize],
    steps: usize,
    ranks: usize,
    rank: usize,
    inputs: &TuneInputs,
    peer: &PeerRates,
    candidates: &[usize],
) -> Vec<RankCost> {
    let q = Question {
        program,
        global,
        steps,
        at: (ranks, rank),
        inputs,
        peer,
    };
    candidates.iter().map(|&k| q.cost(k)).collect()
}

/// [`costs`]' arguments.
struct Question<'a> {
    program: &'a Program,
    global: &'a [usize],
    steps: usize,
    /// The ranks, and this one.
    at: (usize, usize),
    inputs: &'a TuneInputs,
    peer: &'a PeerRates,
}

impl Question<'_> {
    fn cost(&self, k: usize) -> RankCost {
        let (program, inputs, peer) = (self.program, self.inputs, self.peer);
        let slab = match slab_at(program, self.global, self.steps, self.at, k) {
            Ok(s) => s,
            Err(e) => return RankCost::rejected(k, e.to_string()),
        };
        let need = device_bytes(program, &slab);
        if need > inputs.device_memory {
            let why = format!(
                "the window's arrays need {need} bytes of device memory, {} available",
                inputs.device_memory
            );
            return RankCost::rejected(k, why);
        }
        let (lprog, _) = local::program(program, &slab, &middle_points(program, self.global));
        let (step, last) = self.step_seconds(&lprog, &slab.local_shape());
        let exchange_bytes = slab.exchange_bytes(program);
        let interior = slab.owned.len().saturating_sub(slab.halo.0 + slab.halo.1) as f64 * last;
        let travel = exchange_bytes as f64 / peer.bandwidth;
        let exposed = peer.latency + (travel - interior).max(0.0);
        let exchanges = self.steps.div_ceil(k.max(1)).saturating_sub(1);
        RankCost {
            block_steps: k,
            seconds: self.steps as f64 * step + exchanges as f64 * exposed,
            choice: None,
            exchange_bytes,
            rejected: None,
        }
    }

    /// Seconds of one step of the local kernels, and of one plane of the step's last kernel.
    fn step_seconds(&self, lprog: &Program, shape: &[usize]) -> (f64, f64) {
        let seconds_per_plane = |kk: usize| {
            let rate = self
                .inputs
                .rates
                .kernel_rate
                .get(kk)
                .copied()
                .unwrap_or(1e9);
            plan::points_per_plane(lprog, shape, kk) as f64 / rate.max(1.0)
        };
        let (mut step, mut last) = (0.0, 0.0);
        for s in &lprog.step {
            if let Stage::Kernel(kk) = *s {
                let r = lprog.kernels[kk].ranges[0];
                let planes = (r.hi.eval(shape[0]) - r.lo.eval(shape[0])).max(0) as f64;
                step += planes * seconds_per_plane(kk);
                last = seconds_per_plane(kk);
            }
        }
        (step, last)
    }
}

/// Device memory a resident rank's window takes: every array's planes, plus
/// [`RESIDENT_SLACK`].
pub fn device_bytes(program: &Program, slab: &Slab) -> u64 {
    let plane: usize = slab.global[1..].iter().product();
    let per_plane: usize = program.arrays.iter().map(|a| a.elem.size() * plane).sum();
    (slab.window.len() * per_plane) as u64 + RESIDENT_SLACK
}

/// The plan of a resident segment of `steps` steps on rank `me`'s window (program `lprog`,
/// its local program): every array loaded once, `steps` steps in one chunk, an exchange of
/// the written arrays every `slabs[me].block_steps` steps, the owned planes written back.
pub fn segment_plan(
    program: &Program,
    lprog: &Program,
    slabs: &[Slab],
    me: usize,
    steps: usize,
    points: &[usize],
) -> Result<Plan, Error> {
    let slab = &slabs[me];
    let opts = PlanOptions {
        chunks: 1,
        block_steps: steps.max(1),
        scheme: Scheme::RegionSharing,
        buffer_sets: 1,
        compress: Vec::new(),
        codec: Default::default(),
        read_only_ring: false,
    };
    let whole = plan::build(lprog, &slab.local_shape(), steps, points, &opts)?;
    let arrays = exchanged(program);
    let every = slab.block_steps.max(1);
    exchange::insert(lprog, &whole, every, &arrays, &links(slabs, me)).ok_or_else(|| {
        Error::Internal("a resident segment's plan is not one chunk in one block".into())
    })
}

/// Seconds the kernel stream of a resident run stood idle between its first and last
/// operation: the exchanges the interior did not hide (and the launches' own gaps).
pub fn exposed_seconds(report: &Report) -> f64 {
    let kernels = Plan::stream(0, plan::StreamRole::Kernels);
    let mut ops: Vec<(f64, f64)> = (report.timeline.iter())
        .filter(|e| e.stream == kernels)
        .map(|e| (e.start_us, e.start_us + e.dur_us))
        .collect();
    ops.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut idle = 0.0;
    for w in ops.windows(2) {
        idle += (w[1].0 - w[0].1).max(0.0);
    }
    idle / 1e6
}

#[cfg(test)]
mod tests {
    use super::super::tune::tests::{h100, sponge};
    use super::*;
    use crate::dist::split;
    use crate::options::Options;

    /// [`h100`] with kernels of `rate` points per second.
    fn h100_at(rate: f64) -> TuneInputs {
        let mut t = h100();
        t.rates.kernel_rate = vec![rate];
        t
    }

    /// Two H100s, sponge 1200^3: the window fits, shallow halos win over NVLink, and the
    /// 46 MB of a reach-4 exchange hide behind the interior.
    #[test]
    fn nvlink_picks_shallow_halos() {
        let p = sponge();
        let c = costs(
            &p,
            &[1200; 3],
            144,
            2,
            0,
            &h100_at(130e9),
            &PeerRates::default(),
            &[1, 2, 4, 8, 16],
        );
        let best = c
            .iter()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .unwrap();
        assert!(best.block_steps <= 2, "{c:?}");
        assert_eq!(c[0].exchange_bytes, 4 * 2 * 1200 * 1200 * 4);
        // Stepping alone: 600 owned planes of 1200^2 points at 130 Gpt/s, 144 steps.
        let stepping = 144.0 * 600.0 * 1200.0 * 1200.0 / 130e9;
        assert!(
            c[0].seconds < 1.03 * stepping,
            "{} vs {stepping}",
            c[0].seconds
        );
    }

    /// A slow carrier makes deeper halos pay; a window too large for the device is rejected.
    #[test]
    fn the_depth_follows_the_carrier_and_memory_bounds_it() {
        let p = sponge();
        let slow = PeerRates {
            bandwidth: 1e9,
            latency: 5e-3,
        };
        let g = [512, 256, 256];
        let c = costs(&p, &g, 64, 2, 1, &h100_at(100e9), &slow, &[1, 2, 4, 8]);
        let best = c
            .iter()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .unwrap();
        assert!(best.block_steps >= 4, "{c:?}");
        let mut small = h100_at(100e9);
        small.device_memory = 1 << 30;
        let c = costs(&p, &g, 64, 2, 1, &small, &slow, &[1]);
        assert!(c[0].seconds.is_infinite());
        assert!(c[0].rejected.as_ref().unwrap().contains("device memory"));
    }

    /// The segment's plan: one upload and one write-back per array, an exchange every k steps
    /// on the loads stream, the last kernel before each split edges first, and no race.
    #[test]
    fn a_segment_exchanges_every_k_steps_edges_first() {
        let p = sponge();
        let g = [60, 8, 8];
        let slabs = split(&p, &g, 10, 3, &Options::new().block_steps(2)).unwrap();
        let (lprog, _) = local::program(&p, &slabs[1], &[]);
        let plan = segment_plan(&p, &lprog, &slabs, 1, 10, &[]).unwrap();
        let ex: Vec<&plan::Op> = (plan.ops.iter())
            .filter(|o| matches!(o.kind, plan::OpKind::Exchange { .. }))
            .collect();
        assert_eq!(ex.len(), 4, "before steps 2, 4, 6 and 8");
        let loads = Plan::stream(0, plan::StreamRole::Loads);
        assert!(ex.iter().all(|o| o.stream == loads));
        plan::race::check(&lprog, &plan).unwrap();
        // Step 1's kernel is split in three: two edges, then the interior, which the first
        // exchange does not wait for.
        let step1: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| matches!(plan.ops[i].kind, plan::OpKind::Kernel { step: 1, .. }))
            .collect();
        assert_eq!(step1.len(), 3);
        let first = (plan.ops.iter())
            .position(|o| matches!(o.kind, plan::OpKind::Exchange { .. }))
            .unwrap();
        assert!(plan.ops[first].deps.contains(&step1[0]));
        assert!(plan.ops[first].deps.contains(&step1[1]));
        assert!(!plan.ops[first].deps.contains(&step1[2]));
    }
}
