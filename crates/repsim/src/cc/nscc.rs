//! NSCC, UEC's network-signal congestion control, as the UEC reference simulator implements
//! it (uet-htsim spec section 8); the 2024 NSCC the REPS paper ran (htsim-reps spec 6.7) is
//! `variant = "reps2024"`.
//!
//! A window in bytes driven per ACK by the echoed ECN mark and the queueing delay
//! `d = rtt - base_rtt`, in four quadrants against the target delay `T`:
//! un-marked with `d >= T`: fair increase (`inc += fi * acked`); un-marked with `d < T`: fast
//! increase once more than a window of bytes came back under 1 us of delay (`cwnd += acked *
//! fi_scale` at once), else proportional increase (`inc += alpha * acked * (T - d)`); marked
//! with `d >= T`: multiplicative decrease `cwnd *= max(1 - gamma (avg - T) / avg, 0.5)`, from
//! the *average* delay, only if `avg > T` and at most once per base RTT; marked with `d < T`:
//! nothing (a path signal the load balancer answers). The accumulated `inc` is applied as
//! `cwnd += inc / cwnd` once more than `adjust_bytes` were acknowledged or `adjust_period`
//! passed since the last eta, which then adds `eta` (in any quadrant). The window stays within
//! [1 MTU, 1.5 BDP of the base RTT].
//!
//! **Quick adapt**: measurement windows of `base_rtt + T`. At the first ACK or NACK after a
//! window ends, if a NACK came since the last quick adapt (or this event is a NACK, or the
//! ACK's delay exceeds `4 T`) and the window delivered less than `maxwnd >> qa_gate`, the
//! window snaps to the bytes delivered and the marks of the bytes then in flight are ignored
//! (their ACKs, and NACKs, change nothing) while they drain. A NACK otherwise takes its size
//! off. A timeout takes the packet's size off, floor one MTU.
//!
//! **Delay**: a sample at or above the base RTT is `d`, and feeds the average (gain 0.0125),
//! except that an un-marked sample above `T` feeds `0.25 base_rtt` instead; every NACK feeds
//! the network RTT. A missing sample, or one below the base RTT, uses the average. The base
//! RTT starts at the network's largest RTT and drops to smaller samples (taking the maximum
//! window along); samples below the path's unloaded RTT (an RTS's, or a short last packet's)
//! never lower it, as the reference excludes RTS samples. `accurate_base_rtt` starts at the
//! path's (the reference's `-enable_accurate_base_rtt`). With `base_rtt_on_nack` (uet's
//! default) a NACK's round trip lowers it as well, with no floor, as uet-htsim's does: a trimmed
//! header skips the congested queue and crosses the last hop at header size, so under an incast
//! every flow's base RTT drops to about its path's unloaded RTT less a packet's serialization,
//! where ACK samples alone leave it wherever the first packets' queueing put it.
//!
//! **Constants** from the network RTT `R`, the line rate and the MSS (MTU - 64 B header):
//! `a = R * rate / 8 / 150,000 B`, `b = T / 12 us`, `alpha = 4 MSS a b / T`, `fi = 5 MSS a`,
//! `eta = 0.15 MSS a`, `fi_scale = 0.25 a`, `gamma` 0.8, `adjust_period = R`, `adjust_bytes` =
//! 8 MTU. `T` defaults to `0.75 R` with trimming and `R` without, as the reference chooses.
//!
//! **reps2024** differs in: `T` 6 us, `adjust_period` 12 us, `adjust_bytes` = 16,000 B * b by
//! default; the fair increase is added to the proportional one too; one adjustment adds at
//! most `adjust_bytes`; a large delay triggers quick adapt by the average, not the sample.
//!
//! Not modelled: a NACK's quick adapt ignores the marks of the bytes in flight at the last ACK
//! (the reference takes them at the NACK).
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl, WindowTally};
use crate::engine::time::{SEC, US};
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{SizeQ, TimeQ};
use crate::ConfigError;

/// Which NSCC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NsccVariant {
    /// The UEC reference simulator's, as standardised.
    Uet,
    /// The 2024 one the REPS paper's reference simulator ran.
    Reps2024,
}

