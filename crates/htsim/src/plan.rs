//! uet-htsim's validation plans (`validate_*.txt`) and their committed outputs
//! (`validate_outputs/*.out`), read as the reference's `validate.py` writes and reads them.
//!
//! A plan is a list of experiments: a connection-matrix path on its own line, then lines
//! starting with `!`: `!Experiment NAME`, `!Binary PATH`, `!Param FLAGS` (repeatable),
//! `!tailFCT US` and `!FCT FLOW US`. Lines starting with `#` are comments. The keys are
//! recognised by substring in that order of precedence, as `validate.py` does.
use crate::error::{HtsimError, Result};
use crate::run::Counters;

/// One experiment of a plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Experiment {
    /// Its name (`!Experiment`), trimmed.
    pub name: String,
    /// The connection matrix, as the plan writes it.
    pub matrix: String,
    /// The binary (`!Binary`; the reference's default is `./htsim_eqds`).
    pub binary: String,
    /// The flags of every `!Param` line, in order.
    pub params: Vec<String>,
    /// `!tailFCT` in microseconds (0: no target).
    pub tail_target_us: u64,
    /// `!FCT FLOW US` targets.
    pub flow_targets: Vec<(String, u64)>,
    /// Line of the plan where it starts.
    pub line: usize,
}

impl Experiment {
    /// The htsim command line it runs (`-tm MATRIX` and its flags).
    pub fn argv(&self) -> Vec<String> {
        let mut v = vec!["-tm".to_string(), self.matrix.clone()];
        v.extend(self.params.iter().cloned());
        v
    }

    /// Whether it degrades links (`-failed`), which widens the FCT tolerance.
    pub fn degrades_links(&self) -> bool {
        self.params
            .windows(2)
            .any(|w| w[0] == "-failed" && w[1] != "0")
    }
}

/// Parses a plan's text.
pub fn parse_plan(text: &str) -> Result<Vec<Experiment>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let file = lines[i].trim_end();
        i += 1;
        if file.starts_with('#') || file.trim().is_empty() {
            continue;
        }
        if file.starts_with('!') {
            return Err(HtsimError::new(format!(
                "line {i}: '{file}' comes before any connection matrix"
            )));
        }
        let mut e = Experiment {
            matrix: file.trim().to_string(),
            binary: "./htsim_eqds".into(),
            line: i,
            ..Experiment::default()
        };
        while i < lines.len() && lines[i].starts_with('!') {
            let p = lines[i];
            let at = i + 1;
            i += 1;
            let rest = p.split_once(' ').map_or("", |(_, r)| r).trim();
            let number = |s: &str| {
                s.trim().parse::<u64>().map_err(|_| {
                    HtsimError::new(format!("line {at}: '{}' is not a number", s.trim()))
                })
            };
            if p.contains("Binary") {
                e.binary = rest.to_string();
            } else if p.contains("Param") {
                e.params.extend(rest.split_whitespace().map(str::to_string));
            } else if p.contains("tailFCT") {
                e.tail_target_us = number(rest)?;
            } else if p.contains("FCT") {
                let q: Vec<&str> = p.split_whitespace().collect();
                if q.len() < 3 {
                    return Err(HtsimError::new(format!(
                        "line {at}: '!FCT' needs a flow and a time"
                    )));
                }
                e.flow_targets.push((q[1].to_string(), number(q[2])?));
            } else if p.contains("Experiment") {
                e.name = rest.to_string();
            }
        }
        out.push(e);
    }
    Ok(out)
}

/// A verdict line of the validation.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What was judged: `tail FCT`, `connection count`, or `FCT <flow>`.
    pub what: String,
    /// PASS (true) or FAIL.
    pub pass: bool,
}

/// One experiment's result as the validation prints it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Experiment name.
    pub name: String,
    /// The verdicts, in printed order.
    pub verdicts: Vec<Verdict>,
    /// Tail FCT (the last `finished` line's time), microseconds.
    pub tail_us: f64,
    /// The first `finished` line's time, microseconds.
    pub min_us: f64,
    /// Connections that finished.
    pub connections: u64,
    /// Summary counters (absent when the run printed none).
    pub counters: Option<Counters>,
}

