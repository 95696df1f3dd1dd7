//! `[transport]`: what every connection of a run shares, as a scenario or a library user writes
//! it ([`TransportConfig`]: sizes in bytes or packets, times with units, the RoCE modes' keys
//! optional), and its checked, resolved form ([`TransportParams`]), which the simulation uses.
//! The defaults and checks live here alone, so code and scenario files get the same values and
//! the same errors.
use serde::{Deserialize, Serialize};

use super::mode::{DEFAULT_IRN_RTO_HIGH, DEFAULT_IRN_RTO_LOW};
use super::{AckPolicy, GbnRewind, ReuseMode, TransportMode, TransportParams};
use crate::cc::CcSpec;
use crate::error::ConfigError;
use crate::units::{Size, SizeQ, TimeQ};

/// `[transport]` (each key not given takes its default; the congestion control is `[cc]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Data packet size on the wire, header included (in bytes).
    pub mtu: SizeQ,
    /// Header size (ACKs, NACKs, RTS, trimmed packets).
    pub header: SizeQ,
    /// Receiver ACKs every this many bytes (<= MTU: every packet; `"4pkt"` or `"16000B"`,
    /// counted in wire bytes as the reference counts its `-sack_threshold`).
    pub ack_every: SizeQ,
    /// Count coalesced bytes in 16 bits as the reference receiver does, so thresholds above
    /// 65,535 B minus a packet wrap (off: exact counting).
    pub ack_counter_16bit: bool,
    /// Receiver: a packet that requested an ACK and arrived above a hole is acknowledged at
    /// once and again when the holes below it fill (on by default: both reference receivers'
    /// `ack_request` latch; off: only at once).
    #[serde(skip_serializing_if = "is_true")]
    pub ack_request_latch: bool,
    /// Sender: a packet goes only when it fits the window whole, and a new packet requests an
    /// ACK when the next one would not fit (uet-htsim's NSCC sender); off: a packet goes while
    /// the window exceeds the bytes in flight and requests an ACK once they reach it (the REPS
    /// artifact's sender).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub window_fit: bool,
    /// Receiver sets the CNP flag on the ACK of an ECN-marked packet at most once per this
    /// interval per connection (absent: never under UEC, on every such ACK in the RoCE modes,
    /// as the reference RNIC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_interval: Option<TimeQ>,
    /// Fixed retransmission timeout (default: max base RTT + 4 queue drain times).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto: Option<TimeQ>,
    /// The largest unloaded RTT the senders assume (NSCC's base RTT without
    /// `accurate_base_rtt`, the default timeout's base). Default: computed over the topology at
    /// its links' current speeds, degraded links included. The reference simulators compute it
    /// from the nominal link speed, whatever is degraded (`repsim htsim` writes theirs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_rtt: Option<TimeQ>,
    /// After a timeout whose retransmission the window has no room for, send a 64 B RTS
    /// (request to send), as the reference does.
    pub rts: bool,
    /// The least time between two RTS of one connection (default: its retransmission timeout,
    /// the REPS artifact's rule; `"0us"`: no limit). uet-htsim waits its network RTT when
    /// NSCC is on and nothing under receiver credit alone; `repsim htsim` writes that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rts_gap: Option<TimeQ>,
    /// After a timeout whose retransmission the window has room for, the connection asks its
    /// NIC for a send turn a second time and so holds two places in the host's round robin
    /// until its window closes or its data runs out, as the REPS artifact's sender does (off:
    /// one place per connection, as a NIC serves its queue pairs).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub duplicate_nic_request_on_timeout: bool,
    /// Number of entropy values the sender NICs offer, shared by every EV-based load balancer
    /// (EVs are `0..evs_size`, 1..=65536); a scheme's own `evs_size` overrides it.
    pub evs_size: u32,
    /// Successive flows between the same pair (and class) continue with the previous flow's
    /// congestion control and load balancer, as the reference's `-connections_mapping` does.
    pub reuse_connections: bool,
    /// How reused connections continue: "record" (the reference's, the default: every flow of
    /// a pair starts from a copy of the pair's last finished state) or "handover" (the state
    /// passes from a finished flow to the next one that starts).
    #[serde(skip_serializing_if = "ReuseMode::is_default")]
    pub reuse_mode: ReuseMode,
    /// Loss recovery: "uec", "gbn" (go-back-N RoCE) or "irn" (selective-repeat RoCE).
    pub mode: TransportMode,
    /// gbn: at most one NACK per this interval for the same expected PSN (default 4us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nack_interval: Option<TimeQ>,
    /// gbn: which NACKs rewind the sender, "fresh" (default) or "every-nack" (the reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gbn_rewind: Option<GbnRewind>,
    /// irn: bytes in flight allowed (default: largest base RTT x the sender NIC's rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub irn_bdp: Option<SizeQ>,
    /// irn: timeout while at most 3 MTU are in flight (default 100us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub irn_rto_low: Option<TimeQ>,
    /// irn: timeout otherwise (default 320us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub irn_rto_high: Option<TimeQ>,
}

