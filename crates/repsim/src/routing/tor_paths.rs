//! ToR-to-ToR paths for the switch schemes that choose a whole path at the source ToR (LetFlow
//! at the source ToR, CONGA, ConWeave): how many paths join two edge switches, how a path is
//! written into a packet, and how the switches after the source ToR follow it.
//!
//! A path is written as a one-byte *code* with one nibble per tier going up: the source ToR
//! (level 1) forwards on candidate `code & 15`, a level-2 switch (spine, aggregation) on
//! candidate `code >> 4`, each taken modulo the switch's candidate count, so a code always
//! names a shortest-path port even after reconvergence pruned a group. Higher tiers (cores)
//! take their first candidate; in Clos fabrics their group towards a destination pod is a
//! single link. The *index* of a path (`0..count`) numbers the codes of a ToR pair densely,
//! first-hop choice fastest, so per-path tables need `count` entries per pair.
//!
//! The counts come from the first shortest path between the two ToRs: choices at the source
//! ToR times choices at the next switch (each at most [`MAX_CHOICES`]; a group with more
//! ports is reached only through its first 16). Symmetric Clos fabrics have the same counts on
//! every path; asymmetric ones are followed correctly but some paths then share a code.
//!
//! **Explicit routes** ([`TorPaths::for_run`] with `next_hops = "laps-candidates"`): the LAPS
//! experiments give CONGA and ConWeave the same candidate path ids as LAPS (its PIT/PST, up to
//! 8 routes per pair, non-minimal ones included; `peers.md` section 2). A pair's paths are
//! then its candidate routes ([`crate::net::candidates`]) in their order, the code is the
//! route's index, and every switch on the route forwards on the route's link leaving it (a
//! route crosses a switch at most once). A switch off the route (none, unless a scheme moved
//! the packet) falls back to the shortest-path rule.
use crate::engine::Time;
use crate::net::candidate_hops::NextHops;
use crate::net::candidates::candidate_routes;
use crate::net::{Packet, Topology};

/// Most choices one tier of a path code can name.
pub const MAX_CHOICES: u32 = 16;

/// The paths between one ordered pair of edge switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pair {
    /// Choices at the source ToR.
    first: u8,
    /// Choices at the next switch.
    second: u8,
    /// Start of this pair's entries in per-path tables.
    offset: u32,
    /// One-way propagation delay from ToR to ToR along the first shortest path.
    one_way: Time,
}

/// Every ToR pair's paths.
#[derive(Clone, Debug)]
pub struct TorPaths {
    edges: u32,
    pairs: Vec<Pair>,
    slots: usize,
    /// Explicit routes: per path slot, its range in `hops` (empty: shortest-path codes).
    routes: Vec<(u32, u32)>,
    /// Explicit routes: (switch node, link it sends on) for every switch of every route.
    hops: Vec<(u32, u32)>,
}

impl TorPaths {
    /// The paths a run's switch scheme chooses among: the shortest ToR-to-ToR paths, or the
    /// LAPS candidate routes when the run's next hops are the candidates' (module docs).
    pub fn for_run(topo: &Topology, next_hops: NextHops) -> Self {
        match next_hops {
            NextHops::Shortest => Self::new(topo),
            NextHops::CandidateRoutes => Self::candidates(topo),
        }
    }

    /// The paths of a network's edge switches, from its forwarding tables.
    pub fn new(topo: &Topology) -> Self {
        let edges = topo.edge_count();
        let mut pairs = Vec::with_capacity((edges * edges) as usize);
        let mut offset = 0u32;
        for a in 0..edges {
            for b in 0..edges {
                let pair = Self::measure(topo, topo.edges[a as usize], b, offset);
                offset += pair.first as u32 * pair.second as u32;
                pairs.push(pair);
            }
        }
        TorPaths {
            edges,
            pairs,
            slots: offset as usize,
            routes: Vec::new(),
            hops: Vec::new(),
        }
    }

