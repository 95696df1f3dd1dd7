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

/// Per-PSN sender record.
#[derive(Clone, Copy, Debug)]
pub struct PsnRecord {
    /// Time of the latest transmission.
    pub sent_at: Time,
    /// EV of the latest transmission.
    pub ev: u16,
    /// State.
    pub state: PsnState,
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
}

/// Sender state of one connection.
pub struct Sender {
    /// Packets in the flow.
    pub packets: u32,
    /// Next PSN never sent before.
    pub next_new: u32,
    /// All PSNs below this are acknowledged.
    pub cum_acked: u32,
    /// Bytes sent and not yet acknowledged or declared lost.
    pub in_flight: u64,
    /// One record per PSN.
    pub records: Vec<PsnRecord>,
    /// (send time, PSN) in transmission order; stale entries are skipped lazily.
    pub send_order: VecDeque<(Time, u32)>,
    /// PSNs waiting for retransmission, lowest first; stale entries are skipped lazily.
    pub retransmit: BinaryHeap<Reverse<u32>>,
    /// A retransmission-timer event is scheduled.
    pub timer_pending: bool,
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
    /// A sender for `packets` packets.
    pub fn new(
        packets: u32,
        cc: Box<dyn CongestionControl>,
        lb: Box<dyn LoadBalancer>,
        rng: Rng,
    ) -> Self {
        Sender {
            packets,
            next_new: 0,
            cum_acked: 0,
            in_flight: 0,
            records: vec![
                PsnRecord {
                    sent_at: 0,
                    ev: 0,
                    state: PsnState::Unsent
                };
                packets as usize
            ],
            send_order: VecDeque::new(),
            retransmit: BinaryHeap::new(),
            timer_pending: false,
            cc,
            lb,
            rng,
            in_ready_list: false,
        }
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

    /// True when the window and the backlog allow one more packet (it may overshoot by one).
    pub fn can_send(&mut self) -> bool {
        self.cum_acked < self.packets
            && self.cc.cwnd() > self.in_flight
            && (self.next_new < self.packets || self.next_retransmission().is_some())
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

    /// Marks a PSN of `wire_size` bytes acknowledged; returns the bytes newly acknowledged
    /// (`wire_size`, or 0 if it already was).
    #[inline]
    pub fn mark_acked(&mut self, psn: u32, wire_size: u32) -> u64 {
        let r = &mut self.records[psn as usize];
        match r.state {
            PsnState::Acked => return 0,
            PsnState::InFlight => self.in_flight -= wire_size as u64,
            PsnState::Queued | PsnState::Unsent => {}
        }
        r.state = PsnState::Acked;
        wire_size as u64
    }

    /// Advances the cumulative point over acknowledged PSNs.
    pub fn advance_cumulative(&mut self) {
        while self.cum_acked < self.packets
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
    /// Bit per PSN: arrived.
    pub received: Vec<u64>,
    /// PSNs received above `expected`.
    pub out_of_order: u32,
    /// Wire bytes accepted since the last ACK (for ACK coalescing).
    pub unacked_bytes: u64,
}

impl Receiver {
    /// A receiver for `packets` packets.
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
        self.received[(psn / 64) as usize] >> (psn % 64) & 1 == 1
    }

    /// Records a new arrival and advances the cumulative point; false for duplicates.
    pub fn accept(&mut self, psn: u32, packets: u32) -> bool {
        if psn < self.expected || self.has(psn) {
            return false;
        }
        self.received[(psn / 64) as usize] |= 1 << (psn % 64);
        if psn == self.expected {
            while self.expected < packets && self.has(self.expected) {
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
        assert!(r.accept(0, 200));
        assert!(r.accept(2, 200));
        assert!(r.accept(70, 200));
        assert!(!r.accept(2, 200));
        assert_eq!(r.expected, 1);
        assert_eq!(r.out_of_order, 2);
        let (base, bits) = r.sack(70);
        assert_eq!(base, 7);
        assert_eq!(bits, 1 << 63);
        let (base, bits) = r.sack(2);
        assert_eq!(base, 2);
        assert_eq!(bits & 1, 1);
        assert!(r.accept(1, 200));
        assert_eq!(r.expected, 3);
        assert_eq!(r.out_of_order, 1);
    }

    #[test]
    fn bits_cross_word_boundaries() {
        let mut r = Receiver::new(256);
        for p in [60, 63, 64, 100, 127, 128] {
            r.accept(p, 256);
        }
        let b = r.bits_from(60);
        for i in 0..64 {
            assert_eq!(b >> i & 1 == 1, r.has(60 + i), "bit {i}");
        }
    }
}
