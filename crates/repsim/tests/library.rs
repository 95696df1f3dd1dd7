//! The library API as a user drives it: the clock after `run_until`, late flows, stepping from
//! completion to completion, dependencies, observers, retiring finished flows, and moving a
//! run to another thread.
mod common;

use std::sync::{Arc, Mutex};

use repsim::engine::time::{MS, US};
use repsim::lb::{LbRecord, LbSpec};
use repsim::net::topology::fat_tree::FatTreeSpec;
use repsim::net::Kind;
use repsim::sim::{
    DropCause, Flow, Injector, Observer, PacketDrop, Phase, SetupError, OBSERVER_SLICE,
};
use repsim::units::{Size, SizeQ};
use repsim::workload::FlowSpec;
use repsim::{RunSpec, SimConfig, Simulation};

/// A 16-host two-tier fat tree of 400 Gbps links, 1 us each.
fn small_tree() -> repsim::net::Topology {
    FatTreeSpec::uniform(2, 16, 4, 16, 1, 400_000_000_000, US, 0)
        .and_then(|spec| spec.build())
        .expect("a valid tree")
}

fn config(lb: &str) -> SimConfig {
    SimConfig {
        lb: LbSpec::named(lb).expect("built in"),
        ..SimConfig::default()
    }
}

fn sim(lb: &str, flows: Vec<FlowSpec>) -> Simulation {
    Simulation::new(RunSpec::new(config(lb), small_tree(), flows)).expect("valid run")
}

#[test]
fn run_until_leaves_the_clock_at_t_and_a_late_flow_starts_then() {
    let mut alone = sim("ecmp", vec![FlowSpec::new(1, 0, 12, 1 << 20, 0)]);
    alone.run_until_idle();
    let reference = alone.flows()[0].fct().unwrap();

    let mut s = sim("ecmp", Vec::new());
    assert!(!s.run_until(50 * US), "nothing to do");
    assert_eq!(s.now(), 50 * US);
    // Asked to start at 0, which has passed: it starts now.
    let index = s.add_flow(FlowSpec::new(1, 0, 12, 1 << 20, 0)).unwrap();
    s.run_until_idle();
    let flow = &s.flows()[index as usize];
    assert_eq!(flow.started_at, Some(50 * US));
    // Completion time runs from the effective start: the same as on an idle network at 0.
    assert_eq!(flow.fct(), Some(reference));
    assert_eq!(flow.finish, Some(50 * US + reference));
}

#[test]
fn run_until_completion_steps_from_one_finished_flow_to_the_next() {
    let sizes = [4u64 << 20, 64 << 10, 1 << 20];
    let flows = (0..3)
        .map(|i| FlowSpec::new(i as u64 + 1, i, 12 + i, sizes[i as usize], 0))
        .collect();
    let mut s = sim("reps", flows);
    let mut order = Vec::new();
    while let Some(f) = s.run_until_completion(10 * MS) {
        let flow = &s.flows()[f as usize];
        assert_eq!(flow.phase, Phase::Done);
        assert_eq!(s.now(), flow.finish.unwrap(), "stopped at the completion");
        order.push(f);
    }
    // Smallest first.
    assert_eq!(order, vec![1, 2, 0]);
    assert!(s.all_done());
    assert_eq!(
        s.now(),
        10 * MS,
        "no completion left: the clock goes to the limit"
    );
    assert!(s.take_completions().is_empty(), "handed out already");
}

