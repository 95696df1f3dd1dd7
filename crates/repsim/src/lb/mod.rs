//! Sender-side load balancing: one scheme per file behind the [`LoadBalancer`] trait.
//!
//! A load balancer chooses the entropy value (EV) of every data packet a connection sends, and
//! learns from every ACK, NACK and retransmission timeout. Switches hash the EV (with the flow key
//! and their salt) to pick among equal-cost ports. Adding a scheme means writing its file and
//! adding one line to [`REGISTRY`].
use crate::engine::{Rng, Time};

pub mod ecmp;
pub mod ops;
pub mod reps;

/// How REPS behaves right after it leaves freezing mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExploreMode {
    /// Every packet random until the exploration budget is spent (the reference simulator).
    Reference,
    /// Only every 8th packet random while exploring (the paper's Algorithm 2).
    Paper,
}

/// Scheme parameters shared by all connections of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LbOptions {
    /// Number of distinct EVs a sender may use (EVs are `0..evs_size`).
    pub evs_size: u32,
    /// REPS: how long freezing mode lasts.
    pub reps_freeze_duration: Time,
    /// REPS: whether failures may enter freezing at all.
    pub reps_freezing: bool,
    /// REPS: behaviour after freezing.
    pub reps_explore_mode: ExploreMode,
    /// REPS: packets explored after freezing (`None`: the connection's BDP in packets).
    pub reps_explore_packets: Option<u32>,
}

impl Default for LbOptions {
    fn default() -> Self {
        LbOptions {
            evs_size: 65536,
            reps_freeze_duration: 10 * crate::engine::time::MS,
            reps_freezing: true,
            reps_explore_mode: ExploreMode::Reference,
            reps_explore_packets: None,
        }
    }
}

/// What a load balancer knows about its connection when it is created.
#[derive(Clone, Copy, Debug)]
pub struct LbContext {
    /// Creation index of the connection (0, 1, 2, ... in workload order).
    pub flow_index: u32,
    /// Unloaded round-trip time of the connection's path.
    pub base_rtt: Time,
    /// The retransmission timeout.
    pub rto: Time,
    /// Bandwidth-delay product in full packets.
    pub bdp_packets: u32,
    /// Whether switches trim (true) or drop (false) on overflow.
    pub trimming: bool,
}

/// Something a load balancer did that is worth recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbEvent {
    /// Entered freezing mode (REPS) until the given time.
    Froze {
        /// Earliest time freezing may end.
        until: Time,
    },
    /// Left freezing mode (REPS).
    Unfroze,
    /// Moved the connection to a new path.
    Rerouted,
}

/// A sender-side path chooser for one connection.
pub trait LoadBalancer {
    /// EV of the next data packet (new or retransmitted).
    fn next_ev(&mut self, now: Time, rng: &mut Rng) -> u16;
    /// An ACK for a packet sent with `ev` arrived; `ecn` is its echoed mark, `rtt` the
    /// round-trip sample of the acknowledged PSN's latest transmission (`None` when that PSN was
    /// no longer outstanding, as in the reference).
    /// Oblivious schemes ignore it (the default).
    fn on_ack(&mut self, ev: u16, ecn: bool, rtt: Option<Time>, now: Time) -> Option<LbEvent> {
        let _ = (ev, ecn, rtt, now);
        None
    }
    /// A NACK for a trimmed packet sent with `ev` arrived.
    fn on_nack(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        let _ = (ev, now);
        None
    }
    /// The retransmission timer expired for a packet sent with `ev`.
    fn on_timeout(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        let _ = (ev, now);
        None
    }
}

/// Constructor of a load balancer.
pub type LbBuilder = fn(&LbOptions, &LbContext, &mut Rng) -> Box<dyn LoadBalancer>;

/// Scenario name -> constructor. One line per scheme.
pub const REGISTRY: &[(&str, LbBuilder)] = &[
    ("ecmp", ecmp::build),
    ("ops", ops::build),
    ("reps", reps::build),
];

/// Builds the scheme named `name`, or `None` if it does not exist.
pub fn build(
    name: &str,
    opts: &LbOptions,
    ctx: &LbContext,
    rng: &mut Rng,
) -> Option<Box<dyn LoadBalancer>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b(opts, ctx, rng))
}

/// Names accepted by [`build`].
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// A uniformly random EV below `evs_size`.
#[inline]
pub fn random_ev(rng: &mut Rng, evs_size: u32) -> u16 {
    rng.below(evs_size) as u16
}
