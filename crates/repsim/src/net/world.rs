//! The passive network: clock, event queue, packet arena, egress ports, topology and route
//! table. It moves packets (serialisation, propagation, admission to queues) and holds timers;
//! it knows no transport, load balancer or switch scheme. Components act on it through the
//! simulation, which routes every event to its owner.
use std::collections::BTreeMap;

use crate::engine::{Arena, EventOrder, EventQueue, Handle, Time};
use crate::net::lane::Queued;
use crate::net::outbox::{Outbox, LOCAL};
use crate::net::paths::PathTable;
use crate::net::port::{Admission, Departing, Port, PortClass, PortClasses, PortCold, PortStats};
use crate::net::{Kind, Packet, Topology};

/// The component a timer belongs to (the simulation dispatches on it). Schemes own timers
/// through the component that runs them, with ids and kinds of their own: a connection's
/// congestion control and load balancer through [`Owner::Connection`], a switch scheme through
/// [`Owner::Switch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Owner {
    /// A connection's transport and controls (`id` = flow index; `kind` says which of its
    /// timers: retransmission, pacing, or its congestion control's and load balancer's own).
    Connection,
    /// A flow's start (`id` = flow index).
    FlowStart,
    /// A fault action (`id` = action index).
    Fault,
    /// A routing reconvergence (`id` = snapshot index).
    Reroute,
    /// The switch scheme (`id` and `kind` are the scheme's own).
    Switch,
    /// A workload source's next arrival (`id` = source index).
    Source,
    /// A receiving host's pull pacer (`id` = host).
    Pacer,
    /// Priority flow control: a pause running out or a pause refresh (`id` = link).
    Pfc,
    /// A connection's receiver hears that its sender finished (`id` = flow index).
    Receiver,
    /// A flow that waits for others hears that one of them finished (`id` = the waiting
    /// flow's index).
    Dependency,
    /// The congestion control's timed switch turns on for every connection.
    CcSwitch,
    /// A trigger's home hears of an activation (`id` = the trigger's index).
    Trigger,
}

const OWNERS: [Owner; 12] = [
    Owner::Connection,
    Owner::FlowStart,
    Owner::Fault,
    Owner::Reroute,
    Owner::Switch,
    Owner::Source,
    Owner::Pacer,
    Owner::Pfc,
    Owner::Receiver,
    Owner::Dependency,
    Owner::CcSwitch,
    Owner::Trigger,
];

/// A timer: who owns it and which of its timers it is. `gen` lets the owner ignore timers it
/// has since re-armed or cancelled (generation check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// Owner.
    pub owner: Owner,
    /// Owner-defined timer kind (0..64).
    pub kind: u8,
    /// Owner-defined generation.
    pub gen: u16,
    /// Owner-defined id (flow, host, switch, ...).
    pub id: u32,
}

/// Links an arrival event can name (30 bits of its payload); a topology with more is refused
/// when the simulation is built.
pub const MAX_LINKS: u32 = 1 << 30;

/// What an [`Event`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A packet reaches the node at the end of link `.1`, which becomes its `Packet::egress`
    /// as it arrives (carried here so that putting it on the wire does not write the packet).
    Arrive(Handle, u32),
    /// A port finished serializing and may start the next packet.
    PortWake(u32),
    /// A packet leaves a switch's forwarding pipeline for its egress queue (`Packet::egress`).
    Egress(Handle),
    /// A component's timer.
    Timer(Timer),
}

/// Something that happens at a time, packed into 8 bytes because the event list holds
/// millions: a 2-bit tag and its payload (an arrival's link in 30 bits, hence [`MAX_LINKS`];
/// a timer's owner in 4 bits, kind in 6, generation in 16; and an id in 32).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Event(u64);

impl Event {
    /// Packet `h` reaches the end of link `link` (below [`MAX_LINKS`]).
    #[inline]
    pub fn arrive(h: Handle, link: u32) -> Self {
        debug_assert!(link < MAX_LINKS, "link {link} beyond what an event holds");
        Event((link as u64) << 32 | h as u64)
    }

    /// A port may serve its next packet.
    #[inline]
    pub const fn port_wake(port: u32) -> Self {
        Event(1 << 62 | port as u64)
    }

    /// A packet leaves a switch's forwarding pipeline.
    #[inline]
    pub const fn egress(h: Handle) -> Self {
        Event(2 << 62 | h as u64)
    }

    /// A timer fires.
    #[inline]
    pub fn timer(t: Timer) -> Self {
        debug_assert!(t.kind < 64, "timer kinds are 0..64");
        Event(
            3 << 62
                | (t.owner as u64) << 58
                | (t.kind as u64 & 63) << 52
                | (t.gen as u64) << 36
                | t.id as u64,
        )
    }

