//! ECMP: one EV for the whole connection (`flow_index mod evs_size`, as the reference does), so
//! every packet of a flow follows one hashed path and collisions between flows persist.
use serde::{Deserialize, Serialize};

use super::{check_evs_override, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "ecmp", evs_size = 65536 }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcmpConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
}

impl LbScheme for EcmpConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Ecmp {
            ev: (ctx.flow_index % ctx.evs(self.evs_size)) as u16,
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// Fixed-path ECMP.
#[derive(Clone)]
pub struct Ecmp {
    ev: u16,
}

impl LoadBalancer for Ecmp {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        PathChoice::ev(self.ev)
    }
}
