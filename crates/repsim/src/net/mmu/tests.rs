use super::*;
use crate::engine::time::US;
use crate::net::FatTreeSpec;

/// 8 hosts, two ToRs of 4 hosts, four spines; 100 Gb/s links of 1 us.
fn tree() -> Topology {
    FatTreeSpec::uniform(2, 8, 4, 8, 1, 100_000_000_000, US, 0)
        .expect("valid")
        .build()
        .expect("valid")
}

/// (host 0 -> tor0, tor0 -> host 1): an ingress account and an egress queue of tor0.
fn host_in_tor_out(t: &Topology) -> (u32, u32) {
    let tor0 = t.host_edge[0] + t.hosts;
    let ingress = t.links_between(0, tor0)[0];
    let egress = t.links_between(tor0, 1)[0];
    (ingress, egress)
}

fn cfg(threshold: ThresholdMode) -> PfcParams {
    PfcParams {
        enabled: true,
        threshold,
        reserve: 0,
        headroom: Some(30_000),
        ..PfcParams::default()
    }
}

#[test]
fn default_headroom_matches_the_reference_at_100g_1us() {
    assert_eq!(
        PfcParams::default_headroom(100_000_000_000, US, 1048),
        27_096
    );
    let t = tree();
    let mmu = Mmu::new(&PfcParams::default(), &t, 1048).expect("fits");
    let (ingress, _) = host_in_tor_out(&t);
    assert_eq!(mmu.headroom_peak(ingress), (0, 27_096));
}

