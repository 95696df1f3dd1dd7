//! Import of the reference simulator's failure files (`data/htsim/failures/*.txt`).
//!
//! The reference fails elements lazily (the next element a packet touches after the start time)
//! from a non-reproducible random source; here the same amounts are chosen up front with the
//! fault's seeded stream. Mapping (see also docs/for-htsim-and-ns3-users.md):
//!
//! | reference keys | fault timeline |
//! |---|---|
//! | `Cable-Fail`, `-Max-Percent f`, `-Start-After t0`, `-Period T`, `-Duration(-Time) d` | ToR uplinks (ToR -> Agg direction, like the reference's candidate pipes; `Only-US-CS-Cable: ON`: Agg -> Core cables); f = 1 means exactly one cable; otherwise, as the reference counts: every ToR's first round(f x uplinks) uplinks when that is at least one (its fat-tree builder's list), else floor(f x N) + 1 seeded-random uplinks with N the cables on host paths, host cables included (its generator's rule, see [`Count::ReferenceShare`]); the i-th cable fails at t0 + i T, for d if `Duration: ON` (else until the end) |
//! | `Switch-Fail` (same keys) | Agg and Core switches, every link in and out of the switch down; floor(f x N) + 1 of them with N half the switches, ToRs included (f = 1: one). The reference's builder first draws each Agg/Core switch with probability f from its own stream (not modelled: at the artifact's seed 42 on the 32-host tree it drew none) |
//! | `Cable-Degradation` (`-Max-Percent`) | chosen ToR uplinks drop each packet with probability 0.33 (90 % of them), 0.66 (9 %) or 1 (1 %) |
//! | `Switch-Degradation` (`-Percent p`) | chosen switches: rate / (p x 100) and 10 % drops on every link of the switch |
//! | `Cable-BER` / `Switch-BER` (`-Max-Percent f`) | every ToR uplink (cable) / every link out of an Agg or Core switch drops packets with probability f |
//! | `*-Periodic-Packet-Loss` (`-PktNr n`, `-Drop-Period d`) | d < 1000: drop probability n / (n + d) on the chosen element; otherwise d is read as picoseconds: the element flaps, down for n MTU serialization times every d |
//! | `Random-Packet-Drop-Rate r` | every link drops with probability 10^-r |
//! | `Stop-Failures-After t` | every fault ends at t |
//! | `NIC-*`, `Cable-Fail-Percent-Per-Switch` | not modelled (noted and ignored) |
use std::collections::BTreeMap;

use super::select::{self, choose, Count, Selection};
use super::{push_effect, push_flap, Candidates, Effect, FaultPlan, LossMode, Timing};
use crate::engine::time::serialization;
use crate::engine::{Rng, Time};
use crate::net::Topology;

/// A parsed failure file: key -> value (keys in sorted order; a repeated key keeps its last
/// value).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureFile {
    /// The `Key: value` pairs.
    pub keys: BTreeMap<String, String>,
}

impl FailureFile {
    fn on(&self, key: &str) -> bool {
        self.keys
            .get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("on"))
    }
    fn num(&self, key: &str, default: f64) -> f64 {
        self.keys
            .get(key)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(default)
    }
}

const KNOWN_PREFIXES: &[&str] = &[
    "Switch-Fail",
    "Cable-Fail",
    "Switch-BER",
    "Cable-BER",
    "Switch-Degradation",
    "Cable-Degradation",
    "Switch-Periodic-Packet-Loss",
    "Cable-Periodic-Packet-Loss",
    "NIC-Fail",
    "NIC-Degradation",
    "Random-Packet-Drop",
    "Stop-Failures-After",
    "Only-US-CS-Cable",
];

/// Parses `Key: value` lines; parsing stops at the first line without two tokens (as in the
/// reference). Numeric values must parse.
pub fn parse(text: &str) -> Result<FailureFile, String> {
    let mut f = FailureFile::default();
    for (i, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.len() != 2 {
            break;
        }
        let key = toks[0].trim_end_matches(':').to_string();
        let value = toks[1].to_string();
        if !value.eq_ignore_ascii_case("on")
            && !value.eq_ignore_ascii_case("off")
            && value.parse::<f64>().is_err()
        {
            return Err(format!(
                "line {}: '{value}' is neither ON/OFF nor a number",
                i + 1
            ));
        }
        f.keys.insert(key, value);
    }
    if f.keys.is_empty() {
        return Err("no 'Key: value' lines".into());
    }
    Ok(f)
}

/// How many elements the reference fails for a group's `-Max-Percent` `max` (a share, 0-1).
///
/// 1 means exactly one element. Otherwise, for failed cables on ToR uplinks, the reference's
/// fat-tree builder lists every ToR's first round(max x uplinks) uplinks when that is at least
/// one for some ToR, and only those fail ([`Count::FirstPerTor`]); else (and for every other
/// group) its generator fails elements as packets touch them until the failed share exceeds
/// `max` ([`Count::ReferenceShare`]).
fn count(topo: &Topology, max: f64, listed_uplinks: bool) -> Count {
    if max >= 1.0 {
        return Count::Exactly(1);
    }
    if listed_uplinks {
        let ups = super::cable_candidates(topo, Candidates::TorUplinks);
        if select::group_by_tor(topo, ups.iter().map(|&(up, _)| up))
            .iter()
            .any(|g| (max * g.len() as f64).round() >= 1.0)
        {
            return Count::FirstPerTor(max * 100.0);
        }
    }
    Count::ReferenceShare(max)
}

