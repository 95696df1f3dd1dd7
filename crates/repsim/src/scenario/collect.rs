//! `[collect]`: which time series a scenario records (see [`crate::metrics::collect`]).
//!
//! ```toml
//! [collect]
//! switches = ["tor0"]   # or "all" (every port, host NICs included); names: tor0, agg1, core0, host3
//! bucket = "20us"       # bucket width (default 20us)
//! queues = true         # queue occupancy samples (default true)
//! cwnd = false          # congestion-window trace per flow (default false)
//! ```
use super::{LoadedScenario, ScenarioError};
use crate::metrics::collect::CollectConfig;
use crate::net::Topology;

impl LoadedScenario {
    /// The scenario's `[collect]` section, checked against `topo`; `None` when absent.
    pub fn collect_config(&self, topo: &Topology) -> Result<Option<CollectConfig>, ScenarioError> {
        let Some(cfg) = &self.scenario.collect else {
            return Ok(None);
        };
        cfg.check(topo).map_err(|e| self.config_err(e))?;
        Ok(Some(cfg.clone()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::metrics::collect::PortSelection;

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
