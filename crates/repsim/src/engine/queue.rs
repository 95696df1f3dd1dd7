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
//! does, so a drained bucket is sorted on that key alone. Chunks return to the pool as soon as
//! their bucket is drained and are reused last-in first-out, so memory follows the number of
//! pending events and the chunks in use stay warm.
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
/// Buckets with fewer entries are sorted by comparison, which is cheap for a few entries
/// while each radix pass walks its counters (the value is a choice, not tuned).
const RADIX_SORT_FROM: usize = 64;
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

/// The digits of a radix sort: where each pass's digit starts, least significant first, and
/// the digits' common width.
struct DigitPlan {
    shifts: [u32; MAX_PASSES],
    passes: usize,
    width: u32,
}

/// Passes a radix sort of a 64-bit key may need (with the narrowest digit).
const MAX_PASSES: usize = 64 / MIN_DIGIT as usize + 1;
/// Digit widths the radix sort chooses between.
const MIN_DIGIT: u32 = 5;
const MAX_DIGIT: u32 = 11;

impl DigitPlan {
    /// The cheapest digits covering the `varying` bits of `n` keys: each digit starts at the
    /// lowest varying bit the digits before it leave, so bits that are equal in every key
    /// (the unused top of the entity field, the delay classes no entry has) cost no pass. A
    /// pass costs a walk of its 2^width counters and a read and a write of every entry; the
    /// weights are instruction counts of the two loops.
    fn for_bits(varying: u64, n: usize) -> Self {
        let mut best = DigitPlan {
            shifts: [0; MAX_PASSES],
            passes: 0,
            width: MIN_DIGIT,
        };
        let mut best_cost = u64::MAX;
        for width in MIN_DIGIT..=MAX_DIGIT {
            let mut plan = DigitPlan {
                shifts: [0; MAX_PASSES],
                passes: 0,
                width,
            };
            let mut covered = 0;
            while covered < 64 && varying >> covered != 0 {
                let shift = covered + (varying >> covered).trailing_zeros();
                plan.shifts[plan.passes] = shift;
                plan.passes += 1;
                covered = shift + width;
            }
            let cost = plan.passes as u64 * ((3 << width) + 16 * n as u64);
            if cost < best_cost {
                best_cost = cost;
                best = plan;
            }
        }
        best
    }
}

