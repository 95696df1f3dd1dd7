//! LetFlow (Vanini et al., "Let it Flow: Resilient Asymmetric Load Balancing with Flowlet
//! Switching", NSDI 2017): flowlet switching with random path choice. A switch remembers, per
//! flow, the port (or path) it chose and when the flow's last packet passed; a packet that
//! arrives more than `timeout` after the previous one starts a new flowlet, which takes a port
//! drawn uniformly at random from the candidates. Within a flowlet the choice is kept.
//!
//! Where the paper and the reference codes differ, and what this model does:
//! - Where it runs (`at`). The paper lets every switch make its own flowlet decision, which is
//!   the default (`"every-switch"`; it is also what the LAPS runs do). The ConWeave repository
//!   decides only at the source ToR, which picks a whole ToR-to-ToR path carried in the packet
//!   and followed by the next switches (`"source-tor"`). In a leaf-spine both choose one of the
//!   spines per flowlet; in deeper trees every-switch draws independently at each tier.
//! - Flowlet timeout (`timeout`): 100 µs by default, the ConWeave repository's value for its
//!   RoCE experiments (the LAPS runs use 10 µs).
//! - Table aging (`aging`): the ConWeave repository forgets a flow's entry after 2 ms without
//!   packets (the default); the LAPS runs never do (`aging` absent in a table means never:
//!   write `aging = 0`). An aged entry behaves as a new flowlet, so aging changes decisions
//!   only when it is shorter than the timeout; it exists for the reference's table size.
//! - Flow key: the flow (connection) and its direction. The ConWeave repository keys on
//!   (destination, ports, priority), the LAPS runs on (source, destination, source port); in
//!   this model a connection has one key either way.
//! - Which packets: data packets only by default (ConWeave repository); `replies = true` also
//!   flowlet-switches ACKs and NACKs, each direction with its own flowlets (LAPS runs). Other
//!   packets are hashed as ECMP does.
//! - The table is exact (one entry per flow and switch): hash collisions of a hardware
//!   flowlet table are not modelled. A flow's entries at its first [`WAYS`] switches with a
//!   choice in one direction sit inline (a shortest path has at most two such switches in a
//!   Clos fabric), the rest in an overflow map; none is ever evicted, so what one switch
//!   remembers never depends on another's entries (a run split over threads holds only its
//!   own switches' entries).
//! - Candidates: the shortest-path next hops, or, in a run whose `lb` entry says
//!   `next_hops = "laps-candidates"` (the LAPS runs), the next links of the LAPS candidate
//!   routes, per hop ([`crate::net::candidate_hops`]).
//! - Flowlets of data packets are counted, and those that move their flow count as the run's
//!   `reroutes`; `events = true` records each as a `flowlet` event with its old and new path
//!   ([`super::flowlet_log`]; every-switch mode: the port's place among the candidates).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::flowlet_log::FlowletLog;
use super::tor_paths::{edge_of_host, follow, from_host, TorPaths};
use super::{ecmp, Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::{Handle, Time};
use crate::net::packet::NO_ROUTE;
use crate::net::Kind;
use crate::net::RunContext;
use crate::units::TimeQ;
use crate::ConfigError;

/// Switches with a choice remembered per flow and direction (every-switch mode).
pub const WAYS: usize = 4;
/// `Packet::scheme` bit saying the packet carries a source-ToR path code in its low byte.
const TAGGED: u16 = 0x8000;

/// Where flowlet decisions are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// The source ToR chooses a whole ToR-to-ToR path (ConWeave repository).
    SourceTor,
    /// Every switch with several candidates chooses its port (paper, LAPS runs).
    EverySwitch,
}

/// `[routing] switch = "letflow"` or `switch = { scheme = "letflow", at = "source-tor",
/// timeout = "100us", aging = "2ms" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LetFlowConfig {
    /// Where the decisions are made.
    pub at: Placement,
    /// Gap since a flow's last packet that starts a new flowlet.
    pub timeout: TimeQ,
    /// A flow's entry is forgotten after this long without packets (0: never).
    pub aging: TimeQ,
    /// Also flowlet-switch ACKs and NACKs (else they are hashed).
    pub replies: bool,
    /// Record every flowlet of a data flow as a load-balancer event (`lb_events.csv`).
    pub events: bool,
}

