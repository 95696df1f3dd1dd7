//! # REPS: Recycled Entropy Packet Spraying
//!
//! This crate is the per-connection sender logic of REPS, written so that it can run
//! unchanged in NIC firmware: it is `#![no_std]`, has no dependencies, never allocates,
//! never uses floating point, and keeps its whole per-connection state in 25 bytes
//! ([`RepsState`]).
//!
//! ## The algorithm in a few sentences
//!
//! Every data packet carries an *entropy value* (EV, e.g. the UDP source port) that the
//! switches feed into their ECMP hash, so the EV picks the packet's path. The receiver
//! echoes the EV in the ACK. REPS remembers the EVs of ACKs that came back **without**
//! an ECN mark in a ring of 8 slots, each with a validity bit, and sends the next packet
//! on the **oldest valid** remembered EV (invalidating it). When nothing valid is
//! remembered it picks a random EV from `0..evs_size`. ECN-marked ACKs and NACKs are
//! simply not remembered, so congested paths stop being reused.
//!
//! On a suspected failure ([`RepsState::on_failure_detected`]) REPS enters *freezing*:
//! it stops drawing random EVs (which might hash onto the broken link) and instead cycles
//! over whatever the ring holds, valid or not. Freezing ends at the first ACK or NACK
//! that arrives after `freeze_duration` ticks; the ring is then wiped and the next
//! `explore_packets` sends explore again (see [`ExploreMode`]).
//!
//! The default behaviour ([`ExploreMode::Reference`], [`Coalescing::PerAck`]) is the one
//! of the reference simulator used for the paper (htsim, `freezing` load balancer). The
//! paper's Algorithm 2 exploration rule and the two ACK-coalescing variants of the
//! paper's Section 4.5.1 are available through [`Config`].
//!
//! ## What the caller decides
//!
//! * **Time** is a `u32` tick counter of the caller's choosing (1 ns ticks in the
//!   defaults). It may wrap around: deadlines are compared with
//!   `(now.wrapping_sub(deadline) as i32) > 0`, so a freeze must be shorter than 2^31
//!   ticks, and a frozen connection must see feedback at least once every 2^31 ticks.
//! * **Failure detection.** The caller calls [`RepsState::on_failure_detected`] when its
//!   own rule says a loss was caused by a failure, not by congestion. The reference calls
//!   it on every retransmission timeout when packet trimming is on; with trimming off, only
//!   when the largest RTT sample seen in the current window of 2 x RTO is below 1.65 x the
//!   base RTT (losses without queueing point to a failure). REPS itself only checks that
//!   it is neither frozen nor exploring.
//! * **Exploration length.** `explore_packets` should be the connection's bandwidth-delay
//!   product in packets (`floor(bdp_bytes / mtu_bytes)`, e.g. 100 on the paper's 2-tier
//!   fat tree, 150 on the 3-tier one). [`Config::new`] uses 100.
//! * **Randomness** comes from a [`RandomSource`], a one-method trait that firmware can
//!   implement with its own LFSR. Closures `FnMut() -> u32` implement it too.
//!
//! ## Worked example
//!
//! A scripted random source makes the trace exact: with `evs_size = 256` a random word
//! `r` becomes the EV `r >> 24` (see [`random_ev`]).
//!
//! ```
//! use reps::{Config, RepsState, Transition};
//!
//! let mut cfg = Config::new(256);
//! cfg.freeze_duration = 500; // ticks
//! cfg.explore_packets = 2;   // pretend the BDP is 2 packets
//!
//! // Random words chosen so that the random EVs are 7, 42, 99, 11, 12.
//! let mut script = [7u32, 42, 99, 11, 12].map(|ev| ev << 24).into_iter();
//! let mut rng = move || script.next().expect("script exhausted");
//!
//! let mut reps = RepsState::new();
//! // Nothing is cached yet: the first window is sprayed at random.
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 42);
//!
//! // EV 7 comes back clean and is cached; EV 42 comes back ECN-marked and is forgotten.
//! assert_eq!(reps.on_ack(&cfg, 7, false, 100), Transition::None);
//! assert_eq!(reps.on_ack(&cfg, 42, true, 110), Transition::None);
//! assert_eq!(reps.valid_count(), 1);
//!
//! // The next packet recycles 7; then the cache is dry and a random EV (99) is used.
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 99);
//!
//! // A timeout that the caller attributes to a failure: freeze until tick 1000 + 500.
//! assert_eq!(reps.on_failure_detected(&cfg, 1000), Transition::EnteredFreezing);
//! assert_eq!(reps.freezing_until(), Some(1500));
//!
//! // Frozen: no random EVs. The ring holds one (already used) entry, 7, so it repeats.
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//!
//! // Clean ACKs are still cached while frozen; the cycle now covers slots 0 and 1.
//! assert_eq!(reps.on_ack(&cfg, 99, false, 1200), Transition::None);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 99);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 7);
//!
//! // The first feedback after tick 1500 ends freezing: the ring is wiped, then this
//! // ACK's EV (5) is cached, and the next `explore_packets` sends are random.
//! assert_eq!(reps.on_ack(&cfg, 5, false, 1600), Transition::ExitedFreezing);
//! assert!(!reps.is_frozen());
//! assert_eq!(reps.explore_remaining(), 2);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 11);
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 12);
//!
//! // Exploration over: back to recycling, oldest valid first.
//! assert_eq!(reps.next_ev(&cfg, &mut rng), 5);
//! ```
//!
//! ## Choices where the sources leave room
//!
//! * **No warm-up counter.** As in the reference, the explore counter starts at 0: a new
//!   connection explores because its ring is empty, so the first window is random anyway.
//! * **Leaving freezing** (both modes) follows the reference order: the deadline check
//!   runs first on every ACK or NACK; if it fires, the ring is wiped (all slots invalid,
//!   head 0) and the explore counter set to `explore_packets`; then the ACK's EV, if
//!   un-marked, is cached. (Algorithm 1 caches first and does not wipe.)
//! * **While frozen** (both modes) the sender cycles over the slots written since the
//!   last wipe, from its own cursor, whatever their validity; a valid slot it touches
//!   becomes invalid. With nothing written yet it falls back to a random EV.
//! * **Paper exploration** ([`ExploreMode::PaperPseudocode`]): Algorithm 2 assigns no EV
//!   to the 7 packets out of 8 that are not random. Here each of them takes the oldest
//!   valid cached EV, or a random EV when nothing valid is cached. The counter is
//!   decremented on every send, and the send is random when the decremented value is a
//!   multiple of 8, so `explore_packets = 100` gives randoms at values 96, 88, ..., 8, 0.
//! * **Reuse EVs** serves the oldest valid EV `max_uses` times in a row before moving to
//!   the next one (one 4-bit use counter, since only the oldest entry is ever consumed).
//!   Freezing ignores the use counter, like it ignores validity.
//! * **Coalesced ACKs**: see [`RepsState::on_coalesced_ack`]; with the default
//!   per-ACK mode only the triggering (last) EV is learnt, as in the reference.
//!
//! ## State layout
//!
//! [`RepsState`] is `#[repr(C)]`, made only of bytes (alignment 1), 25 bytes long:
//!
//! | bytes  | content |
//! |--------|---------|
//! | 0..16  | the 8 cached EVs, slot `i` little-endian in bytes `2i` (low) and `2i+1` (high) |
//! | 16     | validity bits, bit `i` = slot `i` holds an unused EV |
//! | 17     | bits 0-2 `head` (next slot to write), bits 3-6 number of valid EVs (0..=8), bit 7 freezing flag |
//! | 18..20 | explore counter, `u16` little-endian |
//! | 20..24 | freezing deadline (tick), `u32` little-endian; meaningful only while frozen |
//! | 24     | bits 0-2 freezing cursor, bit 3 "all 8 slots written since the last wipe", bits 4-7 uses of the oldest valid EV (only for [`Coalescing::ReuseEvs`]) |
//!
//! Byte 24 holds what the paper's Table 1 leaves implicit: the reference cycles over the
//! slots written so far with its own cursor while frozen (the number of written slots is
//! `8` once the ring has wrapped, else `head`, hence one bit), and the Reuse-EVs variant
//! needs a use counter. Because valid EVs are always consumed oldest first, one counter
//! for the oldest valid EV suffices; four bits cap `max_uses` at 16.
//!
//! ## C
//!
//! [`ffi`] exports the same operations as `extern "C"` functions, declared in
//! `include/reps.h`; `c/README.md` explains how to build the static library.
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod ffi;

