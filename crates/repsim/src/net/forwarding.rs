//! Forwarding tables computed from the topology graph: at every switch, for every destination
//! edge switch, the group of egress ports that lie on a shortest path (ECMP).
//!
//! Shortest means fewest links between switches. In a fat tree that is exactly up-down routing
//! (ToR -> Agg -> Core -> Agg -> ToR), so no family needs rules of its own. Groups list their
//! ports in link order and are interned (one copy per distinct port list). A group is stored
//! as its length followed by its ports, and the table holds where it starts, so a lookup reads
//! the table and then one place (usually one cache line) of the groups: on the 8,192-host
//! step, where these arrays no longer stay in the caches, the separate (start, length) record
//! read in between was a dependent miss of its own on every switch arrival. A group of one
//! port (every way down a tree) is not stored at all: its table entry is the port, so such a
//! lookup reads the table alone (see [`STORED`]). And a switch whose routes towards every
//! other edge switch are one group (a ToR's uplinks) says so once ([`Forwarding::uniform`]), so
//! its lookups do not read its row (both a few percent faster on the scale series; routes are
//! unchanged).
//!
//! After failures, [`reconverge`] prunes the base groups: a port stays when its link is alive
//! and its far end can still reach the destination along the base groups. This models fabrics
//! that withdraw failed next hops from their ECMP groups (BGP or BFD driven) without switching
//! to longer paths; [`reach`] and [`all_connected`] use the same rule, so "connected" means
//! "the switches' routes still lead there".
use std::collections::BTreeMap;

use super::topology::Topology;

/// Marks a table entry that says where its group starts in `group_ports` (the rest of the
/// entry); an entry without it is the group's only port. The 8,192-host step's one-port
/// groups (an aggregation switch's way down to each ToR) are 8,192 of its 8,321, and reading
/// one of them was a cache miss of its own after the table's on most downward switch arrivals
/// (`perf`: 3.7 ns per event there, 0.6 at 1,024 hosts).
pub const STORED: u32 = 1 << 31;

/// [`Forwarding::uniform`] of a switch whose routes differ by destination: a group start no
/// `group_ports` reaches.
pub const BY_DESTINATION: u32 = u32::MAX;

/// ECMP groups per (switch, destination edge switch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forwarding {
    /// Every group of other than one port as its length followed by its ports, concatenated;
    /// the empty group is at 0.
    pub group_ports: Vec<u32>,
    /// The group of (switch `s`, destination edge `e`), `table[s * edges + e]`: where it starts
    /// in `group_ports`, marked [`STORED`], or its only port.
    pub table: Vec<u32>,
    /// Per switch, the table entry that all its routes towards edge switches other than
    /// itself share, or [`BY_DESTINATION`]: a ToR of a healthy tree forwards everything it does not
    /// deliver itself to the same uplinks, and its row of the table (8 cache lines at 8,192
    /// hosts) then need not be read. Filled in when the tables are built.
    pub uniform: Vec<u32>,
    /// Number of stored groups, the empty one included ([`Self::group_count`]).
    groups: u32,
    /// Number of edge switches (the table's row width).
    pub edges: u32,
}

impl Default for Forwarding {
    fn default() -> Self {
        Forwarding {
            group_ports: vec![0],
            table: Vec::new(),
            uniform: Vec::new(),
            groups: 1,
            edges: 0,
        }
    }
}

impl Forwarding {
    /// Ports switch `s` may forward on towards edge switch number `edge` (empty at that switch
    /// itself and where no route is left).
    #[inline]
    pub fn group(&self, s: u32, edge: u32) -> &[u32] {
        self.ports_of(&self.table[(s * self.edges + edge) as usize])
    }

    /// [`Self::group`] towards an edge switch other than `s` itself (whose own entry, the
    /// empty group, is not among those [`Self::uniform`] compares).
    #[inline(always)]
    pub fn group_elsewhere(&self, s: u32, edge: u32) -> &[u32] {
        match self.uniform.get(s as usize) {
            Some(entry) if *entry != BY_DESTINATION => self.ports_of(entry),
            _ => self.group(s, edge),
        }
    }

    /// The ports of the group a table `entry` names (the entry itself when it is the only
    /// one).
    #[inline(always)]
    fn ports_of<'a>(&'a self, entry: &'a u32) -> &'a [u32] {
        if entry & STORED == 0 {
            return std::slice::from_ref(entry);
        }
        let at = (entry & !STORED) as usize;
        let len = self.group_ports[at] as usize;
        &self.group_ports[at + 1..at + 1 + len]
    }

