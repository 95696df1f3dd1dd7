//! Import of the reference simulator's `.cm` connection matrices.
//!
//! Header lines `Nodes N`, `Connections C`, `Triggers T` (and `Failures 0`), then one line per
//! connection: `<src>-><dst> [id <n>] [start <ps>] [trigger <k>] size <bytes>
//! [send_done_trigger <k>] [recv_done_trigger <k>] [prio <p>]`, and one per trigger:
//! `trigger id <k> oneshot|multishot|barrier [count <n>]`. Start times are picoseconds; a
//! connection has a start time or a trigger. `send_done_trigger` activates its trigger when the
//! sender sees the flow complete; `recv_done_trigger` and `prio` are read and ignored, as the
//! reference does. Failure lines are not supported (use the scenario's `[[fault]]`).
use super::{FlowSpec, Trigger, TriggerKind};

/// The flows and triggers of a connection matrix.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Matrix {
    /// Flows in id order (lines with equal ids in file order).
    pub flows: Vec<FlowSpec>,
    /// Triggers in file order.
    pub triggers: Vec<Trigger>,
}

/// Parses `.cm` text into flows; `hosts` bounds the host ids. Errors name the line.
pub fn parse_cm(text: &str, hosts: u32) -> Result<Vec<FlowSpec>, String> {
    let m = parse_matrix(text, hosts)?;
    if !m.triggers.is_empty() {
        return Err("the matrix has triggers: read it with parse_matrix".into());
    }
    Ok(m.flows)
}

