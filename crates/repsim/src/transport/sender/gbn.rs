//! Go-back-N (RoCE NICs on lossless fabrics): the receiver keeps only in-order packets and
//! NACKs the PSN it expects; the sender then resends everything from its cumulative point.
use super::{AckInfo, PsnState, Sender};
use crate::engine::Time;
use crate::lb::LbEvent;
use crate::transport::GbnRewind;

impl Sender {
    /// A go-back-N NACK: it acknowledges every PSN below the one it expects (not the PSN that
    /// triggered it, which the receiver discarded) and sends the sender back to its cumulative
    /// point, unless the packet that triggered it left before the latest rewind (old news)
    /// and the run rewinds on fresh NACKs only.
    pub(super) fn on_gbn_nack(&mut self, now: Time, ack: &AckInfo) -> Option<LbEvent> {
        let lb_event = self.absorb_ack(now, ack, false);
        let rewinds = match self.recovery.gbn_rewind {
            GbnRewind::Fresh => self.last_rewind.is_none_or(|t| ack.sent_at >= t),
            GbnRewind::EveryNack => true,
        };
        if rewinds {
            let first = self.declare_outstanding_lost();
            if first > 0 {
                self.last_rewind = Some(now);
                self.cc.on_nack(first, now);
            }
        }
        lb_event
    }

    /// Declares every PSN in flight lost, lowest first, so that they all go again in order
    /// before new data (go back N; after a timeout in either RoCE mode). Returns the wire
    /// size of the first one (0: none was in flight).
    pub(super) fn declare_outstanding_lost(&mut self) -> u64 {
        let mut first = 0;
        for psn in self.cum_acked..self.next_psn {
            if self.record(psn).state == PsnState::InFlight {
                let wire = self.declare_lost(psn);
                if first == 0 {
                    first = wire;
                }
            }
        }
        first
    }
}
