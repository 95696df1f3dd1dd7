//! The MPRDMA-style DCTCP variant the REPS paper used for every experiment, as the reference
//! simulator runs it.
//!
//! Per ACK, in bytes: an un-marked ACK grows the window by `acked * MTU / cwnd` (about one MTU
//! per window of acknowledged bytes), capped at the maximum window; a marked ACK shrinks it by a
//! quarter of the acknowledged bytes; a NACK or a timeout removes the lost packet's size. The
//! window never drops below one MTU. All arithmetic truncates to whole bytes.
//!
//! **Fast increase** (off unless enabled, from the start or by a timed switch): on an un-marked
//! ACK whose queueing delay is under 1 us, the acknowledged bytes are added to a counter; once
//! the counter exceeds the window (checked before this ACK's growth), or while fast increase is
//! already on, half of the acknowledged bytes are added too (capped at the maximum window) and
//! fast increase stays on; the additive increase then still applies. An un-marked ACK with a
//! delay of 1 us or more resets the counter and leaves fast increase. A marked ACK resets the
//! counter but, as in the reference, does *not* leave fast increase, so the next low-delay ACK
//! grows by half again.
//!
//! **Queueing delay** is the RTT sample minus the connection's base RTT. Samples come only from
//! ACKs of PSNs still outstanding; a sample below the base RTT (a header-sized RTS) or a missing
//! one uses instead the running average of earlier delays (an EWMA with gain 0.0125, fed by
//! every sample at or above the base RTT), as the reference does.
//!
//! The window starts at `initial_cwnd` (default: the maximum) and never exceeds
//! `max_cwnd_bdp` bandwidth-delay products of the connection's path (default 1.5, as the
//! reference). `fast_increase_after` is the reference's timed switch of its Fig. 7 scenario:
//! every sender, running or later, gets fast increase from that time. The reference turns it
//! on at the first switch-queue arrival after the time, anywhere in the network, which no host
//! could know of; here it turns on at the time itself (in the Fig. 7 scenario the FCTs do not
//! move; see docs/fidelity.md).
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::time::US;
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{SizeQ, TimeQ};
use crate::ConfigError;

/// `cc = { algo = "mprdma", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MprdmaConfig {
    /// Window at start (default: the maximum window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<SizeQ>,
    /// Largest window, in bandwidth-delay products of the connection's path.
    pub max_cwnd_bdp: f64,
    /// Fast increase from the start.
    pub fast_increase: bool,
    /// Fast increase for every sender from the first switch-queue arrival after this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_increase_after: Option<TimeQ>,
}

impl Default for MprdmaConfig {
    fn default() -> Self {
        MprdmaConfig {
            initial_cwnd: None,
            max_cwnd_bdp: 1.5,
            fast_increase: false,
            fast_increase_after: None,
        }
    }
}

impl CcScheme for MprdmaConfig {
    /// The reference's timed fast-increase switch, if set.
    fn timed_switch_at(&self) -> Option<Time> {
        self.fast_increase_after.map(|t| t.0)
    }

    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        let max_cwnd = ((p.bdp as f64 * self.max_cwnd_bdp) as u64).max(p.mtu as u64);
        Box::new(Mprdma::new(
            p,
            self.initial_cwnd.map_or(max_cwnd, |c| c.0.bytes(p.mtu)),
            max_cwnd,
            self.fast_increase || p.timed_switch_on,
        ))
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if self.max_cwnd_bdp.is_nan() || self.max_cwnd_bdp <= 0.0 {
            return Err(ConfigError::new("max_cwnd_bdp", "must be positive"));
        }
        if let Some(c) = self.initial_cwnd {
            if c.0.bytes(ctx.mtu) == 0 {
                return Err(ConfigError::new("initial_cwnd", "must be positive"));
            }
        }
        Ok(())
    }
}

/// Gain of the queueing-delay average.
const DELAY_GAIN: f64 = 0.0125;

