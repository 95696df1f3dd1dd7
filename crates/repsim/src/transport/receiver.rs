//! The receiving side of a connection: accepts packets in any order, and decides by its
//! [`AckPolicy`] when to acknowledge, with a cumulative ACK and a 64-bit SACK bitmap, and when to
//! ask the sender to slow down (CNP). The RoCE NIC modes' receivers (go-back-N, IRN) are in
//! `receiver/rnic.rs`.
use super::TransportMode;
use crate::engine::Time;

/// When a receiver acknowledges and signals congestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPolicy {
    /// Acknowledge once this many wire bytes arrived since the last ACK (at most one MTU: every
    /// packet; k MTUs: every k packets). ECN-marked, ACK-requested and first packets, and the
    /// packet that completes the flow, are acknowledged at once whatever the count.
    pub every_bytes: u64,
    /// Set the CNP flag on the ACK of an ECN-marked packet, at most once per this interval per
    /// connection (DCQCN-style congestion notification); `None`: never.
    pub cnp_interval: Option<Time>,
    /// Count the bytes since the last ACK in 16 bits, as the reference receiver does: a
    /// threshold above 65,535 minus a packet is then reached only when the wrapping counter
    /// happens to land at or above it (its `-sack_threshold 64000` ACKs every few dozen
    /// packets, not every 16).
    pub counter_16bit: bool,
    /// How out-of-order and trimmed packets are answered (see [`super::mode`]).
    pub mode: TransportMode,
    /// Go-back-N: at most one NACK per this interval for the same expected PSN.
    pub nack_interval: Time,
    /// An ACK-requested packet that arrives above a hole is answered at once and again when
    /// the holes below the highest arrival are filled (both reference receivers' latch).
    pub ack_request_latch: bool,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy {
            every_bytes: 4150,
            cnp_interval: None,
            counter_16bit: false,
            mode: TransportMode::Uec,
            nack_interval: super::mode::DEFAULT_NACK_INTERVAL,
            ack_request_latch: true,
        }
    }
}

/// A data packet as the receiver reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataArrival {
    /// Its PSN.
    pub psn: u32,
    /// Its size on the wire.
    pub wire: u32,
    /// Its payload (0 for a trimmed packet and for a retransmitted RTS).
    pub payload: u32,
    /// It was trimmed on the way (only its header arrived).
    pub trimmed: bool,
    /// It carries an ECN mark.
    pub ecn: bool,
    /// Its sender asked for an immediate ACK.
    pub ack_request: bool,
}

/// The acknowledgement the receiver sends back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// A NACK (the packet was trimmed and is missing) rather than an ACK.
    pub nack: bool,
    /// Next PSN expected in order.
    pub cum_ack: u32,
    /// First PSN of the SACK bitmap.
    pub sack_base: u32,
    /// Bit i: PSN `sack_base + i` has arrived.
    pub sack_bits: u64,
    /// Ask the sender to slow down.
    pub cnp: bool,
}

/// What one arrival did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxOutcome {
    /// The packet was intact and new: its payload is delivered.
    pub delivered: bool,
    /// The answer to send now, if any.
    pub reply: Option<Reply>,
}

/// Receiver state of one connection.
#[derive(Clone, Debug)]
pub struct Receiver {
    /// Payload bytes of the whole flow.
    bytes: u64,
    /// Payload bytes delivered so far (each once).
    delivered: u64,
    /// Next PSN expected in order (all below it have arrived).
    expected: u32,
    /// Word index (PSN / 64) of `bits[0]`.
    base_word: u32,
    /// Bit per PSN from `base_word * 64`: arrived. Words wholly below the cumulative point
    /// are cut off once they are half of the vector.
    bits: Vec<u64>,
    /// PSNs received above `expected`.
    out_of_order: u32,
    /// Wire bytes accepted since the last ACK.
    unacked_bytes: u64,
    /// An ACK request arrived; with [`AckPolicy::ack_request_latch`], the arrival that leaves
    /// nothing out of order is acknowledged at once.
    ack_requested: bool,
    /// Time of the latest CNP.
    last_cnp: Option<Time>,
    /// Go-back-N: the expected PSN the latest NACK asked for, and when.
    last_nack: Option<(u32, Time)>,
    policy: AckPolicy,
    /// Its ACKs echo the data packet's one-way delay instead of a SACK bitmap.
    echo_delay: bool,
    /// Header bytes its data packets carry beyond the run's header (a source route).
    extra_header: u32,
}

