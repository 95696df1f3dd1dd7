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
pub mod htsim;
pub mod report;
pub mod select;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};
use crate::net::forwarding::Forwarding;
use crate::net::port::QueueParams;
use crate::net::Topology;
use crate::scenario::units::{RateQ, TimeQ};

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
}

/// `[[fault]]` in a scenario file.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    /// `link_down`, `link_up`, `rate`, `drop`, `flap`, `switch_down`, `switch_up`,
    /// `random_cables`, `random_switches`, `random_tor_uplinks` or `file`.
    pub kind: String,
    /// Link name (`tor0->agg1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Switch name (`agg1`, `spine0`, `core3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    /// `both` (default: the named link and its reverse) or `forward` (the named direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// When the fault begins (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeQ>,
    /// How long it lasts (default: until the end of the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<TimeQ>,
    /// drop (and random_*): per-packet loss probability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// rate (and random_*): new link speed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<RateQ>,
    /// rate: buffer multiplier (default: new speed / old speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_scale: Option<f64>,
    /// flap: one cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<TimeQ>,
    /// flap: down time at the start of each cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub down_for: Option<TimeQ>,
    /// random_*: share of the candidates, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// random_*: the i-th chosen element fails at start + i x stagger (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stagger: Option<TimeQ>,
    /// `silent` (default) or `trim`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// `all` (default) or `data` (ACKs and NACKs pass).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<String>,
    /// file: a reference failure file (path relative to the scenario file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// random_* and file: seed of the choice (default: the scenario seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// random_*: allow choices that disconnect some pair of hosts (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_disconnect: Option<bool>,
}

/// `[routing]` in a scenario file.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSection {
    /// Switch-side port choice among equal-cost ports: `ecmp` (default, hash of flow key, EV
    /// and salt) or `adaptive` (least-queued port, Adaptive RoCE style).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    /// Delay after which switches drop dead links from (and restore live links to) their ECMP
    /// groups; absent: never.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconvergence: Option<TimeQ>,
    /// A flow without any ACK or NACK for this long is reported unreachable and stopped
    /// (default: the larger of 100 x RTO and 10 ms). Only applies to runs with faults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub give_up_after: Option<TimeQ>,
}

/// A fault entry that cannot be expanded: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultError {
    /// Field name inside the entry (`link`, `percent`, ...).
    pub field: String,
    /// Message.
    pub message: String,
}

fn ferr<T>(field: &str, message: impl Into<String>) -> Result<T, FaultError> {
    Err(FaultError {
        field: field.into(),
        message: message.into(),
    })
}

/// `value`, or an error naming the missing field with an example.
fn required<T>(value: Option<T>, field: &str, example: &str) -> Result<T, FaultError> {
    value.map_or_else(|| ferr(field, format!("required, e.g. {example}")), Ok)
}

/// Which elements a random fault chooses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates {
    /// Every switch-to-switch cable.
    Cables,
    /// Every cable from a ToR up to the next tier.
    TorUplinks,
    /// Every cable between the aggregation and the core tier.
    AggCoreCables,
    /// Every switch above the ToRs.
    Switches,
}

/// What happens to the chosen elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Effect {
    /// Down for the duration.
    Down,
    /// Per-packet loss probability.
    Drop(f64),
    /// Rate change (bits per second, buffer multiplier: `None` = rate ratio).
    Rate(u64, Option<f64>),
    /// Switches only: every port's rate divided by `div`, and a drop probability.
    SwitchDegrade {
        /// Rate divisor.
        div: f64,
        /// Drop probability.
        probability: f64,
    },
    /// Cables: the reference degradation mix (drop 0.33 in 90 %, 0.66 in 9 %, 1 in 1 % of cases).
    DegradeMix,
}

/// Common timing and loss options of one fault.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Start.
    pub start: Time,
    /// End (`None`: never).
    pub end: Option<Time>,
    /// Loss mode.
    pub loss: LossMode,
    /// Only data packets.
    pub data_only: bool,
}

