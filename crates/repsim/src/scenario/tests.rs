use super::*;

const BASE: &str = r#"
seed = 3
lb = ["reps", "ops"]
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[workload]
type = "explicit"
flows = [{ src = "0-3", dst = "8-11", size = "1MiB" }]
"#;

fn parse(text: &str) -> Result<LoadedScenario, ScenarioError> {
    LoadedScenario::parse(text, Path::new("test.toml"))
}

fn error(text: &str) -> String {
    match parse(text) {
        Err(e) => e.to_string(),
        Ok(s) => s
            .runs()
            .and_then(|r| s.build_run(&r[0], None))
            .err()
            .expect("an error")
            .to_string(),
    }
}

#[test]
fn builds_a_minimal_scenario() {
    let s = parse(BASE).unwrap();
    assert_eq!(s.lbs(), vec!["reps", "ops"]);
    let b = s.build("reps", None).unwrap();
    assert_eq!(b.flows.len(), 4);
    assert_eq!(b.flows[3].dst, 11);
    assert_eq!(b.config.queue.capacity, 415_000);
    assert_eq!(b.config.seed, 3);
    assert_eq!(b.label, "reps");
    assert_eq!(s.name(), "test");
    // The resolved form parses back and builds the same run.
    let again = parse(&s.resolved_toml(&s.runs().unwrap(), None)).unwrap();
    assert_eq!(again.build("ops", None).unwrap().flows, b.flows);
    assert_eq!(again.build("reps", None).unwrap().config, b.config);
}

