//! Statistics of flows that were streamed out of a run (long traces): exact while they are
//! few, then a bounded log-bucket sketch, so that memory does not grow with the trace.
//!
//! [`Samples`] keeps every value up to [`EXACT_SAMPLES`] of them (8 bytes each; the summary
//! is then exactly what [`FctStats::from_values`] and [`slowdown::by_size`] give, byte for
//! byte), then moves them into a [`LogSketch`]: buckets whose bounds grow by a factor
//! `(1 + a) / (1 - a)` with a = [`SKETCH_RELATIVE_ERROR`] (0.5 %), so every quantile it reports
//! is within 0.5 % (relative) of a value of the requested nearest rank, whatever the number of
//! samples; min, max and count stay exact, the mean is exact up to floating-point summation
//! order. FCTs from 1 ns to 1000 s fit in about 2,800 buckets.
use std::collections::BTreeMap;

use super::slowdown::{self, SlowdownBucket};
use super::{FctStats, Quantiles};

/// Values kept exactly before a [`Samples`] switches to its sketch (65,536: a few MB at most
/// for a run's FCT, slowdown and per-class samples together, reached within the first second
/// of a busy trace, so that a 1 s and a 10 s run peak at the same memory).
pub const EXACT_SAMPLES: usize = 1 << 16;

/// Largest relative error of a quantile read from a [`LogSketch`].
pub const SKETCH_RELATIVE_ERROR: f64 = 0.005;