/// Adds the actions of `effect` on `ports` between `t.start` and `t.end`.
pub fn push_effect(
    plan: &mut FaultPlan,
    topo: &Topology,
    ports: &[u32],
    effect: Effect,
    t: Timing,
    rng: &mut Rng,
) {
    let drop = |probability: f64| ActionKind::Drop {
        probability,
        loss: t.loss,
        data_only: t.data_only,
    };
    // (action at start, action at end) pairs for one port.
    let push = |plan: &mut FaultPlan, port: u32, on: ActionKind, off: ActionKind| {
        plan.actions.push(Action {
            time: t.start,
            port,
            kind: on,
        });
        if let Some(end) = t.end {
            plan.actions.push(Action {
                time: end,
                port,
                kind: off,
            });
        }
    };
    for &port in ports {
        let link = &topo.links[port as usize];
        match effect {
            Effect::Down => push(
                plan,
                port,
                ActionKind::Down {
                    loss: t.loss,
                    data_only: t.data_only,
                },
                ActionKind::Up,
            ),
            Effect::Drop(p) => push(plan, port, drop(p), drop(0.0)),
            Effect::DegradeMix => {
                let u = rng.unit();
                let p = if u < 0.90 {
                    0.33
                } else if u < 0.99 {
                    0.66
                } else {
                    1.0
                };
                push(plan, port, drop(p), drop(0.0));
            }
            Effect::Rate(rate, scale) => {
                // Relative to the configured queue, like `[[degrade]]`; default: keep the
                // buffer proportional to the rate.
                let buffer_scale =
                    scale.unwrap_or(rate as f64 / link.rate_bps as f64 * link.buffer_scale);
                let on = ActionKind::Rate {
                    rate_bps: rate,
                    buffer_scale,
                };
                push(plan, port, on, ActionKind::RestoreRate);
            }
            Effect::SwitchDegrade { div, probability } => {
                let rate = ((link.rate_bps as f64 / div).round() as u64).max(1_000_000);
                push(plan, port, drop(probability), drop(0.0));
                let on = ActionKind::Rate {
                    rate_bps: rate,
                    buffer_scale: link.buffer_scale,
                };
                push(plan, port, on, ActionKind::RestoreRate);
            }
        }
    }
}

/// Flapping: `ports` are down for `down_for` at the start of every `period` from `t.start`
/// until `t.end` (the run's end when `None`, as given in `run_end`).
pub fn push_flap(
    plan: &mut FaultPlan,
    topo: &Topology,
    ports: &[u32],
    t: Timing,
    (period, down_for): (Time, Time),
    run_end: Time,
    rng: &mut Rng,
) {
    let last = t.end.unwrap_or(run_end).min(run_end);
    let mut start = t.start;
    while start < last {
        let cycle = Timing {
            start,
            end: Some((start + down_for).min(last)),
            ..t
        };
        push_effect(plan, topo, ports, Effect::Down, cycle, rng);
        start += period;
    }
}

/// The link from `b` to `a` for a link from `a` to `b` (the other half of the cable).
pub fn reverse(topo: &Topology, link: u32) -> Option<u32> {
    topo.reverse(link)
}

/// Every egress port into or out of switch `s`.
pub fn switch_ports(topo: &Topology, s: u32) -> Vec<u32> {
    let node = topo.switch_node(s);
    (0..topo.links.len() as u32)
        .filter(|&l| topo.links[l as usize].from == node || topo.links[l as usize].to == node)
        .collect()
}

/// Both directions of every cable in `kind`, as (up-direction link, down-direction link). A
/// cable's "up" direction leads to the higher level (for cables between switches of one level,
/// as in a Dragonfly, towards the higher node id).
pub fn cable_candidates(topo: &Topology, kind: Candidates) -> Vec<(u32, Option<u32>)> {
    let mut out = Vec::new();
    for (i, l) in topo.links.iter().enumerate() {
        let (a, b) = (topo.level(l.from), topo.level(l.to));
        // Upward direction only; the reverse is found by name.
        if a == 0 || b < a || (b == a && l.to < l.from) {
            continue;
        }
        let keep = match kind {
            Candidates::Cables => true,
            Candidates::TorUplinks => a == 1 && b > 1,
            Candidates::AggCoreCables => a == 2 && b == 3,
            Candidates::Switches => false,
        };
        if keep {
            out.push((i as u32, reverse(topo, i as u32)));
        }
    }
    out
}

fn parse_loss(s: &Option<String>) -> Result<LossMode, FaultError> {
    match s.as_deref() {
        None | Some("silent") => Ok(LossMode::Silent),
        Some("trim") => Ok(LossMode::Trim),
        Some(o) => ferr(
            "loss",
            format!("unknown loss mode '{o}'; allowed: silent, trim"),
        ),
    }
}

