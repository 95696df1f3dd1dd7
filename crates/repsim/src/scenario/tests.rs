use super::*;
use crate::lb::LbSpec;
use crate::routing::SwitchSpec;

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
    assert_eq!(b.config.queue.bytes(4150).capacity, 415_000);
    assert_eq!(b.config.seed, 3);
    assert_eq!(b.label, "reps");
    assert_eq!(s.name(), "test");
    // The resolved form parses back and builds the same run.
    let again = parse(&s.resolved_toml(&s.runs().unwrap(), None)).unwrap();
    assert_eq!(again.build("ops", None).unwrap().flows, b.flows);
    assert_eq!(again.build("reps", None).unwrap().config, b.config);
}

#[test]
fn a_queue_above_what_a_port_counts_is_refused() {
    let queue = |size: &str| {
        format!("{BASE}[queue]\nsize = \"{size}\"\necn_min = \"25pkt\"\necn_max = \"76pkt\"\ntrimming = false\n")
    };
    let e = error(&queue("5GiB"));
    assert!(e.contains("queue.size") && e.contains("32"), "{e}");
    parse(&queue("2GiB"))
        .and_then(|s| s.runs().and_then(|r| s.build_run(&r[0], None).map(|_| ())))
        .expect("2 GiB is allowed");
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
    let metrics = |m: &str| format!("{BASE}[metrics]\nelephants = {{ {m} }}\n");
    let e = error(&metrics(r#"every = "0us""#));
    assert!(e.contains("metrics.elephants.every"), "{e}");
    let e = error(&metrics(r#"min_size = "0B""#));
    assert!(e.contains("metrics.elephants.min_size"), "{e}");
    let e = error(&metrics(r#"evry = "1ms""#));
    assert!(e.contains("unknown field") && e.contains("evry"), "{e}");
    let b = parse(&metrics("")).unwrap().build("reps", None).unwrap();
    let defaults = crate::metrics::elephants::ElephantsRule {
        every: crate::engine::time::MS,
        min_bytes: 10_000_000,
    };
    assert_eq!(b.config.metrics.elephants(4150), Some(defaults));
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
    let Some(r) = b.config.lb.config::<crate::lb::reps::RepsConfig>() else {
        panic!("a REPS run")
    };
    assert_eq!(
        (r.freeze.0, r.evs_size),
        (100 * crate::engine::time::US, Some(256))
    );
    assert_eq!(b.label, "reps-fast");
    assert_eq!(
        b.config.cc.timed_switch_at(),
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

#[test]
fn a_switch_scheme_named_alone_runs_under_fixed_ev_senders() {
    let s = parse(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = ["letflow", "conga", "conweave", "drill", "ecmp"]"#,
    ))
    .unwrap();
    assert_eq!(
        s.lbs(),
        vec!["letflow", "conga", "conweave", "drill", "ecmp"]
    );
    for name in ["letflow", "conga", "conweave", "drill"] {
        let b = s.build(name, None).unwrap();
        assert_eq!(b.label, name, "the label is the name as written");
        assert_eq!(b.config.lb, LbSpec::named("ecmp").unwrap());
        assert_eq!(b.config.switch, SwitchSpec::named(name).unwrap());
    }
    // "ecmp" is a sender and a switch scheme: it keeps meaning the sender.
    let e = s.build("ecmp", None).unwrap();
    assert_eq!(e.config.lb, LbSpec::named("ecmp").unwrap());
    assert_eq!(e.config.switch, SwitchSpec::default());
    for name in SwitchSpec::names() {
        assert!(
            name == "ecmp" || LbSpec::named(name).is_none(),
            "{name} is both a sender and a switch scheme"
        );
    }
    let again = parse(&s.resolved_toml(&s.runs().unwrap(), None)).unwrap();
    assert_eq!(again.lbs(), s.lbs());
    assert_eq!(
        again.build("conga", None).unwrap().config,
        s.build("conga", None).unwrap().config
    );
}

#[test]
fn an_lb_entry_may_name_a_switch_scheme_too() {
    let s = parse(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = ["ops+adaptive", "reps", { scheme = "ecmp", switch = { scheme = "adaptive" } }]"#,
    ))
    .unwrap();
    assert_eq!(s.lbs(), vec!["ops+adaptive", "reps", "ecmp+adaptive"]);
    let ar = s.build("ops+adaptive", None).unwrap();
    assert_eq!(ar.label, "ops+adaptive");
    assert_eq!(ar.config.lb, LbSpec::named("ops").unwrap());
    assert_eq!(ar.config.switch, SwitchSpec::named("adaptive").unwrap());
    // A run without its own switch scheme keeps [routing] switch.
    assert_eq!(
        s.build("reps", None).unwrap().config.switch,
        SwitchSpec::default()
    );
    assert_eq!(
        s.build("ecmp+adaptive", None).unwrap().config.switch,
        SwitchSpec::named("adaptive").unwrap()
    );
    // The resolved scenario keeps each run's switch scheme.
    let again = parse(&s.resolved_toml(&s.runs().unwrap(), None)).unwrap();
    assert_eq!(again.lbs(), s.lbs());
    assert_eq!(again.build("ops+adaptive", None).unwrap().config, ar.config);
    let e = error(&BASE.replace(r#"lb = ["reps", "ops"]"#, r#"lb = ["ops+nope"]"#));
    assert!(
        e.contains("lb[0]") && e.contains("'nope'") && e.contains("adaptive"),
        "{e}"
    );
    let e = error(&BASE.replace(r#"lb = ["reps", "ops"]"#, r#"lb = ["nope+adaptive"]"#));
    assert!(
        e.contains("lb[0]") && e.contains("'nope'") && e.contains("reps"),
        "{e}"
    );
    let e = error(&BASE.replace(
        r#"lb = ["reps", "ops"]"#,
        r#"lb = [{ scheme = "ops", switch = { scheme = "adaptive", nope = 0 } }]"#,
    ));
    assert!(e.contains("lb[0].switch") && e.contains("nope"), "{e}");
    // Mixed traffic: the ECMP background class is exempt from adaptive routing.
    let s =
        parse(&BASE.replace("type = \"explicit\"", "type = \"explicit\"\necmp_every = 2")).unwrap();
    let b = s.build("reps", None).unwrap();
    assert_eq!(b.classes.len(), 1);
    assert!(b.classes[0].switch_exempt && b.classes[0].name == "background");
}

#[test]
fn the_nic_ev_set_size_reaches_every_ev_scheme_unless_one_overrides_it() {
    let s = parse(&format!(
        "{}\n[transport]\nevs_size = 32\n",
        BASE.replace(
            r#"lb = ["reps", "ops"]"#,
            r#"lb = ["reps", { scheme = "ops", evs_size = 8 }]"#
        )
    ))
    .unwrap();
    assert_eq!(s.build("reps", None).unwrap().config.transport.evs_size, 32);
    let lb = s.build("ops", None).unwrap().config.lb;
    let Some(o) = lb.config::<crate::lb::ops::OpsConfig>() else {
        panic!("ops")
    };
    assert_eq!(o.evs_size, Some(8));
    let e = error(&format!("{BASE}\n[transport]\nevs_size = 70000\n"));
    assert!(
        e.contains("transport.evs_size: must be in 1..=65536"),
        "{e}"
    );
}

#[test]
fn overrides_are_checked_like_the_file() {
    let dir = std::env::temp_dir().join(format!("repsim-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, BASE).unwrap();
    let set = |kv: &[&str]| {
        let o: Vec<Override> = kv.iter().map(|k| Override::parse(k).unwrap()).collect();
        LoadedScenario::load_with(&file, &o)
    };
    let s = set(&["transport.evs_size=32", "transport.cc=constant", "seed=20"]).unwrap();
    let b = s.build("reps", None).unwrap();
    assert_eq!(b.config.transport.evs_size, 32);
    assert_eq!(b.config.cc.name(), "constant");
    assert_eq!(b.config.seed, 20);
    assert_eq!(s.overrides.len(), 3);
    let s = set(&["lb=ops+adaptive"]).unwrap();
    assert_eq!(s.lbs(), vec!["ops+adaptive"]);
    let e = set(&["transport.evz=3"]).unwrap_err().to_string();
    assert!(e.contains("transport.evz") && e.contains("evs_size"), "{e}");
    let e = set(&["cc=nope"]).unwrap().cc().unwrap_err().to_string();
    assert!(e.contains("cc: unknown congestion control 'nope'"), "{e}");
    let e = set(&["seed.x=1"]).unwrap_err().to_string();
    assert!(e.contains("seed.x"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_trace_workload_is_generated_lazily_and_checked() {
    let trace = |extra: &str| {
        BASE.replace(
            "type = \"explicit\"\nflows = [{ src = \"0-3\", dst = \"8-11\", size = \"1MiB\" }]",
            &format!("type = \"trace\"\ncdf = \"../data/cdf/WebSearch_distribution.txt\"\n{extra}"),
        )
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/inline.toml");
    let load = |text: &str| LoadedScenario::parse(text, &dir);
    let s = load(&trace("load = 0.5\ncount = 50\necmp_every = 4")).unwrap();
    let mut b = s.build("reps", None).unwrap();
    assert!(b.flows.is_empty());
    assert_eq!(b.sources.len(), 1);
    let flows: Vec<_> = std::iter::from_fn(|| b.sources[0].next_flow()).collect();
    assert_eq!(flows.len(), 50);
    assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
    for f in &flows {
        assert_eq!(
            f.class == 1,
            f.src % 4 == 0,
            "mixed traffic reaches trace flows"
        );
    }
    let err = |extra: &str| {
        load(&trace(extra))
            .unwrap()
            .build("reps", None)
            .err()
            .unwrap()
            .to_string()
    };
    assert!(err("count = 5").contains("workload.load: required"));
    assert!(err("load = 0.5").contains("a duration"));
    assert!(err("load = -1\ncount = 5").contains("workload.load"));
    assert!(err("load = 0.5\ncount = 5\narrivals = \"bursty\"").contains("poisson, back_to_back"));
    assert!(err("load = 0.5\ncount = 5\ndestinations = \"x\"").contains("other_racks"));
    assert!(err("load = 0.5\ncount = 5\noversubscription = 0.5").contains("at least 1"));
    assert!(err("load = 0.5\ncount = 5\nslices = 2").contains("cannot be sliced"));
    let e = load(&trace("load = 0.5\ncount = 5").replace("WebSearch_distribution", "nope"))
        .unwrap()
        .build("reps", None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("workload.cdf") && e.contains("nope"), "{e}");
}

#[test]
fn type_errors_say_the_type_in_words() {
    let e = error(&BASE.replace("hosts = 16", "hosts = \"many\""));
    assert!(e.contains("expected a whole number, 0 or more"), "{e}");
    assert!(!e.contains("u32"), "{e}");
}

#[test]
fn a_key_the_workload_type_does_not_read_is_refused() {
    let e = error(
        &BASE
            .replace(
                "type = \"explicit\"",
                "type = \"permutation\"\nsize = \"1MiB\"\nfile = \"x.cm\"",
            )
            .replace(
                "flows = [{ src = \"0-3\", dst = \"8-11\", size = \"1MiB\" }]\n",
                "",
            ),
    );
    assert!(
        e.contains("workload.file") && e.contains("type = \"permutation\" does not use it"),
        "{e}"
    );
}

#[test]
fn an_error_after_set_names_the_override_and_no_line() {
    let set = [Override::parse("transport.mtu=abc").unwrap()];
    let Err(e) = LoadedScenario::parse_with(BASE, Path::new("test.toml"), &set) else {
        panic!("a bad MTU was accepted");
    };
    let e = e.to_string();
    assert!(e.contains("transport.mtu:"), "{e}");
    assert!(e.contains("(set by --set transport.mtu=\"abc\")"), "{e}");
    assert!(!e.contains("line"), "{e}");
}

#[test]
fn a_queue_section_may_give_one_key() {
    let b = parse(&format!("{BASE}\n[queue]\necn_pmax = 0.2\n"))
        .unwrap()
        .build("reps", None)
        .unwrap();
    assert_eq!(b.config.queue.ecn_pmax, 0.2);
    assert_eq!(
        b.config.queue.bytes(4150).capacity,
        415_000,
        "the default 100 packets"
    );
    assert!(b.config.queue.trimming);
}
