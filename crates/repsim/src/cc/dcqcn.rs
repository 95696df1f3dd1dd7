//! DCQCN as Mellanox NICs run it (the timer-driven variant of the ConWeave and LAPS reference
//! RNICs, taken from the HPCC code): rate-based, no window unless one is configured.
//!
//! State: the current rate `R_C` (starts at line rate, or at `start_rate`), the target rate
//! `R_T`, `alpha` and an increase stage.
//! - The first CNP sets `alpha = 1`, `R_T = R_C = rate_on_first_cnp x R_C` (1: the current
//!   rate) and starts the clock of the alpha updates (every `alpha_interval`, 1 us) and of
//!   the decrease checks (every `decrease_interval`, 4 us, the first one period later).
//! - Alpha update: `alpha = (1 - g) alpha + g` if a CNP arrived in the period, else
//!   `(1 - g) alpha` (g = 1/256).
//! - Decrease check: if a CNP arrived since the previous check, `R_T = R_C` (only if an increase
//!   event happened since the last decrease, unless `clamp_target_rate`), then
//!   `R_C = max(min_rate, R_C (1 - alpha / 2))`, the stage goes back to 0 and the increase
//!   timer restarts.
//! - Increase timer (every `increase_interval`, 300 us, from the latest decrease): stage
//!   below F (`fast_recovery_stages`, 1): fast recovery `R_C = (R_C + R_T) / 2`; stage F:
//!   additive, `R_T += ai` first; above F: hyper-additive, `R_T += hai` first. `R_T` never
//!   exceeds line rate. Then the stage counts up.
//!
//! The DCQCN paper (Zhu et al., SIGCOMM 2015) also counts bytes for its increase events and
//! cuts the rate on the CNP itself; this is the NIC variant the references run, which has no
//! byte counter. Defaults are ConWeave's: `ai` = 10 x bw / 25 Mb/s and `hai` = 25 x bw / 25
//! Mb/s for a NIC of bw Gb/s (40 and 100 Mb/s at 100 G), `min_rate` 100 Mb/s; the LAPS
//! baselines ran `ai = "5Mbps"`, `hai = "50Mbps"` and, as every scheme there, a window of
//! one network BDP (`window`).
//!
//! Cost: nothing happens, and no timer is set, before the first CNP. Alpha is kept lazily (the
//! updates of the periods since it was last read are applied when it is read, with the same
//! result as a 1 us timer); a decrease check is scheduled only when a CNP is waiting for one;
//! the increase timer stops once the rate is back at line rate.
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::time::US;
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{RateQ, SizeQ, TimeQ};
use crate::ConfigError;

/// `cc = { algo = "dcqcn", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DcqcnConfig {
    /// Period of the alpha updates.
    pub alpha_interval: TimeQ,
    /// Gain of the alpha average.
    pub g: f64,
    /// Period of the rate-decrease checks.
    pub decrease_interval: TimeQ,
    /// Period of the rate-increase timer.
    pub increase_interval: TimeQ,
    /// Increase events of fast recovery before additive increase (F).
    pub fast_recovery_stages: u32,
    /// Additive increase step (default: line rate x 0.0004, ConWeave's 10 x bw / 25 Mb/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai: Option<RateQ>,
    /// Hyper-additive increase step (default: line rate x 0.001, ConWeave's 25 x bw / 25 Mb/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hai: Option<RateQ>,
    /// The rate never drops below this.
    pub min_rate: RateQ,
    /// The rate on the first CNP, as a fraction of the current rate.
    pub rate_on_first_cnp: f64,
    /// Set the target rate to the current one at every decrease (off: only after an increase
    /// event since the previous decrease, the reference's default).
    pub clamp_target_rate: bool,
    /// Bytes in flight allowed as well (default: none, rate only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<SizeQ>,
    /// The rate a connection starts at (default: line rate). Below line rate it stays there
    /// until the first CNP, since no increase timer runs before one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<RateQ>,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            alpha_interval: TimeQ(US),
            g: 1.0 / 256.0,
            decrease_interval: TimeQ(4 * US),
            increase_interval: TimeQ(300 * US),
            fast_recovery_stages: 1,
            ai: None,
            hai: None,
            min_rate: RateQ(100_000_000),
            rate_on_first_cnp: 1.0,
            clamp_target_rate: false,
            window: None,
            start_rate: None,
        }
    }
}

impl CcScheme for DcqcnConfig {
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(Dcqcn::new(self, p))
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ConfigError::new("g", "must be in (0, 1]"));
        }
        for (name, t) in [
            ("alpha_interval", self.alpha_interval),
            ("decrease_interval", self.decrease_interval),
            ("increase_interval", self.increase_interval),
        ] {
            if t.0 == 0 {
                return Err(ConfigError::new(name, "must be positive"));
            }
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(ConfigError::new("rate_on_first_cnp", "must be in (0, 1]"));
        }
        if self.window.is_some_and(|w| w.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("window", "must be positive"));
        }
        if self.start_rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("start_rate", "must be positive"));
        }
        Ok(())
    }
}

