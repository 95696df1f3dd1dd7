//! Leaf-spine: every leaf (ToR) linked to every spine, hosts on the leaves (e.g. ConWeave's
//! 8 x 8 fabric with 16 hosts per leaf at 2:1 oversubscription, or Reunion's 8 x 8 at 100 G).
//!
//! Links are created host by host (up, down), then leaf by leaf to every spine (each parallel
//! link up, then down).
use serde::{Deserialize, Serialize};

use super::builder::{
    microsecond, one, positive, positive_rate, zero_time, BuildError, FileReader, TopologyBuilder,
};
use super::{bad, check_size, Family, Topology, TopologyError};
use crate::engine::Time;
use crate::units::{RateQ, TimeQ};

/// A two-level leaf-spine fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafSpineSpec {
    /// Number of leaves.
    pub leaves: u32,
    /// Number of spines.
    pub spines: u32,
    /// Hosts per leaf.
    pub hosts_per_leaf: u32,
    /// Parallel links between every leaf and every spine.
    pub links_per_spine: u32,
    /// Host-leaf link speed.
    pub host_rate_bps: u64,
    /// Leaf-spine link speed.
    pub fabric_rate_bps: u64,
    /// Propagation latency of every link.
    pub link_latency: Time,
    /// Forwarding latency of every switch.
    pub switch_latency: Time,
}

impl LeafSpineSpec {
    /// A 1:1 fabric of 100 Gb/s links of 1 us, one link per leaf-spine pair and no switch
    /// latency: the leaf-spine of the ConWeave and Reunion evaluations at any size.
    pub fn at_100g(leaves: u32, spines: u32, hosts_per_leaf: u32) -> Self {
        LeafSpineSpec {
            leaves,
            spines,
            hosts_per_leaf,
            links_per_spine: 1,
            host_rate_bps: 100_000_000_000,
            fabric_rate_bps: 100_000_000_000,
            link_latency: crate::engine::time::US,
            switch_latency: 0,
        }
    }

    /// Builds the fabric.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        if self.leaves == 0 || self.spines == 0 || self.hosts_per_leaf == 0 {
            return bad("leaves, spines and hosts_per_leaf must be positive");
        }
        if self.links_per_spine == 0 {
            return bad("links_per_spine must be positive");
        }
        let (leaves, spines) = (u64::from(self.leaves), u64::from(self.spines));
        let hosts64 = leaves * u64::from(self.hosts_per_leaf);
        let fabric = leaves * spines * u64::from(self.links_per_spine);
        check_size(hosts64, leaves + spines, 2 * (hosts64 + fabric))?;
        let hosts = self.leaves * self.hosts_per_leaf;
        let mut t = Topology::empty(hosts, Family::LeafSpine);
        let leaf = |l: u32| hosts + l;
        let spine = |s: u32| hosts + self.leaves + s;
        for l in 0..self.leaves {
            t.add_switch("leaf", l, 1, self.switch_latency);
        }
        for s in 0..self.spines {
            t.add_switch("spine", s, 2, self.switch_latency);
        }
        for h in 0..hosts {
            t.add_cable(
                h,
                leaf(h / self.hosts_per_leaf),
                self.host_rate_bps,
                self.link_latency,
            );
        }
        for l in 0..self.leaves {
            for s in 0..self.spines {
                for _ in 0..self.links_per_spine {
                    t.add_cable(leaf(l), spine(s), self.fabric_rate_bps, self.link_latency);
                }
            }
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conweave_leaf_spine_128() {
        let t = LeafSpineSpec::at_100g(8, 8, 16).build().unwrap();
        assert_eq!(t.hosts, 128);
        assert_eq!(t.links.len(), 2 * 128 + 2 * 64);
        assert_eq!(t.edge_count(), 8);
        // Inter-leaf: 8 spines to choose from, then one way down.
        assert_eq!(t.candidates(0, 127).len(), 8);
        let spine3 = t.node_by_name("spine3").unwrap() - t.hosts;
        assert_eq!(t.candidates(spine3, 127).len(), 1);
        assert_eq!(t.first_path(0, 127).len(), 4);
        assert_eq!(t.node_by_name("tor2"), t.node_by_name("leaf2"));
        assert!(t
            .to_string()
            .starts_with("leaf-spine: 128 hosts, 8 leaf, 8 spine"));
    }
}

/// `[topology] type = "leaf_spine"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
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

impl TopologyBuilder for LeafSpineConfig {
    fn build(&self, _files: &FileReader) -> Result<Topology, BuildError> {
        let spec = LeafSpineSpec {
            leaves: self.leaves,
            spines: self.spines,
            hosts_per_leaf: self.hosts_per_leaf,
            links_per_spine: self.links_per_spine,
            host_rate_bps: positive_rate(self.link_speed, "link_speed")?,
            fabric_rate_bps: positive_rate(
                self.fabric_speed.unwrap_or(self.link_speed),
                "fabric_speed",
            )?,
            link_latency: positive(self.link_latency, "link_latency")?,
            switch_latency: self.switch_latency.0,
        };
        Ok(spec.build()?)
    }

    fn resolved(&self) -> Self {
        let mut c = self.clone();
        c.fabric_speed.get_or_insert(c.link_speed);
        c
    }
}
