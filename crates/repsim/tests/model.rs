//! Timing fidelity of the model against hand-computed values, and randomized conservation.
mod common;

use proptest::prelude::*;
use repsim::engine::time::{NS, US};
use repsim::sim::Phase;

fn one_flow(bytes: u64, dst: u32, switch_latency: &str, tiers: u32) -> String {
    let pod = if tiers == 3 {
        "pod_size = 16\nhosts_per_tor = 4"
    } else {
        "hosts_per_tor = 8"
    };
    format!(
        r#"
lb = "reps"
[topology]
type = "fat_tree"
tiers = {tiers}
hosts = 128
{pod}
link_speed = "400Gbps"
link_latency = "1us"
switch_latency = "{switch_latency}"
[workload]
type = "explicit"
flows = [{{ src = 0, dst = {dst}, size = "{bytes}B" }}]
"#
    )
}

#[test]
fn single_packet_fct_is_one_base_rtt() {
    // 2 tiers, inter-ToR: 4 links out (83 ns + 1 us each) and 4 back (1.28 ns + 1 us each).
    let sim = common::run(&common::parse(&one_flow(4086, 64, "0ns", 2)), "reps", None);
    let f = &sim.flows()[0];
    assert_eq!(f.finish, Some(8_337_120));
    assert_eq!(
        f.base_rtt, 8_337_120,
        "the reference's 2-tier base RTT is 8.33712 us"
    );
    // 3 tiers, inter-pod: 6 links each way; the reference prints 12.50568 us.
    let sim = common::run(&common::parse(&one_flow(4086, 64, "0ns", 3)), "reps", None);
    assert_eq!(sim.flows()[0].finish, Some(12_505_680));
    // Switch latency adds once per switch crossed, both ways (3 switches in a 2-tier path).
    let sim = common::run(
        &common::parse(&one_flow(4086, 64, "500ns", 2)),
        "reps",
        None,
    );
    assert_eq!(sim.flows()[0].finish, Some(8_337_120 + 6 * 500 * NS));
}

#[test]
fn rto_matches_reference_formula() {
    // RTO = max base RTT + 4 x (queue bytes x 8 / 400 Gb/s): 8.33712 + 4 x 8.3 = 41.53712 us.
    let b = common::parse(&one_flow(4086, 64, "0ns", 2))
        .build("reps", None)
        .unwrap();
    let sim = repsim::Simulation::new(b).unwrap();
    assert_eq!(sim.rto(), 41_537_120);
}

#[test]
fn long_flow_runs_at_line_rate() {
    // 16 MiB alone: serialization of 4107 packets (the last one shorter) plus one base RTT,
    // with the window never limiting (it starts at 1.5 BDP).
    let bytes = 16u64 << 20;
    let sim = common::run(&common::parse(&one_flow(bytes, 64, "0ns", 2)), "reps", None);
    let packets = bytes.div_ceil(4086);
    let wire = bytes + packets * 64;
    let serial = wire * 20; // 20 ps per byte at 400 Gb/s
    let fct = sim.flows()[0].finish.unwrap();
    assert!(fct >= serial + 8 * US, "{fct} vs {serial}");
    assert!(
        fct <= serial + 10 * US,
        "{fct} vs {serial}: a lone flow should not lose throughput"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any small workload on any load balancer, with trimming or drops and tiny buffers, finishes
    /// with every byte delivered once and every packet accounted for.
    #[test]
    fn random_workloads_conserve(
        seed in 0u64..1000,
        trimming in any::<bool>(),
        lb in prop::sample::select(vec!["reps", "ops", "ecmp"]),
        queue_pkts in 4u32..40,
        flows in prop::collection::vec((0u32..16, 0u32..16, 1u64..400_000, 0u64..50), 1..12),
    ) {
        let entries: Vec<String> = flows
            .iter()
            .map(|&(s, d, bytes, start)| {
                let d = if s == d { (d + 1) % 16 } else { d };
                format!("{{ src = {s}, dst = {d}, size = \"{bytes}B\", start = \"{start}us\" }}")
            })
            .collect();
        let text = format!(
            r#"
seed = {seed}
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "100Gbps"
link_latency = "500ns"
[queue]
size = "{queue_pkts}pkt"
ecn_min = "2pkt"
ecn_max = "{}pkt"
trimming = {trimming}
[workload]
type = "explicit"
flows = [{}]
"#,
            queue_pkts.max(3) - 1,
            entries.join(", ")
        );
        let sim = common::run(&common::parse(&text), lb, None);
        let c = sim.counters();
        prop_assert_eq!(c.data_sent, c.data_delivered + c.data_duplicates + c.trimmed_arrivals + c.data_dropped + sim.data_in_network());
        for f in sim.flows() {
            prop_assert_eq!(f.phase, Phase::Done);
            prop_assert_eq!(f.delivered, f.spec.bytes);
        }
        prop_assert_eq!(sim.live_packets(), 0);
    }
}
