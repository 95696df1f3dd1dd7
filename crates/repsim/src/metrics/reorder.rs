//! Receiver reordering (LAPS Fig. 9): how much a receiver holds above its cumulative point
//! (its reorder buffer, in packets and payload bytes) and how many packets arrive out of
//! order, for any transport.
//!
//! A sample is taken at every intact data packet a receiver gets (duplicates included,
//! trimmed headers not): the packet is out of order when its PSN is above the next PSN the
//! receiver expects, and the occupancy is what the receiver holds above its cumulative point
//! once it has taken the packet. (A go-back-N receiver discards out-of-order packets, so its
//! occupancy stays 0 while its out-of-order fraction still counts them.) The run-wide
//! distribution keeps packets exactly and bytes in 1 KiB buckets (percentiles are bucket upper
//! edges; mean and maximum are exact); recording is an add and an index per packet.
use serde::Serialize;

pub use crate::transport::FlowReorderCounts;

/// Occupancy values above this (packets, or KiB) share the last bucket.
const BUCKETS: usize = 1 << 16;

/// The run-wide reorder samples.
#[derive(Clone, Debug, Default)]
pub struct ReorderHistogram {
    /// Samples (intact data arrivals).
    arrivals: u64,
    /// Those that arrived out of order.
    out_of_order: u64,
    /// Count of samples by packets held.
    packets: Vec<u64>,
    /// Count of samples by KiB held (rounded up).
    kib: Vec<u64>,
    /// Sums and maxima for exact means and maxima.
    packets_sum: u64,
    bytes_sum: u128,
    max_packets: u32,
    max_bytes: u64,
}

/// Mean, median, 99th percentile and maximum of a distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Distribution {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Reordering over a whole run (`summary.json` `reorder`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReorderSummary {
    /// Intact data packets that reached their receivers.
    pub arrivals: u64,
    /// Fraction of them that arrived out of order.
    pub out_of_order_fraction: f64,
    /// Receiver reorder-buffer occupancy at each arrival, in packets.
    pub buffer_packets: Distribution,
    /// Receiver reorder-buffer occupancy at each arrival, in payload bytes (percentiles at
    /// 1 KiB resolution).
    pub buffer_bytes: Distribution,
}

/// One flow's reordering (`flows.csv` columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FlowReorder {
    /// Fraction of its intact data arrivals that came out of order.
    pub out_of_order_fraction: f64,
    /// Mean reorder-buffer occupancy over its arrivals, packets.
    pub mean_packets: f64,
    /// Largest occupancy, packets.
    pub max_packets: u32,
    /// Mean occupancy over its arrivals, payload bytes.
    pub mean_bytes: f64,
    /// Largest occupancy, payload bytes.
    pub max_bytes: u64,
}

/// A flow's `flows.csv` values from its counters, with the largest occupancy in packets
/// (`max_packets`, kept by the flow's statistics).
pub fn flow_row(counts: &FlowReorderCounts, max_packets: u32) -> FlowReorder {
    let n = counts.arrivals.max(1) as f64;
    FlowReorder {
        out_of_order_fraction: counts.out_of_order as f64 / n,
        mean_packets: counts.packets_sum as f64 / n,
        max_packets,
        mean_bytes: counts.bytes_sum as f64 / n,
        max_bytes: counts.max_bytes,
    }
}

impl ReorderHistogram {
    /// Records one arrival: out of order or not, and what the receiver then holds.
    #[inline]
    pub fn record(&mut self, out_of_order: bool, packets: u32, bytes: u64) {
        self.arrivals += 1;
        self.out_of_order += out_of_order as u64;
        bump(&mut self.packets, packets as usize);
        bump(&mut self.kib, bytes.div_ceil(1024) as usize);
        self.packets_sum += packets as u64;
        self.bytes_sum += bytes as u128;
        self.max_packets = self.max_packets.max(packets);
        self.max_bytes = self.max_bytes.max(bytes);
    }

