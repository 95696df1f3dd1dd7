//! The PFC deadlock watch: at fixed instants, every quarter of `[pfc] deadlock_after`, each
//! once every event before it has run, it looks at the data delivered so far and the
//! switch-to-switch links paused at the instant, and stops the run when nothing was delivered
//! for that long and the paused links close a cycle. The instants are the same whether the run
//! is on one thread or split over several, whose partitions pool what they see
//! ([`crate::sim::parallel`]).
use super::{PfcState, Simulation};
use crate::engine::time::to_us;
use crate::engine::Time;
use crate::net::Topology;

/// The deadlock watch of a PFC run, looking at fixed instants.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DeadlockWatch {
    /// Data packets delivered when last looked at.
    pub(super) delivered: u64,
    /// The instant that count was first seen.
    pub(super) since: Time,
    /// The next instant to look at (`Time::MAX`: not watched).
    pub(super) next: Time,
    /// Time between instants.
    pub(super) step: Time,
}

impl PfcState {
    /// The switch-to-switch links paused at `now` whose upstream node `mine` accepts, in link
    /// order.
    pub(super) fn paused_links(
        &self,
        topo: &Topology,
        now: Time,
        mine: impl Fn(u32) -> bool,
    ) -> Vec<u32> {
        let hosts = topo.hosts;
        (topo.links.iter().enumerate())
            .filter(|(l, link)| {
                link.from >= hosts
                    && link.to >= hosts
                    && mine(link.from)
                    && self.paused(*l as u32, now)
            })
            .map(|(l, _)| l as u32)
            .collect()
    }

    /// A cycle of the switch-to-switch links `paused` (each switch waits for the next), in
    /// order, if there is one: a depth-first search over them in link order.
    fn paused_cycle(topo: &Topology, paused: &[u32]) -> Option<Vec<u32>> {
        let hosts = topo.hosts;
        let switch = |node: u32| (node - hosts) as usize;
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); topo.switches.len()];
        for &l in paused {
            out[switch(topo.links[l as usize].from)].push(l);
        }
        // 0: not seen, 1: on the search path, 2: done.
        let mut state = vec![0u8; out.len()];
        let mut entered_by = vec![u32::MAX; out.len()];
        for start in 0..out.len() {
            if state[start] != 0 || out[start].is_empty() {
                continue;
            }
            state[start] = 1;
            let mut path: Vec<(usize, usize)> = vec![(start, 0)];
            while let Some(top) = path.last_mut() {
                let v = top.0;
                let Some(&l) = out[v].get(top.1) else {
                    state[v] = 2;
                    path.pop();
                    continue;
                };
                top.1 += 1;
                let w = switch(topo.links[l as usize].to);
                match state[w] {
                    0 => {
                        state[w] = 1;
                        entered_by[w] = l;
                        path.push((w, 0));
                    }
                    1 => {
                        let mut cycle = vec![l];
                        let mut x = v;
                        while x != w {
                            cycle.push(entered_by[x]);
                            x = switch(topo.links[entered_by[x] as usize].from);
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }
    /// The next instant the deadlock watch looks at (`Time::MAX`: none).
    pub(super) fn next_watch(&self) -> Time {
        self.watch.next
    }

    /// The deadlock watch at its next instant, every event before it having run: `delivered`
    /// data packets reached their receivers so far and `paused` (in link order) are the
    /// switch-to-switch links paused at the instant. Says why the run is deadlocked, if it is:
    /// nothing delivered since an instant at least `deadlock_after` ago, and a cycle of paused
    /// links.
    pub(super) fn watch_deadlock(
        &mut self,
        topo: &Topology,
        delivered: u64,
        paused: &[u32],
    ) -> Option<String> {
        let after = self.deadlock_after;
        let w = &mut self.watch;
        let now = w.next;
        w.next = now.saturating_add(w.step);
        if delivered != w.delivered {
            w.delivered = delivered;
            w.since = now;
            return None;
        }
        if now < w.since.saturating_add(after) {
            return None;
        }
        let since = w.since;
        let cycle = Self::paused_cycle(topo, paused)?;
        let links: Vec<String> = cycle
            .iter()
            .map(|&l| {
                let link = &topo.links[l as usize];
                format!(
                    "{} -> {} (link {l})",
                    topo.node_name(link.from),
                    topo.node_name(link.to)
                )
            })
            .collect();
        Some(format!(
            "PFC deadlock: no data packet reached a receiver from t = {:.1} us to {:.1} us while \
             pauses kept flowing, and the paused links close a cycle: {}; the run stops here \
             ([pfc] deadlock_after = {:.1} us)",
            to_us(since),
            to_us(now),
            links.join(", "),
            to_us(after)
        ))
    }
}

impl Simulation {
    /// The next instant the PFC deadlock watch looks at (`Time::MAX`: PFC off or unwatched).
    pub(in crate::sim) fn pfc_next_watch(&self) -> Time {
        self.pfc.as_deref().map_or(Time::MAX, |p| p.next_watch())
    }

    /// The switch-to-switch links paused at `now` whose upstream node this simulation owns.
    pub(in crate::sim) fn pfc_paused_links(&self, now: Time) -> Vec<u32> {
        let pfc = self.pfc.as_deref().expect("PFC on");
        pfc.paused_links(&self.world.topo, now, |node| self.owns(node))
    }

    /// The deadlock watch at its next instant, once every event before it has run, with
    /// `delivered` data packets delivered so far and the links `paused` then (the whole
    /// network's: a partition's own and the others'); halts the run on a deadlock.
    pub(in crate::sim) fn pfc_watch(&mut self, delivered: u64, paused: &[u32]) {
        let pfc = self.pfc.as_deref_mut().expect("PFC on");
        if let Some(why) = pfc.watch_deadlock(&self.world.topo, delivered, paused) {
            self.halt = Some(why);
        }
    }
}
