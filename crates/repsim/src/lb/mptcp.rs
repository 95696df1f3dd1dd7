//! MPTCP-like spraying over `subflows` fixed paths: packet by packet, the EV cycles through
//! `(flow_index mod evs_size + j) mod evs_size` for j = 0, 1, ..., k - 1. Behaviour source:
//! `htsim-reps.md` section 7.9 (the REPS artifact's `mp`, run with `-mp_flows 8`).
//!
//! The k subflows share the connection's one congestion window: a connection has one sender and
//! one congestion control, and this load balancer only labels each packet the window lets out
//! with the next subflow's EV. There is no per-subflow window, feedback or state (ACKs, NACKs
//! and timeouts are ignored), so a congested subflow slows every subflow equally; this is how
//! the reference runs it, unlike real MPTCP with its coupled per-subflow windows.
use serde::{Deserialize, Serialize};

use super::{check_evs_override, LbContext, LbScheme, LoadBalancer, PathChoice};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// `lb = { scheme = "mptcp", subflows = 8 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MptcpConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// Subflows (consecutive EVs) each connection sprays over, round robin.
    pub subflows: u32,
}

impl Default for MptcpConfig {
    fn default() -> Self {
        MptcpConfig {
            evs_size: None,
            subflows: 8,
        }
    }
}

impl LbScheme for MptcpConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(Mptcp::new(self, ctx))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)?;
        if self.subflows == 0 || self.subflows > 65536 {
            return Err(ConfigError::new(
                "subflows",
                format!("must be in 1..=65536, not {}", self.subflows),
            ));
        }
        Ok(())
    }
}

/// One connection's subflow cycle.
#[derive(Clone)]
pub struct Mptcp {
    evs_size: u32,
    /// EV of subflow 0.
    base: u32,
    subflows: u32,
    /// Subflow of the next packet.
    next: u32,
}

impl Mptcp {
    /// A connection's cycle, starting with subflow 0.
    pub fn new(config: &MptcpConfig, ctx: &LbContext) -> Self {
        let evs_size = ctx.evs(config.evs_size);
        Mptcp {
            evs_size,
            base: ctx.flow_index % evs_size,
            subflows: config.subflows,
            next: 0,
        }
    }
}

impl LoadBalancer for Mptcp {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        let j = self.next;
        self.next = (self.next + 1) % self.subflows;
        PathChoice::ev(((self.base as u64 + j as u64) % self.evs_size as u64) as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::{AckFeedback, LbEvent};

    fn mptcp(flow_index: u32, subflows: u32, evs_size: Option<u32>) -> Mptcp {
        Mptcp::new(
            &MptcpConfig { evs_size, subflows },
            &LbContext {
                flow_index,
                ..LbContext::example()
            },
        )
    }

    fn evs(lb: &mut Mptcp, n: usize) -> Vec<u16> {
        let mut rng = Rng::new(0);
        (0..n).map(|i| lb.next(i as Time, &mut rng).ev).collect()
    }

    #[test]
    fn cycles_through_exactly_k_consecutive_evs_and_back() {
        let mut lb = mptcp(3, 8, None);
        let seq = evs(&mut lb, 24);
        assert_eq!(&seq[..8], &[3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(&seq[8..16], &seq[..8], "back to subflow 0");
        assert_eq!(&seq[16..], &seq[..8]);
        let mut distinct = seq.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "exactly k EVs");
    }

    #[test]
    fn wraps_around_the_ev_space() {
        let mut lb = mptcp(8, 4, Some(10));
        assert_eq!(evs(&mut lb, 6), [8, 9, 0, 1, 8, 9]);
        let mut lb = mptcp(65_535 + 3, 2, None);
        assert_eq!(evs(&mut lb, 3), [2, 3, 2], "flow_index mod 65,536");
        let mut lb = mptcp(5, 1, None);
        assert_eq!(evs(&mut lb, 3), [5, 5, 5], "one subflow is ECMP");
    }

    #[test]
    fn subflows_share_one_window_so_feedback_changes_nothing() {
        // No per-subflow state: the connection's one window decides how many packets go, this
        // only labels them. Marks, NACKs and timeouts on one subflow do not divert the cycle.
        let mut lb = mptcp(0, 4, None);
        let mut rng = Rng::new(0);
        let mut seq = Vec::new();
        for i in 0..12u16 {
            let ev = lb.next(i as Time, &mut rng).ev;
            seq.push(ev);
            let marked = AckFeedback {
                ecn: true,
                ..AckFeedback::example(ev, i as Time)
            };
            assert_eq!(lb.on_ack(&marked), None::<LbEvent>);
            assert_eq!(lb.on_nack(ev, i as Time), None);
            assert_eq!(lb.on_timeout(ev, i as Time), None);
        }
        assert_eq!(seq, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn validate_and_parse() {
        assert_eq!(MptcpConfig::default().subflows, 8);
        let c: MptcpConfig = toml::from_str("subflows = 4").unwrap();
        assert_eq!(c.subflows, 4);
        assert!(MptcpConfig {
            subflows: 0,
            ..MptcpConfig::default()
        }
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("subflows:"));
        assert!(toml::from_str::<MptcpConfig>("flows = 4").is_err());
    }
}