#[test]
fn errors_name_file_and_field() {
    let e = error(&BASE.replace("hosts = 16", "hosts = 15"));
    assert!(e.starts_with("test.toml: topology:"), "{e}");
    let e = error(&BASE.replace("\"400Gbps\"", "\"400 furlongs\""));
    assert!(e.contains("topology") && e.contains("Gbps"), "{e}");
    let e = error(&BASE.replace("seed = 3", "sed = 3"));
    assert!(e.contains("unknown field") && e.contains("sed"), "{e}");
    let e = parse(BASE)
        .unwrap()
        .build("nope", None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--lb") && e.contains("reps"), "{e}");
    let e = error(&BASE.replace("\"8-11\"", "\"8-10\""));
    assert!(e.contains("workload.flows[0].dst"), "{e}");
    let e = error(&BASE.replace("\"1MiB\"", "1048576"));
    assert!(e.contains("no unit"), "{e}");
}

#[test]
fn schemes_take_their_own_parameters() {
    let s = parse(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = ["ecmp", { scheme = "reps", label = "reps-fast", freeze = "100us", evs_size = 256 }]
cc = { algo = "mprdma", initial_cwnd = "151pkt", fast_increase_after = "650us" }"#,
    ))
    .unwrap();
    assert_eq!(s.lbs(), vec!["ecmp", "reps-fast"]);
    let b = s.build("reps-fast", None).unwrap();
    let LbSpec::Reps(r) = &b.config.lb else {
        panic!("a REPS run")
    };
    assert_eq!(
        (r.freeze.0, r.evs_size),
        (100 * crate::engine::time::US, Some(256))
    );
    assert_eq!(b.label, "reps-fast");
    assert_eq!(
        b.config.cc.fast_increase_after(),
        Some(650 * crate::engine::time::US)
    );
    // A name that is no label falls back to the scheme with defaults.
    assert_eq!(s.build("reps", None).unwrap().label, "reps");
    // Unknown parameters and schemes are named.
    let e = error(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = [{ scheme = "reps", frezee = "1ms" }]"#,
    ));
    assert!(e.contains("lb[0]") && e.contains("frezee"), "{e}");
    let e = error(&BASE.replace(r#"lb = ["reps", "ops"]"#, r#"lb = [{ scheme = "repz" }]"#));
    assert!(
        e.contains("lb[0]") && e.contains("allowed:") && e.contains("ecmp"),
        "{e}"
    );
    let e = error(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = [{ scheme = "reps", evs_size = 0 }]"#,
    ));
    assert!(e.contains("lb[0].evs_size"), "{e}");
    let e = error(&BASE.replace(r#"lb = ["reps", "ops"]"#, r#"lb = ["reps", "reps"]"#));
    assert!(e.contains("labelled 'reps'"), "{e}");
    let e = error(&BASE.replace(r#"lb = ["reps", "ops"]"#, "cc = \"cubic\""));
    assert!(e.contains("cc:") && e.contains("mprdma"), "{e}");
    let e = error(&format!(
        "{BASE}[routing]\nswitch = {{ scheme = \"adaptive\", bogus = 1 }}\n"
    ));
    assert!(e.contains("routing.switch") && e.contains("bogus"), "{e}");
}

#[test]
fn older_keys_point_to_their_new_place() {
    let e = error(&format!("{BASE}[lb_options]\nevs_size = 256\n"));
    assert!(
        e.contains("lb_options") && e.contains("scheme = \"reps\""),
        "{e}"
    );
    let e = error(&format!("{BASE}[transport]\ncc = \"mprdma\"\n"));
    assert!(e.contains("transport.cc") && e.contains("[cc]"), "{e}");
    let e = error(&format!("{BASE}[transport]\ninitial_cwnd = \"10pkt\"\n"));
    assert!(
        e.contains("transport.initial_cwnd") && e.contains("[cc]"),
        "{e}"
    );
}

#[test]
fn every_family_has_a_topology_section() {
    let with = |topology: &str| {
        BASE.replace(
            "type = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"\nlink_latency = \"1us\"",
            topology,
        )
    };
    let s = parse(&with("type = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nlink_speed = \"100Gbps\"")).unwrap();
    assert_eq!(s.topology().unwrap().hosts, 16);
    let s = parse(&with("type = \"dragonfly\"")).unwrap();
    assert_eq!(s.topology().unwrap().hosts, 144);
    let s = parse(&with("type = \"rail\"")).unwrap();
    assert_eq!(s.topology().unwrap().hosts, 64);
    let e = error(&with("type = \"dragonfly\"\nglobal_links_per_router = 3"));
    assert!(
        e.contains("topology") && e.contains("multiple of groups - 1"),
        "{e}"
    );
    let e = error(&with("type = \"torus\""));
    assert!(e.contains("topology") && e.contains("fat_tree"), "{e}");
    // Resolved: defaults written out.
    let s = parse(&with("type = \"dragonfly\"")).unwrap();
    let text = s.resolved_toml(&s.runs().unwrap(), Some(41_000_000));
    assert!(
        text.contains("global_speed") && text.contains("rto = \"41us\""),
        "{text}"
    );
}

#[test]
fn explicit_flows_carry_ids_dependencies_and_classes() {
    let s = parse(&BASE.replace(
        r#"flows = [{ src = "0-3", dst = "8-11", size = "1MiB" }]"#,
        r#"flows = [
  { src = "0-1", dst = "8-9", size = "1MiB" },
  { id = 7, src = 4, dst = 12, size = "1MiB", after = [1, 2], delay = "2us", tag = 3, class = "bg" },
]
[[class]]
name = "bg"
lb = "ecmp""#,
    ))
    .unwrap();
    let b = s.build("reps", None).unwrap();
    let f = &b.flows[2];
    assert_eq!(
        (f.id, f.after.clone(), f.delay, f.tag, f.class),
        (7, vec![1, 2], 2_000_000, 3, 1)
    );
    assert_eq!(b.classes[0].name, "bg");
    assert_eq!(b.classes[0].lb, LbSpec::named("ecmp"));
    let e = error(&BASE.replace(r#"size = "1MiB" }"#, r#"size = "1MiB", class = "nope" }"#));
    assert!(
        e.contains("workload.flows[0].class") && e.contains("nope"),
        "{e}"
    );
    let e = error(&BASE.replace(r#"{ src = "0-3""#, r#"{ id = 4, src = "0-3""#));
    assert!(e.contains("workload.flows[0].id"), "{e}");
}
