//! Mixed: recycled EVs first, BitMap otherwise (`mixed` in the REPS artifact's htsim,
//! `tommasobo/REPS_EuroSys_Artifact`, and in `ultraethernet/uet-htsim`, where it is the
//! simulator's default).
//!
//! Each send pops the oldest EV of the REPS-legacy FIFO (EVs echoed by un-marked ACKs) if any,
//! and otherwise takes the BitMap choice. Every feedback goes to both: an un-marked ACK's EV
//! joins the FIFO; a marked ACK, a NACK or a timeout penalises its EV in the bitmap. Unlike
//! REPS-legacy there is no round-robin first window (the FIFO is simply empty at first, so the
//! first window follows the bitmap generator), and bitmap penalties decay only on sends the
//! FIFO did not serve. The EV-set size must be a power of two (default 256, as for `bitmap`).
//!
//! The htsim-reps reference's own `mixed` crashes on its first packet, so this follows the
//! specification's description (and uet-htsim's working version) rather than any observed run.
//! The bitmap's paper-vs-reference choice ([`SkipRule`]) applies here too.
use serde::{Deserialize, Serialize};

use super::bitmap::{check_power_of_two_evs, BitmapState, SkipRule};
use super::reps_legacy::EvFifo;
use super::{AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "mixed", evs_size = 256, skip = "guaranteed" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MixedConfig {
    /// Number of entropy values, a power of two (default 256); absent: the largest power of
    /// two not above `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// When the bitmap's walk over penalised candidates stops.
    pub skip: SkipRule,
}

impl Default for MixedConfig {
    fn default() -> Self {
        MixedConfig {
            evs_size: Some(256),
            skip: SkipRule::Guaranteed,
        }
    }
}

impl LbScheme for MixedConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Mixed {
            fifo: EvFifo::new(ctx),
            bitmap: BitmapState::new(ctx.evs(self.evs_size), self.skip, rng),
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_power_of_two_evs(self.evs_size)
    }
}

/// Mixed over one connection.
#[derive(Clone)]
pub struct Mixed {
    fifo: EvFifo,
    bitmap: BitmapState,
}

impl LoadBalancer for Mixed {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        let ev = match self.fifo.pop() {
            Some(ev) => ev,
            None => self.bitmap.next_ev(rng),
        };
        PathChoice::ev(ev)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        if ack.ecn {
            self.bitmap.on_ecn(ack.ev);
        }
        self.fifo.on_ack(ack);
        None
    }

    fn on_nack(&mut self, ev: u16, _now: Time) -> Option<LbEvent> {
        self.bitmap.on_nack(ev);
        None
    }

    fn on_timeout(&mut self, ev: u16, _now: Time) -> Option<LbEvent> {
        self.bitmap.on_timeout(ev);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed(seed: u64) -> (Mixed, Rng) {
        let mut rng = Rng::new(seed);
        let ctx = LbContext::example();
        let c = MixedConfig::default();
        let m = Mixed {
            fifo: EvFifo::new(&ctx),
            bitmap: BitmapState::new(ctx.evs(c.evs_size), c.skip, &mut rng),
        };
        (m, rng)
    }

    #[test]
    fn prefers_recycled_evs_oldest_first() {
        let (mut m, mut rng) = mixed(1);
        for ev in [40, 41, 42] {
            m.on_ack(&AckFeedback::example(ev, 1));
        }
        let got: Vec<u16> = (0..3).map(|_| m.next(0, &mut rng).ev).collect();
        assert_eq!(got, [40, 41, 42]);
        // Recycled EVs are sent as echoed, even if penalised meanwhile.
        m.on_ack(&AckFeedback::example(43, 2));
        m.on_nack(43, 2);
        assert_eq!(m.next(0, &mut rng).ev, 43);
        assert_eq!(
            m.bitmap.penalty(43),
            4,
            "a recycled send does not decay penalties"
        );
    }

    #[test]
    fn empty_fifo_uses_the_bitmap_which_avoids_penalised_evs() {
        let (mut m, mut rng) = mixed(2);
        // Penalise all but EV 77 (penalties index the low 8 bits).
        for ev in (0..256u16).filter(|&e| e != 77) {
            m.on_timeout(ev, 0);
        }
        assert_eq!(m.next(0, &mut rng).ev & 0xFF, 77);
    }

    #[test]
    fn marked_acks_penalise_and_are_not_recycled() {
        let (mut m, mut rng) = mixed(3);
        m.on_ack(&AckFeedback {
            ecn: true,
            ..AckFeedback::example(5, 1)
        });
        assert_eq!(m.bitmap.penalty(5), 1);
        assert!(m.fifo.is_empty());
        // Unmarked: recycled, no penalty change.
        m.on_ack(&AckFeedback::example(5, 2));
        assert_eq!(m.bitmap.penalty(5), 1);
        assert_eq!(m.next(0, &mut rng).ev, 5);
        m.on_timeout(6, 3);
        assert_eq!(m.bitmap.penalty(6), 15);
    }

    #[test]
    fn no_round_robin_first_window() {
        let (mut m, mut rng) = mixed(4);
        let got: Vec<u16> = (0..8).map(|_| m.next(0, &mut rng).ev & 0xFF).collect();
        assert_ne!(got, [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn validate_requires_a_power_of_two() {
        assert!(MixedConfig::default()
            .validate(&RunContext::new(4150, 64))
            .is_ok());
        let e = MixedConfig {
            evs_size: Some(48),
            ..Default::default()
        }
        .validate(&RunContext::new(4150, 64))
        .unwrap_err();
        assert!(e.to_string().starts_with("evs_size:"), "{e}");
    }
}
