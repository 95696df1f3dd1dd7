//! EQDS-style receiver-driven credit: the "EQDS" lines of the REPS paper's Fig. 15 (right), as the
//! paper's reference simulator runs them when its sender-only flag is absent (htsim-reps spec,
//! section 6.7 "Receiver-driven mode" and 6.8; the UEC reference's RCCC, uet-htsim spec, sections
//! 9.1, 9.2 and 5.3).
//!
//! **Sender** ([`Eqds`]). A connection starts *speculating* with `initial_credit` (default: the
//! maximum credit, `max_credit_bdp` path BDPs) and sends while its credit is positive (a packet may
//! drive it negative); every packet spends its wire size. The first ACK, NACK or timeout ends
//! speculation and forfeits unused speculative credit (a positive credit drops to zero; a debt
//! stays). PULLs add credit (cumulative grants, so a lost or reordered PULL is made good by the
//! next), and the credit held never exceeds `max_credit_bdp` BDPs. The window is not enforced (the
//! reference's sender-side controller is off in this mode); it reads as the maximum credit for load
//! balancers that look at it.
//!
//! Each data packet (and RTS) carries a [`PullRequest`]: the pull *target* of the UEC reference
//! (what is left to send, new and queued for retransmission, capped at the maximum credit, minus
//! the credit held, plus the pulls received so far; while speculating, at least one MTU as long as
//! new data is left; rounded up to a multiple of `pull_quantum`) and the pull credit *used* (pulls
//! received minus the positive credit held).
//!
//! **Receiver** ([`PullPacers`]): one pull pacer per receiving host. A connection is *active* while
//! its grants are below its highest target and below its cap; active connections are served round
//! robin, one PULL each, of `pull_size` bytes at most (never beyond the target or the cap), and the
//! next PULL waits until the last one's bytes would have crossed the host's link at `pull_rate` of
//! its rate: with the defaults one 4,096-byte PULL every 82.75 ns at 400 Gb/s, as in the REPS
//! paper's reference. A trimmed header raises the target by one MTU (its retransmission needs
//! credit that no target announced yet); an RTS updates the target like data.
//!
//! **Slow pulls** (`slow_pulls`, on by default, as in htsim's EQDS and the UEC reference's pacer):
//! a connection whose target the pacer has met moves to the host's *idle* list. While no connection
//! is active, the pacer grants the head of that list a full PULL regardless of its target, and
//! keeps it idle while its target stays met and its slow credit (granted beyond the target) is
//! below its cap. A lone sender thus finds credit waiting instead of running dry and asking for
//! more with every packet. The pacer stops when nobody is active or idle. (The UEC reference lets
//! a connection sit in its idle list more than once and sends slow pulls that the sender's cap
//! discards; here a connection is listed once and slow pulls, like any PULL, keep the credit
//! invariant below.)
//!
//! **The credit invariant**: the pacer grants a connection only while `granted - used`, with the
//! highest `used` any of its packets reported, stays within the connection's cap (the maximum
//! credit). Reports lag, so the credit really outstanding (in PULLs on the way plus held by the
//! sender) is at most that: *a connection never has more unused credit granted than its maximum
//! credit*.
//!
//! **What the pacer does not do**: it admits 99 % of the link rate from the first request on, so
//! the queue that the speculative first windows of an incast build at the last hop (eight senders
//! with 1.5 BDP each overflow it much as MPRDMA's first windows do) drains only at the remaining 1
//! % (`pull_rate` sets it). After the first windows the last hop hardly loses a packet; with
//! `initial_credit = "1pkt"` the pacer alone admits traffic and an incast's last hop stays within a
//! few packets (`tests/eqds.rs`).
//!
//! **ECN at the last hop**: the reference leaves the switch queues towards hosts unmarked in
//! receiver-driven mode, so `ecn_at_last_hop` is false by default (the pacer, not the senders,
//! answers for that queue; marks there would only mislead ECN-driven load balancers such as REPS).
//! It is a run-wide switch: it applies when any traffic class uses `eqds` with it off, to every
//! flow.
//!
//! **Reference choices.** The paper says nothing beyond "EQDS"; the defaults follow the REPS
//! paper's reference (4,096 B per PULL, a speculative window of the maximum credit, speculation
//! ends on ACK, NACK or timeout). The UEC reference's variant is a parameter away: `pull_size =
//! "16KiB"`, `pull_ends_speculation = true` and `pull_quantum = "256B"` (its senders round their
//! targets up to 256-byte quanta, so a PULL grants a little more than a packet needs and the
//! credit rarely falls to zero, which is what sets a packet's ACK request).
//!
//! **Oversubscription control** (`oversubscribed`, off by default): the UEC reference's
//! receiver-side control of each host's pull rate on oversubscribed fabrics
//! ([`OversubscribedCc`]).
//!
//! **The UEC reference's pacer** (`pacer = "uet-htsim"`, [`PacerRule::UetHtsim`]; `repsim
//! htsim` sets it): uet-htsim's `UecPullPacer` bounds nothing but the credit beyond a
//! connection's target, lists a connection whenever its target advances, sends a PULL that
//! grants nothing (and holds the pacer for 1,024 bytes' time) when the advanced target is still
//! below the grants, keeps a connection in its idle list once per time it went idle, and goes on
//! serving those entries after the flow ends; a trimmed header lists the connection without
//! raising its target (its sink's retransmission backlog is never added to). Its PULL count
//! then matches the reference's (219,006 against 217,489 on `validate_uec_rcv` 11).
//!
//! Not modelled: the UEC reference's division of the target among a NIC's active senders, its
//! PCIe pull-rate control, running a sender window at the same time, the low host-queue priority of
//! speculative packets (hosts here serve their flows round robin), and a global maximum credit
//! (the UEC reference uses the last connection's; here each connection's own path BDP sets it). The
//! pacer's rate is the rate of the receiving host's link; a PULL takes the EV (and, for
//! source-routed flows, the reverse route) of the connection's latest packet, as ACKs do.
//!
//! **RTS.** In credit mode an RTS follows a timeout when the sender holds no credit, or when the
//! timed-out packet queues behind another retransmission, as in both references (at most one
//! per `[transport] rts_gap`, by default the RTO), since only a packet can tell the receiver
//! it needs more. A sender that holds no credit
//! and has nothing in flight sends no RTS, as in the UEC reference: every packet it sent, or its
//! trimmed header, reached the receiver, whose pacer has the demand (a NACKed packet's header
//! raised its target); `rts_while_starved = true` sends one every RTO while it waits. PULLs are
//! lost to queues only where the header lane has a budget (`[queue] header_limit`, the UEC
//! reference's); one lost is made good by the next, but if it was a connection's last and nothing of the connection is in flight, nothing
//! re-sends it (the reference has no timer for that either) and the flow stays unfinished.
use serde::{Deserialize, Serialize};

