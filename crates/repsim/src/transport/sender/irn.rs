//! IRN (improved RoCE NIC, lossy fabrics): selective repeat. The receiver keeps out-of-order
//! packets and NACKs each with its own PSN; the sender retransmits only the holes below it.
use super::{AckInfo, PsnState, Sender};
use crate::engine::Time;
use crate::lb::LbEvent;

impl Sender {
    /// An IRN NACK: the packet it answers arrived (it and the SACK bitmap acknowledge PSNs
    /// like an ACK); every PSN below it still in flight whose latest transmission left before
    /// it was overtaken and is declared lost. The first loss of a recovery episode is told to
    /// the congestion control.
    pub(super) fn on_irn_nack(&mut self, now: Time, ack: &AckInfo) -> Option<LbEvent> {
        let lb_event = self.absorb_ack(now, ack, true);
        let mut first = 0;
        for psn in self.cum_acked..ack.psn.min(self.next_psn) {
            let r = self.record(psn);
            if r.state == PsnState::InFlight && r.sent_at < ack.sent_at {
                let wire = self.declare_lost(psn);
                if first == 0 {
                    first = wire;
                }
            }
        }
        if first > 0 && self.recovery_point.is_none() {
            self.recovery_point = Some(self.next_psn - 1);
            self.cc.on_nack(first, now);
        }
        lb_event
    }

    /// Leaves recovery once the cumulative point has passed the highest PSN sent when it
    /// began.
    pub(super) fn end_irn_recovery_if_done(&mut self) {
        if self.recovery_point.is_some_and(|p| self.cum_acked > p) {
            self.recovery_point = None;
        }
    }

    /// True while an IRN recovery episode lasts.
    pub fn in_recovery(&self) -> bool {
        self.recovery_point.is_some()
    }

    /// IRN's timeout: short while at most 3 full packets are in flight, long otherwise.
    #[inline]
    pub(super) fn irn_rto(&self) -> Time {
        if self.in_flight <= self.recovery.low_rto_bytes as i64 {
            self.recovery.rto_low
        } else {
            self.recovery.rto_high
        }
    }

    /// The delay to arm an idle retransmission timer with: the run's `rto`; under IRN the
    /// shorter of its two, since the timer re-checks the one in force when it fires.
    #[inline]
    pub(super) fn rto_to_arm(&self, rto: Time) -> Time {
        if self.recovery.mode == super::TransportMode::Irn {
            self.recovery.rto_low.min(self.recovery.rto_high)
        } else {
            rto
        }
    }
}
