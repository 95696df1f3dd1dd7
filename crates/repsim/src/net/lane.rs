//! A FIFO of queued packets: one lane of an egress port.
//!
//! A ring buffer whose capacity is a power of two, so wrapping is a mask. It does what the
//! port asked of `VecDeque` in 16 bytes instead of 32: a thin pointer to its slots, the
//! front's slot and the capacity's logarithm in one word, and its length. That lets a whole
//! [`super::port::Port`] fit in one cache line (the event loop fetches a port's line for every
//! packet it moves).
//!
//! A slot holds the packet's handle and its size on the wire ([`Queued`]): serving a port
//! needs only the size, so the packet itself is not read when it leaves a queue (with a
//! million packets in flight, that read was a cache miss per hop).
use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use crate::engine::Handle;

/// A packet waiting in a lane: its handle and its size on the wire when it was queued (a
/// queued packet's size does not change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Queued {
    /// The packet.
    pub handle: Handle,
    /// Its bytes on the wire.
    pub size: u32,
}

impl Queued {
    /// Packet `handle`, `size` bytes on the wire.
    #[inline]
    pub const fn new(handle: Handle, size: u32) -> Self {
        Queued { handle, size }
    }
}

/// Smallest capacity a lane allocates.
const MIN_CAPACITY: usize = 4;

/// Bits of [`Lane::head`] that hold the front's slot; the bits above hold the capacity's
/// base-2 logarithm (0: nothing allocated), so that a lane is 16 bytes.
const HEAD_BITS: u32 = 27;
const HEAD_MASK: u32 = (1 << HEAD_BITS) - 1;
/// Largest capacity a lane can reach.
const MAX_CAPACITY: usize = 1 << HEAD_BITS;

/// A first-in first-out queue of packets (see the module docs).
pub struct Lane {
    /// `capacity()` slots when allocated, else dangling.
    slots: NonNull<Queued>,
    /// Slot of the front packet (low [`HEAD_BITS`]) and log2 of the capacity (the bits above).
    head: u32,
    /// Packets held.
    len: u32,
}

// SAFETY: a lane owns its slots outright (no sharing, no interior mutability), like a `Box`.
unsafe impl Send for Lane {}
// SAFETY: as above; `&Lane` only reads.
unsafe impl Sync for Lane {}

// Sixteen bytes: two lanes and a port's hot fields share one cache line.
const _: () = assert!(std::mem::size_of::<Lane>() == 16);

impl Default for Lane {
    fn default() -> Self {
        Lane {
            slots: NonNull::dangling(),
            head: 0,
            len: 0,
        }
    }
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        if let Some(layout) = layout(self.capacity()) {
            // SAFETY: allocated in `grow` with this layout and not freed since.
            unsafe { dealloc(self.slots.as_ptr().cast(), layout) };
        }
    }
}

/// The layout of `capacity` slots (`None` for none).
fn layout(capacity: usize) -> Option<Layout> {
    (capacity > 0).then(|| Layout::array::<Queued>(capacity).expect("lane capacity fits memory"))
}

impl Lane {
    /// An empty lane that has not allocated.
    pub fn new() -> Self {
        Lane::default()
    }

    /// Packets held.
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
    #[inline]
    pub fn capacity(&self) -> usize {
        match self.head >> HEAD_BITS {
            0 => 0,
            log => 1 << log,
        }
    }

    /// The slot of the front packet.
    #[inline]
    fn front_slot(&self) -> u32 {
        self.head & HEAD_MASK
    }

    /// The slot of the packet `i` places behind the front (`i < capacity`, capacity > 0).
    #[inline]
    fn slot(&self, i: u32) -> usize {
        (self.front_slot().wrapping_add(i) as usize) & (self.capacity().wrapping_sub(1))
    }

    /// The slots, `capacity()` of them (indexing them checks the bounds).
    #[inline]
    fn slots(&self) -> &[Queued] {
        // SAFETY: `slots` points at `capacity()` initialised slots (zeroed when allocated)
        // that the lane owns, or dangles with a capacity of 0, which an empty slice allows.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr(), self.capacity()) }
    }

    /// The slots, writable.
    #[inline]
    fn slots_mut(&mut self) -> &mut [Queued] {
        // SAFETY: as in `slots`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.slots.as_ptr(), self.capacity()) }
    }

    /// Moves the front to slot `at`.
    #[inline]
    fn set_front_slot(&mut self, at: u32) {
        self.head = (self.head & !HEAD_MASK) | at;
    }

    /// Appends `q` at the back.
    #[inline]
    pub fn push_back(&mut self, q: Queued) {
        if self.len() == self.capacity() {
            self.grow();
        }
        let at = self.slot(self.len);
        self.slots_mut()[at] = q;
        self.len += 1;
    }

