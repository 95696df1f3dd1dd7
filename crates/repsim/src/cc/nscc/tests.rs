//! NSCC's rules, one test per rule (uet-htsim spec section 8).
use super::*;
use crate::units::Size;

const MTU: u64 = 4150;
/// The example's base (and network) RTT.
const BASE: Time = 8_337_120;
/// Its target delay, 0.75 network RTTs.
const T: Time = 6_252_840;
/// Its maximum window, 1.5 BDP.
const MAX: u64 = 625_284;

/// Adjustments applied only when a test says so.
fn quiet() -> NsccConfig {
    NsccConfig {
        adjust_period: Some(TimeQ(SEC)),
        adjust_bytes: Some(SizeQ(Size::Bytes(u64::MAX / 2))),
        ..Default::default()
    }
}

fn nscc(c: NsccConfig, initial_pkts: f64) -> Nscc {
    let c = NsccConfig {
        initial_cwnd: Some(SizeQ(Size::Packets(initial_pkts))),
        ..c
    };
    Nscc::new(&c, &CcParams::example())
}

/// An ACK of `acked` bytes at `now` with queueing delay `delay` (`None`: no sample).
fn ack(cc: &mut Nscc, now: Time, acked: u64, ecn: bool, delay: Option<Time>) {
    ack_in_flight(cc, now, acked, ecn, delay, 0);
}

fn ack_in_flight(
    cc: &mut Nscc,
    now: Time,
    acked: u64,
    ecn: bool,
    delay: Option<Time>,
    in_flight: i64,
) {
    cc.on_ack(&AckSample {
        acked,
        ecn,
        cnp: false,
        rtt: delay.map(|d| BASE + d),
        now,
        in_flight,
    });
}

/// An ACK of `acked` bytes at `now` whose round trip took `rtt` (not a delay over `BASE`).
fn ack_rtt(cc: &mut Nscc, now: Time, acked: u64, rtt: Time) {
    cc.on_ack(&AckSample {
        acked,
        ecn: false,
        cnp: false,
        rtt: Some(rtt),
        now,
        in_flight: 0,
    });
}

/// An intra-rack path's unloaded RTT, well under the example's network RTT (`BASE`).
const INTRA_RACK: Time = 2 * US;

/// The example's parameters for a flow on an intra-rack path.
fn intra_rack() -> CcParams {
    CcParams {
        base_rtt: INTRA_RACK,
        bdp: 100_000,
        ..CcParams::example()
    }
}

#[test]
fn constants_match_the_reference_table() {
    // uet-htsim 8.1's defaults: 100 G, 3 tiers of 1 us hops, network RTT 14.02272 us.
    let p = CcParams {
        line_rate: 100_000_000_000,
        network_rtt: 14_022_720,
        base_rtt: 14_022_720,
        bdp: 175_284,
        ..CcParams::example()
    };
    let cc = Nscc::new(&NsccConfig::default(), &p);
    let close = |x: f64, want: f64| (x - want).abs() <= want * 1e-5;
    assert_eq!(cc.target, 10_517_040.0);
    assert_eq!(cc.qa_threshold, 42_068_160.0);
    assert!(close(cc.alpha, 0.00159158), "{}", cc.alpha);
    assert!(close(cc.fi, 23_873.7), "{}", cc.fi);
    assert!(close(cc.eta, 716.21), "{}", cc.eta);
    assert!(close(cc.fi_scale, 0.29214), "{}", cc.fi_scale);
    assert_eq!((cc.adjust_period, cc.adjust_bytes), (14_022_720, 33_200));
    assert_eq!((cc.max_cwnd, cc.cwnd), (262_926, 262_926));
    // reps2024: T 6 us, 12 us period, 16,000 B x T / 12 us.
    let c = NsccConfig {
        variant: NsccVariant::Reps2024,
        ..Default::default()
    };
    let cc = Nscc::new(&c, &p);
    assert_eq!((cc.target, cc.adjust_period), (6e6, 12 * US));
    assert_eq!(cc.adjust_bytes, 8_000);
}

