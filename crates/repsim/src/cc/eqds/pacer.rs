//! The receiving hosts' pull pacers of EQDS-style credit (see the parent module for the rules,
//! and [`super::PacerRule`] for the two ways they grant).
use std::collections::VecDeque;

use super::oversubscribed::RateControl;
use super::{OversubscribedCc, PacerRule};
use crate::cc::credit::{Grant, PacerStep, PullArrival, ReceiverPacing};
use crate::cc::widen;
use crate::engine::rng::Stream;
use crate::engine::time::serialization;
use crate::engine::{Rng, Time};

/// One receiving connection as its host's pacer sees it (bytes counted from its start).
#[derive(Clone, Copy, Debug)]
struct Sink {
    /// Registered as credit paced.
    paced: bool,
    host: u32,
    /// Most granted-but-unused credit (0: finished).
    cap: u64,
    granted: u64,
    /// Highest pull target seen (under the bounded rule, plus one MTU per trimmed header).
    target: u64,
    /// Highest pull credit used that a packet reported.
    used: u64,
    /// In its host's active list.
    listed: bool,
    /// In its host's idle list (slow pulls).
    idle: bool,
    /// Finished, under [`PacerRule::UetHtsim`]: its packets no longer come, its lists' entries
    /// are still served.
    done: bool,
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
        done: false,
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

    /// Takes in what packet `a` tells (its target, its use, the EV and route PULLs take);
    /// returns whether its target advanced the sink's.
    fn hear(&mut self, a: &PullArrival) -> bool {
        let target = widen(a.target, self.granted);
        let advanced = target > self.target;
        self.target = self.target.max(target);
        // Used credit was granted first: a report above the grants is not believed.
        self.used = self.used.max(widen(a.used, self.granted).min(self.granted));
        self.ev = a.ev;
        self.route = a.route;
        advanced
    }
}

/// One receiving host's pacer.
#[derive(Debug)]
pub(super) struct HostPacer {
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
    pub(super) control: Option<RateControl>,
}

impl HostPacer {
    /// Someone was listed at `now`: when to wake the pacer, unless a wake-up is set already.
    fn arm(&mut self, now: Time) -> Option<Time> {
        if self.armed {
            return None;
        }
        self.armed = true;
        Some(self.next_free.max(now))
    }
}

/// Bytes' time a PULL that grants nothing holds the pacer (uet-htsim's `UecPullPacer`).
const EMPTY_PULL_HOLD: u64 = 1024;

/// The pull pacers of every receiving host (sans-IO: the simulation feeds them arrivals and
/// wake-ups and sends the PULLs they grant).
#[derive(Debug)]
pub struct PullPacers {
    pub(super) hosts: Vec<HostPacer>,
    /// Per flow index.
    sinks: Vec<Sink>,
    pull: u64,
    mtu: u64,
    slow_pulls: bool,
    /// Oversubscription control's parameters, if it is on (each host's state is its pacer's).
    control: Option<OversubscribedCc>,
    /// How the pacers grant.
    rule: PacerRule,
    /// The credit quantum [`PacerRule::UetHtsim`] counts its slow-credit bound in.
    quantum: u64,
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
            rule: PacerRule::Bounded,
            quantum: 1,
        }
    }

    /// Grants as `rule` says, counting credit in `quantum`-byte units where the rule does.
    pub fn follow(&mut self, rule: PacerRule, quantum: u64) {
        self.rule = rule;
        self.quantum = quantum.max(1);
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

    /// [`ReceiverPacing::on_arrival`] under [`PacerRule::UetHtsim`]: a target that advances,
    /// a trimmed header or an RTS lists the connection active unless it is listed already.
    fn uet_arrival(&mut self, now: Time, a: &PullArrival) -> Option<Time> {
        let s = self.sinks.get_mut(a.flow as usize)?;
        if s.cap == 0 || s.done {
            return None;
        }
        let advanced = s.hear(a);
        if s.listed || !(advanced || a.trimmed || a.rts) {
            return None;
        }
        s.listed = true;
        let host = &mut self.hosts[s.host as usize];
        host.active.push_back(a.flow);
        host.arm(now)
    }

    /// [`ReceiverPacing::on_timer`] under [`PacerRule::UetHtsim`] (see there). A finished
    /// connection is served as any other: its entries leave the lists as they would.
    fn uet_timer(&mut self, host: u32, now: Time) -> PacerStep {
        let (pull, quantum) = (self.pull, self.quantum);
        let hp = &mut self.hosts[host as usize];
        hp.armed = false;
        let grant = if let Some(f) = hp.active.pop_front() {
            let s = &mut self.sinks[f as usize];
            // Up to the target, never backwards.
            let to = (s.granted + pull).min(s.target.max(s.granted));
            let bytes = to - s.granted;
            s.granted = to;
            if s.target > s.granted {
                hp.active.push_back(f);
            } else {
                s.listed = false;
                hp.idle.push_back(f);
            }
            Some((f, bytes))
        } else if let Some(f) = hp.idle.pop_front() {
            let s = &mut self.sinks[f as usize];
            s.granted += pull;
            let slow = s.granted.saturating_sub(s.target);
            if s.target <= s.granted && slow < s.cap / quantum * quantum {
                hp.idle.push_back(f);
            }
            Some((f, pull))
        } else {
            None
        };
        self.send(host, now, grant)
    }

    /// Host `host`'s pacer sends `grant`'s PULL at `now` (none: it stops), and holds for its
    /// bytes' time at its rate ([`EMPTY_PULL_HOLD`] for one that grants nothing, which only
    /// [`PacerRule::UetHtsim`] sends).
    fn send(&mut self, host: u32, now: Time, grant: Option<(u32, u64)>) -> PacerStep {
        let Some((f, bytes)) = grant else {
            return PacerStep {
                grant: None,
                rearm: None,
            };
        };
        let hp = &mut self.hosts[host as usize];
        let s = &self.sinks[f as usize];
        let held = if bytes == 0 { EMPTY_PULL_HOLD } else { bytes };
        hp.next_free = now + serialization(held as u32, hp.rate);
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

    /// Connection `flow` is over: it gets no more PULLs (under [`PacerRule::UetHtsim`], those
    /// its place in the pacer's lists still earns it, as there).
    fn remove_sink(&mut self, flow: u32) {
        let uet = self.rule == PacerRule::UetHtsim;
        if let Some(s) = self.sinks.get_mut(flow as usize) {
            if uet {
                s.done = true;
            } else {
                s.cap = 0;
            }
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
        if self.rule == PacerRule::UetHtsim {
            return self.uet_arrival(now, a);
        }
        let s = self.sinks.get_mut(a.flow as usize)?;
        if s.cap == 0 {
            return None;
        }
        s.hear(a);
        if a.trimmed {
            s.target += self.mtu;
        }
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
        host.arm(now)
    }

    /// Host `host`'s pacer wakes at `now`: the next active connection gets a PULL, or, if
    /// none is active and slow pulls are on, the next idle one.
    fn on_timer(&mut self, host: u32, now: Time) -> PacerStep {
        let pull = self.pull;
        let slow_pulls = self.slow_pulls;
        self.catch_up(host, now);
        if self.rule == PacerRule::UetHtsim {
            return self.uet_timer(host, now);
        }
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
        self.send(host, now, grant)
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
