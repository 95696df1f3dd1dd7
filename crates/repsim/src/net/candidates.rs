//! Candidate explicit routes between two hosts: the ordered route set a source-routed load
//! balancer chooses from (LAPS's PST entry for the host pair, each route its PIT record).
//!
//! On the two fabrics the LAPS paper evaluates, the set follows LAPS's rules rather than
//! "the k shortest", because LAPS's candidates are not the k shortest routes (a Dragonfly has
//! shorter non-minimal routes through the source's own group than the ones through each other
//! group, and Yen's algorithm would pick those):
//!
//! - **Dragonfly** (`peers.md` 6.1): same router: the one 2-link route; same group: the direct
//!   route plus one through each other router of the group (3 in the LAPS fabric); different
//!   groups: the minimal route through each global cable joining the two groups, plus one
//!   route through each other group C (first cable from the source's group to C, the local hop
//!   inside C if C's two gateways differ, first cable from C to the destination's group): 8 in
//!   the LAPS fabric, 3 to 7 links.
//! - **Rail** (`peers.md` 6.2): same cluster: the one route through the cluster's NVLink
//!   switch; different clusters: one route per rail switch R, crossing the source cluster's
//!   NVLink switch to the GPU on rail R first if the source is not on R, and the destination
//!   cluster's NVLink switch last if the destination is not on R (8 routes, 4 to 8 links).
//! - **Every other family**: the k shortest loopless routes (Yen's algorithm,
//!   [`paths::k_shortest`]).
//!
//! Routes are ordered by number of links (stable, so among equal lengths the rule's order:
//! minimal before via-group, groups in increasing offset from the source's group, rails in
//! increasing index), so that "the first k" means "the k shortest of the set".
//!
//! [`unloaded_latency`] is the one-way latency of a lone packet along a route and
//! [`slowest_rate`] its bottleneck speed, from which a latency-aware scheme derives its own
//! baselines.
use super::paths;
use super::topology::{Family, Topology};
use crate::engine::time::{serialization, NS};
use crate::engine::Time;

/// Up to `k` candidate routes (link lists) from host `src` to host `dst`, ordered shortest
/// first: the LAPS set on Dragonfly and rail fabrics, the k shortest loopless routes
/// elsewhere (see the module documentation).
pub fn candidate_routes(topo: &Topology, src: u32, dst: u32, k: usize) -> Vec<Vec<u32>> {
    let mut routes = match topo.family {
        Family::Dragonfly { groups, routers } => dragonfly_routes(topo, groups, routers, src, dst),
        Family::Rail { rails, clusters } => rail_routes(topo, rails, clusters, src, dst),
        _ => return paths::k_shortest(topo, src, dst, k),
    };
    routes.sort_by_key(Vec::len);
    routes.truncate(k);
    routes
}

/// The slowest link's rate along `route`, in bits per second (1 for an empty route).
pub fn slowest_rate(topo: &Topology, route: &[u32]) -> u64 {
    route
        .iter()
        .map(|&l| topo.links[l as usize].rate_bps)
        .min()
        .unwrap_or(1)
}

/// One-way latency of a lone `packet`-byte packet along `route`: per link its propagation and
/// its serialisation (truncated to whole nanoseconds, as source-routing schemes' reference
/// codes compute it), plus every switch's forwarding latency.
pub fn unloaded_latency(topo: &Topology, route: &[u32], packet: u32) -> Time {
    route
        .iter()
        .map(|&l| {
            let link = &topo.links[l as usize];
            let switch = topo.switch_at(link.to).map_or(0, |s| s.latency);
            link.latency + whole_ns(packet, link.rate_bps) + switch
        })
        .sum()
}

/// Serialisation time of `bytes` at `rate_bps`, truncated to whole nanoseconds.
pub fn whole_ns(bytes: u32, rate_bps: u64) -> Time {
    // `serialization` rounds up to the picosecond; truncating that to ns equals truncating the
    // exact value unless it is a whole number of ns plus less than 1 ps, which is exact anyway.
    serialization(bytes, rate_bps) / NS * NS
}

/// Turns a node sequence into links (the first link between each consecutive pair).
fn links_of(topo: &Topology, nodes: &[u32]) -> Vec<u32> {
    nodes
        .windows(2)
        .map(|w| {
            *topo
                .links_between(w[0], w[1])
                .first()
                .expect("candidate rules only step along existing links")
        })
        .collect()
}

