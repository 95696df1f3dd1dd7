//! Prefetching for the event loop: while one event runs, the memory events a few places ahead
//! will touch is already on its way into the cache. Measured on the 8,192-host 2 MB
//! permutation (a million packets in flight, far more than the caches hold); results do not
//! depend on it.
//!
//! What an event touches is found in stages, each one reading only what the stage before
//! fetched, so that no stage waits for memory itself:
//! - [`FAR`] places ahead: the packet of an arrival or egress, and for an arrival the node its
//!   link reaches (`port_to`, which every later stage reads first); every line of a waking
//!   port, and its entry of `port_hosts` (the compact port -> host array, with the flow a host
//!   NIC expects to pull from next, kept as it pulls: no load needed here).
//! - [`MID`] places ahead: the egress port a packet will be queued at (its `egress` field, or
//!   the inline ECMP choice of a switch arrival, computed here a second time), or for a packet
//!   reaching a host its flow's record, and for data the host's NIC port its ACK will leave
//!   by; the queue slot a waking port will serve next, or for an idle host NIC its host's
//!   state and the record of the flow it expects to pull a packet from.
//! - [`NEAR`] places ahead: the lane slot a packet arriving at
//!   a switch will be queued in (the inline ECMP choice [`MID`] computed, kept in
//!   [`Hints`]); the receiver (data) or sender (the rest) of a flow whose packet reaches its
//!   host, and the header-lane slot the ACK of a data packet will take; the sender an idle
//!   host NIC pulls from and the slot at the front of its host's ready list.
//! - [`LAST`] places ahead: the word of arrival bits a data packet sets at its receiver; the
//!   PSN record an ACK acknowledges and its sender's congestion-control and load-balancer
//!   state; for the sender an idle host NIC pulls from, that state and the ends of its PSN
//!   records and send order.
//!
//! Without prefetching the 8,192-host step takes about twice the CPU time; what each stage and
//! each distance was measured to gain is in `docs/performance.md` ("Prefetching"). A change to
//! what a handler reads on the hot path should change its stage here.
use std::cell::Cell;

use super::switch::inline_ecmp_port;
use super::{Flow, HostState, Simulation};
use crate::engine::prefetch::{prefetch, prefetch_all};
use crate::net::lane::Queued;
use crate::net::port::Port;
use crate::net::world::{Event, EventKind};
use crate::net::Kind;
use crate::transport::Sender;

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

impl Simulation {
    /// Starts fetching what the events [`FAR`], [`MID`], [`NEAR`] and [`LAST`] places ahead will
    /// touch.
    #[inline]
    pub(super) fn prefetch_ahead(&self) {
        let events = &self.world.events;
        if let Some(ev) = events.peek_ahead(FAR) {
            self.prefetch_far(ev);
        }
        if let Some(ev) = events.peek_ahead(MID) {
            self.prefetch_mid(ev);
        }
        if let Some(ev) = events.peek_ahead(NEAR) {
            self.prefetch_near(ev);
        }
        match events.peek_ahead(LAST).map(Event::kind) {
            Some(EventKind::Arrive(h, link)) => self.prefetch_last(h, link),
            Some(EventKind::PortWake(p)) => {
                if let Some(sender) = self.idle_nic_sender(p) {
                    sender.prefetch_controls();
                    sender.prefetch_send_lists();
                }
            }
            _ => {}
        }
    }

    /// The receiver's arrival bits a data packet reaching its host sets; the sender's record
    /// of the PSN an ACK reaching its host acknowledges.
    #[inline]
    fn prefetch_last(&self, h: u32, link: u32) {
        let Some(flow) = self.host_arrival_flow(h, link) else {
            return;
        };
        let pkt = self.world.pkts.get(h);
        match pkt.kind {
            Kind::Data => {
                if let Some(word) = flow.receiver.as_deref().and_then(|r| r.word_of(pkt.psn)) {
                    prefetch(word);
                }
            }
            Kind::Ack => {
                if let Some(sender) = flow.sender.as_deref() {
                    sender.prefetch_controls();
                    if let Some(record) = sender.record_ref(pkt.psn) {
                        prefetch(record);
                    }
                }
            }
            _ => {}
        }
    }

