//! Faults: the network misbehaving on schedule.
//!
//! A scenario's `[[fault]]` entries (and reference failure files, see [`htsim`]) are expanded
//! once, before the run, into a time-ordered list of primitive [`Action`]s on egress ports
//! (= directed links): down / up, random drop probability, rate change. The simulation applies
//! them through its event queue, so they interleave deterministically with packet events.
//! Random choices (which cables, which switches, which packets) come from streams derived with
//! `Rng::derive(seed, Stream::Fault, id)`: the same seed gives the same failures, whatever the
//! load balancer.
//!
//! Where faults act (as in the reference simulator): a packet is checked when it is put on a
//! wire (failed link, failed switch, drop probability) and again when it is taken off the wire
//! (a link that went down while the packet was on it). A lost packet is either discarded silently
//! (the sender times out) or, with `loss = "trim"`, trimmed to its header and flagged so the
//! receiver NACKs it. ACKs and NACKs crossing a failed element are always discarded.
//!
//! Optional routing reconvergence (`[routing] reconvergence = "10ms"`): that long after a link
//! changes state, every switch's ECMP groups are recomputed without the links that were down at
//! the time of the change (and without next hops that can no longer reach the destination).
pub mod expand;
pub mod htsim;
pub mod random_loss;
pub mod select;
pub mod state;

pub use expand::{
    build_plan, cable_candidates, push_effect, push_flap, reverse, switch_ports, Candidates,
    Effect, FaultError, FaultSection, RoutingTimes, Timing,
};
pub use state::{FaultState, FaultStats, GaveUp, Verdict};

use crate::engine::Time;

/// How a failed element loses a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossMode {
    /// Discard silently: the sender has to time out.
    #[default]
    Silent,
    /// Trim data packets to their header and flag them: the receiver NACKs them.
    Trim,
}

/// One primitive change to one egress port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActionKind {
    /// One more reason for the port to be down.
    Down {
        /// Loss mode while down.
        loss: LossMode,
        /// Only data packets are affected (ACKs pass).
        data_only: bool,
    },
    /// One reason less (the port is up when none is left).
    Up,
    /// The port is up, whatever took it down.
    ForceUp,
    /// Every packet is lost with this probability (0 clears).
    Drop {
        /// Per-packet loss probability.
        probability: f64,
        /// Loss mode.
        loss: LossMode,
        /// Only data packets are affected.
        data_only: bool,
    },
    /// New bit rate; buffer and ECN thresholds scaled by `buffer_scale` (of the original).
    Rate {
        /// Bits per second.
        rate_bps: u64,
        /// Multiplier of the port's original buffer.
        buffer_scale: f64,
    },
    /// Back to the original rate and buffer.
    RestoreRate,
}

/// A primitive change at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Action {
    /// When.
    pub time: Time,
    /// Which egress port (link id).
    pub port: u32,
    /// What.
    pub kind: ActionKind,
}

/// Everything the simulation needs to apply a scenario's faults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// Primitive actions, sorted by time (stable).
    pub actions: Vec<Action>,
    /// Routing reconvergence delay (`None`: switches never update their ECMP groups).
    pub reconvergence: Option<Time>,
    /// A flow that hears no ACK or NACK for this long is given up (`None`: the larger of
    /// 100 x RTO and 10 ms).
    pub give_up_after: Option<Time>,
    /// Human-readable list of the elements chosen by random or imported faults.
    pub chosen: Vec<String>,
    /// Remarks (approximations, selections cut short by the connectivity rule).
    pub notes: Vec<String>,
}

impl FaultPlan {
    /// True when there is nothing to apply and routing never changes.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty() && self.reconvergence.is_none()
    }

    /// Sorts the actions by time (stable: same-time actions keep their order).
    pub fn sort(&mut self) {
        self.actions.sort_by_key(|a| a.time);
    }

    /// Checks a plan built in code against a network of `ports` links, as a scenario's
    /// `[[fault]]` entries are checked when they are expanded: every action names a link, a
    /// new rate is positive, a buffer scale positive and a loss probability in [0, 1].
    pub fn check(&self, ports: usize) -> Result<(), crate::error::ConfigError> {
        use crate::error::ConfigError;
        for (i, a) in self.actions.iter().enumerate() {
            let at = |what: &str| format!("fault action {i} ({what})");
            if a.port as usize >= ports {
                return Err(ConfigError::new(
                    at("port"),
                    format!("link {} does not exist ({ports} links)", a.port),
                ));
            }
            let checked = match a.kind {
                ActionKind::Rate {
                    rate_bps,
                    buffer_scale,
                } => check_rate(rate_bps).and_then(|()| check_buffer_scale(buffer_scale)),
                ActionKind::Drop { probability, .. } => check_probability(probability),
                _ => Ok(()),
            };
            checked.map_err(|e| ConfigError::new(at(&e.field), e.message))?;
        }
        Ok(())
    }
}

/// A fault's new bit rate must be positive (the `[[fault]]` expander and
/// [`FaultPlan::check`] share these checks; the error names the entry's key).
pub(crate) fn check_rate(rate_bps: u64) -> Result<(), FaultError> {
    if rate_bps == 0 {
        return Err(FaultError::new("speed", "must be positive"));
    }
    Ok(())
}

/// A fault's buffer scale must be finite and positive.
pub(crate) fn check_buffer_scale(scale: f64) -> Result<(), FaultError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(FaultError::new("buffer_scale", "must be positive"));
    }
    Ok(())
}

/// A loss probability must be in [0, 1].
pub(crate) fn check_probability(p: f64) -> Result<(), FaultError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(FaultError::new(
            "probability",
            format!("must be between 0 and 1, not {p}"),
        ));
    }
    Ok(())
}

/// The 32-host, 2-tier tree (8 ToRs x 4 hosts, 4 spines) the fault unit tests use.
#[cfg(test)]
pub(crate) fn test_topology() -> crate::net::Topology {
    crate::net::FatTreeSpec::uniform(2, 32, 4, 0, 1, 400_000_000_000, crate::engine::time::US, 0)
        .unwrap()
        .build()
        .unwrap()
}
