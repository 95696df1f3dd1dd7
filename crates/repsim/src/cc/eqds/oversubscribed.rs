//! The UEC reference's receiver-side rate control (`OversubscribedCC`), for fabrics whose core
//! carries less than the hosts can send; the reference turns it on by itself when receiver
//! credit runs alone on an oversubscribed topology.
//!
//! Each receiving host counts what reaches it (packets, ECN-marked full packets, headers trimmed
//! at the last hop and trimmed elsewhere) and, every `interval` x U(0.75, 1.25) (its own random
//! stream), scales its pacer's rate: down by the fraction of packets trimmed on the way, down by
//! `md` x (g - `target`) when the smoothed marked fraction g (weight `alpha` per update) exceeds
//! `target`, else up by `ai` (doubling with each increase in a row while nothing was marked);
//! never below `min_rate` nor above 1. An update falls due at its time and is applied when the
//! host's pacer next acts (a packet arrives or it wakes), the updates missed in between applied
//! in order with what they counted: the same rates the reference's timer sets, as the rate is
//! read only then.
use serde::{Deserialize, Serialize};

use crate::cc::credit::PullArrival;
use crate::engine::{Rng, Time};
use crate::units::TimeQ;
use crate::ConfigError;

/// `oversubscribed = { min_rate = 0.225, ... }` of `eqds`: a receiving host scales its pull rate by
/// what reaches it (the module's docs). The defaults are the UEC reference's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OversubscribedCc {
    /// The lowest rate, as a fraction of the pull rate (the reference: 0.9 / the topology's
    /// oversubscription ratio, at least 0.01).
    pub min_rate: f64,
    /// Mean time between updates (the reference's 1.5 x its largest unloaded RTT; 21.03 us on
    /// its default 100 Gb/s fat tree), each drawn from U(0.75, 1.25) times it.
    pub interval: TimeQ,
    /// Smoothed marked fraction above which the rate decreases.
    pub target: f64,
    /// Additive increase, as a fraction of the pull rate.
    pub ai: f64,
    /// Multiplicative decrease per unit of smoothed marked fraction above `target`.
    pub md: f64,
    /// Weight of the latest interval's marked fraction in the smoothed one.
    pub alpha: f64,
}

impl Default for OversubscribedCc {
    fn default() -> Self {
        OversubscribedCc {
            min_rate: 0.01,
            interval: TimeQ(21_034_080),
            target: 0.3,
            ai: 0.01,
            md: 0.5,
            alpha: 0.5,
        }
    }
}

impl OversubscribedCc {
    /// Checks the parameters.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let key = |k: &str| format!("oversubscribed.{k}");
        if !(self.min_rate > 0.0 && self.min_rate <= 1.0) {
            return Err(ConfigError::new(key("min_rate"), "must be in (0, 1]"));
        }
        if self.interval.0 == 0 {
            return Err(ConfigError::new(key("interval"), "must be positive"));
        }
        for (name, v) in [("target", self.target), ("alpha", self.alpha)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(ConfigError::new(key(name), "must be in [0, 1]"));
            }
        }
        for (name, v) in [("ai", self.ai), ("md", self.md)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(key(name), "must be a non-negative number"));
            }
        }
        Ok(())
    }
}

/// One receiving host's oversubscription control (the module's docs): what it counted since its
/// last update, and the rate it sets.
#[derive(Debug)]
pub(super) struct RateControl {
    /// The pacer's rate at full speed (bits per second).
    pub(super) full_rate: u64,
    /// The rate set, as a fraction of `full_rate`.
    pub(super) rate: f64,
    /// Smoothed fraction of marked packets.
    pub(super) g: f64,
    /// Increases in a row.
    pub(super) increases: u32,
    /// The next update falls due at this time.
    pub(super) next_update: Time,
    /// Jitter of the update times.
    pub(super) rng: Rng,
    /// Counted since the last update: packets, marked full packets, headers trimmed at the
    /// last hop and elsewhere.
    pub(super) packets: u64,
    pub(super) marked: u64,
    pub(super) trimmed_last_hop: u64,
    pub(super) trimmed_other: u64,
}

impl RateControl {
    pub(super) fn new(full_rate: u64, params: &OversubscribedCc, mut rng: Rng) -> Self {
        let next_update = Self::interval(params, &mut rng);
        RateControl {
            full_rate,
            rate: 1.0,
            g: 0.0,
            increases: 0,
            next_update,
            rng,
            packets: 0,
            marked: 0,
            trimmed_last_hop: 0,
            trimmed_other: 0,
        }
    }

    /// The time to the next update: U(0.75, 1.25) times the mean interval.
    pub(super) fn interval(params: &OversubscribedCc, rng: &mut Rng) -> Time {
        ((0.75 + rng.unit() / 2.0) * params.interval.0 as f64) as Time
    }

    /// Applies every update due by `now`, in order; returns the pacer's rate (bits per second).
    pub(super) fn catch_up(&mut self, now: Time, params: &OversubscribedCc) -> u64 {
        while self.next_update <= now {
            self.update(params);
            self.next_update += Self::interval(params, &mut self.rng).max(1);
        }
        ((self.full_rate as f64 * self.rate) as u64).max(1)
    }

    /// One update over what was counted since the last.
    pub(super) fn update(&mut self, p: &OversubscribedCc) {
        let full = self.packets - self.trimmed_last_hop - self.trimmed_other;
        let fraction = if full == 0 {
            0.0
        } else {
            self.marked as f64 / full as f64
        };
        let mut decrease = false;
        if self.trimmed_other > 0 {
            self.rate -= self.trimmed_other as f64 / self.packets as f64;
            decrease = true;
        }
        self.g = self.g * (1.0 - p.alpha) + p.alpha * fraction;
        if self.g > p.target && p.md > 0.0 {
            self.rate *= 1.0 - (self.g - p.target) * p.md;
            decrease = true;
        }
        if decrease {
            self.increases = 0;
        } else {
            self.rate += if self.marked == 0 {
                p.ai * 2f64.powi(self.increases.min(1000) as i32)
            } else {
                p.ai
            };
            self.increases += 1;
        }
        self.rate = self.rate.clamp(p.min_rate, 1.0);
        self.packets = 0;
        self.marked = 0;
        self.trimmed_last_hop = 0;
        self.trimmed_other = 0;
    }

    /// A packet reached the host.
    pub(super) fn count(&mut self, a: &PullArrival) {
        self.packets += 1;
        if a.trimmed {
            if a.trimmed_at_last_hop {
                self.trimmed_last_hop += 1;
            } else {
                self.trimmed_other += 1;
            }
        } else if a.ecn {
            self.marked += 1;
        }
    }
}