use super::credit::{CreditGate, PullRequest, ReceiverPacing};
use super::{AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::Time;
use crate::net::RunContext;
use crate::units::{Size, SizeQ};
use crate::ConfigError;

/// `cc = { algo = "eqds", ... }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EqdsConfig {
    /// Most credit a sender holds and most unused credit a receiver grants a connection, in
    /// bandwidth-delay products of its path.
    pub max_credit_bdp: f64,
    /// Speculative credit at start (default: the maximum credit, as the reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_credit: Option<SizeQ>,
    /// Credit one PULL grants at most (REPS paper's reference 4096 B; UEC reference 16 KiB).
    pub pull_size: SizeQ,
    /// PULL pacing rate, as a fraction of the receiving host's link rate.
    pub pull_rate: f64,
    /// The first PULL ends speculation too (UEC reference); by default only the first ACK,
    /// NACK or timeout does (REPS paper's reference).
    pub pull_ends_speculation: bool,
    /// ECN marking on switch ports facing hosts (the reference turns it off in this mode).
    pub ecn_at_last_hop: bool,
    /// A pacer with no active connection grants its idle ones full PULLs beyond their targets,
    /// up to the maximum credit each, so a sender that runs dry has credit waiting (as htsim's
    /// EQDS and the UEC reference do; `false` grants only what the targets ask for).
    pub slow_pulls: bool,
    /// A sender holding no credit, with data waiting and nothing in flight, sends an RTS every
    /// RTO until credit comes. Off, as in the UEC reference: with nothing in flight every packet
    /// or its trimmed header reached the receiver, whose pacer already has the demand.
    pub rts_while_starved: bool,
    /// Pull targets are rounded up to a multiple of this (the UEC reference counts credit in
    /// 256-byte quanta, so a sender is granted up to a quantum more than it asked for; default
    /// one byte: exact targets).
    pub pull_quantum: SizeQ,
    /// The UEC reference's receiver-side oversubscription control of each host's pull rate
    /// (absent: the pacers pull at `pull_rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscribed: Option<OversubscribedCc>,
    /// How a host's pacer decides what to grant ([`PacerRule`]).
    pub pacer: PacerRule,
}