#[test]
fn unmarked_at_or_above_target_is_a_fair_increase() {
    let mut cc = nscc(
        NsccConfig {
            adjust_bytes: Some(SizeQ(Size::Packets(8.0))),
            ..quiet()
        },
        100.0,
    );
    let w0 = 100 * MTU;
    let mut inc = 0.0;
    // Exactly 8 MTU acknowledged is not more than adjust_bytes: nothing applied yet.
    for i in 0..8 {
        ack(&mut cc, 10 * US + i, MTU, false, Some(T));
        inc += cc.fi * MTU as f64;
        assert_eq!(cc.inc, inc);
    }
    assert_eq!(cc.cwnd(), w0);
    ack(&mut cc, 10 * US + 8, MTU, false, Some(T));
    inc += cc.fi * MTU as f64;
    assert_eq!(cc.cwnd(), w0 + (inc / w0 as f64) as u64);
    assert_eq!((cc.inc, cc.received_bytes), (0.0, 0));
}

#[test]
fn unmarked_below_target_is_a_proportional_increase() {
    let mut cc = nscc(quiet(), 100.0);
    ack(&mut cc, 10 * US, MTU, false, Some(T - 1));
    assert_eq!(cc.inc, cc.alpha * MTU as f64);
    ack(&mut cc, 11 * US, MTU, false, Some(T / 2));
    let want = cc.alpha * MTU as f64 + cc.alpha * MTU as f64 * (T - T / 2) as f64;
    assert_eq!(cc.inc, want);
    assert_eq!(cc.cwnd(), 100 * MTU);
}

#[test]
fn fast_increase_after_a_window_of_low_delay() {
    let mut cc = nscc(quiet(), 10.0);
    let w0 = 10 * MTU;
    // A window's worth (10 MTU, not more than the window) only counts.
    for i in 0..10 {
        ack(&mut cc, 10 * US + i, MTU, false, Some(US - 1));
    }
    assert!(!cc.fast_mode && cc.inc > 0.0);
    let inc = cc.inc;
    // The 11th goes over: the window grows at once by fi_scale of the ACK, no inc.
    ack(&mut cc, 11 * US, MTU, false, Some(0));
    let step = (MTU as f64 * cc.fi_scale) as u64;
    assert_eq!((cc.cwnd(), cc.inc), (w0 + step, inc));
    ack(&mut cc, 11 * US, MTU, false, Some(0));
    assert_eq!(cc.cwnd(), w0 + 2 * step);
    // A delay of 1 us leaves fast mode and restarts the count.
    ack(&mut cc, 12 * US, MTU, false, Some(US));
    assert!(!cc.fast_mode && cc.fi_count == 0);
    assert!(cc.inc > inc);
}

#[test]
fn marked_below_target_changes_nothing() {
    let mut cc = nscc(quiet(), 100.0);
    cc.avg_delay = 3.0 * T as f64;
    cc.inc = 1e9;
    ack(&mut cc, 20 * US, MTU, true, Some(T - 1));
    assert_eq!((cc.cwnd(), cc.inc), (100 * MTU, 1e9));
}

#[test]
fn reduces_at_most_once_per_base_rtt_on_persistent_marks() {
    let mut cc = nscc(quiet(), 150.0);
    cc.avg_delay = 2.0 * T as f64;
    let mut cuts = Vec::new();
    for us in 10..60 {
        let before = cc.cwnd();
        ack(&mut cc, us * US, MTU, true, Some(2 * T));
        if cc.cwnd() != before {
            let avg = cc.avg_delay;
            let factor = (1.0 - 0.8 * (avg - T as f64) / avg).max(0.5);
            assert_eq!(cc.cwnd(), (before as f64 * factor) as u64);
            cuts.push(us);
        }
    }
    // 8.337 us apart at least: every 9th microsecond.
    assert_eq!(cuts, [10, 19, 28, 37, 46, 55]);
    // Exactly one base RTT after the last cut is not enough; one picosecond more is.
    let last = 55 * US;
    let w = cc.cwnd();
    ack(&mut cc, last + BASE, MTU, true, Some(2 * T));
    assert_eq!(cc.cwnd(), w);
    ack(&mut cc, last + BASE + 1, MTU, true, Some(2 * T));
    assert!(cc.cwnd() < w);
}