/// Parses `.cm` text into flows and triggers; `hosts` bounds the host ids. Errors name the
/// line.
pub fn parse_matrix(text: &str, hosts: u32) -> Result<Matrix, String> {
    let mut flows = Vec::new();
    let mut triggers: Vec<Trigger> = Vec::new();
    // (trigger id, line) of every reference, checked against the declarations at the end.
    let mut referenced: Vec<(u64, usize)> = Vec::new();
    let mut declared_nodes = None;
    let mut declared = None;
    let mut declared_triggers = None;
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
            let mut trigger = None;
            let mut fires = None;
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
                    "trigger" | "send_done_trigger" => {
                        let k = val
                            .parse::<u64>()
                            .map_err(|_| at(format!("bad trigger id '{val}'")))?;
                        referenced.push((k, lineno + 1));
                        if key == "trigger" {
                            trigger = Some(k);
                        } else {
                            fires = Some(k);
                        }
                    }
                    "recv_done_trigger" | "prio" => {}
                    other => return Err(at(format!("unknown field '{other}'"))),
                }
                i += 2;
            }
            let bytes = size.ok_or_else(|| at("missing 'size'".into()))?;
            if bytes == 0 {
                return Err(at("size must be positive".into()));
            }
            let start = match (start, trigger) {
                (Some(_), Some(_)) => return Err(at("give 'start' or 'trigger', not both".into())),
                (None, None) => return Err(at("missing 'start' (or 'trigger')".into())),
                (s, _) => s.unwrap_or(0),
            };
            if (trigger.is_some() || fires.is_some()) && id.is_none() {
                return Err(at("a connection with triggers needs an 'id'".into()));
            }
            let mut spec =
                FlowSpec::new(id.unwrap_or(flows.len() as u64 + 1), src, dst, bytes, start);
            spec.trigger = trigger;
            spec.fires = fires;
            flows.push(spec);
        } else if first.eq_ignore_ascii_case("trigger") {
            triggers.push(parse_trigger(&tokens).map_err(at)?);
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
                "triggers" => {
                    declared_triggers = Some(
                        val.parse::<usize>()
                            .map_err(|_| at(format!("bad trigger count '{val}'")))?,
                    )
                }
                "failures" => {
                    if *val != "0" {
                        return Err(at(
                            "failure lines are not supported; use the scenario's [[fault]]".into(),
                        ));
                    }
                }
                "failure" => {
                    return Err(at(
                        "failure lines are not supported; use the scenario's [[fault]]".into(),
                    ))
                }
                other => return Err(at(format!("unknown line '{other}'"))),
            }
        }
    }
    if let Some(n) = declared_nodes {
        if n > hosts {
            return Err(format!(
                "'Nodes {n}': the matrix is for {n} hosts but the topology has {hosts}"
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
    if let Some(t) = declared_triggers {
        if t != triggers.len() {
            return Err(format!(
                "'Triggers {t}' but {} trigger lines",
                triggers.len()
            ));
        }
    }
    for (i, t) in triggers.iter().enumerate() {
        if triggers[..i].iter().any(|u| u.id == t.id) {
            return Err(format!(
                "trigger {} is declared twice (each 'trigger id' must be unique)",
                t.id
            ));
        }
    }
    if let Some((k, line)) = referenced
        .iter()
        .find(|(k, _)| !triggers.iter().any(|t| t.id == *k))
    {
        return Err(format!("line {line}: trigger {k} is not declared"));
    }
    // Flows are identified by id, so the order of their lines carries no meaning: order them
    // by id (stable), so that per-flow random streams, which follow the flow's position, do
    // not depend on it (the shipped matrices are already in id order).
    flows.sort_by_key(|f| f.id);
    Ok(Matrix { flows, triggers })
}

/// `trigger id <k> oneshot|multishot|barrier [count <n>]`.
fn parse_trigger(tokens: &[&str]) -> Result<Trigger, String> {
    let usage = "write 'trigger id <k> oneshot|multishot|barrier [count <n>]'";
    let (id, kind, rest) = match tokens {
        [_, "id", id, kind, rest @ ..] => (id, kind, rest),
        _ => return Err(usage.into()),
    };
    let id = id
        .parse::<u64>()
        .map_err(|_| format!("bad trigger id '{id}'"))?;
    let count = match rest {
        [] => None,
        ["count", n] => Some(
            n.parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("bad count '{n}' (a positive number)"))?,
        ),
        _ => return Err(usage.into()),
    };
    let kind = match (kind.to_ascii_lowercase().as_str(), count) {
        ("oneshot", None) => TriggerKind::Oneshot,
        ("multishot", None) => TriggerKind::Multishot,
        ("barrier", Some(count)) => TriggerKind::Barrier { count },
        ("barrier", None) => return Err("a barrier needs 'count <n>'".into()),
        ("oneshot" | "multishot", Some(_)) => return Err("only a barrier takes a count".into()),
        (other, _) => {
            return Err(format!(
                "unknown trigger kind '{other}'; allowed: oneshot, multishot, barrier"
            ))
        }
    };
    Ok(Trigger {
        id,
        kind,
        notice: false,
    })
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

    #[test]
    fn triggers_are_read_and_checked() {
        let m = parse_matrix(
            "Nodes 4\nConnections 3\nTriggers 2\n\
             0->1 id 1 start 0 size 10 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 10 send_done_trigger 2\n\
             2->3 id 3 trigger 2 size 10\n\
             trigger id 1 oneshot\ntrigger id 2 barrier count 1\n",
            4,
        )
        .unwrap();
        assert_eq!(m.flows[1].trigger, Some(1));
        assert_eq!(m.flows[1].fires, Some(2));
        assert_eq!(m.triggers[1].kind, TriggerKind::Barrier { count: 1 });
        let err = |t: &str| parse_matrix(t, 4).unwrap_err();
        assert!(err("0->1 id 1 trigger 5 size 10\n").contains("trigger 5 is not declared"));
        assert!(
            err("0->1 id 1 start 0 trigger 1 size 10\ntrigger id 1 oneshot\n").contains("not both")
        );
        assert!(err("0->1 trigger 1 size 10\ntrigger id 1 oneshot\n").contains("needs an 'id'"));
        assert!(err("trigger id 1 barrier\n").contains("needs 'count"));
        assert!(err("trigger id 1 sometimes\n").contains("oneshot, multishot, barrier"));
        assert!(err("Triggers 2\ntrigger id 1 oneshot\n").contains("'Triggers 2'"));
        assert!(err("trigger id 1 oneshot\ntrigger id 1 oneshot\n").contains("twice"));
        assert!(
            parse_cm("0->1 id 1 trigger 1 size 10\ntrigger id 1 oneshot\n", 4)
                .unwrap_err()
                .contains("parse_matrix")
        );
    }
}
