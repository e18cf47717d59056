//! Page-locking the user's arrays off the critical path.
//!
//! Direct and shared transfers copy straight from the user's arrays, which must be page-locked
//! (`cuMemHostRegister`) before a copy touching them is enqueued: enqueued on pageable memory, a
//! copy goes through the driver's bounce buffers at a third of the rate. Registering everything
//! before the first operation cost a one-shot call on 96 GB 5.0 s of its 11.4 on the H100
//! (about 20 GB/s on one thread). Here the arrays are cut into page-aligned pieces at the
//! boundaries of the plan's host transfers ([`PinPlan`]); a few threads register the pieces in
//! the order the plan first touches them ([`Pinner`]), while the submitting thread enqueues each
//! operation as soon as the pieces it touches are registered, so registration runs beside the
//! transfers and kernels of earlier chunks; each piece is handed to one process-wide thread
//! ([`background`]) once the last operation touching it has completed. Unregistering waits for
//! the device to go idle and runs at about 45 GB/s on the H100's host, no faster on more
//! threads, so the pieces are unregistered after the run's teardown, but before the call
//! returns: a registration that outlived the call served a later mapping at the same address
//! the old bytes (H200, driver 580), so the caller could not safely free its arrays. Writes to the user's arrays are
//! enqueued only once every piece is registered (`defer.rs`): a failed registration, or a fault
//! injected into one (`Site::Register`), leaves the arrays untouched, and what was registered
//! is unregistered before the error returns.

use super::driver::RegisterError;
use crate::error::Error;
use crate::fault::{self, Fault, Site};
use crate::plan::{OpKind, Plan};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// Host page size: registrations cover whole pages, so pieces never share one.
pub(crate) const PAGE: usize = 4096;

/// Largest piece: a large array transferred whole still registers on several threads.
pub(crate) const MAX_PIECE: usize = 1 << 30;

/// One page-aligned range of host memory, registered as a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Address range (whole pages).
    pub range: Range<usize>,
    /// The first and last operation that touch it.
    pub first: usize,
    pub last: usize,
}

/// The pieces of a plan's host memory, in the order the plan first touches them, and the
/// pieces each operation touches.
#[derive(Clone, Debug, Default)]
pub(crate) struct PinPlan {
    pub pieces: Vec<Piece>,
    /// Per operation: indices into `pieces`.
    pub needs: Vec<Vec<usize>>,
}

impl PinPlan {
    /// Bytes the pieces cover.
    pub fn bytes(&self) -> usize {
        self.pieces.iter().map(|p| p.range.len()).sum()
    }

    /// The piece boundaries strictly inside `range`, as offsets from its start. The driver
    /// rejects a copy whose host side spans two registrations (`CUDA_ERROR_INVALID_VALUE`),
    /// so a transfer is cut here into one copy per piece.
    pub fn cuts_within(&self, range: Range<usize>) -> Vec<usize> {
        let mut cuts: Vec<usize> = (self.pieces.iter())
            .flat_map(|p| [p.range.start, p.range.end])
            .filter(|&c| c > range.start && c < range.end)
            .map(|c| c - range.start)
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }
}

/// The pages of the user's arrays that operation `op` copies to or from (direct transfers;
/// staged and compressed transfers go through pacc's own pinned memory). `arrays[a]` is the
/// address range of array `a`, or `None` when it needs no registration.
fn user_pages(
    kind: &OpKind,
    arrays: &[Option<Range<usize>>],
    plane_bytes: &[usize],
) -> Option<Range<usize>> {
    let (array, planes) = kind.user_planes()?;
    let at = arrays.get(array)?.as_ref()?.start;
    let pb = plane_bytes[array];
    (!planes.is_empty()).then(|| {
        let (lo, hi) = (at + planes.start * pb, at + planes.end * pb);
        lo / PAGE * PAGE..hi.div_ceil(PAGE) * PAGE
    })
}

