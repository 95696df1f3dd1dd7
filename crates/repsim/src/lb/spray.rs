//! Source-routed spraying: every packet takes the next of the connection's k shortest explicit
//! routes (round robin, or a uniformly random one), whatever their lengths; feedback is
//! ignored. On unequal-cost fabrics (Dragonfly, rail) this is OPS over explicit paths, the
//! oblivious baseline of latency-aware schemes such as LAPS.
use serde::{Deserialize, Serialize};

use super::{LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::paths::PathId;
use crate::net::RunContext;
use crate::ConfigError;

/// How the next route is picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprayOrder {
    /// One after the other.
    RoundRobin,
    /// Uniformly at random.
    Random,
}

/// `lb = { scheme = "spray", paths = 8, order = "round_robin" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SprayConfig {
    /// Candidate routes per connection (the k shortest, by number of links).
    pub paths: u32,
    /// How the next route is picked.
    pub order: SprayOrder,
}

impl Default for SprayConfig {
    fn default() -> Self {
        SprayConfig {
            paths: 8,
            order: SprayOrder::RoundRobin,
        }
    }
}

impl LbScheme for SprayConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Spray {
            routes: ctx.routes.iter().map(|r| r.id).collect(),
            order: self.order,
            next: 0,
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.paths == 0 || self.paths > 64 {
            return Err(ConfigError::new(
                "paths",
                format!("must be in 1..=64, not {}", self.paths),
            ));
        }
        Ok(())
    }

    /// The k shortest routes.
    fn routes_wanted(&self) -> usize {
        self.paths as usize
    }
}

/// Spraying over explicit routes.
#[derive(Clone)]
pub struct Spray {
    routes: Vec<PathId>,
    order: SprayOrder,
    next: usize,
}

impl LoadBalancer for Spray {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        let i = match self.order {
            SprayOrder::RoundRobin => {
                let i = self.next;
                self.next = (self.next + 1) % self.routes.len();
                i
            }
            SprayOrder::Random => rng.below(self.routes.len() as u32) as usize,
        };
        PathChoice {
            ev: i as u16,
            route: self.routes[i],
        }
    }
}