    /// What it is.
    #[inline]
    pub fn kind(self) -> EventKind {
        let low = self.0 as u32;
        match self.0 >> 62 {
            0 => EventKind::Arrive(low, (self.0 >> 32) as u32),
            1 => EventKind::PortWake(low),
            2 => EventKind::Egress(low),
            _ => EventKind::Timer(Timer {
                owner: OWNERS[(self.0 >> 58 & 15) as usize],
                kind: (self.0 >> 52 & 63) as u8,
                gen: (self.0 >> 36) as u16,
                id: low,
            }),
        }
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind().fmt(f)
    }
}

/// Global packet accounting, for conservation checks and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Data packets put on a host uplink (first transmissions and retransmissions).
    pub data_sent: u64,
    /// Wire bytes of those data packets.
    pub data_bytes_sent: u64,
    /// Data packets that reached their receiver intact and were new.
    pub data_delivered: u64,
    /// Data packets that reached their receiver intact but were already there.
    pub data_duplicates: u64,
    /// Trimmed data packets that reached their receiver (answered by a NACK or ACK).
    pub trimmed_arrivals: u64,
    /// Data packets dropped anywhere.
    pub data_dropped: u64,
    /// Data packets trimmed at switch queues.
    pub trims: u64,
    /// ACKs sent by receivers.
    pub acks_sent: u64,
    /// NACKs sent by receivers.
    pub nacks_sent: u64,
    /// ACKs and NACKs that reached their sender.
    pub control_arrived: u64,
    /// ACKs, NACKs, RTS and PULL packets lost (failed elements, no route).
    pub control_dropped: u64,
    /// RTS packets sent.
    pub rts_sent: u64,
    /// Packets made by switch schemes (notifications, replies).
    pub scheme_packets: u64,
    /// Packets a switch scheme consumed.
    pub scheme_consumed: u64,
    /// PULL (credit) packets sent by receivers' pull pacers.
    pub credits_sent: u64,
    /// PULL packets that reached their sender (lost ones count in `control_dropped`).
    pub credits_arrived: u64,
    /// Events processed.
    pub events: u64,
    /// PFC pause and resume frames switches sent.
    pub pfc_frames_sent: u64,
    /// PFC frames that reached the node they pause (lost ones count in `control_dropped`).
    pub pfc_frames_arrived: u64,
}

/// The passive network state shared by every component (its fields are the crate's: schemes
/// outside it act through their contexts).
pub struct World {
    /// Current simulated time.
    pub(crate) now: Time,
    /// Pending events.
    pub(crate) events: EventQueue<Event>,
    /// The tie-break of same-time events: the entity running now and each entity's count
    /// (entities are the topology's nodes, then the control; see [`World::enter`]).
    pub(crate) order: EventOrder,
    /// A port's wake-up runs before same-time arrivals (`[queue] departures_first`).
    pub(crate) departures_first: bool,
    /// Every packet alive.
    pub(crate) pkts: Arena<Packet>,
    /// Egress ports (index = link id).
    pub(crate) ports: Vec<Port>,
    /// What each port uses only now and then (same index as `ports`).
    pub(crate) port_cold: Vec<PortCold>,
    /// What ports of one kind share (speed, latency, queue parameters), named by
    /// [`Port::class`].
    pub(crate) port_classes: PortClasses,
    /// The node at the far end of every port (compact copy for the arrival path).
    pub(crate) port_to: Vec<u32>,
    /// The node every port belongs to (compact copy, for the entity of a port's events).
    pub(crate) port_from: Vec<u32>,
    /// The network graph and its forwarding tables.
    pub(crate) topo: Topology,
    /// Explicit routes packets may carry.
    pub(crate) paths: PathTable,
    /// Per-switch ECMP salts.
    pub(crate) salts: Vec<u32>,
    /// Packet accounting.
    pub(crate) counters: Counters,
    /// Where packets for other partitions go, when this is one partition of a network split
    /// over threads (`None`: the whole network).
    pub(crate) outbox: Option<Box<Outbox>>,
    /// The words a [`Kind::Notify`] packet carries beyond its header fields (a switch
    /// scheme's message, such as the links a notification names), by packet handle. Rare
    /// (scheme messages only), so a map; the words travel with the packet to another
    /// partition.
    pub(crate) payloads: BTreeMap<Handle, Vec<u32>>,
}

