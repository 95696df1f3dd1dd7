//! Collectives on an idle, non-oversubscribed fabric finish close to their analytic times:
//! ring AllReduce in 2(n-1) steps of S/n, butterfly in log2(n) stages of S, each step one
//! serialisation of its bytes (headers included) plus one unloaded round trip.
mod common;

use repsim::engine::time::SEC;

/// A collective over the 16 hosts of a 2-tier tree (4 per ToR, 400 Gbps), with more
/// `[workload]` lines in `extra`.
fn scenario(collective: &str, size: &str, extra: &str) -> repsim::scenario::LoadedScenario {
    common::parse(&format!(
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
[workload]
type = "collective"
collective = "{collective}"
size = "{size}"
{extra}
"#
    ))
}

/// Runs `collective` of `size`, ranks spread over racks; returns (measured completion,
/// analytic) in picoseconds for `steps` steps of `step_bytes` each.
fn run(collective: &str, size: &str, step_bytes: u64, steps: u64) -> (u64, u64) {
    let scn = scenario(collective, size, "placement = \"spread\"");
    let sim = common::run(&scn, "reps", None);
    common::assert_all_delivered(&sim);
    let measured = sim.flows().iter().filter_map(|f| f.finish).max().unwrap();
    let t = sim.transport();
    let packets = step_bytes.div_ceil((t.mtu - t.header) as u64);
    let wire = step_bytes + packets * t.header as u64;
    let serialization = (wire as u128 * 8 * SEC as u128 / 400_000_000_000) as u64;
    let rtt = sim.max_base_rtt();
    (measured, steps * (serialization + rtt))
}

#[test]
fn ring_allreduce_takes_2_n_minus_1_steps_of_s_over_n() {
    let s = 64u64 << 20;
    let (measured, analytic) = run("ring_allreduce", "64MiB", s / 16, 2 * 15);
    let ratio = measured as f64 / analytic as f64;
    eprintln!("{measured} vs {analytic}: {ratio:.3}");
    assert!(
        (0.9..=1.1).contains(&ratio),
        "{measured} vs {analytic}: {ratio}"
    );
}

#[test]
fn butterfly_allreduce_takes_log2_n_stages_of_s() {
    let s = 8u64 << 20;
    let (measured, analytic) = run("butterfly_allreduce", "8MiB", s, 4);
    let ratio = measured as f64 / analytic as f64;
    eprintln!("{measured} vs {analytic}: {ratio:.3}");
    assert!(
        (0.9..=1.1).contains(&ratio),
        "{measured} vs {analytic}: {ratio}"
    );
}

#[test]
fn every_collective_completes_in_dependency_order() {
    for c in [
        "reduce_scatter",
        "all_gather",
        "ring_reference",
        "alltoall",
        "ps_allreduce",
        "allscatter",
    ] {
        let scn = scenario(
            c,
            "1MiB",
            "concurrency = 3\niterations = 2\ncompute_gap = \"5us\"",
        );
        let sim = common::run(&scn, "reps", None);
        common::assert_all_delivered(&sim);
        for f in sim.flows() {
            for id in &f.spec.after {
                let dep = sim.flows().iter().find(|d| d.spec.id == *id).unwrap();
                assert!(
                    f.started_at.unwrap() >= dep.finish.unwrap() + f.spec.delay,
                    "{c}: flow {} started before flow {id} finished",
                    f.spec.id
                );
            }
        }
    }
}