/// An entropy value: the header field (e.g. UDP source port) that steers ECMP hashing.
pub type Ev = u16;

/// Number of slots in the ring of cached EVs (fixed by the paper).
pub const BUFFER_SLOTS: usize = 8;

/// Largest EV-set size: every EV fits in 16 bits.
pub const MAX_EVS_SIZE: u32 = 1 << 16;

/// Largest `max_uses` of [`Coalescing::ReuseEvs`] (the use counter has 4 bits).
pub const MAX_REUSE_USES: u8 = 16;

/// Longest freeze, in ticks, that wrap-around-safe time comparison can express.
pub const MAX_FREEZE_DURATION: u32 = i32::MAX as u32;

/// Default freeze duration: 10 ms at 1 ns ticks, as in the paper and the reference.
pub const DEFAULT_FREEZE_DURATION: u32 = 10_000_000;

/// Default number of exploration packets after freezing (a 2-tier BDP of 100 packets).
pub const DEFAULT_EXPLORE_PACKETS: u16 = 100;

/// A source of uniformly distributed 32-bit words, e.g. a firmware LFSR.
pub trait RandomSource {
    /// Returns the next random 32-bit word.
    fn next_u32(&mut self) -> u32;
}

impl<F: FnMut() -> u32> RandomSource for F {
    fn next_u32(&mut self) -> u32 {
        self()
    }
}

