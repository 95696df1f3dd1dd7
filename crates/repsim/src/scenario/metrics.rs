//! `[metrics]`: how results are summarized.
//!
//! ```toml
//! [metrics]
//! slowdown_edges = ["100KB", "1MB"]   # flow-size buckets of the FCT slowdown
//! reorder = true                      # receiver reordering in flows.csv and summary.json
//! ```
use serde::{Deserialize, Serialize};

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
}