fn counters_from(line: &str) -> Option<Counters> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let get = |key: &str| {
        t.iter()
            .position(|x| *x == key)
            .and_then(|i| t.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(Counters {
        new: get("New:")?,
        rtx: get("Rtx:")?,
        rts: get("RTS:").unwrap_or(0),
        bounced: get("Bounced:").unwrap_or(0),
        acks: get("ACKs:")?,
        nacks: get("NACKs:")?,
        pulls: get("Pulls:").unwrap_or(0),
        sleek: get("sleek_pkts:").unwrap_or(0),
    })
}

/// Parses a committed validation output (`validate_outputs/*.out`).
pub fn parse_output(text: &str) -> Result<Vec<Outcome>> {
    let mut out: Vec<Outcome> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let bad = || HtsimError::new(format!("line {}: cannot read '{line}'", n + 1));
        if let Some(name) = line.strip_prefix("Experiment:") {
            out.push(Outcome {
                name: name.trim().to_string(),
                ..Outcome::default()
            });
            continue;
        }
        let Some(cur) = out.last_mut() else {
            continue;
        };
        let verdict = if line.starts_with("[PASS]") {
            Some(true)
        } else if line.starts_with("[FAIL]") {
            Some(false)
        } else {
            None
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(pass) = verdict {
            let what = if line.contains("Tail FCT") {
                cur.tail_us = words.get(3).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
                "tail FCT".to_string()
            } else if line.contains("Connection count") || line.contains("Total connections") {
                if pass {
                    cur.connections = words.get(3).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
                } else {
                    // "[FAIL] Total connections in connection matrix was C  but only A finished"
                    let only = words.iter().position(|w| *w == "only").ok_or_else(bad)?;
                    cur.connections = words
                        .get(only + 1)
                        .and_then(|v| v.parse().ok())
                        .ok_or_else(bad)?;
                }
                "connection count".to_string()
            } else if line.contains("for flow") {
                let flow = words
                    .iter()
                    .position(|w| *w == "flow")
                    .and_then(|i| words.get(i + 1))
                    .ok_or_else(bad)?;
                format!("FCT {flow}")
            } else {
                return Err(bad());
            };
            cur.verdicts.push(Verdict { what, pass });
        } else if let Some(rest) = line.strip_prefix("FCT Spread") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            cur.min_us = w.first().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        } else if let Some(rest) = line.strip_prefix("Summary:") {
            cur.counters = Some(counters_from(rest).ok_or_else(bad)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_plan_as_validate_py_does() {
        let plan = "# comment\nconnection_matrices/outcast_incast.cm\n!Experiment outcast incast\n!Binary ./htsim_uec\n!Param -sender_cc_only\n!Param -end 3000\n!tailFCT 2500\n!FCT Uec_1_0 215\n\nconnection_matrices/one.cm \n!Experiment One\n!Param -end 1000 -paths 128\n";
        let e = parse_plan(plan).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].name, "outcast incast");
        assert_eq!(e[0].binary, "./htsim_uec");
        assert_eq!(e[0].params, ["-sender_cc_only", "-end", "3000"]);
        assert_eq!(e[0].tail_target_us, 2500);
        assert_eq!(e[0].flow_targets, [("Uec_1_0".to_string(), 215)]);
        assert_eq!(e[1].matrix, "connection_matrices/one.cm");
        assert_eq!(e[1].binary, "./htsim_eqds");
        assert_eq!(e[1].tail_target_us, 0);
        assert_eq!(
            e[1].argv(),
            [
                "-tm",
                "connection_matrices/one.cm",
                "-end",
                "1000",
                "-paths",
                "128"
            ]
        );
        assert!(parse_plan("!Param -end 5\n").is_err());
        assert!(parse_plan("m.cm\n!tailFCT soon\n").is_err());
    }

    #[test]
    fn reads_a_committed_output() {
        let text = "Using validate_uec_sender.txt as experiment plan\nUsing binary: ./htsim_uec\n\n\nExperiment: outcast incast \n==========\nRunning ./htsim_uec -tm x\n[FAIL] FCT 235.068 us for flow  Uec_1_0 which is higher than the target of 215 us\n[PASS] Tail FCT 1637.76 us below the target of 2500 us\n[PASS] Connection count 21\nFCT Spread 235.068 -> 1637.76 ratio 6.96\nSummary: New: 10290 Rtx: 0 RTS: 0 Bounced: 0 ACKs: 2609 NACKs: 0 Pulls: 42288 sleek_pkts: 0\nExperiment: two\n[FAIL] Tail FCT 10 us above the target of 5 us\n[FAIL] Total connections in connection matrix was  4  but only  3 finished\nFCT Spread 1.5 -> 10 ratio 6.6\nSummary: New: 1 Rtx: 2 RTS: 3 Bounced: 0 ACKs: 4 NACKs: 5 Pulls: 0 sleek_pkts: 0\n";
        let o = parse_output(text).unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].name, "outcast incast");
        assert_eq!(
            o[0].verdicts,
            [
                Verdict {
                    what: "FCT Uec_1_0".into(),
                    pass: false
                },
                Verdict {
                    what: "tail FCT".into(),
                    pass: true
                },
                Verdict {
                    what: "connection count".into(),
                    pass: true
                },
            ]
        );
        assert_eq!(
            (o[0].tail_us, o[0].min_us, o[0].connections),
            (1637.76, 235.068, 21)
        );
        assert_eq!(o[0].counters.unwrap().pulls, 42288);
        assert_eq!(o[1].connections, 3);
        assert_eq!(o[1].counters.unwrap().nacks, 5);
    }
}