    /// Number of stored port groups (the empty one included; one-port groups live in the
    /// table).
    pub fn group_count(&self) -> usize {
        self.groups as usize
    }
}

/// Builds tables by interning port lists (stored in order of first appearance).
struct Builder {
    out: Forwarding,
    known: BTreeMap<Vec<u32>, u32>,
}

impl Builder {
    fn new(switches: usize, edges: u32) -> Self {
        let mut known = BTreeMap::new();
        known.insert(Vec::new(), 0);
        Builder {
            out: Forwarding {
                table: vec![STORED; switches * edges as usize],
                edges,
                ..Forwarding::default()
            },
            known,
        }
    }

    /// The table entry for `ports`: the port itself if it is the only one, else where the
    /// group starts in `group_ports` (interned if new), marked [`STORED`].
    fn intern(&mut self, ports: &[u32]) -> u32 {
        if let [port] = ports {
            assert!(
                port & STORED == 0,
                "link {port} is past the forwarding table's range"
            );
            return *port;
        }
        if let Some(&at) = self.known.get(ports) {
            return at | STORED;
        }
        let out = &mut self.out;
        let at = out.group_ports.len() as u32;
        assert!(
            at | STORED != BY_DESTINATION,
            "the forwarding groups outgrow their index"
        );
        out.group_ports.push(ports.len() as u32);
        out.group_ports.extend_from_slice(ports);
        out.groups += 1;
        self.known.insert(ports.to_vec(), at);
        at | STORED
    }

    fn set(&mut self, s: u32, edge: u32, ports: &[u32]) {
        let entry = self.intern(ports);
        self.put(s, edge, entry);
    }

    /// Writes the table `entry` of switch `s` towards edge switch number `edge`.
    fn put(&mut self, s: u32, edge: u32, entry: u32) {
        let out = &mut self.out;
        out.table[(s * out.edges + edge) as usize] = entry;
    }

    /// The tables, with [`Forwarding::uniform`] filled in from them.
    fn finish(mut self, topo: &Topology) -> Forwarding {
        let out = &mut self.out;
        let edges = out.edges as usize;
        out.uniform = (0..topo.switches.len())
            .map(|s| {
                // `NONE` for a switch without hosts: past every row, so nothing is left out.
                let own = topo.edge_index[s] as usize;
                let row = &out.table[s * edges..(s + 1) * edges];
                let mut others = (row.iter().enumerate())
                    .filter(|&(e, _)| e != own)
                    .map(|(_, &entry)| entry);
                match others.next() {
                    Some(first) if others.all(|entry| entry == first) => first,
                    _ => BY_DESTINATION,
                }
            })
            .collect();
        self.out
    }
}

/// The live switch-to-switch links, as compressed adjacency lists: where breadth-first
/// searches and next-hop scans over every (switch, edge switch) pair spend their time on large
/// fabrics (131,072 hosts: 8,192 switches x 2,048 edge switches).
struct SwitchGraph {
    /// Switches with a live link into switch `s`: `from[into_start[s]..into_start[s + 1]]`.
    into_start: Vec<u32>,
    from: Vec<u32>,
    /// Live links out of switch `s` to switches, in `Topology::out_of` order, with the switch
    /// they lead to: `out[out_start[s]..out_start[s + 1]]`.
    out_start: Vec<u32>,
    out: Vec<(u32, u32)>,
}

impl SwitchGraph {
    fn new(topo: &Topology, alive: &[bool]) -> Self {
        let n = topo.switches.len();
        let switch_link = |l: u32| {
            let link = &topo.links[l as usize];
            alive[l as usize] && link.from >= topo.hosts && link.to >= topo.hosts
        };
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut out_start = Vec::with_capacity(n + 1);
        let mut out = Vec::new();
        for s in 0..n as u32 {
            out_start.push(out.len() as u32);
            for &l in topo.out_of(topo.switch_node(s)) {
                if switch_link(l) {
                    let to = topo.links[l as usize].to - topo.hosts;
                    out.push((l, to));
                    into[to as usize].push(s);
                }
            }
        }
        out_start.push(out.len() as u32);
        let mut into_start = Vec::with_capacity(n + 1);
        let mut from = Vec::new();
        for list in &into {
            into_start.push(from.len() as u32);
            from.extend_from_slice(list);
        }
        into_start.push(from.len() as u32);
        SwitchGraph {
            into_start,
            from,
            out_start,
            out,
        }
    }

