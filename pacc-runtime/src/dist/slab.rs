//! Which planes each rank owns and holds: the balanced split of axis 0 and the deep halos.

use crate::error::{DistError, Error};
use crate::options::Options;
use crate::plan::HaloLink;
use crate::program::{Program, Stage};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// One rank's part of the global domain along axis 0.
///
/// The rank computes the final values of the planes `owned` and holds the planes `window`
/// (owned plus the deep halos its neighbours refresh before each block). Its arrays have the
/// shape [`Slab::local_shape`]: plane `p` of a local array is plane `window.start + p` of the
/// global one. Every rank computes the same split from the same arguments, so a slab is all a
/// rank needs to know about its neighbours.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slab {
    pub rank: usize,
    pub ranks: usize,
    /// The global shape of every array.
    pub global: Vec<usize>,
    pub owned: Range<usize>,
    pub window: Range<usize>,
    /// Time steps per block; the halos are `block_steps` times the per-step reach deep.
    pub block_steps: usize,
    /// Halo depth before and after the owned planes (before clamping to the domain).
    pub halo: (usize, usize),
    /// How the distributed tuner chose `block_steps`, when it did (for the report).
    #[serde(default)]
    pub tuner: Option<String>,
    /// Whether the ranks agreed to keep their slabs where they compute for the whole run, with
    /// the halos exchanged inside it ([`HaloMode`](crate::options::HaloMode); `dist::slab`
    /// decides). [`split`] leaves it off: the host exchange between blocks.
    #[serde(default)]
    pub resident: bool,
    /// Whether the host exchange between blocks is relayed GPU to GPU (NCCL through each
    /// rank's device) rather than carried by host MPI: every rank has a GPU of its own and
    /// NCCL, but a slab that does not stay on it (`dist::slab` decides).
    #[serde(default)]
    pub relay: bool,
}

impl Slab {
    /// The shape of this rank's arrays: the window's planes by the global inner extents.
    pub fn local_shape(&self) -> Vec<usize> {
        let mut s = self.global.clone();
        s[0] = self.window.len();
        s
    }

    /// The owned planes as local plane indices.
    pub fn owned_local(&self) -> Range<usize> {
        self.owned.start - self.window.start..self.owned.end - self.window.start
    }

    /// Bytes the rank receives per halo exchange: its halo planes of every array the run writes.
    pub fn exchange_bytes(&self, program: &Program) -> u64 {
        let plane: usize = self.global[1..].iter().product();
        let per_plane: usize = (exchanged(program).iter())
            .map(|&a| program.arrays[a].elem.size() * plane)
            .sum();
        ((self.window.len() - self.owned.len()) * per_plane) as u64
    }
}

/// The physical arrays a halo exchange moves: those the run writes (the others' halos never
/// change).
pub(crate) fn exchanged(program: &Program) -> Vec<usize> {
    (0..program.arrays.len())
        .filter(|&a| crate::binding::written_physically(program, a))
        .collect()
}

/// How far one time step's statements reach along axis 0, before and after a plane: the sum
/// over the step's kernels of each one's widest read (a kernel reading what an earlier one
/// wrote widens the cone by both reaches).
pub fn reach_per_step(program: &Program) -> (usize, usize) {
    let (mut back, mut fwd) = (0usize, 0usize);
    for stage in &program.step {
        if let Stage::Kernel(k) = *stage {
            let (b, f) = program.kernels[k].axis0_reach();
            back += b;
            fwd += f;
        }
    }
    (back, fwd)
}

/// The time steps per block of a distributed run of `steps` steps: the option, else the
/// directive's clause, else the single-node default (clamped to the steps).
pub fn block_steps(program: &Program, planes: usize, steps: usize, opts: &Options) -> usize {
    crate::config::plan_options(program, planes, steps, opts).block_steps
}

/// The balanced split of `global` (the arrays' shape) over `ranks` ranks for a run of `steps`
/// steps with `opts`: rank r owns the r-th of `ranks` nearly equal ranges of planes (the first
/// ones one plane more when they do not divide evenly) and holds `block_steps x reach` halo
/// planes on each side where it has a neighbour.
///
/// Errors: more ranks than planes, or a rank owning fewer planes than the halo its neighbour
/// needs (the halo of one block comes from the immediate neighbour only).
pub fn split(
    program: &Program,
    global: &[usize],
    steps: usize,
    ranks: usize,
    opts: &Options,
) -> Result<Vec<Slab>, Error> {
    let n0 = global.first().copied().unwrap_or(0);
    if ranks == 0 || ranks > n0 {
        return Err(DistError::TooManyRanks { ranks, planes: n0 }.into());
    }
    let k = block_steps(program, n0, steps, opts);
    let (back, fwd) = reach_per_step(program);
    let halo = (k * back, k * fwd);
    let owned: Vec<Range<usize>> = (0..ranks)
        .map(|r| crate::plan::owned(n0, ranks, r))
        .collect();
    let mut slabs = Vec::with_capacity(ranks);
    for (r, own) in owned.iter().enumerate() {
        // A neighbour's halo on this side must come from this rank's owned planes alone.
        let need = match (r > 0, r + 1 < ranks) {
            (true, true) => halo.0.max(halo.1),
            (true, false) => halo.1,
            (false, true) => halo.0,
            (false, false) => 0,
        };
        if own.len() < need {
            return Err(DistError::SlabThinnerThanHalo {
                rank: r,
                planes: own.len(),
                halo: need,
                block_steps: k,
                reach: back.max(fwd),
            }
            .into());
        }
        let lo = if r > 0 { own.start - halo.0 } else { 0 };
        let hi = if r + 1 < ranks { own.end + halo.1 } else { n0 };
        slabs.push(Slab {
            rank: r,
            ranks,
            global: global.to_vec(),
            owned: own.clone(),
            window: lo..hi,
            block_steps: k,
            halo,
            tuner: None,
            resident: false,
            relay: false,
        });
    }
    Ok(slabs)
}

/// Rank `me`'s neighbours in `slabs`: per neighbour, the planes it sends (its owned planes the
/// neighbour holds as halo) and receives (its halo, the neighbour's owned planes), in the
/// rank's local plane numbers.
pub fn links(slabs: &[Slab], me: usize) -> Vec<HaloLink> {
    let slab = &slabs[me];
    let local = |r: Range<usize>| r.start - slab.window.start..r.end - slab.window.start;
    let mut v = Vec::new();
    if me > 0 {
        let left = &slabs[me - 1];
        v.push(HaloLink {
            peer: me - 1,
            send: local(slab.owned.start..left.window.end),
            recv: local(slab.window.start..slab.owned.start),
        });
    }
    if let Some(right) = slabs.get(me + 1) {
        v.push(HaloLink {
            peer: me + 1,
            send: local(right.window.start..slab.owned.end),
            recv: local(slab.owned.end..slab.window.end),
        });
    }
    v
}
