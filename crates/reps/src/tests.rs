//! Unit tests: one or more per rule of the paper's Algorithms 1 and 2 and of the
//! reference behaviour.

use super::*;

/// Random source that returns `ev << 16` words (EV = word >> 16 for evs_size 65536)
/// from a counter starting at 1000, and counts its calls.
struct Counting {
    calls: u32,
}

impl Counting {
    fn new() -> Self {
        Self { calls: 0 }
    }
}

impl RandomSource for Counting {
    fn next_u32(&mut self) -> u32 {
        self.calls += 1;
        (1000 + self.calls) << 16
    }
}

fn cfg() -> Config {
    let mut c = Config::new(65536);
    c.freeze_duration = 100;
    c.explore_packets = 4;
    c
}

/// Draws `n` EVs, returning them and how many were random.
fn draw(s: &mut RepsState, c: &Config, n: usize) -> (std::vec::Vec<Ev>, u32) {
    let mut rng = Counting::new();
    let evs = (0..n).map(|_| s.next_ev(c, &mut rng)).collect();
    (evs, rng.calls)
}

#[test]
fn state_is_25_bytes_with_alignment_1() {
    assert_eq!(core::mem::size_of::<RepsState>(), 25);
    assert_eq!(core::mem::align_of::<RepsState>(), 1);
    assert_eq!(RepsState::new(), RepsState::default());
}

#[test]
fn new_state_is_empty_and_not_exploring() {
    let s = RepsState::new();
    assert!(!s.is_frozen());
    assert_eq!(s.valid_count(), 0);
    assert_eq!(s.cached_count(), 0);
    assert_eq!(s.explore_remaining(), 0);
    assert_eq!(s.freezing_until(), None);
}

#[test]
fn alg1_unmarked_ack_is_cached_at_head_and_valid() {
    let c = cfg();
    let mut s = RepsState::new();
    assert_eq!(s.on_ack(&c, 77, false, 0), Transition::None);
    assert_eq!(s.slot(0), Some((77, true)));
    assert_eq!(s.head(), 1);
    assert_eq!(s.valid_count(), 1);
    assert_eq!(s.cached_count(), 1);
}

#[test]
fn alg1_ecn_marked_ack_is_discarded() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_ack(&c, 77, true, 0);
    assert_eq!(s, RepsState::new());
}

#[test]
fn alg1_nack_is_never_cached() {
    let c = cfg();
    let mut s = RepsState::new();
    assert_eq!(s.on_nack(&c, 77, 0), Transition::None);
    assert_eq!(s, RepsState::new());
}

#[test]
fn alg1_full_ring_overwrites_the_oldest() {
    let c = cfg();
    let mut s = RepsState::new();
    for ev in 0..10 {
        s.on_ack(&c, ev, false, 0);
    }
    assert_eq!(s.valid_count(), 8);
    assert_eq!(s.cached_count(), 8);
    assert_eq!(s.head(), 2);
    // EVs 0 and 1 were overwritten by 8 and 9; the oldest valid is now 2.
    let (evs, randoms) = draw(&mut s, &c, 8);
    assert_eq!(evs, [2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(randoms, 0);
}

#[test]
fn alg1_failure_enters_freezing_with_deadline() {
    let c = cfg();
    let mut s = RepsState::new();
    assert_eq!(s.on_failure_detected(&c, 50), Transition::EnteredFreezing);
    assert!(s.is_frozen());
    assert_eq!(s.freezing_until(), Some(150));
    // Already frozen: no change, deadline not extended.
    assert_eq!(s.on_failure_detected(&c, 60), Transition::None);
    assert_eq!(s.freezing_until(), Some(150));
}

#[test]
fn alg1_failure_ignored_while_exploring_or_disabled() {
    let mut c = cfg();
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    assert_eq!(s.on_nack(&c, 1, 101), Transition::ExitedFreezing);
    assert_eq!(s.explore_remaining(), 4);
    assert_eq!(s.on_failure_detected(&c, 102), Transition::None);
    assert!(!s.is_frozen());

    c.freezing_enabled = false;
    let mut s = RepsState::new();
    assert_eq!(s.on_failure_detected(&c, 0), Transition::None);
    assert!(!s.is_frozen());
}

#[test]
fn alg1_exit_only_strictly_after_deadline_then_reset_and_explore() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_ack(&c, 5, false, 0);
    s.on_failure_detected(&c, 10);
    assert_eq!(s.on_ack(&c, 6, false, 110), Transition::None); // now == deadline
    assert!(s.is_frozen());
    assert_eq!(s.cached_count(), 2);
    assert_eq!(s.on_ack(&c, 7, true, 111), Transition::ExitedFreezing);
    assert!(!s.is_frozen());
    assert_eq!(s.freezing_until(), None);
    assert_eq!(s.explore_remaining(), 4);
    assert_eq!(s.cached_count(), 0, "ring wiped, marked ACK not cached");
    assert_eq!(s.valid_count(), 0);
}

#[test]
fn alg1_exiting_ack_ev_is_cached_after_the_wipe() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_ack(&c, 5, false, 0);
    s.on_failure_detected(&c, 0);
    assert_eq!(s.on_ack(&c, 9, false, 101), Transition::ExitedFreezing);
    assert_eq!(s.cached_count(), 1);
    assert_eq!(s.slot(0), Some((9, true)));
}

