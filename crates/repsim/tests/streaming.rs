//! Streaming: a trace run that drops its finished flows as it goes reports the same summary
//! as one that keeps them all, and holds only the flows still around.
mod common;

use repsim::engine::time::US;
use repsim::sim::Phase;
use repsim::Simulation;

fn trace(lb: &str) -> String {
    let tree = common::TREE_32;
    format!(
        r#"
seed = 11
lb = "{lb}"
{tree}
[workload]
type = "trace"
cdf = "../data/cdf/WebSearch_distribution.txt"
load = 0.6
arrivals = "poisson"
duration = "600us"
"#
    )
}

#[test]
fn dropping_finished_flows_changes_no_statistic_and_frees_their_records() {
    for lb in ["reps", "ecmp"] {
        let scn = common::parse(&trace(lb));
        let whole = common::run(&scn, lb, None);
        let mut sim = Simulation::new(scn.build(lb, None).unwrap()).unwrap();
        sim.stream_finished();
        let (mut handed_out, mut most_held, mut t) = (Vec::new(), 0, 0);
        let (mut dropped_by_end_of_arrivals, mut waited_light) = (0, 0);
        loop {
            t += 20 * US;
            let more = sim.run_until(t);
            most_held = most_held.max(sim.flows().len());
            // A finished flow still held (behind a slower one) keeps no sender, and its
            // receiver only until it hears of the finish, one crossing of the fabric later.
            for f in sim.flows().iter().filter(|f| f.phase == Phase::Done) {
                assert!(f.sender().is_none(), "{lb}");
                let finished = f.finish.expect("done flows finished");
                assert!(
                    f.receiver().is_none() || t - finished < 10 * US,
                    "{lb}: a receiver kept {} us after the finish",
                    (t - finished) / US
                );
                waited_light += 1;
            }
            for f in sim.drop_finished_prefix() {
                assert!(
                    sim.flow(f.index).is_none(),
                    "{lb}: flow {} dropped",
                    f.index
                );
                handed_out.push(f);
            }
            assert_eq!(sim.first_held_flow() as usize, handed_out.len());
            if t == 600 * US {
                dropped_by_end_of_arrivals = handed_out.len();
            }
            if !more {
                break;
            }
        }
        // Every flow finished and left, in index order, with what the full run recorded.
        assert!(sim.flows().is_empty(), "{lb}: all dropped at the end");
        assert_eq!(handed_out.len(), whole.flows().len());
        for (i, (got, want)) in handed_out.iter().zip(whole.flows()).enumerate() {
            assert_eq!(got.index as usize, i);
            assert_eq!(got.spec.id, want.spec.id);
            assert_eq!(Some(got.finish), want.finish, "{lb}: flow {i}");
        }
        // Flows left while arrivals went on: the table never held the whole trace.
        assert!(
            dropped_by_end_of_arrivals > 0 && most_held < handed_out.len(),
            "{lb}: at most {most_held} of {} flows held at once",
            handed_out.len()
        );
        assert!(
            waited_light > 0,
            "{lb}: some finished flow waited behind a slower one"
        );
        let (a, mut b) = (sim.summary(0.0), whole.summary(0.0));
        assert!(b.flows_total > 100, "{lb}: a real trace");
        b.wall_s = a.wall_s;
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{lb}: streamed summary differs"
        );
    }
}

#[test]
fn without_streaming_nothing_is_dropped() {
    let scn = common::parse(&trace("ops"));
    let mut sim = Simulation::new(scn.build("ops", None).unwrap()).unwrap();
    sim.run_until_idle();
    assert!(sim.drop_finished_prefix().is_empty());
    assert_eq!(sim.first_held_flow(), 0);
    assert!(sim.flow(0).is_some());
}
