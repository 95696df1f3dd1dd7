//! `[workload]` and `[[class]]`: the flows a run offers and the traffic classes they belong to.
//!
//! ```toml
//! [workload]
//! type = "explicit"
//! flows = [
//!   { src = "0-3", dst = "8-11", size = "1MiB" },
//!   { id = 9, src = 4, dst = 12, size = "1MiB", after = [1, 2], delay = "2us", class = "background" },
//! ]
//!
//! [[class]]                # flows of a class use its load balancer / congestion control
//! name = "background"
//! lb = "ecmp"
//! ```
use serde::{Deserialize, Serialize};

use super::{LbEntry, LoadedScenario, ScenarioError};
use crate::cc::CcSpec;
use crate::net::Topology;
use crate::sim::TrafficClass;
use crate::units::{self, SizeQ, TimeQ};
use crate::workload::{self, cm::parse_matrix, FlowSpec, Trigger};

/// A `flows` entry of an explicit workload; `src`/`dst` may be a host or a range `"0-7"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    /// Id (single flows only; default: its position, counting from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// Source host or range.
    pub src: HostSet,
    /// Destination host or range (same length as `src`).
    pub dst: HostSet,
    /// Payload bytes per flow.
    pub size: SizeQ,
    /// Start time (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeQ>,
    /// Ids of flows that must finish first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u64>,
    /// How long after the last of `after` it starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<TimeQ>,
    /// A label carried into the outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<u64>,
    /// Traffic class (a `[[class]]` name; default: the run's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

/// A host id or an inclusive range written `"a-b"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum HostSet {
    /// One host.
    One(u32),
    /// A range such as `"0-7"`.
    Range(String),
}

impl HostSet {
    /// The hosts named, each below `limit` (the topology's host count, checked before a
    /// range is expanded so that `"0-1000000000"` is an error, not a billion-entry list).
    fn hosts(&self, limit: u32) -> Result<Vec<u32>, String> {
        let outside = |h: u32| format!("host {h} is outside the topology (hosts 0..{limit})");
        match self {
            HostSet::One(h) if *h >= limit => Err(outside(*h)),
            HostSet::One(h) => Ok(vec![*h]),
            HostSet::Range(s) => {
                let parse = |x: &str| {
                    x.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("'{s}' is not a host or a range like \"0-7\""))
                };
                match s.split_once('-') {
                    Some((a, b)) => {
                        let (a, b) = (parse(a)?, parse(b)?);
                        if b < a {
                            return Err(format!("range '{s}' is empty"));
                        }
                        if b >= limit {
                            return Err(outside(b));
                        }
                        Ok((a..=b).collect())
                    }
                    None => {
                        let h = parse(s)?;
                        if h >= limit {
                            return Err(outside(h));
                        }
                        Ok(vec![h])
                    }
                }
            }
        }
    }
}

/// `[workload]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    /// `explicit`, `permutation`, `tornado`, `incast`, `cm` or `trace`.
    #[serde(rename = "type")]
    pub kind: String,
    /// explicit: the flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<FlowEntry>>,
    /// permutation / tornado / incast: bytes per flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeQ>,
    /// permutation / tornado / incast: start time of every flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeQ>,
    /// incast: number of senders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// incast: the receiving host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    /// permutation / incast: seed of the choice (default: the scenario seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// cm: path of a reference connection matrix, relative to the scenario file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Mixed traffic: flows whose source host is a multiple of this go in class `background`
    /// (ECMP and exempt from adaptive routing, as the reference's `-mixed_lb_traffic`, unless a
    /// `[[class]]` of that name says otherwise; default: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecmp_every: Option<u32>,
    /// trace: flow-size CDF file, relative to the scenario file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    /// trace: offered load, a fraction of each host's link rate (of the network's capacity
    /// with `oversubscription`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// trace: the fabric's oversubscription; the hosts offer `load / oversubscription` of
    /// their link rate, as ConWeave defines network load (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// trace: `poisson` (default) or `back_to_back` (the REPS reference generator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// trace: `uniform` (default), `other_racks`, `partner` (the REPS reference generator's
    /// fixed partner per host, avoiding its rack, 5/101 of flows to a random host) or
    /// `all_pairs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destinations: Option<String>,
    /// trace: arrivals stop this long after `start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<TimeQ>,
    /// trace: at most this many flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// trace: only hosts `0..hosts` send and receive (default: every host). The REPS
    /// artifact's DC runs put 32-host traces on the 128-host tree (hosts 0-31, ToRs 0-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// collective: `ring_allreduce`, `reduce_scatter`, `all_gather`, `ring_reference`,
    /// `butterfly_allreduce`, `alltoall`, `ps_allreduce` or `allscatter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective: Option<String>,
    /// collective: number of ranks (default: every host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// collective: `rack_local` (default: ranks on consecutive hosts), `spread` (round robin
    /// over racks) or an explicit list of hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<toml::Value>,
    /// collective: runs back to back (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// collective: gap between iterations (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_gap: Option<TimeQ>,
    /// collective alltoall: connections a rank keeps open at once (default: all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// collective ring_reference: ranks per ring (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Split every flow into this many concurrent slices (Reunion's flow slicing); a flow
    /// completes with its last slice (default 1: no slicing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slices: Option<u32>,
}

