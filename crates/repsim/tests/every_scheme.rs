//! Every registered scheme (load balancer, congestion control, switch scheme) conserves bytes
//! and packets and is deterministic, on an overflowing incast with trimming on and off and on
//! a permutation. The lists come from the registries, so a scheme added later is covered
//! without editing this file. The RoCE transport modes (go-back-N, IRN) run every congestion
//! control on the same incast without PFC: their losses are recovered by NACKs and timeouts.
//! With PFC on, every switch scheme under every transport mode runs the same incast losslessly
//! (no drop, no trim, pause frames sent and all arrived), deterministically.
mod common;

use repsim::cc::CcSpec;
use repsim::engine::time::US;
use repsim::lb::LbSpec;
use repsim::net::Kind;
use repsim::routing::SwitchSpec;
use repsim::transport::TransportMode;
use repsim::Simulation;

/// A 32-host tree with small buffers: a 12-to-1 incast plus a shifted permutation among the
/// other hosts, so that queues overflow and many paths are used.
/// With PFC on (`pfc`), the switches' shared-buffer MMU replaces the 12-packet drop tail.
fn scenario(
    trimming: bool,
    lb: &str,
    cc: &str,
    switch: &str,
    mode: TransportMode,
    pfc: bool,
) -> String {
    let mut flows: Vec<String> = (1..=12)
        .map(|s| format!("{{ src = {s}, dst = 0, size = \"200KiB\" }}"))
        .collect();
    flows.extend((13..32).map(|s| {
        let d = 13 + (s - 13 + 7) % 19;
        format!("{{ src = {s}, dst = {d}, size = \"300KiB\" }}")
    }));
    let tree = common::TREE_32;
    format!(
        r#"
seed = 17
end = "200ms"
lb = "{lb}"
cc = "{cc}"
{tree}
[queue]
size = "12pkt"
ecn_min = "3pkt"
ecn_max = "9pkt"
trimming = {trimming}
[routing]
switch = "{switch}"
[transport]
mode = "{mode}"
[pfc]
enabled = {pfc}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", "),
        mode = mode.name()
    )
}

/// Runs the scenario twice; checks conservation, the control-packet books and that both runs
/// are identical.
fn check(trimming: bool, lb: &str, cc: &str, switch: &str) {
    check_mode(trimming, lb, cc, switch, TransportMode::Uec);
}

/// [`check`] under a transport mode.
fn check_mode(trimming: bool, lb: &str, cc: &str, switch: &str, mode: TransportMode) {
    check_full(trimming, lb, cc, switch, mode, false);
}

/// [`check`] under a transport mode, with PFC on (lossless: nothing may be lost) or off (the
/// incast must overflow).
fn check_full(trimming: bool, lb: &str, cc: &str, switch: &str, mode: TransportMode, pfc: bool) {
    let what = format!(
        "lb {lb}, cc {cc}, switch {switch}, trimming {trimming}, mode {}, pfc {pfc}",
        mode.name()
    );
    let run = || {
        let scn = common::parse(&scenario(trimming, lb, cc, switch, mode, pfc));
        let b = scn
            .build(lb, None)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut sim = Simulation::new(b).unwrap_or_else(|e| panic!("{what}: {e}"));
        // The books of every packet kind balance mid-run, with packets on the way.
        for at in [20 * US, 100 * US] {
            sim.run_until(at);
            let unbalanced = sim.unbalanced_books();
            assert!(unbalanced.is_empty(), "{what} at {at} ps: {unbalanced:#?}");
        }
        sim.run_until_idle();
        sim
    };
    let sim = run();
    assert_kinds_used(&sim, &what, trimming, switch, mode, pfc);
    for f in sim.flows() {
        assert!(f.fct().is_some(), "{what}: flow {} unfinished", f.spec.id);
    }
    common::assert_all_delivered(&sim);
    let c = sim.counters();
    let losses = if trimming { c.trims } else { c.data_dropped };
    if pfc {
        assert_eq!(c.data_dropped + c.trims, 0, "{what}: PFC must be lossless");
        assert!(c.pfc_frames_sent > 0, "{what}: the incast must pause links");
        assert_eq!(
            c.pfc_frames_sent, c.pfc_frames_arrived,
            "{what}: pause-frame books at the end"
        );
    } else {
        assert!(
            losses > 0,
            "{what}: the incast should overflow the 12-packet buffers"
        );
    }
    assert_eq!(
        c.acks_sent + c.nacks_sent,
        c.control_arrived + c.control_dropped,
        "{what}: ACK/NACK books: {c:?}"
    );
    let again = run();
    assert_eq!(
        sim.flow_rows(),
        again.flow_rows(),
        "{what}: not deterministic"
    );
    assert_eq!(
        sim.counters(),
        again.counters(),
        "{what}: not deterministic"
    );
    assert_eq!(sim.lb_records(), again.lb_records(), "{what}");
}

