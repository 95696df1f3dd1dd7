//! uet-htsim's connection matrices, read as `htsim_uec` reads them.
//!
//! The format is repsim's `.cm` (`crates/repsim/src/workload/cm.rs`) with two differences of
//! meaning that the UEC reference has: `start` is in whole microseconds (the value is truncated),
//! and a connection line may carry `msg [ID]`, marking it as one message of a connection. With
//! `-conn_reuse` the messages of one connection (same source, destination and `id`) are sent
//! back to back over it: here they become one flow of their summed size, which finishes when
//! its last message does, counted as that many connections, as the reference counts its
//! `total messages`. Triggers and failure lines are not used by the validation plans and are
//! rejected with an error naming the line.
use crate::error::{HtsimError, Result};

/// One flow to run: a connection, or the messages of one reused connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UecFlow {
    /// The line's `id` (absent: its position, counting from 1).
    pub id: u64,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Start, in microseconds.
    pub start_us: u64,
    /// Payload bytes (summed over its messages).
    pub size: u64,
    /// Connections (messages) it stands for.
    pub messages: u32,
}

/// A parsed matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UecMatrix {
    /// `Nodes`.
    pub nodes: u32,
    /// `Connections` as declared (what the reference's validation counts against).
    pub connections: u32,
    /// The flows to run, in file order (messages merged under `-conn_reuse`).
    pub flows: Vec<UecFlow>,
}

