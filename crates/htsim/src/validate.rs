//! `repsim validate-plan`: run a uet-htsim plan, judge it as the reference's `validate.py`
//! does, and set each number beside the reference's committed output.
//!
//! Tolerances (a number outside one makes the run fail): tail and first-finish FCT within 5 %
//! of the reference's (10 % when the experiment degrades links); connection count equal; `New`
//! equal when the reference lost no packet (no retransmission, no NACK); ACKs within 5 %;
//! retransmissions and NACKs within 25 % or 20 packets, whichever is larger. RTS, PULLs and
//! bounces are shown beside the reference's but not judged.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::args::HtsimArgs;
use crate::error::{HtsimError, Result};
use crate::plan::{self, Experiment, Outcome, Verdict};
use crate::run::{self, format_us, HtsimRun};

/// Options of `repsim validate-plan`.
#[derive(Clone, Debug, Default)]
pub struct ValidateOptions {
    /// The plan file.
    pub plan: PathBuf,
    /// The reference's committed output to compare with.
    pub against: Option<PathBuf>,
    /// Where the plan's paths resolve (absent: the plan's folder, then `data/uet-htsim/`).
    pub root: Option<PathBuf>,
    /// Experiments run at once (0: one per core).
    pub jobs: usize,
    /// Only these experiments (1-based positions in the plan); empty: all.
    pub only: Vec<usize>,
}

/// One compared number.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What it is.
    pub quantity: &'static str,
    /// Ours.
    pub ours: f64,
    /// The reference's.
    pub reference: f64,
    /// Whether it is judged, and if so whether it is within tolerance.
    pub within: Option<bool>,
}

/// An experiment's result, ours and (given `--against`) the reference's.
#[derive(Clone, Debug)]
pub struct ExperimentResult {
    /// Its position in the plan, from 1.
    pub position: usize,
    /// The experiment.
    pub experiment: Experiment,
    /// Our outcome, or why it could not run.
    pub ours: std::result::Result<Outcome, String>,
    /// Wall-clock seconds of our run.
    pub wall_s: f64,
    /// The reference's outcome.
    pub reference: Option<Outcome>,
    /// The numbers set side by side.
    pub comparisons: Vec<Comparison>,
    /// Verdicts that differ from the reference's.
    pub verdict_differences: Vec<String>,
}

impl ExperimentResult {
    /// Whether it ran, its verdicts equal the reference's and every judged number is within
    /// tolerance (true without a reference when it ran).
    pub fn agrees(&self) -> bool {
        self.ours.is_ok()
            && self.verdict_differences.is_empty()
            && self.comparisons.iter().all(|c| c.within != Some(false))
    }
}

/// A whole plan's results.
#[derive(Clone, Debug)]
pub struct PlanReport {
    /// Per experiment, in plan order.
    pub results: Vec<ExperimentResult>,
    /// Wall-clock seconds for the whole plan.
    pub wall_s: f64,
}

impl PlanReport {
    /// Whether every experiment agrees with the reference.
    pub fn agrees(&self) -> bool {
        self.results.iter().all(ExperimentResult::agrees)
    }
}

/// Judges a run as `validate.py` does.
pub fn evaluate(e: &Experiment, run: &HtsimRun) -> Outcome {
    let tail_us = run.finishes.last().map_or(0.0, |f| f.finish_us);
    let min_us = run.finishes.first().map_or(0.0, |f| f.finish_us);
    let connections: u64 = run.finishes.iter().map(|f| u64::from(f.messages)).sum();
    let mut verdicts = Vec::new();
    // validate.py judges per-flow targets as it reads the finish lines, before the tail.
    for f in &run.finishes {
        if let Some((_, target)) = e.flow_targets.iter().find(|(n, _)| *n == f.name) {
            verdicts.push(Verdict {
                what: format!("FCT {}", f.name),
                pass: f.finish_us <= *target as f64,
            });
        }
    }
    verdicts.push(Verdict {
        what: "tail FCT".into(),
        pass: !(e.tail_target_us > 0 && tail_us > e.tail_target_us as f64),
    });
    verdicts.push(Verdict {
        what: "connection count".into(),
        pass: connections == u64::from(run.connections),
    });
    Outcome {
        name: e.name.clone(),
        verdicts,
        tail_us,
        min_us,
        connections,
        counters: Some(run.counters),
    }
}

fn within_share(ours: f64, reference: f64, share: f64) -> bool {
    (ours - reference).abs() <= share * reference.abs()
}

