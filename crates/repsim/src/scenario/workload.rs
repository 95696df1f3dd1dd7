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
//!
//! Several workloads run side by side as `[[workload]]` entries, each with its own type,
//! hosts, start and `label`; the label names each flow's workload in the outputs:
//!
//! ```toml
//! [[workload]]
//! label = "incast"
//! type = "explicit"
//! flows = [{ src = "8-23", dst = 0, size = "256KiB", start = "20us" }]
//!
//! [[workload]]
//! label = "background"
//! type = "permutation"
//! size = "1MiB"
//! ```
use serde::de::{self, Deserializer, MapAccess, SeqAccess};
use serde::{Deserialize, Serialize};

use super::{FlowEntry, LbEntry, LoadedScenario, ScenarioError};
use crate::cc::CcSpec;
use crate::engine::rng::{Rng, Stream};
use crate::net::Topology;
use crate::sim::TrafficClass;
use crate::units::{self, SizeQ, TimeQ};
use crate::workload::{self, cm::parse_matrix, FlowSpec, Trigger};

/// The scenario's traffic: `[workload]` (one table) or `[[workload]]` (several entries, run
/// side by side; a scenario file writes back in the form it was read in).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Workloads {
    /// `[workload]` (boxed: the section is large beside the array's pointer).
    One(Box<WorkloadSection>),
    /// `[[workload]]`.
    Many(Vec<WorkloadSection>),
}

impl<'de> Deserialize<'de> for Workloads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Dispatching on the value's shape, rather than trying each variant, keeps the
        // section's own errors (and their positions in the file).
        struct Shape;
        impl<'de> de::Visitor<'de> for Shape {
            type Value = Workloads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a [workload] table or [[workload]] entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Workloads, A::Error> {
                WorkloadSection::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|w| Workloads::One(Box::new(w)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Workloads, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Workloads::Many)
            }
        }
        d.deserialize_any(Shape)
    }
}

impl Workloads {
    /// The workload sections, in the file's order.
    pub fn sections(&self) -> &[WorkloadSection] {
        match self {
            Workloads::One(w) => std::slice::from_ref(&**w),
            Workloads::Many(ws) => ws,
        }
    }

    /// Whether some workload is of type `kind`.
    pub fn any_is(&self, kind: &str) -> bool {
        self.sections().iter().any(|w| w.kind == kind)
    }

    /// Whether every workload is of type `kind`.
    pub fn all_are(&self, kind: &str) -> bool {
        self.sections().iter().all(|w| w.kind == kind)
    }

    /// The workloads' labels when the outputs name each flow's workload (some workload has a
    /// label, or there are several); empty otherwise. An unlabelled entry is called by its
    /// position, `workload[i]`.
    pub fn labels(&self) -> Vec<String> {
        let ws = self.sections();
        if ws.len() < 2 && ws.iter().all(|w| w.label.is_none()) {
            return Vec::new();
        }
        ws.iter()
            .enumerate()
            .map(|(i, w)| w.label.clone().unwrap_or_else(|| self.field(i).to_string()))
            .collect()
    }

    /// How errors name workload `i`'s fields: `workload` or `workload[i]`.
    pub fn field(&self, i: usize) -> String {
        match self {
            Workloads::One(_) => "workload".into(),
            Workloads::Many(_) => format!("workload[{i}]"),
        }
    }
}

/// `[workload]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    /// Names this workload's flows in the outputs (`flows.csv`'s `workload` column, the
    /// summary's `workloads`); unique among the scenario's workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
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
    /// permutation / incast / trace / collective: seed of the random choices (default: the
    /// scenario seed for the first workload, a seed drawn from it for each later one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// cm: path of a reference connection matrix, relative to the scenario file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// cm: how the matrix's triggers reach other hosts: `"instant"` (default, as htsim's)
    /// or `"notice"` (one crossing of the fabric, so that a split over threads need not keep
    /// the hosts a trigger joins together).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub triggers: Option<String>,
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

