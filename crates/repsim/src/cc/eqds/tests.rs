use super::oversubscribed::RateControl;
use super::*;
use crate::cc::credit::{Grant, PullArrival};
use crate::cc::widen;
use crate::engine::time::serialization;
use crate::engine::Rng;
use crate::units::TimeQ;

const MTU: u32 = 4150;
const RATE: u64 = 400_000_000_000;

/// Pacers that grant only what targets ask for (slow pulls have their own tests).
fn pacers(hosts: usize) -> PullPacers {
    EqdsConfig {
        slow_pulls: false,
        ..EqdsConfig::default()
    }
    .pacers(&vec![RATE; hosts], MTU, 0)
}

fn arrival(flow: u32, target: u64, used: u64) -> PullArrival {
    PullArrival {
        flow,
        target: target as u32,
        used: used as u32,
        trimmed: false,
        trimmed_at_last_hop: false,
        rts: false,
        ecn: false,
        ev: 7,
        route: u32::MAX,
    }
}

/// Wakes host `host`'s pacer until it stops; returns the grants and checks the spacing
/// and the cap at every step.
fn drain(p: &mut PullPacers, host: u32, mut at: Time, cap: u64) -> Vec<Grant> {
    let mut out = Vec::new();
    loop {
        let step = p.on_timer(host, at);
        if let Some(g) = step.grant {
            assert!(p.outstanding(g.flow) <= cap, "cap exceeded: {g:?}");
            out.push(g);
        }
        match step.rearm {
            Some(next) => {
                let g = step.grant.expect("re-armed only after a grant");
                assert_eq!(next - at, serialization(g.bytes as u32, 396_000_000_000));
                at = next;
            }
            None => return out,
        }
    }
}

#[test]
fn one_pull_of_4096_bytes_every_82_75_ns_up_to_the_target() {
    let mut p = pacers(2);
    p.add_sink(0, 1, u64::MAX);
    assert_eq!(p.on_arrival(100, &arrival(0, 10_000, 0)), Some(100));
    // Already armed: a second arrival does not arm again.
    assert_eq!(p.on_arrival(150, &arrival(0, 10_000, 0)), None);
    let grants = drain(&mut p, 1, 100, u64::MAX);
    let bytes: Vec<u64> = grants.iter().map(|g| g.bytes).collect();
    assert_eq!(bytes, [4096, 4096, 1808], "never beyond the target");
    assert_eq!(grants[2].granted, 10_000);
    assert_eq!(grants[0].ev, 7);
    assert_eq!(serialization(4096, 396_000_000_000), 82_748);
    // Idle now; a higher target wakes it, not before the last PULL's time is up.
    let at = p.on_arrival(200, &arrival(0, 20_000, 0)).expect("woken");
    assert_eq!(at, 100 + 2 * 82_748 + serialization(1808, 396_000_000_000));
    // A stale (lower) target changes nothing.
    let mut q = pacers(2);
    q.add_sink(0, 1, u64::MAX);
    q.on_arrival(0, &arrival(0, 8192, 0));
    q.on_arrival(0, &arrival(0, 4096, 0));
    assert_eq!(drain(&mut q, 1, 0, u64::MAX).len(), 2);
}

#[test]
fn idle_connections_get_slow_pulls_up_to_their_cap_while_none_is_active() {
    let cap = 40_000;
    let slow = |on: bool| {
        EqdsConfig {
            pull_size: SizeQ(Size::Bytes(16_384)),
            slow_pulls: on,
            ..EqdsConfig::default()
        }
        .pacers(&[RATE, RATE], MTU, 0)
    };
    let mut p = slow(true);
    p.add_sink(0, 0, cap);
    p.on_arrival(0, &arrival(0, 5000, 0));
    let bytes: Vec<u64> = drain(&mut p, 0, 0, cap).iter().map(|g| g.bytes).collect();
    // The target, then full PULLs beyond it until the unused credit reaches the cap.
    assert_eq!(bytes, [5000, 16_384, 16_384, 2232]);
    // The sender reports 16,384 bytes spent without asking for more: its slow credit
    // (35,000 beyond the target) is still below the cap, so one more slow pull, the last.
    let at = p.on_arrival(1_000_000, &arrival(0, 5000, 16_384));
    let bytes: Vec<u64> = drain(&mut p, 0, 0, cap).iter().map(|g| g.bytes).collect();
    assert!(at.is_some());
    assert_eq!(bytes, [16_384]);
    assert_eq!(p.on_arrival(2_000_000, &arrival(0, 5000, 32_768)), None);
    // An active connection goes before idle ones; then both are idle and served in turn.
    p.add_sink(1, 0, cap);
    p.on_arrival(3_000_000, &arrival(0, 56_384, 32_768));
    p.on_arrival(3_000_000, &arrival(1, 4096, 0));
    let order: Vec<u32> = drain(&mut p, 0, 0, cap).iter().map(|g| g.flow).collect();
    assert_eq!(&order[..3], [1, 0, 1], "{order:?}");
    // Off: only the target.
    let mut p = slow(false);
    p.add_sink(0, 0, cap);
    p.on_arrival(0, &arrival(0, 5000, 0));
    assert_eq!(drain(&mut p, 0, 0, cap).len(), 1);
}

