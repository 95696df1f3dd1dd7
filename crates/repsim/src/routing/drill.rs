//! DRILL (Ghorbani et al., "DRILL: Micro Load Balancing for Low-latency Data Center Networks",
//! SIGCOMM 2017, §3, the DRILL(d, m) rule): per packet, at every switch, compare the queues of
//! `d` candidate ports drawn at random with the `m` ports that were least loaded at the previous
//! decision, send the packet to the least loaded of them, and remember the `m` least loaded of
//! those compared for the next decision. The paper recommends DRILL(2, 1), the default here.
//!
//! How this model maps the paper:
//! - Load is [`SwitchCtx::queued_bytes`] (both lanes, including a packet being serialized), read
//!   afresh at every decision: the memory holds ports, not their loads.
//! - The `d` samples are distinct candidates (the balls-into-bins analyses sample with
//!   replacement; distinct samples never compare a port with itself); with `d` at least the
//!   number of candidates every candidate is compared.
//! - A switch in the paper has several forwarding engines, each with its own memory over the
//!   same queues; we model one engine per switch.
//! - Memory is kept per switch and per candidate group, because the set a packet may choose
//!   from depends on its destination (a ToR's uplinks for remote hosts, one downlink for its
//!   own). A group is keyed by its first port: port ids are global and each belongs to one
//!   switch, so the key is per switch without a switch index, it needs no map lookup, and in
//!   Clos fabrics every group of a switch starts with a different port (the uplink group is
//!   shared by all remote destinations, as the paper's per-engine memory is). Each remembered
//!   port is stored with its index in the group and is used only while the group still has it
//!   at that index, so a group that shares a first port with another, or that reconvergence
//!   pruned, can never make DRILL pick a port outside the current candidates.
//! - Ties go to the random samples in the order drawn (a random tie-break); a remembered port
//!   wins only when it is strictly less loaded than every sample. DRILL's answer to topology
//!   asymmetry (splitting the fabric into symmetric components, §4) is not modelled: candidates
//!   are the forwarding table's shortest-path group.
//!
//! A single candidate (explicit routes, the last hop) is forwarded without sampling; the
//! memory is left as it was.
use serde::{Deserialize, Serialize};

use super::{Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::Handle;
use crate::net::RunContext;
use crate::ConfigError;

/// Largest `d` accepted: beyond it, sampling costs more than comparing a switch's whole group.
pub const MAX_D: u32 = 16;
/// Largest `m` accepted (the paper finds one remembered port enough).
pub const MAX_M: u32 = 4;
/// Most ports compared in one decision.
const MAX_COMPARED: usize = (MAX_D + MAX_M) as usize;
/// An empty memory slot.
const EMPTY: u32 = u32::MAX;

/// `[routing] switch = "drill"` or `switch = { scheme = "drill", d = 2, m = 1 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrillConfig {
    /// Candidate ports sampled at random per packet (the paper's d).
    pub d: u32,
    /// Least-loaded ports remembered from the previous decision (the paper's m).
    pub m: u32,
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig { d: 2, m: 1 }
    }
}

impl RoutingScheme for DrillConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Drill::new(self, setup.topology.links.len()))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.d == 0 {
            // Without samples the memory never learns a port it has not already chosen.
            return Err(ConfigError::new("d", "must be at least 1"));
        }
        if self.d > MAX_D {
            return Err(ConfigError::new("d", format!("must be at most {MAX_D}")));
        }
        if self.m > MAX_M {
            return Err(ConfigError::new("m", format!("must be at most {MAX_M}")));
        }
        Ok(())
    }
}

/// A remembered port: its index in the candidate group and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    index: u32,
    port: u32,
}

const EMPTY_SLOT: Slot = Slot {
    index: EMPTY,
    port: EMPTY,
};

/// DRILL(d, m) switches.
pub struct Drill {
    d: u32,
    m: usize,
    /// `m` slots per group key (the group's first port), least loaded first.
    memory: Vec<Slot>,
    /// The last decision's compared ports (index into the candidates, queued bytes), in
    /// comparison order; kept here so a decision allocates nothing.
    compared: [(u32, u64); MAX_COMPARED],
    /// How many of `compared` are in use.
    count: usize,
}

impl Drill {
    /// DRILL over a network of `ports` ports (clamps the config to its limits).
    fn new(cfg: &DrillConfig, ports: usize) -> Self {
        let d = cfg.d.clamp(1, MAX_D);
        let m = cfg.m.min(MAX_M) as usize;
        Drill {
            d,
            m,
            memory: vec![EMPTY_SLOT; ports * m],
            compared: [(0, 0); MAX_COMPARED],
            count: 0,
        }
    }

    /// Whether `compared` already holds candidate index `i`.
    fn has(&self, i: u32) -> bool {
        self.compared[..self.count].iter().any(|&(j, _)| j == i)
    }

    fn push(&mut self, ctx: &SwitchCtx, candidates: &[u32], i: u32) {
        self.compared[self.count] = (i, ctx.queued_bytes(candidates[i as usize]));
        self.count += 1;
    }