impl Default for LetFlowConfig {
    fn default() -> Self {
        LetFlowConfig {
            at: Placement::EverySwitch,
            timeout: TimeQ(100 * crate::engine::time::US),
            aging: TimeQ(2 * crate::engine::time::MS),
            replies: false,
            events: false,
        }
    }
}

impl RoutingScheme for LetFlowConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// With `events = true`, every flowlet is recorded.
    fn reports_path_changes(&self) -> bool {
        self.events
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(LetFlow::new(self, setup))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.timeout.0 == 0 {
            return Err(ConfigError::new("timeout", "must be positive"));
        }
        Ok(())
    }
}

/// One remembered choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    /// The switch (`u32::MAX`: empty).
    switch: u32,
    /// The chosen port (every switch) or path code (source ToR).
    choice: u32,
    /// When the flow's last packet passed.
    last: Time,
}

const EMPTY: Entry = Entry {
    switch: u32::MAX,
    choice: 0,
    last: 0,
};

/// Flowlet switches.
pub struct LetFlow {
    at: Placement,
    timeout: Time,
    aging: Time,
    replies: bool,
    salts: Vec<u32>,
    paths: TorPaths,
    /// [`WAYS`] entries per (flow, direction), grown as flows appear.
    table: Vec<[Entry; WAYS]>,
    /// Entries beyond a (flow, direction)'s [`WAYS`], by (flow and direction, switch).
    overflow: BTreeMap<(usize, u32), Entry>,
    log: FlowletLog,
}

impl LetFlow {
    fn new(cfg: &LetFlowConfig, setup: &SchemeSetup) -> Self {
        LetFlow {
            at: cfg.at,
            timeout: cfg.timeout.0,
            aging: if cfg.aging.0 == 0 {
                Time::MAX
            } else {
                cfg.aging.0
            },
            replies: cfg.replies,
            salts: setup.salts.to_vec(),
            paths: TorPaths::new(setup.topology),
            table: Vec::new(),
            overflow: BTreeMap::new(),
            log: FlowletLog::new(cfg.events),
        }
    }

    /// The flow's slot at `switch` ([`WAYS`]: the overflow map), the choice remembered
    /// there if the flowlet goes on, and the flow's previous choice there (if it has an entry
    /// there).
    fn lookup(&mut self, key: usize, switch: u32, now: Time) -> (usize, Option<u32>, Option<u32>) {
        if key >= self.table.len() {
            self.table.resize(key + 1, [EMPTY; WAYS]);
        }
        let ways = &self.table[key];
        let (slot, own) = match ways.iter().position(|e| e.switch == switch) {
            Some(i) => (i, Some(ways[i])),
            None => match ways.iter().position(|e| e.switch == u32::MAX) {
                Some(free) => (free, None),
                None => (WAYS, self.overflow.get(&(key, switch)).copied()),
            },
        };
        let Some(e) = own else {
            return (slot, None, None);
        };
        let gap = now.saturating_sub(e.last);
        let goes_on = gap <= self.timeout && gap <= self.aging;
        (slot, goes_on.then_some(e.choice), Some(e.choice))
    }

    /// Remembers `choice` for the flow at `switch`, now.
    fn remember(&mut self, key: usize, slot: usize, switch: u32, choice: u32, now: Time) {
        let entry = Entry {
            switch,
            choice,
            last: now,
        };
        if slot < WAYS {
            self.table[key][slot] = entry;
        } else {
            self.overflow.insert((key, switch), entry);
        }
    }

    /// The choice for the flow at `switch`: kept within a flowlet while `valid`, else drawn;
    /// with the previous choice when a new flowlet began (`Some(None)`: the flow's first).
    fn decide(
        &mut self,
        key: usize,
        switch: u32,
        now: Time,
        valid: impl Fn(u32) -> bool,
        draw: impl FnOnce() -> u32,
    ) -> (u32, Option<Option<u32>>) {
        let (slot, kept, previous) = self.lookup(key, switch, now);
        let (choice, began) = match kept {
            Some(c) if valid(c) => (c, None),
            _ => (draw(), Some(previous)),
        };
        self.remember(key, slot, switch, choice, now);
        (choice, began)
    }
}

