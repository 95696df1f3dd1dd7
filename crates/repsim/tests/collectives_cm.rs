//! The reference's collective connection matrices (ring and butterfly AllReduce, AllToAll in
//! rounds) import with their triggers and complete, and no flow starts before the flows its
//! trigger waits for have finished.
mod common;

use repsim::workload::cm::parse_matrix;
use repsim::workload::TriggerKind;

fn run_matrix(file: &str, hosts: u32, flows: usize) {
    let text = std::fs::read_to_string(common::scenario_path(&format!(
        "../data/htsim/connection_matrices/{file}"
    )))
    .unwrap();
    let m = parse_matrix(&text, hosts).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(m.flows.len(), flows, "{file}");
    let scn = common::parse(&format!(
        r#"
seed = 3
end = "1s"
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
"#
    ));
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
