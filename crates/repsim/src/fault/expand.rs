//! `[[fault]]` entries expanded into primitive actions on egress ports.
use serde::{Deserialize, Serialize};

use super::{
    check_buffer_scale, check_probability, check_rate, htsim, select, Action, ActionKind,
    FaultPlan, LossMode,
};
use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};
use crate::net::Topology;
use crate::units::{RateQ, TimeQ};

/// `[[fault]]` in a scenario file.
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    /// `link_down`, `link_up`, `rate`, `drop`, `flap`, `switch_down`, `switch_up`,
    /// `random_cables`, `random_switches`, `random_tor_uplinks`, `first_tor_uplinks` (every ToR its first share of uplinks, as the REPS artifact fails them) or `file`.
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

/// A fault entry that cannot be expanded: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultError {
    /// Field name inside the entry (`link`, `percent`, ...).
    pub field: String,
    /// Message.
    pub message: String,
}

fn ferr<T>(field: &str, message: impl Into<String>) -> Result<T, FaultError> {
    Err(FaultError::new(field, message))
}

impl FaultError {
    /// The entry's `field` is wrong, and why.
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        FaultError {
            field: field.into(),
            message: message.into(),
        }
    }
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

/// The `[routing]` times a fault plan carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoutingTimes {
    /// Reconvergence delay (`None`: switches never update their ECMP groups).
    pub reconvergence: Option<Time>,
    /// Give-up delay (`None`: the larger of 100 x RTO and 10 ms).
    pub give_up_after: Option<Time>,
}

/// Expands `[[fault]]` entries into a plan. `load` reads a reference failure file given the
/// path written in the scenario. `seed` is the run's seed; `end` the simulated time limit.
pub fn build_plan(
    entries: &[FaultSection],
    routing: RoutingTimes,
    topo: &Topology,
    seed: u64,
    end: Time,
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Result<FaultPlan, (usize, FaultError)> {
    let mut plan = FaultPlan {
        reconvergence: routing.reconvergence,
        give_up_after: routing.give_up_after,
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
        check_probability(p)?;
        Ok(p)
    };
    let rate = |speed: u64| -> Result<Effect, FaultError> {
        check_rate(speed)?;
        e.buffer_scale.map_or(Ok(()), check_buffer_scale)?;
        Ok(Effect::Rate(speed, e.buffer_scale))
    };
    let effect = || -> Result<Effect, FaultError> {
        if e.probability.is_some() {
            Ok(Effect::Drop(probability()?))
        } else if let Some(s) = e.speed {
            rate(s.0)
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
            let effect = rate(speed.0)?;
            let ls = links(parse_both(&e.direction)?)?;
            push_effect(plan, topo, &ls, effect, timing, &mut rng);
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
        "random_cables" | "random_tor_uplinks" | "random_switches" | "first_tor_uplinks" => {
            let percent = required(e.percent, "percent", "10")?;
            if !(0.0..=100.0).contains(&percent) {
                return ferr("percent", format!("must be between 0 and 100, not {percent}"));
            }
            let cands = match e.kind.as_str() {
                "random_cables" => Candidates::Cables,
                "random_tor_uplinks" | "first_tor_uplinks" => Candidates::TorUplinks,
                _ => Candidates::Switches,
            };
            let both = parse_both(&e.direction)?;
            let sel = select::Selection {
                candidates: cands,
                count: if e.kind == "first_tor_uplinks" {
                    select::Count::FirstPerTor(percent)
                } else {
                    select::Count::Percent(percent)
                },
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
                     random_cables, random_switches, random_tor_uplinks, first_tor_uplinks, file"
                ),
            )
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    fn topo() -> Topology {
        super::super::test_topology()
    }

    fn entry(kind: &str) -> FaultSection {
        FaultSection {
            kind: kind.into(),
            ..Default::default()
        }
    }

    fn plan(e: Vec<FaultSection>) -> Result<FaultPlan, (usize, FaultError)> {
        build_plan(&e, RoutingTimes::default(), &topo(), 1, 1_000 * US, &|_| {
            Err("no files".into())
        })
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
        // A random fault's rate effect is checked as a `rate` fault's is.
        let mut e = entry("random_cables");
        e.percent = Some(10.0);
        e.speed = Some(RateQ(0));
        assert_eq!(plan(vec![e]).unwrap_err().1.field, "speed");
        let mut e = entry("random_cables");
        e.percent = Some(10.0);
        e.speed = Some(RateQ(100_000_000_000));
        e.buffer_scale = Some(f64::INFINITY);
        assert_eq!(plan(vec![e]).unwrap_err().1.field, "buffer_scale");
    }
}