#[test]
fn alg1_acks_are_cached_while_frozen() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    s.on_ack(&c, 3, false, 1);
    s.on_ack(&c, 4, true, 2);
    assert_eq!(s.valid_count(), 1);
    assert_eq!(s.slot(0), Some((3, true)));
}

#[test]
fn time_comparison_survives_clock_wrap() {
    let c = cfg();
    let mut s = RepsState::new();
    let start = u32::MAX - 30;
    s.on_failure_detected(&c, start);
    assert_eq!(s.freezing_until(), Some(69)); // wrapped
    assert_eq!(s.on_nack(&c, 0, u32::MAX), Transition::None);
    assert_eq!(s.on_nack(&c, 0, 10), Transition::None);
    assert_eq!(s.on_nack(&c, 0, 69), Transition::None);
    assert_eq!(s.on_nack(&c, 0, 70), Transition::ExitedFreezing);
    assert!(time_after(0, u32::MAX));
    assert!(!time_after(u32::MAX, 0));
}

#[test]
fn alg2_empty_ring_sends_random() {
    let c = cfg();
    let mut s = RepsState::new();
    let (evs, randoms) = draw(&mut s, &c, 3);
    assert_eq!(evs, [1001, 1002, 1003]);
    assert_eq!(randoms, 3);
}

#[test]
fn alg2_reuses_oldest_valid_first_and_invalidates_it() {
    let c = cfg();
    let mut s = RepsState::new();
    for ev in [10, 20, 30] {
        s.on_ack(&c, ev, false, 0);
    }
    let (evs, randoms) = draw(&mut s, &c, 3);
    assert_eq!(evs, [10, 20, 30]);
    assert_eq!(randoms, 0);
    assert_eq!(s.valid_count(), 0);
    assert_eq!(s.slot(0), Some((10, false)));
    // Nothing valid and not frozen: random even though the ring is not empty.
    let (evs, randoms) = draw(&mut s, &c, 1);
    assert_eq!((evs[0], randoms), (1001, 1));
}

#[test]
fn alg2_interleaved_acks_and_sends_stay_fifo() {
    let c = cfg();
    let mut s = RepsState::new();
    let mut rng = Counting::new();
    s.on_ack(&c, 1, false, 0);
    s.on_ack(&c, 2, false, 0);
    assert_eq!(s.next_ev(&c, &mut rng), 1);
    s.on_ack(&c, 3, false, 0);
    assert_eq!(s.next_ev(&c, &mut rng), 2);
    assert_eq!(s.next_ev(&c, &mut rng), 3);
    assert_eq!(rng.calls, 0);
}

#[test]
fn alg2_frozen_cycles_over_cached_evs_ignoring_validity() {
    let c = cfg();
    let mut s = RepsState::new();
    for ev in [10, 20, 30] {
        s.on_ack(&c, ev, false, 0);
    }
    let mut rng = Counting::new();
    assert_eq!(s.next_ev(&c, &mut rng), 10); // consumes 10 before the failure
    s.on_failure_detected(&c, 0);
    let evs: std::vec::Vec<Ev> = (0..7).map(|_| s.next_ev(&c, &mut rng)).collect();
    assert_eq!(evs, [10, 20, 30, 10, 20, 30, 10]);
    assert_eq!(rng.calls, 0);
    assert_eq!(s.valid_count(), 0, "frozen sends consume valid entries");
}