/// A tiny xorshift32 generator, handy for firmware and examples (not cryptographic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift32 {
    state: u32,
}

impl XorShift32 {
    /// Creates a generator; a zero seed is replaced by a fixed non-zero one.
    pub const fn new(seed: u32) -> Self {
        Self {
            state: if seed == 0 { 0x9E37_79B9 } else { seed },
        }
    }
}

impl RandomSource for XorShift32 {
    fn next_u32(&mut self) -> u32 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state = x;
        x
    }
}

/// What happens during the exploration phase that follows freezing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExploreMode {
    /// Reference simulator: every send while the explore counter is positive gets a
    /// random EV (and decrements the counter).
    Reference,
    /// Paper, Algorithm 2: every send decrements the counter; a send is random when the
    /// decremented counter is a multiple of 8 (so 1 in 8, plus the last one), otherwise it
    /// takes the oldest valid cached EV, or a random one when none is valid.
    PaperPseudocode,
}

/// How EVs learnt from (possibly coalesced) ACKs are cached and used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coalescing {
    /// One EV per ACK, each cached EV used once (the paper's main configuration).
    PerAck,
    /// "ACK + Carry EVs": a coalesced ACK lists the EVs of all un-marked packets it
    /// covers, and every one of them is cached (in list order).
    CarryEvs,
    /// "ACK + Reuse EVs": a coalesced ACK carries one EV, which may be sent on up to
    /// `max_uses` times (1..=16) before it stops being valid.
    ReuseEvs {
        /// How many sends one cached EV may serve (1..=[`MAX_REUSE_USES`]).
        max_uses: u8,
    },
}

/// A mode change caused by an event, reported so the caller can log or count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// The event did not change the mode.
    None,
    /// The connection entered freezing.
    EnteredFreezing,
    /// The connection left freezing (the ring was wiped and exploration started).
    ExitedFreezing,
}

/// Per-deployment REPS parameters, shared by all connections that use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Number of distinct EVs (1..=65536); every EV produced is `< evs_size`.
    pub evs_size: u32,
    /// Length of a freeze, in ticks (at most [`MAX_FREEZE_DURATION`]).
    pub freeze_duration: u32,
    /// Number of exploration sends after freezing; use the connection's BDP in packets.
    pub explore_packets: u16,
    /// Behaviour of the exploration sends.
    pub explore_mode: ExploreMode,
    /// ACK-coalescing variant.
    pub coalescing: Coalescing,
    /// Whether [`RepsState::on_failure_detected`] may enter freezing at all.
    pub freezing_enabled: bool,
}

