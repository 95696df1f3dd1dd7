//! Scenario files (TOML): a whole experiment in one readable file.
//!
//! ```toml
//! name = "reps-micro-symmetric"
//! seed = 5
//! end = "90ms"
//! lb = ["reps", "ops", { scheme = "reps", label = "reps-paper", explore = "paper" }]
//!
//! [topology]
//! type = "fat_tree"          # fat_tree | leaf_spine | dragonfly | rail | topo_file
//! tiers = 2
//! hosts = 128
//! hosts_per_tor = 8
//! link_speed = "400Gbps"
//!
//! [queue]
//! size = "100pkt"
//! ecn_min = "20pkt"
//! ecn_max = "80pkt"
//! trimming = true
//!
//! [cc]                       # or cc = "mprdma"
//! algo = "mprdma"
//! initial_cwnd = "151pkt"
//!
//! [workload]
//! type = "explicit"
//! flows = [{ src = "0-7", dst = "64-71", size = "16MiB" }]
//! ```
//!
//! Every scheme (load balancer, congestion control, switch scheme) is named, or given as a
//! table with its own parameters (`scheme` / `algo` names it). Every field is checked; an error
//! names the file, the field and what is allowed. [`LoadedScenario::resolved_toml`] writes the
//! scenario back with every default filled in.
pub mod collect;
pub mod collective;
pub mod flow_list;
mod locate;
mod loss;
pub mod overrides;
pub mod pfc;
pub mod schemes;
pub mod topology;
pub mod trace;
pub mod workload;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use flow_list::{FlowEntry, HostSet};
pub use overrides::Override;
pub use schemes::{LbEntry, LbList, LbRun};
pub use topology::DegradeSection;
pub use workload::{ClassSection, WorkloadSection, Workloads};

use crate::engine::time::MS;
use crate::engine::Time;
use crate::error::ConfigError;
use crate::fault::{FaultPlan, FaultSection};
use crate::net::port::QueueConfig;
use crate::net::{RunContext, Topology};

use crate::sim::{RunSpec, SimConfig};
use crate::transport::TransportConfig;
use crate::units::TimeQ;
pub(crate) use locate::locate;

/// A scenario problem, with the file and field it concerns, and any further problems found in
/// the same reading (each independent mistake of a file is reported at once).
#[derive(Debug)]
pub struct ScenarioError {
    /// The scenario file.
    pub file: String,
    /// Dotted path of the field (`topology.hosts`, `workload.flows[3].size`), with its line
    /// when it is in the file, or `-` for the whole file.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
    /// The other problems found alongside this one, in the file's order.
    pub also: Vec<ScenarioError>,
}

impl ScenarioError {
    /// Every problem: this one, then the others found with it.
    pub fn all(&self) -> impl Iterator<Item = &ScenarioError> {
        std::iter::once(self).chain(self.also.iter())
    }

