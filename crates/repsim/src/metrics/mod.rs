//! Run summaries (flow completion time statistics and global counters; the simulation fills
//! them in) and opt-in time-series collectors. Writing them to files is the caller's business.
pub mod collect;
pub mod config;
pub mod elephants;
pub mod reorder;
pub mod slowdown;
pub mod stream;

pub use config::MetricsConfig;

use serde::{Deserialize, Serialize};

use crate::lb::reps::{FROZE, UNFROZE};
use crate::lb::LbRecord;

/// How the q-quantile of n sorted values is taken (`[metrics] quantiles`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quantiles {
    /// The nearest rank: the value at index ceil(q n) - 1 (the default).
    #[default]
    NearestRank,
    /// The value at index floor(q n), capped at the last (the LAPS code's analysis script;
    /// for 63 values its p99 is the largest, as the nearest rank's).
    FloorIndex,
}

impl Quantiles {
    /// The index of the q-quantile among `n` (> 0) sorted values.
    pub fn index(self, q: f64, n: usize) -> usize {
        match self {
            Quantiles::NearestRank => ((q * n as f64).ceil() as usize).clamp(1, n) - 1,
            Quantiles::FloorIndex => ((q * n as f64).floor() as usize).min(n - 1),
        }
    }
}

/// Flow completion time statistics in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FctStats {
    /// Shortest.
    pub min: f64,
    /// Average.
    pub mean: f64,
    /// Median (nearest rank unless the run says otherwise, see [`Quantiles`]).
    pub p50: f64,
    /// 99th percentile (nearest rank unless the run says otherwise).
    pub p99: f64,
    /// Longest.
    pub max: f64,
}

impl FctStats {
    /// Statistics of a list of FCTs (any order), percentiles by nearest rank; all zero when
    /// empty.
    pub fn from_values(values: &[f64]) -> Self {
        Self::with_quantiles(values, Quantiles::NearestRank)
    }

    /// Statistics of a list of FCTs (any order), percentiles as `quantiles` takes them; all
    /// zero when empty.
    pub fn with_quantiles(values: &[f64], quantiles: Quantiles) -> Self {
        if values.is_empty() {
            return FctStats::default();
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = |p: f64| v[quantiles.index(p, v.len())];
        FctStats {
            min: v[0],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(0.50),
            p99: rank(0.99),
            max: v[v.len() - 1],
        }
    }
}

/// One row of `flows.csv`; `FlowRow<&str>` borrows the run's label and class names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowRow<S = String> {
    /// Load balancer of the run.
    pub lb: S,
    /// Flow id.
    pub id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Start time (us).
    pub start_us: f64,
    /// Finish time (us), if it finished.
    pub finish_us: Option<f64>,
    /// Flow completion time (us), if it finished.
    pub fct_us: Option<f64>,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// Traffic class (`main`, or e.g. `background` for mixed traffic).
    pub class: S,
    /// Label of the flow's workload, when the scenario names its workloads.
    pub workload: Option<S>,
    /// The workload's tag (0: none).
    pub tag: u64,
    /// Receiver reordering (`[metrics] reorder` runs only).
    pub reorder: Option<reorder::FlowReorder>,
}

impl<S> FlowRow<S> {
    /// The same row with its strings turned into `T`s (`FlowRow<&str>` to an owned row).
    pub fn map_strings<T>(self, f: impl Fn(S) -> T) -> FlowRow<T> {
        FlowRow {
            lb: f(self.lb),
            id: self.id,
            src: self.src,
            dst: self.dst,
            bytes: self.bytes,
            start_us: self.start_us,
            finish_us: self.finish_us,
            fct_us: self.fct_us,
            retransmissions: self.retransmissions,
            class: f(self.class),
            workload: self.workload.map(&f),
            tag: self.tag,
            reorder: self.reorder,
        }
    }
}

/// Flow statistics of one traffic class (mixed traffic).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassSummary {
    /// Class name (`main`, `background`, ...).
    pub class: String,
    /// Load balancer the class used.
    pub lb: String,
    /// Flows offered.
    pub flows_total: usize,
    /// Flows that finished.
    pub flows_completed: usize,
    /// FCT statistics over finished flows.
    pub fct_us: FctStats,
}

/// Flow statistics of one workload (scenarios that name their workloads).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadSummary {
    /// The workload's label.
    pub workload: String,
    /// Flows offered.
    pub flows_total: usize,
    /// Flows that finished.
    pub flows_completed: usize,
    /// FCT statistics over finished flows.
    pub fct_us: FctStats,
}

