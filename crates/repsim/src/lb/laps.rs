//! LAPS (latency-aware packet spraying, seed 003): the sender picks every packet's explicit
//! route by a softmax over the candidate routes' last measured one-way latencies, refreshes
//! stale routes with probes, and tells the LAPS transport ([`transport`]: per-path loss
//! detection, per-path timeout, AIMD rate, fixed window) when every route is congested. The
//! connection runs that transport in place of the run's congestion control
//! ([`LbScheme::own_transport`]).
//!
//! The path-information table (PIT) lives here, one record per candidate route: its idle
//! baseline (`idleVal`), its last one-way latency (`realVal`), when that was measured
//! (`time`), when a packet or probe last went on it, and whether a probe answer is awaited.
//! Latencies come from every data ACK ([`AckFeedback::one_way`]) and probe answer
//! ([`LoadBalancer::on_probe_answer`]); the receiver echoes arrival minus send time (simulated
//! time is global, so no clock sync). The idle baseline of a route is LAPS's
//! `theoreticalSmallestLatency` ([`idle_latency`]).
//!
//! Defaults: the sender that produced the paper's numbers. The paper (section 3.7's footnote)
//! sends its readers to the reference code (`Laps-ns3`, `peers.md` 1.9) for every setting, and
//! every figure came from that code, so where the text and the code differ on how the sender
//! behaves, LAPS alone departs from the project's "paper first" rule and follows the code:
//! - **Pacing** (1.9-A): the code never sets a LAPS flow's pacing rate, so it sends as fast as
//!   its window 2 T C allows (`pacing = false`, the default). There the AIMD rate only moves
//!   the flow's next-available time, once per change, by the difference between one packet's
//!   transmit time at the new and at the old rate (later on a decrease, at most 4.2 us from 2
//!   to 1 Gb/s; earlier on an increase), and only delays a send that comes sooner than that
//!   after the previous one: not modelled. `pacing = true` paces at the AIMD rate as the
//!   paper's text describes.
//! - **Guards**: the code spaces decreases by 2 x the largest path latency at the decrease and
//!   increases by 2T, each regardless of the other (`decrease_guard = "latency"`, the
//!   default); the paper's text allows one adjustment of either kind per 2T
//!   (`decrease_guard = "2T"`). The scenarios label the paper's sender (`pacing = true`,
//!   `decrease_guard = "2T"`) `laps-paper-text`.
//!
//! Where the paper and the code differ on what the sender measures, the paper is the default
//! and the code an option (these decide no published number on their own):
//! - **Probing** (1.9-B): `probing = "paper"`: a route not updated for more than twice its
//!   latency is probed; while the answer is awaited its `time` is now and its latency counts
//!   double (fewer probes, fewer packets on it). `probing = "code"`: the code's flow-level
//!   rule (stale: not updated for 2 x the largest latency of the set; probed only if nothing,
//!   data included, went on it for 2 x the largest latency of the stale ones; no doubling). At
//!   most one probe per data packet either way, on a uniformly drawn eligible route.
//! - **Valid routes** (1.9-C): with paper probing a route awaiting its probe answer is not
//!   valid; the decrease rule looks at valid routes only (none valid: no decision). With code
//!   probing every route is valid, as the code has no validity.
//! - **N** (1.9-D): see [`LapsConfig`].
//! - **Randomness**: the softmax and probe draws come from the connection's seeded stream
//!   (the code's are unseeded), so a run repeats bit for bit.
//! - **PIT scope**: per connection (the code shares it between the flows of a host pair);
//!   with `[transport] reuse_connections` the next flow of a pair inherits it.
use serde::{Deserialize, Serialize};

use super::{
    AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer, OwnConnection, PathChoice, Route,
};
use crate::engine::time::MS;
use crate::engine::{Rng, Time};
use crate::net::candidates::whole_ns;
use crate::net::paths::PathId;
use crate::net::RunContext;
use crate::units::{RateQ, TimeQ};
use crate::ConfigError;

pub mod transport;
pub use transport::LapsTransport;

/// One gigabit per second.
const GBPS: u64 = 1_000_000_000;