#[test]
fn decrease_follows_the_average_and_is_clamped() {
    // The sample is above target but the average is not: no cut.
    let mut cc = nscc(quiet(), 100.0);
    cc.avg_delay = 0.5 * T as f64;
    ack(&mut cc, 20 * US, MTU, true, Some(2 * T));
    assert_eq!(cc.cwnd(), 100 * MTU);
    // A huge average cuts by half, no more, and never below one MTU.
    let mut cc = nscc(quiet(), 100.0);
    cc.avg_delay = 100.0 * T as f64;
    ack(&mut cc, 20 * US, MTU, true, Some(3 * T));
    assert_eq!(cc.cwnd(), 50 * MTU);
    let mut cc = nscc(quiet(), 1.5);
    cc.avg_delay = 100.0 * T as f64;
    ack(&mut cc, 20 * US, MTU, true, Some(3 * T));
    assert_eq!(cc.cwnd(), MTU);
    // Increases stop at the maximum window.
    let mut cc = nscc(
        NsccConfig {
            adjust_bytes: Some(SizeQ(Size::Bytes(1))),
            ..quiet()
        },
        150.0,
    );
    for i in 0..50 {
        ack(&mut cc, 10 * US + i, 10 * MTU, false, Some(0));
    }
    assert_eq!(cc.cwnd(), MAX);
}

#[test]
fn quick_adapts_after_a_loss_burst() {
    let mut cc = nscc(NsccConfig::default(), 151.0);
    // The first ACK opens a measurement window of base RTT + T.
    ack(&mut cc, 10 * US, MTU, false, Some(T));
    assert_eq!(cc.qa_end, 10 * US + BASE + T);
    ack(&mut cc, 12 * US, MTU, false, Some(T));
    ack(&mut cc, 14 * US, MTU, false, Some(T));
    // A burst of NACKs inside the window: each takes its size off, no quick adapt yet.
    let before = cc.cwnd();
    for i in 0..10 {
        cc.on_nack(MTU, 15 * US + i * 100_000);
    }
    assert_eq!(cc.cwnd(), before - 10 * MTU);
    // The first ACK after the window snaps the window to what it delivered (3 ACKs) and
    // ignores the marks of the 12 packets then in flight.
    ack_in_flight(&mut cc, 25 * US, MTU, false, Some(T), 12 * MTU as i64);
    assert_eq!(cc.cwnd(), 3 * MTU);
    for i in 0..5 {
        ack(&mut cc, 26 * US + i * 100_000, MTU, true, Some(3 * T));
        assert_eq!((cc.cwnd(), cc.inc), (3 * MTU, 0.0), "ignored mark {i}");
    }
    // A NACK while they drain changes nothing either (but asks for quick adapt again).
    cc.on_nack(MTU, 27 * US);
    assert_eq!(cc.cwnd(), 3 * MTU);
    for i in 0..5 {
        ack(&mut cc, 28 * US + i * 100_000, MTU, true, Some(3 * T));
        assert_eq!(cc.cwnd(), 3 * MTU, "ignored mark {}", i + 5);
    }
    // Drained: the next mark counts (the average is made high enough to cut).
    cc.avg_delay = 2.0 * T as f64;
    ack(&mut cc, 29 * US, MTU, true, Some(2 * T));
    assert!(cc.cwnd() < 3 * MTU);
    // The NACK's request fires at the next window's end: 12 packets came back in it
    // (under maxwnd >> 3, 18.8 packets).
    ack(&mut cc, 40 * US, MTU, false, Some(T));
    assert_eq!(cc.cwnd(), 12 * MTU);
    // Once per window: a NACK inside the new window only takes its size off.
    cc.on_nack(MTU, 41 * US);
    assert_eq!(cc.cwnd(), 11 * MTU);
}

