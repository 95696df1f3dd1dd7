//! Transport modes: the UEC-like transport the REPS reference runs, and the two loss-recovery
//! styles of RoCE NICs (go-back-N for lossless fabrics, IRN's selective repeat for lossy ones)
//! as the ConWeave and LAPS reference simulators model them (an RNIC taken from the HPCC code).
//!
//! | | `uec` | `gbn` | `irn` |
//! |---|---|---|---|
//! | receiver keeps | out-of-order packets (SACK) | only in-order packets | out-of-order packets (SACK) |
//! | out-of-order arrival | ACK (with SACK) | NACK with the expected PSN, at most once per `nack_interval` for the same expected PSN, CNP flag set | NACK with the packet's own PSN (and SACK), CNP flag set |
//! | trimmed packet | NACK | discarded, as a drop (RoCE NICs do not trim) | discarded, as a drop |
//! | sender on NACK | retransmits that PSN | goes back to the first unacknowledged PSN and resends everything from there | retransmits the holes: PSNs below the NACKed one, sent before it, not SACKed |
//! | retransmission timeout | `rto` (default from the topology), one packet per expiry | `rto`, default 4 ms; everything outstanding goes again | 100 us while at most 3 MTU are in flight, else 320 us; every hole goes again |
//! | bytes in flight | the congestion control's window | the congestion control's window | also at most `irn_bdp` (default: largest base RTT x the NIC's rate) |
//! | RTS | after a timeout the window has no room for | never | never |
//!
//! Choices where the references leave room:
//! - A go-back-N sender rewinds only for a NACK whose triggering packet was sent after its
//!   previous rewind: an out-of-order packet that was already on its way when the sender went
//!   back tells nothing new. The reference rewinds on every NACK and relies on the receiver's
//!   suppression interval alone; `gbn_rewind = "every-nack"` does that. On LAPS Table 1
//!   (no loss, paper scale) it made LetFlow 8.5 % slower (181.3 against 167.1 ms), CONGA
//!   1.6 % (156.7 against 154.3) and ConWeave 0.2 % (189.1 against 188.8).
//! - An IRN sender declares a hole lost only if its latest transmission left before the packet
//!   the NACK answers (it was overtaken); a hole retransmitted since waits for its own
//!   verdict. The sender is in recovery from the first such NACK until the cumulative point
//!   passes the highest PSN sent when it began, and tells its congestion control of the loss
//!   once per recovery.
//! - `nack_interval` defaults to 4 us, the ConWeave RNIC's value; the LAPS baselines ran with
//!   500 us (the HPCC code's default), which `nack_interval = "500us"` reproduces.
//! - Congestion notifications: in the RNIC modes an ECN-marked packet's ACK carries a CNP flag
//!   (every one unless `[transport] cnp_interval` limits them), as the reference receiver
//!   does; the sender's controller (DCQCN) then limits how often it reacts. In `uec` CNPs are
//!   only sent when `cnp_interval` is set.
use serde::{Deserialize, Serialize};

use crate::engine::time::{MS, US};
use crate::engine::Time;

/// How every connection of a run acknowledges and recovers losses (`[transport] mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportMode {
    /// The UEC-like transport of the REPS reference (out-of-order delivery, SACK, NACKs for
    /// trimmed packets, RTS).
    #[default]
    Uec,
    /// Go-back-N RoCE (lossless fabrics): in-order delivery only, NACK with the expected PSN.
    Gbn,
    /// IRN (improved RoCE NIC, lossy fabrics): selective repeat with SACK and a BDP cap.
    Irn,
}

impl TransportMode {
    /// Every mode.
    pub const ALL: [TransportMode; 3] =
        [TransportMode::Uec, TransportMode::Gbn, TransportMode::Irn];

    /// Its name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            TransportMode::Uec => "uec",
            TransportMode::Gbn => "gbn",
            TransportMode::Irn => "irn",
        }
    }

    /// A RoCE NIC mode (`gbn` or `irn`).
    #[inline]
    pub fn is_rnic(self) -> bool {
        self != TransportMode::Uec
    }

    /// The fixed retransmission timeout the mode uses when none is configured (`None`: the
    /// run's, from the topology).
    pub fn default_rto(self) -> Option<Time> {
        match self {
            TransportMode::Gbn => Some(DEFAULT_GBN_RTO),
            _ => None,
        }
    }
}

