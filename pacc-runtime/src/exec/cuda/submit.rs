//! Phase 2 of a CUDA run: every plan operation onto its stream, bracketed by a start and an end
//! event, after waits for the end events of its dependencies on other streams. The host thread
//! never blocks while submitting; at the end it waits for every stream. On an error, whatever
//! was enqueued is drained before returning, so nothing writes the user's arrays afterwards.

use super::bounce::Bounce;
use super::defer::Deferral;
use super::driver::{self, Stream};
use super::launch::{self, Args, KernelArgs};
use super::prepare::{Compiled, Resources};
use super::rows::Segment;
use super::stream::{host_copy, HostCopy};
use crate::error::Error;
use crate::exec::{Gate, Peers, Tracker};
use crate::fault::{self, Site};
use crate::invocation::Invocation;
use crate::memcopy::STAGE_PIECE;
use crate::plan::{HostSide, Op, OpKind, Plan};
use crate::program::Program;
use crate::progress::{OnProgress, StepCounter};
use std::ffi::c_void;
use std::ops::Range;

/// Submits every operation of `plan` and waits for the streams. Returns, per op, the first of
/// its reduction result slots (`usize::MAX` for ops without reductions). On an error the
/// streams are drained, exactly the operations whose end events completed count as finished in
/// `tracker`, and the error comes back through [`Tracker::fail`].
pub(super) fn submit(
    program: &Program,
    plan: &Plan,
    inv: &Invocation<'_>,
    compiled: &Compiled,
    res: &mut Resources,
    tracker: &mut Tracker,
    outside: Outside<'_>,
) -> Result<Vec<usize>, Error> {
    let Outside { on_progress, peers } = outside;
    let ndim = plan.shape.len();
    let dplane = res.rows.plane_len();
    let mut s = Submit {
        program,
        plan,
        inv,
        compiled,
        res,
        pbytes: plan.elem_sizes.iter().map(|e| e * plan.plane_len).collect(),
        dbytes: (plan.elem_sizes.iter()).map(|e| e * dplane).collect(),
        n: [
            plan.shape[0] as i64,
            plan.shape[1] as i64,
            if ndim == 3 { plan.shape[2] as i64 } else { 1 },
        ],
        slot: 0,
        op_slot: vec![usize::MAX; plan.ops.len()],
        recorded: vec![false; plan.ops.len()],
        counter: StepCounter::new(plan, on_progress),
        peers,
        user_writes: vec![None; plan.streams.max(1)],
        gates: peers.map(|p| p.gates()).unwrap_or_default(),
    };
    // SAFETY: raw driver calls on buffers we allocated with the sizes the plan gives; host
    // pointers are the caller's arrays (borrowed for the call) or our staging buffers;
    // `plan::race::check` guarantees that unordered ops never touch the same bytes.
    match unsafe { s.all(tracker) } {
        Ok(()) => {
            for i in 0..plan.ops.len() {
                tracker.finished(plan, i);
            }
            Ok(s.op_slot)
        }
        Err(e) => {
            // SAFETY: draining streams we created; querying events we recorded.
            unsafe {
                match s.peers {
                    None => s.drain(tracker, true),
                    Some(p) => {
                        // What has completed so far is real. Once the pending exchanges give
                        // up, what waited for them runs on halos that never came: it counts as
                        // started, never as finished.
                        s.count_done(tracker);
                        p.fail(&e);
                        s.drain(tracker, false);
                    }
                }
            }
            Err(tracker.fail(e))
        }
    }
}

/// Who a run answers to besides its caller: the progress callback, and the other ranks that
/// its halo exchanges meet.
#[derive(Clone, Copy, Default)]
pub(super) struct Outside<'a> {
    pub on_progress: Option<&'a OnProgress>,
    pub peers: Option<&'a dyn Peers>,
}

