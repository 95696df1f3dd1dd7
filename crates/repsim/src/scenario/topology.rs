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
use crate::engine::time::US;
use crate::net::topology::topo_file::parse_topo;
use crate::net::{DragonflySpec, FatTreeSpec, LeafSpineSpec, RailSpec, Topology};
use crate::units::{RateQ, TimeQ};

fn one() -> u32 {
    1
}
fn microsecond() -> TimeQ {
    TimeQ(US)
}
fn zero_time() -> TimeQ {
    TimeQ(0)
}
fn gbps(g: u64) -> RateQ {
    RateQ(g * 1_000_000_000)
}

/// `[topology]`: the network, by family (`type`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TopologySection {
    /// A 2- or 3-tier fat tree.
    FatTree(FatTreeSection),
    /// Leaves and spines, every leaf linked to every spine.
    LeafSpine(LeafSpineSection),
    /// A Dragonfly (groups of fully meshed routers joined by global links).
    Dragonfly(DragonflySection),
    /// A rail-optimised AI cluster.
    Rail(RailSection),
    /// A reference `.topo` file (fat trees).
    TopoFile(TopoFileSection),
}

/// `type = "fat_tree"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSection {
    /// 2 or 3.
    pub tiers: u32,
    /// Number of hosts.
    pub hosts: u32,
    /// Hosts per ToR.
    pub hosts_per_tor: u32,
    /// 3 tiers: hosts per pod (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_size: Option<u32>,
    /// ToR downlink:uplink ratio.
    #[serde(default = "one")]
    pub oversubscription: u32,
    /// Speed of every link.
    pub link_speed: RateQ,
    /// Propagation latency of every link.
    #[serde(default = "microsecond")]
    pub link_latency: TimeQ,
    /// Forwarding latency of every switch (0 like the reference; the REPS paper's text says
    /// 500ns).
    #[serde(default = "zero_time")]
    pub switch_latency: TimeQ,
}

/// `type = "leaf_spine"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineSection {
    /// Number of leaves.
    pub leaves: u32,
    /// Number of spines.
    pub spines: u32,
    /// Hosts per leaf.
    pub hosts_per_leaf: u32,
    /// Parallel links between every leaf and every spine.
    #[serde(default = "one")]
    pub links_per_spine: u32,
    /// Speed of the host links.
    pub link_speed: RateQ,
    /// Speed of the leaf-spine links (default: `link_speed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_speed: Option<RateQ>,
    /// Propagation latency of every link.
    #[serde(default = "microsecond")]
    pub link_latency: TimeQ,
    /// Forwarding latency of every switch.
    #[serde(default = "zero_time")]
    pub switch_latency: TimeQ,
}

/// `type = "dragonfly"` (defaults: the LAPS paper's 9 x 4 x 4 at 100 Gb/s).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DragonflySection {
    /// Groups.
    #[serde(default = "nine")]
    pub groups: u32,
    /// Routers per group.
    #[serde(default = "four")]
    pub routers_per_group: u32,
    /// Hosts per router.
    #[serde(default = "four")]
    pub hosts_per_router: u32,
    /// Global links per router (routers x this must be a multiple of groups - 1).
    #[serde(default = "two")]
    pub global_links_per_router: u32,
    /// Speed of host and local links.
    #[serde(default = "hundred_g")]
    pub link_speed: RateQ,
    /// Speed of global links (default: `link_speed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_speed: Option<RateQ>,
    /// Propagation latency of host and local links.
    #[serde(default = "microsecond")]
    pub link_latency: TimeQ,
    /// Propagation latency of global links (default: `link_latency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_latency: Option<TimeQ>,
    /// Forwarding latency of every router.
    #[serde(default = "zero_time")]
    pub switch_latency: TimeQ,
}

fn two() -> u32 {
    2
}
fn four() -> u32 {
    4
}
fn eight() -> u32 {
    8
}
fn nine() -> u32 {
    9
}
fn hundred_g() -> RateQ {
    gbps(100)
}
fn two_hundred_g() -> RateQ {
    gbps(200)
}

/// `type = "rail"` (defaults: the LAPS paper's 8 rails x 8 clusters).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RailSection {
    /// Rails = GPUs per cluster.
    #[serde(default = "eight")]
    pub rails: u32,
    /// Clusters = GPUs per rail.
    #[serde(default = "eight")]
    pub clusters: u32,
    /// GPU-NIC link speed.
    #[serde(default = "two_hundred_g")]
    pub nic_speed: RateQ,
    /// NIC-rail switch link speed.
    #[serde(default = "hundred_g")]
    pub rail_speed: RateQ,
    /// NIC-NVLink switch link speed.
    #[serde(default = "hundred_g")]
    pub nvlink_speed: RateQ,
    /// Propagation latency of every link.
    #[serde(default = "microsecond")]
    pub link_latency: TimeQ,
    /// Forwarding latency of every switch.
    #[serde(default = "zero_time")]
    pub switch_latency: TimeQ,
}

