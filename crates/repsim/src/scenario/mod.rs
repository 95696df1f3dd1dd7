//! Scenario files (TOML): a whole experiment in one readable file.
//!
//! ```toml
//! name = "reps-micro-symmetric"
//! seed = 5
//! end = "90ms"
//! lb = ["reps", "ops", "ecmp"]
//!
//! [topology]
//! type = "fat_tree"          # or "topo_file" with file = "data/htsim/topologies/x.topo"
//! tiers = 2
//! hosts = 128
//! hosts_per_tor = 8
//! link_speed = "400Gbps"
//! link_latency = "1us"
//!
//! [queue]
//! size = "100pkt"
//! ecn_min = "20pkt"
//! ecn_max = "80pkt"
//! trimming = true
//!
//! [workload]
//! type = "explicit"
//! flows = [{ src = "0-7", dst = "64-71", size = "16MiB", start = "0us" }]
//! ```
//!
//! Every field is checked; an error names the file, the field and what is allowed.
pub mod collect;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cc::mprdma::MprdmaConfig;
use crate::cc::CcSpec;
use crate::engine::time::{MS, US};
use crate::lb::reps::ExploreMode;
use crate::lb::LbSpec;
use crate::net::port::QueueConfig;
use crate::net::topology::topo_file::parse_topo;
use crate::net::{FatTreeSpec, Topology};
use crate::routing::SwitchSpec;
use crate::sim::{RunSpec, SimConfig, TrafficClass};
use crate::transport::{AckPolicy, TransportConfig};
use crate::units::{self, RateQ, SizeQ, TimeQ};
use crate::workload::{self, cm::parse_cm, FlowSpec};

/// A scenario problem, with the file and field it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct ScenarioError {
    /// The scenario file.
    pub file: String,
    /// Dotted path of the field (`topology.hosts`), or `-` for the whole file.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// One or several names (`lb = "reps"` or `lb = ["reps", "ops"]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single name.
    One(String),
    /// Several names.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The names as a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// `[topology]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySection {
    /// `fat_tree` (generated) or `topo_file` (reference `.topo`).
    #[serde(rename = "type")]
    pub kind: String,
    /// fat_tree: 2 or 3.
    pub tiers: Option<u32>,
    /// fat_tree: number of hosts.
    pub hosts: Option<u32>,
    /// fat_tree: hosts per ToR.
    pub hosts_per_tor: Option<u32>,
    /// fat_tree, 3 tiers: hosts per pod.
    pub pod_size: Option<u32>,
    /// fat_tree: ToR downlink:uplink ratio (default 1).
    pub oversubscription: Option<u32>,
    /// fat_tree: speed of every link.
    pub link_speed: Option<RateQ>,
    /// fat_tree: propagation latency of every link.
    pub link_latency: Option<TimeQ>,
    /// Forwarding latency of every switch (default 0, like the reference; the REPS paper's text
    /// says 500ns).
    pub switch_latency: Option<TimeQ>,
    /// topo_file: path, relative to the scenario file.
    pub file: Option<String>,
}

/// `[[degrade]]`: slow down links (asymmetry).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DegradeSection {
    /// Link name, e.g. `tor0->agg0`.
    pub link: String,
    /// New speed.
    pub speed: RateQ,
    /// Multiplier for the egress buffer and ECN thresholds (default: new speed / old speed).
    pub buffer_scale: Option<f64>,
}

/// `[queue]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSection {
    /// Data buffer per switch egress port.
    pub size: SizeQ,
    /// ECN Kmin.
    pub ecn_min: SizeQ,
    /// ECN Kmax.
    pub ecn_max: SizeQ,
    /// Trim overflowing packets (true) or drop them (false).
    pub trimming: bool,
}

impl Default for QueueSection {
    fn default() -> Self {
        QueueSection {
            size: SizeQ(units::Size::Packets(100.0)),
            ecn_min: SizeQ(units::Size::Packets(20.0)),
            ecn_max: SizeQ(units::Size::Packets(80.0)),
            trimming: true,
        }
    }
}

