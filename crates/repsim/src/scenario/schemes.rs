//! Which schemes a scenario runs: the `lb` list (names or tables with a `label`), the `[cc]`
//! congestion control and the `[routing] switch` scheme, each checked against its registry.
//!
//! An `lb` entry may name a sender scheme and a switch scheme together, `SENDER+SWITCH`
//! (`"ops+adaptive"`, the REPS paper's Adaptive RoCE; `"ecmp+drill"`), or as a table with a
//! `switch` key (`{ scheme = "ops", switch = { scheme = "drill", samples = 2 } }`); that run
//! then uses that switch scheme instead of `[routing] switch`, and its label (the `lb` field of
//! the outputs) is the combined name. A switch scheme named alone (`"letflow"`, `"conga"`,
//! `"conweave"`, `"drill"`, ...) means `ecmp+NAME` (fixed-EV senders) under the label as
//! written; `"ecmp"`, both a sender and a switch scheme, means the sender.
use serde::{Deserialize, Serialize};

use super::{LoadedScenario, ScenarioError};
use crate::cc::CcSpec;
use crate::engine::registry::suggestion;
use crate::lb::LbSpec;
use crate::net::candidate_hops::NextHops;
use crate::net::hash::EcmpHash;
use crate::routing::SwitchSpec;

/// A load balancer in a scenario: a name (`"reps"`) or a table (`{ scheme = "reps", label =
/// "reps-100us", freeze = "100us" }`); checked when the scenario is built.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct LbEntry(pub toml::Value);

/// The list under `lb`: one entry, or several.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum LbList {
    /// Several runs.
    Many(Vec<LbEntry>),
    /// One run.
    One(LbEntry),
}

impl LbList {
    fn entries(&self) -> Vec<&LbEntry> {
        match self {
            LbList::Many(v) => v.iter().collect(),
            LbList::One(e) => vec![e],
        }
    }
}

/// One load balancer a scenario runs, under its label.
#[derive(Clone, Debug, PartialEq)]
pub struct LbRun {
    /// Name of the run in outputs (the scheme's name unless a `label` was given).
    pub label: String,
    /// The scheme and its parameters.
    pub spec: LbSpec,
    /// The switch scheme this run uses instead of `[routing] switch`, if the entry names one.
    pub switch: Option<SwitchSpec>,
    /// The congestion control this run uses instead of `[cc]`, if the entry names one
    /// (`{ scheme = "plb", cc = { algo = "dctcp-rate" } }`: the LAPS runs give PLB its own).
    pub cc: Option<CcSpec>,
    /// Next hops of hashed and flowlet switch schemes in this run, and the paths CONGA and
    /// ConWeave choose among (`next_hops = "laps-candidates"`: the per-hop union of the LAPS
    /// candidate routes, and the routes themselves as path ids; default shortest).
    pub next_hops: NextHops,
    /// The hash of the ECMP switches in this run (`hash = "murmur3-switch-seed"`: the LAPS
    /// code's; default ours). Only on `ecmp` entries without a switch scheme.
    pub ecmp_hash: EcmpHash,
}

