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
    /// A path probe to send with it (LAPS), on this route.
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
    /// The data packet's one-way delay, as LAPS receivers echo it (instead of a SACK bitmap).
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
