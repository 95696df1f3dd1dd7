//! Choice of failed elements (x % of cables, switches or ToR uplinks): seeded random, or every
//! ToR's first uplinks as the REPS artifact's fat-tree builder lists them.
//!
//! Candidates are listed in a fixed order (link / switch creation order), shuffled with the
//! fault's own random stream, and taken in that order (except [`Count::FirstPerTor`], which
//! takes each ToR's first uplinks in link order). With `keep_connected` (the default), a
//! candidate whose failure would leave some pair of hosts without any path is skipped, like the
//! reference's connectivity check; if too few candidates remain, fewer elements fail and the
//! plan carries a note saying so.
use super::{cable_candidates, push_effect, switch_ports, Candidates, Effect, FaultPlan, Timing};
use crate::engine::{Rng, Time};
use crate::net::forwarding;
use crate::net::Topology;

/// How many elements to choose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    /// round(percent / 100 x candidates).
    Percent(f64),
    /// Exactly this many (if possible).
    Exactly(usize),
    /// The REPS artifact's failure generator with a share `f` (0-1) and no list from its
    /// topology builder: it fails one more element whenever the failed count over N is still at
    /// or below `f` (in 32-bit floats), i.e. floor(f x N) + 1, where N is half the number of
    /// directed links (cables, host cables included) or of switches (ToRs included) on its
    /// paths. So 5 % of the 32-host tree's 64 cables fails 4 and 5 % of its 12 switches fails 1.
    ReferenceShare(f64),
    /// Every ToR's first round(`percent` / 100 x its uplinks) uplinks in link order (so the
    /// same upper-tier switches for every ToR), as the REPS artifact's fat-tree builder lists
    /// the cables its failure generator then fails: every ToR keeps the same share of uplinks.
    FirstPerTor(f64),
}

impl Count {
    /// How many of `candidates` elements to choose (`FirstPerTor`: the most; each ToR's own
    /// share is applied in [`choose`]).
    fn wanted(self, topo: &Topology, candidates: Candidates, available: usize) -> usize {
        match self {
            Count::Percent(p) => ((p / 100.0) * available as f64).round() as usize,
            Count::Exactly(k) => k,
            Count::FirstPerTor(_) => available,
            Count::ReferenceShare(f) => {
                let n = if candidates == Candidates::Switches {
                    topo.switches.len() / 2
                } else {
                    topo.links.len() / 2
                };
                if n == 0 {
                    return 0;
                }
                let mut failed = 0usize;
                while failed <= n && (failed as f32 / n as f32) <= f as f32 {
                    failed += 1;
                }
                failed
            }
        }
        .min(available)
    }
}

/// A random selection and what happens to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    /// Candidate set.
    pub candidates: Candidates,
    /// How many.
    pub count: Count,
    /// Cables: both directions (true) or only the upward one.
    pub both_directions: bool,
    /// Effect on each chosen element.
    pub effect: Effect,
    /// Start, end, loss mode.
    pub timing: Timing,
    /// The i-th chosen element starts at start + i x stagger.
    pub stagger: Time,
    /// Skip choices that would disconnect a pair of hosts.
    pub keep_connected: bool,
}

/// Candidate elements: (name, ports affected).
pub fn elements(topo: &Topology, sel: &Selection) -> Vec<(String, Vec<u32>)> {
    match sel.candidates {
        Candidates::Switches => (0..topo.switches.len() as u32)
            .filter(|&s| topo.switches[s as usize].level > 1)
            .map(|s| (topo.node_name(topo.switch_node(s)), switch_ports(topo, s)))
            .collect(),
        kind => cable_candidates(topo, kind)
            .into_iter()
            .map(|(up, rev)| match (sel.both_directions, rev) {
                (true, Some(r)) => {
                    let l = &topo.links[up as usize];
                    (
                        format!("{}<->{}", topo.node_name(l.from), topo.node_name(l.to)),
                        vec![up, r],
                    )
                }
                _ => (topo.link_name(up), vec![up]),
            })
            .collect(),
    }
}

/// Chooses the elements (seeded shuffle, connectivity rule) without adding actions.
pub fn choose(
    topo: &Topology,
    sel: &Selection,
    rng: &mut Rng,
    notes: &mut Vec<String>,
) -> Vec<(String, Vec<u32>)> {
    let all = elements(topo, sel);
    let want = sel.count.wanted(topo, sel.candidates, all.len());
    let order: Vec<usize> = match sel.count {
        Count::FirstPerTor(p) => first_per_tor(topo, &all, p),
        _ => {
            let mut order: Vec<usize> = (0..all.len()).collect();
            rng.shuffle(&mut order);
            order
        }
    };
    let want = want.min(order.len());
    let disconnects = matches!(sel.effect, Effect::Down) && sel.keep_connected;
    let mut alive = vec![true; topo.links.len()];
    let mut chosen = Vec::with_capacity(want);
    for idx in order {
        if chosen.len() == want {
            break;
        }
        let (_, ports) = &all[idx];
        if disconnects {
            for &p in ports {
                alive[p as usize] = false;
            }
            if !forwarding::all_connected(topo, &topo.routes, &alive) {
                for &p in ports {
                    alive[p as usize] = true;
                }
                continue;
            }
        }
        chosen.push(all[idx].clone());
    }
    if chosen.len() < want {
        notes.push(format!(
            "only {} of the {want} requested elements could fail without disconnecting a pair of hosts",
            chosen.len()
        ));
    }
    chosen
}

