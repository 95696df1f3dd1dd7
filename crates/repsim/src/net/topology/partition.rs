//! Splitting a network into partitions that follow its structure, for running one simulation
//! on several threads.
//!
//! A partition is a set of whole nodes. Under the default rule ([`PartitionRule::Structure`])
//! a host always goes with the switch its first NIC attaches to, and where the family groups
//! its switches (the pods of a 3-tier fat tree, the
//! groups of a Dragonfly, the clusters of a rail fabric) a group stays together, so that the
//! busiest links (host to edge switch, inside a pod or group) never cross partitions. Switches
//! above the groups (cores, spines, rails) and the edge switches of an ungrouped fabric (2-tier
//! fat tree, leaf-spine) are units of their own. Units are handed out longest first (by ports,
//! which is what events scale with) to the partition with the fewest ports so far. A switch
//! scheme whose edge switches share state asks for [`PartitionRule::EdgesTogether`] instead:
//! every edge switch in one unit, each edge switch's hosts in another. Hosts that must share
//! a partition (those an instant `.cm` trigger joins, which acts on all of them in zero time)
//! are handed in as groups: the units of a group's hosts merge into one before units are
//! handed out.
//!
//! The partitioning is a pure function of the topology and the partition count, so it is the
//! same on every machine. What crosses between partitions travels on links, and a packet sent
//! on a link reaches its far end no earlier than the link's latency later: the smallest latency
//! of a crossing link is the *lookahead*, the window a partition can run ahead without hearing
//! from the others.
use super::{Topology, NONE};
use crate::engine::disjoint::DisjointSets;
use crate::engine::Time;

/// A split of a topology's nodes into partitions (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// Partition of every node (hosts first, then switches, as node ids run).
    pub of_node: Vec<u32>,
    /// Partitions made: the count asked for, or fewer when the network has fewer units.
    pub parts: u32,
    /// Ports (directed links out of its nodes) of each partition.
    pub ports: Vec<u64>,
    /// Directed links whose two ends lie in different partitions.
    pub crossing_links: u64,
    /// Smallest latency of a crossing link; `None` when no link crosses (one partition).
    pub lookahead: Option<Time>,
}

impl Partitioning {
    /// Hosts in each partition.
    pub fn hosts(&self, topo: &Topology) -> Vec<u64> {
        self.count_nodes(0..topo.hosts)
    }

    /// Switches in each partition.
    pub fn switches(&self, topo: &Topology) -> Vec<u64> {
        self.count_nodes(topo.hosts..topo.nodes())
    }

    fn count_nodes(&self, nodes: std::ops::Range<u32>) -> Vec<u64> {
        let mut count = vec![0; self.parts as usize];
        for n in nodes {
            count[self.of_node[n as usize] as usize] += 1;
        }
        count
    }

    /// The busiest partition's ports over the mean (1.0: perfectly balanced).
    pub fn imbalance(&self) -> f64 {
        let total: u64 = self.ports.iter().sum();
        let max = self.ports.iter().copied().max().unwrap_or(0);
        if total == 0 {
            return 1.0;
        }
        max as f64 * self.parts as f64 / total as f64
    }
}

/// Which nodes a split keeps together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PartitionRule {
    /// The network's structure (see the module docs): a host with its edge switch, a group's
    /// switches together.
    #[default]
    Structure,
    /// Every edge switch (one a host's first NIC attaches to) in one partition, for a switch
    /// scheme whose edge switches share state without packets
    /// ([`crate::routing::RoutingScheme::edges_share_state`]); the hosts of each edge switch
    /// form a unit of their own, and every other switch is a unit alone, so that the hosts and
    /// the upper tiers spread over the other partitions.
    EdgesTogether,
}

impl Topology {
    /// Splits the network into at most `parts` partitions (at least one) that follow its
    /// structure (see [`crate::net::topology::partition`]).
    pub fn partition(&self, parts: u32) -> Partitioning {
        self.partition_by(parts, PartitionRule::Structure)
    }

