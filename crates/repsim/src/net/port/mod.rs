//! An egress port: the queue in front of one directed link.
//!
//! Two FIFOs share the port: a *header* lane for ACKs, NACKs and trimmed packets, served with
//! strict priority, and a *data* lane with a finite byte budget. ECN is decided when a data
//! packet leaves the data lane (RED-style: linear probability between Kmin and Kmax of the bytes
//! still queued behind it), or, with `ecn_at_departure`, when its last bit leaves, on the bytes
//! waiting then. When the data lane is full, half of the time the most recently
//! queued packet is evicted in favour of the arrival, otherwise the arrival itself is the victim
//! (the reference simulator's policy); the victim is trimmed to a header or dropped. The header
//! lane may have a byte budget (the UEC reference's: twice the data buffer); a header beyond it
//! is dropped, and so is a victim that would become one.
//!
//! Occupancy counts the packet being serialized until its last bit leaves, as in the reference.
//!
//! A lane slot keeps the packet's size beside its handle ([`Queued`]), so serving a port reads
//! the packet only to mark it (ECN, rarely); the link the packet crosses travels in its arrival
//! event (`World::transmit`).
//!
//! Moving one packet through a port touches most of the port, so what that reads and writes is
//! laid out as one whole cache line (asserted): the two lanes (16 bytes each, see
//! [`super::lane`]), the wire state, the service word, the queued bytes and their peak, and the
//! low 32 bits of the transmit counters. The rest, which a packet needs only now and then (the
//! random stream of ECN draws and overflow victims, the drop, trim and mark counters, the
//! transmit counters' carries), is the port's [`PortCold`], in an array of its own. What ports
//! of one kind share (link speed and latency, buffer and ECN thresholds) is a [`PortClass`],
//! stored once per run, which stays in the cache however many ports there are. The event loop
//! fetches a port's line ahead of time (`sim/prefetch.rs`).
//!
//! Counting a port's bytes in 32 bits is what makes room for the peak in that line: a port
//! holds at most [`QUEUE_BYTES_MAX`].
mod class;

pub use class::{PortClass, PortClasses, QueueBytes, QueueConfig, QueueParams};

use crate::engine::{Arena, Handle, Rng, Time};
use crate::net::lane::{Lane, Queued};
use crate::net::packet::{flags, Kind, Packet};

/// Per-port counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    /// Packets put on the wire.
    pub tx_packets: u64,
    /// Bytes put on the wire.
    pub tx_bytes: u64,
    /// Data packets dropped at this queue.
    pub drops: u64,
    /// Data packets trimmed at this queue.
    pub trims: u64,
    /// Data packets ECN-marked at this queue.
    pub ecn_marks: u64,
    /// Largest data-lane occupancy seen (bytes).
    pub max_occupancy: u64,
}

/// What happened to a data packet offered to a full queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It was queued and nothing was lost.
    Queued,
    /// `victim` (the arrival or the evicted tail) was trimmed and queued as a header.
    Trimmed(Handle),
    /// `victim` was dropped; the caller owns and frees it.
    Dropped(Handle),
}

/// One egress queue and the link it feeds (`repr(C)`: fields in the order of the module docs).
///
/// One cache line: what serving and queueing a packet read and write. The rest (the random
/// stream, the rare counters and the high words of the transmit counters) is its
/// [`PortCold`], kept apart by the world.
#[repr(C, align(64))]
pub struct Port {
    /// Header lane (ACK, NACK, trimmed data), strict priority.
    pub headers: Lane,
    /// Data lane.
    pub data: Lane,
    /// The wire is busy until this time.
    pub busy_until: Time,
    /// Bytes waiting in the data lane (not counting the one on the wire); at most
    /// [`QUEUE_BYTES_MAX`].
    data_bytes: u32,
    /// Largest data-lane occupancy seen (bytes, the packet on the wire included).
    max_occupancy: u32,
    /// Size of the data packet being serialized (0 for a header) in the low 30 bits; the top
    /// bit says a service-completion event is scheduled, the next that the packet on the wire
    /// waits for its departure to be marked (one word, to keep one line).
    service: u32,
    /// Index of its [`PortClass`] (link speed, latency, queue parameters).
    pub class: u32,
    /// Packets put on the wire, low 32 bits (the carries are in [`PortCold`]).
    tx_packets_low: u32,
    /// Bytes put on the wire, low 32 bits (the carries are in [`PortCold`]).
    tx_bytes_low: u32,
}

