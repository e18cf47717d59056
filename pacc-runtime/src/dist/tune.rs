//! The block steps of a distributed run, from the tuner's model (`crate::tune`).
//!
//! A rank's halos are `block_steps x reach` planes deep, so the depth shapes every rank's
//! problem. Deeper blocks exchange more halo planes per block and recompute more of them (the
//! local kernels cover the halos, which go stale from the outside in, so the redundant points
//! grow with the depth); shallower ones run more blocks, and every block is one executor call,
//! one pass of the rank's window over the host link (the halos come through host memory) and
//! one exchange. For each candidate depth a rank builds its own local problem
//! (`local::program`), lets the single-node tuner pick its chunks and scheme for one block (the
//! wavefront where it wins), and adds the exchange and the call. The ranks then take the depth
//! whose slowest rank is fastest: every block ends in an exchange with the neighbours, so the
//! run goes at the pace of its slowest rank, and every rank computes the same minimum from the
//! same all-reduced maxima (no broadcast; a rank-0 choice would ignore a slower rank's memory or
//! device, and the smallest rank's choice would be the slowest for the others).
//!
//! Pure: no MPI, no device. `dist::slab` feeds it measured rates; tests feed it assumed ones.

use super::local;
use super::slab::{split, Slab};
use crate::config::Fixed;
use crate::options::Options;
use crate::program::Program;
use crate::tune::{self, TuneChoice, TuneInputs, AUTO_SCHEMES};
use serde::Serialize;

/// What a distributed run costs besides each rank's pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DistRates {
    /// Halo bytes a rank receives per second (its neighbours' sends overlap).
    pub exchange: f64,
    /// Seconds per exchange besides its bytes (posting, waiting for the slowest neighbour).
    pub exchange_latency: f64,
    /// Seconds per block's executor call besides its operations (set-up, allocation; the
    /// arrays stay page-locked across the blocks of a distributed run).
    pub call_overhead: f64,
}

impl Default for DistRates {
    /// Assumed figures for ranks on one node: MPI over shared memory at 8 GB/s, 50 us per
    /// exchange, 50 ms per executor call.
    fn default() -> Self {
        DistRates {
            exchange: 8e9,
            exchange_latency: 50e-6,
            call_overhead: 0.05,
        }
    }
}

impl DistRates {
    /// The host exchange relayed through each rank's GPU (`exec::cuda::Relay`): the
    /// halos cross the host link twice, each direction at about 54 GB/s on an H100 or H200
    /// and both at once at 77-89 GB/s, NVLink between; assumed 40 GB/s received, 200 us per
    /// exchange (NCCL's group and the first piece's round trip).
    pub fn relayed() -> Self {
        DistRates {
            exchange: 40e9,
            exchange_latency: 200e-6,
            ..DistRates::default()
        }
    }
}

/// One rank's prediction for one block depth.
#[derive(Clone, Debug, Serialize)]
pub struct RankCost {
    pub block_steps: usize,
    /// Predicted seconds of the whole run on this rank (infinite if the depth cannot run).
    pub seconds: f64,
    /// The rank's chunks and scheme for one block at this depth.
    pub choice: Option<TuneChoice>,
    /// Halo bytes the rank receives per exchange.
    pub exchange_bytes: u64,
    /// Why the depth cannot run, if it cannot.
    pub rejected: Option<String>,
}

impl RankCost {
    /// A depth that cannot run, and why.
    pub(super) fn rejected(block_steps: usize, why: String) -> RankCost {
        RankCost {
            block_steps,
            seconds: f64::INFINITY,
            choice: None,
            exchange_bytes: 0,
            rejected: Some(why),
        }
    }
}

/// Rank `rank`'s slab of a `ranks`-way split of `global` at depth `k`.
pub(super) fn slab_at(
    program: &Program,
    global: &[usize],
    steps: usize,
    (ranks, rank): (usize, usize),
    k: usize,
) -> Result<Slab, crate::error::Error> {
    let o = Options::new().block_steps(k);
    Ok(split(program, global, steps, ranks, &o)?.swap_remove(rank))
}

/// Point statements' planes before the call: the middle plane, as the single-node tuner
/// assumes.
pub(super) fn middle_points(program: &Program, global: &[usize]) -> Vec<Vec<i64>> {
    vec![vec![(global[0] / 2) as i64; global.len()]; program.points.len()]
}

