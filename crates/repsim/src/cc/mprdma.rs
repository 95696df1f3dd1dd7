//! The MPRDMA-style DCTCP variant the REPS paper used for every experiment.
//!
//! Per ACK, in bytes: an un-marked ACK grows the window by `acked * MTU / cwnd` (about one MTU
//! per window of acknowledged bytes), capped at the maximum window; a marked ACK shrinks it by a
//! quarter of the acknowledged bytes; a NACK or a timeout removes the lost packet's size. The
//! window never drops below one MTU. With fast increase enabled, once a whole window of ACKs has
//! seen less than 1 us of queueing delay the window grows by half of every acknowledged amount
//! until a sample shows more delay.
use super::{CcParams, CongestionControl};
use crate::engine::time::US;
use crate::engine::Time;

/// MPRDMA window state.
#[derive(Debug)]
pub struct Mprdma {
    cwnd: u64,
    mtu: u64,
    max_cwnd: u64,
    base_rtt: Time,
    fast_increase_enabled: bool,
    low_delay_bytes: u64,
    in_fast_increase: bool,
}

/// Registry constructor.
pub fn build(p: &CcParams) -> Box<dyn CongestionControl> {
    Box::new(Mprdma::new(p))
}

impl Mprdma {
    /// A controller starting at the initial window.
    pub fn new(p: &CcParams) -> Self {
        Mprdma {
            cwnd: p.initial_cwnd.max(p.mtu as u64),
            mtu: p.mtu as u64,
            max_cwnd: p.max_cwnd,
            base_rtt: p.base_rtt,
            fast_increase_enabled: p.fast_increase,
            low_delay_bytes: 0,
            in_fast_increase: false,
        }
    }

    fn decrease(&mut self, by: u64) {
        self.cwnd = self.cwnd.saturating_sub(by).max(self.mtu);
    }
}

impl CongestionControl for Mprdma {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn on_ack(&mut self, acked: u64, ecn: bool, rtt: Option<Time>, _now: Time) {
        if ecn {
            self.decrease(acked / 4);
            return;
        }
        self.cwnd += acked * self.mtu / self.cwnd;
        if self.fast_increase_enabled {
            let low_delay = rtt.is_some_and(|r| r.saturating_sub(self.base_rtt) < US);
            if low_delay {
                self.low_delay_bytes += acked;
                if self.in_fast_increase || self.low_delay_bytes > self.cwnd {
                    self.in_fast_increase = true;
                    self.cwnd += acked / 2;
                }
            } else {
                self.low_delay_bytes = 0;
                self.in_fast_increase = false;
            }
        }
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    fn on_nack(&mut self, size: u64, _now: Time) {
        self.decrease(size);
    }

    fn on_timeout(&mut self, size: u64, _now: Time) {
        self.decrease(size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CcParams {
        CcParams {
            mtu: 4150,
            base_rtt: 8_337_120,
            bdp: 416_856,
            max_cwnd: 625_284,
            initial_cwnd: 626_650,
            fast_increase: false,
        }
    }

    #[test]
    fn additive_increase_capped_at_max_window() {
        let mut cc = Mprdma::new(&params());
        assert_eq!(cc.cwnd(), 626_650);
        cc.on_ack(4150, false, None, 0);
        assert_eq!(
            cc.cwnd(),
            625_284,
            "clipped to maxwnd on the first un-marked ACK"
        );
        let mut cc = Mprdma::new(&CcParams {
            initial_cwnd: 41_500,
            ..params()
        });
        cc.on_ack(4150, false, None, 0);
        assert_eq!(cc.cwnd(), 41_500 + 415);
    }

    #[test]
    fn decreases_floor_at_one_mtu() {
        let mut cc = Mprdma::new(&CcParams {
            initial_cwnd: 41_500,
            ..params()
        });
        cc.on_ack(4000, true, None, 0);
        assert_eq!(cc.cwnd(), 40_500);
        cc.on_nack(4150, 0);
        assert_eq!(cc.cwnd(), 36_350);
        for _ in 0..20 {
            cc.on_timeout(4150, 0);
        }
        assert_eq!(cc.cwnd(), 4150);
    }

    #[test]
    fn fast_increase_needs_a_window_of_low_delay() {
        let mut cc = Mprdma::new(&CcParams {
            initial_cwnd: 41_500,
            fast_increase: true,
            ..params()
        });
        let base = params().base_rtt;
        // About one window (~41.5 kB) of low-delay ACKs arms fast increase.
        for _ in 0..10 {
            cc.on_ack(4150, false, Some(base + 100), 0);
        }
        assert!(cc.cwnd() < 41_500 + 10 * 2075, "not yet in fast increase");
        for _ in 0..5 {
            cc.on_ack(4150, false, Some(base + 100), 0);
        }
        let before = cc.cwnd();
        cc.on_ack(4150, false, Some(base + 100), 0);
        assert!(
            cc.cwnd() >= before + 2075,
            "fast increase adds half of each ACK"
        );
        cc.on_ack(4150, false, Some(base + 5 * US), 0);
        let slow = cc.cwnd();
        cc.on_ack(4150, false, Some(base + 100), 0);
        assert!(
            cc.cwnd() < slow + 2075,
            "a delayed sample leaves fast increase"
        );
    }
}
