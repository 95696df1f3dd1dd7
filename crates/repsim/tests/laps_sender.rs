//! The LAPS transport: window, AIMD rules, per-path loss detection and per-path timeout.
use repsim::engine::time::{MS, NS, US};
use repsim::engine::{Rng, Time};
use repsim::lb::laps::{LapsConfig, LapsDecreaseGuard, LapsTransport, PathSignal};
use repsim::lb::{LbContext, LbSpec, OwnTransport, Route};
use repsim::transport::sender::*;
use repsim::transport::{FlowStats, Sizes};

const MTU: u32 = 1048;
const HEADER: u32 = 48;
const LINE: u64 = 200_000_000_000;
/// T: the largest idle baseline of [`routes`].
const T: Time = 9 * US;

/// Four 4-link routes: a lone packet takes T - 2 us, and each link's slowest serialisation
/// (500 ns of a full packet at 16.768 Gb/s) brings the idle baseline to T.
fn routes() -> Vec<Route> {
    (0..4)
        .map(|i| Route {
            id: 10 + i,
            hops: 4,
            base_rtt: 2 * T,
            one_way: T - 2 * US,
            slowest_rate: 16_768_000_000,
        })
        .collect()
}

fn transport(config: &LapsConfig) -> LapsTransport {
    LapsTransport::new(config, 4, T, LINE, MTU)
}

/// A LAPS sender of `packets` full packets over [`routes`].
fn laps_sender(packets: u64) -> Sender {
    let config = LapsConfig::default();
    let sizes = Sizes::new(packets * (MTU - HEADER) as u64, MTU, HEADER);
    let cc = repsim::cc::unconsulted(&repsim::cc::CcParams {
        mtu: MTU,
        base_rtt: 2 * T,
        bdp: 100 * MTU as u64,
        line_rate: LINE,
        network_rtt: 2 * T,
        trimming: false,
        timed_switch_on: false,
    });
    let routes = routes();
    let ctx = LbContext {
        routes: &routes,
        ..LbContext::example()
    };
    let mut rng = Rng::new(5);
    let lb = LbSpec::new(config.clone()).build(&ctx, &mut rng);
    Sender::new(sizes, LINE, cc, lb, rng).with_own_transport(Box::new(transport(&config)))
}

fn signal(congested: bool) -> PathSignal {
    PathSignal {
        congested,
        max_latency: 3 * T,
    }
}

#[test]
fn window_is_twice_target_times_line_rate() {
    // 2 x 9 us x 200 Gb/s = 450,000 B.
    assert_eq!(transport(&LapsConfig::default()).window(), 450_000);
    assert_eq!(laps_sender(10).window(), 450_000);
}

#[test]
fn default_is_the_codes_window_only_sender_with_the_codes_guards() {
    let c = LapsConfig::default();
    assert!(!c.pacing);
    assert_eq!(c.decrease_guard, LapsDecreaseGuard::Latency);
    let p = LapsConfig::paper_text();
    assert!(p.pacing);
    assert_eq!(p.decrease_guard, LapsDecreaseGuard::Target);
    assert_eq!(
        LapsConfig {
            pacing: false,
            decrease_guard: LapsDecreaseGuard::Latency,
            ..p
        },
        c,
        "the two senders differ in pacing and the guard only"
    );
}

#[test]
fn paper_rate_halves_only_when_congested_and_at_most_once_per_2t() {
    let mut t = transport(&LapsConfig::paper_text());
    t.on_path_signal(US, &signal(true));
    assert_eq!(t.rate(), LINE / 2);
    assert_eq!(t.expected_rate(), LINE);
    // Within 2T of the decrease: no second one, however many congested ACKs.
    for i in 1..18 {
        t.on_path_signal(US + i * US, &signal(true));
    }
    assert_eq!(t.rate(), LINE / 2);
    t.on_path_signal(US + 2 * T + NS, &signal(true));
    assert_eq!(t.rate(), LINE / 4);
    assert_eq!(t.expected_rate(), LINE / 2);
    // Not congested (some valid path under T): the rate never halves.
    let mut u = transport(&LapsConfig::paper_text());
    for i in 0..100 {
        u.on_path_signal(i * US, &signal(false));
    }
    assert_eq!(u.rate(), LINE);
}

