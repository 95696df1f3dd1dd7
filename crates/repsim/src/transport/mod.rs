//! The UEC-like, out-of-order tolerant transport as sans-IO state machines.
//!
//! A [`Sender`] and a [`Receiver`] know nothing of the network: the simulation drives them with
//! the current time and what arrived, and they say what to send and when to wake. They can be
//! unit-tested without a network. Their memory follows the window, not the flow: a sender keeps
//! one record per PSN between its cumulative point and the highest PSN sent, a receiver one bit
//! per PSN between its cumulative point and the highest PSN received.
//!
//! The rules are those of the reference simulator (REPS paper's htsim): per-packet ACKs echoing
//! the packet's EV and ECN mark with a cumulative ACK and a 64-bit SACK bitmap, NACKs for
//! trimmed packets, a fixed retransmission timeout that declares only the oldest outstanding
//! packet lost per expiry, RTS after a timeout the window has no room for.
pub mod config;
pub mod mode;
pub mod receiver;
pub mod sender;

pub use config::TransportConfig;
pub use mode::{GbnRewind, Recovery, ReuseMode, TransportMode};
pub use receiver::{AckPolicy, DataArrival, Receiver, Reply, RxOutcome};
pub use sender::{
    record_flags, AckInfo, AckOutcome, ConnectionState, PsnRecord, PsnState, RtoCheck, Sender,
    Timeout, Transmission,
};

use crate::engine::Time;

/// Transport settings shared by every connection of a run, checked and resolved from a
/// [`TransportConfig`] (sizes in bytes, times in picoseconds, the mode's defaults filled in).
#[derive(Clone, Debug, PartialEq)]
pub struct TransportParams {
    /// Full data packet on the wire, header included.
    pub mtu: u32,
    /// Header size (ACK, NACK, RTS and trimmed packets).
    pub header: u32,
    /// Receiver ACK policy.
    pub ack: AckPolicy,
    /// Retransmission timeout (`None`: max base RTT + time to drain 4 full queues).
    pub rto: Option<Time>,
    /// The largest unloaded RTT the senders assume (`None`: computed over the topology).
    pub network_rtt: Option<Time>,
    /// Send an RTS (request to send) after a timeout whose retransmission the window has no
    /// room for, as the reference does.
    pub rts: bool,
    /// The least time between two RTS of one connection (`None`: its retransmission timeout).
    pub rts_gap: Option<Time>,
    /// Sender: packets go only when they fit the window whole (uet-htsim's rule).
    pub window_fit: bool,
    /// A timeout the window has room for gives the connection a second place in its host's
    /// NIC round robin (the REPS artifact's sender; see [`TransportConfig`]).
    pub duplicate_nic_request_on_timeout: bool,
    /// Number of entropy values the sender NICs offer (EVs are `0..evs_size`).
    pub evs_size: u32,
    /// A flow between a pair that an earlier flow of the same class finished on continues
    /// with that flow's congestion control and load balancer, as the reference does with
    /// `-connections_mapping` (collectives).
    pub reuse_connections: bool,
    /// How a reused connection continues (a copy of the pair's record, or a handover).
    pub reuse_mode: ReuseMode,
    /// Loss recovery and acknowledgement style (the receiver's half is in `ack`).
    pub mode: TransportMode,
    /// Go-back-N: which NACKs rewind the sender.
    pub gbn_rewind: GbnRewind,
    /// IRN: bytes in flight allowed (`None`: the largest base RTT x the sender NIC's rate).
    pub irn_bdp: Option<u64>,
    /// IRN: timeout while at most 3 full packets are in flight.
    pub irn_rto_low: Time,
    /// IRN: timeout otherwise.
    pub irn_rto_high: Time,
}

impl TransportParams {
    /// The run's fixed retransmission timeout, if configured or given by the mode (go-back-N:
    /// 4 ms); `None`: from the topology.
    pub fn fixed_rto(&self) -> Option<Time> {
        self.rto.or(self.mode.default_rto())
    }

    /// Senders send an RTS after a timeout the window has no room for (UEC mode only).
    pub fn sends_rts(&self) -> bool {
        self.rts && !self.mode.is_rnic()
    }

    /// Whether a timeout gives the connection a second place in its host's NIC round robin
    /// (UEC mode only: the RoCE modes retransmit in their own way).
    pub fn duplicates_nic_request_on_timeout(&self) -> bool {
        self.duplicate_nic_request_on_timeout && !self.mode.is_rnic()
    }

    /// What a sender on a NIC of `line_rate` needs of its mode, in a network whose largest
    /// unloaded round trip is `max_base_rtt`.
    pub fn recovery(&self, line_rate: u64, max_base_rtt: Time) -> Recovery {
        match self.mode {
            TransportMode::Uec => Recovery::UEC,
            TransportMode::Gbn => Recovery::gbn(self.gbn_rewind),
            TransportMode::Irn => {
                let bdp = self.irn_bdp.unwrap_or_else(|| {
                    (max_base_rtt as u128 * line_rate as u128
                        / (8 * crate::engine::time::SEC as u128)) as u64
                });
                Recovery {
                    rto_low: self.irn_rto_low,
                    rto_high: self.irn_rto_high,
                    ..Recovery::irn(bdp, self.mtu)
                }
            }
        }
    }
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

/// Per-connection counters (`repr(C)`: the scalar counters, which packets update, fill the
/// first 64 bytes; see `sim::Flow`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
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
    /// Receiver reordering ([`crate::metrics::reorder`]).
    pub reorder: FlowReorderCounts,
}

/// Per-flow reorder counters, kept with the flow's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowReorderCounts {
    /// Intact data arrivals.
    pub arrivals: u64,
    /// Those out of order.
    pub out_of_order: u64,
    /// Sum of the occupancy in packets over arrivals.
    pub packets_sum: u64,
    /// Sum of the occupancy in bytes over arrivals.
    pub bytes_sum: u64,
    /// Largest occupancy in bytes.
    pub max_bytes: u64,
}

impl FlowReorderCounts {
    /// Records one intact data arrival: out of order or not, and the receiver's reorder-buffer
    /// occupancy (packets, payload bytes) once it took the packet.
    #[inline]
    pub fn record(&mut self, out_of_order: bool, packets: u32, bytes: u64) {
        self.arrivals += 1;
        self.out_of_order += out_of_order as u64;
        self.packets_sum += packets as u64;
        self.bytes_sum += bytes;
        self.max_bytes = self.max_bytes.max(bytes);
    }
}
