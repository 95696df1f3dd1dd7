//! PLB's rules: rounds, the congestion test, repaths and their timing.
use super::*;
use crate::engine::time::US;

const RTT: Time = 10 * US;

fn ctx() -> LbContext<'static> {
    LbContext {
        base_rtt: RTT,
        rto: 40 * US,
        ..LbContext::example()
    }
}

/// The state of base-RTT rounds.
fn timed(lb: &Plb) -> &TimedRounds {
    match &lb.kind {
        Rounds::BaseRtt(r) => r,
        Rounds::Window(_) => panic!("window rounds"),
    }
}

/// The state of window rounds.
fn window(lb: &Plb) -> &WindowRounds {
    match &lb.kind {
        Rounds::Window(w) => w,
        Rounds::BaseRtt(_) => panic!("base-RTT rounds"),
    }
}

fn plb(config: PlbConfig) -> (Plb, Rng) {
    let mut rng = Rng::new(7);
    (Plb::new(&config, &ctx(), &mut rng), rng)
}

fn ack(plb: &mut Plb, ecn: bool, now: Time) -> Option<LbEvent> {
    plb.on_ack(&AckFeedback {
        ecn,
        ..AckFeedback::example(0, now)
    })
}

/// One round from `start`: `good` un-marked ACKs and `marked` marked ACKs inside it, the
/// last ACK (un-marked) closing it after `round_end`. Returns the closing ACK's event.
fn round(plb: &mut Plb, start: Time, good: u32, marked: u32) -> Option<LbEvent> {
    for i in 0..marked {
        assert_eq!(ack(plb, true, start + 1 + i as Time), None);
    }
    for i in 0..good {
        assert_eq!(ack(plb, false, start + 1000 + i as Time), None);
    }
    ack(plb, false, start + RTT + 1)
}

/// The first feedback closes the round that began at time zero; returns the next round's
/// start.
fn open(plb: &mut Plb) -> Time {
    assert_eq!(ack(plb, false, 1), None);
    assert_eq!(timed(plb).round_end, 1 + RTT);
    1
}

#[test]
fn repaths_exactly_after_the_configured_congested_rounds() {
    for rounds in [1, 2, 3, 5] {
        let (mut lb, mut rng) = plb(PlbConfig {
            rounds,
            ..PlbConfig::default()
        });
        let ev0 = lb.next(0, &mut rng).ev;
        let mut t = open(&mut lb);
        for r in 1..rounds {
            assert_eq!(round(&mut lb, t, 1, 3), None, "rounds={rounds}: round {r}");
            t += RTT + 1;
            assert_eq!(lb.congested_rounds, r);
            assert_eq!(
                lb.next(t, &mut rng).ev,
                ev0,
                "no re-path before round {rounds}"
            );
        }
        assert_eq!(
            round(&mut lb, t, 1, 3),
            Some(LbEvent::REROUTED),
            "rounds={rounds}: the last congested round re-paths"
        );
        assert_eq!(lb.congested_rounds, 0, "the run restarts");
        let ev1 = lb.next(t + RTT + 2, &mut rng).ev;
        assert_ne!(ev1, ev0, "a new EV (65,536 of them)");
        assert_eq!(lb.next(t + RTT + 3, &mut rng).ev, ev1, "and it stays");
    }
}

#[test]
fn default_rounds_is_the_reference_two() {
    assert_eq!(PlbConfig::default().rounds, 2);
    assert_eq!(PlbConfig::default().threshold, 0.25);
    assert_eq!(
        PlbConfig::default().threshold_mode,
        ThresholdMode::Fractional
    );
}

#[test]
fn a_good_round_breaks_the_run() {
    let (mut lb, _) = plb(PlbConfig::default());
    let mut t = open(&mut lb);
    assert_eq!(round(&mut lb, t, 1, 3), None);
    t += RTT + 1;
    assert_eq!(round(&mut lb, t, 10, 0), None, "un-congested round");
    t += RTT + 1;
    assert_eq!(lb.congested_rounds, 0);
    assert_eq!(
        round(&mut lb, t, 1, 3),
        None,
        "only one congested round again"
    );
    t += RTT + 1;
    assert_eq!(round(&mut lb, t, 1, 3), Some(LbEvent::REROUTED));
}

#[test]
fn a_round_lasts_one_base_rtt_and_closes_on_the_first_feedback_after_it() {
    let (mut lb, _) = plb(PlbConfig::default());
    let t = open(&mut lb);
    // Marked ACKs up to and at round_end stay in the round.
    assert_eq!(ack(&mut lb, true, t + 5), None);
    assert_eq!(ack(&mut lb, true, t + RTT), None);
    assert_eq!(
        timed(&lb).delivered,
        2,
        "round_end itself is inside the round"
    );
    assert_eq!(lb.congested_rounds, 0);
    // The closing ACK counts in the round it closes: 2 of 3 marked.
    assert_eq!(ack(&mut lb, false, t + RTT + 1), None);
    assert_eq!(lb.congested_rounds, 1);
    assert_eq!(
        (timed(&lb).delivered, lb.congested),
        (0, 0),
        "counters reset"
    );
    assert_eq!(timed(&lb).round_end, t + RTT + 1 + RTT);
}

