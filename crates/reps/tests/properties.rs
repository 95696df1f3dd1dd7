//! Property tests over random event sequences (ACKs marked and un-marked, coalesced
//! ACKs, NACKs, failures, sends, a clock that advances and wraps around).
//!
//! Each sequence is replayed against [`RepsState`] with a recording random source and
//! checked, event by event, against the rules of the paper / reference and against a
//! small FIFO model of the valid cached EVs.

use proptest::prelude::*;
use reps::{Coalescing, Config, Ev, ExploreMode, RandomSource, RepsState, Transition, XorShift32};
use std::collections::VecDeque;

/// xorshift words, counting how many were drawn.
struct Recording {
    words: XorShift32,
    calls: u64,
}

impl Recording {
    fn new(seed: u32) -> Self {
        Self {
            words: XorShift32::new(seed),
            calls: 0,
        }
    }
}

impl RandomSource for Recording {
    fn next_u32(&mut self) -> u32 {
        self.calls += 1;
        self.words.next_u32()
    }
}

#[derive(Clone, Debug)]
enum Event {
    Ack {
        ev: u16,
        marked: bool,
        dt: u32,
    },
    Coalesced {
        evs: Vec<u16>,
        marked: bool,
        dt: u32,
    },
    Nack {
        ev: u16,
        dt: u32,
    },
    Failure {
        dt: u32,
    },
    Send,
}

fn event() -> impl Strategy<Value = Event> {
    let dt = prop_oneof![4 => 0u32..50, 1 => 0u32..1500];
    prop_oneof![
        6 => (any::<u16>(), prop::bool::weighted(0.3), dt.clone())
            .prop_map(|(ev, marked, dt)| Event::Ack { ev, marked, dt }),
        2 => (prop::collection::vec(any::<u16>(), 0..12), prop::bool::weighted(0.3), dt.clone())
            .prop_map(|(evs, marked, dt)| Event::Coalesced { evs, marked, dt }),
        1 => (any::<u16>(), dt.clone()).prop_map(|(ev, dt)| Event::Nack { ev, dt }),
        1 => dt.prop_map(|dt| Event::Failure { dt }),
        8 => Just(Event::Send),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    let evs_size = prop_oneof![
        Just(1u32),
        Just(2),
        Just(32),
        Just(256),
        Just(65536),
        1u32..=65536
    ];
    let explore_mode = prop_oneof![
        Just(ExploreMode::Reference),
        Just(ExploreMode::PaperPseudocode)
    ];
    let coalescing = prop_oneof![
        Just(Coalescing::PerAck),
        Just(Coalescing::CarryEvs),
        (1u8..=16).prop_map(|max_uses| Coalescing::ReuseEvs { max_uses }),
    ];
    (
        evs_size,
        0u32..600,
        0u16..40,
        explore_mode,
        coalescing,
        prop::bool::weighted(0.8),
    )
        .prop_map(
            |(
                evs_size,
                freeze_duration,
                explore_packets,
                explore_mode,
                coalescing,
                freezing_enabled,
            )| {
                let mut cfg = Config::new(evs_size);
                cfg.freeze_duration = freeze_duration;
                cfg.explore_packets = explore_packets;
                cfg.explore_mode = explore_mode;
                cfg.coalescing = coalescing;
                cfg.freezing_enabled = freezing_enabled;
                cfg
            },
        )
}

fn start_time() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        (u32::MAX - 3000)..=u32::MAX,
        (i32::MAX as u32 - 3000)..=(i32::MAX as u32)
    ]
}

/// Structural invariants that must hold after every event.
fn check_invariants(s: &RepsState) -> Result<(), TestCaseError> {
    let valid_slots = (0..8).filter(|&i| s.slot(i).unwrap().1).count() as u8;
    prop_assert_eq!(
        s.valid_count(),
        valid_slots,
        "valid count != number of valid slots"
    );
    prop_assert!(s.valid_count() <= s.cached_count());
    // Slots not written since the last wipe are still blank.
    for i in s.cached_count() as usize..8 {
        prop_assert_eq!(
            s.slot(i),
            Some((0, false)),
            "unwritten slot {} not blank",
            i
        );
    }
    prop_assert!(
        !(s.is_frozen() && s.explore_remaining() > 0),
        "frozen while exploring"
    );
    if !s.is_frozen() {
        // Outside freezing the valid EVs are the run of most recent writes.
        let v = s.valid_count() as usize;
        for k in 0..8 {
            let index = (s.head() + 8 - 1 - k) % 8;
            prop_assert_eq!(s.slot(index).unwrap().1, k < v, "valid run not contiguous");
        }
    }
    Ok(())
}

/// FIFO model of the valid cached EVs (ev, uses so far), meaningful outside freezing.
struct Model {
    fifo: VecDeque<(Ev, u8)>,
}

