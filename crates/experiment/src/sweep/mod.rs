//! `repsim sweep`: run a scenario over the points of a sweep file in parallel (one point per
//! thread; with fewer unfinished points than threads, a point's load balancers side by side on
//! its share), each point into its own directory with its `run.complete` marker; finished
//! points are skipped on a re-run, so a killed sweep resumes. `sweep.csv` combines them.
pub mod merge;
pub mod slurm;
pub mod spec;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use repsim::scenario::LoadedScenario;

use crate::files::{json_bytes, write_atomic};
use crate::prepared::CollectMode;
use crate::run::{jobs_or_every_core, RunOptions, RunRequest};
use crate::series::{Format, MARKER};
use merge::{point_dir, write_manifest, write_sweep_csv};
use spec::{Point, Sweep};

/// Everything `repsim sweep FILE` is asked for, as plain options (`repsim sweep merge DIR` is
/// [`merge::merge`]).
#[derive(Clone, Debug, Default)]
pub struct SweepRequest {
    /// Sweep file (TOML; see docs/sweeps.md).
    pub file: PathBuf,
    /// Output directory (`None`: the file's `out`, else results/sweeps/<name>).
    pub out: Option<PathBuf>,
    /// Threads (`None` or 0: every core); with fewer unfinished points than threads, each
    /// point runs its load balancers side by side on its share. With `point`: that point's
    /// load balancers run at once (`None`: 1).
    pub jobs: Option<usize>,
    /// Run only this point (0-based; what a Slurm array task does); no sweep.csv is written.
    pub point: Option<usize>,
    /// Threads each simulation runs on (0 or 1: one); `jobs` counts cores, so `jobs /
    /// threads` points run at once.
    pub threads: u32,
    /// Instead of running, write a cluster job.
    pub emit: Option<Emit>,
    /// Print nothing but errors.
    pub quiet: bool,
}

/// Cluster job formats a sweep can be written as instead of run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// A Slurm job-array script (one task per point) and its manifest.csv.
    Slurm,
}

crate::named_values!(Emit, "job format", { Slurm => "slurm" });

/// `repsim sweep`.
pub fn sweep(args: &SweepRequest) -> Result<()> {
    let mut sweep = Sweep::load(&args.file)?;
    sweep.threads = args.threads.max(1);
    // A Slurm array task checks only its own point; everything else checks every point.
    check_points(&sweep, args.point)?;
    let out = args.out.clone().unwrap_or_else(|| sweep.out.clone());
    if args.emit == Some(Emit::Slurm) {
        let script = slurm::emit(&sweep, &out)?;
        if !args.quiet {
            println!(
                "{} points; submit with: sbatch {}\nthen: repsim sweep merge {}",
                sweep.points.len(),
                script.display(),
                out.display()
            );
        }
        return Ok(());
    }
    if let Some(i) = args.point {
        let Some(p) = sweep.points.get(i) else {
            bail!(
                "--point {i}: the sweep has {} points (0 to {})",
                sweep.points.len(),
                sweep.points.len().saturating_sub(1)
            );
        };
        write_manifest(&sweep, &out)?;
        // A cluster task asks for one core unless told otherwise: its load balancers run one
        // at a time unless `--jobs` says more.
        let ran = run_point(&sweep, p, &out, jobs_or_every_core(args.jobs.unwrap_or(1)))?;
        if !args.quiet {
            let what = if ran { "finished" } else { "already finished" };
            println!("point {i} {what}: {}", point_dir(&out, i).display());
        }
        return Ok(());
    }
    let jobs = jobs_or_every_core(args.jobs.unwrap_or(0));
    let csv = run_sweep(&sweep, &out, jobs, args.quiet)?;
    if !args.quiet {
        println!("{}", csv.display());
    }
    Ok(())
}

/// Runs every unfinished point of `sweep` into `out` on `jobs` threads, then writes and returns
/// `sweep.csv`. Points whose run failed are reported together at the end.
pub fn run_sweep(sweep: &Sweep, out: &Path, jobs: usize, quiet: bool) -> Result<PathBuf> {
    let mut csvs = run_sweeps(&[(sweep, out)], jobs, quiet)?;
    Ok(csvs.remove(0))
}

