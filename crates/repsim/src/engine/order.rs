//! The order of same-time events: the one scheduled longer ago first, then by the entity that
//! scheduled it, then by that entity's own count of the events it has scheduled.
//!
//! A global insertion counter would order two events of the same picosecond by which one some
//! part of the simulator happened to schedule first, so splitting the network over threads
//! would change results. Here each entity (a host, a switch, or the control that runs faults,
//! workload sources and the setup) counts its own events, and an event's tie-break is (its
//! delay class, its scheduling entity, that entity's count). All three are fixed by the
//! event's own history, which does not depend on how the network is partitioned, so one
//! thread and many order every tie alike. The entity and its count are unique among pending
//! events, so the order is total.
//!
//! The delay class is the bit length of the event's delay (its time minus the time it was
//! scheduled at), largest first: a power-of-two version of htsim's rule, where same-time
//! events run in the order they were scheduled. Besides matching the reference's tie order
//! more closely, it keeps same-time events of one kind together (an ACK's hop, a full
//! packet's hop and a switch's pipeline delay fall in different classes), which the
//! handlers' branches predict much better than an order by entity alone
//! (`docs/performance.md` has the measurements).
//!
//! The triple is packed into the 57 bits the event queue keeps for a tie-break: the class in
//! the top [`CLASS_BITS`], then the entity in [`ENTITY_BITS`], its count in the rest. A count
//! wraps after 2^29 events of one entity; the order stays a pure function of the entity's
//! history (deterministic), it only stops being that entity's scheduling order for ties that
//! straddle the wrap.
use super::time::Time;

/// Bits of an order that hold its delay class.
pub const CLASS_BITS: u32 = 6;
/// Bits of an order that name the scheduling entity.
pub const ENTITY_BITS: u32 = 22;
/// Entities an order can name: hosts, switches and the control together.
pub const MAX_ENTITIES: u64 = 1 << ENTITY_BITS;
/// Bits of an order that hold the entity's own count.
pub const COUNT_BITS: u32 = super::queue::ORDER_BITS - CLASS_BITS - ENTITY_BITS;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const ENTITY_MASK: u64 = (1 << ENTITY_BITS) - 1;
const _: () = assert!(
    1 << CLASS_BITS == u64::BITS,
    "a class is a 64-bit delay's leading zeros less one, 0 to 63"
);

/// The tie-break bits of an event scheduled `delay` after now: the bit length of the delay,
/// inverted so that longer delays (events scheduled earlier) order first. That is 63 less
/// the bit length (64 less the leading zeros), with delays of 2^63 ps and more in class 0:
/// the leading zeros less one.
#[inline]
fn delay_class(delay: Time) -> u64 {
    u64::from(delay.leading_zeros()).saturating_sub(1) << (ENTITY_BITS + COUNT_BITS)
}

/// Per-entity event counters and the entity whose event is running (see the module docs).
#[derive(Clone, Debug)]
pub struct EventOrder {
    /// The entity that schedules what is pushed now.
    current: u32,
    /// Each entity's next order: its id above the count of events it has scheduled.
    next: Vec<u64>,
}

impl EventOrder {
    /// Counters for `entities` entities (below [`MAX_ENTITIES`]); the last one is current.
    pub fn new(entities: u32) -> Self {
        assert!(
            entities > 0 && u64::from(entities) <= MAX_ENTITIES,
            "{entities} entities: an event order names 1 to {MAX_ENTITIES}"
        );
        EventOrder {
            current: entities - 1,
            next: (0..u64::from(entities)).map(|e| e << COUNT_BITS).collect(),
        }
    }

    /// Makes `entity` the one whose events are scheduled from now on.
    #[inline]
    pub fn enter(&mut self, entity: u32) {
        debug_assert!((entity as usize) < self.next.len());
        self.current = entity;
    }

    /// The entity that scheduled an event of order `order`.
    #[inline]
    pub fn entity_of(order: u64) -> u32 {
        (order >> COUNT_BITS & ENTITY_MASK) as u32
    }

    /// The entity scheduling now.
    #[inline]
    pub fn current(&self) -> u32 {
        self.current
    }

