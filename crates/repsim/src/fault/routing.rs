//! Routing reconvergence: ECMP groups recomputed without dead links.
//!
//! Routes are up-down (ToR -> Agg -> Core -> Agg -> ToR), so reachability is a small memoised
//! search per destination ToR. A port stays in the group of (switch, destination ToR) when its
//! link is alive and its far end can still reach the destination; a group may become empty
//! (the switch then has no route and discards the packet).
use std::collections::BTreeMap;

use crate::net::topology::Routes;
use crate::net::Topology;

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const YES: u8 = 2;
const NO: u8 = 3;

/// `reach[d][s]`: switch `s` can reach ToR `d` over alive links along the base routes.
pub fn reach(topo: &Topology, base: &Routes, alive: &[bool]) -> Vec<Vec<bool>> {
    let n = topo.switches.len();
    (0..topo.tors)
        .map(|d| {
            let mut memo = vec![UNKNOWN; n];
            for s in 0..n as u32 {
                visit(topo, base, alive, d, s, &mut memo);
            }
            memo.into_iter().map(|m| m == YES).collect()
        })
        .collect()
}

fn visit(topo: &Topology, base: &Routes, alive: &[bool], d: u32, s: u32, memo: &mut [u8]) -> bool {
    match memo[s as usize] {
        YES => return true,
        NO | VISITING => return false,
        _ => {}
    }
    if s == d {
        memo[s as usize] = YES;
        return true;
    }
    memo[s as usize] = VISITING;
    let g = base.table[(s * topo.tors + d) as usize];
    let mut ok = false;
    if g != u32::MAX {
        let (start, len) = base.groups[g as usize];
        for &p in &base.group_ports[start as usize..(start + len) as usize] {
            let to = topo.links[p as usize].to;
            if alive[p as usize]
                && to >= topo.hosts
                && visit(topo, base, alive, d, to - topo.hosts, memo)
            {
                ok = true;
                break;
            }
        }
    }
    memo[s as usize] = if ok { YES } else { NO };
    ok
}

/// True when every ToR can reach every other ToR and every host link is alive.
pub fn all_connected(topo: &Topology, base: &Routes, alive: &[bool]) -> bool {
    let hosts_ok = (0..topo.hosts as usize)
        .all(|h| alive[topo.host_uplink[h] as usize] && alive[topo.host_downlink[h] as usize]);
    hosts_ok
        && reach(topo, base, alive)
            .iter()
            .all(|r| r[..topo.tors as usize].iter().all(|&x| x))
}

/// The routes switches use once they have learnt which links are alive.
pub fn reconverge(topo: &Topology, base: &Routes, alive: &[bool]) -> Routes {
    let reach = reach(topo, base, alive);
    let tors = topo.tors;
    let mut out = Routes {
        table: vec![u32::MAX; base.table.len()],
        ..Default::default()
    };
    let mut known: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
    for s in 0..topo.switches.len() as u32 {
        for d in 0..tors {
            let g = base.table[(s * tors + d) as usize];
            if g == u32::MAX {
                continue;
            }
            let (start, len) = base.groups[g as usize];
            let ports: Vec<u32> = base.group_ports[start as usize..(start + len) as usize]
                .iter()
                .copied()
                .filter(|&p| {
                    let to = topo.links[p as usize].to;
                    alive[p as usize]
                        && to >= topo.hosts
                        && reach[d as usize][(to - topo.hosts) as usize]
                })
                .collect();
            let id = *known.entry(ports).or_insert_with_key(|ports| {
                out.groups
                    .push((out.group_ports.len() as u32, ports.len() as u32));
                out.group_ports.extend_from_slice(ports);
                (out.groups.len() - 1) as u32
            });
            out.table[(s * tors + d) as usize] = id;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::FatTreeSpec;

    #[test]
    fn dead_uplink_leaves_the_group_and_downstream_is_avoided() {
        let t = FatTreeSpec::uniform(2, 16, 4, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
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
}