    /// Index (into `candidates`, at least two) of the port DRILL sends the packet to; updates
    /// the group's memory.
    fn select(&mut self, ctx: &mut SwitchCtx, candidates: &[u32]) -> usize {
        let n = candidates.len() as u32;
        self.count = 0;
        if self.d >= n {
            // Every candidate is compared; a random start keeps ties random.
            let start = ctx.rng().below(n);
            for k in 0..n {
                self.push(ctx, candidates, (start + k) % n);
            }
        } else {
            while (self.count as u32) < self.d {
                let i = ctx.rng().below(n);
                if !self.has(i) {
                    self.push(ctx, candidates, i);
                }
            }
        }
        let key = candidates[0] as usize * self.m;
        for k in 0..self.m {
            let slot = self.memory[key + k];
            let still_there = candidates.get(slot.index as usize) == Some(&slot.port);
            if still_there && !self.has(slot.index) {
                self.push(ctx, candidates, slot.index);
            }
        }
        // Remember the m least loaded, least first (a selection sort over at most d + m
        // entries; strict comparisons keep the earlier-compared entry on ties).
        let compared = &mut self.compared[..self.count];
        for k in 0..compared.len().min(self.m.max(1)) {
            let mut best = k;
            for j in k + 1..compared.len() {
                if compared[j].1 < compared[best].1 {
                    best = j;
                }
            }
            // Rotating rather than swapping keeps the rest in comparison order for the ties.
            compared[k..=best].rotate_right(1);
        }
        for k in 0..self.m {
            self.memory[key + k] = match compared.get(k) {
                Some(&(i, _)) => Slot {
                    index: i,
                    port: candidates[i as usize],
                },
                None => EMPTY_SLOT,
            };
        }
        compared[0].0 as usize
    }
}

