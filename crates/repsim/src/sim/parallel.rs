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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use super::{SetupError, Simulation};
use crate::engine::Time;
use crate::net::outbox::Parcel;

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
    let mut first = build()?;
    if threads <= 1 {
        first.run_until_idle();
        return Ok(first);
    }
    let blockers = first.partition_blockers();
    if !blockers.is_empty() {
        return Err(SetupError::Invalid(format!(
            "this run cannot be split over threads yet: {}; run it with one thread",
            blockers.join(", ")
        )));
    }
    let split = first.topology().partition(threads);
    let Some(lookahead) = split.lookahead.filter(|_| split.parts > 1) else {
        first.run_until_idle();
        return Ok(first);
    };
    let end = first.cfg.end;
    let of_node: std::sync::Arc<[u32]> = split.of_node.into();
    let sims = run_windows(first, &build, &of_node, lookahead.max(1), end)?;
    Ok(Simulation::fold_partitions(sims))
}

/// Runs the partitions' windows on one thread each until nothing is left before `end`;
/// partition 0 is `first`, every other one is built by `build` on its own thread. Returns the
/// partitions in order. A failed build or a panic in one partition stops the others at their
/// next barrier (none waits forever); the failure is returned, the panic passed on.
fn run_windows(
    first: Simulation,
    build: &(impl Fn() -> Result<Simulation, SetupError> + Sync),
    of_node: &std::sync::Arc<[u32]>,
    lookahead: Time,
    end: Time,
) -> Result<Vec<Simulation>, SetupError> {
    let parts = of_node.iter().max().map_or(1, |&p| p as usize + 1);
    let barrier = WindowBarrier::new(parts);
    // mailbox[from * parts + to]: what `from` sent `to` in the window that just ran.
    let mailbox: Vec<Mutex<Parcel>> = (0..parts * parts).map(|_| Mutex::default()).collect();
    let next: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(Time::MAX)).collect();
    // Each partition's delivered data packets and paused links at a PFC watch instant.
    let watched: Vec<Mutex<(u64, Vec<u32>)>> = (0..parts).map(|_| Mutex::default()).collect();
    let last = end.saturating_sub(1);
    let mut first = Some(first);
    let done: Vec<Result<Simulation, SetupError>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..parts)
            .map(|me| {
                let (barrier, mailbox, next, watched) = (&barrier, &mailbox, &next, &watched);
                let mine = first.take();
                scope.spawn(move || {
                    let mut sim = match mine.map_or_else(build, Ok) {
                        Ok(sim) => sim,
                        Err(e) => {
                            barrier.abort();
                            return Err(e);
                        }
                    };
                    sim.become_partition(me as u32, of_node.clone(), parts as u32);
                    let windows = std::panic::AssertUnwindSafe(|| loop {
                        let mine = sim.next_event_time().unwrap_or(Time::MAX);
                        next[me].store(mine, Ordering::Relaxed);
                        if !barrier.wait() {
                            return;
                        }
                        let start = next.iter().map(|t| t.load(Ordering::Relaxed)).min();
                        let start = start.unwrap_or(Time::MAX);
                        // Every thread reads the same times, so all leave together.
                        if start > last {
                            return;
                        }
                        // The PFC deadlock watch's instant (the same in every partition): once
                        // every event before it has run everywhere, it looks at the whole
                        // network.
                        let watch = sim.pfc_next_watch();
                        if watch <= start {
                            let paused = sim.pfc_paused_links(watch);
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
                        sim.run_window(limit.min(watch - 1));
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
    done.into_iter().collect()
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