    /// One error holding `errors` (the first leads); `None` when there are none.
    pub fn combine(errors: Vec<ScenarioError>) -> Option<ScenarioError> {
        let mut errors = errors.into_iter();
        let mut first = errors.next()?;
        first.also.extend(errors.flat_map(|e| {
            let ScenarioError {
                file,
                field,
                message,
                also,
            } = e;
            std::iter::once(ScenarioError {
                file,
                field,
                message,
                also: Vec::new(),
            })
            .chain(also)
        }));
        Some(first)
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.all().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {}: {}", e.file, e.field, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// The value of `result`, or `None` with its error added to `errors`.
fn kept<T>(errors: &mut Vec<ScenarioError>, result: Result<T, ScenarioError>) -> Option<T> {
    result.map_err(|e| errors.push(e)).ok()
}

/// At most this many problems are reported from one reading of a file.
const MAX_ERRORS: usize = 20;

/// `[routing]`: the switch scheme and how routes react to failures.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSection {
    /// Switch scheme: `ecmp` (default, hash of flow key, EV and salt), `adaptive`
    /// (least-queued port, Adaptive RoCE style), `drill`, `wcmp`, or a table with its
    /// parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<toml::Value>,
    /// Delay after which switches drop dead links from (and restore live links to) their ECMP
    /// groups; absent: never.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconvergence: Option<TimeQ>,
    /// A flow without any ACK or NACK for this long is reported unreachable and stopped
    /// (default: the larger of 100 x RTO and 10 ms). Only applies to runs with faults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub give_up_after: Option<TimeQ>,
}

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name (default: the file name without extension); results go to `results/<name>/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the scenario shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Master seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time limit.
    #[serde(default = "default_end")]
    pub end: TimeQ,
    /// Threads each run is split over (`repsim run` and `repsim.run`; their `threads`
    /// overrides it; none: one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<std::num::NonZeroU32>,
    /// Load balancer(s) to run, one run each.
    #[serde(default = "default_lb")]
    pub lb: LbList,
    /// Congestion control of the main traffic class (default: MPRDMA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<toml::Value>,
    /// Network.
    pub topology: crate::net::topology::TopologySpec,
    /// Degraded links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degrade: Vec<DegradeSection>,
    /// Switch queues.
    #[serde(default)]
    pub queue: QueueConfig,
    /// Transport.
    #[serde(default)]
    pub transport: TransportConfig,
    /// Switch scheme and routing reconvergence.
    #[serde(default)]
    pub routing: RoutingSection,
    /// Traffic: `[workload]`, or several `[[workload]]` entries side by side.
    pub workload: Workloads,
    /// Traffic classes beyond the main one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class: Vec<ClassSection>,
    /// Time-series collection (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect: Option<crate::metrics::collect::CollectConfig>,
    /// How results are summarized.
    #[serde(default)]
    pub metrics: crate::metrics::MetricsConfig,
    /// Fault timeline (see [`crate::fault`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<FaultSection>,
    /// Priority flow control and switch buffers (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<crate::net::mmu::PfcConfig>,
    /// Random loss at every receiving port (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::fault::random_loss::LossConfig>,
}

fn default_seed() -> u64 {
    1
}
fn default_end() -> TimeQ {
    TimeQ(100 * MS)
}
fn default_lb() -> LbList {
    LbList::One(LbEntry(toml::Value::String("reps".into())))
}

/// Keys of older scenario files, with where their settings live now.
const MOVED: &[(&str, &str)] = &[
    (
        "lb_options",
        "load-balancer settings now belong to each scheme: lb = [{ scheme = \"reps\", evs_size = 65536, freeze = \"100us\" }] (reps_freeze -> freeze, reps_freezing -> freezing, reps_explore -> explore, reps_explore_packets -> explore_packets)",
    ),
    (
        "transport.cc",
        "the congestion control is its own section now: [cc] algo = \"mprdma\"",
    ),
    (
        "transport.initial_cwnd",
        "window settings belong to the congestion control now: [cc] initial_cwnd = ...",
    ),
    (
        "transport.max_cwnd_bdp",
        "window settings belong to the congestion control now: [cc] max_cwnd_bdp = ...",
    ),
    (
        "transport.fast_increase",
        "fast increase belongs to MPRDMA now: [cc] fast_increase = true",
    ),
    (
        "transport.fast_increase_after",
        "fast increase belongs to MPRDMA now: [cc] fast_increase_after = \"650us\"",
    ),
];

/// A parsed scenario together with where it came from.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// The file it was read from (for messages and relative paths).
    pub path: PathBuf,
    /// The `--set KEY=VALUE` overrides applied to it, as applied.
    pub overrides: Vec<String>,
}

impl LoadedScenario {
    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        Self::load_with(path, &[])
    }

    /// Reads a scenario file, applies `--set` overrides (in order) and parses the result.
    pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.display().to_string(),
            field: "-".into(),
            message: format!("cannot read: {e}"),
            also: Vec::new(),
        })?;
        Self::parse_with(&text, path, overrides)
    }

    /// Parses scenario text; `path` is used for messages and relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let fail = |field: String, message: String| ScenarioError {
            file: file.clone(),
            field,
            message: plain_types(&message),
            also: Vec::new(),
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let field = e
                .span()
                .map(|s| locate(text, s.start))
                .unwrap_or_else(|| "-".into());
            fail(field, e.message().to_string())
        })?;
        for (key, hint) in MOVED {
            let found = match key.split_once('.') {
                Some((section, field)) => table
                    .get(section)
                    .and_then(|s| s.as_table())
                    .is_some_and(|s| s.contains_key(field)),
                None => table.contains_key(*key),
            };
            if found {
                return Err(fail(key.to_string(), format!("no longer here: {hint}")));
            }
        }
        let scenario: Scenario = match toml::from_str(text) {
            Ok(scenario) => scenario,
            Err(e) => {
                let errors = field_errors(text, table, e, path)
                    .into_iter()
                    .map(|(field, message)| fail(field, message))
                    .collect();
                return Err(ScenarioError::combine(errors).expect("one error at least"));
            }
        };
        Ok(LoadedScenario {
            scenario,
            path: path.to_path_buf(),
            overrides: Vec::new(),
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

    pub(crate) fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.path.display().to_string(),
            field: field.into(),
            message: message.into(),
            also: Vec::new(),
        }
    }

    /// A library check's error, placed in this scenario's file.
    pub(crate) fn config_err(&self, e: ConfigError) -> ScenarioError {
        self.err(&e.field, e.message)
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
    pub(crate) fn read_relative(&self, p: &str) -> Result<(PathBuf, String), String> {
        let path = self.relative(p);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok((path, text))
    }

    /// The run a scheme's parameters are checked in while the file is read (its network is
    /// not built yet; [`crate::Simulation::new`] checks them again on it). Its packet and
    /// header sizes are checked here, before the rest of the run: sizes written in `pkt`
    /// multiply them.
    pub(crate) fn scheme_context(&self) -> Result<RunContext<'static>, ScenarioError> {
        let (mtu, header) = self
            .scenario
            .transport
            .packet_sizes()
            .map_err(|e| self.config_err(e))?;
        Ok(RunContext::new(mtu, header))
    }

    /// Builds the run labelled (or named) `lb`, with an optional seed override.
    pub fn build(&self, lb: &str, seed: Option<u64>) -> Result<RunSpec, ScenarioError> {
        let run = self
            .select(&[lb.to_string()])?
            .pop()
            .expect("one name, one run");
        self.build_run(&run, seed)
    }

    /// Builds one run of the scenario, with an optional seed override. Problems that do not
    /// depend on each other (the congestion control, the switch scheme, each workload and
    /// flow entry, the faults) are all reported in one error; a topology that cannot be built
    /// stops the checks that need it.
    pub fn build_run(&self, run: &LbRun, seed: Option<u64>) -> Result<RunSpec, ScenarioError> {
        let s = &self.scenario;
        let topology = self.topology()?;
        let seed = seed.unwrap_or(s.seed);
        let mut errors = Vec::new();
        let cc = kept(&mut errors, run.cc.clone().map_or_else(|| self.cc(), Ok));
        let switch = kept(&mut errors, self.switch_for(run));
        let config = cc.zip(switch).and_then(|(cc, switch)| {
            let config = SimConfig {
                seed,
                end: s.end.0,
                queue: s.queue.clone(),
                transport: s.transport.clone(),
                lb: run.spec.clone(),
                cc,
                switch,
                metrics: s.metrics.clone(),
                pfc: s.pfc.clone().unwrap_or_default(),
                loss: self.loss(),
                next_hops: run.next_hops,
                ecmp_hash: run.ecmp_hash,
            };
            kept(
                &mut errors,
                config
                    .validate(&topology)
                    .map(|()| config)
                    .map_err(|e| self.config_err(e)),
            )
        });
        let classes = kept(&mut errors, self.classes());
        if let (Some(config), Some(classes)) = (&config, &classes) {
            let checked = config.transport.resolve().and_then(|t| {
                let ccs = classes.iter().filter_map(|c| c.cc.as_ref());
                t.check_congestion_controls(std::iter::once(&config.cc).chain(ccs))
            });
            kept(&mut errors, checked.map_err(|e| self.config_err(e)));
        }
        let flows = classes
            .as_ref()
            .and_then(|classes| kept(&mut errors, self.flows(&topology, seed, classes)));
        let sources = flows
            .as_ref()
            .zip(classes.as_ref())
            .and_then(|((flows, _), classes)| {
                let first_trace_id = flows.iter().map(|f| f.id).max().map_or(1, |id| id + 1);
                kept(
                    &mut errors,
                    self.sources(&topology, seed, first_trace_id, classes),
                )
            });
        let faults = kept(&mut errors, self.fault_plan(&topology, seed));
        if let Some(e) = ScenarioError::combine(errors) {
            return Err(e);
        }
        let problem = "every part was built when no error was kept";
        let (flows, triggers) = flows.expect(problem);
        Ok(RunSpec {
            label: run.label.clone(),
            config: config.expect(problem),
            topology,
            flows,
            sources: sources.expect(problem),
            triggers,
            faults: faults.expect(problem),
            classes: classes.expect(problem),
            workloads: s.workload.labels(),
        })
    }

    /// Expands `[[fault]]` and `[routing]` for a topology and seed.
    pub fn fault_plan(&self, topo: &Topology, seed: u64) -> Result<FaultPlan, ScenarioError> {
        let s = &self.scenario;
        let load = |f: &str| self.read_relative(f).map(|(_, text)| text);
        let routing = crate::fault::RoutingTimes {
            reconvergence: s.routing.reconvergence.map(|t| t.0),
            give_up_after: s.routing.give_up_after.map(|t| t.0),
        };
        crate::fault::build_plan(&s.fault, routing, topo, seed, s.end.0, &load)
            .map_err(|(i, e)| self.err(&format!("fault[{i}].{}", e.field), e.message))
    }

    /// The scenario as it ran, as TOML: every default written out, the load balancers that
    /// ran (`runs`) with all their parameters, and the retransmission timeout the runs used
    /// (`rto`, when it was computed).
    pub fn resolved_toml(&self, runs: &[LbRun], rto: Option<Time>) -> String {
        let mut s = self.scenario.clone();
        s.name = Some(self.name());
        let entry = |run: &LbRun| {
            let mut v = toml::Value::try_from(&run.spec).expect("specs serialize");
            if let toml::Value::Table(t) = &mut v {
                if let Some(sw) = &run.switch {
                    t.insert(
                        "switch".into(),
                        toml::Value::try_from(sw).expect("specs serialize"),
                    );
                }
                if run.label != run.spec.name() {
                    t.insert("label".into(), toml::Value::String(run.label.clone()));
                }
            }
            LbEntry(v)
        };
        s.lb = LbList::Many(runs.iter().map(entry).collect());
        if let Ok(cc) = self.cc() {
            s.cc = toml::Value::try_from(&cc).ok();
        }
        if let Ok(sw) = self.switch() {
            s.routing.switch = toml::Value::try_from(&sw).ok();
        }
        s.topology = s.topology.resolved();
        if s.transport.rto.is_none() {
            s.transport.rto = rto.map(TimeQ);
        }
        for (i, c) in s.class.iter_mut().enumerate() {
            if let Some(e) = &c.lb {
                if let Ok(run) = self.lb_entry(e, &format!("class[{i}].lb")) {
                    c.lb = Some(entry(&run));
                }
            }
        }
        toml::to_string_pretty(&s).unwrap_or_else(|e| format!("# could not serialize: {e}\n"))
    }
}

/// The field (with its line) and message of a scenario's deserialization error.
fn describe(text: &str, table: &toml::Table, e: &toml::de::Error) -> (String, String) {
    let field = e
        .span()
        .map(|s| locate(text, s.start))
        .unwrap_or_else(|| "-".into());
    match topology::pinpoint(text, table) {
        Some((field, message)) if field.starts_with("topology.") => (field, message),
        _ => (field, e.message().to_string()),
    }
}

/// Every independent field error of a scenario whose reading failed with `first`: the field
/// at fault is taken out and the rest read again, until the rest reads or a problem follows
/// from one already reported. A required field taken out leaves its table incomplete, so the
/// table goes too. Later errors are placed by their field's line in `text`.
fn field_errors(
    text: &str,
    mut table: toml::Table,
    first: toml::de::Error,
    path: &Path,
) -> Vec<(String, String)> {
    let mut errors = vec![describe(text, &table, &first)];
    // Fields taken out, as the reduced table named them when they went (array elements
    // after a removed one move up) and as the file names them.
    let mut removed: Vec<String> = Vec::new();
    let mut removed_in_file: Vec<String> = Vec::new();
    let mut at_fault = locate::without_line(&errors[0].0).to_string();
    while errors.len() < MAX_ERRORS {
        let mut incomplete_table_removed = false;
        loop {
            if at_fault == "-" || !locate::remove_field(&mut table, &at_fault) {
                return errors;
            }
            removed_in_file.push(locate::as_in_file(&at_fault, &removed));
            removed.push(at_fault.clone());
            let Ok(current) = toml::to_string(&table) else {
                return errors;
            };
            let e = match toml::from_str::<Scenario>(&current) {
                Ok(rest) => {
                    errors.extend(scheme_errors(rest, path, text));
                    errors.truncate(MAX_ERRORS);
                    return errors;
                }
                Err(e) => e,
            };
            let (field, message) = describe(&current, &table, &e);
            let path = locate::without_line(&field).to_string();
            if path == "-" {
                // A whole section missing: one taken out, most likely.
                return errors;
            }
            let in_file = locate::as_in_file(&path, &removed);
            let follows = removed_in_file
                .iter()
                .any(|r| locate::overlaps(r, &in_file));
            if message.starts_with("missing field") {
                // Most likely a field taken out: its table goes once, then the search ends.
                if follows && !incomplete_table_removed {
                    incomplete_table_removed = true;
                    at_fault = path;
                    continue;
                }
                return errors;
            }
            if follows {
                return errors;
            }
            let placed = match locate::line_of(text, &in_file) {
                Some(line) => format!("{in_file} (line {line})"),
                None => in_file,
            };
            errors.push((placed, message));
            at_fault = path;
            break;
        }
    }
    errors
}

/// The problems of the schemes a scenario names (load balancers, congestion control, switch
/// scheme), found once the rest of a faulty file reads: they are independent of its field
/// errors, so they are reported with them.
fn scheme_errors(scenario: Scenario, path: &Path, text: &str) -> Vec<(String, String)> {
    let probe = LoadedScenario {
        scenario,
        path: path.to_path_buf(),
        overrides: Vec::new(),
    };
    let problems = [probe.runs().err(), probe.cc().err(), probe.switch().err()];
    problems
        .into_iter()
        .flatten()
        .flat_map(|e| {
            e.all()
                .map(|e| {
                    let field = match locate::line_of(text, &e.field) {
                        Some(line) => format!("{} (line {line})", e.field),
                        None => e.field.clone(),
                    };
                    (field, e.message.clone())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A deserializer's message with Rust's type names said in words (`expected u32` ->
/// `expected a whole number, 0 or more`).
fn plain_types(message: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ];
    let mut plain = message.to_string();
    for (rust, words) in WORDS {
        plain = plain.replace(rust, words);
    }
    plain
}

#[cfg(test)]
mod tests;
