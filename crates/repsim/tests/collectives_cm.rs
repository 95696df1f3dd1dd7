//! The reference's collective connection matrices (ring and butterfly AllReduce, AllToAll in
//! rounds) import with their triggers and complete, and no flow starts before the flows its
//! trigger waits for have finished; instant triggers release at the activating flow's finish,
//! notice triggers one crossing of the fabric later, and both run the same on threads (a
//! split keeps the hosts an instant trigger joins in one partition).
mod common;

use repsim::engine::time::US;
use repsim::sim::parallel::{run_on_threads, run_on_threads_observed};
use repsim::sim::{Flow, Injector, Observer, SplitSimulation};
use repsim::workload::cm::parse_matrix;
use repsim::workload::{FlowSpec, TriggerKind};
use repsim::Simulation;

fn run_matrix(file: &str, hosts: u32, flows: usize) {
    let text = std::fs::read_to_string(common::scenario_path(&format!(
        "../data/htsim/connection_matrices/{file}"
    )))
    .unwrap();
    let m = parse_matrix(&text, hosts).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(m.flows.len(), flows, "{file}");
    let scn = common::parse(&cm_scenario(file, hosts, "instant", "1s"));
    let sim = common::run(&scn, "reps", None);
    common::assert_all_delivered(&sim);
    assert_eq!(sim.flows().len(), flows);
    // Finish times of the activators of each trigger, in completion order.
    let by_id = |id: u64| sim.flows().iter().find(|f| f.spec.id == id).unwrap();
    for t in &m.triggers {
        let mut done: Vec<u64> = m
            .flows
            .iter()
            .filter(|f| f.fires == Some(t.id))
            .map(|f| by_id(f.id).finish.unwrap())
            .collect();
        done.sort_unstable();
        let waiting: Vec<u64> = m
            .flows
            .iter()
            .filter(|f| f.trigger == Some(t.id))
            .map(|f| by_id(f.id).started_at.unwrap())
            .collect();
        for (i, &start) in waiting.iter().enumerate() {
            let released_at = match t.kind {
                TriggerKind::Oneshot => done[0],
                TriggerKind::Barrier { count } => done[count as usize - 1],
                // The i-th flow waiting on a multishot trigger goes at its i-th activation.
                TriggerKind::Multishot => done[i],
            };
            assert!(
                start >= released_at,
                "{file}: trigger {} released a flow at {start} before {released_at}",
                t.id
            );
        }
    }
}

#[test]
fn ring_allreduce_matrix_runs_in_order() {
    run_matrix("all_red_ring_8mb.cm", 16, 496);
}

#[test]
fn butterfly_allreduce_matrix_runs_in_order() {
    run_matrix("all_red_butterfly.cm", 16, 64);
}

#[test]
fn alltoall_matrix_runs_in_rounds() {
    run_matrix("alltoall8.cm", 32, 992);
}

/// A 2-tier tree of `hosts` hosts (4 per ToR, 400 Gbps, 1 us links) running the reference
/// connection matrix `file` under REPS until `end`, its triggers `triggers` ("instant" or
/// "notice").
fn cm_scenario(file: &str, hosts: u32, triggers: &str, end: &str) -> String {
    format!(
        r#"
seed = 3
end = "{end}"
lb = "reps"
[topology]
type = "fat_tree"
tiers = 2
hosts = {hosts}
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[workload]
type = "cm"
file = "../data/htsim/connection_matrices/{file}"
triggers = "{triggers}"
"#
    )
}

/// The 16-host ring AllReduce matrix on a 16-host tree, its triggers `triggers`.
fn ring_16(triggers: &str) -> String {
    cm_scenario("all_red_ring_8mb.cm", 16, triggers, "1s")
}

