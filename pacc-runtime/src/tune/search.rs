//! The tuner's search: which candidates (chunks x block steps, per scheme) are worth planning,
//! each planned and predicted by the model ([`super::model`]), the fastest kept, the resident
//! run preferred within [`RESIDENT_MARGIN`].

use super::model::{
    block_time, extra_device_bytes, fill, predict, Candidate, Prediction, TuneChoice, TuneInputs,
};
use crate::error::Error;
use crate::plan::{self, Plan, PlanOptions, Scheme};
use crate::program::Program;
use rayon::prelude::*;

const CHUNKS: [usize; 15] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 128];
const STEPS: [usize; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Sweeps over the link a pipelined run may be cut into with blocks deeper than [`STEPS`]:
/// each sweep moves every array in and the written ones out once, so a run of 144 steps in 2
/// sweeps (blocks of 72) moves two thirds of the bytes of 3 sweeps of 48.
const DEEP_SWEEPS: usize = 4;

/// The most launches (block steps x chunks) of a pipelined block deeper than [`STEPS`]: the
/// tuner plans every candidate, and a plan costs about its launches (sweep depths at every
/// chunk count made a tuning of `propagate_sponge` 1800^3, 144 steps, 3.2x slower; 24 chunks
/// x 144 steps, the H200's best there, is within).
const DEEP_LAUNCHES: usize = 4096;

/// The block steps the tuner weighs for a run of `steps` steps: the default list up to the
/// run's steps, and the run's steps (every step in one block: resident with one chunk).
pub fn block_step_candidates(steps: usize) -> Vec<usize> {
    let steps = steps.max(1);
    let mut v: Vec<usize> = STEPS.iter().copied().filter(|&k| k <= steps).collect();
    if !v.contains(&steps) {
        v.push(steps);
    }
    v
}

/// Blocks deeper than [`STEPS`] that a pipelined run of `steps` steps is also planned with: the
/// depths that cut it into 1 to [`DEEP_SWEEPS`] sweeps (over at most [`DEEP_LAUNCHES`] / depth
/// chunks).
fn sweep_depths(steps: usize) -> impl Iterator<Item = usize> {
    let deepest_listed = STEPS[STEPS.len() - 1];
    (1..=DEEP_SWEEPS)
        .map(move |n| steps.max(1).div_ceil(n))
        .filter(move |&k| k > deepest_listed && k <= DEEP_LAUNCHES / 2)
}

// ---- The search ------------------------------------------------------------------------------

/// One tuning question: the call's shape and steps, and what the model knows.
struct Search<'a> {
    program: &'a Program,
    shape: &'a [usize],
    steps: usize,
    inputs: &'a TuneInputs,
    points: Vec<usize>,
}