    /// Hop counts from every switch to switch `target` into `dist` (`u32::MAX`: unreachable),
    /// breadth first (`queue` is scratch).
    fn hops_to(&self, target: u32, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        dist[target as usize] = 0;
        queue.clear();
        queue.push(target);
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head] as usize;
            head += 1;
            let (a, b) = (self.into_start[s] as usize, self.into_start[s + 1] as usize);
            for &f in &self.from[a..b] {
                if dist[f as usize] == u32::MAX {
                    dist[f as usize] = dist[s] + 1;
                    queue.push(f);
                }
            }
        }
    }

    /// The links out of `s` to switches one hop closer (by `dist`) than `s`, into `ports`.
    fn closer(&self, s: u32, dist: &[u32], ports: &mut Vec<u32>) {
        let d = dist[s as usize];
        let (a, b) = (
            self.out_start[s as usize] as usize,
            self.out_start[s as usize + 1] as usize,
        );
        ports.clear();
        ports.extend(
            self.out[a..b]
                .iter()
                .filter(|&&(_, to)| dist[to as usize] == d - 1)
                .map(|&(l, _)| l),
        );
    }
}

/// ECMP over shortest paths between switches, using only links marked alive.
pub fn shortest_paths(topo: &Topology, alive: &[bool]) -> Forwarding {
    let graph = SwitchGraph::new(topo, alive);
    let n = topo.switches.len();
    let mut b = Builder::new(n, topo.edge_count());
    let mut dist = vec![u32::MAX; n];
    let mut queue = Vec::with_capacity(n);
    let mut ports = Vec::new();
    // Each switch's latest group: consecutive destinations mostly share it (a ToR's uplinks
    // towards every other pod), and one comparison is cheaper than a search of the index.
    let mut latest: Vec<u32> = vec![STORED; n];
    for (e, &target) in topo.edges.iter().enumerate() {
        graph.hops_to(target, &mut dist, &mut queue);
        for s in 0..n as u32 {
            let d = dist[s as usize];
            if d == 0 || d == u32::MAX {
                continue;
            }
            graph.closer(s, &dist, &mut ports);
            let g = &latest[s as usize];
            let entry = if b.out.ports_of(g) == &ports[..] {
                *g
            } else {
                b.intern(&ports)
            };
            latest[s as usize] = entry;
            b.put(s, e as u32, entry);
        }
    }
    b.finish(topo)
}

/// Next hops from switch `s` towards any switch `target` (shortest paths over every link):
/// for packets addressed to a switch without hosts, which the tables do not cover. Computed on
/// demand (one graph search); empty when unreachable or at the target.
pub fn next_hops_to_switch(topo: &Topology, s: u32, target: u32) -> Vec<u32> {
    let graph = SwitchGraph::new(topo, &vec![true; topo.links.len()]);
    let mut dist = vec![u32::MAX; topo.switches.len()];
    graph.hops_to(target, &mut dist, &mut Vec::new());
    let mut ports = Vec::new();
    let d = dist[s as usize];
    if d != 0 && d != u32::MAX {
        graph.closer(s, &dist, &mut ports);
    }
    ports
}

/// The first pair of edge switches (switch indices) where the first has no route to the
/// second, if any.
pub fn first_disconnected(topo: &Topology, routes: &Forwarding) -> Option<(u32, u32)> {
    for &a in &topo.edges {
        for (e, &b) in topo.edges.iter().enumerate() {
            if a != b && routes.group(a, e as u32).is_empty() {
                return Some((a, b));
            }
        }
    }
    None
}

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const YES: u8 = 2;
const NO: u8 = 3;

/// `reach[e][s]`: switch `s` can reach edge switch number `e` following the `base` groups
/// over links marked alive.
pub fn reach(topo: &Topology, base: &Forwarding, alive: &[bool]) -> Vec<Vec<bool>> {
    let n = topo.switches.len();
    (0..topo.edge_count())
        .map(|e| {
            let mut memo = vec![UNKNOWN; n];
            for s in 0..n as u32 {
                visit(topo, base, alive, e, s, &mut memo);
            }
            memo.into_iter().map(|m| m == YES).collect()
        })
        .collect()
}

