//! DCTCP (Alizadeh et al., SIGCOMM 2010), in bytes, plus the reference simulator's `dctcp` as
//! an option.
//!
//! **Paper (the default).** The sender keeps `alpha`, an estimate of the fraction of its bytes
//! that are marked: at the end of every window of data (once every acknowledged byte that was
//! in flight when the window opened, about once per RTT) `alpha <- (1 - g) alpha + g F`, where
//! `F` is the fraction of the window's acknowledged bytes whose ACK echoed a mark (gain `g`
//! 1/16). The first marked ACK outside a reduction cuts the window once,
//! `cwnd <- cwnd (1 - alpha / 2)`, and opens a reduction that lasts until the bytes then in
//! flight are acknowledged (TCP's CWR state): further marks in it cut nothing and un-marked
//! ACKs in it grow nothing, so a window with marks is cut once per RTT. Outside a reduction an
//! un-marked ACK grows the window by `acked * MTU / cwnd` (one MTU per window of acknowledged
//! bytes), capped at the maximum window. There is no slow start (windows start at a BDP).
//! `alpha` starts at 1 (as Linux and ns-3 start it), so the first cut halves the window.
//!
//! **Reference** (`variant = "reference"`; htsim-reps spec section 6.7, uet-htsim section 10):
//! no `alpha`; as MPRDMA but a marked ACK takes a third of its acknowledged bytes off and the
//! additive increase is not capped at the maximum window.
//!
//! In both, a NACK or a timeout removes the lost packet's size (the reference's generic rule),
//! and the window never drops below one MTU. The window starts at `initial_cwnd` (default: the
//! maximum window, `max_cwnd_bdp` = 1.5 bandwidth-delay products of the path, as MPRDMA).
use serde::{Deserialize, Serialize};

use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::SizeQ;
use crate::ConfigError;

/// Which DCTCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DctcpVariant {
    /// The paper's: `alpha` per window, one multiplicative cut per RTT.
    Paper,
    /// The reference simulator's: a third of the acknowledged bytes off per marked ACK.
    Reference,
}

/// `cc = { algo = "dctcp", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpConfig {
    /// The paper's DCTCP or the reference simulator's.
    pub variant: DctcpVariant,
    /// Gain of the marked-fraction average `alpha` (paper only).
    pub g: f64,
    /// `alpha` at start (paper only).
    pub initial_alpha: f64,
    /// Window at start (default: the maximum window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<SizeQ>,
    /// Largest window, in bandwidth-delay products of the connection's path (the reference
    /// variant only starts there; its increase is not capped).
    pub max_cwnd_bdp: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            variant: DctcpVariant::Paper,
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            initial_cwnd: None,
            max_cwnd_bdp: 1.5,
        }
    }
}

impl CcScheme for DctcpConfig {
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(Dctcp::new(self, p))
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ConfigError::new("g", "must be in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(ConfigError::new("initial_alpha", "must be in [0, 1]"));
        }
        if self.max_cwnd_bdp.is_nan() || self.max_cwnd_bdp <= 0.0 {
            return Err(ConfigError::new("max_cwnd_bdp", "must be positive"));
        }
        if self.initial_cwnd.is_some_and(|c| c.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new("initial_cwnd", "must be positive"));
        }
        Ok(())
    }
}

/// DCTCP window state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    variant: DctcpVariant,
    cwnd: u64,
    mtu: u64,
    max_cwnd: u64,
    g: f64,
    alpha: f64,
    /// Bytes acknowledged in the current `alpha` window.
    window_acked: u64,
    /// Of which by marked ACKs.
    window_marked: u64,
    /// Bytes the current `alpha` window lasts (those in flight when it opened).
    window_len: u64,
    /// A cut happened and its reduction has not been acknowledged yet.
    in_cwr: bool,
    /// Bytes acknowledged since the cut.
    cwr_acked: u64,
    /// Bytes in flight at the cut: the reduction ends once they are acknowledged.
    cwr_len: u64,
}

