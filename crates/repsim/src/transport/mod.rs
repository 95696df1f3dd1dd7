//! The UEC-like, out-of-order tolerant transport: per-connection sender and receiver state.
//!
//! The sender keeps one record per packet sequence number (PSN): when it was last sent, with
//! which EV, and whether it is in flight, queued for retransmission or acknowledged. The receiver
//! keeps a bitmap of received PSNs and the cumulative point. The simulation (`sim.rs`) moves
//! packets between them; the rules that decide what to send and what to answer live here.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::cc::CongestionControl;
use crate::engine::{Rng, Time};
use crate::lb::LoadBalancer;

/// Where one PSN stands at the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PsnState {
    /// Not sent yet.
    Unsent,
    /// Sent and neither acknowledged nor declared lost.
    InFlight,
    /// Declared lost (NACK or timeout) and waiting in the retransmission queue.
    Queued,
    /// Acknowledged (cumulatively, selectively or by its own ACK).
    Acked,
}

/// Flag bits of [`PsnRecord::flags`].
pub mod record_flags {
    /// The PSN was taken by an RTS (request to send), not by a data packet.
    pub const RTS: u8 = 1;
    /// The latest transmission is not counted in `in_flight` (an RTS as first sent).
    pub const UNCOUNTED: u8 = 2;
}

/// Per-PSN sender record.
#[derive(Clone, Copy, Debug)]
pub struct PsnRecord {
    /// Time of the latest transmission.
    pub sent_at: Time,
    /// Bytes on the wire of the latest transmission.
    pub wire: u32,
    /// EV of the latest transmission.
    pub ev: u16,
    /// State.
    pub state: PsnState,
    /// Bit set of [`record_flags`].
    pub flags: u8,
}

impl PsnRecord {
    /// A record for a PSN not sent yet.
    pub const UNSENT: PsnRecord = PsnRecord {
        sent_at: 0,
        wire: 0,
        ev: 0,
        state: PsnState::Unsent,
        flags: 0,
    };

    /// True if the PSN belongs to an RTS.
    #[inline]
    pub fn is_rts(&self) -> bool {
        self.flags & record_flags::RTS != 0
    }

    /// Bytes the latest transmission added to `in_flight`.
    #[inline]
    pub fn counted(&self) -> i64 {
        if self.flags & record_flags::UNCOUNTED != 0 {
            0
        } else {
            self.wire as i64
        }
    }
}

/// Per-connection counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowStats {
    /// Data packets sent, first transmissions and retransmissions.
    pub data_sent: u64,
    /// Retransmitted data packets.
    pub retransmissions: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// NACKs received by the sender.
    pub nacks: u64,
    /// ACKs received by the sender.
    pub acks: u64,
    /// ECN-marked ACKs received by the sender.
    pub ecn_acks: u64,
    /// Largest number of PSNs the receiver held above its cumulative point.
    pub max_reorder: u32,
    /// RTS (request to send) packets sent after timeouts.
    pub rts: u64,
}

/// Byte layout of one connection's data packets: all carry `mss` payload bytes but the last,
/// which carries the rest; each adds a `header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Payload bytes of the whole flow.
    pub bytes: u64,
    /// Number of data packets.
    pub packets: u32,
    /// Payload of a full packet.
    pub mss: u32,
    /// Header bytes of every packet.
    pub header: u32,
}

impl Sizes {
    /// The layout of a `bytes`-byte flow in packets of at most `mtu` bytes with `header`-byte
    /// headers (`mtu > header`).
    pub fn new(bytes: u64, mtu: u32, header: u32) -> Self {
        let mss = mtu - header;
        Sizes {
            bytes,
            packets: bytes.div_ceil(mss as u64) as u32,
            mss,
            header,
        }
    }

    /// Payload bytes of data packet `index`.
    #[inline]
    pub fn payload(&self, index: u32) -> u32 {
        if index + 1 == self.packets {
            (self.bytes - (self.packets as u64 - 1) * self.mss as u64) as u32
        } else {
            self.mss
        }
    }

