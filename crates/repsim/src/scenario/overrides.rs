//! Command-line overrides of scenario fields: `--set KEY=VALUE`, KEY a dotted path into the
//! scenario (`transport.evs_size`, `cc`, `queue.ecn_min`, `topology.hosts`), where a part may
//! index an array (`workload.flows[0].size`, `lb[1]`), VALUE written as in TOML (`32`, `true`,
//! `"25pkt"`, `["ops", "reps"]`, `{ algo = "nscc" }`) or as a bare word, which is taken as a
//! string (`--set cc=nscc`, `--set queue.size=101pkt`).
//!
//! Overrides are applied to the file's TOML table before it is parsed, so an overridden
//! scenario is checked exactly like a file: an unknown key or a bad value is an error naming
//! the field. `transport.cc` is accepted as another name for `cc` (the congestion control
//! has its own section in files).

use std::path::Path;

use super::locate::without_line;
use super::{locate, LoadedScenario, ScenarioError};

/// A `--set` text that is not `KEY=VALUE`, with what is wrong (an error type of its own, so
/// `?` carries it into any error handling and clap takes [`Override::parse`] as a value
/// parser).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OverrideError {
    /// What is wrong, naming the override.
    pub message: String,
}

impl From<String> for OverrideError {
    fn from(message: String) -> Self {
        OverrideError { message }
    }
}

/// One `KEY=VALUE` override, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// Dotted path of the field, as written.
    pub key: String,
    /// Its new value.
    pub value: toml::Value,
}

impl Override {
    /// Parses `KEY=VALUE`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, OverrideError> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("--set {text}: write KEY=VALUE, e.g. transport.evs_size=32"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
            return Err(format!(
                "--set {text}: the key must be a dotted path such as transport.evs_size"
            )
            .into());
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(format!("--set {text}: give a value after '='").into());
        }
        Ok(Override {
            key: key.to_string(),
            value: parse_value(value),
        })
    }

    /// The key's parts, with `transport.cc` read as `cc`.
    fn path(&self) -> Vec<&str> {
        let parts: Vec<&str> = self.key.split('.').map(str::trim).collect();
        match parts.as_slice() {
            ["transport", "cc", rest @ ..] => {
                std::iter::once("cc").chain(rest.iter().copied()).collect()
            }
            _ => parts,
        }
    }

    /// Writes the value into `table` (creating intermediate tables; a scheme given by name,
    /// `cc = "mprdma"`, becomes `{ algo = "mprdma" }` when a parameter of it is set; an indexed
    /// part, `flows[0]`, steps into an existing array element).
    pub fn apply(&self, table: &mut toml::Table) -> Result<(), String> {
        let path = self.path();
        let steps = path
            .iter()
            .map(|part| Step::parse(part).map_err(|why| format!("--set {}: {why}", self.key)))
            .collect::<Result<Vec<_>, _>>()?;
        let (last, parents) = steps.split_last().expect("a key has at least one part");
        let mut here = table;
        let mut walked = String::new();
        for step in parents {
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(step.name);
            let mut slot = here
                .entry(step.name.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            for &i in &step.indices {
                slot = self.element(slot, i, &mut walked)?;
            }
            if let toml::Value::String(name) = slot {
                let tag = if walked == "cc" { "algo" } else { "scheme" };
                let mut t = toml::Table::new();
                t.insert(tag.into(), toml::Value::String(name.clone()));
                *slot = toml::Value::Table(t);
            }
            here = match slot {
                toml::Value::Table(t) => t,
                other => {
                    return Err(format!(
                        "--set {}: {walked} holds a value of type {}, not a table, so it has no field {}",
                        self.key,
                        other.type_str(),
                        path[walked.split('.').count()..].join(".")
                    ))
                }
            };
        }
        if last.indices.is_empty() {
            here.insert(last.name.to_string(), self.value.clone());
            return Ok(());
        }
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(last.name);
        let Some(mut slot) = here.get_mut(last.name) else {
            return Err(format!(
                "--set {}: there is no array {walked} to index",
                self.key
            ));
        };
        for &i in &last.indices {
            slot = self.element(slot, i, &mut walked)?;
        }
        *slot = self.value.clone();
        Ok(())
    }

    /// Element `i` of the array `slot` (`walked` names it, and gains `[i]`).
    fn element<'a>(
        &self,
        slot: &'a mut toml::Value,
        i: usize,
        walked: &mut String,
    ) -> Result<&'a mut toml::Value, String> {
        let toml::Value::Array(items) = slot else {
            return Err(format!(
                "--set {}: {walked} holds a value of type {}, not an array, so it has no element [{i}]",
                self.key,
                slot.type_str()
            ));
        };
        let len = items.len();
        let item = items.get_mut(i).ok_or_else(|| {
            format!(
                "--set {}: {walked} has {len} element{}, so there is no [{i}] (they count from 0)",
                self.key,
                if len == 1 { "" } else { "s" }
            )
        })?;
        walked.push_str(&format!("[{i}]"));
        Ok(item)
    }

    /// Whether a scenario field (a dotted path with its array indices) is this override's
    /// key, lies inside it or contains it.
    fn concerns(&self, field: &str) -> bool {
        let key: String = self
            .path()
            .iter()
            .map(|p| p.replace(' ', ""))
            .collect::<Vec<_>>()
            .join(".");
        super::locate::overlaps(field, &key)
    }
}