/// How a host's pull pacer decides what to grant (`pacer = "bounded"` or `"uet-htsim"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PacerRule {
    /// The credit invariant holds (a connection's unused credit stays within its cap), a
    /// trimmed header raises the target by one MTU, and a connection is listed once.
    #[default]
    Bounded,
    /// uet-htsim's `UecPullPacer` as its code runs: a connection is listed active when its
    /// target advances (or a trimmed header or RTS arrives) and is served whatever its unused
    /// credit; a served connection whose target is met gets a PULL anyway (granting nothing,
    /// and holding the pacer for 1,024 bytes' time) and joins the idle list, where it may
    /// stand more than once; slow pulls grant a full PULL to the idle list's head; a trimmed
    /// header does not raise the target (the sender's next packet asks for the
    /// retransmission's credit).
    UetHtsim,
}

impl Default for EqdsConfig {
    fn default() -> Self {
        EqdsConfig {
            max_credit_bdp: 1.5,
            initial_credit: None,
            pull_size: SizeQ(Size::Bytes(4096)),
            pull_rate: 0.99,
            pull_ends_speculation: false,
            ecn_at_last_hop: false,
            slow_pulls: true,
            rts_while_starved: false,
            pull_quantum: SizeQ(Size::Bytes(1)),
            oversubscribed: None,
            pacer: PacerRule::Bounded,
        }
    }
}

impl EqdsConfig {
    /// The pull pacers of a run: one per host, at `pull_rate` of each host's link rate
    /// (`link_rates[h]`, the link into host h); with oversubscription control, each host draws
    /// its update times from its own stream of `seed`.
    pub fn pacers(&self, link_rates: &[u64], mtu: u32, seed: u64) -> PullPacers {
        let mut pacers = PullPacers::new(
            link_rates,
            self.pull_size.0.bytes(mtu),
            self.pull_rate,
            mtu,
            self.slow_pulls,
        );
        pacers.follow(self.pacer, self.pull_quantum.0.bytes(mtu));
        if let Some(o) = &self.oversubscribed {
            pacers.control_oversubscription(o, seed);
        }
        pacers
    }
}

impl CcScheme for EqdsConfig {
    /// Every host paces PULLs ([`EqdsConfig::pacers`]).
    fn receiver_pacing(
        &self,
        link_rates: &[u64],
        mtu: u32,
        seed: u64,
    ) -> Option<Box<dyn ReceiverPacing>> {
        Some(Box::new(self.pacers(link_rates, mtu, seed)))
    }

    /// Unless `ecn_at_last_hop`: the receiver's pacing, not ECN, handles incast.
    fn no_ecn_at_last_hop(&self) -> bool {
        !self.ecn_at_last_hop
    }

    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        let max_credit = ((p.bdp as f64 * self.max_credit_bdp) as u64).max(p.mtu as u64);
        let mut cc = Eqds::new(max_credit, p.mtu, self.pull_ends_speculation);
        cc.rts_while_starved = self.rts_while_starved;
        cc.quantum = self.pull_quantum.0.bytes(p.mtu).max(1);
        if let Some(c) = self.initial_credit {
            cc.credit = c.0.bytes(p.mtu).min(max_credit) as i64;
        }
        Box::new(cc)
    }

    /// Checks the parameters.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError> {
        if !(self.max_credit_bdp.is_finite() && self.max_credit_bdp > 0.0) {
            return Err(ConfigError::new("max_credit_bdp", "must be positive"));
        }
        if self.initial_credit.is_some_and(|c| c.0.bytes(ctx.mtu) == 0) {
            return Err(ConfigError::new(
                "initial_credit",
                "must be positive (a first packet asks for credit)",
            ));
        }
        let pull = self.pull_size.0.bytes(ctx.mtu);
        if pull == 0 || pull > 1 << 30 {
            return Err(ConfigError::new(
                "pull_size",
                "must be between 1 byte and 1 GiB",
            ));
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err(ConfigError::new("pull_rate", "must be in (0, 1]"));
        }
        let quantum = self.pull_quantum.0.bytes(ctx.mtu);
        if quantum == 0 || quantum > pull {
            return Err(ConfigError::new(
                "pull_quantum",
                "must be between 1 byte and the pull size",
            ));
        }
        if let Some(o) = &self.oversubscribed {
            o.validate()?;
        }
        Ok(())
    }
}