fn parse_both(s: &Option<String>) -> Result<bool, FaultError> {
    match s.as_deref() {
        None | Some("both") => Ok(true),
        Some("forward") => Ok(false),
        Some(o) => ferr(
            "direction",
            format!("unknown direction '{o}'; allowed: both, forward"),
        ),
    }
}

/// Expands `[[fault]]` entries into a plan. `load` reads a reference failure file given the
/// path written in the scenario. `seed` is the run's seed; `end` the simulated time limit.
pub fn build_plan(
    entries: &[FaultSection],
    routing: &RoutingSection,
    topo: &Topology,
    seed: u64,
    end: Time,
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Result<FaultPlan, (usize, FaultError)> {
    let mut plan = FaultPlan {
        reconvergence: routing.reconvergence.map(|t| t.0),
        give_up_after: routing.give_up_after.map(|t| t.0),
        ..Default::default()
    };
    for (i, e) in entries.iter().enumerate() {
        expand(&mut plan, i, e, topo, seed, end, load).map_err(|err| (i, err))?;
    }
    plan.sort();
    Ok(plan)
}

fn expand(
    plan: &mut FaultPlan,
    index: usize,
    e: &FaultSection,
    topo: &Topology,
    seed: u64,
    end: Time,
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Result<(), FaultError> {
    let start = e.start.map(|t| t.0).unwrap_or(0);
    let stop = match e.duration {
        Some(d) if d.0 == 0 => {
            return ferr(
                "duration",
                "must be positive (leave it out for 'until the end')",
            )
        }
        Some(d) => Some(start + d.0),
        None => None,
    };
    let loss = parse_loss(&e.loss)?;
    let data_only = match e.packets.as_deref() {
        None | Some("all") => false,
        Some("data") => true,
        Some(o) => return ferr("packets", format!("unknown '{o}'; allowed: all, data")),
    };
    let timing = Timing {
        start,
        end: stop,
        loss,
        data_only,
    };
    let mut rng = Rng::derive(
        e.seed.unwrap_or(seed),
        Stream::Fault,
        1_000_000 + index as u64,
    );
    let links = |both: bool| -> Result<Vec<u32>, FaultError> {
        let name = required(e.link.as_deref(), "link", "\"tor0->agg1\"")?;
        let mut ls = topo.links_by_name(name).map_err(|x| FaultError {
            field: "link".into(),
            message: x.0,
        })?;
        if both {
            let rev: Vec<u32> = ls.iter().filter_map(|&l| reverse(topo, l)).collect();
            ls.extend(rev);
        }
        Ok(ls)
    };
    let switch = || -> Result<u32, FaultError> {
        let name = required(e.switch.as_deref(), "switch", "\"agg1\"")?;
        match topo.node_by_name(name) {
            Some(n) if n >= topo.hosts => Ok(n - topo.hosts),
            _ => ferr(
                "switch",
                format!("no switch named '{name}' in this topology"),
            ),
        }
    };
    let probability = || -> Result<f64, FaultError> {
        let p = required(e.probability, "probability", "0.01")?;
        if !(0.0..=1.0).contains(&p) {
            return ferr("probability", format!("must be between 0 and 1, not {p}"));
        }
        Ok(p)
    };
    let effect = || -> Result<Effect, FaultError> {
        if e.probability.is_some() {
            Ok(Effect::Drop(probability()?))
        } else if let Some(s) = e.speed {
            Ok(Effect::Rate(s.0, e.buffer_scale))
        } else {
            Ok(Effect::Down)
        }
    };
    match e.kind.as_str() {
        "link_down" => {
            let ls = links(parse_both(&e.direction)?)?;
            push_effect(plan, topo, &ls, Effect::Down, timing, &mut rng);
        }
        "link_up" => {
            for l in links(parse_both(&e.direction)?)? {
                plan.actions.push(Action { time: start, port: l, kind: ActionKind::ForceUp });
            }
        }
        "drop" => {
            let ls = links(parse_both(&e.direction)?)?;
            push_effect(plan, topo, &ls, Effect::Drop(probability()?), timing, &mut rng);
        }
        "rate" => {
            let speed = required(e.speed, "speed", "\"200Gbps\"")?;
            if speed.0 == 0 {
                return ferr("speed", "must be positive");
            }
            if let Some(b) = e.buffer_scale {
                if b.is_nan() || b <= 0.0 {
                    return ferr("buffer_scale", "must be positive");
                }
            }
            let ls = links(parse_both(&e.direction)?)?;
            push_effect(plan, topo, &ls, Effect::Rate(speed.0, e.buffer_scale), timing, &mut rng);
        }
        "flap" => {
            let period = e.period.map(|p| p.0).unwrap_or(0);
            let down = e.down_for.map(|p| p.0).unwrap_or(0);
            if period == 0 {
                return ferr("period", "required and positive, e.g. \"100us\"");
            }
            if down == 0 || down >= period {
                return ferr("down_for", "required, positive and shorter than period");
            }
            let ls = links(parse_both(&e.direction)?)?;
            push_flap(plan, topo, &ls, timing, (period, down), end, &mut rng);
        }
        "switch_down" => {
            let ports = switch_ports(topo, switch()?);
            push_effect(plan, topo, &ports, Effect::Down, timing, &mut rng);
        }
        "switch_up" => {
            for p in switch_ports(topo, switch()?) {
                plan.actions.push(Action { time: start, port: p, kind: ActionKind::ForceUp });
            }
        }
        "random_cables" | "random_tor_uplinks" | "random_switches" => {
            let percent = required(e.percent, "percent", "10")?;
            if !(0.0..=100.0).contains(&percent) {
                return ferr("percent", format!("must be between 0 and 100, not {percent}"));
            }
            let cands = match e.kind.as_str() {
                "random_cables" => Candidates::Cables,
                "random_tor_uplinks" => Candidates::TorUplinks,
                _ => Candidates::Switches,
            };
            let both = parse_both(&e.direction)?;
            let sel = select::Selection {
                candidates: cands,
                count: select::Count::Percent(percent),
                both_directions: both,
                effect: effect()?,
                timing,
                stagger: e.stagger.map(|s| s.0).unwrap_or(0),
                keep_connected: !e.allow_disconnect.unwrap_or(false),
            };
            select::apply(plan, topo, &sel, &mut rng, "");
        }
        "file" => {
            let f = e.file.as_deref().ok_or_else(|| FaultError { field: "file".into(), message: "required".into() })?;
            let text = load(f).map_err(|m| FaultError { field: "file".into(), message: m })?;
            let spec = htsim::parse(&text).map_err(|m| FaultError { field: "file".into(), message: format!("{f}: {m}") })?;
            htsim::apply(plan, topo, &spec, loss, end, &mut rng);
        }
        other => {
            return ferr(
                "kind",
                format!(
                    "unknown fault kind '{other}'; allowed: link_down, link_up, rate, drop, flap, switch_down, switch_up, \
                     random_cables, random_switches, random_tor_uplinks, file"
                ),
            )
        }
    }
    Ok(())
}

/// Counters of what faults did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    /// Data packets discarded by failed elements.
    pub data_dropped: u64,
    /// Data packets trimmed by failed elements (`loss = "trim"`).
    pub data_trimmed: u64,
    /// ACKs and NACKs discarded by failed elements.
    pub control_dropped: u64,
    /// Packets discarded because a switch had no route left (after reconvergence).
    pub no_route: u64,
    /// Fault actions applied.
    pub actions: u64,
    /// Routing recomputations.
    pub reconvergences: u64,
}

/// What a failed element does to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Unaffected.
    Pass,
    /// Discarded.
    Drop,
    /// Trimmed and flagged.
    Trim,
}