/// Indices of `ups` (upward links, in order) grouped by the switch they leave, groups in
/// order of first appearance.
pub(super) fn group_by_tor(topo: &Topology, ups: impl Iterator<Item = u32>) -> Vec<Vec<usize>> {
    let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
    for (i, up) in ups.enumerate() {
        let from = topo.links[up as usize].from;
        match groups.iter_mut().find(|(f, _)| *f == from) {
            Some((_, g)) => g.push(i),
            None => groups.push((from, vec![i])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Of cable candidates `all` (link order), the indices of each ToR's first
/// round(`percent` / 100 x its uplinks) uplinks.
fn first_per_tor(topo: &Topology, all: &[(String, Vec<u32>)], percent: f64) -> Vec<usize> {
    // Every cable candidate has its upward port first.
    group_by_tor(topo, all.iter().map(|(_, ports)| ports[0]))
        .into_iter()
        .flat_map(|g| {
            let k = ((percent / 100.0) * g.len() as f64).round() as usize;
            g.into_iter().take(k)
        })
        .collect()
}

/// Chooses the elements and adds their actions to `plan`; their names go to `plan.chosen`,
/// prefixed with `label: ` when `label` is not empty.
pub fn apply(plan: &mut FaultPlan, topo: &Topology, sel: &Selection, rng: &mut Rng, label: &str) {
    let chosen = choose(topo, sel, rng, &mut plan.notes);
    for (i, (name, ports)) in chosen.into_iter().enumerate() {
        let start = sel.timing.start + i as Time * sel.stagger;
        let end = sel.timing.end.map(|e| e + (start - sel.timing.start));
        push_effect(
            plan,
            topo,
            &ports,
            sel.effect,
            Timing {
                start,
                end,
                ..sel.timing
            },
            rng,
        );
        plan.chosen.push(if label.is_empty() {
            name
        } else {
            format!("{label}: {name}")
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;
    use crate::engine::time::US;
    use crate::fault::LossMode;
    use crate::net::FatTreeSpec;

    fn sel(percent: f64) -> Selection {
        Selection {
            candidates: Candidates::Cables,
            count: Count::Percent(percent),
            both_directions: true,
            effect: Effect::Down,
            timing: Timing {
                start: 0,
                end: None,
                loss: LossMode::Silent,
                data_only: false,
            },
            stagger: 0,
            keep_connected: true,
        }
    }

    #[test]
    fn same_seed_same_choice_and_connectivity_kept() {
        let t = FatTreeSpec::uniform(2, 64, 8, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        let run = |seed| {
            let mut p = FaultPlan::default();
            apply(
                &mut p,
                &t,
                &sel(50.0),
                &mut Rng::derive(seed, Stream::Fault, 7),
                "",
            );
            p
        };
        let (a, b, c) = (run(1), run(1), run(2));
        assert_eq!(a, b);
        assert_ne!(a.chosen, c.chosen);
        assert_eq!(a.chosen.len(), 32, "{:?}", a.notes);
        let mut alive = vec![true; t.links.len()];
        for act in &a.actions {
            alive[act.port as usize] = false;
        }
        assert!(forwarding::all_connected(&t, &t.routes, &alive));
    }

    #[test]
    fn first_per_tor_gives_every_tor_the_same_uplinks_down() {
        // 128 hosts, 8 ToRs of 16 uplinks: 30 % is round(4.8) = 5 per ToR.
        let t = FatTreeSpec::uniform(2, 128, 16, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        let mut s = sel(30.0);
        s.count = Count::FirstPerTor(30.0);
        s.both_directions = false;
        let mut p = FaultPlan::default();
        apply(&mut p, &t, &s, &mut Rng::new(1), "");
        assert_eq!(p.chosen.len(), 8 * 5, "{:?}", p.chosen);
        // The same five upper switches for every ToR, whatever the seed.
        let mut q = FaultPlan::default();
        apply(&mut q, &t, &s, &mut Rng::new(2), "");
        assert_eq!(p, q);
        let mut per_tor = std::collections::BTreeMap::<u32, Vec<u32>>::new();
        for a in &p.actions {
            let l = &t.links[a.port as usize];
            assert!(t.level(l.from) == 1 && t.level(l.to) == 2);
            per_tor.entry(l.from).or_default().push(l.to);
        }
        let first = per_tor.values().next().unwrap().clone();
        assert!(per_tor.values().all(|v| *v == first) && first.len() == 5);
    }

    #[test]
    fn reference_share_fails_one_past_the_share() {
        let t = crate::fault::test_topology();
        // 64 cables (32 host, 32 uplinks): floor(0.05 x 64) + 1 = 4; 12 switches: 1.
        assert_eq!(
            Count::ReferenceShare(0.05).wanted(&t, Candidates::TorUplinks, 32),
            4
        );
        assert_eq!(
            Count::ReferenceShare(0.05).wanted(&t, Candidates::Switches, 4),
            1
        );
        assert_eq!(
            Count::ReferenceShare(0.1).wanted(&t, Candidates::TorUplinks, 32),
            7
        );
        assert_eq!(
            Count::ReferenceShare(0.0).wanted(&t, Candidates::Switches, 4),
            1
        );
    }

    #[test]
    fn cannot_fail_everything_without_disconnecting() {
        let t = FatTreeSpec::uniform(2, 16, 4, 0, 1, 400_000_000_000, US, 0)
            .unwrap()
            .build()
            .unwrap();
        let mut p = FaultPlan::default();
        apply(&mut p, &t, &sel(100.0), &mut Rng::new(3), "");
        assert!(p.chosen.len() < 16 && !p.notes.is_empty());
    }
}
