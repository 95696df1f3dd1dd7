//! The sender's per-PSN records and the values its methods return.
use crate::cc::CongestionControl;
use crate::engine::Time;
use crate::lb::{LbEvent, LoadBalancer, PathChoice};

/// Where one PSN stands at the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PsnState {
    /// Handed out, not sent yet.
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

/// Per-PSN sender record (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    /// What an acknowledged PSN below the ring's start looks like.
    pub(super) const ACKED: PsnRecord = PsnRecord {
        state: PsnState::Acked,
        ..PsnRecord::UNSENT
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

/// The records of the PSNs from `base` up to (not including) `end`, in a ring indexed by PSN
/// whose capacity is a power of two. PSNs below `base` are acknowledged (their records are
/// gone); `base` moves up to the cumulative point only when the ring is full, so the ring
/// grows only when the outstanding range outgrows it, and a sender's records stay in one
/// block the size of its window, reused in turn (a vector cut at the front, as before, kept up
/// to twice that and copied records on every cut).
///
/// Beside the records, one bit per slot says whether its PSN is acknowledged: every ACK
/// carries a 64-bit selective-ACK map and a cumulative point, most of whose PSNs earlier ACKs
/// already acknowledged (13 of 14 on the 8,192-host permutation), and those bits are checked
/// in one word instead of a 16-byte record each.
#[derive(Debug, Default)]
pub(super) struct PsnRing {
    /// Slots; the record of PSN `p` is in slot `p & (len - 1)`.
    slots: Box<[PsnRecord]>,
    /// Bit `p & (len - 1)` (word by word): PSN `p`'s record is [`PsnState::Acked`], for rings
    /// of up to [`INLINE_BITS`] slots: kept inside the sender, whose lines the event loop
    /// fetches ahead of its packets (in a separate allocation, `perf` showed the bit updates
    /// of every ACK and transmission stalling on the 8,192-host run).
    acked_inline: [u64; INLINE_BITS / 64],
    /// The same for larger rings (empty otherwise).
    acked_heap: Box<[u64]>,
    /// Lowest PSN with a record.
    base: u32,
    /// One past the highest PSN handed out.
    end: u32,
}

impl PsnRing {
    /// Lowest PSN with a record (every PSN below it is acknowledged).
    #[inline]
    pub(super) fn base(&self) -> u32 {
        self.base
    }

    /// The record of `psn`, if it has one (`base <= psn < end`).
    #[inline]
    pub(super) fn get(&self, psn: u32) -> Option<&PsnRecord> {
        if psn.wrapping_sub(self.base) < self.end - self.base {
            Some(&self.slots[psn as usize & (self.slots.len() - 1)])
        } else {
            None
        }
    }

    /// The record of `psn`, which must have one.
    #[inline]
    pub(super) fn get_mut(&mut self, psn: u32) -> &mut PsnRecord {
        assert!(
            psn.wrapping_sub(self.base) < self.end - self.base,
            "PSN {psn} has no record (records {}..{})",
            self.base,
            self.end
        );
        let mask = self.slots.len() - 1;
        &mut self.slots[psn as usize & mask]
    }

    /// True if `psn` is acknowledged: below the ring, or its record says so (through the
    /// bit set, without reading the record). PSNs not handed out yet are not.
    #[inline]
    pub(super) fn is_acked(&self, psn: u32) -> bool {
        if psn < self.base {
            return true;
        }
        if psn >= self.end {
            return false;
        }
        let (word, bit) = self.acked_bit(psn as usize);
        self.acked_words()[word] & bit != 0
    }

    /// Notes that `psn`'s record (which it must have) is now acknowledged; a PSN never goes
    /// back from that state, and its bit is cleared only when the slot takes a new PSN.
    #[inline]
    pub(super) fn set_acked(&mut self, psn: u32) {
        debug_assert!(psn >= self.base && psn < self.end);
        let (word, bit) = self.acked_bit(psn as usize);
        self.acked_words_mut()[word] |= bit;
    }

    /// The word and mask of `psn`'s acknowledged bit (its slot's).
    #[inline]
    fn acked_bit(&self, psn: usize) -> (usize, u64) {
        let slot = psn & (self.slots.len() - 1);
        (slot / 64, 1 << (slot % 64))
    }

    #[inline]
    fn acked_words(&self) -> &[u64] {
        if self.slots.len() <= INLINE_BITS {
            &self.acked_inline
        } else {
            &self.acked_heap
        }
    }

    #[inline]
    fn acked_words_mut(&mut self) -> &mut [u64] {
        if self.slots.len() <= INLINE_BITS {
            &mut self.acked_inline
        } else {
            &mut self.acked_heap
        }
    }

    /// The record of the latest PSN handed out.
    #[inline]
    pub(super) fn last(&self) -> Option<&PsnRecord> {
        self.get(self.end.wrapping_sub(1))
    }

    /// Hands out PSN `end` with an unsent record; `acked_below` is the cumulative point, below
    /// which records may be dropped to make room.
    #[inline]
    pub(super) fn push(&mut self, acked_below: u32) {
        if (self.end - self.base) as usize == self.slots.len() {
            self.base = acked_below;
            if (self.end - self.base) as usize == self.slots.len() {
                self.grow();
            }
        }
        let mask = self.slots.len() - 1;
        self.slots[self.end as usize & mask] = PsnRecord::UNSENT;
        let (word, bit) = self.acked_bit(self.end as usize);
        self.acked_words_mut()[word] &= !bit;
        self.end += 1;
    }

    /// Frees the slots; every PSN handed out then reads as acknowledged.
    pub(super) fn release(&mut self) {
        self.slots = Box::default();
        self.acked_inline = [0; INLINE_BITS / 64];
        self.acked_heap = Box::default();
        self.base = self.end;
    }

    /// Records the ring can hold.
    pub(super) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Doubles the capacity, moving each record to its slot in the larger ring.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = (self.slots.len() * 2).max(MIN_RING);
        let old = std::mem::replace(
            &mut self.slots,
            vec![PsnRecord::UNSENT; capacity].into_boxed_slice(),
        );
        self.acked_inline = [0; INLINE_BITS / 64];
        if capacity > INLINE_BITS {
            self.acked_heap = vec![0; capacity / 64].into_boxed_slice();
        }
        for psn in self.base..self.end {
            let record = old[psn as usize & (old.len() - 1)];
            self.slots[psn as usize & (capacity - 1)] = record;
            if record.state == PsnState::Acked {
                self.set_acked(psn);
            }
        }
    }
}