impl Model {
    fn cache(&mut self, ev: Ev) {
        if self.fifo.len() == 8 {
            self.fifo.pop_front();
        }
        self.fifo.push_back((ev, 0));
    }

    fn take(&mut self, max_uses: u8) -> Option<Ev> {
        let front = self.fifo.front_mut()?;
        front.1 += 1;
        let ev = front.0;
        if front.1 >= max_uses {
            self.fifo.pop_front();
        }
        Some(ev)
    }
}

fn max_uses(cfg: &Config) -> u8 {
    match cfg.coalescing {
        Coalescing::ReuseEvs { max_uses } => max_uses,
        _ => 1,
    }
}

/// Checks the freezing-exit rule for feedback `t` received at `now` (state `before` ->
/// `s`); returns whether freezing ended.
fn check_exit(
    cfg: &Config,
    before: &RepsState,
    s: &RepsState,
    t: Transition,
    now: u32,
) -> Result<bool, TestCaseError> {
    let should_exit = before
        .freezing_until()
        .is_some_and(|d| reps::time_after(now, d));
    prop_assert_eq!(t == Transition::ExitedFreezing, should_exit);
    if should_exit {
        prop_assert!(!s.is_frozen());
        prop_assert_eq!(s.explore_remaining(), cfg.explore_packets);
    } else {
        prop_assert_eq!(s.is_frozen(), before.is_frozen());
    }
    Ok(should_exit)
}

/// Feedback that caches nothing (marked ACK, NACK): the state is unchanged, or, if it
/// ended freezing, the ring is empty.
fn check_nothing_cached(
    before: &RepsState,
    s: &RepsState,
    exited: bool,
) -> Result<(), TestCaseError> {
    if exited {
        prop_assert_eq!(s.cached_count(), 0);
        prop_assert_eq!(s.valid_count(), 0);
    } else {
        prop_assert_eq!(s, before);
    }
    Ok(())
}