impl World {
    /// Schedules `event` at `at` (never before now), ordered among same-time events by its
    /// delay's class, the entity running now and its count (see [`crate::engine::order`]).
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: Event) {
        debug_assert!(at >= self.now);
        self.events
            .push(at, self.order.next_order(at - self.now), event);
    }

    /// Schedules port `port`'s wake-up at `at`, when its packet's last bit leaves. With
    /// [`crate::net::port::QueueConfig::departures_first`] it runs before the packets that
    /// arrive at its node in the same picosecond, else among them by delay class.
    #[inline(always)]
    pub fn schedule_port_wake(&mut self, at: Time, port: u32) {
        debug_assert!(at >= self.now);
        let order = if self.departures_first {
            self.order.next_order_first()
        } else {
            self.order.next_order(at - self.now)
        };
        self.events.push(at, order, Event::port_wake(port));
    }

    /// The entity that stands for everything outside the nodes: the setup, faults and
    /// reconvergence, workload sources, the switch scheme's timers and the caller's calls
    /// between runs.
    pub(crate) fn control_entity(&self) -> u32 {
        self.topo.nodes()
    }

    /// Makes `entity` (a node, or [`Self::control_entity`]) the one whose events are
    /// scheduled from now on: the simulation enters an event's entity before running it.
    #[inline]
    pub(crate) fn enter(&mut self, entity: u32) {
        self.order.enter(entity);
    }

    /// The class (speed, latency, queue parameters) port `port` has now.
    #[inline]
    pub fn port_class(&self, port: u32) -> &PortClass {
        self.port_classes.get(self.ports[port as usize].class)
    }

    /// Port `port`'s counters.
    pub fn port_stats(&self, port: u32) -> PortStats {
        self.ports[port as usize].stats(&self.port_cold[port as usize])
    }

    /// Gives port `port` the class `class` (a fault changed its speed or buffer, or a scheme
    /// its thresholds).
    pub fn set_port_class(&mut self, port: u32, class: PortClass) {
        let i = self.port_classes.intern(class);
        self.ports[port as usize].class = i;
    }

    /// Takes port `port`'s next packet to serialize (headers first; see [`Port::dequeue`]).
    #[inline]
    pub fn dequeue(&mut self, port: u32) -> Option<Queued> {
        let p = &mut self.ports[port as usize];
        let params = &self.port_classes.get(p.class).params;
        p.dequeue(&mut self.port_cold[port as usize], &mut self.pkts, params)
    }

    /// Schedules a timer.
    #[inline]
    pub fn set_timer(&mut self, at: Time, timer: Timer) {
        self.schedule(at.max(self.now), Event::timer(timer));
    }

    /// Offers a packet to a switch egress queue (trim, drop or queue) and returns what
    /// happened; trims and drops are counted here, and the caller frees a dropped victim.
    #[inline]
    pub fn admit(&mut self, port: u32, h: Handle) -> Admission {
        let p = &mut self.ports[port as usize];
        let params = &self.port_classes.get(p.class).params;
        let a = p.enqueue(
            &mut self.port_cold[port as usize],
            h,
            &mut self.pkts,
            self.now,
            params,
        );
        // The data counters count data packets only: a path probe also travels in the data
        // lane, and its losses are in the per-kind books alone.
        match a {
            Admission::Queued => {}
            Admission::Trimmed(v) if self.pkts.get(v).kind == Kind::Data => {
                self.counters.trims += 1
            }
            Admission::Dropped(v) if self.pkts.get(v).kind == Kind::Data => {
                self.counters.data_dropped += 1
            }
            Admission::Trimmed(_) | Admission::Dropped(_) => {}
        }
        a
    }

    /// Puts packet `q` on the wire of `port` now: the port is busy for its serialization time
    /// and the packet arrives at the far end after the link latency too (unless `deliver` is
    /// false: a fault ate it on the way). Returns the serialization time.
    ///
    /// The packet itself is not touched: its arrival event names the link, and the arrival
    /// makes that its `egress` (at 8,192 hosts the packet's line is no longer in the cache
    /// when its port serves it).
    #[inline]
    pub fn transmit(&mut self, port: u32, q: Queued, deliver: bool) -> Time {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let ser = self.port_classes.serialization(p.class, q.size);
        let class = self.port_classes.get(p.class);
        p.busy_until = now + ser;
        p.count_tx(q.size, &mut self.port_cold[port as usize]);
        // A data packet whose mark waits for its departure (its port's dequeue said so).
        let mut departing = p.departing();
        if departing && (!deliver || class.latency == 0) {
            // Lost on the wire: nothing to mark. Over a link without latency it would arrive
            // as it left, so it is marked now, on the bytes behind it.
            p.set_departing(false);
            if deliver {
                p.mark_ecn(
                    &mut self.port_cold[port as usize],
                    &mut self.pkts,
                    q.handle,
                    &class.params,
                );
            }
            departing = false;
        }
        if deliver {
            let order = self.order.next_order(ser + class.latency);
            let at = now + ser + class.latency;
            let remote =
                (self.outbox.as_deref()).is_some_and(|out| out.far[port as usize] != LOCAL);
            if departing {
                // Sent to another partition only once its mark is decided.
                self.port_cold[port as usize].departing = Some(Departing {
                    handle: q.handle,
                    remote: remote.then_some((at, order)),
                });
            }
            if remote {
                if !departing {
                    self.send_across(port, at, order, q.handle);
                }
                return ser;
            }
            self.events.push(at, order, Event::arrive(q.handle, port));
        }
        ser
    }

    /// The data packet that port `port` finished sending now, if its ECN mark waited for its
    /// departure: its mark is decided on the data bytes waiting now, and, if it crosses to
    /// another partition, it is sent there.
    pub fn settle_departure(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        p.set_departing(false);
        let Some(d) = self.port_cold[port as usize].departing.take() else {
            return;
        };
        let params = &self.port_classes.get(p.class).params;
        p.mark_ecn(
            &mut self.port_cold[port as usize],
            &mut self.pkts,
            d.handle,
            params,
        );
        if let Some((at, order)) = d.remote {
            self.send_across(port, at, order, d.handle);
        }
    }

    /// Moves packet `h`, put on port `port` to arrive at `at` with tie-break `order`, out of
    /// the arena into the parcel for the partition that owns the port's far end, with the
    /// words it carries.
    fn send_across(&mut self, port: u32, at: Time, order: u64, h: Handle) {
        let packet = *self.pkts.get(h);
        let words = match packet.kind {
            Kind::Notify => self.payloads.remove(&h),
            _ => None,
        };
        let out = (self.outbox.as_deref_mut()).expect("a packet bound for another partition");
        let far = out.far[port as usize];
        out.send(far, at, order, port, packet, words);
        self.pkts.free(h);
    }

    /// Counts a packet lost anywhere (data or control) and frees it; true for data.
    pub fn lose(&mut self, h: Handle) -> bool {
        let kind = self.pkts.get(h).kind;
        let data = kind == Kind::Data;
        if data {
            self.counters.data_dropped += 1;
        } else {
            self.counters.control_dropped += 1;
        }
        if kind == Kind::Notify {
            self.payloads.remove(&h);
        }
        self.pkts.free(h);
        data
    }

    /// Gives packet `h` (a [`Kind::Notify`]) the words `words` to carry.
    pub fn attach_payload(&mut self, h: Handle, words: Vec<u32>) {
        debug_assert_eq!(self.pkts.get(h).kind, Kind::Notify);
        self.payloads.insert(h, words);
    }

    /// Takes the words packet `h` carries (none if it carries none).
    pub fn take_payload(&mut self, h: Handle) -> Vec<u32> {
        self.payloads.remove(&h).unwrap_or_default()
    }

    /// Data packets currently inside the network: waiting in a port's FIFOs, on a wire, or in
    /// a switch's forwarding pipeline. Counted by walking the queues and pending events, so it
    /// is an independent check of the counters (O(network size)). Packets a switch scheme
    /// holds are counted by the simulation.
    pub fn data_in_network(&self) -> u64 {
        let is_data = |h: &Handle| self.pkts.get(*h).kind == Kind::Data;
        let mut n = 0;
        for p in &self.ports {
            n += p.data.iter().filter(|q| is_data(&q.handle)).count() as u64;
            n += p.headers.iter().filter(|q| is_data(&q.handle)).count() as u64;
        }
        for ev in self.events.pending() {
            if let EventKind::Arrive(h, _) | EventKind::Egress(h) = ev.kind() {
                if is_data(&h) {
                    n += 1;
                }
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pack_and_unpack() {
        for e in [
            EventKind::Arrive(7, 0),
            EventKind::Arrive(u32::MAX, MAX_LINKS - 1),
            EventKind::PortWake(u32::MAX),
            EventKind::Egress(0),
            EventKind::Timer(Timer {
                owner: Owner::Source,
                kind: 63,
                gen: u16::MAX,
                id: u32::MAX,
            }),
            EventKind::Timer(Timer {
                owner: Owner::Connection,
                kind: 0,
                gen: 0,
                id: 0,
            }),
        ] {
            let packed = match e {
                EventKind::Arrive(h, link) => Event::arrive(h, link),
                EventKind::PortWake(p) => Event::port_wake(p),
                EventKind::Egress(h) => Event::egress(h),
                EventKind::Timer(t) => Event::timer(t),
            };
            assert_eq!(packed.kind(), e);
        }
        for (i, o) in OWNERS.iter().enumerate() {
            assert_eq!(*o as usize, i, "owner table order");
        }
        assert_eq!(std::mem::size_of::<Event>(), 8);
    }
}