    /// Adds `other`'s samples (another partition's receivers of the same run).
    pub fn absorb(&mut self, other: &ReorderHistogram) {
        self.arrivals += other.arrivals;
        self.out_of_order += other.out_of_order;
        for (mine, theirs) in [
            (&mut self.packets, &other.packets),
            (&mut self.kib, &other.kib),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
        self.packets_sum += other.packets_sum;
        self.bytes_sum += other.bytes_sum;
        self.max_packets = self.max_packets.max(other.max_packets);
        self.max_bytes = self.max_bytes.max(other.max_bytes);
    }

    /// The run's summary; `None` before any arrival.
    pub fn summary(&self) -> Option<ReorderSummary> {
        if self.arrivals == 0 {
            return None;
        }
        let n = self.arrivals as f64;
        Some(ReorderSummary {
            arrivals: self.arrivals,
            out_of_order_fraction: self.out_of_order as f64 / n,
            buffer_packets: Distribution {
                mean: self.packets_sum as f64 / n,
                p50: percentile(&self.packets, self.arrivals, 50) as f64,
                p99: percentile(&self.packets, self.arrivals, 99) as f64,
                max: self.max_packets as f64,
            },
            buffer_bytes: Distribution {
                mean: self.bytes_sum as f64 / n,
                p50: (percentile(&self.kib, self.arrivals, 50) * 1024) as f64,
                p99: (percentile(&self.kib, self.arrivals, 99) * 1024) as f64,
                max: self.max_bytes as f64,
            },
        })
    }
}

/// Counts one sample of `value` (the last bucket takes everything above it). The vector grows
/// only when a larger occupancy than ever before is seen.
#[inline]
fn bump(counts: &mut Vec<u64>, value: usize) {
    let i = value.min(BUCKETS - 1);
    if i >= counts.len() {
        counts.resize(i + 1, 0);
    }
    counts[i] += 1;
}

/// Nearest-rank `q`-th percentile of `total` samples counted by value.
fn percentile(counts: &[u64], total: u64, q: u64) -> u64 {
    let rank = (total * q).div_ceil(100).max(1);
    let mut seen = 0;
    for (value, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return value as u64;
        }
    }
    counts.len().saturating_sub(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples split over two histograms (two partitions' receivers) and added give the
    /// summary of one histogram holding them all.
    #[test]
    fn absorbed_halves_summarise_as_the_whole() {
        let (mut whole, mut a, mut b) = Default::default();
        let whole: &mut ReorderHistogram = &mut whole;
        for i in 0..500u32 {
            let (late, packets, bytes) = (i % 7 == 0, i % 13, u64::from(i % 29) * 900);
            whole.record(late, packets, bytes);
            let half: &mut ReorderHistogram = if i % 3 == 0 { &mut a } else { &mut b };
            half.record(late, packets, bytes);
        }
        a.absorb(&b);
        assert_eq!(a.summary(), whole.summary());
    }

    #[test]
    fn summary_counts_out_of_order_and_occupancy() {
        let mut h = ReorderHistogram::default();
        assert!(h.summary().is_none());
        // 100 arrivals: 98 in order with nothing held, one out of order holding 1 packet
        // (1000 B), one holding 40 packets (40,000 B).
        for _ in 0..98 {
            h.record(false, 0, 0);
        }
        h.record(true, 1, 1000);
        h.record(true, 40, 40_000);
        let s = h.summary().unwrap();
        assert_eq!(s.arrivals, 100);
        assert_eq!(s.out_of_order_fraction, 0.02);
        assert_eq!(s.buffer_packets.p50, 0.0);
        assert_eq!(s.buffer_packets.p99, 1.0);
        assert_eq!(s.buffer_packets.max, 40.0);
        assert_eq!(s.buffer_packets.mean, 0.41);
        assert_eq!(s.buffer_bytes.p99, 1024.0);
        assert_eq!(s.buffer_bytes.max, 40_000.0);
        assert_eq!(s.buffer_bytes.mean, 410.0);
    }

    #[test]
    fn flow_rows_average_over_arrivals() {
        let mut f = FlowReorderCounts::default();
        f.record(false, 0, 0);
        f.record(true, 2, 8000);
        f.record(false, 2, 8000);
        f.record(false, 0, 0);
        let r = flow_row(&f, 2);
        assert_eq!(r.out_of_order_fraction, 0.25);
        assert_eq!(r.mean_packets, 1.0);
        assert_eq!(r.mean_bytes, 4000.0);
        assert_eq!((r.max_packets, r.max_bytes), (2, 8000));
        // No arrivals: zeros, not NaN.
        assert_eq!(
            flow_row(&FlowReorderCounts::default(), 0),
            FlowReorder::default()
        );
    }
}