struct Submit<'a, 'i> {
    program: &'a Program,
    plan: &'a Plan,
    inv: &'a Invocation<'i>,
    compiled: &'a Compiled,
    res: &'a mut Resources,
    /// Bytes of one plane of each array on the host, and in the device buffers (padded rows).
    pbytes: Vec<usize>,
    dbytes: Vec<usize>,
    n: [i64; 3],
    /// Next free reduction result slot.
    slot: usize,
    op_slot: Vec<usize>,
    /// Per operation, whether its end event has been recorded.
    recorded: Vec<bool>,
    /// Steps done, reported as each block's kernels complete (`crate::progress`).
    counter: StepCounter,
    /// What carries the plan's halo exchanges, if it has any.
    peers: Option<&'a dyn Peers>,
    /// Per stream, the last operation enqueued on it that wrote the user's arrays.
    user_writes: Vec<Option<usize>>,
    /// Host planes an exchange beside the run still reads or fills.
    gates: Vec<Gate>,
}

impl Submit<'_, '_> {
    /// # Safety
    /// See [`submit`].
    unsafe fn all(&mut self, tracker: &mut Tracker) -> Result<(), Error> {
        let plan = self.plan;
        let streams = &self.res.streams.0;
        let origin = self.res.origin();
        driver::event_record(origin, streams[0])?;
        for &s in &streams[1..] {
            driver::stream_wait(s, origin)?;
        }
        // Held-back writes would leave plan order, which one stream needs (serial runs).
        let serial = self.res.serial;
        if let Some(p) = self.res.pinning.as_mut().filter(|p| !p.overlap || serial) {
            p.pinner.wait_all()?;
        }
        // While the arrays are being page-locked, writes to them wait (`defer.rs`).
        let pinning = self.res.pinning.as_ref();
        let mut defer = Deferral::new(plan, pinning.is_some_and(|p| !p.pinner.all_registered()));
        for i in 0..plan.ops.len() {
            if !defer.offer(plan, i) {
                continue;
            }
            self.enqueue(i, tracker)?;
            let pinned = |s: &Self| {
                s.res
                    .pinning
                    .as_ref()
                    .is_none_or(|p| p.pinner.all_registered())
            };
            if defer.holding() && pinned(self) {
                for j in defer.release() {
                    self.enqueue(j, tracker)?;
                }
            }
        }
        if defer.holding() {
            if let Some(p) = self.res.pinning.as_mut() {
                p.pinner.wait_all()?;
            }
            for j in defer.release() {
                self.enqueue(j, tracker)?;
            }
        }
        self.wait_and_unregister()?;
        for &s in &self.res.streams.0 {
            let what = "running the plan (stream synchronize)";
            match self.peers {
                None => driver::stream_sync(s, what)?,
                Some(p) => poll(p, || driver::stream_ready(s, what))?,
            }
        }
        Ok(())
    }