/// Run-time fault state: per-port struct of arrays plus bookkeeping.
pub struct FaultState {
    /// The plan's actions (applied in order).
    pub actions: Vec<Action>,
    /// Reconvergence delay.
    pub reconvergence: Option<Time>,
    /// Give-up delay (resolved).
    pub give_up_after: Time,
    /// Reasons each port is down (0 = up).
    pub down: Vec<u16>,
    /// Drop probability of each port.
    pub drop_p: Vec<f64>,
    /// Loss mode of each port.
    pub trim: Vec<bool>,
    /// Only data affected, per port.
    pub data_only: Vec<bool>,
    /// Cheap test: anything configured on this port.
    pub active: Vec<bool>,
    /// Per-port drop streams.
    pub rng: Vec<Rng>,
    /// Original rate and queue of ports whose rate changed.
    pub original: Vec<Option<(u64, QueueParams)>>,
    /// Routes before any reconvergence.
    pub base_routes: Forwarding,
    /// Routing snapshots (time due, alive bit per port until used), indexed by Reroute events.
    pub snapshots: Vec<(Time, Option<Vec<bool>>)>,
    /// Per flow: (ACK+NACK count at the last check, time it last changed).
    pub progress: Vec<(u64, Time)>,
    /// Per flow: the switch (node) where its last packet found no route.
    pub no_route_at: Vec<u32>,
    /// Flows given up: (no path left, message).
    pub gave_up: Vec<(bool, String)>,
    /// Counters.
    pub stats: FaultStats,
}

