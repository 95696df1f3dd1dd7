//! Run summaries and per-flow rows of a (finished or stopped) simulation.
use super::Simulation;
use crate::engine::time::to_us;
use crate::metrics::{freeze_counts, ClassSummary, FctStats, FlowRow, RunSummary};

impl Simulation {
    /// Per-flow rows (`flows.csv`), labelled with the run's name.
    pub fn flow_rows(&self) -> Vec<FlowRow> {
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowRow {
                lb: self.label.clone(),
                id: f.spec.id,
                src: f.spec.src,
                dst: f.spec.dst,
                bytes: f.spec.bytes,
                start_us: to_us(f.started_at.unwrap_or(f.spec.start)),
                finish_us: f.finish.map(to_us),
                fct_us: f.fct().map(to_us),
                retransmissions: f.stats.retransmissions,
                class: self.class_name(i as u32).to_string(),
                tag: f.spec.tag,
            })
            .collect()
    }

    /// The run's summary (`summary.json`); `wall_s` is the wall-clock time it took.
    pub fn summary(&self, wall_s: f64) -> RunSummary {
        let fcts: Vec<f64> = self
            .flows
            .iter()
            .filter_map(|f| f.fct().map(to_us))
            .collect();
        let c = self.counters();
        let (freezes, unfreezes) = freeze_counts(&self.lb_records);
        let faults = self.fault_stats();
        RunSummary {
            lb: self.label.clone(),
            seed: self.cfg.seed,
            flows_total: self.flows.len(),
            flows_completed: fcts.len(),
            fct_us: FctStats::from_values(&fcts),
            drops: c.data_dropped,
            trims: c.trims,
            ecn_marks: self.world.ports.iter().map(|p| p.stats.ecn_marks).sum(),
            retransmissions: self.flows.iter().map(|f| f.stats.retransmissions).sum(),
            timeouts: self.flows.iter().map(|f| f.stats.timeouts).sum(),
            rts: self.flows.iter().map(|f| f.stats.rts).sum(),
            events: c.events,
            wall_s,
            sim_time_us: to_us(self.last_event),
            peak_packets: self.peak_packets(),
            freezes,
            unfreezes,
            fault_drops: faults.map(|f| f.data_dropped).unwrap_or(0),
            fault_trims: faults.map(|f| f.data_trimmed).unwrap_or(0),
            control_drops: c.control_dropped,
            credits: c.credits_sent,
            classes: (self.classes.len() > 1).then(|| self.class_summaries()),
            unreachable: self.unreachable_flows(),
            stalled: self.stalled_flows(),
        }
    }

    /// Flow statistics per traffic class.
    pub fn class_summaries(&self) -> Vec<ClassSummary> {
        (0..self.classes.len())
            .map(|c| {
                let class = &self.classes[c];
                let flows: Vec<_> = self
                    .flows
                    .iter()
                    .filter(|f| f.spec.class as usize == c)
                    .collect();
                let fcts: Vec<f64> = flows.iter().filter_map(|f| f.fct().map(to_us)).collect();
                ClassSummary {
                    class: class.name.clone(),
                    lb: class
                        .lb
                        .as_ref()
                        .map_or_else(|| self.label.clone(), |lb| lb.name().to_string()),
                    flows_total: flows.len(),
                    flows_completed: fcts.len(),
                    fct_us: FctStats::from_values(&fcts),
                }
            })
            .collect()
    }
}
