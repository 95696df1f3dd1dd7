//! A Count-Min Sketch (Cormode and Muthukrishnan, 2005) with a small top-k table: Reunion's
//! elephant detector at the source ToR.
//!
//! `depth` rows of `width` counters; an item increments one counter per row, chosen by the
//! project's pinned ECMP hash ([`crate::net::hash::ecmp_hash`]) of the item's key under the
//! row's seed, and its estimate is the least of its counters. Counters saturate at
//! `2^counter_bits - 1` instead of wrapping, so an estimate never falls below the true count
//! (one-sided error) until a counter saturates.
//!
//! The error bound in the paper's form: with `width = 2 / epsilon` and `depth = log2(1 /
//! delta)`, one row over-counts an item by more than `epsilon * N` (N: the total added) with
//! probability at most 1/2 (Markov: its expected over-count is N / width), so all rows do with
//! probability at most `2^-depth = delta`. The paper's example, 2,000 counters and 7 hashes,
//! is epsilon = 0.001 and delta = 1/128.
//!
//! The top-k table keeps the `k` items with the largest estimates seen since they entered it
//! (the "hot items" of the paper): an item whose estimate beats the table's least entry
//! replaces it. Both the counters and the table's estimates are halved by [`CountMinSketch::
//! decay`] (Reunion calls it at the end of every interval), so a finished flow fades out.
use crate::net::hash::ecmp_hash;

/// A Count-Min Sketch with saturating counters and a top-k table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountMinSketch {
    width: u32,
    seeds: Vec<u32>,
    max: u32,
    counters: Vec<u32>,
    /// (key, estimate) of the hot items, at most `k`.
    top: Vec<(u64, u32)>,
    k: usize,
}

impl CountMinSketch {
    /// A sketch of `seeds.len()` rows of `width` counters of `counter_bits` bits, tracking the
    /// `k` hottest items.
    pub fn new(width: u32, seeds: &[u32], counter_bits: u32, k: usize) -> Self {
        let max = if counter_bits >= 32 {
            u32::MAX
        } else {
            (1u32 << counter_bits) - 1
        };
        CountMinSketch {
            width: width.max(1),
            seeds: seeds.to_vec(),
            max,
            counters: vec![0; width.max(1) as usize * seeds.len()],
            top: Vec::with_capacity(k),
            k,
        }
    }

    #[inline]
    fn cell(&self, row: usize, key: u64) -> usize {
        let h = ecmp_hash(key as u32, (key >> 32) as u32, self.seeds[row]);
        row * self.width as usize + (h % self.width) as usize
    }

    /// Adds `amount` to item `key`; returns its new estimate.
    #[inline]
    pub fn add(&mut self, key: u64, amount: u32) -> u32 {
        let mut estimate = u32::MAX;
        for row in 0..self.seeds.len() {
            let i = self.cell(row, key);
            let c = self.counters[i].saturating_add(amount).min(self.max);
            self.counters[i] = c;
            estimate = estimate.min(c);
        }
        estimate
    }

    /// The estimate of item `key` (never below its true count while no counter saturated).
    pub fn estimate(&self, key: u64) -> u32 {
        (0..self.seeds.len())
            .map(|row| self.counters[self.cell(row, key)])
            .min()
            .unwrap_or(0)
    }

    /// Adds `amount` to `key` and updates the top-k table; true if `key` is now among the hot
    /// items with an estimate of at least `floor`.
    #[inline]
    pub fn add_and_rank(&mut self, key: u64, amount: u32, floor: u32) -> bool {
        let estimate = self.add(key, amount);
        if let Some(entry) = self.top.iter_mut().find(|e| e.0 == key) {
            entry.1 = estimate;
            return estimate >= floor;
        }
        if self.k == 0 {
            return false;
        }
        if self.top.len() < self.k {
            self.top.push((key, estimate));
            return estimate >= floor;
        }
        let (least, least_estimate) = self
            .top
            .iter()
            .enumerate()
            .map(|(i, e)| (i, e.1))
            .min_by_key(|&(i, e)| (e, i))
            .expect("k > 0 entries");
        if estimate > least_estimate {
            self.top[least] = (key, estimate);
            return estimate >= floor;
        }
        false
    }

    /// True if `key` is in the top-k table with an estimate of at least `floor`.
    pub fn is_hot(&self, key: u64, floor: u32) -> bool {
        self.top.iter().any(|e| e.0 == key && e.1 >= floor)
    }

    /// Halves every counter and hot-item estimate; drops hot items that fall below `floor`.
    pub fn decay(&mut self, floor: u32) {
        self.decay_by(1, floor);
    }

