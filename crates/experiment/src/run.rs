//! `repsim run`, `repsim bench` and `repsim check`.
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use repsim::metrics::RunSummary;
use repsim::scenario::{LoadedScenario, Override};
use repsim::Simulation;

use crate::files::write_atomic;
use crate::limits::{Limiter, Limits};
use crate::output::{collectives_csv, column, flow_columns, flows_csv, slowdown_csv, summary_json};
use crate::prepared::{peak_rss, CollectMode, Prepared};
use crate::progress::Bars;
use crate::run_outputs::{run_side_by_side, side_by_side_allowed, InTurn, RunOutputs};
use crate::series::{self, Format, RunInfo, Table, Tables};
use crate::threads::{ThreadSource, Threads};

/// Everything `repsim run` is asked for, as plain options: the scenario file, where its files
/// go, how its summary is printed, and how it runs ([`RunOptions`]).
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Output directory (`None`: `results/<scenario name>/`).
    pub out: Option<PathBuf>,
    /// Overrides of scenario fields, applied in order.
    pub set: Vec<Override>,
    /// Print the summary as JSON on stdout instead of the table.
    pub json: bool,
    /// How the runs go (load balancers, seed, collection, format, jobs, limits, quiet).
    pub options: RunOptions,
}

impl RunRequest {
    /// Runs `scenario` as `repsim run SCENARIO` does with no other flag.
    pub fn new(scenario: impl Into<PathBuf>) -> Self {
        RunRequest {
            scenario: scenario.into(),
            out: None,
            set: Vec::new(),
            json: false,
            options: RunOptions::default(),
        }
    }
}

/// Everything `repsim bench` is asked for, as plain options.
#[derive(Clone, Debug)]
pub struct BenchRequest {
    /// Scenario to time.
    pub scenario: PathBuf,
    /// Load balancer.
    pub lb: String,
    /// Repetitions (the fastest is reported; with `scale`, of every step); at least 1.
    pub repeat: u32,
    /// Time series to collect while timing.
    pub collect: CollectMode,
    /// Overrides of scenario fields, applied in order.
    pub set: Vec<Override>,
    /// Run the scale series instead (the scenario is ignored); see [`crate::scale`].
    pub scale: bool,
    /// Scale series: largest step to run (hosts).
    pub max_hosts: u32,
    /// Scale series: smallest step to run (hosts).
    pub min_hosts: u32,
    /// Scale series: CSV file (rewritten after every step).
    pub csv: PathBuf,
    /// Scale series: no progress bar while a step runs (it is only drawn on a terminal).
    pub quiet: bool,
    /// Threads one simulation runs on (see [`repsim::sim::parallel`]).
    pub threads: u32,
}

impl Default for BenchRequest {
    fn default() -> Self {
        BenchRequest {
            scenario: "scenarios/permutation-1024.toml".into(),
            lb: "reps".into(),
            repeat: 1,
            collect: CollectMode::None,
            set: Vec::new(),
            scale: false,
            max_hosts: 131_072,
            min_hosts: 0,
            csv: "results/bench-scale.csv".into(),
            quiet: false,
            threads: 1,
        }
    }
}

/// The console table of a scenario's runs that `repsim run` prints: one row per load balancer,
/// its columns named as `sweep.csv` and the Python frames name them (`fct_p99_us`).
pub fn summary_table(runs: &[RunSummary]) -> String {
    let w = runs.iter().map(|r| r.lb.len()).max().unwrap_or(0).max(8);
    let mut s = format!(
        "{:<w$} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8} {:>9} {:>8} {:>11} {:>7}\n",
        "lb",
        "completed",
        column("fct_us.min"),
        column("fct_us.mean"),
        column("fct_us.p99"),
        column("fct_us.max"),
        "drops",
        "trims",
        "ecn",
        "rtx",
        "events",
        "wall_s"
    );
    for r in runs {
        s += &format!(
            "{:<w$} {:>11} {:>11.1} {:>11.1} {:>11.1} {:>11.1} {:>8} {:>8} {:>9} {:>8} {:>11} {:>7.2}\n",
            r.lb,
            format!("{}/{}", r.flows_completed, r.flows_total),
            r.fct_us.min,
            r.fct_us.mean,
            r.fct_us.p99,
            r.fct_us.max,
            r.drops,
            r.trims,
            r.ecn_marks,
            r.retransmissions,
            r.events,
            r.wall_s
        );
    }
    s.trim_end().to_string()
}