impl Default for TransportConfig {
    /// 4,150-byte packets with 64-byte headers, an ACK per packet, RTS on, 65,536 EVs, UEC
    /// recovery, the references' ACK-request latch.
    fn default() -> Self {
        TransportConfig {
            mtu: SizeQ(Size::Bytes(4150)),
            header: SizeQ(Size::Bytes(64)),
            ack_every: SizeQ(Size::Packets(1.0)),
            ack_counter_16bit: false,
            ack_request_latch: true,
            window_fit: false,
            cnp_interval: None,
            rto: None,
            network_rtt: None,
            rts: true,
            rts_gap: None,
            duplicate_nic_request_on_timeout: false,
            evs_size: crate::lb::DEFAULT_EVS_SIZE,
            reuse_connections: false,
            reuse_mode: ReuseMode::Record,
            mode: TransportMode::Uec,
            nack_interval: None,
            gbn_rewind: None,
            irn_bdp: None,
            irn_rto_low: None,
            irn_rto_high: None,
        }
    }
}

impl TransportConfig {
    /// The packet and header sizes in bytes, checked: what sizes written in `pkt` multiply.
    pub fn packet_sizes(&self) -> Result<(u32, u32), ConfigError> {
        let mtu_b = self.mtu.0.bytes(1);
        if self.mtu.0 != Size::Bytes(mtu_b) {
            return Err(ConfigError::new(
                "transport.mtu",
                "must be given in bytes, e.g. \"4150B\"",
            ));
        }
        let mtu = check_mtu(mtu_b)?;
        let header = check_header(self.header.0.bytes(mtu), mtu)?;
        Ok((mtu, header))
    }

