//! One run on several threads, with the same results as on one.
//!
//! The network splits into partitions that follow its structure
//! ([`crate::net::topology::partition`]); each thread runs one partition's [`Simulation`] (see
//! the `shard` module for what a partition owns). Time advances in windows: all threads agree on
//! the earliest pending event `T` anywhere and run their events up to `T + L - 1`, where the
//! lookahead `L` is the smallest latency of a link between two partitions. A packet sent to
//! another partition during a window reaches it at least `L` after it was sent, so not before
//! the next window: at the barrier that ends a window, every partition hands the others what
//! it sent them, and each takes in its share before the next window starts.
//!
//! Same-time events are ordered by the entity that scheduled them and that entity's own count
//! ([`crate::engine::order`]), which do not depend on the split, so every partition runs its
//! events in the order one thread would, and the partitions' states fold into one thread's.
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use super::observer::Telling;
use super::{Observer, SetupError, Simulation};
use crate::engine::Time;
use crate::net::outbox::Parcel;
use crate::workload::FlowSpec;

/// The whole network at a checkpoint of a run on threads: every event up to `now` has run in
/// every partition, and none after it (as [`Simulation::run_until`]`(now)` leaves one thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// The checkpoint's instant.
    pub now: Time,
    /// Events run so far, over all partitions.
    pub events: u64,
    /// Data packets delivered to their receivers so far.
    pub data_delivered: u64,
}

/// What costs a pass over the flows at a checkpoint, given when asked for
/// ([`Verdict::Detail`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detail {
    /// Payload bytes delivered to the receivers so far.
    pub payload_delivered: u64,
    /// The ids of the flows running (started, not finished), in flow order.
    pub running: Vec<u64>,
}

/// A partition's part of a checkpoint's [`Detail`]: the payload its receivers got, and the
/// flows it sends that are running, with their index (to merge in flow order).
#[derive(Debug, Default)]
pub(super) struct PartDetail {
    pub(super) payload_delivered: u64,
    pub(super) running: Vec<(u32, u64)>,
}

/// What a run on threads does after a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go on.
    Go,
    /// Stop here: the partitions fold into the network as it is at the checkpoint.
    Stop,
    /// Ask again with the checkpoint's [`Detail`] (a second ask for it counts as `Go`).
    Detail,
}

/// Checkpoints of a run on threads, for what one thread does between calls of
/// [`Simulation::run_until`] (limits, stall detection, a progress bar): every `every` of
/// simulated time (from `every` on) the threads meet, and `check` sees the whole network.
pub struct Watch<'a> {
    /// Simulated time between checkpoints (more than zero).
    pub every: Time,
    /// Called at each checkpoint, on one of the threads, with the detail when it asked for it.
    pub check: &'a mut (dyn FnMut(&Checkpoint, Option<&Detail>) -> Verdict + Send),
}

/// Runs one simulation on `threads` threads until no event is left before its end, and returns
/// it as one thread would have left it. `build` makes the simulation (set up, collection
/// enabled, not run); it is called once per partition, on the partition's own thread (which so
/// allocates its state), and must make the same run each time. A run that cannot be split (see
/// [`Simulation::partition_blockers`]) is refused, never run on fewer threads unannounced; a
/// network that does not split (one partition) runs on this thread.
pub fn run_on_threads(
    threads: u32,
    build: impl Fn() -> Result<Simulation, SetupError> + Sync,
) -> Result<Simulation, SetupError> {
    run_on_threads_watched(threads, build, None)
}

/// [`run_on_threads`] with checkpoints: `watch` sees the network every `watch.every` of
/// simulated time and may stop the run there (on one thread too: it then steps with
/// [`Simulation::run_until`]).
pub fn run_on_threads_watched(
    threads: u32,
    build: impl Fn() -> Result<Simulation, SetupError> + Sync,
    watch: Option<Watch<'_>>,
) -> Result<Simulation, SetupError> {
    let mut first = build()?;
    if let Some(split) = split_of(&first, threads)? {
        let last = first.last_instant();
        let mut sims = build_partitions(first, &build, &split)?;
        advance(&mut sims, split.lookahead, last, watch, None);
        return Ok(Simulation::fold_partitions(sims));
    }
    match watch {
        None => first.run_until_idle(),
        Some(watch) => run_watched(&mut first, watch),
    }
    Ok(first)
}