#[test]
fn grants_stop_at_the_cap_and_resume_as_credit_is_used() {
    let cap = 3 * 4096 + 100;
    let mut p = pacers(1);
    p.add_sink(3, 0, cap);
    p.on_arrival(0, &arrival(3, 1 << 20, 0));
    let bytes: Vec<u64> = drain(&mut p, 0, 0, cap).iter().map(|g| g.bytes).collect();
    assert_eq!(bytes, [4096, 4096, 4096, 100]);
    assert_eq!(p.outstanding(3), cap);
    // The sender reports 8,192 bytes used: exactly that much more may be granted.
    let at = p.on_arrival(1_000_000, &arrival(3, 1 << 20, 8192)).unwrap();
    let bytes: Vec<u64> = drain(&mut p, 0, at, cap).iter().map(|g| g.bytes).collect();
    assert_eq!(bytes, [4096, 4096]);
    assert_eq!(p.outstanding(3), cap);
    assert_eq!(p.granted(3), Some(cap + 8192));
    // A report of more used than granted is not believed.
    p.on_arrival(2_000_000, &arrival(3, 1 << 20, 1 << 19));
    assert_eq!(p.outstanding(3), 0);
}

#[test]
fn active_connections_are_served_round_robin_per_host() {
    let mut p = pacers(2);
    for f in 0..3 {
        p.add_sink(f, if f == 2 { 1 } else { 0 }, u64::MAX);
    }
    p.on_arrival(0, &arrival(0, 3 * 4096, 0));
    p.on_arrival(0, &arrival(1, 2 * 4096, 0));
    assert_eq!(p.on_arrival(0, &arrival(2, 4096, 0)), Some(0), "own pacer");
    let order: Vec<u32> = drain(&mut p, 0, 0, u64::MAX)
        .iter()
        .map(|g| g.flow)
        .collect();
    assert_eq!(order, [0, 1, 0, 1, 0]);
    assert_eq!(drain(&mut p, 1, 0, u64::MAX).len(), 1);
}

#[test]
fn trimmed_headers_ask_for_one_more_mtu_and_finished_sinks_get_nothing() {
    let mut p = pacers(1);
    p.add_sink(0, 0, u64::MAX);
    p.on_arrival(0, &arrival(0, 4096, 0));
    drain(&mut p, 0, 0, u64::MAX);
    // The header of the packet carried the target already granted: one MTU more.
    let trimmed = PullArrival {
        trimmed: true,
        ..arrival(0, 4096, 0)
    };
    let at = p.on_arrival(10, &trimmed).unwrap();
    let g = drain(&mut p, 0, at, u64::MAX);
    assert_eq!(g.iter().map(|g| g.bytes).sum::<u64>(), MTU as u64);
    // A later packet whose target counts that retransmission asks for nothing more.
    assert_eq!(p.on_arrival(1_000_000, &arrival(0, 4096 + 4150, 0)), None);
    // Removed: arrivals no longer wake the pacer, listed entries are skipped.
    p.on_arrival(1_000_000, &arrival(0, 1 << 20, 0));
    p.remove_sink(0);
    assert_eq!(p.on_arrival(2_000_000, &arrival(0, 1 << 21, 0)), None);
    let step = p.on_timer(0, 3_000_000);
    assert_eq!(step.grant, None);
    assert_eq!(step.rearm, None);
}

