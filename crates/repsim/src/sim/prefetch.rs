//! Prefetching for the event loop: while one event runs, the memory events a few places ahead
//! will touch is already on its way into the cache. Measured on the 8,192-host 2 MB
//! permutation (a million packets in flight, far more than the caches hold); results do not
//! depend on it.
//!
//! What an event touches is found in stages, each one reading only what the stage before
//! fetched, so that no stage waits for memory itself:
//! - [`FAR`] places ahead: the packet of an arrival or egress; every line of a waking port.
//! - [`MID`] places ahead: the egress port a packet will be queued at (its `egress` field, or
//!   the inline ECMP choice of a switch arrival, computed here a second time), or for a packet
//!   reaching a host its flow's record; the queue slot a waking port will serve next, or for an
//!   idle host NIC the record of the flow it will pull a packet from.
//! - [`NEAR`] places ahead: the packet in that queue slot; the receiver (data) or sender (the
//!   rest) of a flow whose packet reaches its host; the sender an idle host NIC pulls from.
//!
//! On the 8,192-host run (first 25 us, interleaved pairs) the loop takes 2.0x the CPU time
//! with no prefetching and 1.8x with only the [`FAR`] stage. Tried on top, each without a
//! consistent win (CPU-time ratios 0.94 to 1.14 over 3 to 10 interleaved pairs): a fourth
//! stage one or two events ahead (the sender's PSN record an ACK reads, the receiver's
//! arrival bits, the record and send-list slots a transmission writes, the header-lane slot a
//! reply takes); the idle-NIC chain as three stages (host state, ready-list slot, flow)
//! instead of repeated loads; the reply's port at [`MID`]; distances 12/8/4; and an event
//! queue that sorts the following buckets early so that the stages also reach past the end of
//! a bucket.
use super::switch::inline_ecmp_port;
use super::{Flow, Simulation};
use crate::engine::prefetch::{prefetch, prefetch_all};
use crate::net::port::Port;
use crate::net::world::{Event, EventKind};
use crate::net::Kind;

/// How many events ahead the loop prefetches packets and waking ports.
pub(super) const FAR: usize = 9;
/// How many events ahead it prefetches egress ports and the queue slots of waking ports.
pub(super) const MID: usize = 6;
/// How many events ahead it prefetches the packet a waking port will serve.
pub(super) const NEAR: usize = 3;

impl Simulation {
    /// Starts fetching what the events [`FAR`], [`MID`] and [`NEAR`] places ahead will touch.
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
    }

    /// The packet of an arrival or egress; a waking port.
    #[inline]
    fn prefetch_far(&self, ev: Event) {
        match ev.kind() {
            EventKind::Arrive(h) | EventKind::Egress(h) => self.world.pkts.prefetch(h),
            EventKind::PortWake(p) => {
                if let Some(port) = self.world.ports.get(p as usize) {
                    prefetch_all(port);
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
            EventKind::Arrive(h) => match self.ecmp_egress_hint(h) {
                Some(port) => {
                    if let Some(port) = self.world.ports.get(port as usize) {
                        prefetch_all(port);
                    }
                }
                None => {
                    if let Some(flow) = self.host_arrival_flow(h) {
                        prefetch_flow(flow);
                    }
                }
            },
            EventKind::PortWake(p) => match self.world.ports.get(p as usize).and_then(next_slot) {
                Some(slot) => prefetch(slot),
                None => {
                    if let Some(flow) = self.idle_nic_flow(p) {
                        prefetch_flow(flow);
                    }
                }
            },
            EventKind::Timer(_) => {}
        }
    }

    /// The packet a waking port serves next; the endpoint state a packet reaching its host or an
    /// idle host NIC will use.
    #[inline]
    fn prefetch_near(&self, ev: Event) {
        match ev.kind() {
            EventKind::PortWake(p) => match self.world.ports.get(p as usize).and_then(next_slot) {
                Some(&h) => self.world.pkts.prefetch(h),
                None => {
                    if let Some(sender) = self.idle_nic_flow(p).and_then(|f| f.sender.as_deref()) {
                        prefetch_all(sender);
                    }
                }
            },
            EventKind::Arrive(h) => {
                if let Some(flow) = self.host_arrival_flow(h) {
                    if self.world.pkts.get(h).kind == Kind::Data {
                        if let Some(receiver) = flow.receiver.as_deref() {
                            prefetch_all(receiver);
                        }
                    } else if let Some(sender) = flow.sender.as_deref() {
                        prefetch_all(sender);
                    }
                }
            }
            EventKind::Egress(_) | EventKind::Timer(_) => {}
        }
    }

    /// The flow of packet `h` if it is arriving at a host.
    #[inline]
    fn host_arrival_flow(&self, h: u32) -> Option<&Flow> {
        let w = &self.world;
        let pkt = w.pkts.get(h);
        let node = *w.port_to.get(pkt.egress as usize)?;
        if node >= w.topo.hosts {
            return None;
        }
        self.flows.get(pkt.flow as usize)
    }

    /// The flow host NIC `port` would pull its next packet from, if it is a host NIC with
    /// nothing queued.
    #[inline]
    fn idle_nic_flow(&self, port: u32) -> Option<&Flow> {
        let host = self.world.ports.get(port as usize)?.host;
        let &f = self.hosts.get(host as usize)?.ready.front()?;
        self.flows.get(f as usize)
    }

    /// The egress port the inline ECMP fast path of [`Self::on_arrive`] will pick for packet
    /// `h` at the switch it arrives at; `None` when the packet reaches a host or takes another
    /// path (only a hint: the arrival decides for itself).
    #[inline]
    fn ecmp_egress_hint(&self, h: u32) -> Option<u32> {
        let w = &self.world;
        let pkt = w.pkts.get(h);
        let node = *w.port_to.get(pkt.egress as usize)?;
        let s = node.checked_sub(w.topo.hosts)?;
        inline_ecmp_port(&self.switching, &self.fabric, &w.topo, &w.salts, s, pkt)
    }
}

/// The lines of a flow's record its packets read first (phase, sender and receiver).
#[inline]
fn prefetch_flow(flow: &Flow) {
    prefetch(&flow.phase);
    prefetch(&flow.sender);
    prefetch(&flow.receiver);
}

/// The queue slot a port serves next: the front of its header lane, else of its data lane.
#[inline]
fn next_slot(port: &Port) -> Option<&u32> {
    port.headers.front().or_else(|| port.data.front())
}