impl LoadedScenario {
    /// Resolves one `lb` entry (`field` names it in messages).
    pub(crate) fn lb_entry(&self, entry: &LbEntry, field: &str) -> Result<LbRun, ScenarioError> {
        let (mut cc, mut next_hops, mut ecmp_hash) =
            (None, NextHops::default(), EcmpHash::default());
        let (label, spec, switch) = match &entry.0 {
            toml::Value::String(name) => {
                let (sender, switch) = match name.split_once('+') {
                    Some((sender, switch)) => (sender, Some(self.switch_named(switch, field)?)),
                    // A switch scheme named alone runs under fixed-EV senders; a name that is
                    // also a sender ("ecmp") keeps meaning the sender.
                    None => match (LbSpec::named(name), SwitchSpec::named(name)) {
                        (None, Some(switch)) => ("ecmp", Some(switch)),
                        _ => (name.as_str(), None),
                    },
                };
                let spec = LbSpec::named(sender).ok_or_else(|| {
                    self.err(
                        field,
                        format!(
                            "unknown load balancer '{sender}'{}; allowed: {} (optionally \
                             +SWITCH, SWITCH one of {})",
                            suggestion(sender, LbSpec::names()),
                            LbSpec::names().join(", "),
                            SwitchSpec::names().join(", ")
                        ),
                    )
                })?;
                (name.clone(), spec, switch)
            }
            toml::Value::Table(t) => {
                let mut t = t.clone();
                let label = match t.remove("label") {
                    None => None,
                    Some(toml::Value::String(l)) if !l.trim().is_empty() => Some(l),
                    Some(_) => {
                        return Err(
                            self.err(&format!("{field}.label"), "must be a non-empty string")
                        )
                    }
                };
                let switch = match t.remove("switch") {
                    None => None,
                    Some(v) => Some(self.switch_spec(&v, &format!("{field}.switch"))?),
                };
                if let Some(v) = t.remove("cc") {
                    cc = Some(self.cc_from(Some(&v), &format!("{field}.cc"))?);
                }
                if let Some(v) = t.remove("next_hops") {
                    next_hops = v.try_into().map_err(|_| {
                        self.err(
                            &format!("{field}.next_hops"),
                            "write \"shortest\" or \"laps-candidates\"",
                        )
                    })?;
                }
                if let Some(v) = t.remove("hash") {
                    let hash_field = format!("{field}.hash");
                    ecmp_hash = v.try_into().map_err(|_| {
                        self.err(&hash_field, "write \"lookup2\" or \"murmur3-switch-seed\"")
                    })?;
                    let ecmp_sender = t.get("scheme").and_then(|v| v.as_str()) == Some("ecmp");
                    if ecmp_hash != EcmpHash::Lookup2 && (!ecmp_sender || switch.is_some()) {
                        return Err(self.err(
                            &hash_field,
                            "a switch hash applies to ECMP runs only (scheme = \"ecmp\", no switch scheme)",
                        ));
                    }
                }
                let spec = LbSpec::from_toml(toml::Value::Table(t))
                    .map_err(|e| self.err(field, scheme_error(&e, "scheme", &LbSpec::names())))?;
                let label = label.unwrap_or_else(|| match &switch {
                    Some(sw) => format!("{}+{}", spec.name(), sw.name()),
                    None => spec.name().to_string(),
                });
                (label, spec, switch)
            }
            _ => return Err(self.err(
                field,
                "write a load balancer's name (\"reps\", \"ops+adaptive\") or a table ({ scheme = \"reps\", ... })",
            )),
        };
        spec.validate(&self.scheme_context()?)
            .map_err(|e| self.err(&format!("{field}.{}", e.field), e.message))?;
        Ok(LbRun {
            label,
            spec,
            switch,
            cc,
            next_hops,
            ecmp_hash,
        })
    }

    /// A switch scheme by name (`field` names the entry in messages).
    fn switch_named(&self, name: &str, field: &str) -> Result<SwitchSpec, ScenarioError> {
        SwitchSpec::named(name).ok_or_else(|| {
            self.err(
                field,
                format!(
                    "unknown switch routing '{name}' after '+'{}; allowed: {}",
                    suggestion(name, SwitchSpec::names()),
                    SwitchSpec::names().join(", ")
                ),
            )
        })
    }

    /// A switch scheme written as a name or a table, checked (`field` names it in messages).
    fn switch_spec(&self, v: &toml::Value, field: &str) -> Result<SwitchSpec, ScenarioError> {
        let spec = match v {
            toml::Value::String(name) => SwitchSpec::named(name).ok_or_else(|| {
                self.err(
                    field,
                    format!(
                        "unknown switch routing '{name}'{}; allowed: {}",
                        suggestion(name, SwitchSpec::names()),
                        SwitchSpec::names().join(", ")
                    ),
                )
            })?,
            toml::Value::Table(_) => SwitchSpec::from_toml(v.clone())
                .map_err(|e| self.err(field, scheme_error(&e, "scheme", &SwitchSpec::names())))?,
            _ => {
                return Err(self.err(
                    field,
                    "write a name (\"adaptive\") or a table ({ scheme = \"adaptive\" })",
                ))
            }
        };
        spec.validate(&self.scheme_context()?)
            .map_err(|e| self.err(&format!("{field}.{}", e.field), e.message))?;
        Ok(spec)
    }

