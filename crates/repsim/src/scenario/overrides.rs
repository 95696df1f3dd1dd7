//! Command-line overrides of scenario fields: `--set KEY=VALUE`, KEY a dotted path into the
//! scenario (`transport.evs_size`, `cc`, `queue.ecn_min`, `topology.hosts`), VALUE written as
//! in TOML (`32`, `true`, `"25pkt"`, `["ops", "reps"]`, `{ algo = "nscc" }`) or as a bare word,
//! which is taken as a string (`--set cc=nscc`, `--set queue.size=101pkt`).
//!
//! Overrides are applied to the file's TOML table before it is parsed, so an overridden
//! scenario is checked exactly like a file: an unknown key or a bad value is an error naming
//! the field. `transport.cc` is accepted as another name for `cc` (the congestion control
//! has its own section in files).

use std::path::Path;

use super::{locate, LoadedScenario, ScenarioError};

/// One `KEY=VALUE` override, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// Dotted path of the field, as written.
    pub key: String,
    /// Its new value.
    pub value: toml::Value,
}

impl Override {
    /// Parses `KEY=VALUE`; the message says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("--set {text}: write KEY=VALUE, e.g. transport.evs_size=32"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
            return Err(format!(
                "--set {text}: the key must be a dotted path such as transport.evs_size"
            ));
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(format!("--set {text}: give a value after '='"));
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
    /// `cc = "mprdma"`, becomes `{ algo = "mprdma" }` when a parameter of it is set).
    pub fn apply(&self, table: &mut toml::Table) -> Result<(), String> {
        let path = self.path();
        let (last, parents) = path.split_last().expect("a key has at least one part");
        let mut here = table;
        let mut walked = String::new();
        for part in parents {
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(part);
            let slot = here
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
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
        here.insert(last.to_string(), self.value.clone());
        Ok(())
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
        })?;
        for o in overrides {
            o.apply(&mut table).map_err(|message| ScenarioError {
                file: file.clone(),
                field: o.key.clone(),
                message,
            })?;
        }
        let merged = toml::to_string(&table).map_err(|e| ScenarioError {
            file: file.clone(),
            field: "-".into(),
            message: format!("cannot write the overridden scenario back: {e}"),
        })?;
        let mut loaded = Self::parse(&merged, path).map_err(|mut e| {
            e.message = format!("{} (after --set)", e.message);
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
        Override::parse(key_value)?.apply(&mut t)?;
        Ok(t)
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
    fn bad_overrides_say_why() {
        assert!(Override::parse("transport.evs_size")
            .unwrap_err()
            .contains("KEY=VALUE"));
        assert!(Override::parse("=3").unwrap_err().contains("dotted path"));
        assert!(Override::parse("a..b=3")
            .unwrap_err()
            .contains("dotted path"));
        assert!(Override::parse("seed=").unwrap_err().contains("value"));
        let e = set("seed = 1\n", "seed.x=3").unwrap_err();
        assert!(e.contains("seed holds a value of type integer"), "{e}");
    }
}
