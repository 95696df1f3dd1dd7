//! Composable workloads: several `[[workload]]` entries side by side, each with its own type,
//! hosts, start and label; flow lists that fan in (many-to-one) and fan out (one-to-many);
//! the label in every flow row and statistics per workload in the summary, while a scenario
//! with one `[workload]` runs exactly as it always has.
mod common;

use repsim::scenario::{LoadedScenario, Override};

/// The shipped incast-beside-background scenario on a 32-host tree (the same two workloads,
/// a quicker run).
fn incast_with_background() -> LoadedScenario {
    let set = [
        "topology.hosts=32",
        "topology.hosts_per_tor=4",
        "workload[1].size=256KiB",
    ]
    .map(|kv| Override::parse(kv).unwrap());
    LoadedScenario::load_with(&common::scenario_path("incast-with-background.toml"), &set)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_incast_beside_a_background_permutation_labels_every_flow() {
    let scn = incast_with_background();
    let sim = common::run(&scn, "reps", None);
    common::assert_all_delivered(&sim);
    let rows = sim.flow_rows();
    let incast: Vec<_> = rows
        .iter()
        .filter(|r| r.workload.as_deref() == Some("incast"))
        .collect();
    let background: Vec<_> = rows
        .iter()
        .filter(|r| r.workload.as_deref() == Some("background"))
        .collect();
    assert_eq!(incast.len(), 16, "src = \"8-23\", dst = 0 makes 16 flows");
    assert!(incast
        .iter()
        .all(|r| r.dst == 0 && (8..=23).contains(&r.src)));
    assert!(incast
        .iter()
        .all(|r| r.start_us == 20.0 && r.bytes == 256 << 10));
    assert_eq!(background.len(), 32, "a permutation of the 32 hosts");
    assert_eq!(incast.len() + background.len(), rows.len());
    // Ids stay unique: the second workload's count on from the first's.
    let mut ids: Vec<u64> = rows.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), rows.len());
    assert_eq!(
        background.iter().map(|r| r.id).min(),
        Some(17),
        "the background's ids follow the incast's 1..=16"
    );
    // The summary's per-workload statistics are those of each label's rows.
    let summary = sim.summary(0.0);
    let per_workload = summary
        .workloads
        .expect("labelled workloads are summarized");
    assert_eq!(per_workload.len(), 2);
    for (w, rows) in per_workload.iter().zip([&incast, &background]) {
        assert_eq!(w.flows_total, rows.len());
        assert_eq!(w.flows_completed, rows.len());
        let max = rows.iter().filter_map(|r| r.fct_us).fold(0.0, f64::max);
        assert_eq!(w.fct_us.max, max, "{}", w.workload);
    }
    assert_eq!(per_workload[0].workload, "incast");
    assert_eq!(per_workload[1].workload, "background");
}

/// A permutation alone: the same flows as a `[workload]` table and as a one-entry
/// `[[workload]]` array, and no labels in either's outputs.
#[test]
fn one_workload_keeps_its_ids_seeds_and_outputs_in_either_form() {
    let tree = common::TREE_32;
    let body = "type = \"permutation\"\nsize = \"64KiB\"\n";
    let table = common::parse(&format!("lb = \"ecmp\"\n{tree}\n[workload]\n{body}"));
    let array = common::parse(&format!("lb = \"ecmp\"\n{tree}\n[[workload]]\n{body}"));
    let (a, b) = (
        table.build("ecmp", None).unwrap(),
        array.build("ecmp", None).unwrap(),
    );
    assert_eq!(a.flows, b.flows);
    assert!(a.workloads.is_empty() && b.workloads.is_empty());
    // The seed is the scenario's, as it always was.
    let expected = repsim::workload::permutation(32, 64 << 10, 0, table.scenario.seed);
    assert_eq!(a.flows, expected);
    let sim = common::run(&table, "ecmp", None);
    assert!(sim.flow_rows().iter().all(|r| r.workload.is_none()));
    assert!(sim.summary(0.0).workloads.is_none());
    // The scenario writes back in the form it was read in.
    assert!(table.resolved_toml(&[], None).contains("[workload]\n"));
    assert!(array.resolved_toml(&[], None).contains("[[workload]]\n"));
}

#[test]
fn two_permutations_side_by_side_draw_different_pairings() {
    let tree = common::TREE_32;
    let scn = common::parse(&format!(
        "lb = \"ecmp\"\n{tree}\n\
         [[workload]]\ntype = \"permutation\"\nsize = \"64KiB\"\n\
         [[workload]]\ntype = \"permutation\"\nsize = \"64KiB\"\nstart = \"5us\"\n"
    ));
    let run = scn.build("ecmp", None).unwrap();
    assert_eq!(run.workloads, ["workload[0]", "workload[1]"]);
    let (first, second) = run.flows.split_at(32);
    let pairs = |fs: &[repsim::workload::FlowSpec]| -> Vec<(u32, u32)> {
        fs.iter().map(|f| (f.src, f.dst)).collect()
    };
    assert_ne!(pairs(first), pairs(second));
    assert!(second
        .iter()
        .all(|f| f.start == 5 * repsim::engine::time::US));
    assert!(first.iter().all(|f| f.workload == 0) && second.iter().all(|f| f.workload == 1));
}

