//! FCT slowdown: a flow's completion time over its ideal one on an idle fabric (the unloaded
//! round trip of its path plus its bytes, headers included, serialized at the bottleneck
//! rate, as ConWeave and HPCC define it), summarized per flow-size bucket.
use serde::Serialize;

use super::stream::LogSketch;

/// Slowdown statistics of the flows whose sizes fall in one bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlowdownBucket {
    /// `all`, or the size range (`<104000B`, `104000B-1000000B`, `>=1000000B`).
    pub bucket: String,
    /// Smallest payload size in the bucket (inclusive), bytes.
    pub min_bytes: u64,
    /// Largest payload size (exclusive), bytes; `None`: unbounded.
    pub max_bytes: Option<u64>,
    /// Finished flows in it.
    pub flows: usize,
    /// Mean slowdown.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// 99.9th percentile (nearest rank).
    pub p999: f64,
}

/// Statistics per bucket for (payload bytes, slowdown) samples: one bucket per interval
/// between the ascending `edges` (plus below the first and from the last), then `all`.
/// Empty buckets are listed with zero flows.
pub fn by_size(samples: &[(u64, f64)], edges: &[u64]) -> Vec<SlowdownBucket> {
    let mut out: Vec<SlowdownBucket> = bounds(edges)
        .into_iter()
        .map(|(lo, hi)| {
            let values: Vec<f64> = samples
                .iter()
                .filter(|(b, _)| *b >= lo && hi.is_none_or(|h| *b < h))
                .map(|&(_, s)| s)
                .collect();
            stats(bucket_name(lo, hi), lo, hi, values)
        })
        .collect();
    let all = samples.iter().map(|&(_, s)| s).collect();
    out.push(stats("all".into(), 0, None, all));
    out
}

/// The buckets of [`by_size`] from one sketch per bucket and one for `all` (last), as
/// [`crate::metrics::stream::SlowdownSamples`] keeps them for long runs.
pub fn from_sketches(sketches: &[LogSketch], edges: &[u64]) -> Vec<SlowdownBucket> {
    let mut bounds = bounds(edges);
    bounds.push((0, None));
    bounds
        .into_iter()
        .zip(sketches)
        .enumerate()
        .map(|(i, ((lo, hi), s))| SlowdownBucket {
            bucket: if i == edges.len() + 1 {
                "all".into()
            } else {
                bucket_name(lo, hi)
            },
            min_bytes: lo,
            max_bytes: hi,
            flows: s.count() as usize,
            mean: s.mean(),
            p50: s.quantile(0.5),
            p99: s.quantile(0.99),
            p999: s.quantile(0.999),
        })
        .collect()
}

/// (lower, upper) payload bounds of the buckets at `edges`, the last unbounded.
fn bounds(edges: &[u64]) -> Vec<(u64, Option<u64>)> {
    let mut bounds: Vec<(u64, Option<u64>)> = Vec::new();
    let mut lo = 0;
    for &e in edges {
        bounds.push((lo, Some(e)));
        lo = e;
    }
    bounds.push((lo, None));
    bounds
}

fn bucket_name(lo: u64, hi: Option<u64>) -> String {
    match (lo, hi) {
        (0, Some(h)) => format!("<{h}B"),
        (l, Some(h)) => format!("{l}B-{h}B"),
        (0, None) => "all sizes".to_string(),
        (l, None) => format!(">={l}B"),
    }
}

fn stats(
    bucket: String,
    min_bytes: u64,
    max_bytes: Option<u64>,
    mut v: Vec<f64>,
) -> SlowdownBucket {
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = |p: f64| {
        if v.is_empty() {
            0.0
        } else {
            v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
        }
    };
    SlowdownBucket {
        bucket,
        min_bytes,
        max_bytes,
        flows: v.len(),
        mean: if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        },
        p50: rank(0.5),
        p99: rank(0.99),
        p999: rank(0.999),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_at_the_edges_and_rank_by_nearest() {
        let mut samples: Vec<(u64, f64)> = (1..=1000).map(|i| (100, i as f64)).collect();
        samples.push((5000, 7.0));
        samples.push((10_000, 9.0));
        let b = by_size(&samples, &[1000, 10_000]);
        assert_eq!(
            b.iter().map(|x| x.bucket.as_str()).collect::<Vec<_>>(),
            ["<1000B", "1000B-10000B", ">=10000B", "all"]
        );
        assert_eq!(b[0].flows, 1000);
        assert_eq!((b[0].p50, b[0].p99, b[0].p999), (500.0, 990.0, 999.0));
        assert_eq!(b[0].mean, 500.5);
        assert_eq!((b[1].flows, b[1].mean), (1, 7.0));
        assert_eq!((b[2].flows, b[2].max_bytes), (1, None));
        assert_eq!(b[3].flows, 1002);
        // No edges: one bucket of every size, then all.
        let b = by_size(&samples, &[]);
        assert_eq!(b[0].bucket, "all sizes");
        assert_eq!(b[0].flows, b[1].flows);
        // An empty bucket has zero flows and zero statistics.
        let b = by_size(&[(5, 2.0)], &[1000]);
        assert_eq!((b[1].flows, b[1].p99), (0, 0.0));
    }
}