#[test]
fn only_packets_of_one_switch_are_charged() {
    let t = tree();
    let mmu = Mmu::new(&cfg(ThresholdMode::Static), &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    assert!(mmu.charges(ingress, egress));
    // The link into host 1 ends at a host: no account there.
    assert!(!mmu.charges(egress, ingress));
    // A packet that arrived at another switch is not charged at tor0.
    let tor1 = t.host_edge[4] + t.hosts;
    let other = t.links_between(4, tor1)[0];
    assert!(!mmu.charges(other, egress));
}

#[test]
fn static_threshold_pauses_exactly_at_the_threshold_and_resumes_with_hysteresis() {
    let t = tree();
    let c = cfg(ThresholdMode::Static);
    let mut mmu = Mmu::new(&c, &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    let s = t.host_edge[0];
    let ports = 8u64; // 4 hosts + 4 spines
    let expected = (c.buffer - ports * 30_000) / ports;
    assert_eq!(mmu.threshold(s), expected);
    let mut charged = 0;
    while charged + 1000 < expected {
        assert_eq!(
            mmu.admit(ingress, egress, 1000),
            Charge::Queued,
            "at {charged}"
        );
        charged += 1000;
    }
    // The packet that brings the shared use exactly to the threshold pauses.
    assert_eq!(
        mmu.admit(ingress, egress, expected - charged),
        Charge::Pause
    );
    assert_eq!(mmu.usage(ingress), (0, expected, 0));
    assert!(mmu.is_paused(ingress));
    // Resume only once the shared use is 3 KiB below the threshold.
    let mut out = Vec::new();
    assert_eq!(mmu.release(ingress, egress, 3 * 1024 - 1), Some(s));
    mmu.resumable(s, &mut out);
    assert!(out.is_empty() && mmu.is_paused(ingress));
    assert_eq!(mmu.release(ingress, egress, 1), Some(s));
    mmu.resumable(s, &mut out);
    assert_eq!(out, vec![ingress]);
    assert!(!mmu.is_paused(ingress));
    assert_eq!(mmu.release(ingress, egress, 1000), None, "nothing paused");
}

#[test]
fn dynamic_threshold_pauses_where_alpha_times_the_free_pool_is_reached() {
    let t = tree();
    let c = cfg(ThresholdMode::Dynamic);
    let mut mmu = Mmu::new(&c, &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    let s = t.host_edge[0];
    let limit = mmu.pool_limit(s);
    assert_eq!(limit, c.buffer - 8 * 30_000);
    // Alone in the pool, the account pauses at the first k with k P >= (L - k P) / 16.
    let p = 1000u64;
    let k_pause = (1..).find(|&k| k * p >= (limit - k * p) / 16).unwrap();
    for k in 1..k_pause {
        assert_eq!(mmu.admit(ingress, egress, p), Charge::Queued, "packet {k}");
    }
    assert_eq!(mmu.admit(ingress, egress, p), Charge::Pause);
    assert_eq!(mmu.usage(ingress), (0, k_pause * p, 0));
    // While paused, arrivals go to headroom.
    assert_eq!(mmu.admit(ingress, egress, p), Charge::Queued);
    assert_eq!(mmu.usage(ingress), (0, k_pause * p, p));
    let in_shared = k_pause;
    let k_pause = k_pause + 1;
    // Empty the headroom: it resumes iff shared < (L - shared - 16) / 16.
    let mut out = Vec::new();
    mmu.release(ingress, egress, (k_pause - in_shared) * p);
    let mut shared = in_shared * p;
    let resumes = |shared: u64| 16 * shared < limit - shared - 16;
    mmu.resumable(s, &mut out);
    assert_eq!(!out.is_empty(), resumes(shared));
    // Fill byte by byte up to the threshold: the byte that reaches it pauses.
    if !out.is_empty() {
        loop {
            let c = mmu.admit(ingress, egress, 1);
            shared += 1;
            if c == Charge::Pause {
                assert_eq!(shared, (limit - shared) / 16);
                break;
            }
            assert_eq!(c, Charge::Queued);
        }
    }
    // Then release byte by byte: it resumes at the first byte that meets the condition.
    out.clear();
    let mut released = 0;
    while !resumes(shared) {
        mmu.resumable(s, &mut out);
        assert!(out.is_empty(), "at {shared}");
        mmu.release(ingress, egress, 1);
        shared -= 1;
        released += 1;
    }
    mmu.resumable(s, &mut out);
    assert_eq!(out, vec![ingress]);
    assert!(released >= 1, "no resume at the pause point itself");
    // A second account's use lowers the first one's threshold.
    let tor0 = t.host_edge[0] + t.hosts;
    let other = t.links_between(2, tor0)[0];
    let before = mmu.threshold(s);
    assert_eq!(mmu.admit(other, egress, 10_000), Charge::Queued);
    assert!(mmu.threshold(s) < before);
}

#[test]
fn headroom_takes_what_arrives_after_the_pause_and_drains_first() {
    let t = tree();
    let mut c = cfg(ThresholdMode::Static);
    c.reserve = 2000;
    let mut mmu = Mmu::new(&c, &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    let s = t.host_edge[0];
    let threshold = mmu.threshold(s);
    assert_eq!(mmu.admit(ingress, egress, 2000), Charge::Queued);
    assert_eq!(mmu.usage(ingress), (2000, 0, 0), "reserve first");
    assert_eq!(mmu.admit(ingress, egress, threshold), Charge::Pause);
    for i in 1..=30 {
        assert_eq!(mmu.admit(ingress, egress, 1000), Charge::Queued);
        assert_eq!(mmu.usage(ingress), (2000, threshold, i * 1000));
    }
    assert_eq!(mmu.headroom_peak(ingress), (30_000, 30_000));
    // Headroom full: the next packet is lost (and counted).
    assert_eq!(mmu.admit(ingress, egress, 1), Charge::Dropped);
    assert_eq!(mmu.drops(), 1);
    assert_eq!(mmu.switch_bytes(s), 2000 + threshold + 30_000);
    // Departures empty the headroom first; no resume while any headroom is in use.
    let mut out = Vec::new();
    mmu.release(ingress, egress, 29_999);
    mmu.resumable(s, &mut out);
    assert!(out.is_empty());
    assert_eq!(mmu.usage(ingress), (2000, threshold, 1));
    mmu.release(ingress, egress, 1);
    mmu.resumable(s, &mut out);
    assert!(out.is_empty(), "headroom empty but shared at the threshold");
    mmu.release(ingress, egress, 3 * 1024);
    mmu.resumable(s, &mut out);
    assert_eq!(out, vec![ingress]);
    mmu.release(ingress, egress, threshold - 3 * 1024 + 2000);
    assert_eq!(mmu.usage(ingress), (0, 0, 0));
    assert_eq!(mmu.switch_bytes(s), 0);
    assert_eq!(mmu.headroom_peak(ingress).0, 30_000, "the peak stays");
}

#[test]
fn egress_admission_refuses_a_queue_beyond_its_share_of_the_free_buffer() {
    let t = tree();
    let mut c = cfg(ThresholdMode::Dynamic);
    c.alpha_egress = 1.0 / 1024.0;
    let mut mmu = Mmu::new(&c, &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    let share = c.buffer / 1024;
    assert_eq!(mmu.admit(ingress, egress, share / 2), Charge::Queued);
    assert_eq!(mmu.admit(ingress, egress, share), Charge::Dropped);
    assert_eq!(mmu.drops(), 1);
}

#[test]
fn without_egress_admission_only_ingress_accounting_drops() {
    let t = tree();
    let mut c = cfg(ThresholdMode::Static);
    c.alpha_egress = 1.0 / 1024.0;
    c.egress_admission = false;
    let mut mmu = Mmu::new(&c, &t, 1048).expect("fits");
    let (ingress, egress) = host_in_tor_out(&t);
    let share = c.buffer / 1024;
    // What the egress check refuses above is queued; the account still pauses at its
    // threshold and drops only once its headroom is gone.
    assert_eq!(mmu.admit(ingress, egress, share / 2), Charge::Queued);
    assert_eq!(mmu.admit(ingress, egress, share), Charge::Queued);
    let mut charges = Vec::new();
    while mmu.drops() == 0 && charges.len() < 100_000 {
        charges.push(mmu.admit(ingress, egress, 1048));
    }
    assert_eq!(mmu.drops(), 1, "headroom ran out");
    assert_eq!(charges.iter().filter(|&&c| c == Charge::Pause).count(), 1);
    let (_, _, headroom) = mmu.usage(ingress);
    assert!(
        headroom + 1048 > mmu.headroom_peak(ingress).1,
        "drop at a full headroom"
    );
}

#[test]
fn a_buffer_too_small_for_its_headroom_is_refused_by_name() {
    let t = tree();
    let c = PfcParams {
        enabled: true,
        buffer: 100_000,
        ..PfcParams::default()
    };
    let e = Mmu::new(&c, &t, 1048).err().expect("too small");
    assert!(e.contains("tor0") && e.contains("headroom"), "{e}");
    // Per port, each switch's buffer follows its own port count.
    let per_port = PfcParams {
        enabled: true,
        buffer: 1 << 20,
        buffer_extra_ports: Some(2),
        ..PfcParams::default()
    };
    assert_eq!(per_port.switch_buffer(9), 11 << 20);
    assert!(Mmu::new(&per_port, &t, 1048).is_ok());
    let bad = PfcParams {
        alpha: 0.0,
        ..PfcParams::default()
    };
    let (field, message) = bad.validate().unwrap_err();
    assert_eq!(field, "alpha");
    assert!(message.contains("alpha"));
}

#[test]
fn laps_dragonfly_buffers_give_the_reference_static_threshold() {
    // peers.md section 2: 1 MiB x (9 ports + 2) = 11 MiB per Dragonfly switch, 27,192 B of
    // headroom and 4 KiB of reserve per port, static threshold (11 MiB - 9 x 27,192 B - 9 x
    // 4,096 B) / 9 = 1,250,304 B.
    let t = crate::net::DragonflySpec::example().build().unwrap();
    let c = PfcParams {
        enabled: true,
        buffer: 1 << 20,
        buffer_extra_ports: Some(2),
        threshold: ThresholdMode::Static,
        headroom: Some(27_192),
        reserve: 4096,
        ..PfcParams::default()
    };
    let mmu = Mmu::new(&c, &t, 1048).unwrap();
    for s in 0..36 {
        assert_eq!(mmu.threshold(s), 1_250_304);
    }
    // 1 MiB per switch instead: (1 MiB - 9 x 31,288 B) / 9 = 85,220 B.
    let whole = PfcParams {
        buffer_extra_ports: None,
        ..c
    };
    assert_eq!(Mmu::new(&whole, &t, 1048).unwrap().threshold(0), 85_220);
}
