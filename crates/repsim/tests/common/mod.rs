//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use repsim::scenario::LoadedScenario;
use repsim::Simulation;

/// Path of a file in the repository's `scenarios/` folder.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

/// Loads a ready scenario.
pub fn load(name: &str) -> LoadedScenario {
    LoadedScenario::load(&scenario_path(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses scenario text (paths relative to `scenarios/`).
pub fn parse(text: &str) -> LoadedScenario {
    LoadedScenario::parse(text, &scenario_path("inline.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The `[topology]` section of the 32-host 2-tier tree most integration tests run on (8 ToRs
/// of 4 hosts, 400 Gbps links of 1 us).
pub const TREE_32: &str = r#"[topology]
type = "fat_tree"
tiers = 2
hosts = 32
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us""#;

/// A 12-to-1 incast (hosts 1-12 send `size` each to host 0) on a 32-host 2-tier tree of
/// 400 Gbps links with small buffers `(size, ecn_min, ecn_max)` in packets, so that queues
/// overflow; `extra` is appended (e.g. a `[cc]` table).
pub fn incast_32(
    seed: u64,
    lb: &str,
    size: &str,
    queue: (u32, u32, u32),
    trimming: bool,
    extra: &str,
) -> String {
    let flows: Vec<String> = (1..=12)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"{size}\" }}"))
        .collect();
    format!(
        r#"
seed = {seed}
lb = "{lb}"
{TREE_32}
[queue]
size = "{}pkt"
ecn_min = "{}pkt"
ecn_max = "{}pkt"
trimming = {trimming}
[workload]
type = "explicit"
flows = [{}]
{extra}
"#,
        queue.0,
        queue.1,
        queue.2,
        flows.join(", ")
    )
}

/// Builds and runs one load balancer of a scenario to the end.
pub fn run(scn: &LoadedScenario, lb: &str, seed: Option<u64>) -> Simulation {
    let b = scn.build(lb, seed).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(b).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until_idle();
    sim
}

/// FCTs in microseconds of all flows (panics if one did not finish).
pub fn fcts(sim: &Simulation) -> Vec<f64> {
    sim.flows()
        .iter()
        .map(|f| {
            let t = f
                .fct()
                .unwrap_or_else(|| panic!("flow {} did not finish", f.spec.id));
            t as f64 / 1e6
        })
        .collect()
}

/// Largest FCT in microseconds.
pub fn max_fct(sim: &Simulation) -> f64 {
    fcts(sim).into_iter().fold(0.0, f64::max)
}

/// Mean FCT in microseconds.
pub fn mean_fct(sim: &Simulation) -> f64 {
    let v = fcts(sim);
    v.iter().sum::<f64>() / v.len() as f64
}

/// Every data packet sent is delivered, a duplicate, a trimmed arrival, dropped, or still in
/// the network (at any moment of a run).
pub fn assert_books_balance(sim: &Simulation) {
    let c = sim.counters();
    let in_network = sim.data_in_network();
    assert_eq!(
        c.data_sent,
        c.data_delivered + c.data_duplicates + c.trimmed_arrivals + c.data_dropped + in_network,
        "data packets unaccounted for: {c:?}, in network {in_network}"
    );
}

/// The books of every packet kind balance: sent = arrived + dropped (by cause) + in the network
/// (at any moment of a run), and the data books agree with the older data counters.
pub fn assert_kind_books_balance(sim: &Simulation) {
    let unbalanced = sim.unbalanced_books();
    assert!(unbalanced.is_empty(), "packet books: {unbalanced:#?}");
    let (b, c) = (sim.books(), sim.counters());
    let data = repsim::net::Kind::Data as usize;
    assert_eq!(b.sent[data], c.data_sent, "data sent: books vs counters");
    assert_eq!(
        b.arrived[data],
        c.data_delivered + c.data_duplicates + c.trimmed_arrivals,
        "data arrived: books vs counters"
    );
    assert_eq!(
        b.dropped_total(repsim::net::Kind::Data),
        c.data_dropped,
        "data dropped: books vs counters"
    );
}

/// The books balance, every flow finished having delivered each of its bytes once, and no
/// packet is left allocated.
pub fn assert_all_delivered(sim: &Simulation) {
    assert_books_balance(sim);
    assert_kind_books_balance(sim);
    for f in sim.flows() {
        assert_eq!(
            f.phase,
            repsim::sim::Phase::Done,
            "flow {} unfinished",
            f.spec.id
        );
        assert_eq!(f.delivered, f.spec.bytes, "flow {}", f.spec.id);
    }
    assert_eq!(sim.live_packets(), 0, "packets leaked");
}
