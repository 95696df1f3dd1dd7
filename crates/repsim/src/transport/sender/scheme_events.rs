//! What the sender passes to its congestion control and load balancer besides packets to send
//! and ACKs: the timers they asked for (one connection timer serves both) and the answers to
//! the load balancer's probes.
use super::Sender;
use crate::engine::Time;
use crate::lb::LbEvent;

impl Sender {
    /// Whether the congestion control or the load balancer uses timers of its own (cached at
    /// creation, so connections without them pay one test).
    #[inline]
    pub fn has_control_timers(&self) -> bool {
        self.cc_timers || self.lb_timers
    }

    /// The earliest time the congestion control or the load balancer wants to be woken.
    pub fn next_control_timer(&self) -> Option<Time> {
        let cc = self.cc_timers.then(|| self.cc.next_timer()).flatten();
        let lb = self.lb_timers.then(|| self.lb.next_timer()).flatten();
        match (cc, lb) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Wakes, at `now`, the controls whose timers are due (timers they have since moved are
    /// stale and ignored). Returns whether any woke, and what the load balancer did worth
    /// recording.
    pub fn on_control_timer(&mut self, now: Time) -> (bool, Option<LbEvent>) {
        let due = |at: Option<Time>| at.is_some_and(|at| at <= now);
        let mut woke = false;
        if self.cc_timers && due(self.cc.next_timer()) {
            self.cc.on_timer(now);
            woke = true;
        }
        let mut event = None;
        if self.lb_timers && due(self.lb.next_timer()) {
            event = self.lb.on_timer(now, &mut self.rng);
            woke = true;
        }
        (woke, event)
    }

    /// The answer to a probe sent on the path of `ev` arrived at `now`, with its one-way delay.
    pub fn on_probe_answer(&mut self, now: Time, ev: u16, one_way: Time) {
        self.lb.on_probe_answer(ev, one_way, now);
    }
}
