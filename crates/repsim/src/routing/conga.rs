//! CONGA (Alizadeh et al., "CONGA: Distributed Congestion-Aware Load Balancing for
//! Datacenters", SIGCOMM 2014): the source ToR sends each new flowlet on the ToR-to-ToR path
//! whose congestion, as far as it knows, is least; switches measure their uplinks with
//! discounting rate estimators (DRE), packets collect the path's congestion on the way, the
//! destination ToR stores it and feeds it back on packets going the other way.
//!
//! The mechanism as modelled (parameters of the ConWeave repository by default):
//! - Flowlets at the source ToR: a data packet more than `flowlet` (100 µs) after the flow's
//!   previous one starts a flowlet, which picks a path; the path code travels in
//!   `Packet::scheme` and the switches after the source ToR follow it
//!   ([`super::tor_paths`]).
//! - DRE per switch port, updated as the port starts sending a packet (the egress hook): X +=
//!   the packet's bytes, and X <- X (1 - `alpha`) once per `dre_period` (50 µs, alpha 0.2).
//!   Quantised congestion CE = floor(X · 8 / (C · T_dre / alpha) · 2^Q), Q = `bits` (3).
//! - Each hop towards the destination ToR writes max(own CE, packet's CE) into the packet (8
//!   bits in `Packet::aux`, with the path index and the feedback).
//! - The destination ToR stores the CE per (source ToR, path) in its from-leaf table; every
//!   data packet a ToR sends towards ToR X carries one entry of its from-leaf table for X,
//!   drawn uniformly among the live ones, which X stores in its to-leaf table.
//! - Path choice: `samples` (4) consecutive paths of the pair from a random start; cost =
//!   max(quantised DRE of the path's first hop here, to-leaf metric of the path); the least
//!   cost wins, ties at random.
//! - Aging: a to-leaf metric not refreshed for `aging` (500 µs) reads 0; a from-leaf entry
//!   that old is no longer fed back.
//!
//! Where the paper and the reference codes differ, and what this model does:
//! - The paper's CE field has Q bits, so CE saturates at 2^Q - 1; the ConWeave repository
//!   does not cap it. Default: not capped (the brief's reference behaviour); `cap = true`
//!   caps. CE travels in 8 bits here and saturates at 255.
//! - The paper compares every uplink; the ConWeave repository samples 4 consecutive paths.
//!   Default 4; `samples = 0` compares every path.
//! - Feedback (`feedback`): `"piggyback"` (default, paper and ConWeave repository) as above;
//!   `"global"` is the LAPS repository's single metric table shared by all switches: the
//!   destination ToR writes the CE straight into the source ToR's to-leaf table, which sees it
//!   at once (the piggybacked entries are still carried, as there). Only ToRs share it, so a
//!   run split over threads keeps every ToR in one partition and spreads the hosts and the
//!   spines over the others ([`crate::net::topology::PartitionRule::EdgesTogether`]).
//! - Which packets: data only (ConWeave repository); `replies = true` also routes ACKs and
//!   NACKs by flowlet at their own source ToR (LAPS runs), without CE or feedback (their
//!   `aux` carries the SACK bitmap). The DRE counts every packet a port sends.
//! - LAPS values: `flowlet = "10us"`, `dre_period = "200us"`, `aging = "10ms"`,
//!   `feedback = "global"`, `replies = true`.
//! - Paths: the fabric's shortest ToR-to-ToR paths by default; with the run's
//!   `next_hops = "laps-candidates"` (the LAPS runs) the LAPS candidate routes of the ToR
//!   pair, as the LAPS code's CONGA chooses among its path ids, non-minimal ones included
//!   ([`super::tor_paths`]).
//! - The DRE decays lazily at period boundaries of the simulation clock (the same instants a
//!   periodic timer would fire), without a timer per port.
//! - Flowlets of data packets are counted, and those that move their flow to another path
//!   count as the run's `reroutes`; `events = true` records each as a `flowlet` event with the
//!   old and new path index ([`super::flowlet_log`]).
use serde::{Deserialize, Serialize};

use super::flowlet_log::FlowletLog;
use super::tor_paths::{edge_of_host, from_host, TorPaths};
use super::{ecmp, Hooks, Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::time::US;
use crate::engine::{Handle, Time};
use crate::net::packet::NO_ROUTE;
use crate::net::RunContext;
use crate::net::{Kind, Packet};
use crate::units::TimeQ;
use crate::ConfigError;

/// `Packet::scheme` bit saying the packet carries a path code in its low byte.
const TAGGED: u16 = 0x8000;
/// `Packet::aux` bit saying the piggybacked feedback is present.
const FEEDBACK: u64 = 1 << 32;

/// How the destination's measurements reach the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feedback {
    /// Piggybacked on packets going back (paper, ConWeave repository).
    Piggyback,
    /// One table shared by all switches, written at once (LAPS repository).
    Global,
}

