//! DRILL and WCMP switch schemes end to end (`[routing] switch = "drill"` / `"wcmp"`).
mod common;

fn with_switch(scenario: &str, switch: &str) -> String {
    let text = std::fs::read_to_string(common::scenario_path(scenario)).unwrap();
    format!("{text}\n[routing]\nswitch = {switch}\n")
}

#[test]
fn drill_spreads_a_single_path_sender() {
    // Eight ECMP flows that collide when hashed: DRILL spreads their packets at every switch.
    let hashed = common::run(
        &common::parse(&with_switch("reps-micro-symmetric.toml", "\"ecmp\"")),
        "ecmp",
        None,
    );
    let drill = common::run(
        &common::parse(&with_switch("reps-micro-symmetric.toml", "\"drill\"")),
        "ecmp",
        None,
    );
    common::assert_all_delivered(&drill);
    let (h, d) = (common::max_fct(&hashed), common::max_fct(&drill));
    assert!(
        d * 1.5 < h,
        "DRILL {d:.1} us should beat hashed ECMP {h:.1} us by far"
    );
    assert!(
        d < 380.0,
        "DRILL should approach line rate (~351 us), got {d:.1} us"
    );
}

#[test]
fn drill_parameters_come_from_the_scenario() {
    let text = with_switch(
        "reps-micro-symmetric.toml",
        "{ scheme = \"drill\", d = 4, m = 2 }",
    );
    let sim = common::run(&common::parse(&text), "ecmp", None);
    common::assert_all_delivered(&sim);
    let bad = with_switch("reps-micro-symmetric.toml", "{ scheme = \"drill\", d = 0 }");
    let err = common::parse(&bad)
        .build("ecmp", None)
        .err()
        .expect("d = 0 must fail")
        .to_string();
    assert!(err.contains("routing.switch.d"), "{err}");
}

/// Share of ToR 0's uplink bytes that went on its slow uplink (tor0->agg0).
fn slow_uplink_share(sim: &repsim::Simulation) -> f64 {
    let topo = sim.topology();
    let stats = sim.port_stats();
    let bytes = |agg: u32| {
        let links = topo.links_by_name(&format!("tor0->agg{agg}")).unwrap();
        links
            .iter()
            .map(|&l| stats[l as usize].tx_bytes)
            .sum::<u64>() as f64
    };
    let all: f64 = (0..4).map(bytes).sum();
    bytes(0) / all
}

#[test]
fn wcmp_gives_a_degraded_uplink_its_share() {
    // ToR 0 has three 400 G uplinks and one at 200 G: sprayed packets split 1:1:1:1 under
    // ECMP, 2:2:2:1 under WCMP (the slow link's fair share is 1/7).
    let ecmp = common::run(
        &common::parse(&with_switch("reps-micro-asymmetric.toml", "\"ecmp\"")),
        "ops",
        None,
    );
    let wcmp = common::run(
        &common::parse(&with_switch("reps-micro-asymmetric.toml", "\"wcmp\"")),
        "ops",
        None,
    );
    common::assert_all_delivered(&wcmp);
    let (e, w) = (slow_uplink_share(&ecmp), slow_uplink_share(&wcmp));
    assert!((e - 0.25).abs() < 0.02, "ECMP share {e:.3}");
    assert!((w - 1.0 / 7.0).abs() < 0.01, "WCMP share {w:.3}");
    let (fe, fw) = (common::max_fct(&ecmp), common::max_fct(&wcmp));
    assert!(fw * 1.4 < fe, "WCMP {fw:.1} us should beat ECMP {fe:.1} us");
}

#[test]
fn wcmp_on_equal_links_is_ecmp() {
    let ecmp = common::run(
        &common::parse(&with_switch("reps-micro-symmetric.toml", "\"ecmp\"")),
        "ops",
        None,
    );
    let wcmp = common::run(
        &common::parse(&with_switch("reps-micro-symmetric.toml", "\"wcmp\"")),
        "ops",
        None,
    );
    common::assert_all_delivered(&wcmp);
    assert_eq!(common::fcts(&wcmp), common::fcts(&ecmp));
    assert_eq!(wcmp.counters().data_sent, ecmp.counters().data_sent);
    let bad = with_switch(
        "reps-micro-symmetric.toml",
        "{ scheme = \"wcmp\", max_weight = 0 }",
    );
    let err = common::parse(&bad)
        .build("ops", None)
        .err()
        .expect("max_weight = 0 must fail")
        .to_string();
    assert!(err.contains("routing.switch.max_weight"), "{err}");
}
