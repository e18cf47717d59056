//! The distributed session: check the call on every rank, then per block exchange halos, run
//! the single-node pipeline on the window, agree on failures and combine the reductions.

use super::comm::{self, agree, Communicator};
use super::peers::{MpiPeers, Pending};
use super::slab::{split, Slab};
use super::wait::Patience;
use super::{checkpoint as dck, local, resident};
use crate::checkpoint;
use crate::error::{DistError, Error};
use crate::exec::backend::{self, Backend};
use crate::exec::reduce::combine;
use crate::exec::{reduction_identity, Peers};
use crate::invocation::{HostArray, Invocation, RunOutput};
use crate::options::{BackendChoice, Options};
use crate::plan::{self, Plan, PlanOptions};
use crate::program::{Program, Stage};
use crate::report::Report;
use crate::settled::{Fixed, Settled};
use mpi::traits::Communicator as _;
use std::time::Instant;

/// Runs one call of a translated function on this rank's slab; every rank of `comm` calls it
/// with its own [`Slab`] and local arrays (shape [`Slab::local_shape`], planes
/// [`Slab::window`] of the global arrays, halos included). Scalars, slices, point indices,
/// `t0` and `steps` are the global call's and must be equal on every rank.
///
/// On return the rank's owned planes hold the serial function's result (bit for bit on the CPU
/// backend); halo planes hold intermediate values. Reductions are the global ones on every
/// rank. Any error is returned by every rank (the failing rank's own, the others
/// [`DistError::RankFailed`] naming it), so no rank is left waiting.
pub fn run(
    comm: &Communicator,
    slab: &Slab,
    program: &Program,
    inv: Invocation<'_>,
    opts: &Options,
) -> Result<RunOutput, Error> {
    let start = Instant::now();
    // Every wait of the call gives up after the options' timeout (`wait.rs`).
    let _patience = Patience::set(opts.mpi_timeout);
    // Loop bounds counted from scalars take the call's values (equal on every rank), so the
    // split, the local programs and the plans see concrete ranges only.
    let resolved = agree(comm, crate::validate::resolve(program, &inv))?;
    let program: &Program = &resolved;
    let slabs = agree(comm, check_slab(comm, slab, program, &inv, opts))?;
    agree(comm, consistent(comm, &inv))?;
    let me = slab.rank;
    let (lprog, inside) = local::program(program, slab, &inv.points);
    let mut inv = inv;
    inv.points = local::points(&inv.points, &inside, slab);
    inv.cpu = local::global_kernels(inv.cpu, slab);
    let settled = crate::config::settle(&lprog, opts);
    let ready = prepare(program, &lprog, slab, &inv, opts, &settled);
    let mut s = agree(comm, ready)?;
    let peers = match (slab.resident, s.backend) {
        (true, backend) => carrier(comm, backend, opts, &mut s.report)?,
        (false, _) => None,
    };
    // The host exchange between blocks: the resident run's carrier (at checkpoints), else
    // relayed through the GPUs where the ranks agreed on it, else host MPI.
    let relayed = match slab.relay {
        true => relay(comm, &mut s.report)?,
        false => None,
    };
    let mpi_peers = MpiPeers::new(comm);
    let host: &dyn Peers = match (&peers, &relayed) {
        (Some(p), _) => p.as_ref(),
        (None, Some(r)) => r,
        (None, None) => &mpi_peers,
    };
    // Resume: the committed step of every rank's checkpoint, verified before anything loads.
    let found = match (&opts.resume, inv.steps > 0) {
        (Some(r), true) => match &s.fp {
            Some(fp) => dck::find(r, &slabs, me, &lprog, &inv, fp),
            None => Ok(None),
        },
        _ => Ok(None),
    };
    let found = agree(comm, found)?;
    // Moved, not copied (a description is not `Copy`): bound to the names while a segment runs.
    let user: Vec<HostArray> = std::mem::take(&mut inv.arrays);
    let mut state = State {
        done: 0,
        gen: None,
        value: inv.reduction_init.clone(),
        times: Times::default(),
        blocks: 0,
    };
    if let Some((f, g)) = &found {
        agree(comm, checkpoint::load(f, &user))?;
        (state.done, state.gen, state.value) = (f.state.step, Some(*g), f.reductions());
    }
    let mut seg = Segments {
        comm,
        slabs: &slabs,
        me,
        program,
        lprog: &lprog,
        user,
        opts,
        settled: &settled,
        peers: peers.as_deref(),
        host,
        relay: relayed.as_ref(),
        plans: Vec::new(),
        resets: inv.reset_values.clone(),
        t0: inv.t0,
        steps: inv.steps,
    };
    inv.reset_values = lprog
        .resets
        .iter()
        .map(|r| reduction_identity(lprog.reductions[r.reduction].op))
        .collect();
    state.times.setup = start.elapsed().as_secs_f64();
    while state.done < seg.steps {
        seg.next(&mut s, &mut inv, &mut state)?;
    }
    let mut report = s.report;
    report.steps = seg.steps;
    report.wall_seconds = start.elapsed().as_secs_f64();
    let resident = peers.is_some();
    rank_notes(
        comm,
        slab,
        &mut report,
        &state.times,
        resident,
        host.carrier(),
    )?;
    Ok(RunOutput {
        reductions: state.value,
        swap_replays: crate::binding::swap_replays(program, seg.steps),
        report,
    })
}

