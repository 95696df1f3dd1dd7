//! A slab of plain values addressed by `u32` handles and recycled through a free list, so the
//! hot path never allocates once the arena has grown to the run's peak.

/// Index of a live value in an [`Arena`].
pub type Handle = u32;

/// Values of type `T` stored contiguously, with freed slots reused first.
pub struct Arena<T> {
    slots: Vec<T>,
    free: Vec<Handle>,
    live: usize,
    peak: usize,
}

impl<T: Copy> Default for Arena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Arena {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            peak: 0,
        }
    }

    /// Stores `value` and returns its handle.
    #[inline]
    pub fn alloc(&mut self, value: T) -> Handle {
        self.live += 1;
        if self.live > self.peak {
            self.peak = self.live;
        }
        if let Some(h) = self.free.pop() {
            self.slots[h as usize] = value;
            h
        } else {
            if self.slots.len() == self.slots.capacity() {
                super::hugepage::grow(&mut self.slots);
            }
            self.slots.push(value);
            (self.slots.len() - 1) as Handle
        }
    }

    /// Releases a handle; the slot will be reused.
    #[inline]
    pub fn free(&mut self, h: Handle) {
        self.live -= 1;
        self.free.push(h);
    }

    /// Shared access to a live value.
    #[inline]
    pub fn get(&self, h: Handle) -> &T {
        &self.slots[h as usize]
    }

    /// Mutable access to a live value.
    #[inline]
    pub fn get_mut(&mut self, h: Handle) -> &mut T {
        &mut self.slots[h as usize]
    }

    /// Hints the CPU to fetch the value of `h` (see [`super::prefetch`]); no effect on results.
    #[inline]
    pub fn prefetch(&self, h: Handle) {
        if let Some(v) = self.slots.get(h as usize) {
            super::prefetch::prefetch(v);
        }
    }

    /// Number of live values.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Largest number of values ever live at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Adds `other`'s peak to this arena's: the peak of two arenas used side by side (a run
    /// split over threads), at most the sum.
    pub fn add_peak_of(&mut self, other: &Arena<T>) {
        self.peak += other.peak;
    }

    /// Bytes held on the heap (slots and free list, at their capacities).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<T>()
            + self.free.capacity() * std::mem::size_of::<Handle>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_freed_slots() {
        let mut a = Arena::new();
        let x = a.alloc(1u64);
        let y = a.alloc(2u64);
        a.free(x);
        let z = a.alloc(3u64);
        assert_eq!(z, x);
        assert_eq!(*a.get(y), 2);
        assert_eq!(*a.get(z), 3);
        assert_eq!(a.live(), 2);
        assert_eq!(a.peak(), 2);
    }
}
