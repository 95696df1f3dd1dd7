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
//! Not modelled: the UEC reference's division of the target among a NIC's active senders, its
//! PCIe pull-rate control, running a sender window at the same time, the low host-queue priority of
//! speculative packets (hosts here serve their flows round robin), and a global maximum credit
//! (the UEC reference uses the last connection's; here each connection's own path BDP sets it). The
//! pacer's rate is the rate of the receiving host's link; a PULL takes the EV (and, for
//! source-routed flows, the reverse route) of the connection's latest packet, as ACKs do.
//!
//! **RTS.** In credit mode an RTS follows a timeout when the sender holds no credit (at most one
//! per RTO), since only a packet can tell the receiver it needs more. A sender that holds no credit
//! and has nothing in flight sends no RTS, as in the UEC reference: every packet it sent, or its
//! trimmed header, reached the receiver, whose pacer has the demand (a NACKed packet's header
//! raised its target); `rts_while_starved = true` sends one every RTO while it waits. PULLs are
//! lost to queues only where the header lane has a budget (`[queue] header_limit`, the UEC
//! reference's); one lost is made good by the next, but if it was a connection's last and nothing of the connection is in flight, nothing
//! re-sends it (the reference has no timer for that either) and the flow stays unfinished.
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::credit::{CreditGate, Grant, PacerStep, PullArrival, PullRequest, ReceiverPacing};
use super::{widen, AckSample, CcParams, CcScheme, CongestionControl};
use crate::engine::rng::Stream;
use crate::engine::time::serialization;
use crate::engine::{Rng, Time};
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

/// One receiving connection as its host's pacer sees it (bytes counted from its start).
#[derive(Clone, Copy, Debug)]
struct Sink {
    /// Registered as credit paced.
    paced: bool,
    host: u32,
    /// Most granted-but-unused credit (0: finished).
    cap: u64,
    granted: u64,
    /// Highest pull target seen, plus one MTU per trimmed header.
    target: u64,
    /// Highest pull credit used that a packet reported.
    used: u64,
    /// In its host's active list.
    listed: bool,
    /// In its host's idle list (slow pulls).
    idle: bool,
    ev: u16,
    route: u32,
}

impl Sink {
    const NONE: Sink = Sink {
        paced: false,
        host: 0,
        cap: 0,
        granted: 0,
        target: 0,
        used: 0,
        listed: false,
        idle: false,
        ev: 0,
        route: u32::MAX,
    };

    /// Bytes the next PULL may grant (0: inactive).
    #[inline]
    fn grantable(&self, pull: u64) -> u64 {
        let unused = self.granted - self.used;
        pull.min(self.target.saturating_sub(self.granted))
            .min(self.cap.saturating_sub(unused))
    }

    /// Bytes a slow pull may grant: a full PULL whatever the target, within the cap.
    #[inline]
    fn slow_grantable(&self, pull: u64) -> u64 {
        pull.min(self.cap.saturating_sub(self.granted - self.used))
    }

    /// Its target is met and its slow credit (granted beyond the target) is below its cap:
    /// it belongs in the idle list.
    #[inline]
    fn idles(&self) -> bool {
        self.cap > 0 && self.target <= self.granted && self.granted - self.target < self.cap
    }
}

/// One receiving host's pacer.
#[derive(Debug)]
struct HostPacer {
    /// Active connections, served round robin.
    active: VecDeque<u32>,
    /// Connections whose targets are met, granted slow pulls round robin while no connection
    /// is active.
    idle: VecDeque<u32>,
    /// Pull rate in bits per second.
    rate: u64,
    /// No PULL before this time.
    next_free: Time,
    /// A wake-up is scheduled.
    armed: bool,
    /// Oversubscription control of `rate`, if on.
    control: Option<RateControl>,
}

/// The pull pacers of every receiving host (sans-IO: the simulation feeds them arrivals and
/// wake-ups and sends the PULLs they grant).
#[derive(Debug)]
pub struct PullPacers {
    hosts: Vec<HostPacer>,
    /// Per flow index.
    sinks: Vec<Sink>,
    pull: u64,
    mtu: u64,
    slow_pulls: bool,
    /// Oversubscription control's parameters, if it is on (each host's state is its pacer's).
    control: Option<OversubscribedCc>,
}

impl PullPacers {
    /// Pacers for hosts whose links run at `link_rates`, pacing at `fraction` of them, each
    /// PULL granting `pull` bytes at most; with `slow_pulls`, idle connections get PULLs
    /// while no connection is active.
    pub fn new(link_rates: &[u64], pull: u64, fraction: f64, mtu: u32, slow_pulls: bool) -> Self {
        PullPacers {
            hosts: link_rates
                .iter()
                .map(|&r| HostPacer {
                    active: VecDeque::new(),
                    idle: VecDeque::new(),
                    rate: ((r as f64 * fraction) as u64).max(1),
                    next_free: 0,
                    armed: false,
                    control: None,
                })
                .collect(),
            sinks: Vec::new(),
            pull: pull.max(1),
            mtu: mtu as u64,
            slow_pulls,
            control: None,
        }
    }

    /// Turns on oversubscription control with `params`, each host drawing its update times
    /// from its own stream of `seed`.
    pub fn control_oversubscription(&mut self, params: &OversubscribedCc, seed: u64) {
        for (h, hp) in self.hosts.iter_mut().enumerate() {
            let rng = Rng::derive(seed, Stream::Pacer, h as u64);
            hp.control = Some(RateControl::new(hp.rate, params, rng));
        }
        self.control = Some(params.clone());
    }