/// One connection's DCQCN state.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    alpha_interval: Time,
    g: f64,
    decrease_interval: Time,
    increase_interval: Time,
    fast_recovery_stages: u32,
    ai: f64,
    hai: f64,
    min_rate: f64,
    line_rate: f64,
    rate_on_first_cnp: f64,
    clamp_target_rate: bool,
    window: u64,
    /// Current rate R_C (bits per second).
    rate: f64,
    /// Target rate R_T.
    target: f64,
    /// Alpha as of the update at `alpha_at`.
    alpha: f64,
    /// Time of the first CNP: the alpha and decrease clocks tick from it.
    first_cnp: Option<Time>,
    /// The latest alpha update applied.
    alpha_at: Time,
    /// A CNP arrived in the alpha period after `alpha_at`.
    alpha_cnp: bool,
    /// The next decrease check, scheduled while a CNP waits for one.
    decrease_at: Option<Time>,
    /// The latest decrease check.
    last_check: Time,
    /// The next rate-increase event.
    increase_at: Option<Time>,
    /// Increase events since the latest decrease.
    stage: u32,
}

impl Dcqcn {
    /// A controller at line rate.
    pub fn new(c: &DcqcnConfig, p: &CcParams) -> Self {
        let line = p.line_rate as f64;
        Dcqcn {
            alpha_interval: c.alpha_interval.0,
            g: c.g,
            decrease_interval: c.decrease_interval.0,
            increase_interval: c.increase_interval.0,
            fast_recovery_stages: c.fast_recovery_stages,
            ai: c.ai.map_or(line * 0.0004, |r| r.0 as f64),
            hai: c.hai.map_or(line * 0.001, |r| r.0 as f64),
            min_rate: (c.min_rate.0 as f64).min(line),
            line_rate: line,
            rate_on_first_cnp: c.rate_on_first_cnp,
            clamp_target_rate: c.clamp_target_rate,
            window: c
                .window
                .map_or(u64::MAX, |w| w.0.bytes(p.mtu).max(p.mtu as u64)),
            rate: c.start_rate.map_or(line, |r| (r.0 as f64).min(line)),
            target: line,
            alpha: 1.0,
            first_cnp: None,
            alpha_at: 0,
            alpha_cnp: false,
            decrease_at: None,
            last_check: 0,
            increase_at: None,
            stage: 0,
        }
    }

    /// Current rate R_C in bits per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Target rate R_T in bits per second.
    pub fn target(&self) -> f64 {
        self.target
    }

    /// Increase events since the latest decrease.
    pub fn stage(&self) -> u32 {
        self.stage
    }

    /// Alpha as of `now` (the updates due by then applied).
    pub fn alpha_at(&mut self, now: Time) -> f64 {
        self.advance_alpha(now);
        self.alpha
    }

    /// Applies the alpha updates due at or before `now`: the first of them with the CNP
    /// seen in its period, the others without.
    fn advance_alpha(&mut self, now: Time) {
        if self.first_cnp.is_none() || now < self.alpha_at + self.alpha_interval {
            return;
        }
        let periods = (now - self.alpha_at) / self.alpha_interval;
        let keep = 1.0 - self.g;
        self.alpha = keep * self.alpha + if self.alpha_cnp { self.g } else { 0.0 };
        self.alpha_cnp = false;
        if periods > 1 {
            self.alpha *= keep.powi((periods - 1).min(i32::MAX as u64) as i32);
        }
        self.alpha_at += periods * self.alpha_interval;
    }

    /// A CNP arrived at `now`.
    pub fn on_cnp(&mut self, now: Time) {
        let Some(origin) = self.first_cnp else {
            self.first_cnp = Some(now);
            self.alpha = 1.0;
            self.alpha_at = now;
            self.alpha_cnp = false;
            self.rate *= self.rate_on_first_cnp;
            self.target = self.rate;
            self.last_check = now;
            self.decrease_at = Some(now + self.decrease_interval);
            return;
        };
        self.advance_alpha(now);
        self.alpha_cnp = true;
        if self.decrease_at.is_none() {
            // The next tick of the decrease clock at or after now that has not run yet.
            let d = self.decrease_interval;
            let mut at = origin + (now - origin).div_ceil(d) * d;
            if at <= self.last_check {
                at += d;
            }
            self.decrease_at = Some(at);
        }
    }

    fn decrease(&mut self, now: Time) {
        self.decrease_at = None;
        self.last_check = now;
        self.advance_alpha(now);
        if self.clamp_target_rate || self.stage > 0 {
            self.target = self.rate;
        }
        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        self.stage = 0;
        self.increase_at = Some(now + self.increase_interval);
    }

    fn increase(&mut self, now: Time) {
        use std::cmp::Ordering;
        match self.stage.cmp(&self.fast_recovery_stages) {
            Ordering::Less => {}
            Ordering::Equal => self.target += self.ai,
            Ordering::Greater => self.target += self.hai,
        }
        self.target = self.target.min(self.line_rate);
        self.rate = (self.rate / 2.0 + self.target / 2.0).min(self.line_rate);
        self.stage += 1;
        self.increase_at = (self.rate < self.line_rate).then_some(now + self.increase_interval);
    }
}

impl CongestionControl for Dcqcn {
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
        if ack.cnp {
            self.on_cnp(ack.now);
        }
    }

    fn on_nack(&mut self, _size: u64, _now: Time) {}

    fn on_timeout(&mut self, _size: u64, _now: Time) {}

    fn has_timers(&self) -> bool {
        true
    }

    fn next_timer(&self) -> Option<Time> {
        match (self.decrease_at, self.increase_at) {
            (Some(d), Some(i)) => Some(d.min(i)),
            (d, i) => d.or(i),
        }
    }

    fn on_timer(&mut self, now: Time) {
        if self.decrease_at.is_some_and(|t| t <= now) {
            self.decrease(now);
        }
        if self.increase_at.is_some_and(|t| t <= now) {
            self.increase(now);
        }
    }
}

#[cfg(test)]
mod tests;
