//! Triggers (the reference's `.cm` collectives): a flow may wait on a trigger, and a flow's
//! completion may activate one. A oneshot trigger releases every waiting flow at its first
//! activation, a multishot one the next waiting flow (in the order they were added) at each,
//! a barrier all of them at its `count`-th.
//!
//! Each trigger lives at a home host: the source of the first flow that names it. Its count
//! of activations and its queue of waiting flows change only there. An instant trigger (htsim's)
//! counts an activation and releases its flows at the instant the activating flow completes,
//! wherever their hosts are; a run split over threads keeps the source hosts of every flow
//! that names it in one partition, so that it acts there alone (the AllToAll matrices'
//! triggers name one host each; a ring AllReduce's join every host of the ring). A notice trigger's
//! activation reaches its home one crossing of the fabric after the activating flow completes,
//! and a released flow's source hears one crossing after that, at once where the hosts are the
//! same: as a collective library's ranks learn from each other, and the same at any split.
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{Phase, SetupError, Simulation};
use crate::engine::disjoint::DisjointSets;
use crate::net::world::{Owner, Timer};
use crate::workload::{FlowSpec, Trigger, TriggerKind};

/// One trigger's state.
#[derive(Debug)]
struct TriggerState {
    /// Its id.
    id: u64,
    kind: TriggerKind,
    /// Whether it reaches other hosts by notices (see the module's documentation).
    notice: bool,
    /// The source host of the first flow that names it (none yet: no flow does).
    home: Option<u32>,
    /// Activations so far (counted at its home).
    activations: u32,
    /// Flows (indices) waiting on it, in the order they were added.
    waiting: VecDeque<u32>,
}

impl TriggerState {
    /// True once activations release every flow that waits from now on without delay.
    fn open(&self) -> bool {
        match self.kind {
            TriggerKind::Oneshot => self.activations >= 1,
            TriggerKind::Multishot => false,
            TriggerKind::Barrier { count } => self.activations >= count,
        }
    }
}

/// The run's triggers, with their ids.
#[derive(Debug, Default)]
pub(super) struct Triggers {
    /// Each trigger's state; its index names it in timers.
    states: Vec<TriggerState>,
    /// Trigger id -> index.
    index: BTreeMap<u64, u32>,
}

