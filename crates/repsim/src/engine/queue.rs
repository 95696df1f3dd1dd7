//! The future-event list.
//!
//! Events are ordered by (time, order): the caller gives each event an `order`, a tie-break
//! below 2^[`ORDER_BITS`] that is unique among pending events (the simulator's is the delay's
//! class, the scheduling entity and that entity's own count, see [`super::order`]), so runs
//! are deterministic and same-time events do not come out in push order but in the callers'.
//! Simulated time never goes backwards and almost every event lands within a few microseconds
//! of "now" (serialization, propagation), so the list is a *bucket queue*: a ring of 2^19
//! buckets, each 128 ps wide, covering the next ~67 us, plus a binary heap for anything further
//! out (timers, late flow starts). Pushing is O(1) (appended to the bucket's storage); the
//! bucket being drained is sorted once, and a bitmap of non-empty buckets lets the queue skip
//! idle stretches quickly. Buckets are narrow so that each holds few events: at 400 Gb/s a
//! full packet takes 83 ns to serialise. The ring's heads take 2 MiB, in every partition of a
//! run split over threads: 2^20 buckets of 64 ps ran no faster and held twice that (measured
//! on the 1,024-host scale step, where they were a sixth of the second partition's memory).
//!
//! A bucket's events are stored contiguously, in fixed-size chunks of [`CHUNK`] entries taken
//! from a shared pool (a bucket is a short list of chunks, newest first), so that draining a
//! bucket reads memory sequentially, one dependent cache miss per chunk rather than per event,
//! which matters once the pending events no longer fit in the caches. While one bucket is
//! drained, the next occupied bucket's chunk list is walked one chunk per pop into the cache.
//! An entry is 16 bytes (for 8-byte events): the time's offset inside its bucket and the
//! order share one `u64` key, which orders entries of one bucket exactly as (time, order)
//! does, so a drained bucket is sorted on that key alone (a natural merge sort, in
//! `queue/merge.rs`), and stays in that form while it is drained. Chunks return to the pool
//! as soon as their bucket is drained and are reused last-in first-out, so memory follows the
//! number of pending events and the chunks in use stay warm.
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::time::Time;

const BUCKET_SHIFT: u32 = 7;
const RING_BITS: u32 = 19;
const RING: usize = 1 << RING_BITS;
const MASK: u64 = RING as u64 - 1;
/// Bits of an event's order (its tie-break among events of the same time): what a bucket
/// entry's key keeps below the time offset.
pub const ORDER_BITS: u32 = 64 - BUCKET_SHIFT;
/// Entries per chunk: with 8-byte events, 15 entries of 16 bytes plus the chunk's 8-byte
/// header fill four cache lines (chunks are cache-line aligned).
pub const CHUNK: usize = 15;

#[inline]
fn key_of(at: Time, order: u64) -> u128 {
    ((at as u128) << 64) | order as u128
}

#[inline]
fn time_of(key: u128) -> Time {
    (key >> 64) as Time
}

/// The time of an event's key ([`EventQueue::pop_keyed`]).
#[inline]
pub fn key_time(key: u128) -> Time {
    time_of(key)
}

/// The order (tie-break) of an event's key ([`EventQueue::pop_keyed`]).
#[inline]
pub fn key_order(key: u128) -> u64 {
    key as u64
}

/// The full (time, order) key of `entry`, an entry of the bucket starting at time `base`.
#[inline]
fn full_key<E>(base: Time, (key, event): (u64, E)) -> (u128, E) {
    let at = base | (key >> ORDER_BITS);
    (key_of(at, key & ((1 << ORDER_BITS) - 1)), event)
}

/// The key of an entry inside its bucket: time offset in the bucket, then order.
#[inline]
fn bucket_key(at: Time, order: u64) -> u64 {
    debug_assert!(order < 1 << ORDER_BITS, "orders fit below the time offset");
    ((at & ((1 << BUCKET_SHIFT) - 1)) << ORDER_BITS) | order
}

struct Far<E>(u128, E);
impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.cmp(&o.0)
    }
}

const NIL: u32 = u32::MAX;

/// Up to [`CHUNK`] entries of one bucket, stored in push order, plus the bucket's next
/// (older) chunk.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Chunk<E> {
    len: u32,
    next: u32,
    entries: [(u64, E); CHUNK],
}

