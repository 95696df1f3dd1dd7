//! `[transport] mode` and the keys of the RoCE NIC modes (see [`crate::transport::mode`]):
//!
//! ```toml
//! [transport]
//! mode = "gbn"              # "uec" (default) | "gbn" (go-back-N) | "irn" (selective repeat)
//! mtu = "1048B"             # the references' RoCE packets: 1000 B payload ...
//! header = "48B"            # ... plus 48 B of headers (mtu is the wire size, header included)
//! nack_interval = "4us"     # gbn: one NACK per interval for the same expected PSN
//! gbn_rewind = "fresh"      # gbn: rewind on NACKs of packets sent after the last rewind
//!                           #   (default) | "every-nack" (the LAPS/HPCC reference RNIC)
//! # irn_bdp = "104000B"     # irn: bytes in flight (default: largest base RTT x NIC rate)
//! # irn_rto_low = "100us"   # irn: timeout while at most 3 MTU are in flight
//! # irn_rto_high = "320us"  # irn: timeout otherwise
//! ```
use super::{LoadedScenario, ScenarioError};
use crate::cc::CcSpec;
use crate::transport::{TransportConfig, TransportMode};

impl LoadedScenario {
    /// Fills in the transport mode and its keys, checked; in the RoCE modes an unset
    /// `cnp_interval` means a CNP on every ECN-marked packet's ACK, as the reference RNIC.
    pub(super) fn with_transport_mode(
        &self,
        mut config: TransportConfig,
    ) -> Result<TransportConfig, ScenarioError> {
        let t = &self.scenario.transport;
        let positive = |field: &str, value: Option<u64>| match value {
            Some(0) => Err(self.err(field, "must be positive")),
            _ => Ok(()),
        };
        positive("transport.nack_interval", t.nack_interval.map(|i| i.0))?;
        positive("transport.irn_rto_low", t.irn_rto_low.map(|i| i.0))?;
        positive("transport.irn_rto_high", t.irn_rto_high.map(|i| i.0))?;
        let irn_bdp = t.irn_bdp.map(|b| b.0.bytes(config.mtu));
        positive("transport.irn_bdp", irn_bdp)?;
        if t.mode.is_rnic() {
            // Credit pacing needs the UEC transport's RTS.
            let credit = |c: &CcSpec| c.scheme().receiver_pacing(&[], config.mtu).is_some();
            let classes = &self.scenario.class;
            let main = self.cc()?;
            let paced = std::iter::once(&main)
                .chain(classes.iter().filter_map(|c| c.cc.as_ref()))
                .find(|c| credit(c));
            if let Some(cc) = paced {
                return Err(self.err(
                    "transport.mode",
                    format!(
                        "\"{}\" does not run with the receiver-driven {} (its credit needs \
                         the UEC transport's RTS): use mode = \"uec\" or another [cc]",
                        t.mode.name(),
                        cc.name()
                    ),
                ));
            }
        }
        if let Some(rewind) = t.gbn_rewind {
            if t.mode != TransportMode::Gbn {
                return Err(self.err(
                    "transport.gbn_rewind",
                    format!(
                        "\"{}\" applies to mode = \"gbn\" only (this run's mode is \"{}\")",
                        rewind.name(),
                        t.mode.name()
                    ),
                ));
            }
            config.gbn_rewind = rewind;
        }
        config.mode = t.mode;
        config.ack.mode = t.mode;
        if let Some(i) = t.nack_interval {
            config.ack.nack_interval = i.0;
        }
        if t.mode.is_rnic() && config.ack.cnp_interval.is_none() {
            config.ack.cnp_interval = Some(0);
        }
        config.irn_bdp = irn_bdp;
        if let Some(r) = t.irn_rto_low {
            config.irn_rto_low = r.0;
        }
        if let Some(r) = t.irn_rto_high {
            config.irn_rto_high = r.0;
        }
        if t.mode == TransportMode::Irn && config.irn_rto_low > config.irn_rto_high {
            return Err(self.err(
                "transport.irn_rto_low",
                "must not exceed transport.irn_rto_high",
            ));
        }
        Ok(config)
    }
}
