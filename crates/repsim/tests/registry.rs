//! Schemes defined outside the crate: a load balancer, a congestion control and a topology
//! family written in this file, registered with `Registry`, are named by a scenario like
//! built-in ones, checked like them, run (every byte delivered once, the packet books balanced)
//! and listed in the errors that name what is allowed.
mod common;

use repsim::cc::{AckSample, CcParams, CcScheme, CongestionControl};
use repsim::engine::time::US;
use repsim::engine::{Rng, Time};
use repsim::lb::{LbContext, LbScheme, LoadBalancer, PathChoice};
use repsim::net::topology::builder::FileReader;
use repsim::net::topology::fat_tree::FatTreeSpec;
use repsim::net::topology::{BuildError, TopologyBuilder};
use repsim::net::{RunContext, Topology};
use repsim::ConfigError;
use repsim::Registry;
use serde::{Deserialize, Serialize};

/// `lb = { scheme = "round-robin", evs = 8 }`: packets take EVs 0, 1, ..., evs - 1 in turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RoundRobinConfig {
    evs: u16,
}

impl Default for RoundRobinConfig {
    fn default() -> Self {
        RoundRobinConfig { evs: 16 }
    }
}

impl LbScheme for RoundRobinConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.evs == 0 {
            return Err(ConfigError::new("evs", "must be positive"));
        }
        Ok(())
    }

    fn build(&self, _ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(RoundRobin {
            next: 0,
            evs: self.evs,
        })
    }
}

struct RoundRobin {
    next: u16,
    evs: u16,
}

impl LoadBalancer for RoundRobin {
    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        let ev = self.next;
        self.next = (self.next + 1) % self.evs;
        PathChoice::ev(ev)
    }
}

/// `[cc] algo = "fixed-window", packets = 8`: a window of that many full packets, whatever
/// happens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FixedWindowConfig {
    packets: u32,
}

impl Default for FixedWindowConfig {
    fn default() -> Self {
        FixedWindowConfig { packets: 8 }
    }
}

impl CcScheme for FixedWindowConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "must be positive"));
        }
        Ok(())
    }

    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(FixedWindow {
            window: self.packets as u64 * p.mtu as u64,
        })
    }
}

struct FixedWindow {
    window: u64,
}

impl CongestionControl for FixedWindow {
    fn cwnd(&self) -> u64 {
        self.window
    }
    fn on_ack(&mut self, _ack: &AckSample) {}
    fn on_nack(&mut self, _size: u64, _now: Time) {}
    fn on_timeout(&mut self, _size: u64, _now: Time) {}
}

/// `[topology] type = "small-tree", hosts = 16`: a 2-tier tree of 4 hosts per ToR, 100 Gb/s links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SmallTreeConfig {
    hosts: u32,
}

impl TopologyBuilder for SmallTreeConfig {
    fn build(&self, _files: &FileReader) -> Result<Topology, BuildError> {
        let spec = FatTreeSpec::uniform(2, self.hosts, 4, self.hosts, 1, 100_000_000_000, US, 0)
            .map_err(|e| BuildError::at("hosts", e.to_string()))?;
        Ok(spec.build()?)
    }
}

fn parse(text: &str) -> Result<repsim::scenario::LoadedScenario, repsim::scenario::ScenarioError> {
    repsim::scenario::LoadedScenario::parse(text, std::path::Path::new("registry.toml"))
}

fn register() {
    Registry::add_lb::<RoundRobinConfig>("round-robin").expect("a new name");
    Registry::add_cc::<FixedWindowConfig>("fixed-window").expect("a new name");
}

/// A 12-to-1 incast on the 32-host tree with small buffers, under the `lb` list and `[cc]`
/// table given.
fn scenario(lb: &str, cc: &str) -> String {
    let flows: Vec<String> = (1..=12)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"200KiB\" }}"))
        .collect();
    let tree = common::TREE_32;
    format!(
        "seed = 3\nlb = {lb}\n{tree}\n[queue]\nsize = \"12pkt\"\necn_min = \"3pkt\"\n\
         ecn_max = \"9pkt\"\n[cc]\n{cc}\n[workload]\ntype = \"explicit\"\nflows = [{}]\n",
        flows.join(", ")
    )
}