/// A deterministic priority queue of timed events (see the module docs).
pub struct EventQueue<E: Copy> {
    /// Bucket index (time >> BUCKET_SHIFT) being drained.
    current_bucket: u64,
    /// Entries of the current bucket, by in-bucket key (see [`bucket_key`]) descending (pop
    /// from the end).
    current: Vec<(u64, E)>,
    /// The entries of the next bucket, gathered and sorted before they become `current`
    /// (the two swap; kept for its capacity).
    gathered: Vec<(u64, E)>,
    /// The merge sort's copy of the run being merged (kept for its capacity).
    scratch: Vec<(u64, E)>,
    /// The merge sort's run boundaries (kept for its capacity).
    runs: Vec<u32>,
    /// Chunk storage shared by all buckets.
    chunks: Vec<Chunk<E>>,
    /// Chunks not in use, reused last-in first-out.
    free: Vec<u32>,
    /// Newest chunk of each ring slot's bucket.
    head: Vec<u32>,
    occupied: Vec<u64>,
    far: BinaryHeap<Reverse<Far<E>>>,
    len: usize,
    /// The chunk of the next occupied bucket to bring into the cache next (see
    /// [`Self::warm_step`]).
    warm: u32,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue starting at time 0.
    pub fn new() -> Self {
        EventQueue {
            current_bucket: 0,
            current: Vec::new(),
            gathered: Vec::new(),
            scratch: Vec::new(),
            runs: Vec::new(),
            chunks: Vec::new(),
            free: Vec::new(),
            head: vec![NIL; RING],
            occupied: vec![0; RING / 64],
            far: BinaryHeap::new(),
            len: 0,
            warm: NIL,
        }
    }

    /// Schedules `event` at absolute time `at` (never earlier than the last popped event),
    /// after the pending events of that time whose `order` is lower (below 2^[`ORDER_BITS`];
    /// two pending events of one time with the same order pop in either order).
    #[inline(always)]
    pub fn push(&mut self, at: Time, order: u64, event: E) {
        self.len += 1;
        let bucket = at >> BUCKET_SHIFT;
        if bucket <= self.current_bucket {
            if bucket < self.current_bucket {
                // Before the bucket a peek moved to: that one goes back to the ring.
                self.rewind(bucket);
            }
            self.insert_current(bucket_key(at, order), event);
        } else if bucket < self.current_bucket + RING as u64 {
            self.append(bucket, bucket_key(at, order), event);
        } else {
            self.far.push(Reverse(Far(key_of(at, order), event)));
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_keyed().map(|(key, event)| (time_of(key), event))
    }

    /// Removes and returns the earliest event with its key (time above order, as
    /// [`Self::peek_key`]; [`key_time`] and [`key_order`] take it apart).
    #[inline]
    pub fn pop_keyed(&mut self) -> Option<(u128, E)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let entry = self.current.pop().expect("advance filled it");
        self.len -= 1;
        self.warm_step();
        Some(full_key(self.current_bucket << BUCKET_SHIFT, entry))
    }

    /// One step down the chunk list of the bucket after the one being drained: the chunk
    /// fetched at the previous pop names the next one, which is fetched now, so that the list
    /// is in the cache when its turn comes instead of costing a dependent miss per chunk.
    /// Only a hint: chunks appended meanwhile are warm anyway, and a stale index (the bucket
    /// was drained first) reads some chunk or none.
    #[inline]
    fn warm_step(&mut self) {
        if self.warm == NIL {
            return;
        }
        self.warm = self.chunks.get(self.warm as usize).map_or(NIL, |c| c.next);
        if let Some(next) = self.chunks.get(self.warm as usize) {
            super::prefetch::prefetch_all(next);
        }
    }