impl FaultState {
    /// Fresh state for `ports` ports.
    pub fn new(plan: FaultPlan, ports: usize, seed: u64, rto: Time, routes: Forwarding) -> Self {
        FaultState {
            actions: plan.actions,
            reconvergence: plan.reconvergence,
            give_up_after: plan
                .give_up_after
                .unwrap_or((100 * rto).max(10 * crate::engine::time::MS)),
            down: vec![0; ports],
            drop_p: vec![0.0; ports],
            trim: vec![false; ports],
            data_only: vec![false; ports],
            active: vec![false; ports],
            rng: (0..ports as u64)
                .map(|p| Rng::derive(seed, Stream::Fault, p))
                .collect(),
            original: vec![None; ports],
            base_routes: routes,
            snapshots: Vec::new(),
            progress: Vec::new(),
            no_route_at: Vec::new(),
            gave_up: Vec::new(),
            stats: FaultStats::default(),
        }
    }

    /// Alive bit of every port (for routing).
    pub fn alive(&self) -> Vec<bool> {
        self.down.iter().map(|&d| d == 0).collect()
    }

    #[inline]
    fn refresh(&mut self, port: usize) {
        self.active[port] = self.down[port] > 0 || self.drop_p[port] > 0.0;
    }

    /// Applies a state change (not rate changes); returns true when the port's up/down state
    /// flipped.
    pub fn apply(&mut self, a: &Action) -> bool {
        let p = a.port as usize;
        let was_down = self.down[p] > 0;
        match a.kind {
            ActionKind::Down { loss, data_only } => {
                self.down[p] = self.down[p].saturating_add(1);
                self.trim[p] = loss == LossMode::Trim;
                self.data_only[p] = data_only;
            }
            ActionKind::Up => self.down[p] = self.down[p].saturating_sub(1),
            ActionKind::ForceUp => self.down[p] = 0,
            ActionKind::Drop {
                probability,
                loss,
                data_only,
            } => {
                self.drop_p[p] = probability;
                if probability > 0.0 {
                    self.trim[p] = loss == LossMode::Trim;
                    self.data_only[p] = data_only;
                }
            }
            ActionKind::Rate { .. } | ActionKind::RestoreRate => {}
        }
        self.refresh(p);
        was_down != (self.down[p] > 0)
    }

    /// Fate of a packet put on the wire of `port` (`full_data`: an untrimmed data packet).
    #[inline]
    pub fn on_wire(&mut self, port: u32, is_data: bool, full_data: bool) -> Verdict {
        let p = port as usize;
        if !self.active[p] || (self.data_only[p] && !is_data) {
            return Verdict::Pass;
        }
        let lost = self.down[p] > 0 || self.rng[p].unit() < self.drop_p[p];
        self.verdict(p, lost, is_data, full_data)
    }

    /// Fate of a packet taken off the wire of `port` (only a link that is down now matters).
    #[inline]
    pub fn off_wire(&mut self, port: u32, is_data: bool, full_data: bool) -> Verdict {
        let p = port as usize;
        if self.down[p] == 0 || (self.data_only[p] && !is_data) {
            return Verdict::Pass;
        }
        self.verdict(p, true, is_data, full_data)
    }

    #[inline]
    fn verdict(&self, p: usize, lost: bool, is_data: bool, full_data: bool) -> Verdict {
        if !lost {
            Verdict::Pass
        } else if self.trim[p] && full_data {
            Verdict::Trim
        } else if self.trim[p] && is_data {
            // Already trimmed and flagged: the header travels on to be NACKed.
            Verdict::Pass
        } else {
            Verdict::Drop
        }
    }
}