    /// The tie-break of the next event the current entity schedules, `delay` after now.
    #[inline]
    pub fn next_order(&mut self, delay: Time) -> u64 {
        let next = &mut self.next[self.current as usize];
        let order = *next;
        // The count wraps inside its entity's bits (branch-free: this runs for every event).
        *next = (order & !COUNT_MASK) | (order.wrapping_add(1) & COUNT_MASK);
        order | delay_class(delay)
    }

    /// The tie-break of the next event the current entity schedules to run before every
    /// same-time event scheduled with a delay (delay class 0, that of delays from 2^63 ps).
    #[inline]
    pub fn next_order_first(&mut self) -> u64 {
        self.next_order(Time::MAX)
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.next.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delay every order in these tests shares, so that only entities and counts differ.
    const D: Time = 1000;

    #[test]
    fn orders_by_entity_then_by_its_own_count() {
        let mut o = EventOrder::new(4);
        assert_eq!(o.current(), 3, "the last entity is current at first");
        o.enter(2);
        let (a, b) = (o.next_order(D), o.next_order(D));
        o.enter(1);
        let c = o.next_order(D);
        o.enter(2);
        let d = o.next_order(D);
        assert!(c < a && a < b && b < d, "{c} {a} {b} {d}");
        assert!(d < 1 << super::super::queue::ORDER_BITS);
    }

    /// What other entities schedule in between leaves an entity's orders unchanged: the
    /// property that makes the order independent of partitioning.
    #[test]
    fn an_entitys_orders_do_not_depend_on_the_others() {
        let run = |interleave: bool| {
            let mut o = EventOrder::new(3);
            let mut mine = Vec::new();
            for i in 0..10 {
                if interleave && i % 3 == 0 {
                    o.enter(0);
                    o.next_order(D);
                }
                o.enter(1);
                mine.push(o.next_order(D));
            }
            mine
        };
        assert_eq!(run(false), run(true));
    }

    /// A count that wraps stays inside its entity's orders.
    #[test]
    fn a_wrapping_count_stays_inside_its_entity() {
        let mut o = EventOrder::new(3);
        o.enter(1);
        o.next[1] = 1 << COUNT_BITS | COUNT_MASK;
        let last = o.next_order(D);
        let first = o.next_order(D);
        assert_eq!(EventOrder::entity_of(last), 1);
        assert_eq!(
            first,
            1 << COUNT_BITS | delay_class(D),
            "the count wraps to 0, the entity and the class stay"
        );
        o.enter(2);
        o.enter(1);
        assert_eq!(
            o.next_order(D),
            first + 1,
            "the count survives another entity's turn"
        );
    }

    /// Among same-time events, the one scheduled longer ago comes first whichever entity
    /// scheduled it; delays of one bit length tie and fall to the entity.
    #[test]
    fn longer_delays_order_first() {
        let mut o = EventOrder::new(4);
        o.enter(0);
        let soon = o.next_order(100);
        o.enter(3);
        let long_ago = o.next_order(100_000);
        let same_length = o.next_order(127);
        let now = o.next_order(0);
        assert!(long_ago < soon, "a longer delay first");
        assert!(
            soon < same_length,
            "100 and 127 ps share a class: entity 0 first"
        );
        assert!(same_length < now, "a zero delay last");
        assert_eq!(EventOrder::entity_of(long_ago), 3);
        assert_eq!(EventOrder::entity_of(soon), 0);
        assert_eq!(EventOrder::entity_of(o.next_order(Time::MAX)), 3);
        assert!(o.next_order(Time::MAX) < 1 << super::super::queue::ORDER_BITS);
    }

    /// The class is the bit length inverted, longest first, capped at the 6 bits it has.
    #[test]
    fn class_is_the_inverted_bit_length() {
        for delay in [
            0,
            1,
            2,
            3,
            127,
            128,
            83_000,
            1 << 62,
            (1 << 63) - 1,
            1 << 63,
            Time::MAX,
        ] {
            let length = u64::from(u64::BITS - delay.leading_zeros()).min(63);
            assert_eq!(
                delay_class(delay) >> (ENTITY_BITS + COUNT_BITS),
                63 - length,
                "delay {delay}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "entities")]
    fn refuses_more_entities_than_it_can_name() {
        EventOrder::new(u32::MAX);
    }
}
