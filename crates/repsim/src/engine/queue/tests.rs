//! The queue against a reference heap: time then order, far events, entries merged with the
//! bucket being drained, crowded buckets of per-entity orders, and pushes before a bucket a
//! peek moved to.
use super::*;
use crate::engine::Rng;

/// The queue under test beside a reference binary heap of (time, order); each event is
/// its order. Orders are unique but unrelated to push order (the push count times an odd
/// constant, modulo 2^ORDER_BITS: a bijection), as per-entity orders are.
struct Mirrored {
    q: EventQueue<u64>,
    reference: BinaryHeap<Reverse<(u64, u64)>>,
    pushed: u64,
}

impl Mirrored {
    fn new() -> Self {
        Mirrored {
            q: EventQueue::new(),
            reference: BinaryHeap::new(),
            pushed: 0,
        }
    }

    fn push(&mut self, at: u64) {
        let order = self.pushed.wrapping_mul(0x9E37_79B9_7F4A_7C15) & ((1 << ORDER_BITS) - 1);
        self.q.push(at, order, order);
        self.reference.push(Reverse((at, order)));
        self.pushed += 1;
    }

    /// Pops both, asserting they agree (`what` names the pop in a failure).
    fn pop(&mut self, what: impl std::fmt::Display) -> Option<(u64, u64)> {
        let expected = self.reference.pop().map(|Reverse(e)| e);
        assert_eq!(self.q.pop(), expected, "{what}");
        expected
    }
}

#[test]
fn pops_in_time_then_order_not_push_order() {
    let mut q = EventQueue::new();
    q.push(10, 1, 'a');
    q.push(5, 7, 'b');
    q.push(10, 0, 'c');
    q.push(5, 3, 'd');
    q.push(0, 9, 'e');
    let popped: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
    assert_eq!(popped, vec!['e', 'd', 'b', 'c', 'a']);
}

/// Same order as a reference binary heap of (time, order) over a random hold-model workload
/// with near (ns), mid (us) and far (ms) increments and same-time ties.
#[test]
fn matches_reference_order() {
    let mut rng = Rng::new(9);
    let mut m = Mirrored::new();
    let mut now = 0;
    for _ in 0..1000 {
        m.push(rng.below(5_000_000) as u64);
    }
    for i in 0..200_000 {
        let (t, _) = m.pop(i).unwrap();
        assert!(t >= now);
        now = t;
        let inc = match rng.below(10) {
            0 => 0,
            1..=5 => rng.below(2_000) as u64,
            6..=8 => rng.below(2_000_000) as u64,
            _ => rng.below(200_000_000) as u64,
        };
        m.push(now + inc);
        if rng.below(3) == 0 {
            m.push(now + inc);
        }
    }
    while m.pop("draining").is_some() {}
    assert!(m.q.pop().is_none());
    assert!(m.q.is_empty());
}

/// A crowded bucket whose first entries came from the far heap (pushed beyond the ring's
/// horizon, pulled into the ring in key order) pops in (time, order) order.
#[test]
fn far_events_in_a_crowded_bucket_keep_their_order() {
    let horizon = (RING as u64) << BUCKET_SHIFT;
    let mut m = Mirrored::new();
    let target = horizon + 5_000;
    // Far events first, all in the target bucket.
    for i in 0..10 {
        m.push(target + (i * 7) % 64);
    }
    m.push(10);
    // Pop the early event so that the target bucket comes inside the horizon, then crowd
    // it with newer events at the same times.
    assert_eq!(m.pop("the early event").map(|(t, _)| t), Some(10));
    for i in 0..60 {
        m.push(target - (target % 64) + (i * 13) % 64);
    }
    while m.pop("draining").is_some() {}
    assert!(m.q.pop().is_none());
}

/// Entries already in `current` (far events pulled into the bucket) are merged with the
/// gathered ones.
#[test]
fn gathered_entries_merge_with_what_current_holds() {
    let mut q: EventQueue<u64> = EventQueue::new();
    let base = 7 << BUCKET_SHIFT;
    q.current.push((bucket_key(base + 1, 20), 1_000));
    for order in 0..40u64 {
        q.gathered
            .push((bucket_key(base + order % 3, order), order));
    }
    q.sort_gathered();
    assert_eq!(q.current.len(), 41);
    assert!(q.current.windows(2).all(|w| w[0].0 > w[1].0));
    assert_eq!(q.current[0].1, 38, "the latest time, highest order first");
}

/// A bucket's entries of random offsets and orders come out sorted, after what `current`
/// already holds.
#[test]
fn a_bucket_sorts_entries_of_any_offset_and_order() {
    let mut rng = Rng::new(5);
    let mut q: EventQueue<u64> = EventQueue::new();
    let base = 3 << BUCKET_SHIFT;
    q.current.push((bucket_key(base + 100, 0), 0));
    for i in 1..=300u64 {
        let order = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & ((1 << ORDER_BITS) - 1);
        q.gathered
            .push((bucket_key(base + rng.below(64) as u64, order), order));
    }
    q.sort_gathered();
    assert_eq!(q.current.len(), 301);
    assert!(q.current.windows(2).all(|w| w[0].0 > w[1].0));
}

