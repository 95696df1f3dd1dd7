//! REPS-legacy: the earlier REPS without the 8-entry ring (the REPS artifact's htsim,
//! `tommasobo/REPS_EuroSys_Artifact`: `reps`; `ultraethernet/uet-htsim`: `reps_legacy`), used
//! by the REPS paper's Figures 12 and 15.
//!
//! The first window goes out round robin over EVs 1, 2, 3, ... (wrapping at `evs_size`, so 0
//! comes last). Afterwards each packet takes the oldest EV of an unbounded FIFO of EVs echoed by
//! un-marked ACKs, or a random EV when the FIFO is empty. Marked ACKs, NACKs and timeouts are
//! ignored: there is no freezing.
//!
//! "First window" is the reference's test `MSS x sent < min(cwnd, MSS x evs_size)`, evaluated
//! before every send. Here `cwnd` is the window the congestion control reported after the
//! latest ACK (its initial window before any), and `sent` counts every EV this load balancer
//! handed out, retransmissions and RTS included, since it cannot tell them from new data (the
//! reference counts the highest PSN sent; the two differ only when losses are recovered
//! within the first window).
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{
    check_evs_override, random_ev, AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer,
    PathChoice,
};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "reps-legacy", evs_size = 65536 }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RepsLegacyConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
}

impl LbScheme for RepsLegacyConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(RepsLegacy::new(ctx, ctx.evs(self.evs_size)))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// The unbounded FIFO of EVs from un-marked ACKs, shared by `reps-legacy` and `mixed`.
#[derive(Clone)]
pub struct EvFifo {
    evs: VecDeque<u16>,
}

impl EvFifo {
    /// An empty FIFO with room for about two windows of `ctx`'s connection, so it rarely grows
    /// while the connection runs.
    pub fn new(ctx: &LbContext) -> Self {
        let window = ctx.initial_window / ctx.mtu.max(1) as u64;
        let room = (2 * window.max(ctx.bdp_packets as u64)).clamp(16, 1 << 16);
        EvFifo {
            evs: VecDeque::with_capacity(room as usize),
        }
    }

    /// Remembers `ev` as a good path.
    #[inline]
    pub fn push(&mut self, ev: u16) {
        self.evs.push_back(ev);
    }

    /// The oldest remembered EV, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<u16> {
        self.evs.pop_front()
    }

    /// Number of EVs waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.evs.len()
    }

    /// Whether no EV is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.evs.is_empty()
    }

    /// The ACK's effect: an un-marked ACK's EV is recycled, a marked one's is not.
    #[inline]
    pub fn on_ack(&mut self, ack: &AckFeedback) {
        if !ack.ecn {
            self.push(ack.ev);
        }
    }
}

/// REPS-legacy over one connection.
#[derive(Clone)]
pub struct RepsLegacy {
    fifo: EvFifo,
    evs: u32,
    /// The last round-robin EV (the first handed out is 1).
    rr: u32,
    /// EVs handed out so far.
    sent: u64,
    /// The congestion window after the latest ACK, in bytes.
    cwnd: u64,
    mtu: u64,
}

impl RepsLegacy {
    /// Fresh state for the connection `ctx` over `evs` EVs.
    pub fn new(ctx: &LbContext, evs: u32) -> Self {
        RepsLegacy {
            fifo: EvFifo::new(ctx),
            evs: evs.max(1),
            rr: 0,
            sent: 0,
            cwnd: ctx.initial_window,
            mtu: ctx.mtu.max(1) as u64,
        }
    }

    /// Whether the next send still belongs to the first window.
    #[inline]
    fn in_first_window(&self) -> bool {
        let limit = self.cwnd.min(self.mtu * self.evs as u64);
        self.sent.saturating_mul(self.mtu) < limit
    }
}