/// Credit state of one sending connection.
#[derive(Debug)]
pub struct Eqds {
    /// Bytes that may still be sent (negative: a debt the next PULLs pay first).
    credit: i64,
    /// Cumulative bytes the receiver granted, as far as PULLs arrived.
    pulled: u64,
    /// No ACK, NACK or timeout (nor, optionally, PULL) yet: the credit is speculative.
    speculating: bool,
    max_credit: u64,
    mtu: u64,
    pull_ends_speculation: bool,
    rts_while_starved: bool,
    /// Pull targets are rounded up to a multiple of this many bytes.
    quantum: u64,
}

impl Eqds {
    /// A sender with `max_credit` bytes of speculative credit, also its credit cap.
    pub fn new(max_credit: u64, mtu: u32, pull_ends_speculation: bool) -> Self {
        Eqds {
            credit: max_credit as i64,
            pulled: 0,
            speculating: true,
            max_credit,
            mtu: mtu as u64,
            pull_ends_speculation,
            rts_while_starved: false,
            quantum: 1,
        }
    }

    /// Still sending on speculative credit.
    pub fn speculating(&self) -> bool {
        self.speculating
    }

    /// Feedback arrived: unused speculative credit is lost.
    fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }
}

impl CongestionControl for Eqds {
    fn cwnd(&self) -> u64 {
        self.max_credit
    }

    fn on_ack(&mut self, _ack: &AckSample) {
        self.stop_speculating();
    }

    fn on_nack(&mut self, _size: u64, _now: Time) {
        self.stop_speculating();
    }

    fn on_timeout(&mut self, _size: u64, _now: Time) {
        self.stop_speculating();
    }

    /// Sending is gated by credit.
    fn credit_gate(&self) -> Option<&dyn CreditGate> {
        Some(self)
    }

    fn credit_gate_mut(&mut self) -> Option<&mut dyn CreditGate> {
        Some(self)
    }
}

impl CreditGate for Eqds {
    fn credit(&self) -> i64 {
        self.credit
    }

    fn credit_cap(&self) -> u64 {
        self.max_credit
    }

    fn on_send(&mut self, wire: u64) {
        self.credit -= wire as i64;
    }

    fn on_pull(&mut self, pulled: u64, _now: Time) {
        if self.pull_ends_speculation {
            self.stop_speculating();
        }
        if pulled <= self.pulled {
            return;
        }
        let new = (pulled - self.pulled) as i64;
        self.pulled = pulled;
        self.credit = (self.credit + new).min(self.max_credit as i64);
    }

    fn pull_request(&self, backlog: u64) -> PullRequest {
        let mut want = backlog.min(self.max_credit) as i64 - self.credit;
        if self.speculating && backlog > 0 && want < self.mtu as i64 {
            want = self.mtu as i64;
        }
        PullRequest {
            target: ((self.pulled as i64 + want).max(0) as u64).next_multiple_of(self.quantum),
            used: self.pulled.saturating_sub(self.credit.max(0) as u64),
        }
    }

    fn rts_while_starved(&self) -> bool {
        self.rts_while_starved
    }
}

mod oversubscribed;
mod pacer;
#[cfg(test)]
mod tests;

pub use oversubscribed::OversubscribedCc;
pub use pacer::PullPacers;