    /// Wire bytes of data packet `index`.
    #[inline]
    pub fn wire(&self, index: u32) -> u32 {
        self.payload(index) + self.header
    }
}

/// What [`Sender::transmit`] chose to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    /// Its PSN.
    pub psn: u32,
    /// Its EV.
    pub ev: u16,
    /// Its size on the wire.
    pub wire: u32,
    /// A retransmission (of a data packet or of a lost RTS).
    pub retransmit: bool,
    /// The flow's last data packet, sent for the first time.
    pub last: bool,
}

/// Sender state of one connection.
///
/// PSNs are handed out in sending order: every first transmission of a data packet and every
/// RTS takes the next one, so after an RTS the data packet with index k travels with a PSN
/// above k (as in the reference simulator). Each record keeps the wire size of its PSN.
pub struct Sender {
    /// Data packets in the flow.
    pub packets: u32,
    /// Data packets sent at least once (the next new data packet's index).
    pub next_data: u32,
    /// All PSNs below this are acknowledged.
    pub cum_acked: u32,
    /// Bytes sent and not yet acknowledged or declared lost. Signed: a lost RTS is taken off
    /// without ever having been added (the reference's accounting), which can push it below the
    /// true amount.
    pub in_flight: i64,
    /// One record per PSN handed out so far (index = PSN).
    pub records: Vec<PsnRecord>,
    /// (send time, PSN) in transmission order; stale entries are skipped lazily.
    pub send_order: VecDeque<(Time, u32)>,
    /// PSNs waiting for retransmission, lowest first; stale entries are skipped lazily.
    pub retransmit: BinaryHeap<Reverse<u32>>,
    /// A retransmission-timer event is scheduled.
    pub timer_pending: bool,
    /// Time of the latest RTS (at most one per RTO).
    pub last_rts: Option<Time>,
    /// Window controller.
    pub cc: Box<dyn CongestionControl>,
    /// Path chooser.
    pub lb: Box<dyn LoadBalancer>,
    /// The connection's random stream.
    pub rng: Rng,
    /// Listed in the host's ready-to-send list.
    pub in_ready_list: bool,
}

impl Sender {
    /// A sender for `packets` data packets.
    pub fn new(
        packets: u32,
        cc: Box<dyn CongestionControl>,
        lb: Box<dyn LoadBalancer>,
        rng: Rng,
    ) -> Self {
        Sender {
            packets,
            next_data: 0,
            cum_acked: 0,
            in_flight: 0,
            records: Vec::with_capacity(packets as usize),
            send_order: VecDeque::new(),
            retransmit: BinaryHeap::new(),
            timer_pending: false,
            last_rts: None,
            cc,
            lb,
            rng,
            in_ready_list: false,
        }
    }

    /// Number of PSNs handed out so far (data packets sent once plus RTS packets).
    #[inline]
    pub fn psns(&self) -> u32 {
        self.records.len() as u32
    }

    /// A fresh PSN, with an unsent record.
    #[inline]
    pub fn take_psn(&mut self) -> u32 {
        self.records.push(PsnRecord::UNSENT);
        self.records.len() as u32 - 1
    }

    /// The lowest PSN really waiting for retransmission (dropping stale queue entries).
    pub fn next_retransmission(&mut self) -> Option<u32> {
        while let Some(&Reverse(psn)) = self.retransmit.peek() {
            if self.records[psn as usize].state == PsnState::Queued {
                return Some(psn);
            }
            self.retransmit.pop();
        }
        None
    }

    /// The window, as a signed byte count comparable with `in_flight`.
    #[inline]
    pub fn window(&self) -> i64 {
        self.cc.cwnd().min(i64::MAX as u64) as i64
    }

    /// True when the window and the backlog allow one more packet (it may overshoot by one).
    pub fn can_send(&mut self) -> bool {
        !self.finished()
            && self.window() > self.in_flight
            && (self.next_data < self.packets || self.next_retransmission().is_some())
    }

