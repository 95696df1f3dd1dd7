//! `transport.duplicate_nic_request_on_timeout`: a connection that times out while its window
//! has room takes a second place in its host's NIC round robin (the REPS artifact's sender),
//! and without the key keeps one.
mod common;

use repsim::Simulation;

/// Host 0 sends 8 MiB to host 4 (whose downlink drops 1 % of the data packets, so that flow
/// recovers by timeouts) and 8 MiB to host 8 (no loss), both with windows far above what their
/// half of the NIC needs, so the NIC's round robin alone sets their rates.
fn two_flows(duplicate: bool) -> Simulation {
    let text = format!(
        r#"
seed = 5
lb = "ops"
{}
[queue]
size = "100pkt"
ecn_min = "25pkt"
ecn_max = "76pkt"
trimming = false
[transport]
duplicate_nic_request_on_timeout = {duplicate}
[cc]
algo = "mprdma"
[workload]
type = "explicit"
flows = [{{ src = 0, dst = 4, size = "8MiB" }}, {{ src = 0, dst = 8, size = "8MiB" }}]
[[fault]]
kind = "drop"
link = "tor1->host4"
probability = 0.01
"#,
        common::TREE_32
    );
    common::run(&common::parse(&text), "ops", None)
}

/// (FCT of the lossy flow, FCT of the clean one), in microseconds.
fn fcts(sim: &Simulation) -> (f64, f64) {
    let f = common::fcts(sim);
    (f[0], f[1])
}

#[test]
fn a_timed_out_flow_keeps_one_nic_share_by_default() {
    let sim = two_flows(false);
    common::assert_books_balance(&sim);
    let lossy = &sim.flows()[0].stats;
    assert!(lossy.timeouts > 0, "the lossy flow must time out");
    assert_eq!(sim.flows()[1].stats.timeouts, 0);
    let (lossy_fct, clean_fct) = fcts(&sim);
    // Equal shares while both send: the lossy flow ends no sooner than the clean one (its
    // last losses cost it timeouts on top).
    assert!(
        lossy_fct >= clean_fct,
        "lossy {lossy_fct} us, clean {clean_fct} us"
    );
}

#[test]
fn a_timed_out_flow_takes_an_extra_nic_share_with_the_key() {
    let sim = two_flows(true);
    common::assert_books_balance(&sim);
    assert!(sim.flows()[0].stats.timeouts > 0);
    let (lossy_fct, clean_fct) = fcts(&sim);
    // Each timeout with room in the window adds a place in the round robin, so the lossy flow
    // outruns the clean one despite its losses.
    assert!(
        lossy_fct < clean_fct,
        "lossy {lossy_fct} us, clean {clean_fct} us"
    );
    // And sooner than the same flow does with one place.
    let (lossy_plain, _) = fcts(&two_flows(false));
    assert!(lossy_fct < lossy_plain, "{lossy_fct} vs {lossy_plain} us");
}