/// What a run of a scenario asks for beside the scenario itself: what `repsim run` takes from
/// its flags, and the Python package from its arguments.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Load balancers to run (`None`: the scenario's `lb`).
    pub lb: Option<Vec<String>>,
    /// Seed override.
    pub seed: Option<u64>,
    /// Time series to collect.
    pub collect: CollectMode,
    /// Format of the tables when written.
    pub format: Format,
    /// Load balancers simulated at once (0: one per core).
    pub jobs: usize,
    /// Resource limits, stall detection and cancellation.
    pub limits: Limits,
    /// Print nothing but errors (warnings about runs are kept from stderr too).
    pub quiet: bool,
    /// Print the scenario's description and size before running.
    pub header: bool,
    /// Draw progress bars (on a terminal only).
    pub progress: bool,
    /// Threads each simulation runs on (see [`repsim::sim::parallel`]; `None`: as
    /// [`Threads::resolve`] says); above one, load balancers run one after another, each on
    /// all of them.
    pub threads: Option<u32>,
}

impl Default for RunOptions {
    /// As `repsim run` with no flag: the scenario's load balancers, seed and `[collect]`
    /// section, CSV, one run at a time, stall detection after 100 ms, a header and progress
    /// bars on a terminal.
    fn default() -> Self {
        RunOptions {
            lb: None,
            seed: None,
            collect: CollectMode::Scenario,
            format: Format::Csv,
            jobs: 1,
            limits: Limits::run_defaults(),
            quiet: false,
            header: true,
            progress: crate::progress::wanted(false),
            threads: None,
        }
    }
}

/// A scenario's runs, finished, holding everything `repsim run` writes.
pub struct Completed {
    /// The scenario's name.
    pub name: String,
    /// The outputs of every load balancer's run, in the run order.
    pub outputs: RunOutputs,
    /// The resolved scenario (`scenario.toml`).
    pub resolved: String,
    /// The elements a fault plan picked (`fault_elements.txt`).
    pub fault_elements: Vec<String>,
    /// The workload is a collective or connection matrix (`collectives.csv`).
    pub collectives: bool,
    /// The seed the runs used.
    pub seed: u64,
    /// Format of the tables.
    pub format: Format,
    /// Unix time (s) the command started.
    pub started_unix_s: u64,
    /// Wall-clock seconds from the start to the end of the last run.
    pub wall_s: f64,
}

