//! The ToR schemes of the RoCE studies (LetFlow, CONGA, ConWeave, and DRILL beside them) on a
//! leaf-spine fabric: an overflowing incast plus a permutation run to completion with every
//! packet accounted for, trimming on and off, and ConWeave's control loop really runs.
mod common;

use repsim::Simulation;

/// 4 leaves x 4 spines x 4 hosts at 100 Gb/s: hosts 1-6 send to host 0, the other hosts a
/// shifted permutation across leaves.
fn scenario(lb: &str, trimming: bool) -> String {
    let mut flows: Vec<String> = (1..=6)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"150KiB\" }}"))
        .collect();
    flows.extend((7..16).map(|s| {
        let d = 7 + (s - 7 + 4) % 9;
        format!("{{ src = {s}, dst = {d}, size = \"400KiB\" }}")
    }));
    format!(
        r#"
seed = 23
end = "100ms"
lb = "{lb}"
[topology]
type = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 4
link_speed = "100Gbps"
[queue]
size = "16pkt"
ecn_min = "4pkt"
ecn_max = "12pkt"
trimming = {trimming}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

fn run(lb: &str, trimming: bool) -> Simulation {
    let scn = common::parse(&scenario(lb, trimming));
    let b = scn.build(lb, None).unwrap_or_else(|e| panic!("{lb}: {e}"));
    let mut sim = Simulation::new(b).unwrap_or_else(|e| panic!("{lb}: {e}"));
    sim.run_until_idle();
    sim
}

#[test]
fn tor_schemes_finish_and_conserve_on_a_leaf_spine() {
    for lb in ["letflow", "conga", "conweave", "drill"] {
        for trimming in [true, false] {
            let what = format!("{lb}, trimming {trimming}");
            let sim = run(lb, trimming);
            common::assert_all_delivered(&sim);
            let c = sim.counters();
            let losses = if trimming { c.trims } else { c.data_dropped };
            assert!(losses > 0, "{what}: the incast should overflow");
            assert_eq!(
                c.acks_sent + c.nacks_sent,
                c.control_arrived + c.control_dropped,
                "{what}: {c:?}"
            );
            assert!(c.scheme_consumed <= c.scheme_packets, "{what}: {c:?}");
            let stats = sim.switch_stats();
            let stat = |name: &str| {
                stats
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or(0, |&(_, v)| v)
            };
            if lb == "conweave" {
                assert!(
                    stat("inits") > 0 && stat("rtt_replies") > 0,
                    "{what}: {stats:?}"
                );
                assert_eq!(
                    c.scheme_packets,
                    stat("rtt_replies") + stat("clears") + stat("notifies"),
                    "{what}: every control packet is counted"
                );
            } else {
                assert_eq!(c.scheme_packets, 0, "{what}");
            }
        }
    }
}

#[test]
fn conweave_reroutes_and_reorders_under_congestion() {
    // Marked packets make NOTIFYs; late replies make TAILs and reorder queues.
    let mut totals = [0u64; 3];
    for trimming in [true, false] {
        let sim = run("conweave", trimming);
        for (name, v) in sim.switch_stats() {
            match name {
                "notifies" => totals[0] += v,
                "tails" => totals[1] += v,
                "held_packets" => totals[2] += v,
                _ => {}
            }
        }
    }
    assert!(totals[0] > 0, "no NOTIFY: {totals:?}");
    assert!(totals[1] > 0, "no TAIL: {totals:?}");
}