#[test]
fn a_flow_waits_for_every_flow_it_depends_on_plus_its_delay() {
    let mut after = FlowSpec::new(3, 4, 8, 256 << 10, 0);
    after.after = vec![1, 2];
    after.delay = 3 * US;
    // Listed before the flows it waits for: a run's flows may point forwards.
    let flows = vec![
        after,
        FlowSpec::new(1, 0, 12, 2 << 20, 0),
        FlowSpec::new(2, 1, 13, 512 << 10, 5 * US),
    ];
    let mut s = sim("reps", flows);
    s.run_until_idle();
    let f = s.flows();
    assert!(f.iter().all(|f| f.phase == Phase::Done));
    assert_eq!(f[2].started_at, Some(5 * US), "its own start time");
    // It starts once its source (host 4) has heard of the later finish, one crossing of the
    // fabric from that flow's source (4 links of 1 us in this tree), then waits its delay.
    let (first, second) = (f[1].finish.unwrap(), f[2].finish.unwrap());
    assert_ne!(first, second);
    let last = first.max(second);
    assert_eq!(f[0].started_at, Some(last + 4 * US + 3 * US));

    // A dependency on a flow that finished already counts as met.
    let mut late = FlowSpec::new(4, 4, 8, 4096, 0);
    late.after = vec![1];
    let i = s.add_flow(late).unwrap();
    s.run_until_idle();
    assert_eq!(s.flows()[i as usize].phase, Phase::Done);

    // Unknown or duplicate ids are refused with the reason.
    let mut unknown = FlowSpec::new(5, 0, 1, 4096, 0);
    unknown.after = vec![99];
    let err = s.add_flow(unknown).unwrap_err();
    assert!(matches!(err, SetupError::BadFlow { id: 5, .. }), "{err}");
    assert!(err.to_string().contains("99"), "{err}");
    let err = s.add_flow(FlowSpec::new(1, 0, 1, 4096, 0)).unwrap_err();
    assert!(err.to_string().contains("same id"), "{err}");
    // Hosts out of range too.
    let err = s.add_flow(FlowSpec::new(6, 0, 16, 4096, 0)).unwrap_err();
    assert!(err.to_string().contains("16"), "{err}");
}

#[derive(Default)]
struct Seen {
    completed: Vec<(u64, u64)>,
    lb_events: usize,
    drops: Vec<PacketDrop>,
}

/// Records what it is told into a shared log; on each completion of a flow with tag 1 it adds
/// a follow-up flow back the other way, tagged 2.
struct Recorder(Arc<Mutex<Seen>>);

impl Observer for Recorder {
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        self.0
            .lock()
            .unwrap()
            .completed
            .push((flow.spec.id, flow.spec.tag));
        if flow.spec.tag == 1 {
            let mut back = FlowSpec::new(
                100 + flow.spec.id,
                flow.spec.dst,
                flow.spec.src,
                64 << 10,
                0,
            );
            back.tag = 2;
            inject.add_flow(back);
        }
    }
    fn lb_event(&mut self, _record: &LbRecord) {
        self.0.lock().unwrap().lb_events += 1;
    }
    fn packet_dropped(&mut self, drop: &PacketDrop) {
        self.0.lock().unwrap().drops.push(*drop);
    }
}

#[test]
fn an_observer_hears_completions_lb_events_and_drops_and_can_add_flows() {
    // An 8-to-1 incast into small queues without trimming: drops, timeouts, REPS events.
    let flows = (0..8)
        .map(|i| {
            let mut f = FlowSpec::new(i as u64 + 1, i, 15, 512 << 10, 0);
            f.tag = 1;
            f
        })
        .collect();
    let mut cfg = config("reps");
    cfg.queue.size = SizeQ(Size::Packets(8.0));
    cfg.queue.ecn_min = SizeQ(Size::Packets(2.0));
    cfg.queue.ecn_max = SizeQ(Size::Packets(6.0));
    cfg.queue.trimming = false;
    let mut s = Simulation::new(RunSpec::new(cfg, small_tree(), flows)).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    s.set_observer(Box::new(Recorder(seen.clone())));
    s.run_until_idle();

    let seen = seen.lock().unwrap();
    assert_eq!(s.flows().len(), 16, "eight follow-ups were added");
    assert!(s.all_done());
    assert!(s.rejected_flows().is_empty());
    assert_eq!(seen.completed.len(), 16);
    // Each follow-up started at the end of the slice its trigger finished in, when the
    // observer heard of it.
    for f in &s.flows()[8..] {
        assert_eq!(f.spec.tag, 2);
        let trigger = &s.flows()[(f.spec.id - 100 - 1) as usize];
        let heard_at = trigger
            .finish
            .map(|t| t.div_ceil(OBSERVER_SLICE) * OBSERVER_SLICE);
        assert_eq!(f.started_at, heard_at);
    }
    assert_eq!(seen.lb_events, s.lb_records().len());
    let c = s.counters();
    assert!(c.data_dropped > 0, "the incast should overflow");
    let data_drops = seen.drops.iter().filter(|d| d.kind == Kind::Data).count() as u64;
    assert_eq!(data_drops, c.data_dropped);
    assert_eq!(seen.drops.len() as u64, c.data_dropped + c.control_dropped);
    assert!(seen.drops.iter().all(|d| d.cause == DropCause::Overflow));
    // Each port's drop counter agrees with what the observer heard, and the receiver's ToR
    // port, the incast's last hop, lost more than any other.
    let data = || seen.drops.iter().filter(|d| d.kind == Kind::Data);
    let per_port: Vec<u64> = s
        .port_stats()
        .iter()
        .enumerate()
        .map(|(p, st)| {
            assert_eq!(
                st.drops,
                data().filter(|d| d.port == p as u32).count() as u64
            );
            st.drops
        })
        .collect();
    let last_hop = s.topology().links_between(s.topology().switch_node(3), 15)[0];
    assert_eq!(per_port.iter().max(), Some(&per_port[last_hop as usize]));
}

