//! Batched balls-into-bins with oblivious placement: the model of oblivious packet spraying (OPS).
//!
//! There are `n` bins (a switch's output ports). Each step, first every non-empty bin removes
//! one ball (a port sends one packet), then `lambda * n` balls (packets) arrive, each thrown into
//! a bin chosen uniformly at random (a fresh random entropy value with a perfect hash). A
//! fractional `lambda * n` is handled by [`crate::rng::batch_size`]: the integer part always
//! arrives and the fraction is one extra ball with that probability. The maximum load after the
//! arrivals is the longest queue at that step (paper Section 5.1, Figure 17).

use crate::rng::{batch_size, sub_seed, Rng};

/// One run of the batched OPS process.
#[derive(Clone, Debug)]
pub struct Ops {
    loads: Vec<u32>,
    lambda: f64,
    rng: Rng,
}

impl Ops {
    /// Starts with `n` empty bins and an arrival rate of `lambda * n` balls per step.
    pub fn new(n: usize, lambda: f64, seed: u64) -> Self {
        assert!(n > 0, "need at least one bin");
        Self {
            loads: vec![0; n],
            lambda,
            rng: Rng::new(seed),
        }
    }

    /// Runs one step (drain, then arrivals) and returns the maximum load afterwards.
    pub fn step(&mut self) -> u32 {
        for l in self.loads.iter_mut() {
            *l = l.saturating_sub(1);
        }
        let n = self.loads.len();
        for _ in 0..batch_size(&mut self.rng, self.lambda, n) {
            self.loads[self.rng.below(n as u64) as usize] += 1;
        }
        self.max_load()
    }

    /// The current maximum load.
    pub fn max_load(&self) -> u32 {
        self.loads.iter().copied().max().unwrap_or(0)
    }

    /// The current load of every bin.
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }
}

/// Maximum load after each of `rounds` steps of one OPS run.
pub fn max_load_trace(n: usize, lambda: f64, rounds: usize, seed: u64) -> Vec<u32> {
    let mut ops = Ops::new(n, lambda, seed);
    (0..rounds).map(|_| ops.step()).collect()
}

/// Per-round statistics of the maximum load over independent trials.
#[derive(Clone, Debug)]
pub struct TrialSummary {
    /// Mean over trials of the maximum load after each round.
    pub mean: Vec<f64>,
    /// Largest over trials of the maximum load after each round.
    pub max: Vec<u32>,
}

impl TrialSummary {
    /// Summarises `trials` traces of `rounds` per-round maximum loads, trace `t` being `trace(t)`
    /// (each at least `rounds` long).
    pub fn over_trials(
        rounds: usize,
        trials: usize,
        mut trace: impl FnMut(usize) -> Vec<u32>,
    ) -> Self {
        let mut sum = vec![0u64; rounds];
        let mut max = vec![0u32; rounds];
        for t in 0..trials {
            for ((s, m), &x) in sum.iter_mut().zip(&mut max).zip(&trace(t)) {
                *s += u64::from(x);
                *m = (*m).max(x);
            }
        }
        let mean = sum
            .iter()
            .map(|&s| s as f64 / trials.max(1) as f64)
            .collect();
        TrialSummary { mean, max }
    }
}

/// Runs `trials` independent OPS runs (trial `t` seeded with `sub_seed(seed, t)`) and summarises.
pub fn max_load_over_trials(
    n: usize,
    lambda: f64,
    rounds: usize,
    trials: usize,
    seed: u64,
) -> TrialSummary {
    TrialSummary::over_trials(rounds, trials, |t| {
        max_load_trace(n, lambda, rounds, sub_seed(seed, t as u64))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conserves_balls_at_full_rate() {
        let mut ops = Ops::new(8, 1.0, 3);
        let mut total = 0u64;
        for _ in 0..100 {
            let nonempty = ops.loads().iter().filter(|&&l| l > 0).count() as u64;
            ops.step();
            total = total + 8 - nonempty;
            assert_eq!(
                ops.loads().iter().map(|&l| u64::from(l)).sum::<u64>(),
                total
            );
        }
    }

    #[test]
    fn deterministic() {
        let a = max_load_trace(16, 0.99, 300, 5);
        assert_eq!(a, max_load_trace(16, 0.99, 300, 5));
        assert_ne!(a, max_load_trace(16, 0.99, 300, 6), "the seed matters");
    }

    #[test]
    fn trial_summary_is_per_round_mean_and_max() {
        let traces = [vec![1, 4, 2], vec![3, 0, 2]];
        let s = TrialSummary::over_trials(3, 2, |t| traces[t].clone());
        assert_eq!(s.mean, [2.0, 2.0, 2.0]);
        assert_eq!(s.max, [3, 4, 2]);
        let o = max_load_over_trials(8, 0.99, 50, 3, 9);
        let direct: Vec<Vec<u32>> = (0..3)
            .map(|t| max_load_trace(8, 0.99, 50, sub_seed(9, t)))
            .collect();
        assert_eq!(o.max[49], direct.iter().map(|d| d[49]).max().unwrap());
    }
}