/// `[transport]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSection {
    /// Data packet size on the wire, header included.
    pub mtu: SizeQ,
    /// Header size (ACKs, NACKs, trimmed packets).
    pub header: SizeQ,
    /// Congestion control algorithm.
    pub cc: String,
    /// Initial window (default: the maximum window, 1.5 BDP).
    pub initial_cwnd: Option<SizeQ>,
    /// Maximum window in BDPs.
    pub max_cwnd_bdp: f64,
    /// Receiver ACKs every this many bytes (<= MTU: every packet).
    pub ack_every: SizeQ,
    /// Fixed retransmission timeout (default: max base RTT + 4 queue drain times).
    pub rto: Option<TimeQ>,
    /// MPRDMA fast increase from the start.
    pub fast_increase: bool,
    /// Switch MPRDMA fast increase on for every sender at the first switch-queue arrival after
    /// this time (the reference's Fig. 7 scenario: "650us"); absent: never.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_increase_after: Option<TimeQ>,
    /// After a timeout whose retransmission the window has no room for, send a 64 B RTS
    /// (request to send), as the reference does (default true).
    pub rts: bool,
}

impl Default for TransportSection {
    fn default() -> Self {
        TransportSection {
            mtu: SizeQ(units::Size::Bytes(4150)),
            header: SizeQ(units::Size::Bytes(64)),
            cc: "mprdma".into(),
            initial_cwnd: None,
            max_cwnd_bdp: 1.5,
            ack_every: SizeQ(units::Size::Packets(1.0)),
            rto: None,
            fast_increase: false,
            fast_increase_after: None,
            rts: true,
        }
    }
}

/// `[lb_options]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbOptionsSection {
    /// Number of entropy values (1..=65536).
    pub evs_size: u32,
    /// REPS freezing duration.
    pub reps_freeze: TimeQ,
    /// REPS: allow freezing at all.
    pub reps_freezing: bool,
    /// REPS: behaviour after freezing (`reference` or `paper`).
    pub reps_explore: ExploreMode,
    /// REPS: packets explored after freezing (default: the connection's BDP in packets).
    pub reps_explore_packets: Option<u32>,
}

impl Default for LbOptionsSection {
    fn default() -> Self {
        LbOptionsSection {
            evs_size: 65536,
            reps_freeze: TimeQ(10 * MS),
            reps_freezing: true,
            reps_explore: ExploreMode::Reference,
            reps_explore_packets: None,
        }
    }
}

/// A `flows` entry of an explicit workload; `src`/`dst` may be a host or a range `"0-7"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    /// Source host or range.
    pub src: HostSet,
    /// Destination host or range (same length as `src`).
    pub dst: HostSet,
    /// Payload bytes per flow.
    pub size: SizeQ,
    /// Start time (default 0).
    pub start: Option<TimeQ>,
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
    fn hosts(&self) -> Result<Vec<u32>, String> {
        match self {
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
                        Ok((a..=b).collect())
                    }
                    None => Ok(vec![parse(s)?]),
                }
            }
        }
    }
}

/// `[workload]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    /// `explicit`, `permutation`, `tornado`, `incast` or `cm`.
    #[serde(rename = "type")]
    pub kind: String,
    /// explicit: the flows.
    pub flows: Option<Vec<FlowEntry>>,
    /// permutation / tornado / incast: bytes per flow.
    pub size: Option<SizeQ>,
    /// permutation / tornado / incast: start time of every flow.
    pub start: Option<TimeQ>,
    /// incast: number of senders.
    pub senders: Option<u32>,
    /// incast: the receiving host.
    pub receiver: Option<u32>,
    /// permutation / incast: seed of the choice (default: the scenario seed).
    pub seed: Option<u64>,
    /// cm: path of a reference connection matrix, relative to the scenario file.
    pub file: Option<String>,
    /// Mixed traffic: flows whose source host is a multiple of this use ECMP (default: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecmp_every: Option<u32>,
}

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name (default: the file name without extension); results go to `results/<name>/`.
    pub name: Option<String>,
    /// What the scenario shows.
    pub description: Option<String>,
    /// Master seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time limit.
    #[serde(default = "default_end")]
    pub end: TimeQ,
    /// Load balancer(s) to run, one run each.
    #[serde(default = "default_lb")]
    pub lb: OneOrMany,
    /// Network.
    pub topology: TopologySection,
    /// Degraded links.
    #[serde(default)]
    pub degrade: Vec<DegradeSection>,
    /// Switch queues.
    #[serde(default)]
    pub queue: QueueSection,
    /// Transport.
    #[serde(default)]
    pub transport: TransportSection,
    /// Load-balancer parameters.
    #[serde(default)]
    pub lb_options: LbOptionsSection,
    /// Traffic.
    pub workload: WorkloadSection,
    /// Time-series collection (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect: Option<collect::CollectSection>,
    /// Fault timeline (see [`crate::fault`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<crate::fault::FaultSection>,
    /// Routing reconvergence and unreachable-flow detection.
    #[serde(default)]
    pub routing: RoutingSection,
}

