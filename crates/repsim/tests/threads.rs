//! One run on several threads through the library: the same flows and counters as one thread,
//! the same calls to an observer, and the same run stepped from outside.
mod common;

use std::sync::{Arc, Mutex};

use repsim::engine::time::{MS, US};
use repsim::lb::LbRecord;
use repsim::metrics::FlowRow;
use repsim::sim::parallel::{run_on_threads, run_on_threads_observed};
use repsim::sim::{Flow, Injector, Observer, PacketDrop, SplitSimulation};
use repsim::workload::FlowSpec;
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

/// Everything an observer hears, in order, with the times of the flows it hears finish.
#[derive(Default, Debug, PartialEq)]
struct Heard {
    completed: Vec<(u64, Option<u64>, u64)>,
    lb: Vec<LbRecord>,
    drops: Vec<PacketDrop>,
}

/// Logs what it hears; each finished flow of the workload's (ids under 1000) has its receiver
/// answer its sender with a follow-up (id + 1000, tag 2), which waits for the follow-up
/// injected before it.
struct Logger {
    log: Arc<Mutex<Heard>>,
    last: Option<u64>,
}

impl Observer for Logger {
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        let mut log = self.log.lock().unwrap();
        log.completed
            .push((flow.spec.id, flow.finish, flow.spec.tag));
        if flow.spec.id < 1000 {
            let id = 1000 + flow.spec.id;
            let mut back = FlowSpec::new(id, flow.spec.dst, flow.spec.src, 64 << 10, 0);
            back.tag = 2;
            back.after = self.last.into_iter().collect();
            self.last = Some(id);
            inject.add_flow(back);
        }
    }
    fn lb_event(&mut self, record: &LbRecord) {
        self.log.lock().unwrap().lb.push(*record);
    }
    fn packet_dropped(&mut self, drop: &PacketDrop) {
        self.log.lock().unwrap().drops.push(*drop);
    }
}

fn logger() -> (Box<Logger>, Arc<Mutex<Heard>>) {
    let log = Arc::new(Mutex::new(Heard::default()));
    let logger = Logger {
        log: log.clone(),
        last: None,
    };
    (Box::new(logger), log)
}

/// An incast into small queues without trimming: drops, REPS events, completions.
fn incast() -> String {
    common::incast_32(3, "reps", "256KiB", (8, 2, 6), false, "")
}

#[test]
fn an_observer_hears_the_same_at_every_thread_count() {
    let text = incast();
    let mut runs = Vec::new();
    for threads in [1, 2, 3, 8] {
        let (observer, log) = logger();
        let sim = run_on_threads_observed(threads, || Ok(build(&text)), observer).expect("splits");
        assert!(sim.all_done(), "{threads} threads");
        assert!(
            sim.rejected_flows().is_empty(),
            "{:?}",
            sim.rejected_flows()
        );
        let heard = std::mem::take(&mut *log.lock().unwrap());
        runs.push((threads, sim.flow_rows(), sim.counters(), heard));
    }
    let (_, rows, counters, heard) = &runs[0];
    assert_eq!(rows.len(), 24, "twelve follow-ups were added");
    assert!(!heard.drops.is_empty() && !heard.lb.is_empty());
    assert_eq!(heard.completed.len(), 24);
    // A follow-up starts at the end of the slice its trigger finished in, or once the one it
    // waits for finishes, if later.
    let finish_of = |id: u64| rows.iter().find(|r| r.id == id).and_then(|r| r.finish_us);
    let mut waits = None;
    for &(id, ..) in heard.completed.iter().filter(|c| c.0 < 1000) {
        let row = rows
            .iter()
            .find(|r| r.id == id + 1000)
            .expect("its follow-up");
        let told = finish_of(id).expect("finished").ceil();
        let ready = waits.and_then(finish_of).map_or(told, |w: f64| w.max(told));
        assert!(
            (row.start_us - ready).abs() < 1e-9,
            "{row:?} ready at {ready}"
        );
        waits = Some(id + 1000);
    }
    for (threads, r, c, h) in &runs[1..] {
        assert_eq!(r, rows, "{threads} threads");
        assert_eq!(c, counters, "{threads} threads");
        assert_eq!(h, heard, "{threads} threads");
    }
}

/// What a stepped run shows: the flows in the order handed out, the clock and a count at each
/// step, the rows, and what the observer heard.
type Stepped = (Vec<u32>, Vec<(u64, u64)>, Vec<FlowRow>, Heard, Vec<String>);

/// Drives a run from outside: flows added between steps (one waiting for a finished flow),
/// stepping from completion to completion, and a completion callback that adds more.
fn stepped(threads: u32) -> Stepped {
    let text = permutation();
    let mut sim = SplitSimulation::new(threads, || Ok(build(&text))).expect("splits");
    let (observer, log) = logger();
    sim.set_observer(observer);
    let mut steps = Vec::new();
    assert!(sim.run_until(7 * US + 300_000));
    steps.push((sim.now(), sim.pending_events() as u64));
    let summary = |sim: &SplitSimulation| {
        let mut s = sim.summary(0.0, || Ok(build(&text))).expect("a summary");
        // What the partitions' arenas held, which measures the simulator, not the network.
        s.peak_packets = 0;
        format!("{s:?}")
    };
    let mut summaries = vec![summary(&sim)];
    let late = FlowSpec::new(500, 3, 29, 100 << 10, 0);
    sim.add_flow(late).expect("added");
    let mut order = Vec::new();
    while let Some(f) = sim.run_until_completion(10 * MS) {
        order.push(f);
        order.extend(sim.take_completions());
        steps.push((sim.now(), order.len() as u64));
        if order.len() == 2 {
            summaries.push(summary(&sim));
        }
        if order.len() == 4 {
            // Waits for the first finished flow, which is done: starts now.
            let mut after = FlowSpec::new(600, 30, 2, 32 << 10, 0);
            after.after = vec![sim.flow(order[0]).expect("a flow").spec.id];
            sim.add_flow(after).expect("added");
        }
    }
    assert!(sim.all_done());
    // Idle, then later a flow from outside: its completion is told at the end of its own
    // microsecond, the clock left there.
    let idle_until = sim.now() + 50 * US;
    assert!(!sim.run_until(idle_until));
    let last = sim
        .add_flow(FlowSpec::new(700, 9, 20, 16 << 10, 0))
        .expect("added");
    let now = sim.now();
    assert_eq!(
        sim.run_until_completion(now + MS),
        Some(last),
        "{threads} threads at {now}"
    );
    let finish = sim.flow(last).and_then(|f| f.finish).expect("finished");
    assert_eq!(sim.now(), finish.div_ceil(US) * US, "{threads} threads");
    steps.push((sim.now(), finish));
    order.push(last);
    order.extend(sim.take_completions());
    while let Some(f) = sim.run_until_completion(sim.now() + MS) {
        order.push(f);
        order.extend(sim.take_completions());
    }
    let rows = sim
        .flow_row_refs()
        .map(|r| r.map_strings(str::to_string))
        .collect();
    summaries.push(summary(&sim));
    let heard = std::mem::take(&mut *log.lock().unwrap());
    (order, steps, rows, heard, summaries)
}

#[test]
fn a_run_stepped_from_outside_is_the_same_at_every_thread_count() {
    let one = stepped(1);
    assert_eq!(one.0.len(), one.2.len(), "every flow was handed out once");
    for threads in [2, 3, 8] {
        assert_eq!(stepped(threads), one, "{threads} threads");
    }
}