/// Why a [`Config`] was rejected by [`Config::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `evs_size` is 0 or larger than 65536.
    EvsSizeOutOfRange(u32),
    /// `freeze_duration` is larger than [`MAX_FREEZE_DURATION`].
    FreezeDurationTooLong(u32),
    /// `ReuseEvs { max_uses }` is 0 or larger than [`MAX_REUSE_USES`].
    ReuseMaxUsesOutOfRange(u8),
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ConfigError::EvsSizeOutOfRange(n) => {
                write!(f, "evs_size {n} is outside 1..=65536")
            }
            ConfigError::FreezeDurationTooLong(d) => {
                write!(f, "freeze_duration {d} exceeds {MAX_FREEZE_DURATION} ticks")
            }
            ConfigError::ReuseMaxUsesOutOfRange(n) => {
                write!(f, "ReuseEvs max_uses {n} is outside 1..={MAX_REUSE_USES}")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ConfigError {}

impl Config {
    /// Defaults for an EV set of `evs_size` values: 10 ms freeze (1 ns ticks),
    /// 100 exploration packets, [`ExploreMode::Reference`], [`Coalescing::PerAck`],
    /// freezing enabled.
    pub const fn new(evs_size: u32) -> Self {
        Self {
            evs_size,
            freeze_duration: DEFAULT_FREEZE_DURATION,
            explore_packets: DEFAULT_EXPLORE_PACKETS,
            explore_mode: ExploreMode::Reference,
            coalescing: Coalescing::PerAck,
            freezing_enabled: true,
        }
    }

    /// Checks every field's range.
    ///
    /// An invalid configuration never causes a panic or out-of-range EV: the state
    /// machine clamps `evs_size` to 1..=65536, `freeze_duration` to
    /// [`MAX_FREEZE_DURATION`] and `max_uses` to 1..=16.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.evs_size == 0 || self.evs_size > MAX_EVS_SIZE {
            return Err(ConfigError::EvsSizeOutOfRange(self.evs_size));
        }
        if self.freeze_duration > MAX_FREEZE_DURATION {
            return Err(ConfigError::FreezeDurationTooLong(self.freeze_duration));
        }
        if let Coalescing::ReuseEvs { max_uses } = self.coalescing {
            if max_uses == 0 || max_uses > MAX_REUSE_USES {
                return Err(ConfigError::ReuseMaxUsesOutOfRange(max_uses));
            }
        }
        Ok(())
    }

    /// Sends each cached EV may serve (1 unless [`Coalescing::ReuseEvs`]), clamped.
    fn uses_per_ev(&self) -> u8 {
        match self.coalescing {
            Coalescing::ReuseEvs { max_uses } => max_uses.clamp(1, MAX_REUSE_USES),
            Coalescing::PerAck | Coalescing::CarryEvs => 1,
        }
    }
}

/// Maps one random word to an EV in `0..evs_size` (multiply-shift on the high bits).
///
/// `(r * n) >> 32` is uniform up to a relative bias below `n / 2^32` (at most 1.5e-5 for
/// `n = 65536`), the same bound as `r % n`, and it uses the high bits of `r`, which are the
/// better ones in simple LFSR or xorshift generators. `evs_size` is clamped to 1..=65536.
pub fn random_ev<R: RandomSource + ?Sized>(evs_size: u32, rng: &mut R) -> Ev {
    let n = evs_size.clamp(1, MAX_EVS_SIZE) as u64;
    ((rng.next_u32() as u64 * n) >> 32) as Ev
}

/// `true` when tick `a` is strictly after tick `b` on a wrapping `u32` clock.
#[inline]
pub const fn time_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

