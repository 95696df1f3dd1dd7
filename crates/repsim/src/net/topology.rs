//! Topologies: which nodes exist, which directed links join them, and how switches route.
//!
//! Nodes are numbered hosts first (`0..hosts`), then switches. Every directed link has exactly
//! one egress port (queue) at its upstream end, so "link" and "port" share one index. Routing is a
//! table per (switch, destination ToR) of equal-cost port groups; a switch that is the
//! destination's ToR sends straight down to the host.
use std::fmt;

use crate::engine::Time;

/// Tier of a switch in a folded Clos.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Top of rack (leaf): hosts attach here.
    Tor,
    /// Aggregation (in a 2-tier tree: spine).
    Agg,
    /// Core (3-tier trees only).
    Core,
}

impl Tier {
    /// Name prefix used in element names (`tor3`, `agg0`, `core12`).
    pub fn prefix(self) -> &'static str {
        match self {
            Tier::Tor => "tor",
            Tier::Agg => "agg",
            Tier::Core => "core",
        }
    }
}

/// One switch.
#[derive(Clone, Debug)]
pub struct Switch {
    /// Its tier.
    pub tier: Tier,
    /// Index within its tier (tor 0.., agg 0.., core 0..).
    pub index_in_tier: u32,
    /// Forwarding latency from ingress to egress queue.
    pub latency: Time,
}

/// One directed link and the egress queue feeding it.
#[derive(Clone, Debug)]
pub struct Link {
    /// Upstream node (host or switch id).
    pub from: u32,
    /// Downstream node.
    pub to: u32,
    /// Bit rate.
    pub rate_bps: u64,
    /// Propagation latency.
    pub latency: Time,
    /// Multiplier applied to the queue's buffer and ECN thresholds (1.0 normally).
    pub buffer_scale: f64,
}

/// Equal-cost routing tables.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// (start, len) of each port group in `group_ports`.
    pub groups: Vec<(u32, u32)>,
    /// Ports of all groups, concatenated.
    pub group_ports: Vec<u32>,
    /// Group index for (switch, destination ToR): `table[switch * tors + tor]`.
    pub table: Vec<u32>,
}

/// A complete network: nodes, links and routes.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Number of hosts (node ids `0..hosts`).
    pub hosts: u32,
    /// Switches (node id = `hosts + index`).
    pub switches: Vec<Switch>,
    /// Directed links (index = port id).
    pub links: Vec<Link>,
    /// Uplink port of each host.
    pub host_uplink: Vec<u32>,
    /// ToR switch index (0..tors) of each host.
    pub host_tor: Vec<u32>,
    /// Port from its ToR down to each host.
    pub host_downlink: Vec<u32>,
    /// Number of ToRs; ToRs are switches `0..tors`.
    pub tors: u32,
    /// Hosts per pod (3-tier) or all hosts (2-tier).
    pub pod_size: u32,
    /// Number of tiers (2 or 3).
    pub tiers: u32,
    /// Routing tables.
    pub routes: Routes,
}

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

/// Why a topology description cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TopologyError(pub String);