#[test]
fn a_scheme_defined_outside_the_crate_runs_like_a_built_in() {
    register();
    let scn = common::parse(&scenario(
        "[{ scheme = \"round-robin\", evs = 8 }, \"reps\"]",
        "algo = \"fixed-window\"\npackets = 6",
    ));
    let built = scn.build("round-robin", None).expect("builds");
    assert_eq!(
        built.config.lb.config::<RoundRobinConfig>(),
        Some(&RoundRobinConfig { evs: 8 })
    );
    assert_eq!(
        built.config.cc.config::<FixedWindowConfig>(),
        Some(&FixedWindowConfig { packets: 6 })
    );
    let sim = common::run(&scn, "round-robin", None);
    assert!(sim.counters().data_sent >= 12 * 50, "the incast ran");
    common::assert_all_delivered(&sim);
    let again = common::run(&scn, "round-robin", None);
    let fct = |s: &repsim::Simulation| -> Vec<Option<Time>> {
        s.flows().iter().map(|f| f.fct()).collect()
    };
    assert_eq!(fct(&sim), fct(&again), "deterministic");
    // The built-in schemes still parse beside the added ones, and the run is a different one.
    let reps = common::run(&scn, "reps", None);
    common::assert_all_delivered(&reps);
    assert_ne!(fct(&sim), fct(&reps), "REPS ran, not the added balancer");
}

#[test]
fn added_schemes_are_checked_and_listed() {
    register();
    let bad = parse(&scenario(
        "{ scheme = \"round-robin\", evs = 0 }",
        "algo = \"fixed-window\"",
    ))
    .and_then(|s| s.build("round-robin", None))
    .err()
    .expect("evs = 0 is refused");
    assert!(
        bad.to_string().contains("lb.evs: must be positive"),
        "{bad}"
    );
    let bad = parse(&scenario(
        "\"round-robin\"",
        "algo = \"fixed-window\"\nwindow = 3",
    ))
    .and_then(|s| s.build("round-robin", None))
    .err()
    .expect("an unknown key is refused");
    assert!(bad.to_string().contains("unknown field `window`"), "{bad}");
    let unknown = parse(&scenario("\"no-such\"", "algo = \"fixed-window\""))
        .and_then(|s| s.build("no-such", None))
        .err()
        .expect("an unknown name is refused");
    assert!(unknown.to_string().contains("round-robin"), "{unknown}");
    assert!(Registry::lbs().contains(&"round-robin"));
    assert!(Registry::ccs().contains(&"fixed-window"));
    // A name belongs to one type.
    assert!(Registry::add_lb::<RoundRobinConfig>("reps").is_err());
    assert!(Registry::add_cc::<FixedWindowConfig>("a+b").is_err());
}

#[test]
fn a_topology_family_defined_outside_the_crate_builds_and_runs() {
    register();
    Registry::add_topology::<SmallTreeConfig>("small-tree").expect("a new name");
    let text = "seed = 5\nlb = \"round-robin\"\n[cc]\nalgo = \"fixed-window\"\n\
                [topology]\ntype = \"small-tree\"\nhosts = 8\n[workload]\ntype = \"explicit\"\n\
                flows = [{ src = 1, dst = 0, size = \"64KiB\" }, { src = 2, dst = 0, size = \"64KiB\" }]\n";
    let scn = parse(text).expect("parses");
    let sim = common::run(&scn, "round-robin", None);
    common::assert_all_delivered(&sim);
    assert_eq!(sim.topology().hosts, 8);
    let bad = parse(&text.replace("hosts = 8", "hosts = 8\nracks = 2"))
        .and_then(|s| s.build("round-robin", None))
        .err()
        .expect("an unknown key is refused");
    assert!(bad.to_string().contains("racks"), "{bad}");
    assert!(Registry::topologies().contains(&"small-tree"));
}