const HEAD_MASK: u8 = 0b0000_0111;
const VALID_SHIFT: u32 = 3;
const VALID_MASK: u8 = 0b0111_1000;
const FROZEN_BIT: u8 = 0b1000_0000;
const CURSOR_MASK: u8 = 0b0000_0111;
const WRAPPED_BIT: u8 = 0b0000_1000;
const USES_SHIFT: u32 = 4;
const USES_MASK: u8 = 0b1111_0000;

/// Per-connection REPS state: 25 bytes, see the crate docs for the byte layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RepsState {
    /// Slot `i`'s EV, little-endian in bytes `2i`, `2i+1`.
    cached_evs: [u8; 16],
    /// Bit `i` set: slot `i` is valid (not used since cached).
    valid_bits: u8,
    /// Bits 0-2 head, bits 3-6 number of valid EVs, bit 7 freezing flag.
    ring_flags: u8,
    /// Remaining exploration sends, little-endian.
    explore_counter: [u8; 2],
    /// Tick after which freezing ends, little-endian.
    freezing_until: [u8; 4],
    /// Bits 0-2 freezing cursor, bit 3 ring wrapped, bits 4-7 uses of the oldest valid EV.
    cursor_flags: u8,
}

const _: () = assert!(core::mem::size_of::<RepsState>() == 25);
const _: () = assert!(core::mem::align_of::<RepsState>() == 1);

impl RepsState {
    /// A fresh connection: empty ring, not frozen, not exploring.
    pub const fn new() -> Self {
        Self {
            cached_evs: [0; 16],
            valid_bits: 0,
            ring_flags: 0,
            explore_counter: [0; 2],
            freezing_until: [0; 4],
            cursor_flags: 0,
        }
    }

    /// Forgets everything, as if the connection were new (e.g. when it is reused).
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// Chooses the EV for the next packet (new data, retransmission or probe).
    pub fn next_ev<R: RandomSource + ?Sized>(&mut self, cfg: &Config, rng: &mut R) -> Ev {
        // Exploring and freezing exclude each other: failures are ignored while exploring,
        // and exploration only starts when freezing ends.
        let explore = self.explore_remaining();
        if explore > 0 {
            let left = explore - 1;
            self.set_explore_counter(left);
            let forced_random = match cfg.explore_mode {
                ExploreMode::Reference => true,
                ExploreMode::PaperPseudocode => left.is_multiple_of(BUFFER_SLOTS as u16),
            };
            if forced_random {
                return random_ev(cfg.evs_size, rng);
            }
            // Paper exploration's other sends recycle like outside exploration.
        } else if self.is_frozen() {
            let written = self.cached_count();
            return if written == 0 {
                random_ev(cfg.evs_size, rng)
            } else {
                self.take_cycling(written)
            };
        }
        let valid = self.valid_count();
        if valid == 0 {
            random_ev(cfg.evs_size, rng)
        } else {
            self.take_oldest_valid(cfg, valid)
        }
    }

    /// Feedback from one ACK carrying `ev`; caches `ev` unless the ACK is ECN-marked.
    ///
    /// May end freezing (returns [`Transition::ExitedFreezing`]); in that case the ring is
    /// wiped first and this ACK's EV becomes its first entry.
    pub fn on_ack(&mut self, cfg: &Config, ev: Ev, ecn_marked: bool, now: u32) -> Transition {
        let transition = self.check_freezing_exit(cfg, now);
        if !ecn_marked {
            self.cache(ev);
        }
        transition
    }

    /// Feedback from one coalesced ACK whose EV list is `evs` (oldest first).
    ///
    /// With [`Coalescing::CarryEvs`] every EV in `evs` is cached in order (the receiver
    /// lists only packets that arrived un-marked); in the other modes the ACK carries only
    /// its triggering packet's EV, taken to be the last one. `ecn_marked = true` means
    /// none of the EVs may be recycled. The freezing exit check runs once, even for an
    /// empty list.
    pub fn on_coalesced_ack(
        &mut self,
        cfg: &Config,
        evs: &[Ev],
        ecn_marked: bool,
        now: u32,
    ) -> Transition {
        let transition = self.check_freezing_exit(cfg, now);
        if !ecn_marked {
            match cfg.coalescing {
                Coalescing::CarryEvs => {
                    for &ev in evs {
                        self.cache(ev);
                    }
                }
                Coalescing::PerAck | Coalescing::ReuseEvs { .. } => {
                    if let Some(&ev) = evs.last() {
                        self.cache(ev);
                    }
                }
            }
        }
        transition
    }

