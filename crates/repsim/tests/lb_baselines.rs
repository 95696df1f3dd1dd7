//! The REPS paper's load-balancing baselines (PLB, flowlet, MP-RDMA ACK clocking, MPTCP-like
//! subflows) run end to end from a scenario: every flow finishes, the books balance, and the
//! schemes that re-path do so.
mod common;

use repsim::lb::LbEvent;
use repsim::Simulation;

/// Every baseline and its reference-code variant, as scenario tables.
const VARIANTS: &str = r#"lb = [
    "plb",
    { scheme = "plb", threshold_mode = "reference", label = "plb-ref" },
    "flowlet",
    { scheme = "flowlet", gap_from = "time_zero", label = "flowlet-ref" },
    "mprdma",
    { scheme = "mprdma", nack_overwrites = true, label = "mprdma-ref" },
    { scheme = "mprdma", random_after_timeout = true, label = "mprdma-rto" },
    "mptcp",
    { scheme = "mptcp", subflows = 2, label = "mptcp-2" },
]"#;

/// A 32-host tree with small buffers under a permutation, so that marks and losses happen.
fn congested(lbs: &str, size: &str, trimming: bool) -> String {
    format!(
        r#"
seed = 3
{lbs}
[topology]
type = "fat_tree"
tiers = 2
hosts = 32
hosts_per_tor = 8
link_speed = "400Gbps"
link_latency = "1us"
[queue]
size = "50pkt"
ecn_min = "10pkt"
ecn_max = "40pkt"
trimming = {trimming}
[workload]
type = "permutation"
size = "{size}"
"#
    )
}

/// Runs every labelled variant of a scenario; returns each run's label and simulation.
fn run_all(text: &str) -> Vec<(String, Simulation)> {
    let scn = common::parse(text);
    scn.runs()
        .unwrap()
        .into_iter()
        .map(|run| {
            let mut sim = Simulation::new(scn.build_run(&run, None).unwrap()).unwrap();
            sim.run_until_idle();
            (run.label, sim)
        })
        .collect()
}

/// Re-paths the load balancers reported.
fn reroutes(sim: &Simulation) -> usize {
    sim.lb_records()
        .iter()
        .filter(|r| r.event == LbEvent::REROUTED)
        .count()
}

#[test]
fn every_baseline_delivers_everything_with_and_without_trimming() {
    for trimming in [true, false] {
        let runs = run_all(&congested(VARIANTS, "1MiB", trimming));
        assert_eq!(runs.len(), 9);
        for (label, sim) in &runs {
            common::assert_all_delivered(sim);
            assert!(
                sim.flows().iter().map(|f| f.stats.ecn_acks).sum::<u64>() > 0,
                "{label} trimming={trimming}: the fabric should be congested"
            );
        }
        let count = |l: &str| reroutes(&runs.iter().find(|(x, _)| x == l).unwrap().1);
        assert!(count("plb") > 0, "trimming={trimming}: PLB re-paths");
        assert!(
            count("flowlet") > 0,
            "trimming={trimming}: flowlet re-paths are recorded"
        );
        for l in ["mprdma", "mptcp"] {
            assert_eq!(count(l), 0, "{l} reports no events");
        }
    }
}

#[test]
fn plb_reference_threshold_repaths_more_often() {
    // With k truncated to 0, one marked ACK or NACK makes a round congested; with k = 0.25 it
    // takes more than a quarter of the round's feedback.
    let lbs =
        r#"lb = ["plb", { scheme = "plb", threshold_mode = "reference", label = "plb-ref" }]"#;
    for trimming in [true, false] {
        let runs = run_all(&congested(lbs, "4MiB", trimming));
        let (paper, reference) = (reroutes(&runs[0].1), reroutes(&runs[1].1));
        for (_, sim) in &runs {
            common::assert_all_delivered(sim);
        }
        assert!(
            paper > 0 && reference > paper,
            "trimming={trimming}: {reference} re-paths (reference) vs {paper} (paper)"
        );
    }
}

#[test]
fn adaptive_baselines_route_around_failed_uplinks() {
    // tor0 loses 3 of its 4 uplinks early on; silent drops, no reconvergence.
    let text = r#"
seed = 5
lb = [
    "plb",
    "flowlet",
    { scheme = "mprdma", random_after_timeout = true, label = "mprdma-rto" },
]
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[[fault]]
kind = "link_down"
link = "tor0->spine0"
start = "20us"
[[fault]]
kind = "link_down"
link = "tor0->spine1"
start = "30us"
[[fault]]
kind = "link_down"
link = "tor0->spine2"
start = "40us"
[queue]
size = "101pkt"
ecn_min = "25pkt"
ecn_max = "76pkt"
trimming = false
[workload]
type = "permutation"
size = "2MiB"
"#;
    for (label, sim) in run_all(text) {
        common::assert_all_delivered(&sim);
        assert!(
            sim.counters().data_dropped > 0,
            "{label}: the failures bite"
        );
        if label == "plb" {
            assert!(reroutes(&sim) > 0, "PLB re-paths on timeouts");
        }
    }
}