/// The summary of one run, as written to `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// Load balancer.
    pub lb: String,
    /// Seed of the run.
    pub seed: u64,
    /// Flows offered.
    pub flows_total: usize,
    /// Flows that finished.
    pub flows_completed: usize,
    /// FCT statistics over finished flows.
    pub fct_us: FctStats,
    /// Data packets dropped.
    pub drops: u64,
    /// Data packets trimmed.
    pub trims: u64,
    /// Data packets ECN-marked.
    pub ecn_marks: u64,
    /// Data packets retransmitted.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// RTS (request to send) packets sent after timeouts.
    pub rts: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds of the run (not serialized: `summary.json` holds only what the
    /// inputs determine; the wall time is in `run.json`).
    #[serde(skip_serializing)]
    pub wall_s: f64,
    /// Simulated time at the end (us).
    pub sim_time_us: f64,
    /// Most packets the simulator held at once (not serialized: a measure of the simulator's
    /// memory, like the wall time in `run.json`; on threads, the partitions' peaks added).
    #[serde(skip_serializing)]
    pub peak_packets: usize,
    /// REPS: times a connection entered freezing mode.
    pub freezes: u64,
    /// REPS: times a connection left freezing mode.
    pub unfreezes: u64,
    /// Data packets discarded by failed elements (included in `drops`).
    pub fault_drops: u64,
    /// Data packets trimmed by failed elements (`loss = "trim"`; not in `trims`).
    pub fault_trims: u64,
    /// ACKs and NACKs lost (failed elements, no route).
    pub control_drops: u64,
    /// ACKs sent by receivers.
    pub acks: u64,
    /// NACKs sent by receivers.
    pub nacks: u64,
    /// Bytes of ACKs and NACKs as a fraction of the data bytes senders put on the wire (the
    /// reverse-path cost of the ACK policy).
    pub ack_overhead: f64,
    /// Load-balancer reroutes (PLB, flowlet and the like).
    pub reroutes: u64,
    /// FCT slowdown (FCT over the ideal FCT on an idle fabric) by flow-size bucket, then
    /// over all finished flows.
    pub slowdown: Vec<slowdown::SlowdownBucket>,
    /// PULL (credit) packets receivers sent (receiver-driven congestion control only).
    #[serde(skip_serializing_if = "is_zero")]
    pub credits: u64,
    /// Mixed traffic only: statistics per class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<ClassSummary>>,
    /// Scenarios that name their workloads only: statistics per workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workloads: Option<Vec<WorkloadSummary>>,
    /// Flows given up because no path to their destination was left, one message each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreachable: Vec<String>,
    /// Flows given up although a path existed (stuck on failed paths), one message each, and
    /// why the run stopped before its end if it did (a PFC deadlock).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stalled: Vec<String>,
    /// The switch scheme's own counts (e.g. ConWeave's control packets and reorder-queue
    /// peaks); absent for schemes that keep none.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub switch_stats: std::collections::BTreeMap<String, u64>,
    /// PFC runs only: pause frames switches sent (refreshes included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_pauses: Option<u64>,
    /// PFC runs only: time ports were paused, summed over ports (us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_paused_us: Option<f64>,
    /// `[loss]` runs only: data packets random loss discarded (included in `drops`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_loss_drops: Option<u64>,
    /// `[loss]` runs only: control packets random loss discarded (in `control_drops`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_loss_control_drops: Option<u64>,
    /// `[metrics] reorder` runs only: receiver reordering over the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder: Option<reorder::ReorderSummary>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// (freezes, unfreezes) among load-balancer records.
pub fn freeze_counts(records: &[LbRecord]) -> (u64, u64) {
    let mut c = (0, 0);
    for r in records {
        match r.event.name {
            FROZE => c.0 += 1,
            UNFROZE => c.1 += 1,
            _ => {}
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let s = FctStats::from_values(&v);
        assert_eq!((s.min, s.p50, s.p99, s.max), (1.0, 50.0, 99.0, 100.0));
        assert_eq!(s.mean, 50.5);
        assert_eq!(FctStats::from_values(&[7.0]).p99, 7.0);
    }

    #[test]
    fn percentiles_at_the_floor_index_as_the_laps_code() {
        // 100 values: floor(0.99 x 100) = 99, the largest, where the nearest rank takes 99.
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let s = FctStats::with_quantiles(&v, Quantiles::FloorIndex);
        assert_eq!((s.p50, s.p99, s.max), (51.0, 100.0, 100.0));
        // 1,000 values: index 990 (the 991st) against the nearest rank's 989.
        let v: Vec<f64> = (0..1000).map(|x| x as f64).collect();
        assert_eq!(
            FctStats::with_quantiles(&v, Quantiles::FloorIndex).p99,
            990.0
        );
        assert_eq!(FctStats::from_values(&v).p99, 989.0);
        // Table 1's 63 flows: both rules take the largest.
        let v: Vec<f64> = (0..63).map(|x| x as f64).collect();
        assert_eq!(
            FctStats::with_quantiles(&v, Quantiles::FloorIndex).p99,
            62.0
        );
        assert_eq!(FctStats::from_values(&v).p99, 62.0);
        assert_eq!(
            FctStats::with_quantiles(&[7.0], Quantiles::FloorIndex).p99,
            7.0
        );
    }
}
