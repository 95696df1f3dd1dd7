//! `[collect]`: which time series a scenario records (see [`crate::metrics::collect`]).
//!
//! ```toml
//! [collect]
//! switches = ["tor0"]   # or "all" (every port, host NICs included); names: tor0, agg1, core0, host3
//! bucket = "20us"       # bucket width (default 20us)
//! queues = true         # queue occupancy samples (default true)
//! cwnd = false          # congestion-window trace per flow (default false)
//! ```
use serde::{Deserialize, Serialize};

use super::units::TimeQ;
use super::{LoadedScenario, OneOrMany, ScenarioError};
use crate::metrics::collect::{CollectConfig, PortSelection, DEFAULT_BUCKET};
use crate::net::Topology;

/// `[collect]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CollectSection {
    /// Nodes whose egress ports are collected (`"all"` or a list such as `["tor0", "agg1"]`).
    pub switches: OneOrMany,
    /// Bucket width (default 20us).
    pub bucket: Option<TimeQ>,
    /// Queue occupancy samples (default true).
    pub queues: Option<bool>,
    /// Congestion-window trace per flow (default false).
    pub cwnd: Option<bool>,
}

impl CollectSection {
    /// The collector configuration this section asks for (names are checked against a topology
    /// by [`LoadedScenario::collect_config`]).
    pub fn config(&self) -> CollectConfig {
        let ports = match &self.switches {
            OneOrMany::One(s) if s.eq_ignore_ascii_case("all") => PortSelection::All,
            other => PortSelection::Nodes(other.to_vec()),
        };
        CollectConfig {
            bucket: self.bucket.map(|b| b.0).unwrap_or(DEFAULT_BUCKET),
            ports,
            queues: self.queues.unwrap_or(true),
            cwnd: self.cwnd.unwrap_or(false),
        }
    }
}

impl LoadedScenario {
    /// The scenario's `[collect]` section, checked against `topo`; `None` when absent.
    pub fn collect_config(&self, topo: &Topology) -> Result<Option<CollectConfig>, ScenarioError> {
        let Some(sec) = &self.scenario.collect else {
            return Ok(None);
        };
        let cfg = sec.config();
        cfg.check(topo).map_err(|e| self.config_err(e))?;
        Ok(Some(cfg))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const BASE: &str = r#"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
[workload]
type = "explicit"
flows = [{ src = 0, dst = 8, size = "1MiB" }]
"#;

    #[test]
    fn parses_and_checks_names() {
        let p = |extra: &str| {
            LoadedScenario::parse(&format!("{BASE}{extra}"), Path::new("t.toml")).unwrap()
        };
        let s = p("");
        let topo = s.topology().unwrap();
        assert_eq!(s.collect_config(&topo).unwrap(), None);
        let s = p("[collect]\nswitches = [\"tor0\"]\nbucket = \"10us\"\n");
        let c = s.collect_config(&topo).unwrap().unwrap();
        assert_eq!(c.bucket, 10 * crate::engine::time::US);
        assert_eq!(c.resolve(&topo).unwrap().len(), 4 + 4); // 4 hosts down, 4 spines up
        let s = p("[collect]\nswitches = \"all\"\n");
        assert_eq!(
            s.collect_config(&topo).unwrap().unwrap().ports,
            PortSelection::All
        );
        let e = p("[collect]\nswitches = [\"tor99\"]\n")
            .collect_config(&topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("collect.switches") && e.contains("tor99"), "{e}");
        // The resolved scenario keeps the section.
        let s = p("[collect]\nswitches = [\"tor0\"]\n");
        assert!(s
            .resolved_toml(&s.runs().unwrap(), None)
            .contains("[collect]"));
    }
}