/// [`run_on_threads`] with an observer, which hears what happens at the end of each slice
/// of simulated time ([`super::OBSERVER_SLICE`]) in the order one thread would tell it, and
/// whose flows join the run there: the same calls and the same run at any thread count.
pub fn run_on_threads_observed(
    threads: u32,
    build: impl Fn() -> Result<Simulation, SetupError> + Sync,
    observer: Box<dyn Observer>,
) -> Result<Simulation, SetupError> {
    let mut run = super::SplitSimulation::new(threads, build)?;
    run.set_observer(observer);
    run.run_until_idle();
    Ok(run.into_simulation())
}

/// How a run splits over threads: each node's partition and the lookahead.
pub(super) struct Split {
    pub(super) of_node: std::sync::Arc<[u32]>,
    pub(super) lookahead: Time,
}

/// The split of `first`'s network over `threads` threads, or `None` when it runs whole (one
/// thread asked for, or a network that does not split); an error when it cannot be split.
pub(super) fn split_of(first: &Simulation, threads: u32) -> Result<Option<Split>, SetupError> {
    if threads <= 1 {
        return Ok(None);
    }
    let blockers = first.partition_blockers();
    if !blockers.is_empty() {
        return Err(SetupError::Invalid(format!(
            "this run cannot be split over threads yet: {}; run it with one thread",
            blockers.join(", ")
        )));
    }
    let split = first.partitioning(threads);
    Ok(split
        .lookahead
        .filter(|_| split.parts > 1)
        .map(|lookahead| Split {
            of_node: split.of_node.into(),
            lookahead: lookahead.max(1),
        }))
}

/// One thread's run with checkpoints.
fn run_watched(sim: &mut Simulation, watch: Watch<'_>) {
    let every = watch.every.max(1);
    let mut at = every;
    while sim.run_until(at) {
        let point = Checkpoint {
            now: at,
            events: sim.counters().events,
            data_delivered: sim.counters().data_delivered,
        };
        let mut verdict = (watch.check)(&point, None);
        if verdict == Verdict::Detail {
            verdict = (watch.check)(&point, Some(&sim.checkpoint_detail()));
        }
        if verdict == Verdict::Stop {
            return;
        }
        at += every;
    }
}

