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
//! new data is left) and the pull credit *used* (pulls received minus the positive credit held).
//!
//! **Receiver** ([`PullPacers`]): one pull pacer per receiving host. A connection is *active* while
//! its grants are below its highest target and below its cap; active connections are served round
//! robin, one PULL each, of `pull_size` bytes at most (never beyond the target or the cap), and the
//! next PULL waits until the last one's bytes would have crossed the host's link at `pull_rate` of
//! its rate: with the defaults one 4,096-byte PULL every 82.75 ns at 400 Gb/s, as in the REPS
//! paper's reference. A trimmed header raises the target by one MTU (its retransmission needs
//! credit that no target announced yet); an RTS updates the target like data. The pacer stops when
//! nobody is active.
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
//! "16KiB"` and `pull_ends_speculation = true`. Not modelled: the UEC reference's "slow pulls" to
//! idle senders, its division of the target among a NIC's active senders, its oversubscription and
//! PCIe pull-rate controls, running a sender window at the same time, the low host-queue priority
//! of speculative packets (hosts here serve their flows round robin), and a global maximum credit
//! (the UEC reference uses the last connection's; here each connection's own path BDP sets it). The
//! pacer's rate is the rate of the receiving host's link; a PULL takes the EV (and, for
//! source-routed flows, the reverse route) of the connection's latest packet, as ACKs do. In credit
//! mode an RTS follows a timeout when the sender holds no credit (at most one per RTO), since only
//! a packet can tell the receiver it needs more. PULLs are never lost to queues (they travel in the
//! header lane); one lost to a fault is made good by the next, but if it was a connection's last
//! and nothing of the connection is in flight, nothing re-sends it (the reference has no timer for
//! that either) and the flow stays unfinished.
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{widen, AckSample, CcParams, CongestionControl, PullRequest};
use crate::engine::time::serialization;
use crate::engine::Time;
use crate::units::{Size, SizeQ};

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
        }
    }
}

impl EqdsConfig {
    /// A controller for one connection.
    pub fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        let max_credit = ((p.bdp as f64 * self.max_credit_bdp) as u64).max(p.mtu as u64);
        let mut cc = Eqds::new(max_credit, p.mtu, self.pull_ends_speculation);
        if let Some(c) = self.initial_credit {
            cc.credit = c.0.bytes(p.mtu).min(max_credit) as i64;
        }
        Box::new(cc)
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.max_credit_bdp.is_finite() && self.max_credit_bdp > 0.0) {
            return Err("max_credit_bdp: must be positive".into());
        }
        if self.initial_credit.is_some_and(|c| c.0.bytes(4150) == 0) {
            return Err("initial_credit: must be positive (a first packet asks for credit)".into());
        }
        let pull = self.pull_size.0.bytes(4150);
        if pull == 0 || pull > 1 << 30 {
            return Err("pull_size: must be between 1 byte and 1 GiB".into());
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err("pull_rate: must be in (0, 1]".into());
        }
        Ok(())
    }

    /// The pull pacers of a run: one per host, at `pull_rate` of each host's link rate
    /// (`link_rates[h]`, the link into host h).
    pub fn pacers(&self, link_rates: &[u64], mtu: u32) -> PullPacers {
        PullPacers::new(link_rates, self.pull_size.0.bytes(mtu), self.pull_rate, mtu)
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

    fn credit_gated(&self) -> bool {
        true
    }

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
            target: (self.pulled as i64 + want).max(0) as u64,
            used: self.pulled.saturating_sub(self.credit.max(0) as u64),
        }
    }
}

/// A data packet, trimmed header or RTS of a credit-paced connection at its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullArrival {
    /// The connection (flow index).
    pub flow: u32,
    /// Its pull target, as carried (low 32 bits).
    pub target: u32,
    /// Its pull credit used, as carried (low 32 bits).
    pub used: u32,
    /// Only the header arrived: its retransmission needs credit.
    pub trimmed: bool,
    /// Its EV (the PULLs that follow take it).
    pub ev: u16,
    /// Its explicit route, if any (the PULLs that follow take the reverse).
    pub route: u32,
}

/// A PULL the pacer sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The connection.
    pub flow: u32,
    /// Bytes granted by this PULL.
    pub bytes: u64,
    /// Cumulative bytes granted to the connection, this PULL included.
    pub granted: u64,
    /// EV of the connection's latest packet.
    pub ev: u16,
    /// Explicit route of the connection's latest packet.
    pub route: u32,
}

