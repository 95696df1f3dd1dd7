//! What the runs of one `repsim run` add up to, and running its load balancers side by side.
//!
//! A command's outputs (flows.csv, the time-series tables, pfc.csv, summary.json, ...) hold
//! every load balancer's rows in the scenario's `lb` order. [`RunOutputs::absorb`] takes one
//! finished run; [`run_side_by_side`] runs several at once on a pool of threads and absorbs
//! them in that same order, so the files are byte for byte those of one run after another
//! (only the wall-clock times differ).
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use indicatif::MultiProgress;
use repsim::engine::Time;
use repsim::metrics::{FlowRow, RunSummary};
use repsim::scenario::LoadedScenario;
use repsim::Simulation;

use crate::limits::{Limiter, Limits, Stop};
use crate::output::{elephant_rows, finished_row, flow_record, pfc_rows, ELEPHANTS, PFC};
use crate::prepared::Prepared;
use crate::progress::Bars;
use crate::series::{RunEntry, Table, Tables};
use crate::threads::Threads;

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

    /// Takes the finished run of `lb` (`wall` seconds; `stop`: why it ended early, if it did);
    /// its warnings and errors go to `say`, a line each (stderr, or above the progress bars
    /// when several runs are drawn at once).
    pub fn absorb(
        &mut self,
        lb: &str,
        sim: &Simulation,
        wall: f64,
        stop: Option<Stop>,
        say: &dyn Fn(String),
    ) -> Result<()> {
        self.rto = Some(sim.rto());
        let mut summary = sim.summary(wall);
        match stop {
            Some(Stop::Stalled(msg)) => {
                say(format!("warning: {lb}: {msg}"));
                summary.stalled.push(msg);
            }
            Some(Stop::Limit(msg)) => {
                // The first limit reached is why the command stopped.
                self.incomplete.get_or_insert(format!("{lb}: {msg}"));
            }
            None => {}
        }
        if summary.flows_completed < summary.flows_total && !self.quiet {
            say(format!(
                "warning: {lb}: {} of {} flows did not finish by t = {:.1} us",
                summary.flows_total - summary.flows_completed,
                summary.flows_total,
                summary.sim_time_us
            ));
        }
        for msg in sim.unreachable_flows() {
            say(format!("error: {lb}: {msg}"));
            self.unreachable += 1;
        }
        if let Some(msg) = sim.halted() {
            say(format!("warning: {lb}: {msg}"));
        }
        if !self.quiet {
            for msg in sim.stalled_flows() {
                say(format!("warning: {lb}: {msg}"));
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
        self.elephants_on |= any_elephants || sim.config().metrics.elephants.is_some();
        self.tables.add(sim, lb)?;
        self.entries.push(RunEntry {
            lb: lb.to_string(),
            seed: summary.seed,
            events: summary.events,
            wall_s: summary.wall_s,
            sim_time_us: summary.sim_time_us,
            peak_packets: summary.peak_packets,
            partitions: sim.partitions(),
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
    /// Threads each simulation runs on (above one: no streaming); a default count runs a run
    /// that cannot be split yet on one thread, with a note, where an asked one refuses it.
    pub threads: Threads,
    /// Print no notes.
    pub quiet: bool,
}

impl InTurn<'_> {
    /// Runs `prepared` (labelled `lbs`) in order under one limiter and absorbs each into
    /// `outputs`; stops after a run that hit a command-wide limit.
    pub fn run(
        &self,
        lbs: &[String],
        prepared: Vec<Prepared>,
        limits: &Limits,
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
                    let workload = sim.workload_label(f.spec.workload);
                    file.push(&flow_record(
                        &finished_row(lb, &f, class, workload, reorder),
                        mixed,
                        false,
                    ))?;
                    tables.add_finished(lb, &f)?;
                }
                Ok(())
            };
            let bars = Bars::alone_if(self.progress);
            let (threads, note) = self.threads.for_run(lb, &p.built.split_blockers());
            if let Some(note) = note.filter(|_| !self.quiet) {
                eprintln!("note: {note}");
            }
            if threads > 1 {
                let (sim, wall, stop) =
                    p.simulate_on_threads_limited(self.scn, lb, threads, bars, &mut limiter)?;
                outputs.absorb(lb, &sim, wall, stop, &|line| eprintln!("{line}"))?;
                continue;
            }
            let (sim, wall, stop) = p.simulate(
                self.scn,
                lb,
                bars,
                self.streaming,
                &mut limiter,
                &mut take_finished,
            )?;
            outputs.absorb(lb, &sim, wall, stop, &|line| eprintln!("{line}"))?;
        }
        Ok(())
    }
}

