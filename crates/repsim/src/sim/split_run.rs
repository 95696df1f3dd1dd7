//! A run its caller advances step by step (co-simulation), whole on one thread or split over
//! several: the same calls as on a [`Simulation`] (`run_until`, `add_flow`, an observer), with
//! the same results at any thread count.
//!
//! Split, the partitions stay built between calls and advance together on their threads for
//! each call (see [`super::parallel`]). What the caller adds joins every partition at the same
//! instant; what the observer hears is told at the slice ends one thread would tell it at
//! ([`super::OBSERVER_SLICE`]), and completions are handed out once told, whole or split.
use super::parallel::{self, Hearing};
use super::{Flow, Observer, SetupError, Simulation};
use crate::engine::Time;
use crate::metrics::{FlowRow, RunSummary};
use crate::workload::FlowSpec;

/// A simulation its caller advances, whole or split over threads (see the module docs).
pub struct SplitSimulation {
    state: State,
}

enum State {
    /// One thread runs it all.
    Whole(Box<Simulation>),
    /// Partitions, one thread each while they advance.
    Split {
        sims: Vec<Simulation>,
        of_node: std::sync::Arc<[u32]>,
        lookahead: Time,
        hearing: Hearing,
    },
}

impl SplitSimulation {
    /// Builds the run on `threads` threads (1: whole). `build` makes the simulation (set up,
    /// not run); it is called once per partition, on the partition's own thread, and must
    /// make the same run each time. A run that cannot be split is refused (see
    /// [`Simulation::partition_blockers`]); a network that does not split runs whole.
    pub fn new(
        threads: u32,
        build: impl Fn() -> Result<Simulation, SetupError> + Sync,
    ) -> Result<Self, SetupError> {
        let mut first = build()?;
        let Some(split) = parallel::split_of(&first, threads)? else {
            first.observing = true;
            return Ok(SplitSimulation {
                state: State::Whole(Box::new(first)),
            });
        };
        let mut sims = parallel::build_partitions(first, &build, &split)?;
        for sim in &mut sims {
            sim.observing = true;
        }
        Ok(SplitSimulation {
            state: State::Split {
                sims,
                of_node: split.of_node,
                lookahead: split.lookahead,
                hearing: Hearing::new(None),
            },
        })
    }

    /// The partitions it runs as (1: whole).
    pub fn partitions(&self) -> u32 {
        match &self.state {
            State::Whole(_) => 1,
            State::Split { sims, .. } => sims.len() as u32,
        }
    }

    /// The first partition (the whole run, unsplit): what every partition holds alike
    /// (topology, configuration, transport, label, base RTTs) reads from it.
    pub fn first(&self) -> &Simulation {
        match &self.state {
            State::Whole(sim) => sim,
            State::Split { sims, .. } => &sims[0],
        }
    }