/// Builds every run of `scn` that `options` asks for, then simulates them. `out`, the
/// directory the files will be written to, is created (and its completion marker removed) once
/// every run is built, and a trace workload's finished flows go straight to its `flows.csv`
/// and `flow_stats.csv` while it runs (CSV only), so a long trace runs in memory that does
/// not grow with its length; without `out` every row is kept in memory.
pub fn execute(
    scn: &LoadedScenario,
    options: &RunOptions,
    out: Option<&Path>,
) -> Result<Completed> {
    let lb_runs = match &options.lb {
        Some(names) if names.is_empty() => bail!("no load balancer to run"),
        Some(names) => scn.select(names)?,
        None => scn.runs()?,
    };
    let lbs: Vec<String> = lb_runs.iter().map(|r| r.label.clone()).collect();
    options.format.check()?;
    if scn.scenario.workload.all_are("external") {
        bail!(
            "{}: workload.type = \"external\" has no flows of its own: a program driving the \
             simulation adds them (the Python package's repsim.Simulation); there is nothing to \
             run here",
            scn.path.display()
        );
    }
    let started = Instant::now();
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Build every run before spending time on any of them (a large fabric takes a while: a
    // cancel is heeded between builds).
    let prepared = lb_runs
        .iter()
        .map(|run| {
            if Limiter::cancelled(&options.limits) {
                bail!("interrupted while the runs were built");
            }
            Prepared::new(scn, run, options.seed, options.collect)
        })
        .collect::<Result<Vec<_>>>()?;
    // Topology, flows and fault plan do not depend on the load balancer: the first run's stand
    // for all.
    let first = &prepared[0].built;
    if options.header {
        if let Some(description) = &scn.scenario.description {
            eprintln!("{}: {description}", scn.name());
        }
        eprintln!(
            "{}: {} flows on a {}",
            scn.name(),
            first.flows.len(),
            first.topology
        );
    }
    if !options.quiet {
        for note in &first.faults.notes {
            eprintln!("note: faults: {note}");
        }
    }
    let fault_elements = first.faults.chosen.clone();
    if let Some(out) = out {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        series::clear_marker(out)?;
    }
    // On threads the finished flows stay until the end (the partitions fold first): the same
    // files, more memory.
    let scenario_threads = scn.scenario.threads.map(|t| t.get());
    let mut threads = Threads::resolve(options.threads, scenario_threads, options.jobs)?;
    let streams = scn.scenario.workload.any_is("trace") && options.format == Format::Csv;
    if streams && threads.source == ThreadSource::Cores {
        // By default a trace workload's finished flows stream out on one thread, which keeps
        // memory bounded; on threads every flow stays until the end.
        threads.count = 1;
    }
    let stream_dir = out.filter(|_| streams && threads.count <= 1);
    let streaming = stream_dir.is_some();
    let mixed = !first.classes.is_empty();
    let reorder = scn.scenario.metrics.reorder;
    let (flows_file, mut tables) = match stream_dir {
        Some(dir) => (
            Some(Table::streamed(
                "flows",
                &flow_columns(mixed, false, !first.workloads.is_empty(), reorder),
                dir,
            )?),
            Tables::streamed(dir)?,
        ),
        None => (None, Tables::new()),
    };
    // Switch schemes that move flows between ToR paths report old and new path and reason.
    let reports_paths = lb_runs
        .iter()
        .any(|r| scn.switch_for(r).is_ok_and(|s| s.reports_path_changes()));
    if reports_paths {
        tables = tables.with_path_columns();
    }
    if streaming
        && prepared
            .iter()
            .any(|p| p.collect.as_ref().is_some_and(|c| c.cwnd))
    {
        tables.keep_streamed_ids();
    }
    let mut outputs = RunOutputs::new(flows_file, tables, mixed, options.quiet);
    let jobs = jobs_or_every_core(options.jobs);
    let side_by_side = jobs > 1 && prepared.len() > 1 && threads.count == 1;
    let allowed = side_by_side_allowed(streaming, &options.limits);
    let progress = options.progress;
    if side_by_side && allowed.is_ok() {
        outputs = run_side_by_side(
            scn,
            &lbs,
            prepared,
            &options.limits,
            jobs,
            progress,
            outputs,
        )?;
    } else {
        if side_by_side && !options.quiet {
            if let Err(why) = &allowed {
                eprintln!(
                    "note: --jobs {}: running one load balancer at a time: {why}",
                    options.jobs
                );
            }
        }
        let turn = InTurn {
            scn,
            progress,
            streaming,
            reorder,
            threads,
            quiet: options.quiet,
        };
        turn.run(&lbs, prepared, &options.limits, &mut outputs)?;
    }
    let resolved = scn.resolved_toml(&lb_runs, outputs.rto);
    Ok(Completed {
        name: scn.name(),
        outputs,
        resolved,
        fault_elements,
        collectives: scn.scenario.workload.any_is("collective")
            || scn.scenario.workload.any_is("cm"),
        seed: options.seed.unwrap_or(scn.scenario.seed),
        format: options.format,
        started_unix_s,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

impl Completed {
    /// `summary.json`.
    pub fn summary_json(&self) -> Result<Vec<u8>> {
        summary_json(&self.outputs.runs, self.outputs.incomplete.as_deref())
    }

    /// The file stems of the tables [`Self::write`] writes, in its order.
    pub fn table_stems(&mut self) -> Vec<&'static str> {
        let mut stems = vec!["flows", "slowdown"];
        if self.collectives {
            stems.push("collectives");
        }
        let o = &mut self.outputs;
        stems.extend(o.tables.present().iter().map(|t| t.stem()));
        if o.pfc_on {
            stems.push("pfc");
        }
        if o.elephants_on {
            stems.push("elephants");
        }
        stems
    }

    /// Writes every output file of `repsim run` into `out` (created if missing), `run.json`
    /// naming `scenario_file` and `command`, and the completion marker last unless a limit
    /// stopped the runs; returns the files' names. Tables streamed while running are renamed
    /// into place (once).
    pub fn write(
        &mut self,
        out: &Path,
        scenario_file: String,
        command: Vec<String>,
    ) -> Result<Vec<String>> {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        series::clear_marker(out)?;
        let summary = self.summary_json()?;
        let o = &mut self.outputs;
        match o.flows_file.take() {
            Some(file) => {
                file.finish_file(out)?;
            }
            None => write_atomic(&out.join("flows.csv"), &flows_csv(&o.rows)?)?,
        }
        write_atomic(&out.join("scenario.toml"), self.resolved.as_bytes())?;
        write_atomic(&out.join("summary.json"), &summary)?;
        write_atomic(&out.join("slowdown.csv"), &slowdown_csv(&o.runs)?)?;
        let mut files = vec![
            "flows.csv".to_string(),
            "scenario.toml".into(),
            "summary.json".into(),
            "slowdown.csv".into(),
        ];
        // A connection matrix's triggered transfers are the reference's collectives: its
        // completion (the `all` row) is what the reference reports as their runtime.
        if self.collectives {
            write_atomic(&out.join("collectives.csv"), &collectives_csv(&o.rows)?)?;
            files.push("collectives.csv".into());
        }
        files.extend(o.tables.write(out, self.format)?);
        if o.pfc_on {
            write_atomic(&out.join("pfc.csv"), o.pfc.csv()?)?;
            files.push("pfc.csv".into());
        }
        if o.elephants_on {
            write_atomic(&out.join("elephants.csv"), o.elephants.csv()?)?;
            files.push("elephants.csv".into());
        }
        if !self.fault_elements.is_empty() {
            let text = self.fault_elements.join("\n") + "\n";
            write_atomic(&out.join("fault_elements.txt"), text.as_bytes())?;
            files.push("fault_elements.txt".into());
        }
        let info = RunInfo {
            repsim_version: env!("CARGO_PKG_VERSION"),
            repsim_commit: crate::COMMIT,
            command,
            scenario_file,
            scenario_name: self.name.clone(),
            seed: self.seed,
            started_unix_s: self.started_unix_s,
            wall_s: self.wall_s,
            events: o.runs.iter().map(|r| r.events).sum(),
            runs: o.entries.clone(),
            format: self.format,
            files: files.clone(),
            host: series::HostInfo::current(),
            scenario: self.resolved.clone(),
            incomplete: o.incomplete.clone(),
        };
        match &o.incomplete {
            // No completion marker: the directory holds a partial run.
            Some(_) => series::write_run_info(out, &info)?,
            None => series::finish(out, &info)?,
        }
        Ok(files)
    }

    /// What makes the command fail once its files are written, if anything: a limit that
    /// stopped the runs, or flows that could not reach their destination (`out`: where the
    /// files went, if written).
    pub fn failure(&self, out: Option<&Path>) -> Option<String> {
        let place = out.map_or(String::new(), |o| format!(" in {}", o.display()));
        if let Some(why) = &self.outputs.incomplete {
            return Some(format!(
                "stopped early: {why}; the partial results{place} are marked incomplete \
                 (\"incomplete\" in summary.json and run.json, no {})",
                series::MARKER
            ));
        }
        match self.outputs.unreachable {
            0 => None,
            n => Some(format!(
                "{n} flow(s) could not reach their destination (see the messages above){}",
                out.map_or(String::new(), |o| format!("; results in {}", o.display()))
            )),
        }
    }
}

/// What [`run_scenario`] did: where its files went, which files, and each run's summary.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The directory the files were written to.
    pub out: PathBuf,
    /// The names of the files written, as [`Completed::write`] returns them.
    pub files: Vec<String>,
    /// One summary per load balancer's run, in the run order.
    pub runs: Vec<RunSummary>,
}

/// Why [`run_scenario`] failed: the scenario could not be loaded or run, its files could not be
/// written, or a limit or unreachable flows made the run fail after its files were written.
/// Its message holds every cause, outermost first.
#[derive(Debug)]
pub struct RunError(anyhow::Error);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for RunError {}

impl From<anyhow::Error> for RunError {
    fn from(e: anyhow::Error) -> Self {
        RunError(e)
    }
}

/// Runs a scenario file as `repsim run` does, with whatever schemes this process registered
/// (`repsim::Registry`): builds and simulates every run, writes the standard files (`flows.csv`,
/// `summary.json`, the resolved `scenario.toml`, the tables and `run.json`, which `repsim
/// report` reads) into `request.out` (default `results/<scenario name>/`), and prints the
/// summary table (or JSON) on stdout unless `quiet`.
pub fn run_scenario(request: &RunRequest) -> Result<RunReport, RunError> {
    let scn =
        LoadedScenario::load_with(&request.scenario, &request.set).map_err(anyhow::Error::from)?;
    let quiet = request.options.quiet;
    let options = RunOptions {
        header: request.options.header && !quiet && !request.json,
        progress: request.options.progress && crate::progress::wanted(quiet),
        ..request.options.clone()
    };
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(scn.name()));
    let mut done = execute(&scn, &options, Some(&out))?;
    let files = done.write(
        &out,
        request.scenario.display().to_string(),
        std::env::args().collect(),
    )?;
    if request.json {
        println!("{}", String::from_utf8_lossy(&done.summary_json()?));
    } else if !quiet {
        println!("{}", summary_table(&done.outputs.runs));
        println!("results in {}", out.display());
    }
    if let Some(why) = done.failure(Some(&out)) {
        return Err(anyhow::anyhow!("{why}").into());
    }
    Ok(RunReport {
        out,
        files,
        runs: done.outputs.runs.clone(),
    })
}

/// A `--jobs` value as a thread count: 0 means one per core this process may use.
pub fn jobs_or_every_core(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Builds every run of `scn` and its simulation, as running it would, and hands each to
/// `each` with its label: what `repsim check` checks, and the Python package's `load`.
pub fn check_runs(
    scn: &LoadedScenario,
    mut each: impl FnMut(&str, &Simulation) -> Result<()>,
) -> Result<()> {
    for run in scn.runs()? {
        let built = scn.build_run(&run, None)?;
        let sim = Simulation::new(built)?;
        each(&run.label, &sim)?;
    }
    Ok(())
}

/// `repsim bench`.
pub fn bench(args: BenchRequest) -> Result<()> {
    if args.scale {
        return crate::scale::scale(&crate::scale::ScaleOptions {
            max_hosts: args.max_hosts,
            min_hosts: args.min_hosts,
            lb: args.lb,
            csv: args.csv,
            set: args.set,
            repeat: args.repeat,
            progress: crate::progress::wanted(args.quiet),
            threads: args.threads,
        });
    }
    let scn = LoadedScenario::load_with(&args.scenario, &args.set)?;
    let mut best: Option<(f64, u64)> = None;
    for i in 0..args.repeat.max(1) {
        let run = scn
            .select(std::slice::from_ref(&args.lb))?
            .pop()
            .expect("one name, one run");
        let (sim, wall) = Prepared::new(&scn, &run, None, args.collect)?.simulate_on_threads(
            &scn,
            args.threads,
            Bars::Hidden,
        )?;
        let s = sim.summary(wall);
        eprintln!(
            "run {}: {:.2} s wall, {} events, {:.2} M events/s, {}/{} flows, max FCT {:.1} us",
            i + 1,
            wall,
            s.events,
            s.events as f64 / wall / 1e6,
            s.flows_completed,
            s.flows_total,
            s.fct_us.max
        );
        if best.is_none_or(|b| wall < b.0) {
            best = Some((wall, s.events));
        }
    }
    let (wall, events) = best.expect("at least one run");
    let rss = peak_rss()
        .map(|b| format!("{:.1} MB", b as f64 / 1e6))
        .unwrap_or_else(|| "unknown".into());
    let collect = match args.collect {
        CollectMode::None => "",
        CollectMode::All => ", collecting all",
        CollectMode::Scenario => ", collecting per scenario",
    };
    println!(
        "bench {} ({}{collect}): wall {:.2} s, {} events, {:.2} M events/s, peak RSS {rss}",
        scn.name(),
        args.lb,
        wall,
        events,
        events as f64 / wall / 1e6
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The console table names a statistic as `sweep.csv` and the Python frames do.
    #[test]
    fn the_table_names_fcts_as_the_flattened_files() {
        let header: Vec<String> = summary_table(&[])
            .split_whitespace()
            .map(str::to_string)
            .collect();
        for name in ["fct_min_us", "fct_mean_us", "fct_p99_us", "fct_max_us"] {
            assert!(header.iter().any(|h| h == name), "{name} in {header:?}");
        }
        assert!(!header.iter().any(|h| h == "fct_p99"), "{header:?}");
    }
}
