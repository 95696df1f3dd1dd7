//! MP-RDMA-style ACK-clocked path selection: the packets an ACK releases reuse that ACK's EV.
//! Behaviour source: `htsim-reps.md` section 7.8 (the REPS artifact's `mprdma` load balancer;
//! the congestion control of the same name is `cc/mprdma.rs`).
//!
//! After each ACK's congestion-control update the sender can send when the window grew by more
//! than a packet (`cwnd - cwnd_before > MTU - 66`) or has room for one
//! (`cwnd > in_flight + MTU - 66`), 66 bytes being the reference's header allowance
//! ([`HEADER_ALLOWANCE`]). If it can, the ACK's EV is remembered. Each packet then takes the
//! remembered EV while the last ACK said the sender can send, and a random EV otherwise or
//! before any EV was remembered. Paths whose ACKs carry ECN marks shrink the window and so
//! stop clocking packets onto themselves; a marked ACK that still leaves room does recycle its
//! EV, as in the reference.
//!
//! NACKs and timeouts do not recompute whether the sender can send. **Paper versus reference:**
//! in the reference a NACK that arrives while the last ACK's verdict is still "can send"
//! overwrites the remembered EV with the NACK's, i.e. the path on which the packet was just
//! trimmed, which goes against ACK clocking; by default (`nack_overwrites = false`) a NACK
//! leaves the remembered EV alone, and `nack_overwrites = true` reproduces the reference.
//!
//! **Timeouts.** As in the reference, a timeout leaves the last ACK's verdict standing by
//! default, so when the remembered path fails after its last ACK (a failure starting mid-flow)
//! and no ACK comes back, every retransmission takes that dead path again and the connection
//! stalls. `random_after_timeout = true` makes a timeout clear the verdict instead: what is
//! sent before the next ACK that leaves room (the retransmission first) takes random EVs, as a
//! packet no ACK released would under strict ACK clocking.
use serde::{Deserialize, Serialize};

use super::{
    check_evs_override, random_ev, AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer,
    PathChoice,
};
use crate::engine::{Rng, Time};
use crate::net::RunContext;
use crate::ConfigError;

/// Bytes the reference subtracts from the MTU when it asks whether a window has room for
/// another packet (its header constant).
pub const HEADER_ALLOWANCE: i64 = 66;

/// `lb = { scheme = "mprdma", nack_overwrites = false }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MprdmaLbConfig {
    /// Number of entropy values (EVs are `0..evs_size`); absent: `[transport] evs_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evs_size: Option<u32>,
    /// A NACK arriving while the sender can send replaces the remembered EV (the reference).
    pub nack_overwrites: bool,
    /// A timeout clears the last ACK's verdict, so packets go random until the next ACK.
    pub random_after_timeout: bool,
}

impl LbScheme for MprdmaLbConfig {
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(MprdmaLb::new(self, ctx))
    }

    /// Checks the parameters.
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        check_evs_override(self.evs_size)
    }
}

/// One connection's ACK-clocking state.
#[derive(Clone)]
pub struct MprdmaLb {
    evs_size: u32,
    /// Room a window needs for one more packet: MTU minus the header allowance.
    room: i64,
    nack_overwrites: bool,
    random_after_timeout: bool,
    /// EV of the last ACK that let the sender send.
    ack_ev: Option<u16>,
    /// The last ACK's verdict.
    can_send: bool,
}

impl MprdmaLb {
    /// A connection's state before any ACK.
    pub fn new(config: &MprdmaLbConfig, ctx: &LbContext) -> Self {
        MprdmaLb {
            evs_size: ctx.evs(config.evs_size),
            room: ctx.mtu as i64 - HEADER_ALLOWANCE,
            nack_overwrites: config.nack_overwrites,
            random_after_timeout: config.random_after_timeout,
            ack_ev: None,
            can_send: false,
        }
    }
}