impl SwitchScheme for LetFlow {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        match candidates.len() {
            0 => return Ingress::Drop,
            1 => return Ingress::Forward(candidates[0]),
            _ => {}
        }
        let routed = match pkt.kind {
            Kind::Data => true,
            Kind::Ack | Kind::Nack => self.replies,
            _ => false,
        };
        if !routed || pkt.route != NO_ROUTE {
            return Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates));
        }
        let key = pkt.flow as usize * 2 + pkt.is_reply() as usize;
        let now = ctx.now();
        let level = ctx.topology().switches[switch as usize].level;
        match self.at {
            Placement::EverySwitch => {
                let (port, began) = self.decide(
                    key,
                    switch,
                    now,
                    |p| candidates.contains(&p),
                    || candidates[ctx.rng().below(candidates.len() as u32) as usize],
                );
                if let (Some(previous), false) = (began, pkt.is_reply()) {
                    // A path here is the port's place among the candidates.
                    let place = |p: u32| {
                        candidates
                            .iter()
                            .position(|&c| c == p)
                            .map_or(u16::MAX, |i| i as u16)
                    };
                    self.log
                        .began(ctx, pkt.flow, previous.map(place), place(port));
                }
                Ingress::Forward(port)
            }
            Placement::SourceTor => {
                let topo = ctx.topology();
                if pkt.scheme & TAGGED != 0 && !from_host(topo, pkt.ingress) {
                    return Ingress::Forward(follow(pkt.scheme as u8, level, candidates));
                }
                let at_source = from_host(topo, pkt.ingress) && pkt.src < topo.hosts;
                if !at_source || pkt.dst >= topo.hosts {
                    return Ingress::Forward(ecmp::pick(
                        &pkt,
                        self.salts[switch as usize],
                        candidates,
                    ));
                }
                let src_edge = topo.edge_index[switch as usize];
                let pair = self.paths.pair(src_edge, edge_of_host(topo, pkt.dst));
                let (slot, kept, previous) = self.lookup(key, switch, now);
                let code = match kept {
                    Some(code) => code as u8,
                    None => {
                        let index = ctx.rng().below(self.paths.count(pair));
                        let code = self.paths.code(pair, index);
                        if !pkt.is_reply() {
                            let old = previous.map(|c| self.paths.index(pair, c as u8) as u16);
                            self.log.began(ctx, pkt.flow, old, index as u16);
                        }
                        code
                    }
                };
                self.remember(key, slot, switch, code as u32, now);
                let pkt = ctx.packet_mut(h);
                pkt.scheme = TAGGED | code as u16;
                Ingress::Forward(follow(code, level, candidates))
            }
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        self.log.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::engine::Rng;
    use crate::net::Packet;
    use crate::routing::SwitchSpec;

    fn scheme(at: Placement) -> LetFlow {
        let w = crate::routing::test_world(&[1; 1], 0);
        let setup = SchemeSetup {
            topology: &w.topo,
            salts: &[0; 64],
            next_hops: crate::net::candidate_hops::NextHops::Shortest,
        };
        LetFlow::new(
            &LetFlowConfig {
                at,
                ..LetFlowConfig::default()
            },
            &setup,
        )
    }

    #[test]
    fn keeps_the_port_within_the_timeout_and_repicks_after() {
        let mut lf = scheme(Placement::EverySwitch);
        let mut rng = Rng::new(4);
        let candidates = [0u32, 1, 2, 3, 4, 5, 6, 7];
        let mut draw_count = 0;
        let mut pick = |lf: &mut LetFlow, now: Time, draws: &mut u32| {
            lf.decide(
                6,
                3,
                now,
                |p| candidates.contains(&p),
                || {
                    *draws += 1;
                    candidates[rng.below(8) as usize]
                },
            )
            .0
        };
        let first = pick(&mut lf, 0, &mut draw_count);
        // Packets 100 us apart (exactly the timeout) stay on the port, for as long as they come.
        let mut t = 0;
        for _ in 0..50 {
            t += 100 * US;
            assert_eq!(pick(&mut lf, t, &mut draw_count), first);
        }
        assert_eq!(draw_count, 1, "no new draw within the timeout");
        // A gap of more than the timeout draws again, every time: over many flowlets the port
        // changes (a broken rule that never re-draws would keep `first`).
        let mut changed = 0;
        for _ in 0..40 {
            t += 100 * US + 1;
            let before = draw_count;
            let port = pick(&mut lf, t, &mut draw_count);
            assert_eq!(draw_count, before + 1, "a gap over the timeout re-picks");
            changed += (port != first) as u32;
        }
        assert!(changed > 20, "re-picks should move the flow: {changed}");
    }

    #[test]
    fn flows_and_switches_have_their_own_flowlets() {
        let mut lf = scheme(Placement::EverySwitch);
        assert_eq!(lf.decide(0, 1, 0, |_| true, || 5).0, 5);
        assert_eq!(lf.decide(0, 2, 0, |_| true, || 6).0, 6, "another switch");
        assert_eq!(lf.decide(1, 1, 0, |_| true, || 7).0, 7, "another flow");
        assert_eq!(lf.decide(0, 1, 10, |_| true, || 0).0, 5);
        assert_eq!(lf.decide(0, 2, 10, |_| true, || 0).0, 6);
        // A remembered port that is no longer a candidate is replaced at once.
        assert_eq!(lf.decide(0, 1, 20, |p| p != 5, || 3).0, 3);
    }

    #[test]
    fn a_flow_remembers_every_switch_it_crossed() {
        let mut lf = scheme(Placement::EverySwitch);
        let switches = 3 * WAYS as u32;
        for s in 0..switches {
            assert_eq!(lf.decide(0, s, 0, |_| true, || s + 100).0, s + 100);
        }
        // Each switch keeps its own choice however many others the flow crossed since: no
        // switch's entry pushes out another's.
        for s in (0..switches).rev() {
            let (choice, began) = lf.decide(0, s, 10, |_| true, || 0);
            assert_eq!((choice, began), (s + 100, None), "switch {s}");
        }
    }

    #[test]
    fn aging_forgets_an_entry() {
        let mut lf = scheme(Placement::EverySwitch);
        lf.timeout = 10 * US;
        lf.aging = 5 * US;
        assert_eq!(lf.decide(0, 1, 0, |_| true, || 5).0, 5);
        assert_eq!(lf.decide(0, 1, 5 * US, |_| true, || 6).0, 5);
        assert_eq!(lf.decide(0, 1, 10 * US + 1, |_| true, || 6).0, 6, "aged");
    }

    #[test]
    fn source_tor_tags_the_path_and_the_next_switch_follows_it() {
        let mut w = crate::routing::test_world(&[1; 1], 0);
        let mut lf = scheme(Placement::SourceTor);
        let topo = w.topo.clone();
        // Host 0 sends to a host on another ToR; the packet arrives on its NIC.
        let dst = topo.hosts - 1;
        let tor = topo.host_edge[0];
        let cands = topo.candidates_to_host(tor, dst).to_vec();
        assert!(cands.len() > 1);
        let mut pkt = Packet::blank(Kind::Data, 4150);
        pkt.dst = dst;
        pkt.ingress = topo.host_uplink[0];
        let mut rng = Rng::new(2);
        let mut actions = Vec::new();
        let mut seen = Vec::new();
        for flow in 0..32 {
            pkt.flow = flow;
            let h = w.pkts.alloc(pkt);
            let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            let Ingress::Forward(port) = lf.ingress(&mut ctx, tor, h, &cands) else {
                panic!("forwarded");
            };
            let tag = ctx.packet(h).scheme;
            assert_ne!(tag & TAGGED, 0);
            assert_eq!(port, follow(tag as u8, 1, &cands));
            seen.push(port);
            // Same flow soon after: same path.
            let h2 = w.pkts.alloc(pkt);
            let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            assert_eq!(
                lf.ingress(&mut ctx, tor, h2, &cands),
                Ingress::Forward(port)
            );
        }
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() > 1, "flows spread over the uplinks");
    }

    #[test]
    fn parses_by_name_and_as_a_table() {
        assert_eq!(
            SwitchSpec::named("letflow"),
            Some(SwitchSpec::new(LetFlowConfig::default()))
        );
        let spec: SwitchSpec = toml::from_str(
            "scheme = \"letflow\"\nat = \"source-tor\"\ntimeout = \"10us\"\naging = 0",
        )
        .unwrap();
        let Some(cfg) = spec.config::<LetFlowConfig>().cloned() else {
            panic!("letflow");
        };
        assert_eq!(cfg.at, Placement::SourceTor);
        assert_eq!(cfg.timeout, TimeQ(10 * US));
        assert!(toml::from_str::<SwitchSpec>("scheme = \"letflow\"\nat = \"tor\"").is_err());
        let bad = LetFlowConfig {
            timeout: TimeQ(0),
            ..LetFlowConfig::default()
        };
        assert!(bad
            .validate(&RunContext::new(4150, 64))
            .unwrap_err()
            .to_string()
            .starts_with("timeout:"));
    }
}
