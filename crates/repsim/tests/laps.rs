//! LAPS end to end on the fabrics it was built for: a rail cluster and a Dragonfly, each with an
//! overflowing incast beside a permutation. Every byte arrives once, the packet books of every
//! kind (probes and their answers included) balance mid-run and at the end, losses are
//! recovered (by per-path detection, NACKs of trimmed packets or the per-path timeout),
//! PFC keeps it lossless, and the same seed gives the same bytes.
mod common;

use repsim::engine::time::US;
use repsim::net::Kind;
use repsim::Simulation;

/// `fabric`'s TOML with an 8-to-1 incast onto host 0 and a shifted permutation among hosts
/// 16..48; small buffers, so that without PFC the incast overflows.
fn scenario(fabric: &str, trimming: bool, pfc: bool, lb: &str) -> String {
    let mut flows: Vec<String> = (1..=8)
        .map(|s| format!("{{ src = {}, dst = 0, size = \"400KiB\" }}", s * 9 % 64))
        .collect();
    flows.extend((16..48).map(|s| {
        let d = 16 + (s - 16 + 11) % 32;
        format!("{{ src = {s}, dst = {d}, size = \"300KiB\" }}")
    }));
    format!(
        r#"
seed = 23
end = "100ms"
lb = "{lb}"
{fabric}
[queue]
size = "20pkt"
ecn_min = "5pkt"
ecn_max = "15pkt"
trimming = {trimming}
[transport]
mtu = "1048B"
header = "48B"
[pfc]
enabled = {pfc}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

const RAIL: &str = "[topology]\ntype = \"rail\"";
const DRAGONFLY: &str = "[topology]\ntype = \"dragonfly\"";

fn run(text: &str, what: &str) -> Simulation {
    let scn = common::parse(text);
    let b = scn
        .build("laps", None)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut sim = Simulation::new(b).unwrap_or_else(|e| panic!("{what}: {e}"));
    for at in [20 * US, 200 * US] {
        sim.run_until(at);
        let unbalanced = sim.unbalanced_books();
        assert!(unbalanced.is_empty(), "{what} at {at} ps: {unbalanced:#?}");
    }
    sim.run_until_idle();
    sim
}

/// Runs twice; checks delivery, books, probes, losses as asked and determinism.
fn check(fabric: &str, trimming: bool, pfc: bool) -> Simulation {
    let what = format!("{fabric}, trimming {trimming}, pfc {pfc}");
    let text = scenario(fabric, trimming, pfc, "laps");
    let sim = run(&text, &what);
    for f in sim.flows() {
        assert!(f.fct().is_some(), "{what}: flow {} unfinished", f.spec.id);
    }
    common::assert_all_delivered(&sim);
    let b = sim.books();
    for kind in Kind::ALL {
        assert_eq!(b.outstanding(kind), Some(0), "{what}: {} left", kind.name());
    }
    let sent = |k: Kind| b.sent[k as usize];
    assert!(sent(Kind::Probe) > 0, "{what}: LAPS probes stale paths");
    // Every probe that arrives while its flow runs is answered.
    assert!(
        sent(Kind::ProbeAck) > 0 && sent(Kind::ProbeAck) <= b.arrived[Kind::Probe as usize],
        "{what}: probe answers: {b:?}"
    );
    assert_eq!(sent(Kind::Rts), 0, "{what}: LAPS sends no RTS");
    let c = sim.counters();
    if pfc {
        assert_eq!(c.data_dropped + c.trims, 0, "{what}: PFC must be lossless");
        // Every route is a FIFO and nothing is lost: no ACK may overtake an earlier one on
        // its route, so nothing is declared lost (a NIC that sent faster than its line rate
        // once broke this).
        let retransmissions: u64 = sim.flows().iter().map(|f| f.stats.retransmissions).sum();
        assert_eq!(retransmissions, 0, "{what}: spurious loss detection");
    } else {
        let losses = if trimming { c.trims } else { c.data_dropped };
        assert!(
            losses > 0,
            "{what}: the incast should overflow 20-packet buffers"
        );
        let retransmissions: u64 = sim.flows().iter().map(|f| f.stats.retransmissions).sum();
        assert!(retransmissions >= losses, "{what}: every loss goes again");
    }
    let again = run(&text, &what);
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
    sim
}

#[test]
fn laps_recovers_drops_on_the_rail_cluster() {
    check(RAIL, false, false);
}

#[test]
fn laps_recovers_trimmed_packets_on_the_rail_cluster() {
    check(RAIL, true, false);
}

#[test]
fn laps_is_lossless_under_pfc_on_the_rail_cluster() {
    check(RAIL, false, true);
}

#[test]
fn laps_recovers_drops_on_the_dragonfly() {
    check(DRAGONFLY, false, false);
}

#[test]
fn laps_is_lossless_under_pfc_on_the_dragonfly() {
    check(DRAGONFLY, false, true);
}