/// The kinds the configuration makes were made and their books closed: nothing of any kind is
/// left on the way at the end, data and ACKs always flow, NACKs answer trimmed packets under
/// the UEC transport, PFC sends pause frames, and a switch scheme's own packets are counted.
fn assert_kinds_used(
    sim: &Simulation,
    what: &str,
    trimming: bool,
    switch: &str,
    mode: TransportMode,
    pfc: bool,
) {
    let b = sim.books();
    for kind in Kind::ALL {
        assert_eq!(
            b.outstanding(kind),
            Some(0),
            "{what}: {} packets left on the way at the end: {b:?}",
            kind.name()
        );
    }
    let sent = |k: Kind| b.sent[k as usize];
    assert!(sent(Kind::Data) > 0 && sent(Kind::Ack) > 0, "{what}: {b:?}");
    if trimming && !mode.is_rnic() {
        assert!(sent(Kind::Nack) > 0, "{what}: trimmed data must be NACKed");
    }
    assert_eq!(sent(Kind::Pause) > 0, pfc, "{what}: pause frames iff PFC");
    assert_eq!(sent(Kind::Pause), sim.counters().pfc_frames_sent, "{what}");
    assert_eq!(sent(Kind::Credit), sim.counters().credits_sent, "{what}");
    let scheme_made: u64 = Kind::ALL
        .iter()
        .filter(|k| {
            !matches!(
                k,
                Kind::Data | Kind::Ack | Kind::Nack | Kind::Rts | Kind::Pause | Kind::Credit
            )
        })
        .map(|&k| sent(k))
        .sum();
    assert!(
        scheme_made <= sim.counters().scheme_packets,
        "{what}: packets of scheme kinds not made by the switch scheme: {b:?}"
    );
    if switch == "conweave" {
        assert!(
            sent(Kind::Notify) > 0,
            "{what}: ConWeave sends notifications"
        );
    }
}

#[test]
fn every_load_balancer_conserves_and_repeats() {
    for lb in LbSpec::names() {
        if LbSpec::named(lb).is_some_and(|s| s.routes_wanted() > 0) {
            // Source-routed schemes are covered with their own topologies.
            continue;
        }
        for trimming in [true, false] {
            check(trimming, lb, "mprdma", "ecmp");
        }
    }
}

#[test]
fn every_congestion_control_conserves_and_repeats() {
    for cc in CcSpec::names() {
        for lb in ["reps", "ops"] {
            for trimming in [true, false] {
                check(trimming, lb, cc, "ecmp");
            }
        }
    }
}

#[test]
fn every_switch_scheme_conserves_and_repeats() {
    for switch in SwitchSpec::names() {
        for lb in ["ecmp", "ops"] {
            check(true, lb, "mprdma", switch);
        }
    }
}

#[test]
fn every_transport_mode_runs_every_congestion_control() {
    for mode in TransportMode::ALL.iter().filter(|m| m.is_rnic()) {
        for cc in CcSpec::names() {
            let credit_paced =
                CcSpec::named(cc).is_some_and(|c| c.receiver_pacing(&[], 4150, 0).is_some());
            if credit_paced {
                // Receiver credit needs the UEC transport (the scenario refuses it).
                continue;
            }
            check_mode(false, "ecmp", cc, "ecmp", *mode);
        }
        // Sprayed packets arrive out of order (NACK storms) and trimmed ones are drops to an
        // RNIC.
        check_mode(true, "ops", "dcqcn", "ecmp", *mode);
    }
}

#[test]
fn every_switch_scheme_and_transport_mode_is_lossless_under_pfc() {
    for mode in TransportMode::ALL.iter() {
        let cc = if mode.is_rnic() { "dcqcn" } else { "mprdma" };
        for switch in SwitchSpec::names() {
            check_full(false, "ecmp", cc, switch, *mode, true);
        }
        check_full(false, "ops", cc, "ecmp", *mode, true);
    }
}