    /// The time of the earliest event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let base = self.current_bucket << BUCKET_SHIFT;
        self.current
            .last()
            .map(|&entry| time_of(full_key(base, entry).0))
    }

    /// The key (time above order, as [`Self::push`] takes them) of the earliest event.
    #[inline]
    pub fn peek_key(&mut self) -> Option<u128> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let base = self.current_bucket << BUCKET_SHIFT;
        self.current.last().map(|&entry| full_key(base, entry).0)
    }

    /// The event `k` pops from now (0: the next one to pop), if it is already sorted into the
    /// bucket being drained (for prefetching; `None` says nothing about the rest of the queue).
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<E> {
        let i = self.current.len().checked_sub(k + 1)?;
        Some(self.current[i].1)
    }

    /// Moves to the next non-empty bucket; false when the queue is empty.
    fn advance(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        loop {
            // Next occupied ring slot after the current bucket, within the ring's horizon.
            if let Some(bucket) = self.next_occupied() {
                self.current_bucket = bucket;
                self.pull_far();
                self.gather(bucket);
                self.sort_gathered();
                self.warm = self
                    .next_occupied()
                    .map_or(NIL, |b| self.head[(b & MASK) as usize]);
                if let Some(first) = self.chunks.get(self.warm as usize) {
                    super::prefetch::prefetch_all(first);
                }
                return true;
            }
            // The ring is empty: jump to the earliest far event.
            let Some(Reverse(Far(key, _))) = self.far.peek() else {
                return false;
            };
            self.current_bucket = (time_of(*key) >> BUCKET_SHIFT) - 1;
            self.pull_far();
        }
    }

    /// Sorts the entries gathered from the next bucket and makes them `current`, merged
    /// with what `current` already holds (far events pulled into that bucket first).
    #[inline]
    fn sort_gathered(&mut self) {
        merge::sort_descending(&mut self.gathered, &mut self.runs, &mut self.scratch);
        if self.current.is_empty() {
            std::mem::swap(&mut self.current, &mut self.gathered);
        } else {
            self.current.extend_from_slice(&self.gathered);
            merge::sort_descending(&mut self.current, &mut self.runs, &mut self.scratch);
        }
    }

    /// Inserts an entry of the bucket being drained into `current`, keeping it sorted.
    #[inline]
    fn insert_current(&mut self, key: u64, event: E) {
        let pos = self.current.partition_point(|(k, _)| *k > key);
        self.current.insert(pos, (key, event));
    }

    /// Makes `bucket`, earlier than the bucket being drained, the one being drained: a peek
    /// moved to the next occupied bucket, and an event was then pushed before it (the event
    /// loop's last peek past its limit, then an injection or a message from another
    /// partition). What `current` holds goes back to the ring, and ring entries beyond the
    /// new, earlier horizon move to the far heap.
    #[cold]
    #[inline(never)]
    fn rewind(&mut self, bucket: u64) {
        let old = self.current_bucket;
        debug_assert!(bucket < old);
        let horizon = bucket + RING as u64;
        if old + 1 < horizon {
            // Only the ring slots of buckets [horizon, old + RING) can hold entries now
            // beyond the horizon.
            let mut b = horizon;
            while b < old + RING as u64 {
                self.evict_slot(b);
                b += 1;
            }
        } else {
            // The new horizon is at or before the old bucket: every ring entry is beyond it.
            for word in 0..RING / 64 {
                while self.occupied[word] != 0 {
                    let slot = word * 64 + self.occupied[word].trailing_zeros() as usize;
                    let offset = (slot as u64).wrapping_sub(old + 1) & MASK;
                    self.evict_slot(old + 1 + offset);
                }
            }
        }
        let base = old << BUCKET_SHIFT;
        let held = std::mem::take(&mut self.current);
        self.current_bucket = bucket;
        self.warm = NIL;
        // Ascending, so that the bucket is gathered (newest first) already sorted.
        for &entry in held.iter().rev() {
            if old < horizon {
                self.append(old, entry.0, entry.1);
            } else {
                let (key, event) = full_key(base, entry);
                self.far.push(Reverse(Far(key, event)));
            }
        }
        self.current = held;
        self.current.clear();
    }

    /// Moves the entries of ring bucket `bucket` (if any) to the far heap.
    fn evict_slot(&mut self, bucket: u64) {
        self.gather(bucket);
        let base = bucket << BUCKET_SHIFT;
        for &entry in &self.gathered {
            let (key, event) = full_key(base, entry);
            self.far.push(Reverse(Far(key, event)));
        }
    }

    /// Moves ring bucket `bucket`'s entries into `gathered` (newest first), returning its
    /// chunks to the pool and marking its slot empty.
    #[inline]
    fn gather(&mut self, bucket: u64) {
        let slot = (bucket & MASK) as usize;
        let mut c = self.head[slot];
        self.gathered.clear();
        while c != NIL {
            let chunk = &self.chunks[c as usize];
            self.gathered
                .extend(chunk.entries[..chunk.len as usize].iter().rev());
            self.free.push(c);
            c = chunk.next;
        }
        self.head[slot] = NIL;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
    }

    /// Appends an entry to a ring bucket (a new chunk when its newest one is full). The
    /// common case, room in the newest chunk, is forced inline into `push`: left to the
    /// compiler, whether it is inlined changes with unrelated code elsewhere in the crate.
    #[inline(always)]
    fn append(&mut self, bucket: u64, key: u64, event: E) {
        let slot = (bucket & MASK) as usize;
        let h = self.head[slot];
        if h != NIL {
            let chunk = &mut self.chunks[h as usize];
            if (chunk.len as usize) < CHUNK {
                chunk.entries[chunk.len as usize] = (key, event);
                chunk.len += 1;
                return;
            }
        }
        self.append_chunk(slot, h, key, event);
    }

    /// Starts a new chunk at the head of ring slot `slot` (whose newest chunk, `h`, is full or
    /// absent) holding the entry.
    #[inline(never)]
    fn append_chunk(&mut self, slot: usize, h: u32, key: u64, event: E) {
        let n = match self.free.pop() {
            Some(n) => {
                let chunk = &mut self.chunks[n as usize];
                chunk.len = 1;
                chunk.next = h;
                chunk.entries[0] = (key, event);
                n
            }
            None => {
                if self.chunks.len() == self.chunks.capacity() {
                    super::hugepage::grow(&mut self.chunks);
                }
                self.chunks.push(Chunk {
                    len: 1,
                    next: h,
                    entries: [(key, event); CHUNK],
                });
                (self.chunks.len() - 1) as u32
            }
        };
        self.head[slot] = n;
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Moves far events that now fall inside the ring's horizon into the ring.
    fn pull_far(&mut self) {
        let horizon = self.current_bucket + RING as u64;
        while let Some(Reverse(Far(key, _))) = self.far.peek() {
            let bucket = time_of(*key) >> BUCKET_SHIFT;
            if bucket >= horizon {
                break;
            }
            let Reverse(Far(key, event)) = self.far.pop().expect("peeked");
            if bucket <= self.current_bucket {
                debug_assert_eq!(bucket, self.current_bucket, "far events lie ahead");
                self.insert_current(bucket_key(time_of(key), key as u64), event);
            } else {
                self.append(bucket, bucket_key(time_of(key), key as u64), event);
            }
        }
    }

    /// The first occupied bucket after `current_bucket` (ring order), as an absolute index.
    fn next_occupied(&self) -> Option<u64> {
        let start = (self.current_bucket + 1) & MASK;
        let words = RING / 64;
        let mut word = (start / 64) as usize;
        let mut bits = self.occupied[word] & (!0u64 << (start % 64));
        for step in 0..=words {
            if bits != 0 {
                let slot = (word * 64) as u64 + bits.trailing_zeros() as u64;
                let offset = (slot.wrapping_sub(start)) & MASK;
                return Some(self.current_bucket + 1 + offset);
            }
            if step == words {
                break;
            }
            word = (word + 1) % words;
            bits = self.occupied[word];
        }
        None
    }

    /// Every pending event, in no particular order (for diagnostics and end-of-run accounting;
    /// O(pending)).
    pub fn pending(&self) -> Vec<E> {
        let mut out: Vec<E> = self.current.iter().map(|(_, e)| *e).collect();
        for &h in &self.head {
            let mut c = h;
            while c != NIL {
                let chunk = &self.chunks[c as usize];
                out.extend(chunk.entries[..chunk.len as usize].iter().map(|(_, e)| *e));
                c = chunk.next;
            }
        }
        out.extend(self.far.iter().map(|Reverse(Far(_, e))| *e));
        out
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the queue holds on the heap now (ring index, bitmap, chunks, current bucket, far
    /// heap), for memory breakdowns.
    pub fn heap_bytes(&self) -> usize {
        self.head.capacity() * 4
            + self.occupied.capacity() * 8
            + self.chunks.capacity() * std::mem::size_of::<Chunk<E>>()
            + self.free.capacity() * 4
            + (self.current.capacity() + self.gathered.capacity() + self.scratch.capacity())
                * std::mem::size_of::<(u64, E)>()
            + self.runs.capacity() * 4
            + self.far.capacity() * std::mem::size_of::<Reverse<Far<E>>>()
    }
}

mod merge;
#[cfg(test)]
mod tests;