/// MPRDMA window state.
#[derive(Clone, Debug)]
pub struct Mprdma {
    cwnd: u64,
    mtu: u64,
    max_cwnd: u64,
    base_rtt: Time,
    fast_increase_enabled: bool,
    /// Bytes acknowledged by un-marked low-delay ACKs since the last reset.
    low_delay_bytes: u64,
    /// Growing by half of every low-delay ACK.
    in_fast_increase: bool,
    /// Running average of queueing-delay samples, in picoseconds.
    avg_delay: f64,
}

impl Mprdma {
    /// A controller starting at `initial_cwnd`, capped at `max_cwnd`.
    pub fn new(p: &CcParams, initial_cwnd: u64, max_cwnd: u64, fast_increase: bool) -> Self {
        Mprdma {
            cwnd: initial_cwnd.max(p.mtu as u64),
            mtu: p.mtu as u64,
            max_cwnd,
            base_rtt: p.base_rtt,
            fast_increase_enabled: fast_increase,
            low_delay_bytes: 0,
            in_fast_increase: false,
            avg_delay: 0.0,
        }
    }

    /// Whether fast increase is growing the window by half of each low-delay ACK.
    pub fn in_fast_increase(&self) -> bool {
        self.in_fast_increase
    }

    fn decrease(&mut self, by: u64) {
        self.cwnd = self.cwnd.saturating_sub(by).max(self.mtu);
    }

    /// The queueing delay an ACK reports (see the module docs), in picoseconds.
    fn delay(&mut self, rtt: Option<Time>) -> f64 {
        match rtt {
            Some(r) if r >= self.base_rtt => {
                let d = (r - self.base_rtt) as f64;
                self.avg_delay = (1.0 - DELAY_GAIN) * self.avg_delay + DELAY_GAIN * d;
                d
            }
            _ => self.avg_delay,
        }
    }

    fn fast_increase(&mut self, acked: u64, delay: f64) {
        if delay < US as f64 {
            self.low_delay_bytes += acked;
            if self.low_delay_bytes > self.cwnd || self.in_fast_increase {
                self.cwnd = (self.cwnd + acked / 2).min(self.max_cwnd);
                self.in_fast_increase = true;
            } else {
                self.in_fast_increase = false;
            }
        } else {
            self.low_delay_bytes = 0;
            self.in_fast_increase = false;
        }
    }
}

impl CongestionControl for Mprdma {
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        Some(Box::new(self.clone()))
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let acked = ack.acked;
        let delay = self.delay(ack.rtt);
        if ack.ecn {
            self.decrease(acked / 4);
            self.low_delay_bytes = 0;
            return;
        }
        if self.fast_increase_enabled {
            self.fast_increase(acked, delay);
        }
        self.cwnd += acked * self.mtu / self.cwnd;
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    fn on_nack(&mut self, size: u64, _now: Time) {
        self.decrease(size);
    }

    fn on_timeout(&mut self, size: u64, _now: Time) {
        self.decrease(size);
    }