/// A deterministic priority queue of timed events (see the module docs).
pub struct EventQueue<E: Copy> {
    /// Bucket index (time >> BUCKET_SHIFT) being drained.
    current_bucket: u64,
    /// Entries of the current bucket, sorted by key descending (pop from the end).
    current: Vec<(u128, E)>,
    /// The entries of the bucket being moved into `current` (kept for its capacity).
    gathered: Vec<(u64, E)>,
    /// The other half of the radix sort of `gathered` (kept for its capacity; the two swap).
    scratch: Vec<(u64, E)>,
    /// The radix sort's counters, one block per pass (kept for its capacity).
    counters: Vec<u32>,
    /// Low bits of an order below which pushes come in increasing order (see
    /// [`Self::with_pushed_in_order_below`]).
    in_order_bits: u32,
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
        Self::with_pushed_in_order_below(ORDER_BITS)
    }

    /// An empty queue whose caller promises that pending events whose orders agree above
    /// their low `bits` bits were pushed in increasing order (the simulator's orders agree
    /// above their count when one entity scheduled them with delays of one class, and its
    /// count grows). A crowded bucket is then sorted by a stable radix sort on the time
    /// offset and the bits above `bits`, which is much cheaper than a comparison sort when
    /// hundreds of events share a picosecond. With `bits` = [`ORDER_BITS`] (what
    /// [`Self::new`] does) the promise is empty and buckets are sorted by comparison.
    pub fn with_pushed_in_order_below(bits: u32) -> Self {
        assert!(bits <= ORDER_BITS, "orders have {ORDER_BITS} bits");
        EventQueue {
            current_bucket: 0,
            current: Vec::new(),
            gathered: Vec::new(),
            scratch: Vec::new(),
            counters: Vec::new(),
            in_order_bits: bits,
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
            // Same bucket as the one being drained: keep `current` sorted (descending).
            let key = key_of(at, order);
            let pos = self.current.partition_point(|(k, _)| *k > key);
            self.current.insert(pos, (key, event));
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
        Some(entry)
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
        self.current.last().map(|(k, _)| time_of(*k))
    }

    /// The key (time above order, as [`Self::push`] takes them) of the earliest event.
    #[inline]
    pub fn peek_key(&mut self) -> Option<u128> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        self.current.last().map(|(k, _)| *k)
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
                let slot = (bucket & MASK) as usize;
                let base = bucket << BUCKET_SHIFT;
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
                self.sort_gathered(base);
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

    /// Moves the entries gathered from a bucket starting at time `base` into `current`,
    /// sorted by key descending (see [`Self::sort_bucket`]), with a sort of the whole when
    /// the first of them does not follow what `current` already held (far events pulled into
    /// the bucket being drained).
    #[inline]
    fn sort_gathered(&mut self, base: Time) {
        let before = self.current.len();
        self.sort_bucket();
        let gathered = self.gathered.iter();
        self.current
            .extend(gathered.map(|&entry| full_key(base, entry)));
        let junction = before.saturating_sub(1)..(before + 1).min(self.current.len());
        if !self.current[junction].windows(2).all(|w| w[0].0 > w[1].0) {
            self.current.sort_unstable_by_key(|e| Reverse(e.0));
        }
    }

    /// Sorts the gathered entries by their in-bucket key (time offset, then order)
    /// descending. A small bucket, or any bucket without the caller's promise, is sorted by
    /// comparison. A crowded one is sorted by a stable LSD radix sort on the key's bits above
    /// `in_order_bits` that differ within the bucket, in the digits [`DigitPlan`] finds
    /// cheapest: entries that agree on those bits were pushed in increasing order, so they
    /// are gathered (newest first) in decreasing order, which a stable sort keeps. (Where the
    /// promise does not hold, such entries stay in reverse push order: the order is still a
    /// function of what was pushed, only not by key; for the simulator that takes a count
    /// wrapping between two same-time events of one entity.)
    fn sort_bucket(&mut self) {
        let n = self.gathered.len();
        if n < RADIX_SORT_FROM || self.in_order_bits == ORDER_BITS {
            self.gathered.sort_unstable_by_key(|e| Reverse(e.0));
            return;
        }
        let (mut all, mut any) = (u64::MAX, 0);
        for &(key, _) in &self.gathered {
            all &= key;
            any |= key;
        }
        let varying = (all ^ any) >> self.in_order_bits << self.in_order_bits;
        let plan = DigitPlan::for_bits(varying, n);
        if plan.passes == 0 {
            return;
        }
        let slots = 1usize << plan.width;
        let mask = slots as u64 - 1;
        let shifts = &plan.shifts[..plan.passes];
        self.counters.clear();
        self.counters.resize(slots * plan.passes, 0);
        let counters = &mut self.counters[..];
        // One read of the entries counts every pass's digits; the common pass counts get a
        // loop of their own, which the compiler unrolls.
        match *shifts {
            [a, b] => {
                let (first, second) = counters.split_at_mut(slots);
                for &(key, _) in &self.gathered {
                    first[(key >> a & mask) as usize] += 1;
                    second[(key >> b & mask) as usize] += 1;
                }
            }
            [a, b, c] => {
                let (first, rest) = counters.split_at_mut(slots);
                let (second, third) = rest.split_at_mut(slots);
                for &(key, _) in &self.gathered {
                    first[(key >> a & mask) as usize] += 1;
                    second[(key >> b & mask) as usize] += 1;
                    third[(key >> c & mask) as usize] += 1;
                }
            }
            _ => {
                for &(key, _) in &self.gathered {
                    for (pass, &shift) in counters.chunks_exact_mut(slots).zip(shifts) {
                        pass[(key >> shift & mask) as usize] += 1;
                    }
                }
            }
        }
        for pass in counters.chunks_exact_mut(slots) {
            let mut at = 0;
            for slot in pass.iter_mut().rev() {
                let count = *slot;
                *slot = at;
                at += count;
            }
        }
        // Every pass writes all of `scratch[..n]`; entries beyond it are left from earlier
        // buckets and never read.
        if self.scratch.len() < n {
            self.scratch.resize(n, self.gathered[0]);
        }
        for (start, &shift) in counters.chunks_exact_mut(slots).zip(shifts) {
            // Stable counting sort on the digit at `shift`, highest digit first.
            for &entry in &self.gathered {
                let slot = &mut start[(entry.0 >> shift & mask) as usize];
                self.scratch[*slot as usize] = entry;
                *slot += 1;
            }
            std::mem::swap(&mut self.gathered, &mut self.scratch);
            self.gathered.truncate(n);
        }
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
                let pos = self.current.partition_point(|(k, _)| *k > key);
                self.current.insert(pos, (key, event));
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
            + self.current.capacity() * std::mem::size_of::<(u128, E)>()
            + (self.gathered.capacity() + self.scratch.capacity()) * std::mem::size_of::<(u64, E)>()
            + self.counters.capacity() * 4
            + self.far.capacity() * std::mem::size_of::<Reverse<Far<E>>>()
    }
}

#[cfg(test)]
mod tests;