    /// Feedback from a NACK (e.g. a trimmed packet): never cached, may end freezing.
    pub fn on_nack(&mut self, cfg: &Config, ev: Ev, now: u32) -> Transition {
        let _ = ev;
        self.check_freezing_exit(cfg, now)
    }

    /// The caller attributes a loss to a failure: enter freezing until
    /// `now + freeze_duration`, unless freezing is disabled, already on, or the
    /// connection is still exploring after the previous freeze.
    pub fn on_failure_detected(&mut self, cfg: &Config, now: u32) -> Transition {
        if !cfg.freezing_enabled || self.is_frozen() || self.explore_remaining() != 0 {
            return Transition::None;
        }
        let duration = cfg.freeze_duration.min(MAX_FREEZE_DURATION);
        self.ring_flags |= FROZEN_BIT;
        self.freezing_until = now.wrapping_add(duration).to_le_bytes();
        Transition::EnteredFreezing
    }

    /// Whether the connection is in freezing mode.
    pub fn is_frozen(&self) -> bool {
        self.ring_flags & FROZEN_BIT != 0
    }

    /// Number of valid (cached, not yet used up) EVs, 0..=8.
    pub fn valid_count(&self) -> u8 {
        (self.ring_flags & VALID_MASK) >> VALID_SHIFT
    }

    /// Remaining exploration sends.
    pub fn explore_remaining(&self) -> u16 {
        u16::from_le_bytes(self.explore_counter)
    }

    /// The tick after which the next feedback ends freezing, if frozen.
    pub fn freezing_until(&self) -> Option<u32> {
        if self.is_frozen() {
            Some(u32::from_le_bytes(self.freezing_until))
        } else {
            None
        }
    }

    /// Number of slots written since the ring was last wiped (0..=8), valid or not.
    pub fn cached_count(&self) -> u8 {
        if self.cursor_flags & WRAPPED_BIT != 0 {
            BUFFER_SLOTS as u8
        } else {
            self.head() as u8
        }
    }

    /// Index of the slot the next cached EV will be written to (0..8).
    pub fn head(&self) -> usize {
        (self.ring_flags & HEAD_MASK) as usize
    }

    /// Slot `i`'s EV and validity bit, for inspection (`None` if `i >= 8`).
    pub fn slot(&self, i: usize) -> Option<(Ev, bool)> {
        if i < BUFFER_SLOTS {
            Some((self.slot_ev(i), self.slot_valid(i)))
        } else {
            None
        }
    }

    /// The raw 25 bytes, in the documented layout.
    pub fn to_bytes(&self) -> [u8; 25] {
        let mut out = [0u8; 25];
        out[..16].copy_from_slice(&self.cached_evs);
        out[16] = self.valid_bits;
        out[17] = self.ring_flags;
        out[18..20].copy_from_slice(&self.explore_counter);
        out[20..24].copy_from_slice(&self.freezing_until);
        out[24] = self.cursor_flags;
        out
    }

    // ----- internal helpers -----

    fn slot_ev(&self, i: usize) -> Ev {
        let i = i % BUFFER_SLOTS;
        u16::from_le_bytes([self.cached_evs[2 * i], self.cached_evs[2 * i + 1]])
    }

    fn set_slot_ev(&mut self, i: usize, ev: Ev) {
        let i = i % BUFFER_SLOTS;
        let [lo, hi] = ev.to_le_bytes();
        self.cached_evs[2 * i] = lo;
        self.cached_evs[2 * i + 1] = hi;
    }

    fn slot_valid(&self, i: usize) -> bool {
        self.valid_bits & (1 << (i % BUFFER_SLOTS)) != 0
    }

