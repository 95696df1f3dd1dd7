//! The fuzz targets: the scenario parser (through `repsim check`'s path: parse, resolve the
//! load balancers, build each run, set up the simulation) and each file importer.
use std::path::Path;

use repsim::fault::htsim;
use repsim::net::topology::topo_file::parse_topo;
use repsim::scenario::LoadedScenario;
use repsim::workload::cdf::SizeCdf;
use repsim::workload::cm::parse_matrix;
use repsim::Simulation;

/// What a target did with an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted.
    Accepted,
    /// Rejected with this message (as the user would see it).
    Rejected(String),
}

/// An input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Scenario TOML, parsed, checked and built as `repsim check` does.
    Scenario,
    /// A reference `.topo` file.
    Topo,
    /// A connection matrix (`.cm`), for a 1024-host network.
    Cm,
    /// A reference failure file.
    Failures,
    /// A flow-size CDF file.
    Cdf,
}

/// Hosts the `.cm` importer is given (the largest shipped matrix needs 1024).
const CM_HOSTS: u32 = 1024;

impl Target {
    /// Every target.
    pub const ALL: [Target; 5] = [
        Target::Scenario,
        Target::Topo,
        Target::Cm,
        Target::Failures,
        Target::Cdf,
    ];

    /// The target's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Scenario => "scenario",
            Target::Topo => "topo",
            Target::Cm => "cm",
            Target::Failures => "failures",
            Target::Cdf => "cdf",
        }
    }

    /// The target named `name`.
    pub fn named(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the target on `text`; `origin` is the corpus file it came from (scenarios resolve
    /// relative paths against it and name it in messages).
    pub fn run(self, text: &str, origin: &Path) -> Outcome {
        let result = match self {
            Target::Scenario => scenario(text, origin),
            Target::Topo => parse_topo(text).and_then(|spec| {
                // Within the size caps a big fabric is legal but takes seconds to build: those
                // are parsed only (the caps themselves are checked before anything is built).
                let big = u64::from(spec.hosts) > 16_384
                    || spec
                        .tiers
                        .iter()
                        .any(|t| t.radix_up.max(t.radix_down) > 1024);
                if big {
                    return Ok(());
                }
                spec.build()
                    .map(|_| ())
                    .map_err(|e| format!("topology: {e}"))
            }),
            Target::Cm => parse_matrix(text, CM_HOSTS).map(|_| ()),
            Target::Failures => htsim::parse(text).map(|_| ()),
            Target::Cdf => SizeCdf::parse(text)
                .map(|cdf| {
                    // Sampling and the mean must work on anything the parser accepts.
                    let mut rng = repsim::engine::Rng::new(1);
                    for _ in 0..4 {
                        let _ = cdf.sample(&mut rng);
                    }
                    let _ = cdf.mean();
                })
                .map_err(|e| e.to_string()),
        };
        match result {
            Ok(()) => Outcome::Accepted,
            Err(msg) => Outcome::Rejected(msg),
        }
    }

    /// What a rejection message lacks, if anything: scenario messages name the file and a
    /// field (or line); importer messages name a line, a key or the file as a whole, and
    /// every message says something beyond the location.
    pub fn rejection_flaw(self, msg: &str, origin: &Path) -> Option<&'static str> {
        if msg.trim().len() < 12 {
            return Some("too short to say what is wrong");
        }
        match self {
            Target::Scenario => {
                let file = origin.display().to_string();
                if !msg.starts_with(&file) {
                    return Some("does not start with the file");
                }
                let rest = msg[file.len()..].trim_start_matches(": ");
                // Set-up errors name the flow they concern (`flow 7: ...`).
                if rest.starts_with("-: ") && !rest.contains("line") && !rest.contains(": flow ") {
                    return Some("names neither a field nor a line");
                }
                None
            }
            _ => {
                // A line number, a quoted or named key (the formats' keys contain `_`), a tier,
                // or a problem of the file as a whole.
                let located = msg.contains("line ")
                    || msg.contains('\'')
                    || msg.contains("tier ")
                    || msg.split_whitespace().any(|w| w.contains('_'))
                    || msg.contains("no ")
                    || msg.contains("missing")
                    || msg.contains("empty")
                    || msg.contains("topology: ");
                (!located).then_some("names no line, key or whole-file problem")
            }
        }
    }
}

/// Largest topology the scenario target builds (hosts): bigger ones are checked up to the
/// build, as their set-up costs seconds, not a fuzz input's milliseconds.
const BUILD_HOSTS: u64 = 2048;

/// Whether the text sizes its fabric beyond what a fuzz input may build in milliseconds: a
/// size key (hosts, leaves, spines, radices, ...) set above 4096. Such inputs are checked up to
/// the build; the size caps themselves have their own tests.
fn sizes_a_big_fabric(text: &str) -> bool {
    const SIZE_KEYS: &[&str] = &[
        "hosts", "leaves", "spines", "radix", "groups", "routers", "rails", "clusters", "tors",
        "pod",
    ];
    text.lines().any(|line| {
        let Some((key, value)) = line.split_once('=') else {
            return false;
        };
        let key = key.trim().to_ascii_lowercase();
        SIZE_KEYS.iter().any(|k| key.contains(k))
            && value
                .trim()
                .trim_matches('"')
                .replace('_', "")
                .parse::<f64>()
                .is_ok_and(|v| v.is_nan() || v > 4096.0)
    })
}

fn scenario(text: &str, origin: &Path) -> Result<(), String> {
    let scn = LoadedScenario::parse(text, origin).map_err(|e| e.to_string())?;
    let runs = scn.runs().map_err(|e| e.to_string())?;
    if sizes_a_big_fabric(text) {
        return Ok(());
    }
    for run in runs {
        let spec = scn.build_run(&run, None).map_err(|e| e.to_string())?;
        if u64::from(spec.topology.hosts) > BUILD_HOSTS {
            continue;
        }
        Simulation::new(spec).map_err(|e| {
            format!(
                "{}: -: setting up the run with {}: {e}",
                origin.display(),
                run.label
            )
        })?;
    }
    Ok(())
}