/// One part of an override's key: a field name and the array indices after it (`flows[0]`).
struct Step<'a> {
    name: &'a str,
    indices: Vec<usize>,
}

impl<'a> Step<'a> {
    fn parse(part: &'a str) -> Result<Self, String> {
        let Some((name, mut rest)) = part.split_once('[') else {
            return Ok(Step {
                name: part,
                indices: Vec::new(),
            });
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("'{part}' names no field before its index"));
        }
        let mut indices = Vec::new();
        loop {
            let (index, after) = rest
                .split_once(']')
                .ok_or_else(|| format!("'{part}': close the index with ']'"))?;
            let i = index.trim().parse::<usize>().map_err(|_| {
                format!("'{part}': an index is a whole number from 0, not '{index}'")
            })?;
            indices.push(i);
            if after.is_empty() {
                return Ok(Step { name, indices });
            }
            rest = after.strip_prefix('[').ok_or_else(|| {
                format!("'{part}': write indices as [0][1], with nothing after them")
            })?;
        }
    }
}

impl LoadedScenario {
    /// Applies `--set` overrides (in order) to scenario text and parses the result; `path` is
    /// used for messages and relative paths.
    pub fn parse_with(
        text: &str,
        path: &Path,
        overrides: &[Override],
    ) -> Result<Self, ScenarioError> {
        if overrides.is_empty() {
            return Self::parse(text, path);
        }
        let file = path.display().to_string();
        let mut table: toml::Table = toml::from_str(text).map_err(|e| ScenarioError {
            file: file.clone(),
            field: e
                .span()
                .map(|s| locate(text, s.start))
                .unwrap_or_else(|| "-".into()),
            message: e.message().to_string(),
            also: Vec::new(),
        })?;
        for o in overrides {
            o.apply(&mut table).map_err(|message| ScenarioError {
                file: file.clone(),
                field: o.key.clone(),
                message,
                also: Vec::new(),
            })?;
        }
        let merged = toml::to_string(&table).map_err(|e| ScenarioError {
            file: file.clone(),
            field: "-".into(),
            message: format!("cannot write the overridden scenario back: {e}"),
            also: Vec::new(),
        })?;
        // Line numbers would point into the overridden text, which is not the file: name the
        // field, and the override when the error concerns its key.
        let mut loaded = Self::parse(&merged, path).map_err(|mut e| {
            let set_by = |e: &mut ScenarioError| {
                e.field = without_line(&e.field).to_string();
                e.message = match overrides.iter().rev().find(|o| o.concerns(&e.field)) {
                    Some(o) => format!("{} (set by --set {}={})", e.message, o.key, o.value),
                    None => format!("{} (after --set)", e.message),
                };
            };
            set_by(&mut e);
            e.also.iter_mut().for_each(set_by);
            e
        })?;
        loaded.overrides = overrides
            .iter()
            .map(|o| format!("{}={}", o.key, o.value))
            .collect();
        Ok(loaded)
    }
}

