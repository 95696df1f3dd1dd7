//! Seeded random choice of failed elements (x % of cables, switches or ToR uplinks).
//!
//! Candidates are listed in a fixed order (link / switch creation order), shuffled with the
//! fault's own random stream, and taken in that order. With `keep_connected` (the default), a
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
    let want = match sel.count {
        Count::Percent(p) => ((p / 100.0) * all.len() as f64).round() as usize,
        Count::Exactly(k) => k,
    }
    .min(all.len());
    let mut order: Vec<usize> = (0..all.len()).collect();
    rng.shuffle(&mut order);
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
