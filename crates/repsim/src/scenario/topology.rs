//! `[topology]` and `[[degrade]]`: which network, one table form per family.
//!
//! ```toml
//! [topology]
//! type = "fat_tree"        # fat_tree | leaf_spine | dragonfly | rail | topo_file
//! tiers = 2
//! hosts = 128
//! hosts_per_tor = 8
//! link_speed = "400Gbps"
//! ```
use serde::{Deserialize, Serialize};

use super::{LoadedScenario, ScenarioError};
use crate::net::topology::TopologySpec;
use crate::net::Topology;
use crate::units::RateQ;

/// `[[degrade]]`: slow down links (asymmetry).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DegradeSection {
    /// Link name, e.g. `tor0->agg0`.
    pub link: String,
    /// New speed.
    pub speed: RateQ,
    /// Multiplier for the egress buffer and ECN thresholds (default: new speed / old speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_scale: Option<f64>,
}

/// The field and message of an error in `[topology]`, found by reading that table alone as
/// its family's section (serde reports errors in tagged tables at the table, not the field).
pub(super) fn pinpoint(text: &str, table: &toml::Table) -> Option<(String, String)> {
    let kind = table.get("topology")?.get("type")?.as_str()?;
    let start = text
        .lines()
        .position(|l| l.trim().trim_start_matches('[').starts_with("topology]"))?;
    let mut body = String::new();
    for line in text.lines().skip(start + 1) {
        let t = line.trim();
        if t.starts_with('[') {
            break;
        }
        // Keep the line numbering; drop the `type` key, which names the section's family.
        if t.split('=').next().map(str::trim) == Some("type") {
            body.push('\n');
            continue;
        }
        body.push_str(line);
        body.push('\n');
    }
    let err = TopologySpec::check_text(kind, &body)?.err()?;
    let at = err.span().map(|s| s.start).unwrap_or(0);
    let before = &body[..at.min(body.len())];
    let line = before.matches('\n').count();
    let key = body
        .lines()
        .nth(line)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim().to_string())
        .filter(|k| !k.is_empty() && err.span().is_some());
    let field = match key {
        Some(k) => format!("topology.{k} (line {})", start + 2 + line),
        None => format!("topology (line {})", start + 1),
    };
    Some((field, err.message().to_string()))
}

impl LoadedScenario {
    /// Builds the topology (with its degraded links).
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let read = |file: &str| self.read_relative(file);
        let mut topo = self
            .scenario
            .topology
            .build(&read)
            .map_err(|e| match e.field {
                Some(field) => self.err(&format!("topology.{field}"), e.message),
                None => self.err("topology", e.message),
            })?;
        for (i, d) in self.scenario.degrade.iter().enumerate() {
            let field = format!("degrade[{i}].link");
            let links = topo
                .links_by_name(&d.link)
                .map_err(|e| self.err(&field, e.0))?;
            if d.speed.0 == 0 {
                return Err(self.err(&format!("degrade[{i}].speed"), "must be positive"));
            }
            for l in links {
                let link = &mut topo.links[l as usize];
                let scale = d
                    .buffer_scale
                    .unwrap_or(d.speed.0 as f64 / link.rate_bps as f64);
                if scale.is_nan() || scale <= 0.0 {
                    return Err(self.err(&format!("degrade[{i}].buffer_scale"), "must be positive"));
                }
                link.rate_bps = d.speed.0;
                link.buffer_scale = scale;
            }
        }
        Ok(topo)
    }
}