    /// Host `host`'s pacer acts at `now`: its rate control, if on, applies the updates due.
    #[inline]
    fn catch_up(&mut self, host: u32, now: Time) {
        if let (Some(params), Some(c)) = (
            self.control.as_ref(),
            self.hosts[host as usize].control.as_mut(),
        ) {
            self.hosts[host as usize].rate = c.catch_up(now, params);
        }
    }
}

impl ReceiverPacing for PullPacers {
    /// Connection `flow`, received by `host`, is credit paced with at most `cap` bytes of
    /// unused credit granted at once.
    fn add_sink(&mut self, flow: u32, host: u32, cap: u64) {
        let i = flow as usize;
        if self.sinks.len() <= i {
            self.sinks.resize(i + 1, Sink::NONE);
        }
        self.sinks[i] = Sink {
            paced: true,
            host,
            cap,
            ..Sink::NONE
        };
    }

    /// Connection `flow` is over: it gets no more PULLs.
    fn remove_sink(&mut self, flow: u32) {
        if let Some(s) = self.sinks.get_mut(flow as usize) {
            s.cap = 0;
        }
    }

    /// A packet of a credit-paced connection arrived at `now`. Returns when to wake its host's
    /// pacer if it must be woken and is not already.
    fn on_arrival(&mut self, now: Time, a: &PullArrival) -> Option<Time> {
        let pull = self.pull;
        if self.control.is_some() {
            if let Some(s) = self.sinks.get(a.flow as usize).filter(|s| s.paced) {
                let host = s.host;
                self.catch_up(host, now);
                if let Some(c) = self.hosts[host as usize].control.as_mut() {
                    c.count(a);
                }
            }
        }
        let s = self.sinks.get_mut(a.flow as usize)?;
        if s.cap == 0 {
            return None;
        }
        s.target = s.target.max(widen(a.target, s.granted));
        // Used credit was granted first: a report above the grants is not believed.
        s.used = s.used.max(widen(a.used, s.granted).min(s.granted));
        if a.trimmed {
            s.target += self.mtu;
        }
        s.ev = a.ev;
        s.route = a.route;
        if s.listed {
            return None;
        }
        let host = &mut self.hosts[s.host as usize];
        if s.grantable(pull) > 0 {
            s.listed = true;
            host.active.push_back(a.flow);
        } else if self.slow_pulls && !s.idle && s.idles() && s.slow_grantable(pull) > 0 {
            s.idle = true;
            host.idle.push_back(a.flow);
        } else {
            return None;
        }
        if host.armed {
            return None;
        }
        host.armed = true;
        Some(host.next_free.max(now))
    }

    /// Host `host`'s pacer wakes at `now`: the next active connection gets a PULL, or, if
    /// none is active and slow pulls are on, the next idle one.
    fn on_timer(&mut self, host: u32, now: Time) -> PacerStep {
        let pull = self.pull;
        let slow_pulls = self.slow_pulls;
        self.catch_up(host, now);
        let hp = &mut self.hosts[host as usize];
        hp.armed = false;
        let mut grant = None;
        while let Some(f) = hp.active.pop_front() {
            let s = &mut self.sinks[f as usize];
            s.listed = false;
            let bytes = s.grantable(pull);
            if bytes > 0 {
                s.granted += bytes;
                grant = Some((f, bytes));
                if s.grantable(pull) > 0 {
                    s.listed = true;
                    hp.active.push_back(f);
                }
            }
            // Demand met: idle, for slow pulls.
            if slow_pulls && !s.listed && !s.idle && s.idles() {
                s.idle = true;
                hp.idle.push_back(f);
            }
            if grant.is_some() {
                break;
            }
        }
        if grant.is_none() {
            while let Some(f) = hp.idle.pop_front() {
                let s = &mut self.sinks[f as usize];
                s.idle = false;
                let bytes = s.slow_grantable(pull);
                if s.listed || !s.idles() || bytes == 0 {
                    continue;
                }
                s.granted += bytes;
                grant = Some((f, bytes));
                if s.idles() {
                    s.idle = true;
                    hp.idle.push_back(f);
                }
                break;
            }
        }
        let Some((f, bytes)) = grant else {
            return PacerStep {
                grant: None,
                rearm: None,
            };
        };
        let s = &self.sinks[f as usize];
        hp.next_free = now + serialization(bytes as u32, hp.rate);
        let rearm = (!hp.active.is_empty() || !hp.idle.is_empty()).then(|| {
            hp.armed = true;
            hp.next_free
        });
        PacerStep {
            grant: Some(Grant {
                flow: f,
                bytes,
                granted: s.granted,
                ev: s.ev,
                route: s.route,
            }),
            rearm,
        }
    }

    /// Cumulative bytes granted to connection `flow`, if it is credit paced.
    fn granted(&self, flow: u32) -> Option<u64> {
        self.sinks
            .get(flow as usize)
            .filter(|s| s.paced)
            .map(|s| s.granted)
    }

    /// Granted minus the highest used credit reported: what the pacer counts as outstanding
    /// for connection `flow` (never above its cap).
    fn outstanding(&self, flow: u32) -> u64 {
        self.sinks
            .get(flow as usize)
            .map_or(0, |s| s.granted - s.used)
    }
}

mod oversubscribed;
#[cfg(test)]
mod tests;

pub use oversubscribed::OversubscribedCc;
use oversubscribed::RateControl;