#[test]
fn fractional_and_reference_thresholds_differ_on_one_marked_ack() {
    // One marked ACK among 21 feedbacks: 1 > 0.25 x 21 is false, 1 > 0 x 21 is true.
    for (mode, congested) in [
        (ThresholdMode::Fractional, 0),
        (ThresholdMode::Reference, 1),
    ] {
        let (mut lb, _) = plb(PlbConfig {
            threshold_mode: mode,
            ..PlbConfig::default()
        });
        let t = open(&mut lb);
        assert_eq!(round(&mut lb, t, 19, 1), None);
        assert_eq!(lb.congested_rounds, congested, "{mode:?}");
    }
}

#[test]
fn fractional_threshold_is_strict() {
    // Exactly a quarter marked is not above a quarter; one more is.
    for (marked, good, congested) in [(1, 3, 0), (2, 6, 0), (2, 5, 1), (1, 2, 1)] {
        let (mut lb, _) = plb(PlbConfig::default());
        let t = open(&mut lb);
        // `good` includes the closing ACK.
        assert_eq!(round(&mut lb, t, good - 1, marked), None);
        assert_eq!(
            lb.congested_rounds,
            congested,
            "{marked} of {}",
            marked + good
        );
    }
}

#[test]
fn nacks_count_as_congested() {
    let (mut lb, _) = plb(PlbConfig::default());
    let t = open(&mut lb);
    assert_eq!(lb.on_nack(3, t + 1), None);
    assert_eq!(ack(&mut lb, false, t + 2), None);
    assert_eq!(ack(&mut lb, false, t + RTT + 1), None);
    assert_eq!(lb.congested_rounds, 1, "1 NACK of 3 feedbacks > 0.25");
    // A NACK can close the round too.
    assert_eq!(lb.on_nack(3, t + 2 * RTT + 2), Some(LbEvent::REROUTED));
}

#[test]
fn timeout_repaths_at_most_once_per_rto() {
    let (mut lb, mut rng) = plb(PlbConfig::default());
    let ev0 = lb.next(0, &mut rng).ev;
    let rto = 40 * US;
    let t = 100 * US;
    assert_eq!(lb.on_timeout(ev0, t), Some(LbEvent::REROUTED));
    let ev1 = lb.next(t, &mut rng).ev;
    assert_ne!(ev1, ev0);
    assert_eq!(lb.on_timeout(ev1, t + 1), None, "within the RTO");
    assert_eq!(lb.on_timeout(ev1, t + rto), None, "exactly one RTO later");
    assert_eq!(lb.next(t + rto, &mut rng).ev, ev1, "unchanged");
    assert_eq!(lb.on_timeout(ev1, t + rto + 1), Some(LbEvent::REROUTED));
    assert_ne!(lb.next(t + rto + 1, &mut rng).ev, ev1);
}

#[test]
fn timeout_resets_the_congested_run() {
    let (mut lb, _) = plb(PlbConfig::default());
    let mut t = open(&mut lb);
    assert_eq!(round(&mut lb, t, 1, 3), None);
    t += RTT + 1;
    assert_eq!(lb.on_timeout(0, t), Some(LbEvent::REROUTED));
    assert_eq!(lb.congested_rounds, 0);
    assert_eq!(round(&mut lb, t, 1, 3), None, "one congested round since");
}

#[test]
fn initial_ev_is_random_per_connection() {
    let config = PlbConfig::default();
    let evs: Vec<u16> = (0..8)
        .map(|seed| {
            let mut rng = Rng::new(seed);
            Plb::new(&config, &ctx(), &mut rng).next(0, &mut rng).ev
        })
        .collect();
    assert!(evs.windows(2).any(|w| w[0] != w[1]), "{evs:?}");
    let small = PlbConfig {
        evs_size: Some(4),
        ..config
    };
    let mut rng = Rng::new(1);
    let mut lb = Plb::new(&small, &ctx(), &mut rng);
    for i in 0..50 {
        lb.repath_pending = true;
        assert!(
            lb.next(i, &mut rng).ev < 4,
            "own evs_size overrides the NIC's"
        );
    }
}

/// An ACK under window rounds of a packet sent at `sent`, with `in_flight` bytes left.
fn wack(plb: &mut Plb, ecn: bool, now: Time, sent: Time, in_flight: i64) -> Option<LbEvent> {
    plb.on_ack(&AckFeedback {
        ecn,
        rtt: Some(now - sent),
        in_flight,
        ..AckFeedback::example(0, now)
    })
}

fn windowed(rounds: u32) -> (Plb, Rng) {
    plb(PlbConfig {
        rounds,
        threshold: 0.5,
        round: RoundMode::Window,
        ..PlbConfig::default()
    })
}