    /// Enqueues operation `i` once the pieces of the user's arrays it touches are page-locked,
    /// after waits for its dependencies on other streams, between its start and end events.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn enqueue(&mut self, i: usize, tracker: &mut Tracker) -> Result<(), Error> {
        let plan = self.plan;
        let op = &plan.ops[i];
        if let Some(p) = self.res.pinning.as_mut() {
            p.pinner.wait(&p.plan.needs[i])?;
        }
        fault::hit(Site::of(&op.kind), || {
            format!(
                "plan operation {i}, {} of block {} chunk {}",
                op.kind.describe(self.program),
                op.block,
                op.chunk
            )
        })?;
        // Serially, plan order (a topological order: dependencies point backwards) on one
        // stream satisfies every dependency.
        let lane = |j: usize| {
            if self.res.serial {
                0
            } else {
                plan.ops[j].stream
            }
        };
        let st = self.res.streams.0[lane(i)];
        for &d in &op.deps {
            if lane(d) != lane(i) {
                driver::stream_wait(st, self.res.end(d))?;
            }
        }
        let gates = self.gate_events(op);
        for &e in &gates {
            driver::stream_wait(st, e)?;
        }
        driver::event_record(self.res.start(i), st)?;
        let my_lane = lane(i);
        self.order_bounced_read(i, my_lane, &gates)?;
        // From here on the operation may execute.
        tracker.started(plan, i);
        self.op(i, op, st)?;
        driver::event_record(self.res.end(i), st)?;
        self.recorded[i] = true;
        if writes_user(&op.kind) {
            self.user_writes[my_lane] = Some(i);
        }
        Ok(())
    }

    /// A bounced upload's host copies run on the rings' own stream, which the waits above do
    /// not order: they must follow whatever the operation waits for that wrote the user's
    /// arrays, so the inbound stream waits for the operation's dependencies and for the last
    /// write to user memory on its own stream (stream order counts as a dependency), and for
    /// its `gates`.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn order_bounced_read(
        &self,
        i: usize,
        lane: usize,
        gates: &[driver::Event],
    ) -> Result<(), Error> {
        let op = &self.plan.ops[i];
        let reads_user = matches!(
            op.kind,
            OpKind::HtoD {
                from: HostSide::User,
                ..
            }
        );
        let Some(b) = self.res.bounce.as_ref().filter(|_| reads_user) else {
            return Ok(());
        };
        let before = op.deps.iter().copied().chain(self.user_writes[lane]);
        let mut events: Vec<_> = before.map(|d| self.res.end(d)).collect();
        events.extend_from_slice(gates);
        b.inbound_after(&events)
    }

    /// The events of the gates (`exec::Gate`) operation `op` must wait for: those on the
    /// user's planes it reads or writes.
    fn gate_events(&self, op: &Op) -> Vec<driver::Event> {
        let (array, planes, writes) = match op.kind {
            OpKind::HtoD {
                array,
                ref planes,
                from: HostSide::User,
                ..
            }
            | OpKind::StageIn {
                array, ref planes, ..
            } => (array, planes, false),
            OpKind::DtoH {
                array,
                ref planes,
                to: HostSide::User,
                ..
            }
            | OpKind::StageOut {
                array, ref planes, ..
            } => (array, planes, true),
            _ => return Vec::new(),
        };
        (self.gates.iter())
            .filter(|g| g.array == array && (writes || !g.writes_only))
            .filter(|g| g.planes.start < planes.end && planes.start < g.planes.end)
            .map(|g| g.event as driver::Event)
            .collect()
    }

    /// While the device works: reports progress as each watched kernel ends, and unregisters
    /// each piece of the user's arrays once the last operation touching it has ended, in plan
    /// order, so that little is left to unregister when the last operation ends.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn wait_and_unregister(&mut self) -> Result<(), Error> {
        let plan = self.plan;
        let mut waits: Vec<(usize, Option<usize>)> = self
            .counter
            .watched(plan)
            .into_iter()
            .map(|i| (i, None))
            .collect();
        if let Some(p) = &self.res.pinning {
            let last = p.plan.pieces.iter().enumerate();
            waits.extend(last.map(|(id, piece)| (piece.last, Some(id))));
        }
        waits.sort_by_key(|w| w.0);
        for (i, piece) in waits {
            let (end, what) = (self.res.end(i), "waiting for an operation");
            match self.peers {
                None => driver::event_sync(end, what)?,
                Some(p) => poll(p, || driver::event_ready(end, what))?,
            }
            match (piece, self.res.pinning.as_mut()) {
                (Some(id), Some(p)) => p.pinner.unregister(id),
                _ => self.counter.finished(plan, i),
            }
        }
        Ok(())
    }

    /// Waits for whatever was enqueued (host-function copies included), then, with `count`,
    /// counts as finished exactly the operations whose end events are known complete.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn drain(&self, tracker: &mut Tracker, count: bool) {
        let rings = self.res.bounce.as_ref().map_or(&[][..], |b| b.streams());
        for &s in rings.iter().chain(&self.res.streams.0) {
            let _ = driver::stream_sync(s, "draining");
        }
        if count {
            self.count_done(tracker);
        }
    }

    /// Counts as finished the operations whose end events are known complete.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn count_done(&self, tracker: &mut Tracker) {
        for i in (0..self.recorded.len()).filter(|&i| self.recorded[i]) {
            if driver::event_done(self.res.end(i)) {
                tracker.finished(self.plan, i);
            }
        }
    }

    /// Enqueues operation `i` on `st`.
    ///
    /// # Safety
    /// See [`submit`].
    unsafe fn op(&mut self, i: usize, op: &Op, st: Stream) -> Result<(), Error> {
        let plan = self.plan;
        let codec = || {
            self.res
                .codec
                .as_ref()
                .ok_or_else(|| Error::Internal("a codec operation without a codec".into()))
        };
        match &op.kind {
            &OpKind::HtoD {
                array,
                set,
                base,
                ref planes,
                from: HostSide::Compressed,
            } => codec()?.copy(plan, array, set, base, planes, true, st),
            &OpKind::DtoH {
                array,
                set,
                base,
                ref planes,
                to: HostSide::Compressed,
            } => codec()?.copy(plan, array, set, base, planes, false, st),
            &OpKind::Encode {
                array,
                set,
                base,
                ref planes,
            } => {
                let buf = self.res.dev[set][array].ptr;
                codec()?.launch(plan, array, set, base, planes, true, buf, st)
            }
            &OpKind::Decode {
                array,
                set,
                base,
                ref planes,
            } => {
                let buf = self.res.dev[set][array].ptr;
                codec()?.launch(plan, array, set, base, planes, false, buf, st)
            }
            &OpKind::HtoD {
                array,
                set,
                base,
                ref planes,
                from,
            } => self.htod(array, set, base, planes, from, st),
            &OpKind::DtoH {
                array,
                set,
                base,
                ref planes,
                to,
            } => self.dtoh(array, set, base, planes, to, st),
            &OpKind::DtoD {
                array,
                from_set,
                from_base,
                to_set,
                to_base,
                ref planes,
            } => {
                let src = self.dev_ptr(array, from_set, from_base, planes.start);
                let dst = self.dev_ptr(array, to_set, to_base, planes.start);
                self.copy(dst, src, planes.len() * self.dbytes[array], st)
            }
            &OpKind::StageIn {
                array,
                set,
                base,
                ref planes,
            } => self.stage(array, set, base, planes, true, st),
            &OpKind::StageOut {
                array,
                set,
                base,
                ref planes,
            } => self.stage(array, set, base, planes, false, st),
            OpKind::Kernel { .. } => self.kernel(i, op, st),
            OpKind::Point { .. } => self.point(op, st),
            OpKind::Exchange {
                set,
                base,
                arrays,
                links,
                ..
            } => {
                let peers = self.peers.ok_or_else(crate::exec::peers::missing)?;
                let at = |a: usize, p: usize| (self.dev_ptr(a, *set, *base, p), self.dbytes[a]);
                let transfers = crate::exec::peers::transfers(arrays, links, at);
                peers.exchange_device(&transfers, st as *mut c_void)
            }
        }
    }

    /// The kernels' `pacc_rp`, if the program's kernels take it.
    fn rp(&self) -> Option<i64> {
        self.program.row_pitch.then_some(self.res.rows.pitch as i64)
    }

    /// Host address of `planes` of `array` on `side` (the user's array or set `set`'s staging
    /// buffer, whose plane 0 is plane `base`).
    fn host_ptr(
        &self,
        array: usize,
        set: usize,
        base: usize,
        start: usize,
        side: HostSide,
    ) -> *mut u8 {
        let pb = self.pbytes[array];
        // SAFETY (of the offsets): `start` lies in the array, and in the staging window at
        // `base` for staging sides (the plan's invariants).
        unsafe {
            match side {
                HostSide::User => self.inv.arrays[array].ptr.add(start * pb),
                HostSide::Staging | HostSide::Compressed => {
                    self.res.staging[set][array].ptr.add((start - base) * pb)
                }
            }
        }
    }

    /// Device address of plane `start` of `array` in set `set`'s buffer, whose plane 0 is `base`.
    fn dev_ptr(&self, array: usize, set: usize, base: usize, start: usize) -> u64 {
        self.res.dev[set][array].ptr + ((start - base) * self.dbytes[array]) as u64
    }

    /// `planes` of `array` between `host` and `dev`: one flat copy when the device rows are
    /// the host's, else one strided copy of every row, cut where the host side crosses from
    /// one page-locked piece of a user's array to the next (`user`). A user's array the run
    /// does not page-lock goes through the bounce rings (`bounce.rs`).
    #[allow(clippy::too_many_arguments)]
    unsafe fn transfer(
        &mut self,
        array: usize,
        dev: u64,
        host: *mut u8,
        planes: usize,
        to_device: bool,
        user: bool,
        st: Stream,
    ) -> Result<(), Error> {
        let n = planes * self.pbytes[array];
        if n == 0 {
            return Ok(());
        }
        let cuts = match (&self.res.pinning, user) {
            (Some(p), true) => p.plan.cuts_within(host as usize..host as usize + n),
            _ => Vec::new(),
        };
        let rows = self.res.rows;
        let elem = self.plan.elem_sizes[array];
        let (row, pitch) = (rows.len * elem, rows.pitch * elem);
        match self.res.bounce.as_mut().filter(|_| user) {
            None => {
                for seg in rows.segments(n, elem, &cuts) {
                    segment(seg, dev, host, to_device, row, pitch, st)?;
                }
            }
            Some(b) => {
                for seg in rows.segments(n, elem, &[]) {
                    bounced(b, seg, dev, host, to_device, row, pitch, st)?;
                }
            }
        }
        Ok(())
    }

    unsafe fn htod(
        &mut self,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        from: HostSide,
        st: Stream,
    ) -> Result<(), Error> {
        let dst = self.dev_ptr(array, set, base, planes.start);
        let src = self.host_ptr(array, set, base, planes.start, from);
        let user = from == HostSide::User;
        self.transfer(array, dst, src, planes.len(), true, user, st)
    }

    unsafe fn dtoh(
        &mut self,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        to: HostSide,
        st: Stream,
    ) -> Result<(), Error> {
        let src = self.dev_ptr(array, set, base, planes.start);
        let dst = self.host_ptr(array, set, base, planes.start, to);
        let user = to == HostSide::User;
        self.transfer(array, src, dst, planes.len(), false, user, st)
    }

    /// `n` bytes from `src` to `dst` on the device, by pacc's copy kernel (see
    /// `device::INTERNAL_SOURCE` for why not a copy engine).
    unsafe fn copy(&self, dst: u64, src: u64, n: usize, st: Stream) -> Result<(), Error> {
        if n == 0 {
            return Ok(());
        }
        let mut a = Args::new();
        a.ptr(src);
        a.ptr(dst);
        a.i64(n as i64);
        let blocks = (n.div_ceil(16 * 256) as u32).clamp(1, self.compiled.copy_blocks.max(1));
        let mut params = a.params();
        let what = "launching the device-to-device copy kernel";
        driver::launch(
            self.compiled.copy,
            (blocks, 1, 1),
            (256, 1, 1),
            st,
            &mut params,
            what,
        )
    }

    /// A staging copy (user array <-> staging buffer) as a host function on `st`.
    unsafe fn stage(
        &mut self,
        array: usize,
        set: usize,
        base: usize,
        planes: &Range<usize>,
        into_staging: bool,
        st: Stream,
    ) -> Result<(), Error> {
        let n = planes.len() * self.pbytes[array];
        let user = self.host_ptr(array, set, base, planes.start, HostSide::User);
        let stg = self.host_ptr(array, set, base, planes.start, HostSide::Staging);
        let (src, dst) = if into_staging {
            (user as *const u8, stg)
        } else {
            (stg as *const u8, user)
        };
        if n > 0 {
            let c = Box::new(HostCopy {
                src,
                dst,
                len: n,
                piece: STAGE_PIECE,
                stores: crate::memcopy::STAGE_STORES,
            });
            let p = &*c as *const HostCopy as *mut c_void;
            self.res.host_copies.push(c);
            driver::launch_host_func(st, host_copy, p)?;
        }
        Ok(())
    }

    /// The array pointers of a kernel or point statement of set `set` at `base`. Kernels
    /// index every array as `(z - base)` planes from its pointer; for an array in the ring,
    /// whose slot 0 holds plane `ring_base`, the pointer is the ring's plane `base - ring_base`,
    /// so the same index lands in the ring (`validate` checked `ring_base <= base`).
    fn array_ptrs(
        &self,
        args: &[usize],
        set: usize,
        base: usize,
        ring_base: Option<usize>,
    ) -> Vec<u64> {
        let ring = self.plan.ring.as_ref().map(|r| r.set);
        args.iter()
            .map(|&p| match (ring, ring_base) {
                (Some(r), Some(rb)) if self.plan.in_ring(p) => self.dev_ptr(p, r, rb, base),
                _ => self.res.dev[set][p].ptr,
            })
            .collect()
    }

    /// Kernel op `i`, then one combine launch per reduction into the op's result slots.
    unsafe fn kernel(&mut self, i: usize, op: &Op, st: Stream) -> Result<(), Error> {
        let OpKind::Kernel {
            kernel,
            set,
            base,
            step,
            ref planes,
            ref owned,
            ref args,
            ring_base,
        } = op.kind
        else {
            return Err(Error::Internal("not a kernel operation".into()));
        };
        let kd = &self.program.kernels[kernel];
        let g = &self.compiled.geoms[kernel];
        let nred = kd.reductions.len();
        let ptrs = self.array_ptrs(args, set, base, ring_base);
        let sptrs: Vec<u64> = self.res.slices.iter().map(|s| s.ptr).collect();
        let partials = self.res.scratch[op.stream].ptr;
        let pts = crate::fuse::point_coords(self.program, &self.inv.points);
        let ka = KernelArgs {
            owned: (owned.start, owned.end),
            base,
            n: self.n,
            rp: self.rp(),
            t: self.program.time_of(self.inv.t0, step),
            arrays: &ptrs,
            scalars: &self.inv.scalars,
            slices: &sptrs,
            points: &pts,
            partials,
            reductions: nred,
        };
        let ndim = self.plan.shape.len();
        launch::launch(g, &kd.name, planes.start, planes.end, &ka, st, ndim)?;
        if nred == 0 {
            return Ok(());
        }
        let total = g.blocks(planes.len());
        self.op_slot[i] = self.slot;
        for (j, &r) in kd.reductions.iter().enumerate() {
            let mut a = Args::new();
            a.ptr(partials + (8 * j * total) as u64);
            a.i64(total as i64);
            a.ptr(self.res.results.ptr + (8 * (self.slot + j)) as u64);
            let mut params = a.params();
            let what = "launching the reduction combine kernel";
            driver::launch(
                self.compiled.rfuncs[r],
                (1, 1, 1),
                (256, 1, 1),
                st,
                &mut params,
                what,
            )?;
        }
        self.slot += nred;
        Ok(())
    }

    unsafe fn point(&self, op: &Op, st: Stream) -> Result<(), Error> {
        let OpKind::Point {
            point,
            set,
            base,
            step,
            ref args,
            ring_base,
            ..
        } = op.kind
        else {
            return Err(Error::Internal("not a point operation".into()));
        };
        let ptrs = self.array_ptrs(args, set, base, ring_base);
        let sptrs: Vec<u64> = self.res.slices.iter().map(|s| s.ptr).collect();
        let ka = KernelArgs {
            owned: (0, 0),
            base,
            n: self.n,
            rp: self.rp(),
            t: self.program.time_of(self.inv.t0, step),
            arrays: &ptrs,
            scalars: &self.inv.scalars,
            slices: &sptrs,
            points: &[],
            partials: 0,
            reductions: 0,
        };
        let name = &self.program.points[point].name;
        launch::launch_point(
            self.compiled.pfuncs[point],
            name,
            &self.inv.points[point],
            &ka,
            st,
        )
    }
}