impl Search<'_> {
    /// Chunk counts to try: the fixed one, the caller's list, or the default list (at least two
    /// planes per chunk).
    fn chunk_list(&self) -> Vec<usize> {
        let n0 = self.shape[0];
        match self.inputs.chunks {
            Some(c) => vec![c],
            None if !self.inputs.chunk_candidates.is_empty() => {
                self.inputs.chunk_candidates.clone()
            }
            None => CHUNKS
                .iter()
                .copied()
                .filter(|&c| c == 1 || c * 2 <= n0)
                .collect(),
        }
    }

    /// Whether `c` chunks of `k` block steps are worth planning. What depends on the tiling
    /// comes from it ([`plan::TilingCost`]); this part is the same for every tiling.
    fn worth_planning(&self, c: usize, k: usize) -> bool {
        let inputs = self.inputs;
        // Blocks deeper than the default list are for the resident run (one chunk), and for
        // pipelined runs only at the depths that save whole sweeps.
        let depth_ok = k <= STEPS[STEPS.len() - 1]
            || c == 1
            || inputs.block_steps.is_some()
            || (c * k <= DEEP_LAUNCHES && sweep_depths(self.steps).any(|d| d == k));
        let fixed = inputs.chunks.is_some();
        depth_ok
            && (inputs.scheme.tiling()).worth_planning(self.program, self.shape[0], c, k, fixed)
    }

    /// Block steps to try: the fixed one, the caller's list, or [`block_step_candidates`] and
    /// the [`sweep_depths`].
    fn step_list(&self) -> Vec<usize> {
        match self.inputs.block_steps {
            Some(k) => vec![k],
            None if !self.inputs.step_candidates.is_empty() => self.inputs.step_candidates.clone(),
            None => {
                let mut v = block_step_candidates(self.steps);
                v.extend(sweep_depths(self.steps).filter(|k| *k != self.steps));
                v
            }
        }
    }

    /// The plan of `s` steps with `c` chunks of `k` block steps on `sets` buffer sets.
    fn build(&self, c: usize, k: usize, s: usize, sets: usize) -> Result<Plan, plan::PlanError> {
        plan::build(
            self.program,
            self.shape,
            s,
            &self.points,
            &PlanOptions {
                chunks: c,
                block_steps: k,
                scheme: self.inputs.scheme,
                buffer_sets: sets,
                compress: Vec::new(),
                codec: Default::default(),
                read_only_ring: self.inputs.read_only_ring,
            },
        )
    }

    /// The block of `c` chunks and `k` steps, evaluated on the scheme's buffer sets or, where
    /// those do not fit in device memory and the caller fixed none, on the fewest that fit of
    /// those the scheme allows for the run's blocks ([`Scheme::fewest_buffer_sets`]).
    fn plan_and_evaluate(
        &self,
        c: usize,
        k: usize,
    ) -> Result<(Plan, Candidate, Option<TuneChoice>), plan::PlanError> {
        let sets = self.inputs.sets();
        let fewest = match self.inputs.buffer_sets {
            Some(_) => sets,
            None => (self.inputs.scheme).fewest_buffer_sets(self.steps.div_ceil(k)),
        };
        let block = self.build(c, k, k, sets)?;
        let (cand, choice) = self.evaluate(&block, k);
        if cand.rejected.is_none() || fewest >= sets {
            return Ok((block, cand, choice));
        }
        for fewer in (fewest..sets).rev() {
            let b = self.build(c, k, k, fewer)?;
            let (fc, fch) = self.evaluate(&b, k);
            if fc.rejected.is_none() {
                return Ok((b, fc, fch));
            }
        }
        Ok((block, cand, choice))
    }

    /// Why `block` cannot run within the memory limits, if it cannot.
    fn rejection(&self, block: &Plan, need: u64) -> Option<String> {
        let inputs = self.inputs;
        if need > inputs.device_memory {
            return Some(format!(
                "needs {need} bytes of device memory, {} available",
                inputs.device_memory
            ));
        }
        match inputs.host_memory {
            Some(h)
                if inputs.scheme.transfers().stages_through_pinned_buffers()
                    && block.device_bytes() > h =>
            {
                Some(format!(
                    "staging needs {} bytes of pinned host memory, {h} allowed",
                    block.device_bytes()
                ))
            }
            _ => None,
        }
    }

    /// The candidate of `block` (one block of `k` steps) and, if eligible, the whole run's
    /// prediction with it.
    fn evaluate(&self, block: &Plan, k: usize) -> (Candidate, Option<TuneChoice>) {
        let need = block.device_bytes() + extra_device_bytes(self.program, block);
        let mut cand = Candidate {
            chunks: block.chunks,
            block_steps: k,
            buffer_sets: block.buffer_sets,
            predicted_seconds: f64::INFINITY,
            device_bytes: need,
            rejected: self.rejection(block, need),
        };
        if cand.rejected.is_some() {
            return (cand, None);
        }
        let rates = &self.inputs.rates;
        let pb = predict(self.program, block, rates);
        let time = |p: &Prediction| block_time(p, block.chunks, block.scheme, rates);
        let (full, rem) = (self.steps / k, self.steps % k);
        let per_block = time(&pb);
        let last = match rem {
            0 => 0.0,
            _ => match self.build(block.chunks, rem, rem, block.buffer_sets) {
                Ok(r) => time(&predict(self.program, &r, rates)),
                Err(_) => per_block * rem as f64 / k as f64,
            },
        };
        let first = if full == 0 { last } else { per_block };
        let fill = fill(self.inputs.scheme, &pb, block.chunks);
        // Pieces register in the order the first block copies them, beside it; a block
        // quicker than the registration waits for it, and then still has its last chunk's
        // share to run once the last piece is in (no registration: the tail is within the
        // first block, nothing is added).
        let page_lock = self.inputs.page_lock_seconds(self.inputs.scheme);
        let tail = first / block.chunks.max(1) as f64;
        let exposed = (page_lock + tail - first - fill).max(0.0);
        let total = per_block * full as f64 + last + fill + exposed;
        cand.predicted_seconds = total;
        let choice = TuneChoice {
            chunks: block.chunks,
            block_steps: k,
            scheme: self.inputs.scheme,
            buffer_sets: block.buffer_sets,
            predicted_seconds: total,
            predicted_per_step: total / self.steps as f64,
            block: pb,
            fill_seconds: fill,
            page_lock_seconds: page_lock,
            page_lock_exposed: exposed,
            device_bytes: need,
            candidates: Vec::new(),
        };
        (cand, Some(choice))
    }
}