/// `type = "topo_file"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopoFileSection {
    /// Path, relative to the scenario file.
    pub file: String,
    /// Override of every tier's switch latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_latency: Option<TimeQ>,
}

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
    let err = match kind {
        "fat_tree" => toml::from_str::<FatTreeSection>(&body).err(),
        "leaf_spine" => toml::from_str::<LeafSpineSection>(&body).err(),
        "dragonfly" => toml::from_str::<DragonflySection>(&body).err(),
        "rail" => toml::from_str::<RailSection>(&body).err(),
        "topo_file" => toml::from_str::<TopoFileSection>(&body).err(),
        _ => None,
    }?;
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

impl TopologySection {
    /// The section with every default written out.
    pub fn resolved(&self) -> TopologySection {
        let mut t = self.clone();
        match &mut t {
            TopologySection::LeafSpine(l) => {
                l.fabric_speed.get_or_insert(l.link_speed);
            }
            TopologySection::Dragonfly(d) => {
                d.global_speed.get_or_insert(d.link_speed);
                d.global_latency.get_or_insert(d.link_latency);
            }
            TopologySection::FatTree(_)
            | TopologySection::Rail(_)
            | TopologySection::TopoFile(_) => {}
        }
        t
    }
}

impl LoadedScenario {
    /// Builds the topology (with its degraded links).
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let positive = |t: TimeQ, field: &str| {
            if t.0 == 0 {
                Err(self.err(&format!("topology.{field}"), "must be positive"))
            } else {
                Ok(t.0)
            }
        };
        let built = match &self.scenario.topology {
            TopologySection::FatTree(t) => {
                if t.tiers == 3 && t.pod_size.is_none() {
                    return Err(self.err("topology.pod_size", "required for a 3-tier fat tree"));
                }
                FatTreeSpec::uniform(
                    t.tiers,
                    t.hosts,
                    t.hosts_per_tor,
                    t.pod_size.unwrap_or(t.hosts),
                    t.oversubscription,
                    t.link_speed.0,
                    positive(t.link_latency, "link_latency")?,
                    t.switch_latency.0,
                )
                .and_then(|spec| spec.build())
            }
            TopologySection::LeafSpine(t) => LeafSpineSpec {
                leaves: t.leaves,
                spines: t.spines,
                hosts_per_leaf: t.hosts_per_leaf,
                links_per_spine: t.links_per_spine,
                host_rate_bps: t.link_speed.0,
                fabric_rate_bps: t.fabric_speed.unwrap_or(t.link_speed).0,
                link_latency: positive(t.link_latency, "link_latency")?,
                switch_latency: t.switch_latency.0,
            }
            .build(),
            TopologySection::Dragonfly(t) => DragonflySpec {
                groups: t.groups,
                routers_per_group: t.routers_per_group,
                hosts_per_router: t.hosts_per_router,
                global_links_per_router: t.global_links_per_router,
                host_rate_bps: t.link_speed.0,
                local_rate_bps: t.link_speed.0,
                global_rate_bps: t.global_speed.unwrap_or(t.link_speed).0,
                link_latency: positive(t.link_latency, "link_latency")?,
                global_latency: positive(
                    t.global_latency.unwrap_or(t.link_latency),
                    "global_latency",
                )?,
                switch_latency: t.switch_latency.0,
            }
            .build(),
            TopologySection::Rail(t) => RailSpec {
                rails: t.rails,
                clusters: t.clusters,
                nic_rate_bps: t.nic_speed.0,
                rail_rate_bps: t.rail_speed.0,
                nvlink_rate_bps: t.nvlink_speed.0,
                link_latency: positive(t.link_latency, "link_latency")?,
                switch_latency: t.switch_latency.0,
            }
            .build(),
            TopologySection::TopoFile(t) => {
                let (path, text) = self
                    .read_relative(&t.file)
                    .map_err(|e| self.err("topology.file", e))?;
                let mut spec = parse_topo(&text)
                    .map_err(|e| self.err("topology.file", format!("{}: {e}", path.display())))?;
                if let Some(sl) = t.switch_latency {
                    for tier in &mut spec.tiers {
                        tier.switch_latency = sl.0;
                    }
                }
                spec.build()
            }
        };
        let mut topo = built.map_err(|e| self.err("topology", e.0))?;
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
