//! Rate-based DCTCP, as the LAPS experiments run it under PLB (the RNIC's DCTCP mode of the HPCC
//! code): DCTCP's marked-fraction average `alpha` and one cut per window, applied to a pacing
//! rate instead of a window.
//!
//! - Rounds: a round ends with the first ACK after every byte in flight when it began is
//!   acknowledged (the reference compares the ACK's sequence with `snd_nxt` at the round's
//!   start; here bytes acknowledged are counted against the bytes then in flight). At the end
//!   of each round but the first, `alpha = (1 - g) alpha + g min(1, marked ACKs / packets of
//!   the round)` (g = 1/256, alpha starts at 1).
//! - The first ECN-marked ACK outside a reduction cuts the rate once,
//!   `rate = max(min_rate, rate (1 - alpha / 2))`, and opens a reduction until the bytes then
//!   in flight are acknowledged (so at most one cut per window).
//! - Outside a reduction, each new round adds `ai` (1 Gb/s) to the rate, up to line rate.
//!
//! Marks: by default (`mark = "ecn"`) an ACK is marked when it echoes an ECN mark, and losses
//! (NACKs, timeouts) change nothing, as DCTCP is defined. The LAPS reference reads the CNP flag
//! of its ACKs instead, and its receiver flags every new go-back-N NACK as well as the ACKs of
//! ECN-marked packets, so there a NACK is a marked ACK (it counts toward `alpha` and may cut
//! the rate); `mark = "cnp"` does that: an ACK or NACK carrying a CNP flag counts as marked
//! too (in the RoCE modes every NACK carries one; in `uec` CNPs come only with
//! `cnp_interval`). The rate starts at line rate; there is no window unless `window` sets one
//! (the LAPS runs put a window of one network BDP on every scheme).
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{RateQ, SizeQ};
use crate::ConfigError;

/// `cc = { algo = "dctcp-rate", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpRateConfig {
    /// Gain of the marked-fraction average `alpha`.
    pub g: f64,
    /// `alpha` at start.
    pub initial_alpha: f64,
    /// Rate added per round outside a reduction.
    pub ai: RateQ,
    /// The rate never drops below this.
    pub min_rate: RateQ,
    /// Bytes in flight allowed as well (default: none, rate only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<SizeQ>,
    /// What counts as a marked ACK.
    pub mark: DctcpMark,
}

/// What a rate-based DCTCP counts as a marked ACK (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DctcpMark {
    /// An echoed ECN mark (DCTCP as defined).
    #[default]
    Ecn,
    /// An echoed ECN mark or a CNP flag (the LAPS reference: every go-back-N NACK too).
    Cnp,
}

impl Default for DctcpRateConfig {
    fn default() -> Self {
        DctcpRateConfig {
            g: 1.0 / 256.0,
            initial_alpha: 1.0,
            ai: RateQ(1_000_000_000),
            min_rate: RateQ(100_000_000),
            window: None,
            mark: DctcpMark::Ecn,
        }
    }
}

impl CcScheme for DctcpRateConfig {
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(DctcpRate::new(self, p))
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ConfigError::new("g", "must be in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(ConfigError::new("initial_alpha", "must be in [0, 1]"));
        }
        if self.window.is_some_and(|w| w.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("window", "must be positive"));
        }
        Ok(())
    }
}

/// One connection's rate-based DCTCP state.
#[derive(Clone, Debug)]
pub struct DctcpRate {
    g: f64,
    ai: f64,
    min_rate: f64,
    line_rate: f64,
    mtu: u64,
    window: u64,
    /// What counts as a marked ACK.
    mark: DctcpMark,
    rate: f64,
    alpha: f64,
    /// Bytes acknowledged so far.
    acked: u64,
    /// The round ends with the first ACK that takes `acked` above this.
    round_end: u64,
    /// The first round is still going (no alpha update at its end).
    first_round: bool,
    /// Packets the round is expected to carry.
    round_packets: u64,
    /// Marked ACKs counted for the next alpha update.
    marked: u64,
    /// In a reduction until `acked` passes this.
    reduction_end: Option<u64>,
}

impl DctcpRate {
    /// A controller at line rate.
    pub fn new(c: &DctcpRateConfig, p: &CcParams) -> Self {
        let line = p.line_rate as f64;
        DctcpRate {
            g: c.g,
            ai: c.ai.0 as f64,
            min_rate: (c.min_rate.0 as f64).min(line),
            line_rate: line,
            mtu: p.mtu as u64,
            window: c
                .window
                .map_or(u64::MAX, |w| w.0.bytes(p.mtu).max(p.mtu as u64)),
            mark: c.mark,
            rate: line,
            alpha: c.initial_alpha,
            acked: 0,
            round_end: 0,
            first_round: true,
            round_packets: 1,
            marked: 0,
            reduction_end: None,
        }
    }

