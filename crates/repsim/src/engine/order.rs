//! The order of same-time events: by the entity that scheduled them, then by that entity's own
//! count of the events it has scheduled.
//!
//! A global insertion counter would order two events of the same picosecond by which one some
//! part of the simulator happened to schedule first, so splitting the network over threads
//! would change results. Here each entity (a host, a switch, or the control that runs faults,
//! workload sources and the setup) counts its own events, and an event's tie-break is (its
//! scheduling entity, that entity's count). Both are fixed by the entity's own history, which
//! does not depend on how the network is partitioned, so one thread and many order every tie
//! alike. The pair is unique among pending events, so the order is total.
//!
//! The pair is packed into the 57 bits the event queue keeps for a tie-break: the entity in
//! the top [`ENTITY_BITS`], its count in the rest. A count wraps after 2^35 events of one
//! entity; the order stays a pure function of the entity's history (deterministic), it only
//! stops being that entity's scheduling order for ties that straddle the wrap.

/// Bits of an order that name the scheduling entity.
pub const ENTITY_BITS: u32 = 22;
/// Entities an order can name: hosts, switches and the control together.
pub const MAX_ENTITIES: u64 = 1 << ENTITY_BITS;
/// Bits of an order that hold the entity's own count.
pub const COUNT_BITS: u32 = super::queue::ORDER_BITS - ENTITY_BITS;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

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
        (order >> COUNT_BITS) as u32
    }

    /// The entity scheduling now.
    #[inline]
    pub fn current(&self) -> u32 {
        self.current
    }

    /// The tie-break of the next event the current entity schedules.
    #[inline]
    pub fn next_order(&mut self) -> u64 {
        let next = &mut self.next[self.current as usize];
        let order = *next;
        *next = if order & COUNT_MASK == COUNT_MASK {
            order & !COUNT_MASK
        } else {
            order + 1
        };
        order
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.next.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_entity_then_by_its_own_count() {
        let mut o = EventOrder::new(4);
        assert_eq!(o.current(), 3, "the last entity is current at first");
        o.enter(2);
        let (a, b) = (o.next_order(), o.next_order());
        o.enter(1);
        let c = o.next_order();
        o.enter(2);
        let d = o.next_order();
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
                    o.next_order();
                }
                o.enter(1);
                mine.push(o.next_order());
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
        let last = o.next_order();
        let first = o.next_order();
        assert_eq!(last >> COUNT_BITS, 1);
        assert_eq!(
            first,
            1 << COUNT_BITS,
            "the count wraps to 0, the entity stays"
        );
        o.enter(2);
        o.enter(1);
        assert_eq!(
            o.next_order(),
            first + 1,
            "the count survives another entity's turn"
        );
    }

    #[test]
    #[should_panic(expected = "entities")]
    fn refuses_more_entities_than_it_can_name() {
        EventOrder::new(u32::MAX);
    }
}
