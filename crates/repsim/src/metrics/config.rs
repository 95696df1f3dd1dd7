//! `[metrics]`: how results are summarized.
//!
//! ```toml
//! [metrics]
//! slowdown_edges = ["100KB", "1MB"]   # flow-size buckets of the FCT slowdown
//! reorder = true                      # receiver reordering in flows.csv and summary.json
//! elephants = { every = "1ms", min_size = "10MB" }  # elephants per link over time
//! quantiles = "floor-index"           # p50/p99 at index floor(q n), as the LAPS code's analysis
//! ```
//!
//! A flow's FCT is always from its start to its sender's receipt of the last ACK (the LAPS
//! code's definition too) and the mean is over the flows that finished.
//!
//! [`MetricsConfig`] is the section as a scenario or a library user writes it (sizes in bytes
//! or packets), with its defaults and checks.
use serde::{Deserialize, Serialize};

use super::elephants::{ElephantsConfig, ElephantsRule};
use super::Quantiles;
use crate::error::ConfigError;
use crate::units::SizeQ;

/// `[metrics]`: how results are summarized.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Upper edges of the flow-size buckets FCT slowdown is reported by, ascending (default:
    /// one split at the network's bandwidth-delay product).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_edges: Option<Vec<SizeQ>>,
    /// Report receiver reordering (flows.csv columns and a summary `reorder` entry).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reorder: bool,
    /// Count elephant flows per switch-to-switch link over time into `elephants.csv`, for
    /// every run (see [`crate::metrics::elephants`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elephants: Option<ElephantsConfig>,
    /// How FCT percentiles are taken: `"nearest-rank"` (default) or `"floor-index"` (the LAPS
    /// code's: the value at index floor(q n) of the sorted FCTs).
    #[serde(default, skip_serializing_if = "is_nearest_rank")]
    pub quantiles: Quantiles,
}

fn is_nearest_rank(q: &Quantiles) -> bool {
    *q == Quantiles::NearestRank
}

impl MetricsConfig {
    /// The slowdown buckets' upper edges in bytes (`None`: one split at the network's
    /// bandwidth-delay product).
    pub fn slowdown_edges(&self, mtu: u32) -> Option<Vec<u64>> {
        let edges = self.slowdown_edges.as_ref()?;
        Some(edges.iter().map(|e| e.0.bytes(mtu)).collect())
    }

    /// The elephant-counting rule (`None`: not counted).
    pub fn elephants(&self, mtu: u32) -> Option<ElephantsRule> {
        self.elephants.as_ref().map(|e| e.rule(mtu))
    }

    /// Checks the section at `mtu`.
    pub fn check(&self, mtu: u32) -> Result<(), ConfigError> {
        if let Some(edges) = self.slowdown_edges(mtu) {
            if edges.is_empty() || edges[0] == 0 || edges.windows(2).any(|w| w[1] <= w[0]) {
                return Err(ConfigError::new(
                    "metrics.slowdown_edges",
                    "list positive sizes in increasing order, e.g. [\"100KB\", \"1MB\"]",
                ));
            }
        }
        if let Some(e) = self.elephants(mtu) {
            if e.every == 0 {
                return Err(ConfigError::new(
                    "metrics.elephants.every",
                    "must be positive, e.g. \"1ms\"",
                ));
            }
            if e.min_bytes == 0 {
                return Err(ConfigError::new(
                    "metrics.elephants.min_size",
                    "must be positive, e.g. \"10MB\"",
                ));
            }
        }
        Ok(())
    }
}