impl LoadBalancer for RepsLegacy {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        let ev = if self.in_first_window() {
            self.rr = (self.rr + 1) % self.evs;
            self.rr as u16
        } else {
            match self.fifo.pop() {
                Some(ev) => ev,
                None => random_ev(rng, self.evs),
            }
        };
        self.sent += 1;
        PathChoice::ev(ev)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        self.cwnd = ack.cwnd;
        self.fifo.on_ack(ack);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(window_packets: u64, evs: u32) -> LbContext<'static> {
        let ex = LbContext::example();
        LbContext {
            initial_window: window_packets * ex.mtu as u64,
            evs_size: evs,
            ..ex
        }
    }

    fn evs(lb: &mut dyn LoadBalancer, n: usize, rng: &mut Rng) -> Vec<u16> {
        (0..n).map(|_| lb.next(0, rng).ev).collect()
    }

    #[test]
    fn first_window_is_round_robin_from_one() {
        let mut rng = Rng::new(1);
        let mut lb = RepsLegacyConfig::default().build(&ctx(5, 65536), &mut rng);
        assert_eq!(evs(lb.as_mut(), 5, &mut rng), [1, 2, 3, 4, 5]);
        // The sixth send is past the window: empty FIFO, so random (not 6 every time).
        let after: Vec<u16> = (0..20).map(|_| lb.next(0, &mut rng).ev).collect();
        assert!(after.iter().any(|&e| e != 6), "{after:?}");
    }

    #[test]
    fn first_window_is_capped_by_evs_size_and_wraps_to_zero() {
        let mut rng = Rng::new(1);
        let mut lb = RepsLegacyConfig { evs_size: Some(4) }.build(&ctx(100, 65536), &mut rng);
        assert_eq!(evs(lb.as_mut(), 4, &mut rng), [1, 2, 3, 0]);
        lb.on_ack(&AckFeedback::example(2, 1));
        assert_eq!(lb.next(0, &mut rng).ev, 2, "window of 4 EVs over: FIFO");
    }

    #[test]
    fn after_first_window_pops_unmarked_ack_evs_oldest_first() {
        let mut rng = Rng::new(2);
        let mut lb = RepsLegacyConfig::default().build(&ctx(3, 65536), &mut rng);
        for (ev, ecn) in [(1, false), (2, true), (3, false)] {
            lb.on_ack(&AckFeedback {
                ecn,
                cwnd: 3 * 4150,
                ..AckFeedback::example(ev, 1)
            });
        }
        // Still in the first window: the FIFO waits.
        assert_eq!(evs(lb.as_mut(), 3, &mut rng), [1, 2, 3]);
        assert_eq!(lb.next(0, &mut rng).ev, 1);
        assert_eq!(
            lb.next(0, &mut rng).ev,
            3,
            "the marked EV 2 was not recycled"
        );
        lb.on_nack(7, 2);
        lb.on_timeout(8, 3);
        let r = lb.next(0, &mut rng).ev;
        assert!(r != 7 && r != 8, "NACK and timeout EVs not recycled");
    }

    #[test]
    fn fifo_is_unbounded() {
        let mut rng = Rng::new(4);
        let mut lb = RepsLegacyConfig::default().build(&ctx(1, 65536), &mut rng);
        lb.next(0, &mut rng);
        let n = 5000u16;
        for ev in 100..100 + n {
            lb.on_ack(&AckFeedback {
                cwnd: 4150,
                ..AckFeedback::example(ev, 1)
            });
        }
        let got = evs(lb.as_mut(), n as usize, &mut rng);
        assert!(got.iter().copied().eq(100..100 + n), "none lost, in order");
    }

    #[test]
    fn empty_fifo_falls_back_to_random_evs_below_evs_size() {
        let mut rng = Rng::new(5);
        let mut lb = RepsLegacyConfig { evs_size: Some(32) }.build(&ctx(1, 65536), &mut rng);
        lb.next(0, &mut rng);
        let got = evs(lb.as_mut(), 500, &mut rng);
        assert!(got.iter().all(|&e| e < 32));
        let distinct = got.iter().collect::<std::collections::BTreeSet<_>>().len();
        assert!(distinct > 20, "random, not a fixed EV: {distinct} distinct");
    }

    #[test]
    fn first_window_follows_the_latest_window() {
        let mut rng = Rng::new(6);
        let mut lb = RepsLegacyConfig::default().build(&ctx(2, 65536), &mut rng);
        assert_eq!(evs(lb.as_mut(), 2, &mut rng), [1, 2]);
        // The window grew to 4 packets: the reference's test lets 2 more go round robin.
        lb.on_ack(&AckFeedback {
            ecn: true,
            cwnd: 4 * 4150,
            ..AckFeedback::example(9, 1)
        });
        assert_eq!(evs(lb.as_mut(), 2, &mut rng), [3, 4]);
        lb.on_ack(&AckFeedback {
            cwnd: 4 * 4150,
            ..AckFeedback::example(9, 1)
        });
        assert_eq!(lb.next(0, &mut rng).ev, 9);
    }

    #[test]
    fn uses_the_nic_wide_evs_size_by_default() {
        let mut rng = Rng::new(7);
        let mut lb = RepsLegacyConfig::default().build(&ctx(1, 16), &mut rng);
        lb.next(0, &mut rng);
        assert!(evs(lb.as_mut(), 200, &mut rng).iter().all(|&e| e < 16));
    }
}