    /// Splits the network into at most `parts` partitions (at least one) under `rule`.
    pub fn partition_by(&self, parts: u32, rule: PartitionRule) -> Partitioning {
        self.partition_joining(parts, rule, &[])
    }

    /// Splits the network into at most `parts` partitions (at least one) under `rule`, with
    /// the hosts of each group in `together` in one partition (each with what its unit holds
    /// under `rule`).
    pub fn partition_joining(
        &self,
        parts: u32,
        rule: PartitionRule,
        together: &[Vec<u32>],
    ) -> Partitioning {
        let mut unit_of_node = match rule {
            PartitionRule::Structure => self.structure_units(),
            PartitionRule::EdgesTogether => self.edges_together_units(),
        };
        if !together.is_empty() {
            unit_of_node = merge_units(unit_of_node, together);
        }
        let units = unit_of_node.iter().max().map_or(0, |&u| u + 1);
        let mut unit_ports = vec![0u64; units as usize];
        for n in 0..self.nodes() {
            unit_ports[unit_of_node[n as usize] as usize] += self.out_of(n).len() as u64;
        }
        // Longest first, each to the lightest partition; ties by index, so the result is a
        // function of the topology alone.
        let parts = parts.clamp(1, units.max(1));
        let mut order: Vec<u32> = (0..units).collect();
        order.sort_by_key(|&u| (std::cmp::Reverse(unit_ports[u as usize]), u));
        let mut ports = vec![0u64; parts as usize];
        let mut part_of_unit = vec![0u32; units as usize];
        for u in order {
            let lightest = (0..parts)
                .min_by_key(|&p| (ports[p as usize], p))
                .expect("at least one partition");
            part_of_unit[u as usize] = lightest;
            ports[lightest as usize] += unit_ports[u as usize];
        }
        let of_node: Vec<u32> = unit_of_node
            .iter()
            .map(|&u| part_of_unit[u as usize])
            .collect();
        let mut crossing_links = 0;
        let mut lookahead: Option<Time> = None;
        for l in &self.links {
            if of_node[l.from as usize] != of_node[l.to as usize] {
                crossing_links += 1;
                lookahead = Some(lookahead.map_or(l.latency, |t| t.min(l.latency)));
            }
        }
        Partitioning {
            of_node,
            parts,
            ports,
            crossing_links,
            lookahead,
        }
    }

    /// The unit (a set of nodes that stays in one partition) of every node under
    /// [`PartitionRule::Structure`], numbered densely in switch order: the switches of one
    /// group together where the edge switches fall in more than one group, every other switch
    /// alone, and each host with its edge switch.
    fn structure_units(&self) -> Vec<u32> {
        let mut edge_groups = self
            .switches
            .iter()
            .filter(|s| s.level == 1 && s.group != NONE)
            .map(|s| s.group);
        let grouped = match edge_groups.next() {
            Some(first) => edge_groups.any(|g| g != first),
            None => false,
        };
        let mut unit_of_group: Vec<u32> = Vec::new();
        let mut next = 0;
        let mut of_switch = Vec::with_capacity(self.switches.len());
        for s in &self.switches {
            let unit = if grouped && s.group != NONE {
                let g = s.group as usize;
                if unit_of_group.len() <= g {
                    unit_of_group.resize(g + 1, NONE);
                }
                if unit_of_group[g] == NONE {
                    unit_of_group[g] = next;
                    next += 1;
                }
                unit_of_group[g]
            } else {
                next += 1;
                next - 1
            };
            of_switch.push(unit);
        }
        (self.host_edge.iter().map(|&e| of_switch[e as usize]))
            .chain(of_switch.iter().copied())
            .collect()
    }