#[test]
fn alg2_frozen_with_empty_ring_sends_random() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    let (evs, randoms) = draw(&mut s, &c, 2);
    assert_eq!(evs, [1001, 1002]);
    assert_eq!(randoms, 2);
}

#[test]
fn alg2_reference_exploration_is_all_random() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    s.on_ack(&c, 1, false, 101); // exits; caches 1
    s.on_ack(&c, 2, false, 102);
    let (evs, randoms) = draw(&mut s, &c, 6);
    assert_eq!(randoms, 4);
    assert_eq!(evs, [1001, 1002, 1003, 1004, 1, 2]);
    assert_eq!(s.explore_remaining(), 0);
}

#[test]
fn alg2_paper_exploration_randomises_one_in_eight() {
    let mut c = cfg();
    c.explore_mode = ExploreMode::PaperPseudocode;
    c.explore_packets = 17;
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    s.on_nack(&c, 0, 101);
    assert_eq!(s.explore_remaining(), 17);
    for ev in 100..108 {
        s.on_ack(&c, ev, false, 102);
    }
    let mut rng = Counting::new();
    let mut randoms = std::vec::Vec::new();
    let mut reused = std::vec::Vec::new();
    for i in 0..17 {
        let before = rng.calls;
        let ev = s.next_ev(&c, &mut rng);
        if rng.calls > before {
            randoms.push(i);
        } else {
            reused.push(ev);
        }
    }
    // Counter after decrement: 16 (i=0), 8 (i=8), 0 (i=16) are random; the rest reuse
    // the cache oldest first (i=1..7 and 9), then fall back to random when it runs dry.
    assert_eq!(randoms, [0, 8, 10, 11, 12, 13, 14, 15, 16]);
    assert_eq!(reused, [100, 101, 102, 103, 104, 105, 106, 107]);
    assert_eq!(s.explore_remaining(), 0);
}

#[test]
fn carry_evs_caches_every_listed_ev() {
    let mut c = cfg();
    c.coalescing = Coalescing::CarryEvs;
    let mut s = RepsState::new();
    s.on_coalesced_ack(&c, &[4, 5, 6], false, 0);
    assert_eq!(s.valid_count(), 3);
    s.on_coalesced_ack(&c, &[7, 8], true, 0);
    assert_eq!(s.valid_count(), 3);
    let (evs, randoms) = draw(&mut s, &c, 3);
    assert_eq!((evs, randoms), (std::vec![4, 5, 6], 0));
}

#[test]
fn per_ack_coalesced_caches_only_the_triggering_ev() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_coalesced_ack(&c, &[4, 5, 6], false, 0);
    assert_eq!(s.valid_count(), 1);
    assert_eq!(s.slot(0), Some((6, true)));
    assert_eq!(s.on_coalesced_ack(&c, &[], false, 0), Transition::None);
    assert_eq!(s.valid_count(), 1);
}

#[test]
fn coalesced_ack_can_exit_freezing() {
    let mut c = cfg();
    c.coalescing = Coalescing::CarryEvs;
    let mut s = RepsState::new();
    s.on_failure_detected(&c, 0);
    let t = s.on_coalesced_ack(&c, &[1, 2], false, 200);
    assert_eq!(t, Transition::ExitedFreezing);
    assert_eq!(s.valid_count(), 2);
}

#[test]
fn reuse_evs_serves_each_ev_max_uses_times() {
    let mut c = cfg();
    c.coalescing = Coalescing::ReuseEvs { max_uses: 3 };
    let mut s = RepsState::new();
    s.on_ack(&c, 1, false, 0);
    s.on_ack(&c, 2, false, 0);
    let (evs, randoms) = draw(&mut s, &c, 7);
    assert_eq!(evs, [1, 1, 1, 2, 2, 2, 1001]);
    assert_eq!(randoms, 1);
}

#[test]
fn reuse_evs_use_count_resets_when_oldest_is_overwritten() {
    let mut c = cfg();
    c.coalescing = Coalescing::ReuseEvs { max_uses: 2 };
    let mut s = RepsState::new();
    for ev in 0..8 {
        s.on_ack(&c, ev, false, 0);
    }
    let mut rng = Counting::new();
    assert_eq!(s.next_ev(&c, &mut rng), 0); // one use of 0
    s.on_ack(&c, 8, false, 0); // overwrites 0
    assert_eq!(s.next_ev(&c, &mut rng), 1);
    assert_eq!(s.next_ev(&c, &mut rng), 1);
    assert_eq!(s.next_ev(&c, &mut rng), 2);
}

