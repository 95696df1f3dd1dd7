//! WCMP (Zhou et al., "WCMP: Weighted Cost Multipathing for Improved Fairness in Data
//! Centers", EuroSys 2014): ECMP whose next hops carry static weights, realised in a switch by
//! repeating each next hop in the group's hash table as many times as its weight. Here a port's
//! weight is proportional to its link's rate, and a packet takes the port its hash falls on in
//! that table: packets of one (flow key, EV) stick to one port at each switch, and over many
//! keys each port gets a share proportional to its rate.
//!
//! How this model maps the paper:
//! - Hash: the pinned ECMP hash of (flow key, EV, switch salt) ([`crate::net::hash`]), taken
//!   modulo the group's total weight and looked up in a table where each port's entries are
//!   contiguous, in candidate order. Weights are divided by their greatest common divisor within
//!   the group first (the smallest exact table), so a group of equal rates is a table of one
//!   entry per port and WCMP then picks exactly the port ECMP picks.
//! - Weights are integers, as table entries are: a port's rate divided by the greatest common
//!   divisor of all switch-port rates (400/100/200 G give 4/1/2). Where that would exceed
//!   `max_weight` (rates without a useful common divisor), rates are scaled so the fastest port
//!   gets `max_weight` and rounded, at least 1. The paper's weight reduction, which trades
//!   table size against a bounded oversubscription, is not modelled beyond this cap.
//! - The paper derives weights from the capacity of the whole path to the destination (a slow
//!   link two tiers up lowers the weight at the ToR too); we weight each port by its own link
//!   only, so asymmetry beyond the next hop is seen only by the switches next to it.
//! - Weights are static, as WCMP defines them: computed once at start from the topology's link
//!   rates, after `[[degrade]]`. A fault that changes a link's rate mid-run leaves them as they
//!   were unless `follow_rate_changes = true`, which re-reads each candidate port's current rate
//!   at every decision (a control plane that rewrites the tables at once); weights then use the
//!   finest unit the cap allows (the fastest port at start weighs `max_weight`), so that a
//!   slowed link still gets a weight in proportion, and a link sped up past it is capped.
use serde::{Deserialize, Serialize};

use super::{Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::Handle;
use crate::net::hash::ecmp_hash;
use crate::net::RunContext;
use crate::ConfigError;

/// Largest `max_weight` accepted (entries per port in a group's table).
pub const MAX_WEIGHT_LIMIT: u32 = 4096;

/// `[routing] switch = "wcmp"` or `switch = { scheme = "wcmp", max_weight = 64 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WcmpConfig {
    /// Largest integer weight a port gets (the fastest port's, when rates must be rounded).
    pub max_weight: u32,
    /// Re-read link rates at every decision instead of keeping the weights computed at start.
    pub follow_rate_changes: bool,
}

impl Default for WcmpConfig {
    fn default() -> Self {
        WcmpConfig {
            max_weight: 128,
            follow_rate_changes: false,
        }
    }
}

impl RoutingScheme for WcmpConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Wcmp::new(self, setup))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if !(1..=MAX_WEIGHT_LIMIT).contains(&self.max_weight) {
            return Err(ConfigError::new(
                "max_weight",
                format!("must be between 1 and {MAX_WEIGHT_LIMIT}"),
            ));
        }
        Ok(())
    }
}

/// How rates become integer weights: the rate one weight unit stands for, and the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Quantum {
    unit: u64,
    max: u32,
}

impl Quantum {
    /// The quantum for a network whose switch ports run at `rates`; `finest` (for rates that
    /// change later) always lets the fastest port weigh `max_weight`.
    fn new(rates: impl Iterator<Item = u64>, max_weight: u32, finest: bool) -> Self {
        let max = max_weight.max(1);
        let (g, top) = rates
            .filter(|&r| r > 0)
            .fold((0, 0), |(g, top), r| (gcd(g, r), top.max(r)));
        let unit = if g == 0 {
            1
        } else if !finest && top / g <= max as u64 {
            g
        } else {
            top.div_ceil(max as u64)
        };
        Quantum { unit, max }
    }