/// The groups of hosts (of `hosts`) that the triggers in `instant` join: two hosts are in one
/// group when the flows of both name one such trigger, or each is joined to a third
/// (disjoint groups of two or more hosts, ascending, in the order of their first host). Such a
/// trigger acts on all of them in zero time, so a run split over threads keeps each group in
/// one partition.
fn hosts_joined_by_instant<'a>(
    instant: &BTreeSet<u64>,
    hosts: usize,
    flows: impl IntoIterator<Item = &'a FlowSpec>,
) -> Vec<Vec<u32>> {
    if instant.is_empty() {
        return Vec::new();
    }
    let mut sets = DisjointSets::new(hosts);
    let mut named = vec![false; hosts];
    let mut first_host: BTreeMap<u64, u32> = BTreeMap::new();
    for f in flows {
        for k in [f.trigger, f.fires].into_iter().flatten() {
            if instant.contains(&k) {
                let first = *first_host.entry(k).or_insert(f.src);
                sets.join(first, f.src);
                named[f.src as usize] = true;
            }
        }
    }
    let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for h in (0..hosts as u32).filter(|&h| named[h as usize]) {
        groups.entry(sets.root(h)).or_default().push(h);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

impl Simulation {
    /// Declares triggers; ids must be new.
    pub(super) fn add_triggers(&mut self, triggers: Vec<Trigger>) -> Result<(), SetupError> {
        for t in triggers {
            if self.triggers.index.contains_key(&t.id) {
                return Err(SetupError::Invalid(format!(
                    "trigger {} is declared twice",
                    t.id
                )));
            }
            let index = self.triggers.states.len() as u32;
            self.triggers.index.insert(t.id, index);
            self.triggers.states.push(TriggerState {
                id: t.id,
                kind: t.kind,
                notice: t.notice,
                home: None,
                activations: 0,
                waiting: VecDeque::new(),
            });
        }
        Ok(())
    }

    /// Checks that a flow's triggers exist and, in a run split over threads, that an
    /// instant one is not named from a host in another partition than its home (a flow added
    /// while the run goes; the split keeps the hosts of the flows added before together).
    pub(super) fn check_triggers(&self, spec: &FlowSpec) -> Result<(), SetupError> {
        for k in [spec.trigger, spec.fires].into_iter().flatten() {
            let Some(&i) = self.triggers.index.get(&k) else {
                return Err(SetupError::BadFlow {
                    id: spec.id,
                    why: format!("trigger {k} is not declared"),
                });
            };
            let t = &self.triggers.states[i as usize];
            let apart = |home: u32| {
                self.shard
                    .as_ref()
                    .is_some_and(|s| s.of_node[home as usize] != s.of_node[spec.src as usize])
            };
            if let Some(home) = t.home.filter(|&h| !t.notice && apart(h)) {
                return Err(SetupError::BadFlow {
                    id: spec.id,
                    why: format!(
                        "instant trigger {k} is named by flows of host {home}; in this split \
                         over threads host {} is in another partition, where it cannot act at \
                         once",
                        spec.src
                    ),
                });
            }
        }
        Ok(())
    }

    /// Records flow `index` (just added) with the triggers it names: the first flow to name
    /// a trigger makes its source the trigger's home; a flow that waits is queued there, and
    /// when the trigger is already open it is released as an activation would release it.
    /// Returns whether it waits.
    pub(super) fn enter_triggers(&mut self, spec: &FlowSpec, index: u32) -> bool {
        for k in [spec.trigger, spec.fires].into_iter().flatten() {
            let t = &mut self.triggers.states[self.triggers.index[&k] as usize];
            t.home.get_or_insert(spec.src);
        }
        let Some(k) = spec.trigger else {
            return false;
        };
        let t = &mut self.triggers.states[self.triggers.index[&k] as usize];
        if !t.open() {
            t.waiting.push_back(index);
        }
        true
    }

    /// The hosts each instant trigger joins: the sources of the flows added so far that name
    /// it, for every one named from more than one host. A split over threads keeps each group
    /// in one partition ([`crate::net::topology::Topology::partition_joining`]).
    pub fn hosts_kept_together(&self) -> Vec<Vec<u32>> {
        let instant: BTreeSet<u64> = (self.triggers.states.iter())
            .filter(|t| !t.notice)
            .map(|t| t.id)
            .collect();
        let hosts = self.world.topo.hosts as usize;
        hosts_joined_by_instant(&instant, hosts, self.flows.iter().map(|f| &f.spec))
    }

    /// After flow `index` was added waiting on trigger `k`: releases it if the trigger was
    /// already open, where the trigger's state is known (its home's partition, or the whole
    /// network); every other partition waits for the release's start.
    pub(super) fn release_if_open(&mut self, k: u64, index: u32) {
        let i = self.triggers.index[&k];
        let t = &self.triggers.states[i as usize];
        let home = t.home.expect("its flow named it");
        if t.open() && self.owns(home) {
            self.release_from_trigger(i, index);
        }
    }

    /// A flow that activates trigger `k` completed at host `from`: its home counts the
    /// activation now (instant, or the same host) or when the notice reaches it.
    pub(super) fn activate_trigger(&mut self, k: u64, from: u32) {
        let Some(&i) = self.triggers.index.get(&k) else {
            return;
        };
        let t = &self.triggers.states[i as usize];
        let home = t.home.expect("the activating flow named it");
        if !t.notice || home == from {
            self.count_activation(i);
            return;
        }
        self.notice_across(from, home, Owner::Trigger, i);
    }

    /// Host `to` hears notice `owner`/`id` from host `from` one crossing of the fabric from
    /// now: the unloaded one-way latency of the pair's first path.
    fn notice_across(&mut self, from: u32, to: u32, owner: Owner, id: u32) {
        let at = self.world.now + self.one_way_latency(from, to);
        let notice = Timer {
            owner,
            kind: 0,
            gen: 0,
            id,
        };
        self.set_timer_at(to, at, notice);
    }

    /// The home host of the trigger at `index` (the entity its notices fire at).
    pub(super) fn trigger_home(&self, index: u32) -> u32 {
        self.triggers.states[index as usize]
            .home
            .expect("a notice goes to a trigger with a home")
    }

    /// Trigger `i`'s home counts an activation and releases what the trigger's kind says.
    pub(super) fn count_activation(&mut self, i: u32) {
        let t = &mut self.triggers.states[i as usize];
        t.activations += 1;
        let released: Vec<u32> = match t.kind {
            TriggerKind::Multishot => t.waiting.pop_front().into_iter().collect(),
            _ if t.open() => t.waiting.drain(..).collect(),
            _ => Vec::new(),
        };
        for f in released {
            self.release_from_trigger(i, f);
        }
    }

    /// Trigger `i` releases flow `f`: at once when instant or at its home, else by a notice
    /// to `f`'s source.
    fn release_from_trigger(&mut self, i: u32, f: u32) {
        let t = &self.triggers.states[i as usize];
        let home = t.home.expect("a trigger with a flow has a home");
        if t.notice {
            self.notify_dependent(f, home);
        } else {
            self.release_dependency(f);
        }
    }

    /// Flow `f` waits for a flow that host `from` (its source) has just seen finish: `f`'s
    /// source hears of it one crossing of the fabric later (the unloaded one-way latency of
    /// the pair's first path), at once when it is the same host. So no host learns of
    /// another's completion sooner than a packet could tell it, as a collective library's
    /// ranks learn (and the same at any split of the network over threads).
    pub(super) fn notify_dependent(&mut self, f: u32, from: u32) {
        let to = self.flows[f as usize].spec.src;
        if to == from {
            self.release_dependency(f);
            return;
        }
        self.notice_across(from, to, Owner::Dependency, f);
    }

    /// One thing flow `f` waited for is done (its source has heard); it starts once nothing
    /// is left.
    pub(super) fn release_dependency(&mut self, f: u32) {
        let now = self.world.now;
        let dep = &mut self.flows[f as usize];
        dep.deps_left -= 1;
        if dep.deps_left == 0 && dep.phase == Phase::Blocked {
            dep.phase = Phase::Waiting;
            let at = dep.spec.start.max(now + dep.spec.delay);
            self.schedule_start(f, at);
        }
    }
}