/// Cuts the arrays' pages (merged where arrays share a page) at every page boundary of an
/// operation's transfer and every `max_piece` bytes, and keeps the pieces some operation
/// touches, ordered by first use.
pub(crate) fn plan_pieces(
    plan: &Plan,
    arrays: &[Option<Range<usize>>],
    plane_bytes: &[usize],
    max_piece: usize,
) -> PinPlan {
    let touched: Vec<Option<Range<usize>>> = (plan.ops.iter())
        .map(|op| user_pages(&op.kind, arrays, plane_bytes))
        .collect();
    let mut spans: Vec<Range<usize>> = arrays
        .iter()
        .flatten()
        .filter(|r| !r.is_empty())
        .map(|r| r.start / PAGE * PAGE..r.end.div_ceil(PAGE) * PAGE)
        .collect();
    spans.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in spans {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut cuts: Vec<usize> = touched
        .iter()
        .flatten()
        .flat_map(|r| [r.start, r.end])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for m in merged {
        let inner = cuts.iter().copied().filter(|&c| c > m.start && c < m.end);
        let mut at = m.start;
        for end in inner.chain([m.end]) {
            while end - at > max_piece.max(PAGE) {
                let step = max_piece.max(PAGE) / PAGE * PAGE;
                ranges.push(at..at + step);
                at += step;
            }
            ranges.push(at..end);
            at = end;
        }
    }
    pieces_in_use(ranges, &touched)
}

/// The ranges some operation touches, as pieces ordered by first use, and each operation's.
fn pieces_in_use(ranges: Vec<Range<usize>>, touched: &[Option<Range<usize>>]) -> PinPlan {
    let mut uses: Vec<Option<(usize, usize)>> = vec![None; ranges.len()];
    let mut needs_of: Vec<Vec<usize>> = vec![Vec::new(); touched.len()];
    for (op, t) in touched.iter().enumerate() {
        let Some(t) = t else { continue };
        let from = ranges.partition_point(|r| r.end <= t.start);
        for (i, r) in ranges.iter().enumerate().skip(from) {
            if r.start >= t.end {
                break;
            }
            needs_of[op].push(i);
            let u = uses[i].get_or_insert((op, op));
            u.1 = op;
        }
    }
    let mut order: Vec<usize> = (0..ranges.len()).filter(|&i| uses[i].is_some()).collect();
    order.sort_by_key(|&i| (uses[i].map_or(0, |u| u.0), ranges[i].start));
    let mut index = vec![usize::MAX; ranges.len()];
    for (k, &i) in order.iter().enumerate() {
        index[i] = k;
    }
    let pieces = (order.iter())
        .map(|&i| {
            let (first, last) = uses[i].unwrap_or((0, 0));
            Piece {
                range: ranges[i].clone(),
                first,
                last,
            }
        })
        .collect();
    let needs = (needs_of.into_iter())
        .map(|v| v.into_iter().map(|i| index[i]).collect())
        .collect();
    PinPlan { pieces, needs }
}

/// Registers and unregisters host ranges: the driver, or a stand-in in tests.
pub(crate) trait Registrar: Send + Sync + 'static {
    /// Page-locks `range` (whole pages), or says why not.
    fn register(&self, range: &Range<usize>) -> Result<(), RegisterError>;
    /// Undoes [`Registrar::register`]; nothing copies from the range any more.
    fn unregister(&self, range: &Range<usize>);
}

/// Why a piece was not registered.
#[derive(Clone, Debug)]
enum Failure {
    Driver(RegisterError),
    Fault(Fault),
}

#[derive(Clone, Debug)]
enum Slot {
    Pending,
    Registered,
    Unregistered,
    Failed(Failure),
}

struct Shared {
    slots: Vec<Slot>,
    next: usize,
    stop: bool,
    /// Seconds the threads spent registering.
    busy: f64,
    /// Threads still running: a piece still pending when none is will never be registered.
    alive: usize,
}

/// Registers a [`PinPlan`]'s pieces on worker threads, in order; see the module documentation.
pub(crate) struct Pinner<R: Registrar> {
    registrar: Arc<R>,
    ranges: Vec<Range<usize>>,
    state: Arc<(Mutex<Shared>, Condvar)>,
    workers: Vec<JoinHandle<()>>,
    /// Seconds the caller waited for pieces (the registration left on the critical path).
    pub waited: f64,
    /// Whether dropping the pinner waits until its pieces are unregistered (the default: on
    /// an error the arrays are left unlocked); [`Pinner::detach`] turns it off.
    wait_on_drop: bool,
}

