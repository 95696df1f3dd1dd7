//! Reunion in real simulations at small scale: convergence to at most t elephants per link on
//! a 2-tier Clos with as many elephants per ToR pair as disjoint paths, and conservation plus
//! determinism under the RoCE transports (PFC with go-back-N, IRN without PFC).
mod common;

use std::collections::BTreeMap;

use repsim::engine::time::US;
use repsim::Simulation;

/// 4 leaves x 4 spines x 4 hosts at 100 Gb/s; host i of leaf L sends `size` to host i of leaf
/// L + 1: four elephants per ToR pair, four disjoint paths per pair (one per spine).
fn clos(size: &str, extra: &str) -> String {
    clos_with(LB_REUNION, size, extra)
}

/// The scenario's `lb` line in [`clos`].
const LB_REUNION: &str = r#"lb = [{ scheme = "ecmp", label = "reunion", switch = { scheme = "reunion", interval = "100us" } }]"#;

/// [`clos`] with another `lb` line.
fn clos_with(lb: &str, size: &str, extra: &str) -> String {
    let flows: Vec<String> = (0..16)
        .map(|h| format!("{{ src = {h}, dst = {}, size = \"{size}\" }}", (h + 4) % 16))
        .collect();
    format!(
        r#"
seed = 3
end = "1s"
{LB_REUNION}
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
        flows.join(", "),
        LB_REUNION = lb,
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
    for s in sim.elephant_link_samples() {
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
    // elephants run (the last intervals, as flows finish, only get better). The ECMP
    // collisions show once the sketch has seen 1 MB per flow, the destinations notify at the
    // interval's end and the sources move the named flows as the notifications arrive.
    let settled = worst.iter().rposition(|&(_, w)| w > 1).map_or(0, |i| i + 1);
    assert!(
        settled <= 8,
        "still colliding after {settled} intervals of 100 us: {worst:?}"
    );
    assert!(worst.len() > settled + 3, "and stays converged: {worst:?}");
    let reroutes = sim
        .lb_records()
        .iter()
        .filter(|r| r.event.name == "rerouted" && r.event.path.is_some())
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
        sim.elephant_link_samples(),
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

/// Elephants per link from `[metrics] elephants`, whatever the scheme: under ECMP each of the
/// 16 elephants (20 MB) keeps one path, so in every period where all run, each leaf's uplinks carry
/// exactly its 4 elephants between them; flows under `min_size` are not counted; the count
/// does not perturb the run; and under Reunion it replaces the scheme's own count.
#[test]
fn elephants_metric_counts_per_link_for_any_scheme() {
    const EVERY: u64 = 100 * US;
    let metric =
        |min: &str| format!("[metrics]\nelephants = {{ every = \"100us\", min_size = \"{min}\" }}");
    let ecmp = |extra: &str| {
        let scn = common::parse(&clos_with(r#"lb = ["ecmp"]"#, "20MB", extra));
        common::run(&scn, "ecmp", None)
    };
    let sim = ecmp(&metric("1MB"));
    common::assert_all_delivered(&sim);
    let samples = sim.elephant_link_samples();
    assert!(!samples.is_empty());
    let topo = sim.topology();
    let finish = sim
        .flows()
        .iter()
        .filter_map(|f| f.finish)
        .min()
        .expect("finished");
    let mut per_leaf: BTreeMap<(u64, u32), u32> = BTreeMap::new();
    for s in &samples {
        assert_eq!(
            s.time % EVERY,
            0,
            "periods end on multiples of 100 us: {s:?}"
        );
        let link = &topo.links[s.link as usize];
        assert!(link.from >= topo.hosts && link.to >= topo.hosts, "{s:?}");
        assert!(s.elephants >= 1 && s.elephants <= 4, "{s:?}");
        // Leaves are the first four switches.
        let from = link.from - topo.hosts;
        if from < 4 {
            *per_leaf.entry((s.time, from)).or_default() += s.elephants;
        }
    }
    let full: Vec<_> = per_leaf
        .iter()
        .filter(|(&(time, _), _)| time >= 2 * EVERY && time < finish)
        .collect();
    assert!(full.len() >= 4 * 5, "several full periods: {per_leaf:?}");
    for (key, &n) in full {
        assert_eq!(n, 4, "leaf {} at {} us: its 4 elephants", key.1, key.0 / US);
    }
    // Unperturbed, and nothing under the size floor.
    let plain = ecmp("");
    assert_eq!(fingerprint(&plain), fingerprint(&ecmp(&metric("30MB"))));
    assert!(ecmp(&metric("30MB")).elephant_link_samples().is_empty());
    assert_eq!(common::fcts(&plain), common::fcts(&sim));
    // Under Reunion the metric's periods (every 50 us from 0; Reunion's own interval is
    // 100 us) replace the sketch's count. (With 100 us periods the two counts can be equal:
    // once Reunion has converged, every flow it counts is one the metric counts.)
    let own = run(&clos("4MB", ""));
    let counted = run(&clos(
        "4MB",
        "[metrics]\nelephants = { every = \"50us\", min_size = \"1MB\" }",
    ));
    assert_eq!(common::fcts(&own), common::fcts(&counted));
    assert_eq!(own.lb_records(), counted.lb_records());
    assert_ne!(own.elephant_link_samples(), counted.elephant_link_samples());
    assert!(counted
        .elephant_link_samples()
        .iter()
        .any(|s| s.time == EVERY / 2));
    assert!(own
        .elephant_link_samples()
        .iter()
        .all(|s| s.time % EVERY == 0));
}