#[test]
fn no_sequence_of_reports_gets_past_the_cap() {
    let mut rng = Rng::new(11);
    let cap = 150_000;
    let mut p = pacers(1);
    p.add_sink(0, 0, cap);
    let (mut target, mut now) = (0u64, 0);
    let mut armed_at: Option<Time> = None;
    for _ in 0..20_000 {
        now += rng.below(200_000) as Time;
        if let Some(at) = armed_at.filter(|&at| at <= now) {
            let step = p.on_timer(0, at);
            armed_at = step.rearm;
        }
        // A sender never reports more used than was granted to it, and targets grow.
        target += rng.below(20_000) as u64;
        let granted = p.granted(0).unwrap();
        let used = granted - rng.below((granted.min(1 << 20) + 1) as u32) as u64;
        let a = PullArrival {
            trimmed: rng.below(10) == 0,
            ..arrival(0, target, used)
        };
        if let Some(at) = p.on_arrival(now, &a) {
            assert!(armed_at.is_none(), "armed twice");
            armed_at = Some(at);
        }
        assert!(p.outstanding(0) <= cap);
    }
    assert!(p.granted(0).unwrap() > 10 * cap, "it kept granting");
}

fn eqds() -> Eqds {
    Eqds::new(625_284, MTU, false)
}

fn ack() -> AckSample {
    AckSample {
        acked: 4150,
        ecn: false,
        cnp: false,
        rtt: None,
        now: 0,
        in_flight: 0,
    }
}

#[test]
fn speculative_credit_is_spent_then_forfeited_at_the_first_feedback() {
    let mut cc = eqds();
    assert!(cc.credit_gate().is_some() && cc.speculating());
    assert_eq!(cc.credit(), 625_284);
    assert_eq!(cc.cwnd(), 625_284);
    for _ in 0..150 {
        cc.on_send(4150);
    }
    assert_eq!(cc.credit(), 625_284 - 150 * 4150);
    cc.on_ack(&ack());
    assert!(!cc.speculating());
    assert_eq!(cc.credit(), 0, "unused speculative credit is lost");
    // A debt is not forgiven.
    let mut cc = eqds();
    for _ in 0..151 {
        cc.on_send(4150);
    }
    cc.on_nack(4150, 0);
    assert_eq!(cc.credit(), 625_284 - 151 * 4150);
    // A timeout ends speculation too, and feedback after that forfeits nothing more.
    let mut cc = eqds();
    cc.on_timeout(4150, 0);
    assert_eq!(cc.credit(), 0);
    cc.on_pull(4096, 0);
    cc.on_ack(&ack());
    assert_eq!(cc.credit(), 4096);
}

#[test]
fn pulls_are_cumulative_and_capped() {
    let mut cc = eqds();
    cc.on_ack(&ack());
    cc.on_pull(4096, 0);
    cc.on_pull(8192, 0);
    assert_eq!(cc.credit(), 8192);
    // A reordered (older) PULL and a repeated one add nothing.
    cc.on_pull(4096, 0);
    cc.on_pull(8192, 0);
    assert_eq!(cc.credit(), 8192);
    // Credit never exceeds the maximum.
    cc.on_pull(10_000_000, 0);
    assert_eq!(cc.credit(), 625_284);
    // The default (REPS reference): a PULL while speculating adds to the speculative
    // credit, capped; the UEC variant forfeits it first.
    let mut cc = eqds();
    cc.on_send(100_000);
    cc.on_pull(4096, 0);
    assert!(cc.speculating());
    assert_eq!(cc.credit(), 625_284 - 100_000 + 4096);
    let mut uec = Eqds::new(625_284, MTU, true);
    uec.on_send(100_000);
    uec.on_pull(4096, 0);
    assert!(!uec.speculating());
    assert_eq!(uec.credit(), 4096);
}

#[test]
fn pull_requests_follow_the_reference_formula() {
    let mut cc = eqds();
    // Speculating with 8 MiB to go: the target is what was sent (the credit to replace).
    cc.on_send(4150);
    let r = cc.pull_request(8 << 20);
    assert_eq!(
        r,
        PullRequest {
            target: 4150,
            used: 0
        }
    );
    // Little left: still at least one MTU while speculating and new data remains.
    assert_eq!(cc.pull_request(1000).target, 4150);
    assert_eq!(cc.pull_request(0).target, 0);
    cc.on_ack(&ack());
    // After it: backlog (capped) minus credit plus pulls.
    cc.on_pull(20_000, 0);
    cc.on_send(4150);
    assert_eq!(cc.credit(), 20_000 - 4150);
    let r = cc.pull_request(8 << 20);
    assert_eq!(r.target, 20_000 + 625_284 - (20_000 - 4150));
    assert_eq!(r.used, 4150, "pulled minus held");
    let r = cc.pull_request(10_000);
    assert_eq!(r.target, 20_000 + 10_000 - (20_000 - 4150));
    // With a debt, everything pulled is used and the debt is asked for too.
    for _ in 0..5 {
        cc.on_send(4150);
    }
    assert_eq!(cc.credit(), 20_000 - 6 * 4150);
    let r = cc.pull_request(10_000);
    assert_eq!(r.used, 20_000);
    assert_eq!(r.target, 20_000 + 10_000 + 6 * 4150 - 20_000);
    // In 256-byte quanta (the UEC reference) the target rounds up.
    cc.quantum = 256;
    assert_eq!(
        cc.pull_request(10_000).target,
        34_900_u64.next_multiple_of(256)
    );
    assert_eq!(cc.pull_request(10_000).target, 35_072);
}