impl<R: Registrar> Pinner<R> {
    /// Starts `threads` threads registering `pieces` in order. The fault hook runs here, on the
    /// calling thread, once per piece (`what` describes a piece for the fault's message); the
    /// piece it fires for fails instead of being registered.
    pub fn start(
        registrar: Arc<R>,
        pieces: &[Piece],
        threads: usize,
        what: impl Fn(&Piece) -> String,
    ) -> Pinner<R> {
        let faults: Vec<Option<Fault>> = (pieces.iter())
            .map(|p| fault::hit(Site::Register, || what(p)).err())
            .collect();
        let ranges: Vec<Range<usize>> = pieces.iter().map(|p| p.range.clone()).collect();
        let threads = threads.clamp(1, ranges.len().max(1));
        let shared = Shared {
            slots: vec![Slot::Pending; ranges.len()],
            next: 0,
            stop: false,
            busy: 0.0,
            alive: threads,
        };
        let state = Arc::new((Mutex::new(shared), Condvar::new()));
        let faults = Arc::new(faults);
        let workers = (0..threads)
            .filter_map(|_| {
                let (reg, st) = (registrar.clone(), state.clone());
                let (ranges, faults) = (ranges.clone(), faults.clone());
                let spawned = std::thread::Builder::new()
                    .name("pacc-page-lock".into())
                    .spawn(move || work(&*reg, &st, &ranges, &faults));
                if spawned.is_err() {
                    // Counted out here; with no thread at all, `wait` reports it.
                    let mut s = state.0.lock().unwrap_or_else(|e| e.into_inner());
                    s.alive -= 1;
                }
                spawned.ok()
            })
            .collect();
        Pinner {
            registrar,
            ranges,
            state,
            workers,
            waited: 0.0,
            wait_on_drop: true,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.state.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until every piece of `ids` is registered; the first failure of any piece (the
    /// run cannot complete then) as an error.
    pub fn wait(&mut self, ids: &[usize]) -> Result<(), Error> {
        let t = Instant::now();
        let mut s = self.lock();
        let r = loop {
            if let Some(f) = s.slots.iter().find_map(|x| match x {
                Slot::Failed(f) => Some(f.clone()),
                _ => None,
            }) {
                break Err(f);
            }
            if ids.iter().all(|&i| !matches!(s.slots[i], Slot::Pending)) {
                break Ok(());
            }
            if s.alive == 0 {
                break Err(Failure::Driver(RegisterError::Stopped));
            }
            s = self.state.1.wait(s).unwrap_or_else(|e| e.into_inner());
        };
        drop(s);
        self.waited += t.elapsed().as_secs_f64();
        r.map_err(|f| match f {
            Failure::Fault(f) => f.into(),
            Failure::Driver(e) => e.into(),
        })
    }

    /// [`Pinner::wait`] for every piece.
    pub fn wait_all(&mut self) -> Result<(), Error> {
        let all: Vec<usize> = (0..self.ranges.len()).collect();
        self.wait(&all)
    }

    /// Whether every piece is registered (or already done with), without waiting.
    pub fn all_registered(&self) -> bool {
        (self.lock().slots.iter()).all(|s| matches!(s, Slot::Registered | Slot::Unregistered))
    }

    /// The driver's refusal if registering a piece failed (not an injected fault).
    pub fn driver_failure(&self) -> Option<RegisterError> {
        self.lock().slots.iter().find_map(|s| match s {
            Slot::Failed(Failure::Driver(m)) => Some(m.clone()),
            _ => None,
        })
    }

    /// Hands piece `id` (its last operation has completed) to the background thread to be
    /// unregistered.
    pub fn unregister(&mut self, id: usize) {
        let mut s = self.lock();
        if matches!(s.slots[id], Slot::Registered) {
            s.slots[id] = Slot::Unregistered;
            drop(s);
            let (reg, range) = (self.registrar.clone(), self.ranges[id].clone());
            background::push(Box::new(move || reg.unregister(&range)));
        }
    }

    /// Lets the pinner drop without waiting for its pieces to be unregistered: for a run that
    /// completed, whose pieces the background thread unregisters after it returns.
    pub fn detach(&mut self) {
        self.wait_on_drop = false;
    }

    /// Seconds the threads spent registering so far.
    pub fn busy(&self) -> f64 {
        self.lock().busy
    }
}

impl<R: Registrar> Drop for Pinner<R> {
    /// Stops the threads after the piece each is registering, hands every piece still
    /// registered to the background thread and, unless detached, waits until it is done.
    fn drop(&mut self) {
        self.lock().stop = true;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        for id in 0..self.ranges.len() {
            self.unregister(id);
        }
        if self.wait_on_drop {
            background::drain();
        }
    }
}

/// One registering thread: takes the next piece until none is left, one failed, or the
/// pinner stops.
fn work<R: Registrar>(
    reg: &R,
    state: &(Mutex<Shared>, Condvar),
    ranges: &[Range<usize>],
    faults: &[Option<Fault>],
) {
    let lock = || state.0.lock().unwrap_or_else(|e| e.into_inner());
    /// Counts the thread out however it ends (a panic included), waking the waiters.
    struct Leaving<'a>(&'a (Mutex<Shared>, Condvar));
    impl Drop for Leaving<'_> {
        fn drop(&mut self) {
            let mut s = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
            s.alive -= 1;
            drop(s);
            self.0 .1.notify_all();
        }
    }
    let _leaving = Leaving(state);
    loop {
        let i = {
            let mut s = lock();
            if s.stop || s.next >= ranges.len() {
                return;
            }
            s.next += 1;
            s.next - 1
        };
        let t = Instant::now();
        let r = match &faults[i] {
            Some(f) => Err(Failure::Fault(f.clone())),
            None => reg.register(&ranges[i]).map_err(Failure::Driver),
        };
        let mut s = lock();
        s.busy += t.elapsed().as_secs_f64();
        s.slots[i] = match r {
            Ok(()) => Slot::Registered,
            Err(f) => {
                s.stop = true;
                Slot::Failed(f)
            }
        };
        drop(s);
        state.1.notify_all();
    }
}

/// The process-wide thread that unregisters pieces, in the order they are handed to it.
///
/// `cuMemHostUnregister` waits for the device to go idle, and the driver serializes it with
/// the calls that tear a run down (freeing buffers, destroying events): unregistering during
/// a run or its teardown only delays them. So while a run is under way ([`hold`]) the thread
/// waits; once the run's teardown is over, the run drains the queue before it returns (no page
/// of the caller's may stay registered after the call: the caller may free the memory).
/// [`drain`] runs what is queued on the calling thread, held or not, and reports the jobs that
/// panicked; the process drains the queue when it exits, before the driver's own clean-up.
pub(crate) mod background {
    use std::collections::VecDeque;
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, MutexGuard, Once, OnceLock};