    /// The packet of an arrival or egress; a waking port.
    #[inline]
    fn prefetch_far(&self, ev: Event) {
        match ev.kind() {
            EventKind::Arrive(h, link) => {
                self.world.pkts.prefetch(h);
                // The node it reaches, which the later stages read first.
                if let Some(node) = self.world.port_to.get(link as usize) {
                    prefetch(node);
                }
            }
            EventKind::Egress(h) => self.world.pkts.prefetch(h),
            EventKind::PortWake(p) => {
                if let Some(port) = self.world.ports.get(p as usize) {
                    prefetch_all(port);
                }
                // A host NIC may pull from its ready list: its host and the flow it expects.
                if let Some(nic) = self.port_hosts.get(p as usize) {
                    prefetch(nic);
                }
            }
            EventKind::Timer(_) => {}
        }
    }

    /// The port a packet goes to next; the queue slot a waking port serves next.
    #[inline]
    fn prefetch_mid(&self, ev: Event) {
        match ev.kind() {
            EventKind::Egress(h) => {
                let port = self.world.pkts.get(h).egress;
                if let Some(port) = self.world.ports.get(port as usize) {
                    prefetch_all(port);
                }
            }
            EventKind::Arrive(h, link) => match self.ecmp_egress_hint(h, link) {
                Some(port) => {
                    self.hints
                        .put(self.world.counters.events + MID as u64, ev, port);
                    if let Some(port) = self.world.ports.get(port as usize) {
                        prefetch_all(port);
                    }
                }
                None => {
                    if let Some(flow) = self.host_arrival_flow(h, link) {
                        prefetch_flow(flow);
                        if let Some(port) = self.reply_port(h) {
                            prefetch_all(port);
                        }
                    }
                }
            },
            EventKind::PortWake(p) => {
                // A host NIC reads its host's ready list after every transmission.
                if let Some(host) = self.nic_host(p) {
                    prefetch(host);
                }
                match self.world.ports.get(p as usize).and_then(next_slot) {
                    Some(slot) => prefetch(slot),
                    None => {
                        if let Some(flow) = self.idle_nic_flow(p) {
                            prefetch_flow(flow);
                        }
                    }
                }
            }
            EventKind::Timer(_) => {}
        }
    }

    /// The endpoint state a packet reaching its host or an idle host NIC will use. (A waking
    /// port with packets queued needs nothing more: the queue slot [`MID`] fetched holds the
    /// size it serves them by.)
    #[inline]
    fn prefetch_near(&self, ev: Event) {
        match ev.kind() {
            EventKind::PortWake(p) => {
                let queued = self.world.ports.get(p as usize).and_then(next_slot);
                if queued.is_none() {
                    if let Some(sender) = self.expected_sender(p) {
                        prefetch_all(sender);
                    }
                    let front = self.nic_host(p).and_then(|h| h.ready.as_slices().0.first());
                    if let Some(front) = front {
                        prefetch(front);
                    }
                }
            }
            EventKind::Arrive(h, link) => {
                let hint = self
                    .hints
                    .get(self.world.counters.events + NEAR as u64, ev)
                    .or_else(|| self.ecmp_egress_hint(h, link));
                if let Some(port) = hint {
                    // The lane slot the packet will be queued in.
                    let port = &self.world.ports[port as usize];
                    let lane = if self.world.pkts.get(h).is_header() {
                        &port.headers
                    } else {
                        &port.data
                    };
                    if let Some(slot) = lane.next_slot() {
                        prefetch(slot);
                    }
                } else if let Some(flow) = self.host_arrival_flow(h, link) {
                    let pkt = self.world.pkts.get(h);
                    if pkt.kind == Kind::Data {
                        if let Some(receiver) = flow.receiver.as_deref() {
                            prefetch_all(receiver);
                        }
                        if let Some(slot) = self.reply_port(h).and_then(|p| p.headers.next_slot()) {
                            prefetch(slot);
                        }
                        // The NIC that sends the ACK reads its host's ready list afterwards.
                        if let Some(host) = self.hosts.get(pkt.dst as usize) {
                            prefetch(host);
                        }
                    } else if let Some(sender) = flow.sender.as_deref() {
                        prefetch_all(sender);
                    }
                }
            }
            EventKind::Egress(_) | EventKind::Timer(_) => {}
        }
    }

