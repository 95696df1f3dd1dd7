//! Prefetching for the event loop: while one event runs, the memory events a few places ahead
//! will touch is already on its way into the cache. Results do not depend on it.
//!
//! What an event touches is found in four [`Stage`]s, each reading only what the stage before
//! fetched, so that no stage waits for memory itself: [`FAR`] places ahead the packet or port
//! itself, [`MID`] the next structure it leads to, [`NEAR`] and [`LAST`] what a handler
//! updates. This file holds the schedule (which event at which distance); what each stage
//! fetches is declared beside the handler it serves, so that a change to what a handler reads
//! on the hot path is made in the same place:
//! - a switch arrival and an egress: `prefetch_arrival` and `prefetch_egress` in `switch.rs`;
//! - a packet reaching its host: `prefetch_host_arrival` in `host.rs`;
//! - a port waking to send: `prefetch_port_wake` in `ports.rs`.
//!
//! Without prefetching the 8,192-host step takes about twice the CPU time; what each stage and
//! each distance was measured to gain is in `docs/performance.md` ("Prefetching").
use std::cell::Cell;

use super::{Flow, Simulation};
use crate::engine::prefetch::prefetch;
use crate::net::world::{Event, EventKind};

/// How many events ahead the loop prefetches packets and waking ports.
pub(super) const FAR: usize = 12;
/// How many events ahead it prefetches egress ports and the queue slots of waking ports.
pub(super) const MID: usize = 8;
/// How many events ahead it prefetches the lane slot a switch arrival is queued in and the
/// endpoint state a packet reaching its host, or an idle host NIC, uses.
pub(super) const NEAR: usize = 4;
/// How many events ahead it prefetches the arrival bits, PSN record and sender controls a
/// packet reaching its host, or an idle host NIC, will update.
pub(super) const LAST: usize = 2;

/// One prefetch stage: how far ahead the event is, and so what of it may already be cached.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Stage {
    /// [`FAR`] ahead: nothing of the event is cached yet.
    Far,
    /// [`MID`] ahead: what [`Stage::Far`] fetched.
    Mid,
    /// [`NEAR`] ahead: what [`Stage::Mid`] fetched.
    Near,
    /// [`LAST`] ahead: what [`Stage::Near`] fetched.
    Last,
}

impl Simulation {
    /// Starts fetching what the events [`FAR`], [`MID`], [`NEAR`] and [`LAST`] places ahead will
    /// touch.
    #[inline]
    pub(super) fn prefetch_ahead(&self) {
        let events = &self.world.events;
        if let Some(ev) = events.peek_ahead(FAR) {
            self.prefetch_event(Stage::Far, ev);
        }
        if let Some(ev) = events.peek_ahead(MID) {
            self.prefetch_event(Stage::Mid, ev);
        }
        if let Some(ev) = events.peek_ahead(NEAR) {
            self.prefetch_event(Stage::Near, ev);
        }
        if let Some(ev) = events.peek_ahead(LAST) {
            self.prefetch_event(Stage::Last, ev);
        }
    }

    /// Stage `stage` of event `ev`, from the handler that will run it.
    #[inline(always)]
    fn prefetch_event(&self, stage: Stage, ev: Event) {
        match ev.kind() {
            EventKind::Arrive(h, link) => self.prefetch_arrival(stage, ev, h, link),
            EventKind::Egress(h) => self.prefetch_egress(stage, h),
            EventKind::PortWake(p) => self.prefetch_port_wake(stage, p),
            EventKind::Timer(_) => {}
        }
    }
}

/// The egress ports [`MID`] computed for switch arrivals, kept for [`NEAR`] to find the lane
/// slot without computing them again: slot `n % HINTS` holds the hint for the event that was
/// `n`-th to pop, with the event itself, since a later push into the bucket being drained can
/// shift the events ahead (a mismatch is recomputed; a stale entry left by an earlier hop of
/// the same packet can only make it prefetch the wrong slot).
#[derive(Default)]
pub(super) struct Hints([Cell<(Option<Event>, u32)>; HINTS]);

/// Slots of [`Hints`]: more than [`MID`] - [`NEAR`], a power of two.
const HINTS: usize = 8;
const _: () = assert!(HINTS > MID - NEAR && HINTS.is_power_of_two());

impl Hints {
    /// Keeps `port` for `ev`, expected to be the `at`-th event to pop.
    #[inline]
    pub(super) fn put(&self, at: u64, ev: Event, port: u32) {
        self.0[at as usize % HINTS].set((Some(ev), port));
    }

    /// The port kept for `ev` as the `at`-th event to pop, if that is what was kept.
    #[inline]
    pub(super) fn get(&self, at: u64, ev: Event) -> Option<u32> {
        match self.0[at as usize % HINTS].get() {
            (Some(kept), port) if kept == ev => Some(port),
            _ => None,
        }
    }
}

/// The two lines of a flow's record its packets read (see [`Flow`]'s layout).
#[inline]
pub(super) fn prefetch_flow(flow: &Flow) {
    prefetch(flow);
    prefetch(&flow.stats);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hint comes back only for the event it was kept for, at the same pop count.
    #[test]
    fn hints_answer_only_for_their_event() {
        let hints = Hints::default();
        let (a, b) = (Event::arrive(7, 1), Event::arrive(8, 1));
        hints.put(100 + MID as u64, a, 42);
        assert_eq!(hints.get(100 + MID as u64, a), Some(42));
        assert_eq!(
            hints.get(100 + MID as u64, b),
            None,
            "another event took its place"
        );
        assert_eq!(hints.get(101 + MID as u64, a), None, "another slot");
        hints.put(100 + MID as u64 + HINTS as u64, b, 9);
        assert_eq!(
            hints.get(100 + MID as u64, a),
            None,
            "overwritten a ring later"
        );
    }
}