/// `cc = { algo = "nscc", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsccConfig {
    /// Which NSCC.
    pub variant: NsccVariant,
    /// Target queueing delay (default: `target_delay_rtt` network RTTs; reps2024: 6 us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<TimeQ>,
    /// Target queueing delay in network RTTs when `target_delay` is absent (uet only;
    /// default 0.75 with trimming, 1 without, as the reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_delay_rtt: Option<f64>,
    /// Window at start (default: the maximum window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<SizeQ>,
    /// Largest window, in bandwidth-delay products of the base RTT.
    pub max_cwnd_bdp: f64,
    /// Start the base RTT at the path's unloaded RTT rather than the network's largest.
    pub accurate_base_rtt: bool,
    /// A NACK's round trip (send to NACK) lowers the base RTT too (default: on for `uet`, as
    /// uet-htsim, whose `-disable_base_rtt_update_on_nack` turns it off; off for `reps2024`,
    /// whose reference takes base RTT samples from full-size ACKed packets only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt_on_nack: Option<bool>,
    /// Quick adapt on (the reference never turns it off).
    pub quick_adapt: bool,
    /// Quick adapt only while a window delivered less than `maxwnd >> qa_gate` bytes.
    pub qa_gate: u32,
    /// Strength of the multiplicative decrease.
    pub gamma: f64,
    /// Period of eta and of the increase (default: the network RTT; reps2024: 12 us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjust_period: Option<TimeQ>,
    /// Acknowledged bytes that apply the increase early (default: 8 MTU; reps2024: 16,000 B
    /// x T / 12 us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjust_bytes: Option<SizeQ>,
}

impl Default for NsccConfig {
    fn default() -> Self {
        NsccConfig {
            variant: NsccVariant::Uet,
            target_delay: None,
            target_delay_rtt: None,
            initial_cwnd: None,
            max_cwnd_bdp: 1.5,
            accurate_base_rtt: false,
            base_rtt_on_nack: None,
            quick_adapt: true,
            qa_gate: 3,
            gamma: 0.8,
            adjust_period: None,
            adjust_bytes: None,
        }
    }
}

impl CcScheme for NsccConfig {
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(Nscc::new(self, p))
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if self.target_delay.is_some_and(|t| t.0 == 0) {
            return Err(ConfigError::new("target_delay", "must be positive"));
        }
        if self
            .target_delay_rtt
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            return Err(ConfigError::new("target_delay_rtt", "must be positive"));
        }
        if self.initial_cwnd.is_some_and(|c| c.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("initial_cwnd", "must be positive"));
        }
        if !(self.max_cwnd_bdp.is_finite() && self.max_cwnd_bdp > 0.0) {
            return Err(ConfigError::new("max_cwnd_bdp", "must be positive"));
        }
        if self.qa_gate > 63 {
            return Err(ConfigError::new("qa_gate", "must be at most 63"));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ConfigError::new("gamma", "must be in (0, 1]"));
        }
        if self.adjust_period.is_some_and(|t| t.0 == 0) {
            return Err(ConfigError::new("adjust_period", "must be positive"));
        }
        if self.adjust_bytes.is_some_and(|s| s.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("adjust_bytes", "must be positive"));
        }
        Ok(())
    }
}

/// Header bytes of the reference's packets: its MSS is the MTU less these.
const HEADER: u32 = 64;
/// The reference network NSCC's constants scale from: 12 us at 100 Gb/s.
const REFERENCE_BDP: f64 = 150_000.0;
/// The reference RTT `b` scales the target delay by.
const REFERENCE_RTT: Time = 12 * US;
/// Gain of the queueing-delay average.
const DELAY_GAIN: f64 = 0.0125;
/// Delay under which ACKs count towards fast increase (absolute, not scaled).
const FAST_INCREASE_DELAY: f64 = US as f64;

/// Bytes a line rate carries in `rtt`.
fn bdp(rtt: Time, line_rate: u64) -> u64 {
    (rtt as u128 * line_rate as u128 / (8 * SEC as u128)) as u64
}

/// NSCC window state.
#[derive(Clone, Debug)]
pub struct Nscc {
    reps2024: bool,
    line_rate: u64,
    max_cwnd_bdp: f64,
    base_rtt_on_nack: bool,
    min_cwnd: u64,
    network_rtt: Time,
    /// The path's unloaded RTT: no full packet comes back faster.
    path_rtt: Time,
    target: f64,
    qa_threshold: f64,
    qa_enabled: bool,
    qa_gate: u32,
    alpha: f64,
    fi: f64,
    eta: f64,
    fi_scale: f64,
    gamma: f64,
    adjust_period: Time,
    adjust_bytes: u64,

    cwnd: u64,
    max_cwnd: u64,
    base_rtt: Time,
    avg_delay: f64,
    /// Accumulated increase in bytes squared, applied as `inc / cwnd`.
    inc: f64,
    received_bytes: u64,
    last_adjust: Time,
    fi_count: u64,
    fast_mode: bool,
    last_decrease: Time,
    achieved_bytes: u64,
    qa_end: Time,
    trigger_qa: bool,
    bytes_to_ignore: u64,
    bytes_ignored: u64,
    /// Bytes in flight after the last ACK.
    in_flight: u64,
    /// What each rule added to the window and took from it.
    tally: WindowTally,
    /// Fair and proportional increase (bytes squared) since the last adjustment, which the
    /// adjustment turns into window bytes for the tally.
    pending_fair: f64,
    pending_proportional: f64,
}