    /// The weight of a port at `rate_bps` (rounded to the nearest unit, between 1 and the cap).
    #[inline]
    fn weight(&self, rate_bps: u64) -> u32 {
        let w = rate_bps.saturating_add(self.unit / 2) / self.unit;
        w.clamp(1, self.max as u64) as u32
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Weighted-hash switches.
pub struct Wcmp {
    /// Static weight of every port (by port id).
    weights: Vec<u32>,
    salts: Vec<u32>,
    quantum: Quantum,
    follow: bool,
}

impl Wcmp {
    /// Weights from the topology's link rates as they are at start.
    fn new(cfg: &WcmpConfig, setup: &SchemeSetup) -> Self {
        let topo = setup.topology;
        // Only switch ports are ever candidates; host NICs may run at other rates.
        let switch_rates = topo
            .links
            .iter()
            .filter(|l| l.from >= topo.hosts)
            .map(|l| l.rate_bps);
        let quantum = Quantum::new(switch_rates, cfg.max_weight, cfg.follow_rate_changes);
        Wcmp {
            weights: topo
                .links
                .iter()
                .map(|l| quantum.weight(l.rate_bps))
                .collect(),
            salts: setup.salts.to_vec(),
            quantum,
            follow: cfg.follow_rate_changes,
        }
    }

    #[inline]
    fn weight(&self, ctx: &SwitchCtx, port: u32) -> u32 {
        if self.follow {
            self.quantum.weight(ctx.port_class(port).rate_bps)
        } else {
            self.weights[port as usize]
        }
    }

    /// Index (into `candidates`, at least two) of the table entry `hash` falls on.
    fn select(&self, ctx: &SwitchCtx, hash: u32, candidates: &[u32]) -> usize {
        let mut g = 0u32;
        let mut sum = 0u64;
        for &p in candidates {
            let w = self.weight(ctx, p);
            g = gcd(g as u64, w as u64) as u32;
            sum += w as u64;
        }
        let mut x = hash as u64 % (sum / g as u64);
        for (i, &p) in candidates.iter().enumerate() {
            let entries = (self.weight(ctx, p) / g) as u64;
            if x < entries {
                return i;
            }
            x -= entries;
        }
        candidates.len() - 1
    }
}

impl SwitchScheme for Wcmp {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        match candidates.len() {
            0 => Ingress::Drop,
            1 => Ingress::Forward(candidates[0]),
            _ => {
                let pkt = ctx.packet(h);
                let hash = ecmp_hash(pkt.flow_key(), pkt.ev as u32, self.salts[switch as usize]);
                Ingress::Forward(candidates[self.select(ctx, hash, candidates)])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::net::packet::Kind;
    use crate::net::world::World;
    use crate::net::Packet;
    use crate::routing::{ecmp, SwitchSpec};

    const G: u64 = 1_000_000_000;

    fn world(rates: &[u64]) -> World {
        crate::routing::test_world(rates, 7)
    }

    fn wcmp(rates: &[u64], max_weight: u32, follow: bool) -> Wcmp {
        let quantum = Quantum::new(rates.iter().copied(), max_weight, follow);
        Wcmp {
            weights: rates.iter().map(|&r| quantum.weight(r)).collect(),
            salts: vec![0xdead_beef],
            quantum,
            follow,
        }
    }

    /// Ports chosen at switch 0 for every (flow, EV) key of `flows` x `evs` data packets.
    fn choices(wc: &mut Wcmp, w: &mut World, cands: &[u32], flows: u32, evs: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut rng = Rng::new(0);
        let mut actions = Vec::new();
        for f in 0..flows {
            for ev in 0..evs {
                let mut p = Packet::blank(Kind::Data, 4150);
                (p.src, p.dst, p.ev) = (f, 1000 + f, ev as u16);
                let h = w.pkts.alloc(p);
                let mut ctx = SwitchCtx::new(w, &mut rng, 64, &mut actions);
                match wc.ingress(&mut ctx, 0, h, cands) {
                    Ingress::Forward(port) => out.push(port),
                    other => panic!("{other:?}"),
                }
                w.pkts.free(h);
            }
        }
        out
    }

    fn shares(picks: &[u32], ports: usize) -> Vec<f64> {
        let mut counts = vec![0u32; ports];
        for &p in picks {
            counts[p as usize] += 1;
        }
        counts
            .iter()
            .map(|&c| c as f64 / picks.len() as f64)
            .collect()
    }

    #[test]
    fn wcmp_splits_in_proportion() {
        let rates = [400 * G, 100 * G, 200 * G];
        let mut w = world(&rates);
        let mut wc = wcmp(&rates, 128, false);
        assert_eq!(wc.weights, vec![4, 1, 2]);
        let picks = choices(&mut wc, &mut w, &[0, 1, 2], 128, 1024);
        let got = shares(&picks, 3);
        for (s, want) in got.iter().zip([4.0 / 7.0, 1.0 / 7.0, 2.0 / 7.0]) {
            assert!((s / want - 1.0).abs() < 0.03, "{got:?}");
        }
        // Deterministic per key: the same keys again give the same ports, one by one.
        assert_eq!(choices(&mut wc, &mut w, &[0, 1, 2], 128, 1024), picks);
    }

    #[test]
    fn equal_rates_pick_exactly_what_ecmp_picks() {
        // Equal weights of 2 (a 200 G port elsewhere sets the unit) reduce to one entry each.
        let rates = [400 * G, 400 * G, 400 * G, 400 * G, 200 * G];
        let mut w = world(&rates);
        let mut wc = wcmp(&rates, 128, false);
        assert_eq!(wc.weights, vec![2, 2, 2, 2, 1]);
        let cands = [0, 1, 2, 3];
        let picks = choices(&mut wc, &mut w, &cands, 16, 256);
        let mut i = 0;
        for f in 0..16 {
            for ev in 0..256u32 {
                let mut p = Packet::blank(Kind::Data, 4150);
                (p.src, p.dst, p.ev) = (f, 1000 + f, ev as u16);
                assert_eq!(picks[i], ecmp::pick(&p, 0xdead_beef, &cands));
                i += 1;
            }
        }
        // With the slow port in the group, it is no longer ECMP: the slow port gets 1/9.
        let picks = choices(&mut wc, &mut w, &[0, 1, 2, 3, 4], 16, 1024);
        let slow = shares(&picks, 5)[4];
        assert!((slow - 1.0 / 9.0).abs() < 0.01, "{slow}");
    }

    #[test]
    fn weights_are_static_unless_asked_to_follow() {
        let rates = [400 * G, 400 * G];
        let mut w = world(&rates);
        // A fault slows port 1 to 100 G after start.
        let mut slowed = *w.port_class(1);
        slowed.rate_bps = 100 * G;
        w.set_port_class(1, slowed);
        let mut fixed = wcmp(&rates, 128, false);
        let share = shares(&choices(&mut fixed, &mut w, &[0, 1], 32, 512), 2)[1];
        assert!((share - 0.5).abs() < 0.02, "static weights: {share}");
        let mut follow = wcmp(&rates, 128, true);
        let share = shares(&choices(&mut follow, &mut w, &[0, 1], 32, 512), 2)[1];
        assert!((share - 0.2).abs() < 0.02, "following: {share}");
    }

    #[test]
    fn rates_without_a_common_divisor_are_rounded_under_the_cap() {
        let q = Quantum::new([400 * G, 133 * G, 1].into_iter(), 128, false);
        assert_eq!(q.weight(400 * G), 128);
        assert_eq!(q.weight(133 * G), 43); // 133 / 400 * 128 = 42.6
        assert_eq!(q.weight(1), 1, "never zero");
        let q = Quantum::new([400 * G, 100 * G, 200 * G].into_iter(), 128, false);
        assert_eq!((q.unit, q.weight(300 * G)), (100 * G, 3));
        assert_eq!(q.weight(800 * G), 8);
        // For rates that may change, the fastest port weighs max_weight.
        let q = Quantum::new([400 * G, 100 * G, 200 * G].into_iter(), 128, true);
        assert_eq!(
            (q.weight(400 * G), q.weight(100 * G), q.weight(150 * G)),
            (128, 32, 48)
        );
        assert_eq!(q.weight(800 * G), 128, "capped");
        // max_weight = 1: every port weighs the same, i.e. ECMP.
        let q = Quantum::new([400 * G, 100 * G].into_iter(), 1, false);
        assert_eq!((q.weight(400 * G), q.weight(100 * G)), (1, 1));
    }

    #[test]
    fn build_reads_degraded_rates_from_the_topology() {
        let mut topo = crate::net::FatTreeSpec::uniform(2, 8, 4, 0, 1, 400 * G, 1_000_000, 0)
            .unwrap()
            .build()
            .unwrap();
        let slow = topo
            .links
            .iter()
            .position(|l| l.from >= topo.hosts)
            .unwrap();
        topo.links[slow].rate_bps = 100 * G;
        // A host NIC at an odd rate must not shrink the unit.
        topo.links[0].rate_bps = 7;
        let salts = vec![1; topo.switches.len()];
        let setup = SchemeSetup {
            topology: &topo,
            salts: &salts,
            next_hops: crate::net::candidate_hops::NextHops::Shortest,
        };
        let wc = Wcmp::new(&WcmpConfig::default(), &setup);
        assert_eq!(wc.quantum.unit, 100 * G);
        for i in 0..topo.links.len() {
            // The odd host NIC and the degraded port weigh 1, every other link 4.
            let want = if i == 0 || i == slow { 1 } else { 4 };
            assert_eq!(wc.weights[i], want, "link {i}");
        }
    }

    #[test]
    fn single_and_empty_candidate_sets() {
        let rates = [400 * G, 100 * G];
        let mut w = world(&rates);
        let mut wc = wcmp(&rates, 128, false);
        let h = w.pkts.alloc(Packet::blank(Kind::Data, 4150));
        let mut rng = Rng::new(0);
        let mut actions = Vec::new();
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        assert_eq!(wc.ingress(&mut ctx, 0, h, &[]), Ingress::Drop);
        assert_eq!(wc.ingress(&mut ctx, 0, h, &[1]), Ingress::Forward(1));
    }

    #[test]
    fn limits_are_checked_and_named() {
        assert_eq!(
            WcmpConfig::default().validate(&RunContext::new(4150, 64)),
            Ok(())
        );
        let bad = |max_weight| {
            WcmpConfig {
                max_weight,
                ..WcmpConfig::default()
            }
            .validate(&RunContext::new(4150, 64))
        };
        assert!(bad(0).unwrap_err().to_string().starts_with("max_weight:"));
        assert!(bad(MAX_WEIGHT_LIMIT + 1)
            .unwrap_err()
            .to_string()
            .starts_with("max_weight:"));
        assert_eq!(bad(1), Ok(()));
        assert_eq!(bad(MAX_WEIGHT_LIMIT), Ok(()));
    }

    #[test]
    fn parses_by_name_and_as_a_table() {
        assert_eq!(
            SwitchSpec::named("wcmp"),
            Some(SwitchSpec::new(WcmpConfig::default()))
        );
        let spec: SwitchSpec =
            toml::from_str("scheme = \"wcmp\"\nfollow_rate_changes = true").unwrap();
        assert_eq!(
            spec,
            SwitchSpec::new(WcmpConfig {
                follow_rate_changes: true,
                ..WcmpConfig::default()
            })
        );
        assert!(toml::from_str::<SwitchSpec>("scheme = \"wcmp\"\nweights = 4").is_err());
    }
}
