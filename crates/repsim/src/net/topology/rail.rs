//! Rail-optimised AI clusters, as the LAPS paper models them ("rail-only").
//!
//! A cluster (server) holds one GPU per rail; GPU r of cluster c is host `c * rails + r`. Each
//! GPU reaches the fabric through its own NIC, modelled as a small switch `nic<c * rails + r>`
//! joined to the GPU by a link of the NIC's speed; the NIC links to its rail switch `rail<r>`
//! (shared by GPU r of every cluster) and to its cluster's NVLink switch `nvl<c>` (shared by
//! the GPUs of the cluster). Traffic between rails therefore crosses an NVLink switch and
//! another GPU's NIC (PXN-style), and ECMP finds the two 6-link routes between GPUs of
//! different clusters and rails.
//!
//! Switches are created rails first, then NICs, then NVLink switches (LAPS's order); links host
//! by host (to its NIC), then NIC by NIC (to its rail, then to its NVLink switch).
use serde::{Deserialize, Serialize};

use super::builder::{positive, positive_rate, BuildError, FileReader, TopologyBuilder};
use super::{bad, check_size, Family, Topology, TopologyError};
use crate::engine::time::US;
use crate::engine::Time;
use crate::units::{RateQ, TimeQ};

/// A rail-optimised cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct RailSpec {
    /// Rails = GPUs (hosts) per cluster.
    pub rails: u32,
    /// Clusters = hosts per rail.
    pub clusters: u32,
    /// GPU-NIC link speed.
    pub nic_rate_bps: u64,
    /// NIC-rail switch link speed.
    pub rail_rate_bps: u64,
    /// NIC-NVLink switch link speed.
    pub nvlink_rate_bps: u64,
    /// Propagation latency of every link.
    pub link_latency: Time,
    /// Forwarding latency of every switch (NICs included).
    pub switch_latency: Time,
}

impl RailSpec {
    /// The LAPS paper's rail-only cluster: 8 rails x 8 clusters, 200 Gb/s NICs, 100 Gb/s rail
    /// and NVLink links, 1 us everywhere.
    pub fn example() -> Self {
        RailSpec {
            rails: 8,
            clusters: 8,
            nic_rate_bps: 200_000_000_000,
            rail_rate_bps: 100_000_000_000,
            nvlink_rate_bps: 100_000_000_000,
            link_latency: crate::engine::time::US,
            switch_latency: 0,
        }
    }

    /// Builds the cluster.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let (rails, clusters) = (self.rails, self.clusters);
        if rails == 0 || clusters == 0 || rails * clusters < 2 {
            return bad("rails and clusters must be positive, with at least two hosts");
        }
        let hosts64 = u64::from(rails) * u64::from(clusters);
        check_size(
            hosts64,
            u64::from(rails),
            2 * hosts64 * (1 + u64::from(rails)),
        )?;
        let hosts = rails * clusters;
        let mut t = Topology::empty(hosts, Family::Rail { rails, clusters });
        for r in 0..rails {
            t.add_switch("rail", r, 2, self.switch_latency);
        }
        for i in 0..hosts {
            t.add_switch_in("nic", i, 1, i / rails, self.switch_latency);
        }
        for c in 0..clusters {
            t.add_switch_in("nvl", c, 2, c, self.switch_latency);
        }
        let rail = |r: u32| hosts + r;
        let nic = |i: u32| hosts + rails + i;
        let nvl = |c: u32| hosts + rails + hosts + c;
        for h in 0..hosts {
            t.add_cable(h, nic(h), self.nic_rate_bps, self.link_latency);
        }
        for i in 0..hosts {
            t.add_cable(
                nic(i),
                rail(i % rails),
                self.rail_rate_bps,
                self.link_latency,
            );
            t.add_cable(
                nic(i),
                nvl(i / rails),
                self.nvlink_rate_bps,
                self.link_latency,
            );
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_rail_cluster_shape_and_routes() {
        let t = RailSpec::example().build().unwrap();
        assert_eq!(t.hosts, 64);
        assert_eq!(t.switches.len(), 80);
        assert_eq!(t.links.len(), 2 * 192);
        let host = |c: u32, r: u32| c * 8 + r;
        // Same cluster: GPU -> NIC -> NVLink -> NIC -> GPU.
        assert_eq!(t.first_path(host(0, 1), host(0, 5)).len(), 4);
        // Same rail, other cluster: through the rail switch.
        assert_eq!(t.first_path(host(0, 3), host(6, 3)).len(), 4);
        // Other cluster and rail: 6 links, and ECMP has both ways (NVLink first or last).
        assert_eq!(t.first_path(host(0, 1), host(6, 5)).len(), 6);
        let nic01 = t.node_by_name("nic1").unwrap() - t.hosts;
        assert_eq!(t.candidates(nic01, host(6, 5)).len(), 2);
        assert_eq!(t.links[t.host_uplink[0] as usize].rate_bps, 200_000_000_000);
    }
}

/// `[topology] type = "rail"` (defaults: the LAPS paper's 8 rails x 8 clusters).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RailConfig {
    /// Rails = GPUs per cluster.
    pub rails: u32,
    /// Clusters = GPUs per rail.
    pub clusters: u32,
    /// GPU-NIC link speed.
    pub nic_speed: RateQ,
    /// NIC-rail switch link speed.
    pub rail_speed: RateQ,
    /// NIC-NVLink switch link speed.
    pub nvlink_speed: RateQ,
    /// Propagation latency of every link.
    pub link_latency: TimeQ,
    /// Forwarding latency of every switch.
    pub switch_latency: TimeQ,
}

impl Default for RailConfig {
    fn default() -> Self {
        RailConfig {
            rails: 8,
            clusters: 8,
            nic_speed: RateQ(200_000_000_000),
            rail_speed: RateQ(100_000_000_000),
            nvlink_speed: RateQ(100_000_000_000),
            link_latency: TimeQ(US),
            switch_latency: TimeQ(0),
        }
    }
}

impl TopologyBuilder for RailConfig {
    fn build(&self, _files: &FileReader) -> Result<Topology, BuildError> {
        let spec = RailSpec {
            rails: self.rails,
            clusters: self.clusters,
            nic_rate_bps: positive_rate(self.nic_speed, "nic_speed")?,
            rail_rate_bps: positive_rate(self.rail_speed, "rail_speed")?,
            nvlink_rate_bps: positive_rate(self.nvlink_speed, "nvlink_speed")?,
            link_latency: positive(self.link_latency, "link_latency")?,
            switch_latency: self.switch_latency.0,
        };
        Ok(spec.build()?)
    }
}