#[test]
fn flow_lists_fan_in_and_fan_out() {
    let tree = common::TREE_32;
    let scn = common::parse(&format!(
        "lb = \"ecmp\"\n{tree}\n[workload]\ntype = \"explicit\"\nflows = [\n\
         {{ src = \"8-23\", dst = 0, size = \"8KiB\" }},\n\
         {{ src = 0, dst = \"1-7\", size = \"8KiB\" }},\n]\n"
    ));
    let run = scn.build("ecmp", None).unwrap();
    assert_eq!(run.flows.len(), 16 + 7);
    assert!(run.flows[..16].iter().all(|f| f.dst == 0));
    assert_eq!(
        run.flows[16..].iter().map(|f| f.dst).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    assert_eq!(
        run.flows.iter().map(|f| f.id).collect::<Vec<_>>(),
        (1..=23).collect::<Vec<_>>()
    );
}

fn build_error(workloads: &str) -> String {
    let tree = common::TREE_32;
    let text = format!("lb = \"ecmp\"\n{tree}\n{workloads}");
    match LoadedScenario::parse(&text, &common::scenario_path("inline.toml")) {
        Err(e) => e.to_string(),
        Ok(scn) => scn
            .build("ecmp", None)
            .err()
            .unwrap_or_else(|| panic!("accepted: {workloads}"))
            .to_string(),
    }
}

#[test]
fn workload_errors_name_the_entry() {
    let e = build_error(
        "[[workload]]\nlabel = \"a\"\ntype = \"tornado\"\nsize = \"8KiB\"\n\
         [[workload]]\nlabel = \"a\"\ntype = \"tornado\"\nsize = \"8KiB\"\n",
    );
    assert!(
        e.contains("workload[1].label") && e.contains("'a' is taken"),
        "{e}"
    );
    let e = build_error(
        "[[workload]]\ntype = \"tornado\"\nsize = \"8KiB\"\n\
         [[workload]]\ntype = \"incast\"\nsize = \"8KiB\"\n",
    );
    assert!(e.contains("workload[1].senders: required"), "{e}");
    let e = build_error(
        "[[workload]]\ntype = \"explicit\"\nflows = [{ src = \"0-2\", dst = \"4-5\", size = \"1KiB\" }]\n",
    );
    assert!(
        e.contains("workload[0].flows[0].dst") && e.contains("3 sources but 2 destinations"),
        "{e}"
    );
    let e = build_error("[[workload]]\ntype = \"tornadoo\"\n");
    assert!(e.contains("did you mean `tornado`?"), "{e}");
}

#[test]
fn an_override_reaches_one_entry_of_a_workload_array() {
    let scn = incast_with_background();
    assert_eq!(
        scn.overrides.last().map(String::as_str),
        Some("workload[1].size=\"256KiB\"")
    );
    let run = scn.build("ecmp", None).unwrap();
    assert!(run
        .flows
        .iter()
        .filter(|f| f.workload == 1)
        .all(|f| f.bytes == 256 << 10));
    assert!(run
        .flows
        .iter()
        .filter(|f| f.workload == 0)
        .all(|f| f.bytes == 256 << 10));
    let set = [Override::parse("workload[2].size=1MiB").unwrap()];
    let e = LoadedScenario::load_with(&common::scenario_path("incast-with-background.toml"), &set)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload has 2 elements, so there is no [2]"),
        "{e}"
    );
}

/// A trace beside a labelled incast: the trace's flows are numbered after the incast's and
/// carry their own label, and dropping finished flows as the run goes (streaming) leaves the
/// per-workload statistics as they are when every flow is kept.
#[test]
fn a_trace_beside_an_incast_streams_with_the_same_per_workload_statistics() {
    let tree = common::TREE_32;
    let scn = common::parse(&format!(
        "seed = 3\nlb = \"ecmp\"\n{tree}\n\
         [[workload]]\nlabel = \"incast\"\ntype = \"explicit\"\n\
         flows = [{{ src = \"8-15\", dst = 0, size = \"64KiB\", start = \"50us\" }}]\n\
         [[workload]]\nlabel = \"web\"\ntype = \"trace\"\n\
         cdf = \"../data/cdf/WebSearch_distribution.txt\"\nload = 0.3\nduration = \"200us\"\n"
    ));
    let whole = common::run(&scn, "ecmp", None);
    let rows = whole.flow_rows();
    let web: Vec<_> = rows
        .iter()
        .filter(|r| r.workload.as_deref() == Some("web"))
        .collect();
    assert!(web.len() > 10, "a real trace: {} flows", web.len());
    assert!(
        web.iter().all(|r| r.id > 8),
        "trace ids follow the incast's 1..=8"
    );
    let mut sim = repsim::Simulation::new(scn.build("ecmp", None).unwrap()).unwrap();
    sim.stream_finished();
    let mut t = 0;
    loop {
        t += 10 * repsim::engine::time::US;
        let more = sim.run_until(t);
        sim.drop_finished_prefix();
        if !more {
            break;
        }
    }
    let (streamed, kept) = (sim.summary(0.0), whole.summary(0.0));
    assert_eq!(streamed.workloads, kept.workloads);
    let per_workload = kept.workloads.unwrap();
    assert_eq!(per_workload[0].flows_total, 8);
    assert_eq!(per_workload[1].flows_total, web.len());
}