    /// The slot the next [`Self::push_back`] writes, if it needs no growing.
    #[inline]
    pub fn next_slot(&self) -> Option<&Queued> {
        if self.len() == self.capacity() {
            return None;
        }
        Some(&self.slots()[self.slot(self.len)])
    }

    /// Removes the front packet.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Queued> {
        if self.len == 0 {
            return None;
        }
        let q = self.slots()[self.front_slot() as usize];
        self.len -= 1;
        // An emptied lane starts again at its first slot, so that a port whose queue keeps
        // draining (most of them) reuses one cache line of its ring instead of walking all of
        // them; the order of packets is the same either way.
        let next = if self.len == 0 {
            0
        } else {
            self.slot(1) as u32
        };
        self.set_front_slot(next);
        Some(q)
    }

    /// Removes the back packet.
    #[inline]
    pub fn pop_back(&mut self) -> Option<Queued> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.slots()[self.slot(self.len)])
    }

    /// The front packet.
    #[inline]
    pub fn front(&self) -> Option<&Queued> {
        self.get(0)
    }

    /// The packet `i` places behind the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Queued> {
        if i >= self.len() {
            return None;
        }
        Some(&self.slots()[self.slot(i as u32)])
    }

    /// Inserts `q` so that it becomes the packet `i` places behind the front (`i <= len`;
    /// the packets from `i` on move one place back).
    pub fn insert(&mut self, i: usize, q: Queued) {
        assert!(
            i <= self.len(),
            "lane insert at {i} beyond its {} packets",
            self.len
        );
        self.push_back(q);
        // Walk the new packet forward to its place (rare: PFC frames at the head).
        let mut at = self.len - 1;
        while at as usize > i {
            let (a, b) = (self.slot(at - 1), self.slot(at));
            self.slots_mut().swap(a, b);
            at -= 1;
        }
    }

    /// The packets, front to back.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> + '_ {
        (0..self.len).map(move |i| &self.slots()[self.slot(i)])
    }

    /// Doubles the capacity, moving the packets to the start of the new slots in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let old = self.capacity();
        let capacity = (old * 2).max(MIN_CAPACITY);
        assert!(
            capacity <= MAX_CAPACITY,
            "a port queue outgrew {MAX_CAPACITY} packets"
        );
        let new_layout = layout(capacity).expect("capacity is positive");
        // SAFETY: the layout has a positive size; zeroed memory is a valid array of slots (two `u32`s each).
        let raw = unsafe { alloc_zeroed(new_layout) }.cast::<Queued>();
        let Some(slots) = NonNull::new(raw) else {
            handle_alloc_error(new_layout)
        };
        let mut grown = Lane {
            slots,
            head: capacity.trailing_zeros() << HEAD_BITS,
            len: self.len,
        };
        for (to, &q) in grown.slots_mut().iter_mut().zip(self.iter()) {
            *to = q;
        }
        // The old lane's slots are freed as it drops.
        *self = grown;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use std::collections::VecDeque;

    /// Packet `h` with a size derived from it, so that mixing up slots shows.
    fn q(h: Handle) -> Queued {
        Queued::new(h, 64 + h % 4096)
    }

    /// Every operation agrees with `VecDeque` over a random mix that wraps and grows the ring.
    #[test]
    fn behaves_like_a_deque() {
        let mut rng = Rng::new(5);
        let mut lane = Lane::new();
        let mut reference: VecDeque<Queued> = VecDeque::new();
        for step in 0..20_000u32 {
            match rng.below(10) {
                0..=4 => {
                    lane.push_back(q(step));
                    reference.push_back(q(step));
                }
                5..=7 => assert_eq!(lane.pop_front(), reference.pop_front()),
                8 => assert_eq!(lane.pop_back(), reference.pop_back()),
                _ => {
                    let at = rng.below(reference.len() as u32 + 1) as usize;
                    lane.insert(at, q(step));
                    reference.insert(at, q(step));
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
        while let Some(front) = reference.pop_front() {
            assert_eq!(lane.pop_front(), Some(front));
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
                let at: *const Queued = slot;
                lane.push_back(q(h));
                assert_eq!(at, lane.get(lane.len() - 1).unwrap() as *const Queued);
            } else {
                assert_eq!(lane.len(), lane.capacity(), "no slot only when full");
                lane.push_back(q(h));
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
            lane.push_back(q(h));
        }
        let first: *const Queued = lane.get(0).unwrap();
        for round in 0..50u32 {
            for h in 0..=round % 5 {
                lane.push_back(q(100 * round + h));
            }
            while lane.pop_front().is_some() {}
            assert_eq!(lane.next_slot().map(|s| s as *const Queued), Some(first));
        }
        for h in [7, 8, 9] {
            lane.push_back(q(h));
        }
        assert_eq!(lane.iter().copied().collect::<Vec<_>>(), [q(7), q(8), q(9)]);
        assert_eq!(lane.get(0).map(|s| s as *const Queued), Some(first));
    }
}