/// Where a run stands between segments.
struct State {
    done: usize,
    gen: Option<usize>,
    value: Vec<f64>,
    times: Times,
    blocks: usize,
}

/// Seconds this rank spent, for the report.
#[derive(Default)]
struct Times {
    /// Host exchanges between segments (the part before the block).
    host_exchange: f64,
    /// Waiting after a block for the part of the host exchange that ran beside it.
    beside: f64,
    /// Executor calls (pipeline, or resident stepping with its exchanges).
    compute: f64,
    /// From the call to the first block: checks, set-up, page-locking, NCCL.
    setup: f64,
    /// Resident runs: the steps themselves, the exchanges' own time, and the kernel stream's
    /// idle time.
    stepping: f64,
    exchange: f64,
    exposed: f64,
}

/// The segments of a run: one block each on the host path; on the resident path as many
/// blocks as lie between two checkpoints (all of them without checkpoints), exchanging inside.
struct Segments<'a, 'c, 'h> {
    comm: &'a Communicator,
    slabs: &'a [Slab],
    /// This rank.
    me: usize,
    program: &'a Program,
    lprog: &'a Program,
    user: Vec<HostArray<'h>>,
    opts: &'a Options,
    settled: &'a Settled,
    peers: Option<&'a (dyn Peers + 'c)>,
    /// What carries the host exchange between segments.
    host: &'a (dyn Peers + 'c),
    /// The relay, when the host exchange goes through the GPUs: most of it then runs beside
    /// the next block (`beside.rs`).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    relay: Option<&'a Relayer>,
    /// Resident plans made so far, by their steps.
    plans: Vec<Plan>,
    resets: Vec<f64>,
    t0: i64,
    steps: usize,
}