/// `[routing] switch = "conga"` or `switch = { scheme = "conga", flowlet = "100us", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CongaConfig {
    /// Gap that starts a new flowlet at the source ToR.
    pub flowlet: TimeQ,
    /// DRE decay period.
    pub dre_period: TimeQ,
    /// DRE decay factor per period.
    pub alpha: f64,
    /// Bits of the quantised congestion (Q).
    pub bits: u32,
    /// Cap the quantised congestion at 2^Q - 1 (paper) instead of letting it grow (reference).
    pub cap: bool,
    /// Age after which path metrics are forgotten.
    pub aging: TimeQ,
    /// Paths compared per decision (consecutive from a random start; 0: all).
    pub samples: u32,
    /// How metrics reach the source ToR.
    pub feedback: Feedback,
    /// Also route ACKs and NACKs by flowlet (else they are hashed).
    pub replies: bool,
    /// Record every flowlet of a data flow as a load-balancer event (`lb_events.csv`).
    pub events: bool,
}

impl Default for CongaConfig {
    fn default() -> Self {
        CongaConfig {
            flowlet: TimeQ(100 * US),
            dre_period: TimeQ(50 * US),
            alpha: 0.2,
            bits: 3,
            cap: false,
            aging: TimeQ(500 * US),
            samples: 4,
            feedback: Feedback::Piggyback,
            replies: false,
            events: false,
        }
    }
}

impl RoutingScheme for CongaConfig {
    /// Piggybacked feedback keeps each switch's tables its own; the global table is shared
    /// by the ToRs alone (see [`Self::edges_share_state`]).
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// With `feedback = "global"` the destination ToR writes the source ToR's table at once.
    fn edges_share_state(&self) -> bool {
        self.feedback == Feedback::Global
    }

    /// With `events = true`, every flowlet is recorded.
    fn reports_path_changes(&self) -> bool {
        self.events
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Conga::new(self, setup))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.flowlet.0 == 0 {
            return Err(ConfigError::new("flowlet", "must be positive"));
        }
        if self.dre_period.0 == 0 {
            return Err(ConfigError::new("dre_period", "must be positive"));
        }
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(ConfigError::new("alpha", "must be in (0, 1]"));
        }
        if !(1..=8).contains(&self.bits) {
            return Err(ConfigError::new("bits", "must be between 1 and 8"));
        }
        if self.aging.0 == 0 {
            return Err(ConfigError::new("aging", "must be positive"));
        }
        Ok(())
    }
}

/// A discounting rate estimator.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Dre {
    /// Bytes, discounted.
    bytes: f64,
    /// Index of the period its last decay belongs to.
    period: u64,
}

/// A stored path metric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Metric {
    ce: u8,
    set: bool,
    at: Time,
}

/// A flow's current flowlet at its source ToR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Flowlet {
    last: Time,
    code: u8,
    live: bool,
}

/// CONGA switches.
pub struct Conga {
    flowlet: Time,
    period: Time,
    keep: f64,
    /// Quantisation scale per port: levels per byte.
    scale: Vec<f64>,
    top: u32,
    aging: Time,
    samples: u32,
    global: bool,
    replies: bool,
    salts: Vec<u32>,
    paths: TorPaths,
    dre: Vec<Dre>,
    /// Whether a port leads to a switch (its CE counts towards the path).
    fabric: Vec<bool>,
    /// Per (flow, direction).
    flowlets: Vec<Flowlet>,
    /// At the source ToR of each pair: the metric of each path.
    to_leaf: Vec<Metric>,
    /// At the destination ToR of each pair: the CE last measured on each path.
    from_leaf: Vec<Metric>,
    log: FlowletLog,
}