#[test]
fn quick_adapt_gate_and_delay_threshold() {
    let gate = MAX >> 3;
    let mut cc = nscc(NsccConfig::default(), 151.0);
    ack(&mut cc, 10 * US, MTU, false, Some(0));
    // A window that delivered exactly maxwnd >> 3 is not below the gate.
    ack(&mut cc, 20 * US, gate, false, Some(0));
    ack(&mut cc, 30 * US, 0, false, Some(4 * T + 1));
    assert_eq!(cc.cwnd(), MAX);
    // Below the gate, a delay of exactly 4 T does not trigger...
    ack(&mut cc, 35 * US, gate - 1, false, Some(0));
    ack(&mut cc, 45 * US, 0, false, Some(4 * T));
    assert_eq!(cc.cwnd(), MAX);
    // ...but one picosecond more does, without any loss.
    ack(&mut cc, 50 * US, gate - 1, false, Some(0));
    ack(&mut cc, 60 * US, 0, false, Some(4 * T + 1));
    assert_eq!(cc.cwnd(), gate - 1);
    // A NACK after a window's end quick-adapts by itself.
    let mut cc = nscc(NsccConfig::default(), 151.0);
    ack(&mut cc, 10 * US, MTU, false, Some(0));
    ack(&mut cc, 12 * US, 2 * MTU, false, Some(0));
    cc.on_nack(MTU, 30 * US);
    assert_eq!(cc.cwnd(), 2 * MTU);
    // Switched off, losses only take their size off.
    let mut cc = nscc(
        NsccConfig {
            quick_adapt: false,
            ..Default::default()
        },
        151.0,
    );
    ack(&mut cc, 10 * US, MTU, false, Some(0));
    cc.on_nack(MTU, 30 * US);
    assert_eq!(cc.cwnd(), MAX - MTU);
}

#[test]
fn eta_once_per_adjust_period_in_any_quadrant() {
    let mut cc = nscc(NsccConfig::default(), 100.0);
    let (w0, eta) = (100 * MTU, cc.eta as u64);
    // Marked and below target: only eta, once the period has passed since 0.
    ack(&mut cc, BASE, MTU, true, Some(0));
    assert_eq!(cc.cwnd(), w0);
    ack(&mut cc, BASE + 1, MTU, true, Some(0));
    assert_eq!((cc.cwnd(), cc.last_adjust), (w0 + eta, BASE + 1));
    // A byte-triggered adjustment inside the period adds no eta and keeps the period.
    for i in 0..9 {
        ack(&mut cc, BASE + 2 + i, MTU, true, Some(0));
    }
    assert_eq!((cc.cwnd(), cc.last_adjust), (w0 + eta, BASE + 1));
    // One landing exactly a period later adds it.
    for _ in 0..8 {
        ack(&mut cc, 2 * BASE, MTU, true, Some(0));
    }
    ack(&mut cc, 2 * BASE + 1, MTU, true, Some(0));
    assert_eq!(cc.cwnd(), w0 + 2 * eta);
}

#[test]
fn delay_samples_and_the_average() {
    let g = DELAY_GAIN;
    let mut cc = nscc(quiet(), 100.0);
    // Un-marked above target feeds a quarter base RTT; marked feeds the sample.
    ack(&mut cc, 10 * US, MTU, false, Some(2 * T));
    assert_eq!(cc.avg_delay, g * (0.25 * BASE as f64));
    let avg = cc.avg_delay;
    ack(&mut cc, 11 * US, MTU, true, Some(2 * T));
    assert_eq!(cc.avg_delay, g * (2 * T) as f64 + (1.0 - g) * avg);
    // A NACK feeds the network RTT.
    let avg = cc.avg_delay;
    cc.on_nack(MTU, 12 * US);
    assert_eq!(cc.avg_delay, g * BASE as f64 + (1.0 - g) * avg);
    // No sample, or one below the base RTT: the average decides the quadrant.
    let mut cc = nscc(quiet(), 100.0);
    cc.avg_delay = 2.0 * T as f64;
    ack(&mut cc, 10 * US, MTU, false, None);
    assert_eq!(cc.inc, cc.fi * MTU as f64);
    ack_rtt(&mut cc, 11 * US, MTU, BASE / 2);
    assert_eq!(cc.inc, 2.0 * cc.fi * MTU as f64);
    assert_eq!((cc.avg_delay, cc.base_rtt), (2.0 * T as f64, BASE));
}