/// How stale routes are probed (`peers.md` 1.9-B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LapsProbing {
    /// The paper: per route, when not updated for 2 x its latency; the latency doubles while
    /// the answer is awaited.
    Paper,
    /// The reference code: flow-level thresholds, data sends count as probes, no doubling.
    Code,
}

/// The interval after a rate decrease before the next one may happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LapsDecreaseGuard {
    /// The paper's text (`"2T"`): at most one adjustment, increase or decrease, per 2T (T: the
    /// largest idle baseline).
    #[serde(rename = "2T", alias = "target")]
    Target,
    /// The reference code (`"latency"`, the default): decreases 2 x the largest latency
    /// measured at the decrease apart, increases 2T apart, each regardless of the other.
    #[serde(rename = "latency")]
    Latency,
}

/// `lb = { scheme = "laps", beta = 1.0, probing = "paper", pacing = false }`.
///
/// The sender defaults to the reference code's (window-only, the code's guards: see the module
/// doc); [`LapsConfig::paper_text`] is the paper's paced sender. The constants are the
/// paper's and the reference code's (`peers.md` 1.8): beta 1,
/// 8 ms per-path timeout, N = 6 halving-the-gap increases before the expected rate doubles
/// (the code's `incStage > 5`; the paper only says "N"), 1 Gb/s minimum rate and additive
/// floor (the code's; the paper writes the increase as half the gap, which is no increase
/// once the rate reaches the expected one, yet calls it linear: the floor is that additive
/// part, so it stays the default), window 2 T C, 20 B of source-route header per data packet
/// and probe (the paper's estimate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LapsConfig {
    /// Candidate routes per connection (the LAPS set on Dragonfly and rail, else the k
    /// shortest).
    pub paths: u32,
    /// Softmax temperature factor: weight exp(-beta x latency / largest idle baseline).
    pub beta: f64,
    /// Probing rule.
    pub probing: LapsProbing,
    /// Pace at the AIMD rate (the paper's text); false (the default): the code's window-only
    /// sender, whose rate field is never used for spacing (`peers.md` 1.9-A).
    pub pacing: bool,
    /// Per-path retransmission timeout.
    pub rto: TimeQ,
    /// Consecutive increases after which each further increase doubles the expected rate.
    pub hyper_after: u32,
    /// Lowest rate.
    pub min_rate: RateQ,
    /// Smallest step of an increase.
    pub additive_step: RateQ,
    /// Interval between decreases.
    pub decrease_guard: LapsDecreaseGuard,
    /// Source-route header bytes added to every data packet and probe.
    pub route_header: u32,
}

impl Default for LapsConfig {
    fn default() -> Self {
        LapsConfig {
            paths: 8,
            beta: 1.0,
            probing: LapsProbing::Paper,
            pacing: false,
            rto: TimeQ(8 * MS),
            hyper_after: 6,
            min_rate: RateQ(GBPS),
            additive_step: RateQ(GBPS),
            decrease_guard: LapsDecreaseGuard::Latency,
            route_header: 20,
        }
    }
}

impl LapsConfig {
    /// The sender the paper's text describes (`laps-paper-text` in the scenarios): paced at
    /// the AIMD rate, one rate change of either kind per 2T.
    pub fn paper_text() -> Self {
        LapsConfig {
            pacing: true,
            decrease_guard: LapsDecreaseGuard::Target,
            ..Default::default()
        }
    }

    /// T, the target delay: the largest idle baseline of the candidate routes, for packets of
    /// `mtu` bytes.
    pub fn target(routes: &[Route], mtu: u32) -> Time {
        routes
            .iter()
            .map(|r| idle_latency(r, mtu))
            .max()
            .unwrap_or(0)
    }
}

/// LAPS's idle baseline of `route` (`theoreticalSmallestLatency`) for `packet`-byte packets:
/// its unloaded one-way latency (per link propagation and serialisation, plus every switch's
/// forwarding latency) plus, per link, one more serialisation at the route's slowest speed,
/// serialisations truncated to whole nanoseconds as the reference code computes them (1,048 B:
/// 83 ns at 100 Gb/s).
pub fn idle_latency(route: &Route, packet: u32) -> Time {
    route.one_way + route.hops as Time * whole_ns(packet, route.slowest_rate)
}

