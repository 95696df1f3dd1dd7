//! A sender under a transport its load balancer supplies ([`crate::lb::OwnTransport`]): the
//! transport's window and rate replace the congestion control's, its per-path lists declare
//! losses from ACK order and per-path timeouts, and after every data ACK it reads what it needs
//! from the connection's load balancer.
use super::{AckInfo, FlowStats, RtoCheck, Sender, Timeout};
use crate::engine::Time;
use crate::lb::{LbEvent, OwnTransport};

impl Sender {
    /// The same sender under a load balancer's own transport (its congestion control is then
    /// unused).
    pub fn with_own_transport(mut self, transport: Box<dyn OwnTransport>) -> Self {
        self.own = Some(transport);
        self.paces = false;
        self
    }

    /// Loss detection for a data ACK of `ack.psn` on path `ack.ev`: the packets the transport
    /// shows lost are declared lost.
    pub(super) fn own_detect_losses(&mut self, now: Time, ack: &AckInfo) {
        let Some(mut own) = self.own.take() else {
            return;
        };
        own.on_ack(now, ack.ev, ack.psn, ack.sent_at, &mut |psn, sent| {
            if self.in_flight_since(psn, sent) {
                self.declare_lost(psn);
            }
        });
        self.own = Some(own);
    }

    /// After a data ACK was absorbed (the load balancer has seen it).
    pub(super) fn own_after_ack(&mut self, now: Time) {
        if let Some(own) = self.own.as_mut() {
            own.after_ack(now, &*self.lb);
        }
    }

    /// The connection timer fired: the earliest path deadline, if any.
    pub(super) fn own_check_rto(&mut self, now: Time) -> RtoCheck {
        self.timer_pending = false;
        let own = self.own.as_deref().expect("an own transport");
        match own.next_deadline() {
            None => RtoCheck::Idle,
            Some(at) if at > now => {
                self.timer_pending = true;
                RtoCheck::Rearm(at)
            }
            Some(_) => RtoCheck::Expired(own.oldest_listed().expect("listed")),
        }
    }

    /// Every path whose deadline passed has its listed packets declared lost.
    pub(super) fn own_time_out(&mut self, now: Time, stats: &mut FlowStats) -> Timeout {
        let rtx_was_empty = self.next_retransmission().is_none();
        let mut own = self.own.take().expect("an own transport");
        let mut wire = 0;
        let mut lb_event: Option<LbEvent> = None;
        own.time_out(now, &mut |path, entry| match entry {
            Some((psn, sent)) => {
                if self.in_flight_since(psn, sent) {
                    wire += self.declare_lost(psn);
                }
            }
            None => lb_event = lb_event.or(self.lb.on_timeout(path, now)),
        });
        stats.timeouts += 1;
        let rearm = own.next_deadline();
        self.own = Some(own);
        self.timer_pending = rearm.is_some();
        Timeout {
            wire,
            rtx_was_empty,
            lb_event,
            rearm: rearm.map(|at| at.max(now)),
        }
    }
}