/// Whether an operation writes the user's arrays.
fn writes_user(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::DtoH {
            to: HostSide::User,
            ..
        } | OpKind::StageOut { .. }
    )
}

/// Enqueues one segment of a transfer between `host` and `dev` on `st`: `row` host bytes per
/// row, `pitch` device bytes per row.
///
/// # Safety
/// The segment lies within the transfer's host and device ranges, which stay valid and
/// untouched by unordered work until `st` has passed it.
unsafe fn segment(
    seg: Segment,
    dev: u64,
    host: *mut u8,
    to_device: bool,
    row: usize,
    pitch: usize,
    st: Stream,
) -> Result<(), Error> {
    match seg {
        Segment::Flat {
            host: h,
            dev: d,
            len,
        } => {
            let (h, d) = (host.add(h), dev + d as u64);
            if to_device {
                driver::copy_htod_async(d, h, len, st, "cuMemcpyHtoDAsync")
            } else {
                driver::copy_dtoh_async(h, d, len, st, "cuMemcpyDtoHAsync")
            }
        }
        Segment::Rows {
            host: h,
            dev: d,
            rows: k,
        } => {
            let shape = driver::Strided {
                width: row,
                rows: k,
                host: row,
                device: pitch,
            };
            let (h, d) = (host.add(h), dev + d as u64);
            driver::copy_strided_async(d, h, shape, to_device, st, "cuMemcpy2DAsync")
        }
    }
}

