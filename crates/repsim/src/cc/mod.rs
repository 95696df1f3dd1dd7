//! Congestion control: one algorithm per file behind the [`CongestionControl`] trait.
//!
//! The transport calls the controller on every ACK, NACK and retransmission timeout and reads
//! the window (bytes) before each send. Adding an algorithm means writing its file and adding one
//! line to [`REGISTRY`].
use crate::engine::Time;

pub mod mprdma;

/// What a controller knows about its connection when it is created.
#[derive(Clone, Copy, Debug)]
pub struct CcParams {
    /// Bytes of a full data packet on the wire.
    pub mtu: u32,
    /// Unloaded round-trip time of the connection's path.
    pub base_rtt: Time,
    /// Bandwidth-delay product of the path in bytes.
    pub bdp: u64,
    /// Largest window allowed (bytes).
    pub max_cwnd: u64,
    /// Window at start (bytes).
    pub initial_cwnd: u64,
    /// Grow faster while the measured queueing delay stays under 1 us (MPRDMA "fast increase").
    pub fast_increase: bool,
}

/// A window-based congestion controller for one connection.
pub trait CongestionControl {
    /// Current window in bytes.
    fn cwnd(&self) -> u64;
    /// An ACK reported `acked_bytes` newly delivered; `ecn` is its echoed mark; `rtt` the
    /// round-trip sample of the acknowledged PSN's latest transmission (`None` when that PSN was
    /// no longer outstanding).
    fn on_ack(&mut self, acked_bytes: u64, ecn: bool, rtt: Option<Time>, now: Time);
    /// A packet of `size` bytes was trimmed and NACKed.
    fn on_nack(&mut self, size: u64, now: Time);
    /// The retransmission timer expired for a packet of `size` bytes.
    fn on_timeout(&mut self, size: u64, now: Time);
    /// Turns MPRDMA-style fast increase on or off while running (a timed switch of the
    /// scenario); controllers without it ignore this.
    fn set_fast_increase(&mut self, on: bool) {
        let _ = on;
    }
}

/// Constructor of a congestion controller.
pub type CcBuilder = fn(&CcParams) -> Box<dyn CongestionControl>;

/// Scenario name -> constructor. One line per algorithm.
pub const REGISTRY: &[(&str, CcBuilder)] = &[("mprdma", mprdma::build)];

/// Builds the controller named `name`, or `None` if no such algorithm exists.
pub fn build(name: &str, params: &CcParams) -> Option<Box<dyn CongestionControl>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b(params))
}

/// Names accepted by [`build`].
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}
