//! A value a library user sets in code fails with the same field and message as the same
//! value written in a scenario file: the checks live with the configuration types, and the
//! scenario loader reports theirs.
mod common;

use std::path::PathBuf;

use common::TREE_32;
use repsim::engine::time::US;
use repsim::net::topology::builder::TopologyBuilder;
use repsim::net::topology::fat_tree::{FatTreeConfig, FatTreeSpec};
use repsim::scenario::LoadedScenario;
use repsim::sim::SetupError;
use repsim::units::RateQ;
use repsim::units::{Size, SizeQ, TimeQ};
use repsim::workload::FlowSpec;
use repsim::{ConfigError, RunSpec, SimConfig, Simulation};

/// [`TREE_32`] built in code, its links at `rate_bps`.
fn tree(rate_bps: u64) -> Result<repsim::net::Topology, String> {
    FatTreeSpec::uniform(2, 32, 4, 32, 1, rate_bps, US, 0)
        .and_then(|spec| spec.build())
        .map_err(|e| e.to_string())
}

/// The error a scenario on `topology` (a `[topology]` section), with `extra` appended, gets
/// when its run is built.
fn toml_error(extra: &str, topology: &str) -> String {
    let text = format!(
        "lb = [\"ecmp\"]\n{topology}\n[workload]\ntype = \"explicit\"\n\
         flows = [{{ src = \"0\", dst = \"12\", size = \"1MiB\" }}]\n{extra}\n"
    );
    let scenario = match LoadedScenario::parse(&text, &common::scenario_path("inline.toml")) {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match scenario.build("ecmp", None) {
        Ok(_) => panic!("{extra}: the scenario was accepted"),
        Err(e) => e.to_string(),
    }
}

/// The error a library run with `config` gets.
fn library_error(config: SimConfig) -> ConfigError {
    let topology = tree(400_000_000_000).expect("a valid tree");
    let flows = vec![FlowSpec::new(1, 0, 12, 1 << 20, 0)];
    match Simulation::new(RunSpec::new(config, topology, flows)) {
        Err(SetupError::Config(e)) => e,
        Err(other) => panic!("not a configuration error: {other}"),
        Ok(_) => panic!("the run was accepted"),
    }
}

/// `FILE: FIELD: MESSAGE` from the loader is `FIELD: MESSAGE` from the library.
fn assert_same(toml: &str, library: &ConfigError) {
    assert!(
        toml.ends_with(&format!(": {library}")),
        "scenario file: {toml}\nlibrary: {library}"
    );
}

#[test]
fn a_zero_ev_set_size_fails_alike() {
    let mut config = SimConfig::default();
    config.transport.evs_size = 0;
    let library = library_error(config);
    assert_eq!(library.field, "transport.evs_size");
    assert_same(&toml_error("[transport]\nevs_size = 0", TREE_32), &library);
}

#[test]
fn an_ecn_band_upside_down_fails_alike() {
    let mut config = SimConfig::default();
    config.queue.ecn_min = SizeQ(Size::Packets(81.0));
    let library = library_error(config);
    assert_eq!(library.field, "queue.ecn_min");
    assert_same(
        &toml_error(
            "[queue]\nsize = \"100pkt\"\necn_min = \"81pkt\"\necn_max = \"80pkt\"\ntrimming = true",
            TREE_32,
        ),
        &library,
    );
}

#[test]
fn a_zero_link_speed_fails_alike() {
    // A family configured in code with a zero speed fails on the key a scenario file names.
    let mut scenario: toml::Table = toml::from_str(TREE_32).expect("a valid section");
    let mut section = scenario.remove("topology").expect("[topology]");
    section.as_table_mut().expect("a table").remove("type");
    let mut family: FatTreeConfig = section.try_into().expect("a valid family");
    family.link_speed = RateQ(0);
    let no_files = |_: &str| -> Result<(PathBuf, String), String> { Err("no files".into()) };
    let library = family.build(&no_files).expect_err("a zero link speed");
    assert_eq!(library.field, Some("link_speed"));
    let toml = toml_error("", &TREE_32.replace("400Gbps", "0Gbps"));
    assert!(
        toml.contains("topology.link_speed") && toml.ends_with(&format!(": {}", library.message)),
        "scenario file: {toml}\nlibrary: {library}"
    );
    // A link slowed to nothing after building is refused before the run starts.
    let mut topology = tree(400_000_000_000).expect("a valid tree");
    topology.links[3].rate_bps = 0;
    let run = RunSpec::new(SimConfig::default(), topology, Vec::new());
    match Simulation::new(run) {
        Err(SetupError::Config(e)) => {
            assert_eq!(e.field, "topology");
            assert!(e.message.contains("link 3"), "{e}");
        }
        Err(other) => panic!("not a configuration error: {other}"),
        Ok(_) => panic!("a link without a bit rate was accepted"),
    }
}

/// A change to a configuration.
type Setter = Box<dyn Fn(&mut SimConfig)>;

#[test]
fn the_other_library_checks_name_their_fields() {
    let cases: Vec<(&str, Setter)> = vec![
        (
            "transport.mtu",
            Box::new(|c| c.transport.mtu = SizeQ(Size::Bytes(64))),
        ),
        (
            "transport.header",
            Box::new(|c| c.transport.header = SizeQ(Size::Bytes(0))),
        ),
        (
            "transport.ack_every",
            Box::new(|c| c.transport.ack_every = SizeQ(Size::Bytes(0))),
        ),
        (
            "transport.rto",
            Box::new(|c| c.transport.rto = Some(TimeQ(0))),
        ),
        ("queue.ecn_pmax", Box::new(|c| c.queue.ecn_pmax = 0.0)),
        (
            "queue.size",
            Box::new(|c| c.queue.size = SizeQ(Size::Bytes(100))),
        ),
        (
            "metrics.slowdown_edges",
            Box::new(|c| {
                c.metrics.slowdown_edges = Some(vec![SizeQ(Size::Bytes(10)), SizeQ(Size::Bytes(5))])
            }),
        ),
        ("loss.probability", Box::new(|c| c.loss.probability = 1.5)),
    ];
    for (field, set) in cases {
        let mut config = SimConfig::default();
        set(&mut config);
        assert_eq!(library_error(config).field, field);
    }
}

#[test]
fn a_fault_plan_built_in_code_is_checked() {
    use repsim::fault::{Action, ActionKind, FaultPlan};
    let topology = tree(400_000_000_000).expect("a valid tree");
    let links = topology.links.len();
    let run = |kind: ActionKind, port: u32| {
        let mut spec = RunSpec::new(
            SimConfig::default(),
            tree(400_000_000_000).expect("a valid tree"),
            vec![FlowSpec::new(1, 0, 12, 1 << 20, 0)],
        );
        spec.faults = FaultPlan {
            actions: vec![Action {
                time: 10 * US,
                port,
                kind,
            }],
            ..FaultPlan::default()
        };
        match Simulation::new(spec) {
            Err(SetupError::Config(e)) => e.to_string(),
            Err(other) => panic!("not a configuration error: {other}"),
            Ok(_) => "accepted".to_string(),
        }
    };
    let rate = |rate_bps, buffer_scale| ActionKind::Rate {
        rate_bps,
        buffer_scale,
    };
    assert_eq!(
        run(rate(0, 1.0), 3),
        "fault action 0 (speed): must be positive"
    );
    assert_eq!(
        run(rate(100_000_000_000, 0.0), 3),
        "fault action 0 (buffer_scale): must be positive"
    );
    assert!(run(ActionKind::Up, links as u32).contains("does not exist"));
    assert_eq!(run(rate(100_000_000_000, 0.25), 3), "accepted");
}

#[test]
fn receiver_credit_under_a_roce_mode_fails_alike() {
    let mut config = SimConfig::default();
    config.transport.mode = repsim::transport::TransportMode::Gbn;
    config.cc = repsim::cc::CcSpec::named("eqds").expect("a built-in");
    let library = library_error(config);
    assert_eq!(library.field, "transport.mode");
    assert!(library.message.contains("eqds"), "{library}");
    assert_same(
        &toml_error(
            "[transport]\nmode = \"gbn\"\n[cc]\nalgo = \"eqds\"",
            TREE_32,
        ),
        &library,
    );
    // A traffic class's congestion control counts as the run's does.
    let toml = toml_error(
        "[transport]\nmode = \"irn\"\n[[class]]\nname = \"paced\"\ncc = { algo = \"eqds\" }",
        TREE_32,
    );
    assert!(
        toml.contains("transport.mode") && toml.contains("eqds"),
        "{toml}"
    );
}

/// `[transport] network_rtt` is the largest unloaded RTT the senders assume, taken as given
/// (degraded links do not lengthen it then); without it the run computes it over the topology,
/// and a zero is refused alike from a file and from code.
#[test]
fn the_network_rtt_is_taken_as_given_or_computed() {
    let topology = tree(400_000_000_000).expect("a valid tree");
    let flows = vec![FlowSpec::new(1, 0, 12, 1 << 20, 0)];
    let computed = Simulation::new(RunSpec::new(
        SimConfig::default(),
        topology.clone(),
        flows.clone(),
    ))
    .unwrap()
    .max_base_rtt();
    assert!(computed > 2 * US);
    let mut config = SimConfig::default();
    config.transport.network_rtt = Some(TimeQ(20 * US));
    let sim = Simulation::new(RunSpec::new(config, topology, flows)).unwrap();
    assert_eq!(sim.max_base_rtt(), 20 * US);
    let mut config = SimConfig::default();
    config.transport.network_rtt = Some(TimeQ(0));
    let library = library_error(config);
    assert_eq!(library.field, "transport.network_rtt");
    assert_same(
        &toml_error("[transport]\nnetwork_rtt = \"0us\"", TREE_32),
        &library,
    );
}
