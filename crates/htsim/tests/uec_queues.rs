//! The UEC reference's queues, as `repsim htsim` builds them: ECN is decided when a data
//! packet's last bit leaves, on the data bytes waiting then, so the packets that arrived while
//! it was on the wire count. On the 16-host permutation under receiver credit the reference's
//! receivers see 1,410 marked packets (their ACKs say so); deciding at the start of
//! serialization marks far fewer.
use std::path::{Path, PathBuf};

use repsim::scenario::{LoadedScenario, Override};
use repsim::Simulation;
use repsim_htsim::{build, matrix, HtsimArgs};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/uet-htsim")
}

/// ECN marks and ACKs of the 16-host permutation under receiver credit, with the queue's
/// `ecn_at_departure` as given.
fn marks_and_acks(at_departure: bool) -> (u64, u64) {
    let args = HtsimArgs::parse(&[
        "-tm",
        "m.cm",
        "-receiver_cc_only",
        "-end",
        "1000",
        "-paths",
        "128",
    ])
    .unwrap();
    let text =
        std::fs::read_to_string(data().join("connection_matrices/perm_16n_16c_2MB.cm")).unwrap();
    let m = matrix::parse(&text, false).unwrap();
    let built = build::scenario(&args, &m, None).unwrap();
    assert!(built.toml.contains("ecn_at_departure = true"));
    let set = Override::parse(&format!("queue.ecn_at_departure={at_departure}")).unwrap();
    let scn = LoadedScenario::parse_with(&built.toml, Path::new("htsim.toml"), &[set]).unwrap();
    let runs = scn.runs().unwrap();
    let mut sim = Simulation::new(scn.build_run(&runs[0], None).unwrap()).unwrap();
    sim.run_until_idle();
    let acks = sim.flows().iter().map(|f| f.stats.acks).sum();
    (sim.summary(0.0).ecn_marks, acks)
}

#[test]
fn marks_are_decided_as_packets_leave() {
    let (leave, leave_acks) = marks_and_acks(true);
    let (start, start_acks) = marks_and_acks(false);
    // The reference: 1,410 marked packets reach the receivers, 2,911 ACKs.
    assert!(
        (1_300..=1_600).contains(&leave),
        "{leave} marks on departure"
    );
    assert!(start < 1_100, "{start} marks at the start");
    assert!(
        leave_acks.abs_diff(2_911) <= 2_911 / 20,
        "{leave_acks} ACKs"
    );
    assert!(start_acks < leave_acks);
}
