//! Two behaviours of the reference simulator that its failure scenarios depend on: the timed
//! MPRDMA fast-increase switch of the Fig. 7 scenario and RTS (request to send) after timeouts.
mod common;

use repsim::engine::time::US;
use repsim::scenario::LoadedScenario;
use repsim::sim::Phase;
use repsim::Simulation;

fn simulation(
    scn: &LoadedScenario,
    lb: &str,
    edit: impl FnOnce(&mut repsim::SimConfig),
) -> Simulation {
    let mut b = scn.build(lb, None).unwrap_or_else(|e| panic!("{e}"));
    edit(&mut b.config);
    Simulation::new(b).unwrap_or_else(|e| panic!("{e}"))
}

fn max_fct(sim: &Simulation) -> u64 {
    sim.flows()
        .iter()
        .map(|f| f.fct().expect("every flow finishes"))
        .max()
        .unwrap()
}

#[test]
fn fast_increase_switches_on_at_the_configured_time_and_not_before() {
    let scn = common::load("reps-micro-failures.toml");
    for lb in ["reps", "ops"] {
        let mut with = simulation(&scn, lb, |c| {
            assert_eq!(c.cc.timed_switch_at(), Some(650 * US));
        });
        let mut without = simulation(&scn, lb, |c| {
            let Some(m) = c.cc.config_mut::<repsim::cc::mprdma::MprdmaConfig>() else {
                panic!("an MPRDMA run")
            };
            m.fast_increase_after = None;
        });
        // Before 650 us the two runs are the same run.
        with.run_until(650 * US - 1);
        without.run_until(650 * US - 1);
        assert!(
            !with.timed_switch_turned_on(),
            "{lb}: switched on too early"
        );
        assert_eq!(
            with.counters(),
            without.counters(),
            "{lb}: diverged before 650 us"
        );
        // At 650 us it switches on for every sender.
        with.run_until(650 * US);
        assert!(
            with.timed_switch_turned_on(),
            "{lb}: not switched on at 650 us"
        );
        assert!(!without.timed_switch_turned_on());
        with.run_until_idle();
        without.run_until_idle();
        // The windows the outages shrank refill in a few RTTs instead of one MTU per RTT.
        assert!(
            max_fct(&with) < max_fct(&without),
            "{lb}: fast increase should finish the flows earlier ({} vs {} ps)",
            max_fct(&with),
            max_fct(&without)
        );
    }
}

#[test]
fn rts_follows_timeouts_behind_a_dead_cable() {
    let scn = common::load("failures-one-cable-32.toml");
    let rto = simulation(&scn, "reps", |_| {}).rto();
    for lb in ["reps", "ops"] {
        let mut sim = simulation(&scn, lb, |_| {});
        sim.run_until_idle();
        let mut total = 0;
        for f in sim.flows() {
            assert_eq!(f.phase, Phase::Done, "{lb}: flow {} unfinished", f.spec.id);
            let s = &f.stats;
            // At most one RTS per timeout, and at most one per RTO.
            assert!(s.rts <= s.timeouts, "{lb}: flow {}: {s:?}", f.spec.id);
            let per_rto = 1 + f.fct().unwrap() / rto;
            assert!(
                s.rts <= per_rto,
                "{lb}: flow {}: {} RTS in {per_rto} RTOs",
                f.spec.id,
                s.rts
            );
            total += s.rts;
        }
        assert!(
            total > 0,
            "{lb}: window-limited flows behind a dead cable must send RTS"
        );
        assert_eq!(sim.counters().rts_sent, total);
        common::assert_books_balance(&sim);
        assert_eq!(sim.live_packets(), 0);
        // Switched off, none is sent.
        let mut off = simulation(&scn, lb, |c| c.transport.rts = false);
        off.run_until_idle();
        assert_eq!(off.counters().rts_sent, 0);
    }
}

#[test]
fn no_rts_when_the_window_has_room_for_the_retransmission() {
    // One single-packet flow whose packet dies in a short outage of every uplink of its ToR: its
    // timeout leaves the window wide open, so the retransmission goes and no RTS is sent.
    let scn = common::parse(
        r#"
lb = "ops"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[[fault]]
kind = "switch_down"
switch = "tor0"
duration = "20us"
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = false
[workload]
type = "explicit"
flows = [{ src = 0, dst = 8, size = "4086B", start = "1us" }]
"#,
    );
    let mut sim = simulation(&scn, "ops", |_| {});
    sim.run_until_idle();
    let f = &sim.flows()[0];
    assert_eq!(f.phase, Phase::Done);
    assert!(f.stats.timeouts >= 1, "{:?}", f.stats);
    assert_eq!(f.stats.rts, 0);
}