/// Chooses chunks and block steps for `steps` steps of `program` over arrays of `shape`.
pub fn choose(
    program: &Program,
    shape: &[usize],
    steps: usize,
    inputs: &TuneInputs,
) -> Result<TuneChoice, Error> {
    let steps = steps.max(1);
    let search = Search {
        program,
        shape,
        steps,
        inputs,
        points: if inputs.point_planes.len() == program.points.len() {
            inputs.point_planes.clone()
        } else {
            vec![shape[0] / 2; program.points.len()]
        },
    };
    let mut best: Option<TuneChoice> = None;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut last_err = None;
    let chunk_list = search.chunk_list();
    let pairs: Vec<(usize, usize)> = (search.step_list().into_iter())
        .map(|k| k.min(steps).max(1))
        .flat_map(|k| chunk_list.iter().map(move |&c| (k, c)))
        .filter(|&(k, c)| search.worth_planning(c, k))
        .collect();
    // Planning a block is the cost (a block of thousands of steps has hundreds of thousands
    // of operations), so the candidates are planned and predicted in parallel, and taken in
    // their order as if one by one (the first of a re-planned chunk count counts).
    let evaluated: Vec<_> = pairs
        .par_iter()
        .map(|&(k, c)| {
            let (block, cand, choice) =
                (search.plan_and_evaluate(c, k)).map_err(|e| e.to_string())?;
            Ok((block.chunks, k, (cand, choice)))
        })
        .collect();
    for e in evaluated {
        let (chunks, k, (cand, choice)) = match e {
            Ok(x) => x,
            Err(e) => {
                last_err = Some(e);
                continue;
            }
        };
        if candidates
            .iter()
            .any(|x| x.chunks == chunks && x.block_steps == k)
        {
            continue;
        }
        candidates.push(cand);
        if let Some(ch) = choice {
            if best
                .as_ref()
                .is_none_or(|b| ch.predicted_seconds < b.predicted_seconds * (1.0 - 1e-9))
            {
                best = Some(ch);
            }
        }
    }
    finish(best, candidates, last_err, inputs)
}

/// The schemes the tuner compares when the call names none ([`Scheme::TUNED`], from the
/// schemes' registration).
pub const AUTO_SCHEMES: [Scheme; Scheme::TUNED.len()] = Scheme::TUNED;

/// How much faster than the resident run (one chunk, every step in one block) a pipelined plan
/// must be predicted to replace it: the model is pessimistic about the resident run (on the
/// H100, `propagate_sponge` at 820^3 for 144 steps: predicted 0.00641 s/step, measured 0.00579)
/// and keeps it when arrays fit unless pipelining clearly pays. It does for short runs, whose
/// resident upload and download nothing overlaps: there the wavefront at 12 chunks x 48 steps,
/// predicted 0.00517, measured 0.00504 s/step (1.15x faster than resident).
pub const RESIDENT_MARGIN: f64 = 0.9;

/// [`choose`] over several schemes: the fastest prediction (the earlier scheme on a tie), with
/// the resident run kept unless a pipelined plan beats it by [`RESIDENT_MARGIN`].
pub fn choose_scheme(
    program: &Program,
    shape: &[usize],
    steps: usize,
    inputs: &TuneInputs,
    schemes: &[Scheme],
) -> Result<TuneChoice, Error> {
    let (mut best, mut resident): (Option<TuneChoice>, Option<TuneChoice>) = (None, None);
    let mut last_err = None;
    for &scheme in schemes {
        let t = TuneInputs {
            scheme,
            ..inputs.clone()
        };
        match choose(program, shape, steps, &t) {
            Ok(c) if c.chunks == 1 && c.block_steps >= steps.max(1) => {
                resident.get_or_insert(c);
            }
            Ok(c) => {
                if best
                    .as_ref()
                    .is_none_or(|b| c.predicted_seconds < b.predicted_seconds * (1.0 - 1e-9))
                {
                    best = Some(c);
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    match (resident, best, last_err) {
        (Some(r), Some(b), _) if b.predicted_seconds < RESIDENT_MARGIN * r.predicted_seconds => {
            Ok(b)
        }
        (Some(r), _, _) => Ok(r),
        (None, Some(b), _) => Ok(b),
        (None, None, Some(e)) => Err(e),
        (None, None, None) => Err(Error::Option("the tuner was given no scheme".into())),
    }
}

/// The pick with every candidate attached, or why there is none.
fn finish(
    best: Option<TuneChoice>,
    candidates: Vec<Candidate>,
    last_err: Option<String>,
    inputs: &TuneInputs,
) -> Result<TuneChoice, Error> {
    if let Some(mut b) = best {
        b.candidates = candidates;
        return Ok(b);
    }
    if let Some(c) = candidates.iter().find(|c| c.rejected.is_some()) {
        return Err(Error::DeviceMemory {
            need: c.device_bytes,
            free: inputs.device_memory,
            sets: inputs.sets(),
        });
    }
    Err(Error::Option(format!(
        "the tuner found no configuration that can be planned{}",
        last_err.map(|e| format!(" ({e})")).unwrap_or_default()
    )))
}