impl<'a, 'h> Segments<'a, '_, 'h> {
    /// Steps of the segment that starts at `done`.
    fn len(&self, s: &Session, done: usize) -> usize {
        let left = self.steps - done;
        match self.peers {
            None if left >= s.full.steps => s.full.steps,
            None => s.tail.as_ref().map_or(s.full.steps, |t| t.steps),
            Some(_) => {
                let k = self.slabs[0].block_steps.max(1);
                let every = self.opts.checkpoint.as_ref().map(|c| c.every_blocks.max(1));
                every.map_or(left, |e| left.min(e * k))
            }
        }
    }

    /// The resident plan of `steps` steps, made once per length.
    fn resident_plan(
        &mut self,
        me: usize,
        steps: usize,
        inv: &Invocation<'_>,
    ) -> Result<usize, Error> {
        if let Some(i) = self.plans.iter().position(|p| p.steps == steps) {
            return Ok(i);
        }
        let planes: Vec<usize> = inv.points.iter().map(|p| p[0] as usize).collect();
        let mut p =
            resident::segment_plan(self.program, self.lprog, self.slabs, me, steps, &planes)?;
        local::reduce_within(&mut p, &self.slabs[me].owned_local());
        self.plans.push(p);
        Ok(self.plans.len() - 1)
    }

    /// Runs the next segment: the host exchange first (except at the start), then the
    /// executor, the reductions combined across ranks, and a checkpoint when one is due.
    fn next(
        &mut self,
        s: &mut Session,
        inv: &mut Invocation<'h>,
        st: &mut State,
    ) -> Result<(), Error> {
        let (comm, me) = (self.comm, self.me);
        let len = self.len(s, st.done);
        let resident = match self.peers {
            Some(_) => Some(agree(comm, self.resident_plan(me, len, inv))?),
            None => None,
        };
        let binding = checkpoint::binding_at(self.program, st.done);
        let t = Instant::now();
        let beside = match st.done > 0 {
            true => agree(comm, self.exchange_host(&binding))?,
            false => None,
        };
        st.times.host_exchange += t.elapsed().as_secs_f64();
        inv.arrays = crate::binding::bind(std::mem::take(&mut self.user), &binding);
        inv.t0 = self.t0 + st.done as i64;
        inv.steps = len;
        inv.reduction_init = (self.lprog.reductions.iter())
            .map(|d| reduction_identity(d.op))
            .collect();
        let t = Instant::now();
        let out = match (resident, self.peers) {
            (Some(i), Some(p)) => {
                let plan = &self.plans[i];
                let exec = s.backend.executor();
                exec.execute_with(self.lprog, plan, inv, self.settled, Some(p))
                    .map(|o| (o.reductions, o.report))
            }
            _ => {
                let plan = if len == s.full.steps {
                    &s.full
                } else {
                    s.tail.as_ref().unwrap_or(&s.full)
                };
                let beside_peers = beside.as_deref().map(|b| b as &dyn Peers);
                execute(s.backend, self.lprog, plan, inv, self.settled, beside_peers)
            }
        };
        self.user = crate::binding::unbind(std::mem::take(&mut inv.arrays), &binding);
        let waited = Instant::now();
        let ended = beside.map_or(Ok(()), |b| b.end());
        st.times.beside += waited.elapsed().as_secs_f64();
        let out = out.and_then(|o| ended.map(|_| o));
        let (partial, seg) = agree(comm, out)?;
        st.times.compute += t.elapsed().as_secs_f64();
        if resident.is_some() {
            st.times.stepping += seg.stages.stepping;
            st.times.exchange += seg.stages.exchange;
            st.times.exposed += resident::exposed_seconds(&seg);
        }
        st.value = combine_ranks(
            self.program,
            &st.value,
            &self.resets,
            &comm::gather(comm, &partial)?,
        );
        s.report.absorb(seg);
        st.done += len;
        st.blocks += len.div_ceil(self.slabs[me].block_steps.max(1));
        self.checkpoint(s, st)
    }

    /// The halo planes of the arrays the run writes, between this rank's host arrays and its
    /// neighbours'. When they are relayed through the GPUs, only the half the block needs at
    /// once is exchanged here; the other half is returned under way (`beside.rs`), the block
    /// binding the arrays as `binding` says.
    fn exchange_host(&self, binding: &[usize]) -> Result<Option<Box<dyn Pending + 'a>>, Error> {
        let arrays = super::slab::exchanged(self.program);
        let links = super::slab::links(self.slabs, self.me);
        let at = |a: usize, plane: usize| {
            let h = &self.user[a];
            let pb = h.bytes() / h.shape()[0].max(1);
            (h.ptr as u64 + (plane * pb) as u64, pb)
        };
        #[cfg(feature = "cuda")]
        if let Some(r) = self.relay {
            // Each array as the block's run indexes it.
            let run: Vec<(usize, u64, usize)> = (arrays.iter())
                .filter_map(|&p| {
                    let i = binding.iter().position(|&b| b == p)?;
                    let (base, pb) = at(p, 0);
                    Some((i, base, pb))
                })
                .collect();
            let h = super::beside::halves(self.me, &links, &run);
            // SAFETY: the halo planes received and the owned planes sent are disjoint ranges
            // of the rank's arrays, borrowed for the call; the block's run honours the gates.
            let b = unsafe { super::beside::Beside::start(r, &h, self.me) }?;
            return Ok(Some(Box::new(b)));
        }
        let _ = binding;
        let transfers = crate::exec::halo_transfers(&arrays, &links, at);
        // SAFETY: the halo planes received and the owned planes sent are disjoint ranges of
        // the rank's arrays, borrowed for the call, which nothing else touches meanwhile.
        unsafe { self.host.exchange_host(&transfers) }.map(|_| None)
    }

    /// Writes a checkpoint when one is due after the segment that just ended.
    fn checkpoint(&self, s: &Session, st: &mut State) -> Result<(), Error> {
        let (Some(c), Some(fp)) = (&self.opts.checkpoint, &s.fp) else {
            return Ok(());
        };
        if st.done >= self.steps || st.blocks % c.every_blocks.max(1) != 0 {
            return Ok(());
        }
        let me = self.me;
        let g = st.gen.map_or(0, |g: usize| 1 - g);
        let at = checkpoint::At {
            t0: self.t0,
            step: st.done,
            steps_total: self.steps,
            block_steps: self.slabs[me].block_steps,
            reductions: &st.value,
        };
        dck::write(
            self.comm, c, self.slabs, me, g, self.lprog, &self.user, fp, at,
        )?;
        st.gen = Some(g);
        Ok(())
    }
}