/// What the LAPS transport reads from its connection's [`Laps`] after each data ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSignal {
    /// Every valid candidate route's latency exceeds the target delay.
    pub congested: bool,
    /// The largest latency over the candidate routes.
    pub max_latency: Time,
}

impl LbScheme for LapsConfig {
    /// The LAPS transport, over the candidate routes, with the per-path timeout `rto`.
    fn own_transport(&self, routes: &[Route], line_rate: u64, mtu: u32) -> Option<OwnConnection> {
        let target = Self::target(routes, mtu);
        let transport = LapsTransport::new(self, routes.len(), target, line_rate, mtu);
        Some(OwnConnection {
            transport: Box::new(transport),
            route_header: self.route_header,
            rto: self.rto.0,
        })
    }

    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Laps::new(self, ctx.routes, ctx.mtu))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.paths == 0 || self.paths > 64 {
            return Err(ConfigError::new(
                "paths",
                format!("must be in 1..=64, not {}", self.paths),
            ));
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(ConfigError::new(
                "beta",
                format!("must be finite and >= 0, not {}", self.beta),
            ));
        }
        if self.rto.0 == 0 {
            return Err(ConfigError::new("rto", "must be positive"));
        }
        if self.min_rate.0 == 0 {
            return Err(ConfigError::new("min_rate", "must be positive"));
        }
        if self.route_header > 1000 {
            return Err(ConfigError::new(
                "route_header",
                format!("must be at most 1000 bytes, not {}", self.route_header),
            ));
        }
        Ok(())
    }

    /// The candidate routes it wants.
    fn routes_wanted(&self) -> usize {
        self.paths as usize
    }
}

/// One PIT record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PathRecord {
    route: PathId,
    /// Last one-way latency (`realVal`; doubled while a paper-rule probe is awaited).
    latency: Time,
    /// When `latency` was last set (`time`).
    updated: Time,
    /// When a data packet or probe last went on it.
    last_sent: Time,
    /// A probe answer is awaited (paper rule): not valid for the decrease rule.
    waiting: bool,
}

/// The LAPS path chooser of one connection.
#[derive(Clone)]
pub struct Laps {
    paths: Vec<PathRecord>,
    beta: f64,
    probing: LapsProbing,
    /// T: the largest idle baseline.
    target: Time,
    /// Softmax weights (reused buffer).
    weights: Vec<f64>,
    /// The probe the latest [`LoadBalancer::next`] decided on.
    probe: Option<u16>,
}

impl Laps {
    /// A chooser over `routes` (at least one, at most 64: `paths` is validated to 64) for
    /// packets of `mtu` bytes.
    pub fn new(config: &LapsConfig, routes: &[Route], mtu: u32) -> Self {
        assert!(!routes.is_empty(), "LAPS needs candidate routes");
        assert!(routes.len() <= 64, "LAPS takes at most 64 candidate routes");
        Laps {
            paths: routes
                .iter()
                .map(|r| PathRecord {
                    route: r.id,
                    latency: r.one_way,
                    updated: 0,
                    last_sent: 0,
                    waiting: false,
                })
                .collect(),
            beta: config.beta,
            probing: config.probing,
            target: LapsConfig::target(routes, mtu),
            weights: vec![0.0; routes.len()],
            probe: None,
        }
    }

    /// The softmax draw: route i with probability proportional to
    /// exp(-beta x latency_i / T), by inverse CDF over one uniform draw (last route as the
    /// fallback for rounding).
    fn softmax(&mut self, rng: &mut Rng) -> usize {
        let scale = self.beta / self.target.max(1) as f64;
        let mut total = 0.0;
        for (w, p) in self.weights.iter_mut().zip(&self.paths) {
            *w = (-(p.latency as f64) * scale).exp();
            total += *w;
        }
        let mut u = rng.unit() * total;
        for (i, &w) in self.weights.iter().enumerate() {
            if u < w {
                return i;
            }
            u -= w;
        }
        self.paths.len() - 1
    }