impl Receiver {
    /// A receiver of a `bytes`-byte flow.
    pub fn new(bytes: u64, policy: AckPolicy) -> Self {
        Receiver {
            bytes,
            delivered: 0,
            expected: 0,
            base_word: 0,
            bits: Vec::new(),
            out_of_order: 0,
            unacked_bytes: 0,
            ack_requested: false,
            last_cnp: None,
            last_nack: None,
            policy,
            echo_delay: false,
            extra_header: 0,
        }
    }

    /// The same receiver for a scheme's own transport: its ACKs echo each data packet's
    /// one-way delay, and its data packets carry `extra_header` bytes of source route beyond
    /// the run's header.
    pub fn with_delay_echo(mut self, extra_header: u32) -> Self {
        self.echo_delay = true;
        self.extra_header = extra_header;
        self
    }

    /// Header bytes its data packets carry beyond the run's header.
    #[inline]
    pub fn extra_header(&self) -> u32 {
        self.extra_header
    }

    /// Whether its ACKs echo the one-way delay.
    #[inline]
    pub fn echoes_delay(&self) -> bool {
        self.echo_delay
    }

    /// Next PSN expected in order.
    pub fn expected(&self) -> u32 {
        self.expected
    }

    /// PSNs held above the cumulative point.
    pub fn out_of_order(&self) -> u32 {
        self.out_of_order
    }

    /// Payload bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Heap bytes held by the arrival bitmap, by capacity.
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8
    }

    /// True if `psn` has arrived.
    #[inline]
    pub fn has(&self, psn: u32) -> bool {
        // Words below `base_word` were dropped because every PSN in them had arrived.
        psn / 64 < self.base_word || self.word_of(psn).is_some_and(|w| w >> (psn % 64) & 1 == 1)
    }

    /// The word of the arrival bits that holds `psn`, if it is allocated (what [`Self::has`]
    /// reads; the prefetcher fetches it ahead).
    #[inline]
    pub fn word_of(&self, psn: u32) -> Option<&u64> {
        let word = (psn / 64).checked_sub(self.base_word)?;
        self.bits.get(word as usize)
    }

    /// Records a new arrival and advances the cumulative point; false for duplicates.
    pub fn accept(&mut self, psn: u32) -> bool {
        if psn < self.expected || self.has(psn) {
            return false;
        }
        let word = (psn / 64 - self.base_word) as usize;
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        self.bits[word] |= 1 << (psn % 64);
        if psn == self.expected {
            while self.has(self.expected) {
                if self.expected != psn {
                    self.out_of_order -= 1;
                }
                self.expected += 1;
            }
            // Words wholly below the cumulative point are no longer needed.
            let dead = (self.expected / 64 - self.base_word) as usize;
            if dead >= 8 && dead * 2 >= self.bits.len() {
                self.bits.drain(..dead);
                self.base_word += dead as u32;
            }
        } else {
            self.out_of_order += 1;
        }
        true
    }

    /// 64 arrival bits starting at `base` (at or above the cumulative point).
    pub fn bits_from(&self, base: u32) -> u64 {
        let word = (base / 64).saturating_sub(self.base_word) as usize;
        let shift = base % 64;
        let lo = self.bits.get(word).copied().unwrap_or(0) >> shift;
        let hi = if shift == 0 {
            0
        } else {
            self.bits.get(word + 1).copied().unwrap_or(0) << (64 - shift)
        };
        lo | hi
    }

    /// The selective-ACK window reported with an ACK for `psn`: it ends at `psn` when possible
    /// and never starts at or below the cumulative point.
    pub fn sack(&self, psn: u32) -> (u32, u64) {
        let base = psn.saturating_sub(63).max(self.expected + 1);
        (base, self.bits_from(base))
    }

    fn reply(&mut self, psn: u32, nack: bool, cnp: bool) -> Reply {
        let (sack_base, sack_bits) = self.sack(psn);
        Reply {
            nack,
            cum_ack: self.expected,
            sack_base,
            sack_bits,
            cnp,
        }
    }

    /// A data packet arrived at `now`.
    pub fn on_data(&mut self, now: Time, d: &DataArrival) -> RxOutcome {
        if self.policy.mode.is_rnic() {
            return self.on_rnic_data(now, d);
        }
        if d.trimmed {
            // Only the header made it: NACK it unless it is already here.
            let have = d.psn < self.expected || self.has(d.psn);
            self.unacked_bytes = 0;
            return RxOutcome {
                delivered: false,
                reply: Some(self.reply(d.psn, !have, false)),
            };
        }
        let in_order = d.psn == self.expected;
        let delivered = self.accept(d.psn);
        if delivered {
            self.delivered += d.payload as u64;
        }
        let drained = delivered && self.latch_drained(d.ack_request, in_order);
        if !self.count_for_ack(d) && !drained {
            return RxOutcome {
                delivered,
                reply: None,
            };
        }
        self.ack_now(now, d, delivered)
    }

    /// Answers `d` with an ACK now (with a CNP if the policy says one is due) and restarts
    /// ACK coalescing.
    fn ack_now(&mut self, now: Time, d: &DataArrival, delivered: bool) -> RxOutcome {
        self.unacked_bytes = 0;
        let cnp = self.cnp_due(now, d.ecn);
        RxOutcome {
            delivered,
            reply: Some(self.reply(d.psn, false, cnp)),
        }
    }

    /// Answers `d` with a NACK now, its CNP flag set as `cnp`, and restarts ACK coalescing.
    fn nack_now(&mut self, d: &DataArrival, delivered: bool, cnp: bool) -> RxOutcome {
        self.unacked_bytes = 0;
        RxOutcome {
            delivered,
            reply: Some(self.reply(d.psn, true, cnp)),
        }
    }

    /// Whether the answer to a packet arriving at `now` (ECN-marked: `ecn`) carries a CNP, by
    /// the policy's interval; notes it if so.
    fn cnp_due(&mut self, now: Time, ecn: bool) -> bool {
        let cnp = ecn
            && self
                .policy
                .cnp_interval
                .is_some_and(|i| self.last_cnp.is_none_or(|t| now - t >= i));
        if cnp {
            self.last_cnp = Some(now);
        }
        cnp
    }

    /// With the ACK-request latch: notes a new packet's request, and says whether this new
    /// packet (`in_order`: it was the next expected) left nothing out of order while a request
    /// was pending, which clears it.
    fn latch_drained(&mut self, ack_request: bool, in_order: bool) -> bool {
        if !self.policy.ack_request_latch {
            return false;
        }
        self.ack_requested |= ack_request;
        let drained = self.ack_requested && in_order && self.out_of_order == 0;
        if drained {
            self.ack_requested = false;
        }
        drained
    }

    /// Counts `wire` bytes towards ACK coalescing; true if the packet is to be acknowledged
    /// now (the byte threshold, an ECN mark, an ACK request, the first packet or the flow's
    /// last byte).
    fn count_for_ack(&mut self, d: &DataArrival) -> bool {
        self.unacked_bytes += d.wire as u64;
        if self.policy.counter_16bit {
            self.unacked_bytes &= 0xFFFF;
        }
        self.unacked_bytes >= self.policy.every_bytes
            || d.ecn
            || d.ack_request
            || d.psn == 0
            || self.delivered == self.bytes
    }

    /// An RTS arrived: its PSN counts as received and it is acknowledged at once, as a data
    /// packet would be; it carries no payload and does not count towards ACK coalescing.
    pub fn on_rts(&mut self, psn: u32) -> Reply {
        self.accept(psn);
        self.reply(psn, false, false)
    }

    /// Releases memory of a finished connection.
    pub fn release(&mut self) {
        self.bits = Vec::new();
    }
}

