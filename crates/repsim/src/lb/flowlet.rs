//! Flowlet switching on ACK gaps: one EV per connection, moved to a new random EV when a packet
//! leaves more than `gap` after the last ACK or NACK, then held for `hold`. Behaviour source:
//! `htsim-reps.md` section 7.7 (the REPS artifact's `flowlet`).
//!
//! The connection starts on `flow_index mod evs_size`. The flowlet gap is measured on feedback
//! arrivals, not on packet departures: at each send, if `now > last_feedback + gap` (default
//! half the connection's base RTT) and `now > hold_until`, the packet takes a new random EV and
//! `hold_until = now + hold` (default one RTO, as the reference does; `"0"` turns the hold-off
//! off). Timeouts do not move the connection by themselves; the retransmission they cause
//! does, through the gap rule.
//!
//! **Before the first feedback.** The reference starts its last-feedback time at simulation
//! time zero, so a flow starting later than one gap takes a random EV for its very first
//! packet (and a flow starting at zero re-paths once its first window has lasted one gap). By
//! default (`gap_from = "first_packet"`) the gap before the first feedback is measured from
//! the connection's first packet instead, so a flow's behaviour does not depend on when it
//! starts; `gap_from = "time_zero"` keeps the reference's behaviour.
//!
//! Re-paths happen when a packet is sent, which no hook reports, so flowlet switches are not
//! recorded as `rerouted` events.
use serde::{Deserialize, Serialize};

use super::{
    check_evs_override, random_ev, AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer,
    PathChoice,
};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::units::TimeQ;
use crate::ConfigError;

/// What the flowlet gap is measured from before the connection's first ACK or NACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapFrom {
    /// The connection's first packet.
    FirstPacket,
    /// Simulation time zero (the reference).
    TimeZero,
}

/// `lb = { scheme = "flowlet", gap = "4us", hold = "40us" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowletConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// Silence since the last ACK or NACK that starts a new flowlet; absent: half the
    /// connection's base RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<TimeQ>,
    /// No further change for this long after one; absent: the connection's RTO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<TimeQ>,
    /// What the gap is measured from before the first feedback.
    pub gap_from: GapFrom,
}

impl Default for FlowletConfig {
    fn default() -> Self {
        FlowletConfig {
            evs_size: None,
            gap: None,
            hold: None,
            gap_from: GapFrom::FirstPacket,
        }
    }
}

impl LbScheme for FlowletConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Flowlet::new(self, ctx))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)?;
        if self.gap.is_some_and(|g| g.0 == 0) {
            return Err(ConfigError::new("gap", "must be positive"));
        }
        Ok(())
    }
}

/// One connection's flowlet state.
#[derive(Clone)]
pub struct Flowlet {
    evs_size: u32,
    ev: u16,
    gap: Time,
    hold: Time,
    gap_from: GapFrom,
    /// Arrival of the last ACK or NACK.
    last_feedback: Option<Time>,
    /// Departure of the first packet.
    first_packet: Option<Time>,
    /// No change until after this time.
    hold_until: Time,
    /// The latest send moved the flow to a new EV.
    rerouted: bool,
}

impl Flowlet {
    /// A connection's state on its initial EV.
    pub fn new(config: &FlowletConfig, ctx: &LbContext) -> Self {
        let evs_size = ctx.evs(config.evs_size);
        Flowlet {
            evs_size,
            ev: (ctx.flow_index % evs_size) as u16,
            gap: config.gap.map_or(ctx.base_rtt / 2, |g| g.0),
            hold: config.hold.map_or(ctx.rto, |h| h.0),
            gap_from: config.gap_from,
            last_feedback: None,
            first_packet: None,
            hold_until: 0,
            rerouted: false,
        }
    }

    /// Where the current silence began.
    fn quiet_since(&mut self, now: Time) -> Time {
        match (self.last_feedback, self.gap_from) {
            (Some(t), _) => t,
            (None, GapFrom::TimeZero) => 0,
            (None, GapFrom::FirstPacket) => *self.first_packet.get_or_insert(now),
        }
    }
}