impl Conga {
    fn new(cfg: &CongaConfig, setup: &SchemeSetup) -> Self {
        let topo = setup.topology;
        let paths = TorPaths::for_run(topo, setup.next_hops);
        let levels = (1u64 << cfg.bits) as f64;
        let period_s = cfg.dre_period.0 as f64 * 1e-12;
        Conga {
            flowlet: cfg.flowlet.0,
            period: cfg.dre_period.0,
            keep: 1.0 - cfg.alpha,
            scale: topo
                .links
                .iter()
                .map(|l| 8.0 * levels * cfg.alpha / (l.rate_bps.max(1) as f64 * period_s))
                .collect(),
            top: if cfg.cap {
                (1u32 << cfg.bits) - 1
            } else {
                u8::MAX as u32
            },
            aging: cfg.aging.0,
            samples: cfg.samples,
            global: cfg.feedback == Feedback::Global,
            replies: cfg.replies,
            salts: setup.salts.to_vec(),
            dre: vec![Dre::default(); topo.links.len()],
            fabric: topo.links.iter().map(|l| l.to >= topo.hosts).collect(),
            flowlets: Vec::new(),
            to_leaf: vec![Metric::default(); paths.slots()],
            from_leaf: vec![Metric::default(); paths.slots()],
            paths,
            log: FlowletLog::new(cfg.events),
        }
    }

    /// Brings a port's DRE to the current period.
    fn decay(&mut self, port: u32, now: Time) {
        let d = &mut self.dre[port as usize];
        let period = now / self.period;
        if period > d.period {
            let k = period - d.period;
            d.bytes = if k > 4096 {
                0.0
            } else {
                d.bytes * self.keep.powi(k as i32)
            };
            d.period = period;
        }
    }

    /// The quantised congestion of a port now.
    fn congestion(&mut self, port: u32, now: Time) -> u32 {
        self.decay(port, now);
        let q = (self.dre[port as usize].bytes * self.scale[port as usize]).floor();
        (q as u32).min(self.top)
    }

    /// A metric, or 0 when it is missing or aged.
    fn fresh(&self, m: Metric, now: Time) -> Option<u32> {
        (m.set && now.saturating_sub(m.at) <= self.aging).then_some(m.ce as u32)
    }

    /// The path (code) a new flowlet of `pair` takes: the least cost among `samples`
    /// consecutive paths from `start`.
    fn choose(
        &mut self,
        ctx: &mut SwitchCtx,
        pair: u32,
        (level, node): (u8, u32),
        candidates: &[u32],
        start: u32,
    ) -> u8 {
        let count = self.paths.count(pair);
        let n = if self.samples == 0 {
            count
        } else {
            self.samples.min(count)
        };
        let now = ctx.now();
        let mut best = (u32::MAX, 0u8);
        let mut ties = 0;
        for k in 0..n {
            let index = (start + k) % count;
            let code = self.paths.code(pair, index);
            let first_hop = self.paths.port(pair, code, level, node, candidates);
            let local = self.congestion(first_hop, now);
            let slot = self.paths.slot(pair, index);
            let remote = self.fresh(self.to_leaf[slot], now).unwrap_or(0);
            let cost = local.max(remote);
            if cost < best.0 {
                best = (cost, code);
                ties = 1;
            } else if cost == best.0 {
                ties += 1;
                if ctx.rng().below(ties) == 0 {
                    best.1 = code;
                }
            }
        }
        best.1
    }

    /// One live entry of the from-leaf table for `pair`, uniformly: (path index, CE).
    fn feedback_for(&self, ctx: &mut SwitchCtx, pair: u32) -> Option<(u32, u8)> {
        let now = ctx.now();
        let count = self.paths.count(pair);
        let live = |i: u32| {
            let m = self.from_leaf[self.paths.slot(pair, i)];
            self.fresh(m, now).map(|ce| ce as u8)
        };
        let n = (0..count).filter(|&i| live(i).is_some()).count() as u32;
        if n == 0 {
            return None;
        }
        let pick = ctx.rng().below(n) as usize;
        (0..count)
            .filter_map(|i| live(i).map(|ce| (i, ce)))
            .nth(pick)
    }