/// The `[workload]` keys each type reads, besides `type`, `ecmp_every` and `slices`.
const WORKLOAD_KEYS: &[(&str, &[&str])] = &[
    ("explicit", &["flows"]),
    ("external", &[]),
    ("permutation", &["size", "start", "seed"]),
    ("tornado", &["size", "start"]),
    ("incast", &["senders", "receiver", "size", "start", "seed"]),
    ("cm", &["file"]),
    (
        "trace",
        &[
            "cdf",
            "load",
            "oversubscription",
            "arrivals",
            "destinations",
            "hosts",
            "duration",
            "count",
            "start",
            "seed",
        ],
    ),
    (
        "collective",
        &[
            "collective",
            "size",
            "ranks",
            "placement",
            "iterations",
            "compute_gap",
            "concurrency",
            "group",
            "start",
            "seed",
        ],
    ),
];

/// `[[class]]`: a traffic class.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSection {
    /// Its name (not `main`, which is the run's own class).
    pub name: String,
    /// Its load balancer (default: the run's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lb: Option<LbEntry>,
    /// Its congestion control (default: the run's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcSpec>,
    /// Switch schemes that reroute per packet (adaptive routing) hash this class's packets as
    /// ECMP does instead (the reference exempts its background flows so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub switch_exempt: bool,
}

/// Name of the class `ecmp_every` puts flows in.
const BACKGROUND: &str = "background";

impl LoadedScenario {
    /// Mixed traffic: `(n, class)` when flows from hosts that are multiples of n go in the
    /// background class (`ecmp_every`).
    pub(super) fn background_class(&self, classes: &[TrafficClass]) -> Option<(u32, u16)> {
        let n = self.scenario.workload.ecmp_every.filter(|&n| n > 0)?;
        let i = classes.iter().position(|c| c.name == BACKGROUND)?;
        Some((n, i as u16 + 1))
    }

    /// The traffic classes after the main one, in order: the `[[class]]` sections, plus
    /// `background` (ECMP) for `ecmp_every` if not declared.
    pub fn classes(&self) -> Result<Vec<TrafficClass>, ScenarioError> {
        let s = &self.scenario;
        let mut out: Vec<TrafficClass> = Vec::new();
        for (i, c) in s.class.iter().enumerate() {
            if c.name == "main" || out.iter().any(|o| o.name == c.name) {
                return Err(self.err(
                    &format!("class[{i}].name"),
                    format!(
                        "'{}' is taken (names are unique and 'main' is the run's own)",
                        c.name
                    ),
                ));
            }
            let lb = match &c.lb {
                Some(e) => {
                    let field = format!("class[{i}].lb");
                    let run = self.lb_entry(e, &field)?;
                    if run.switch.is_some() {
                        return Err(self.err(
                            &field,
                            "a traffic class picks only its sender scheme; the switch scheme \
                             belongs to the run (the main lb entry or [routing] switch)",
                        ));
                    }
                    Some(run.spec)
                }
                None => None,
            };
            if let Some(cc) = &c.cc {
                cc.validate(&self.scheme_context()?)
                    .map_err(|e| self.err(&format!("class[{i}].cc"), e))?;
            }
            out.push(TrafficClass {
                name: c.name.clone(),
                lb,
                cc: c.cc.clone(),
                switch_exempt: c.switch_exempt,
            });
        }
        if s.workload.ecmp_every.is_some() && !out.iter().any(|c| c.name == BACKGROUND) {
            out.push(TrafficClass {
                name: BACKGROUND.into(),
                lb: crate::lb::LbSpec::named("ecmp"),
                cc: None,
                switch_exempt: true,
            });
        }
        Ok(out)
    }