#[test]
fn window_rounds_end_at_the_first_ack_of_a_packet_sent_after_they_began() {
    let mtu = ctx().mtu as i64;
    let (mut lb, _) = windowed(12);
    // The first ACK only sets the round up: 4 packets in flight, a round of 5.
    assert_eq!(wack(&mut lb, true, 100, 10, 4 * mtu), None);
    let w = window(&lb);
    assert_eq!((w.round_start, w.batch), (100, 5));
    assert_eq!(lb.congested_rounds, 0, "the first round is not judged");
    // ACKs of packets sent before t = 100 stay in the round, however late they come.
    for t in [150, 300, 10_000] {
        assert_eq!(wack(&mut lb, true, t, 99, 4 * mtu), None);
    }
    assert_eq!(
        lb.on_nack(0, 10_001),
        None,
        "a NACK counts but never closes"
    );
    assert_eq!(lb.congested, 4);
    // The ACK of a packet sent at the round's start closes it: 4 of 5 >= 0.5.
    assert_eq!(wack(&mut lb, false, 10_002, 100, 0), None);
    assert_eq!(lb.congested_rounds, 1);
    let w = window(&lb);
    assert_eq!((w.round_start, w.batch), (10_002, 1));
}

#[test]
fn window_rounds_are_congested_from_the_threshold_on() {
    // Rounds of 4 packets (3 in flight at the start, plus one): 2 marked is half.
    let mtu = ctx().mtu as i64;
    for (marked, congested) in [(1, 0), (2, 1), (4, 1)] {
        let (mut lb, _) = windowed(12);
        wack(&mut lb, false, 10, 0, 3 * mtu);
        for i in 0..marked {
            wack(&mut lb, true, 11 + i, 5, 3 * mtu);
        }
        wack(&mut lb, false, 20, 10, 3 * mtu);
        assert_eq!(lb.congested_rounds, congested, "{marked} of 4 marked");
    }
}

#[test]
fn window_rounds_repath_after_the_run_or_when_idle_and_timeouts_stop_them() {
    let mtu = ctx().mtu as i64;
    // A fully marked round from `start` (its closing ACK marked too) with `left` in flight.
    let congested_round =
        |lb: &mut Plb, start: Time, left: i64| wack(lb, true, start + 5, start + 1, left);
    let (mut lb, mut rng) = windowed(3);
    let ev0 = lb.next(0, &mut rng).ev;
    wack(&mut lb, false, 10, 0, mtu);
    assert_eq!(congested_round(&mut lb, 10, mtu), None);
    assert_eq!(congested_round(&mut lb, 15, mtu), None);
    assert_eq!(congested_round(&mut lb, 20, mtu), Some(LbEvent::REROUTED));
    assert_ne!(lb.next(30, &mut rng).ev, ev0);
    // Nothing in flight: three congested rounds suffice even with a longer run asked.
    let (mut lb, _) = windowed(12);
    wack(&mut lb, false, 10, 0, mtu);
    assert_eq!(congested_round(&mut lb, 10, mtu), None);
    assert_eq!(congested_round(&mut lb, 15, mtu), None);
    assert_eq!(congested_round(&mut lb, 20, 0), Some(LbEvent::REROUTED));
    // A timeout re-paths nothing and stops PLB: the run counts on but moves nothing.
    let (mut lb, mut rng) = windowed(3);
    let ev0 = lb.next(0, &mut rng).ev;
    wack(&mut lb, false, 10, 0, mtu);
    assert_eq!(congested_round(&mut lb, 10, mtu), None);
    assert_eq!(lb.on_timeout(ev0, 12), None);
    assert_eq!(lb.congested_rounds, 0, "the run is reset");
    for k in 0..6 {
        assert_eq!(congested_round(&mut lb, 15 + 5 * k, mtu), None);
    }
    assert_eq!(lb.next(100, &mut rng).ev, ev0);
}

#[test]
fn validate_names_the_field() {
    let bad = |c: PlbConfig| c.validate(&RunContext::new(4150, 64)).unwrap_err();
    assert!(bad(PlbConfig {
        rounds: 0,
        ..PlbConfig::default()
    })
    .to_string()
    .starts_with("rounds:"));
    for threshold in [-0.1, 1.0, f64::NAN] {
        assert!(bad(PlbConfig {
            threshold,
            ..PlbConfig::default()
        })
        .to_string()
        .starts_with("threshold:"));
    }
    assert!(bad(PlbConfig {
        evs_size: Some(0),
        ..PlbConfig::default()
    })
    .to_string()
    .starts_with("evs_size:"));
    assert!(PlbConfig::default()
        .validate(&RunContext::new(4150, 64))
        .is_ok());
}

#[test]
fn parses_from_a_scenario_table() {
    let c: PlbConfig =
        toml::from_str("rounds = 3\nthreshold = 0.5\nthreshold_mode = \"reference\"").unwrap();
    assert_eq!(c.rounds, 3);
    assert_eq!(c.effective_threshold(), 0.0);
    assert!(toml::from_str::<PlbConfig>("round = 3").is_err());
    let c: PlbConfig = toml::from_str("round = \"window\"").unwrap();
    assert_eq!(c.round, RoundMode::Window);
    assert!(toml::from_str::<PlbConfig>("round = \"rtt\"").is_err());
}
