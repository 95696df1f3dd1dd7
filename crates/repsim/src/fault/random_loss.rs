//! Random loss at every receiving port: each packet that comes off a wire, into a switch or a
//! host, is lost with a fixed probability (the LAPS experiments' bit-error model: the paper
//! states 1e-6, its reference code drops with probability 1/100,001, about 1e-5, at every
//! receiving port, data, control and PFC frames alike).
//!
//! Each receiving port (the directed link a packet arrives on) draws from its own stream,
//! `Rng::derive(seed, Stream::Loss, link)`, so a port's losses do not depend on what the
//! other ports saw. Off (probability 0), the simulation holds no model at all and pays one
//! `Option` test per arrival.
use serde::{Deserialize, Serialize};

use crate::engine::rng::Stream;
use crate::engine::Rng;

/// `[loss]`: random loss at every receiving port (off by default).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossConfig {
    /// Probability that a packet is lost as it arrives at a switch or host port, in `[0, 1)`
    /// (0: off).
    pub probability: f64,
}

impl LossConfig {
    /// Checks the probability, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let p = self.probability;
        if !(0.0..1.0).contains(&p) {
            return Err(format!(
                "loss.probability must be at least 0 and below 1, not {p}"
            ));
        }
        Ok(())
    }
}

/// Counts of packets random loss discarded (read from the packet books, which count every
/// drop by kind and cause).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RandomLossStats {
    /// Data packets lost.
    pub data_dropped: u64,
    /// ACKs, NACKs and other control packets lost.
    pub control_dropped: u64,
}

/// The running model: one random stream per receiving port.
#[derive(Clone, Debug)]
pub struct RandomLoss {
    /// A packet is lost when its port's next 64 random bits are below this
    /// (probability x 2^64).
    threshold: u64,
    /// One stream per link, by link id.
    streams: Vec<Rng>,
}

impl RandomLoss {
    /// The model for a fabric of `links` directed links under master seed `seed`; `None` when
    /// `probability` is 0 (off).
    pub fn new(probability: f64, links: usize, seed: u64) -> Option<Self> {
        if probability <= 0.0 {
            return None;
        }
        // 2^64 x p, saturating (p < 1 is checked by the scenario).
        let threshold = (probability * 18_446_744_073_709_551_616.0) as u64;
        Some(RandomLoss {
            threshold,
            streams: (0..links as u64)
                .map(|l| Rng::derive(seed, Stream::Loss, l))
                .collect(),
        })
    }

    /// True when the packet arriving over `link` is lost.
    #[inline]
    pub fn loses(&mut self, link: u32) -> bool {
        self.streams[link as usize].next_u64() < self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loses_about_the_configured_fraction_per_port_and_deterministically() {
        let mut m = RandomLoss::new(0.01, 4, 7).unwrap();
        let lost: Vec<u32> = (0..4)
            .map(|l| (0..100_000).filter(|_| m.loses(l)).count() as u32)
            .collect();
        for &n in &lost {
            assert!((800..1200).contains(&n), "{lost:?}");
        }
        // Ports have their own streams: not all the same count.
        assert!(lost.windows(2).any(|w| w[0] != w[1]), "{lost:?}");
        let mut again = RandomLoss::new(0.01, 4, 7).unwrap();
        let first: Vec<bool> = (0..1000).map(|_| again.loses(2)).collect();
        let mut other = RandomLoss::new(0.01, 4, 7).unwrap();
        // Drawing on port 0 first does not change port 2's sequence.
        (0..500).for_each(|_| {
            other.loses(0);
        });
        let second: Vec<bool> = (0..1000).map(|_| other.loses(2)).collect();
        assert_eq!(first, second);
    }

    #[test]
    fn off_means_no_model_and_bad_probabilities_are_rejected() {
        assert!(RandomLoss::new(0.0, 4, 7).is_none());
        assert!(LossConfig { probability: 1.0 }.validate().is_err());
        assert!(LossConfig { probability: -0.1 }.validate().is_err());
        let e = LossConfig { probability: 2.0 }.validate().unwrap_err();
        assert!(e.contains("loss.probability"), "{e}");
        assert!(LossConfig { probability: 1e-6 }.validate().is_ok());
    }
}