impl LoadBalancer for MprdmaLb {
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(self.clone()))
    }

    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        match self.ack_ev {
            Some(ev) if self.can_send => PathChoice::ev(ev),
            _ => PathChoice::ev(random_ev(rng, self.evs_size)),
        }
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        let (before, after) = (ack.cwnd_before as i128, ack.cwnd as i128);
        let room = self.room as i128;
        self.can_send = after - before > room || after > ack.in_flight as i128 + room;
        if self.can_send {
            self.ack_ev = Some(ack.ev);
        }
        None
    }

    fn on_nack(&mut self, ev: u16, _now: Time) -> Option<LbEvent> {
        if self.nack_overwrites && self.can_send {
            self.ack_ev = Some(ev);
        }
        None
    }

    fn on_timeout(&mut self, _ev: u16, _now: Time) -> Option<LbEvent> {
        if self.random_after_timeout {
            self.can_send = false;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 4150;
    /// MTU - 66.
    const ROOM: u64 = 4084;

    fn lb(nack_overwrites: bool) -> MprdmaLb {
        MprdmaLb::new(
            &MprdmaLbConfig {
                nack_overwrites,
                ..MprdmaLbConfig::default()
            },
            &LbContext::example(),
        )
    }

    /// An ACK echoing `ev` that leaves the window at `cwnd` (from `before`) with `in_flight`.
    fn ack(lb: &mut MprdmaLb, ev: u16, before: u64, cwnd: u64, in_flight: i64) {
        let out = lb.on_ack(&AckFeedback {
            cwnd_before: before,
            cwnd,
            in_flight,
            ..AckFeedback::example(ev, 1)
        });
        assert_eq!(out, None);
    }

    #[test]
    fn random_before_the_first_remembered_ack() {
        let mut rng = Rng::new(2);
        let mut lb = lb(false);
        let evs: Vec<u16> = (0..16).map(|i| lb.next(i, &mut rng).ev).collect();
        assert!(evs.windows(2).any(|w| w[0] != w[1]), "{evs:?}");
        // An ACK that leaves no room remembers nothing.
        let w = 100 * MTU;
        ack(&mut lb, 77, w, w, w as i64);
        assert_eq!(lb.ack_ev, None);
        assert_ne!(lb.next(20, &mut rng).ev, lb.next(21, &mut rng).ev);
    }

    #[test]
    fn can_send_rule_at_its_boundaries() {
        let w = 100 * MTU;
        // (cwnd_before, cwnd, in_flight, can_send)
        let cases: [(u64, u64, i64, bool); 8] = [
            // Room in the window: strictly more than MTU - 66 bytes.
            (w, w, (w - ROOM) as i64 - 1, true),
            (w, w, (w - ROOM) as i64, false),
            (w, w, (w - MTU) as i64, true),
            // Growth by more than MTU - 66 bytes, window full.
            (w, w + ROOM + 1, (w + ROOM + 1) as i64, true),
            (w, w + ROOM, (w + ROOM) as i64, false),
            // A shrinking window (marked ACK) with no room.
            (w, w - 1037, w as i64, false),
            // ... or with room left.
            (w, w - 1037, (w - 1037 - ROOM) as i64 - 1, true),
            // More in flight than the window (negative room).
            (MTU, MTU, 3 * MTU as i64, false),
        ];
        for (i, &(before, cwnd, in_flight, expect)) in cases.iter().enumerate() {
            let mut lb = lb(false);
            ack(&mut lb, 40 + i as u16, before, cwnd, in_flight);
            assert_eq!(lb.can_send, expect, "case {i}");
            assert_eq!(lb.ack_ev, expect.then_some(40 + i as u16), "case {i}");
        }
    }

    #[test]
    fn reuses_the_acks_ev_only_while_it_can_send() {
        let mut rng = Rng::new(4);
        let mut lb = lb(false);
        let w = 100 * MTU;
        ack(&mut lb, 11, w, w, (w - 2 * MTU) as i64);
        assert_eq!(lb.next(1, &mut rng).ev, 11);
        assert_eq!(
            lb.next(2, &mut rng).ev,
            11,
            "every packet this ACK released"
        );
        // The next ACK leaves no room: the remembered EV stays, but packets go random.
        ack(&mut lb, 12, w, w, w as i64);
        assert_eq!(lb.ack_ev, Some(11));
        let a = lb.next(3, &mut rng).ev;
        let b = lb.next(4, &mut rng).ev;
        assert!(a != 11 && b != 11 && a != b, "random: {a} {b}");
        // Room again: the new ACK's EV.
        ack(&mut lb, 13, w, w + MTU, w as i64);
        assert_eq!(lb.next(5, &mut rng).ev, 13);
    }

    #[test]
    fn nack_keeps_the_remembered_ev_by_default() {
        let mut rng = Rng::new(4);
        let w = 100 * MTU;
        let mut paper = lb(false);
        ack(&mut paper, 21, w, w, 0);
        assert_eq!(paper.on_nack(99, 2), None);
        assert_eq!(paper.next(3, &mut rng).ev, 21);
        assert_eq!(paper.on_timeout(21, 4), None);
        assert_eq!(paper.next(5, &mut rng).ev, 21, "timeouts change nothing");
    }

    #[test]
    fn reference_nack_overwrites_only_while_it_can_send() {
        let mut rng = Rng::new(4);
        let w = 100 * MTU;
        let mut reference = lb(true);
        ack(&mut reference, 21, w, w, 0);
        assert_eq!(reference.on_nack(99, 2), None);
        assert_eq!(
            reference.next(3, &mut rng).ev,
            99,
            "the trimmed packet's EV"
        );
        // While the last ACK said "no room", a NACK changes nothing.
        ack(&mut reference, 22, w, w, w as i64);
        reference.on_nack(98, 4);
        assert_eq!(reference.ack_ev, Some(99));
        // Before any ACK, neither.
        let mut fresh = lb(true);
        fresh.on_nack(97, 1);
        assert_eq!(fresh.ack_ev, None);
    }

    #[test]
    fn random_after_timeout_until_the_next_ack() {
        let mut rng = Rng::new(4);
        let w = 100 * MTU;
        let mut lb = MprdmaLb::new(
            &MprdmaLbConfig {
                random_after_timeout: true,
                ..MprdmaLbConfig::default()
            },
            &LbContext::example(),
        );
        ack(&mut lb, 21, w, w, 0);
        assert_eq!(lb.on_timeout(21, 2), None);
        let a = lb.next(3, &mut rng).ev;
        let b = lb.next(4, &mut rng).ev;
        assert!(a != 21 && b != 21 && a != b, "random: {a} {b}");
        ack(&mut lb, 22, w, w, 0);
        assert_eq!(lb.next(5, &mut rng).ev, 22, "ACK clocking resumes");
    }

    #[test]
    fn parses() {
        let c: MprdmaLbConfig = toml::from_str("nack_overwrites = true").unwrap();
        assert!(c.nack_overwrites);
        assert!(!MprdmaLbConfig::default().nack_overwrites);
        assert!(toml::from_str::<MprdmaLbConfig>("nack = true").is_err());
        assert!(MprdmaLbConfig {
            evs_size: Some(70_000),
            ..MprdmaLbConfig::default()
        }
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("evs_size:"));
    }
}