    /// The source ToR's decision for a packet of a flow leaving for another ToR.
    fn at_source(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> u32 {
        let pkt = *ctx.packet(h);
        let now = ctx.now();
        let topo = ctx.topology();
        let at = (
            topo.switches[switch as usize].level,
            topo.switch_node(switch),
        );
        let here = topo.edge_index[switch as usize];
        let there = edge_of_host(topo, pkt.dst);
        let pair = self.paths.pair(here, there);
        let key = pkt.flow as usize * 2 + pkt.is_reply() as usize;
        if key >= self.flowlets.len() {
            self.flowlets.resize(key + 1, Flowlet::default());
        }
        let f = self.flowlets[key];
        let code = if f.live && now.saturating_sub(f.last) <= self.flowlet {
            f.code
        } else {
            let start = ctx.rng().below(self.paths.count(pair));
            let code = self.choose(ctx, pair, at, candidates, start);
            if !pkt.is_reply() {
                let old = f.live.then(|| self.paths.index(pair, f.code) as u16);
                let new = self.paths.index(pair, code) as u16;
                self.log.began(ctx, pkt.flow, old, new);
            }
            code
        };
        self.flowlets[key] = Flowlet {
            last: now,
            code,
            live: true,
        };
        let feedback = if pkt.kind == Kind::Data {
            self.feedback_for(ctx, self.paths.pair(there, here))
        } else {
            None
        };
        let p = ctx.packet_mut(h);
        p.scheme = TAGGED | code as u16;
        if p.kind == Kind::Data {
            p.aux = self.paths.index(pair, code) as u64;
            if let Some((index, ce)) = feedback {
                p.aux |= FEEDBACK | (index as u64) << 16 | (ce as u64) << 24;
            }
        }
        self.paths.port(pair, code, at.0, at.1, candidates)
    }

    /// The destination ToR reads a data packet's path CE and feedback.
    fn at_destination(&mut self, ctx: &SwitchCtx, switch: u32, pkt: &Packet) {
        let topo = ctx.topology();
        let now = ctx.now();
        let here = topo.edge_index[switch as usize];
        let there = edge_of_host(topo, pkt.src);
        let pair = self.paths.pair(there, here);
        let index = (pkt.aux & 0xff) as u32 % self.paths.count(pair);
        let ce = ((pkt.aux >> 8) & 0xff) as u8;
        let slot = self.paths.slot(pair, index);
        let m = Metric {
            ce,
            set: true,
            at: now,
        };
        self.from_leaf[slot] = m;
        if self.global {
            self.to_leaf[slot] = m;
        }
        if pkt.aux & FEEDBACK != 0 {
            let back = self.paths.pair(here, there);
            let index = ((pkt.aux >> 16) & 0xff) as u32 % self.paths.count(back);
            self.to_leaf[self.paths.slot(back, index)] = Metric {
                ce: ((pkt.aux >> 24) & 0xff) as u8,
                set: true,
                at: now,
            };
        }
    }
}

impl SwitchScheme for Conga {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        let Some(&first) = candidates.first() else {
            return Ingress::Drop;
        };
        let routed = match pkt.kind {
            Kind::Data => true,
            Kind::Ack | Kind::Nack => self.replies,
            _ => false,
        };
        if !routed || pkt.route != NO_ROUTE || pkt.dst >= ctx.topology().hosts {
            return Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates));
        }
        let topo = ctx.topology();
        let tagged = pkt.scheme & TAGGED != 0 && !from_host(topo, pkt.ingress);
        if tagged {
            if topo.links[first as usize].to == pkt.dst {
                if pkt.kind == Kind::Data {
                    self.at_destination(ctx, switch, &pkt);
                }
                return Ingress::Forward(first);
            }
            let port = self.paths.port_of_tagged(topo, switch, &pkt, candidates);
            return Ingress::Forward(port);
        }
        if from_host(topo, pkt.ingress) && pkt.src < topo.hosts {
            let pair = self.paths.pair(
                topo.edge_index[switch as usize],
                edge_of_host(topo, pkt.dst),
            );
            if self.paths.has_choice(pair, candidates) {
                return Ingress::Forward(self.at_source(ctx, switch, h, candidates));
            }
        }
        Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates))
    }

    fn egress(&mut self, ctx: &mut SwitchCtx, _switch: u32, port: u32, h: Handle) {
        let now = ctx.now();
        self.decay(port, now);
        let pkt = ctx.packet(h);
        self.dre[port as usize].bytes += pkt.size as f64;
        if pkt.kind == Kind::Data && pkt.scheme & TAGGED != 0 && self.fabric[port as usize] {
            let own = self.congestion(port, now).min(u8::MAX as u32) as u64;
            let p = ctx.packet_mut(h);
            let ce = (p.aux >> 8) & 0xff;
            if own > ce {
                p.aux = (p.aux & !0xff00) | own << 8;
            }
        }
    }

    fn hooks(&self) -> Hooks {
        Hooks { egress: true }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        self.log.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::net::world::World;
    use crate::routing::SwitchSpec;

    fn conga(w: &World) -> Conga {
        let setup = SchemeSetup {
            topology: &w.topo,
            salts: &[0; 64],
            next_hops: crate::net::candidate_hops::NextHops::Shortest,
        };
        Conga::new(&CongaConfig::default(), &setup)
    }

    #[test]
    fn dre_decays_by_alpha_each_period_and_quantises() {
        // One 100 Gb/s link: C · T / alpha = 100e9 · 50e-6 / 0.2 bits = 3,125,000 bytes.
        let w = crate::routing::test_world(&[1], 0);
        let mut c = conga(&w);
        c.scale[0] = 8.0 * 8.0 * 0.2 / (100e9 * 50e-6);
        c.dre[0].bytes = 1_000_000.0;
        // 1 MB: 8e6 / 25e6 · 8 = 2.56 -> 2.
        assert_eq!(c.congestion(0, 0), 2);
        let t = 50 * US;
        c.decay(0, t - 1);
        assert_eq!(c.dre[0].bytes, 1_000_000.0, "no decay within the period");
        c.decay(0, t);
        assert!((c.dre[0].bytes - 800_000.0).abs() < 1e-6);
        c.decay(0, 3 * t + 7);
        assert!(
            (c.dre[0].bytes - 512_000.0).abs() < 1e-6,
            "two more periods"
        );
        // 5 MB: 12.8 -> 12, not capped; capped at 7 with `cap`.
        c.dre[0].bytes = 5_000_000.0;
        assert_eq!(c.congestion(0, 3 * t), 12);
        c.top = 7;
        assert_eq!(c.congestion(0, 3 * t), 7);
    }

    #[test]
    fn picks_the_least_cost_sampled_path() {
        let mut w = crate::routing::test_world(&[1], 0);
        let mut c = conga(&w);
        let topo = w.topo.clone();
        let (a, b) = (topo.host_edge[0], topo.host_edge[topo.hosts as usize - 1]);
        let pair = c
            .paths
            .pair(topo.edge_index[a as usize], topo.edge_index[b as usize]);
        let count = c.paths.count(pair);
        assert_eq!(count, 4);
        let cands = topo.routes.group(a, topo.edge_index[b as usize]).to_vec();
        let at = (topo.switches[a as usize].level, topo.switch_node(a));
        let set = |c: &mut Conga, i: u32, ce: u8| {
            c.to_leaf[c.paths.slot(pair, i)] = Metric {
                ce,
                set: true,
                at: 0,
            };
        };
        for (i, ce) in [(0, 5), (1, 3), (2, 1), (3, 6)] {
            set(&mut c, i, ce);
        }
        let mut rng = Rng::new(1);
        let mut actions = Vec::new();
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        for start in 0..4 {
            let code = c.choose(&mut ctx, pair, at, &cands, start);
            assert_eq!(c.paths.index(pair, code), 2, "remote metric 1 is least");
        }
        // Load path 2's first hop locally: cost max(local, remote) moves the choice to path 1.
        let hop = c
            .paths
            .port(pair, c.paths.code(pair, 2), at.0, at.1, &cands);
        c.dre[hop as usize] = Dre {
            bytes: 1e12,
            period: 0,
        };
        let code = c.choose(&mut ctx, pair, at, &cands, 0);
        assert_eq!(c.paths.index(pair, code), 1);
        // Two samples from 3 see paths 3 and 0 only: 0 (cost 5) beats 3 (cost 6).
        c.samples = 2;
        let code = c.choose(&mut ctx, pair, at, &cands, 3);
        assert_eq!(c.paths.index(pair, code), 0);
        // Aged metrics read 0: every cost is equal and ties spread over the sampled paths.
        c.samples = 4;
        c.dre[hop as usize].bytes = 0.0;
        w.now = c.aging + 1;
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        let mut seen = [0u32; 4];
        for _ in 0..400 {
            let code = c.choose(&mut ctx, pair, at, &cands, 0);
            seen[c.paths.index(pair, code) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "random ties: {seen:?}");
    }

    #[test]
    fn parses_and_checks() {
        assert_eq!(
            SwitchSpec::named("conga"),
            Some(SwitchSpec::new(CongaConfig::default()))
        );
        let spec: SwitchSpec =
            toml::from_str("scheme = \"conga\"\nfeedback = \"global\"\nflowlet = \"10us\"")
                .unwrap();
        let Some(cfg) = spec.config::<CongaConfig>().cloned() else {
            panic!("conga");
        };
        assert_eq!(cfg.feedback, Feedback::Global);
        let bad = CongaConfig {
            alpha: 0.0,
            ..CongaConfig::default()
        };
        assert!(bad
            .validate(&RunContext::new(4150, 64))
            .unwrap_err()
            .to_string()
            .starts_with("alpha:"));
    }
}