fn bad<T>(msg: impl Into<String>) -> Result<T, TopologyError> {
    Err(TopologyError(msg.into()))
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

        let mut switches = Vec::with_capacity((tors + aggs + cores) as usize);
        for i in 0..tors {
            switches.push(Switch {
                tier: Tier::Tor,
                index_in_tier: i,
                latency: t0.switch_latency,
            });
        }
        for i in 0..aggs {
            switches.push(Switch {
                tier: Tier::Agg,
                index_in_tier: i,
                latency: t1.switch_latency,
            });
        }
        for i in 0..cores {
            switches.push(Switch {
                tier: Tier::Core,
                index_in_tier: i,
                latency: self.tiers[2].switch_latency,
            });
        }
        let tor_node = |t: u32| n + t;
        let agg_node = |a: u32| n + tors + a;
        let core_node = |c: u32| n + tors + aggs + c;
        let mut links = Vec::new();
        let add = |links: &mut Vec<Link>, from, to, tier: &TierSpec| {
            links.push(Link {
                from,
                to,
                rate_bps: tier.downlink_rate_bps,
                latency: tier.downlink_latency,
                buffer_scale: 1.0,
            });
            (links.len() - 1) as u32
        };
        let mut host_uplink = vec![0; n as usize];
        let mut host_downlink = vec![0; n as usize];
        let mut host_tor = vec![0; n as usize];
        for h in 0..n {
            let t = h / t0.radix_down;
            host_tor[h as usize] = t;
            host_uplink[h as usize] = add(&mut links, h, tor_node(t), t0);
            host_downlink[h as usize] = add(&mut links, tor_node(t), h, t0);
        }
        // tor_up[t] = ports from ToR t to its Aggs; agg_down[a][tor-in-pod] = ports to that ToR.
        let mut tor_up: Vec<Vec<u32>> = vec![Vec::new(); tors as usize];
        let mut agg_down: Vec<Vec<Vec<u32>>> =
            vec![vec![Vec::new(); tors_per_pod as usize]; aggs as usize];
        for t in 0..tors {
            let p = t / tors_per_pod;
            for j in 0..aggs_per_pod {
                let a = p * aggs_per_pod + j;
                for _ in 0..bundle1 {
                    tor_up[t as usize].push(add(&mut links, tor_node(t), agg_node(a), t1));
                    agg_down[a as usize][(t % tors_per_pod) as usize].push(add(
                        &mut links,
                        agg_node(a),
                        tor_node(t),
                        t1,
                    ));
                }
            }
        }
        let mut agg_up: Vec<Vec<u32>> = vec![Vec::new(); aggs as usize];
        // core_down[c][pod] = ports from core c down to the Agg of that pod.
        let mut core_down: Vec<Vec<Vec<u32>>> =
            vec![vec![Vec::new(); pods as usize]; cores as usize];
        if tiers == 3 {
            let t2 = &self.tiers[2];
            for a in 0..aggs {
                let p = a / aggs_per_pod;
                let pos = a % aggs_per_pod;
                for l in 0..core_links_per_agg {
                    let c = pos + aggs_per_pod * l;
                    for _ in 0..bundle2 {
                        agg_up[a as usize].push(add(&mut links, agg_node(a), core_node(c), t2));
                        core_down[c as usize][p as usize].push(add(
                            &mut links,
                            core_node(c),
                            agg_node(a),
                            t2,
                        ));
                    }
                }
            }
        }

        // Routing: one group per distinct port list.
        let mut routes = Routes {
            table: vec![u32::MAX; (switches.len() as u32 * tors) as usize],
            ..Default::default()
        };
        let new_group = |routes: &mut Routes, ports: &[u32]| {
            routes
                .groups
                .push((routes.group_ports.len() as u32, ports.len() as u32));
            routes.group_ports.extend_from_slice(ports);
            (routes.groups.len() - 1) as u32
        };
        for t in 0..tors {
            let up = new_group(&mut routes, &tor_up[t as usize]);
            for d in 0..tors {
                if d != t {
                    routes.table[(t * tors + d) as usize] = up;
                }
            }
        }
        for a in 0..aggs {
            let s = tors + a;
            let p = a / aggs_per_pod;
            let down: Vec<u32> = (0..tors_per_pod)
                .map(|i| new_group(&mut routes, &agg_down[a as usize][i as usize]))
                .collect();
            let up = if tiers == 3 {
                Some(new_group(&mut routes, &agg_up[a as usize]))
            } else {
                None
            };
            for d in 0..tors {
                let g = if d / tors_per_pod == p {
                    down[(d % tors_per_pod) as usize]
                } else {
                    up.expect("2-tier has one pod")
                };
                routes.table[(s * tors + d) as usize] = g;
            }
        }
        for c in 0..cores {
            let s = tors + aggs + c;
            let down: Vec<u32> = (0..pods)
                .map(|p| new_group(&mut routes, &core_down[c as usize][p as usize]))
                .collect();
            for d in 0..tors {
                routes.table[(s * tors + d) as usize] = down[(d / tors_per_pod) as usize];
            }
        }
        Ok(Topology {
            hosts: n,
            switches,
            links,
            host_uplink,
            host_tor,
            host_downlink,
            tors,
            pod_size: pod,
            tiers,
            routes,
        })
    }
}

impl Topology {
    /// Node id of switch `s`.
    #[inline]
    pub fn switch_node(&self, s: u32) -> u32 {
        self.hosts + s
    }