fn default_seed() -> u64 {
    1
}
fn default_end() -> TimeQ {
    TimeQ(100 * MS)
}
fn default_lb() -> OneOrMany {
    OneOrMany::One("reps".into())
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

/// A parsed scenario together with where it came from.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// The file it was read from (for messages and relative paths).
    pub path: PathBuf,
}

impl LoadedScenario {
    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            field: "-".into(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text, path)
    }

    /// Parses scenario text; `path` is used for messages and relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let scenario: Scenario = toml::from_str(text).map_err(|e| {
            let field = e
                .span()
                .map(|s| locate(text, s.start))
                .unwrap_or_else(|| "-".into());
            ScenarioError {
                file: file.clone(),
                field,
                message: e.message().to_string(),
            }
        })?;
        Ok(LoadedScenario {
            scenario,
            path: path.to_path_buf(),
        })
    }

    /// The scenario's name: its `name` field or the file stem.
    pub fn name(&self) -> String {
        self.scenario.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into())
        })
    }

    /// The load balancers to run, in order.
    pub fn lbs(&self) -> Vec<String> {
        self.scenario.lb.to_vec()
    }

    fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.path.display().to_string(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// A path written in the scenario: relative to the scenario file, or else to the working
    /// directory (e.g. `data/...` from the repository root) when only that exists.
    fn relative(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        let candidate = self.path.parent().unwrap_or(Path::new(".")).join(p);
        if p.is_absolute() || (!candidate.exists() && p.exists()) {
            p.to_path_buf()
        } else {
            candidate
        }
    }

    /// Reads a file named in the scenario; errors name the path.
    fn read_relative(&self, p: &str) -> Result<(PathBuf, String), String> {
        let path = self.relative(p);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok((path, text))
    }

    /// `Ok` when `name` is one of `allowed`, else an error on `field` listing them.
    fn check_name(
        &self,
        field: &str,
        what: &str,
        name: &str,
        allowed: &[&str],
    ) -> Result<(), ScenarioError> {
        if allowed.contains(&name) {
            return Ok(());
        }
        Err(self.err(
            field,
            format!("unknown {what} '{name}'; allowed: {}", allowed.join(", ")),
        ))
    }

    /// Builds the topology.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let t = &self.scenario.topology;
        let spec = match t.kind.as_str() {
            "fat_tree" => {
                let need = |v: Option<u32>, f: &str| {
                    v.ok_or_else(|| {
                        self.err(&format!("topology.{f}"), "required for type = \"fat_tree\"")
                    })
                };
                let tiers = need(t.tiers, "tiers")?;
                let hosts = need(t.hosts, "hosts")?;
                let per_tor = need(t.hosts_per_tor, "hosts_per_tor")?;
                if tiers == 3 && t.pod_size.is_none() {
                    return Err(self.err("topology.pod_size", "required for a 3-tier fat tree"));
                }
                let speed = t
                    .link_speed
                    .ok_or_else(|| self.err("topology.link_speed", "required, e.g. \"400Gbps\""))?;
                let latency = t.link_latency.map(|l| l.0).unwrap_or(US);
                if latency == 0 {
                    return Err(self.err("topology.link_latency", "must be positive"));
                }
                FatTreeSpec::uniform(
                    tiers,
                    hosts,
                    per_tor,
                    t.pod_size.unwrap_or(hosts),
                    t.oversubscription.unwrap_or(1),
                    speed.0,
                    latency,
                    t.switch_latency.map(|l| l.0).unwrap_or(0),
                )
                .map_err(|e| self.err("topology", e.0))?
            }
            "topo_file" => {
                let f = t.file.as_ref().ok_or_else(|| {
                    self.err("topology.file", "required for type = \"topo_file\"")
                })?;
                let (path, text) = self
                    .read_relative(f)
                    .map_err(|e| self.err("topology.file", e))?;
                let mut spec = parse_topo(&text)
                    .map_err(|e| self.err("topology.file", format!("{}: {e}", path.display())))?;
                if let Some(sl) = t.switch_latency {
                    for tier in &mut spec.tiers {
                        tier.switch_latency = sl.0;
                    }
                }
                spec
            }
            other => {
                return Err(self.err(
                    "topology.type",
                    format!("unknown type '{other}'; allowed: fat_tree, topo_file"),
                ))
            }
        };
        let mut topo = spec.build().map_err(|e| self.err("topology", e.0))?;
        for (i, d) in self.scenario.degrade.iter().enumerate() {
            let field = format!("degrade[{i}].link");
            let links = topo
                .links_by_name(&d.link)
                .map_err(|e| self.err(&field, e.0))?;
            for l in links {
                let link = &mut topo.links[l as usize];
                let scale = d
                    .buffer_scale
                    .unwrap_or(d.speed.0 as f64 / link.rate_bps as f64);
                if scale.is_nan() || scale <= 0.0 {
                    return Err(self.err(&format!("degrade[{i}].buffer_scale"), "must be positive"));
                }
                link.rate_bps = d.speed.0;
                link.buffer_scale = scale;
            }
        }
        Ok(topo)
    }

    /// Builds the run for load balancer `lb` (seed override optional).
    pub fn build(&self, lb: &str, seed: Option<u64>) -> Result<RunSpec, ScenarioError> {
        let s = &self.scenario;
        let topology = self.topology()?;
        let mtu_b = s.transport.mtu.0.bytes(4150);
        if s.transport.mtu.0 != units::Size::Bytes(mtu_b) {
            return Err(self.err("transport.mtu", "must be given in bytes, e.g. \"4150B\""));
        }
        if !(128..=65535).contains(&mtu_b) {
            return Err(self.err(
                "transport.mtu",
                format!("must be between 128B and 65535B, not {mtu_b}B"),
            ));
        }
        let mtu = mtu_b as u32;
        let header = s.transport.header.0.bytes(mtu);
        if header == 0 || header >= mtu as u64 {
            return Err(self.err(
                "transport.header",
                format!("must be positive and below the MTU ({mtu}B)"),
            ));
        }
        let queue = QueueConfig {
            capacity: s.queue.size.0.bytes(mtu),
            ecn_min: s.queue.ecn_min.0.bytes(mtu),
            ecn_max: s.queue.ecn_max.0.bytes(mtu),
            trimming: s.queue.trimming,
        };
        if queue.capacity < mtu as u64 {
            return Err(self.err(
                "queue.size",
                format!("must hold at least one packet ({mtu}B)"),
            ));
        }
        if queue.ecn_min > queue.ecn_max {
            return Err(self.err("queue.ecn_min", "must not exceed queue.ecn_max"));
        }
        self.check_name(
            "transport.cc",
            "congestion control",
            &s.transport.cc,
            CcSpec::NAMES,
        )?;
        if s.transport.max_cwnd_bdp.is_nan() || s.transport.max_cwnd_bdp <= 0.0 {
            return Err(self.err("transport.max_cwnd_bdp", "must be positive"));
        }
        self.check_name("lb", "load balancer", lb, LbSpec::NAMES)?;
        let o = &s.lb_options;
        if o.evs_size == 0 || o.evs_size > 65536 {
            return Err(self.err(
                "lb_options.evs_size",
                format!("must be in 1..=65536, not {}", o.evs_size),
            ));
        }
        if o.reps_freeze.0 / crate::engine::time::NS > i32::MAX as u64 {
            return Err(self.err(
                "lb_options.reps_freeze",
                "must be below about 2.1 s (32-bit nanosecond clock)",
            ));
        }
        let transport = TransportConfig {
            mtu,
            header: header as u32,
            ack: AckPolicy {
                every_bytes: s.transport.ack_every.0.bytes(mtu),
                cnp_interval: None,
            },
            rto: s.transport.rto.map(|r| r.0),
            rts: s.transport.rts,
        };
        let cc = match CcSpec::named(&s.transport.cc).expect("checked") {
            CcSpec::Mprdma(_) => CcSpec::Mprdma(MprdmaConfig {
                initial_cwnd: s.transport.initial_cwnd,
                max_cwnd_bdp: s.transport.max_cwnd_bdp,
                fast_increase: s.transport.fast_increase,
                fast_increase_after: s.transport.fast_increase_after,
            }),
            other => other,
        };
        let seed = seed.unwrap_or(s.seed);
        let switch_name = s.routing.switch.clone().unwrap_or_else(|| "ecmp".into());
        self.check_name(
            "routing.switch",
            "switch routing",
            &switch_name,
            SwitchSpec::NAMES,
        )?;
        let lb_spec = self.lb_spec(lb);
        let config = SimConfig {
            seed,
            end: s.end.0,
            queue,
            transport,
            lb: lb_spec,
            cc,
            switch: SwitchSpec::named(&switch_name).expect("checked"),
        };
        let mut flows = self.flows(&topology, seed)?;
        let faults = self.fault_plan(&topology, seed)?;
        let mut classes = Vec::new();
        match s.workload.ecmp_every {
            Some(0) => {
                return Err(self.err(
                    "workload.ecmp_every",
                    "must be positive (leave it out to turn mixed traffic off)",
                ))
            }
            Some(n) => {
                classes.push(TrafficClass {
                    name: "background".into(),
                    lb: Some(self.lb_spec("ecmp")),
                    cc: None,
                });
                for f in &mut flows {
                    if f.src.is_multiple_of(n) {
                        f.class = 1;
                    }
                }
            }
            None => {}
        }
        Ok(RunSpec {
            label: lb.to_string(),
            config,
            topology,
            flows,
            faults,
            classes,
        })
    }

    /// The load balancer `name` with the scenario's `[lb_options]`.
    fn lb_spec(&self, name: &str) -> LbSpec {
        let o = &self.scenario.lb_options;
        match LbSpec::named(name).expect("checked") {
            LbSpec::Ecmp(mut c) => {
                c.evs_size = o.evs_size;
                LbSpec::Ecmp(c)
            }
            LbSpec::Ops(mut c) => {
                c.evs_size = o.evs_size;
                LbSpec::Ops(c)
            }
            LbSpec::Reps(mut c) => {
                c.evs_size = o.evs_size;
                c.freeze = o.reps_freeze;
                c.freezing = o.reps_freezing;
                c.explore = o.reps_explore;
                c.explore_packets = o.reps_explore_packets;
                LbSpec::Reps(c)
            }
            other => other,
        }
    }

    /// Expands `[[fault]]` and `[routing]` for a topology and seed.
    pub fn fault_plan(
        &self,
        topo: &Topology,
        seed: u64,
    ) -> Result<crate::fault::FaultPlan, ScenarioError> {
        let s = &self.scenario;
        let load = |f: &str| self.read_relative(f).map(|(_, text)| text);
        let routing = crate::fault::RoutingTimes {
            reconvergence: s.routing.reconvergence.map(|t| t.0),
            give_up_after: s.routing.give_up_after.map(|t| t.0),
        };
        crate::fault::build_plan(&s.fault, routing, topo, seed, s.end.0, &load)
            .map_err(|(i, e)| self.err(&format!("fault[{i}].{}", e.field), e.message))
    }

    fn flows(&self, topo: &Topology, seed: u64) -> Result<Vec<FlowSpec>, ScenarioError> {
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
        let start = w.start.map(|s| s.0).unwrap_or(0);
        let wseed = w.seed.unwrap_or(seed);
        let flows = match w.kind.as_str() {
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
                parse_cm(&text, hosts)
                    .map_err(|e| self.err("workload.file", format!("{}: {e}", path.display())))?
            }
            "explicit" => {
                let entries = w.flows.as_ref().ok_or_else(|| {
                    self.err("workload.flows", "required for type = \"explicit\"")
                })?;
                let mut flows = Vec::new();
                for (i, e) in entries.iter().enumerate() {
                    let f = |n: &str| format!("workload.flows[{i}].{n}");
                    let srcs = e.src.hosts().map_err(|m| self.err(&f("src"), m))?;
                    let dsts = e.dst.hosts().map_err(|m| self.err(&f("dst"), m))?;
                    if srcs.len() != dsts.len() {
                        return Err(self.err(
                            &f("dst"),
                            format!("{} sources but {} destinations", srcs.len(), dsts.len()),
                        ));
                    }
                    let bytes = match e.size.0 {
                        units::Size::Bytes(b) if b > 0 => b,
                        _ => return Err(self.err(&f("size"), "must be a positive number of bytes")),
                    };
                    for (s, d) in srcs.into_iter().zip(dsts) {
                        if s >= hosts || d >= hosts {
                            return Err(self.err(
                                &f("src"),
                                format!("host {} does not exist (0..{hosts})", s.max(d)),
                            ));
                        }
                        if s == d {
                            return Err(
                                self.err(&f("dst"), format!("host {s} would send to itself"))
                            );
                        }
                        let id = flows.len() as u64 + 1;
                        flows.push(FlowSpec::new(
                            id,
                            s,
                            d,
                            bytes,
                            e.start.map(|t| t.0).unwrap_or(0),
                        ));
                    }
                }
                flows
            }
            other => {
                return Err(self.err(
                    "workload.type",
                    format!(
                    "unknown type '{other}'; allowed: explicit, permutation, tornado, incast, cm"
                ),
                ))
            }
        };
        if flows.is_empty() {
            return Err(self.err("workload", "no flows"));
        }
        Ok(flows)
    }

    /// The scenario with every default written out, as TOML.
    pub fn resolved_toml(&self) -> String {
        let mut s = self.scenario.clone();
        s.name = Some(self.name());
        toml::to_string_pretty(&s).unwrap_or_else(|e| format!("# could not serialize: {e}\n"))
    }
}