    /// The unit of every node under [`PartitionRule::EdgesTogether`]: unit 0 holds every
    /// edge switch, then one unit per edge switch's hosts (in edge order), then every other
    /// switch alone.
    fn edges_together_units(&self) -> Vec<u32> {
        let edges = self.edge_index.iter().filter(|&&e| e != NONE).count() as u32;
        let mut next = 1 + edges;
        let hosts = (self.host_edge.iter()).map(|&e| 1 + self.edge_index[e as usize]);
        let switches: Vec<u32> = (self.edge_index.iter())
            .map(|&e| {
                if e != NONE {
                    0
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect();
        hosts.chain(switches).collect()
    }
}

/// `unit_of_node` with the units of each group's hosts merged into one, renumbered densely in
/// order of first appearance (so the result is a function of its inputs alone).
fn merge_units(unit_of_node: Vec<u32>, together: &[Vec<u32>]) -> Vec<u32> {
    let units = unit_of_node.iter().max().map_or(0, |&u| u + 1) as usize;
    let mut sets = DisjointSets::new(units);
    for group in together {
        let mut hosts = group.iter().map(|&h| unit_of_node[h as usize]);
        if let Some(first) = hosts.next() {
            hosts.for_each(|u| sets.join(first, u));
        }
    }
    let mut dense = vec![NONE; units];
    let mut next = 0;
    unit_of_node
        .iter()
        .map(|&u| {
            let r = sets.root(u) as usize;
            if dense[r] == NONE {
                dense[r] = next;
                next += 1;
            }
            dense[r]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::topology::{DragonflySpec, FatTreeSpec, LeafSpineSpec, RailSpec};

    fn fat_tree(tiers: u32, hosts: u32, pod: u32) -> Topology {
        FatTreeSpec::uniform(tiers, hosts, 8, pod, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap()
    }

    fn every_node_once(topo: &Topology, p: &Partitioning) {
        assert_eq!(p.of_node.len(), topo.nodes() as usize);
        assert!(p.of_node.iter().all(|&x| x < p.parts));
        assert_eq!(
            p.ports.iter().sum::<u64>(),
            topo.links.len() as u64,
            "every port in one partition"
        );
        assert!(
            p.ports.iter().all(|&x| x > 0),
            "no empty partition: {:?}",
            p.ports
        );
    }

    fn hosts_stay_with_their_edge(topo: &Topology, p: &Partitioning) {
        for h in 0..topo.hosts {
            let edge = topo.switch_node(topo.host_edge[h as usize]);
            assert_eq!(p.of_node[h as usize], p.of_node[edge as usize], "host {h}");
        }
    }

    #[test]
    fn a_three_tier_fat_tree_splits_by_pod() {
        let topo = fat_tree(3, 128, 32);
        let p = topo.partition(4);
        every_node_once(&topo, &p);
        hosts_stay_with_their_edge(&topo, &p);
        for s in &topo.switches {
            if s.level < 3 {
                let first_of_pod = topo
                    .switches
                    .iter()
                    .position(|t| t.level == s.level && t.group == s.group)
                    .unwrap() as u32;
                let me = topo
                    .switches
                    .iter()
                    .position(|t| std::ptr::eq(t, s))
                    .unwrap() as u32;
                assert_eq!(
                    p.of_node[topo.switch_node(me) as usize],
                    p.of_node[topo.switch_node(first_of_pod) as usize],
                    "a pod stays together"
                );
            }
        }
        assert!(p.imbalance() < 1.1, "imbalance {}", p.imbalance());
        assert!(p.lookahead.is_some() && p.crossing_links > 0);
    }

    #[test]
    fn ungrouped_fabrics_split_by_edge_switch_and_spread_the_spines() {
        for topo in [
            fat_tree(2, 1024, 0),
            LeafSpineSpec::at_100g(8, 4, 16).build().unwrap(),
        ] {
            let p = topo.partition(3);
            assert_eq!(p.parts, 3);
            every_node_once(&topo, &p);
            hosts_stay_with_their_edge(&topo, &p);
            assert!(p.imbalance() < 1.2, "imbalance {}", p.imbalance());
        }
    }

    #[test]
    fn dragonfly_groups_and_rail_clusters_stay_whole() {
        for topo in [
            DragonflySpec::example().build().unwrap(),
            RailSpec::example().build().unwrap(),
        ] {
            let p = topo.partition(2);
            every_node_once(&topo, &p);
            hosts_stay_with_their_edge(&topo, &p);
            for (i, s) in topo.switches.iter().enumerate() {
                for (j, t) in topo.switches.iter().enumerate() {
                    if s.group != NONE && s.group == t.group {
                        assert_eq!(
                            p.of_node[topo.switch_node(i as u32) as usize],
                            p.of_node[topo.switch_node(j as u32) as usize],
                            "group {} split",
                            s.group
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn edges_together_keeps_every_edge_switch_in_one_partition_and_spreads_the_rest() {
        for topo in [
            fat_tree(2, 128, 0),
            LeafSpineSpec::at_100g(8, 4, 16).build().unwrap(),
            DragonflySpec::example().build().unwrap(),
        ] {
            let p = topo.partition_by(3, PartitionRule::EdgesTogether);
            every_node_once(&topo, &p);
            let edge_part = p.of_node[topo.switch_node(topo.edges[0]) as usize];
            for &e in &topo.edges {
                assert_eq!(p.of_node[topo.switch_node(e) as usize], edge_part);
            }
            // The hosts of one edge switch stay together, and some live elsewhere.
            let mut part_of_hosts_at = vec![NONE; topo.switches.len()];
            for h in 0..topo.hosts {
                let at = &mut part_of_hosts_at[topo.host_edge[h as usize] as usize];
                if *at == NONE {
                    *at = p.of_node[h as usize];
                }
                assert_eq!(p.of_node[h as usize], *at, "host {h}");
            }
            assert!((0..topo.hosts).any(|h| p.of_node[h as usize] != edge_part));
            assert_eq!(p, topo.partition_by(3, PartitionRule::EdgesTogether));
        }
        let topo = fat_tree(2, 32, 0);
        assert_eq!(
            topo.partition_by(1, PartitionRule::EdgesTogether)
                .crossing_links,
            0
        );
    }

    #[test]
    fn one_partition_has_no_crossing_and_too_many_are_capped() {
        let topo = fat_tree(2, 32, 0);
        let one = topo.partition(1);
        assert_eq!((one.parts, one.crossing_links, one.lookahead), (1, 0, None));
        assert!(one.of_node.iter().all(|&x| x == 0));
        let many = topo.partition(10_000);
        assert!(many.parts < 10_000 && many.parts > 1);
        every_node_once(&topo, &many);
        assert_eq!(topo.partition(0).parts, 1, "zero means one");
    }

    #[test]
    fn hosts_held_together_share_a_partition_with_their_units() {
        // A 2-tier fat tree: each edge switch with its hosts is a unit. Hosts 0 and 31 sit
        // under different edge switches; joined, both edge units fall in one partition.
        let topo = fat_tree(2, 32, 0);
        let together = vec![vec![0, 31], vec![8, 16, 24]];
        for rule in [PartitionRule::Structure, PartitionRule::EdgesTogether] {
            let p = topo.partition_joining(4, rule, &together);
            every_node_once(&topo, &p);
            for group in &together {
                let first = p.of_node[group[0] as usize];
                assert!(
                    group.iter().all(|&h| p.of_node[h as usize] == first),
                    "{rule:?}"
                );
            }
            if rule == PartitionRule::Structure {
                hosts_stay_with_their_edge(&topo, &p);
            }
            assert!(p.parts > 1, "the rest still splits");
            assert_eq!(p, topo.partition_joining(4, rule, &together));
            let reversed: Vec<Vec<u32>> = together
                .iter()
                .rev()
                .map(|g| g.iter().rev().copied().collect())
                .collect();
            assert_eq!(p, topo.partition_joining(4, rule, &reversed), "order-free");
        }
        assert_eq!(
            topo.partition_joining(4, PartitionRule::Structure, &[]),
            topo.partition(4)
        );
    }

    #[test]
    fn the_same_topology_always_splits_alike() {
        let topo = fat_tree(3, 128, 32);
        assert_eq!(topo.partition(5), topo.partition(5));
    }
}
