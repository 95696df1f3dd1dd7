//! The credit side of a sender under receiver-driven congestion control (EQDS): what it asks
//! of the receiver's pull pacer, the PULLs it receives, and how it recovers when every packet
//! and request it sent was lost.
use super::Sender;
use crate::cc::{widen, CreditGate, PullRequest};
use crate::engine::Time;

impl Sender {
    /// Sending is gated by receiver credit (the congestion control said so at start).
    #[inline]
    pub fn credit_gated(&self) -> bool {
        self.credit_gated
    }

    /// The controller's credit gate (only for credit-gated senders).
    #[inline]
    pub(super) fn gate(&self) -> &dyn CreditGate {
        self.cc.credit_gate().expect("a credit-gated sender")
    }

    /// The controller's credit gate, to change (only for credit-gated senders).
    #[inline]
    pub(super) fn gate_mut(&mut self) -> &mut dyn CreditGate {
        self.cc.credit_gate_mut().expect("a credit-gated sender")
    }

    /// Wire bytes still to send: data never sent plus PSNs waiting for retransmission.
    pub fn backlog(&self) -> u64 {
        let left = (self.sizes.packets - self.next_data) as u64;
        let unsent = if left == 0 {
            0
        } else {
            self.sizes.bytes - self.next_data as u64 * self.sizes.mss as u64
                + left * self.sizes.header as u64
        };
        unsent + self.queued_bytes
    }

    /// What the next packet asks of the receiver's pull pacer (credit-gated senders).
    pub fn pull_request(&self) -> PullRequest {
        let backlog = self.backlog();
        self.cc
            .credit_gate()
            .map_or(PullRequest::default(), |g| g.pull_request(backlog))
    }

    /// A PULL arrived carrying the low 32 bits of the cumulative credit granted; true if it
    /// granted anything new.
    pub fn on_pull(&mut self, now: Time, granted: u32) -> bool {
        let total = widen(granted, self.pulled);
        if total <= self.pulled {
            return false;
        }
        self.pulled = total;
        if let Some(gate) = self.cc.credit_gate_mut() {
            gate.on_pull(total, now);
        }
        true
    }

    /// Credit starved and its controller re-sends RTS while starved
    /// ([`CreditGate::rts_while_starved`]): wakes the retransmission timer when the next RTS
    /// may go (one RTO after the last), if it is idle.
    pub fn arm_rts_retry(&mut self, now: Time, rto: Time) -> Option<Time> {
        if !self.rts_retry_due() {
            return None;
        }
        let at = self.last_rts.map_or(now, |t| (t + rto).max(now));
        self.arm_timer(at)
    }

    /// Credit gated, with data waiting and no credit left: only an RTS (or a PULL already on
    /// its way) can get it going again.
    pub fn credit_starved(&self) -> bool {
        self.credit_gated && self.gate().credit() <= 0 && !self.finished() && self.backlog() > 0
    }

    /// Credit starved, and its controller asks for an RTS every RTO while it is (with nothing
    /// in flight the receiver already saw every packet or its header, so by default the
    /// sender waits for the PULL those asked for).
    pub fn rts_retry_due(&self) -> bool {
        self.credit_starved() && self.gate().rts_while_starved()
    }
}