/// Smallest capacity a [`PsnRing`] allocates.
const MIN_RING: usize = 8;
/// Largest ring whose acknowledged bits stay inside the ring (and so the sender): 256 PSNs,
/// 32 bytes, enough for windows of up to about a megabyte of 4 KiB packets.
const INLINE_BITS: usize = 256;

/// What [`super::Sender::transmit`] chose to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    /// Its PSN.
    pub psn: u32,
    /// Its EV and, for source-routed load balancers, its route.
    pub path: PathChoice,
    /// Its size on the wire.
    pub wire: u32,
    /// A retransmission (of a data packet or of a lost RTS).
    pub retransmit: bool,
    /// The flow's last data packet, sent for the first time.
    pub last: bool,
    /// The packet fills the window (the receiver should ACK it at once).
    pub window_full: bool,
    /// The retransmission timer was idle: wake the sender at this time.
    pub arm_rto: Option<Time>,
    /// Something the load balancer did while choosing the path, worth recording.
    pub lb_event: Option<LbEvent>,
    /// A path probe the load balancer asked for, to send with it on this path.
    pub probe: Option<PathChoice>,
}

/// An ACK or NACK as the sender reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// A NACK rather than an ACK: `uec`, the packet `psn` was trimmed; `gbn`, a packet
    /// (`psn`) arrived out of order and was discarded, the receiver expects `cum_ack`; `irn`,
    /// the packet `psn` arrived out of order and was kept.
    pub nack: bool,
    /// PSN of the data packet it answers.
    pub psn: u32,
    /// Send time of the transmission it answers.
    pub sent_at: Time,
    /// EV of that transmission.
    pub ev: u16,
    /// Echoed ECN mark.
    pub ecn: bool,
    /// The receiver asks for a rate decrease (CNP).
    pub cnp: bool,
    /// Cumulative acknowledgement.
    pub cum_ack: u32,
    /// First PSN of the SACK bitmap.
    pub sack_base: u32,
    /// SACK bitmap.
    pub sack_bits: u64,
    /// The data packet's one-way delay, as receivers that echo delays send it (instead of a
    /// SACK bitmap).
    pub one_way: Option<Time>,
}

/// What an ACK or NACK did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckOutcome {
    /// Something the load balancer did worth recording.
    pub lb_event: Option<LbEvent>,
    /// Every byte is now acknowledged.
    pub finished: bool,
}

/// What the retransmission timer found when it fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoCheck {
    /// Nothing outstanding: the timer stays off.
    Idle,
    /// The oldest packet is not due yet: wake again at this time.
    Rearm(Time),
    /// The oldest outstanding packet (this PSN) timed out.
    Expired(u32),
}