/// [`segment`] through the bounce rings: the host side in slot-sized pieces of whole rows,
/// each piece's device side a [`segment`] of its own from the slot.
///
/// # Safety
/// As [`segment`].
#[allow(clippy::too_many_arguments)]
unsafe fn bounced(
    b: &mut Bounce,
    seg: Segment,
    dev: u64,
    host: *mut u8,
    to_device: bool,
    row: usize,
    pitch: usize,
    st: Stream,
) -> Result<(), Error> {
    // Host offset, device offset, bytes on the host, and the unit pieces keep whole.
    let (h, d, len, unit) = match seg {
        Segment::Flat { host, dev, len } => (host, dev, len, 1),
        Segment::Rows { host, dev, rows } => (host, dev, rows * row, row),
    };
    // The piece at host offset `off` (bytes `n`) of the segment, as a segment from the slot.
    let piece = move |off: usize, n: usize| match seg {
        Segment::Flat { .. } => (
            Segment::Flat {
                host: 0,
                dev: 0,
                len: n,
            },
            d + off,
        ),
        Segment::Rows { .. } => (
            Segment::Rows {
                host: 0,
                dev: 0,
                rows: n / row,
            },
            d + off / row * pitch,
        ),
    };
    let (host, dev) = (host.add(h), dev);
    if to_device {
        b.upload(host, len, unit, st, |slot, off, n| {
            let (s, at) = piece(off, n);
            segment(s, dev + at as u64, slot as *mut u8, true, row, pitch, st)
        })
    } else {
        b.download(host, len, unit, st, |slot, off, n| {
            let (s, at) = piece(off, n);
            segment(s, dev + at as u64, slot, false, row, pitch, st)
        })
    }
}

/// Waits until `ready` says yes, asking `peers` in between whether another rank has failed (a
/// blocking wait would never return if a neighbour's exchange never comes).
fn poll(peers: &dyn Peers, mut ready: impl FnMut() -> Result<bool, Error>) -> Result<(), Error> {
    while !ready()? {
        peers.check()?;
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    Ok(())
}
