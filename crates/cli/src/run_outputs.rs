//! What the runs of one `repsim run` add up to, and running its load balancers side by side.
//!
//! A command's outputs (flows.csv, the time-series tables, pfc.csv, summary.json, ...) hold
//! every load balancer's rows in the scenario's `lb` order. [`RunOutputs::absorb`] takes one
//! finished run; [`run_side_by_side`] runs several at once on a pool of threads and absorbs
//! them in that same order, so the files are byte for byte those of one run after another
//! (only the wall-clock times differ).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use anyhow::{anyhow, Result};
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
    next: usize,
    outputs: RunOutputs,
    failed: Option<anyhow::Error>,
}

/// Runs `prepared` (labelled `lbs`) on up to `jobs` threads, each with its own stall check
/// (`limits` must set no command-wide limit: see [`side_by_side_allowed`]), and absorbs them
/// into `outputs` in their order. Without `quiet`, a line per finished run goes to stderr.
pub fn run_side_by_side(
    scn: &LoadedScenario,
    lbs: &[String],
    prepared: Vec<Prepared>,
    limits: &LimitArgs,
    jobs: usize,
    outputs: RunOutputs,
) -> Result<RunOutputs> {
    let quiet = outputs.quiet;
    let total = prepared.len();
    let slots: Vec<Mutex<Option<Prepared>>> =
        prepared.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let claimed = AtomicUsize::new(0);
    let simulated = AtomicUsize::new(0);
    let turn = Mutex::new(Turn {
        next: 0,
        outputs,
        failed: None,
    });
    let turned = Condvar::new();
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            s.spawn(|| loop {
                let k = claimed.fetch_add(1, Ordering::SeqCst);
                let Some(slot) = slots.get(k) else { break };
                let p = slot
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .expect("each run is claimed once");
                let lb = &lbs[k];
                let t = Instant::now();
                let result = p.simulate(
                    scn,
                    lb,
                    false,
                    false,
                    &mut Limiter::new(limits.clone()),
                    &mut |_| Ok(()),
                );
                let n = simulated.fetch_add(1, Ordering::SeqCst) + 1;
                if !quiet && result.is_ok() {
                    eprintln!(
                        "[{n}/{total}] {lb}: simulated in {:.1} s",
                        t.elapsed().as_secs_f64()
                    );
                }
                // Absorb in load-balancer order: wait for the runs before this one.
                let mut g = turn.lock().unwrap_or_else(|e| e.into_inner());
                while g.next != k {
                    g = turned.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                if g.failed.is_none() {
                    let absorbed =
                        result.and_then(|(sim, wall, stop)| g.outputs.absorb(lb, &sim, wall, stop));
                    if let Err(e) = absorbed {
                        g.failed = Some(e.context(format!("running {lb}")));
                    }
                }
                g.next += 1;
                drop(g);
                turned.notify_all();
            });
        }
    });
    let turn = turn.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = turn.failed {
        return Err(e);
    }
    if !quiet {
        eprintln!(
            "{total} load balancers in {:.1} s on {} threads",
            started.elapsed().as_secs_f64(),
            jobs.clamp(1, total.max(1))
        );
    }
    if turn.next != total {
        return Err(anyhow!("{} of {total} runs were absorbed", turn.next));
    }
    Ok(turn.outputs)
}

/// Why the load balancers of a command must run one after another even with `--jobs` above 1,
/// if they must: a trace workload streams its flows to one file as they finish, and
/// `--max-events`, `--max-wall` and `--max-memory` budget the whole command.
pub fn side_by_side_allowed(streaming: bool, limits: &LimitArgs) -> Result<(), &'static str> {
    if streaming {
        return Err("a trace workload streams its finished flows into one flows.csv");
    }
    if limits.max_events.is_some() || limits.max_wall.is_some() || limits.max_memory.is_some() {
        return Err("--max-events, --max-wall and --max-memory budget the whole command");
    }
    Ok(())
}