#[test]
fn random_evs_are_below_evs_size() {
    for n in [1u32, 2, 32, 256, 1000, 65535, 65536] {
        let c = Config::new(n);
        let mut rng = XorShift32::new(n);
        let mut s = RepsState::new();
        for _ in 0..1000 {
            assert!(u32::from(s.next_ev(&c, &mut rng)) < n);
        }
        assert_eq!(random_ev(n, &mut || u32::MAX) as u32, n - 1);
        assert_eq!(random_ev(n, &mut || 0), 0);
    }
    // Out-of-range sizes are clamped instead of misbehaving.
    assert_eq!(random_ev(0, &mut || u32::MAX), 0);
    assert_eq!(random_ev(1 << 20, &mut || u32::MAX), u16::MAX);
}

#[test]
fn config_validation() {
    assert_eq!(Config::new(65536).validate(), Ok(()));
    assert_eq!(Config::new(1).validate(), Ok(()));
    assert_eq!(
        Config::new(0).validate(),
        Err(ConfigError::EvsSizeOutOfRange(0))
    );
    assert_eq!(
        Config::new(65537).validate(),
        Err(ConfigError::EvsSizeOutOfRange(65537))
    );
    let mut c = Config::new(256);
    c.freeze_duration = u32::MAX;
    assert_eq!(
        c.validate(),
        Err(ConfigError::FreezeDurationTooLong(u32::MAX))
    );
    c.freeze_duration = MAX_FREEZE_DURATION;
    c.coalescing = Coalescing::ReuseEvs { max_uses: 0 };
    assert_eq!(c.validate(), Err(ConfigError::ReuseMaxUsesOutOfRange(0)));
    c.coalescing = Coalescing::ReuseEvs { max_uses: 17 };
    assert_eq!(c.validate(), Err(ConfigError::ReuseMaxUsesOutOfRange(17)));
    c.coalescing = Coalescing::ReuseEvs { max_uses: 16 };
    assert_eq!(c.validate(), Ok(()));
    let d = Config::new(32);
    assert_eq!(d.freeze_duration, 10_000_000);
    assert_eq!(d.explore_packets, 100);
    assert_eq!(d.explore_mode, ExploreMode::Reference);
    assert_eq!(d.coalescing, Coalescing::PerAck);
    assert!(d.freezing_enabled);
    use std::string::ToString;
    assert!(ConfigError::EvsSizeOutOfRange(0)
        .to_string()
        .contains("evs_size"));
}

#[test]
fn byte_layout_matches_the_docs() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_ack(&c, 0x1234, false, 0);
    s.on_ack(&c, 0xBEEF, false, 0);
    let mut rng = Counting::new();
    s.next_ev(&c, &mut rng); // consumes 0x1234
    s.on_failure_detected(&c, 0x0102_0300);
    s.next_ev(&c, &mut rng); // frozen cursor 0 -> 1
    let b = s.to_bytes();
    assert_eq!(&b[0..4], &[0x34, 0x12, 0xEF, 0xBE]);
    assert_eq!(b[16], 0b10, "only slot 1 valid");
    assert_eq!(b[17], 2 | (1 << 3) | 0x80, "head 2, one valid, frozen");
    assert_eq!(&b[18..20], &[0, 0]);
    assert_eq!(&b[20..24], &(0x0102_0300u32 + 100).to_le_bytes());
    assert_eq!(b[24], 1, "cursor 1, not wrapped, no uses");
}

#[test]
fn reset_returns_to_new() {
    let c = cfg();
    let mut s = RepsState::new();
    s.on_ack(&c, 1, false, 0);
    s.on_failure_detected(&c, 0);
    s.reset();
    assert_eq!(s, RepsState::new());
}

#[test]
fn c_config_round_trips() {
    let mut c = Config::new(256);
    c.freeze_duration = 1234;
    c.explore_packets = 56;
    c.coalescing = Coalescing::ReuseEvs { max_uses: 4 };
    c.explore_mode = ExploreMode::PaperPseudocode;
    c.freezing_enabled = false;
    assert_eq!(ffi::CConfig::from_config(&c).to_config(), c);
    for coalescing in [Coalescing::PerAck, Coalescing::CarryEvs] {
        let c = Config {
            coalescing,
            ..Config::new(1)
        };
        assert_eq!(ffi::CConfig::from_config(&c).to_config(), c);
    }
}