/// A node sequence with consecutive repeats removed (a gateway that is also the source or
/// destination router appears once).
fn dedup(mut nodes: Vec<u32>) -> Vec<u32> {
    nodes.dedup();
    nodes
}

/// The LAPS Dragonfly set (builder numbering: routers group by group after the hosts).
fn dragonfly_routes(
    topo: &Topology,
    groups: u32,
    routers: u32,
    src: u32,
    dst: u32,
) -> Vec<Vec<u32>> {
    let router = |host: u32| topo.switch_node(topo.host_edge[host as usize]);
    let group_of = |node: u32| (node - topo.hosts) / routers;
    let (rs, rd) = (router(src), router(dst));
    let (gs, gd) = (group_of(rs), group_of(rd));
    // Global cables from group `a` to group `b`: (router in a, router in b), in link order.
    let cables = |a: u32, b: u32| -> Vec<(u32, u32)> {
        (0..routers)
            .map(|l| topo.hosts + a * routers + l)
            .flat_map(|r| topo.out_of(r).iter().map(move |&l| (r, l)))
            .map(|(r, l)| (r, topo.links[l as usize].to))
            .filter(|&(_, to)| to >= topo.hosts && group_of(to) == b)
            .collect()
    };
    let mut nodes: Vec<Vec<u32>> = Vec::new();
    if rs == rd {
        nodes.push(vec![src, rs, dst]);
    } else if gs == gd {
        nodes.push(vec![src, rs, rd, dst]);
        for l in 0..routers {
            let via = topo.hosts + gs * routers + l;
            if via != rs && via != rd {
                nodes.push(vec![src, rs, via, rd, dst]);
            }
        }
    } else {
        for (out, inn) in cables(gs, gd) {
            nodes.push(dedup(vec![src, rs, out, inn, rd, dst]));
        }
        for offset in 1..groups {
            let via = (gs + offset) % groups;
            if via == gd {
                continue;
            }
            let (Some(&(a_out, c_in)), Some(&(c_out, b_in))) =
                (cables(gs, via).first(), cables(via, gd).first())
            else {
                continue;
            };
            nodes.push(dedup(vec![src, rs, a_out, c_in, c_out, b_in, rd, dst]));
        }
    }
    nodes.iter().map(|n| links_of(topo, n)).collect()
}