    /// True once every data packet was sent and every PSN (RTS included) is acknowledged.
    #[inline]
    pub fn finished(&self) -> bool {
        self.next_data == self.packets && self.cum_acked == self.psns()
    }

    /// The oldest transmission still in flight (dropping stale entries).
    pub fn oldest_in_flight(&mut self) -> Option<(Time, u32)> {
        while let Some(&(t, psn)) = self.send_order.front() {
            let r = &self.records[psn as usize];
            if r.state == PsnState::InFlight && r.sent_at == t {
                return Some((t, psn));
            }
            self.send_order.pop_front();
        }
        None
    }

    /// Marks a PSN acknowledged; returns the bytes this acknowledges as newly delivered (0 if it
    /// already was, and for an RTS whose original header-only packet arrived).
    ///
    /// `in_flight` follows the reference's byte accounting: an in-flight PSN takes off what its
    /// transmission added; a PSN acknowledged while queued for retransmission had its bytes
    /// taken off when it was declared lost, except an RTS, which never added them, so they are
    /// given back.
    #[inline]
    pub fn mark_acked(&mut self, psn: u32) -> u64 {
        let r = &mut self.records[psn as usize];
        let newly = match r.state {
            PsnState::Acked => return 0,
            PsnState::InFlight => {
                let counted = r.counted();
                self.in_flight -= counted;
                counted as u64
            }
            PsnState::Queued if r.is_rts() => {
                self.in_flight += r.wire as i64;
                0
            }
            PsnState::Queued | PsnState::Unsent => r.wire as u64,
        };
        r.state = PsnState::Acked;
        newly
    }

    /// Declares the in-flight PSN lost (NACK or timeout): its wire size leaves `in_flight` and
    /// it joins the retransmission queue. Returns that size.
    pub fn declare_lost(&mut self, psn: u32) -> u64 {
        let r = &mut self.records[psn as usize];
        debug_assert_eq!(r.state, PsnState::InFlight);
        r.state = PsnState::Queued;
        self.in_flight -= r.wire as i64;
        self.retransmit.push(Reverse(psn));
        r.wire as u64
    }

    /// Sends the next data packet at `now`: the lowest PSN waiting for retransmission (it keeps
    /// its PSN and size; a lost RTS goes again as a header-sized data packet), else the next
    /// new data packet, which takes the next PSN. The load balancer picks its EV. The caller
    /// has checked [`Self::can_send`].
    pub fn transmit(&mut self, now: Time, sizes: &Sizes) -> Transmission {
        let (psn, retransmit, last) = match self.next_retransmission() {
            Some(p) => {
                self.retransmit.pop();
                (p, true, false)
            }
            None => {
                let index = self.next_data;
                self.next_data += 1;
                let p = self.take_psn();
                self.records[p as usize].wire = sizes.wire(index);
                (p, false, index + 1 == sizes.packets)
            }
        };
        let ev = self.lb.next_ev(now, &mut self.rng);
        let rec = &mut self.records[psn as usize];
        rec.sent_at = now;
        rec.ev = ev;
        rec.state = PsnState::InFlight;
        rec.flags &= !record_flags::UNCOUNTED;
        let wire = rec.wire;
        self.in_flight += wire as i64;
        self.send_order.push_back((now, psn));
        Transmission {
            psn,
            ev,
            wire,
            retransmit,
            last,
        }
    }

    /// Whether a timeout of a `lost_wire`-byte packet calls for an RTS now, as the reference
    /// decides after it has queued (and, window and NIC permitting, already sent) the
    /// retransmission: the window has no room for a packet of that size
    /// (`cwnd < in_flight + size`) and no RTS went out in the last `rto`. The caller also
    /// requires that no other retransmission was already waiting.
    pub fn rts_due(&self, now: Time, lost_wire: u64, rto: Time) -> bool {
        self.window() < self.in_flight + lost_wire as i64
            && self.last_rts.is_none_or(|t| now - t >= rto)
    }