#[test]
fn retired_flows_are_handed_out_once_and_free_their_state() {
    let flows = (0..4)
        .map(|i| FlowSpec::new(i as u64 + 1, i, 8 + i, (i as u64 + 1) << 18, 0))
        .collect();
    let mut s = sim("reps", flows);
    let mut retired = Vec::new();
    while !s.all_done() {
        s.run_until_completion(10 * MS).expect("a flow finishes");
        for f in s.retire_finished() {
            assert!(
                s.flows()[f.index as usize].sender().is_none(),
                "state freed"
            );
            assert!(s.flows()[f.index as usize].receiver().is_none());
            retired.push(f);
        }
        // The others keep running with their state.
        assert!(s
            .flows()
            .iter()
            .filter(|f| f.phase != Phase::Done)
            .all(|f| f.sender().is_some()));
    }
    assert!(s.retire_finished().is_empty(), "each flow once");
    let mut ids: Vec<u64> = retired.iter().map(|f| f.spec.id).collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3, 4]);
    for f in &retired {
        let flow = &s.flows()[f.index as usize];
        assert_eq!(f.finish - f.started_at, flow.fct().unwrap());
        assert_eq!(f.stats, flow.stats, "counters stay readable");
        assert_eq!(flow.delivered, f.spec.bytes);
    }
}

#[test]
fn where_a_run_pauses_does_not_change_it() {
    // The command line pauses a run every microsecond while a progress bar or a limit watches
    // it, and every 50 us otherwise; the results must not depend on it.
    let flows = || repsim::workload::permutation(16, 1 << 20, 0, 3);
    let mut whole = sim("reps", flows());
    whole.run_until_idle();
    let mut stepped = sim("reps", flows());
    let mut t = 0;
    while stepped.run_until(t) {
        t += US;
    }
    let finishes = |s: &Simulation| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert!(whole.all_done() && stepped.all_done());
    assert!(t > 20 * US, "paused many times ({} us)", t / US);
    assert_eq!(finishes(&whole), finishes(&stepped));
    assert_eq!(whole.counters(), stepped.counters());
}

#[test]
fn a_simulation_moves_to_another_thread_and_runs_the_same() {
    let flows = || repsim::workload::permutation(16, 1 << 20, 0, 3);
    let mut here = sim("reps", flows());
    here.run_until(30 * US);
    let there = sim("reps", flows());
    let mut there = std::thread::spawn(move || {
        let mut there = there;
        there.run_until(30 * US);
        there
    })
    .join()
    .unwrap();
    // Half on one thread, half on another: no difference.
    here.run_until_idle();
    let there = std::thread::spawn(move || {
        there.run_until_idle();
        there
    })
    .join()
    .unwrap();
    let finishes = |s: &Simulation| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert!(here.all_done());
    assert_eq!(finishes(&here), finishes(&there));
    assert_eq!(here.counters(), there.counters());
}

