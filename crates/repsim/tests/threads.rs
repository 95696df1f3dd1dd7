//! One run on several threads through the library: the same flows and counters as one thread,
//! and a refusal, naming the reason, for a run whose state would be shared.
mod common;

use repsim::sim::parallel::run_on_threads;
use repsim::sim::Observer;
use repsim::Simulation;

fn permutation() -> String {
    let tree = common::TREE_32;
    format!(
        r#"
seed = 5
lb = "reps"
{tree}
[workload]
type = "permutation"
size = "256KiB"
"#
    )
}

fn build(text: &str) -> Simulation {
    let scn = common::parse(text);
    Simulation::new(scn.build("reps", None).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

#[test]
fn every_thread_count_ends_as_one_thread() {
    let text = permutation();
    let mut one = build(&text);
    one.run_until_idle();
    assert!(one.all_done());
    for threads in [2, 3, 8] {
        let many = run_on_threads(threads, || Ok(build(&text))).expect("splits");
        assert_eq!(many.counters(), one.counters(), "{threads} threads");
        assert_eq!(many.books(), one.books(), "{threads} threads");
        assert_eq!(many.flow_rows(), one.flow_rows(), "{threads} threads");
        assert_eq!(many.lb_records(), one.lb_records(), "{threads} threads");
        let ports = |s: &Simulation| format!("{:?}", s.port_stats());
        assert_eq!(ports(&many), ports(&one), "{threads} threads");
        assert_eq!(many.last_event_time(), one.last_event_time());
    }
}

struct Listener;
impl Observer for Listener {}

#[test]
fn an_observer_keeps_a_run_on_one_thread() {
    let text = permutation();
    let refused = run_on_threads(2, || {
        let mut sim = build(&text);
        sim.set_observer(Box::new(Listener));
        Ok(sim)
    });
    let why = refused.err().expect("refused").to_string();
    assert!(why.contains("an observer"), "{why}");
}
