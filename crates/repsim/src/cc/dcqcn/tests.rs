use super::*;

const G: f64 = 1.0 / 256.0;
const LINE: f64 = 100e9;

fn controller(c: DcqcnConfig) -> Dcqcn {
    Dcqcn::new(
        &c,
        &CcParams {
            mtu: 1048,
            line_rate: 100_000_000_000,
            ..CcParams::example()
        },
    )
}

/// Fires every timer due up to `until`, as the simulation does.
fn run_until(d: &mut Dcqcn, until: Time) {
    while let Some(at) = d.next_timer().filter(|&at| at <= until) {
        d.on_timer(at);
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn nothing_runs_before_the_first_cnp() {
    let mut d = controller(DcqcnConfig::default());
    assert_eq!(d.next_timer(), None);
    assert_eq!(d.pacing_rate(), Some(100_000_000_000));
    assert_eq!(d.cwnd(), u64::MAX, "rate-based: no window");
    d.on_ack(&AckSample {
        acked: 1000,
        ecn: true,
        cnp: false,
        rtt: None,
        now: 5 * US,
        in_flight: 0,
    });
    assert_eq!(d.next_timer(), None, "an ECN echo alone is not a CNP");
}

#[test]
fn rate_follows_a_hand_computed_cnp_trace() {
    let mut d = controller(DcqcnConfig::default());
    let keep = 1.0 - G;
    // t = 0: the first CNP. alpha = 1, R_T = R_C = line rate (rate on first CNP = current),
    // the first decrease check 4 us later.
    d.on_cnp(0);
    assert_eq!(d.next_timer(), Some(4 * US));
    // t = 4 us: alpha updated at 1, 2, 3, 4 us with no CNP in those periods: (1 - g)^4.
    // Stage 0 (no increase yet): R_T stays; R_C = line x (1 - alpha / 2).
    run_until(&mut d, 4 * US);
    let alpha4 = keep.powi(4);
    let mut rate = LINE * (1.0 - alpha4 / 2.0);
    assert!(close(d.rate(), rate), "{} vs {rate}", d.rate());
    assert!(close(d.target(), LINE));
    assert_eq!(
        d.next_timer(),
        Some(304 * US),
        "increase timer from the decrease"
    );
    // t = 10 us: a CNP; alpha periods 5..10 us passed without one: (1 - g)^10. The check
    // at 12 us (the next tick of the 4 us clock) applies the 11 us update with the CNP and
    // the 12 us one without: alpha = (1 - g) ((1 - g) (1 - g)^10 + g).
    d.on_cnp(10 * US);
    assert_eq!(d.next_timer(), Some(12 * US));
    run_until(&mut d, 12 * US);
    let alpha12 = keep * (keep * keep.powi(10) + G);
    assert!(close(d.alpha_at(12 * US), alpha12));
    rate *= 1.0 - alpha12 / 2.0;
    assert!(close(d.rate(), rate));
    assert!(
        close(d.target(), LINE),
        "still no increase since the last decrease"
    );
    // t = 312 us: fast recovery (stage 0 < F = 1): R_C = (R_C + R_T) / 2.
    run_until(&mut d, 312 * US);
    rate = (rate + LINE) / 2.0;
    assert!(close(d.rate(), rate));
    assert_eq!(d.stage(), 1);
    // t = 401 us: a CNP; checked at 404 us. An increase happened since the last decrease:
    // R_T = R_C first, then the cut with alpha decayed from 12 us to 404 us (392 periods,
    // the one holding the CNP, 402 us, adds g).
    d.on_cnp(401 * US);
    run_until(&mut d, 404 * US);
    let alpha404 = keep.powi(2) * (keep * keep.powi(389) * alpha12 + G);
    let mut target = rate;
    rate *= 1.0 - alpha404 / 2.0;
    assert!(close(d.target(), target));
    assert!(close(d.rate(), rate), "{} vs {rate}", d.rate());
    assert_eq!(d.stage(), 0);
    // 704 us: fast recovery. 1004 us: additive (R_T + 40 Mb/s, ConWeave's 10 x 100 / 25).
    // 1304 us: hyper-additive (R_T + 100 Mb/s).
    run_until(&mut d, 704 * US);
    rate = (rate + target) / 2.0;
    assert!(close(d.rate(), rate));
    run_until(&mut d, 1004 * US);
    target += 40e6;
    rate = (rate + target) / 2.0;
    assert!(close(d.target(), target) && close(d.rate(), rate));
    run_until(&mut d, 1304 * US);
    target += 100e6;
    rate = (rate + target) / 2.0;
    assert!(close(d.target(), target) && close(d.rate(), rate));
    assert_eq!(d.stage(), 3);
    assert_eq!(d.pacing_rate(), Some(rate as u64));
}

#[test]
fn stages_go_fast_recovery_then_additive_then_hyper() {
    // F = 2 and LAPS's steps: two fast-recovery events, one additive, then hyper-additive.
    let mut d = controller(DcqcnConfig {
        fast_recovery_stages: 2,
        ai: Some(RateQ(5_000_000)),
        hai: Some(RateQ(50_000_000)),
        clamp_target_rate: true,
        ..DcqcnConfig::default()
    });
    d.on_cnp(0);
    run_until(&mut d, 4 * US);
    // Clamped: the target is the rate before the cut.
    assert!(close(d.target(), LINE));
    let mut target = LINE;
    let mut rate = d.rate();
    // Drive the target below line rate: a second cut with the target clamped to the rate.
    d.on_cnp(5 * US);
    run_until(&mut d, 8 * US);
    target = target.min(rate);
    rate = d.rate();
    assert!(close(d.target(), target));
    let steps = [0.0, 0.0, 5e6, 50e6, 50e6];
    for (i, step) in steps.iter().enumerate() {
        run_until(&mut d, (8 + 300 * (i as u64 + 1)) * US);
        target = (target + step).min(LINE);
        rate = (rate + target) / 2.0;
        assert!(close(d.target(), target), "event {i}");
        assert!(close(d.rate(), rate), "event {i}");
        assert_eq!(d.stage(), i as u32 + 1);
    }
}

#[test]
fn alpha_decays_without_cnps_and_timers_stop_at_line_rate() {
    let mut d = controller(DcqcnConfig::default());
    d.on_cnp(0);
    run_until(&mut d, 4 * US);
    // No further CNP: alpha shrinks by (1 - g) per microsecond.
    assert!(close(d.alpha_at(1000 * US), (1.0 - G).powi(1000)));
    assert!(close(d.alpha_at(1500 * US), (1.0 - G).powi(1500)));
    // The rate climbs back; once at line rate no timer is left.
    run_until(&mut d, 100_000 * US);
    assert_eq!(d.rate(), LINE);
    assert_eq!(d.next_timer(), None);
    // A CNP after a long quiet spell: the decrease check is the next tick of the 4 us clock.
    d.on_cnp(100_001 * US);
    assert_eq!(d.next_timer(), Some(100_004 * US));
}

#[test]
fn rates_never_drop_below_the_minimum() {
    let mut d = controller(DcqcnConfig {
        min_rate: RateQ(30_000_000_000),
        ..DcqcnConfig::default()
    });
    for k in 0..20 {
        d.on_cnp(k * 4 * US + 1);
        run_until(&mut d, (k + 1) * 4 * US);
    }
    assert_eq!(d.rate(), 30e9);
}

#[test]
fn config_checks_name_the_field() {
    let bad = DcqcnConfig {
        g: 0.0,
        ..DcqcnConfig::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("g:"));
    let bad = DcqcnConfig {
        decrease_interval: TimeQ(0),
        ..DcqcnConfig::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("decrease_interval:"));
    assert!(DcqcnConfig::default()
        .validate(&RunContext::new(4150, 64))
        .is_ok());
}

#[test]
fn a_connection_below_line_rate_stays_there_until_its_first_cnp() {
    let mut d = controller(DcqcnConfig {
        start_rate: Some(RateQ(1_000_000_000)),
        ..DcqcnConfig::default()
    });
    assert_eq!(d.pacing_rate(), Some(1_000_000_000));
    // No increase timer runs before a CNP: a second of quiet changes nothing.
    assert_eq!(d.next_timer(), None);
    run_until(&mut d, 1_000_000 * US);
    assert!(close(d.rate(), 1e9));
    // The first CNP keeps the rate (rate_on_first_cnp = 1) and makes it the target; the cut
    // 4 us later nearly halves it (alpha = 1, decayed over four quiet periods), and from then
    // on the increase timer runs.
    d.on_cnp(1_000_000 * US);
    assert!(close(d.target(), 1e9));
    run_until(&mut d, 1_000_004 * US);
    assert!(close(d.rate(), 1e9 * (1.0 - (1.0 - G).powi(4) / 2.0)));
    assert!(d.next_timer().is_some());
    // A start rate above line rate is line rate; zero is refused by name.
    let fast = controller(DcqcnConfig {
        start_rate: Some(RateQ(10 * LINE as u64)),
        ..DcqcnConfig::default()
    });
    assert!(close(fast.rate(), LINE));
    let bad = DcqcnConfig {
        start_rate: Some(RateQ(0)),
        ..DcqcnConfig::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("start_rate:"));
}