    /// Registers an RTS of `size` bytes sent now with `ev`: it takes the next PSN and a send
    /// record (so a lost RTS times out like data and goes again as a `size`-byte data packet),
    /// but adds nothing to `in_flight`. Returns its PSN.
    pub fn register_rts(&mut self, now: Time, ev: u16, size: u32) -> u32 {
        self.last_rts = Some(now);
        let psn = self.take_psn();
        self.records[psn as usize] = PsnRecord {
            sent_at: now,
            wire: size,
            ev,
            state: PsnState::InFlight,
            flags: record_flags::RTS | record_flags::UNCOUNTED,
        };
        self.send_order.push_back((now, psn));
        psn
    }

    /// Advances the cumulative point over acknowledged PSNs.
    pub fn advance_cumulative(&mut self) {
        while self.cum_acked < self.psns()
            && self.records[self.cum_acked as usize].state == PsnState::Acked
        {
            self.cum_acked += 1;
        }
    }

    /// Releases the per-PSN memory of a finished connection.
    pub fn release(&mut self) {
        self.records = Vec::new();
        self.send_order = VecDeque::new();
        self.retransmit = BinaryHeap::new();
    }
}

/// Receiver state of one connection.
pub struct Receiver {
    /// Next PSN expected in order (all below it have arrived).
    pub expected: u32,
    /// Bit per PSN: arrived (grows as higher PSNs arrive).
    pub received: Vec<u64>,
    /// PSNs received above `expected`.
    pub out_of_order: u32,
    /// Wire bytes accepted since the last ACK (for ACK coalescing).
    pub unacked_bytes: u64,
}

impl Receiver {
    /// A receiver expecting about `packets` PSNs (the bitmap grows if RTS packets add more).
    pub fn new(packets: u32) -> Self {
        Receiver {
            expected: 0,
            received: vec![0; (packets as usize).div_ceil(64)],
            out_of_order: 0,
            unacked_bytes: 0,
        }
    }

    /// True if `psn` has arrived.
    #[inline]
    pub fn has(&self, psn: u32) -> bool {
        self.received
            .get((psn / 64) as usize)
            .is_some_and(|w| w >> (psn % 64) & 1 == 1)
    }

    /// Records a new arrival and advances the cumulative point; false for duplicates.
    pub fn accept(&mut self, psn: u32) -> bool {
        if psn < self.expected || self.has(psn) {
            return false;
        }
        let word = (psn / 64) as usize;
        if word >= self.received.len() {
            self.received.resize(word + 1, 0);
        }
        self.received[word] |= 1 << (psn % 64);
        if psn == self.expected {
            while self.has(self.expected) {
                if self.expected != psn {
                    self.out_of_order -= 1;
                }
                self.expected += 1;
            }
        } else {
            self.out_of_order += 1;
        }
        true
    }

    /// 64 arrival bits starting at `base` (bits past the end of the flow are zero).
    pub fn bits_from(&self, base: u32) -> u64 {
        let word = (base / 64) as usize;
        let shift = base % 64;
        let lo = self.received.get(word).copied().unwrap_or(0) >> shift;
        let hi = if shift == 0 {
            0
        } else {
            self.received.get(word + 1).copied().unwrap_or(0) << (64 - shift)
        };
        lo | hi
    }

    /// The selective-ACK window reported with an ACK for `psn`: it ends at `psn` when possible
    /// and never starts at or below the cumulative point.
    pub fn sack(&self, psn: u32) -> (u32, u64) {
        let base = psn.saturating_sub(63).max(self.expected + 1);
        (base, self.bits_from(base))
    }

