//! A FIFO of packet handles: one lane of an egress port.
//!
//! A ring buffer whose capacity is a power of two, so wrapping is a mask. It does what the
//! port asked of `VecDeque` in 24 bytes instead of 32, which lets a whole [`super::port::Port`]
//! fit in two cache lines (the event loop fetches a port's lines for every packet it moves).
use crate::engine::Handle;

/// Smallest capacity a lane allocates.
const MIN_CAPACITY: usize = 4;

/// A first-in first-out queue of packet handles (see the module docs).
#[derive(Debug, Default)]
pub struct Lane {
    /// Slots; its length (0 or a power of two) is the capacity.
    slots: Box<[Handle]>,
    /// Slot of the front handle.
    head: u32,
    /// Handles held.
    len: u32,
}

impl Lane {
    /// An empty lane that has not allocated.
    pub fn new() -> Self {
        Lane::default()
    }

    /// Handles held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when it holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots allocated.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot of the handle `i` places behind the front (`i < capacity`).
    #[inline]
    fn slot(&self, i: u32) -> usize {
        (self.head.wrapping_add(i) as usize) & (self.slots.len() - 1)
    }

    /// Appends `h` at the back.
    #[inline]
    pub fn push_back(&mut self, h: Handle) {
        if self.len() == self.slots.len() {
            self.grow();
        }
        let at = self.slot(self.len);
        self.slots[at] = h;
        self.len += 1;
    }

    /// The slot the next [`Self::push_back`] writes, if it needs no growing.
    #[inline]
    pub fn next_slot(&self) -> Option<&Handle> {
        if self.len() == self.slots.len() {
            return None;
        }
        Some(&self.slots[self.slot(self.len)])
    }

    /// Removes the front handle.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Handle> {
        if self.len == 0 {
            return None;
        }
        let h = self.slots[self.head as usize];
        self.len -= 1;
        // An emptied lane starts again at its first slot, so that a port whose queue keeps
        // draining (most of them) reuses one cache line of its ring instead of walking all of
        // them; the order of packets is the same either way.
        self.head = if self.len == 0 {
            0
        } else {
            self.slot(1) as u32
        };
        Some(h)
    }

    /// Removes the back handle.
    #[inline]
    pub fn pop_back(&mut self) -> Option<Handle> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.slots[self.slot(self.len)])
    }

    /// The front handle.
    #[inline]
    pub fn front(&self) -> Option<&Handle> {
        self.get(0)
    }

    /// The handle `i` places behind the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Handle> {
        if i >= self.len() {
            return None;
        }
        Some(&self.slots[self.slot(i as u32)])
    }

    /// Inserts `h` so that it becomes the handle `i` places behind the front (`i <= len`;
    /// the handles from `i` on move one place back).
    pub fn insert(&mut self, i: usize, h: Handle) {
        assert!(
            i <= self.len(),
            "lane insert at {i} beyond its {} handles",
            self.len
        );
        self.push_back(h);
        // Walk the new handle forward to its place (rare: PFC frames at the head).
        let mut at = self.len - 1;
        while at as usize > i {
            let (a, b) = (self.slot(at - 1), self.slot(at));
            self.slots.swap(a, b);
            at -= 1;
        }
    }

    /// The handles, front to back.
    pub fn iter(&self) -> impl Iterator<Item = &Handle> + '_ {
        (0..self.len).map(move |i| &self.slots[self.slot(i)])
    }

    /// Doubles the capacity, moving the handles to the start of the new slots in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = (self.slots.len() * 2).max(MIN_CAPACITY);
        let mut slots = vec![0; capacity].into_boxed_slice();
        for (to, &h) in slots.iter_mut().zip(self.iter()) {
            *to = h;
        }
        self.slots = slots;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use std::collections::VecDeque;

    /// Every operation agrees with `VecDeque` over a random mix that wraps and grows the ring.
    #[test]
    fn behaves_like_a_deque() {
        let mut rng = Rng::new(5);
        let mut lane = Lane::new();
        let mut reference: VecDeque<Handle> = VecDeque::new();
        for step in 0..20_000u32 {
            match rng.below(10) {
                0..=4 => {
                    lane.push_back(step);
                    reference.push_back(step);
                }
                5..=7 => assert_eq!(lane.pop_front(), reference.pop_front()),
                8 => assert_eq!(lane.pop_back(), reference.pop_back()),
                _ => {
                    let at = rng.below(reference.len() as u32 + 1) as usize;
                    lane.insert(at, step);
                    reference.insert(at, step);
                }
            }
            assert_eq!(lane.len(), reference.len());
            assert_eq!(lane.front(), reference.front());
            if step % 97 == 0 {
                assert!(lane.iter().eq(reference.iter()), "step {step}");
                assert!(lane.capacity().is_power_of_two() && lane.capacity() >= lane.len());
            }
        }
        assert!(lane.iter().eq(reference.iter()));
        while let Some(h) = reference.pop_front() {
            assert_eq!(lane.pop_front(), Some(h));
        }
        assert!(lane.is_empty() && lane.pop_front().is_none() && lane.pop_back().is_none());
    }

    /// `next_slot` is where the next push lands, and there is none when the ring is full.
    #[test]
    fn next_slot_is_where_the_next_push_lands() {
        let mut lane = Lane::new();
        assert!(lane.next_slot().is_none(), "nothing allocated yet");
        for h in 0..100u32 {
            if let Some(slot) = lane.next_slot() {
                let at: *const Handle = slot;
                lane.push_back(h);
                assert_eq!(at, lane.get(lane.len() - 1).unwrap() as *const Handle);
            } else {
                assert_eq!(lane.len(), lane.capacity(), "no slot only when full");
                lane.push_back(h);
            }
            if h % 3 == 0 {
                lane.pop_front();
            }
        }
    }

    /// A lane that empties starts again at its first slot (so a queue that keeps draining
    /// keeps using one cache line), with its order intact.
    #[test]
    fn an_emptied_lane_restarts_at_its_first_slot() {
        let mut lane = Lane::new();
        for h in 0..6u32 {
            lane.push_back(h);
        }
        let first: *const Handle = lane.get(0).unwrap();
        for round in 0..50u32 {
            for h in 0..=round % 5 {
                lane.push_back(100 * round + h);
            }
            while lane.pop_front().is_some() {}
            assert_eq!(lane.next_slot().map(|s| s as *const Handle), Some(first));
        }
        for h in [7, 8, 9] {
            lane.push_back(h);
        }
        assert_eq!(lane.iter().copied().collect::<Vec<_>>(), [7, 8, 9]);
        assert_eq!(lane.get(0).map(|s| s as *const Handle), Some(first));
    }
}