    /// Name of a node: `host5`, `tor0`, `agg3`, `core12`.
    pub fn node_name(&self, node: u32) -> String {
        if node < self.hosts {
            format!("host{node}")
        } else {
            let s = &self.switches[(node - self.hosts) as usize];
            format!("{}{}", s.tier.prefix(), s.index_in_tier)
        }
    }

    /// Name of a link: `tor0->agg1`.
    pub fn link_name(&self, link: u32) -> String {
        let l = &self.links[link as usize];
        format!("{}->{}", self.node_name(l.from), self.node_name(l.to))
    }

    /// Resolves a node name (`host3`, `tor0`, `agg1`, `spine1` (= agg1), `core0`).
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        let name = name.trim().to_ascii_lowercase();
        let split = name.find(|c: char| c.is_ascii_digit())?;
        let (prefix, idx) = name.split_at(split);
        let idx: u32 = idx.parse().ok()?;
        let tier = match prefix {
            "host" => return (idx < self.hosts).then_some(idx),
            "tor" | "leaf" => Tier::Tor,
            "agg" | "spine" => Tier::Agg,
            "core" => Tier::Core,
            _ => return None,
        };
        self.switches
            .iter()
            .position(|s| s.tier == tier && s.index_in_tier == idx)
            .map(|s| self.hosts + s as u32)
    }

    /// All links from `from` to `to` (several with bundles).
    pub fn links_between(&self, from: u32, to: u32) -> Vec<u32> {
        (0..self.links.len() as u32)
            .filter(|&l| self.links[l as usize].from == from && self.links[l as usize].to == to)
            .collect()
    }

    /// Resolves `a->b` to the links it names.
    pub fn links_by_name(&self, spec: &str) -> Result<Vec<u32>, TopologyError> {
        let Some((a, b)) = spec.split_once("->") else {
            return bad(format!(
                "'{spec}' is not a link name; write it as 'tor0->agg1'"
            ));
        };
        let from = self.node_by_name(a).ok_or_else(|| {
            TopologyError(format!("no node named '{}' in this topology", a.trim()))
        })?;
        let to = self.node_by_name(b).ok_or_else(|| {
            TopologyError(format!("no node named '{}' in this topology", b.trim()))
        })?;
        let l = self.links_between(from, to);
        if l.is_empty() {
            return bad(format!(
                "'{}' and '{}' are not directly linked",
                a.trim(),
                b.trim()
            ));
        }
        Ok(l)
    }

    /// The candidate egress ports at switch `s` for a packet to host `dst`.
    #[inline]
    pub fn candidates(&self, s: u32, dst: u32) -> &[u32] {
        let tor = self.host_tor[dst as usize];
        if tor == s {
            return std::slice::from_ref(&self.host_downlink[dst as usize]);
        }
        let g = self.routes.table[(s * self.tors + tor) as usize];
        let (start, len) = self.routes.groups[g as usize];
        &self.routes.group_ports[start as usize..(start + len) as usize]
    }

    /// The path (list of links) a packet from `src` to `dst` takes when every switch picks its
    /// first candidate: used to compute unloaded latencies.
    pub fn first_path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut path = vec![self.host_uplink[src as usize]];
        let mut node = self.links[path[0] as usize].to;
        while node != dst {
            let s = node - self.hosts;
            // After routing reconvergence a switch may have no route left.
            let Some(&l) = self.candidates(s, dst).first() else {
                break;
            };
            path.push(l);
            node = self.links[l as usize].to;
            if path.len() > 64 {
                break;
            }
        }
        path
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |t| self.switches.iter().filter(|s| s.tier == t).count();
        write!(
            f,
            "{}-tier fat tree: {} hosts, {} ToRs, {} aggs, {} cores, {} links",
            self.tiers,
            self.hosts,
            count(Tier::Tor),
            count(Tier::Agg),
            count(Tier::Core),
            self.links.len()
        )
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
        assert_eq!(t.tors, 16);
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
        let count = |tier| t.switches.iter().filter(|s| s.tier == tier).count();
        assert_eq!(
            (count(Tier::Tor), count(Tier::Agg), count(Tier::Core)),
            (32, 32, 16)
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
