//! An egress port: the queue in front of one directed link.
//!
//! Two FIFOs share the port: a *header* lane for ACKs, NACKs and trimmed packets, served with
//! strict priority, and a *data* lane with a finite byte budget. ECN is decided when a data
//! packet leaves the data lane (RED-style: linear probability between Kmin and Kmax of the bytes
//! still queued behind it). When the data lane is full, half of the time the most recently
//! queued packet is evicted in favour of the arrival, otherwise the arrival itself is the victim
//! (the reference simulator's policy); the victim is trimmed to a header or dropped.
//!
//! Occupancy counts the packet being serialized until its last bit leaves, as in the reference.
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
//! The line was two (the counters and random stream beside the lanes) until 2026-11-25. In one
//! line, interleaved runs of the scale series' steps (M events/s): 8,192 hosts 8.00 -> 8.10 (8
//! pairs) and 8.44 -> 8.46 (6), 1,024 hosts 10.29 -> 10.63 (8 pairs, 6 faster). Counting a
//! port's bytes in 32 bits is what makes room for the peak: a port holds at most
//! [`QUEUE_BYTES_MAX`].
use crate::engine::{Arena, Handle, Rng, Time};
use crate::net::lane::Lane;
use crate::net::packet::{flags, Packet};

/// Buffer and marking parameters of a switch egress queue, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueParams {
    /// Data-lane capacity.
    pub capacity: u64,
    /// ECN: no marking at or below this many queued bytes.
    pub ecn_min: u64,
    /// ECN: always mark above this many queued bytes.
    pub ecn_max: u64,
    /// ECN: marking probability reached at `ecn_max` (RED's Pmax; 1 in the REPS reference).
    pub ecn_pmax: f64,
    /// Trim overflowing packets to a header (true) or drop them (false).
    pub trimming: bool,
    /// Size of a trimmed packet.
    pub header_size: u32,
}

/// Switch egress queue settings of a run, in bytes (scaled per port for degraded links).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// Data buffer per egress port.
    pub capacity: u64,
    /// ECN Kmin.
    pub ecn_min: u64,
    /// ECN Kmax.
    pub ecn_max: u64,
    /// ECN Pmax: the marking probability just below Kmax (above Kmax every packet is marked).
    pub ecn_pmax: f64,
    /// Trim (true) or drop (false) packets that overflow.
    pub trimming: bool,
    /// The sizes above are for ports of this speed (bit/s); a port of another speed scales
    /// them by its speed (LAPS keys its ECN thresholds by port speed: 400/1600 KB at 100 Gb/s,
    /// 800/3200 KB at 200 Gb/s). `None`: every port uses them as they are.
    pub per_rate: Option<u64>,
}

impl QueueConfig {
    /// The factor the sizes are scaled by on a port of `rate_bps` (see `per_rate`).
    pub fn rate_scale(&self, rate_bps: u64) -> f64 {
        self.per_rate
            .map_or(1.0, |r| rate_bps as f64 / r.max(1) as f64)
    }

    /// The parameters of one switch port whose buffer and ECN thresholds are `scale` times the
    /// configured ones (degraded or rate-changed links).
    pub fn port_params(&self, scale: f64, header_size: u32) -> QueueParams {
        let scaled = |b: u64| (b as f64 * scale).round() as u64;
        QueueParams {
            capacity: scaled(self.capacity),
            ecn_min: scaled(self.ecn_min),
            ecn_max: scaled(self.ecn_max),
            ecn_pmax: self.ecn_pmax,
            trimming: self.trimming,
            header_size,
        }
    }

    /// A host NIC's queue: it never drops or marks (the NIC only sends what the window allows).
    pub fn host_params(header_size: u32) -> QueueParams {
        QueueParams {
            capacity: u64::MAX / 2,
            ecn_min: u64::MAX / 2,
            ecn_max: u64::MAX / 2,
            ecn_pmax: 1.0,
            trimming: false,
            header_size,
        }
    }
}

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

