//! The future-event list: a binary min-heap of (time, sequence) keys.
//!
//! Events with equal time fire in the order they were scheduled (the sequence number breaks
//! ties), which makes runs deterministic. The simulator keeps this set small (one departure per
//! busy port, one timer per connection), so a plain binary heap of compact entries is fast; the
//! type is kept small and private so that another structure can replace it without touching
//! callers.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::time::Time;

struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest key first.
        other.key.cmp(&self.key)
    }
}

/// A deterministic priority queue of timed events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1 << 12), next_seq: 0 }
    }

    /// Schedules `event` at absolute time `at`.
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        let key = ((at as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|e| ((e.key >> 64) as Time, e.event))
    }

    /// The time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, 'a');
        q.push(5, 'b');
        q.push(10, 'c');
        q.push(5, 'd');
        q.push(0, 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'b', 'd', 'a', 'c']);
    }
}
