//! A connection's timers at its sending host: the retransmission timeout and what follows it
//! (the retransmission, an RTS when the window or credit has no room, the REPS artifact's second
//! NIC request when asked for), and the timer its congestion control and load balancer share.
use super::host::{connection_timer, outgoing, timer};
use super::{credit, Phase, Simulation};
use crate::net::packet::flags;
use crate::net::world::Timer;
use crate::net::Kind;
use crate::transport::RtoCheck;

impl Simulation {
    /// One of flow `f`'s timers fired.
    pub(super) fn on_connection_timer(&mut self, t: Timer) {
        let f = t.id;
        match t.kind {
            timer::RTO => self.on_rto(f),
            timer::PACE => {
                self.flows[f as usize].pacing_pending = false;
                if self.flows[f as usize].phase == Phase::Running {
                    self.mark_ready(f);
                }
            }
            _ => self.on_control_timer(f),
        }
    }

    fn on_rto(&mut self, f: u32) {
        let now = self.world.now;
        let flow = &mut self.flows[f as usize];
        let rto = flow.rto;
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        let psn = match s.check_rto(now, rto) {
            RtoCheck::Idle => {
                if s.rts_retry_due() {
                    self.credit_rts(f, false);
                }
                return;
            }
            RtoCheck::Rearm(at) => {
                self.world.set_timer(at, connection_timer(timer::RTO, f));
                return;
            }
            RtoCheck::Expired(psn) => psn,
        };
        if self.faults.is_some() && self.fault_gave_up(f) {
            return;
        }
        let flow = &mut self.flows[f as usize];
        let s = flow.sender.as_mut().expect("running flows have a sender");
        let out = s.time_out(psn, now, rto, &mut flow.stats);
        if let Some(at) = out.rearm {
            self.world.set_timer(at, connection_timer(timer::RTO, f));
        }
        let credit_gated = s.credit_gated();
        self.record_lb(f, out.lb_event);
        self.mark_ready(f);
        // Credit gated, the RTS is what tells the receiver that the sender needs credit.
        if credit_gated {
            self.credit_rts(f, !out.rtx_was_empty);
        } else if self.transport.sends_rts() && out.rtx_was_empty {
            self.maybe_send_rts(f, out.wire, false);
        }
        if self.transport.duplicates_nic_request_on_timeout() && out.rtx_was_empty {
            self.duplicate_nic_request(f, out.wire);
        }
        self.arm_control_timer(f);
    }

    /// After a timeout (whose retransmission was queued and, window and NIC permitting, already
    /// sent): if the window still has room for a packet of the lost one's size, flow `f` takes
    /// one more place at the back of its host's ready list, beside the one it may hold. Each
    /// place yields a packet per turn and keeps itself while the flow can send on, so the flow
    /// gets that many shares of the NIC until its window closes or its data runs out; the
    /// REPS artifact's sender asks its NIC a second time in this case.
    fn duplicate_nic_request(&mut self, f: u32, lost_wire: u64) {
        let flow = &mut self.flows[f as usize];
        let Some(s) = flow.sender.as_ref() else {
            return;
        };
        if !s.window_has_room(lost_wire) {
            return;
        }
        flow.in_ready_list = true;
        let src = flow.spec.src;
        self.hosts[src as usize].ready.push_back(f);
        let port = self.world.topo.host_uplink[src as usize];
        self.kick(port);
    }

    /// Credit gated: the RTS is what tells the receiver that the sender needs credit. Sends
    /// one if it may go now (`rtx_waiting`: the timed-out packet queued behind another
    /// retransmission); a connection still starved afterwards gets its timer woken when the
    /// next may go if its controller re-sends RTS while starved.
    fn credit_rts(&mut self, f: u32, rtx_waiting: bool) {
        self.maybe_send_rts(f, 0, rtx_waiting);
        let now = self.world.now;
        let flow = &mut self.flows[f as usize];
        let rto = flow.rto;
        let s = flow.sender.as_mut().expect("running flows have a sender");
        if let Some(at) = s.arm_rts_retry(now, rto) {
            self.world.set_timer(at, connection_timer(timer::RTO, f));
        }
    }

    /// After a timeout (whose retransmission was queued and, window and NIC permitting, already
    /// sent): send an RTS if the window has no room for a packet of the lost one's size, at most
    /// one per `[transport] rts_gap` (default: the RTO; see
    /// [`crate::transport::Sender::rts_due`]).
    fn maybe_send_rts(&mut self, f: u32, lost_wire: u64, rtx_waiting: bool) {
        let now = self.world.now;
        let header = self.transport.header;
        let flow = &mut self.flows[f as usize];
        let rto = flow.rto;
        let gap = self.transport.rts_gap.unwrap_or(rto);
        let s = flow.sender.as_mut().expect("running flows have a sender");
        if !s.rts_due(now, lost_wire, rtx_waiting, gap) {
            return;
        }
        let tx = s.send_rts(now, header, rto);
        if let Some(at) = tx.arm_rto {
            self.world.set_timer(at, connection_timer(timer::RTO, f));
        }
        flow.stats.rts += 1;
        self.world.counters.rts_sent += 1;
        self.books.on_sent(Kind::Rts);
        let lb_event = tx.lb_event;
        let mut pkt = outgoing(
            f,
            &flow.spec,
            &tx,
            now,
            Kind::Rts,
            header,
            flags::ACK_REQUEST | flow.packet_flags,
        );
        credit::stamp(&mut pkt, s);
        let h = self.world.pkts.alloc(pkt);
        let port = self.world.topo.host_uplink[flow.spec.src as usize];
        self.queue_header(port, h);
        self.kick(port);
        self.record_lb(f, lb_event);
    }

    /// Schedules flow `f`'s control timer if its congestion control or load balancer asks
    /// for one earlier than any already pending.
    #[inline]
    pub(super) fn arm_control_timer(&mut self, f: u32) {
        // Most congestion controls and load balancers set no timer: only that test is paid
        // inline.
        if self.flows[f as usize].control_timers {
            self.arm_control_timer_now(f);
        }
    }

    /// [`Self::arm_control_timer`] for a flow whose controls set timers.
    fn arm_control_timer_now(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        let Some(at) = flow.sender.as_ref().and_then(|s| s.next_control_timer()) else {
            return;
        };
        if flow.control_timer_at.is_some_and(|pending| pending <= at) {
            return;
        }
        flow.control_timer_at = Some(at);
        self.world
            .set_timer(at, connection_timer(timer::CONTROLS, f));
    }

    fn on_control_timer(&mut self, f: u32) {
        let now = self.world.now;
        let flow = &mut self.flows[f as usize];
        if flow.control_timer_at == Some(now) {
            flow.control_timer_at = None;
        }
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        let (woke, event) = s.on_control_timer(now);
        self.record_lb(f, event);
        if woke {
            self.arm_control_timer(f);
            self.mark_ready(f);
        }
    }
}