/// What ports of one kind share: their link's speed and latency and their queue parameters.
/// Kept out of [`Port`] (which holds its class's index) so that a port is one cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortClass {
    /// Link bit rate.
    pub rate_bps: u64,
    /// Link propagation latency.
    pub latency: Time,
    /// Buffer and ECN parameters (already scaled for degraded links).
    pub params: QueueParams,
}

impl PortClass {
    /// The bits that tell two classes apart (the float by its bit pattern). Destructured in
    /// full, so that a field added to either struct cannot be left out of the key.
    fn key(&self) -> [u64; 8] {
        let PortClass {
            rate_bps,
            latency,
            params:
                QueueParams {
                    capacity,
                    ecn_min,
                    ecn_max,
                    ecn_pmax,
                    trimming,
                    header_size,
                },
        } = *self;
        [
            rate_bps,
            latency,
            capacity,
            ecn_min,
            ecn_max,
            ecn_pmax.to_bits(),
            trimming as u64,
            header_size as u64,
        ]
    }
}

/// The distinct port classes of a run, each stored once; ports name theirs by index.
#[derive(Clone, Debug, Default)]
pub struct PortClasses {
    classes: Vec<PortClass>,
    /// Class key -> index (looked up when a port is set up or changes class).
    index: std::collections::BTreeMap<[u64; 8], u32>,
}

impl PortClasses {
    /// No classes yet.
    pub fn new() -> Self {
        PortClasses::default()
    }

    /// The index of `class`, added if it is new.
    pub fn intern(&mut self, class: PortClass) -> u32 {
        let next = self.classes.len() as u32;
        let i = *self.index.entry(class.key()).or_insert(next);
        if i == next {
            self.classes.push(class);
        }
        i
    }

    /// Class number `i`.
    #[inline(always)]
    pub fn get(&self, i: u32) -> &PortClass {
        &self.classes[i as usize]
    }

    /// Number of distinct classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.classes.capacity() * std::mem::size_of::<PortClass>()
            + self.index.len() * (std::mem::size_of::<[u64; 8]>() + 4)
    }
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
    /// Size of the data packet being serialized (0 for a header) in the low 31 bits; the top
    /// bit says a service-completion event is scheduled (one word, to keep one line).
    service: u32,
    /// Index of its [`PortClass`] (link speed, latency, queue parameters).
    pub class: u32,
    /// Packets put on the wire, low 32 bits (the carries are in [`PortCold`]).
    tx_packets_low: u32,
    /// Bytes put on the wire, low 32 bits (the carries are in [`PortCold`]).
    tx_bytes_low: u32,
}

/// What a port uses only now and then: its random stream (ECN draws between the thresholds,
/// overflow victims), the counters of drops, trims, marks and peaks, and the carries of its
/// transmit counters.
#[derive(Clone, Debug)]
pub struct PortCold {
    /// Random stream for ECN and overflow choices.
    pub rng: Rng,
    /// Counters; `tx_packets` and `tx_bytes` hold only the carries out of the port's low
    /// words (see [`Port::stats`]).
    stats: PortStats,
}

impl PortCold {
    /// Nothing counted yet, drawing from `rng`.
    pub fn new(rng: Rng) -> Self {
        PortCold {
            rng,
            stats: PortStats::default(),
        }
    }

    /// Counts a data packet dropped at this queue (PFC's admission drops count here too).
    pub fn count_drop(&mut self) {
        self.stats.drops += 1;
    }

    /// Adds the carries out of a port's transmit counters.
    #[cold]
    #[inline(never)]
    fn carry_tx(&mut self, packets: bool, bytes: bool) {
        self.stats.tx_packets += packets as u64;
        self.stats.tx_bytes += bytes as u64;
    }

