//! Load imbalance of entropy-value (EV) sets over a switch's uplinks (paper Section 4.5.2, Figure 14).
//!
//! Model: `flows` flows, each from a different sender, share one switch with `uplinks` equal-cost
//! uplinks. Flow `f` goes from host `f` to host `flows + f`, so its flow key is
//! `repsim::net::hash::flow_key(f, flows + f)`. Each flow sends **one packet per EV** of its EV set
//! `{0, 1, ..., evs - 1}` (equivalently, equal traffic on every EV: a sprayer picking EVs
//! uniformly sends the same expected traffic on each). Every packet is placed with the
//! simulator's own switch hash, `repsim::net::hash::ecmp_pick(key, ev, salt, uplinks)`, so these
//! numbers are what the simulator's switches do, not an idealised uniform throw. The load
//! imbalance for one switch salt is `max load / mean load - 1`, mean = `flows * evs / uplinks`.
//! Repeating over many salts (drawn from the seeded generator) gives the distribution.

use repsim::net::hash::{ecmp_pick, flow_key};

use crate::rng::Rng;

/// Load imbalance (`max / mean - 1`) of `flows` flows with `evs` EVs each over `uplinks` uplinks
/// at one switch with hash salt `salt`.
pub fn imbalance(flows: u32, evs: u32, uplinks: u32, salt: u32) -> f64 {
    let mut loads = vec![0u64; uplinks as usize];
    for f in 0..flows {
        let key = flow_key(f, flows + f);
        for ev in 0..evs {
            loads[ecmp_pick(key, ev, salt, uplinks) as usize] += 1;
        }
    }
    let max = loads.iter().copied().max().unwrap_or(0) as f64;
    let mean = f64::from(flows) * f64::from(evs) / f64::from(uplinks);
    max / mean - 1.0
}

/// The salts used for `count` trials from `seed`: the first `count` 32-bit draws of the generator.
pub fn salts(seed: u64, count: usize) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| (rng.next_u64() >> 32) as u32).collect()
}

/// Imbalance for each salt in `salts` (same order), computed on all available cores.
pub fn imbalances(flows: u32, evs: u32, uplinks: u32, salts: &[u32]) -> Vec<f64> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunk = salts.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = salts
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|&salt| imbalance(flows, evs, uplinks, salt))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("imbalance worker panicked"))
            .collect()
    })
}

/// Order statistics of a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Smallest value.
    pub min: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// Summarises a non-empty sample (percentiles by linear interpolation between order statistics).
pub fn summarize(values: &[f64]) -> Summary {
    assert!(!values.is_empty(), "empty sample");
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    Summary {
        min: v[0],
        p5: q(0.05),
        p25: q(0.25),
        median: q(0.5),
        p75: q(0.75),
        p95: q(0.95),
        max: v[v.len() - 1],
        mean: v.iter().sum::<f64>() / v.len() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_ev_single_flow_is_maximal() {
        // One packet on 32 uplinks: max 1, mean 1/32.
        assert!((imbalance(1, 1, 32, 5) - 31.0).abs() < 1e-12);
    }

    #[test]
    fn imbalances_keep_salt_order() {
        let salts = salts(3, 37);
        let serial: Vec<f64> = salts.iter().map(|&s| imbalance(4, 64, 8, s)).collect();
        assert_eq!(imbalances(4, 64, 8, &salts), serial);
        assert!(imbalances(4, 64, 8, &[]).is_empty());
    }

    #[test]
    fn summary_percentiles() {
        let s = summarize(&[3.0, 1.0, 2.0, 4.0, 5.0]);
        assert_eq!((s.min, s.median, s.max, s.mean), (1.0, 3.0, 5.0, 3.0));
        assert_eq!((s.p25, s.p75), (2.0, 4.0));
        // Interpolated: position 0.05 * 4 = 0.2 between 1 and 2, 0.95 * 4 = 3.8 between 4 and 5.
        assert!(
            (s.p5 - 1.2).abs() < 1e-12 && (s.p95 - 4.8).abs() < 1e-12,
            "{s:?}"
        );
    }
}
