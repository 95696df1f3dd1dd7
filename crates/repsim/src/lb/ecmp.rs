//! ECMP: one EV for the whole connection (`flow_index mod evs_size`, as the reference does), so
//! every packet of a flow follows one hashed path and collisions between flows persist.
use serde::{Deserialize, Serialize};

use super::{check_evs_size, default_evs_size, LbContext, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};

/// `lb = { scheme = "ecmp", evs_size = 65536 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcmpConfig {
    /// Number of entropy values (EVs are `0..evs_size`).
    pub evs_size: u32,
}

impl Default for EcmpConfig {
    fn default() -> Self {
        EcmpConfig {
            evs_size: default_evs_size(),
        }
    }
}

impl EcmpConfig {
    /// A load balancer for one connection.
    pub fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Ecmp {
            ev: (ctx.flow_index % self.evs_size) as u16,
        })
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        check_evs_size(self.evs_size)
    }

    /// It hashes EVs.
    pub fn routes_wanted(&self) -> usize {
        0
    }
}

/// Fixed-path ECMP.
pub struct Ecmp {
    ev: u16,
}

impl LoadBalancer for Ecmp {
    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        PathChoice::ev(self.ev)
    }
}