fn replay(cfg: Config, start: u32, seed: u32, events: Vec<Event>) -> Result<(), TestCaseError> {
    let mut s = RepsState::new();
    let mut rng = Recording::new(seed);
    let mut model = Model {
        fifo: VecDeque::new(),
    };
    let mut now = start;
    // Sends remaining in the exploration that followed the last exit from freezing.
    let mut exploration_left: Option<u16> = None;
    // Next written slot a frozen send cycles to: 0 after every wipe, and a freeze can
    // only begin once the previous one has ended in a wipe.
    let mut frozen_cursor = 0usize;
    let in_range = |ev: u16| (ev as u32 % cfg.evs_size) as Ev;

    for event in events {
        let before = s;
        // Feedback: whether it ended freezing, and the EVs it should have cached.
        let feedback: Option<(bool, Vec<Ev>)> = match event {
            Event::Ack { ev, marked, dt } => {
                let ev = in_range(ev);
                now = now.wrapping_add(dt);
                let t = s.on_ack(&cfg, ev, marked, now);
                let exited = check_exit(&cfg, &before, &s, t, now)?;
                if marked {
                    check_nothing_cached(&before, &s, exited)?;
                    Some((exited, vec![]))
                } else {
                    let newest = (s.head() + 7) % 8;
                    prop_assert_eq!(s.slot(newest), Some((ev, true)));
                    Some((exited, vec![ev]))
                }
            }
            Event::Nack { ev, dt } => {
                now = now.wrapping_add(dt);
                let t = s.on_nack(&cfg, in_range(ev), now);
                let exited = check_exit(&cfg, &before, &s, t, now)?;
                check_nothing_cached(&before, &s, exited)?;
                Some((exited, vec![]))
            }
            Event::Coalesced { evs, marked, dt } => {
                let evs: Vec<Ev> = evs.into_iter().map(in_range).collect();
                now = now.wrapping_add(dt);
                let t = s.on_coalesced_ack(&cfg, &evs, marked, now);
                let exited = check_exit(&cfg, &before, &s, t, now)?;
                if marked {
                    check_nothing_cached(&before, &s, exited)?;
                }
                let learnt = match (marked, cfg.coalescing) {
                    (true, _) => vec![],
                    (false, Coalescing::CarryEvs) => evs,
                    (false, _) => evs.last().copied().into_iter().collect(),
                };
                Some((exited, learnt))
            }
            Event::Failure { dt } => {
                now = now.wrapping_add(dt);
                let t = s.on_failure_detected(&cfg, now);
                let should_enter =
                    cfg.freezing_enabled && !before.is_frozen() && before.explore_remaining() == 0;
                prop_assert_eq!(t == Transition::EnteredFreezing, should_enter);
                prop_assert!(t != Transition::ExitedFreezing);
                if should_enter {
                    prop_assert_eq!(
                        s.freezing_until(),
                        Some(now.wrapping_add(cfg.freeze_duration))
                    );
                } else {
                    prop_assert_eq!(s, before);
                }
                None
            }
            Event::Send => {
                let calls = rng.calls;
                let ev = s.next_ev(&cfg, &mut rng);
                let random = rng.calls - calls;
                prop_assert!(random <= 1);
                let random = random == 1;
                prop_assert!((ev as u32) < cfg.evs_size, "EV {} >= {}", ev, cfg.evs_size);

                let explore = before.explore_remaining();
                if explore > 0 {
                    prop_assert_eq!(s.explore_remaining(), explore - 1);
                    let left = exploration_left
                        .as_mut()
                        .expect("exploring without an exit");
                    prop_assert_eq!(*left, explore);
                    *left -= 1;
                    match cfg.explore_mode {
                        ExploreMode::Reference => {
                            prop_assert!(random, "Reference exploration must be random")
                        }
                        ExploreMode::PaperPseudocode => {
                            let must_random =
                                (explore - 1).is_multiple_of(8) || before.valid_count() == 0;
                            prop_assert_eq!(random, must_random);
                            if !random {
                                prop_assert_eq!(Some(ev), model.take(max_uses(&cfg)));
                            }
                        }
                    }
                } else if before.is_frozen() {
                    let written = before.cached_count() as usize;
                    if written > 0 {
                        prop_assert!(!random, "random EV while frozen with a non-empty ring");
                        prop_assert_eq!(
                            ev,
                            before.slot(frozen_cursor).unwrap().0,
                            "frozen sends must cycle over the written slots in order"
                        );
                        frozen_cursor = (frozen_cursor + 1) % written;
                    } else {
                        prop_assert!(random);
                    }
                } else if before.valid_count() > 0 {
                    prop_assert!(!random, "random EV although a valid one was cached");
                    prop_assert_eq!(
                        Some(ev),
                        model.take(max_uses(&cfg)),
                        "not the oldest valid EV"
                    );
                } else {
                    prop_assert!(random);
                    prop_assert!(model.fifo.is_empty());
                }
                if s.explore_remaining() == 0 {
                    if let Some(left) = exploration_left {
                        prop_assert_eq!(left, 0, "exploration ended early");
                    }
                    exploration_left = None;
                }
                None
            }
        };
        if let Some((exited, learnt)) = feedback {
            if exited {
                model.fifo.clear();
                exploration_left = Some(cfg.explore_packets);
                frozen_cursor = 0;
            }
            for ev in learnt {
                model.cache(ev);
            }
        }
        if !s.is_frozen() {
            prop_assert_eq!(s.valid_count() as usize, model.fifo.len());
        }
        check_invariants(&s)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_respect_the_rules(
        cfg in config(),
        start in start_time(),
        seed in any::<u32>(),
        events in prop::collection::vec(event(), 0..300),
    ) {
        replay(cfg, start, seed, events)?;
    }

    /// After leaving freezing, exactly `explore_packets` sends follow before recycling
    /// resumes; in Reference mode all of them are random.
    #[test]
    fn exploration_after_freezing_has_the_configured_length(
        explore_packets in 0u16..300,
        cached in prop::collection::vec(0u16..1000, 0..12),
        start in start_time(),
        paper in any::<bool>(),
    ) {
        let mut cfg = Config::new(1000);
        cfg.freeze_duration = 10;
        cfg.explore_packets = explore_packets;
        if paper {
            cfg.explore_mode = ExploreMode::PaperPseudocode;
        }
        let mut s = RepsState::new();
        let mut rng = Recording::new(7);
        prop_assert_eq!(s.on_failure_detected(&cfg, start), Transition::EnteredFreezing);
        prop_assert_eq!(s.on_nack(&cfg, 0, start.wrapping_add(11)), Transition::ExitedFreezing);
        for &ev in &cached {
            s.on_ack(&cfg, ev, false, start.wrapping_add(12));
        }
        let mut sends = 0u32;
        while s.explore_remaining() > 0 {
            // A failure during exploration is ignored.
            prop_assert_eq!(s.on_failure_detected(&cfg, start.wrapping_add(13)), Transition::None);
            s.next_ev(&cfg, &mut rng);
            sends += 1;
            prop_assert!(sends <= u32::from(explore_packets));
        }
        prop_assert_eq!(sends, u32::from(explore_packets));
        if !paper {
            prop_assert_eq!(rng.calls, u64::from(explore_packets));
        } else {
            prop_assert!(rng.calls >= u64::from(explore_packets.div_ceil(8)));
        }
        // Recycling resumes: if anything valid is left, the next send is not random.
        let calls = rng.calls;
        let valid = s.valid_count();
        s.next_ev(&cfg, &mut rng);
        prop_assert_eq!(rng.calls == calls, valid > 0);
    }
}
