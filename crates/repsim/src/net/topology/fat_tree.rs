//! Fat trees (folded Clos), 2 or 3 tiers, with oversubscription and bundles: the REPS paper's
//! topologies and what the reference simulator's `.topo` files describe.
//!
//! Switches are created ToRs first, then aggregation switches, then cores; links host by host
//! (up, down), then ToR by ToR (to each of its pod's aggs, each bundle member up then down), then
//! agg by agg (to its cores). Port ids follow that order, and so do the ECMP groups.
use serde::{Deserialize, Serialize};

use super::builder::{
    microsecond, one, positive, positive_rate, zero_time, BuildError, FileReader, TopologyBuilder,
};
use super::{bad, check_size, Family, Topology, TopologyError};
use crate::engine::Time;
use crate::units::{RateQ, TimeQ};

/// Parameters of one tier of a fat tree (as in the reference `.topo` format).
#[derive(Clone, Debug, PartialEq)]
pub struct TierSpec {
    /// Speed of the links from this tier down to the tier below (tier 0: host links).
    pub downlink_rate_bps: u64,
    /// Latency of those links.
    pub downlink_latency: Time,
    /// Forwarding latency of switches in this tier.
    pub switch_latency: Time,
    /// Downward ports per switch (tier 0: hosts per ToR).
    pub radix_down: u32,
    /// Upward ports per switch (0 on the top tier).
    pub radix_up: u32,
    /// Parallel links between the same pair of switches (towards the tier below).
    pub bundle: u32,
}

/// A 2- or 3-tier fat tree.
#[derive(Clone, Debug, PartialEq)]
pub struct FatTreeSpec {
    /// Number of hosts.
    pub hosts: u32,
    /// Hosts per pod (equals `hosts` for 2 tiers).
    pub pod_size: u32,
    /// Tier 0 (ToR), 1 (Agg/spine) and, for 3 tiers, 2 (Core).
    pub tiers: Vec<TierSpec>,
}

impl FatTreeSpec {
    /// A uniform fat tree: every link `rate_bps` and `latency`, `hosts_per_tor` hosts per ToR,
    /// ToR uplinks = hosts_per_tor / oversubscription, full bisection above the ToRs.
    #[allow(clippy::too_many_arguments)] // one argument per knob of a uniform tree, all named at call sites
    pub fn uniform(
        tiers: u32,
        hosts: u32,
        hosts_per_tor: u32,
        pod_size: u32,
        oversubscription: u32,
        rate_bps: u64,
        latency: Time,
        switch_latency: Time,
    ) -> Result<Self, TopologyError> {
        if hosts_per_tor == 0 || hosts == 0 || !hosts.is_multiple_of(hosts_per_tor) {
            return bad(format!(
                "hosts ({hosts}) must be a positive multiple of hosts_per_tor ({hosts_per_tor})"
            ));
        }
        if oversubscription == 0 || !hosts_per_tor.is_multiple_of(oversubscription) {
            return bad(format!(
                "hosts_per_tor ({hosts_per_tor}) must be a multiple of oversubscription ({oversubscription})"
            ));
        }
        let tor_up = hosts_per_tor / oversubscription;
        let t = |down, up| TierSpec {
            downlink_rate_bps: rate_bps,
            downlink_latency: latency,
            switch_latency,
            radix_down: down,
            radix_up: up,
            bundle: 1,
        };
        match tiers {
            2 => {
                let tors = hosts / hosts_per_tor;
                Ok(FatTreeSpec {
                    hosts,
                    pod_size: hosts,
                    tiers: vec![t(hosts_per_tor, tor_up), t(tors, 0)],
                })
            }
            3 => {
                if pod_size == 0
                    || !hosts.is_multiple_of(pod_size)
                    || !pod_size.is_multiple_of(hosts_per_tor)
                {
                    return bad(format!(
                        "pod_size ({pod_size}) must divide hosts ({hosts}) and be a multiple of hosts_per_tor ({hosts_per_tor})"
                    ));
                }
                let tors_per_pod = pod_size / hosts_per_tor;
                let pods = hosts / pod_size;
                // Aggs per pod = ToR uplinks; each Agg has one link to every ToR of its pod and
                // as many uplinks as downlinks (no oversubscription above the ToRs).
                Ok(FatTreeSpec {
                    hosts,
                    pod_size,
                    tiers: vec![
                        t(hosts_per_tor, tor_up),
                        t(tors_per_pod, tors_per_pod),
                        t(pods, 0),
                    ],
                })
            }
            _ => bad(format!("tiers must be 2 or 3, not {tiers}")),
        }
    }