    /// The flow of packet `h` if it is arriving at a host over `link`.
    #[inline]
    fn host_arrival_flow(&self, h: u32, link: u32) -> Option<&Flow> {
        let w = &self.world;
        let node = *w.port_to.get(link as usize)?;
        if node >= w.topo.hosts {
            return None;
        }
        self.flows.get(w.pkts.get(h).flow as usize)
    }

    /// The NIC port of the host a data packet `h` reaches, which its ACK or NACK leaves by.
    #[inline]
    fn reply_port(&self, h: u32) -> Option<&Port> {
        let w = &self.world;
        let pkt = w.pkts.get(h);
        if pkt.kind != Kind::Data {
            return None;
        }
        let &port = w.topo.host_uplink.get(pkt.dst as usize)?;
        w.ports.get(port as usize)
    }

    /// The state of the host whose NIC `port` is, if it is a host NIC.
    #[inline]
    fn nic_host(&self, port: u32) -> Option<&HostState> {
        let host = self.port_hosts.get(port as usize)?.host;
        self.hosts.get(host as usize)
    }

    /// The flow host NIC `port` is expected to pull its next packet from when it has nothing
    /// queued (not checked here), if it is a host NIC.
    #[inline]
    fn idle_nic_flow(&self, port: u32) -> Option<&Flow> {
        let f = self.port_hosts.get(port as usize)?.next_pull;
        self.flows.get(f as usize)
    }

    /// The sender of [`Self::idle_nic_flow`] (whether the NIC has something queued is not
    /// checked here).
    #[inline]
    fn expected_sender(&self, port: u32) -> Option<&Sender> {
        self.idle_nic_flow(port)?.sender.as_deref()
    }

    /// The sender host NIC `port` will pull its next packet from, if it is a host NIC with
    /// nothing queued.
    #[inline]
    fn idle_nic_sender(&self, port: u32) -> Option<&Sender> {
        if self
            .world
            .ports
            .get(port as usize)
            .and_then(next_slot)
            .is_some()
        {
            return None;
        }
        self.expected_sender(port)
    }

    /// The egress port the inline ECMP fast path of [`Self::on_arrive`] will pick for packet
    /// `h` at the switch it arrives at over `link`; `None` when the packet reaches a host or
    /// takes another path (only a hint: the arrival decides for itself).
    #[inline]
    fn ecmp_egress_hint(&self, h: u32, link: u32) -> Option<u32> {
        let w = &self.world;
        let node = *w.port_to.get(link as usize)?;
        let s = node.checked_sub(w.topo.hosts)?;
        // The last hop's port is read only once the destination's edge switch has been
        // compared with this one: fetch both at once rather than one after the other.
        if let Some(down) = w.topo.host_downlink.get(w.pkts.get(h).dst as usize) {
            prefetch(down);
        }
        inline_ecmp_port(
            &self.switching,
            &self.fabric,
            &w.topo,
            &w.salts,
            s,
            w.pkts.get(h),
        )
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
    fn put(&self, at: u64, ev: Event, port: u32) {
        self.0[at as usize % HINTS].set((Some(ev), port));
    }

    /// The port kept for `ev` as the `at`-th event to pop, if that is what was kept.
    #[inline]
    fn get(&self, at: u64, ev: Event) -> Option<u32> {
        match self.0[at as usize % HINTS].get() {
            (Some(kept), port) if kept == ev => Some(port),
            _ => None,
        }
    }
}

/// The two lines of a flow's record its packets read (see [`Flow`]'s layout).
#[inline]
fn prefetch_flow(flow: &Flow) {
    prefetch(flow);
    prefetch(&flow.stats);
}

/// The queue slot a port serves next: the front of its header lane, else of its data lane.
#[inline]
fn next_slot(port: &Port) -> Option<&Queued> {
    port.headers.front().or_else(|| port.data.front())
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