/// Go-back-N's retransmission timeout when none is configured (the references' 4 ms).
pub const DEFAULT_GBN_RTO: Time = 4 * MS;
/// The receiver's NACK suppression interval when none is configured (ConWeave's RNIC).
pub const DEFAULT_NACK_INTERVAL: Time = 4 * US;
/// IRN's timeout while few packets are in flight.
pub const DEFAULT_IRN_RTO_LOW: Time = 100 * US;
/// IRN's timeout otherwise.
pub const DEFAULT_IRN_RTO_HIGH: Time = 320 * US;
/// IRN uses its short timeout while at most this many full packets are in flight.
pub const IRN_LOW_RTO_PACKETS: u64 = 3;

/// Which go-back-N NACKs send the sender back to its cumulative point (`[transport]
/// gbn_rewind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GbnRewind {
    /// Only a NACK whose triggering packet left after the previous rewind (the default: one
    /// that was already on its way when the sender went back tells nothing new).
    #[default]
    Fresh,
    /// Every NACK, as the LAPS and HPCC reference RNIC does (its receiver's NACK interval is
    /// the only brake).
    EveryNack,
}

impl GbnRewind {
    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            GbnRewind::Fresh => "fresh",
            GbnRewind::EveryNack => "every-nack",
        }
    }
}

/// What a sender needs to know of its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The mode.
    pub mode: TransportMode,
    /// Go-back-N: which NACKs rewind.
    pub gbn_rewind: GbnRewind,
    /// Bytes in flight allowed whatever the window says (IRN's BDP cap; `u64::MAX`: none).
    pub in_flight_cap: u64,
    /// IRN: timeout while at most `low_rto_bytes` are in flight.
    pub rto_low: Time,
    /// IRN: timeout otherwise.
    pub rto_high: Time,
    /// IRN: in-flight bytes up to which the short timeout applies (3 full packets).
    pub low_rto_bytes: u64,
}

impl Recovery {
    /// The UEC transport: no cap, the run's timeout.
    pub const UEC: Recovery = Recovery {
        mode: TransportMode::Uec,
        gbn_rewind: GbnRewind::Fresh,
        in_flight_cap: u64::MAX,
        rto_low: 0,
        rto_high: 0,
        low_rto_bytes: 0,
    };

    /// Go-back-N (its timeout is the run's fixed one), rewinding on the NACKs `rewind` names.
    pub fn gbn(rewind: GbnRewind) -> Recovery {
        Recovery {
            mode: TransportMode::Gbn,
            gbn_rewind: rewind,
            ..Recovery::UEC
        }
    }

    /// IRN with a cap of `bdp` bytes in flight and the default timeouts, for `mtu`-byte
    /// packets.
    pub fn irn(bdp: u64, mtu: u32) -> Recovery {
        Recovery {
            mode: TransportMode::Irn,
            gbn_rewind: GbnRewind::Fresh,
            in_flight_cap: bdp.max(mtu as u64),
            rto_low: DEFAULT_IRN_RTO_LOW,
            rto_high: DEFAULT_IRN_RTO_HIGH,
            low_rto_bytes: IRN_LOW_RTO_PACKETS * mtu as u64,
        }
    }
}

/// How a flow continues an earlier flow's connection between the same hosts and class
/// (`[transport] reuse_mode`, with `reuse_connections = true`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReuseMode {
    /// The reference's `-connections_mapping` (the default): the pair keeps a record that each
    /// of its flows writes when it finishes, and every flow that starts, even while others of
    /// the pair still run, starts from a copy of it (its load balancer's and congestion
    /// control's `copy_state`; a scheme that cannot copy hands its state over instead).
    #[default]
    Record,
    /// One connection state per pair, handed from a finished flow to the next flow that
    /// starts; a flow that starts while none is waiting starts fresh.
    Handover,
}

impl ReuseMode {
    /// True for the default, which resolved scenarios leave out.
    pub fn is_default(&self) -> bool {
        *self == ReuseMode::default()
    }
}