    /// The load balancers the scenario runs, in order.
    pub fn runs(&self) -> Result<Vec<LbRun>, ScenarioError> {
        let entries = self.scenario.lb.entries();
        let many = matches!(self.scenario.lb, LbList::Many(_));
        let mut runs: Vec<LbRun> = Vec::new();
        for (i, e) in entries.into_iter().enumerate() {
            let field = if many {
                format!("lb[{i}]")
            } else {
                "lb".into()
            };
            let run = self.lb_entry(e, &field)?;
            if runs.iter().any(|r| r.label == run.label) {
                return Err(self.err(
                    &field,
                    format!(
                        "two runs are labelled '{}'; give one a label = \"...\"",
                        run.label
                    ),
                ));
            }
            runs.push(run);
        }
        if runs.is_empty() {
            return Err(self.err("lb", "name at least one load balancer"));
        }
        Ok(runs)
    }

    /// The runs named on a command line: each name is a run's label in the scenario, else a
    /// load balancer's name (with default parameters).
    pub fn select(&self, names: &[String]) -> Result<Vec<LbRun>, ScenarioError> {
        let runs = self.runs()?;
        names
            .iter()
            .map(|n| match runs.iter().find(|r| &r.label == n) {
                Some(r) => Ok(r.clone()),
                None => self.lb_entry(&LbEntry(toml::Value::String(n.clone())), "--lb"),
            })
            .collect()
    }

    /// Labels of the runs, in order (empty if the `lb` list is invalid).
    pub fn lbs(&self) -> Vec<String> {
        self.runs()
            .map(|r| r.into_iter().map(|r| r.label).collect())
            .unwrap_or_default()
    }

    /// The main traffic class's congestion control.
    pub fn cc(&self) -> Result<CcSpec, ScenarioError> {
        self.cc_from(self.scenario.cc.as_ref(), "cc")
    }

    /// A congestion control written as a name or a table (`None`: the default), checked
    /// (`field` names it in messages).
    fn cc_from(&self, value: Option<&toml::Value>, field: &str) -> Result<CcSpec, ScenarioError> {
        let spec = match value {
            None => CcSpec::default(),
            Some(toml::Value::String(name)) => CcSpec::named(name).ok_or_else(|| {
                self.err(
                    field,
                    format!(
                        "unknown congestion control '{name}'{}; allowed: {}",
                        suggestion(name, CcSpec::names()),
                        CcSpec::names().join(", ")
                    ),
                )
            })?,
            Some(v @ toml::Value::Table(_)) => CcSpec::from_toml(v.clone())
                .map_err(|e| self.err(field, scheme_error(&e, "algo", &CcSpec::names())))?,
            Some(_) => {
                return Err(self.err(
                    field,
                    "write a name (\"mprdma\") or a table ([cc] algo = \"mprdma\")",
                ))
            }
        };
        spec.validate(&self.scheme_context()?)
            .map_err(|e| self.err(&format!("{field}.{}", e.field), e.message))?;
        Ok(spec)
    }

    /// The switch scheme of `[routing] switch` (runs naming their own use that instead).
    pub fn switch(&self) -> Result<SwitchSpec, ScenarioError> {
        match &self.scenario.routing.switch {
            None => Ok(SwitchSpec::default()),
            Some(v) => self.switch_spec(v, "routing.switch"),
        }
    }

    /// The switch scheme a run uses: its own, else `[routing] switch`.
    pub fn switch_for(&self, run: &LbRun) -> Result<SwitchSpec, ScenarioError> {
        match &run.switch {
            Some(sw) => Ok(sw.clone()),
            None => self.switch(),
        }
    }
}

/// A scheme table's error message, with the known names when the scheme is unknown or missing.
fn scheme_error(message: &str, tag: &str, names: &[&str]) -> String {
    let m = message.trim().to_string();
    if m.contains("missing field") && m.contains(tag) || m.contains("unknown variant") {
        format!("{m} (`{tag}` names it; allowed: {})", names.join(", "))
    } else {
        m
    }
}