/// The 32-host, 2-tier tree (8 ToRs x 4 hosts, 4 spines) the fault unit tests use.
#[cfg(test)]
pub(crate) fn test_topology() -> Topology {
    crate::net::FatTreeSpec::uniform(2, 32, 4, 0, 1, 400_000_000_000, crate::engine::time::US, 0)
        .unwrap()
        .build()
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    fn topo() -> Topology {
        test_topology()
    }

    fn entry(kind: &str) -> FaultSection {
        FaultSection {
            kind: kind.into(),
            ..Default::default()
        }
    }

    fn plan(e: Vec<FaultSection>) -> Result<FaultPlan, (usize, FaultError)> {
        build_plan(
            &e,
            &RoutingSection::default(),
            &topo(),
            1,
            1_000 * US,
            &|_| Err("no files".into()),
        )
    }

    #[test]
    fn link_down_both_directions_with_duration() {
        let mut e = entry("link_down");
        e.link = Some("tor0->agg1".into());
        e.start = Some(TimeQ(100 * US));
        e.duration = Some(TimeQ(50 * US));
        let p = plan(vec![e]).unwrap();
        assert_eq!(p.actions.len(), 4);
        assert_eq!(p.actions[0].time, 100 * US);
        assert_eq!(p.actions[3].time, 150 * US);
        let t = topo();
        let names: Vec<String> = p.actions.iter().map(|a| t.link_name(a.port)).collect();
        assert!(
            names.contains(&"tor0->agg1".to_string()) && names.contains(&"agg1->tor0".to_string()),
            "{names:?}"
        );
    }

    #[test]
    fn flap_expands_to_cycles() {
        let mut e = entry("flap");
        e.link = Some("tor0->agg1".into());
        e.direction = Some("forward".into());
        e.period = Some(TimeQ(100 * US));
        e.down_for = Some(TimeQ(10 * US));
        e.duration = Some(TimeQ(300 * US));
        let p = plan(vec![e]).unwrap();
        let downs: Vec<Time> = p
            .actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::Down { .. }))
            .map(|a| a.time)
            .collect();
        assert_eq!(downs, vec![0, 100 * US, 200 * US]);
    }

    #[test]
    fn bad_entries_name_the_field() {
        let mut e = entry("link_down");
        e.link = Some("tor0->tor1".into());
        assert_eq!(plan(vec![e]).unwrap_err().1.field, "link");
        assert_eq!(plan(vec![entry("explode")]).unwrap_err().1.field, "kind");
        let mut e = entry("drop");
        e.link = Some("tor0->agg1".into());
        e.probability = Some(2.0);
        assert_eq!(plan(vec![e]).unwrap_err().1.field, "probability");
        let mut e = entry("link_down");
        e.link = Some("tor0->agg1".into());
        e.loss = Some("loud".into());
        assert_eq!(plan(vec![e]).unwrap_err().1.field, "loss");
    }

    #[test]
    fn state_counts_reasons_and_flips() {
        let mut s = FaultState::new(FaultPlan::default(), 2, 1, 40 * US, Forwarding::default());
        let down = ActionKind::Down {
            loss: LossMode::Silent,
            data_only: false,
        };
        assert!(s.apply(&Action {
            time: 0,
            port: 1,
            kind: down
        }));
        assert!(!s.apply(&Action {
            time: 0,
            port: 1,
            kind: down
        }));
        assert!(!s.apply(&Action {
            time: 0,
            port: 1,
            kind: ActionKind::Up
        }));
        assert_eq!(s.on_wire(1, true, true), Verdict::Drop);
        assert_eq!(s.on_wire(0, true, true), Verdict::Pass);
        assert!(s.apply(&Action {
            time: 0,
            port: 1,
            kind: ActionKind::Up
        }));
        assert_eq!(s.on_wire(1, true, true), Verdict::Pass);
        let trim = ActionKind::Down {
            loss: LossMode::Trim,
            data_only: false,
        };
        s.apply(&Action {
            time: 0,
            port: 0,
            kind: trim,
        });
        assert_eq!(s.on_wire(0, true, true), Verdict::Trim);
        assert_eq!(s.on_wire(0, false, false), Verdict::Drop);
    }
}