    /// The flows of the workload, for a topology and seed, with their classes resolved
    /// against `classes` (class numbers start at 1 after the main one).
    pub(super) fn flows(
        &self,
        topo: &Topology,
        seed: u64,
        classes: &[TrafficClass],
    ) -> Result<(Vec<FlowSpec>, Vec<Trigger>), ScenarioError> {
        let w = &self.scenario.workload;
        let hosts = topo.hosts;
        let size = |field: &str| -> Result<u64, ScenarioError> {
            let s = w
                .size
                .ok_or_else(|| self.err(field, "required, e.g. \"8MiB\""))?;
            match s.0 {
                units::Size::Bytes(0) => Err(self.err(field, "must be positive")),
                units::Size::Bytes(b) => Ok(b),
                units::Size::Packets(_) => {
                    Err(self.err(field, "give flow sizes in bytes (B, KiB, MiB...)"))
                }
            }
        };
        let class_of = |name: &str, field: &str| -> Result<u16, ScenarioError> {
            classes
                .iter()
                .position(|c| c.name == name)
                .map(|i| i as u16 + 1)
                .ok_or_else(|| {
                    let known: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
                    self.err(
                        field,
                        format!("no class named '{name}'; declared: {}", known.join(", ")),
                    )
                })
        };
        self.check_workload_keys()?;
        let start = w.start.map(|s| s.0).unwrap_or(0);
        let wseed = w.seed.unwrap_or(seed);
        let mut triggers = Vec::new();
        let mut flows = match w.kind.as_str() {
            "permutation" => workload::permutation(hosts, size("workload.size")?, start, wseed),
            "tornado" => workload::tornado(hosts, size("workload.size")?, start),
            "incast" => {
                let senders = w
                    .senders
                    .ok_or_else(|| self.err("workload.senders", "required for an incast"))?;
                let receiver = w.receiver.unwrap_or(0);
                if receiver >= hosts {
                    return Err(self.err(
                        "workload.receiver",
                        format!("host {receiver} does not exist (0..{hosts})"),
                    ));
                }
                if senders == 0 || senders >= hosts {
                    return Err(self.err("workload.senders", format!("must be in 1..{hosts}")));
                }
                workload::incast(
                    hosts,
                    senders,
                    receiver,
                    size("workload.size")?,
                    start,
                    wseed,
                )
            }
            "cm" => {
                let f = w
                    .file
                    .as_ref()
                    .ok_or_else(|| self.err("workload.file", "required for type = \"cm\""))?;
                let (path, text) = self
                    .read_relative(f)
                    .map_err(|e| self.err("workload.file", e))?;
                let m = parse_matrix(&text, hosts).map_err(|e| {
                    self.err("workload.file", format!("{}: {e}", path.display()))
                })?;
                triggers = m.triggers;
                m.flows
            }
            "trace" => Vec::new(),
            // The program driving the simulation adds the flows (`Simulation::add_flow`, the
            // Python package's `Simulation.inject`).
            "external" => Vec::new(),
            "collective" => self.collective(topo, wseed, size("workload.size")?, start)?,
            "explicit" => {
                let entries = w.flows.as_ref().ok_or_else(|| {
                    self.err("workload.flows", "required for type = \"explicit\"")
                })?;
                let mut flows = Vec::new();
                for (i, e) in entries.iter().enumerate() {
                    flows.extend(self.explicit_entry(i, e, hosts, flows.len(), &class_of)?);
                }
                flows
            }
            other => {
                return Err(self.err(
                    "workload.type",
                    format!(
                    "unknown type '{other}'; allowed: explicit, permutation, tornado, incast, cm, trace, collective, external"
                ),
                ))
            }
        };
        if flows.is_empty() && w.kind != "trace" && w.kind != "external" {
            return Err(self.err("workload", "no flows"));
        }
        if let Some(n) = w.ecmp_every {
            if n == 0 {
                return Err(self.err(
                    "workload.ecmp_every",
                    "must be positive (leave it out to turn mixed traffic off)",
                ));
            }
            let background = class_of(BACKGROUND, "workload.ecmp_every")?;
            for f in &mut flows {
                if f.src.is_multiple_of(n) {
                    f.class = background;
                }
            }
        }
        let flows = match w.slices {
            Some(0) => return Err(self.err("workload.slices", "must be at least 1")),
            Some(k) if k > 1 && w.kind == "trace" => {
                return Err(self.err(
                    "workload.slices",
                    "trace flows are generated while the run goes and cannot be sliced yet",
                ))
            }
            Some(k) => workload::slice(flows, k).map_err(|e| self.err("workload.slices", e))?,
            None => flows,
        };
        Ok((flows, triggers))
    }

