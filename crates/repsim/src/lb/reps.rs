//! REPS: a thin adapter over the `reps` crate, so the simulated algorithm is the shipped one.
//!
//! The adapter converts simulated picoseconds to the crate's 32-bit nanosecond ticks and decides
//! when a timeout counts as a failure: with trimming on every timeout does (losses without
//! trimming cannot be congestion); with trimming off only when the largest RTT seen in the
//! current window of 2 x RTO stayed below 1.65 x the base RTT (losses without queueing).
//!
//! `force_freeze_at` puts every connection into freezing mode at the first ACK at or after a
//! time, failures or not (the paper's Fig. 19 study of freezing mode on a healthy fabric); it
//! applies even with `freezing = false`, which only stops failures from freezing.
//!
//! ACK coalescing variants (paper Section 4.5.1): `per_ack` (the default and the reference's
//! behaviour) caches the EV the ACK echoes; `carry_evs` caches the EVs of every packet the ACK
//! covers; `reuse_evs` caches the echoed EV for several sends (default: as many as packets per
//! ACK).
use ::reps::{Coalescing, Config, RepsState, Transition};
use serde::{Deserialize, Serialize};

use super::{
    check_evs_override, AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer, PathChoice,
};
use crate::engine::time::{MS, NS};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::units::TimeQ;
use crate::ConfigError;

/// How REPS behaves right after it leaves freezing mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExploreMode {
    /// Every packet random until the exploration budget is spent (the reference simulator).
    Reference,
    /// Only every 8th packet random while exploring (the paper's Algorithm 2).
    Paper,
}

/// Which EVs a (possibly coalesced) ACK lets REPS recycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoalescingMode {
    /// The EV the ACK echoes, used once.
    PerAck,
    /// The EVs of every packet the ACK covers.
    CarryEvs,
    /// The EV the ACK echoes, used several times.
    ReuseEvs,
}

/// `lb = { scheme = "reps", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RepsConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// How long freezing mode lasts.
    pub freeze: TimeQ,
    /// Whether failures may enter freezing at all.
    pub freezing: bool,
    /// Behaviour after freezing.
    pub explore: ExploreMode,
    /// Packets explored after freezing (default: the connection's BDP in packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explore_packets: Option<u32>,
    /// Which EVs an ACK recycles.
    pub coalescing: CoalescingMode,
    /// `reuse_evs`: sends one cached EV may serve (1..=16; default: packets per ACK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_uses: Option<u8>,
    /// Enter freezing mode at the first ACK at or after this time, failure or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force_freeze_at: Option<TimeQ>,
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig {
            evs_size: None,
            freeze: TimeQ(10 * MS),
            freezing: true,
            explore: ExploreMode::Reference,
            explore_packets: None,
            coalescing: CoalescingMode::PerAck,
            reuse_uses: None,
            force_freeze_at: None,
        }
    }
}

impl RepsConfig {
    /// The crate configuration for a connection whose ACKs cover `packets_per_ack` packets.
    fn crate_config(&self, ctx: &LbContext) -> Config {
        let mut config = Config::new(ctx.evs(self.evs_size));
        config.freeze_duration = (self.freeze.0 / NS).min(i32::MAX as u64) as u32;
        config.explore_packets = self
            .explore_packets
            .unwrap_or(ctx.bdp_packets)
            .min(u16::MAX as u32) as u16;
        config.explore_mode = match self.explore {
            ExploreMode::Reference => ::reps::ExploreMode::Reference,
            ExploreMode::Paper => ::reps::ExploreMode::PaperPseudocode,
        };
        config.coalescing = match self.coalescing {
            CoalescingMode::PerAck => Coalescing::PerAck,
            CoalescingMode::CarryEvs => Coalescing::CarryEvs,
            CoalescingMode::ReuseEvs => Coalescing::ReuseEvs {
                max_uses: self
                    .reuse_uses
                    .unwrap_or(ctx.packets_per_ack.clamp(1, ::reps::MAX_REUSE_USES as u32) as u8),
            },
        };
        config.freezing_enabled = self.freezing;
        config
    }
}

impl LbScheme for RepsConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Reps {
            state: RepsState::new(),
            config: self.crate_config(ctx),
            trimming: ctx.trimming,
            base_rtt: ctx.base_rtt,
            rto: ctx.rto,
            max_rtt_in_window: 0,
            window_end: 0,
            force_freeze_at: self.force_freeze_at.map(|t| t.0),
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)?;
        if self.freeze.0 / NS > i32::MAX as u64 {
            return Err(ConfigError::new(
                "freeze",
                "must be below about 2.1 s (32-bit nanosecond clock)",
            ));
        }
        if let Some(u) = self.reuse_uses {
            if u == 0 || u > ::reps::MAX_REUSE_USES {
                return Err(ConfigError::new(
                    "reuse_uses",
                    format!("must be in 1..={}, not {u}", ::reps::MAX_REUSE_USES),
                ));
            }
        }
        Ok(())
    }
}