/// The report's line per rank: its planes, wall, executor time and exchanges; `host` names what carried the host exchanges.
fn rank_notes(
    comm: &Communicator,
    slab: &Slab,
    report: &mut Report,
    t: &Times,
    resident: bool,
    host: &str,
) -> Result<(), Error> {
    let mine = [
        slab.owned.len() as f64,
        report.wall_seconds,
        t.compute,
        t.host_exchange,
        t.exchange,
        t.exposed,
        t.stepping,
        t.beside,
        t.setup,
    ];
    for (r, f) in comm::gather(comm, &mine)?.iter().enumerate() {
        report.adjustments.push(if resident {
            format!(
                "rank {r}: {} planes, {:.3} s wall, {:.3} s on the device (upload, steps, \
                 download), {:.3} s stepping on the device, {:.3} s of halo exchanges of which \
                 {:.3} s not hidden (kernel stream idle), {:.3} s host exchange at checkpoints",
                f[0], f[1], f[2], f[6], f[4], f[5], f[3]
            )
        } else {
            format!(
                "rank {r}: {} planes, {:.3} s wall ({:.3} s before the first block), {:.3} s \
                 pipeline, {:.3} s halo exchange ({host}){}",
                f[0],
                f[1],
                f[8],
                f[2],
                f[3],
                match f[7] > 0.0 {
                    true => format!(
                        "; the pipeline includes {:.3} s waiting for the part of the exchanges \
                         that ran beside the blocks",
                        f[7]
                    ),
                    false => String::new(),
                }
            )
        });
    }
    Ok(())
}

/// NCCL for the host exchange between blocks, relayed through this rank's GPU (the ranks
/// agreed on it in `dist::slab`); when it cannot start on some rank, host MPI, with a note.
fn relay(comm: &Communicator, report: &mut Report) -> Result<Option<Relayer>, Error> {
    #[cfg(feature = "cuda")]
    {
        match start_nccl(comm, report) {
            Ok(p) => return Ok(Some(p)),
            Err(e) => report.adjustments.push(format!(
                "NCCL could not start ({e}); halos between blocks through host MPI"
            )),
        }
    }
    #[cfg(not(feature = "cuda"))]
    let _ = (comm, report);
    Ok(None)
}

/// NCCL over `comm`, agreed by every rank (an earlier call's communicator where every rank
/// kept one over the same ranks); the report says which, or how long it took to start (the
/// library, the communicator, the first round).
#[cfg(feature = "cuda")]
fn start_nccl(comm: &Communicator, report: &mut Report) -> Result<Relayer, Error> {
    let t = Instant::now();
    let (p, earlier) = agree(comm, super::nccl::NcclPeers::for_call(comm))?;
    report.adjustments.push(match earlier {
        true => "NCCL: the communicator of an earlier call over the same ranks".into(),
        false => format!(
            "NCCL started in {:.3} s (library, communicator, first exchange)",
            t.elapsed().as_secs_f64()
        ),
    });
    Ok(p)
}

/// What relays the host exchange through the GPUs, and its half running beside a block.
#[cfg(feature = "cuda")]
type Relayer = super::nccl::NcclPeers;
/// (Nothing without CUDA: `dist::slab` never asks for a relay there.)
#[cfg(not(feature = "cuda"))]
type Relayer = MpiPeers<'static>;
/// What carries a resident run's exchanges: MPI for the CPU backend's buffers, NCCL on the
/// GPU (agreed by every rank). When NCCL cannot start on some rank the run falls back to the
/// host exchange (`None`), unless `PACC_HALO=device` asked for it: then every rank fails.
fn carrier<'c>(
    comm: &'c Communicator,
    backend: Backend,
    opts: &Options,
    report: &mut Report,
) -> Result<Option<Box<dyn Peers + 'c>>, Error> {
    match backend {
        Backend::Cpu(_) => Ok(Some(Box::new(MpiPeers::new(comm)))),
        #[cfg(feature = "cuda")]
        Backend::Cuda => match start_nccl(comm, report) {
            Ok(p) => Ok(Some(Box::new(p))),
            Err(e) if opts.halo == crate::options::HaloMode::Device => Err(e),
            Err(e) => {
                report.adjustments.push(format!(
                    "NCCL could not start ({e}); halos through host memory between blocks"
                ));
                Ok(None)
            }
        },
        #[cfg(not(feature = "cuda"))]
        Backend::Cuda => {
            let _ = (opts, report);
            Ok(None)
        }
    }
}

