//! FCT slowdown: a flow alone on an idle fabric completes in about its ideal time, and
//! congestion shows up as slowdown in the size bucket it hits.
mod common;

fn scenario(flows: &str) -> String {
    let tree = common::TREE_32;
    format!(
        r#"
seed = 3
lb = "reps"
{tree}
[metrics]
slowdown_edges = ["100KB"]
[workload]
type = "explicit"
flows = [{flows}]
"#
    )
}

#[test]
fn a_lone_flow_runs_at_its_ideal_fct() {
    for size in ["4KB", "64KB", "1MiB", "16MiB"] {
        let scn = common::parse(&scenario(&format!(
            "{{ src = 0, dst = 31, size = \"{size}\" }}"
        )));
        let sim = common::run(&scn, "reps", None);
        let flow = &sim.flows()[0];
        let ratio = flow.fct().unwrap() as f64 / sim.ideal_fct(flow) as f64;
        assert!((0.97..=1.03).contains(&ratio), "{size}: slowdown {ratio}");
        let buckets = sim.slowdown();
        assert_eq!(buckets.len(), 3, "two size buckets and all");
        let small = size == "4KB" || size == "64KB";
        assert_eq!(buckets[0].flows, small as usize, "{size}");
        assert_eq!(buckets[1].flows, !small as usize, "{size}");
        assert_eq!(buckets[2].flows, 1);
    }
}

#[test]
fn an_incast_slows_its_flows_down_by_about_the_fan_in() {
    let flows: Vec<String> = (1..=8)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"4MiB\" }}"))
        .collect();
    let scn = common::parse(&scenario(&flows.join(", ")));
    let sim = common::run(&scn, "reps", None);
    let all = sim.slowdown().pop().unwrap();
    assert_eq!(all.flows, 8);
    // Eight flows share one 400 G downlink: the last finishes near 8x its ideal time.
    assert!(all.p99 > 6.5 && all.p99 < 9.5, "p99 slowdown {}", all.p99);
    assert!(all.mean > 4.0, "mean slowdown {}", all.mean);
}
