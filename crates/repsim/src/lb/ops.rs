//! OPS (oblivious packet spraying): a fresh uniformly random EV for every packet; feedback is
//! ignored.
use serde::{Deserialize, Serialize};

use super::{check_evs_override, random_ev, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "ops", evs_size = 65536 }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpsConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
}

impl LbScheme for OpsConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Ops {
            evs_size: ctx.evs(self.evs_size),
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// Oblivious spraying.
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