/// What a timeout did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    /// Wire size of the packet declared lost.
    pub wire: u64,
    /// No other retransmission was waiting.
    pub rtx_was_empty: bool,
    /// Something the load balancer did worth recording.
    pub lb_event: Option<LbEvent>,
    /// Wake the timer again at this time (more packets outstanding).
    pub rearm: Option<Time>,
}

/// What a connection carries over to the next flow between the same pair when connections
/// are reused: its congestion control (window and all) and its load balancer (cached EVs,
/// freezing, penalties, its fixed EV).
pub struct ConnectionState {
    /// The congestion controller.
    pub cc: Box<dyn CongestionControl>,
    /// The load balancer.
    pub lb: Box<dyn LoadBalancer>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(psn: u32) -> PsnRecord {
        PsnRecord {
            sent_at: psn as Time * 1000,
            wire: 4096 + psn,
            state: PsnState::InFlight,
            ..PsnRecord::UNSENT
        }
    }

    /// Records survive wrapping and growing; the acknowledged prefix is dropped only when the
    /// ring is full, so a window that slides keeps one allocation.
    #[test]
    fn ring_slides_wraps_and_grows() {
        let mut ring = PsnRing::default();
        let mut cum = 0;
        for psn in 0..10_000u32 {
            // Up to 100 PSNs outstanding: the ring settles at 128 slots.
            if psn >= 100 {
                cum = psn - 100;
            }
            ring.push(cum);
            *ring.get_mut(psn) = sent(psn);
            assert!(ring.base() <= cum, "never past the cumulative point");
            for p in cum..=psn {
                assert_eq!(ring.get(p), Some(&sent(p)), "PSN {p} at {psn}");
            }
            assert_eq!(ring.get(psn + 1), None, "not handed out yet");
            assert_eq!(ring.last(), Some(&sent(psn)));
        }
        assert_eq!(ring.capacity(), 128);
        assert_eq!(
            ring.get(ring.base().wrapping_sub(1)),
            None,
            "below the base"
        );
    }

    /// A ring with more outstanding PSNs than slots grows and keeps every record.
    #[test]
    fn ring_grows_when_the_outstanding_range_does() {
        let mut ring = PsnRing::default();
        for psn in 0..1000u32 {
            ring.push(0);
            *ring.get_mut(psn) = sent(psn);
        }
        assert_eq!(ring.capacity(), 1024);
        assert!((0..1000).all(|p| ring.get(p) == Some(&sent(p))));
        ring.release();
        assert_eq!((ring.capacity(), ring.base(), ring.get(5)), (0, 1000, None));
    }

    /// The acknowledged bits follow the records through wrapping, growing and reuse of slots:
    /// a PSN reads as acknowledged exactly when it is below the ring or its record says so.
    #[test]
    fn acked_bits_follow_the_records() {
        let mut ring = PsnRing::default();
        let mut rng = crate::engine::Rng::new(7);
        let mut cum = 0;
        for psn in 0..5_000u32 {
            ring.push(cum);
            *ring.get_mut(psn) = sent(psn);
            // Acknowledge a random earlier PSN (out of order), and move the cumulative point
            // over what is acknowledged; the window varies between 1 and about 300.
            let back = (rng.next_u64() % 300) as u32;
            let p = psn.saturating_sub(back);
            if p >= ring.base() && ring.get(p).unwrap().state != PsnState::Acked {
                ring.get_mut(p).state = PsnState::Acked;
                ring.set_acked(p);
            }
            while cum <= psn && ring.is_acked(cum) {
                cum += 1;
            }
            for q in psn.saturating_sub(400)..psn + 2 {
                let by_record = ring.get(q).map(|r| r.state == PsnState::Acked);
                let expected = by_record.unwrap_or(q < ring.base());
                assert_eq!(ring.is_acked(q), expected, "PSN {q} after {psn}");
            }
        }
        // It grew through the inline bits into heap ones.
        assert!(
            ring.capacity() > INLINE_BITS,
            "it grew: {}",
            ring.capacity()
        );
        ring.release();
        assert!(ring.is_acked(4_999) && !ring.is_acked(5_000));
    }

    /// Writing a record the ring does not hold is a bug, not a silent overwrite of another.
    #[test]
    #[should_panic(expected = "has no record")]
    fn ring_refuses_a_psn_outside_it() {
        let mut ring = PsnRing::default();
        for _ in 0..20 {
            ring.push(0);
        }
        ring.get_mut(20);
    }
}