    /// Builds the topology, checking that the radices fit together.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let n = self.hosts;
        let tiers = self.tiers.len() as u32;
        if !(2..=3).contains(&tiers) {
            return bad(format!("a fat tree has 2 or 3 tiers, not {tiers}"));
        }
        let t0 = &self.tiers[0];
        let t1 = &self.tiers[1];
        if t0.radix_down == 0 || !n.is_multiple_of(t0.radix_down) {
            return bad(format!(
                "hosts ({n}) must be a multiple of the ToR Radix_Down ({})",
                t0.radix_down
            ));
        }
        if t0.radix_up == 0 {
            return bad("ToRs need at least one uplink (Radix_Up of tier 0)");
        }
        let pod = if tiers == 2 { n } else { self.pod_size };
        if pod == 0 || !n.is_multiple_of(pod) || pod % t0.radix_down != 0 {
            return bad(format!(
                "pod size ({pod}) must divide hosts ({n}) and be a multiple of hosts per ToR ({})",
                t0.radix_down
            ));
        }
        let pods = n / pod;
        let tors = n / t0.radix_down;
        let tors_per_pod = pod / t0.radix_down;
        let bundle1 = t1.bundle.max(1);
        if !t0.radix_up.is_multiple_of(bundle1) {
            return bad(format!(
                "ToR Radix_Up ({}) must be a multiple of the tier-1 Bundle ({bundle1})",
                t0.radix_up
            ));
        }
        let aggs_per_pod = t0.radix_up / bundle1;
        {
            // Sizes in u64 first: the u32 products below must not wrap.
            let aggs = u64::from(aggs_per_pod) * u64::from(pods);
            let upper = if tiers == 3 {
                aggs * u64::from(t1.radix_up)
            } else {
                0
            };
            let links = 2 * (u64::from(n) + u64::from(tors) * u64::from(t0.radix_up) + upper);
            let cores = if tiers == 3 { upper } else { 0 };
            check_size(u64::from(n), u64::from(tors) + aggs + cores, links)?;
        }
        if t1.radix_down != tors_per_pod * bundle1 {
            return bad(format!(
                "tier-1 Radix_Down ({}) must equal ToRs per pod ({tors_per_pod}) x Bundle ({bundle1})",
                t1.radix_down
            ));
        }
        let aggs = aggs_per_pod * pods;
        let (cores, core_links_per_agg, bundle2) = if tiers == 3 {
            let t2 = &self.tiers[2];
            let b2 = t2.bundle.max(1);
            if t1.radix_up == 0 || !t1.radix_up.is_multiple_of(b2) {
                return bad(format!(
                    "tier-1 Radix_Up ({}) must be a positive multiple of the tier-2 Bundle ({b2})",
                    t1.radix_up
                ));
            }
            let per_agg = t1.radix_up / b2;
            let cores = aggs_per_pod * per_agg;
            if t2.radix_down != pods * b2 {
                return bad(format!(
                    "tier-2 Radix_Down ({}) must equal pods ({pods}) x Bundle ({b2})",
                    t2.radix_down
                ));
            }
            (cores, per_agg, b2)
        } else {
            (0, 0, 1)
        };