impl LoadBalancer for Flowlet {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, now: Time, rng: &mut Rng) -> PathChoice {
        if now > self.quiet_since(now) + self.gap && now > self.hold_until {
            self.ev = random_ev(rng, self.evs_size);
            self.hold_until = now + self.hold;
            self.rerouted = true;
        }
        PathChoice::ev(self.ev)
    }

    fn reports_on_send(&self) -> bool {
        true
    }

    fn take_send_event(&mut self) -> Option<LbEvent> {
        std::mem::take(&mut self.rerouted).then_some(LbEvent::REROUTED)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        self.last_feedback = Some(ack.now);
        None
    }

    fn on_nack(&mut self, _ev: u16, now: Time) -> Option<LbEvent> {
        self.last_feedback = Some(now);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    const RTT: Time = 10 * US;
    const RTO: Time = 40 * US;

    fn ctx(flow_index: u32) -> LbContext<'static> {
        LbContext {
            flow_index,
            base_rtt: RTT,
            rto: RTO,
            ..LbContext::example()
        }
    }

    fn flowlet(config: FlowletConfig) -> Flowlet {
        Flowlet::new(&config, &ctx(5))
    }

    fn ack(lb: &mut Flowlet, now: Time) {
        assert_eq!(lb.on_ack(&AckFeedback::example(0, now)), None);
    }

    #[test]
    fn starts_on_flow_index_mod_evs() {
        let mut rng = Rng::new(1);
        assert_eq!(flowlet(FlowletConfig::default()).next(0, &mut rng).ev, 5);
        let small = FlowletConfig {
            evs_size: Some(4),
            ..FlowletConfig::default()
        };
        let mut lb = Flowlet::new(&small, &ctx(70_001));
        assert_eq!(lb.next(0, &mut rng).ev, (70_001 % 4) as u16);
    }

    #[test]
    fn changes_ev_only_after_the_gap() {
        let mut rng = Rng::new(1);
        let mut lb = flowlet(FlowletConfig::default());
        let gap = RTT / 2;
        assert_eq!(lb.gap, gap, "default: half the base RTT");
        let t = 100 * US;
        lb.next(t - 3 * US, &mut rng);
        ack(&mut lb, t);
        lb.take_send_event();
        for dt in [0, 1, gap / 2, gap] {
            assert_eq!(lb.next(t + dt, &mut rng).ev, 5, "{dt} ps after the ACK");
            assert_eq!(lb.take_send_event(), None, "no re-path, nothing to record");
        }
        let ev = lb.next(t + gap + 1, &mut rng).ev;
        assert_ne!(ev, 5, "past the gap: a new EV");
        assert!(lb.reports_on_send());
        assert_eq!(
            lb.take_send_event(),
            Some(LbEvent::REROUTED),
            "recorded once"
        );
        assert_eq!(lb.take_send_event(), None);
        assert_eq!(lb.hold_until, t + gap + 1 + RTO);
        // A NACK restarts the silence like an ACK.
        let t2 = lb.hold_until + 10 * US;
        assert_eq!(lb.on_nack(9, t2), None);
        assert_eq!(lb.next(t2 + gap, &mut rng).ev, ev);
        assert_ne!(lb.next(t2 + gap + 1, &mut rng).ev, ev);
    }

    #[test]
    fn steady_acks_keep_the_ev() {
        let mut rng = Rng::new(1);
        let mut lb = flowlet(FlowletConfig::default());
        lb.next(0, &mut rng);
        for i in 1..1000 {
            let now = i * US;
            ack(&mut lb, now);
            assert_eq!(lb.next(now + RTT / 2, &mut rng).ev, 5);
        }
    }

    #[test]
    fn holds_off_one_rto_after_a_change() {
        let mut rng = Rng::new(3);
        let mut lb = flowlet(FlowletConfig::default());
        lb.next(0, &mut rng);
        ack(&mut lb, 0);
        let t = RTT; // past the gap
        let ev1 = lb.next(t, &mut rng).ev;
        assert_ne!(ev1, 5);
        // No feedback at all: every send is past the gap, but the hold-off keeps the EV.
        for now in [t + 1, t + RTO / 2, t + RTO] {
            assert_eq!(lb.next(now, &mut rng).ev, ev1, "held at {now}");
        }
        let ev2 = lb.next(t + RTO + 1, &mut rng).ev;
        assert_ne!(ev2, ev1, "the hold-off is over");
        assert_eq!(lb.hold_until, t + RTO + 1 + RTO);
    }

    #[test]
    fn hold_off_is_configurable() {
        let mut rng = Rng::new(3);
        let mut lb = flowlet(FlowletConfig {
            hold: Some(TimeQ(0)),
            gap: Some(TimeQ(2 * US)),
            ..FlowletConfig::default()
        });
        lb.next(0, &mut rng);
        ack(&mut lb, 0);
        let a = lb.next(3 * US, &mut rng).ev;
        let b = lb.next(3 * US + 1, &mut rng).ev;
        let c = lb.next(3 * US + 2, &mut rng).ev;
        assert!(
            a != 5 && b != a && c != b,
            "no hold-off: every late send re-paths"
        );
        ack(&mut lb, 4 * US);
        assert_eq!(lb.next(6 * US, &mut rng).ev, c, "within the 2 us gap");
    }

    #[test]
    fn before_feedback_the_gap_runs_from_the_first_packet() {
        let mut rng = Rng::new(1);
        let start = 500 * US;
        let mut lb = flowlet(FlowletConfig::default());
        assert_eq!(
            lb.next(start, &mut rng).ev,
            5,
            "a late flow starts on its own EV"
        );
        assert_eq!(lb.next(start + RTT / 2, &mut rng).ev, 5);
        assert_ne!(
            lb.next(start + RTT / 2 + 1, &mut rng).ev,
            5,
            "no ACK for one gap"
        );
    }

    #[test]
    fn reference_gap_runs_from_time_zero() {
        let mut rng = Rng::new(1);
        let mut lb = flowlet(FlowletConfig {
            gap_from: GapFrom::TimeZero,
            ..FlowletConfig::default()
        });
        assert_ne!(
            lb.next(500 * US, &mut rng).ev,
            5,
            "a flow starting after one gap takes a random first EV"
        );
        let mut lb = flowlet(FlowletConfig {
            gap_from: GapFrom::TimeZero,
            ..FlowletConfig::default()
        });
        assert_eq!(
            lb.next(RTT / 2, &mut rng).ev,
            5,
            "one starting early keeps it"
        );
    }

    #[test]
    fn timeouts_do_not_move_it() {
        let mut rng = Rng::new(1);
        let mut lb = flowlet(FlowletConfig::default());
        lb.next(0, &mut rng);
        ack(&mut lb, 0);
        assert_eq!(lb.on_timeout(5, 1), None);
        assert_eq!(lb.next(2, &mut rng).ev, 5);
    }

    #[test]
    fn validate_and_parse() {
        let c: FlowletConfig =
            toml::from_str("gap = \"3us\"\nhold = 0\ngap_from = \"time_zero\"").unwrap();
        assert_eq!(c.gap, Some(TimeQ(3 * US)));
        assert_eq!(c.hold, Some(TimeQ(0)));
        assert!(c.validate(&RunContext::new(4150, 64)).is_ok());
        let zero = FlowletConfig {
            gap: Some(TimeQ(0)),
            ..FlowletConfig::default()
        };
        assert!(zero
            .validate(&RunContext::new(4150, 64))
            .unwrap_err()
            .to_string()
            .starts_with("gap:"));
        assert!(toml::from_str::<FlowletConfig>("timeout = \"3us\"").is_err());
    }
}