impl Nscc {
    /// A controller for one connection.
    pub fn new(c: &NsccConfig, p: &CcParams) -> Self {
        let reps2024 = c.variant == NsccVariant::Reps2024;
        // The constants and the starting base RTT are the network's, whatever this flow's
        // first path crosses: both references size them from the network RTT alone, so a
        // flow whose first path takes a slowed link starts from the nominal RTT.
        let r = p.network_rtt.max(1);
        let mtu = p.mtu as u64;
        let mss = p.mtu.saturating_sub(HEADER).max(1) as f64;
        let a = bdp(r, p.line_rate) as f64 / REFERENCE_BDP;
        let target = match c.target_delay {
            Some(t) => t.0,
            None if reps2024 => 6 * US,
            None => {
                let default = if p.trimming { 0.75 } else { 1.0 };
                (r as f64 * c.target_delay_rtt.unwrap_or(default)) as Time
            }
        }
        .max(1) as f64;
        let b = target / REFERENCE_RTT as f64;
        let adjust_period = c
            .adjust_period
            .map_or(if reps2024 { 12 * US } else { r }, |t| t.0);
        let adjust_bytes = c.adjust_bytes.map_or(
            if reps2024 {
                (16_000.0 * b) as u64
            } else {
                8 * mtu
            },
            |s| s.0.bytes(p.mtu),
        );
        let base_rtt = if c.accurate_base_rtt { p.base_rtt } else { r };
        let mut cc = Nscc {
            reps2024,
            line_rate: p.line_rate,
            max_cwnd_bdp: c.max_cwnd_bdp,
            base_rtt_on_nack: c.base_rtt_on_nack.unwrap_or(!reps2024),
            min_cwnd: mtu,
            network_rtt: r,
            // A sample below both its first path's RTT and the network's is no packet's.
            path_rtt: p.base_rtt.min(r),
            target,
            qa_threshold: 4.0 * target,
            qa_enabled: c.quick_adapt,
            qa_gate: c.qa_gate,
            alpha: 4.0 * mss * a * b / target,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            fi_scale: 0.25 * a,
            gamma: c.gamma,
            adjust_period,
            adjust_bytes,
            cwnd: 0,
            max_cwnd: 0,
            base_rtt,
            avg_delay: 0.0,
            inc: 0.0,
            received_bytes: 0,
            last_adjust: 0,
            fi_count: 0,
            fast_mode: false,
            last_decrease: 0,
            achieved_bytes: 0,
            qa_end: 0,
            trigger_qa: false,
            bytes_to_ignore: 0,
            bytes_ignored: 0,
            in_flight: 0,
            tally: WindowTally::default(),
            pending_fair: 0.0,
            pending_proportional: 0.0,
        };
        cc.set_base_rtt(base_rtt);
        cc.cwnd = c
            .initial_cwnd
            .map_or(cc.max_cwnd, |w| w.0.bytes(p.mtu))
            .max(mtu);
        cc
    }

    fn set_base_rtt(&mut self, rtt: Time) {
        self.base_rtt = rtt;
        let max = bdp(rtt, self.line_rate) as f64 * self.max_cwnd_bdp;
        self.max_cwnd = (max as u64).max(self.min_cwnd);
    }