/// Builds the partitions of `split`, in order: partition 0 is `first`, every other one is
/// built by `build` on a thread of its own (which so allocates its state). A failed build is
/// returned.
pub(super) fn build_partitions(
    first: Simulation,
    build: &(impl Fn() -> Result<Simulation, SetupError> + Sync),
    split: &Split,
) -> Result<Vec<Simulation>, SetupError> {
    let parts = split.of_node.iter().max().map_or(1, |&p| p + 1);
    let mut first = Some(first);
    let built: Vec<Result<Simulation, SetupError>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..parts)
            .map(|me| {
                let mine = first.take();
                scope.spawn(move || {
                    let mut sim = mine.map_or_else(build, Ok)?;
                    sim.become_partition(me, split.of_node.clone(), parts);
                    Ok(sim)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    built.into_iter().collect()
}

/// What the observer of a run on threads hears, carried from one advance to the next.
pub(super) struct Hearing {
    /// The observer (none: completions are still noted, for the caller).
    pub(super) observer: Option<Box<dyn Observer>>,
    /// The next slice end at which what was noted is told.
    pub(super) next: Time,
    /// Stop at the first slice end that tells of a finished flow.
    pub(super) stop_on_completion: bool,
    /// The flows told as finished, in the order told.
    pub(super) completed: Vec<u32>,
}

impl Hearing {
    pub(super) fn new(observer: Option<Box<dyn Observer>>) -> Self {
        Hearing {
            observer,
            next: 0,
            stop_on_completion: false,
            completed: Vec::new(),
        }
    }
}

/// What the thread holding the observer hands every partition after a slice was told: the
/// flows the observer added, and the flows told as finished with their finish times.
type Answer = (Vec<FlowSpec>, Vec<(u32, Time)>);

/// Runs the partitions' windows, one thread each, until nothing is left up to `last` (every
/// event up to it has run everywhere). With `hearing`, the partitions meet at each slice end
/// with something noted, and the observer hears it there (partition 0's thread calls it).
/// Stops early at a checkpoint whose verdict is to stop, at a slice end that tells of a
/// finished flow when `hearing.stop_on_completion`, or at a halt. A panic in one partition
/// stops the others at their next barrier (none waits forever) and is passed on.
pub(super) fn advance(
    sims: &mut [Simulation],
    lookahead: Time,
    last: Time,
    watch: Option<Watch<'_>>,
    hearing: Option<&mut Hearing>,
) {
    let parts = sims.len();
    let barrier = WindowBarrier::new(parts);
    // mailbox[from * parts + to]: what `from` sent `to` in the window that just ran.
    let mailbox: Vec<Mutex<Parcel>> = (0..parts * parts).map(|_| Mutex::default()).collect();
    let next: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(Time::MAX)).collect();
    // When each partition's earliest note waiting to be told happened (none: `Time::MAX`).
    let noted: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(Time::MAX)).collect();
    // Each partition's delivered data packets and paused links at a PFC watch instant.
    let watched: Vec<Mutex<(u64, Vec<u32>)>> = (0..parts).map(|_| Mutex::default()).collect();
    // Each partition's part of a checkpoint, and the verdict on it.
    let points: Vec<Mutex<(Checkpoint, PartDetail)>> =
        (0..parts).map(|_| Mutex::default()).collect();
    let verdict = AtomicU8::new(0);
    // Each partition's notes of a slice, and what the observer's thread answers.
    let told: Vec<Mutex<Telling>> = (0..parts).map(|_| Mutex::default()).collect();
    let answer: Mutex<Answer> = Mutex::default();
    let stop = AtomicBool::new(false);
    let every = watch.as_ref().map_or(Time::MAX, |w| w.every.max(1));
    let hearing_on = hearing.is_some();
    let first_telling = hearing.as_ref().map_or(Time::MAX, |h| h.next);
    let mut watch = watch;
    let mut hearing = hearing;
    std::thread::scope(|scope| {
        let threads: Vec<_> = (sims.iter_mut().enumerate())
            .map(|(me, sim)| {
                let (barrier, mailbox, next, noted, watched) =
                    (&barrier, &mailbox, &next, &noted, &watched);
                let (points, verdict, told, answer, stop) =
                    (&points, &verdict, &told, &answer, &stop);
                let mut watch = if me == 0 { watch.take() } else { None };
                let mut hearing = if me == 0 { hearing.take() } else { None };
                scope.spawn(move || {
                    // The next checkpoint and slice end (the same in every thread).
                    let mut check_at = every;
                    let mut tell_at = first_telling;
                    let windows = std::panic::AssertUnwindSafe(|| loop {
                        let mine = sim.next_event_time().unwrap_or(Time::MAX);
                        next[me].store(mine, Ordering::Relaxed);
                        let first_note = sim.first_noted_time().unwrap_or(Time::MAX);
                        noted[me].store(first_note, Ordering::Relaxed);
                        if !barrier.wait() {
                            return;
                        }
                        let start = next.iter().map(|t| t.load(Ordering::Relaxed)).min();
                        let start = start.unwrap_or(Time::MAX);
                        // The next slice end to tell at, as one thread finds it
                        // (`process_in_slices`): that of the earliest note anywhere, or of the
                        // next event when nothing is noted; windows stop there.
                        let first_note = noted.iter().map(|n| n.load(Ordering::Relaxed)).min();
                        let first_note = first_note.unwrap_or(Time::MAX);
                        let telling = if hearing_on {
                            let earliest = first_note.min(start);
                            tell_at.max(super::observer::slice_end(earliest))
                        } else {
                            Time::MAX
                        };
                        if first_note != Time::MAX && telling <= last && telling < start {
                            let Some(go) = tell_slice(
                                sim,
                                me,
                                telling,
                                barrier,
                                (told, answer, stop, mailbox),
                                &mut hearing,
                            ) else {
                                return;
                            };
                            tell_at = telling + super::OBSERVER_SLICE;
                            if !go {
                                return;
                            }
                            continue;
                        }
                        // Every thread reads the same times, so all leave together.
                        if start > last {
                            return;
                        }
                        // The PFC deadlock watch's instant (the same in every partition): once
                        // every event before it has run everywhere, it looks at the whole
                        // network.
                        let pfc_watch = sim.pfc_next_watch();
                        // A checkpoint: every event up to it has run everywhere (one thread's
                        // `run_until` would have returned), and it comes before the PFC watch.
                        if check_at < start && check_at < pfc_watch {
                            let point = Checkpoint {
                                now: check_at,
                                events: sim.counters().events,
                                data_delivered: sim.counters().data_delivered,
                            };
                            let Some(go) =
                                checkpoint(sim, me, point, barrier, points, verdict, &mut watch)
                            else {
                                return;
                            };
                            if !go {
                                sim.settle_at(check_at);
                                return;
                            }
                            check_at = check_at.saturating_add(every);
                            continue;
                        }
                        if pfc_watch <= start {
                            let paused = sim.pfc_paused_links(pfc_watch);
                            *lock(&watched[me]) = (sim.counters().data_delivered, paused);
                            if !barrier.wait() {
                                return;
                            }
                            let (delivered, paused) = pooled(watched);
                            sim.pfc_watch(delivered, &paused);
                            if sim.halted().is_some() {
                                return;
                            }
                            continue;
                        }
                        // The window fills the mailboxes' own buffers (emptied by their
                        // readers, capacities kept) and hands them back full: one buffer per
                        // direction.
                        for to in 0..parts {
                            std::mem::swap(sim.sent_to(to), &mut lock(&mailbox[me * parts + to]));
                        }
                        let limit = start.saturating_add(lookahead - 1).min(last);
                        sim.run_window(limit.min(pfc_watch - 1).min(check_at).min(telling));
                        for to in 0..parts {
                            std::mem::swap(sim.sent_to(to), &mut lock(&mailbox[me * parts + to]));
                        }
                        if !barrier.wait() {
                            return;
                        }
                        for from in 0..parts {
                            sim.take_in(&mut lock(&mailbox[from * parts + me]));
                        }
                    });
                    if let Err(panic) = std::panic::catch_unwind(windows) {
                        barrier.abort();
                        std::panic::resume_unwind(panic);
                    }
                    if let Some(h) = hearing {
                        h.next = tell_at;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
}

/// What the threads share at a slice end: each partition's notes, the observer's answer, the
/// stop flag and the mailboxes.
type SliceShared<'a> = (
    &'a [Mutex<Telling>],
    &'a Mutex<Answer>,
    &'a AtomicBool,
    &'a [Mutex<Parcel>],
);

/// One thread's part of a slice end `at`: it hands in its partition's notes; the thread
/// holding the observer tells them in one thread's order and answers with the flows to add
/// and those finished, which every partition then learns; what adding them sent to other
/// partitions (a released flow's start, a trigger's notice) is exchanged through `mailbox`.
/// Returns whether to go on (`None`: the run was aborted meanwhile).
fn tell_slice(
    sim: &mut Simulation,
    me: usize,
    at: Time,
    barrier: &WindowBarrier,
    (told, answer, stop, mailbox): SliceShared<'_>,
    hearing: &mut Option<&mut Hearing>,
) -> Option<bool> {
    sim.settle_at(at);
    *lock(&told[me]) = sim.telling();
    if !barrier.wait() {
        return None;
    }
    if let Some(h) = hearing.as_deref_mut() {
        let mut notes = Vec::new();
        for slot in told {
            notes.append(&mut lock(slot));
        }
        let notes = super::observer::in_told_order(notes);
        let finished = super::observer::finished_in(&notes);
        h.completed.extend(finished.iter().map(|&(f, _)| f));
        stop.store(
            h.stop_on_completion && !finished.is_empty(),
            Ordering::Relaxed,
        );
        let added = match h.observer.as_deref_mut() {
            Some(observer) => super::observer::tell(observer, notes),
            None => Vec::new(),
        };
        *lock(answer) = (added, finished);
    }
    if !barrier.wait() {
        return None;
    }
    let added = {
        let answer = lock(answer);
        for &(f, finish) in &answer.1 {
            sim.learn_finished(f, finish);
        }
        sim.add_told_flows(&answer.0);
        !answer.0.is_empty()
    };
    // Every thread reads the same answer, so all exchange or none does.
    if added {
        let parts = told.len();
        for to in 0..parts {
            std::mem::swap(sim.sent_to(to), &mut lock(&mailbox[me * parts + to]));
        }
        if !barrier.wait() {
            return None;
        }
        for from in 0..parts {
            sim.take_in(&mut lock(&mailbox[from * parts + me]));
        }
    }
    Some(!stop.load(Ordering::Relaxed))
}

/// Hands what each partition sent the others outside a window (while flows were added
/// between steps) to its destination.
pub(super) fn exchange_between_steps(sims: &mut [Simulation]) {
    for from in 0..sims.len() {
        for to in 0..sims.len() {
            if from != to {
                let mut parcel = std::mem::take(sims[from].sent_to(to));
                sims[to].take_in(&mut parcel);
            }
        }
    }
}

/// One thread's part of a checkpoint: it hands in its partition's `point`, the thread holding
/// the watch (partition 0's) pools them and decides, with the detail if it asks. Returns
/// whether to go on (`None`: the run was aborted meanwhile).
fn checkpoint(
    sim: &mut Simulation,
    me: usize,
    point: Checkpoint,
    barrier: &WindowBarrier,
    points: &[Mutex<(Checkpoint, PartDetail)>],
    verdict: &AtomicU8,
    watch: &mut Option<Watch<'_>>,
) -> Option<bool> {
    const GO: u8 = 0;
    const STOP: u8 = 1;
    const DETAIL: u8 = 2;
    let code = |v: Verdict| match v {
        Verdict::Go => GO,
        Verdict::Stop => STOP,
        Verdict::Detail => DETAIL,
    };
    lock(&points[me]).0 = point;
    if !barrier.wait() {
        return None;
    }
    let pooled = || {
        let mut all = Checkpoint {
            now: point.now,
            ..Checkpoint::default()
        };
        for slot in points {
            let slot = lock(slot);
            all.events += slot.0.events;
            all.data_delivered += slot.0.data_delivered;
        }
        all
    };
    if let Some(w) = watch.as_mut() {
        verdict.store(code((w.check)(&pooled(), None)), Ordering::Relaxed);
    }
    if !barrier.wait() {
        return None;
    }
    if verdict.load(Ordering::Relaxed) == DETAIL {
        lock(&points[me]).1 = sim.partition_detail();
        if !barrier.wait() {
            return None;
        }
        if let Some(w) = watch.as_mut() {
            let mut detail = Detail::default();
            let mut running = Vec::new();
            for slot in points {
                let mut slot = lock(slot);
                detail.payload_delivered += slot.1.payload_delivered;
                running.append(&mut slot.1.running);
            }
            running.sort_unstable();
            detail.running = running.into_iter().map(|(_, id)| id).collect();
            let v = (w.check)(&pooled(), Some(&detail));
            verdict.store(
                if v == Verdict::Stop { STOP } else { GO },
                Ordering::Relaxed,
            );
        }
        if !barrier.wait() {
            return None;
        }
    }
    Some(verdict.load(Ordering::Relaxed) != STOP)
}

/// A mailbox or a watch slot, locked (a panic while holding one aborts the run anyway).
fn lock<T>(slot: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The partitions' delivered data packets added, and their paused links in link order.
fn pooled(watched: &[Mutex<(u64, Vec<u32>)>]) -> (u64, Vec<u32>) {
    let mut delivered = 0;
    let mut paused = Vec::new();
    for slot in watched {
        let slot = lock(slot);
        delivered += slot.0;
        paused.extend_from_slice(&slot.1);
    }
    paused.sort_unstable();
    (delivered, paused)
}

/// A barrier for the partitions' threads that one of them can abort, releasing the others.
/// Windows can be short (a microsecond of a lightly loaded fabric is a few dozen events), so a
/// thread that arrives early spins a while before it sleeps, when every thread has a core of
/// its own; with more threads than cores it sleeps at once, leaving the core to the others.
struct WindowBarrier {
    parts: usize,
    /// Spins before sleeping.
    spins: u32,
    /// Threads arrived in this round.
    arrived: AtomicUsize,
    /// Rounds completed.
    round: AtomicU64,
    aborted: AtomicBool,
    /// Where threads that stopped spinning sleep.
    sleep: Mutex<()>,
    turned: Condvar,
}

impl WindowBarrier {
    fn new(parts: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        WindowBarrier {
            parts,
            spins: if parts <= cores { 1 << 16 } else { 0 },
            arrived: AtomicUsize::new(0),
            round: AtomicU64::new(0),
            aborted: AtomicBool::new(false),
            sleep: Mutex::new(()),
            turned: Condvar::new(),
        }
    }

    /// Waits until every thread has arrived; false if the run was aborted meanwhile.
    fn wait(&self) -> bool {
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parts {
            self.arrived.store(0, Ordering::Relaxed);
            let _sleepers = lock(&self.sleep);
            self.round.store(round + 1, Ordering::Release);
            self.turned.notify_all();
            return !self.aborted.load(Ordering::Acquire);
        }
        let turned =
            || self.round.load(Ordering::Acquire) != round || self.aborted.load(Ordering::Acquire);
        for _ in 0..self.spins {
            if turned() {
                return !self.aborted.load(Ordering::Acquire);
            }
            std::hint::spin_loop();
        }
        let mut sleepers = lock(&self.sleep);
        while !turned() {
            sleepers = self
                .turned
                .wait(sleepers)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        !self.aborted.load(Ordering::Acquire)
    }

    /// Releases every waiting thread and makes every later wait return false.
    fn abort(&self) {
        let _sleepers = lock(&self.sleep);
        self.aborted.store(true, Ordering::Release);
        self.turned.notify_all();
    }
}