/// Adds the faults a failure file describes to `plan`.
pub fn apply(
    plan: &mut FaultPlan,
    topo: &Topology,
    f: &FailureFile,
    loss: LossMode,
    end: Time,
    rng: &mut Rng,
) {
    for k in f.keys.keys() {
        if !KNOWN_PREFIXES.iter().any(|p| k.starts_with(p)) {
            plan.notes
                .push(format!("failure file key '{k}' is unknown and ignored"));
        }
    }
    let stop = f
        .keys
        .get("Stop-Failures-After")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|t| t as Time);
    let has_core = topo.switches.iter().any(|s| s.level == 3);
    let cables = if f.on("Only-US-CS-Cable") {
        if has_core {
            Candidates::AggCoreCables
        } else {
            plan.notes.push(
                "Only-US-CS-Cable: this topology has no core tier; ToR uplinks are used".into(),
            );
            Candidates::TorUplinks
        }
    } else {
        Candidates::TorUplinks
    };
    let timing = |g: &str| {
        let start = f.num(&format!("{g}-Start-After"), 0.0) as Time;
        let mut end = if f.on(&format!("{g}-Duration")) {
            Some(start + f.num(&format!("{g}-Duration-Time"), 0.0) as Time)
        } else {
            None
        };
        if let Some(s) = stop {
            end = Some(end.map_or(s, |e| e.min(s)));
        }
        Timing {
            start,
            end,
            loss,
            data_only: false,
        }
    };
    let period = |g: &str| {
        let p = f.num(&format!("{g}-Period"), 0.0);
        // "1e18 ps" means "never again"; one element at most is then chosen anyway.
        if p >= 1e15 {
            0
        } else {
            p as Time
        }
    };
    let select = |plan: &mut FaultPlan,
                  g: &str,
                  cands: Candidates,
                  effect: Effect,
                  default_pct: f64,
                  rng: &mut Rng| {
        let listed = g == "Cable-Fail" && cands == Candidates::TorUplinks;
        let sel = Selection {
            candidates: cands,
            count: count(
                topo,
                f.num(&format!("{g}-Max-Percent"), default_pct),
                listed,
            ),
            both_directions: false,
            effect,
            timing: timing(g),
            stagger: period(g),
            keep_connected: true,
        };
        select::apply(plan, topo, &sel, rng, g);
    };
    if f.on("Cable-Fail") {
        if f.on("Cable-Fail-Percent-Per-Switch") {
            plan.notes.push("Cable-Fail-Percent-Per-Switch is not modelled: the percentage applies to all cables".into());
        }
        select(plan, "Cable-Fail", cables, Effect::Down, 0.0, rng);
    }
    if f.on("Switch-Fail") {
        select(
            plan,
            "Switch-Fail",
            Candidates::Switches,
            Effect::Down,
            0.0,
            rng,
        );
    }
    if f.on("Cable-Degradation") {
        select(
            plan,
            "Cable-Degradation",
            cables,
            Effect::DegradeMix,
            1.0,
            rng,
        );
    }
    if f.on("Switch-Degradation") {
        let div = (f.num("Switch-Degradation-Percent", 0.1) * 100.0).max(1.0);
        select(
            plan,
            "Switch-Degradation",
            Candidates::Switches,
            Effect::SwitchDegrade {
                div,
                probability: 0.1,
            },
            1.0,
            rng,
        );
    }
    for (g, cands) in [("Cable-BER", cables), ("Switch-BER", Candidates::Switches)] {
        if !f.on(g) {
            continue;
        }
        let p = f.num(&format!("{g}-Max-Percent"), 1.0).min(1.0);
        let ports: Vec<u32> = if cands == Candidates::Switches {
            (0..topo.links.len() as u32)
                .filter(|&l| topo.level(topo.links[l as usize].from) >= 2)
                .collect()
        } else {
            super::cable_candidates(topo, cands)
                .into_iter()
                .map(|(up, _)| up)
                .collect()
        };
        push_effect(plan, topo, &ports, Effect::Drop(p), timing(g), rng);
        plan.chosen.push(format!(
            "{g}: drop probability {p} on {} links",
            ports.len()
        ));
    }
    for (g, cands) in [
        ("Cable-Periodic-Packet-Loss", cables),
        ("Switch-Periodic-Packet-Loss", Candidates::Switches),
    ] {
        if !f.on(g) {
            continue;
        }
        let n = f.num(&format!("{g}-PktNr"), 1.0).max(1.0);
        let d = f.num(&format!("{g}-Drop-Period"), 10.0).max(0.0);
        if d < 1000.0 {
            select(plan, g, cands, Effect::Drop(n / (n + d)), 1.0, rng);
            continue;
        }
        let sel = Selection {
            candidates: cands,
            count: count(topo, f.num(&format!("{g}-Max-Percent"), 1.0), false),
            both_directions: false,
            effect: Effect::Down,
            timing: timing(g),
            stagger: 0,
            keep_connected: false,
        };
        for (name, ports) in choose(topo, &sel, rng, &mut plan.notes) {
            let rate = topo.links[ports[0] as usize].rate_bps;
            let down = (n as Time * serialization(4150, rate)).max(1);
            push_flap(plan, topo, &ports, sel.timing, (d as Time, down), end, rng);
            plan.chosen
                .push(format!("{g}: {name} (down {down} ps every {d} ps)"));
        }
    }
    if f.on("Random-Packet-Drop") {
        let r = f.num("Random-Packet-Drop-Rate", 4.0);
        let p = 10f64.powf(-r);
        let ports: Vec<u32> = (0..topo.links.len() as u32).collect();
        push_effect(
            plan,
            topo,
            &ports,
            Effect::Drop(p),
            Timing {
                start: 0,
                end: stop,
                loss,
                data_only: false,
            },
            rng,
        );
        plan.chosen
            .push(format!("Random-Packet-Drop: probability {p} on every link"));
    }
    for g in ["NIC-Fail", "NIC-Degradation"] {
        if f.on(g) {
            plan.notes.push(format!("{g} is not modelled and ignored"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;
    use crate::engine::time::US;
    use crate::fault::ActionKind;

    fn topo() -> Topology {
        crate::fault::test_topology()
    }

    fn load(name: &str) -> FailureFile {
        let path = format!(
            "{}/../../data/htsim/failures/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        parse(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn plan(name: &str, seed: u64) -> FaultPlan {
        let mut p = FaultPlan::default();
        apply(
            &mut p,
            &topo(),
            &load(name),
            LossMode::Silent,
            1_000 * US,
            &mut Rng::derive(seed, Stream::Fault, 0),
        );
        p.sort();
        p
    }

    #[test]
    fn cable_percentages() {
        // 32 ToR uplinks (4 per ToR) and 64 cables in the 32-host tree. 10 %: round(0.4) = 0
        // per ToR, so the generator's rule, floor(0.1 x 64) + 1 = 7.
        let p = plan("10_percent_failed_cables.txt", 1);
        assert_eq!(p.chosen.len(), 7, "{:?}", p.chosen);
        assert!(p
            .actions
            .iter()
            .all(|a| matches!(a.kind, ActionKind::Down { .. }) && a.time == 0));
        // 50 %: the builder's list, the first 2 uplinks of every ToR (whatever the seed).
        let half = plan("50_percent_failed_cables.txt", 1);
        assert_eq!(half.chosen.len(), 16);
        assert_eq!(half, plan("50_percent_failed_cables.txt", 9));
        assert_eq!(plan("5_percent_failed_cables.txt", 1).chosen.len(), 4);
        assert_eq!(plan("5_percent_failed_switches.txt", 1).chosen.len(), 1);
        assert_eq!(plan("fail_one_cable.txt", 1).chosen.len(), 1);
        assert_eq!(
            plan("10_percent_failed_cables.txt", 1),
            plan("10_percent_failed_cables.txt", 1)
        );
    }

    #[test]
    fn switches_durations_degradation_flapping() {
        let p = plan("fail_one_switch_after_10us_for_100us.txt", 1);
        assert_eq!(p.chosen.len(), 1);
        assert_eq!(p.actions.first().unwrap().time, 10 * US);
        assert_eq!(p.actions.last().unwrap().time, 110 * US);
        let p = plan("10_percent_failed_switches.txt", 3);
        assert!(p.chosen.iter().all(|c| c.contains("agg")), "{:?}", p.chosen);
        let p = plan("degrade_one_cable.txt", 1);
        assert!(
            matches!(p.actions[0].kind, ActionKind::Drop { probability, .. } if probability > 0.3)
        );
        let p = plan("one_cable_drops_every_10th_packet.txt", 1);
        assert!(
            matches!(p.actions[0].kind, ActionKind::Drop { probability, .. } if (probability - 1.0 / 11.0).abs() < 1e-9)
        );
        let p = plan("fail_new_cable_every_100us_for_50us.txt", 1);
        assert_eq!(p.chosen.len(), 1);
        let p = plan("periodically_fail_one_cable.txt", 1);
        let downs = p
            .actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::Down { .. }))
            .count();
        assert_eq!(downs, 18, "100us..1000us every 50us");
    }

    #[test]
    fn every_shipped_file_parses() {
        let dir = format!("{}/../../data/htsim/failures", env!("CARGO_MANIFEST_DIR"));
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let f = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut p = FaultPlan::default();
            apply(
                &mut p,
                &topo(),
                &f,
                LossMode::Silent,
                1_000 * US,
                &mut Rng::new(1),
            );
        }
    }
}