/// Crowded buckets (many chunks each, times inside one bucket out of order, pushes into the
/// bucket being drained) pop exactly as a reference heap does, and `pending` sees them all.
#[test]
fn crowded_buckets_keep_time_then_order() {
    let mut rng = Rng::new(3);
    let mut m = Mirrored::new();
    for _ in 0..5_000 {
        // 5,000 events over 8 buckets: about 40 chunks per bucket.
        m.push(1_000 + rng.below(512) as u64);
    }
    assert_eq!(m.q.pending().len(), 5_000);
    let mut popped = 0;
    while let Some((rt, _)) = m.pop(format_args!("event {popped}")) {
        popped += 1;
        if popped % 7 == 0 {
            // Same time as the event just popped, and a little later.
            for at in [rt, rt + rng.below(200) as u64] {
                m.push(at);
            }
        }
    }
    assert!(m.q.pop().is_none());
}

/// With per-entity orders (an entity's count grows with each push), crowded same-time
/// buckets pop exactly as a reference heap of (time, order) does.
#[test]
fn per_entity_orders_keep_time_then_order() {
    // Entities numbered densely, and spread over 20 bits.
    for spread in [1, 3_001] {
        per_entity_orders_match_a_heap(spread);
    }
}

fn per_entity_orders_match_a_heap(spread: u64) {
    const COUNT: u32 = 36;
    let mut rng = Rng::new(17);
    let mut q = EventQueue::new();
    let mut reference = BinaryHeap::new();
    let mut counts = [0u64; 300];
    let mut push = |q: &mut EventQueue<u64>, reference: &mut BinaryHeap<_>, at: u64, e: usize| {
        let entity = e as u64 * spread % (1 << 20);
        let order = entity << COUNT | counts[e];
        counts[e] += 1;
        q.push(at, order, order);
        reference.push(Reverse((at, order)));
    };
    // Hundreds of events in a few picoseconds, from entities in shuffled turns, and
    // thousands at one picosecond.
    for i in 0..3_000u64 {
        let e = rng.below(300) as usize;
        push(
            &mut q,
            &mut reference,
            1_000 + (i % 5) * 64 + rng.below(3) as u64,
            e,
        );
    }
    for _ in 0..3_000u64 {
        let e = rng.below(300) as usize;
        push(&mut q, &mut reference, 5_000, e);
    }
    let mut popped = 0;
    while let Some(Reverse(want)) = reference.pop() {
        assert_eq!(q.pop(), Some(want), "pop {popped}, spread {spread}");
        popped += 1;
        if popped % 5 == 0 {
            let e = rng.below(300) as usize;
            push(
                &mut q,
                &mut reference,
                want.0 + 64 * (1 + rng.below(4) as u64),
                e,
            );
        }
    }
    assert!(q.pop().is_none());
}

/// A peek moves the queue to the next occupied bucket; events pushed afterwards before that
/// bucket (but not before the last pop) still pop first, whether the peeked bucket is near,
/// just inside the ring's horizon, or far beyond it, and with ring entries that the earlier
/// horizon no longer covers.
#[test]
fn pushes_before_a_peeked_bucket_pop_first() {
    let horizon = (RING as u64) << BUCKET_SHIFT;
    for ahead in [
        300,
        5 << BUCKET_SHIFT,
        horizon / 2,
        horizon - 200,
        3 * horizon,
    ] {
        let mut m = Mirrored::new();
        m.push(100);
        // The bucket the peek moves to, with several entries, and entries after it across
        // the ring (some beyond the horizon measured from the early pushes below).
        for i in 0..20 {
            m.push(100 + ahead + i % 4);
        }
        for i in 1..50 {
            m.push(100 + ahead + i * (horizon / 40));
        }
        assert_eq!(m.pop("the first event").map(|(t, _)| t), Some(100));
        assert_eq!(m.q.peek_time(), Some(100 + ahead), "peeked {ahead} ahead");
        // Pushes at the last pop's time and between it and the peeked bucket.
        for at in [100, 101, 100 + ahead / 2, 100 + ahead - 1] {
            m.push(at);
            m.push(at);
        }
        assert_eq!(m.q.pending().len(), m.reference.len());
        let mut popped = 0;
        while m.pop(format_args!("{ahead} ahead, pop {popped}")).is_some() {
            popped += 1;
            if popped == 3 {
                // And once more after a peek, from the middle of a bucket.
                let t = m.q.peek_time().unwrap();
                m.push(t);
            }
        }
        assert!(m.q.pop().is_none());
    }
}