    /// Releases memory of a finished connection.
    pub fn release(&mut self) {
        self.received = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcParams;
    use crate::lb::{LbContext, LbOptions};

    const MTU: u32 = 4150;
    const HEADER: u32 = 64;
    const RTO: Time = 40_000_000;

    /// A sender of a 20-packet flow with an MPRDMA window of `window_packets` full packets.
    fn sender(window_packets: u64) -> (Sender, Sizes) {
        let sizes = Sizes::new(20 * 4086, MTU, HEADER);
        let window = window_packets * MTU as u64;
        let params = CcParams {
            mtu: MTU,
            base_rtt: 8_000_000,
            bdp: window,
            max_cwnd: window,
            initial_cwnd: window,
            fast_increase: false,
        };
        let cc = crate::cc::build("mprdma", &params).unwrap();
        let ctx = LbContext {
            flow_index: 0,
            base_rtt: 8_000_000,
            rto: RTO,
            bdp_packets: 4,
            trimming: false,
        };
        let mut rng = Rng::new(1);
        let lb = crate::lb::build("ops", &LbOptions::default(), &ctx, &mut rng).unwrap();
        (Sender::new(sizes.packets, cc, lb, rng), sizes)
    }

    /// Sends while the window allows; returns the PSNs sent.
    fn fill(s: &mut Sender, sizes: &Sizes, now: Time) -> Vec<u32> {
        let mut sent = Vec::new();
        while s.can_send() {
            sent.push(s.transmit(now, sizes).psn);
        }
        sent
    }

    /// A timeout of the oldest packet, as the simulation handles it.
    fn time_out(s: &mut Sender) -> u64 {
        let (_, psn) = s.oldest_in_flight().unwrap();
        s.send_order.pop_front();
        let wire = s.declare_lost(psn);
        s.cc.on_timeout(wire, 0);
        wire
    }

    #[test]
    fn rts_only_when_the_window_has_no_room_and_once_per_rto() {
        // A full window: the timeout takes the packet off in_flight and the window alike, so
        // there is still no room for it.
        let (mut s, sizes) = sender(4);
        assert_eq!(fill(&mut s, &sizes, 0), vec![0, 1, 2, 3]);
        let wire = time_out(&mut s);
        assert!(!s.can_send(), "the window forbids the retransmission");
        assert!(s.rts_due(RTO, wire, RTO));
        let psn = s.register_rts(RTO, 7, HEADER);
        assert_eq!(psn, 4, "the RTS takes the next PSN");
        assert_eq!(
            s.in_flight,
            3 * MTU as i64,
            "an RTS adds nothing to in_flight"
        );
        // Another timeout within one RTO of it may not send a second RTS.
        let wire = time_out(&mut s);
        assert!(!s.rts_due(RTO + RTO / 2, wire, RTO));
        assert!(s.rts_due(2 * RTO, wire, RTO), "one RTO later it may");
        // A lone packet: after its timeout the window has room, so no RTS.
        let (mut s, sizes) = sender(4);
        s.transmit(0, &sizes);
        let wire = time_out(&mut s);
        assert!(s.can_send());
        assert!(!s.rts_due(RTO, wire, RTO));
    }

    #[test]
    fn data_after_an_rts_takes_the_next_psns() {
        let (mut s, sizes) = sender(4);
        fill(&mut s, &sizes, 0);
        time_out(&mut s);
        s.register_rts(RTO, 7, HEADER);
        // Acknowledge everything outstanding: PSN 0 (queued), 1-3, and the RTS (PSN 4).
        for psn in 0..5 {
            s.mark_acked(psn);
        }
        s.advance_cumulative();
        assert_eq!(s.cum_acked, 5);
        let tx = s.transmit(2 * RTO, &sizes);
        assert_eq!(
            (tx.psn, tx.wire, tx.retransmit),
            (5, MTU, false),
            "data packet 4 travels with PSN 5"
        );
        assert_eq!(s.next_data, 5);
        assert!(!s.finished());
    }

    #[test]
    fn a_lost_rts_costs_64_bytes_of_in_flight_accounting() {
        let (mut s, sizes) = sender(4);
        fill(&mut s, &sizes, 0);
        time_out(&mut s);
        let rts = s.register_rts(RTO, 7, HEADER);
        // The three data packets still out are acknowledged; in_flight is exact again.
        for psn in 1..4 {
            s.mark_acked(psn);
        }
        assert_eq!(s.in_flight, 0);
        // The RTS is lost: its timeout takes 64 bytes off although it never added them.
        let (_, oldest) = s.oldest_in_flight().unwrap();
        assert_eq!(oldest, rts);
        s.send_order.pop_front();
        assert_eq!(s.declare_lost(rts), 64);
        s.cc.on_timeout(64, 0);
        assert_eq!(s.in_flight, -64);
        // Retransmissions go lowest PSN first: the data packet, then the RTS as a 64-byte data
        // packet, which counts in in_flight like data.
        let tx = s.transmit(2 * RTO, &sizes);
        assert_eq!((tx.psn, tx.wire, tx.retransmit), (0, MTU, true));
        let tx = s.transmit(2 * RTO, &sizes);
        assert_eq!((tx.psn, tx.wire, tx.retransmit), (rts, 64, true));
        assert_eq!(s.in_flight, MTU as i64);
        // Both arrive and are acknowledged: 64 bytes short of the truth for good.
        assert_eq!(s.mark_acked(0), MTU as u64);
        assert_eq!(s.mark_acked(rts), 64);
        assert_eq!(s.in_flight, -64);
        assert_eq!(
            s.window(),
            4 * MTU as i64 - MTU as i64 - 64,
            "the window lost 64 too"
        );
    }

    #[test]
    fn an_rts_acknowledged_while_queued_gives_its_bytes_back() {
        let (mut s, sizes) = sender(4);
        fill(&mut s, &sizes, 0);
        time_out(&mut s);
        let rts = s.register_rts(RTO, 7, HEADER);
        let before = s.in_flight;
        s.declare_lost(rts);
        assert_eq!(s.in_flight, before - 64);
        // Its own ACK arrives late, while the retransmission still waits: nothing was added
        // for it, so what the timeout took is given back and no payload is credited.
        assert_eq!(s.mark_acked(rts), 0);
        assert_eq!(s.in_flight, before);
        // The original RTS's ACK when it was not declared lost credits nothing either.
        let (mut s, sizes) = sender(4);
        fill(&mut s, &sizes, 0);
        time_out(&mut s);
        let rts = s.register_rts(RTO, 7, HEADER);
        let before = s.in_flight;
        assert_eq!(s.mark_acked(rts), 0);
        assert_eq!(s.in_flight, before);
    }

    #[test]
    fn receiver_bitmap_grows_past_its_first_size() {
        let mut r = Receiver::new(10);
        assert!(r.accept(200));
        assert!(r.has(200) && !r.has(199));
        for p in 0..200 {
            r.accept(p);
        }
        assert_eq!(r.expected, 201);
        assert_eq!(r.out_of_order, 0);
    }

    #[test]
    fn receiver_tracks_cumulative_and_sack() {
        let mut r = Receiver::new(200);
        assert!(r.accept(0));
        assert!(r.accept(2));
        assert!(r.accept(70));
        assert!(!r.accept(2));
        assert_eq!(r.expected, 1);
        assert_eq!(r.out_of_order, 2);
        let (base, bits) = r.sack(70);
        assert_eq!(base, 7);
        assert_eq!(bits, 1 << 63);
        let (base, bits) = r.sack(2);
        assert_eq!(base, 2);
        assert_eq!(bits & 1, 1);
        assert!(r.accept(1));
        assert_eq!(r.expected, 3);
        assert_eq!(r.out_of_order, 1);
    }

    #[test]
    fn bits_cross_word_boundaries() {
        let mut r = Receiver::new(256);
        for p in [60, 63, 64, 100, 127, 128] {
            r.accept(p);
        }
        let b = r.bits_from(60);
        for i in 0..64 {
            assert_eq!(b >> i & 1 == 1, r.has(60 + i), "bit {i}");
        }
    }
}