impl Dctcp {
    /// A controller for one connection.
    pub fn new(c: &DctcpConfig, p: &CcParams) -> Self {
        let mtu = p.mtu as u64;
        let max_cwnd = ((p.bdp as f64 * c.max_cwnd_bdp) as u64).max(mtu);
        let cwnd = c
            .initial_cwnd
            .map_or(max_cwnd, |w| w.0.bytes(p.mtu))
            .max(mtu);
        Dctcp {
            variant: c.variant,
            cwnd,
            mtu,
            max_cwnd,
            g: c.g,
            alpha: c.initial_alpha,
            window_acked: 0,
            window_marked: 0,
            // The first window is the first window of data the sender sends.
            window_len: cwnd,
            in_cwr: false,
            cwr_acked: 0,
            cwr_len: 0,
        }
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    fn decrease(&mut self, by: u64) {
        self.cwnd = self.cwnd.saturating_sub(by).max(self.mtu);
    }

    fn additive_increase(&mut self, acked: u64) {
        self.cwnd += acked * self.mtu / self.cwnd;
    }

    /// Folds the ACK into the `alpha` window, closing the window once it is acknowledged.
    fn observe(&mut self, ack: &AckSample) {
        self.window_acked += ack.acked;
        if ack.ecn {
            self.window_marked += ack.acked;
        }
        if self.window_acked > 0 && self.window_acked >= self.window_len {
            let marked = self.window_marked as f64 / self.window_acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * marked;
            self.window_acked = 0;
            self.window_marked = 0;
            self.window_len = ack.in_flight.max(0) as u64;
        }
    }

    fn on_ack_paper(&mut self, ack: &AckSample) {
        self.observe(ack);
        if self.in_cwr {
            self.cwr_acked += ack.acked;
            if self.cwr_acked >= self.cwr_len {
                self.in_cwr = false;
            }
        }
        if self.in_cwr {
            return;
        }
        if ack.ecn {
            let cut = self.cwnd as f64 * (1.0 - self.alpha / 2.0);
            self.cwnd = (cut as u64).max(self.mtu);
            self.in_cwr = true;
            self.cwr_acked = 0;
            self.cwr_len = ack.in_flight.max(0) as u64;
        } else {
            self.additive_increase(ack.acked);
            self.cwnd = self.cwnd.min(self.max_cwnd);
        }
    }
}

impl CongestionControl for Dctcp {
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        Some(Box::new(self.clone()))
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn on_ack(&mut self, ack: &AckSample) {
        match self.variant {
            DctcpVariant::Paper => self.on_ack_paper(ack),
            DctcpVariant::Reference if ack.ecn => self.decrease(ack.acked / 3),
            DctcpVariant::Reference => self.additive_increase(ack.acked),
        }
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
    use crate::units::Size;

    const MTU: u64 = 4150;

    fn dctcp(variant: DctcpVariant, initial_pkts: f64, initial_alpha: f64) -> Dctcp {
        let c = DctcpConfig {
            variant,
            initial_alpha,
            initial_cwnd: Some(SizeQ(Size::Packets(initial_pkts))),
            ..Default::default()
        };
        Dctcp::new(&c, &CcParams::example())
    }

    fn ack(cc: &mut Dctcp, acked: u64, ecn: bool, in_flight: i64) {
        cc.on_ack(&AckSample {
            acked,
            ecn,
            cnp: false,
            rtt: None,
            now: 0,
            in_flight,
        });
    }

    /// One window of `in_flight` bytes acknowledged in MTU-sized ACKs, of which the first
    /// `marked` are marked.
    fn window(cc: &mut Dctcp, packets: u64, marked: u64) {
        for i in 0..packets {
            ack(cc, MTU, i < marked, (packets * MTU) as i64);
        }
    }

    #[test]
    fn alpha_is_updated_once_per_window_from_the_marked_byte_fraction() {
        let mut cc = dctcp(DctcpVariant::Paper, 20.0, 0.0);
        // The first window is the initial window, 20 packets: nothing changes before its end.
        for _ in 0..19 {
            ack(&mut cc, MTU, true, 20 * MTU as i64);
            assert_eq!(cc.alpha(), 0.0);
        }
        ack(&mut cc, MTU, false, 10 * MTU as i64);
        assert!((cc.alpha() - 0.95 / 16.0).abs() < 1e-12, "{}", cc.alpha());
        // The next window is the 10 packets in flight when the last one closed; the fraction
        // counts bytes, not ACKs: 2 marked ACKs of 3 MTU against 4 un-marked of 1 MTU = 0.6.
        let a = cc.alpha();
        for (bytes, ecn) in [(3 * MTU, true), (MTU, false), (3 * MTU, true), (MTU, false)] {
            ack(&mut cc, bytes, ecn, 10 * MTU as i64);
        }
        assert_eq!(
            cc.alpha(),
            a,
            "8 of 10 packets acknowledged: window still open"
        );
        ack(&mut cc, MTU, false, 10 * MTU as i64);
        ack(&mut cc, MTU, false, 10 * MTU as i64);
        assert!((cc.alpha() - (a * 15.0 / 16.0 + 0.6 / 16.0)).abs() < 1e-12);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        for (marked, of) in [(1u64, 4u64), (3, 10), (0, 10), (10, 10)] {
            let mut cc = dctcp(DctcpVariant::Paper, of as f64, 1.0);
            for _ in 0..400 {
                window(&mut cc, of, marked);
            }
            let f = marked as f64 / of as f64;
            assert!(
                (cc.alpha() - f).abs() < 1e-6,
                "{marked}/{of}: {}",
                cc.alpha()
            );
        }
    }

    #[test]
    fn a_window_with_marks_is_cut_once() {
        let mut cc = dctcp(DctcpVariant::Paper, 100.0, 1.0);
        let w0 = 100 * MTU;
        // alpha = 1: the first mark halves the window and opens a reduction of the 99 packets
        // then in flight.
        ack(&mut cc, MTU, true, 99 * MTU as i64);
        assert_eq!(cc.cwnd(), w0 / 2);
        // More marks and un-marked ACKs inside the reduction change nothing.
        for i in 0..98 {
            ack(&mut cc, MTU, i % 2 == 0, 60 * MTU as i64);
            assert_eq!(cc.cwnd(), w0 / 2, "ACK {i} of the reduction");
        }
        assert_eq!(cc.alpha(), 1.0);
        // The 99th packet ends the reduction (and the first alpha window, the initial 100
        // packets); this ACK is marked, so it cuts again, by the new alpha.
        ack(&mut cc, MTU, true, 40 * MTU as i64);
        let alpha = cc.alpha();
        assert!(alpha < 1.0);
        let expect = ((w0 / 2) as f64 * (1.0 - alpha / 2.0)) as u64;
        assert_eq!(cc.cwnd(), expect);
        // Its reduction covers the 40 packets then in flight; its last ACK grows the window again.
        for _ in 0..39 {
            ack(&mut cc, MTU, false, 40 * MTU as i64);
        }
        assert_eq!(cc.cwnd(), expect, "still inside the second reduction");
        let mut grown = expect;
        ack(&mut cc, MTU, false, 40 * MTU as i64);
        grown += MTU * MTU / grown;
        assert_eq!(cc.cwnd(), grown);
    }

    #[test]
    fn paper_increase_is_capped_and_losses_floor_at_one_mtu() {
        let max = (416_856.0 * 1.5) as u64;
        let mut cc = dctcp(DctcpVariant::Paper, 151.0, 0.0);
        ack(&mut cc, MTU, false, 0);
        assert_eq!(cc.cwnd(), max, "clipped to the maximum window");
        cc.on_nack(MTU, 0);
        assert_eq!(cc.cwnd(), max - MTU);
        for _ in 0..200 {
            cc.on_timeout(MTU, 0);
        }
        assert_eq!(cc.cwnd(), MTU);
        // A cut never goes below one MTU either.
        let mut cc = dctcp(DctcpVariant::Paper, 1.0, 1.0);
        ack(&mut cc, MTU, true, 0);
        assert_eq!(cc.cwnd(), MTU);
    }

    #[test]
    fn reference_variant_takes_a_third_per_marked_ack_and_grows_uncapped() {
        let max = (416_856.0 * 1.5) as u64;
        let mut cc = dctcp(DctcpVariant::Reference, 150.0, 1.0);
        let w0 = 150 * MTU;
        assert!(w0 < max);
        // Every marked ACK cuts, with no once-per-RTT limit.
        ack(&mut cc, MTU, true, 0);
        assert_eq!(cc.cwnd(), w0 - MTU / 3);
        ack(&mut cc, 2 * MTU, true, 0);
        assert_eq!(cc.cwnd(), w0 - MTU / 3 - 2 * MTU / 3);
        // The increase runs past the maximum window.
        let mut cc = dctcp(DctcpVariant::Reference, 200.0, 1.0);
        let mut expect = 200 * MTU;
        assert!(expect > max);
        ack(&mut cc, MTU, false, 0);
        expect += MTU * MTU / expect;
        assert_eq!(cc.cwnd(), expect);
        // Floors at one MTU.
        let mut cc = dctcp(DctcpVariant::Reference, 1.0, 1.0);
        ack(&mut cc, 30 * MTU, true, 0);
        assert_eq!(cc.cwnd(), MTU);
    }

    #[test]
    fn defaults_and_checks() {
        let cc = DctcpConfig::default().build(&CcParams::example());
        assert_eq!(cc.cwnd(), (416_856.0 * 1.5) as u64);
        assert!(DctcpConfig::default()
            .validate(&RunContext::new(4150, 64))
            .is_ok());
        for (c, field) in [
            (
                DctcpConfig {
                    g: 0.0,
                    ..Default::default()
                },
                "g:",
            ),
            (
                DctcpConfig {
                    initial_alpha: 1.5,
                    ..Default::default()
                },
                "initial_alpha:",
            ),
            (
                DctcpConfig {
                    max_cwnd_bdp: f64::NAN,
                    ..Default::default()
                },
                "max_cwnd_bdp:",
            ),
        ] {
            assert!(c
                .validate(&RunContext::new(4150, 64))
                .unwrap_err()
                .to_string()
                .starts_with(field));
        }
    }
}