        let mut t = Topology::empty(n, Family::FatTree { tiers });
        for i in 0..tors {
            t.add_switch_in("tor", i, 1, i / tors_per_pod, t0.switch_latency);
        }
        for i in 0..aggs {
            t.add_switch_in("agg", i, 2, i / aggs_per_pod, t1.switch_latency);
        }
        for i in 0..cores {
            t.add_switch("core", i, 3, self.tiers[2].switch_latency);
        }
        let tor_node = |x: u32| n + x;
        let agg_node = |a: u32| n + tors + a;
        let core_node = |c: u32| n + tors + aggs + c;
        let link = |t: &mut Topology, from, to, tier: &TierSpec| {
            t.add_link(from, to, tier.downlink_rate_bps, tier.downlink_latency)
        };
        for h in 0..n {
            let tor = tor_node(h / t0.radix_down);
            link(&mut t, h, tor, t0);
            link(&mut t, tor, h, t0);
        }
        for x in 0..tors {
            let p = x / tors_per_pod;
            for j in 0..aggs_per_pod {
                let a = p * aggs_per_pod + j;
                for _ in 0..bundle1 {
                    link(&mut t, tor_node(x), agg_node(a), t1);
                    link(&mut t, agg_node(a), tor_node(x), t1);
                }
            }
        }
        if tiers == 3 {
            let t2 = &self.tiers[2];
            for a in 0..aggs {
                let pos = a % aggs_per_pod;
                for l in 0..core_links_per_agg {
                    let c = pos + aggs_per_pod * l;
                    for _ in 0..bundle2 {
                        link(&mut t, agg_node(a), core_node(c), t2);
                        link(&mut t, core_node(c), agg_node(a), t2);
                    }
                }
            }
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    #[test]
    fn two_tier_128() {
        let t = FatTreeSpec::uniform(2, 128, 8, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(t.edge_count(), 16);
        assert_eq!(t.switches.len(), 16 + 8);
        assert_eq!(t.links.len(), 128 * 2 + 16 * 8 * 2);
        // Inter-ToR: 8 choices at the ToR, 1 at the spine.
        assert_eq!(t.candidates(0, 64).len(), 8);
        assert_eq!(t.candidates(16, 64).len(), 1);
        assert_eq!(t.first_path(0, 64).len(), 4);
        assert_eq!(t.first_path(0, 1).len(), 2);
    }

    #[test]
    fn three_tier_128_matches_reference_shape() {
        let t = FatTreeSpec::uniform(3, 128, 4, 16, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(
            t.switch_counts(),
            vec![("tor", 32), ("agg", 32), ("core", 16)]
        );
        assert_eq!(t.first_path(0, 64).len(), 6);
        assert_eq!(t.first_path(0, 5).len(), 4);
        // ToR has 4 uplinks, each agg 4 to the cores: 16 inter-pod paths.
        assert_eq!(t.candidates(0, 64).len(), 4);
        let agg0 = t.node_by_name("agg0").unwrap() - t.hosts;
        assert_eq!(t.candidates(agg0, 64).len(), 4);
        // Core c links to the agg at position c mod 4 of every pod.
        let core5 = t.node_by_name("core5").unwrap();
        let agg_pod2 = t.node_by_name("agg9").unwrap();
        assert_eq!(t.links_between(core5, agg_pod2).len(), 1);
        assert_eq!(t.links_by_name("tor0->agg0").unwrap().len(), 1);
        assert!(t.links_by_name("tor0->agg5").is_err());
    }

    #[test]
    fn every_pair_reachable() {
        let t = FatTreeSpec::uniform(3, 64, 4, 16, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        for s in 0..64 {
            for d in 0..64 {
                if s != d {
                    let p = t.first_path(s, d);
                    assert_eq!(t.links[*p.last().unwrap() as usize].to, d);
                }
            }
        }
    }
}

/// `[topology] type = "fat_tree"`: a uniform 2- or 3-tier fat tree.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
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

impl TopologyBuilder for FatTreeConfig {
    fn build(&self, _files: &FileReader) -> Result<Topology, BuildError> {
        if self.tiers == 3 && self.pod_size.is_none() {
            return Err(BuildError::at("pod_size", "required for a 3-tier fat tree"));
        }
        let spec = FatTreeSpec::uniform(
            self.tiers,
            self.hosts,
            self.hosts_per_tor,
            self.pod_size.unwrap_or(self.hosts),
            self.oversubscription,
            positive_rate(self.link_speed, "link_speed")?,
            positive(self.link_latency, "link_latency")?,
            self.switch_latency.0,
        )?;
        Ok(spec.build()?)
    }
}
