//! Reunion's parameters as a scenario gives them (`switch = { scheme = "reunion", ... }`),
//! their defaults and their checks; the module documentation says how each is used.
use serde::{Deserialize, Serialize};

use super::Reunion;
use crate::engine::time::{MS, US};
use crate::net::RunContext;
use crate::routing::{RoutingScheme, SchemeSetup, SwitchScheme};
use crate::units::{RateQ, TimeQ};
use crate::ConfigError;

/// `[routing] switch = "reunion"` or `switch = { scheme = "reunion", interval = "1000us",
/// tolerance = 1, ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReunionConfig {
    /// Statistical interval (the paper's s).
    pub interval: TimeQ,
    /// Hash-collision tolerance (the paper's t): elephants a link may carry.
    pub tolerance: u32,
    /// Counters per sketch row.
    pub sketch_width: u32,
    /// Sketch rows (hash functions).
    pub sketch_depth: u32,
    /// Bits per sketch counter (saturating).
    pub counter_bits: u32,
    /// Row seeds (empty: derived from the scenario seed; else one per row).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sketch_seeds: Vec<u32>,
    /// Rate whose bytes over one interval are the least sketch estimate of an elephant.
    pub elephant_rate: RateQ,
    /// Flowlet timeout of the mice's fallback.
    pub flowlet: TimeQ,
    /// When a source ToR runs Algorithm 2 on a notification.
    pub act_on: ActOn,
}

/// When a source ToR acts on a notification (the module documentation says why).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActOn {
    /// As it arrives, closing the interval the notification describes (the default).
    #[default]
    Arrival,
    /// At the end of the source's interval in which it arrived: with aligned intervals, one
    /// interval after the one it describes.
    IntervalEnd,
}

impl Default for ReunionConfig {
    fn default() -> Self {
        ReunionConfig {
            interval: TimeQ(MS),
            tolerance: 1,
            sketch_width: 2000,
            sketch_depth: 7,
            counter_bits: 32,
            sketch_seeds: Vec::new(),
            elephant_rate: RateQ(10_000_000_000),
            flowlet: TimeQ(500 * US),
            act_on: ActOn::Arrival,
        }
    }
}

impl ReunionConfig {
    /// The least sketch estimate of an elephant: `elephant_rate` over one interval, in bytes.
    pub(super) fn floor_bytes(&self) -> u64 {
        (self.elephant_rate.0 as u128 * self.interval.0 as u128 / 8 / 1_000_000_000_000) as u64
    }
}

impl RoutingScheme for ReunionConfig {
    /// Each switch keeps its own sketch, tables, interval timer and random stream; ToRs
    /// learn from each other only through marked packets and notifications (whose link list
    /// travels as their payload).
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// Every reroute is recorded with its reason.
    fn reports_path_changes(&self) -> bool {
        true
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Reunion::new(self, setup))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.interval.0 == 0 {
            return Err(ConfigError::new("interval", "must be positive"));
        }
        if !(1..=8).contains(&self.tolerance) {
            return Err(ConfigError::new("tolerance", "must be between 1 and 8"));
        }
        if self.sketch_width == 0 {
            return Err(ConfigError::new("sketch_width", "must be positive"));
        }
        if !(1..=16).contains(&self.sketch_depth) {
            return Err(ConfigError::new("sketch_depth", "must be between 1 and 16"));
        }
        if !(8..=32).contains(&self.counter_bits) {
            return Err(ConfigError::new("counter_bits", "must be between 8 and 32"));
        }
        if !self.sketch_seeds.is_empty() && self.sketch_seeds.len() != self.sketch_depth as usize {
            return Err(ConfigError::new(
                "sketch_seeds",
                format!(
                    "{} seeds for {} rows",
                    self.sketch_seeds.len(),
                    self.sketch_depth
                ),
            ));
        }
        if self.elephant_rate.0 == 0 {
            return Err(ConfigError::new("elephant_rate", "must be positive"));
        }
        if self.floor_bytes() > u32::MAX as u64 {
            return Err(ConfigError::new(
                "elephant_rate",
                "times the interval must stay below 4 GB",
            ));
        }
        if self.flowlet.0 == 0 {
            return Err(ConfigError::new("flowlet", "must be positive"));
        }
        Ok(())
    }
}
