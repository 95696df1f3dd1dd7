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