/// A quantile sketch over positive values with a bounded relative error (logarithmic
/// buckets, as DDSketch). Values at or below zero are counted in one bucket of their own.
#[derive(Clone, Debug, Default)]
pub struct LogSketch {
    buckets: BTreeMap<i32, u64>,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl LogSketch {
    fn log_gamma() -> f64 {
        ((1.0 + SKETCH_RELATIVE_ERROR) / (1.0 - SKETCH_RELATIVE_ERROR)).ln()
    }

    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        // Bucket k holds (gamma^(k-1), gamma^k]; non-positive values go below every other.
        let k = if v > 0.0 {
            (v.ln() / Self::log_gamma()).ceil() as i32
        } else {
            i32::MIN
        };
        *self.buckets.entry(k).or_insert(0) += 1;
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += v;
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean (zero when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// The nearest-rank `p` quantile (0 < p <= 1), within the relative error; zero when empty.
    pub fn quantile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((p * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (&k, &n) in &self.buckets {
            seen += n;
            if seen >= rank {
                if k == i32::MIN {
                    return self.min;
                }
                // The point of the bucket with the smallest relative distance to both bounds.
                let g = Self::log_gamma();
                let v = 2.0 * (k as f64 * g).exp() / (1.0 + g.exp());
                return v.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// FCT statistics from the sketch.
    pub fn fct_stats(&self) -> FctStats {
        if self.count == 0 {
            return FctStats::default();
        }
        FctStats {
            min: self.min,
            mean: self.mean(),
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            max: self.max,
        }
    }
}

/// Values of a streamed statistic: exact up to [`EXACT_SAMPLES`], a [`LogSketch`] after.
#[derive(Clone, Debug)]
pub struct Samples {
    exact: Vec<f64>,
    sketch: Option<LogSketch>,
    limit: usize,
}

impl Default for Samples {
    fn default() -> Self {
        Self::with_limit(EXACT_SAMPLES)
    }
}

impl Samples {
    /// Keeps up to `limit` values exactly.
    pub fn with_limit(limit: usize) -> Self {
        Samples {
            exact: Vec::new(),
            sketch: None,
            limit,
        }
    }

    /// Adds one value.
    pub fn push(&mut self, v: f64) {
        match &mut self.sketch {
            Some(s) => s.add(v),
            None if self.exact.len() < self.limit => self.exact.push(v),
            None => {
                let mut s = LogSketch::default();
                for x in std::mem::take(&mut self.exact) {
                    s.add(x);
                }
                s.add(v);
                self.sketch = Some(s);
            }
        }
    }

    /// Values added.
    pub fn len(&self) -> usize {
        self.sketch
            .as_ref()
            .map_or(self.exact.len(), |s| s.count() as usize)
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while every value is kept exactly.
    pub fn is_exact(&self) -> bool {
        self.sketch.is_none()
    }

    /// FCT statistics of these values plus `more`: exact ([`FctStats::with_quantiles`]) while
    /// no sketch is in use (a sketch takes its quantiles by rank whatever `quantiles` says).
    pub fn fct_stats(&self, more: &[f64], quantiles: Quantiles) -> FctStats {
        match &self.sketch {
            None => {
                let mut all = self.exact.clone();
                all.extend_from_slice(more);
                FctStats::with_quantiles(&all, quantiles)
            }
            Some(s) => {
                let mut s = s.clone();
                more.iter().for_each(|&v| s.add(v));
                s.fct_stats()
            }
        }
    }
}

/// Streamed (payload bytes, slowdown) samples: exact pairs up to [`EXACT_SAMPLES`], then one
/// sketch per size bucket plus one for `all`.
#[derive(Clone, Debug)]
pub struct SlowdownSamples {
    edges: Vec<u64>,
    exact: Vec<(u64, f64)>,
    sketches: Option<Vec<LogSketch>>,
    limit: usize,
}

impl SlowdownSamples {
    /// Samples bucketed at `edges` (as [`slowdown::by_size`]), up to `limit` kept exactly.
    pub fn new(edges: Vec<u64>, limit: usize) -> Self {
        SlowdownSamples {
            edges,
            exact: Vec::new(),
            sketches: None,
            limit,
        }
    }

    fn add_to(sketches: &mut [LogSketch], edges: &[u64], bytes: u64, v: f64) {
        let bucket = edges.iter().take_while(|&&e| bytes >= e).count();
        sketches[bucket].add(v);
        sketches[edges.len() + 1].add(v);
    }

    /// Adds one flow's sample.
    pub fn push(&mut self, bytes: u64, slowdown: f64) {
        match &mut self.sketches {
            Some(s) => Self::add_to(s, &self.edges, bytes, slowdown),
            None if self.exact.len() < self.limit => self.exact.push((bytes, slowdown)),
            None => {
                let mut s = vec![LogSketch::default(); self.edges.len() + 2];
                for (b, v) in std::mem::take(&mut self.exact) {
                    Self::add_to(&mut s, &self.edges, b, v);
                }
                Self::add_to(&mut s, &self.edges, bytes, slowdown);
                self.sketches = Some(s);
            }
        }
    }

    /// Statistics per size bucket of these samples plus `more`, as [`slowdown::by_size`]
    /// (exactly that while no sketch is in use).
    pub fn by_size(&self, more: &[(u64, f64)]) -> Vec<SlowdownBucket> {
        match &self.sketches {
            None => {
                let mut all = self.exact.clone();
                all.extend_from_slice(more);
                slowdown::by_size(&all, &self.edges)
            }
            Some(s) => {
                let mut s = s.clone();
                for &(b, v) in more {
                    Self::add_to(&mut s, &self.edges, b, v);
                }
                slowdown::from_sketches(&s, &self.edges)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        // Spread over five decades, as FCTs of a web-search trace are.
        (0..n).map(|_| 10f64.powf(rng.unit() * 5.0)).collect()
    }

    #[test]
    fn sketch_quantiles_are_within_the_relative_error() {
        let v = values(50_000, 3);
        let mut s = LogSketch::default();
        v.iter().for_each(|&x| s.add(x));
        let exact = FctStats::from_values(&v);
        let got = s.fct_stats();
        for (e, g) in [(exact.p50, got.p50), (exact.p99, got.p99)] {
            assert!((g / e - 1.0).abs() <= SKETCH_RELATIVE_ERROR, "{g} vs {e}");
        }
        assert_eq!((got.min, got.max), (exact.min, exact.max));
        assert!((got.mean / exact.mean - 1.0).abs() < 1e-9);
        assert_eq!(LogSketch::default().quantile(0.5), 0.0);
    }

    #[test]
    fn samples_are_exact_up_to_the_limit_then_bounded() {
        let v = values(1000, 5);
        let mut exact = Samples::with_limit(2000);
        let mut sketched = Samples::with_limit(100);
        for &x in &v[..900] {
            exact.push(x);
            sketched.push(x);
        }
        assert!(exact.is_exact() && !sketched.is_exact());
        assert_eq!(sketched.len(), 900);
        assert_eq!(
            exact.fct_stats(&v[900..], Quantiles::NearestRank),
            FctStats::from_values(&v)
        );
        let s = sketched.fct_stats(&v[900..], Quantiles::NearestRank);
        let e = FctStats::from_values(&v);
        assert!((s.p99 / e.p99 - 1.0).abs() <= SKETCH_RELATIVE_ERROR);
        assert_eq!(s.max, e.max);
    }

    #[test]
    fn slowdown_samples_match_by_size_then_stay_close() {
        let v = values(3000, 9);
        let pairs: Vec<(u64, f64)> = v
            .iter()
            .enumerate()
            .map(|(i, &x)| ((i as u64 * 7919) % 5000, 1.0 + x / 1000.0))
            .collect();
        let edges = vec![1000, 3000];
        let want = slowdown::by_size(&pairs, &edges);
        let mut exact = SlowdownSamples::new(edges.clone(), 10_000);
        let mut sketched = SlowdownSamples::new(edges.clone(), 500);
        for &(b, x) in &pairs[..2000] {
            exact.push(b, x);
            sketched.push(b, x);
        }
        assert_eq!(exact.by_size(&pairs[2000..]), want);
        let got = sketched.by_size(&pairs[2000..]);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (&g.bucket, g.flows, g.min_bytes),
                (&w.bucket, w.flows, w.min_bytes)
            );
            for (a, b) in [(g.p50, w.p50), (g.p99, w.p99), (g.p999, w.p999)] {
                assert!((a / b - 1.0).abs() <= SKETCH_RELATIVE_ERROR, "{a} vs {b}");
            }
        }
    }
}
