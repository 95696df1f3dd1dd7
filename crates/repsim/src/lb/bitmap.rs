//! BitMap: STrack-like per-EV penalty scores, the REPS paper's "BitMap" competitor
//! (behaviour: the `bitmap` load balancing of the REPS artifact's htsim,
//! `tommasobo/REPS_EuroSys_Artifact`, and of `ultraethernet/uet-htsim`).
//!
//! Each connection keeps a 4-bit penalty per EV (`evs_size` of them, a power of two; 256 by
//! default, as the paper's scripts run it). A marked ACK adds 1 to its EV's penalty, a NACK
//! adds 4 and a retransmission timeout sets the timed-out packet's EV to 15, all capped at 15;
//! un-marked ACKs change nothing (there is no decay on success).
//!
//! EVs come from the oblivious generator ([`super::ops::EvRounds`]): candidate = `index XOR
//! mask`, where `index` counts 0, 1, ..., `evs_size - 1` and `mask` is redrawn every time
//! `index` wraps, so every round of `evs_size` candidates visits each EV once in a fresh order.
//! A penalised candidate is skipped
//! and the next one taken; the *first* candidate skipped in a choice loses one point (penalties
//! decay only when the sender would have used the EV). Bits above `log2(evs_size)` of the EV
//! come from a random value fixed per connection, so different connections' EVs differ in
//! their upper bits.
//!
//! Where the sources disagree:
//! * The reference gives up after `evs_size + 1` skips and sends the (penalised) candidate it
//!   reached. The walk then spans the end of one round and the start of the next, whose orders
//!   differ, so it can miss an unpenalised EV and send a penalised one although a clean EV
//!   exists. STrack's (and the paper's) intent is to avoid penalised EVs while any is clean, so
//!   by default ([`SkipRule::Guaranteed`]) the walk goes on, in the same order, while an
//!   unpenalised EV exists (at most two rounds more); it matches the reference whenever the
//!   reference finds a clean EV. `skip = "reference"` gives up after `evs_size + 1` skips.
//! * uet-htsim reports every timeout on EV 0 and adds 15 there; htsim-reps sets the timed-out
//!   packet's own EV to 15. The sender here knows that EV, so it is the one penalised.
//! * uet-htsim treats a NACK for a packet trimmed at the last hop as good news; the sender here
//!   does not say where a packet was trimmed, so every NACK adds 4 (as in htsim-reps).
use serde::{Deserialize, Serialize};

use super::ops::EvRounds;
use super::{check_evs_size, AckFeedback, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// The highest penalty an EV can carry.
pub const MAX_PENALTY: u8 = 15;
/// Penalty added by an ECN-marked ACK.
pub const ECN_PENALTY: u8 = 1;
/// Penalty added by a NACK.
pub const NACK_PENALTY: u8 = 4;

/// When the walk over penalised candidates stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipRule {
    /// Never send a penalised EV while an unpenalised one exists (the paper's intent).
    Guaranteed,
    /// Give up after `evs_size + 1` skips and send the candidate reached (the reference code).
    Reference,
}

/// `lb = { scheme = "bitmap", evs_size = 256, skip = "guaranteed" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BitmapConfig {
    /// Number of entropy values, a power of two (default 256, as the paper ran it); absent:
    /// the largest power of two not above `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// When the walk over penalised candidates stops.
    pub skip: SkipRule,
}

impl Default for BitmapConfig {
    fn default() -> Self {
        BitmapConfig {
            evs_size: Some(256),
            skip: SkipRule::Guaranteed,
        }
    }
}

impl LbScheme for BitmapConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Bitmap {
            state: BitmapState::new(ctx.evs(self.evs_size), self.skip, rng),
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_power_of_two_evs(self.evs_size)
    }
}

/// Checks an optional own EV-set size for a bitmap generator: in range and a power of two.
pub(crate) fn check_power_of_two_evs(evs_size: Option<u32>) -> Result<(), ConfigError> {
    let Some(n) = evs_size else { return Ok(()) };
    check_evs_size(n)?;
    if !n.is_power_of_two() {
        return Err(ConfigError::new(
            "evs_size",
            format!("must be a power of two for the bitmap EV generator, not {n}"),
        ));
    }
    Ok(())
}

/// One connection's penalties and EV generator, shared by `bitmap` and `mixed`.
#[derive(Clone)]
pub struct BitmapState {
    /// Penalty per EV (low bits), 0..=[`MAX_PENALTY`].
    penalty: Vec<u8>,
    /// EVs with penalty 0, kept so the guaranteed walk knows when to stop.
    clean: u32,
    /// The oblivious generator whose candidates the walk takes or skips.
    walk: EvRounds,
    /// When the walk stops.
    skip: SkipRule,
}