fn build(text: &str) -> Simulation {
    let scn = common::parse(text);
    Simulation::new(scn.build("reps", None).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// Each ring step's flow starts when the previous step's finishes (instant) or when the news
/// has crossed the fabric from its source to the next one (notice: 2 links within a ToR, 4
/// across; the unloaded one-way latency).
#[test]
fn instant_triggers_release_at_once_and_notices_one_crossing_later() {
    for triggers in ["instant", "notice"] {
        let mut sim = build(&ring_16(triggers));
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        let flows = sim.flows();
        let by_id = |id: u64| flows.iter().find(|f| f.spec.id == id).unwrap();
        let mut checked = 0;
        for f in flows.iter().filter(|f| f.spec.fires.is_some()) {
            let k = f.spec.fires.unwrap();
            for w in flows.iter().filter(|w| w.spec.trigger == Some(k)) {
                let crossing = match (triggers, f.spec.src / 4 == w.spec.src / 4) {
                    ("instant", _) => 0,
                    (_, true) if f.spec.src == w.spec.src => 0,
                    (_, true) => 2 * US,
                    (_, false) => 4 * US,
                };
                assert_eq!(
                    w.started_at.unwrap(),
                    by_id(f.spec.id).finish.unwrap() + crossing,
                    "{triggers}: flow {} after flow {}",
                    w.spec.id,
                    f.spec.id
                );
                checked += 1;
            }
        }
        assert!(checked > 400, "{triggers}: {checked} releases checked");
    }
}

/// The rows, counters and one flow added while the run goes (id 9000, waiting on trigger 1,
/// open by then) of the notice ring stepped on `threads` threads.
fn stepped_ring(threads: u32) -> (Vec<repsim::metrics::FlowRow>, String, Option<u64>) {
    let text = ring_16("notice");
    let mut sim = SplitSimulation::new(threads, || Ok(build(&text))).expect("splits");
    assert!(sim.run_until(400 * US));
    // Trigger 1 (oneshot, home host 0) has fired: the flow from host 9 hears of it one crossing
    // from host 0 later and starts.
    let mut late = FlowSpec::new(9000, 9, 14, 64 << 10, 0);
    late.trigger = Some(1);
    let index = sim.add_flow(late).expect("added");
    sim.run_until_idle();
    assert!(sim.all_done(), "{threads} threads");
    let started = sim.flow(index).and_then(|f| f.started_at);
    let sim = sim.into_simulation();
    (sim.flow_rows(), format!("{:?}", sim.counters()), started)
}

#[test]
fn notice_triggers_run_the_same_on_threads() {
    let one = stepped_ring(1);
    assert_eq!(one.2, Some(400 * US + 4 * US), "the late flow's start");
    for threads in [2, 3, 8] {
        assert_eq!(stepped_ring(threads), one, "{threads} threads");
    }
}

/// Adds, when it hears a ring flow finish, a flow from host 15 to host 9 waiting on the
/// trigger that flow fired (open by then: each is a oneshot).
struct FollowTrigger;

impl Observer for FollowTrigger {
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        if let Some(k) = flow.spec.fires.filter(|_| flow.spec.id < 20) {
            let mut next = FlowSpec::new(10_000 + flow.spec.id, 15, 9, 32 << 10, 0);
            next.trigger = Some(k);
            inject.add_flow(next);
        }
    }
}

#[test]
fn flows_an_observer_adds_on_open_triggers_run_the_same_on_threads() {
    let text = ring_16("notice");
    let run = |threads| {
        let sim = run_on_threads_observed(threads, || Ok(build(&text)), Box::new(FollowTrigger))
            .expect("splits");
        assert!(sim.all_done(), "{threads} threads");
        assert!(
            sim.rejected_flows().is_empty(),
            "{:?}",
            sim.rejected_flows()
        );
        (sim.flow_rows(), format!("{:?}", sim.counters()))
    };
    let one = run(1);
    assert_eq!(
        one.0.len(),
        496 + 19,
        "one follower per ring flow under id 20"
    );
    for threads in [2, 3, 8] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

/// An instant trigger acts at once on every host whose flows name it, so a split keeps those
/// hosts in one partition: the AllToAll matrix's triggers are each one host's, the ring's join
/// all of its hosts, and both run on threads as on one. A flow added later that names an
/// instant trigger from a host in another partition than the trigger's home is refused.
#[test]
fn instant_triggers_keep_their_hosts_in_one_partition() {
    let alltoall = &cm_scenario("alltoall8.cm", 32, "instant", "400us");
    let mut one = build(alltoall);
    one.run_until(400 * US);
    let mut two = SplitSimulation::new(2, || Ok(build(alltoall))).expect("splits");
    assert!(two.partitions() > 1);
    // Trigger 1's flows all start at host 26.
    let split = build(alltoall).partitioning(2);
    let home = split.of_node[26];
    let apart = (0..32u32)
        .find(|&h| split.of_node[h as usize] != home)
        .expect("a host in the other partition");
    let mut stranger = FlowSpec::new(9000, apart, 27, 1000, 0);
    stranger.trigger = Some(1);
    let err = two.add_flow(stranger.clone()).unwrap_err().to_string();
    assert!(
        err.contains("instant trigger 1") && err.contains("another partition"),
        "{err}"
    );
    assert!(one.add_flow(stranger).is_ok(), "one thread takes it");
    two.run_until(400 * US);
    let two = two.into_simulation();
    assert_eq!(
        two.flow_rows()[..992],
        one.flow_rows()[..992],
        "the matrix's flows"
    );

    let ring = ring_16("instant");
    let built = build(&ring);
    assert_eq!(
        built.hosts_kept_together(),
        vec![(0..16).collect::<Vec<u32>>()]
    );
    let split = built.partitioning(2);
    assert!(split.parts > 1, "the aggregation switches still split off");
    assert!((0..16).all(|h| split.of_node[h] == split.of_node[0]));
    let rows = |threads| {
        let sim = run_on_threads(threads, || Ok(build(&ring))).expect("splits");
        assert!(sim.all_done(), "{threads} threads");
        (sim.flow_rows(), format!("{:?}", sim.counters()))
    };
    let one = rows(1);
    for threads in [2, 3, 8] {
        assert_eq!(rows(threads), one, "{threads} threads");
    }
}
