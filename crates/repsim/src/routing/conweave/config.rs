//! ConWeave's parameters: the `switch = { scheme = "conweave", ... }` table, its presets (the
//! code's fat-tree and leaf-spine constants, LAPS's), the resolved [`Params`] the switches run
//! with, and the checks.
use serde::{Deserialize, Serialize};

use super::ConWeave;
use crate::engine::time::{MS, NS, US};
use crate::engine::Time;
use crate::net::RunContext;
use crate::routing::{RoutingScheme, SchemeSetup, SwitchScheme};
use crate::units::TimeQ;
use crate::ConfigError;

/// A named set of ConWeave constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// ConWeave repository, leaf-spine runs.
    LeafSpine,
    /// ConWeave repository, fat-tree runs with IRN.
    FatTreeIrn,
    /// ConWeave repository, fat-tree runs with PFC (lossless).
    FatTreeLossless,
    /// LAPS repository's hard-coded constants.
    Laps,
}

/// What the reply deadline's base RTT covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaseRtt {
    /// ToR to ToR and back, propagation only (ConWeave repository).
    Tor,
    /// Host to host and back, propagation only (LAPS repository).
    Host,
}

/// `[routing] switch = "conweave"` or `switch = { scheme = "conweave", preset =
/// "fat-tree-irn", tx_expiry = "500us" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConWeaveConfig {
    /// The parameter set the absent fields come from.
    pub preset: Preset,
    /// Gap since a flow's last packet after which a new epoch may move it at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_expiry: Option<TimeQ>,
    /// Added to the base RTT for the RTT_REPLY deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_reply_deadline: Option<TimeQ>,
    /// How long a NOTIFY keeps a path from being chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_pause_time: Option<TimeQ>,
    /// Added to the expected TAIL arrival for a reorder queue's flush deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_voq_flush_time: Option<TimeQ>,
    /// Expected TAIL delay when the epoch's phase-0 timing is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_voq_waiting_time: Option<TimeQ>,
    /// Idle flow state is forgotten after this long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aging: Option<TimeQ>,
    /// Avoid paths marked bad by NOTIFY when choosing a new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_aware: Option<bool>,
    /// What the base RTT covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<BaseRtt>,
}

impl Default for ConWeaveConfig {
    fn default() -> Self {
        ConWeaveConfig {
            preset: Preset::LeafSpine,
            tx_expiry: None,
            extra_reply_deadline: None,
            path_pause_time: None,
            extra_voq_flush_time: None,
            default_voq_waiting_time: None,
            aging: None,
            path_aware: None,
            base_rtt: None,
        }
    }
}

/// The constants a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// See [`ConWeaveConfig::tx_expiry`].
    pub tx_expiry: Time,
    /// See [`ConWeaveConfig::extra_reply_deadline`].
    pub extra_reply_deadline: Time,
    /// See [`ConWeaveConfig::path_pause_time`].
    pub path_pause_time: Time,
    /// See [`ConWeaveConfig::extra_voq_flush_time`].
    pub extra_voq_flush_time: Time,
    /// See [`ConWeaveConfig::default_voq_waiting_time`].
    pub default_voq_waiting_time: Time,
    /// See [`ConWeaveConfig::aging`].
    pub aging: Time,
    /// See [`ConWeaveConfig::path_aware`].
    pub path_aware: bool,
    /// See [`ConWeaveConfig::base_rtt`].
    pub base_rtt: BaseRtt,
}

impl Preset {
    /// The preset's constants.
    pub fn params(self) -> Params {
        let (tx, reply, pause, flush, wait, base) = match self {
            Preset::LeafSpine => (300 * US, 4 * US, 16 * US, 16 * US, 200 * US, BaseRtt::Tor),
            Preset::FatTreeIrn => (1000 * US, 4 * US, 16 * US, 16 * US, 300 * US, BaseRtt::Tor),
            Preset::FatTreeLossless => {
                (1000 * US, 4 * US, 16 * US, 64 * US, 600 * US, BaseRtt::Tor)
            }
            Preset::Laps => (10 * US, 80 * NS, 4 * US, 32 * US, 200 * US, BaseRtt::Host),
        };
        Params {
            tx_expiry: tx,
            extra_reply_deadline: reply,
            path_pause_time: pause,
            extra_voq_flush_time: flush,
            default_voq_waiting_time: wait,
            aging: 2 * MS,
            path_aware: true,
            base_rtt: base,
        }
    }
}

impl ConWeaveConfig {
    /// The preset with this table's overrides.
    pub fn params(&self) -> Params {
        let p = self.preset.params();
        let t = |v: Option<TimeQ>, d: Time| v.map_or(d, |q| q.0);
        Params {
            tx_expiry: t(self.tx_expiry, p.tx_expiry),
            extra_reply_deadline: t(self.extra_reply_deadline, p.extra_reply_deadline),
            path_pause_time: t(self.path_pause_time, p.path_pause_time),
            extra_voq_flush_time: t(self.extra_voq_flush_time, p.extra_voq_flush_time),
            default_voq_waiting_time: t(self.default_voq_waiting_time, p.default_voq_waiting_time),
            aging: t(self.aging, p.aging),
            path_aware: self.path_aware.unwrap_or(p.path_aware),
            base_rtt: self.base_rtt.unwrap_or(p.base_rtt),
        }
    }
}

impl RoutingScheme for ConWeaveConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(ConWeave::new(self.params(), setup))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        let p = self.params();
        if p.tx_expiry == 0 {
            return Err(ConfigError::new("tx_expiry", "must be positive"));
        }
        if p.aging < p.tx_expiry {
            // Forgetting a flow before its epoch expires would restart epochs mid-flowlet.
            return Err(ConfigError::new("aging", "must be at least tx_expiry"));
        }
        Ok(())
    }
}
