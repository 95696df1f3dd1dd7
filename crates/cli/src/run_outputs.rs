//! What the runs of one `repsim run` add up to, and running its load balancers side by side.
//!
//! A command's outputs (flows.csv, the time-series tables, pfc.csv, summary.json, ...) hold
//! every load balancer's rows in the scenario's `lb` order. [`RunOutputs::absorb`] takes one
//! finished run; [`run_side_by_side`] runs several at once on a pool of threads and absorbs
//! them in that same order, so the files are byte for byte those of one run after another
//! (only the wall-clock times differ).
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use repsim::engine::Time;
use repsim::metrics::{FlowRow, RunSummary};
use repsim::scenario::LoadedScenario;
use repsim::Simulation;

use crate::limits::{LimitArgs, Limiter, Stop};
use crate::output::{elephant_rows, finished_row, flow_record, pfc_rows, ELEPHANTS, PFC};
use crate::run::Prepared;
use crate::series::{RunEntry, Table, Tables};

/// Everything the finished runs of a command have produced so far.
pub struct RunOutputs {
    /// flows.csv written as it goes (trace workloads), else `None` and the rows are in `rows`.
    pub flows_file: Option<Table>,
    /// Per-flow rows of every run (when not streamed).
    pub rows: Vec<FlowRow>,
    /// The time-series and per-flow tables.
    pub tables: Tables,
    /// pfc.csv.
    pub pfc: Table,
    /// Some run had PFC.
    pub pfc_on: bool,
    /// elephants.csv.
    pub elephants: Table,
    /// Some run tracked elephants.
    pub elephants_on: bool,
    /// run.json's per-run entries.
    pub entries: Vec<RunEntry>,
    /// The runs' summaries.
    pub runs: Vec<RunSummary>,
    /// The RTO of the last run (for the resolved scenario).
    pub rto: Option<Time>,
    /// Flows that could not reach their destination.
    pub unreachable: usize,
    /// Why a resource limit stopped the command, if one did.
    pub incomplete: Option<String>,
    /// Per-flow rows carry a class column.
    pub mixed: bool,
    /// Print nothing but errors.
    pub quiet: bool,
}

impl RunOutputs {
    /// Empty outputs; `flows_file` and `tables` as the command set them up.
    pub fn new(flows_file: Option<Table>, tables: Tables, mixed: bool, quiet: bool) -> Self {
        RunOutputs {
            flows_file,
            rows: Vec::new(),
            tables,
            pfc: Table::new("pfc", PFC),
            pfc_on: false,
            elephants: Table::new("elephants", ELEPHANTS),
            elephants_on: false,
            entries: Vec::new(),
            runs: Vec::new(),
            rto: None,
            unreachable: 0,
            incomplete: None,
            mixed,
            quiet,
        }
    }

    /// Takes the finished run of `lb` (`wall` seconds; `stop`: why it ended early, if it did).
    pub fn absorb(
        &mut self,
        lb: &str,
        sim: &Simulation,
        wall: f64,
        stop: Option<Stop>,
    ) -> Result<()> {
        self.rto = Some(sim.rto());
        let mut summary = sim.summary(wall);
        match stop {
            Some(Stop::Stalled(msg)) => {
                eprintln!("warning: {lb}: {msg}");
                summary.stalled.push(msg);
            }
            Some(Stop::Limit(msg)) => self.incomplete = Some(format!("{lb}: {msg}")),
            None => {}
        }
        if summary.flows_completed < summary.flows_total && !self.quiet {
            eprintln!(
                "warning: {lb}: {} of {} flows did not finish by t = {:.1} us",
                summary.flows_total - summary.flows_completed,
                summary.flows_total,
                summary.sim_time_us
            );
        }
        for msg in sim.unreachable_flows() {
            eprintln!("error: {lb}: {msg}");
            self.unreachable += 1;
        }
        if !self.quiet {
            for msg in sim.stalled_flows() {
                eprintln!("warning: {lb}: {msg}");
            }
        }
        match self.flows_file.as_mut() {
            Some(file) => {
                for r in sim.flow_rows() {
                    file.push(&flow_record(&r, self.mixed, false))?;
                }
            }
            None => self.rows.extend(sim.flow_rows()),
        }
        self.pfc_on |= sim.pfc_links().is_some();
        pfc_rows(&mut self.pfc, sim, lb)?;
        let any_elephants = elephant_rows(&mut self.elephants, sim, lb)?;
        self.elephants_on |= any_elephants || sim.config().elephants.is_some();
        self.tables.add(sim, lb)?;
        self.entries.push(RunEntry {
            lb: lb.to_string(),
            seed: summary.seed,
            events: summary.events,
            wall_s: summary.wall_s,
            sim_time_us: summary.sim_time_us,
        });
        self.runs.push(summary);
        Ok(())
    }
}

