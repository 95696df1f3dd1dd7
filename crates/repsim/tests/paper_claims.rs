//! The REPS paper's headline results at small scale, on the ready scenarios.
mod common;

use repsim::engine::time::SEC;

/// No flow may finish faster than its bytes take to serialize at its host's line rate plus the
/// unloaded one-way latency.
fn assert_serialization_bound(sim: &repsim::Simulation) {
    let mtu = sim.transport().mtu as u64;
    let mss = mtu - sim.transport().header as u64;
    for f in sim.flows() {
        let topo = sim.topology();
        let rate = topo.links[topo.host_uplink[f.spec.src as usize] as usize].rate_bps;
        let packets = f.spec.bytes.div_ceil(mss);
        let wire = f.spec.bytes + packets * (mtu - mss);
        let bound = wire * 8 * SEC / rate + f.base_rtt / 2;
        let fct = f.fct().expect("finished");
        assert!(
            fct >= bound,
            "flow {} finished in {fct} ps, below its bound {bound} ps",
            f.spec.id
        );
    }
}

/// Runs a ready scenario with REPS, OPS and ECMP; every flow of every run must finish and
/// respect its serialization bound.
fn reps_ops_ecmp(scenario: &str) -> [repsim::Simulation; 3] {
    let scn = common::load(scenario);
    ["reps", "ops", "ecmp"].map(|lb| {
        let sim = common::run(&scn, lb, None);
        assert_serialization_bound(&sim);
        sim
    })
}

#[test]
fn asymmetric_reps_beats_ops_and_approaches_ideal() {
    let [reps, ops, _ecmp] = reps_ops_ecmp("reps-micro-asymmetric.toml");
    let (r, o) = (common::max_fct(&reps), common::max_fct(&ops));
    assert!(
        o >= 1.5 * r,
        "REPS max FCT {r:.1} us should be >= 1.5x lower than OPS {o:.1} us"
    );
    // Ideal: 4 x 32 MiB (plus headers) through 1,400 G of ToR 0 uplink capacity.
    let wire_bytes = 4.0 * (32u64 << 20) as f64 * 4150.0 / 4086.0;
    let ideal_us = wire_bytes * 8.0 / 1400e9 * 1e6;
    assert!(
        r <= ideal_us * 1.10,
        "REPS max FCT {r:.1} us is not within 10% of the ideal {ideal_us:.1} us"
    );
}

#[test]
fn symmetric_reps_matches_ops_and_beats_ecmp() {
    let [reps, ops, ecmp] = reps_ops_ecmp("reps-micro-symmetric.toml");
    let (r, o, e) = (
        common::max_fct(&reps),
        common::max_fct(&ops),
        common::max_fct(&ecmp),
    );
    assert!(
        r <= o,
        "REPS max FCT {r:.1} us should not exceed OPS {o:.1} us"
    );
    assert!(
        e >= 1.5 * r,
        "ECMP max FCT {e:.1} us should be >= 1.5x REPS {r:.1} us"
    );
    // REPS keeps ToR 0's uplink queues below Kmin: far fewer ECN marks than OPS.
    let marks = |s: &repsim::Simulation| s.port_stats().iter().map(|p| p.ecn_marks).sum::<u64>();
    assert!(
        marks(&reps) * 10 < marks(&ops),
        "ECN marks REPS {} vs OPS {}",
        marks(&reps),
        marks(&ops)
    );
}

#[test]
fn permutation_128_reps_beats_ecmp() {
    let [reps, ops, ecmp] = reps_ops_ecmp("permutation-128.toml");
    let (r, o, e) = (
        common::mean_fct(&reps),
        common::mean_fct(&ops),
        common::mean_fct(&ecmp),
    );
    assert!(
        r <= o,
        "REPS mean FCT {r:.1} us should not exceed OPS {o:.1} us"
    );
    assert!(
        e >= 1.5 * r,
        "ECMP mean FCT {e:.1} us should be >= 1.5x REPS {r:.1} us"
    );
}

#[test]
fn reps_never_freezes_or_overflows_without_failures() {
    // With trimming on and no failures, no timeout happens, so REPS never freezes, and its
    // recycled EVs keep the queues short enough that nothing is trimmed or dropped on the
    // symmetric micro-benchmark.
    let scn = common::load("reps-micro-symmetric.toml");
    let reps = common::run(&scn, "reps", None);
    assert!(
        reps.lb_records().is_empty(),
        "no freezing without failures: {:?}",
        reps.lb_records().first()
    );
    assert_eq!(reps.counters().trims, 0);
    assert_eq!(reps.counters().data_dropped, 0);
}
