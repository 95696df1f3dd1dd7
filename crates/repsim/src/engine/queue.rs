//! The future-event list.
//!
//! Events are ordered by (time, sequence number): equal times fire in the order they were
//! scheduled, so runs are deterministic. Simulated time never goes backwards and almost every
//! event lands within a few microseconds of "now" (serialization, propagation), so the list is a
//! *bucket queue*: a ring of 2^20 buckets, each 64 ps wide, covering the next ~67 us, plus a
//! binary heap for anything further out (timers, late flow starts). Pushing is O(1) (appended to
//! the bucket's storage); the bucket being drained is sorted once, and a bitmap of non-empty
//! buckets lets the queue skip idle stretches quickly. Buckets are narrow so that each holds
//! few events: at 400 Gb/s a full packet takes 83 ns to serialise.
//!
//! A bucket's events are stored contiguously, in fixed-size chunks of [`CHUNK`] entries taken
//! from a shared pool (a bucket is a short list of chunks, newest first), so that draining a
//! bucket reads memory sequentially, one dependent cache miss per chunk rather than per event,
//! which matters once the pending events no longer fit in the caches. While one bucket is
//! drained, the next occupied bucket's chunk list is walked one chunk per pop into the cache.
//! An entry is 16 bytes (for 8-byte events): the time's offset inside its bucket and the
//! sequence number share one `u64` key, which orders entries of one bucket exactly as
//! (time, sequence) does. A drained bucket's entries come out in descending sequence order
//! (newest chunk first, each read backwards), so a stable counting sort on the 6-bit time
//! offset orders a crowded bucket in two linear passes; buckets of fewer than
//! `COUNTING_SORT_FROM` entries are sorted by comparison, which is cheaper for a few entries.
//! Chunks return to the pool as soon as their bucket is drained and are reused last-in
//! first-out, so memory follows the number of pending events and the chunks in use stay warm.
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::time::Time;

const BUCKET_SHIFT: u32 = 6;
const RING_BITS: u32 = 20;
const RING: usize = 1 << RING_BITS;
const MASK: u64 = RING as u64 - 1;
/// Bits of a bucket entry's key below the time offset: room for 2^58 sequence numbers.
const SEQ_BITS: u32 = 64 - BUCKET_SHIFT;
/// Entries per chunk: with 8-byte events, 15 entries of 16 bytes plus the chunk's 8-byte
/// header fill four cache lines (chunks are cache-line aligned).
pub const CHUNK: usize = 15;

/// Buckets with fewer entries are sorted by comparison, which is cheap for a few entries
/// while the counting sort always walks its 64 counters (the value is a choice, not tuned).
const COUNTING_SORT_FROM: usize = 24;

#[inline]
fn key_of(at: Time, seq: u64) -> u128 {
    ((at as u128) << 64) | seq as u128
}

#[inline]
fn time_of(key: u128) -> Time {
    (key >> 64) as Time
}

/// The full (time, sequence) key of `entry`, an entry of the bucket starting at time `base`.
#[inline]
fn full_key<E>(base: Time, (key, event): (u64, E)) -> (u128, E) {
    let at = base | (key >> SEQ_BITS);
    (key_of(at, key & ((1 << SEQ_BITS) - 1)), event)
}