    fn set_slot_valid(&mut self, i: usize, valid: bool) {
        let bit = 1u8 << (i % BUFFER_SLOTS);
        if valid {
            self.valid_bits |= bit;
        } else {
            self.valid_bits &= !bit;
        }
    }

    fn set_head(&mut self, head: usize) {
        self.ring_flags = (self.ring_flags & !HEAD_MASK) | (head % BUFFER_SLOTS) as u8;
    }

    fn set_valid_count(&mut self, n: u8) {
        self.ring_flags =
            (self.ring_flags & !VALID_MASK) | ((n.min(8) << VALID_SHIFT) & VALID_MASK);
    }

    fn set_explore_counter(&mut self, n: u16) {
        self.explore_counter = n.to_le_bytes();
    }

    fn cursor(&self) -> usize {
        (self.cursor_flags & CURSOR_MASK) as usize
    }

    fn set_cursor(&mut self, c: usize) {
        self.cursor_flags = (self.cursor_flags & !CURSOR_MASK) | (c % BUFFER_SLOTS) as u8;
    }

    fn oldest_uses(&self) -> u8 {
        (self.cursor_flags & USES_MASK) >> USES_SHIFT
    }

    fn set_oldest_uses(&mut self, n: u8) {
        self.cursor_flags = (self.cursor_flags & !USES_MASK) | ((n << USES_SHIFT) & USES_MASK);
    }

    /// Algorithm 1, lines 9-14: write at head, mark valid, advance head.
    fn cache(&mut self, ev: Ev) {
        let head = self.head();
        if self.slot_valid(head) {
            // Full ring: the oldest valid EV is overwritten, its use count goes with it.
            self.set_oldest_uses(0);
        } else {
            self.set_valid_count(self.valid_count() + 1);
        }
        self.set_slot_ev(head, ev);
        self.set_slot_valid(head, true);
        let next = (head + 1) % BUFFER_SLOTS;
        if next == 0 {
            self.cursor_flags |= WRAPPED_BIT;
        }
        self.set_head(next);
    }

    /// Marks the valid slot `index` used up; `valid` is the current count. (Saturating,
    /// like the masks above, so that even a garbage state from C cannot panic.)
    fn invalidate(&mut self, index: usize, valid: u8) {
        self.set_slot_valid(index, false);
        self.set_valid_count(valid.saturating_sub(1));
        self.set_oldest_uses(0);
    }

    /// Algorithm 2, getNextEV with `valid > 0` valid EVs: the oldest one, at head - valid.
    fn take_oldest_valid(&mut self, cfg: &Config, valid: u8) -> Ev {
        let index = (self.head() + BUFFER_SLOTS - valid as usize) % BUFFER_SLOTS;
        let uses = self.oldest_uses() + 1;
        if uses >= cfg.uses_per_ev() {
            self.invalidate(index, valid);
        } else {
            self.set_oldest_uses(uses);
        }
        self.slot_ev(index)
    }

    /// Freezing: round robin over the `written > 0` written slots, ignoring (but
    /// clearing) validity.
    fn take_cycling(&mut self, written: u8) -> Ev {
        let index = self.cursor();
        if self.slot_valid(index) {
            self.invalidate(index, self.valid_count());
        }
        self.set_cursor((index + 1) % written as usize);
        self.slot_ev(index)
    }

    /// Feedback-time freezing exit (Algorithm 1 lines 15-18, reference order): the
    /// reference's `reset()` wipes the ring, and exploration starts. The stale deadline
    /// is kept (it is meaningful only while frozen).
    fn check_freezing_exit(&mut self, cfg: &Config, now: u32) -> Transition {
        if self.is_frozen() && time_after(now, u32::from_le_bytes(self.freezing_until)) {
            *self = Self {
                explore_counter: cfg.explore_packets.to_le_bytes(),
                freezing_until: self.freezing_until,
                ..Self::new()
            };
            Transition::ExitedFreezing
        } else {
            Transition::None
        }
    }
}

#[cfg(all(reps_c_staticlib, not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // Only linked into the C static library; the code has no reachable panics.
    loop {}
}

#[cfg(test)]
mod tests;