/// The split every rank computes, checked against this rank's slab, communicator and arrays.
fn check_slab(
    comm: &Communicator,
    slab: &Slab,
    program: &Program,
    inv: &Invocation<'_>,
    opts: &Options,
) -> Result<Vec<Slab>, Error> {
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    let wrong = || DistError::WrongSlab {
        slab_rank: slab.rank,
        slab_ranks: slab.ranks,
        rank,
        ranks,
    };
    if (slab.rank, slab.ranks) != (rank, ranks) {
        return Err(wrong().into());
    }
    let o = Options {
        block_steps: Some(slab.block_steps),
        ..opts.clone()
    };
    let slabs = split(program, &slab.global, inv.steps, ranks, &o)?;
    let untuned = Slab {
        tuner: None,
        resident: false,
        relay: false,
        ..slab.clone()
    };
    if slabs[rank] != untuned {
        return Err(wrong().into());
    }
    let want = slab.local_shape();
    for (h, d) in inv.arrays.iter().zip(&program.arrays) {
        if h.shape() != want.as_slice() {
            return Err(DistError::SlabShape {
                name: d.name.clone(),
                rank,
                got: h.shape().to_vec(),
                want,
                window: slab.window.clone(),
                global: slab.global.clone(),
            }
            .into());
        }
    }
    Ok(slabs)
}

/// Every rank must make the same global call.
fn consistent(comm: &Communicator, inv: &Invocation<'_>) -> Result<(), Error> {
    let slices: Vec<(usize, u32)> = inv
        .slices
        .iter()
        .map(|s| {
            // SAFETY: the slice is alive and read-only for the whole call.
            let b = unsafe { std::slice::from_raw_parts(s.ptr, s.len * s.elem.size()) };
            (s.len, crc32fast::hash(b))
        })
        .collect();
    let call = format!(
        "{} {} {:?} {:?} {:?}",
        inv.t0, inv.steps, inv.points, inv.reduction_init, inv.reset_values
    );
    comm::same_everywhere(
        comm,
        &call,
        "the time range, the point statements' indices or the reductions' initial values",
        "every rank must make the same call; only the arrays differ (each rank's slab)",
    )?;
    comm::same_everywhere(
        comm,
        &format!("{:?} {slices:?}", inv.scalars),
        "the values of the kernels' scalars or slices",
        "a value computed from an array's extent along axis 0 (`let (nz, ..) = a.dim()`) is \
         the slab's on each rank; compute such values from the global shape or pass them as \
         arguments",
    )
}

/// What the blocks share: the backend, the plans, the checkpoint fingerprint, the report.
struct Session {
    backend: Backend,
    full: Plan,
    tail: Option<Plan>,
    /// What a checkpoint must agree with (runs that checkpoint or resume).
    fp: Option<checkpoint::Fingerprint>,
    report: Report,
    /// On the GPU, the rank's share of the device and its arrays page-locked for the run.
    #[cfg(feature = "cuda")]
    _device: Option<super::device::DeviceShare>,
}