impl SwitchScheme for Drill {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        _switch: u32,
        _h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        match candidates.len() {
            0 => Ingress::Drop,
            1 => Ingress::Forward(candidates[0]),
            _ => Ingress::Forward(candidates[self.select(ctx, candidates)]),
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
    use crate::routing::SwitchSpec;

    const PORTS: usize = 8;

    fn world() -> World {
        crate::routing::test_world(&[400_000_000_000; PORTS], 2)
    }

    /// Puts `n` full-size data packets in `port`'s queue.
    fn load(w: &mut World, port: usize, n: usize) {
        for _ in 0..n {
            let h = w.pkts.alloc(Packet::blank(Kind::Data, 4150));
            w.admit(port as u32, h);
        }
    }

    fn drill(d: u32, m: u32) -> Drill {
        Drill::new(&DrillConfig { d, m }, PORTS)
    }

    /// Ports compared in the last decision (least loaded first).
    fn compared_ports(dr: &Drill, cands: &[u32]) -> Vec<u32> {
        dr.compared[..dr.count]
            .iter()
            .map(|&(i, _)| cands[i as usize])
            .collect()
    }

    const CANDS: [u32; PORTS] = [0, 1, 2, 3, 4, 5, 6, 7];

    #[test]
    fn drill_keeps_its_memory() {
        let mut w = world();
        for p in 0..PORTS {
            load(&mut w, p, if p == 5 { 0 } else { 3 });
        }
        let mut rng = Rng::new(11);
        let mut actions = Vec::new();
        let mut dr = drill(2, 1);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        // Until a sample finds the idle port 5, DRILL picks among the loaded ones.
        let mut found = false;
        for _ in 0..100 {
            if CANDS[dr.select(&mut ctx, &CANDS)] == 5 {
                found = true;
                break;
            }
        }
        assert!(found, "two samples of eight never hit port 5");
        assert_eq!(dr.memory[0], Slot { index: 5, port: 5 });
        // From now on port 5 is compared every time and, still least loaded, always chosen,
        // although two random samples of eight miss it more often than not.
        let mut missed = 0;
        for _ in 0..200 {
            let choice = CANDS[dr.select(&mut ctx, &CANDS)];
            let compared = compared_ports(&dr, &CANDS);
            assert!(compared.contains(&5), "memory not compared: {compared:?}");
            assert!(compared.len() <= 3, "d + m = 3 at most: {compared:?}");
            // The memory adds a third port only when neither sample was port 5.
            missed += (dr.count == 3) as u32;
            assert_eq!(choice, 5);
        }
        assert!(
            missed > 50,
            "the samples should often miss port 5 ({missed})"
        );
        // Port 5 fills up: it is still compared (remembered) but loses, and the memory moves
        // on to the new winner.
        load(&mut w, 5, 10);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        let choice = CANDS[dr.select(&mut ctx, &CANDS)];
        assert!(compared_ports(&dr, &CANDS).contains(&5));
        assert_ne!(choice, 5);
        assert_eq!(dr.memory[0].port, choice);
    }

    #[test]
    fn without_memory_the_samples_decide() {
        // m = 0: once port 5 is found it is not remembered, so missed samples pick loaded ports.
        let mut w = world();
        for p in 0..PORTS {
            load(&mut w, p, if p == 5 { 0 } else { 3 });
        }
        let mut rng = Rng::new(11);
        let mut actions = Vec::new();
        let mut dr = drill(2, 0);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        let mut other = 0;
        for _ in 0..200 {
            let choice = CANDS[dr.select(&mut ctx, &CANDS)];
            assert!(dr.count == 2, "exactly d ports compared");
            let compared = compared_ports(&dr, &CANDS);
            assert_ne!(compared[0], compared[1], "samples are distinct");
            assert_eq!(choice == 5, compared.contains(&5));
            other += (choice != 5) as u32;
        }
        assert!(other > 50, "{other}");
        assert!(dr.memory.is_empty());
    }

    #[test]
    fn memory_holds_the_m_least_loaded_in_order() {
        let mut w = world();
        // Port p holds p + 1 packets, except port 6, which is idle.
        for p in 0..PORTS {
            load(&mut w, p, if p == 6 { 0 } else { p + 1 });
        }
        let mut rng = Rng::new(3);
        let mut actions = Vec::new();
        let mut dr = drill(8, 3);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        // d >= candidates: all compared, the least wins.
        assert_eq!(CANDS[dr.select(&mut ctx, &CANDS)], 6);
        assert_eq!(dr.count, PORTS);
        let remembered: Vec<u32> = dr.memory[..3].iter().map(|s| s.port).collect();
        assert_eq!(remembered, vec![6, 0, 1]);
    }

    #[test]
    fn ties_go_to_the_samples_at_random() {
        // Idle ports everywhere: a remembered port must not capture every packet.
        let mut w = world();
        let mut rng = Rng::new(5);
        let mut actions = Vec::new();
        let mut dr = drill(2, 1);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        let mut counts = [0u32; PORTS];
        for _ in 0..8000 {
            counts[CANDS[dr.select(&mut ctx, &CANDS)] as usize] += 1;
        }
        for c in counts {
            assert!((800..1200).contains(&c), "uneven under ties: {counts:?}");
        }
    }

    #[test]
    fn memory_of_another_group_is_never_used() {
        let mut w = world();
        load(&mut w, 0, 5);
        load(&mut w, 1, 5);
        let mut rng = Rng::new(9);
        let mut actions = Vec::new();
        let mut dr = drill(2, 1);
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        // Group [0, 1, 2]: port 2 is idle and all are compared -> remembered at index 2.
        dr.d = 3;
        assert_eq!(dr.select(&mut ctx, &[0, 1, 2]), 2);
        assert_eq!(dr.memory[0], Slot { index: 2, port: 2 });
        // A group with the same first port but without port 2 must not be sent to port 2.
        dr.d = 1;
        for _ in 0..50 {
            let cands = [0, 1, 7];
            dr.select(&mut ctx, &cands);
            assert!(!compared_ports(&dr, &cands).contains(&2));
        }
    }

    #[test]
    fn single_and_empty_candidate_sets() {
        let mut w = world();
        let mut rng = Rng::new(1);
        let mut actions = Vec::new();
        let mut dr = drill(2, 1);
        let h = w.pkts.alloc(Packet::blank(Kind::Data, 4150));
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        assert_eq!(dr.ingress(&mut ctx, 0, h, &[]), Ingress::Drop);
        assert_eq!(dr.ingress(&mut ctx, 0, h, &[4]), Ingress::Forward(4));
        assert!(dr.memory.iter().all(|s| *s == EMPTY_SLOT));
    }

    #[test]
    fn limits_are_checked_and_named() {
        assert_eq!(
            DrillConfig::default().validate(&RunContext::new(4150, 64)),
            Ok(())
        );
        let bad = |d, m| {
            DrillConfig { d, m }
                .validate(&RunContext::new(4150, 64))
                .unwrap_err()
        };
        assert!(bad(0, 1).to_string().starts_with("d:"));
        assert!(bad(MAX_D + 1, 1).to_string().starts_with("d:"));
        assert!(bad(2, MAX_M + 1).to_string().starts_with("m:"));
        assert_eq!(
            DrillConfig { d: MAX_D, m: MAX_M }.validate(&RunContext::new(4150, 64)),
            Ok(())
        );
        assert_eq!(
            DrillConfig { d: 1, m: 0 }.validate(&RunContext::new(4150, 64)),
            Ok(())
        );
    }

    #[test]
    fn parses_by_name_and_as_a_table() {
        assert_eq!(
            SwitchSpec::named("drill"),
            Some(SwitchSpec::new(DrillConfig { d: 2, m: 1 }))
        );
        let spec: SwitchSpec = toml::from_str("scheme = \"drill\"\nd = 4").unwrap();
        assert_eq!(spec, SwitchSpec::new(DrillConfig { d: 4, m: 1 }));
        assert!(toml::from_str::<SwitchSpec>("scheme = \"drill\"\nk = 4").is_err());
    }
}