    /// Attaches an observer (see [`Simulation::set_observer`]); replaces any earlier one.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        match &mut self.state {
            State::Whole(sim) => sim.set_observer(observer),
            State::Split { hearing, .. } => hearing.observer = Some(observer),
        }
    }

    /// Adds a flow, as [`Simulation::add_flow`] does (to every partition, at the same instant).
    pub fn add_flow(&mut self, spec: FlowSpec) -> Result<u32, SetupError> {
        let (sims, of_node) = match &mut self.state {
            State::Whole(sim) => return sim.add_flow(spec),
            State::Split { sims, of_node, .. } => (sims, of_node),
        };
        // A flow it waits for that has finished counts as done everywhere, as on one thread
        // (only the partition of its sender knows it yet).
        for id in &spec.after {
            let Some(&f) = sims[0].flow_index.get(id) else {
                continue;
            };
            let src = sims[0].flows[f as usize].spec.src;
            let owner = of_node[src as usize] as usize;
            if let Some(finish) = sims[owner].flows[f as usize].finish {
                for sim in sims.iter_mut() {
                    sim.learn_finished(f, finish);
                }
            }
        }
        let mut added = sims.iter_mut().map(|sim| sim.add_flow(spec.clone()));
        let first = added.next().expect("a partition at least");
        for other in added {
            debug_assert_eq!(
                other.as_ref().ok(),
                first.as_ref().ok(),
                "every partition adds it alike"
            );
        }
        // A flow released at once (its trigger open) starts at its far end too.
        parallel::exchange_between_steps(sims);
        first
    }

    /// Runs every event up to and including `until`, as [`Simulation::run_until`] does;
    /// returns false when nothing is left to do before the end.
    pub fn run_until(&mut self, until: Time) -> bool {
        if let State::Whole(sim) = &mut self.state {
            return sim.run_until(until);
        }
        let last = self.first().last_instant();
        let limit = until.min(last);
        self.advance(limit, false);
        self.settle_at(limit);
        self.next_event_time().is_some_and(|t| t <= last)
    }

    /// Runs until no event is left before the end time.
    pub fn run_until_idle(&mut self) {
        if let State::Whole(sim) = &mut self.state {
            return sim.run_until_idle();
        }
        let last = self.first().last_instant();
        self.advance(last, false);
    }

    /// Runs until some flow completes and returns its index, or `None` when none does up to
    /// `until` (the clock then left there): as [`Simulation::run_until_completion`] does with
    /// an observer, the run stops at the end of the completion's slice.
    pub fn run_until_completion(&mut self, until: Time) -> Option<u32> {
        if let State::Whole(sim) = &mut self.state {
            return sim.run_until_completion(until);
        }
        if self.completed().is_empty() {
            let limit = until.min(self.first().last_instant());
            self.advance(limit, true);
            if self.completed().is_empty() {
                self.settle_at(limit);
                return None;
            }
        }
        Some(self.completed().remove(0))
    }

    /// Flows that finished and were told since the last call (indices).
    pub fn take_completions(&mut self) -> Vec<u32> {
        match &mut self.state {
            State::Whole(sim) => sim.take_completions(),
            State::Split { .. } => std::mem::take(self.completed()),
        }
    }

    /// Simulated time now: where the last call left the clock (whole, as one thread does).
    pub fn now(&self) -> Time {
        match &self.state {
            State::Whole(sim) => sim.now(),
            State::Split { sims, .. } => sims.iter().map(|s| s.now()).max().unwrap_or(0),
        }
    }

    /// Whether anything is left to happen: an event pending, or something an observer has
    /// not heard of yet.
    pub fn pending(&self) -> bool {
        match &self.state {
            State::Whole(sim) => sim.pending_events() > 0 || sim.has_noted(),
            State::Split { sims, .. } => {
                sims.iter().any(|s| s.pending_events() > 0 || s.has_noted())
            }
        }
    }

    /// Events pending, over all partitions.
    pub fn pending_events(&self) -> usize {
        match &self.state {
            State::Whole(sim) => sim.pending_events(),
            State::Split { sims, .. } => sims.iter().map(|s| s.pending_events()).sum(),
        }
    }

    /// Every flow, in index order, as its sender's partition holds it.
    pub fn flows(&self) -> impl ExactSizeIterator<Item = &Flow> + '_ {
        let first = self.first();
        (0..first.flows.len() as u32).map(move |i| self.sent(i))
    }

    /// Flow `index` as its sender's partition holds it.
    pub fn flow(&self, index: u32) -> Option<&Flow> {
        (index < self.first().flows.len() as u32).then(|| self.sent(index))
    }

    /// True when every flow has finished.
    pub fn all_done(&self) -> bool {
        self.flows().all(|f| f.phase == super::Phase::Done)
    }

    /// Per-flow rows so far (`flows.csv`'s), each from its sender's and receiver's
    /// partitions.
    pub fn flow_row_refs(&self) -> impl ExactSizeIterator<Item = FlowRow<&str>> + Clone + '_ {
        let first = self.first();
        (0..first.flows.len() as u32).map(move |i| {
            let received = match &self.state {
                State::Whole(sim) => &sim.flows[i as usize],
                State::Split { sims, of_node, .. } => {
                    let dst = first.flows[i as usize].spec.dst;
                    &sims[of_node[dst as usize] as usize].flows[i as usize]
                }
            };
            first.flow_row(i, self.sent(i), received)
        })
    }

    /// The run's summary so far (as [`Simulation::summary`] gives it, `wall_s` its wall
    /// time). A split run's partitions are folded, unchanged, into `fresh`: the same run built
    /// again and not run (see [`Simulation::new`]), called only then.
    pub fn summary(
        &self,
        wall_s: f64,
        fresh: impl FnOnce() -> Result<Simulation, SetupError>,
    ) -> Result<RunSummary, SetupError> {
        match &self.state {
            State::Whole(sim) => Ok(sim.summary(wall_s)),
            State::Split { sims, .. } => {
                Ok(Simulation::folded_view(fresh()?, sims).summary(wall_s))
            }
        }
    }

    /// Flows that could not be added (from an observer or a source), one message each.
    pub fn rejected_flows(&self) -> &[String] {
        self.first().rejected_flows()
    }

    /// Ends the stepping and returns the run as one thread would have left it (the
    /// partitions folded; see [`parallel::run_on_threads`]), its observer attached.
    pub fn into_simulation(self) -> Simulation {
        match self.state {
            State::Whole(sim) => *sim,
            State::Split { sims, hearing, .. } => {
                let mut sim = Simulation::fold_partitions(sims);
                sim.observer = hearing.observer;
                sim.observing = true;
                sim.next_telling = hearing.next;
                sim.completions = hearing.completed;
                sim
            }
        }
    }

    /// Flow `index` in its sender's partition.
    fn sent(&self, index: u32) -> &Flow {
        match &self.state {
            State::Whole(sim) => &sim.flows[index as usize],
            State::Split { sims, of_node, .. } => {
                let src = sims[0].flows[index as usize].spec.src;
                &sims[of_node[src as usize] as usize].flows[index as usize]
            }
        }
    }

    /// The split run's told completions not handed out yet.
    fn completed(&mut self) -> &mut Vec<u32> {
        match &mut self.state {
            State::Whole(_) => unreachable!("only a split run tells its own"),
            State::Split { hearing, .. } => &mut hearing.completed,
        }
    }

    /// Advances the partitions of a split run up to `last`, stopping at a told completion if
    /// `stop_on_completion`.
    fn advance(&mut self, last: Time, stop_on_completion: bool) {
        if let State::Split {
            sims,
            lookahead,
            hearing,
            ..
        } = &mut self.state
        {
            hearing.stop_on_completion = stop_on_completion;
            parallel::advance(sims, *lookahead, last, None, Some(hearing));
            hearing.stop_on_completion = false;
        }
    }

    /// Moves every partition's clock to `t` if it is behind.
    fn settle_at(&mut self, t: Time) {
        if let State::Split { sims, .. } = &mut self.state {
            for sim in sims {
                sim.settle_at(t);
            }
        }
    }

    /// The earliest pending event over all partitions.
    fn next_event_time(&mut self) -> Option<Time> {
        match &mut self.state {
            State::Whole(sim) => sim.next_event_time(),
            State::Split { sims, .. } => sims.iter_mut().filter_map(|s| s.next_event_time()).min(),
        }
    }
}