/// Dotted key path of the TOML table/key around byte offset `at` (best effort, for messages).
fn locate(text: &str, at: usize) -> String {
    let before = &text[..at.min(text.len())];
    let line_no = before.matches('\n').count() + 1;
    let mut table = String::new();
    for line in before.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            table = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
    }
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let key = line.split('=').next().unwrap_or("").trim();
    let key = if line.contains('=') && !key.is_empty() {
        key
    } else {
        ""
    };
    let path = match (table.is_empty(), key.is_empty()) {
        (true, true) => "-".to_string(),
        (true, false) => key.to_string(),
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    };
    format!("{path} (line {line_no})")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
seed = 3
lb = ["reps", "ops"]
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[workload]
type = "explicit"
flows = [{ src = "0-3", dst = "8-11", size = "1MiB" }]
"#;

    fn parse(text: &str) -> Result<LoadedScenario, ScenarioError> {
        LoadedScenario::parse(text, Path::new("test.toml"))
    }

    #[test]
    fn builds_a_minimal_scenario() {
        let s = parse(BASE).unwrap();
        assert_eq!(s.lbs(), vec!["reps", "ops"]);
        let b = s.build("reps", None).unwrap();
        assert_eq!(b.flows.len(), 4);
        assert_eq!(b.flows[3].dst, 11);
        assert_eq!(b.config.queue.capacity, 415_000);
        assert_eq!(b.config.seed, 3);
        assert_eq!(s.name(), "test");
        // The resolved form parses back.
        let again = parse(&s.resolved_toml()).unwrap();
        assert_eq!(again.build("ops", None).unwrap().flows, b.flows);
    }

    #[test]
    fn errors_name_file_and_field() {
        let e = parse(&BASE.replace("hosts = 16", "hosts = 15"))
            .unwrap()
            .build("reps", None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("test.toml: topology:"), "{e}");
        let e = parse(&BASE.replace("\"400Gbps\"", "\"400 furlongs\""))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("topology.link_speed") && e.contains("Gbps"),
            "{e}"
        );
        let e = parse(&BASE.replace("seed = 3", "sed = 3"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown field") && e.contains("sed"), "{e}");
        let e = parse(BASE)
            .unwrap()
            .build("nope", None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("lb:") && e.contains("reps"), "{e}");
        let e = parse(&BASE.replace("\"8-11\"", "\"8-10\""))
            .unwrap()
            .build("reps", None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("workload.flows[0].dst"), "{e}");
        let e = parse(&BASE.replace("\"1MiB\"", "1048576"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no unit"), "{e}");
    }
}