    type Job = Box<dyn FnOnce() + Send>;

    #[derive(Default)]
    struct Queue {
        jobs: VecDeque<Job>,
        /// Jobs running (on the thread or in a drain).
        running: usize,
        /// Runs under way: the thread waits while any is.
        held: usize,
        /// Messages of the jobs that panicked since the last [`drain`].
        panics: Vec<String>,
    }

    /// Jobs that panicked since the process started.
    static PANICKED: AtomicUsize = AtomicUsize::new(0);

    type Shared = (Mutex<Queue>, Condvar);

    /// The queue, with its thread started (`false` where it could not be spawned: jobs then
    /// run when pushed).
    fn queue() -> (&'static Shared, bool) {
        static Q: OnceLock<Shared> = OnceLock::new();
        static STARTED: OnceLock<bool> = OnceLock::new();
        let q = Q.get_or_init(|| (Mutex::new(Queue::default()), Condvar::new()));
        let started = *STARTED.get_or_init(|| {
            (std::thread::Builder::new().name("pacc-unlock".into()))
                .spawn(move || work(q))
                .is_ok()
        });
        (q, started)
    }

    /// Has the queue drained when the process exits, before the CUDA driver's own exit
    /// handler tears the driver down: that handler is registered when the driver initializes,
    /// and exit handlers run in the reverse order of registration. A job is queued only after
    /// a piece was registered, so registering here, at the first push, comes after the driver
    /// initialized (registered with the queue, it could come first, and then run second).
    fn drain_at_exit_after_the_driver() {
        static ONCE: Once = Once::new();
        // SAFETY: registers a plain `extern "C"` function; it only drains the queue.
        ONCE.call_once(|| unsafe {
            libc::atexit(drain_at_exit);
        });
    }

    fn lock(q: &Shared) -> MutexGuard<'_, Queue> {
        q.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `job`, counted as running meanwhile; a panic in it is contained (the thread and
    /// the waiters must go on) and kept for the next [`drain`] to report.
    fn run(q: &Shared, job: Job) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let mut s = lock(q);
        if let Err(p) = r {
            let m = (p.downcast_ref::<&str>().map(|m| m.to_string()))
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            s.panics.push(m);
            PANICKED.fetch_add(1, Ordering::Relaxed);
        }
        s.running -= 1;
        drop(s);
        q.1.notify_all();
    }