mod rnic;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_tracks_cumulative_and_sack() {
        let mut r = Receiver::new(1 << 20, AckPolicy::default());
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

    /// `word_of` is the word `has` reads, and none below the kept words or beyond them.
    #[test]
    fn word_of_points_at_the_arrival_bits() {
        let mut r = Receiver::new(1 << 20, AckPolicy::default());
        assert!(r.word_of(0).is_none(), "no words before the first arrival");
        for p in [3, 70, 130] {
            r.accept(p);
        }
        for p in [3, 70, 130] {
            assert_eq!(r.word_of(p).map(|w| w >> (p % 64) & 1), Some(1), "psn {p}");
        }
        assert!(r.word_of(64 * 100).is_none());
    }

    #[test]
    fn bits_cross_word_boundaries() {
        let mut r = Receiver::new(1 << 20, AckPolicy::default());
        for p in [60, 63, 64, 100, 127, 128] {
            r.accept(p);
        }
        let b = r.bits_from(60);
        for i in 0..64 {
            assert_eq!(b >> i & 1 == 1, r.has(60 + i), "bit {i}");
        }
    }

    #[test]
    fn the_bitmap_slides_with_the_cumulative_point() {
        let mut r = Receiver::new(1 << 30, AckPolicy::default());
        for p in 0..100_000 {
            assert!(r.accept(p));
        }
        assert_eq!(r.expected, 100_000);
        assert!(r.bits.len() <= 16, "{} words kept", r.bits.len());
        assert!(r.has(5) && !r.has(100_000));
        assert!(r.accept(100_200));
        assert!(r.has(100_200) && !r.has(100_199));
        assert!(r.heap_bytes() < 1024);
        for p in 100_000..100_200 {
            r.accept(p);
        }
        assert_eq!(r.expected, 100_201);
        assert_eq!(r.out_of_order, 0);
    }