/// Runs `prepared` (labelled `lbs`) on up to `jobs` threads, each with its own stall check
/// (`limits` must set no command-wide limit: see [`side_by_side_allowed`]), and absorbs them
/// into `outputs` in their order ([`in_order`]: at most 2 x `jobs` simulations in memory; no
/// run is claimed once one failed). With `progress` (a terminal), each running load balancer has
/// a bar; without `quiet`, a line per finished run goes to stderr.
pub fn run_side_by_side(
    scn: &LoadedScenario,
    lbs: &[String],
    prepared: Vec<Prepared>,
    limits: &Limits,
    jobs: usize,
    progress: bool,
    mut outputs: RunOutputs,
) -> Result<RunOutputs> {
    debug_assert!(side_by_side_allowed(false, limits).is_ok());
    let quiet = outputs.quiet;
    let total = prepared.len();
    let threads = jobs.clamp(1, total.max(1));
    let ended = AtomicUsize::new(0);
    let started = Instant::now();
    // One bar per running load balancer on a terminal; messages go above the bars.
    let multi = progress.then(MultiProgress::new);
    let bars = multi.as_ref().map_or(Bars::Hidden, Bars::Among);
    let say = |line: String| match &multi {
        Some(multi) => {
            let _ = multi.println(line);
        }
        None => eprintln!("{line}"),
    };
    let simulate = |index: usize, run: Prepared| -> Result<(Simulation, f64, Option<Stop>)> {
        let lb = &lbs[index];
        // Cancelled: no further run starts (an error stops `in_order` claiming).
        if Limiter::cancelled(limits) {
            bail!("{lb}: interrupted before it started");
        }
        let run_started = Instant::now();
        let result = run.simulate(
            scn,
            lb,
            bars,
            false,
            &mut Limiter::new(limits.clone()),
            &mut |_| Ok(()),
        );
        let ended_count = ended.fetch_add(1, Ordering::SeqCst) + 1;
        if !quiet {
            let outcome = if result.is_ok() {
                "simulated"
            } else {
                "failed"
            };
            say(format!(
                "[{ended_count}/{total}] {lb}: {outcome} after {:.1} s",
                run_started.elapsed().as_secs_f64()
            ));
        }
        result
    };
    // A run's warnings go above the bars (nothing runs inside `MultiProgress::suspend`, whose
    // lock a panic would poison for every other bar).
    let mut absorb = |index: usize, (sim, wall, stop): (Simulation, f64, Option<Stop>)| {
        outputs.absorb(&lbs[index], &sim, wall, stop, &say)
    };
    in_order(lbs, prepared, threads, &simulate, &mut absorb)?;
    if !quiet {
        eprintln!(
            "{total} load balancers in {:.1} s on {threads} threads",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(outputs)
}

/// Whose turn it is to be absorbed, the finished items waiting for it, and what absorbs them
/// (only ever called with the turn held).
struct Turn<'a, T> {
    /// Index of the item to absorb next.
    next: usize,
    /// Finished items waiting for an earlier one, by index.
    waiting: BTreeMap<usize, Result<T>>,
    /// The first item that failed (later items are then not absorbed).
    failed: Option<anyhow::Error>,
    /// Takes each item's result in item order.
    absorb: &'a mut (dyn FnMut(usize, T) -> Result<()> + Send),
}

/// Runs `work` for every item of `items` (named by `names`, one each) on `threads` threads and
/// hands each result to `absorb` in item order, as one thread running them in turn would. An item that finishes
/// before an earlier one waits while its thread goes on with the next item, up to `threads`
/// waiting items (then the thread waits too), so at most 2 x `threads` results exist at once;
/// whichever thread finishes the item whose turn it is absorbs it and every waiting item that
/// follows. A panic in `work` or `absorb` becomes an error naming the item. Once a failure is
/// seen no new item is claimed (items already running finish first); nothing after the first
/// failure in item order is absorbed, and that failure is returned.
pub fn in_order<I: Send, T: Send>(
    names: &[String],
    items: Vec<I>,
    threads: usize,
    work: &(dyn Fn(usize, I) -> Result<T> + Sync),
    absorb: &mut (dyn FnMut(usize, T) -> Result<()> + Send),
) -> Result<()> {
    let total = names.len();
    if items.len() != total {
        bail!("internal error: {} items, {total} names", items.len());
    }
    // Each slot is taken by the one thread that claims its index.
    let slots: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let threads = threads.clamp(1, total.max(1));
    let claimed = AtomicUsize::new(0);
    let stop_claiming = AtomicBool::new(false);
    let turn = Mutex::new(Turn {
        next: 0,
        waiting: BTreeMap::new(),
        failed: None,
        absorb,
    });
    let turned = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if stop_claiming.load(Ordering::SeqCst) {
                    break;
                }
                let index = claimed.fetch_add(1, Ordering::SeqCst);
                let Some(name) = names.get(index) else { break };
                let item = slots[index]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                let item = item.expect("an index is claimed once");
                let result = caught(name, || work(index, item));
                if result.is_err() {
                    stop_claiming.store(true, Ordering::SeqCst);
                }
                // Every claimed item ends up absorbed (or skipped after a failure), so no
                // thread waits for ever: the item whose turn it is is being worked on by a
                // thread that does not wait, and items never claimed all come after every
                // claimed one.
                let mut turn_guard = turn.lock().unwrap_or_else(|e| e.into_inner());
                while turn_guard.next != index && turn_guard.waiting.len() >= threads {
                    turn_guard = turned.wait(turn_guard).unwrap_or_else(|e| e.into_inner());
                }
                turn_guard.waiting.insert(index, result);
                let turn_now = &mut *turn_guard;
                while let Some(result) = turn_now.waiting.remove(&turn_now.next) {
                    let at = turn_now.next;
                    if turn_now.failed.is_none() {
                        let absorb = &mut turn_now.absorb;
                        let absorbed =
                            result.and_then(|item| caught(&names[at], || absorb(at, item)));
                        if let Err(e) = absorbed {
                            stop_claiming.store(true, Ordering::SeqCst);
                            turn_now.failed = Some(e);
                        }
                    }
                    turn_now.next += 1;
                }
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
            "internal error: {} of {total} items absorbed with no failure",
            turn.next
        );
    }
    Ok(())
}

