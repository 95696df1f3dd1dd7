//! Import of the reference simulator's `.topo` fat-tree descriptions.
//!
//! Format: `Key value` lines, `#` comments, keys case-insensitive. Header keys `Nodes`, `Tiers`,
//! `Podsize`; then one `Tier k` block per tier with `Downlink_speed_Gbps`, `Radix_Down`,
//! `Radix_Up`, `Downlink_Latency_ns`, `Switch_Latency_ns`, `Oversubscribed`, `Bundle`.
//! Unlike the reference tokenizer we accept any whitespace between tokens.
use serde::{Deserialize, Serialize};

use super::builder::{BuildError, FileReader, TopologyBuilder};
use super::{FatTreeSpec, TierSpec, Topology};
use crate::engine::time::NS;
use crate::units::TimeQ;

/// Parses `.topo` text; errors name the line.
pub fn parse_topo(text: &str) -> Result<FatTreeSpec, String> {
    let mut hosts = None;
    let mut tiers_n = None;
    let mut pod = None;
    let mut tiers: Vec<TierSpec> = Vec::new();
    let mut current: Option<usize> = None;
    let mut seen: Vec<Vec<String>> = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| format!("line {}: {msg}", lineno + 1);
        let mut tok = line.split_whitespace();
        let key = tok.next().unwrap_or("").to_ascii_lowercase();
        let val = tok
            .next()
            .ok_or_else(|| at(format!("'{key}' needs a value")))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| at(format!("'{v}' is not a number")))
        };
        let int = |v: &str| -> Result<u32, String> {
            let x = num(v)?;
            if x < 0.0 || x.fract() != 0.0 {
                return Err(at(format!("'{v}' must be a non-negative integer")));
            }
            Ok(x as u32)
        };
        match key.as_str() {
            "nodes" => hosts = Some(int(val)?),
            "tiers" => tiers_n = Some(int(val)?),
            "podsize" => pod = Some(int(val)?),
            "tier" => {
                let k = int(val)? as usize;
                if k != tiers.len() {
                    return Err(at(format!(
                        "expected 'Tier {}' next, found 'Tier {k}'",
                        tiers.len()
                    )));
                }
                tiers.push(TierSpec {
                    downlink_rate_bps: 0,
                    downlink_latency: 0,
                    switch_latency: 0,
                    radix_down: 0,
                    radix_up: 0,
                    bundle: 1,
                });
                seen.push(Vec::new());
                current = Some(k);
            }
            _ => {
                let k =
                    current.ok_or_else(|| at(format!("'{key}' must come after a 'Tier' line")))?;
                if seen[k].contains(&key) {
                    return Err(at(format!("duplicate '{key}' in tier {k}")));
                }
                seen[k].push(key.clone());
                let t = &mut tiers[k];
                match key.as_str() {
                    "downlink_speed_gbps" => t.downlink_rate_bps = (num(val)? * 1e9) as u64,
                    "radix_down" => t.radix_down = int(val)?,
                    "radix_up" => t.radix_up = int(val)?,
                    "downlink_latency_ns" => t.downlink_latency = (num(val)? * NS as f64) as u64,
                    "switch_latency_ns" => t.switch_latency = (num(val)? * NS as f64) as u64,
                    "bundle" => t.bundle = int(val)?,
                    "oversubscribed" => {
                        let o = int(val)?;
                        if k == 0 && t.radix_up != 0 && o != 0 && t.radix_down != t.radix_up * o {
                            return Err(at(format!(
                                "Oversubscribed {o} does not equal Radix_Down/Radix_Up ({}/{})",
                                t.radix_down, t.radix_up
                            )));
                        }
                    }
                    "queue_up" | "queue_down" => {
                        return Err(at(format!(
                            "'{key}' is not supported: set queue sizes in the scenario"
                        )))
                    }
                    _ => return Err(at(format!("unknown key '{key}'"))),
                }
            }
        }
    }
    let hosts = hosts.ok_or("missing 'Nodes'")?;
    let tiers_n = tiers_n.ok_or("missing 'Tiers'")?;
    if tiers.len() as u32 != tiers_n {
        return Err(format!("'Tiers {tiers_n}' but {} tier blocks", tiers.len()));
    }
    for (k, t) in tiers.iter().enumerate() {
        if t.downlink_rate_bps == 0 || t.radix_down == 0 || t.downlink_latency == 0 {
            return Err(format!(
                "tier {k} needs Downlink_speed_Gbps, Radix_Down and a non-zero Downlink_Latency_ns"
            ));
        }
    }
    Ok(FatTreeSpec {
        hosts,
        pod_size: pod.unwrap_or(hosts),
        tiers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_reference_files() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/htsim/topologies");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let spec = parse_topo(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if spec.hosts <= 1024 {
                let topo = spec
                    .build()
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(topo.hosts, spec.hosts);
            }
            n += 1;
        }
        assert!(n >= 20);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_topo("Nodes 8\nTiers 2\nRadix_Down 4\n").unwrap_err();
        assert!(e.starts_with("line 3"), "{e}");
    }
}

/// `[topology] type = "topo_file"`: a reference `.topo` file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopoFileConfig {
    /// Path, relative to the scenario file.
    pub file: String,
    /// Override of every tier's switch latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_latency: Option<TimeQ>,
}

impl TopologyBuilder for TopoFileConfig {
    fn build(&self, files: &FileReader) -> Result<Topology, BuildError> {
        let (path, text) = files(&self.file).map_err(|e| BuildError::at("file", e))?;
        let mut spec = parse_topo(&text)
            .map_err(|e| BuildError::at("file", format!("{}: {e}", path.display())))?;
        if let Some(latency) = self.switch_latency {
            for tier in &mut spec.tiers {
                tier.switch_latency = latency.0;
            }
        }
        Ok(spec.build()?)
    }
}
