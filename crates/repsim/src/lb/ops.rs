//! OPS (oblivious packet spraying): every packet takes an EV that ignores feedback.
//!
//! How the EVs follow one another (`order`):
//! * `random` (default): a fresh uniformly random EV for every packet, as the REPS paper's OPS
//!   and its artifact's `oblivious` draw them.
//! * `rounds`: uet-htsim's `oblivious` generator ([`EvRounds`]): rounds of `evs_size` packets,
//!   each round using every EV once in a scrambled order. Over a round no path gets two packets
//!   more than another, where random draws leave some paths with several and others with none.
use serde::{Deserialize, Serialize};

use super::{check_evs_override, random_ev, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// How OPS picks the next EV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpsOrder {
    /// Uniformly at random, independently for each packet.
    #[default]
    Random,
    /// Every EV once per round of `evs_size` packets, in a scrambled order ([`EvRounds`]).
    Rounds,
}

/// `lb = { scheme = "ops", evs_size = 65536, order = "random" }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpsConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    /// With `order = "rounds"`, the largest power of two not above it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// How the next EV is picked.
    pub order: OpsOrder,
}

impl LbScheme for OpsConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        let evs_size = ctx.evs(self.evs_size);
        match self.order {
            OpsOrder::Random => Box::new(Ops { evs_size }),
            OpsOrder::Rounds => Box::new(OpsRounds {
                walk: EvRounds::new(evs_size, rng),
            }),
        }
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// Oblivious spraying with random EVs.
#[derive(Clone)]
pub struct Ops {
    evs_size: u32,
}

impl LoadBalancer for Ops {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        PathChoice::ev(random_ev(rng, self.evs_size))
    }
}

/// Oblivious spraying with EVs in scrambled rounds.
#[derive(Clone)]
pub struct OpsRounds {
    walk: EvRounds,
}

impl LoadBalancer for OpsRounds {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        let low = self.walk.candidate();
        self.walk.advance(rng);
        PathChoice::ev(self.walk.ev(low))
    }
}

/// htsim's oblivious EV generator, shared with `bitmap` and `mixed`: candidate = `index XOR
/// mask`, where `index` counts 0, 1, ..., `evs - 1` and `mask` is redrawn every time `index`
/// wraps, so every round of `evs` candidates visits each low value once in a fresh order. The
/// bits above `log2(evs)` come from a random value fixed per connection, so different
/// connections' EVs differ in their upper bits.
#[derive(Clone, Debug)]
pub struct EvRounds {
    /// `evs - 1`: the EV-set size is a power of two.
    low_mask: u32,
    /// Position in the current round, 0..evs.
    index: u32,
    /// The current round's scrambling mask, 0..evs.
    xor: u32,
    /// The connection's fixed upper EV bits (above `low_mask`).
    upper: u16,
}

impl EvRounds {
    /// A generator over `evs` low values, rounded down to a power of two (at most 65,536).
    pub fn new(evs: u32, rng: &mut Rng) -> Self {
        let evs = evs.clamp(1, 1 << 16);
        // A size that is not a power of two (e.g. 65535) falls back to the largest power of
        // two below it rather than breaking the XOR.
        let evs = 1u32 << (31 - evs.leading_zeros());
        let low_mask = evs - 1;
        let xor = rng.below(evs);
        let upper = (rng.below(0xFFFF) & !low_mask) as u16;
        EvRounds {
            low_mask,
            index: 0,
            xor,
            upper,
        }
    }

    /// Number of low values (a power of two).
    #[inline]
    pub fn evs(&self) -> u32 {
        self.low_mask + 1
    }

    /// The low value the walk stands on.
    #[inline]
    pub fn candidate(&self) -> u32 {
        (self.index ^ self.xor) & self.low_mask
    }

    /// Steps to the next candidate, drawing a new mask when a round ends.
    #[inline]
    pub fn advance(&mut self, rng: &mut Rng) {
        self.index += 1;
        if self.index > self.low_mask {
            self.index = 0;
            self.xor = rng.below(self.evs());
        }
    }

    /// The EV of low value `low`: it with the connection's upper bits.
    #[inline]
    pub fn ev(&self, low: u32) -> u16 {
        low as u16 | self.upper
    }

    /// The low bits of `ev`.
    #[inline]
    pub fn low(&self, ev: u16) -> u32 {
        ev as u32 & self.low_mask
    }

    /// Puts the walk at `index` of a round scrambled by `xor` (tests).
    #[cfg(test)]
    pub(crate) fn set_round(&mut self, index: u32, xor: u32) {
        self.index = index;
        self.xor = xor;
    }

    /// The current round's mask (tests).
    #[cfg(test)]
    pub(crate) fn mask(&self) -> u32 {
        self.xor
    }

    /// The position in the current round (tests).
    #[cfg(test)]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// The connection's upper EV bits (tests).
    #[cfg(test)]
    pub(crate) fn upper(&self) -> u16 {
        self.upper
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each round of 64 packets uses every EV once, the upper bits stay fixed, and the order
    /// changes from round to round.
    #[test]
    fn rounds_use_every_ev_once_in_a_new_order() {
        let mut rng = Rng::new(3);
        let config = OpsConfig {
            evs_size: Some(64),
            order: OpsOrder::Rounds,
        };
        let ctx = LbContext::example();
        let mut lb = config.build(&ctx, &mut rng);
        let mut orders = Vec::new();
        for _ in 0..4 {
            let mut seen = [false; 64];
            let mut order = Vec::new();
            for _ in 0..64 {
                let ev = lb.next(0, &mut rng).ev;
                let low = (ev & 63) as usize;
                assert!(!seen[low], "EV {low} twice in one round");
                seen[low] = true;
                order.push(ev);
            }
            orders.push(order);
        }
        let upper = orders[0][0] & !63;
        assert!(orders.iter().flatten().all(|ev| ev & !63 == upper));
        assert!(
            orders.windows(2).any(|w| w[0] != w[1]),
            "the order is redrawn"
        );
    }

    /// Random order draws EVs independently: over one round's worth of packets some EV comes
    /// twice.
    #[test]
    fn random_order_repeats_within_a_round() {
        let mut rng = Rng::new(3);
        let ctx = LbContext::example();
        let config = OpsConfig {
            evs_size: Some(64),
            ..OpsConfig::default()
        };
        let mut lb = config.build(&ctx, &mut rng);
        let mut seen = [0u32; 64];
        for _ in 0..64 {
            seen[lb.next(0, &mut rng).ev as usize] += 1;
        }
        assert!(seen.iter().any(|&n| n > 1));
    }
}
