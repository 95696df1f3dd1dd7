//! PLB (Protective Load Balancing): one EV per connection, moved to a new random EV after
//! `rounds` consecutive congested rounds or on a retransmission timeout. Behaviour source:
//! `htsim-reps.md` section 7.6 (the REPS artifact's `plb`).
//!
//! **Rounds.** Every ACK and NACK counts one unit delivered, and one unit congested if it is an
//! ECN-marked ACK or a NACK (the reference adds a fixed 4096 bytes per feedback, whatever the
//! ACK covers, so counting feedbacks is the same ratio). A round closes at the first feedback
//! that arrives after `round_end`; that feedback still counts in the round it closes. The round
//! was congested when `congested > k x delivered`; a congested round adds one to the run of
//! consecutive congested rounds, any other round ends the run. The next round then ends one
//! base RTT later. The round clock starts at time zero, as in the reference, so the
//! connection's first feedback closes a round of its own.
//!
//! **Re-path exactly after `rounds`.** The feedback that closes the `rounds`-th consecutive
//! congested round re-paths the connection and resets the run to zero; with `rounds = 2` (the
//! default, the reference's `congested_rounds > 1`) the second congested round in a row moves
//! it, never the first. The reference takes this decision in its send path; here it is taken
//! on the feedback that closes the round, which reports [`LbEvent::REROUTED`] there, and the
//! next packet draws the new EV (a load balancer draws randomness only when it sends). The one
//! difference: if a further round closed while the sender was still blocked by its window, the
//! reference would re-check the (possibly reset) run, while here the decision already stands.
//!
//! **Timeouts.** A retransmission timeout re-paths the connection too and resets the run, at
//! most once per RTO: only a timeout strictly later than one RTO after the last re-path by
//! timeout does so (the reference's `now > plb_timeout_wait`).
//!
//! **Threshold: paper versus reference.** PLB's threshold is the fraction k = 0.25 of
//! delivered bytes (`threshold`). The reference stores it in an integer, so k becomes 0 and a
//! single marked ACK or NACK makes a round congested. `threshold_mode = "fractional"` (the
//! default) uses k as given; `threshold_mode = "reference"` truncates it to an integer as the
//! reference does.
//!
//! **Rounds as the LAPS code counts them** (`round = "window"`, `peers.md` 7.1). The LAPS
//! reference's PLB runs on its RNIC's DCTCP rounds instead: a round ends at the first ACK of a
//! packet sent after the round began (its sequence passes `snd_nxt` as it was then), so it
//! lasts one real round trip, queueing included, rather than one base RTT. A round's size is
//! the packets then in flight plus one (`in flight / MTU + 1`); it was congested when its
//! marked ACKs and NACKs reach `threshold` of that size (`>=`, capped at 1); the first round
//! only sets the count up. After `rounds` congested rounds in a row, or 3 with nothing left in
//! flight, the connection re-paths. A timeout does not re-path: it resets the run and stops
//! PLB for the rest of the run (the reference pauses it for 60-120 s). Under this incast-heavy
//! load the difference is large: on LAPS Table 1's incast, base-RTT rounds re-path each
//! congested connection about every 0.5 ms.
//!
//! **Next hops.** Its EVs are hashed by the switches over their shortest-path groups, or, in a
//! run whose `lb` entry says `next_hops = "laps-candidates"` (the LAPS runs), over the next
//! links of the LAPS candidate routes ([`crate::net::candidate_hops`]).
use serde::{Deserialize, Serialize};

use super::{
    check_evs_override, random_ev, AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer,
    PathChoice,
};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// How the congestion threshold `threshold` is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdMode {
    /// As the fraction it is (the PLB paper's intent).
    Fractional,
    /// Truncated to an integer, as the reference's integer variable holds it (0.25 becomes 0).
    Reference,
}

/// What one PLB round is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundMode {
    /// One base RTT of time (the REPS reference's PLB).
    BaseRtt,
    /// One window of packets: until an ACK of a packet sent after the round began (the LAPS
    /// reference's PLB, on its DCTCP rounds).
    Window,
}

/// `lb = { scheme = "plb", rounds = 2, threshold = 0.25, threshold_mode = "fractional" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlbConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// Consecutive congested rounds after which the connection re-paths (exactly then).
    pub rounds: u32,
    /// A round is congested when its congested feedback exceeds this fraction of all of it.
    pub threshold: f64,
    /// Whether `threshold` is used as a fraction or truncated as the reference does.
    pub threshold_mode: ThresholdMode,
    /// What a round is (`base_rtt`, the default, or `window`).
    pub round: RoundMode,
}

impl Default for PlbConfig {
    fn default() -> Self {
        PlbConfig {
            evs_size: None,
            rounds: 2,
            threshold: 0.25,
            threshold_mode: ThresholdMode::Fractional,
            round: RoundMode::BaseRtt,
        }
    }
}

impl PlbConfig {
    /// The threshold a round's congested share is compared with.
    fn effective_threshold(&self) -> f64 {
        match self.threshold_mode {
            ThresholdMode::Fractional => self.threshold,
            ThresholdMode::Reference => self.threshold.trunc(),
        }
    }
}

impl LbScheme for PlbConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Plb::new(self, ctx, rng))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)?;
        if self.rounds == 0 {
            return Err(ConfigError::new("rounds", "must be at least 1"));
        }
        if !(self.threshold >= 0.0 && self.threshold < 1.0) {
            return Err(ConfigError::new(
                "threshold",
                format!("must be at least 0 and below 1, not {}", self.threshold),
            ));
        }
        Ok(())
    }
}

