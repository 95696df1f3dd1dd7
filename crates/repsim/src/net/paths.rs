//! Explicit routes: link sequences interned once in a [`PathTable`] and carried by packets as a
//! 32-bit id, plus the k shortest loopless routes between two nodes (Yen's algorithm).
//!
//! A route is a list of links, each starting where the previous one ended, visiting no node
//! twice, with hosts only at its ends. Interning a route also interns its reverse (every link
//! replaced by the other half of its cable, in opposite order) when the cables allow it, so
//! that replies can follow the reverse route.
use std::collections::{BTreeMap, VecDeque};

use super::topology::Topology;
use crate::engine::time::serialization;
use crate::engine::Time;

/// Index of a route in a [`PathTable`].
pub type PathId = u32;

/// "No route" in the table's reverse links.
pub const NO_PATH: PathId = u32::MAX;

/// Interned routes.
#[derive(Clone, Debug, Default)]
pub struct PathTable {
    links: Vec<u32>,
    spans: Vec<(u32, u32)>,
    reverse: Vec<PathId>,
    index: BTreeMap<Vec<u32>, PathId>,
}

impl PathTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `route`, interning it (and its reverse) if new. Errors say why a link list
    /// is not a route of `topo`.
    pub fn intern(&mut self, topo: &Topology, route: &[u32]) -> Result<PathId, String> {
        if let Some(&id) = self.index.get(route) {
            return Ok(id);
        }
        check(topo, route)?;
        let id = self.push(route);
        let back: Option<Vec<u32>> = route.iter().rev().map(|&l| topo.reverse(l)).collect();
        if let Some(back) = back {
            let rid = match self.index.get(&back) {
                Some(&r) => r,
                None if back.as_slice() == route => id,
                None => self.push(&back),
            };
            self.reverse[id as usize] = rid;
            self.reverse[rid as usize] = id;
        }
        Ok(id)
    }

    fn push(&mut self, route: &[u32]) -> PathId {
        let id = self.spans.len() as PathId;
        self.spans
            .push((self.links.len() as u32, route.len() as u32));
        self.links.extend_from_slice(route);
        self.reverse.push(NO_PATH);
        self.index.insert(route.to_vec(), id);
        id
    }

    /// The links of route `id`.
    #[inline]
    pub fn links(&self, id: PathId) -> &[u32] {
        let (start, len) = self.spans[id as usize];
        &self.links[start as usize..(start + len) as usize]
    }

    /// The link at position `hop` of route `id`, if the route is that long.
    #[inline]
    pub fn hop(&self, id: PathId, hop: u8) -> Option<u32> {
        self.links(id).get(hop as usize).copied()
    }

    /// The reverse of route `id` ([`NO_PATH`] when some cable has no way back).
    #[inline]
    pub fn reverse(&self, id: PathId) -> PathId {
        self.reverse[id as usize]
    }

    /// Number of routes interned.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when no route is interned.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Bytes its routes hold on the heap (the interning index counted at its keys' lengths).
    pub fn heap_bytes(&self) -> usize {
        let keys: usize = self.index.keys().map(|k| k.capacity() * 4 + 32).sum();
        self.links.capacity() * 4 + self.spans.capacity() * 8 + self.reverse.capacity() * 4 + keys
    }
}

/// Checks that `route` is a loopless route of `topo` with hosts only at its ends.
pub fn check(topo: &Topology, route: &[u32]) -> Result<(), String> {
    let Some(&first) = route.first() else {
        return Err("a route needs at least one link".into());
    };
    if route.len() > u8::MAX as usize {
        return Err(format!(
            "a route has at most 255 links, not {}",
            route.len()
        ));
    }
    let mut seen = vec![false; topo.nodes() as usize];
    let mut node = topo.links.get(first as usize).ok_or("no such link")?.from;
    seen[node as usize] = true;
    for (i, &l) in route.iter().enumerate() {
        let link = topo
            .links
            .get(l as usize)
            .ok_or_else(|| format!("link {l} does not exist"))?;
        if link.from != node {
            return Err(format!(
                "link {} ({}) does not start where link {} ends",
                i,
                topo.link_name(l),
                i.saturating_sub(1)
            ));
        }
        if i > 0 && node < topo.hosts {
            return Err(format!("the route crosses {}", topo.node_name(node)));
        }
        node = link.to;
        if seen[node as usize] {
            return Err(format!("the route visits {} twice", topo.node_name(node)));
        }
        seen[node as usize] = true;
    }
    Ok(())
}

/// Round-trip time of `route` when unloaded: a `data`-byte packet along it and a `reply`-byte
/// one back over the reverse links (same speeds and latencies), plus every switch's forwarding
/// latency both ways.
pub fn round_trip(topo: &Topology, route: &[u32], data: u32, reply: u32) -> Time {
    route
        .iter()
        .map(|&l| {
            let link = &topo.links[l as usize];
            let switch = topo.switch_at(link.to).map_or(0, |s| s.latency);
            2 * (link.latency + switch)
                + serialization(data, link.rate_bps)
                + serialization(reply, link.rate_bps)
        })
        .sum()
}