    /// [`Self::decay`] `halvings` times over (what that many interval ends would do).
    pub fn decay_by(&mut self, halvings: u32, floor: u32) {
        let halve = |v: u32| v.checked_shr(halvings).unwrap_or(0);
        for c in &mut self.counters {
            *c = halve(*c);
        }
        for e in &mut self.top {
            e.1 = halve(e.1);
        }
        self.top.retain(|e| e.1 >= floor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

    /// A skewed random stream: `items` keys, key i drawn with weight ~ 1 / (i + 1).
    fn stream(rng: &mut Rng, items: u32, len: usize) -> Vec<u64> {
        let weights: Vec<f64> = (0..items).map(|i| 1.0 / (i as f64 + 1.0)).collect();
        let total: f64 = weights.iter().sum();
        let mut cumulative = Vec::with_capacity(weights.len());
        let mut acc = 0.0;
        for w in &weights {
            acc += w / total;
            cumulative.push(acc);
        }
        let salt = rng.next_u64();
        (0..len)
            .map(|_| {
                let u = rng.unit();
                let i = cumulative
                    .partition_point(|&c| c < u)
                    .min(items as usize - 1);
                (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt
            })
            .collect()
    }

    #[test]
    fn never_under_counts_and_over_counts_within_the_epsilon_bound() {
        // width = 2 / epsilon, depth = log2(1 / delta): epsilon = 0.02, delta = 1/16.
        let (width, depth) = (100u32, 4usize);
        let epsilon = 2.0 / width as f64;
        let delta = 0.5f64.powi(depth as i32);
        let mut rng = Rng::new(99);
        let (mut queries, mut beyond, mut over_counted) = (0u64, 0u64, 0u64);
        for trial in 0..60 {
            let seeds: Vec<u32> = (0..depth).map(|_| rng.next_u32()).collect();
            let mut cms = CountMinSketch::new(width, &seeds, 32, 0);
            let items = stream(&mut rng, 2000, 20_000);
            let mut truth = std::collections::BTreeMap::new();
            for &k in &items {
                cms.add(k, 1);
                *truth.entry(k).or_insert(0u32) += 1;
            }
            let n = items.len() as f64;
            for (&k, &count) in &truth {
                let est = cms.estimate(k);
                assert!(est >= count, "trial {trial}: under-count {est} < {count}");
                queries += 1;
                over_counted += (est > count) as u64;
                beyond += ((est - count) as f64 > epsilon * n) as u64;
            }
        }
        let rate = beyond as f64 / queries as f64;
        assert!(
            rate <= delta,
            "{beyond} of {queries} beyond epsilon N: {rate} > {delta}"
        );
        // The sketch really is approximate at this size: a bound that held because nothing
        // collided would test nothing.
        assert!(over_counted > queries / 10, "{over_counted} of {queries}");
    }

    #[test]
    fn a_single_row_exceeds_the_bound_more_often_than_delta() {
        // The same streams with one row break a delta of 1/16: depth matters.
        let width = 100u32;
        let epsilon = 2.0 / width as f64;
        let mut rng = Rng::new(5);
        let (mut queries, mut beyond) = (0u64, 0u64);
        for _ in 0..20 {
            let mut cms = CountMinSketch::new(width, &[rng.next_u32()], 32, 0);
            let items = stream(&mut rng, 2000, 20_000);
            let mut truth = std::collections::BTreeMap::new();
            for &k in &items {
                cms.add(k, 1);
                *truth.entry(k).or_insert(0u32) += 1;
            }
            for (&k, &count) in &truth {
                queries += 1;
                beyond += ((cms.estimate(k) - count) as f64 > epsilon * 20_000.0) as u64;
            }
        }
        assert!(
            beyond as f64 / queries as f64 > 1.0 / 16.0,
            "{beyond} of {queries}"
        );
    }

    #[test]
    fn counters_saturate_instead_of_wrapping() {
        let mut cms = CountMinSketch::new(8, &[1, 2], 8, 0);
        for _ in 0..10 {
            cms.add(7, 100);
        }
        assert_eq!(cms.estimate(7), 255);
        cms.decay(0);
        assert_eq!(cms.estimate(7), 127);
    }

    #[test]
    fn the_top_k_table_keeps_the_heaviest_items_above_the_floor() {
        let mut cms = CountMinSketch::new(2000, &[11, 22, 33, 44, 55, 66, 77], 32, 2);
        // Three big items and many small ones, interleaved.
        for round in 0..100u64 {
            for big in [1u64, 2, 3] {
                cms.add_and_rank(big, 1000 * big as u32, 50_000);
            }
            cms.add_and_rank(1000 + round, 100, 50_000);
        }
        assert!(cms.is_hot(3, 50_000) && cms.is_hot(2, 50_000));
        assert!(!cms.is_hot(1, 0), "k = 2: the smallest big item is out");
        assert!(!cms.is_hot(1050, 0));
        // Halving drops items below the floor.
        cms.decay(150_000);
        assert!(cms.is_hot(3, 0) && !cms.is_hot(2, 0));
    }
}
