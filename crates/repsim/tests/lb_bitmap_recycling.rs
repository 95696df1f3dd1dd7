//! BitMap, REPS-legacy, mixed and incremental end to end on the REPS paper's asymmetric
//! micro-benchmark: the behaviour they are meant to show at small scale (their conservation
//! under trims and drops is covered for every scheme by `every_scheme.rs`).
mod common;

use repsim::Simulation;

/// The asymmetric micro-benchmark (one ToR uplink at 200 G) with these schemes and OPS over
/// the bitmap's 256 EVs.
fn asymmetric(lb: &str) -> Simulation {
    let text = std::fs::read_to_string(common::scenario_path("reps-micro-asymmetric.toml"))
        .expect("ready scenario");
    let lbs = r#"lb = ["bitmap", "reps-legacy", "mixed", { scheme = "ops", label = "ops-256", evs_size = 256 }]"#;
    let text: String = text
        .lines()
        .map(|l| if l.starts_with("lb = ") { lbs } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let sim = common::run(&common::parse(&text), lb, None);
    common::assert_all_delivered(&sim);
    sim
}

#[test]
fn penalties_and_recycling_steer_around_the_slow_uplink() {
    let ops = asymmetric("ops-256");
    let bitmap = asymmetric("bitmap");
    // NACK and ECN penalties keep BitMap off the slow link more than oblivious spraying over
    // the same EVs (seed 5: 123 trims against 148; means 1,132 us against 1,305 us).
    assert!(bitmap.counters().trims < ops.counters().trims);
    assert!(common::mean_fct(&bitmap) < common::mean_fct(&ops));
    // Recycling good EVs does much better (about 800 us).
    for lb in ["reps-legacy", "mixed"] {
        let sim = asymmetric(lb);
        assert!(
            common::mean_fct(&sim) < 0.8 * common::mean_fct(&ops),
            "{lb}: {} us against OPS {} us",
            common::mean_fct(&sim),
            common::mean_fct(&ops)
        );
    }
}