/// The shortest route from `from` to `to` avoiding banned nodes and links, never passing
/// through a host; among equally short ones, the first in breadth-first order over link ids.
fn shortest(
    topo: &Topology,
    from: u32,
    to: u32,
    banned_node: &[bool],
    banned_link: &[bool],
) -> Option<Vec<u32>> {
    let mut parent = vec![u32::MAX; topo.nodes() as usize];
    let mut seen = vec![false; topo.nodes() as usize];
    seen[from as usize] = true;
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            let mut route = Vec::new();
            let mut at = to;
            while at != from {
                let l = parent[at as usize];
                route.push(l);
                at = topo.links[l as usize].from;
            }
            route.reverse();
            return Some(route);
        }
        if n != from && n < topo.hosts {
            continue;
        }
        for &l in topo.out_of(n) {
            let next = topo.links[l as usize].to;
            if banned_link[l as usize] || banned_node[next as usize] || seen[next as usize] {
                continue;
            }
            seen[next as usize] = true;
            parent[next as usize] = l;
            queue.push_back(next);
        }
    }
    None
}

/// Up to `k` shortest loopless routes from node `from` to node `to`, by number of links (equal
/// lengths ordered by their link ids), hosts only at the ends: Yen's algorithm.
pub fn k_shortest(topo: &Topology, from: u32, to: u32, k: usize) -> Vec<Vec<u32>> {
    let nodes = topo.nodes() as usize;
    let mut banned_node = vec![false; nodes];
    let mut banned_link = vec![false; topo.links.len()];
    let Some(first) = shortest(topo, from, to, &banned_node, &banned_link) else {
        return Vec::new();
    };
    let mut found = vec![first];
    let mut candidates: Vec<Vec<u32>> = Vec::new();
    while found.len() < k {
        let prev = found.last().expect("at least one").clone();
        let mut spur = from;
        for i in 0..prev.len() {
            let root = &prev[..i];
            for p in &found {
                if p.len() > i && &p[..i] == root {
                    banned_link[p[i] as usize] = true;
                }
            }
            let mut at = from;
            for &l in root {
                banned_node[at as usize] = true;
                at = topo.links[l as usize].to;
            }
            if let Some(tail) = shortest(topo, spur, to, &banned_node, &banned_link) {
                let mut route = root.to_vec();
                route.extend(tail);
                if !found.contains(&route) && !candidates.contains(&route) {
                    candidates.push(route);
                }
            }
            banned_node.iter_mut().for_each(|b| *b = false);
            banned_link.iter_mut().for_each(|b| *b = false);
            spur = topo.links[prev[i] as usize].to;
        }
        let Some(best) = candidates
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.1.cmp(b.1)))
            .map(|(i, _)| i)
        else {
            break;
        };
        found.push(candidates.swap_remove(best));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::{DragonflySpec, FatTreeSpec};

    #[test]
    fn interning_is_idempotent_and_knows_the_way_back() {
        let t = FatTreeSpec::uniform(2, 16, 4, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        let mut table = PathTable::new();
        let route = t.first_path(0, 12);
        let id = table.intern(&t, &route).unwrap();
        assert_eq!(table.intern(&t, &route).unwrap(), id);
        let back = table.reverse(id);
        assert_ne!(back, NO_PATH);
        assert_eq!(table.reverse(back), id);
        assert_eq!(t.links[table.links(back)[0] as usize].from, 12);
        assert_eq!(table.len(), 2);
        // 4 links: 2 x 4 us propagation, 4 data and 4 header serializations.
        assert_eq!(round_trip(&t, &route, 4150, 64), 8_337_120);
        // Not a route: disconnected, or looping.
        assert!(table.intern(&t, &[route[0], route[2]]).is_err());
        let up = route[1];
        let down = t.reverse(up).unwrap();
        assert!(table.intern(&t, &[route[0], up, down]).is_err());
    }

    #[test]
    fn yen_finds_minimal_then_non_minimal_dragonfly_routes() {
        let t = DragonflySpec::example().build().unwrap();
        // Host 0 (group 0) to host 143 (group 8).
        let routes = k_shortest(&t, 0, 143, 8);
        assert_eq!(routes.len(), 8);
        let lens: Vec<usize> = routes.iter().map(Vec::len).collect();
        assert!(lens.windows(2).all(|w| w[0] <= w[1]), "{lens:?}");
        assert!(
            lens[0] < lens[7],
            "minimal and non-minimal lengths: {lens:?}"
        );
        let mut table = PathTable::new();
        for r in &routes {
            check(&t, r).unwrap();
            assert_eq!(t.links[r[0] as usize].from, 0);
            assert_eq!(t.links[*r.last().unwrap() as usize].to, 143);
            table.intern(&t, r).unwrap();
        }
        let distinct: std::collections::BTreeSet<&Vec<u32>> = routes.iter().collect();
        assert_eq!(distinct.len(), 8);
        // Same inputs, same routes.
        assert_eq!(k_shortest(&t, 0, 143, 8), routes);
    }
}