#[test]
fn wire_counts_widen_around_the_known_count() {
    assert_eq!(widen(5, 0), 5);
    let near = (3u64 << 32) + 10;
    assert_eq!(widen(20, near), near + 10);
    assert_eq!(widen(5, near), near - 5);
    assert_eq!(widen((near + 1_000_000) as u32, near), near + 1_000_000);
    // Across a 32-bit wrap.
    let near = (1u64 << 32) - 100;
    assert_eq!(widen(50, near), (1 << 32) + 50);
    assert_eq!(widen(u32::MAX - 200, 1 << 32), (1 << 32) - 201);
    assert_eq!(widen(u32::MAX, 0), 0, "never negative");
}

#[test]
fn config_checks_name_the_field() {
    let bad = |c: EqdsConfig| c.validate(&RunContext::new(4150, 64)).unwrap_err();
    let d = EqdsConfig::default();
    assert!(d.validate(&RunContext::new(4150, 64)).is_ok());
    assert!(bad(EqdsConfig {
        max_credit_bdp: 0.0,
        ..d.clone()
    })
    .to_string()
    .starts_with("max_credit_bdp:"));
    assert!(bad(EqdsConfig {
        pull_size: SizeQ(Size::Bytes(0)),
        ..d.clone()
    })
    .to_string()
    .starts_with("pull_size:"));
    assert!(bad(EqdsConfig {
        pull_rate: 1.5,
        ..d.clone()
    })
    .to_string()
    .starts_with("pull_rate:"));
    for (field, o) in [
        (
            "min_rate",
            OversubscribedCc {
                min_rate: 0.0,
                ..OversubscribedCc::default()
            },
        ),
        (
            "interval",
            OversubscribedCc {
                interval: TimeQ(0),
                ..OversubscribedCc::default()
            },
        ),
        (
            "alpha",
            OversubscribedCc {
                alpha: 1.5,
                ..OversubscribedCc::default()
            },
        ),
        (
            "md",
            OversubscribedCc {
                md: -1.0,
                ..OversubscribedCc::default()
            },
        ),
    ] {
        let e = bad(EqdsConfig {
            oversubscribed: Some(o),
            ..d.clone()
        });
        assert!(
            e.to_string()
                .starts_with(&format!("oversubscribed.{field}:")),
            "{e}"
        );
    }
    assert!(bad(EqdsConfig {
        initial_credit: Some(SizeQ(Size::Bytes(0))),
        ..d.clone()
    })
    .to_string()
    .starts_with("initial_credit:"));
    assert!(bad(EqdsConfig {
        pull_quantum: SizeQ(Size::Bytes(8192)),
        pull_size: SizeQ(Size::Bytes(4096)),
        ..d.clone()
    })
    .to_string()
    .starts_with("pull_quantum:"));
    let built = d.build(&CcParams::example());
    let cc = built.credit_gate().expect("credit gated");
    assert_eq!(cc.credit_cap(), 625_284);
    assert_eq!(cc.credit(), 625_284);
    // A smaller speculative window; a larger one is cut to the maximum.
    let with = |c: Size| EqdsConfig {
        initial_credit: Some(SizeQ(c)),
        ..d.clone()
    };
    let built = with(Size::Packets(1.0)).build(&CcParams::example());
    let cc = built.credit_gate().expect("credit gated");
    assert_eq!((cc.credit(), cc.credit_cap()), (4150, 625_284));
    let built = with(Size::Bytes(1 << 30)).build(&CcParams::example());
    assert_eq!(built.credit_gate().expect("credit gated").credit(), 625_284);
}

