//! REPS: a thin adapter over the `reps` crate, so the simulated algorithm is the shipped one.
//!
//! The adapter converts simulated picoseconds to the crate's 32-bit nanosecond ticks and decides
//! when a timeout counts as a failure: with trimming on every timeout does (losses without
//! trimming cannot be congestion); with trimming off only when the largest RTT seen in the
//! current window of 2 x RTO stayed below 1.65 x the base RTT (losses without queueing).
use ::reps::{Coalescing, Config, RepsState, Transition};

use super::{ExploreMode, LbContext, LbEvent, LbOptions, LoadBalancer};
use crate::engine::time::NS;
use crate::engine::{Rng, Time};

/// One connection's REPS state plus the failure-detection bookkeeping around it.
pub struct Reps {
    state: RepsState,
    config: Config,
    trimming: bool,
    base_rtt: Time,
    rto: Time,
    max_rtt_in_window: Time,
    window_end: Time,
}

/// Registry constructor.
pub fn build(opts: &LbOptions, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
    let mut config = Config::new(opts.evs_size);
    config.freeze_duration = (opts.reps_freeze_duration / NS).min(i32::MAX as u64) as u32;
    config.explore_packets = opts
        .reps_explore_packets
        .unwrap_or(ctx.bdp_packets)
        .min(u16::MAX as u32) as u16;
    config.explore_mode = match opts.reps_explore_mode {
        ExploreMode::Reference => ::reps::ExploreMode::Reference,
        ExploreMode::Paper => ::reps::ExploreMode::PaperPseudocode,
    };
    config.coalescing = Coalescing::PerAck;
    config.freezing_enabled = opts.reps_freezing;
    Box::new(Reps {
        state: RepsState::new(),
        config,
        trimming: ctx.trimming,
        base_rtt: ctx.base_rtt,
        rto: ctx.rto,
        max_rtt_in_window: 0,
        window_end: 0,
    })
}

#[inline]
fn tick(now: Time) -> u32 {
    (now / NS) as u32
}

fn event(t: Transition, until: Time) -> Option<LbEvent> {
    match t {
        Transition::None => None,
        Transition::EnteredFreezing => Some(LbEvent::Froze { until }),
        Transition::ExitedFreezing => Some(LbEvent::Unfroze),
    }
}

impl Reps {
    /// The crate-level state (for inspection in tests).
    pub fn state(&self) -> &RepsState {
        &self.state
    }
}

impl LoadBalancer for Reps {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> u16 {
        self.state.next_ev(&self.config, rng)
    }

    fn on_ack(&mut self, ev: u16, ecn: bool, rtt: Option<Time>, now: Time) -> Option<LbEvent> {
        if let Some(rtt) = rtt {
            if now > self.window_end {
                self.max_rtt_in_window = 0;
                self.window_end = now + 2 * self.rto;
            }
            self.max_rtt_in_window = self.max_rtt_in_window.max(rtt);
        }
        event(self.state.on_ack(&self.config, ev, ecn, tick(now)), 0)
    }

    fn on_nack(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        event(self.state.on_nack(&self.config, ev, tick(now)), 0)
    }

    fn on_timeout(&mut self, _ev: u16, now: Time) -> Option<LbEvent> {
        // 1.65 x base RTT, in integers.
        let looks_like_failure =
            self.trimming || self.max_rtt_in_window * 100 < self.base_rtt * 165;
        if !looks_like_failure {
            return None;
        }
        let until = now + self.config.freeze_duration as Time * NS;
        event(
            self.state.on_failure_detected(&self.config, tick(now)),
            until,
        )
    }
}