impl BitmapState {
    /// Fresh state over `evs` EVs (rounded down to a power of two; validated configurations
    /// give one already), all unpenalised.
    pub fn new(evs: u32, skip: SkipRule, rng: &mut Rng) -> Self {
        let walk = EvRounds::new(evs, rng);
        BitmapState {
            penalty: vec![0; walk.evs() as usize],
            clean: walk.evs(),
            walk,
            skip,
        }
    }

    /// Number of EVs (low values).
    #[inline]
    pub fn evs(&self) -> u32 {
        self.walk.evs()
    }

    /// The penalty of `ev` (its low bits).
    #[inline]
    pub fn penalty(&self, ev: u16) -> u8 {
        self.penalty[self.walk.low(ev) as usize]
    }

    /// Number of EVs with no penalty.
    #[inline]
    pub fn clean(&self) -> u32 {
        self.clean
    }

    /// Sets `ev`'s penalty to `f(old)` capped at [`MAX_PENALTY`], keeping the clean count.
    #[inline]
    fn set(&mut self, ev: u32, f: impl FnOnce(u8) -> u8) {
        let p = &mut self.penalty[(ev & (self.walk.evs() - 1)) as usize];
        let old = *p;
        let new = f(old).min(MAX_PENALTY);
        *p = new;
        match (old == 0, new == 0) {
            (true, false) => self.clean -= 1,
            (false, true) => self.clean += 1,
            _ => {}
        }
    }

    /// The EV of the next packet.
    pub fn next_ev(&mut self, rng: &mut Rng) -> u16 {
        let evs = self.evs();
        let mut c = self.walk.candidate();
        let mut skips = 0u32;
        while self.penalty[c as usize] > 0 {
            let give_up = skips > evs
                && match self.skip {
                    SkipRule::Reference => true,
                    SkipRule::Guaranteed => self.clean == 0,
                };
            if give_up {
                break;
            }
            if skips == 0 {
                self.set(c, |p| p - 1);
            }
            self.walk.advance(rng);
            c = self.walk.candidate();
            skips += 1;
            // The rest of one round plus a full one visits every EV.
            debug_assert!(skips <= 3 * evs + 1, "bitmap walk did not end");
        }
        self.walk.advance(rng);
        self.walk.ev(c)
    }

    /// An ECN-marked ACK echoed `ev`.
    #[inline]
    pub fn on_ecn(&mut self, ev: u16) {
        self.set(ev as u32, |p| p.saturating_add(ECN_PENALTY));
    }

    /// A NACK reported `ev`'s packet trimmed.
    #[inline]
    pub fn on_nack(&mut self, ev: u16) {
        self.set(ev as u32, |p| p.saturating_add(NACK_PENALTY));
    }

    /// A packet sent with `ev` timed out.
    #[inline]
    pub fn on_timeout(&mut self, ev: u16) {
        self.set(ev as u32, |_| MAX_PENALTY);
    }
}

/// BitMap over one connection.
#[derive(Clone)]
pub struct Bitmap {
    state: BitmapState,
}

impl Bitmap {
    /// The penalties and generator (for inspection in tests).
    pub fn state(&self) -> &BitmapState {
        &self.state
    }
}

impl LoadBalancer for Bitmap {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        PathChoice::ev(self.state.next_ev(rng))
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<super::LbEvent> {
        if ack.ecn {
            self.state.on_ecn(ack.ev);
        }
        None
    }

    fn on_nack(&mut self, ev: u16, _now: Time) -> Option<super::LbEvent> {
        self.state.on_nack(ev);
        None
    }