/// Runs the load balancers of a command one after another: the default, and what streaming
/// and the command-wide limits need.
pub struct InTurn<'a> {
    /// The scenario.
    pub scn: &'a LoadedScenario,
    /// Show a progress bar per run.
    pub progress: bool,
    /// Finished flows leave the simulation and go straight to flows.csv.
    pub streaming: bool,
    /// Per-flow rows carry reorder columns.
    pub reorder: bool,
}

impl InTurn<'_> {
    /// Runs `prepared` (labelled `lbs`) in order under one limiter and absorbs each into
    /// `outputs`; stops after a run that hit a command-wide limit.
    pub fn run(
        &self,
        lbs: &[String],
        prepared: Vec<Prepared>,
        limits: &LimitArgs,
        outputs: &mut RunOutputs,
    ) -> Result<()> {
        let mut limiter = Limiter::new(limits.clone());
        for (lb, p) in lbs.iter().zip(prepared) {
            if outputs.incomplete.is_some() {
                break;
            }
            let (mixed, reorder) = (outputs.mixed, self.reorder);
            let RunOutputs {
                flows_file, tables, ..
            } = &mut *outputs;
            let mut take_finished = |sim: &mut Simulation| -> Result<()> {
                let Some(file) = flows_file.as_mut() else {
                    return Ok(());
                };
                for f in sim.drop_finished_prefix() {
                    let class = &sim.classes()[f.spec.class as usize].name;
                    file.push(&flow_record(
                        &finished_row(lb, &f, class, reorder),
                        mixed,
                        false,
                    ))?;
                    tables.add_finished(lb, &f)?;
                }
                Ok(())
            };
            let (sim, wall, stop) = p.simulate(
                self.scn,
                lb,
                self.progress,
                self.streaming,
                &mut limiter,
                &mut take_finished,
            )?;
            outputs.absorb(lb, &sim, wall, stop)?;
        }
        Ok(())
    }
}

/// Whose turn it is to be absorbed, and the outputs.
struct Turn {
    /// Index of the run to absorb next.
    next: usize,
    outputs: RunOutputs,
    /// The first run that failed (later runs are then not absorbed).
    failed: Option<anyhow::Error>,
}