    #[test]
    fn policy_coalesces_and_flags_cnp() {
        let policy = AckPolicy {
            every_bytes: 3 * 4150,
            cnp_interval: Some(50),
            ..AckPolicy::default()
        };
        let mut r = Receiver::new(10 * 4086, policy);
        let data = |psn, ecn| DataArrival {
            psn,
            wire: 4150,
            payload: 4086,
            trimmed: false,
            ecn,
            ack_request: false,
        };
        // The first packet is acknowledged at once, then every third.
        assert!(r.on_data(0, &data(0, false)).reply.is_some());
        assert!(r.on_data(1, &data(1, false)).reply.is_none());
        assert!(r.on_data(2, &data(2, false)).reply.is_none());
        assert!(r.on_data(3, &data(3, false)).reply.is_some());
        // A marked packet is acknowledged at once with a CNP, at most one per 50 time units.
        assert!(r.on_data(10, &data(4, true)).reply.unwrap().cnp);
        assert!(!r.on_data(20, &data(5, true)).reply.unwrap().cnp);
        assert!(r.on_data(60, &data(6, true)).reply.unwrap().cnp);
        // A trimmed packet is NACKed; a trimmed copy of one already here is ACKed.
        let trimmed = |psn| DataArrival {
            trimmed: true,
            payload: 0,
            wire: 64,
            ..data(psn, false)
        };
        assert!(r.on_data(70, &trimmed(8)).reply.unwrap().nack);
        assert!(!r.on_data(70, &trimmed(6)).reply.unwrap().nack);
        assert_eq!(r.delivered(), 7 * 4086);
    }

    /// An ACK request that arrives above a hole is answered at once and, with the latch, again
    /// by the arrival that fills the last hole below it (not by one that leaves a hole).
    #[test]
    fn a_latched_ack_request_is_answered_again_when_the_holes_fill() {
        let data = |psn, ack_request| DataArrival {
            psn,
            wire: 4150,
            payload: 4086,
            trimmed: false,
            ecn: false,
            ack_request,
        };
        let replies = |latch: bool| {
            let policy = AckPolicy {
                every_bytes: 16 * 4150,
                ack_request_latch: latch,
                ..AckPolicy::default()
            };
            let mut r = Receiver::new(20 * 4086, policy);
            // 0 is first (acknowledged); 3 requests an ACK above holes at 1 and 2; 2 fills one
            // hole, 1 the last; 4 and 5 arrive in order with nothing pending.
            let order = [
                (0, false),
                (3, true),
                (2, false),
                (1, false),
                (4, false),
                (5, false),
            ];
            order
                .iter()
                .map(|&(psn, ar)| r.on_data(0, &data(psn, ar)).reply.is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(replies(false), [true, true, false, false, false, false]);
        assert_eq!(replies(true), [true, true, false, true, false, false]);
    }

    /// Packets between count-triggered ACKs of a long in-order stream of 4150 B packets.
    fn ack_gaps(policy: AckPolicy) -> Vec<u32> {
        let mut r = Receiver::new(u64::MAX, policy);
        let mut last = 0;
        let mut gaps = Vec::new();
        for psn in 0..2000 {
            let d = DataArrival {
                psn,
                wire: 4150,
                payload: 4086,
                trimmed: false,
                ecn: false,
                ack_request: false,
            };
            if r.on_data(0, &d).reply.is_some() && psn > 0 {
                gaps.push(psn - last);
                last = psn;
            }
        }
        gaps
    }

    #[test]
    fn a_16_bit_counter_wraps_large_thresholds_as_the_reference_does() {
        let exact = AckPolicy {
            every_bytes: 64_000,
            ..AckPolicy::default()
        };
        // Exact counting: every 16th packet (16 x 4150 = 66,400 >= 64,000).
        assert!(ack_gaps(exact).iter().all(|&g| g == 16));
        let wrapped = ack_gaps(AckPolicy {
            counter_16bit: true,
            ..exact
        });
        // Wrapping: the counter only lands in [64,000, 65,535] now and then.
        let mean = wrapped.iter().sum::<u32>() as f64 / wrapped.len() as f64;
        assert!(mean > 24.0, "mean gap {mean}");
        assert!(wrapped.iter().all(|&g| g >= 16));
        // Small thresholds never wrap: identical either way.
        let small = AckPolicy {
            every_bytes: 16_000,
            ..AckPolicy::default()
        };
        assert_eq!(
            ack_gaps(small),
            ack_gaps(AckPolicy {
                counter_16bit: true,
                ..small
            })
        );
    }
}