#[test]
fn base_rtt_starts_at_the_network_rtt_and_drops_to_samples() {
    let (path, p) = (INTRA_RACK, intra_rack());
    let mut cc = Nscc::new(&quiet(), &p);
    assert_eq!((cc.base_rtt, cc.cwnd()), (BASE, MAX));
    // An RTS's short sample does not lower it.
    ack_rtt(&mut cc, 10 * US, 0, path - 1);
    assert_eq!(cc.base_rtt, BASE);
    ack_rtt(&mut cc, 11 * US, MTU, path + 500_000);
    assert_eq!(cc.base_rtt, path + 500_000);
    assert_eq!(
        cc.max_cwnd,
        (bdp(path + 500_000, p.line_rate) as f64 * 1.5) as u64
    );
    assert_eq!(cc.cwnd(), cc.max_cwnd);
    // accurate_base_rtt starts at the path's.
    let c = NsccConfig {
        accurate_base_rtt: true,
        ..quiet()
    };
    let cc = Nscc::new(&c, &p);
    assert_eq!((cc.base_rtt, cc.cwnd()), (path, 150_000));
}

#[test]
fn a_nack_round_trip_lowers_the_base_rtt_below_the_path() {
    // uet-htsim samples NACKs too, with no floor: a trimmed header's NACK returns up to a
    // packet's serialization sooner than any ACK of that path.
    let p = intra_rack();
    let nack_rtt = INTRA_RACK - 300_000;
    let mut cc = Nscc::new(&quiet(), &p);
    cc.on_nack_rtt(BASE + 1);
    assert_eq!(cc.base_rtt, BASE);
    cc.on_nack_rtt(nack_rtt);
    assert_eq!(cc.base_rtt, nack_rtt);
    assert_eq!(
        cc.max_cwnd,
        (bdp(nack_rtt, p.line_rate) as f64 * 1.5) as u64
    );
    // An ACK sample as short stays below the path's floor.
    let mut acked = Nscc::new(&quiet(), &p);
    ack_rtt(&mut acked, 11 * US, MTU, nack_rtt);
    assert_eq!(acked.base_rtt, BASE);
    // Off, and by default for reps2024 (whose reference samples full-size ACKed packets only).
    for c in [
        NsccConfig {
            base_rtt_on_nack: Some(false),
            ..quiet()
        },
        NsccConfig {
            variant: NsccVariant::Reps2024,
            ..quiet()
        },
    ] {
        let mut cc = Nscc::new(&c, &p);
        cc.on_nack_rtt(nack_rtt);
        assert_eq!(cc.base_rtt, BASE);
    }
}

#[test]
fn losses_take_their_size_off_down_to_one_mtu() {
    let mut cc = nscc(quiet(), 3.0);
    cc.on_timeout(MTU, 10 * US);
    assert_eq!(cc.cwnd(), 2 * MTU);
    cc.on_timeout(5 * MTU, 10 * US);
    assert_eq!(cc.cwnd(), MTU);
    // Before any window opened, a NACK cannot quick-adapt.
    let mut cc = nscc(quiet(), 3.0);
    cc.on_nack(MTU, 10 * US);
    cc.on_nack(MTU, 10 * US);
    cc.on_nack(MTU, 10 * US);
    assert_eq!(cc.cwnd(), MTU);
}

#[test]
fn reps2024_adds_fair_to_proportional_and_caps_each_adjustment() {
    let c = NsccConfig {
        variant: NsccVariant::Reps2024,
        adjust_period: Some(TimeQ(SEC)),
        ..Default::default()
    };
    let mut cc = nscc(c, 2.0);
    let w0 = 2 * MTU;
    ack(&mut cc, 10 * US, MTU, false, Some(2 * US));
    let t = cc.target;
    assert_eq!(
        cc.inc,
        cc.alpha * MTU as f64 * (t - 2e6) + cc.fi * MTU as f64
    );
    // The second ACK passes 8,000 bytes: the increase (about 55 kB) is capped at 8,000.
    ack(&mut cc, 11 * US, MTU, false, Some(2 * US));
    assert_eq!(cc.cwnd(), w0 + 8_000);
}