/// Runs `prepared` (labelled `lbs`) on up to `jobs` threads, each with its own stall check
/// (`limits` must set no command-wide limit: see [`side_by_side_allowed`]), and absorbs them
/// into `outputs` in their order. A run that finishes before an earlier one waits for it,
/// holding its simulation, so at most `jobs` simulations are in memory (and a slow early run
/// can leave threads idle). After a run fails (an error, or a panic, which is caught), no
/// further run starts and the first failure is returned. Without `quiet`, a line per
/// finished run goes to stderr.
pub fn run_side_by_side(
    scn: &LoadedScenario,
    lbs: &[String],
    prepared: Vec<Prepared>,
    limits: &LimitArgs,
    jobs: usize,
    outputs: RunOutputs,
) -> Result<RunOutputs> {
    debug_assert!(side_by_side_allowed(false, limits).is_ok());
    let quiet = outputs.quiet;
    let total = prepared.len();
    let threads = jobs.clamp(1, total.max(1));
    let slots: Vec<Mutex<Option<Prepared>>> =
        prepared.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let claimed = AtomicUsize::new(0);
    let ended = AtomicUsize::new(0);
    let stop_claiming = AtomicBool::new(false);
    let turn = Mutex::new(Turn {
        next: 0,
        outputs,
        failed: None,
    });
    let turned = Condvar::new();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if stop_claiming.load(Ordering::SeqCst) {
                    break;
                }
                let index = claimed.fetch_add(1, Ordering::SeqCst);
                let Some(slot) = slots.get(index) else { break };
                let run = slot
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .expect("each run is claimed once");
                let lb = &lbs[index];
                let run_started = Instant::now();
                let result = caught(lb, || {
                    run.simulate(
                        scn,
                        lb,
                        false,
                        false,
                        &mut Limiter::new(limits.clone()),
                        &mut |_| Ok(()),
                    )
                });
                let ended_count = ended.fetch_add(1, Ordering::SeqCst) + 1;
                if !quiet {
                    let outcome = if result.is_ok() {
                        "simulated"
                    } else {
                        "failed"
                    };
                    eprintln!(
                        "[{ended_count}/{total}] {lb}: {outcome} after {:.1} s",
                        run_started.elapsed().as_secs_f64()
                    );
                }
                if result.is_err() {
                    stop_claiming.store(true, Ordering::SeqCst);
                }
                // Absorb in load-balancer order: wait for the runs before this one. Every
                // claimed run advances `next` whatever happened to it, so no thread waits for
                // ever; a run never claimed is after every claimed one.
                let mut turn_guard = turn.lock().unwrap_or_else(|e| e.into_inner());
                while turn_guard.next != index {
                    turn_guard = turned.wait(turn_guard).unwrap_or_else(|e| e.into_inner());
                }
                if turn_guard.failed.is_none() {
                    let absorbed = result.and_then(|(sim, wall, stop)| {
                        caught(lb, || turn_guard.outputs.absorb(lb, &sim, wall, stop))
                    });
                    if let Err(e) = absorbed {
                        stop_claiming.store(true, Ordering::SeqCst);
                        turn_guard.failed = Some(e);
                    }
                }
                turn_guard.next += 1;
                drop(turn_guard);
                turned.notify_all();
            });
        }
    });
    let turn = turn.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = turn.failed {
        return Err(e);
    }
    if turn.next != total {
        bail!(
            "internal error: {} of {total} runs absorbed with no failure",
            turn.next
        );
    }
    if !quiet {
        eprintln!(
            "{total} load balancers in {:.1} s on {threads} threads",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(turn.outputs)
}

/// Runs `work` for load balancer `lb`, turning a panic into an error that names it (so that
/// the other threads are not left waiting for a run that will never be absorbed).
fn caught<T>(lb: &str, work: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Err(anyhow!("{lb}: the simulation panicked: {msg}"))
        }
    }
}

/// Why the load balancers of a command must run one after another even with `--jobs` above 1,
/// if they must: a trace workload streams its flows to one file as they finish, and
/// `--max-events`, `--max-wall` and `--max-memory` budget the whole command (the message
/// names those that are set).
pub fn side_by_side_allowed(streaming: bool, limits: &LimitArgs) -> Result<(), String> {
    if streaming {
        return Err("a trace workload streams its finished flows into one flows.csv".into());
    }
    let set: Vec<&str> = [
        ("--max-events", limits.max_events.is_some()),
        ("--max-wall", limits.max_wall.is_some()),
        ("--max-memory", limits.max_memory.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, on)| on.then_some(flag))
    .collect();
    if !set.is_empty() {
        return Err(format!(
            "{} budget{} the whole command",
            set.join(" and "),
            if set.len() == 1 { "s" } else { "" }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic becomes an error naming the load balancer, so no thread waits for its turn.
    #[test]
    fn a_panicking_run_becomes_an_error() {
        let panicked = caught::<()>("reps", || panic!("queue is full"));
        let formatted = caught::<()>("ops", || panic!("bad index {}", 7));
        let msg = format!("{:#}", panicked.unwrap_err());
        assert_eq!(msg, "reps: the simulation panicked: queue is full");
        let msg = format!("{:#}", formatted.unwrap_err());
        assert_eq!(msg, "ops: the simulation panicked: bad index 7");
        assert_eq!(caught("ecmp", || Ok(3)).unwrap(), 3);
    }

    /// The fallback names what forces it: streaming, or the limits actually set.
    #[test]
    fn the_fallback_names_its_reason() {
        let none = LimitArgs::default();
        assert!(side_by_side_allowed(false, &none).is_ok());
        assert!(side_by_side_allowed(true, &none)
            .unwrap_err()
            .contains("trace workload"));
        let wall = LimitArgs {
            max_wall: Some(std::time::Duration::from_secs(60)),
            ..LimitArgs::default()
        };
        assert_eq!(
            side_by_side_allowed(false, &wall).unwrap_err(),
            "--max-wall budgets the whole command"
        );
        let two = LimitArgs {
            max_events: Some(10),
            max_memory: Some(1 << 30),
            ..LimitArgs::default()
        };
        assert_eq!(
            side_by_side_allowed(false, &two).unwrap_err(),
            "--max-events and --max-memory budget the whole command"
        );
    }
}