/// What a port uses only now and then: its random stream (ECN draws between the thresholds,
/// overflow victims), the counters of drops, trims and marks, and the carries out of its
/// transmit counters (whose low words are in the [`Port`]).
#[derive(Clone, Debug)]
pub struct PortCold {
    /// Random stream for ECN and overflow choices.
    pub rng: Rng,
    /// Data packets dropped at this queue.
    drops: u64,
    /// Data packets trimmed at this queue.
    trims: u64,
    /// Data packets ECN-marked at this queue.
    ecn_marks: u64,
    /// Carries out of the port's 32-bit packet counter.
    tx_packets_carries: u64,
    /// Carries out of the port's 32-bit byte counter.
    tx_bytes_carries: u64,
    /// The data packet on the wire whose ECN mark waits for its departure, if the port marks
    /// on departure.
    pub departing: Option<Departing>,
}

/// A data packet on the wire of a port that decides ECN on departure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departing {
    /// The packet.
    pub handle: Handle,
    /// Its arrival time and event order when it crosses to another partition: it is sent
    /// there once its mark is decided. `None`: its arrival is scheduled here already.
    pub remote: Option<(Time, u64)>,
}

impl PortCold {
    /// Nothing counted yet, drawing from `rng`.
    pub fn new(rng: Rng) -> Self {
        PortCold {
            rng,
            drops: 0,
            trims: 0,
            ecn_marks: 0,
            tx_packets_carries: 0,
            tx_bytes_carries: 0,
            departing: None,
        }
    }

    /// Counts a data packet dropped at this queue (PFC's admission drops count here too).
    pub fn count_drop(&mut self) {
        self.drops += 1;
    }

    /// Adds the carries out of a port's transmit counters.
    #[cold]
    #[inline(never)]
    fn carry_tx(&mut self, packets: bool, bytes: bool) {
        self.tx_packets_carries += packets as u64;
        self.tx_bytes_carries += bytes as u64;
    }

    /// ECN marks so far.
    #[inline]
    pub fn ecn_marks(&self) -> u64 {
        self.ecn_marks
    }
}

/// The most bytes a port's data lane holds, whatever its buffer: a port counts its bytes in
/// 32 bits, which keeps it in one cache line. It leaves room for the packet on the wire and
/// for one tail swap of a full queue (packets are at most 64 KiB). A larger buffer (or, under
/// PFC, a shared buffer that lets one port hold more) acts as this much; the scenario refuses
/// a `queue.size` above it.
pub const QUEUE_BYTES_MAX: u64 = (1 << 32) - (1 << 20);

/// The host a port belongs to when it is a switch's (in `Simulation::port_hosts`).
pub const SWITCH_PORT: u32 = u32::MAX;

/// The bit of `Port::service` that marks a scheduled service completion.
const WAKEUP_PENDING: u32 = 1 << 31;

/// The bit of `Port::service` that says the packet on the wire waits for its departure to be
/// marked (its port decides ECN on departure; the packet is its cold part's `departing`).
const DEPARTING: u32 = 1 << 30;

/// The flag bits of `Port::service`; the rest is the size of the data packet on the wire.
const SERVICE_FLAGS: u32 = WAKEUP_PENDING | DEPARTING;

// One cache line, no more: the event loop prefetches it for every packet moved.
const _: () = assert!(std::mem::size_of::<Port>() == 64);

impl Port {
    /// Bytes its queues hold on the heap (queue slots, at their capacities).
    pub fn heap_bytes(&self) -> usize {
        (self.headers.capacity() + self.data.capacity()) * std::mem::size_of::<Queued>()
    }