#[test]
fn checks_name_the_field() {
    assert!(NsccConfig::default()
        .validate(&RunContext::new(4150, 64))
        .is_ok());
    let bad = [
        (
            NsccConfig {
                target_delay: Some(TimeQ(0)),
                ..Default::default()
            },
            "target_delay:",
        ),
        (
            NsccConfig {
                qa_gate: 64,
                ..Default::default()
            },
            "qa_gate:",
        ),
        (
            NsccConfig {
                gamma: 1.5,
                ..Default::default()
            },
            "gamma:",
        ),
        (
            NsccConfig {
                max_cwnd_bdp: 0.0,
                ..Default::default()
            },
            "max_cwnd_bdp:",
        ),
    ];
    for (c, field) in bad {
        assert!(
            c.validate(&RunContext::new(4150, 64))
                .unwrap_err()
                .to_string()
                .starts_with(field),
            "{field}"
        );
    }
}

#[test]
fn the_target_delay_follows_trimming_as_the_reference_does() {
    let with = Nscc::new(&NsccConfig::default(), &CcParams::example());
    let without = Nscc::new(
        &NsccConfig::default(),
        &CcParams {
            trimming: false,
            ..CcParams::example()
        },
    );
    let r = CcParams::example().network_rtt as f64;
    assert_eq!(with.target, (r * 0.75) as Time as f64);
    assert_eq!(without.target, r as Time as f64);
    // An explicit setting wins either way.
    let set = Nscc::new(
        &NsccConfig {
            target_delay_rtt: Some(0.5),
            ..NsccConfig::default()
        },
        &CcParams {
            trimming: false,
            ..CcParams::example()
        },
    );
    assert_eq!(set.target, (r * 0.5) as Time as f64);
}

/// The tally counts what each rule did to the window, as the reference prints it per flow:
/// fast increase and multiplicative decrease as the bytes they moved, fair and proportional
/// increase as the window bytes an adjustment made of them, a NACK's bytes as they come.
#[test]
fn the_window_tally_counts_each_rule() {
    let mut cc = nscc(quiet(), 10.0);
    assert_eq!(cc.window_tally(), Some(WindowTally::default()));
    // Ten low-delay ACKs: proportional increase, pending until an adjustment.
    for i in 0..10 {
        ack(&mut cc, 10 * US + i, MTU, false, Some(US - 1));
    }
    assert_eq!(cc.tally.proportional_increase, 0);
    // The next goes over a window: fast increase, by the bytes it added.
    let before = cc.cwnd();
    ack(&mut cc, 11 * US, MTU, false, Some(0));
    assert_eq!(cc.tally.fast_increase, (cc.cwnd() - before) as i64);
    // An adjustment turns the pending increase into window bytes.
    let pending = cc.pending_proportional;
    assert!(pending > 0.0);
    let before = cc.cwnd();
    cc.fulfill_adjustment(12 * US);
    let added = cc.cwnd() - before;
    assert_eq!(
        cc.tally.proportional_increase,
        (pending / cc.cwnd() as f64) as i64
    );
    assert!(added as i64 >= cc.tally.proportional_increase);
    // Marked with a long average delay: a multiplicative decrease, by the bytes it took.
    cc.avg_delay = 3.0 * T as f64;
    let before = cc.cwnd();
    ack(&mut cc, 40 * US, MTU, true, Some(3 * T));
    assert!(cc.cwnd() < before);
    assert_eq!(
        cc.tally.multiplicative_decrease,
        (before - cc.cwnd()) as i64
    );
    // A NACK counts its bytes.
    cc.on_nack(MTU, 50 * US);
    assert_eq!(cc.tally.nack_decrease, MTU as i64);
}