/// One connection's REPS state plus the failure-detection bookkeeping around it.
#[derive(Clone)]
pub struct Reps {
    state: RepsState,
    config: Config,
    trimming: bool,
    base_rtt: Time,
    rto: Time,
    max_rtt_in_window: Time,
    window_end: Time,
    /// A forced freeze still to come.
    force_freeze_at: Option<Time>,
}

#[inline]
fn tick(now: Time) -> u32 {
    (now / NS) as u32
}

/// The event of entering freezing mode (its `until` is the earliest time freezing may end).
pub const FROZE: &str = "froze";
/// The event of leaving freezing mode.
pub const UNFROZE: &str = "unfroze";

fn event(t: Transition, until: Time) -> Option<LbEvent> {
    match t {
        Transition::None => None,
        Transition::EnteredFreezing => Some(LbEvent::named(FROZE).until(until)),
        Transition::ExitedFreezing => Some(LbEvent::named(UNFROZE)),
    }
}

impl Reps {
    /// The crate-level state (for inspection in tests).
    pub fn state(&self) -> &RepsState {
        &self.state
    }
}

impl Reps {
    /// Freezes now whatever `freezing` says; retried on later ACKs while exploration after an
    /// earlier freeze still runs (freezing cannot start then).
    fn force_freeze(&mut self, now: Time) -> Option<LbEvent> {
        if self.state.is_frozen() {
            self.force_freeze_at = None;
            return None;
        }
        let config = Config {
            freezing_enabled: true,
            ..self.config
        };
        let t = self.state.on_failure_detected(&config, tick(now));
        if t == Transition::EnteredFreezing {
            self.force_freeze_at = None;
        }
        event(t, now + self.config.freeze_duration as Time * NS)
    }
}

impl LoadBalancer for Reps {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        PathChoice::ev(self.state.next_ev(&self.config, rng))
    }

    fn wants_covered(&self) -> bool {
        self.config.coalescing == Coalescing::CarryEvs
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        if let Some(rtt) = ack.rtt {
            if ack.now > self.window_end {
                self.max_rtt_in_window = 0;
                self.window_end = ack.now + 2 * self.rto;
            }
            self.max_rtt_in_window = self.max_rtt_in_window.max(rtt);
        }
        let now = tick(ack.now);
        let t = match self.config.coalescing {
            Coalescing::PerAck => self.state.on_ack(&self.config, ack.ev, ack.ecn, now),
            Coalescing::CarryEvs => {
                self.state
                    .on_coalesced_ack(&self.config, ack.covered, ack.ecn, now)
            }
            Coalescing::ReuseEvs { .. } => {
                self.state
                    .on_coalesced_ack(&self.config, &[ack.ev], ack.ecn, now)
            }
        };
        if t == Transition::None && self.force_freeze_at.is_some_and(|at| ack.now >= at) {
            return self.force_freeze(ack.now);
        }
        event(t, 0)
    }

    fn on_nack(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        event(self.state.on_nack(&self.config, ev, tick(now)), 0)
    }

    fn on_timeout(&mut self, _ev: u16, now: Time) -> Option<LbEvent> {
        // 1.65 x base RTT, in integers.
        let looks_like_failure =
            self.trimming || self.max_rtt_in_window * 100 < self.base_rtt * 165;
        if !looks_like_failure {
            return None;
        }
        let until = now + self.config.freeze_duration as Time * NS;
        event(
            self.state.on_failure_detected(&self.config, tick(now)),
            until,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    fn reps(config: RepsConfig) -> Box<dyn LoadBalancer> {
        config.build(&LbContext::example(), &mut Rng::new(1))
    }

    #[test]
    fn a_forced_freeze_starts_at_the_first_ack_from_its_time_even_with_freezing_off() {
        let mut lb = reps(RepsConfig {
            force_freeze_at: Some(TimeQ(50 * US)),
            freezing: false,
            freeze: TimeQ(100 * US),
            ..RepsConfig::default()
        });
        let mut rng = Rng::new(2);
        for t in [0, 10 * US, 49 * US] {
            lb.next(t, &mut rng);
            assert_eq!(lb.on_ack(&AckFeedback::example(7, t)), None, "t = {t}");
        }
        assert_eq!(
            lb.on_ack(&AckFeedback::example(7, 50 * US)),
            Some(LbEvent::named(FROZE).until(150 * US))
        );
        // Once: later ACKs leave it frozen until the duration ends, then it thaws for good.
        assert_eq!(lb.on_ack(&AckFeedback::example(7, 60 * US)), None);
        assert_eq!(
            lb.on_ack(&AckFeedback::example(7, 151 * US)),
            Some(LbEvent::named(UNFROZE))
        );
        assert_eq!(lb.on_ack(&AckFeedback::example(7, 400 * US)), None);
        // Failures still cannot freeze it (freezing = false).
        assert_eq!(lb.on_timeout(7, 401 * US), None);
    }

    #[test]
    fn without_a_forced_freeze_a_healthy_connection_never_freezes() {
        let mut lb = reps(RepsConfig::default());
        for t in 0..100 {
            assert_eq!(lb.on_ack(&AckFeedback::example(t as u16, t * US)), None);
        }
    }
}