#[test]
fn a_lazy_source_adds_each_flow_when_its_start_comes() {
    // 100 flows, one every 2 us, produced only when asked for.
    let mut made = 0u64;
    let source = move || {
        (made < 100).then(|| {
            made += 1;
            let src = (made % 8) as u32;
            FlowSpec::new(made, src, 8 + src, 64 << 10, made * 2 * US)
        })
    };
    let mut s = sim("reps", Vec::new());
    s.add_source(Box::new(source));
    s.run_until(51 * US);
    // Flows 1..=25 have started (at 2, 4, ..., 50 us); the 26th is not yet made.
    assert_eq!(s.flows().len(), 25);
    assert!(s.flows().iter().all(|f| f.started_at == Some(f.spec.start)));
    s.run_until_idle();
    assert_eq!(s.flows().len(), 100);
    assert!(s.all_done());
    assert!(s.rejected_flows().is_empty());

    // Added later, a source whose flows are due already starts them now; a bad flow is
    // refused with the reason and the rest still run.
    let now = s.now();
    let mut late = vec![
        FlowSpec::new(500, 0, 9, 4096, 0),
        FlowSpec::new(501, 0, 99, 4096, 0),
        FlowSpec::new(502, 1, 10, 4096, 0),
    ]
    .into_iter();
    s.add_source(Box::new(move || late.next()));
    s.run_until_idle();
    assert_eq!(s.flows().len(), 102);
    assert!(s.flows()[100..].iter().all(|f| f.started_at == Some(now)));
    assert_eq!(s.rejected_flows().len(), 1);
    assert!(
        s.rejected_flows()[0].contains("501"),
        "{:?}",
        s.rejected_flows()
    );
}

#[test]
fn every_reps_coalescing_variant_is_reachable_from_a_scenario() {
    // ACKs every 4 packets: the variants differ in which of the 4 EVs an ACK recycles.
    let run = |coalescing: &str| {
        let text = format!(
            r#"
seed = 4
lb = {{ scheme = "reps", coalescing = "{coalescing}" }}
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
[transport]
ack_every = "4pkt"
[workload]
type = "permutation"
size = "1MiB"
"#
        );
        let scn = common::parse(&text);
        let run = scn.runs().unwrap().remove(0);
        let mut s = Simulation::new(scn.build_run(&run, None).unwrap()).unwrap();
        s.run_until_idle();
        common::assert_all_delivered(&s);
        s.flows()
            .iter()
            .map(|f| f.finish.unwrap())
            .collect::<Vec<_>>()
    };
    let per_ack = run("per_ack");
    let carry = run("carry_evs");
    let reuse = run("reuse_evs");
    // Same seed, same traffic: only the coalescing rule differs, and it changes the paths.
    assert_ne!(per_ack, carry);
    assert_ne!(per_ack, reuse);
    assert_ne!(carry, reuse);
}

/// The memory breakdown after a run still counts the senders' and receivers' windows, which
/// finished flows free: never less than while the flows were running.
#[test]
fn memory_breakdown_keeps_finished_flows_windows() {
    let endpoints = |s: &Simulation| {
        s.memory_breakdown()
            .into_iter()
            .find(|i| i.name.starts_with("senders and receivers"))
            .expect("a line for them")
            .bytes
    };
    let flows = (0..8)
        .map(|i| FlowSpec::new(i as u64 + 1, i, 8 + i, 1 << 20, 0))
        .collect();
    let mut s = sim("reps", flows);
    s.run_until(10 * US);
    let running = endpoints(&s);
    assert!(running > 0, "windows allocated while the flows run");
    s.run_until_idle();
    assert!(s.flows().iter().all(|f| f.phase == Phase::Done));
    assert!(
        endpoints(&s) >= running,
        "after the run: {} B, while running: {running} B",
        endpoints(&s)
    );
}