/// Sets our outcome beside the reference's under the tolerances of the module docs.
pub fn compare(
    e: &Experiment,
    ours: &Outcome,
    reference: &Outcome,
) -> (Vec<Comparison>, Vec<String>) {
    let fct_share = if e.degrades_links() { 0.10 } else { 0.05 };
    let mut c = vec![
        Comparison {
            quantity: "tail FCT (us)",
            ours: ours.tail_us,
            reference: reference.tail_us,
            within: Some(within_share(ours.tail_us, reference.tail_us, fct_share)),
        },
        Comparison {
            quantity: "min FCT (us)",
            ours: ours.min_us,
            reference: reference.min_us,
            within: Some(within_share(ours.min_us, reference.min_us, fct_share)),
        },
        Comparison {
            quantity: "connections",
            ours: ours.connections as f64,
            reference: reference.connections as f64,
            within: Some(ours.connections == reference.connections),
        },
    ];
    if let (Some(o), Some(r)) = (ours.counters, reference.counters) {
        let lossless = r.rtx == 0 && r.nacks == 0;
        let loose = |a: u64, b: u64| a.abs_diff(b) as f64 <= (0.25 * b as f64).max(20.0);
        let rows: [(&'static str, u64, u64, Option<bool>); 7] = [
            ("New", o.new, r.new, lossless.then_some(o.new == r.new)),
            ("Rtx", o.rtx, r.rtx, Some(loose(o.rtx, r.rtx))),
            ("RTS", o.rts, r.rts, None),
            ("Bounced", o.bounced, r.bounced, None),
            (
                "ACKs",
                o.acks,
                r.acks,
                Some(within_share(o.acks as f64, r.acks as f64, 0.05)),
            ),
            ("NACKs", o.nacks, r.nacks, Some(loose(o.nacks, r.nacks))),
            ("Pulls", o.pulls, r.pulls, None),
        ];
        for (quantity, a, b, within) in rows {
            c.push(Comparison {
                quantity,
                ours: a as f64,
                reference: b as f64,
                within,
            });
        }
    }
    let mut differences = Vec::new();
    for v in &reference.verdicts {
        match ours.verdicts.iter().find(|o| o.what == v.what) {
            Some(o) if o.pass == v.pass => {}
            Some(o) => differences.push(format!(
                "{}: ours {}, reference {}",
                v.what,
                pass_word(o.pass),
                pass_word(v.pass)
            )),
            None => differences.push(format!("{}: no such line in ours", v.what)),
        }
    }
    (c, differences)
}

fn pass_word(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The folders a plan's paths resolve against.
pub fn roots(options: &ValidateOptions) -> Vec<PathBuf> {
    match &options.root {
        Some(r) => vec![r.clone()],
        None => vec![
            options
                .plan
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            PathBuf::from("data/uet-htsim"),
        ],
    }
}

/// One experiment's outcome (or why it could not run) and its wall-clock seconds.
type RunOutcome = (std::result::Result<Outcome, String>, f64);

fn run_one(e: &Experiment, roots: &[PathBuf]) -> RunOutcome {
    let binary = Path::new(&e.binary)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if binary != "htsim_uec" {
        return (
            Err(format!("binary {}: only htsim_uec is modelled", e.binary)),
            0.0,
        );
    }
    let started = Instant::now();
    let result = HtsimArgs::parse(&e.argv())
        .and_then(|args| run::run(&args, roots))
        .map(|r| evaluate(e, &r))
        .map_err(|err| err.0);
    (result, started.elapsed().as_secs_f64())
}

/// Runs a plan (in parallel) and compares it with the reference's output when given.
/// Progress goes to standard error.
pub fn validate(options: &ValidateOptions) -> Result<PlanReport> {
    let text = std::fs::read_to_string(&options.plan)
        .map_err(|e| HtsimError::new(format!("{}: cannot read: {e}", options.plan.display())))?;
    let experiments = plan::parse_plan(&text)
        .map_err(|e| HtsimError::new(format!("{}: {e}", options.plan.display())))?;
    let reference = match &options.against {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| HtsimError::new(format!("{}: cannot read: {e}", p.display())))?;
            let outcomes = plan::parse_output(&text)
                .map_err(|e| HtsimError::new(format!("{}: {e}", p.display())))?;
            if outcomes.len() != experiments.len() {
                return Err(HtsimError::new(format!(
                    "{}: {} experiments, the plan has {}",
                    p.display(),
                    outcomes.len(),
                    experiments.len()
                )));
            }
            for (i, (o, e)) in outcomes.iter().zip(&experiments).enumerate() {
                if o.name != e.name {
                    return Err(HtsimError::new(format!(
                        "{}: experiment {} is '{}', the plan's is '{}'",
                        p.display(),
                        i + 1,
                        o.name,
                        e.name
                    )));
                }
            }
            Some(outcomes)
        }
        None => None,
    };
    if let Some(&bad) = options
        .only
        .iter()
        .find(|&&i| i == 0 || i > experiments.len())
    {
        return Err(HtsimError::new(format!(
            "--only {bad}: the plan has experiments 1..={}",
            experiments.len()
        )));
    }
    let chosen: Vec<usize> = (0..experiments.len())
        .filter(|i| options.only.is_empty() || options.only.contains(&(i + 1)))
        .collect();
    let roots = roots(options);
    let jobs = match options.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(chosen.len().max(1));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<RunOutcome>>> = chosen.iter().map(|_| Mutex::new(None)).collect();
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = chosen.get(k) else {
                    break;
                };
                let e = &experiments[i];
                let (result, wall) = run_one(e, &roots);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!(
                    "[{n}/{}] {} ({}): {:.1} s{}",
                    chosen.len(),
                    i + 1,
                    e.name,
                    wall,
                    result
                        .as_ref()
                        .err()
                        .map_or(String::new(), |m| format!(", error: {m}"))
                );
                *slots[k].lock().expect("no worker panics holding it") = Some((result, wall));
            });
        }
    });
    let results = chosen
        .iter()
        .zip(slots)
        .map(|(&i, slot)| {
            let (ours, wall_s) = slot
                .into_inner()
                .expect("no worker panics holding it")
                .expect("every chosen experiment ran");
            let experiment = experiments[i].clone();
            let reference = reference.as_ref().map(|r| r[i].clone());
            let (comparisons, verdict_differences) = match (&ours, &reference) {
                (Ok(o), Some(r)) => compare(&experiment, o, r),
                _ => (Vec::new(), Vec::new()),
            };
            ExperimentResult {
                position: i + 1,
                experiment,
                ours,
                wall_s,
                reference,
                comparisons,
                verdict_differences,
            }
        })
        .collect();
    Ok(PlanReport {
        results,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

fn signed_share(ours: f64, reference: f64) -> String {
    if reference == 0.0 {
        if ours == 0.0 {
            "0".into()
        } else {
            format!("{:+}", ours)
        }
    } else {
        format!("{:+.1} %", 100.0 * (ours - reference) / reference)
    }
}

/// Prints a report: each experiment's lines as `validate.py` prints them, then, with a
/// reference, the side-by-side table and the differences; finally one line per plan.
pub fn print(report: &PlanReport, out: &mut impl Write) -> std::io::Result<()> {
    for r in &report.results {
        let e = &r.experiment;
        writeln!(
            out,
            "\nExperiment: {}\n==========================================",
            e.name
        )?;
        writeln!(out, "Running {} {}", e.binary, e.argv().join(" "))?;
        let ours = match &r.ours {
            Ok(o) => o,
            Err(m) => {
                writeln!(out, "Error: {m}")?;
                continue;
            }
        };
        for v in &ours.verdicts {
            writeln!(out, "[{}] {}", pass_word(v.pass), verdict_text(v, ours, e))?;
        }
        let ratio = if ours.min_us > 0.0 {
            ours.tail_us / ours.min_us
        } else {
            0.0
        };
        writeln!(
            out,
            "FCT Spread {} -> {} ratio {ratio}",
            format_us(ours.min_us),
            format_us(ours.tail_us)
        )?;
        if let Some(c) = ours.counters {
            writeln!(out, "Summary: {}", c.line())?;
        }
        writeln!(out, "wall time {:.1} s", r.wall_s)?;
        if r.reference.is_some() {
            writeln!(
                out,
                "  {:<15} {:>12} {:>12} {:>10}  within",
                "quantity", "ours", "reference", "diff"
            )?;
            for c in &r.comparisons {
                writeln!(
                    out,
                    "  {:<15} {:>12} {:>12} {:>10}  {}",
                    c.quantity,
                    format_us(c.ours),
                    format_us(c.reference),
                    signed_share(c.ours, c.reference),
                    match c.within {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "-",
                    }
                )?;
            }
            for d in &r.verdict_differences {
                writeln!(out, "  verdict differs: {d}")?;
            }
        }
    }
    let outside: Vec<String> = report
        .results
        .iter()
        .filter(|r| !r.agrees())
        .map(|r| r.position.to_string())
        .collect();
    writeln!(
        out,
        "\n{} experiments in {:.1} s; {} agree{}",
        report.results.len(),
        report.wall_s,
        report.results.len() - outside.len(),
        if outside.is_empty() {
            String::new()
        } else {
            format!(", outside tolerance or differing: {}", outside.join(", "))
        }
    )
}

/// `repsim validate-plan`: runs, prints, and fails when the plan does not agree with the
/// reference's output (or an experiment could not run).
pub fn main(options: &ValidateOptions) -> Result<()> {
    let report = validate(options)?;
    let stdout = std::io::stdout();
    print(&report, &mut stdout.lock()).map_err(|e| HtsimError::new(format!("stdout: {e}")))?;
    if report.agrees() {
        Ok(())
    } else {
        Err(HtsimError::new(format!(
            "{}: {} of {} experiments differ from the reference or did not run",
            options.plan.display(),
            report.results.iter().filter(|r| !r.agrees()).count(),
            report.results.len()
        )))
    }
}

fn verdict_text(v: &Verdict, o: &Outcome, e: &Experiment) -> String {
    match v.what.as_str() {
        "tail FCT" => format!(
            "Tail FCT {} us {} the target of {} us",
            format_us(o.tail_us),
            if v.pass { "below" } else { "above" },
            e.tail_target_us
        ),
        "connection count" => format!("Connection count {}", o.connections),
        other => {
            let flow = other.trim_start_matches("FCT ");
            let target = e
                .flow_targets
                .iter()
                .find(|(n, _)| n == flow)
                .map_or(0, |t| t.1);
            format!(
                "FCT for flow {flow}, {} the target of {target} us",
                if v.pass { "below" } else { "above" }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Counters;

    fn outcome(tail: f64, min: f64, new: u64, rtx: u64, acks: u64, pass: bool) -> Outcome {
        Outcome {
            name: "x".into(),
            verdicts: vec![Verdict {
                what: "tail FCT".into(),
                pass,
            }],
            tail_us: tail,
            min_us: min,
            connections: 4,
            counters: Some(Counters {
                new,
                rtx,
                nacks: rtx,
                acks,
                ..Counters::default()
            }),
        }
    }

    fn experiment(params: &[&str]) -> Experiment {
        Experiment {
            name: "x".into(),
            params: params.iter().map(|s| s.to_string()).collect(),
            ..Experiment::default()
        }
    }

    fn judged(c: &[Comparison], q: &str) -> Option<bool> {
        c.iter().find(|c| c.quantity == q).unwrap().within
    }

    #[test]
    fn tolerances_are_the_acceptance_ones() {
        let reference = outcome(200.0, 100.0, 1000, 100, 1000, true);
        let e = experiment(&[]);
        let (c, d) = compare(
            &e,
            &outcome(209.0, 104.0, 1000, 124, 1049, true),
            &reference,
        );
        assert!(d.is_empty());
        assert!(c.iter().all(|c| c.within != Some(false)), "{c:?}");
        let (c, _) = compare(&e, &outcome(211.0, 100.0, 999, 126, 1051, true), &reference);
        assert_eq!(judged(&c, "tail FCT (us)"), Some(false));
        assert_eq!(judged(&c, "Rtx"), Some(false));
        assert_eq!(judged(&c, "ACKs"), Some(false));
        // With losses in the reference, New is shown but not judged.
        assert_eq!(judged(&c, "New"), None);
        // Degraded links: FCTs get 10 %; small counts get 20 packets.
        let (c, _) = compare(
            &experiment(&["-failed", "8"]),
            &outcome(219.0, 100.0, 1000, 119, 1000, true),
            &reference,
        );
        assert_eq!(judged(&c, "tail FCT (us)"), Some(true));
        let few = outcome(200.0, 100.0, 1000, 3, 1000, true);
        let (c, _) = compare(&e, &outcome(200.0, 100.0, 1000, 23, 1000, true), &few);
        assert_eq!(judged(&c, "Rtx"), Some(true));
        let (c, _) = compare(&e, &outcome(200.0, 100.0, 1000, 24, 1000, true), &few);
        assert_eq!(judged(&c, "Rtx"), Some(false));
    }

    #[test]
    fn new_must_match_without_losses_and_verdicts_must_agree() {
        let reference = outcome(200.0, 100.0, 1000, 0, 1000, false);
        let (c, d) = compare(
            &experiment(&[]),
            &outcome(200.0, 100.0, 1001, 0, 1000, true),
            &reference,
        );
        assert_eq!(judged(&c, "New"), Some(false));
        assert_eq!(d, ["tail FCT: ours PASS, reference FAIL"]);
    }
}