    fn on_timed_switch(&mut self) {
        self.fast_increase_enabled = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CcParams {
        CcParams::example()
    }

    /// The reference's 2-tier controller: 151-packet initial window, 1.5 BDP maximum.
    fn reference() -> Mprdma {
        Mprdma::new(&params(), 626_650, 625_284, false)
    }

    fn small(fast_increase: bool) -> Mprdma {
        Mprdma::new(&params(), 41_500, 625_284, fast_increase)
    }

    fn ack(cc: &mut Mprdma, acked: u64, ecn: bool, rtt: Option<Time>) {
        cc.on_ack(&AckSample {
            acked,
            ecn,
            cnp: false,
            rtt,
            now: 0,
            in_flight: 0,
        });
    }

    #[test]
    fn additive_increase_capped_at_max_window() {
        let mut cc = reference();
        assert_eq!(cc.cwnd(), 626_650);
        ack(&mut cc, 4150, false, None);
        assert_eq!(
            cc.cwnd(),
            625_284,
            "clipped to maxwnd on the first un-marked ACK"
        );
        let mut cc = small(false);
        ack(&mut cc, 4150, false, None);
        assert_eq!(cc.cwnd(), 41_500 + 415);
        // A zero-byte ACK (an RTS's) changes nothing but still clips.
        let mut cc = reference();
        ack(&mut cc, 0, false, None);
        assert_eq!(cc.cwnd(), 625_284);
    }

    #[test]
    fn decreases_floor_at_one_mtu() {
        let mut cc = small(false);
        ack(&mut cc, 4000, true, None);
        assert_eq!(cc.cwnd(), 40_500);
        cc.on_nack(4150, 0);
        assert_eq!(cc.cwnd(), 36_350);
        for _ in 0..20 {
            cc.on_timeout(4150, 0);
        }
        assert_eq!(cc.cwnd(), 4150);
    }

    #[test]
    fn fast_increase_follows_the_reference_rule() {
        let base = params().base_rtt;
        let low = Some(base + 100);
        let mut cc = small(true);
        // The counter must exceed the window as it stood before the ACK: 10 ACKs make 41,500
        // bytes, not more than the window, so only the additive increase applies.
        let mut expect = 41_500u64;
        for _ in 0..10 {
            ack(&mut cc, 4150, false, low);
            expect += 4150 * 4150 / expect;
            assert_eq!(cc.cwnd(), expect);
        }
        assert!(!cc.in_fast_increase());
        // The 11th pushes the counter (45,650) over the window: half the ACK first, then the
        // additive increase on the raised window.
        ack(&mut cc, 4150, false, low);
        expect += 2075;
        expect += 4150 * 4150 / expect;
        assert_eq!(cc.cwnd(), expect);
        assert!(cc.in_fast_increase());
        // A marked ACK takes a quarter off and resets the counter but keeps fast increase on:
        // the next low-delay ACK grows by half again at once.
        ack(&mut cc, 4000, true, low);
        expect -= 1000;
        assert_eq!(cc.cwnd(), expect);
        ack(&mut cc, 4150, false, low);
        expect += 2075;
        expect += 4150 * 4150 / expect;
        assert_eq!(cc.cwnd(), expect);
        // A delay of 1 us or more leaves fast increase and resets the counter.
        ack(&mut cc, 4150, false, Some(base + US));
        expect += 4150 * 4150 / expect;
        assert_eq!(cc.cwnd(), expect);
        assert!(!cc.in_fast_increase());
        // Growth is capped at the maximum window.
        let mut cc = Mprdma::new(&params(), 620_000, 625_284, true);
        for _ in 0..400 {
            ack(&mut cc, 4150, false, low);
        }
        assert_eq!(cc.cwnd(), 625_284);
    }

    #[test]
    fn missing_or_short_samples_use_the_average_delay() {
        let base = params().base_rtt;
        let mut cc = small(true);
        // Two high-delay samples put the average at about 0.0125 * 100 us + ... > 1 us.
        ack(&mut cc, 4150, false, Some(base + 100 * US));
        ack(&mut cc, 4150, false, Some(base + 100 * US));
        assert!(cc.avg_delay > US as f64);
        // With no sample, the average decides: still high, so the counter stays reset.
        for _ in 0..20 {
            ack(&mut cc, 4150, false, None);
        }
        assert!(!cc.in_fast_increase() && cc.low_delay_bytes == 0);
        // A header-sized sample below the base RTT also falls back to the average.
        ack(&mut cc, 4150, false, Some(base / 2));
        assert_eq!(cc.low_delay_bytes, 0);
    }

    #[test]
    fn fast_increase_can_be_switched_on_while_running() {
        let base = params().base_rtt;
        let mut cc = small(false);
        for _ in 0..20 {
            ack(&mut cc, 4150, false, Some(base));
        }
        assert!(!cc.in_fast_increase());
        cc.on_timed_switch();
        for _ in 0..20 {
            ack(&mut cc, 4150, false, Some(base));
        }
        assert!(cc.in_fast_increase());
    }
}
