//! `type = "explicit"`: a workload written as a list of flows. An entry's `src` and `dst` are
//! hosts or ranges of equal length (pairs in order), or one side is a single host: many-to-one
//! (`src = "8-23", dst = 0` makes 16 flows) or one-to-many (`src = 0, dst = "1-7"` makes 7).
//!
//! ```toml
//! [workload]
//! type = "explicit"
//! flows = [
//!   { src = "0-3", dst = "8-11", size = "1MiB" },
//!   { src = "8-23", dst = 0, size = "64KiB", start = "10us" },
//!   { id = 99, src = 4, dst = 12, size = "1MiB", after = [1, 2], delay = "2us" },
//! ]
//! ```
use serde::{Deserialize, Serialize};

use super::{LoadedScenario, ScenarioError};
use crate::units::{self, SizeQ, TimeQ};
use crate::workload::FlowSpec;

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

/// The (source, destination) pairs an entry names: equal lengths pair in order; one side a
/// single host pairs it with every host of the other.
fn pairs(srcs: &[u32], dsts: &[u32]) -> Result<Vec<(u32, u32)>, String> {
    match (srcs, dsts) {
        ([s], dsts) => Ok(dsts.iter().map(|&d| (*s, d)).collect()),
        (srcs, [d]) => Ok(srcs.iter().map(|&s| (s, *d)).collect()),
        (srcs, dsts) if srcs.len() == dsts.len() => {
            Ok(srcs.iter().copied().zip(dsts.iter().copied()).collect())
        }
        (srcs, dsts) => Err(format!(
            "{} sources but {} destinations: give ranges of equal length (pairs in order), or \
             one single host on either side (many-to-one, one-to-many)",
            srcs.len(),
            dsts.len()
        )),
    }
}

impl LoadedScenario {
    /// The flows of entry `i` of the explicit workload whose fields `at` names (`before`
    /// flows came earlier in it).
    pub(super) fn explicit_entry(
        &self,
        at: &str,
        i: usize,
        e: &FlowEntry,
        hosts: u32,
        before: usize,
        class_of: &dyn Fn(&str, &str) -> Result<u16, ScenarioError>,
    ) -> Result<Vec<FlowSpec>, ScenarioError> {
        let f = |n: &str| format!("{at}.flows[{i}].{n}");
        let srcs = e.src.hosts(hosts).map_err(|m| self.err(&f("src"), m))?;
        let dsts = e.dst.hosts(hosts).map_err(|m| self.err(&f("dst"), m))?;
        let pairs = pairs(&srcs, &dsts).map_err(|m| self.err(&f("dst"), m))?;
        if e.id.is_some() && pairs.len() > 1 {
            return Err(self.err(&f("id"), "an id names one flow; this entry makes several"));
        }
        let bytes = match e.size.0 {
            units::Size::Bytes(b) if b > 0 => b,
            units::Size::Bytes(_) => return Err(self.err(&f("size"), "must be positive")),
            units::Size::Packets(_) => {
                return Err(self.err(&f("size"), "give flow sizes in bytes (B, KiB, MiB...)"))
            }
        };
        let class = match &e.class {
            Some(name) => class_of(name, &f("class"))?,
            None => 0,
        };
        let mut out = Vec::with_capacity(pairs.len());
        for (s, d) in pairs {
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

#[cfg(test)]
mod tests {
    use super::pairs;

    #[test]
    fn one_side_single_fans_in_or_out_and_ranges_pair_in_order() {
        let incast = pairs(&[8, 9, 10], &[0]).unwrap();
        assert_eq!(incast, [(8, 0), (9, 0), (10, 0)]);
        let fan_out = pairs(&[0], &[1, 2]).unwrap();
        assert_eq!(fan_out, [(0, 1), (0, 2)]);
        assert_eq!(pairs(&[1, 2], &[5, 6]).unwrap(), [(1, 5), (2, 6)]);
        let e = pairs(&[1, 2, 3], &[5, 6]).unwrap_err();
        assert!(e.contains("3 sources but 2 destinations"), "{e}");
    }
}
