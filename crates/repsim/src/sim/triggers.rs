//! Triggers (the reference's `.cm` collectives): a flow may wait on a trigger, and a flow's
//! completion may activate one. A oneshot trigger releases every waiting flow at its first
//! activation, a multishot one the next waiting flow (in the order they were added) at each,
//! a barrier all of them at its `count`-th.
use std::collections::VecDeque;

use super::{Phase, SetupError, Simulation};
use crate::net::world::{Owner, Timer};
use crate::workload::{Trigger, TriggerKind};

/// One trigger's state.
#[derive(Debug)]
pub(super) struct TriggerState {
    kind: TriggerKind,
    /// Activations so far.
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

impl Simulation {
    /// Declares triggers; ids must be new.
    pub(super) fn add_triggers(&mut self, triggers: Vec<Trigger>) -> Result<(), SetupError> {
        for t in triggers {
            if self.triggers.contains_key(&t.id) {
                return Err(SetupError::Invalid(format!(
                    "trigger {} is declared twice",
                    t.id
                )));
            }
            self.triggers.insert(
                t.id,
                TriggerState {
                    kind: t.kind,
                    activations: 0,
                    waiting: VecDeque::new(),
                },
            );
        }
        Ok(())
    }

    /// Checks that a flow's triggers exist.
    pub(super) fn check_triggers(
        &self,
        id: u64,
        trigger: Option<u64>,
        fires: Option<u64>,
    ) -> Result<(), SetupError> {
        for k in [trigger, fires].into_iter().flatten() {
            if !self.triggers.contains_key(&k) {
                return Err(SetupError::BadFlow {
                    id,
                    why: format!("trigger {k} is not declared"),
                });
            }
        }
        Ok(())
    }

    /// Flow `index` waits on trigger `k` unless the trigger is already open: returns whether
    /// it has to wait.
    pub(super) fn wait_on_trigger(&mut self, k: u64, index: u32) -> bool {
        let t = self.triggers.get_mut(&k).expect("checked when added");
        if t.open() {
            return false;
        }
        t.waiting.push_back(index);
        true
    }

    /// A flow that activates trigger `k` completed: release what the trigger's kind says.
    pub(super) fn activate_trigger(&mut self, k: u64) {
        let Some(t) = self.triggers.get_mut(&k) else {
            return;
        };
        t.activations += 1;
        let released: Vec<u32> = match t.kind {
            TriggerKind::Multishot => t.waiting.pop_front().into_iter().collect(),
            _ if t.open() => t.waiting.drain(..).collect(),
            _ => Vec::new(),
        };
        for f in released {
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
        let at = self.world.now + self.one_way_latency(from, to);
        let notice = Timer {
            owner: Owner::Dependency,
            kind: 0,
            gen: 0,
            id: f,
        };
        self.set_timer_at(to, at, notice);
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