    fn clamp(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_cwnd, self.max_cwnd);
    }

    fn fold_delay(&mut self, d: f64, ecn: bool) {
        let sample = if !ecn && d > self.target {
            0.25 * self.base_rtt as f64
        } else {
            d
        };
        self.avg_delay = DELAY_GAIN * sample + (1.0 - DELAY_GAIN) * self.avg_delay;
    }

    /// The queueing delay an ACK reports, in picoseconds (see the module docs).
    fn delay(&mut self, rtt: Option<Time>, ecn: bool) -> f64 {
        let Some(raw) = rtt else {
            return self.avg_delay;
        };
        if raw < self.base_rtt && raw >= self.path_rtt {
            self.set_base_rtt(raw);
        }
        if raw < self.base_rtt {
            return self.avg_delay;
        }
        let d = (raw - self.base_rtt) as f64;
        self.fold_delay(d, ecn);
        d
    }

    /// Returns true when the event is consumed (marks being ignored, or the window snapped).
    fn quick_adapt(&mut self, is_loss: bool, ecn: bool, delay: f64, now: Time) -> bool {
        if !self.qa_enabled {
            return false;
        }
        let mut fired = false;
        if self.bytes_ignored < self.bytes_to_ignore && ecn {
            fired = true;
        } else if now > self.qa_end {
            let large = if self.reps2024 {
                self.avg_delay > self.qa_threshold
            } else {
                delay > self.qa_threshold
            };
            if self.qa_end != 0
                && (self.trigger_qa || is_loss || large)
                && self.achieved_bytes < self.max_cwnd >> self.qa_gate
            {
                let before = self.cwnd;
                self.cwnd = self.achieved_bytes.max(self.min_cwnd);
                self.tally.quick_adapt_decrease += before as i64 - self.cwnd as i64;
                self.bytes_to_ignore = self.in_flight;
                self.bytes_ignored = 0;
                self.trigger_qa = false;
                fired = true;
            }
            self.achieved_bytes = 0;
            self.qa_end = now + self.base_rtt + self.target as Time;
        }
        if fired {
            self.inc = 0.0;
            self.received_bytes = 0;
        }
        fired
    }

    fn fast_increase(&mut self, acked: u64, delay: f64) {
        if delay < FAST_INCREASE_DELAY {
            self.fi_count += acked;
            if self.fi_count > self.cwnd || self.fast_mode {
                let added = (acked as f64 * self.fi_scale) as u64;
                self.cwnd += added;
                self.tally.fast_increase += added as i64;
                self.fast_mode = true;
                return;
            }
        } else {
            self.fi_count = 0;
        }
        self.fast_mode = false;
    }

    fn multiplicative_decrease(&mut self, now: Time) {
        self.fast_mode = false;
        self.fi_count = 0;
        let avg = self.avg_delay;
        if avg > self.target && now.saturating_sub(self.last_decrease) > self.base_rtt {
            let factor = (1.0 - self.gamma * (avg - self.target) / avg).max(0.5);
            let before = self.cwnd;
            self.cwnd = ((self.cwnd as f64 * factor) as u64).max(self.min_cwnd);
            self.tally.multiplicative_decrease += before as i64 - self.cwnd as i64;
            self.last_decrease = now;
        }
    }

    fn fulfill_adjustment(&mut self, now: Time) {
        let mut add = self.inc / self.cwnd as f64;
        if self.reps2024 {
            add = add.min(self.adjust_bytes as f64);
        }
        self.cwnd += add as u64;
        let cwnd = self.cwnd.max(1) as f64;
        self.tally.fair_increase += (self.pending_fair / cwnd) as i64;
        self.tally.proportional_increase += (self.pending_proportional / cwnd) as i64;
        (self.pending_fair, self.pending_proportional) = (0.0, 0.0);
        if now.saturating_sub(self.last_adjust) >= self.adjust_period {
            self.cwnd += self.eta as u64;
            self.tally.periodic_increase += self.eta as i64;
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received_bytes = 0;
    }
}

impl CongestionControl for Nscc {
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        Some(Box::new(self.clone()))
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn window_tally(&self) -> Option<WindowTally> {
        Some(self.tally)
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let (acked, now) = (ack.acked, ack.now);
        self.achieved_bytes += acked;
        self.received_bytes += acked;
        self.bytes_ignored += acked;
        self.in_flight = ack.in_flight.max(0) as u64;
        let delay = self.delay(ack.rtt, ack.ecn);
        if self.quick_adapt(false, ack.ecn, delay, now) {
            return;
        }
        match (ack.ecn, delay >= self.target) {
            (false, true) => {
                self.inc += self.fi * acked as f64;
                self.pending_fair += self.fi * acked as f64;
            }
            (false, false) => {
                self.fast_increase(acked, delay);
                if !self.fast_mode {
                    let proportional = self.alpha * acked as f64 * (self.target - delay);
                    self.inc += proportional;
                    self.pending_proportional += proportional;
                    if self.reps2024 {
                        self.inc += self.fi * acked as f64;
                        self.pending_fair += self.fi * acked as f64;
                    }
                }
            }
            (true, true) => self.multiplicative_decrease(now),
            (true, false) => {}
        }
        self.clamp();
        if self.received_bytes > self.adjust_bytes
            || now.saturating_sub(self.last_adjust) > self.adjust_period
        {
            self.fulfill_adjustment(now);
            self.clamp();
        }
    }

    fn on_nack_rtt(&mut self, rtt: Time) {
        if self.base_rtt_on_nack && rtt < self.base_rtt {
            self.set_base_rtt(rtt);
        }
    }

    fn on_nack(&mut self, size: u64, now: Time) {
        self.bytes_ignored += size;
        self.tally.nack_decrease += size as i64;
        self.fold_delay(self.network_rtt as f64, true);
        self.trigger_qa = true;
        if self.quick_adapt(true, true, 0.0, now) {
            return;
        }
        self.cwnd = self.cwnd.saturating_sub(size);
        self.clamp();
    }

    fn on_timeout(&mut self, size: u64, _now: Time) {
        self.cwnd = self.cwnd.saturating_sub(size).max(self.min_cwnd);
    }
}

// Tests live in `nscc/tests.rs` to keep this file under the 700-line limit.
#[cfg(test)]
mod tests;