fn visit(
    topo: &Topology,
    base: &Forwarding,
    alive: &[bool],
    e: u32,
    s: u32,
    memo: &mut [u8],
) -> bool {
    match memo[s as usize] {
        YES => return true,
        NO | VISITING => return false,
        _ => {}
    }
    if s == topo.edges[e as usize] {
        memo[s as usize] = YES;
        return true;
    }
    memo[s as usize] = VISITING;
    let mut ok = false;
    for &p in base.group(s, e) {
        let to = topo.links[p as usize].to;
        if alive[p as usize]
            && to >= topo.hosts
            && visit(topo, base, alive, e, to - topo.hosts, memo)
        {
            ok = true;
            break;
        }
    }
    memo[s as usize] = if ok { YES } else { NO };
    ok
}

/// True when every edge switch can reach every other one along the `base` routes and every
/// host's NIC link (both directions) is alive.
pub fn all_connected(topo: &Topology, base: &Forwarding, alive: &[bool]) -> bool {
    let hosts_ok = (0..topo.hosts as usize)
        .all(|h| alive[topo.host_uplink[h] as usize] && alive[topo.host_downlink[h] as usize]);
    hosts_ok
        && reach(topo, base, alive)
            .iter()
            .all(|r| topo.edges.iter().all(|&s| r[s as usize]))
}

