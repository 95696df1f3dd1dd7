//! Per-pair connection reuse: a flow that follows another between the same pair carries on
//! with its congestion window (and load-balancer state), as the reference's
//! `-connections_mapping` does for collectives.
mod common;

/// A 16-host 2-tier tree running `lb` under MPRDMA from a 4-packet window, with `transport`
/// (`[transport]` lines) and `flows` (the explicit workload's entries).
fn scenario(lb: &str, transport: &str, flows: &str) -> repsim::scenario::LoadedScenario {
    common::parse(&format!(
        r#"
seed = 1
lb = "{lb}"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[transport]
{transport}
[cc]
algo = "mprdma"
initial_cwnd = "4pkt"
[workload]
type = "explicit"
flows = [{flows}]
"#
    ))
}

fn fcts(reuse: bool) -> (f64, f64) {
    let scn = scenario(
        "reps",
        &format!("reuse_connections = {reuse}"),
        r#"
  { id = 1, src = 0, dst = 9, size = "2MiB" },
  { id = 2, src = 0, dst = 9, size = "2MiB", after = [1] },
  { id = 3, src = 1, dst = 10, size = "2MiB" },
  { id = 4, src = 10, dst = 1, size = "2MiB", after = [3] },
"#,
    );
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

/// The windows flows 2 and 3 of pair 0 -> 9 start with, both started by flow 1's end, under
/// `mode`; and flow 1's window when it finished.
fn starting_windows(mode: &str) -> (u64, u64, u64) {
    let scn = scenario(
        "ecmp",
        &format!("reuse_connections = true\nreuse_mode = \"{mode}\""),
        r#"
  { id = 1, src = 0, dst = 9, size = "2MiB" },
  { id = 2, src = 0, dst = 9, size = "2MiB", after = [1] },
  { id = 3, src = 0, dst = 9, size = "2MiB", after = [1] },
"#,
    );
    let spec = scn.build("ecmp", None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = repsim::Simulation::new(spec).unwrap_or_else(|e| panic!("{e}"));
    let mut first_window = 0;
    let mut t = 0;
    // Small steps until flow 1 ends; its followers start then and have heard no ACK yet.
    while sim.flows()[0].finish.is_none() {
        if let Some(s) = sim.flows()[0].sender() {
            first_window = s.cc().cwnd();
        }
        t += 100_000;
        sim.run_until(t);
    }
    let window = |i: usize| {
        sim.flows()[i]
            .sender()
            .unwrap_or_else(|| panic!("flow {} runs", i + 1))
            .cc()
            .cwnd()
    };
    let started = (window(1), window(2));
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    (started.0, started.1, first_window)
}

#[test]
fn by_record_every_follower_starts_from_the_pairs_last_state() {
    let initial = 4 * 4150;
    let (second, third, first) = starting_windows("record");
    assert!(first > 4 * initial, "flow 1's window grew ({first})");
    assert!(
        second > 4 * initial && third > 4 * initial,
        "{second}, {third}"
    );
    assert_eq!(second, third, "both start from copies of one record");
    // Handed over, one follower takes the state and the other starts fresh.
    let (second, third) = {
        let (a, b, _) = starting_windows("handover");
        (a.max(b), a.min(b))
    };
    assert!(second > 4 * initial, "{second}");
    assert_eq!(third, initial, "the other starts with the initial window");
}
