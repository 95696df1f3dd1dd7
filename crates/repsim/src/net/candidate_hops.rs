//! Hop-by-hop next hops drawn from the candidate routes ([`super::candidates`]), for switches
//! that hash or pick ports per packet (ECMP, PLB, LetFlow) on fabrics where the LAPS
//! experiments give them the LAPS candidate paths instead of the shortest paths (`peers.md`
//! section 2: "candidate ports at a switch = union of next-hop ports of all LAPS candidate
//! paths of this (src IP, dst IP) that pass the switch").
//!
//! **Loop guard (a per-hop rule).** The LAPS code takes the union over every candidate path
//! through the switch, whatever the position; with non-minimal routes a packet can then be
//! sent back towards a switch it already crossed, without bound. Here the union is taken per
//! hop: at its i-th switch a packet may leave by the next link of any candidate route whose
//! i-th switch this is. Each step follows some candidate route one link further at the same
//! position, so a packet always stays on (a suffix of) a candidate route and reaches its
//! destination within as many links as the longest candidate, mixing routes as the unions do.
//!
//! Candidate routes depend only on the two edge switches (hosts of one router share them), so
//! the table is per (source edge, destination edge); the destination's edge switch forwards on
//! the host's own downlink. Lookups scan the pair's few entries (at most one per route and
//! hop); the table exists only in runs that ask for it.
use serde::{Deserialize, Serialize};

use super::candidates::candidate_routes;
use super::topology::Topology;

/// Which next hops hashed and flowlet schemes choose among.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NextHops {
    /// The forwarding table's shortest-path groups (the default).
    #[default]
    Shortest,
    /// The per-hop union of the candidate routes' next links (LAPS's baseline setup; written
    /// `"laps-candidates"`).
    #[serde(rename = "laps-candidates")]
    CandidateRoutes,
}

/// One switch's choices at one position of a pair's candidate routes.
#[derive(Clone, Copy, Debug)]
struct HopChoice {
    /// Switches crossed before this one.
    hop: u8,
    /// Switch node.
    node: u32,
    /// Range in `ports`.
    start: u32,
    len: u32,
}

/// Per (source edge, destination edge): the next links each switch may take at each hop.
#[derive(Clone, Debug)]
pub struct CandidateHops {
    edges: u32,
    /// Per pair, `src_edge * edges + dst_edge`: its range in `choices`.
    pairs: Vec<(u32, u32)>,
    choices: Vec<HopChoice>,
    ports: Vec<u32>,
}

impl CandidateHops {
    /// The table of `topo` (candidate routes of the first host of each edge switch).
    pub fn new(topo: &Topology) -> Self {
        let edges = topo.edge_count();
        let mut first_host = vec![u32::MAX; edges as usize];
        for h in (0..topo.hosts).rev() {
            first_host[topo.edge_index[topo.host_edge[h as usize] as usize] as usize] = h;
        }
        let mut table = CandidateHops {
            edges,
            pairs: Vec::with_capacity((edges * edges) as usize),
            choices: Vec::new(),
            ports: Vec::new(),
        };
        for a in 0..edges as usize {
            for b in 0..edges as usize {
                let start = table.choices.len() as u32;
                let (src, dst) = (first_host[a], first_host[b]);
                if a != b && src != u32::MAX && dst != u32::MAX {
                    table.add_pair(topo, src, dst);
                }
                table
                    .pairs
                    .push((start, table.choices.len() as u32 - start));
            }
        }
        table
    }

    fn add_pair(&mut self, topo: &Topology, src: u32, dst: u32) {
        // Every LAPS set has at most 8 routes; other families get their 8 shortest.
        let routes = candidate_routes(topo, src, dst, 8);
        let longest = routes.iter().map(Vec::len).max().unwrap_or(0);
        // Positions 1 .. len - 1: the links leaving a switch, but not the last one (the
        // destination's edge switch uses the real host's downlink).
        for i in 1..longest.saturating_sub(1) {
            let mut at: Vec<(u32, u32)> = routes
                .iter()
                .filter(|r| i + 1 < r.len())
                .map(|r| (topo.links[r[i] as usize].from, r[i]))
                .collect();
            at.sort_unstable();
            at.dedup();
            for group in at.chunk_by(|x, y| x.0 == y.0) {
                self.choices.push(HopChoice {
                    hop: (i - 1) as u8,
                    node: group[0].0,
                    start: self.ports.len() as u32,
                    len: group.len() as u32,
                });
                self.ports.extend(group.iter().map(|g| g.1));
            }
        }
    }