/// The routes switches use once they have learnt which links are alive: the base groups without
/// dead ports and without next hops that can no longer reach the destination.
pub fn reconverge(topo: &Topology, base: &Forwarding, alive: &[bool]) -> Forwarding {
    let reach = reach(topo, base, alive);
    let mut b = Builder::new(topo.switches.len(), topo.edge_count());
    for s in 0..topo.switches.len() as u32 {
        for e in 0..topo.edge_count() {
            let ports: Vec<u32> = base
                .group(s, e)
                .iter()
                .copied()
                .filter(|&p| {
                    let to = topo.links[p as usize].to;
                    alive[p as usize]
                        && to >= topo.hosts
                        && reach[e as usize][(to - topo.hosts) as usize]
                })
                .collect();
            b.set(s, e, &ports);
        }
    }
    b.finish(topo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::FatTreeSpec;
    use std::collections::VecDeque;

    // The direct search the tables are checked against: breadth first over every link, as
    // the tables were first computed.

    /// Links into every node, in link order (the reverse adjacency).
    fn in_links(topo: &Topology) -> Vec<Vec<u32>> {
        let mut into = vec![Vec::new(); topo.nodes() as usize];
        for (i, l) in topo.links.iter().enumerate() {
            into[l.to as usize].push(i as u32);
        }
        into
    }

    /// Switch-to-switch hop counts from every switch to switch `target`, over links marked alive
    /// (`u32::MAX` where it cannot be reached).
    fn hops_to(topo: &Topology, into: &[Vec<u32>], alive: &[bool], target: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; topo.switches.len()];
        dist[target as usize] = 0;
        let mut queue = VecDeque::from([target]);
        while let Some(s) = queue.pop_front() {
            let node = topo.switch_node(s);
            for &l in &into[node as usize] {
                let from = topo.links[l as usize].from;
                if !alive[l as usize] || from < topo.hosts {
                    continue;
                }
                let f = from - topo.hosts;
                if dist[f as usize] == u32::MAX {
                    dist[f as usize] = dist[s as usize] + 1;
                    queue.push_back(f);
                }
            }
        }
        dist
    }

    /// The live links out of switch `s` (at hop distance `dist[s]` > 0 from some target) to
    /// switches one hop closer to it.
    fn closer_next_hops(topo: &Topology, s: u32, dist: &[u32], alive: &[bool]) -> Vec<u32> {
        let d = dist[s as usize];
        topo.out_of(topo.switch_node(s))
            .iter()
            .copied()
            .filter(|&l| {
                let to = topo.links[l as usize].to;
                alive[l as usize] && to >= topo.hosts && dist[(to - topo.hosts) as usize] == d - 1
            })
            .collect()
    }

    fn tree(hosts: u32, per_tor: u32) -> Topology {
        FatTreeSpec::uniform(2, hosts, per_tor, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap()
    }

    #[test]
    fn dead_uplink_leaves_the_group_and_downstream_is_avoided() {
        let t = tree(16, 4);
        let mut alive = vec![true; t.links.len()];
        let up = t.links_by_name("tor0->agg1").unwrap()[0];
        let down = t.links_by_name("agg2->tor3").unwrap()[0];
        alive[up as usize] = false;
        alive[down as usize] = false;
        let r = reconverge(&t, &t.routes, &alive);
        let mut t2 = t.clone();
        t2.routes = r;
        // ToR 0 towards ToR 1 (host 4): three uplinks left.
        assert_eq!(t2.candidates(0, 4).len(), 3);
        assert!(!t2.candidates(0, 4).contains(&up));
        // ToR 1 towards ToR 3 (host 12): agg2 cannot reach ToR 3 any more.
        let to_agg2 = t.links_by_name("tor1->agg2").unwrap()[0];
        assert_eq!(t2.candidates(1, 12).len(), 3);
        assert!(!t2.candidates(1, 12).contains(&to_agg2));
        assert!(all_connected(&t, &t.routes, &alive));
        // Every uplink of ToR 0 dead: no route left, not connected.
        for a in 0..4 {
            alive[t.links_by_name(&format!("tor0->agg{a}")).unwrap()[0] as usize] = false;
        }
        let r = reconverge(&t, &t.routes, &alive);
        t2.routes = r;
        assert!(t2.candidates(0, 4).is_empty());
        assert!(!all_connected(&t, &t.routes, &alive));
    }

    /// The tables equal a direct per-(switch, destination) search (breadth first over every
    /// link, then the closer live next hops), with and without dead links, and interning
    /// stores each distinct group once, in order of first appearance.
    #[test]
    fn tables_match_a_direct_search() {
        let t = FatTreeSpec::uniform(3, 128, 4, 32, 2, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        let mut alive = vec![true; t.links.len()];
        for (i, a) in alive.iter_mut().enumerate() {
            *a = i % 7 != 3;
        }
        for alive in [vec![true; t.links.len()], alive] {
            let f = shortest_paths(&t, &alive);
            let into = in_links(&t);
            let mut seen = Vec::new();
            for (e, &target) in t.edges.iter().enumerate() {
                let dist = hops_to(&t, &into, &alive, target);
                for s in 0..t.switches.len() as u32 {
                    let d = dist[s as usize];
                    let want = if d == 0 || d == u32::MAX {
                        Vec::new()
                    } else {
                        closer_next_hops(&t, s, &dist, &alive)
                    };
                    assert_eq!(f.group(s, e as u32), &want[..], "switch {s}, edge {e}");
                    if target != s {
                        assert_eq!(f.group_elsewhere(s, e as u32), &want[..], "uniform {s}");
                    }
                    let entry = f.table[s as usize * f.edges as usize + e];
                    assert_eq!(
                        entry & STORED == 0,
                        want.len() == 1,
                        "one-port groups in the table"
                    );
                    let g = entry & !STORED;
                    if entry & STORED != 0 && !seen.contains(&g) && g != 0 {
                        let end = seen
                            .last()
                            .map_or(1, |&l| l + 1 + f.group_ports[l as usize]);
                        assert_eq!(g, end, "groups stored in order of appearance");
                        seen.push(g);
                    }
                }
            }
            assert_eq!(seen.len() + 1, f.group_count());
            let uniform = f.uniform.iter().filter(|&&u| u != BY_DESTINATION).count();
            assert!(uniform > 0, "some switches route everything one way");
        }
    }

    #[test]
    fn shortest_paths_are_up_down_in_a_three_tier_tree() {
        let t = FatTreeSpec::uniform(3, 64, 4, 16, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        // ToR 0 to a ToR of another pod: 4 aggs; each agg 4 cores; a core 1 link down.
        assert_eq!(t.candidates(0, 63).len(), 4);
        let agg0 = t.node_by_name("agg0").unwrap() - t.hosts;
        assert_eq!(t.candidates(agg0, 63).len(), 4);
        let core0 = t.node_by_name("core0").unwrap() - t.hosts;
        assert_eq!(t.candidates(core0, 63).len(), 1);
        // Same pod: up to any agg, then straight down.
        assert_eq!(t.candidates(0, 5).len(), 4);
        assert_eq!(t.candidates(agg0, 5).len(), 1);
        assert_eq!(first_disconnected(&t, &t.routes), None);
        // Routes to a switch without hosts are found on demand.
        let hops = next_hops_to_switch(&t, 0, core0);
        assert_eq!(hops.len(), 1, "only the agg linked to core0");
    }
}