    /// ECN marks so far.
    #[inline]
    pub fn ecn_marks(&self) -> u64 {
        self.stats.ecn_marks
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

// One cache line, no more: the event loop prefetches it for every packet moved.
const _: () = assert!(std::mem::size_of::<Port>() == 64);

impl Port {
    /// Bytes its queues hold on the heap (packet handles, at their capacities).
    pub fn heap_bytes(&self) -> usize {
        (self.headers.capacity() + self.data.capacity()) * std::mem::size_of::<Handle>()
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
            tx_packets: cold.stats.tx_packets << 32 | self.tx_packets_low as u64,
            tx_bytes: cold.stats.tx_bytes << 32 | self.tx_bytes_low as u64,
            max_occupancy: self.max_occupancy as u64,
            ..cold.stats
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
        self.service & !WAKEUP_PENDING
    }

    #[inline]
    fn set_in_service_data(&mut self, size: u32) {
        // Packet sizes stay far below the flag bit: the scenario caps the MTU at 65,535 B.
        debug_assert!(size < WAKEUP_PENDING, "packet size {size} out of range");
        self.service = (self.service & WAKEUP_PENDING) | size;
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
        if pkt.is_header() {
            self.headers.push_back(h);
            return Admission::Queued;
        }
        let size = pkt.size;
        let occ = self.occupancy(now);
        if occ + size as u64 <= params.capacity.min(QUEUE_BYTES_MAX) {
            self.data.push_back(h);
            self.data_bytes += size;
            // Below QUEUE_BYTES_MAX, so in range.
            self.max_occupancy = self.max_occupancy.max((occ + size as u64) as u32);
            return Admission::Queued;
        }
        let victim = if !self.data.is_empty() && cold.rng.coin() {
            let tail = self.data.pop_back().expect("non-empty");
            self.data_bytes -= pkts.get(tail).size;
            self.data.push_back(h);
            self.data_bytes += size;
            tail
        } else {
            h
        };
        if params.trimming {
            let v = pkts.get_mut(victim);
            v.size = params.header_size;
            v.flags |= flags::TRIMMED;
            self.headers.push_back(victim);
            cold.stats.trims += 1;
            Admission::Trimmed(victim)
        } else {
            cold.stats.drops += 1;
            Admission::Dropped(victim)
        }
    }

    /// Takes the next header-lane packet only (the data lane is paused by PFC).
    #[inline]
    pub fn dequeue_header(&mut self) -> Option<Handle> {
        let h = self.headers.pop_front()?;
        self.set_in_service_data(0);
        Some(h)
    }

    /// Takes the next packet to serialize: headers first, then data (deciding its ECN mark by
    /// `params`, its class's).
    pub fn dequeue(
        &mut self,
        cold: &mut PortCold,
        pkts: &mut Arena<Packet>,
        params: &QueueParams,
    ) -> Option<Handle> {
        if let Some(h) = self.headers.pop_front() {
            self.set_in_service_data(0);
            return Some(h);
        }
        let h = self.data.pop_front()?;
        let pkt = pkts.get_mut(h);
        self.data_bytes -= pkt.size;
        self.set_in_service_data(pkt.size);
        let q = self.data_bytes as u64;
        let p = params;
        let mark = if q > p.ecn_max {
            true
        } else if q > p.ecn_min {
            // Linear between Kmin and Kmax on the bytes left behind, up to Pmax. The draw is
            // the same whatever Pmax is, so Pmax = 1 keeps the integer comparison exactly.
            let span = (p.ecn_max - p.ecn_min).max(1);
            let draw = cold.rng.next_u64() % span;
            if p.ecn_pmax >= 1.0 {
                draw < q - p.ecn_min
            } else {
                (draw as f64) < (q - p.ecn_min) as f64 * p.ecn_pmax
            }
        } else {
            false
        };
        if mark {
            pkt.flags |= flags::ECN;
            cold.stats.ecn_marks += 1;
        }
        Some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;

    fn data(size: u32) -> Packet {
        Packet::blank(Kind::Data, size)
    }

    #[test]
    fn thresholds_scale_with_port_speed_only_when_asked() {
        let mut q = QueueConfig {
            capacity: 10 << 20,
            ecn_min: 400_000,
            ecn_max: 1_600_000,
            ecn_pmax: 0.8,
            trimming: false,
            per_rate: None,
        };
        assert_eq!(q.rate_scale(200_000_000_000), 1.0);
        // LAPS: 400/1600 KB at 100 Gb/s, 800/3200 KB at 200 Gb/s, 100/400 KB at 25 Gb/s.
        q.per_rate = Some(100_000_000_000);
        let at = |rate: u64| q.port_params(q.rate_scale(rate), 48);
        assert_eq!(
            (at(200_000_000_000).ecn_min, at(200_000_000_000).ecn_max),
            (800_000, 3_200_000)
        );
        assert_eq!(
            (at(25_000_000_000).ecn_min, at(25_000_000_000).ecn_max),
            (100_000, 400_000)
        );
        assert_eq!(at(100_000_000_000).ecn_min, 400_000);
    }

    fn params(trimming: bool) -> QueueParams {
        QueueParams {
            capacity: 3 * 1000,
            ecn_min: 1000,
            ecn_max: 2000,
            ecn_pmax: 1.0,
            trimming,
            header_size: 64,
        }
    }

    fn port() -> (Port, PortCold) {
        (Port::new(0), PortCold::new(Rng::new(1)))
    }

    #[test]
    fn classes_are_stored_once_and_told_apart_by_every_field() {
        let base = PortClass {
            rate_bps: 400_000_000_000,
            latency: 1_000_000,
            params: params(true),
        };
        let mut classes = PortClasses::new();
        assert_eq!(classes.intern(base), 0);
        assert_eq!(classes.intern(base), 0);
        let mut other = base;
        other.params.ecn_pmax = 0.5;
        assert_eq!(classes.intern(other), 1);
        other = base;
        other.latency += 1;
        assert_eq!(classes.intern(other), 2);
        assert_eq!(classes.len(), 3);
        assert_eq!(
            *classes.get(1),
            PortClass {
                params: QueueParams {
                    ecn_pmax: 0.5,
                    ..base.params
                },
                ..base
            }
        );
    }

    #[test]
    fn the_service_word_keeps_size_and_wakeup_apart() {
        let mut a = Arena::new();
        let (mut p, mut c) = port();
        let q = params(true);
        let d = a.alloc(data(1000));
        p.enqueue(&mut c, d, &mut a, 0, &q);
        p.set_wakeup_pending(true);
        p.dequeue(&mut c, &mut a, &q);
        assert_eq!((p.in_service_data(), p.wakeup_pending()), (1000, true));
        p.set_wakeup_pending(false);
        assert_eq!((p.in_service_data(), p.wakeup_pending()), (1000, false));
        p.busy_until = 10;
        assert_eq!(p.occupancy(5), 1000);
        assert_eq!(p.occupancy(10), 0);
    }

    /// The transmit counters keep their low words in the port and carry into its cold part,
    /// and the sum is exact across the carry.
    #[test]
    fn transmit_counters_carry_into_the_cold_part() {
        let (mut p, mut c) = port();
        p.count_tx(1000, &mut c);
        assert_eq!((p.stats(&c).tx_packets, p.stats(&c).tx_bytes), (1, 1000));
        p.tx_packets_low = u32::MAX;
        p.tx_bytes_low = u32::MAX - 10;
        p.count_tx(4150, &mut c);
        p.count_tx(4150, &mut c);
        let stats = p.stats(&c);
        assert_eq!(stats.tx_packets, u32::MAX as u64 + 2);
        assert_eq!(stats.tx_bytes, u32::MAX as u64 - 10 + 8300);
        assert_eq!(
            (c.stats.tx_packets, c.stats.tx_bytes),
            (1, 1),
            "one carry each"
        );
    }

    /// A port whose buffer is larger than it can count (a lossless port, whose shared buffer
    /// admits data) queues up to [`QUEUE_BYTES_MAX`] and then treats the queue as full.
    #[test]
    fn a_port_queues_at_most_queue_bytes_max() {
        let mut a = Arena::new();
        let (mut p, mut c) = port();
        let q = QueueParams {
            capacity: u64::MAX / 2,
            ecn_min: u64::MAX / 2,
            ecn_max: u64::MAX / 2,
            trimming: false,
            ..params(false)
        };
        let size = 65_535u32;
        let fits = QUEUE_BYTES_MAX / size as u64;
        for k in 0..fits {
            let h = a.alloc(data(size));
            assert_eq!(
                p.enqueue(&mut c, h, &mut a, 0, &q),
                Admission::Queued,
                "{k}"
            );
            a.free(h);
        }
        assert_eq!(p.data_bytes(), fits * size as u64);
        let h = a.alloc(data(size));
        assert!(matches!(
            p.enqueue(&mut c, h, &mut a, 0, &q),
            Admission::Dropped(_)
        ));
        assert!(p.data_bytes() <= QUEUE_BYTES_MAX);
        assert_eq!(p.stats(&c).max_occupancy, fits * size as u64);
        assert_eq!(p.stats(&c).drops, 1);
    }

    #[test]
    fn headers_overtake_data() {
        let mut a = Arena::new();
        let (mut p, mut c) = port();
        let q = params(true);
        let d = a.alloc(data(1000));
        let mut ack = data(64);
        ack.kind = Kind::Ack;
        let k = a.alloc(ack);
        assert_eq!(p.enqueue(&mut c, d, &mut a, 0, &q), Admission::Queued);
        assert_eq!(p.enqueue(&mut c, k, &mut a, 0, &q), Admission::Queued);
        assert_eq!(p.dequeue(&mut c, &mut a, &q), Some(k));
        assert_eq!(p.dequeue(&mut c, &mut a, &q), Some(d));
        assert_eq!(p.dequeue(&mut c, &mut a, &q), None);
    }

    #[test]
    fn overflow_trims_or_drops_one_victim() {
        for trimming in [true, false] {
            let mut a = Arena::new();
            let (mut p, mut c) = port();
            let q = params(trimming);
            let hs: Vec<Handle> = (0..3).map(|_| a.alloc(data(1000))).collect();
            for &h in &hs {
                assert_eq!(p.enqueue(&mut c, h, &mut a, 0, &q), Admission::Queued);
            }
            let mut victims = 0;
            for _ in 0..20 {
                let h = a.alloc(data(1000));
                match p.enqueue(&mut c, h, &mut a, 0, &q) {
                    Admission::Queued => panic!("queue is full"),
                    Admission::Trimmed(v) => {
                        assert!(trimming);
                        assert_eq!(a.get(v).size, 64);
                        victims += 1;
                    }
                    Admission::Dropped(_) => {
                        assert!(!trimming);
                        victims += 1;
                    }
                }
                assert_eq!(p.data_bytes(), 3000);
            }
            assert_eq!(victims, 20);
            assert_eq!(p.data.len(), 3);
        }
    }

    #[test]
    fn ecn_marks_above_kmax_never_below_kmin() {
        let mut a = Arena::new();
        let (mut p, mut c) = port();
        let q = QueueParams {
            capacity: 100_000,
            ..params(true)
        };
        let hs: Vec<Handle> = (0..5).map(|_| a.alloc(data(1000))).collect();
        for &h in &hs {
            p.enqueue(&mut c, h, &mut a, 0, &q);
        }
        // Leaves 4000, 3000 (> Kmax: marked), then 2000, 1000, 0 behind.
        let h0 = p.dequeue(&mut c, &mut a, &q).unwrap();
        let h1 = p.dequeue(&mut c, &mut a, &q).unwrap();
        assert!(a.get(h0).has(flags::ECN) && a.get(h1).has(flags::ECN));
        p.dequeue(&mut c, &mut a, &q);
        let h3 = p.dequeue(&mut c, &mut a, &q).unwrap();
        let h4 = p.dequeue(&mut c, &mut a, &q).unwrap();
        assert!(!a.get(h3).has(flags::ECN) && !a.get(h4).has(flags::ECN));
    }
}
