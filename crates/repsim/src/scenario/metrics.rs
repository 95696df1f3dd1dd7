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
use serde::{Deserialize, Serialize};

use super::LoadedScenario;
use crate::metrics::elephants::{ElephantsConfig, ElephantsSection};
use crate::metrics::Quantiles;
use crate::units::SizeQ;

/// `[metrics]`: how results are summarized.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsSection {
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
    pub elephants: Option<ElephantsSection>,
    /// How FCT percentiles are taken: `"nearest-rank"` (default) or `"floor-index"` (the LAPS
    /// code's: the value at index floor(q n) of the sorted FCTs).
    #[serde(default, skip_serializing_if = "is_nearest_rank")]
    pub quantiles: Quantiles,
}

fn is_nearest_rank(q: &Quantiles) -> bool {
    *q == Quantiles::NearestRank
}

impl LoadedScenario {
    /// `[metrics] slowdown_edges` in bytes (checked by [`crate::SimConfig::validate`]).
    pub(super) fn slowdown_edges(&self, mtu: u32) -> Option<Vec<u64>> {
        let edges = self.scenario.metrics.slowdown_edges.as_ref()?;
        Some(edges.iter().map(|e| e.0.bytes(mtu)).collect())
    }

    /// `[metrics] elephants` in simulation units (`None`: not counted; checked by
    /// [`crate::SimConfig::validate`]).
    pub(super) fn elephants(&self, mtu: u32) -> Option<ElephantsConfig> {
        let e = self.scenario.metrics.elephants.as_ref()?;
        Some(ElephantsConfig {
            every: e.every.0,
            min_bytes: e.min_size.0.bytes(mtu),
        })
    }
}