/// Oversubscription control with the reference's rules and a 10 us mean interval.
fn control_params(min_rate: f64) -> OversubscribedCc {
    OversubscribedCc {
        min_rate,
        interval: TimeQ(10 * crate::engine::time::US),
        ..OversubscribedCc::default()
    }
}

fn counted(c: &mut RateControl, packets: u64, marked: u64, last_hop: u64, other: u64) {
    let full = PullArrival {
        ecn: false,
        ..arrival(0, 0, 0)
    };
    for k in 0..packets {
        let a = if k < other {
            PullArrival {
                trimmed: true,
                ..full
            }
        } else if k < other + last_hop {
            PullArrival {
                trimmed: true,
                trimmed_at_last_hop: true,
                ..full
            }
        } else if k < other + last_hop + marked {
            PullArrival { ecn: true, ..full }
        } else {
            full
        };
        c.count(&a);
    }
}

/// The reference's update rules, step by step: trims on the way cut the rate by their
/// fraction, a smoothed marked fraction above the target cuts it multiplicatively, and
/// otherwise it grows by `ai`, doubling with each unmarked increase in a row, within
/// [`min_rate`, 1].
#[test]
fn rate_control_follows_the_references_rules() {
    let p = control_params(0.25);
    let mut c = RateControl::new(1_000_000, &p, Rng::new(1));
    // 20 trimmed on the way, 10 at the last hop, 35 of the 70 full packets marked.
    counted(&mut c, 100, 35, 10, 20);
    c.update(&p);
    assert!((c.rate - 0.8).abs() < 1e-12, "{}", c.rate);
    assert!((c.g - 0.25).abs() < 1e-12, "below the target: no cut");
    // 56 of 70 marked: g = 0.525, above 0.3 by 0.225: the rate times 1 - 0.1125.
    counted(&mut c, 70, 56, 0, 0);
    c.update(&p);
    assert!((c.rate - 0.8 * 0.8875).abs() < 1e-12, "{}", c.rate);
    assert_eq!(c.increases, 0);
    // Quiet intervals: g decays below the target, then +1 %, +2 %, +4 % ...
    let before = c.rate;
    for step in [0.01, 0.02, 0.04] {
        let r = c.rate;
        c.update(&p);
        assert!((c.rate - (r + step)).abs() < 1e-12, "{} after {r}", c.rate);
    }
    assert!(c.rate > before);
    // A marked interval below the target grows by `ai` only, and counts as an increase.
    counted(&mut c, 100, 1, 0, 0);
    let r = c.rate;
    c.update(&p);
    assert!((c.rate - (r + 0.01)).abs() < 1e-12);
    assert_eq!(c.increases, 4);
    // Everything trimmed on the way: down to the floor, never below it.
    counted(&mut c, 10, 0, 0, 10);
    c.update(&p);
    assert_eq!(c.rate, 0.25);
    // Long quiet: up to 1, never above.
    for _ in 0..20 {
        c.update(&p);
    }
    assert_eq!(c.rate, 1.0);
}

/// Updates fall due every interval x U(0.75, 1.25), and every one due is applied when the
/// pacer next acts; the pacer's PULLs are then spaced at the rate they set.
#[test]
fn the_pacer_pulls_at_the_controlled_rate() {
    let p = control_params(0.1);
    let mut pacers = EqdsConfig {
        slow_pulls: false,
        oversubscribed: Some(p.clone()),
        ..EqdsConfig::default()
    }
    .pacers(&[RATE], MTU, 9);
    pacers.add_sink(0, 0, u64::MAX);
    let first = pacers.hosts[0].control.as_ref().unwrap().next_update;
    assert!((7_500_000..=12_500_000).contains(&first), "{first}");
    // Before the first update: half of what arrives was trimmed on the way.
    for k in 0..100u64 {
        let a = PullArrival {
            trimmed: k % 2 == 0,
            ..arrival(0, (k + 1) * 100_000, 0)
        };
        pacers.on_arrival(k * 10_000, &a);
    }
    let step = pacers.on_timer(0, first);
    let g = step.grant.unwrap();
    let rate = pacers.hosts[0].control.as_ref().unwrap().rate;
    assert!((rate - 0.5).abs() < 1e-12, "{rate}");
    let full = (RATE as f64 * 0.99) as u64;
    assert_eq!(
        step.rearm.unwrap() - first,
        serialization(g.bytes as u32, (full as f64 * 0.5) as u64)
    );
    // The next updates, each drawn anew, lie 7.5 to 12.5 us apart.
    let mut last = pacers.hosts[0].control.as_ref().unwrap().next_update;
    assert!(last > first);
    for _ in 0..50 {
        pacers.on_timer(0, last);
        let next = pacers.hosts[0].control.as_ref().unwrap().next_update;
        assert!(
            (7_500_000..=12_500_000).contains(&(next - last)),
            "{}",
            next - last
        );
        last = next;
    }
}