/// The LAPS rail-only set (builder numbering: rail switches, then one NIC switch per GPU,
/// then one NVLink switch per cluster).
fn rail_routes(topo: &Topology, rails: u32, clusters: u32, src: u32, dst: u32) -> Vec<Vec<u32>> {
    let hosts = rails * clusters;
    let rail = |r: u32| hosts + r;
    let nic = |cluster: u32, r: u32| hosts + rails + cluster * rails + r;
    let nvl = |cluster: u32| hosts + rails + hosts + cluster;
    let (c1, r1) = (src / rails, src % rails);
    let (c2, r2) = (dst / rails, dst % rails);
    let mut nodes: Vec<Vec<u32>> = Vec::new();
    if c1 == c2 {
        nodes.push(vec![src, nic(c1, r1), nvl(c1), nic(c2, r2), dst]);
    } else {
        for r in 0..rails {
            let mut n = vec![src, nic(c1, r1)];
            if r != r1 {
                n.extend([nvl(c1), nic(c1, r)]);
            }
            n.extend([rail(r), nic(c2, r)]);
            if r != r2 {
                n.extend([nvl(c2), nic(c2, r2)]);
            }
            n.push(dst);
            nodes.push(n);
        }
    }
    nodes.iter().map(|n| links_of(topo, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::paths::{check, PathTable, NO_PATH};
    use crate::net::{DragonflySpec, FatTreeSpec, RailSpec};

    /// Every route valid, loop-free, from `src` to `dst`, distinct, ordered by length, with a
    /// reverse route in the path table.
    fn check_set(t: &Topology, src: u32, dst: u32, routes: &[Vec<u32>]) {
        let mut table = PathTable::new();
        for r in routes {
            check(t, r).unwrap_or_else(|e| panic!("{src}->{dst}: {e}"));
            assert_eq!(t.links[r[0] as usize].from, src);
            assert_eq!(t.links[*r.last().unwrap() as usize].to, dst);
            let id = table.intern(t, r).unwrap();
            assert_ne!(table.reverse(id), NO_PATH, "{src}->{dst}: no reverse");
        }
        let lens: Vec<usize> = routes.iter().map(Vec::len).collect();
        assert!(lens.windows(2).all(|w| w[0] <= w[1]), "{lens:?}");
        let distinct: std::collections::BTreeSet<&Vec<u32>> = routes.iter().collect();
        assert_eq!(distinct.len(), routes.len(), "{src}->{dst}: duplicates");
    }

    /// Calls `check` with the checked candidate set of every ordered pair of distinct hosts.
    fn for_every_pair(t: &Topology, mut check: impl FnMut(u32, u32, &[Vec<u32>])) {
        for src in 0..t.hosts {
            for dst in (0..t.hosts).filter(|&d| d != src) {
                let routes = candidate_routes(t, src, dst, 64);
                check_set(t, src, dst, &routes);
                check(src, dst, &routes);
            }
        }
    }

    #[test]
    fn dragonfly_sets_have_the_laps_counts_and_lengths() {
        let t = DragonflySpec::example().build().unwrap();
        for_every_pair(&t, |src, dst, routes| {
            let (rs, rd) = (src / 4, dst / 4);
            let lens: Vec<usize> = routes.iter().map(Vec::len).collect();
            if rs == rd {
                assert_eq!(lens, [2]);
            } else if rs / 4 == rd / 4 {
                assert_eq!(lens, [3, 4, 4]);
            } else {
                assert_eq!(routes.len(), 8, "{src}->{dst}");
                assert!(lens[0] >= 3 && lens[0] <= 5, "{lens:?}");
                assert!(lens.iter().all(|&l| (3..=7).contains(&l)), "{lens:?}");
                // Per peers.md 6.1 every inter-group pair has a 7-link route.
                assert_eq!(lens[7], 7, "{src}->{dst}: {lens:?}");
            }
            // The reverse of every forward route is the destination's candidate too.
            let back = candidate_routes(&t, dst, src, 64);
            let mut table = PathTable::new();
            for r in routes {
                let id = table.intern(&t, r).unwrap();
                let rev = table.links(table.reverse(id)).to_vec();
                assert!(back.contains(&rev), "{src}->{dst}: reverse not a candidate");
            }
        });
        // k truncates to the shortest.
        assert_eq!(candidate_routes(&t, 0, 143, 3).len(), 3);
        assert_eq!(
            candidate_routes(&t, 0, 143, 3)[..],
            candidate_routes(&t, 0, 143, 8)[..3]
        );
    }

    #[test]
    fn rail_sets_have_one_route_per_rail() {
        let t = RailSpec::example().build().unwrap();
        for_every_pair(&t, |src, dst, routes| {
            let lens: Vec<usize> = routes.iter().map(Vec::len).collect();
            let (c1, r1, c2, r2) = (src / 8, src % 8, dst / 8, dst % 8);
            if c1 == c2 {
                assert_eq!(lens, [4]);
            } else if r1 == r2 {
                assert_eq!(lens, [4, 8, 8, 8, 8, 8, 8, 8]);
            } else {
                assert_eq!(lens, [6, 6, 8, 8, 8, 8, 8, 8]);
            }
            // One route per rail switch: each crosses exactly one rail switch, all differ.
            if c1 != c2 {
                let mut rails: Vec<u32> = routes
                    .iter()
                    .map(|r| {
                        let on: Vec<u32> = r
                            .iter()
                            .map(|&l| t.links[l as usize].to)
                            .filter(|&n| t.node_name(n).starts_with("rail"))
                            .collect();
                        assert_eq!(on.len(), 1);
                        on[0]
                    })
                    .collect();
                rails.sort();
                rails.dedup();
                assert_eq!(rails.len(), 8);
            }
        });
    }

    #[test]
    fn a_lone_packet_crosses_each_link_once() {
        // The 2-link route inside one Dragonfly router: 2 x (1 us + 83 ns at 100G).
        let d = DragonflySpec::example().build().unwrap();
        let one = &candidate_routes(&d, 0, 1, 1)[0];
        assert_eq!(unloaded_latency(&d, one, 1048), 2 * (US + 83 * NS));
        assert_eq!(slowest_rate(&d, one), 100_000_000_000);
        assert_eq!(whole_ns(1048, 100_000_000_000), 83 * NS);
    }

    #[test]
    fn other_families_get_the_k_shortest() {
        let t = FatTreeSpec::uniform(2, 16, 4, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(
            candidate_routes(&t, 0, 12, 4),
            paths::k_shortest(&t, 0, 12, 4)
        );
    }
}