    /// A port of class `class` with empty queues.
    pub fn new(class: u32) -> Self {
        Port {
            headers: Lane::new(),
            data: Lane::new(),
            busy_until: 0,
            data_bytes: 0,
            max_occupancy: 0,
            service: 0,
            class,
            tx_packets_low: 0,
            tx_bytes_low: 0,
        }
    }

    /// Its counters (`cold`: its [`PortCold`]).
    pub fn stats(&self, cold: &PortCold) -> PortStats {
        PortStats {
            tx_packets: cold.tx_packets_carries << 32 | self.tx_packets_low as u64,
            tx_bytes: cold.tx_bytes_carries << 32 | self.tx_bytes_low as u64,
            drops: cold.drops,
            trims: cold.trims,
            ecn_marks: cold.ecn_marks,
            max_occupancy: self.max_occupancy as u64,
        }
    }

    /// Counts a packet of `size` bytes put on the wire.
    #[inline]
    pub fn count_tx(&mut self, size: u32, cold: &mut PortCold) {
        let (packets, packets_carry) = self.tx_packets_low.overflowing_add(1);
        let (bytes, bytes_carry) = self.tx_bytes_low.overflowing_add(size);
        self.tx_packets_low = packets;
        self.tx_bytes_low = bytes;
        // A branch to a function of its own: written inline, the compiler adds the carries
        // without one, reading and writing the cold line for every packet.
        if packets_carry | bytes_carry {
            cold.carry_tx(packets_carry, bytes_carry);
        }
    }

    /// Size of the data packet being serialized (0 for a header).
    #[inline]
    pub fn in_service_data(&self) -> u32 {
        self.service & !SERVICE_FLAGS
    }

    #[inline]
    fn set_in_service_data(&mut self, size: u32) {
        // Packet sizes stay far below the flag bit: the scenario caps the MTU at 65,535 B.
        debug_assert!(size < DEPARTING, "packet size {size} out of range");
        self.service = (self.service & SERVICE_FLAGS) | size;
    }

    /// The packet on the wire waits for its departure to be marked.
    #[inline]
    pub fn departing(&self) -> bool {
        self.service & DEPARTING != 0
    }

    /// Records whether the packet on the wire waits for its departure to be marked.
    #[inline]
    pub fn set_departing(&mut self, departing: bool) {
        if departing {
            self.service |= DEPARTING;
        } else {
            self.service &= !DEPARTING;
        }
    }

    /// A service-completion event is scheduled.
    #[inline]
    pub fn wakeup_pending(&self) -> bool {
        self.service & WAKEUP_PENDING != 0
    }

    /// Records whether a service-completion event is scheduled.
    #[inline]
    pub fn set_wakeup_pending(&mut self, pending: bool) {
        if pending {
            self.service |= WAKEUP_PENDING;
        } else {
            self.service &= !WAKEUP_PENDING;
        }
    }

    /// Data bytes held, including a data packet still being serialized.
    #[inline]
    pub fn occupancy(&self, now: Time) -> u64 {
        self.data_bytes as u64
            + if now < self.busy_until {
                self.in_service_data() as u64
            } else {
                0
            }
    }