/// The same seed gives the same update times; another seed, others.
#[test]
fn update_times_come_from_the_seed() {
    let times = |seed| {
        let p = control_params(0.1);
        let pacers = EqdsConfig {
            oversubscribed: Some(p),
            ..EqdsConfig::default()
        }
        .pacers(&[RATE, RATE], MTU, seed);
        let t: Vec<Time> = pacers
            .hosts
            .iter()
            .map(|h| h.control.as_ref().unwrap().next_update)
            .collect();
        t
    };
    assert_eq!(times(1), times(1));
    assert_ne!(times(1), times(2));
    assert_ne!(times(1)[0], times(1)[1], "each host draws its own");
}

/// uet-htsim's pacer rules (`pacer = "uet-htsim"`): a connection is served whatever credit it
/// holds unused; once its target is met it joins the idle list, and a target that advances
/// still below what was granted earns a PULL that grants nothing and holds the pacer for 1,024
/// bytes' time; a trimmed header lists it without raising its target; a finished connection's
/// entries are still served.
#[test]
fn the_uet_htsim_pacer_serves_advancing_targets_and_its_idle_entries() {
    let cap = 40_000;
    let uet = || {
        EqdsConfig {
            pull_size: SizeQ(Size::Bytes(16_384)),
            pull_quantum: SizeQ(Size::Bytes(256)),
            pacer: PacerRule::UetHtsim,
            ..EqdsConfig::default()
        }
        .pacers(&[RATE], MTU, 0)
    };
    let rate = 396_000_000_000;
    let wake_all = |p: &mut PullPacers, mut at: Time| {
        let mut out = Vec::new();
        loop {
            let step = p.on_timer(0, at);
            if let Some(g) = step.grant {
                out.push((at, g.bytes));
            }
            match step.rearm {
                Some(next) => at = next,
                None => return (out, at),
            }
        }
    };
    let mut p = uet();
    p.add_sink(0, 0, cap);
    assert_eq!(p.on_arrival(0, &arrival(0, 5120, 0)), Some(0));
    let (grants, last) = wake_all(&mut p, 0);
    let bytes: Vec<u64> = grants.iter().map(|g| g.1).collect();
    // The target, then slow pulls until the credit beyond the target reaches the cap (in
    // whole 256-byte quanta: 39,936 bytes).
    assert_eq!(bytes, [5120, 16_384, 16_384, 16_384]);
    assert_eq!(grants[1].0, serialization(5120, rate));
    assert_eq!(p.granted(0), Some(5120 + 3 * 16_384));
    // A target that advances but stays below the grants: a PULL of nothing, 1,024 bytes'
    // time, then the idle entry it left earns one more slow pull.
    let now = last + 1_000_000;
    assert_eq!(p.on_arrival(now, &arrival(0, 10_240, 0)), Some(now));
    let (grants, _) = wake_all(&mut p, now);
    assert_eq!(
        grants,
        [(now, 0), (now + serialization(1024, rate), 16_384)]
    );
    // The same target again lists nothing; a trimmed header with it does.
    assert_eq!(p.on_arrival(now + 5_000_000, &arrival(0, 10_240, 0)), None);
    let trimmed = PullArrival {
        trimmed: true,
        ..arrival(0, 10_240, 0)
    };
    let later = now + 6_000_000;
    assert_eq!(p.on_arrival(later, &trimmed), Some(later));
    let (grants, _) = wake_all(&mut p, later);
    assert_eq!(grants[0], (later, 0), "the target is not raised");
    // A finished connection hears nothing new, but its idle entries are served.
    let mut p = uet();
    p.add_sink(0, 0, cap);
    p.on_arrival(0, &arrival(0, 5120, 0));
    let first = p.on_timer(0, 0);
    assert_eq!(first.grant.map(|g| g.bytes), Some(5120));
    p.remove_sink(0);
    assert_eq!(p.on_arrival(10, &arrival(0, 1 << 20, 0)), None);
    let (grants, _) = wake_all(&mut p, first.rearm.expect("idle entry"));
    assert_eq!(grants.len(), 3, "{grants:?}");
}