    /// Whether route `i` may be probed now under the configured rule (`stale_max`: the code
    /// rule's largest latency over the stale routes).
    fn probe_eligible(&self, i: usize, now: Time, all_max: Time, stale_max: Time) -> bool {
        let p = &self.paths[i];
        match self.probing {
            LapsProbing::Paper => now.saturating_sub(p.updated) > 2 * p.latency,
            LapsProbing::Code => {
                now.saturating_sub(p.updated) > 2 * all_max
                    && now.saturating_sub(p.last_sent) > 2 * stale_max
            }
        }
    }

    /// Decides the probe to send with the packet going now, if any: one eligible route drawn
    /// uniformly.
    fn decide_probe(&mut self, now: Time, rng: &mut Rng) -> Option<u16> {
        let all_max = self.paths.iter().map(|p| p.latency).max().unwrap_or(0);
        let stale_max = match self.probing {
            LapsProbing::Paper => 0,
            LapsProbing::Code => self
                .paths
                .iter()
                .filter(|p| now.saturating_sub(p.updated) > 2 * all_max)
                .map(|p| p.latency)
                .max()
                .unwrap_or(0),
        };
        // One bit per eligible route (at most 64 routes), so the rule runs once per route.
        let eligible = (0..self.paths.len())
            .filter(|&i| self.probe_eligible(i, now, all_max, stale_max))
            .fold(0u64, |set, i| set | 1 << i);
        if eligible == 0 {
            return None;
        }
        // The pick-th eligible route in index order: clear the lower set bits.
        let mut rest = eligible;
        for _ in 0..rng.below(eligible.count_ones()) {
            rest &= rest - 1;
        }
        let i = rest.trailing_zeros() as usize;
        let p = &mut self.paths[i];
        p.last_sent = now;
        if self.probing == LapsProbing::Paper {
            p.updated = now;
            p.latency = p.latency.saturating_mul(2);
            p.waiting = true;
        }
        Some(i as u16)
    }

    /// The current latency estimate of candidate `i` (tests and reports).
    pub fn latency(&self, i: usize) -> Time {
        self.paths[i].latency
    }

    /// A one-way latency of candidate `ev` measured at `now` (a data ACK's echo or a probe
    /// answer): the PIT record's latency and time, and the record is valid again.
    pub fn on_one_way(&mut self, ev: u16, one_way: Time, now: Time) {
        if let Some(p) = self.paths.get_mut(ev as usize) {
            p.latency = one_way;
            p.updated = now;
            p.waiting = false;
        }
    }

    /// Whether every valid route is over the target delay, and the largest latency: what the
    /// LAPS transport's rate control reads after each data ACK.
    pub fn path_signal(&self) -> PathSignal {
        let mut valid = self.paths.iter().filter(|p| !p.waiting).peekable();
        let congested = valid.peek().is_some() && valid.all(|p| p.latency > self.target);
        PathSignal {
            congested,
            max_latency: self.paths.iter().map(|p| p.latency).max().unwrap_or(0),
        }
    }
}

impl LoadBalancer for Laps {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, now: Time, rng: &mut Rng) -> PathChoice {
        let i = self.softmax(rng);
        self.paths[i].last_sent = now;
        self.probe = self.decide_probe(now, rng);
        PathChoice {
            ev: i as u16,
            route: self.paths[i].route,
        }
    }

    fn sends_probes(&self) -> bool {
        true
    }

    fn take_probe(&mut self) -> Option<PathChoice> {
        let i = self.probe.take()?;
        Some(PathChoice {
            ev: i,
            route: self.paths[i as usize].route,
        })
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        if let Some(one_way) = ack.one_way {
            self.on_one_way(ack.ev, one_way, ack.now);
        }
        None
    }

    fn on_probe_answer(&mut self, ev: u16, one_way: Time, now: Time) {
        self.on_one_way(ev, one_way, now);
    }
}

#[cfg(test)]
mod tests;
