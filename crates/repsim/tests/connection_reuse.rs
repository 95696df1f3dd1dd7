//! Per-pair connection reuse: a flow that follows another between the same pair carries on
//! with its congestion window (and load-balancer state), as the reference's
//! `-connections_mapping` does for collectives.
mod common;

fn fcts(reuse: bool) -> (f64, f64) {
    let scn = common::parse(&format!(
        r#"
seed = 1
lb = "reps"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[transport]
reuse_connections = {reuse}
[cc]
algo = "mprdma"
initial_cwnd = "4pkt"
[workload]
type = "explicit"
flows = [
  {{ id = 1, src = 0, dst = 9, size = "2MiB" }},
  {{ id = 2, src = 0, dst = 9, size = "2MiB", after = [1] }},
  {{ id = 3, src = 1, dst = 10, size = "2MiB" }},
  {{ id = 4, src = 10, dst = 1, size = "2MiB", after = [3] }},
]
"#
    ));
    let sim = common::run(&scn, "reps", None);
    common::assert_all_delivered(&sim);
    let f = common::fcts(&sim);
    // The second flow of the same pair, and a flow of the reverse pair (never reused), each
    // over the flow before it.
    (f[1] / f[0], f[3] / f[2])
}

#[test]
fn a_second_flow_between_a_pair_keeps_the_grown_window() {
    let (same_pair_fresh, reverse_fresh) = fcts(false);
    let (same_pair_reused, reverse_reused) = fcts(true);
    // Fresh, both flows of the pair start from 4 packets and take about as long.
    assert!((0.95..1.05).contains(&same_pair_fresh), "{same_pair_fresh}");
    // Reused, the second starts with the window the first grew to.
    assert!(same_pair_reused < 0.8, "{same_pair_reused}");
    // The reverse direction is another pair: no reuse.
    assert!((reverse_reused / reverse_fresh - 1.0).abs() < 0.01);
    assert!((0.95..1.05).contains(&reverse_reused), "{reverse_reused}");
}
