//! BitMap, REPS-legacy, mixed and incremental end to end: conservation under overflow (trims
//! and drops) and, on the REPS paper's asymmetric micro-benchmark, the behaviour they are
//! meant to show at small scale.
mod common;

use repsim::Simulation;

const SCHEMES: [&str; 4] = ["bitmap", "reps-legacy", "mixed", "incremental"];

/// A 12-to-1 incast on a 32-host tree with small buffers, so that overflows happen.
fn incast(trimming: bool, lb: &str) -> String {
    let flows: Vec<String> = (1..=12)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"300KiB\" }}"))
        .collect();
    format!(
        r#"
seed = 11
lb = "{lb}"
[topology]
type = "fat_tree"
tiers = 2
hosts = 32
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[queue]
size = "12pkt"
ecn_min = "3pkt"
ecn_max = "9pkt"
trimming = {trimming}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

#[test]
fn incast_conserves_and_finishes_with_trims_and_with_drops() {
    for trimming in [true, false] {
        for lb in SCHEMES {
            let scn = common::parse(&incast(trimming, lb));
            let sim = common::run(&scn, lb, None);
            common::assert_all_delivered(&sim);
            let c = sim.counters();
            let losses = if trimming { c.trims } else { c.data_dropped };
            assert!(
                losses > 0,
                "{lb} trimming={trimming}: the incast should overflow"
            );
            assert_eq!(sim.data_in_network(), 0);
            assert_eq!(sim.live_packets(), 0, "{lb}: packets leaked");
        }
    }
}

/// The asymmetric micro-benchmark (one ToR uplink at 200 G) with these schemes and OPS over
/// the bitmap's 256 EVs.
fn asymmetric(lb: &str) -> Simulation {
    let text = std::fs::read_to_string(common::scenario_path("reps-micro-asymmetric.toml"))
        .expect("ready scenario");
    let lbs = r#"lb = ["bitmap", "reps-legacy", "mixed", { scheme = "ops", label = "ops-256", evs_size = 256 }]"#;
    let text: String = text
        .lines()
        .map(|l| if l.starts_with("lb = ") { lbs } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let sim = common::run(&common::parse(&text), lb, None);
    common::assert_all_delivered(&sim);
    sim
}

#[test]
fn penalties_and_recycling_steer_around_the_slow_uplink() {
    let ops = asymmetric("ops-256");
    let bitmap = asymmetric("bitmap");
    // NACK and ECN penalties keep BitMap off the slow link more than oblivious spraying over
    // the same EVs (seed 5: 123 trims against 148; means 1,132 us against 1,305 us).
    assert!(bitmap.counters().trims < ops.counters().trims);
    assert!(common::mean_fct(&bitmap) < common::mean_fct(&ops));
    // Recycling good EVs does much better (about 800 us).
    for lb in ["reps-legacy", "mixed"] {
        let sim = asymmetric(lb);
        assert!(
            common::mean_fct(&sim) < 0.8 * common::mean_fct(&ops),
            "{lb}: {} us against OPS {} us",
            common::mean_fct(&sim),
            common::mean_fct(&ops)
        );
    }
}