/// Parses matrix text; `conn_reuse` merges each connection's messages. Errors name the line.
pub fn parse(text: &str, conn_reuse: bool) -> Result<UecMatrix> {
    let mut nodes = None;
    let mut connections = None;
    let mut flows: Vec<UecFlow> = Vec::new();
    // Per flow: whether it came from `msg` lines (only those merge).
    let mut is_msg: Vec<bool> = Vec::new();
    let mut lines_read = 0u32;
    for (n, raw) in text.lines().enumerate() {
        let at = |m: String| HtsimError::new(format!("line {}: {m}", n + 1));
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let first = tokens[0];
        if let Some((s, d)) = first.split_once("->") {
            let src: u32 = s.parse().map_err(|_| at(format!("bad source '{s}'")))?;
            let dst: u32 = d
                .parse()
                .map_err(|_| at(format!("bad destination '{d}'")))?;
            let (mut id, mut start, mut size, mut msg) = (None, None, None, false);
            let mut i = 1;
            while i < tokens.len() {
                let key = tokens[i];
                if key == "msg" {
                    msg = true;
                    // An optional message id follows.
                    if tokens.get(i + 1).is_some_and(|t| t.parse::<u64>().is_ok()) {
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                let val = tokens
                    .get(i + 1)
                    .ok_or_else(|| at(format!("'{key}' needs a value")))?;
                let int = |what: &str| {
                    val.parse::<u64>()
                        .map_err(|_| at(format!("bad {what} '{val}'")))
                };
                match key {
                    "id" => id = Some(int("id")?),
                    "size" => size = Some(int("size")?),
                    "start" => {
                        let t: f64 = val.parse().map_err(|_| at(format!("bad start '{val}'")))?;
                        if t.is_nan() || t < 0.0 {
                            return Err(at(format!("start must be >= 0, not {val}")));
                        }
                        // The reference truncates start times to whole microseconds.
                        start = Some(t as u64);
                    }
                    "prio" | "recv_done_trigger" => {}
                    "trigger" | "send_done_trigger" => {
                        return Err(at(format!(
                            "'{key}': triggers are not supported by the htsim front end (run the matrix as a repsim scenario, [workload] type = \"cm\")"
                        )))
                    }
                    other => return Err(at(format!("unknown field '{other}'"))),
                }
                i += 2;
            }
            let size = size.ok_or_else(|| at("missing 'size'".into()))?;
            let start_us = start.ok_or_else(|| at("missing 'start'".into()))?;
            lines_read += 1;
            let id = id.unwrap_or(u64::from(lines_read));
            if conn_reuse && msg {
                let same = flows
                    .iter()
                    .zip(&is_msg)
                    .rposition(|(f, &m)| m && f.src == src && f.dst == dst && f.id == id);
                if let Some(k) = same {
                    if flows[k].start_us != start_us {
                        return Err(at(format!(
                            "message of connection {src}->{dst} id {id} starts at {start_us} us, its connection at {} us: messages starting later are not modelled",
                            flows[k].start_us
                        )));
                    }
                    flows[k].size += size;
                    flows[k].messages += 1;
                    continue;
                }
            }
            flows.push(UecFlow {
                id,
                src,
                dst,
                start_us,
                size,
                messages: 1,
            });
            is_msg.push(msg);
        } else {
            let val = tokens
                .get(1)
                .ok_or_else(|| at(format!("'{first}' needs a value")))?;
            let count = || {
                val.parse::<u32>()
                    .map_err(|_| at(format!("bad count '{val}'")))
            };
            match first.to_ascii_lowercase().as_str() {
                "nodes" => nodes = Some(count()?),
                "connections" => connections = Some(count()?),
                "triggers" | "failures" if *val == "0" => {}
                "trigger" | "triggers" | "failure" | "failures" => {
                    return Err(at(format!(
                        "'{first}': triggers and failure lines are not supported by the htsim front end"
                    )))
                }
                other => return Err(at(format!("unknown line '{other}'"))),
            }
        }
    }
    let nodes = nodes.ok_or_else(|| HtsimError::new("missing 'Nodes' line"))?;
    let connections = connections.ok_or_else(|| HtsimError::new("missing 'Connections' line"))?;
    if connections != lines_read {
        return Err(HtsimError::new(format!(
            "'Connections {connections}' but {lines_read} connection lines"
        )));
    }
    if let Some(f) = flows.iter().find(|f| f.src.max(f.dst) >= nodes) {
        return Err(HtsimError::new(format!(
            "connection {}->{}: host outside 'Nodes {nodes}'",
            f.src, f.dst
        )));
    }
    if let Some(f) = flows.iter().find(|f| f.src == f.dst || f.size == 0) {
        return Err(HtsimError::new(format!(
            "connection {}->{}: a flow needs two hosts and a positive size",
            f.src, f.dst
        )));
    }
    Ok(UecMatrix {
        nodes,
        connections,
        flows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_are_microseconds_and_ids_default_to_positions() {
        let m = parse(
            "Nodes 128\nConnections 2\n127->0 id 7 start 0 size 2000000\n95->0 start 40.9 size 250000\n",
            false,
        )
        .unwrap();
        assert_eq!((m.nodes, m.connections), (128, 2));
        assert_eq!(m.flows[0].id, 7);
        assert_eq!((m.flows[1].id, m.flows[1].start_us), (2, 40));
    }

    #[test]
    fn messages_merge_only_with_connection_reuse() {
        let text = "Nodes 2\nConnections 3\nTriggers 0\n0->1 id 1 msg start 0 size 4086\n0->1 id 1 msg start 0 size 4086\n0->1 id 1 msg 3 start 0 size 10\n";
        let reused = parse(text, true).unwrap();
        assert_eq!(reused.flows.len(), 1);
        assert_eq!((reused.flows[0].size, reused.flows[0].messages), (8182, 3));
        let separate = parse(text, false).unwrap();
        assert_eq!(separate.flows.len(), 3);
        assert!(separate.flows.iter().all(|f| f.messages == 1));
    }

    #[test]
    fn bad_matrices_are_errors_naming_the_line() {
        let e = parse("Nodes 4\nConnections 1\n0->1 start 0\n", false).unwrap_err();
        assert!(e.0.contains("line 3") && e.0.contains("size"), "{e}");
        let e = parse("Nodes 4\nConnections 2\n0->1 start 0 size 5\n", false).unwrap_err();
        assert!(e.0.contains("Connections 2"), "{e}");
        let e = parse("Nodes 4\nConnections 1\n0->9 start 0 size 5\n", false).unwrap_err();
        assert!(e.0.contains("outside"), "{e}");
        let e = parse("Nodes 4\nConnections 1\n0->1 trigger 1 size 5\n", false).unwrap_err();
        assert!(e.0.contains("line 3") && e.0.contains("trigger"), "{e}");
    }
}