/// What one pacer wake-up did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacerStep {
    /// The PULL to send, if some connection was active.
    pub grant: Option<Grant>,
    /// Wake the pacer again at this time (someone is still active).
    pub rearm: Option<Time>,
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
}

/// One receiving host's pacer.
#[derive(Debug)]
struct HostPacer {
    /// Active connections, served round robin.
    active: VecDeque<u32>,
    /// Pull rate in bits per second.
    rate: u64,
    /// No PULL before this time.
    next_free: Time,
    /// A wake-up is scheduled.
    armed: bool,
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
}

impl PullPacers {
    /// Pacers for hosts whose links run at `link_rates`, pacing at `fraction` of them, each
    /// PULL granting `pull` bytes at most.
    pub fn new(link_rates: &[u64], pull: u64, fraction: f64, mtu: u32) -> Self {
        PullPacers {
            hosts: link_rates
                .iter()
                .map(|&r| HostPacer {
                    active: VecDeque::new(),
                    rate: ((r as f64 * fraction) as u64).max(1),
                    next_free: 0,
                    armed: false,
                })
                .collect(),
            sinks: Vec::new(),
            pull: pull.max(1),
            mtu: mtu as u64,
        }
    }

    /// Connection `flow`, received by `host`, is credit paced with at most `cap` bytes of
    /// unused credit granted at once.
    pub fn add_sink(&mut self, flow: u32, host: u32, cap: u64) {
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
    pub fn remove_sink(&mut self, flow: u32) {
        if let Some(s) = self.sinks.get_mut(flow as usize) {
            s.cap = 0;
        }
    }

    /// A packet of a credit-paced connection arrived at `now`. Returns when to wake its host's
    /// pacer if it must be woken and is not already.
    pub fn on_arrival(&mut self, now: Time, a: &PullArrival) -> Option<Time> {
        let pull = self.pull;
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
        if s.listed || s.grantable(pull) == 0 {
            return None;
        }
        s.listed = true;
        let host = &mut self.hosts[s.host as usize];
        host.active.push_back(a.flow);
        if host.armed {
            return None;
        }
        host.armed = true;
        Some(host.next_free.max(now))
    }

    /// Host `host`'s pacer wakes at `now`: the next active connection gets a PULL.
    pub fn on_timer(&mut self, host: u32, now: Time) -> PacerStep {
        let pull = self.pull;
        let hp = &mut self.hosts[host as usize];
        hp.armed = false;
        while let Some(f) = hp.active.pop_front() {
            let s = &mut self.sinks[f as usize];
            s.listed = false;
            let bytes = s.grantable(pull);
            if bytes == 0 {
                continue;
            }
            s.granted += bytes;
            let grant = Grant {
                flow: f,
                bytes,
                granted: s.granted,
                ev: s.ev,
                route: s.route,
            };
            if s.grantable(pull) > 0 {
                s.listed = true;
                hp.active.push_back(f);
            }
            hp.next_free = now + serialization(bytes as u32, hp.rate);
            let rearm = (!hp.active.is_empty()).then(|| {
                hp.armed = true;
                hp.next_free
            });
            return PacerStep {
                grant: Some(grant),
                rearm,
            };
        }
        PacerStep {
            grant: None,
            rearm: None,
        }
    }

    /// Cumulative bytes granted to connection `flow`, if it is credit paced.
    pub fn granted(&self, flow: u32) -> Option<u64> {
        self.sinks
            .get(flow as usize)
            .filter(|s| s.paced)
            .map(|s| s.granted)
    }

    /// Granted minus the highest used credit reported: what the pacer counts as outstanding
    /// for connection `flow` (never above its cap).
    pub fn outstanding(&self, flow: u32) -> u64 {
        self.sinks
            .get(flow as usize)
            .map_or(0, |s| s.granted - s.used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

    const MTU: u32 = 4150;
    const RATE: u64 = 400_000_000_000;

    fn pacers(hosts: usize) -> PullPacers {
        EqdsConfig::default().pacers(&vec![RATE; hosts], MTU)
    }

    fn arrival(flow: u32, target: u64, used: u64) -> PullArrival {
        PullArrival {
            flow,
            target: target as u32,
            used: used as u32,
            trimmed: false,
            ev: 7,
            route: u32::MAX,
        }
    }

    /// Wakes host `host`'s pacer until it stops; returns the grants and checks the spacing
    /// and the cap at every step.
    fn drain(p: &mut PullPacers, host: u32, mut at: Time, cap: u64) -> Vec<Grant> {
        let mut out = Vec::new();
        loop {
            let step = p.on_timer(host, at);
            if let Some(g) = step.grant {
                assert!(p.outstanding(g.flow) <= cap, "cap exceeded: {g:?}");
                out.push(g);
            }
            match step.rearm {
                Some(next) => {
                    let g = step.grant.expect("re-armed only after a grant");
                    assert_eq!(next - at, serialization(g.bytes as u32, 396_000_000_000));
                    at = next;
                }
                None => return out,
            }
        }
    }

    #[test]
    fn one_pull_of_4096_bytes_every_82_75_ns_up_to_the_target() {
        let mut p = pacers(2);
        p.add_sink(0, 1, u64::MAX);
        assert_eq!(p.on_arrival(100, &arrival(0, 10_000, 0)), Some(100));
        // Already armed: a second arrival does not arm again.
        assert_eq!(p.on_arrival(150, &arrival(0, 10_000, 0)), None);
        let grants = drain(&mut p, 1, 100, u64::MAX);
        let bytes: Vec<u64> = grants.iter().map(|g| g.bytes).collect();
        assert_eq!(bytes, [4096, 4096, 1808], "never beyond the target");
        assert_eq!(grants[2].granted, 10_000);
        assert_eq!(grants[0].ev, 7);
        assert_eq!(serialization(4096, 396_000_000_000), 82_748);
        // Idle now; a higher target wakes it, not before the last PULL's time is up.
        let at = p.on_arrival(200, &arrival(0, 20_000, 0)).expect("woken");
        assert_eq!(at, 100 + 2 * 82_748 + serialization(1808, 396_000_000_000));
        // A stale (lower) target changes nothing.
        let mut q = pacers(2);
        q.add_sink(0, 1, u64::MAX);
        q.on_arrival(0, &arrival(0, 8192, 0));
        q.on_arrival(0, &arrival(0, 4096, 0));
        assert_eq!(drain(&mut q, 1, 0, u64::MAX).len(), 2);
    }

    #[test]
    fn grants_stop_at_the_cap_and_resume_as_credit_is_used() {
        let cap = 3 * 4096 + 100;
        let mut p = pacers(1);
        p.add_sink(3, 0, cap);
        p.on_arrival(0, &arrival(3, 1 << 20, 0));
        let bytes: Vec<u64> = drain(&mut p, 0, 0, cap).iter().map(|g| g.bytes).collect();
        assert_eq!(bytes, [4096, 4096, 4096, 100]);
        assert_eq!(p.outstanding(3), cap);
        // The sender reports 8,192 bytes used: exactly that much more may be granted.
        let at = p.on_arrival(1_000_000, &arrival(3, 1 << 20, 8192)).unwrap();
        let bytes: Vec<u64> = drain(&mut p, 0, at, cap).iter().map(|g| g.bytes).collect();
        assert_eq!(bytes, [4096, 4096]);
        assert_eq!(p.outstanding(3), cap);
        assert_eq!(p.granted(3), Some(cap + 8192));
        // A report of more used than granted is not believed.
        p.on_arrival(2_000_000, &arrival(3, 1 << 20, 1 << 19));
        assert_eq!(p.outstanding(3), 0);
    }

    #[test]
    fn active_connections_are_served_round_robin_per_host() {
        let mut p = pacers(2);
        for f in 0..3 {
            p.add_sink(f, if f == 2 { 1 } else { 0 }, u64::MAX);
        }
        p.on_arrival(0, &arrival(0, 3 * 4096, 0));
        p.on_arrival(0, &arrival(1, 2 * 4096, 0));
        assert_eq!(p.on_arrival(0, &arrival(2, 4096, 0)), Some(0), "own pacer");
        let order: Vec<u32> = drain(&mut p, 0, 0, u64::MAX)
            .iter()
            .map(|g| g.flow)
            .collect();
        assert_eq!(order, [0, 1, 0, 1, 0]);
        assert_eq!(drain(&mut p, 1, 0, u64::MAX).len(), 1);
    }

    #[test]
    fn trimmed_headers_ask_for_one_more_mtu_and_finished_sinks_get_nothing() {
        let mut p = pacers(1);
        p.add_sink(0, 0, u64::MAX);
        p.on_arrival(0, &arrival(0, 4096, 0));
        drain(&mut p, 0, 0, u64::MAX);
        // The header of the packet carried the target already granted: one MTU more.
        let trimmed = PullArrival {
            trimmed: true,
            ..arrival(0, 4096, 0)
        };
        let at = p.on_arrival(10, &trimmed).unwrap();
        let g = drain(&mut p, 0, at, u64::MAX);
        assert_eq!(g.iter().map(|g| g.bytes).sum::<u64>(), MTU as u64);
        // A later packet whose target counts that retransmission asks for nothing more.
        assert_eq!(p.on_arrival(1_000_000, &arrival(0, 4096 + 4150, 0)), None);
        // Removed: arrivals no longer wake the pacer, listed entries are skipped.
        p.on_arrival(1_000_000, &arrival(0, 1 << 20, 0));
        p.remove_sink(0);
        assert_eq!(p.on_arrival(2_000_000, &arrival(0, 1 << 21, 0)), None);
        let step = p.on_timer(0, 3_000_000);
        assert_eq!(step.grant, None);
        assert_eq!(step.rearm, None);
    }

    #[test]
    fn no_sequence_of_reports_gets_past_the_cap() {
        let mut rng = Rng::new(11);
        let cap = 150_000;
        let mut p = pacers(1);
        p.add_sink(0, 0, cap);
        let (mut target, mut now) = (0u64, 0);
        let mut armed_at: Option<Time> = None;
        for _ in 0..20_000 {
            now += rng.below(200_000) as Time;
            if let Some(at) = armed_at.filter(|&at| at <= now) {
                let step = p.on_timer(0, at);
                armed_at = step.rearm;
            }
            // A sender never reports more used than was granted to it, and targets grow.
            target += rng.below(20_000) as u64;
            let granted = p.granted(0).unwrap();
            let used = granted - rng.below((granted.min(1 << 20) + 1) as u32) as u64;
            let a = PullArrival {
                trimmed: rng.below(10) == 0,
                ..arrival(0, target, used)
            };
            if let Some(at) = p.on_arrival(now, &a) {
                assert!(armed_at.is_none(), "armed twice");
                armed_at = Some(at);
            }
            assert!(p.outstanding(0) <= cap);
        }
        assert!(p.granted(0).unwrap() > 10 * cap, "it kept granting");
    }

    fn eqds() -> Eqds {
        Eqds::new(625_284, MTU, false)
    }

    fn ack() -> AckSample {
        AckSample {
            acked: 4150,
            ecn: false,
            cnp: false,
            rtt: None,
            now: 0,
            in_flight: 0,
        }
    }

    #[test]
    fn speculative_credit_is_spent_then_forfeited_at_the_first_feedback() {
        let mut cc = eqds();
        assert!(cc.credit_gated() && cc.speculating());
        assert_eq!(cc.credit(), 625_284);
        assert_eq!(cc.cwnd(), 625_284);
        for _ in 0..150 {
            cc.on_send(4150);
        }
        assert_eq!(cc.credit(), 625_284 - 150 * 4150);
        cc.on_ack(&ack());
        assert!(!cc.speculating());
        assert_eq!(cc.credit(), 0, "unused speculative credit is lost");
        // A debt is not forgiven.
        let mut cc = eqds();
        for _ in 0..151 {
            cc.on_send(4150);
        }
        cc.on_nack(4150, 0);
        assert_eq!(cc.credit(), 625_284 - 151 * 4150);
        // A timeout ends speculation too, and feedback after that forfeits nothing more.
        let mut cc = eqds();
        cc.on_timeout(4150, 0);
        assert_eq!(cc.credit(), 0);
        cc.on_pull(4096, 0);
        cc.on_ack(&ack());
        assert_eq!(cc.credit(), 4096);
    }

    #[test]
    fn pulls_are_cumulative_and_capped() {
        let mut cc = eqds();
        cc.on_ack(&ack());
        cc.on_pull(4096, 0);
        cc.on_pull(8192, 0);
        assert_eq!(cc.credit(), 8192);
        // A reordered (older) PULL and a repeated one add nothing.
        cc.on_pull(4096, 0);
        cc.on_pull(8192, 0);
        assert_eq!(cc.credit(), 8192);
        // Credit never exceeds the maximum.
        cc.on_pull(10_000_000, 0);
        assert_eq!(cc.credit(), 625_284);
        // The default (REPS reference): a PULL while speculating adds to the speculative
        // credit, capped; the UEC variant forfeits it first.
        let mut cc = eqds();
        cc.on_send(100_000);
        cc.on_pull(4096, 0);
        assert!(cc.speculating());
        assert_eq!(cc.credit(), 625_284 - 100_000 + 4096);
        let mut uec = Eqds::new(625_284, MTU, true);
        uec.on_send(100_000);
        uec.on_pull(4096, 0);
        assert!(!uec.speculating());
        assert_eq!(uec.credit(), 4096);
    }

    #[test]
    fn pull_requests_follow_the_reference_formula() {
        let mut cc = eqds();
        // Speculating with 8 MiB to go: the target is what was sent (the credit to replace).
        cc.on_send(4150);
        let r = cc.pull_request(8 << 20);
        assert_eq!(
            r,
            PullRequest {
                target: 4150,
                used: 0
            }
        );
        // Little left: still at least one MTU while speculating and new data remains.
        assert_eq!(cc.pull_request(1000).target, 4150);
        assert_eq!(cc.pull_request(0).target, 0);
        cc.on_ack(&ack());
        // After it: backlog (capped) minus credit plus pulls.
        cc.on_pull(20_000, 0);
        cc.on_send(4150);
        assert_eq!(cc.credit(), 20_000 - 4150);
        let r = cc.pull_request(8 << 20);
        assert_eq!(r.target, 20_000 + 625_284 - (20_000 - 4150));
        assert_eq!(r.used, 4150, "pulled minus held");
        let r = cc.pull_request(10_000);
        assert_eq!(r.target, 20_000 + 10_000 - (20_000 - 4150));
        // With a debt, everything pulled is used and the debt is asked for too.
        for _ in 0..5 {
            cc.on_send(4150);
        }
        assert_eq!(cc.credit(), 20_000 - 6 * 4150);
        let r = cc.pull_request(10_000);
        assert_eq!(r.used, 20_000);
        assert_eq!(r.target, 20_000 + 10_000 + 6 * 4150 - 20_000);
    }

    #[test]
    fn wire_counts_widen_around_the_known_count() {
        assert_eq!(widen(5, 0), 5);
        let near = (3u64 << 32) + 10;
        assert_eq!(widen(20, near), near + 10);
        assert_eq!(widen(5, near), near - 5);
        assert_eq!(widen((near + 1_000_000) as u32, near), near + 1_000_000);
        // Across a 32-bit wrap.
        let near = (1u64 << 32) - 100;
        assert_eq!(widen(50, near), (1 << 32) + 50);
        assert_eq!(widen(u32::MAX - 200, 1 << 32), (1 << 32) - 201);
        assert_eq!(widen(u32::MAX, 0), 0, "never negative");
    }

    #[test]
    fn config_checks_name_the_field() {
        let bad = |c: EqdsConfig| c.validate().unwrap_err();
        let d = EqdsConfig::default();
        assert!(d.validate().is_ok());
        assert!(bad(EqdsConfig {
            max_credit_bdp: 0.0,
            ..d.clone()
        })
        .starts_with("max_credit_bdp:"));
        assert!(bad(EqdsConfig {
            pull_size: SizeQ(Size::Bytes(0)),
            ..d.clone()
        })
        .starts_with("pull_size:"));
        assert!(bad(EqdsConfig {
            pull_rate: 1.5,
            ..d.clone()
        })
        .starts_with("pull_rate:"));
        assert!(bad(EqdsConfig {
            initial_credit: Some(SizeQ(Size::Bytes(0))),
            ..d.clone()
        })
        .starts_with("initial_credit:"));
        let cc = d.build(&CcParams::example());
        assert_eq!(cc.credit_cap(), 625_284);
        assert_eq!(cc.credit(), 625_284);
        // A smaller speculative window; a larger one is cut to the maximum.
        let with = |c: Size| EqdsConfig {
            initial_credit: Some(SizeQ(c)),
            ..d.clone()
        };
        let cc = with(Size::Packets(1.0)).build(&CcParams::example());
        assert_eq!((cc.credit(), cc.credit_cap()), (4150, 625_284));
        let cc = with(Size::Bytes(1 << 30)).build(&CcParams::example());
        assert_eq!(cc.credit(), 625_284);
    }
}