/// Runs `work` for item `lb`, turning a panic into an error that names it (so that the other
/// threads are not left waiting for an item that will never be absorbed).
fn caught<T>(lb: &str, work: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Err(anyhow!("{lb}: panicked: {msg}"))
        }
    }
}

/// Why the load balancers of a command must run one after another even with `--jobs` above 1,
/// if they must: a trace workload streams its flows to one file as they finish, and
/// `--max-events`, `--max-wall` and `--max-memory` budget the whole command (the message
/// names those that are set).
pub fn side_by_side_allowed(streaming: bool, limits: &Limits) -> Result<(), String> {
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
        assert_eq!(msg, "reps: panicked: queue is full");
        let msg = format!("{:#}", formatted.unwrap_err());
        assert_eq!(msg, "ops: panicked: bad index 7");
        assert_eq!(caught("ecmp", || Ok(3)).unwrap(), 3);
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("item-{i}")).collect()
    }

    fn items(n: usize) -> Vec<usize> {
        (0..n).collect()
    }

    /// Items that finish in reverse order are absorbed in item order.
    #[test]
    fn items_are_absorbed_in_order_whatever_order_they_finish_in() {
        let names = names(7);
        for threads in [1, 2, 3, 7, 16] {
            let mut absorbed = Vec::new();
            let work = |i: usize, _: usize| -> Result<usize> {
                std::thread::sleep(std::time::Duration::from_millis(3 * (7 - i as u64)));
                Ok(i)
            };
            in_order(&names, items(7), threads, &work, &mut |i, value| {
                assert_eq!(i, value);
                absorbed.push(i);
                Ok(())
            })
            .unwrap();
            assert_eq!(absorbed, (0..7).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    /// At most 2 x threads results exist at once while an early item is slow.
    #[test]
    fn finished_items_waiting_are_bounded() {
        use std::sync::Arc;
        struct Alive(Arc<AtomicUsize>);
        impl Drop for Alive {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let alive = Arc::new(AtomicUsize::new(0));
        let most = AtomicUsize::new(0);
        let names = names(12);
        let work = |i: usize, _: usize| -> Result<Alive> {
            let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let ms = if i == 0 { 60 } else { 1 };
            std::thread::sleep(std::time::Duration::from_millis(ms));
            Ok(Alive(alive.clone()))
        };
        in_order(&names, items(12), 3, &work, &mut |_, item| {
            drop(item);
            Ok(())
        })
        .unwrap();
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 6, "{most} items alive at once");
        assert!(
            most >= 4,
            "the later items did not go on while item 0 ran ({most})"
        );
    }

    /// A panic stops the pool with an error naming the item; earlier items are absorbed, none
    /// after it, and nothing hangs.
    #[test]
    fn a_panicking_item_stops_the_pool() {
        let names = names(6);
        let mut absorbed = Vec::new();
        let work = |i: usize, _: usize| -> Result<usize> {
            if i == 2 {
                panic!("boom");
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
            Ok(i)
        };
        let err = in_order(&names, items(6), 3, &work, &mut |i, _| {
            absorbed.push(i);
            Ok(())
        })
        .unwrap_err();
        assert_eq!(format!("{err:#}"), "item-2: panicked: boom");
        assert_eq!(absorbed, vec![0, 1]);
    }

    /// After an error no further item starts (one thread: exactly the items up to it).
    #[test]
    fn an_error_stops_new_items() {
        let names = names(5);
        let started = AtomicUsize::new(0);
        let work = |i: usize, _: usize| -> Result<usize> {
            started.fetch_add(1, Ordering::SeqCst);
            if i == 1 {
                bail!("item-1 failed to set up");
            }
            Ok(i)
        };
        let err = in_order(&names, items(5), 1, &work, &mut |_, _| Ok(())).unwrap_err();
        assert_eq!(format!("{err:#}"), "item-1 failed to set up");
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    /// An error or a panic in `absorb` stops the pool like one in `work`; with two failures,
    /// the earlier item's is returned, as in turn.
    #[test]
    fn failures_in_absorb_and_the_earliest_failure_win() {
        let names = names(6);
        let work = |i: usize, _: usize| -> Result<usize> {
            std::thread::sleep(std::time::Duration::from_millis(2 * (6 - i as u64)));
            if i == 4 {
                bail!("item-4 failed");
            }
            Ok(i)
        };
        // (threads, item whose absorb fails, by panicking?, error, items absorbed before it)
        let cases = [
            (3, 2, false, "item-2 could not be written", vec![0, 1]),
            (2, 1, true, "item-1: panicked: disk full", vec![0]),
        ];
        for (threads, bad, panics, want, before) in cases {
            let mut absorbed = Vec::new();
            let err = in_order(&names, items(6), threads, &work, &mut |i, _| {
                if i == bad && panics {
                    panic!("disk full");
                }
                if i == bad {
                    bail!("item-{i} could not be written");
                }
                absorbed.push(i);
                Ok(())
            })
            .unwrap_err();
            assert_eq!(format!("{err:#}"), want);
            assert_eq!(absorbed, before);
        }
    }

    /// The fallback names what forces it: streaming, or the limits actually set.
    #[test]
    fn the_fallback_names_its_reason() {
        let none = Limits::default();
        assert!(side_by_side_allowed(false, &none).is_ok());
        assert!(side_by_side_allowed(true, &none)
            .unwrap_err()
            .contains("trace workload"));
        let wall = Limits {
            max_wall: Some(std::time::Duration::from_secs(60)),
            ..Limits::default()
        };
        assert_eq!(
            side_by_side_allowed(false, &wall).unwrap_err(),
            "--max-wall budgets the whole command"
        );
        let two = Limits {
            max_events: Some(10),
            max_memory: Some(1 << 30),
            ..Limits::default()
        };
        assert_eq!(
            side_by_side_allowed(false, &two).unwrap_err(),
            "--max-events and --max-memory budget the whole command"
        );
    }
}