    /// Bytes waiting in the data lane (not counting the one on the wire).
    #[inline]
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes as u64
    }

    /// True while a packet is on the wire.
    #[inline]
    pub fn busy(&self, now: Time) -> bool {
        now < self.busy_until
    }

    /// True when nothing waits in either lane.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty() && self.data.is_empty()
    }

    /// Puts a packet in the right lane, applying the overflow policy (`params`: its class's)
    /// to data packets.
    pub fn enqueue(
        &mut self,
        cold: &mut PortCold,
        h: Handle,
        pkts: &mut Arena<Packet>,
        now: Time,
        params: &QueueParams,
    ) -> Admission {
        let pkt = pkts.get(h);
        let size = pkt.size;
        if pkt.is_header() {
            if !self.header_fits(size, params) {
                if pkt.kind == Kind::Data {
                    cold.count_drop();
                }
                return Admission::Dropped(h);
            }
            self.headers.push_back(Queued::new(h, size));
            return Admission::Queued;
        }
        let occ = self.occupancy(now);
        if occ + size as u64 <= params.capacity.min(QUEUE_BYTES_MAX) {
            self.data.push_back(Queued::new(h, size));
            self.data_bytes += size;
            // Below QUEUE_BYTES_MAX, so in range.
            self.max_occupancy = self.max_occupancy.max((occ + size as u64) as u32);
            return Admission::Queued;
        }
        let victim = if !self.data.is_empty() && cold.rng.coin() {
            let tail = self.data.pop_back().expect("non-empty");
            self.data_bytes -= tail.size;
            self.data.push_back(Queued::new(h, size));
            self.data_bytes += size;
            tail.handle
        } else {
            h
        };
        if params.trimming && self.header_fits(params.header_size, params) {
            let v = pkts.get_mut(victim);
            v.size = params.header_size;
            v.flags |= flags::TRIMMED;
            self.headers.push_back(Queued::new(victim, v.size));
            cold.trims += 1;
            Admission::Trimmed(victim)
        } else {
            cold.count_drop();
            Admission::Dropped(victim)
        }
    }

    /// True when a header of `size` bytes fits in the header lane's budget. Every header in
    /// the lane is counted at the run's header size (ACKs, NACKs, pulls and trimmed packets
    /// all are), so the lane needs no byte counter of its own.
    #[inline]
    fn header_fits(&self, size: u32, params: &QueueParams) -> bool {
        params.header_limit == QueueParams::OFF
            || self.headers.len() as u64 * u64::from(params.header_size) + u64::from(size)
                <= params.header_limit
    }

    /// Takes the next header-lane packet only (the data lane is paused by PFC).
    #[inline]
    pub fn dequeue_header(&mut self) -> Option<Queued> {
        let q = self.headers.pop_front()?;
        self.set_in_service_data(0);
        Some(q)
    }

    /// Takes the next packet to serialize: headers first, then data (deciding its ECN mark by
    /// `params`, its class's). The packet is read only when it is marked.
    pub fn dequeue(
        &mut self,
        cold: &mut PortCold,
        pkts: &mut Arena<Packet>,
        params: &QueueParams,
    ) -> Option<Queued> {
        if let Some(q) = self.headers.pop_front() {
            self.set_in_service_data(0);
            return Some(q);
        }
        let next = self.data.pop_front()?;
        self.data_bytes -= next.size;
        self.set_in_service_data(next.size);
        if params.ecn_at_departure {
            self.set_departing(true);
        } else {
            self.mark_ecn(cold, pkts, next.handle, params);
        }
        Some(next)
    }

    /// Decides packet `h`'s ECN mark on the data bytes waiting now (RED-style: linear between
    /// Kmin and Kmax, up to Pmax) and marks it.
    #[inline(always)]
    pub fn mark_ecn(
        &mut self,
        cold: &mut PortCold,
        pkts: &mut Arena<Packet>,
        h: Handle,
        p: &QueueParams,
    ) {
        let behind = self.data_bytes as u64;
        let mark = if behind > p.ecn_max {
            true
        } else if behind > p.ecn_min {
            // The draw is the same whatever Pmax is, so Pmax = 1 keeps the integer comparison
            // exactly.
            let span = (p.ecn_max - p.ecn_min).max(1);
            let draw = cold.rng.next_u64() % span;
            if p.ecn_pmax >= 1.0 {
                draw < behind - p.ecn_min
            } else {
                (draw as f64) < (behind - p.ecn_min) as f64 * p.ecn_pmax
            }
        } else {
            false
        };
        if mark {
            pkts.get_mut(h).flags |= flags::ECN;
            cold.ecn_marks += 1;
        }
    }
}

#[cfg(test)]
mod tests;