/// The workload types.
const WORKLOAD_TYPES: &[&str] = &[
    "explicit",
    "permutation",
    "tornado",
    "incast",
    "cm",
    "trace",
    "collective",
    "external",
];

/// The `[workload]` keys each type reads, besides `label`, `type`, `ecmp_every` and `slices`.
const WORKLOAD_KEYS: &[(&str, &[&str])] = &[
    ("explicit", &["flows"]),
    ("external", &[]),
    ("permutation", &["size", "start", "seed"]),
    ("tornado", &["size", "start"]),
    ("incast", &["senders", "receiver", "size", "start", "seed"]),
    ("cm", &["file", "triggers"]),
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

/// The seed of workload `i` that gives none: the scenario's for the first (so a scenario with
/// one workload draws as it always has), one drawn from it for each later workload (so two
/// permutations side by side differ).
pub(super) fn workload_seed(seed: u64, i: usize) -> u64 {
    if i == 0 {
        seed
    } else {
        Rng::derive(seed, Stream::Workload, WORKLOAD_SEEDS + i as u64).next_u64()
    }
}

/// Where the stream ids of later workloads' seeds start (apart from the generators' own).
const WORKLOAD_SEEDS: u64 = 1 << 32;

/// Moves a workload's flow and trigger ids past those of the workloads before it.
fn renumber(flows: &mut [FlowSpec], triggers: &mut [Trigger], ids: u64, trigger_ids: u64) {
    for f in flows {
        f.id += ids;
        for a in &mut f.after {
            *a += ids;
        }
        if let Some(p) = &mut f.slice_of {
            *p += ids;
        }
        if let Some(t) = &mut f.trigger {
            *t += trigger_ids;
        }
        if let Some(t) = &mut f.fires {
            *t += trigger_ids;
        }
    }
    for t in triggers {
        t.id += trigger_ids;
    }
}

impl LoadedScenario {
    /// Mixed traffic of workload `w`: `(n, class)` when its flows from hosts that are
    /// multiples of n go in the background class (`ecmp_every`).
    pub(super) fn background_class(
        w: &WorkloadSection,
        classes: &[TrafficClass],
    ) -> Option<(u32, u16)> {
        let n = w.ecmp_every.filter(|&n| n > 0)?;
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
                    .map_err(|e| self.err(&format!("class[{i}].cc.{}", e.field), e.message))?;
            }
            out.push(TrafficClass {
                name: c.name.clone(),
                lb,
                cc: c.cc.clone(),
                switch_exempt: c.switch_exempt,
            });
        }
        let mixed = s.workload.sections().iter().any(|w| w.ecmp_every.is_some());
        if mixed && !out.iter().any(|c| c.name == BACKGROUND) {
            out.push(TrafficClass {
                name: BACKGROUND.into(),
                lb: crate::lb::LbSpec::named("ecmp"),
                cc: None,
                switch_exempt: true,
            });
        }
        Ok(out)
    }

    /// The flows of every workload, for a topology and seed, with their classes resolved
    /// against `classes` (class numbers start at 1 after the main one). The first workload's
    /// flows keep their ids; each later one's ids (and trigger ids) count on past the largest
    /// before it, so that ids stay unique in the run.
    pub(super) fn flows(
        &self,
        topo: &Topology,
        seed: u64,
        classes: &[TrafficClass],
    ) -> Result<(Vec<FlowSpec>, Vec<Trigger>), ScenarioError> {
        let workloads = &self.scenario.workload;
        self.check_labels()?;
        let mut flows = Vec::new();
        let mut triggers = Vec::new();
        let mut errors = Vec::new();
        for (i, w) in workloads.sections().iter().enumerate() {
            let at = workloads.field(i);
            let wseed = w.seed.unwrap_or_else(|| workload_seed(seed, i));
            // Each workload is checked whatever the others hold: all their problems at once.
            let (mut more, mut more_triggers) =
                match self.workload_flows(w, &at, topo, wseed, classes) {
                    Ok(made) => made,
                    Err(e) => {
                        errors.push(e);
                        continue;
                    }
                };
            let ids = flows.iter().map(|f: &FlowSpec| f.id).max().unwrap_or(0);
            let trigger_ids = triggers.iter().map(|t: &Trigger| t.id).max().unwrap_or(0);
            if i > 0 {
                renumber(&mut more, &mut more_triggers, ids, trigger_ids);
            }
            for f in &mut more {
                f.workload = i as u16;
            }
            flows.append(&mut more);
            triggers.append(&mut more_triggers);
        }
        match ScenarioError::combine(errors) {
            Some(e) => Err(e),
            None => Ok((flows, triggers)),
        }
    }

    /// Refuses repeated labels, more workloads than flows can name, and more than one trace
    /// (a trace numbers its flows as they arrive, past every listed flow).
    fn check_labels(&self) -> Result<(), ScenarioError> {
        let workloads = &self.scenario.workload;
        let sections = workloads.sections();
        if sections.is_empty() {
            return Err(self.err("workload", "give at least one [[workload]] entry"));
        }
        if sections.len() > u16::MAX as usize {
            return Err(self.err("workload", "too many workloads"));
        }
        let labels = workloads.labels();
        for (i, label) in labels.iter().enumerate() {
            if labels[..i].contains(label) {
                return Err(self.err(
                    &format!("{}.label", workloads.field(i)),
                    format!("'{label}' is taken: each workload's label is unique"),
                ));
            }
        }
        if let Some(second) = sections
            .iter()
            .enumerate()
            .filter(|(_, w)| w.kind == "trace")
            .nth(1)
        {
            return Err(self.err(
                &format!("{}.type", workloads.field(second.0)),
                "a scenario holds at most one trace workload",
            ));
        }
        Ok(())
    }

    /// The flows of one workload, `at` naming its fields in errors, drawn with `wseed`.
    fn workload_flows(
        &self,
        w: &WorkloadSection,
        at: &str,
        topo: &Topology,
        wseed: u64,
        classes: &[TrafficClass],
    ) -> Result<(Vec<FlowSpec>, Vec<Trigger>), ScenarioError> {
        let hosts = topo.hosts;
        let field = |name: &str| format!("{at}.{name}");
        let size = || -> Result<u64, ScenarioError> {
            let s = w
                .size
                .ok_or_else(|| self.err(&field("size"), "required, e.g. \"8MiB\""))?;
            match s.0 {
                units::Size::Bytes(0) => Err(self.err(&field("size"), "must be positive")),
                units::Size::Bytes(b) => Ok(b),
                units::Size::Packets(_) => {
                    Err(self.err(&field("size"), "give flow sizes in bytes (B, KiB, MiB...)"))
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
        self.check_workload_keys(w, at)?;
        let start = w.start.map(|s| s.0).unwrap_or(0);
        let mut triggers = Vec::new();
        let mut flows = match w.kind.as_str() {
            "permutation" => workload::permutation(hosts, size()?, start, wseed),
            "tornado" => workload::tornado(hosts, size()?, start),
            "incast" => {
                let senders = w
                    .senders
                    .ok_or_else(|| self.err(&field("senders"), "required for an incast"))?;
                let receiver = w.receiver.unwrap_or(0);
                if receiver >= hosts {
                    return Err(self.err(
                        &field("receiver"),
                        format!("host {receiver} does not exist (0..{hosts})"),
                    ));
                }
                if senders == 0 || senders >= hosts {
                    return Err(self.err(&field("senders"), format!("must be in 1..{hosts}")));
                }
                workload::incast(hosts, senders, receiver, size()?, start, wseed)
            }
            "cm" => {
                let f = w
                    .file
                    .as_ref()
                    .ok_or_else(|| self.err(&field("file"), "required for type = \"cm\""))?;
                let (path, text) = self
                    .read_relative(f)
                    .map_err(|e| self.err(&field("file"), e))?;
                let m = parse_matrix(&text, hosts)
                    .map_err(|e| self.err(&field("file"), format!("{}: {e}", path.display())))?;
                let notice = match w.triggers.as_deref() {
                    None | Some("instant") => false,
                    Some("notice") => true,
                    Some(other) => {
                        return Err(self.err(
                            &field("triggers"),
                            format!("unknown '{other}'; allowed: instant, notice"),
                        ))
                    }
                };
                triggers = m.triggers;
                for t in &mut triggers {
                    t.notice = notice;
                }
                m.flows
            }
            "trace" => Vec::new(),
            // The program driving the simulation adds the flows (`Simulation::add_flow`, the
            // Python package's `Simulation.inject`).
            "external" => Vec::new(),
            "collective" => self.collective(w, at, topo, wseed, size()?, start)?,
            "explicit" => {
                let entries = w
                    .flows
                    .as_ref()
                    .ok_or_else(|| self.err(&field("flows"), "required for type = \"explicit\""))?;
                let mut flows = Vec::new();
                let mut errors = Vec::new();
                for (i, e) in entries.iter().enumerate() {
                    match self.explicit_entry(at, i, e, hosts, flows.len(), &class_of) {
                        Ok(made) => flows.extend(made),
                        Err(e) => errors.push(e),
                    }
                }
                if let Some(e) = ScenarioError::combine(errors) {
                    return Err(e);
                }
                flows
            }
            other => {
                return Err(self.err(
                    &field("type"),
                    format!(
                        "unknown type '{other}'{}; allowed: {}",
                        crate::engine::registry::suggestion(other, WORKLOAD_TYPES.iter().copied()),
                        WORKLOAD_TYPES.join(", ")
                    ),
                ))
            }
        };
        if flows.is_empty() && w.kind != "trace" && w.kind != "external" {
            return Err(self.err(at, "no flows"));
        }
        if let Some(n) = w.ecmp_every {
            if n == 0 {
                return Err(self.err(
                    &field("ecmp_every"),
                    "must be positive (leave it out to turn mixed traffic off)",
                ));
            }
            let background = class_of(BACKGROUND, &field("ecmp_every"))?;
            for f in &mut flows {
                if f.src.is_multiple_of(n) {
                    f.class = background;
                }
            }
        }
        let flows = match w.slices {
            Some(0) => return Err(self.err(&field("slices"), "must be at least 1")),
            Some(k) if k > 1 && w.kind == "trace" => {
                return Err(self.err(
                    &field("slices"),
                    "trace flows are generated while the run goes and cannot be sliced yet",
                ))
            }
            Some(k) => workload::slice(flows, k).map_err(|e| self.err(&field("slices"), e))?,
            None => flows,
        };
        Ok((flows, triggers))
    }

    /// Refuses keys the workload's type does not read (they would sit in the resolved
    /// scenario looking as if they had an effect).
    fn check_workload_keys(&self, w: &WorkloadSection, at: &str) -> Result<(), ScenarioError> {
        let Some(uses) = WORKLOAD_KEYS
            .iter()
            .find(|(kind, _)| *kind == w.kind)
            .map(|(_, keys)| *keys)
        else {
            return Ok(()); // an unknown type is refused with the list of types
        };
        let given = toml::Value::try_from(w).map_err(|e| self.err(at, e.to_string()))?;
        let Some(given) = given.as_table() else {
            return Ok(());
        };
        for key in given.keys() {
            let every_type = ["label", "type", "ecmp_every", "slices"].contains(&key.as_str());
            if !every_type && !uses.contains(&key.as_str()) {
                return Err(self.err(
                    &format!("{at}.{key}"),
                    format!(
                        "type = \"{}\" does not use it; it reads {} (and every type: label, ecmp_every, slices)",
                        w.kind,
                        uses.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}