    /// Refuses keys the workload's type does not read (they would sit in the resolved
    /// scenario looking as if they had an effect).
    fn check_workload_keys(&self) -> Result<(), ScenarioError> {
        let w = &self.scenario.workload;
        let Some(uses) = WORKLOAD_KEYS
            .iter()
            .find(|(kind, _)| *kind == w.kind)
            .map(|(_, keys)| *keys)
        else {
            return Ok(()); // an unknown type is refused with the list of types
        };
        let given = toml::Value::try_from(w).map_err(|e| self.err("workload", e.to_string()))?;
        let Some(given) = given.as_table() else {
            return Ok(());
        };
        for key in given.keys() {
            let every_type = ["type", "ecmp_every", "slices"].contains(&key.as_str());
            if !every_type && !uses.contains(&key.as_str()) {
                return Err(self.err(
                    &format!("workload.{key}"),
                    format!(
                        "type = \"{}\" does not use it; it reads {} (and every type: ecmp_every, slices)",
                        w.kind,
                        uses.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The flows of entry `i` of an explicit workload (`before` flows came earlier).
    fn explicit_entry(
        &self,
        i: usize,
        e: &FlowEntry,
        hosts: u32,
        before: usize,
        class_of: &dyn Fn(&str, &str) -> Result<u16, ScenarioError>,
    ) -> Result<Vec<FlowSpec>, ScenarioError> {
        let f = |n: &str| format!("workload.flows[{i}].{n}");
        let srcs = e.src.hosts(hosts).map_err(|m| self.err(&f("src"), m))?;
        let dsts = e.dst.hosts(hosts).map_err(|m| self.err(&f("dst"), m))?;
        if srcs.len() != dsts.len() {
            return Err(self.err(
                &f("dst"),
                format!("{} sources but {} destinations", srcs.len(), dsts.len()),
            ));
        }
        if e.id.is_some() && srcs.len() > 1 {
            return Err(self.err(&f("id"), "an id names one flow; this entry makes several"));
        }
        let bytes = match e.size.0 {
            units::Size::Bytes(b) if b > 0 => b,
            _ => return Err(self.err(&f("size"), "must be a positive number of bytes")),
        };
        let class = match &e.class {
            Some(name) => class_of(name, &f("class"))?,
            None => 0,
        };
        let mut out = Vec::with_capacity(srcs.len());
        for (s, d) in srcs.into_iter().zip(dsts) {
            if s >= hosts || d >= hosts {
                return Err(self.err(
                    &f("src"),
                    format!("host {} does not exist (0..{hosts})", s.max(d)),
                ));
            }
            if s == d {
                return Err(self.err(&f("dst"), format!("host {s} would send to itself")));
            }
            let id = e.id.unwrap_or((before + out.len()) as u64 + 1);
            let mut spec = FlowSpec::new(id, s, d, bytes, e.start.map(|t| t.0).unwrap_or(0));
            spec.after = e.after.clone();
            spec.delay = e.delay.map(|t| t.0).unwrap_or(0);
            spec.tag = e.tag.unwrap_or(0);
            spec.class = class;
            out.push(spec);
        }
        Ok(out)
    }
}