/// One connection's PLB state.
#[derive(Clone)]
pub struct Plb {
    evs_size: u32,
    ev: u16,
    /// The next packet draws a new EV.
    repath_pending: bool,
    rounds: u32,
    threshold: f64,
    /// Marked ACKs and NACKs in the current round.
    congested: u64,
    /// Consecutive congested rounds so far.
    congested_rounds: u32,
    /// What a round is, with the state that kind of round keeps.
    kind: Rounds,
}

/// The two kinds of round (see [`RoundMode`]).
#[derive(Clone)]
enum Rounds {
    /// One base RTT each.
    BaseRtt(TimedRounds),
    /// One window each.
    Window(WindowRounds),
}

/// The state of base-RTT rounds.
#[derive(Clone)]
struct TimedRounds {
    base_rtt: Time,
    rto: Time,
    /// Feedbacks in the current round.
    delivered: u64,
    /// The current round closes at the first feedback after this time.
    round_end: Time,
    /// A timeout re-paths only after this time.
    timeout_hold: Time,
}

/// The state of window rounds.
#[derive(Clone)]
struct WindowRounds {
    mtu: u64,
    /// The current round began then: an ACK of a packet sent at or after it closes the round.
    round_start: Time,
    /// The round's size in packets (0 in the first round, which only sets it).
    batch: u64,
    /// A timeout stopped PLB for the rest of the run.
    stopped: bool,
}

/// Congested rounds in a row after which a connection with nothing in flight re-paths
/// (window rounds).
const IDLE_REPATH_ROUNDS: u32 = 3;

impl Plb {
    /// A connection's state with a random initial EV.
    pub fn new(config: &PlbConfig, ctx: &LbContext, rng: &mut Rng) -> Self {
        let evs_size = ctx.evs(config.evs_size);
        Plb {
            evs_size,
            ev: random_ev(rng, evs_size),
            repath_pending: false,
            rounds: config.rounds,
            threshold: config.effective_threshold(),
            congested: 0,
            congested_rounds: 0,
            kind: match config.round {
                RoundMode::BaseRtt => Rounds::BaseRtt(TimedRounds {
                    base_rtt: ctx.base_rtt,
                    rto: ctx.rto,
                    delivered: 0,
                    round_end: 0,
                    timeout_hold: 0,
                }),
                RoundMode::Window => Rounds::Window(WindowRounds {
                    mtu: ctx.mtu.max(1) as u64,
                    round_start: 0,
                    batch: 0,
                    stopped: false,
                }),
            },
        }
    }

    /// One ACK or NACK; reports a re-path when it closes the last round of a congested run.
    /// `sent_at` is when the packet acknowledged was sent (`None` for NACKs and ACKs of
    /// nothing outstanding: they never close a window round), `in_flight` the bytes left.
    fn feedback(
        &mut self,
        congested: bool,
        now: Time,
        sent_at: Option<Time>,
        in_flight: i64,
    ) -> Option<LbEvent> {
        if congested {
            self.congested += 1;
        }
        let (verdict, idle) = match &mut self.kind {
            Rounds::BaseRtt(r) => {
                r.delivered += 1;
                if now <= r.round_end {
                    return None;
                }
                let verdict = self.congested as f64 > self.threshold * r.delivered as f64;
                r.delivered = 0;
                r.round_end = now + r.base_rtt;
                (Some(verdict), false)
            }
            Rounds::Window(w) => {
                if sent_at.is_none_or(|at| at < w.round_start) {
                    return None;
                }
                // The first round only sets the size up.
                let verdict = (w.batch > 0)
                    .then(|| (self.congested as f64 / w.batch as f64).min(1.0) >= self.threshold);
                w.round_start = now;
                w.batch = in_flight.max(0) as u64 / w.mtu + 1;
                (verdict, in_flight <= 0)
            }
        };
        self.congested = 0;
        self.end_round(verdict, idle)
    }

    /// Counts a closed round into the run of congested ones (`None`: a round not judged) and
    /// re-paths once the run reaches `rounds`, or (window rounds, with nothing in flight:
    /// `idle`) [`IDLE_REPATH_ROUNDS`]; the run then starts again. A stopped PLB (window rounds,
    /// after a timeout) counts but never re-paths.
    fn end_round(&mut self, congested: Option<bool>, idle: bool) -> Option<LbEvent> {
        match congested {
            Some(true) => self.congested_rounds += 1,
            Some(false) => self.congested_rounds = 0,
            None => {}
        }
        let idle = idle && self.congested_rounds >= IDLE_REPATH_ROUNDS;
        let stopped = matches!(&self.kind, Rounds::Window(w) if w.stopped);
        if stopped || (self.congested_rounds < self.rounds && !idle) {
            return None;
        }
        self.congested_rounds = 0;
        self.repath_pending = true;
        Some(LbEvent::REROUTED)
    }
}

impl LoadBalancer for Plb {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        if self.repath_pending {
            self.repath_pending = false;
            self.ev = random_ev(rng, self.evs_size);
        }
        PathChoice::ev(self.ev)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        let sent_at = ack.rtt.map(|rtt| ack.now.saturating_sub(rtt));
        self.feedback(ack.ecn, ack.now, sent_at, ack.in_flight)
    }

    fn on_nack(&mut self, _ev: u16, now: Time) -> Option<LbEvent> {
        self.feedback(true, now, None, 0)
    }

    fn on_timeout(&mut self, _ev: u16, now: Time) -> Option<LbEvent> {
        match &mut self.kind {
            Rounds::Window(w) => {
                w.stopped = true;
                self.congested_rounds = 0;
                None
            }
            Rounds::BaseRtt(r) => {
                if now <= r.timeout_hold {
                    return None;
                }
                r.timeout_hold = now + r.rto;
                self.congested_rounds = 0;
                self.repath_pending = true;
                Some(LbEvent::REROUTED)
            }
        }
    }
}

#[cfg(test)]
mod tests;
