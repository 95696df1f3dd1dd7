//! The retransmission timer and what its expiry leads to: the oldest outstanding packet
//! declared lost (every outstanding one in the RoCE modes), and the RTS (request to send) a
//! timeout calls for when the window or the credit has no room for the retransmission.
use super::{record_flags, PsnRecord, PsnState, RtoCheck, Sender, Timeout, Transmission};
use crate::engine::Time;
use crate::transport::FlowStats;

impl Sender {
    /// The retransmission timer fired at `now`.
    pub fn check_rto(&mut self, now: Time, rto: Time) -> RtoCheck {
        if self.own.is_some() {
            return self.own_check_rto(now);
        }
        let rto = self.rto_for(rto);
        self.timer_pending = false;
        match self.oldest_in_flight() {
            None => RtoCheck::Idle,
            Some((sent_at, _)) if now < sent_at + rto => {
                self.timer_pending = true;
                RtoCheck::Rearm(sent_at + rto)
            }
            Some((_, psn)) => RtoCheck::Expired(psn),
        }
    }

    /// Declares the oldest outstanding packet (`psn`, as [`Self::check_rto`] reported) lost:
    /// only that one per expiry, like the reference (UEC mode); in the RoCE modes every
    /// outstanding packet goes again (go-back-N: from the cumulative point; IRN: the holes).
    pub fn time_out(&mut self, psn: u32, now: Time, rto: Time, stats: &mut FlowStats) -> Timeout {
        if self.own.is_some() {
            return self.own_time_out(now, stats);
        }
        self.send_order.pop_front();
        let rtx_was_empty = self.next_retransmission().is_none();
        let ev = self.record(psn).ev;
        let wire = self.declare_lost(psn);
        if self.recovery.mode.is_rnic() {
            self.declare_outstanding_lost();
        }
        let rto = self.rto_for(rto);
        self.cc.on_timeout(wire, now);
        let lb_event = self.lb.on_timeout(ev, now);
        stats.timeouts += 1;
        let rearm = self.oldest_in_flight().map(|(next, _)| {
            self.timer_pending = true;
            (next + rto).max(now)
        });
        Timeout {
            wire,
            rtx_was_empty,
            lb_event,
            rearm,
        }
    }

    /// Whether a timeout of a `lost_wire`-byte packet calls for an RTS now, as both reference
    /// simulators decide after they have queued (and, window and NIC permitting, already sent)
    /// the retransmission: the window has no room for a packet of that size
    /// (`cwnd < in_flight + size`), or, credit gated, no credit is left or another
    /// retransmission was already waiting (`rtx_waiting`); and no RTS went out in the last
    /// `gap`. Under a window the caller also requires that no other retransmission was waiting.
    pub fn rts_due(&self, now: Time, lost_wire: u64, rtx_waiting: bool, gap: Time) -> bool {
        if self.own.is_some() {
            return false;
        }
        let blocked = if self.credit_gated {
            rtx_waiting || self.gate().credit() <= 0
        } else {
            !self.window_has_room(lost_wire)
        };
        blocked && self.last_rts.is_none_or(|t| now - t >= gap)
    }

    /// Whether the window has room for `bytes` more in flight (a window sender; false for a
    /// credit-gated or self-clocked one).
    pub fn window_has_room(&self, bytes: u64) -> bool {
        self.own.is_none() && !self.credit_gated && self.window() >= self.in_flight + bytes as i64
    }

    /// Sends an RTS of `size` bytes now: it takes the next PSN, an EV and a send record (so a
    /// lost RTS times out like data and goes again as a `size`-byte data packet), but adds
    /// nothing to `in_flight`.
    pub fn send_rts(&mut self, now: Time, size: u32, rto: Time) -> Transmission {
        self.last_rts = Some(now);
        let path = self.lb.next(now, &mut self.rng);
        let lb_event = self.send_event();
        let psn = self.take_psn();
        *self.record_mut(psn) = PsnRecord {
            sent_at: now,
            wire: size,
            ev: path.ev,
            state: PsnState::InFlight,
            flags: record_flags::RTS | record_flags::UNCOUNTED,
        };
        self.send_order.push_back((now, psn));
        Transmission {
            psn,
            path,
            wire: size,
            retransmit: false,
            last: false,
            window_full: true,
            arm_rto: self.arm_timer(now + rto),
            lb_event,
            probe: None,
        }
    }
}
