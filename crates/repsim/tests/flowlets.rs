//! LetFlow's and CONGA's flowlets as the outputs report them: counted in `switch_stats`
//! (`flowlets`, `reroutes`), the moves among them in the run's `reroutes`, and, with
//! `events = true`, each one a `flowlet` load-balancer event with its old and new path;
//! recording them changes no decision.
mod common;

use repsim::Simulation;

/// 4 leaves x 4 spines x 4 hosts at 100 Gb/s, host i of leaf L sending 2 MB to host i of leaf
/// L + 1, under switch scheme `switch`.
fn clos(switch: &str) -> String {
    let flows: Vec<String> = (0..16)
        .map(|h| format!("{{ src = {h}, dst = {}, size = \"2MB\" }}", (h + 4) % 16))
        .collect();
    format!(
        r#"
seed = 3
lb = [{{ scheme = "ecmp", label = "x", switch = {switch} }}]
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
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

fn run(text: &str) -> Simulation {
    let scn = common::parse(text);
    let spec = scn.build("x", None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(spec).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    sim
}

fn stat(sim: &Simulation, name: &str) -> u64 {
    sim.switch_stats()
        .into_iter()
        .find(|(k, _)| *k == name)
        .map_or(0, |(_, v)| v)
}

/// `switch` (a table without its closing brace) runs with and without events: the same
/// flows, the counts in the stats and the summary, and one event per flowlet.
fn flowlets_reported(switch: &str) {
    let quiet = run(&clos(&format!("{switch} }}")));
    let loud = run(&clos(&format!("{switch}, events = true }}")));
    let finish = |s: &Simulation| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(
        finish(&quiet),
        finish(&loud),
        "{switch}: events changed a decision"
    );
    assert!(quiet.lb_records().is_empty());
    let flowlets: Vec<(u16, u16)> = loud
        .lb_records()
        .iter()
        .map(|r| match r.event.path {
            Some(m) if r.event.name == "flowlet" => (m.old, m.new),
            _ => panic!("{switch}: {:?}", r.event),
        })
        .collect();
    let moved = flowlets.iter().filter(|(o, n)| o != n).count() as u64;
    assert_eq!(stat(&loud, "flowlets"), flowlets.len() as u64, "{switch}");
    assert_eq!(stat(&loud, "reroutes"), moved, "{switch}");
    assert!(
        flowlets.len() > 16 && moved > 0,
        "{switch}: {} flowlets, {moved} moved",
        flowlets.len()
    );
    for sim in [&quiet, &loud] {
        assert_eq!(sim.summary(0.0).reroutes, moved, "{switch}");
        assert_eq!(stat(sim, "flowlets"), flowlets.len() as u64);
    }
    // Every flow's first flowlet is no move; the paths are the leaf pair's 4.
    assert!(
        flowlets.iter().all(|&(o, n)| o < 4 && n < 4),
        "{switch}: {flowlets:?}"
    );
}

#[test]
fn letflow_reports_its_flowlets_at_every_switch_and_at_the_source_tor() {
    flowlets_reported(r#"{ scheme = "letflow", timeout = "2us""#);
    flowlets_reported(r#"{ scheme = "letflow", timeout = "2us", at = "source-tor""#);
}

#[test]
fn conga_reports_its_flowlets() {
    flowlets_reported(r#"{ scheme = "conga", flowlet = "2us""#);
}