fn prepare(
    program: &Program,
    lprog: &Program,
    slab: &Slab,
    inv: &Invocation<'_>,
    opts: &Options,
    settled: &Settled,
) -> Result<Session, Error> {
    opts.validate()?;
    crate::validate::call(lprog, inv)?;
    let backend = choose_backend(opts.backend, opts.source_of("backend"))?;
    if let Some(s) = settled.fuse {
        return Err(Error::Setting {
            setting: "fuse",
            value: s.to_string(),
            from: settled.fuse_from.clone(),
            problem: "a distributed run does not run fused kernels yet".into(),
            fix: "leave it unset (or 1) for a distributed run".into(),
        });
    }
    let shape = slab.local_shape();
    let k = slab.block_steps.min(inv.steps).max(1);
    let mut popts = crate::config::resolve(lprog, &shape, inv.steps, opts)?;
    popts.block_steps = k;
    let mut notes: Vec<String> = slab.tuner.iter().cloned().collect();
    // A resident run uploads its window once, page-locking it piece by piece beside the
    // upload, and plans its own single chunk: no locking up front, no tuner.
    let blocks = !slab.resident;
    #[cfg(feature = "cuda")]
    let (device, register_s) = match backend {
        Backend::Cuda if blocks => {
            let (d, s) = super::device::DeviceShare::new(&inv.arrays, &mut notes);
            (Some(d), s)
        }
        _ => (None, 0.0),
    };
    #[cfg(not(feature = "cuda"))]
    let register_s = 0.0;
    if let Some(probe) = backend.probe().filter(|_| blocks) {
        // The rank's chunks (and scheme, unless named) for its window at the agreed depth,
        // with its kernels timed on its own arrays.
        let at_depth = Settled {
            fixed: Fixed {
                block_steps: Some(k),
                ..settled.fixed
            },
            ..settled.clone()
        };
        let (tuned, note) = crate::tune::auto_plan_options(probe, lprog, inv, &at_depth, popts);
        probe.release();
        popts = tuned;
        notes.extend(note);
    }
    let planes: Vec<usize> = inv.points.iter().map(|p| p[0] as usize).collect();
    let mut full = plan::build(lprog, &shape, k, &planes, &popts)?;
    let mut tail = match inv.steps % k {
        0 => None,
        r => {
            let o = PlanOptions {
                chunks: full.chunks,
                ..popts.clone()
            };
            Some(plan::build(lprog, &shape, r, &planes, &o)?)
        }
    };
    let own = slab.owned_local();
    local::reduce_within(&mut full, &own);
    if let Some(t) = &mut tail {
        local::reduce_within(t, &own);
    }
    // The fingerprint reads every input array (69 GB a rank at 2100^3 on two GPUs): only
    // checkpoints and resuming need it, as on one node (`run.rs`).
    let fp = settled.durable.then(|| {
        let saved = (0..program.arrays.len())
            .map(|a| crate::binding::written_physically(program, a))
            .collect();
        checkpoint::fingerprint(lprog, inv, saved)
    });
    let mut report = Report::of_plan(program, backend.name(), None, &full);
    report.adjustments.extend(notes);
    report.stages.register = register_s;
    report.shape = slab.global.clone();
    report.bytes_htod = 0;
    report.bytes_dtoh = 0;
    report.bytes_dtod = 0;
    report.bytes_htod_raw = 0;
    report.bytes_dtoh_raw = 0;
    report.device_bytes = 0;
    Ok(Session {
        backend,
        full,
        tail,
        fp,
        report,
        #[cfg(feature = "cuda")]
        _device: device,
    })
}

/// The new global value of each reduction after a block, from every rank's partial (its owned
/// planes' contributions since the block's last reset, or since the block's start), in rank
/// order.
fn combine_ranks(
    program: &Program,
    before: &[f64],
    resets: &[f64],
    parts: &[Vec<f64>],
) -> Vec<f64> {
    let mut value = before.to_vec();
    for (r, d) in program.reductions.iter().enumerate() {
        let reset = program.step.iter().find_map(|s| match *s {
            Stage::Reset(i) if program.resets[i].reduction == r => Some(resets[i]),
            _ => None,
        });
        let total = parts.iter().fold(reduction_identity(d.op), |acc, p| {
            combine(d.op, d.elem, acc, p[r])
        });
        value[r] = combine(d.op, d.elem, reset.unwrap_or(value[r]), total);
    }
    value
}

/// The backend of a distributed call: chosen as for one process ([`backend::choose`]), on GPU
/// `local rank mod device count`; the serial backend does not run distributed.
fn choose_backend(choice: BackendChoice, from: String) -> Result<Backend, Error> {
    if choice == BackendChoice::Serial {
        return Err(Error::Option(
            "the serial backend does not run distributed; use `run_distributed` with the cpu or \
             cuda backend, or call `serial` on one process"
                .into(),
        ));
    }
    #[cfg(feature = "cuda")]
    crate::exec::cuda::prefer_device(super::local_rank());
    backend::choose(choice, Some(from))
}

/// One block on this rank: the partial reductions and the block's report.
fn execute(
    backend: Backend,
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    settled: &Settled,
    peers: Option<&dyn Peers>,
) -> Result<(Vec<f64>, Report), Error> {
    let out = backend
        .executor()
        .execute_with(program, plan, inv, settled, peers)?;
    Ok((out.reductions, out.report))
}