/// Runs the unfinished points of several sweeps (each into its own directory) on one pool of
/// `jobs` threads, point by point across the sweeps (point 0 of each, then point 1, ...), then
/// writes and returns each one's `sweep.csv`. A figure runs one sweep per load balancer this
/// way, so that a point's schemes run side by side.
pub fn run_sweeps(sweeps: &[(&Sweep, &Path)], jobs: usize, quiet: bool) -> Result<Vec<PathBuf>> {
    for (sweep, out) in sweeps {
        write_manifest(sweep, out)?;
    }
    let mut tasks: Vec<(usize, &Point)> = sweeps
        .iter()
        .enumerate()
        .flat_map(|(k, (sweep, _))| sweep.points.iter().map(move |p| (k, p)))
        .collect();
    tasks.sort_by_key(|&(k, p)| (p.index, k));
    let total = tasks.len();
    // Fewer unfinished points than threads: each point runs its load balancers side by side on
    // its share (finished points are skipped and need none).
    let mut unfinished = 0;
    for &(k, p) in &tasks {
        let (sweep, out) = sweeps[k];
        if !finished(p, out, &point_definition(sweep, p)?) {
            unfinished += 1;
        }
    }
    // `jobs` counts cores: a simulation on several threads takes that many of them, and its
    // point's load balancers then run one after another.
    let per_simulation = sweeps
        .iter()
        .map(|(s, _)| s.threads.max(1) as usize)
        .max()
        .unwrap_or(1);
    let threads = (jobs / per_simulation).clamp(1, unfinished.max(1));
    let per_point = if per_simulation > 1 {
        1
    } else {
        (jobs / threads).max(1)
    };
    // One sweep counts points; several count runs (a point of one of them).
    let unit = if sweeps.len() > 1 { "runs" } else { "points" };
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    // With several sweeps, messages name the sweep as well as the point.
    let name = |k: usize| {
        if sweeps.len() > 1 {
            format!("{} ", sweeps[k].0.name)
        } else {
            String::new()
        }
    };
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(k, p)) = tasks.get(n) else { break };
                let (sweep, out) = sweeps[k];
                if sweep
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Relaxed))
                {
                    break;
                }
                let i = p.index;
                let t = Instant::now();
                let result = run_point(sweep, p, out, per_point);
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                match result {
                    Ok(ran) if !quiet => eprintln!(
                        "[{n}/{total}] {}point {i} {} {}",
                        name(k),
                        describe(p),
                        if ran {
                            format!("done in {:.1} s", t.elapsed().as_secs_f64())
                        } else {
                            "already finished, skipped".into()
                        }
                    ),
                    Ok(_) => {}
                    Err(e) => failures
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(format!("{}point {i} {}: {e:#}", name(k), describe(p))),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    if !failures.is_empty() {
        bail!(
            "{} of {total} {unit} failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    if !quiet {
        eprintln!(
            "{total} {unit} in {:.1} s, {threads} at a time{}",
            started.elapsed().as_secs_f64(),
            if per_simulation > 1 {
                format!(", each simulation on {per_simulation} threads")
            } else {
                String::new()
            }
        );
    }
    sweeps
        .iter()
        .map(|(sweep, out)| write_sweep_csv(sweep, out))
        .collect()
}

/// Loads every point's scenario (or only point `only`) with its overrides and selects its load
/// balancers, so that a point that cannot run (a missing scenario file, a bad override, an
/// unknown load balancer) stops the sweep before any point spends time running; every such
/// point is reported. Files a scenario names (CDFs, topologies, faults) are read when its point
/// is built, not here.
pub fn check_points(sweep: &Sweep, only: Option<usize>) -> Result<()> {
    let mut problems = Vec::new();
    for p in sweep
        .points
        .iter()
        .filter(|p| only.is_none_or(|i| i == p.index))
    {
        let check = || -> Result<()> {
            let (scenario, _seed, set) = sweep.resolve(p)?;
            let scn = LoadedScenario::load_with(&scenario, &set)?;
            match &sweep.lb {
                Some(names) => scn.select(names)?,
                None => scn.runs()?,
            };
            Ok(())
        };
        if let Err(e) = check() {
            problems.push(format!("point {} {}: {e:#}", p.index, describe(p)));
        }
    }
    if !problems.is_empty() {
        bail!(
            "{}: {} of {} points cannot run:\n  {}",
            sweep.file.display(),
            problems.len(),
            sweep.points.len(),
            problems.join("\n  ")
        );
    }
    Ok(())
}

/// Whether every point of `sweep` finished in `out` with its current definition (what a run
/// would skip).
pub fn all_finished(sweep: &Sweep, out: &Path) -> Result<bool> {
    for p in &sweep.points {
        if !finished(p, out, &point_definition(sweep, p)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether point `p` finished in `out` with `definition` (its `point.json`).
fn finished(p: &Point, out: &Path, definition: &[u8]) -> bool {
    let dir = point_dir(out, p.index);
    dir.join(MARKER).exists()
        && std::fs::read(dir.join("point.json")).ok().as_deref() == Some(definition)
}

/// `key=label` pairs of a point, for messages.
fn describe(p: &Point) -> String {
    let parts: Vec<String> = p
        .values
        .iter()
        .map(|a| format!("{}={}", a.key, a.label))
        .collect();
    format!("({})", parts.join(" "))
}

/// Runs point `p` into its directory, its load balancers on up to `jobs` threads, unless it
/// finished before with the same definition; returns whether it ran.
pub fn run_point(sweep: &Sweep, p: &Point, out: &Path, jobs: usize) -> Result<bool> {
    let dir = point_dir(out, p.index);
    let definition = point_definition(sweep, p)?;
    if finished(p, out, &definition) {
        return Ok(false);
    }
    let record = dir.join("point.json");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::series::clear_marker(&dir)?;
    write_atomic(&record, &definition)?;
    let (scenario, seed, set) = sweep.resolve(p)?;
    let collect = match sweep.collect.as_str() {
        "all" => CollectMode::All,
        "scenario" => CollectMode::Scenario,
        _ => CollectMode::None,
    };
    crate::run::run_scenario(&RunRequest {
        scenario,
        out: Some(dir.clone()),
        set,
        json: false,
        options: RunOptions {
            lb: sweep.lb.clone(),
            seed,
            collect,
            format: Format::Csv,
            jobs,
            // Sweeps run every point to its end (a figure may plot a stalled run's end time).
            limits: crate::limits::Limits {
                cancel: sweep.cancel.clone(),
                ..Default::default()
            },
            quiet: true,
            header: false,
            progress: false,
            threads: Some(sweep.threads.max(1)),
        },
    })?;
    Ok(true)
}

/// The `point.json` of point `p`.
fn point_definition(sweep: &Sweep, p: &Point) -> Result<Vec<u8>> {
    json_bytes(&PointRecord {
        scenario: &sweep.scenario,
        lb: &sweep.lb,
        collect: &sweep.collect,
        set: &sweep.set,
        point: p,
    })
}

/// What a point directory was run with (`point.json`): a changed sweep file re-runs it.
#[derive(serde::Serialize)]
struct PointRecord<'a> {
    scenario: &'a Path,
    lb: &'a Option<Vec<String>>,
    collect: &'a str,
    set: &'a [String],
    point: &'a Point,
}
