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
use crate::transport::TransportParams;

impl LoadedScenario {
    /// Refuses the RoCE modes when a traffic class's congestion control paces credit at the
    /// receiver: credit-paced senders ask for credit with RTS, which only the UEC transport
    /// sends. (Every other check of the section is [`crate::transport::TransportConfig`]'s.)
    pub(super) fn check_credit_transport(
        &self,
        params: &TransportParams,
    ) -> Result<(), ScenarioError> {
        if !params.mode.is_rnic() {
            return Ok(());
        }
        let credit = |c: &CcSpec| c.scheme().receiver_pacing(&[], params.mtu).is_some();
        let main = self.cc()?;
        let classes = &self.scenario.class;
        let paced = std::iter::once(&main)
            .chain(classes.iter().filter_map(|c| c.cc.as_ref()))
            .find(|c| credit(c));
        match paced {
            Some(cc) => Err(self.err(
                "transport.mode",
                format!(
                    "\"{}\" does not run with the receiver-driven {} (its credit needs the UEC \
                     transport's RTS): use mode = \"uec\" or another [cc]",
                    params.mode.name(),
                    cc.name()
                ),
            )),
            None => Ok(()),
        }
    }
}