/// The key of an entry inside its bucket: time offset in the bucket, then sequence number.
#[inline]
fn bucket_key(at: Time, seq: u64) -> u64 {
    debug_assert!(
        seq < 1 << SEQ_BITS,
        "sequence numbers fit below the time offset"
    );
    ((at & ((1 << BUCKET_SHIFT) - 1)) << SEQ_BITS) | seq
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
    /// Entries of the current bucket, sorted by key descending (pop from the end).
    current: Vec<(u128, E)>,
    /// The entries of the bucket being moved into `current` (kept for its capacity).
    gathered: Vec<(u64, E)>,
    /// Chunk storage shared by all buckets.
    chunks: Vec<Chunk<E>>,
    /// Chunks not in use, reused last-in first-out.
    free: Vec<u32>,
    /// Newest chunk of each ring slot's bucket.
    head: Vec<u32>,
    occupied: Vec<u64>,
    far: BinaryHeap<Reverse<Far<E>>>,
    next_seq: u64,
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
            chunks: Vec::new(),
            free: Vec::new(),
            head: vec![NIL; RING],
            occupied: vec![0; RING / 64],
            far: BinaryHeap::new(),
            next_seq: 0,
            len: 0,
            warm: NIL,
        }
    }

    /// Schedules `event` at absolute time `at` (never earlier than the last popped event).
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        let bucket = at >> BUCKET_SHIFT;
        if bucket <= self.current_bucket {
            // Same bucket as the one being drained: keep `current` sorted (descending).
            let key = key_of(at, seq);
            let pos = self.current.partition_point(|(k, _)| *k > key);
            self.current.insert(pos, (key, event));
        } else if bucket < self.current_bucket + RING as u64 {
            self.append(bucket, bucket_key(at, seq), event);
        } else {
            self.far.push(Reverse(Far(key_of(at, seq), event)));
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let (key, event) = self.current.pop().expect("advance filled it");
        self.len -= 1;
        self.warm_step();
        Some((time_of(key), event))
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
                // Newest chunk first, each read backwards: what `sort_gathered` relies on.
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
    /// sorted by key descending: a stable counting sort by time offset, which is the whole
    /// sort when each offset's entries came in descending sequence order (appended in push
    /// order, far events pulled in key order, read newest first), and a comparison sort when
    /// the result is not in order (entries already in `current`, or an append order nothing
    /// produces today: the check keeps the order right regardless).
    #[inline]
    fn sort_gathered(&mut self, base: Time) {
        let before = self.current.len();
        if self.gathered.len() >= COUNTING_SORT_FROM {
            self.append_by_offset(base);
            let joined = &self.current[before.saturating_sub(1)..];
            if joined.windows(2).all(|w| w[0].0 > w[1].0) {
                return;
            }
        } else {
            let gathered = self.gathered.iter();
            self.current
                .extend(gathered.map(|&entry| full_key(base, entry)));
        }
        self.current
            .sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
    }

    /// Appends the gathered entries (of the bucket starting at time `base`) to `current`,
    /// highest time offset first and in gathered order within an offset: a stable counting
    /// sort on the offset.
    fn append_by_offset(&mut self, base: Time) {
        let Some(&first) = self.gathered.first() else {
            return;
        };
        let before = self.current.len();
        // Where each offset's entries go, highest offset first.
        let mut next = [0u32; 1 << BUCKET_SHIFT];
        for &(key, _) in &self.gathered {
            next[(key >> SEQ_BITS) as usize] += 1;
        }
        let mut at = before as u32;
        for slot in next.iter_mut().rev() {
            let n = *slot;
            *slot = at;
            at += n;
        }
        self.current
            .resize(before + self.gathered.len(), full_key(base, first));
        for &entry in &self.gathered {
            let at = &mut next[(entry.0 >> SEQ_BITS) as usize];
            self.current[*at as usize] = full_key(base, entry);
            *at += 1;
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
            + self.gathered.capacity() * std::mem::size_of::<(u64, E)>()
            + self.far.capacity() * std::mem::size_of::<Reverse<Far<E>>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

    /// The queue under test beside a reference binary heap of (time, sequence number); each
    /// event is its sequence number.
    struct Mirrored {
        q: EventQueue<u64>,
        reference: BinaryHeap<Reverse<(u64, u64)>>,
        seq: u64,
    }

    impl Mirrored {
        fn new() -> Self {
            Mirrored {
                q: EventQueue::new(),
                reference: BinaryHeap::new(),
                seq: 0,
            }
        }

        fn push(&mut self, at: u64) {
            self.q.push(at, self.seq);
            self.reference.push(Reverse((at, self.seq)));
            self.seq += 1;
        }

        /// Pops both, asserting they agree (`what` names the pop in a failure).
        fn pop(&mut self, what: impl std::fmt::Display) -> Option<(u64, u64)> {
            let expected = self.reference.pop().map(|Reverse(e)| e);
            assert_eq!(self.q.pop(), expected, "{what}");
            expected
        }
    }

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

    /// Same order as a reference binary heap of (time, seq) over a random hold-model workload
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
    /// horizon, pulled into the ring in key order) pops in (time, sequence) order.
    #[test]
    fn far_events_in_a_crowded_bucket_keep_their_order() {
        let horizon = (RING as u64) << BUCKET_SHIFT;
        let mut m = Mirrored::new();
        let target = horizon + 5_000;
        // Far events first (older sequence numbers), all in the target bucket.
        for i in 0..10 {
            m.push(target + (i * 7) % 64);
        }
        m.push(10);
        // Pop the early event so that the target bucket comes inside the horizon, then crowd
        // it with newer events at the same times.
        assert_eq!(m.pop("the early event"), Some((10, 10)));
        for i in 0..60 {
            m.push(target - (target % 64) + (i * 13) % 64);
        }
        while m.pop("draining").is_some() {}
        assert!(m.q.pop().is_none());
    }

    /// Gathered entries that are not in descending sequence order within an offset (which
    /// appending in push order never produces) still come out sorted: the order check falls
    /// back to the comparison sort; entries already in `current` are merged too.
    #[test]
    fn counting_sort_falls_back_when_the_order_is_not_what_it_expects() {
        let mut q: EventQueue<u64> = EventQueue::new();
        let base = 7 << BUCKET_SHIFT;
        q.current.push((key_of(base + 63, 1_000), 1_000));
        for seq in 0..40u64 {
            // Ascending sequence numbers: the reverse of what the counting sort relies on.
            q.gathered.push((bucket_key(base + seq % 3, seq), seq));
        }
        q.sort_gathered(base);
        assert_eq!(q.current.len(), 41);
        assert!(q.current.windows(2).all(|w| w[0].0 > w[1].0));
        assert_eq!(q.current[0].1, 1_000, "the latest time first");
    }

    /// The counting sort alone orders entries gathered as appending leaves them (descending
    /// sequence numbers, offsets in any order), after what `current` already holds.
    #[test]
    fn counting_sort_orders_entries_in_descending_sequence_order() {
        let mut rng = Rng::new(5);
        let mut q: EventQueue<u64> = EventQueue::new();
        let base = 3 << BUCKET_SHIFT;
        q.current.push((key_of(base + 100, 0), 0));
        for seq in (1..=300u64).rev() {
            q.gathered
                .push((bucket_key(base + rng.below(64) as u64, seq), seq));
        }
        q.append_by_offset(base);
        assert_eq!(q.current.len(), 301);
        assert!(q.current.windows(2).all(|w| w[0].0 > w[1].0));
    }

    /// Crowded buckets (many chunks each, times inside one bucket out of order, pushes into the
    /// bucket being drained) pop exactly as a reference heap does, and `pending` sees them all.
    #[test]
    fn crowded_buckets_keep_time_then_insertion_order() {
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
}