    /// Current rate in bits per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The marked-fraction average.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for DctcpRate {
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        Some(Box::new(self.clone()))
    }

    fn cwnd(&self) -> u64 {
        self.window
    }

    fn paces(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.rate as u64)
    }

    fn on_ack(&mut self, ack: &AckSample) {
        self.acked += ack.acked;
        let marked = ack.ecn || (self.mark == DctcpMark::Cnp && ack.cnp);
        if marked {
            self.marked += 1;
        }
        let in_flight = ack.in_flight.max(0) as u64;
        let new_round = self.acked > self.round_end;
        if new_round {
            if self.first_round {
                self.first_round = false;
            } else {
                let fraction = (self.marked as f64 / self.round_packets as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
                self.marked = 0;
            }
            self.round_end = self.acked + in_flight;
            self.round_packets = in_flight / self.mtu + 1;
        }
        if self.reduction_end.is_some_and(|end| self.acked > end) {
            self.reduction_end = None;
        }
        if marked && self.reduction_end.is_none() {
            self.reduction_end = Some(self.acked + in_flight);
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        } else if new_round && self.reduction_end.is_none() {
            self.rate = (self.rate + self.ai).min(self.line_rate);
        }
    }

    fn on_nack(&mut self, _size: u64, _now: Time) {}

    fn on_timeout(&mut self, _size: u64, _now: Time) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ecn: bool, in_flight: i64) -> AckSample {
        AckSample {
            acked,
            ecn,
            cnp: false,
            rtt: None,
            now: 0,
            in_flight,
        }
    }

    fn controller() -> DctcpRate {
        DctcpRate::new(
            &DctcpRateConfig::default(),
            &CcParams {
                mtu: 1000,
                line_rate: 100_000_000_000,
                ..CcParams::example()
            },
        )
    }

    #[test]
    fn one_cut_per_window_then_one_gbps_per_round() {
        let mut d = controller();
        // First ACK: a round begins with 10 packets in flight.
        d.on_ack(&ack(1000, false, 10_000));
        assert_eq!(d.rate(), 100e9, "at line rate already");
        // A marked ACK: cut by alpha / 2 (alpha = 1 at start: halved), once for the window.
        d.on_ack(&ack(1000, true, 9000));
        assert_eq!(d.rate(), 50e9);
        for _ in 0..5 {
            d.on_ack(&ack(1000, true, 9000));
        }
        assert_eq!(d.rate(), 50e9, "one cut per window");
        // Up to 11,000 acknowledged bytes the round and the reduction go on.
        for _ in 0..4 {
            d.on_ack(&ack(1000, false, 9000));
        }
        assert_eq!((d.rate(), d.alpha()), (50e9, 1.0));
        // The ACK past 11,000 ends both: alpha = (1 - g) 1 + g min(1, 6 marks / 11 packets),
        // and the new round adds 1 Gb/s.
        d.on_ack(&ack(1000, false, 9000));
        let alpha = (1.0 - 1.0 / 256.0) + (6.0 / 11.0) / 256.0;
        assert!((d.alpha() - alpha).abs() < 1e-12, "{}", d.alpha());
        assert_eq!(d.rate(), 51e9);
        // That round ends past 12,000 + 9,000 bytes: one more Gb/s, alpha decays (no marks).
        d.on_ack(&ack(9000, false, 1000));
        assert_eq!(d.rate(), 51e9);
        d.on_ack(&ack(1000, false, 1000));
        assert_eq!(d.rate(), 52e9);
        assert!((d.alpha() - alpha * (1.0 - 1.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn a_cnp_flag_is_a_mark_only_when_asked() {
        let cnp = AckSample {
            cnp: true,
            ..ack(1000, false, 10_000)
        };
        let mut plain = controller();
        plain.on_ack(&ack(1000, false, 10_000));
        plain.on_ack(&cnp);
        assert_eq!(plain.rate(), 100e9, "by default a CNP flag is not a mark");
        let mut reference = DctcpRate::new(
            &DctcpRateConfig {
                mark: DctcpMark::Cnp,
                ..DctcpRateConfig::default()
            },
            &CcParams {
                mtu: 1000,
                line_rate: 100_000_000_000,
                ..CcParams::example()
            },
        );
        reference.on_ack(&ack(1000, false, 10_000));
        reference.on_ack(&cnp);
        assert_eq!(
            reference.rate(),
            50e9,
            "a flagged ACK (or NACK) cuts like a marked one"
        );
    }

    #[test]
    fn the_rate_stays_between_the_minimum_and_line_rate() {
        let mut d = controller();
        for i in 0..200 {
            d.on_ack(&ack(100_000, true, 0));
            assert!(d.rate() >= 100e6, "step {i}");
        }
        assert_eq!(d.rate(), 100e6);
        for _ in 0..200 {
            d.on_ack(&ack(100_000, false, 0));
        }
        assert_eq!(d.rate(), 100e9);
    }
}