    fn on_timeout(&mut self, ev: u16, _now: Time) -> Option<super::LbEvent> {
        self.state.on_timeout(ev);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(evs: u32, skip: SkipRule, seed: u64) -> (BitmapState, Rng) {
        let mut rng = Rng::new(seed);
        (BitmapState::new(evs, skip, &mut rng), rng)
    }

    #[test]
    fn penalties_add_one_for_ecn_four_for_nack_and_cap_at_fifteen() {
        let (mut s, _) = state(256, SkipRule::Guaranteed, 1);
        s.on_ecn(7);
        assert_eq!(s.penalty(7), 1);
        s.on_ecn(7);
        assert_eq!(s.penalty(7), 2);
        s.on_nack(7);
        assert_eq!(s.penalty(7), 6);
        for _ in 0..3 {
            s.on_nack(7);
        }
        assert_eq!(s.penalty(7), MAX_PENALTY, "6 + 12 caps at 15");
        s.on_ecn(7);
        assert_eq!(s.penalty(7), MAX_PENALTY);
        s.on_timeout(9);
        assert_eq!(s.penalty(9), MAX_PENALTY, "a timeout sets 15 outright");
        // Penalties index the EV's low bits: the upper bits are the connection's own.
        s.on_ecn(256 + 3);
        assert_eq!(s.penalty(3), 1);
        assert_eq!(s.clean(), 256 - 3);
    }

    #[test]
    fn feedback_reaches_penalties_and_unmarked_acks_do_not_decay_them() {
        let mut rng = Rng::new(3);
        let mut b = Bitmap {
            state: BitmapState::new(256, SkipRule::Guaranteed, &mut rng),
        };
        let lb: &mut dyn LoadBalancer = &mut b;
        lb.on_nack(5, 0);
        lb.on_ack(&AckFeedback::example(5, 1));
        lb.on_ack(&AckFeedback {
            ecn: true,
            ..AckFeedback::example(6, 2)
        });
        lb.on_timeout(8, 3);
        lb.on_ack(&AckFeedback::example(8, 4));
        let s = b.state();
        assert_eq!((s.penalty(5), s.penalty(6), s.penalty(8)), (4, 1, 15));
    }

    #[test]
    fn every_round_visits_each_ev_once_with_fixed_upper_bits() {
        let (mut s, mut rng) = state(64, SkipRule::Guaranteed, 11);
        let upper = s.walk.upper();
        assert_eq!(upper as u32 & (s.evs() - 1), 0);
        let mut orders = Vec::new();
        for _ in 0..4 {
            let mut seen = [false; 64];
            let mut order = Vec::new();
            for _ in 0..64 {
                let ev = s.next_ev(&mut rng);
                assert_eq!(ev & !63, upper);
                let low = (ev & 63) as usize;
                assert!(!seen[low], "EV {low} twice in one round");
                seen[low] = true;
                order.push(low);
            }
            orders.push(order);
        }
        assert!(
            orders.windows(2).any(|w| w[0] != w[1]),
            "mask redrawn at wrap"
        );
    }

    #[test]
    fn upper_bits_differ_between_connections() {
        let uppers: Vec<u16> = (0..8)
            .map(|seed| state(256, SkipRule::Guaranteed, seed).0.walk.upper())
            .collect();
        assert!(uppers.iter().any(|&u| u != uppers[0]));
        assert!(uppers.iter().all(|&u| u & 0xFF == 0));
    }

    #[test]
    fn skip_decrements_only_the_first_penalised_candidate() {
        let (mut s, mut rng) = state(16, SkipRule::Guaranteed, 5);
        // A fresh generator is at position 0: the next three candidates, without a wrap.
        let (c0, c1, c2) = (s.walk.mask(), 1 ^ s.walk.mask(), 2 ^ s.walk.mask());
        s.on_nack(c0 as u16);
        s.on_ecn(c1 as u16);
        s.on_ecn(c1 as u16);
        let ev = s.next_ev(&mut rng);
        assert_eq!(ev as u32 & 15, c2, "both penalised candidates skipped");
        assert_eq!(s.penalty(c0 as u16), 3, "first skipped loses one");
        assert_eq!(s.penalty(c1 as u16), 2, "second skipped unchanged");
        assert_eq!(s.walk.index(), 3, "index moves past the chosen candidate");
    }

    #[test]
    fn penalty_of_one_is_skipped_once_then_reused() {
        let (mut s, mut rng) = state(8, SkipRule::Guaranteed, 9);
        let c0 = s.walk.candidate();
        s.on_ecn(c0 as u16);
        let ev = s.next_ev(&mut rng);
        assert_ne!(ev as u32 & 7, c0);
        assert_eq!(s.penalty(c0 as u16), 0);
        assert_eq!(s.clean(), 8);
    }

    /// All penalised but one EV, placed where the reference's bounded walk cannot reach it.
    fn hidden_clean_ev(skip: SkipRule) -> (BitmapState, Rng) {
        let (mut s, rng) = state(4, skip, 0);
        // Round order 0,1,2,3 (mask 0) with position 0 already used, and the next round's
        // mask 3 (order 3,2,1,0): a walk from position 1 over 5 skips sees 1,2,3,3,2,1 only.
        s.walk.set_round(1, 0);
        for ev in 1..4 {
            s.on_timeout(ev);
        }
        (s, rng)
    }

    /// A random source whose next `below(4)` is 3.
    fn rng_drawing_three() -> Rng {
        (0..)
            .map(Rng::new)
            .find(|r| r.clone().below(4) == 3)
            .expect("some seed draws 3")
    }

    #[test]
    fn reference_rule_can_send_a_penalised_ev_while_a_clean_one_exists() {
        let (mut s, _) = hidden_clean_ev(SkipRule::Reference);
        let mut rng = rng_drawing_three();
        let ev = s.next_ev(&mut rng);
        assert_ne!(ev & 3, 0);
        assert!(s.penalty(ev) > 0, "reference sends a penalised EV");
        assert_eq!(s.penalty(0), 0, "while EV 0 was clean");
    }

    #[test]
    fn guaranteed_rule_finds_the_hidden_clean_ev() {
        let (mut s, _) = hidden_clean_ev(SkipRule::Guaranteed);
        let mut rng = rng_drawing_three();
        let ev = s.next_ev(&mut rng);
        assert_eq!(ev & 3, 0);
    }

    #[test]
    fn all_penalised_gives_up_after_evs_plus_one_skips() {
        for skip in [SkipRule::Guaranteed, SkipRule::Reference] {
            let (mut s, mut rng) = state(8, skip, 2);
            for ev in 0..8 {
                s.on_timeout(ev);
            }
            let ev = s.next_ev(&mut rng);
            assert!(s.penalty(ev) > 0);
            let total: u32 = (0..8).map(|e| s.penalty(e) as u32).sum();
            assert_eq!(total, 8 * 15 - 1, "one decrement per choice");
            // 8 + 1 skips, then one more advance: 10 positions from the start.
            assert_eq!(s.walk.index(), 10 % 8);
        }
    }

    /// Drives random feedback and choices; counts choices of a penalised EV made while some
    /// EV was clean at the moment of choosing.
    fn violations(skip: SkipRule, evs: u32, seed: u64, steps: u32) -> u32 {
        let mut rng = Rng::new(seed);
        let mut s = BitmapState::new(evs, skip, &mut rng);
        let mut fb = Rng::new(seed ^ 0xABCD);
        let mut bad = 0;
        for _ in 0..steps {
            // Penalise clean EVs until only 0, 1 or 2 are left (so clean EVs are scarce but
            // penalties stay low enough to decay back), plus some feedback anywhere.
            let target = fb.below(3);
            while s.clean() > target || fb.below(4) == 0 {
                let start = fb.below(evs);
                let ev = if s.clean() > target {
                    (0..evs)
                        .map(|i| ((start + i) % evs) as u16)
                        .find(|&e| s.penalty(e) == 0)
                        .expect("a clean EV")
                } else {
                    start as u16
                };
                match fb.below(10) {
                    0..=5 => s.on_ecn(ev),
                    6..=8 => s.on_nack(ev),
                    _ => s.on_timeout(ev),
                }
            }
            let ev = s.next_ev(&mut rng);
            let clean_after = s.clean();
            let count = (0..evs).filter(|&e| s.penalty(e as u16) == 0).count() as u32;
            assert_eq!(count, clean_after, "clean count kept exact");
            if s.penalty(ev) > 0 && clean_after > 0 {
                bad += 1;
            }
        }
        bad
    }

    #[test]
    fn guaranteed_never_picks_a_penalised_ev_while_a_clean_one_exists() {
        for evs in [2, 4, 8, 16, 64, 256] {
            for seed in 0..20 {
                assert_eq!(violations(SkipRule::Guaranteed, evs, seed, 2000), 0);
            }
        }
    }

    #[test]
    fn reference_rule_violates_the_guarantee_on_random_sequences() {
        // The same sequences the guaranteed rule passes (with 2 EVs a walk of 3 skips covers
        // both, so the reference cannot miss).
        for evs in [4, 8, 16, 64, 256] {
            let bad: u32 = (0..20)
                .map(|seed| violations(SkipRule::Reference, evs, seed, 2000))
                .sum();
            assert!(
                bad > 0,
                "{evs} EVs: the bounded walk misses clean EVs sometimes"
            );
        }
    }

    #[test]
    fn validate_requires_a_power_of_two() {
        assert!(BitmapConfig::default()
            .validate(&RunContext::new(4150, 64))
            .is_ok());
        let e = BitmapConfig {
            evs_size: Some(100),
            ..Default::default()
        }
        .validate(&RunContext::new(4150, 64))
        .unwrap_err();
        assert!(
            e.to_string().starts_with("evs_size:") && e.to_string().contains("power of two"),
            "{e}"
        );
        assert!(BitmapConfig {
            evs_size: Some(0),
            ..Default::default()
        }
        .validate(&RunContext::new(4150, 64))
        .is_err());
        assert!(BitmapConfig {
            evs_size: Some(65536),
            ..Default::default()
        }
        .validate(&RunContext::new(4150, 64))
        .is_ok());
    }

    #[test]
    fn nic_wide_size_that_is_not_a_power_of_two_rounds_down() {
        let (s, _) = state(65535, SkipRule::Guaranteed, 1);
        assert_eq!(s.evs(), 32768);
        let (s, _) = state(65536, SkipRule::Guaranteed, 1);
        assert_eq!(s.evs(), 65536);
    }

    #[test]
    fn config_parses_from_toml() {
        let c: BitmapConfig = toml::from_str("skip = \"reference\"\nevs_size = 32").unwrap();
        assert_eq!((c.evs_size, c.skip), (Some(32), SkipRule::Reference));
        assert!(toml::from_str::<BitmapConfig>("penalty = 3").is_err());
    }
}
