//! Reunion in real simulations at small scale: convergence to at most t elephants per link on
//! a 2-tier Clos with as many elephants per ToR pair as disjoint paths, and conservation plus
//! determinism under the RoCE transports (PFC with go-back-N, IRN without PFC).
mod common;

use std::collections::BTreeMap;

use repsim::engine::time::US;
use repsim::lb::LbEvent;
use repsim::Simulation;

/// 4 leaves x 4 spines x 4 hosts at 100 Gb/s; host i of leaf L sends `size` to host i of leaf
/// L + 1: four elephants per ToR pair, four disjoint paths per pair (one per spine).
fn clos(size: &str, extra: &str) -> String {
    let flows: Vec<String> = (0..16)
        .map(|h| format!("{{ src = {h}, dst = {}, size = \"{size}\" }}", (h + 4) % 16))
        .collect();
    format!(
        r#"
seed = 3
end = "1s"
lb = [{{ scheme = "ecmp", label = "reunion", switch = {{ scheme = "reunion", interval = "100us" }} }}]
[topology]
type = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 4
link_speed = "100Gbps"
link_latency = "1us"
[queue]
size = "750KB"
ecn_min = "100KB"
ecn_max = "400KB"
trimming = false
{extra}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

fn run(text: &str) -> Simulation {
    let scn = common::parse(text);
    let b = scn.build("reunion", None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(b).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until_idle();
    sim
}

/// Most elephants on one link, per interval end (in time order).
fn worst_per_interval(sim: &Simulation) -> Vec<(u64, u32)> {
    let mut worst: BTreeMap<u64, u32> = BTreeMap::new();
    for s in sim.switch_link_samples() {
        let w = worst.entry(s.time).or_default();
        *w = (*w).max(s.elephants);
    }
    worst.into_iter().collect()
}

#[test]
fn reunion_converges_to_one_elephant_per_link() {
    let sim = run(&clos("20MB", ""));
    common::assert_all_delivered(&sim);
    let worst = worst_per_interval(&sim);
    assert!(worst.len() >= 10, "intervals with elephants: {worst:?}");
    assert!(
        worst.iter().take(5).any(|&(_, w)| w > 1),
        "the ECMP start should collide (else this tests nothing): {worst:?}"
    );
    // Converged: from some interval on, no link carries more than t = 1 elephant while the
    // elephants run (the last intervals, as flows finish, only get better). Measured: the
    // ECMP collisions show from the 3rd interval (the sketch needs 1 MB per flow first), the
    // destinations notify at its end, the sources move flows at the end of the 5th, and from
    // the 7th interval on every link carries one elephant.
    let settled = worst.iter().rposition(|&(_, w)| w > 1).map_or(0, |i| i + 1);
    assert!(
        settled <= 8,
        "still colliding after {settled} intervals of 100 us: {worst:?}"
    );
    assert!(worst.len() > settled + 3, "and stays converged: {worst:?}");
    let reroutes = sim
        .lb_records()
        .iter()
        .filter(|r| matches!(r.event, LbEvent::PathChanged { .. }))
        .count();
    assert!(reroutes > 0);
    let stats: BTreeMap<_, _> = sim.switch_stats().into_iter().collect();
    assert!(stats["notifications"] >= reroutes as u64, "{stats:?}");
    assert!(stats["notification_bytes"] >= 68 * stats["notifications"]);
    // Every notification arrived and was consumed at its source ToR.
    let books = sim.books();
    let notify = repsim::net::Kind::Notify as usize;
    assert_eq!(books.sent[notify], stats["notifications"]);
    assert_eq!(books.arrived[notify], books.sent[notify]);
    // Converged elephants run at nearly line rate: the slowest takes < 1.5x the ideal
    // (20 MB at 100 Gb/s = 1.6 ms plus headers).
    let worst_fct = common::max_fct(&sim);
    assert!(worst_fct < 1.5 * 1600.0 * 1.07, "max FCT {worst_fct} us");
}

/// Everything observable of a run, for comparing two runs.
fn fingerprint(sim: &Simulation) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        common::fcts(sim),
        sim.lb_records(),
        sim.switch_stats(),
        sim.switch_link_samples(),
        sim.counters()
    )
}

#[test]
fn reunion_conserves_and_repeats_under_roce_transports() {
    let pfc = r#"
[cc]
algo = "dcqcn"
[transport]
mode = "gbn"
mtu = "1048B"
header = "48B"
[pfc]
enabled = true
buffer = "12MB"
threshold = "dynamic"
alpha = 0.0625
"#;
    let irn = r#"
[cc]
algo = "dcqcn"
[transport]
mode = "irn"
mtu = "1048B"
header = "48B"
irn_bdp = "104000B"
"#;
    for (what, extra) in [("pfc + go-back-N", pfc), ("irn", irn)] {
        let text = clos("4MB", extra);
        let one = || {
            let scn = common::parse(&text);
            let b = scn.build("reunion", None).unwrap();
            let mut sim = Simulation::new(b).unwrap();
            // The books balance mid-run, with packets and notifications on the way.
            for at in [150 * US, 310 * US] {
                sim.run_until(at);
                let unbalanced = sim.unbalanced_books();
                assert!(unbalanced.is_empty(), "{what} at {at}: {unbalanced:#?}");
            }
            sim.run_until_idle();
            sim
        };
        let (a, b) = (one(), one());
        common::assert_all_delivered(&a);
        let stats: BTreeMap<_, _> = a.switch_stats().into_iter().collect();
        assert!(
            stats["notifications"] > 0,
            "{what}: the control loop ran: {stats:?}"
        );
        assert_eq!(fingerprint(&a), fingerprint(&b), "{what}: runs differ");
    }
}