/// The depth the ranks agreed on, with what each candidate cost its slowest rank.
#[derive(Clone, Debug, Serialize)]
pub struct DistChoice {
    pub block_steps: usize,
    /// `(block steps, predicted seconds of the slowest rank)` of every candidate.
    pub slowest: Vec<(usize, f64)>,
    /// This rank's prediction at the chosen depth.
    pub mine: RankCost,
}

impl DistChoice {
    /// One line for the report.
    pub fn summary(&self) -> String {
        let ks: Vec<String> = (self.slowest.iter())
            .filter(|(_, s)| s.is_finite())
            .map(|(k, s)| format!("k{k} {s:.3} s"))
            .collect();
        let local = self.mine.choice.as_ref().map_or(String::new(), |c| {
            format!(
                "; this rank {} chunks, {} at that depth",
                c.chunks, c.scheme
            )
        });
        format!(
            "distributed tuner: {} block steps (the slowest rank's predicted run: {}){local}",
            self.block_steps,
            ks.join(", ")
        )
    }
}

/// Rank `rank`'s predicted run at each depth of `candidates` (see the module documentation):
/// its slab of a `ranks`-way split of `global`, its local problem, the single-node tuner's pick
/// for one block with `inputs` (this rank's rates and device memory), plus `rates` per block.
#[allow(clippy::too_many_arguments)]
pub fn rank_costs(
    program: &Program,
    global: &[usize],
    steps: usize,
    ranks: usize,
    rank: usize,
    opts: &Options,
    inputs: &TuneInputs,
    rates: &DistRates,
    candidates: &[usize],
) -> Vec<RankCost> {
    let q = Question {
        program,
        global,
        steps,
        ranks,
        rank,
        opts,
        inputs,
        rates,
    };
    candidates.iter().map(|&k| q.cost(k)).collect()
}

/// The depth with the least slowest-rank time among `slowest` (`(block steps, seconds)`; the
/// shallower on a tie), or `None` when none can run.
pub fn agree(slowest: &[(usize, f64)]) -> Option<usize> {
    slowest
        .iter()
        .filter(|(_, s)| s.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|&(k, _)| k)
}

/// [`rank_costs`]' arguments.
struct Question<'a> {
    program: &'a Program,
    global: &'a [usize],
    steps: usize,
    ranks: usize,
    rank: usize,
    opts: &'a Options,
    inputs: &'a TuneInputs,
    rates: &'a DistRates,
}

impl Question<'_> {
    fn cost(&self, k: usize) -> RankCost {
        let rejected = |why: String| RankCost::rejected(k, why);
        let at = (self.ranks, self.rank);
        let slab = match slab_at(self.program, self.global, self.steps, at, k) {
            Ok(s) => s,
            Err(e) => return rejected(e.to_string()),
        };
        let mid = middle_points(self.program, self.global);
        let (lprog, inside) = local::program(self.program, &slab, &mid);
        let shape = slab.local_shape();
        let kk = k.min(self.steps).max(1);
        let t = TuneInputs {
            block_steps: Some(kk),
            chunks: Fixed::of(self.program, self.opts).chunks,
            point_planes: (mid.iter().zip(&inside))
                .map(|(p, &ok)| {
                    if ok {
                        p[0] as usize - slab.window.start
                    } else {
                        0
                    }
                })
                .collect(),
            ..self.inputs.clone()
        };
        let choice = match self.opts.scheme {
            Some(scheme) => tune::choose(&lprog, &shape, kk, &TuneInputs { scheme, ..t }),
            None => tune::choose_scheme(&lprog, &shape, kk, &t, &AUTO_SCHEMES),
        };
        let choice = match choice {
            Ok(c) => c,
            Err(e) => return rejected(e.to_string()),
        };
        let exchange_bytes = slab.exchange_bytes(self.program);
        let exchange = self.rates.exchange_latency + exchange_bytes as f64 / self.rates.exchange;
        let (blocks, full, rem) = (self.steps.div_ceil(kk), self.steps / kk, self.steps % kk);
        let block = choice.predicted_seconds + self.rates.call_overhead;
        let tail = match rem {
            0 => 0.0,
            r => choice.predicted_seconds * r as f64 / kk as f64 + self.rates.call_overhead,
        };
        let seconds = full as f64 * block + tail + blocks.saturating_sub(1) as f64 * exchange;
        RankCost {
            block_steps: k,
            seconds,
            choice: Some(choice),
            exchange_bytes,
            rejected: None,
        }
    }
}