#[test]
fn default_decrease_waits_twice_the_largest_latency() {
    // signal(): the largest current path latency is 3T, so decreases are 6T apart, not 2T.
    let mut t = transport(&LapsConfig::default());
    t.on_path_signal(US, &signal(true));
    assert_eq!(t.rate(), LINE / 2);
    for i in 1..=6 {
        t.on_path_signal(US + i * T, &signal(true));
        assert_eq!(t.rate(), LINE / 2, "{i} T after the decrease");
    }
    t.on_path_signal(US + 6 * T + NS, &signal(true));
    assert_eq!(t.rate(), LINE / 4);
    // The wait is the latency at the decrease: a larger one spaces the next decrease more.
    let mut w = transport(&LapsConfig::default());
    let slow = PathSignal {
        congested: true,
        max_latency: 10 * T,
    };
    w.on_path_signal(US, &slow);
    w.on_path_signal(US + 20 * T, &signal(true));
    assert_eq!(
        w.rate(),
        LINE / 2,
        "20T after a decrease at a latency of 10T"
    );
    w.on_path_signal(US + 20 * T + NS, &signal(true));
    assert_eq!(w.rate(), LINE / 4);
}

#[test]
fn default_increase_waits_2t() {
    let mut t = transport(&LapsConfig::default());
    for i in 1..=3 {
        t.on_path_signal(i * 7 * T, &signal(true));
    }
    assert_eq!(t.rate(), LINE / 8);
    let start = 30 * T;
    t.on_path_signal(start, &signal(false));
    let after_one = t.rate();
    assert!(after_one > LINE / 8);
    for i in 1..=4 {
        t.on_path_signal(start + i * T / 2, &signal(false));
        assert_eq!(t.rate(), after_one, "{i} T/2 after the increase");
    }
    t.on_path_signal(start + 2 * T + NS, &signal(false));
    assert!(t.rate() > after_one, "the next increase 2T later");
}

#[test]
fn paper_guard_allows_one_adjustment_of_either_kind_per_2t() {
    let mut t = transport(&LapsConfig::paper_text());
    t.on_path_signal(US, &signal(true));
    assert_eq!(t.rate(), LINE / 2);
    // No increase within 2T of the decrease...
    t.on_path_signal(US + T, &signal(false));
    assert_eq!(t.rate(), LINE / 2);
    t.on_path_signal(US + 2 * T + NS, &signal(false));
    assert_eq!(t.rate(), 3 * LINE / 4);
    // ...and no decrease within 2T of the increase.
    t.on_path_signal(US + 3 * T, &signal(true));
    assert_eq!(t.rate(), 3 * LINE / 4);
    t.on_path_signal(US + 4 * T + 2 * NS, &signal(true));
    assert_eq!(t.rate(), 3 * LINE / 8);

    // The code's guards are independent: a decrease may follow an increase at once.
    let mut c = transport(&LapsConfig::default());
    c.on_path_signal(US, &signal(true));
    c.on_path_signal(US + T, &signal(false));
    assert_eq!(c.rate(), 3 * LINE / 4, "increase right after the decrease");
    c.on_path_signal(US + 5 * T, &signal(false));
    assert_eq!(c.rate(), 7 * LINE / 8);
    // T after that increase, but 2 x 3T after the decrease: halves.
    c.on_path_signal(US + 6 * T + NS, &signal(true));
    assert_eq!(c.rate(), 7 * LINE / 16, "decrease within 2T of an increase");
}

#[test]
fn rate_never_goes_below_the_minimum() {
    for config in [LapsConfig::default(), LapsConfig::paper_text()] {
        let mut t = transport(&config);
        // Decreases at least 2 x 3T apart (the default's guard under signal()): 20 of them.
        for i in 1..=20 {
            t.on_path_signal(i * 7 * T, &signal(true));
        }
        assert_eq!(t.rate(), 1_000_000_000);
    }
}

#[test]
fn hyper_increase_starts_after_exactly_n_increases() {
    let config = LapsConfig {
        additive_step: repsim::units::RateQ(0),
        ..LapsConfig::paper_text()
    };
    let mut t = transport(&config);
    // Down to 12.5 Gb/s, expected rate 25 Gb/s.
    for i in 1..=4 {
        t.on_path_signal(i * 3 * T, &signal(true));
    }
    assert_eq!((t.rate(), t.expected_rate()), (LINE / 16, LINE / 8));
    let mut now = 20 * T;
    let mut expected = Vec::new();
    for _ in 0..8 {
        now += 2 * T + NS;
        t.on_path_signal(now, &signal(false));
        expected.push(t.expected_rate());
    }
    // Six increases halve the gap to 25 Gb/s (the expected rate stays); the seventh doubles
    // the expected rate first, and so does every later one.
    let e = LINE / 8;
    assert_eq!(&expected[..6], &[e; 6]);
    assert_eq!(expected[6], 2 * e);
    assert_eq!(expected[7], 4 * e);
    // At most one increase per 2T.
    let before = t.rate();
    t.on_path_signal(now + T, &signal(false));
    assert_eq!(t.rate(), before);
    // A decrease ends the hyper phase: N increases again before the next doubling.
    t.on_path_signal(now + 3 * T, &signal(true));
    assert_eq!(t.increases(), 0);
}