    /// Every ToR pair's candidate routes (those of the first host of each edge switch: the
    /// routes between two edge switches do not depend on which of their hosts talk).
    pub fn candidates(topo: &Topology) -> Self {
        let edges = topo.edge_count();
        let mut first_host = vec![u32::MAX; edges as usize];
        for h in (0..topo.hosts).rev() {
            first_host[edge_of_host(topo, h) as usize] = h;
        }
        let mut table = TorPaths {
            edges,
            pairs: Vec::with_capacity((edges * edges) as usize),
            slots: 0,
            routes: Vec::new(),
            hops: Vec::new(),
        };
        for a in 0..edges {
            for b in 0..edges {
                let offset = table.routes.len() as u32;
                let shortest = Self::measure(topo, topo.edges[a as usize], b, offset);
                let (src, dst) = (first_host[a as usize], first_host[b as usize]);
                let routes = if a != b && src != u32::MAX && dst != u32::MAX {
                    // At most 8 (the LAPS sets): a code's low nibble names any of them.
                    candidate_routes(topo, src, dst, 8)
                } else {
                    Vec::new()
                };
                for route in &routes {
                    let start = table.hops.len() as u32;
                    // The links leaving a switch, but the last (the destination ToR sends on
                    // the real host's downlink).
                    let inner = &route[1..route.len() - 1];
                    table
                        .hops
                        .extend(inner.iter().map(|&l| (topo.links[l as usize].from, l)));
                    table.routes.push((start, table.hops.len() as u32 - start));
                }
                if routes.is_empty() {
                    table.routes.push((table.hops.len() as u32, 0));
                }
                table.pairs.push(Pair {
                    first: routes.len().max(1) as u8,
                    second: 1,
                    offset,
                    one_way: shortest.one_way,
                });
            }
        }
        table.slots = table.routes.len();
        table
    }

    /// True when the paths are explicit routes (the LAPS candidates).
    pub fn explicit(&self) -> bool {
        !self.routes.is_empty()
    }

    fn measure(topo: &Topology, src: u32, dst_edge: u32, offset: u32) -> Pair {
        let choices = |s: u32| (topo.routes.group(s, dst_edge).len() as u32).min(MAX_CHOICES);
        let first_group = topo.routes.group(src, dst_edge);
        let Some(&first_port) = first_group.first() else {
            return Pair {
                first: 1,
                second: 1,
                offset,
                one_way: 0,
            };
        };
        let next = topo.links[first_port as usize].to;
        let second = match next.checked_sub(topo.hosts) {
            Some(s) if s != topo.edges[dst_edge as usize] => choices(s).max(1),
            _ => 1,
        };
        // Propagation along first candidates until the destination ToR.
        let target = topo.switch_node(topo.edges[dst_edge as usize]);
        let mut one_way = 0;
        let mut node = topo.switch_node(src);
        for _ in 0..topo.nodes() {
            if node == target {
                break;
            }
            let Some(&port) = topo.routes.group(node - topo.hosts, dst_edge).first() else {
                break;
            };
            one_way += topo.links[port as usize].latency;
            node = topo.links[port as usize].to;
            if node < topo.hosts {
                break;
            }
        }
        Pair {
            first: choices(src).max(1) as u8,
            second: second as u8,
            offset,
            one_way,
        }
    }

    /// The pair id of (source edge index, destination edge index).
    #[inline]
    pub fn pair(&self, src_edge: u32, dst_edge: u32) -> u32 {
        src_edge * self.edges + dst_edge
    }

    /// Number of paths of a pair (1 to 256).
    #[inline]
    pub fn count(&self, pair: u32) -> u32 {
        let p = &self.pairs[pair as usize];
        p.first as u32 * p.second as u32
    }

    /// Entry of path `index` of `pair` in a per-path table of [`Self::slots`] entries.
    #[inline]
    pub fn slot(&self, pair: u32, index: u32) -> usize {
        self.pairs[pair as usize].offset as usize + index as usize
    }

    /// Size of a table with one entry per path of every pair.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The code of path `index` of `pair`.
    #[inline]
    pub fn code(&self, pair: u32, index: u32) -> u8 {
        let first = self.pairs[pair as usize].first as u32;
        ((index % first) | ((index / first) << 4)) as u8
    }

    /// The index of a path code of `pair` (codes out of range map into it).
    #[inline]
    pub fn index(&self, pair: u32, code: u8) -> u32 {
        let p = &self.pairs[pair as usize];
        let low = (code & 15) as u32 % p.first as u32;
        let high = (code >> 4) as u32 % p.second as u32;
        low + high * p.first as u32
    }

    /// Round-trip propagation delay between the pair's ToRs along a shortest path (twice the
    /// one-way delay).
    pub fn base_rtt(&self, pair: u32) -> Time {
        2 * self.pairs[pair as usize].one_way
    }

    /// The port switch `node` (at `level`) takes for a packet of `pair` carrying path `code`:
    /// the route's link leaving `node` for explicit routes, else the code's choice among
    /// `candidates` (not empty) as [`follow`].
    #[inline]
    pub fn port(&self, pair: u32, code: u8, level: u8, node: u32, candidates: &[u32]) -> u32 {
        if self.explicit() {
            let (start, len) = self.routes[self.slot(pair, self.index(pair, code))];
            let route = &self.hops[start as usize..(start + len) as usize];
            if let Some(&(_, link)) = route.iter().find(|hop| hop.0 == node) {
                return link;
            }
        }
        follow(code, level, candidates)
    }