/// `inputs` as one of `sharing` ranks on the same device sees them: a share of the link, of the
/// kernels' throughput and of the device memory (the ranks' blocks run at the same time).
pub fn shared_inputs(inputs: &TuneInputs, sharing: usize) -> TuneInputs {
    let n = sharing.max(1) as f64;
    let mut t = inputs.clone();
    t.rates.link.htod /= n;
    t.rates.link.dtoh /= n;
    t.rates.link.both /= n;
    for r in &mut t.rates.kernel_rate {
        *r /= n;
    }
    t.rates.dtod_rate /= n;
    t.device_memory /= sharing.max(1) as u64;
    t
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::plan::Scheme;
    use crate::program::*;
    use crate::tune::LinkRates;

    /// The sponge's structure: prev = f(cur +-4, prev, vel, damp); swap; four f32 arrays.
    pub(in crate::dist) fn sponge() -> Program {
        let arrays = [
            ("prev", Role::InOut),
            ("cur", Role::InOut),
            ("vel", Role::Input),
            ("damp", Role::Input),
        ];
        fixtures::one_kernel("sponge", &arrays, &[(1, 4), (0, 0), (2, 0), (3, 0)], 0, 4)
    }

    /// H100 figures: 54 / 55 / 80 GB/s link, 100 Gpt/s kernels, 78 GB of device memory.
    pub(in crate::dist) fn h100() -> TuneInputs {
        let link = LinkRates {
            htod: 54e9,
            dtoh: 55e9,
            both: 80e9,
            bytes: 1 << 28,
        };
        TuneInputs::new(link, vec![100e9], 78_000_000_000)
    }

    fn slowest(costs: &[Vec<RankCost>]) -> Vec<(usize, f64)> {
        (0..costs[0].len())
            .map(|i| {
                let s = costs.iter().map(|c| c[i].seconds).fold(0.0, f64::max);
                (costs[0][i].block_steps, s)
            })
            .collect()
    }

    fn all_ranks(
        p: &Program,
        global: &[usize],
        steps: usize,
        ranks: usize,
        inputs: impl Fn(usize) -> TuneInputs,
        rates: &DistRates,
    ) -> Vec<Vec<RankCost>> {
        let ks = tune::block_step_candidates(steps);
        (0..ranks)
            .map(|r| {
                rank_costs(
                    p,
                    global,
                    steps,
                    ranks,
                    r,
                    &Options::new(),
                    &inputs(r),
                    rates,
                    &ks,
                )
            })
            .collect()
    }

    /// Two ranks sharing one H100, sponge 1600^3, 48 steps (the run): the 4-step
    /// blocks it ran with cost every rank 12 passes of its window over a shared link; the
    /// model goes deeper, and predicts the configured depth several times slower.
    #[test]
    fn two_ranks_on_one_h100_block_deep() {
        let p = sponge();
        let shared = shared_inputs(&h100(), 2);
        let costs = all_ranks(
            &p,
            &[1600, 1600, 1600],
            48,
            2,
            |_| shared.clone(),
            &DistRates::default(),
        );
        let s = slowest(&costs);
        let k = agree(&s).unwrap();
        assert!(k >= 16, "{s:?}");
        let at = |k: usize| s.iter().find(|x| x.0 == k).unwrap().1;
        assert!(at(4) > 2.0 * at(k), "{s:?}");
        // Each rank's slab is 800 planes plus its halo: out of core in half the device.
        let mine = &costs[0].iter().find(|c| c.block_steps == k).unwrap();
        let c = mine.choice.as_ref().unwrap();
        assert!(c.chunks > 1, "{c:?}");
        assert_eq!(mine.exchange_bytes, (k * 4 * 2 * 1600 * 1600 * 4) as u64);
    }

    /// A slow exchange makes deep blocks no dearer per step (the halo volume per step is the
    /// reach) but a high latency or call overhead makes shallow blocks dearer; redundant halo
    /// work makes very deep blocks dearer when the kernels are slow and the link is fast.
    #[test]
    fn the_depth_follows_the_rates() {
        let p = sponge();
        let g = [512, 256, 256];
        let run = |inputs: TuneInputs, rates: DistRates| {
            let costs = all_ranks(&p, &g, 64, 4, |_| inputs.clone(), &rates);
            agree(&slowest(&costs)).unwrap()
        };
        let fast_link = {
            let mut t = h100();
            t.rates.link = LinkRates {
                htod: 1e13,
                dtoh: 1e13,
                both: 2e13,
                bytes: 1 << 28,
            };
            t.rates.kernel_rate = vec![1e9];
            t
        };
        let cheap = DistRates {
            exchange: 1e12,
            exchange_latency: 0.0,
            call_overhead: 0.0,
        };
        let shallow = run(fast_link.clone(), cheap);
        let costly_calls = DistRates {
            call_overhead: 5.0,
            ..cheap
        };
        let deep = run(fast_link, costly_calls);
        assert!(shallow < deep, "{shallow} vs {deep}");
        assert!(
            shallow <= 4,
            "slow kernels, free blocks: redundant halo work decides"
        );
    }

    /// The ranks agree on the depth whose slowest rank is fastest, which is not what the others
    /// would pick alone: here rank 1 has 1.5 GB of device memory, too little for the widest
    /// windows of deep blocks.
    #[test]
    fn the_slowest_rank_decides() {
        let p = sponge();
        let g = [800, 512, 512];
        let small = |r: usize| {
            let mut t = h100();
            if r == 1 {
                t.device_memory = 1_500_000_000;
            }
            t
        };
        let costs = all_ranks(&p, &g, 48, 3, small, &DistRates::default());
        let best_alone = |r: usize| {
            agree(
                &costs[r]
                    .iter()
                    .map(|c| (c.block_steps, c.seconds))
                    .collect::<Vec<_>>(),
            )
        };
        let k = agree(&slowest(&costs)).unwrap();
        assert_eq!(best_alone(0), Some(48));
        assert!(
            costs[1].last().unwrap().seconds.is_infinite(),
            "k48 does not fit rank 1"
        );
        assert!(k < 48);
        // The agreed depth is the best of the worst: no other depth has a faster slowest rank.
        let worst = |i: usize| costs.iter().map(|c| c[i].seconds).fold(0.0, f64::max);
        let ki = costs[0].iter().position(|c| c.block_steps == k).unwrap();
        assert!((0..costs[0].len()).all(|i| worst(i) >= worst(ki)));
        assert!(costs[1][ki].seconds.is_finite());
    }

    /// Depths whose halo is deeper than a neighbour's slab are rejected with the split's
    /// reason; with no depth left there is no agreement.
    #[test]
    fn too_deep_for_the_slabs_is_rejected() {
        let p = sponge();
        let costs = all_ranks(&p, &[64, 32, 32], 48, 4, |_| h100(), &DistRates::default());
        let deep = costs[0].iter().find(|c| c.block_steps == 48).unwrap();
        assert!(deep.seconds.is_infinite());
        assert!(deep.rejected.as_ref().unwrap().contains("halo"), "{deep:?}");
        let k = agree(&slowest(&costs)).unwrap();
        assert!(
            k * 4 <= 16,
            "16-plane slabs hold a halo of at most 16 planes: k{k}"
        );
        assert_eq!(agree(&[(4, f64::INFINITY)]), None);
        assert_eq!(agree(&[(8, 2.0), (4, 2.0), (2, 3.0)]), Some(4));
    }

    /// A scheme the caller names is the one every rank plans; unnamed, out-of-core slabs may
    /// take the wavefront.
    #[test]
    fn a_named_scheme_is_kept() {
        let p = sponge();
        let g = [1600, 1600, 1600];
        let ks = [16];
        let o = Options::new().scheme(Scheme::RegionSharing);
        let c = rank_costs(&p, &g, 48, 2, 0, &o, &h100(), &DistRates::default(), &ks);
        assert_eq!(c[0].choice.as_ref().unwrap().scheme, Scheme::RegionSharing);
        let free = rank_costs(
            &p,
            &g,
            48,
            2,
            0,
            &Options::new(),
            &h100(),
            &DistRates::default(),
            &ks,
        );
        assert!(free[0].seconds <= c[0].seconds);
    }

    #[test]
    fn sharing_a_device_splits_its_rates_and_memory() {
        let t = shared_inputs(&h100(), 2);
        assert_eq!(t.device_memory, 39_000_000_000);
        assert_eq!(t.rates.kernel_rate, vec![50e9]);
        assert_eq!(t.rates.link.htod, 27e9);
        assert_eq!(shared_inputs(&h100(), 1).device_memory, 78_000_000_000);
    }
}