    /// The links switch node `node` may send a packet from host `src` to host `dst` on when
    /// it is the packet's switch number `hop` (0: the first); `None` when no candidate route
    /// has this switch there (the destination's edge switch, or a packet off the table).
    #[inline]
    pub fn ports(&self, topo: &Topology, src: u32, dst: u32, hop: u8, node: u32) -> Option<&[u32]> {
        let edge = |h: u32| topo.edge_index[topo.host_edge[h as usize] as usize];
        let (start, len) = self.pairs[(edge(src) * self.edges + edge(dst)) as usize];
        self.choices[start as usize..(start + len) as usize]
            .iter()
            .find(|c| c.hop == hop && c.node == node)
            .map(|c| &self.ports[c.start as usize..(c.start + c.len) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{DragonflySpec, RailSpec};

    /// Walks every hop-by-hop choice from `src` to `dst`: every walk reaches `dst` within
    /// `max_links`, and the set of first choices is what the candidate routes start with.
    fn walk_all(t: &Topology, table: &CandidateHops, src: u32, dst: u32, max_links: usize) {
        let mut frontier = vec![(
            t.links[t.host_uplink[src as usize] as usize].to,
            0u8,
            1usize,
        )];
        while let Some((node, hop, links)) = frontier.pop() {
            assert!(links < max_links, "{src}->{dst}: walk too long at {node}");
            if node == t.switch_node(t.host_edge[dst as usize]) {
                continue;
            }
            let ports = table
                .ports(t, src, dst, hop, node)
                .unwrap_or_else(|| panic!("{src}->{dst}: no choice at {node} hop {hop}"));
            assert!(!ports.is_empty());
            for &l in ports {
                assert_eq!(t.links[l as usize].from, node);
                frontier.push((t.links[l as usize].to, hop + 1, links + 1));
            }
        }
    }

    #[test]
    fn rail_choices_are_the_rail_routes_and_always_arrive() {
        let t = RailSpec::example().build().unwrap();
        let table = CandidateHops::new(&t);
        // Host 1 (cluster 0, rail 1) to host 62 (cluster 7, rail 6): at its NIC, its own
        // rail switch or the NVLink switch (to reach the other 7 rails).
        let first = t.switch_node(t.host_edge[1]);
        let ports = table.ports(&t, 1, 62, 0, first).unwrap();
        let mut to: Vec<String> = ports
            .iter()
            .map(|&l| t.node_name(t.links[l as usize].to))
            .collect();
        to.sort();
        assert_eq!(to, ["nvl0", "rail1"]);
        for src in 0..t.hosts {
            for dst in 0..t.hosts {
                if src != dst {
                    walk_all(&t, &table, src, dst, 9);
                }
            }
        }
    }

    #[test]
    fn dragonfly_walks_stay_within_the_longest_candidate() {
        let t = DragonflySpec::example().build().unwrap();
        let table = CandidateHops::new(&t);
        for src in (0..t.hosts).step_by(13) {
            for dst in 0..t.hosts {
                if src != dst {
                    walk_all(&t, &table, src, dst, 8);
                }
            }
        }
        // Inter-group: the source router may use every first link of the 8 routes.
        let first = t.switch_node(t.host_edge[0]);
        let mut firsts: Vec<u32> = candidate_routes(&t, 0, 143, 64)
            .iter()
            .filter(|r| r.len() > 2)
            .map(|r| r[1])
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(table.ports(&t, 0, 143, 0, first).unwrap(), &firsts[..]);
    }
}
