//! Incremental: EV = 0, 1, 2, ... mod `evs_size`, packet after packet (the REPS artifact's
//! htsim, `tommasobo/REPS_EuroSys_Artifact`, `uec.cpp`: `incremental`); feedback is ignored. Every EV is used equally often, so the spread of a
//! flow's packets over a switch's ports measures only the hash's balance: the REPS paper's
//! Figure 14 EV-set-size study (`run_study_entropies.py`).
use serde::{Deserialize, Serialize};

use super::{check_evs_override, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "incremental", evs_size = 256 }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IncrementalConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
}

impl LbScheme for IncrementalConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Incremental {
            next: 0,
            evs: ctx.evs(self.evs_size).max(1),
        })
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// A per-connection EV counter.
#[derive(Clone)]
pub struct Incremental {
    next: u32,
    evs: u32,
}

impl LoadBalancer for Incremental {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        let ev = self.next;
        self.next = if ev + 1 == self.evs { 0 } else { ev + 1 };
        PathChoice::ev(ev as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::AckFeedback;

    #[test]
    fn counts_from_zero_and_wraps_at_evs_size() {
        let mut rng = Rng::new(1);
        let mut lb = IncrementalConfig { evs_size: Some(3) }.build(&LbContext::example(), &mut rng);
        let got: Vec<u16> = (0..7).map(|_| lb.next(0, &mut rng).ev).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn full_range_wraps_after_65535() {
        let mut rng = Rng::new(1);
        let mut lb = IncrementalConfig::default().build(&LbContext::example(), &mut rng);
        let last = (0..65536).map(|_| lb.next(0, &mut rng).ev).last();
        assert_eq!(last, Some(65535));
        assert_eq!(lb.next(0, &mut rng).ev, 0);
    }

    #[test]
    fn feedback_does_not_change_the_sequence() {
        let mut rng = Rng::new(1);
        let mut lb = IncrementalConfig { evs_size: Some(8) }.build(&LbContext::example(), &mut rng);
        lb.next(0, &mut rng);
        lb.on_ack(&AckFeedback {
            ecn: true,
            ..AckFeedback::example(0, 1)
        });
        lb.on_nack(1, 2);
        lb.on_timeout(1, 3);
        assert_eq!(lb.next(0, &mut rng).ev, 1);
    }
}
