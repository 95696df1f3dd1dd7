//! Run summaries and per-flow rows of a (finished or stopped) simulation.
use std::collections::BTreeMap;

use super::retire::RetiredTotals;
use super::{Flow, Simulation};
use crate::engine::time::{to_us, SEC};
use crate::engine::Time;
use crate::metrics::reorder;
use crate::metrics::slowdown::{self, SlowdownBucket};
use crate::metrics::stream::Samples;
use crate::metrics::{freeze_counts, ClassSummary, FctStats, FlowRow, RunSummary, WorkloadSummary};
use crate::workload::FlowSpec;

/// Time to serialize `bytes` at `rate_bps` (rounded up to whole picoseconds).
fn serialization_bytes(bytes: u64, rate_bps: u64) -> Time {
    (bytes as u128 * 8 * SEC as u128).div_ceil(rate_bps.max(1) as u128) as Time
}

impl Simulation {
    /// Per-flow rows (`flows.csv`), labelled with the run's name.
    pub fn flow_rows(&self) -> Vec<FlowRow> {
        self.flow_row_refs()
            .map(|r| r.map_strings(str::to_string))
            .collect()
    }

    /// Per-flow rows borrowing the run's label and class names (no string per row).
    pub fn flow_row_refs(&self) -> impl ExactSizeIterator<Item = FlowRow<&str>> + Clone + '_ {
        let base = self.flows.base();
        (self.flows.iter().enumerate()).map(move |(i, f)| self.flow_row(base + i as u32, f, f))
    }

    /// Flow `index`'s row from its sender's record `sent` and its receiver's `received` (one
    /// and the same record, but on a run split over threads).
    pub(super) fn flow_row<'a>(
        &'a self,
        index: u32,
        sent: &Flow,
        received: &Flow,
    ) -> FlowRow<&'a str> {
        FlowRow {
            lb: self.label.as_str(),
            id: sent.spec.id,
            src: sent.spec.src,
            dst: sent.spec.dst,
            bytes: sent.spec.bytes,
            start_us: to_us(sent.start()),
            finish_us: sent.finish.map(to_us),
            fct_us: sent.fct().map(to_us),
            retransmissions: sent.stats.retransmissions,
            class: self.class_name(index),
            workload: self.workload_label(sent.spec.workload),
            tag: sent.spec.tag,
            reorder: (self.cfg.metrics.reorder)
                .then(|| reorder::flow_row(&received.stats.reorder, received.stats.max_reorder)),
        }
    }

    /// The workload's flows as it offered them, sliced flows whole: (payload bytes, FCT if
    /// finished, ideal FCT). A sliced flow starts with its first slice, finishes with its
    /// last, and its ideal FCT is that of all its bytes on its slices' path.
    pub fn logical_flows(&self) -> Vec<(u64, Option<Time>, Time)> {
        let mut out: Vec<(u64, Option<Time>, Time)> = Vec::new();
        // Index in `out` of each sliced flow's entry, with its earliest start and last finish.
        let mut sliced: BTreeMap<u64, (usize, Option<Time>, Option<Time>, u64)> = BTreeMap::new();
        for f in self.flows.iter() {
            let Some(parent) = f.spec.slice_of else {
                out.push((f.spec.bytes, f.fct(), self.ideal_fct(f)));
                continue;
            };
            let e = sliced.entry(parent).or_insert_with(|| {
                out.push((0, None, 0));
                (out.len() - 1, None, Some(0), 0)
            });
            e.1 = match (e.1, f.started_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            e.2 = e.2.zip(f.finish).map(|(a, b)| a.max(b));
            e.3 += f.sizes.bytes + f.sizes.packets as u64 * f.sizes.header as u64;
            let i = e.0;
            out[i].0 += f.spec.bytes;
            let rate = |h: u32| {
                let topo = &self.world.topo;
                topo.links[topo.host_uplink[h as usize] as usize].rate_bps
            };
            out[i].2 =
                f.base_rtt + serialization_bytes(e.3, rate(f.spec.src).min(rate(f.spec.dst)));
            out[i].1 = e.1.zip(e.2).map(|(s, t)| t - s);
        }
        out
    }

    /// The run's summary (`summary.json`); `wall_s` is the wall-clock time it took.
    pub fn summary(&self, wall_s: f64) -> RunSummary {
        let logical = self.logical_flows();
        let fcts: Vec<f64> = logical.iter().filter_map(|l| l.1.map(to_us)).collect();
        // Flows streamed out of the table count with those still held.
        let retired = self.retired.as_deref();
        let (flows_total, flows_completed, fct_us) = match retired {
            None => (
                logical.len(),
                fcts.len(),
                FctStats::with_quantiles(&fcts, self.cfg.metrics.quantiles),
            ),
            Some(r) => (
                r.flows + logical.len(),
                r.fct_us.len() + fcts.len(),
                r.fct_us.fct_stats(&fcts, self.cfg.metrics.quantiles),
            ),
        };
        let held = |get: fn(&Flow) -> u64, dropped: fn(&super::retire::RetiredTotals) -> u64| {
            self.flows.iter().map(get).sum::<u64>() + retired.map_or(0, dropped)
        };
        let c = self.counters();
        let (freezes, unfreezes) = freeze_counts(&self.lb_records);
        let faults = self.fault_stats();
        let pfc = self.pfc_totals();
        let switch_stats: std::collections::BTreeMap<String, u64> = self
            .switch_stats()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        RunSummary {
            lb: self.label.clone(),
            seed: self.cfg.seed,
            flows_total,
            flows_completed,
            fct_us,
            drops: c.data_dropped,
            trims: c.trims,
            ecn_marks: self.world.port_cold.iter().map(|c| c.ecn_marks()).sum(),
            retransmissions: held(|f| f.stats.retransmissions, |r| r.retransmissions),
            timeouts: held(|f| f.stats.timeouts, |r| r.timeouts),
            rts: held(|f| f.stats.rts, |r| r.rts),
            events: c.events,
            wall_s,
            sim_time_us: to_us(self.last_event),
            peak_packets: self.peak_packets(),
            freezes,
            unfreezes,
            fault_drops: faults.map(|f| f.data_dropped).unwrap_or(0),
            fault_trims: faults.map(|f| f.data_trimmed).unwrap_or(0),
            control_drops: c.control_dropped,
            acks: c.acks_sent,
            nacks: c.nacks_sent,
            ack_overhead: if c.data_bytes_sent == 0 {
                0.0
            } else {
                (c.acks_sent + c.nacks_sent) as f64 * self.transport.header as f64
                    / c.data_bytes_sent as f64
            },
            slowdown: self.slowdown(),
            // Sender-side reroutes, and those a switch scheme counts (Reunion's, flowlets that
            // moved their flow): its events may be recorded or not, its count always is.
            reroutes: self
                .lb_records
                .iter()
                .filter(|r| r.event.is_sender_reroute())
                .count() as u64
                + switch_stats.get("reroutes").copied().unwrap_or(0),
            credits: c.credits_sent,
            classes: (self.classes.len() > 1).then(|| self.class_summaries()),
            workloads: (!self.workloads.is_empty()).then(|| self.workload_summaries()),
            unreachable: self.unreachable_flows(),
            stalled: self
                .stalled_flows()
                .into_iter()
                .chain(self.halt.clone())
                .collect(),
            switch_stats,
            pfc_pauses: pfc.map(|t| t.0),
            pfc_paused_us: pfc.map(|t| t.1),
            random_loss_drops: self.random_loss_stats().map(|s| s.data_dropped),
            random_loss_control_drops: self.random_loss_stats().map(|s| s.control_dropped),
            reorder: if self.cfg.metrics.reorder {
                self.fabric.reorder.summary()
            } else {
                None
            },
        }
    }

    /// The FCT a flow would have alone on an idle fabric: the unloaded round trip of its
    /// path plus every byte it sends (headers included) serialized at the slower of its two
    /// host links.
    pub fn ideal_fct(&self, f: &Flow) -> Time {
        let topo = &self.world.topo;
        let rate = |h: u32| topo.links[topo.host_uplink[h as usize] as usize].rate_bps;
        let bottleneck = rate(f.spec.src).min(rate(f.spec.dst));
        let wire = f.sizes.bytes + f.sizes.packets as u64 * f.sizes.header as u64;
        f.base_rtt + serialization_bytes(wire, bottleneck)
    }

    /// Upper edges of the slowdown buckets: the configured ones, or one bandwidth-delay
    /// product of the network (largest base RTT at the slowest host link).
    pub fn slowdown_edges(&self) -> Vec<u64> {
        if let Some(edges) = self.cfg.metrics.slowdown_edges(self.transport.mtu) {
            return edges;
        }
        let topo = &self.world.topo;
        let slowest = (0..topo.hosts)
            .map(|h| topo.links[topo.host_uplink[h as usize] as usize].rate_bps)
            .min()
            .unwrap_or(0);
        vec![(self.connections.max_base_rtt as u128 * slowest as u128 / (8 * SEC as u128)) as u64]
    }

    /// FCT slowdown of the finished flows by size bucket ([`Self::slowdown_edges`]).
    pub fn slowdown(&self) -> Vec<SlowdownBucket> {
        let samples: Vec<(u64, f64)> = self
            .logical_flows()
            .into_iter()
            .filter_map(|(bytes, fct, ideal)| Some((bytes, fct? as f64 / ideal as f64)))
            .collect();
        match self.retired.as_deref() {
            Some(r) => r.slowdown.by_size(&samples),
            None => slowdown::by_size(&samples, &self.slowdown_edges()),
        }
    }

    /// Flow statistics per traffic class.
    pub fn class_summaries(&self) -> Vec<ClassSummary> {
        let stats = self.group_stats(self.classes.len(), |f| f.class as usize, |r| &r.classes);
        self.classes
            .iter()
            .zip(stats)
            .map(
                |(class, (flows_total, flows_completed, fct_us))| ClassSummary {
                    class: class.name.clone(),
                    lb: class
                        .lb
                        .as_ref()
                        .map_or_else(|| self.label.clone(), |lb| lb.name().to_string()),
                    flows_total,
                    flows_completed,
                    fct_us,
                },
            )
            .collect()
    }

    /// Flow statistics per workload (none when the scenario does not name its workloads).
    pub fn workload_summaries(&self) -> Vec<WorkloadSummary> {
        let stats = self.group_stats(
            self.workloads.len(),
            |f| f.workload as usize,
            |r| &r.workloads,
        );
        self.workloads
            .iter()
            .zip(stats)
            .map(
                |(label, (flows_total, flows_completed, fct_us))| WorkloadSummary {
                    workload: label.clone(),
                    flows_total,
                    flows_completed,
                    fct_us,
                },
            )
            .collect()
    }

    /// (flows offered, flows finished, FCT statistics) of each of `groups` groups of flows,
    /// `group` placing a flow, `retired` giving the flows streaming dropped by group.
    fn group_stats(
        &self,
        groups: usize,
        group: impl Fn(&FlowSpec) -> usize,
        retired: impl Fn(&RetiredTotals) -> &[(usize, Samples)],
    ) -> Vec<(usize, usize, FctStats)> {
        (0..groups)
            .map(|g| {
                let flows: Vec<_> = self.flows.iter().filter(|f| group(&f.spec) == g).collect();
                let fcts: Vec<f64> = flows.iter().filter_map(|f| f.fct().map(to_us)).collect();
                match self.retired.as_deref() {
                    None => (
                        flows.len(),
                        fcts.len(),
                        FctStats::with_quantiles(&fcts, self.cfg.metrics.quantiles),
                    ),
                    Some(r) => {
                        let (dropped, samples) = &retired(r)[g];
                        (
                            dropped + flows.len(),
                            samples.len() + fcts.len(),
                            samples.fct_stats(&fcts, self.cfg.metrics.quantiles),
                        )
                    }
                }
            })
            .collect()
    }
}