    fn work(q: &'static Shared) {
        loop {
            let job = {
                let mut s = lock(q);
                loop {
                    if s.held == 0 {
                        if let Some(j) = s.jobs.pop_front() {
                            s.running += 1;
                            break j;
                        }
                    }
                    s = q.1.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            run(q, job);
        }
    }

    /// Queues `job`; runs it here where the thread could not be started.
    pub fn push(job: Job) {
        match queue() {
            (q, true) => {
                drain_at_exit_after_the_driver();
                lock(q).jobs.push_back(job);
                q.1.notify_all();
            }
            (_, false) => job(),
        }
    }

    /// Runs every queued job on this thread and waits for those running elsewhere; then
    /// reports, on stderr, the jobs that panicked since the last drain.
    pub fn drain() {
        let (q, _) = queue();
        let mut s = lock(q);
        loop {
            if let Some(j) = s.jobs.pop_front() {
                s.running += 1;
                drop(s);
                run(q, j);
                s = lock(q);
            } else if s.running > 0 {
                s = q.1.wait(s).unwrap_or_else(|e| e.into_inner());
            } else {
                break;
            }
        }
        let panics = std::mem::take(&mut s.panics);
        drop(s);
        report(&panics);
    }

    /// Says that unregistering panicked, and what it leaves: the piece may still be
    /// page-locked. Never panics itself (it may run in an exit handler), so a failed write to
    /// stderr is ignored.
    fn report(panics: &[String]) {
        let mut err = std::io::stderr().lock();
        for m in panics {
            let _ = writeln!(
                err,
                "pacc: unregistering a page-locked piece of the arrays panicked ({m}); it may \
                 still be page-locked until the process exits"
            );
        }
    }

    /// Jobs that panicked since the process started (each reported once, by a drain).
    #[cfg(test)]
    pub fn panicked() -> usize {
        PANICKED.load(Ordering::Relaxed)
    }

    extern "C" fn drain_at_exit() {
        drain();
    }

    /// Keeps the thread waiting until the guard drops (a run is under way).
    pub fn hold() -> Hold {
        let (q, _) = queue();
        lock(q).held += 1;
        Hold(q)
    }

    pub struct Hold(&'static Shared);

    impl Drop for Hold {
        fn drop(&mut self) {
            lock(self.0).held -= 1;
            self.0 .1.notify_all();
        }
    }

    /// Jobs queued or running.
    #[cfg(test)]
    pub fn pending() -> usize {
        let s = lock(queue().0);
        s.jobs.len() + s.running
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{self, PlanOptions, Scheme};
    use crate::program::*;
    use std::collections::HashSet;

    fn heat() -> Program {
        let arrays = [("a", Role::InOut), ("b", Role::InOut), ("k", Role::Input)];
        fixtures::one_kernel("heat", &arrays, &[(0, 1), (2, 0)], 1, 1)
    }

    fn plan_of(scheme: Scheme, chunks: usize) -> Plan {
        let o = PlanOptions {
            chunks,
            block_steps: 3,
            scheme,
            buffer_sets: scheme.buffer_sets(),
            compress: Vec::new(),
            codec: Default::default(),
            read_only_ring: true,
        };
        plan::build(&heat(), &[64, 32, 40], 6, &[], &o).unwrap()
    }

    /// Three arrays of 64 planes of 5120 bytes, the second and third sharing a page.
    fn arrays() -> Vec<Option<Range<usize>>> {
        let pb: usize = 32 * 40 * 4;
        let a: usize = 1 << 20;
        let b = a + (64 * pb).div_ceil(PAGE) * PAGE;
        let c = b + 64 * pb + 8;
        vec![
            Some(a..a + 64 * pb),
            Some(b..b + 64 * pb),
            Some(c..c + 64 * pb),
        ]
    }

    #[test]
    fn pieces_cover_every_transfer_once_in_first_use_order() {
        for scheme in [Scheme::RegionSharing, Scheme::Wavefront, Scheme::DirectMap] {
            let plan = plan_of(scheme, 4);
            let arrays = arrays();
            let pb = vec![32 * 40 * 4; 3];
            let pp = plan_pieces(&plan, &arrays, &pb, MAX_PIECE);
            // Whole pages, disjoint.
            let mut sorted: Vec<&Range<usize>> = pp.pieces.iter().map(|p| &p.range).collect();
            sorted.sort_by_key(|r| r.start);
            for w in sorted.windows(2) {
                assert!(w[0].end <= w[1].start, "{scheme}: overlapping pieces");
            }
            assert!(sorted
                .iter()
                .all(|r| r.start % PAGE == 0 && r.end % PAGE == 0));
            // Ordered by first use; each op's pieces cover exactly its pages.
            assert!(pp.pieces.windows(2).all(|w| w[0].first <= w[1].first));
            for (i, op) in plan.ops.iter().enumerate() {
                let want = user_pages(&op.kind, &arrays, &pb);
                let got: Vec<&Range<usize>> =
                    pp.needs[i].iter().map(|&p| &pp.pieces[p].range).collect();
                match want {
                    None => assert!(got.is_empty()),
                    Some(w) => {
                        let lo = got.iter().map(|r| r.start).min().unwrap();
                        let hi = got.iter().map(|r| r.end).max().unwrap();
                        assert_eq!(lo..hi, w, "{scheme} op {i}");
                        let len: usize = got.iter().map(|r| r.len()).sum();
                        assert_eq!(len, w.len(), "{scheme} op {i}: contiguous pieces");
                        // One copy per piece: a cut at every boundary between them.
                        let cuts = pp.cuts_within(w.clone());
                        assert_eq!(cuts.len() + 1, got.len(), "{scheme} op {i}: cuts");
                        assert!(cuts.iter().all(|c| (w.start + c) % PAGE == 0));
                        for &p in &pp.needs[i] {
                            let piece = &pp.pieces[p];
                            assert!(piece.first <= i && i <= piece.last);
                        }
                    }
                }
            }
            // More pieces than arrays: a chunk's transfers can go while later ones register.
            assert!(
                pp.pieces.len() > 3 * 2,
                "{scheme}: {} pieces",
                pp.pieces.len()
            );
        }
    }

    #[test]
    fn arrays_already_locked_and_large_transfers() {
        let plan = plan_of(Scheme::RegionSharing, 2);
        let c = arrays().remove(2).unwrap();
        let mut arrays = arrays();
        arrays[2] = None;
        let pb = vec![32 * 40 * 4; 3];
        let pp = plan_pieces(&plan, &arrays, &pb, 4 * PAGE);
        assert!(pp
            .pieces
            .iter()
            .all(|p| p.range.end <= c.start / PAGE * PAGE + PAGE));
        assert!(pp.pieces.iter().all(|p| p.range.len() <= 4 * PAGE));
    }

    /// Records what is registered; fails on the `fail`-th registration if asked. Misuse is
    /// recorded in `wrong` (unregistering runs on the background thread, where a panic would
    /// not reach the test).
    #[derive(Default)]
    struct Fake {
        now: Mutex<HashSet<usize>>,
        calls: Mutex<Vec<usize>>,
        fail: Option<usize>,
        wrong: Mutex<Vec<String>>,
    }

    impl Registrar for Fake {
        fn register(&self, r: &Range<usize>) -> Result<(), RegisterError> {
            let mut calls = self.calls.lock().unwrap();
            calls.push(r.start);
            if self.fail == Some(calls.len() - 1) {
                return Err(RegisterError::Refused {
                    bytes: r.len(),
                    reason: "no more pinned memory".into(),
                });
            }
            assert!(self.now.lock().unwrap().insert(r.start), "registered twice");
            Ok(())
        }
        fn unregister(&self, r: &Range<usize>) {
            if !self.now.lock().unwrap().remove(&r.start) {
                self.wrong
                    .lock()
                    .unwrap()
                    .push(format!("{r:?} not registered"));
            }
        }
    }

    fn pieces(n: usize) -> Vec<Piece> {
        (0..n)
            .map(|i| Piece {
                range: i * PAGE..(i + 1) * PAGE,
                first: i,
                last: i + 2,
            })
            .collect()
    }

    #[test]
    fn registers_everything_and_unregisters_on_drop() {
        let fake = Arc::new(Fake::default());
        let mut p = Pinner::start(fake.clone(), &pieces(40), 4, |_| String::new());
        p.wait(&[39]).unwrap();
        p.wait_all().unwrap();
        assert!(p.all_registered());
        p.unregister(3);
        background::drain();
        assert_eq!(fake.now.lock().unwrap().len(), 39);
        drop(p);
        assert!(fake.now.lock().unwrap().is_empty());
        assert!(fake.wrong.lock().unwrap().is_empty(), "{:?}", fake.wrong);
        assert_eq!(fake.calls.lock().unwrap().len(), 40);
    }

    /// A registrar whose unregistering waits for the test's signal.
    struct Slow {
        inner: Fake,
        go: Mutex<bool>,
        cv: Condvar,
    }

    impl Registrar for Slow {
        fn register(&self, r: &Range<usize>) -> Result<(), RegisterError> {
            self.inner.register(r)
        }
        fn unregister(&self, r: &Range<usize>) {
            let mut go = self.go.lock().unwrap();
            while !*go {
                go = self.cv.wait(go).unwrap();
            }
            self.inner.unregister(r)
        }
    }

    #[test]
    fn a_detached_pinner_returns_before_its_pieces_are_unregistered() {
        let slow = Arc::new(Slow {
            inner: Fake::default(),
            go: Mutex::new(false),
            cv: Condvar::new(),
        });
        let mut p = Pinner::start(slow.clone(), &pieces(6), 2, |_| String::new());
        p.wait_all().unwrap();
        p.unregister(0);
        p.detach();
        drop(p);
        // Nothing could be unregistered yet, and the drop did not wait for it.
        assert_eq!(slow.inner.now.lock().unwrap().len(), 6);
        assert!(background::pending() > 0);
        *slow.go.lock().unwrap() = true;
        slow.cv.notify_all();
        background::drain();
        assert!(slow.inner.now.lock().unwrap().is_empty());
        assert!(slow.inner.wrong.lock().unwrap().is_empty());
    }

    #[test]
    fn a_drain_during_a_run_runs_the_held_jobs_itself() {
        // A failed run drops its pinner (which drains) while the run still holds the thread.
        let done = Arc::new(Mutex::new(0));
        let hold = background::hold();
        for _ in 0..3 {
            let d = done.clone();
            background::push(Box::new(move || *d.lock().unwrap() += 1));
        }
        background::drain();
        assert_eq!(*done.lock().unwrap(), 3);
        drop(hold);
    }

    #[test]
    fn a_panic_while_unregistering_is_counted_and_the_queue_goes_on() {
        let before = background::panicked();
        let done = Arc::new(Mutex::new(false));
        let d = done.clone();
        background::push(Box::new(|| panic!("the driver is gone")));
        background::push(Box::new(move || *d.lock().unwrap() = true));
        background::drain();
        // Counted, and the queue went on to the next job.
        assert!(background::panicked() > before);
        assert!(*done.lock().unwrap());
    }

    #[test]
    fn a_failure_stops_the_threads_and_leaves_nothing_registered() {
        let fake = Arc::new(Fake {
            fail: Some(7),
            ..Fake::default()
        });
        let mut p = Pinner::start(fake.clone(), &pieces(40), 3, |_| String::new());
        let e = p.wait_all().unwrap_err();
        assert!(e.to_string().contains("no more pinned memory"), "{e}");
        assert!(p.driver_failure().is_some());
        assert!(!p.all_registered());
        drop(p);
        assert!(fake.now.lock().unwrap().is_empty());
        assert!(fake.wrong.lock().unwrap().is_empty(), "{:?}", fake.wrong);
        // The threads stop after the pieces in flight: far fewer than all 40.
        assert!(fake.calls.lock().unwrap().len() <= 7 + 3);
    }

    #[test]
    fn an_injected_fault_fails_its_piece_without_registering_it() {
        let fake = Arc::new(Fake::default());
        let mut p = {
            let _f = fault::inject(Site::Register, 5);
            Pinner::start(fake.clone(), &pieces(12), 2, |p| {
                format!("piece at {}", p.range.start)
            })
        };
        match p.wait_all() {
            Err(Error::Fault { site, index, op }) => {
                assert_eq!((site, index), (Site::Register, 5));
                assert_eq!(op, format!("piece at {}", 5 * PAGE));
            }
            other => panic!("{other:?}"),
        }
        assert!(p.driver_failure().is_none());
        assert!(!fake.calls.lock().unwrap().contains(&(5 * PAGE)));
        drop(p);
        assert!(fake.now.lock().unwrap().is_empty());
        assert!(fake.wrong.lock().unwrap().is_empty(), "{:?}", fake.wrong);
    }
}