    /// The settings checked and resolved: sizes in bytes, the mode's defaults filled in.
    pub fn resolve(&self) -> Result<TransportParams, ConfigError> {
        let (mtu, header) = self.packet_sizes()?;
        let positive = |field: &str, value: Option<u64>| match value {
            Some(0) => Err(ConfigError::new(field, "must be positive")),
            _ => Ok(()),
        };
        let every_bytes = self.ack_every.0.bytes(mtu);
        positive("transport.ack_every", Some(every_bytes))?;
        positive("transport.rto", self.rto.map(|r| r.0))?;
        positive("transport.network_rtt", self.network_rtt.map(|r| r.0))?;
        if let Err(e) = crate::lb::check_evs_size(self.evs_size) {
            return Err(ConfigError::new("transport.evs_size", e.message));
        }
        positive("transport.nack_interval", self.nack_interval.map(|i| i.0))?;
        positive("transport.irn_rto_low", self.irn_rto_low.map(|i| i.0))?;
        positive("transport.irn_rto_high", self.irn_rto_high.map(|i| i.0))?;
        let irn_bdp = self.irn_bdp.map(|b| b.0.bytes(mtu));
        positive("transport.irn_bdp", irn_bdp)?;
        if let Some(rewind) = self.gbn_rewind {
            if self.mode != TransportMode::Gbn {
                return Err(ConfigError::new(
                    "transport.gbn_rewind",
                    format!(
                        "\"{}\" applies to mode = \"gbn\" only (this run's mode is \"{}\")",
                        rewind.name(),
                        self.mode.name()
                    ),
                ));
            }
        }
        let irn_rto_low = self.irn_rto_low.map_or(DEFAULT_IRN_RTO_LOW, |r| r.0);
        let irn_rto_high = self.irn_rto_high.map_or(DEFAULT_IRN_RTO_HIGH, |r| r.0);
        if self.mode == TransportMode::Irn && irn_rto_low > irn_rto_high {
            return Err(ConfigError::new(
                "transport.irn_rto_low",
                "must not exceed transport.irn_rto_high",
            ));
        }
        let mut ack = AckPolicy {
            every_bytes,
            cnp_interval: self.cnp_interval.map(|i| i.0),
            counter_16bit: self.ack_counter_16bit,
            mode: self.mode,
            ack_request_latch: self.ack_request_latch,
            ..AckPolicy::default()
        };
        if let Some(i) = self.nack_interval {
            ack.nack_interval = i.0;
        }
        if self.mode.is_rnic() && ack.cnp_interval.is_none() {
            ack.cnp_interval = Some(0);
        }
        Ok(TransportParams {
            mtu,
            header,
            ack,
            rto: self.rto.map(|r| r.0),
            network_rtt: self.network_rtt.map(|r| r.0),
            rts: self.rts,
            rts_gap: self.rts_gap.map(|g| g.0),
            window_fit: self.window_fit,
            duplicate_nic_request_on_timeout: self.duplicate_nic_request_on_timeout,
            evs_size: self.evs_size,
            reuse_connections: self.reuse_connections,
            reuse_mode: self.reuse_mode,
            mode: self.mode,
            gbn_rewind: self.gbn_rewind.unwrap_or(GbnRewind::Fresh),
            irn_bdp,
            irn_rto_low,
            irn_rto_high,
        })
    }
}

/// True for a key whose default is on (skipped when written out at its default).
fn is_true(on: &bool) -> bool {
    *on
}

/// Checks an MTU in bytes (`transport.mtu`): 128 to 65,535 bytes.
fn check_mtu(mtu: u64) -> Result<u32, ConfigError> {
    if !(128..=65535).contains(&mtu) {
        return Err(ConfigError::new(
            "transport.mtu",
            format!("must be between 128B and 65535B, not {mtu}B"),
        ));
    }
    Ok(mtu as u32)
}

/// Checks a header size in bytes against the MTU (`transport.header`).
fn check_header(header: u64, mtu: u32) -> Result<u32, ConfigError> {
    if header == 0 || header >= u64::from(mtu) {
        return Err(ConfigError::new(
            "transport.header",
            format!("must be positive and below the MTU ({mtu}B)"),
        ));
    }
    Ok(header as u32)
}

impl TransportParams {
    /// Refuses the RoCE modes when one of the run's congestion controls (`ccs`: the run's and
    /// its traffic classes') paces credit at the receiver: credit-paced senders ask for credit
    /// with RTS, which only the UEC transport sends.
    pub fn check_congestion_controls<'a>(
        &self,
        ccs: impl IntoIterator<Item = &'a CcSpec>,
    ) -> Result<(), ConfigError> {
        if !self.mode.is_rnic() {
            return Ok(());
        }
        let paced = ccs
            .into_iter()
            .find(|c| c.receiver_pacing(&[], self.mtu, 0).is_some());
        match paced {
            Some(cc) => Err(ConfigError::new(
                "transport.mode",
                format!(
                    "\"{}\" does not run with the receiver-driven {} (its credit needs the UEC \
                     transport's RTS): use mode = \"uec\" or another [cc]",
                    self.mode.name(),
                    cc.name()
                ),
            )),
            None => Ok(()),
        }
    }
}
