//! Import of the reference simulator's `.cm` connection matrices.
//!
//! Header lines `Nodes N`, `Connections C` (and `Triggers`, `Failures`), then one line per
//! connection: `<src>-><dst> [id <n>] [start <ps>] [trigger <k>] size <bytes> ...`. Start times
//! are picoseconds. Connections started by triggers (collective dependencies) are not supported
//! yet and are reported as an error naming the line.
use super::FlowSpec;

/// Parses `.cm` text into flows; `hosts` bounds the host ids. Errors name the line.
pub fn parse_cm(text: &str, hosts: u32) -> Result<Vec<FlowSpec>, String> {
    let mut flows = Vec::new();
    let mut declared_nodes = None;
    let mut declared = None;
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| format!("line {}: {msg}", lineno + 1);
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let first = tokens[0];
        if let Some((s, d)) = first.split_once("->") {
            let src: u32 = s
                .parse()
                .map_err(|_| at(format!("bad source host '{s}'")))?;
            let dst: u32 = d
                .parse()
                .map_err(|_| at(format!("bad destination host '{d}'")))?;
            if src >= hosts || dst >= hosts {
                return Err(at(format!(
                    "host {} is outside the topology (0..{hosts})",
                    src.max(dst)
                )));
            }
            if src == dst {
                return Err(at(format!("flow from host {src} to itself")));
            }
            let mut id = None;
            let mut start = None;
            let mut size = None;
            let mut i = 1;
            while i < tokens.len() {
                let key = tokens[i];
                let val = tokens
                    .get(i + 1)
                    .ok_or_else(|| at(format!("'{key}' needs a value")))?;
                match key {
                    "id" => {
                        id = Some(
                            val.parse::<u64>()
                                .map_err(|_| at(format!("bad id '{val}'")))?,
                        )
                    }
                    "start" => {
                        let t: f64 = val.parse().map_err(|_| at(format!("bad start '{val}'")))?;
                        if t.is_nan() || t < 0.0 {
                            return Err(at(format!("start must be >= 0, not {val}")));
                        }
                        start = Some(t as u64);
                    }
                    "size" => {
                        size = Some(
                            val.parse::<u64>()
                                .map_err(|_| at(format!("bad size '{val}'")))?,
                        )
                    }
                    "trigger" => {
                        return Err(at(
                            "connections started by triggers are not supported yet".into()
                        ))
                    }
                    "send_done_trigger" | "recv_done_trigger" | "prio" => {}
                    other => return Err(at(format!("unknown field '{other}'"))),
                }
                i += 2;
            }
            let bytes = size.ok_or_else(|| at("missing 'size'".into()))?;
            if bytes == 0 {
                return Err(at("size must be positive".into()));
            }
            let start = start.ok_or_else(|| at("missing 'start'".into()))?;
            flows.push(FlowSpec::new(
                id.unwrap_or(flows.len() as u64 + 1),
                src,
                dst,
                bytes,
                start,
            ));
        } else {
            let val = tokens
                .get(1)
                .ok_or_else(|| at(format!("'{first}' needs a value")))?;
            match first.to_ascii_lowercase().as_str() {
                "nodes" => {
                    declared_nodes = Some(
                        val.parse::<u32>()
                            .map_err(|_| at(format!("bad node count '{val}'")))?,
                    )
                }
                "connections" => {
                    declared = Some(
                        val.parse::<usize>()
                            .map_err(|_| at(format!("bad count '{val}'")))?,
                    )
                }
                "triggers" | "failures" => {
                    if *val != "0" {
                        return Err(at(format!("'{first}' sections are not supported yet")));
                    }
                }
                "trigger" | "failure" => {
                    return Err(at(format!("'{first}' lines are not supported yet")))
                }
                other => return Err(at(format!("unknown line '{other}'"))),
            }
        }
    }
    if let Some(n) = declared_nodes {
        if n > hosts {
            return Err(format!(
                "the matrix is for {n} hosts but the topology has {hosts}"
            ));
        }
    }
    if let Some(c) = declared {
        if c != flows.len() {
            return Err(format!(
                "'Connections {c}' but {} connection lines",
                flows.len()
            ));
        }
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_reference_permutation() {
        let text = include_str!("../../../../data/htsim/connection_matrices/perm_n128_s8388608.cm");
        let flows = parse_cm(text, 128).unwrap();
        assert_eq!(flows.len(), 128);
        assert_eq!(flows[0], FlowSpec::new(1, 9, 44, 8_388_608, 0));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_cm("Nodes 4\nConnections 1\n0->9 start 0 size 10\n", 4).unwrap_err();
        assert!(e.starts_with("line 3"), "{e}");
    }
}
