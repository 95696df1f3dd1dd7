//! A constant window and/or pacing rate that nothing changes, not even losses (the reference
//! simulator's `constant`): the baseline for checking what a load balancer or the network does
//! on its own, and for rate-paced senders in tests.
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{RateQ, SizeQ};
use crate::ConfigError;

/// `cc = { algo = "constant", window = "100pkt", rate = "100Gbps" }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConstantConfig {
    /// Bytes in flight allowed (default: the path's bandwidth-delay product x 1.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<SizeQ>,
    /// Pacing rate (default: none, line rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateQ>,
}

impl CcScheme for ConstantConfig {
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        let window = self
            .window
            .map_or((p.bdp as f64 * 1.5) as u64, |w| w.0.bytes(p.mtu))
            .max(p.mtu as u64);
        Box::new(Constant {
            window,
            rate: self.rate.map(|r| r.0),
        })
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if self.window.is_some_and(|w| w.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("window", "must be positive"));
        }
        if self.rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("rate", "must be positive"));
        }
        Ok(())
    }
}

/// Constant window and rate.
#[derive(Clone, Debug)]
pub struct Constant {
    window: u64,
    rate: Option<u64>,
}

impl CongestionControl for Constant {
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        Some(Box::new(self.clone()))
    }

    fn cwnd(&self) -> u64 {
        self.window
    }

    fn paces(&self) -> bool {
        self.rate.is_some()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.rate
    }

    fn on_ack(&mut self, _ack: &AckSample) {}

    fn on_nack(&mut self, _size: u64, _now: Time) {}

    fn on_timeout(&mut self, _size: u64, _now: Time) {}
}