    /// The port switch `switch` takes for `pkt`, which its source ToR tagged with a path code
    /// in the low byte of `Packet::scheme` (CONGA, ConWeave).
    #[inline]
    pub fn port_of_tagged(
        &self,
        topo: &Topology,
        switch: u32,
        pkt: &Packet,
        candidates: &[u32],
    ) -> u32 {
        let pair = self.pair(edge_of_host(topo, pkt.src), edge_of_host(topo, pkt.dst));
        let level = topo.switches[switch as usize].level;
        let node = topo.switch_node(switch);
        self.port(pair, pkt.scheme as u8, level, node, candidates)
    }

    /// Whether the source ToR has a choice to make for `pair`: more than one candidate port
    /// (shortest-path codes), or more than one route (explicit routes).
    #[inline]
    pub fn has_choice(&self, pair: u32, candidates: &[u32]) -> bool {
        if self.explicit() {
            self.count(pair) > 1
        } else {
            candidates.len() > 1
        }
    }
}

/// The port a switch at `level` takes for a packet carrying path `code` (`candidates` not
/// empty).
#[inline]
pub fn follow(code: u8, level: u8, candidates: &[u32]) -> u32 {
    let choice = match level {
        0 | 1 => code & 15,
        2 => code >> 4,
        _ => 0,
    };
    candidates[choice as usize % candidates.len()]
}

/// Edge-switch index of the ToR a host's first NIC attaches to.
#[inline]
pub fn edge_of_host(topo: &Topology, host: u32) -> u32 {
    topo.edge_index[topo.host_edge[host as usize] as usize]
}

/// True if packet-arrival link `ingress` comes from a host (the switch is the source ToR).
#[inline]
pub fn from_host(topo: &Topology, ingress: u32) -> bool {
    topo.links[ingress as usize].from < topo.hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::LeafSpineSpec;

    pub(crate) fn leaf_spine(links_per_spine: u32) -> Topology {
        LeafSpineSpec {
            leaves: 4,
            spines: 3,
            hosts_per_leaf: 2,
            links_per_spine,
            host_rate_bps: 100_000_000_000,
            fabric_rate_bps: 100_000_000_000,
            link_latency: US,
            switch_latency: 0,
        }
        .build()
        .expect("a valid fabric")
    }

    #[test]
    fn leaf_spine_paths_are_one_per_uplink() {
        let topo = leaf_spine(2);
        let paths = TorPaths::new(&topo);
        let pair = paths.pair(0, 3);
        // 3 spines x 2 parallel uplinks at the leaf, 2 parallel downlinks at the spine.
        assert_eq!(paths.count(pair), 12);
        assert_eq!(paths.count(paths.pair(1, 1)), 1, "a ToR to itself");
        assert_eq!(paths.base_rtt(pair), 4 * US, "ToR-spine-ToR, both ways");
        for i in 0..12 {
            assert_eq!(paths.index(pair, paths.code(pair, i)), i);
        }
        assert_eq!(paths.slots(), 4 * 3 * 12 + 4);
        assert_eq!(paths.slot(paths.pair(0, 1), 0), 1, "after pair (0, 0)");
        // The code's first nibble picks the uplink, the second the spine's downlink.
        let code = paths.code(pair, 6 + 4);
        assert_eq!(follow(code, 1, &[10, 11, 12, 13, 14, 15]), 14);
        assert_eq!(follow(code, 2, &[20, 21]), 21);
        assert_eq!(follow(code, 3, &[30, 31]), 30);
    }

    #[test]
    fn explicit_routes_are_the_laps_candidates_followed_switch_by_switch() {
        let topo = crate::net::DragonflySpec::example()
            .build()
            .expect("a valid fabric");
        let paths = TorPaths::for_run(&topo, NextHops::CandidateRoutes);
        assert!(paths.explicit());
        let (src, dst) = (0, topo.hosts - 1);
        let (a, b) = (edge_of_host(&topo, src), edge_of_host(&topo, dst));
        let pair = paths.pair(a, b);
        let routes = candidate_routes(&topo, src, dst, 8);
        assert_eq!(paths.count(pair), 8, "minimal + one via each other group");
        assert_eq!(paths.count(paths.pair(a, a)), 1, "a ToR to itself");
        for (index, route) in routes.iter().enumerate() {
            let code = paths.code(pair, index as u32);
            // Each switch of the route sends on the route's next link, whatever the
            // candidates offered (here a port the route never takes).
            for &link in &route[1..route.len() - 1] {
                let node = topo.links[link as usize].from;
                assert_eq!(paths.port(pair, code, 1, node, &[u32::MAX]), link);
            }
        }
        // Off the route, the shortest-path rule.
        assert_eq!(paths.port(pair, 0, 1, u32::MAX, &[7, 9]), 7);
        assert!(paths.has_choice(pair, &[3]), "8 routes, one candidate port");
        assert!(!TorPaths::new(&topo).explicit());
    }
}
