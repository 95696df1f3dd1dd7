//! Streaming: finished flows leave the simulation as the run goes, so that a long trace runs
//! in memory that does not grow with its length. Their rows go to the caller (in index
//! order, as the per-flow outputs list flows); their FCTs, slowdowns and counters go into
//! [`RetiredTotals`], which the run's summary merges with the flows still held.
use std::collections::BTreeMap;

use super::{FinishedFlow, Phase, Simulation};
use crate::engine::time::to_us;
use crate::metrics::stream::{Samples, SlowdownSamples, EXACT_SAMPLES};

/// What the summary needs of the flows dropped from the table.
pub(super) struct RetiredTotals {
    /// Flows dropped.
    pub(super) flows: usize,
    /// Their FCTs (us).
    pub(super) fct_us: Samples,
    /// Their (payload bytes, slowdown).
    pub(super) slowdown: SlowdownSamples,
    /// Per traffic class: flows dropped and their FCTs (us).
    pub(super) classes: Vec<(usize, Samples)>,
    /// Per workload (scenarios that name them): flows dropped and their FCTs (us).
    pub(super) workloads: Vec<(usize, Samples)>,
    pub(super) retransmissions: u64,
    pub(super) timeouts: u64,
    pub(super) rts: u64,
    /// Ids of dropped flows that have load-balancer records, by index.
    lb_flow_ids: BTreeMap<u32, u64>,
    /// Load-balancer records already looked at for their flows' ids.
    lb_records_seen: usize,
}

impl Simulation {
    /// Switches streaming on: from now on [`Self::drop_finished_prefix`] may drop finished
    /// flows. Summaries stay exact up to [`EXACT_SAMPLES`] dropped flows, then quantiles come
    /// from a sketch with a bounded relative error (see [`crate::metrics::stream`]).
    pub fn stream_finished(&mut self) {
        if self.retired.is_none() {
            self.retired = Some(Box::new(RetiredTotals {
                flows: 0,
                fct_us: Samples::default(),
                slowdown: SlowdownSamples::new(self.slowdown_edges(), EXACT_SAMPLES),
                classes: vec![(0, Samples::default()); self.classes.len()],
                workloads: vec![(0, Samples::default()); self.workloads.len()],
                retransmissions: 0,
                timeouts: 0,
                rts: 0,
                lb_flow_ids: BTreeMap::new(),
                lb_records_seen: 0,
            }));
        }
    }

    /// Index of the first flow still held ([`Self::flows`] starts there).
    pub fn first_held_flow(&self) -> u32 {
        self.flows.base()
    }

    /// Id of flow `index`, held or dropped with load-balancer records (`None` otherwise).
    pub fn flow_id(&self, index: u32) -> Option<u64> {
        match self.flows.get(index as usize) {
            Some(f) => Some(f.spec.id),
            None => self.retired.as_ref()?.lb_flow_ids.get(&index).copied(),
        }
    }

    /// With streaming on ([`Self::stream_finished`]), hands out the finished flows at the
    /// front of the table (index order, up to the first flow not finished; slices of a sliced
    /// flow stay, as the summary joins them) and drops them: their records are freed, their
    /// ids no longer resolve as dependencies, and [`Self::take_completions`] forgets them.
    /// Without streaming, hands out nothing.
    pub fn drop_finished_prefix(&mut self) -> Vec<FinishedFlow> {
        let Some(mut totals) = self.retired.take() else {
            return Vec::new();
        };
        let base = self.flows.base();
        // Ids of flows with load-balancer records, while every such flow is still held.
        for r in &self.lb_records[totals.lb_records_seen..] {
            if let Some(f) = self.flows.get(r.flow as usize) {
                totals.lb_flow_ids.insert(r.flow, f.spec.id);
            }
        }
        totals.lb_records_seen = self.lb_records.len();
        let mut out = Vec::new();
        for (k, f) in self.flows.iter().enumerate() {
            // A finished flow leaves once its receiver has heard (late copies until then are
            // answered as on any thread count).
            if f.phase != Phase::Done || f.receiver.is_some() || f.spec.slice_of.is_some() {
                break;
            }
            let (started_at, finish) = (f.started_at.unwrap_or(0), f.finish.unwrap_or(0));
            let fct = to_us(finish - started_at);
            totals.flows += 1;
            totals.fct_us.push(fct);
            let ideal = self.ideal_fct(f);
            totals
                .slowdown
                .push(f.spec.bytes, (finish - started_at) as f64 / ideal as f64);
            let class = &mut totals.classes[f.spec.class as usize];
            class.0 += 1;
            class.1.push(fct);
            if let Some(workload) = totals.workloads.get_mut(f.spec.workload as usize) {
                workload.0 += 1;
                workload.1.push(fct);
            }
            totals.retransmissions += f.stats.retransmissions;
            totals.timeouts += f.stats.timeouts;
            totals.rts += f.stats.rts;
            out.push(FinishedFlow {
                index: base + k as u32,
                spec: f.spec.clone(),
                started_at,
                finish,
                stats: f.stats,
            });
        }
        for f in &out {
            if self.flow_index.get(&f.spec.id) == Some(&f.index) {
                self.flow_index.remove(&f.spec.id);
            }
        }
        self.flows.drop_front(out.len());
        let held = self.flows.base();
        self.completions.retain(|&i| i >= held);
        self.retired = Some(totals);
        out
    }
}