fn ack(psn: u32, sent_at: Time, path: u16) -> AckInfo {
    AckInfo {
        nack: false,
        psn,
        sent_at,
        ev: path,
        ecn: false,
        cnp: false,
        cum_ack: 0,
        sack_base: 0,
        sack_bits: 0,
        one_way: Some(5 * US),
    }
}

/// Sends 24 packets, 10 ns apart; returns (psn, send time, path) of each.
fn send_some(s: &mut Sender) -> Vec<(u32, Time, u16)> {
    (0..24)
        .map(|i| {
            let now = i * 10 * NS;
            let tx = s.transmit(now, 8 * MS);
            assert_eq!(tx.path.route, 10 + tx.path.ev as u32);
            (tx.psn, now, tx.path.ev)
        })
        .collect()
}

#[test]
fn a_later_ack_on_a_path_retransmits_the_earlier_packets_of_that_path_only() {
    let mut s = laps_sender(100);
    let sent = send_some(&mut s);
    // The path with the most packets; ACK its third.
    let p = (0..4u16)
        .max_by_key(|&p| sent.iter().filter(|x| x.2 == p).count())
        .unwrap();
    let on_p: Vec<_> = sent.iter().filter(|x| x.2 == p).collect();
    assert!(on_p.len() >= 3, "{sent:?}");
    let (psn, at, _) = *on_p[2];
    s.on_ack(300 * NS, &ack(psn, at, p), &mut FlowStats::default());
    for &(q, _, path) in &sent {
        let state = s.record(q).state;
        let expected = if q == psn {
            PsnState::Acked
        } else if path == p && q < psn {
            PsnState::Queued
        } else {
            PsnState::InFlight
        };
        assert_eq!(state, expected, "psn {q} on path {path}");
    }
    // They go again first, lowest PSN first.
    assert_eq!(s.next_retransmission(), Some(on_p[0].0));
    // An ACK in order on another path declares nothing lost.
    let other = sent.iter().find(|x| x.2 != p).unwrap();
    let queued = |s: &Sender| {
        (0..24)
            .filter(|&q| s.record(q).state == PsnState::Queued)
            .count()
    };
    let before = queued(&s);
    s.on_ack(
        301 * NS,
        &ack(other.0, other.1, other.2),
        &mut FlowStats::default(),
    );
    assert_eq!(queued(&s), before);
}

#[test]
fn an_idle_path_times_out_alone() {
    let mut s = laps_sender(100);
    let sent = send_some(&mut s);
    let rto = 8 * MS;
    // Every path but `p` is acknowledged completely, in order.
    let p = sent[0].2;
    for &(psn, at, path) in sent.iter().filter(|x| x.2 != p) {
        s.on_ack(MS, &ack(psn, at, path), &mut FlowStats::default());
    }
    let last_on_p = sent.iter().filter(|x| x.2 == p).map(|x| x.1).max().unwrap();
    assert_eq!(s.check_rto(MS, rto), RtoCheck::Rearm(last_on_p + rto));
    let now = last_on_p + rto;
    let RtoCheck::Expired(psn) = s.check_rto(now, rto) else {
        panic!("path {p} must time out");
    };
    let mut stats = FlowStats::default();
    let out = s.time_out(psn, now, rto, &mut stats);
    assert_eq!(stats.timeouts, 1);
    assert_eq!(out.rearm, None, "nothing else outstanding");
    for &(q, _, path) in &sent {
        let expected = if path == p {
            PsnState::Queued
        } else {
            PsnState::Acked
        };
        assert_eq!(s.record(q).state, expected, "psn {q}");
    }
    assert_eq!(s.in_flight(), 0);
    assert!(!s.rts_due(now, MTU as u64, false, rto), "LAPS sends no RTS");
}

#[test]
fn pacing_follows_the_rate_unless_window_only() {
    let mut s = laps_sender(100);
    s.transmit(0, 8 * MS);
    assert_eq!(s.paced_until(0), None, "at line rate: no spacing");
    let mut t = transport(&LapsConfig::paper_text());
    t.on_path_signal(US, &signal(true));
    assert_eq!(t.pacing_rate(), Some(LINE / 2));
    let mut w = transport(&LapsConfig::default());
    w.on_path_signal(US, &signal(true));
    assert_eq!(w.pacing_rate(), None);
}