/// A value as TOML reads it, or else the text itself as a string.
fn parse_value(text: &str) -> toml::Value {
    format!("value = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("value"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    fn set(text: &str, key_value: &str) -> Result<toml::Table, String> {
        let mut t = table(text);
        Override::parse(key_value)
            .map_err(|e| e.to_string())?
            .apply(&mut t)?;
        Ok(t)
    }

    #[test]
    fn a_parse_error_is_a_std_error_that_question_mark_carries() {
        fn parse_all(texts: &[&str]) -> Result<Vec<Override>, Box<dyn std::error::Error>> {
            Ok(texts
                .iter()
                .map(|t| Override::parse(t))
                .collect::<Result<_, _>>()?)
        }
        assert_eq!(parse_all(&["seed=3"]).unwrap().len(), 1);
        let e = parse_all(&["seed=3", "no-equals-sign"]).unwrap_err();
        assert!(e.to_string().contains("write KEY=VALUE"), "{e}");
    }

    #[test]
    fn values_are_toml_or_bare_strings() {
        assert_eq!(parse_value("32"), toml::Value::Integer(32));
        assert_eq!(parse_value("true"), toml::Value::Boolean(true));
        assert_eq!(parse_value("nscc"), toml::Value::String("nscc".into()));
        assert_eq!(
            parse_value("\"25pkt\""),
            toml::Value::String("25pkt".into())
        );
        assert_eq!(parse_value("25pkt"), toml::Value::String("25pkt".into()));
        assert!(parse_value("[\"ops\", \"reps\"]").is_array());
    }

    #[test]
    fn sets_nested_fields_and_creates_sections() {
        let t = set("seed = 1\n", "transport.evs_size=32").unwrap();
        assert_eq!(t["transport"]["evs_size"].as_integer(), Some(32));
        let t = set("[queue]\nsize = \"100pkt\"\n", "queue.size=101pkt").unwrap();
        assert_eq!(t["queue"]["size"].as_str(), Some("101pkt"));
        let t = set("seed = 1\n", "seed=20").unwrap();
        assert_eq!(t["seed"].as_integer(), Some(20));
    }

    #[test]
    fn transport_cc_is_the_cc_section() {
        let t = set("[cc]\nalgo = \"mprdma\"\n", "transport.cc=nscc").unwrap();
        assert_eq!(t["cc"].as_str(), Some("nscc"));
        assert!(t.get("transport").is_none());
    }

    #[test]
    fn a_named_scheme_becomes_a_table_when_a_parameter_is_set() {
        let t = set("cc = \"mprdma\"\n", "cc.initial_cwnd=50pkt").unwrap();
        assert_eq!(t["cc"]["algo"].as_str(), Some("mprdma"));
        assert_eq!(t["cc"]["initial_cwnd"].as_str(), Some("50pkt"));
    }

    #[test]
    fn an_index_steps_into_an_array() {
        let flows = "[workload]\nflows = [{ size = \"1MiB\" }, { size = \"2MiB\" }]\n";
        let t = set(flows, "workload.flows[1].size=4MiB").unwrap();
        assert_eq!(t["workload"]["flows"][1]["size"].as_str(), Some("4MiB"));
        assert_eq!(t["workload"]["flows"][0]["size"].as_str(), Some("1MiB"));
        let t = set("lb = [\"ops\", \"reps\"]\n", "lb[1]=ecmp").unwrap();
        assert_eq!(t["lb"][1].as_str(), Some("ecmp"));
        let e = set(flows, "workload.flows[2].size=4MiB").unwrap_err();
        assert!(
            e.contains("workload.flows has 2 elements, so there is no [2]"),
            "{e}"
        );
        let e = set(flows, "workload[0].size=1").unwrap_err();
        assert!(e.contains("not an array"), "{e}");
        let e = set(flows, "workload.flows[x].size=1").unwrap_err();
        assert!(e.contains("whole number"), "{e}");
        let e = set("seed = 1\n", "lb[0]=ecmp").unwrap_err();
        assert!(e.contains("no array lb"), "{e}");
    }

    #[test]
    fn bad_overrides_say_why() {
        assert!(Override::parse("transport.evs_size")
            .unwrap_err()
            .message
            .contains("KEY=VALUE"));
        assert!(Override::parse("=3")
            .unwrap_err()
            .message
            .contains("dotted path"));
        assert!(Override::parse("a..b=3")
            .unwrap_err()
            .message
            .contains("dotted path"));
        assert!(Override::parse("seed=")
            .unwrap_err()
            .message
            .contains("value"));
        let e = set("seed = 1\n", "seed.x=3").unwrap_err();
        assert!(e.contains("seed holds a value of type integer"), "{e}");
    }
}
