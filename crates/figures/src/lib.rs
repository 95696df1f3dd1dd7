//! `repsim figure ID`: runs a paper figure's sweep and draws it as the paper shows it (PNG and
//! SVG), with the data as CSV and an HTML page of our numbers beside the paper's; `figure list`
//! lists every row of the reproduction matrix; `figure all --table FIGURES.md` runs them all.
//! [`models`] runs the balls-into-bins studies behind the theory figures (`repsim theory`).
mod draw;
mod model;
pub mod models;
mod provenance;
mod registry;
mod rows;
mod table;
mod theory;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use repsim::scenario::{LoadedScenario, Override};

use draw::{FigureResult, Rows};
use model::{Body, Figure, Panel};
use provenance::{run_records, Provenance};
pub use registry::FIGURES;
use repsim_experiment::sweep::merge::point_dir;
use repsim_experiment::sweep::spec::Sweep;
use repsim_plot::runs::{self as plots, RunData};
use table::{copy_plots, wall, write_table};

/// Everything `repsim figure` is asked for, as plain options.
#[derive(Clone, Debug)]
pub struct FigureRequest {
    /// A figure id (`reps-fig4`), `list` (every row and its state) or `all` (every available
    /// figure).
    pub id: String,
    /// `paper` (the paper's scale, the default) or `small` (reduced, under a minute on 2 cores).
    pub scale: Scale,
    /// Output directory (default: results/figures/<id>/<scale>); for `all`, the parent.
    pub out: Option<PathBuf>,
    /// Simulations run at once (default or 0: every core); with `threads` above one, cores.
    pub jobs: Option<usize>,
    /// Threads each simulation runs on (0 or 1: one).
    pub threads: u32,
    /// Write our results against the paper's into this Markdown table (`FIGURES.md`): with
    /// `all` the whole table; with one figure its rows, keeping the other figures' rows.
    pub table: Option<PathBuf>,
    /// With `all`: only these figures (comma-separated ids); with `--table`, only their rows
    /// are replaced.
    pub only: Vec<String>,
    /// Copy each figure's plots (SVG) into this directory (`docs/figures`), where `--table`
    /// shows them.
    pub plots: Option<PathBuf>,
    /// What to do with earlier results of the figure.
    pub reuse: Reuse,
    /// Print nothing but errors.
    pub quiet: bool,
}

/// Figure scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// As in the paper.
    Paper,
    /// Reduced (fewer hosts or smaller flows; the page says what).
    Small,
}

repsim_experiment::named_values!(Scale, "scale", { Paper => "paper", Small => "small" });

/// The repository root: the current directory if it has `scenarios/`, else the source tree's.
fn repo_root() -> PathBuf {
    if Path::new("scenarios").is_dir() {
        PathBuf::from(".")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }
}

/// Default output directory of figure `id` at `scale`.
pub fn default_out(id: &str, scale: Scale) -> PathBuf {
    Path::new("results")
        .join("figures")
        .join(id)
        .join(scale.name())
}

/// Why a figure cannot run here, if it cannot (a missing scenario or scheme).
fn unavailable(fig: &Figure) -> Option<String> {
    let Body::Sim(panels) = &fig.body else {
        return None;
    };
    for p in panels.iter() {
        let check = || -> Result<()> {
            let set = p
                .set
                .iter()
                .chain(p.small_set)
                .map(|s| Override::parse(s).map_err(anyhow::Error::msg))
                .collect::<Result<Vec<_>>>()?;
            let scn = LoadedScenario::load_with(&repo_root().join(p.scenario), &set)?;
            let names: Vec<String> = p.lbs.iter().map(|s| s.to_string()).collect();
            scn.select(&names)?;
            Ok(())
        };
        if let Err(e) = check() {
            return Some(format!("{e:#}"));
        }
    }
    None
}

/// The sweep file of panel `p` at `scale`, for every load balancer of the panel or `only` one.
fn panel_sweep(fig: &Figure, p: &Panel, scale: Scale, only: Option<&str>) -> Result<String> {
    let scenario = repo_root()
        .join(p.scenario)
        .canonicalize()
        .with_context(|| format!("{}: scenario {}", fig.id, p.scenario))?;
    // Nothing panel-specific beyond what defines the runs: panels that plot other metrics of
    // the same runs get the same file, and `run_figure` runs it once.
    let mut s = format!(
        "# {}: written by `repsim figure {} --scale {}`\n",
        fig.paper,
        fig.id,
        scale.name()
    );
    let _ = writeln!(s, "scenario = {:?}", scenario.display().to_string());
    if let Some(lb) = only {
        let panel = if p.name.is_empty() { "main" } else { p.name };
        let _ = writeln!(s, "name = {:?}", format!("{}-{panel}-{lb}", fig.id));
    }
    let lbs: Vec<String> = p
        .lbs
        .iter()
        .filter(|l| only.is_none_or(|o| o == **l))
        .map(|l| format!("{l:?}"))
        .collect();
    let _ = writeln!(s, "lb = [{}]", lbs.join(", "));
    let _ = writeln!(
        s,
        "collect = {:?}",
        if p.series { "scenario" } else { "none" }
    );
    let small: &[&str] = if scale == Scale::Small {
        p.small_set
    } else {
        &[]
    };
    // A small-scale override of a key replaces the paper-scale one.
    let mut set: Vec<(&str, &str)> = Vec::new();
    for text in p.set.iter().chain(small) {
        let (k, v) = text
            .split_once('=')
            .with_context(|| format!("{}: bad override {text}", fig.id))?;
        set.retain(|(key, _)| *key != k);
        set.push((k, v));
    }
    let set: Vec<String> = set.iter().map(|(k, v)| format!("{k:?} = {v}")).collect();
    let _ = writeln!(s, "set = {{ {} }}", set.join(", "));
    if let Some(a) = &p.axis {
        let labels: Vec<String> = a.labels.iter().map(|l| format!("{l:?}")).collect();
        let _ = write!(
            s,
            "\n[[axis]]\nkey = {:?}\nvalues = [{}]\nlabels = [{}]\n",
            a.key,
            a.values.join(", "),
            labels.join(", ")
        );
    }
    Ok(s)
}

/// How `run_figure` treats earlier results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reuse {
    /// Keep finished points, run the others.
    #[default]
    Resume,
    /// Discard earlier results first.
    Rerun,
    /// Run nothing: fail where a point has not finished.
    RedrawOnly,
}

/// Runs figure `fig` at `scale` into `out`, its simulations on `threads` threads each and
/// `jobs / threads` at once; returns its result. Setting `cancel` stops its sweeps (the
/// Python package on Ctrl-C).
#[allow(clippy::too_many_arguments)]
pub fn run_figure(
    fig: &Figure,
    scale: Scale,
    out: &Path,
    jobs: usize,
    threads: u32,
    reuse: Reuse,
    quiet: bool,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<FigureResult> {
    let started = Instant::now();
    if let Some(why) = unavailable(fig) {
        bail!("{} cannot run here: {why}", fig.id);
    }
    if reuse == Reuse::Rerun && out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let previous: Option<FigureResult> = std::fs::read(out.join("result.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let earlier_runs = run_records(out);
    let small = scale == Scale::Small;
    let mut images: Vec<(String, PathBuf)> = Vec::new();
    let mut plots: Vec<String> = Vec::new();
    let mut data = Vec::new();
    let mut panel_rows: Vec<(&Panel, Rows)> = Vec::new();
    // Sweeps already run for an earlier panel (sweep file, directory, CSV): panels that plot
    // another metric of the same runs (average and p99 FCT) reuse them.
    let mut swept: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    match &fig.body {
        Body::Sim(panels) => {
            for (k, p) in panels.iter().enumerate() {
                let name = if p.name.is_empty() { "main" } else { p.name };
                let definition = panel_sweep(fig, p, scale, None)?;
                let (dir, csv) = match swept.iter().find(|(d, _, _)| *d == definition) {
                    Some((_, dir, csv)) => (dir.clone(), csv.clone()),
                    None => {
                        let dir = out.join(name);
                        let csv = run_panel(
                            fig,
                            p,
                            scale,
                            &definition,
                            &dir,
                            (jobs, threads),
                            reuse,
                            quiet,
                            cancel.clone(),
                        )?;
                        swept.push((definition, dir.clone(), csv.clone()));
                        (dir, csv)
                    }
                };
                let stem = if panels.len() == 1 {
                    fig.id.to_string()
                } else {
                    format!("{}-{name}", fig.id)
                };
                let data_csv = out.join(format!("{stem}.csv"));
                std::fs::copy(&csv, &data_csv)
                    .with_context(|| format!("copying {}", csv.display()))?;
                data.push(data_csv);
                let rows = draw::read_rows(&csv)?;
                let (png, _svg) = draw::draw_panel(fig, p, &rows, out, &stem, small)?;
                images.push((format!("{} ({})", p.title, p.metric.label), png));
                plots.push(format!("{stem}.svg"));
                if p.series {
                    let run = point_dir(&dir, 0);
                    let run_data = RunData::load(&run)?;
                    let series_dir = out.join(format!("series-{k}"));
                    std::fs::create_dir_all(&series_dir)?;
                    for plot in plots::write_all(&run_data, &series_dir, Some("tor0"))? {
                        images.push((plot.title, plot.png));
                    }
                }
                panel_rows.push((p, rows));
            }
        }
        Body::Theory(m) => {
            let (stems, files) = theory::run(*m, out, small)?;
            for s in stems {
                images.push((s.replace('_', " "), out.join(format!("{s}.png"))));
                plots.push(format!("{s}.svg"));
            }
            data.extend(files);
        }
    }
    let claims = draw::check_claims(fig.claims, &panel_rows, out, small);
    let runs = Provenance::scan(out, &earlier_runs);
    let elapsed = started.elapsed().as_secs_f64();
    let earlier_wall = previous.as_ref().map_or(0.0, |p| p.wall_s);
    let result = FigureResult {
        id: fig.id.to_string(),
        scale: scale.name().to_string(),
        finished_unix_s: unix_now(),
        wall_s: match (runs.ran_now, previous.is_some()) {
            // Only redrawn: the simulations' time is the earlier run's.
            (0, true) => earlier_wall,
            (n, true) if n < runs.total => earlier_wall + elapsed,
            _ => elapsed,
        },
        commit: runs.commit(previous.as_ref().map(|p| p.commit.as_str())),
        plots,
        data: data
            .iter()
            .filter_map(|p| p.strip_prefix(out).ok())
            .map(|p| p.display().to_string())
            .collect(),
        claims,
    };
    draw::write_result(out, &result)?;
    let page = draw::write_page(fig, out, &result, &images, &data)?;
    if !quiet {
        for c in &result.claims {
            let note = c.note.as_ref().map_or(String::new(), |n| format!(" ({n})"));
            eprintln!(
                "{}: {}: paper {}, ours {}, ratio {}{note}",
                fig.id,
                c.what,
                c.paper_cell(),
                c.ours.map_or("-".into(), draw::num),
                c.ratio_cell()
            );
        }
        println!("{}", page.display());
    }
    Ok(result)
}

/// Unix time now, in seconds.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Runs panel `p` (sweep file text `definition`) into `dir` and returns its `sweep.csv`.
///
/// A panel of several load balancers without time series runs one sweep per load balancer
/// (`dir/<lb>/`), all on one pool of `jobs` threads, so that a figure of few points and many
/// schemes (LAPS Table 1: 2 x 7) still uses every core; `dir/sweep.csv` then holds their rows
/// point by point in the panel's scheme order, exactly as one sweep of every scheme writes it
/// (each scheme's run does not depend on the others).
#[allow(clippy::too_many_arguments)]
fn run_panel(
    fig: &Figure,
    p: &Panel,
    scale: Scale,
    definition: &str,
    dir: &Path,
    (jobs, threads): (usize, u32),
    reuse: Reuse,
    quiet: bool,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<PathBuf> {
    let unfinished = |sweep: &Sweep, d: &Path| -> Result<()> {
        if reuse == Reuse::RedrawOnly && !repsim_experiment::sweep::all_finished(sweep, d)? {
            bail!(
                "{}: {} has points that have not run (--redraw runs nothing)",
                fig.id,
                d.display()
            );
        }
        Ok(())
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("sweep.toml");
    repsim_experiment::files::write_atomic(&file, definition.as_bytes())?;
    let mut whole = Sweep::load(&file)?;
    whole.cancel = cancel.clone();
    whole.threads = threads.max(1);
    if p.series || p.lbs.len() < 2 {
        unfinished(&whole, dir)?;
        return repsim_experiment::sweep::run_sweep(&whole, dir, jobs, quiet);
    }
    if dir.join("points").exists() {
        // Runs of every scheme in one sweep (this panel's layout before it was split): reuse
        // them if complete, else drop them so that no stale point outlives its replacement.
        if repsim_experiment::sweep::all_finished(&whole, dir)? {
            return repsim_experiment::sweep::run_sweep(&whole, dir, jobs, quiet);
        }
        unfinished(&whole, dir)?;
        std::fs::remove_dir_all(dir.join("points"))
            .with_context(|| format!("removing {}", dir.join("points").display()))?;
        let _ = std::fs::remove_file(dir.join(repsim_experiment::sweep::merge::MANIFEST));
    }
    if let Some(lb) = p
        .lbs
        .iter()
        .enumerate()
        .find_map(|(i, l)| p.lbs[..i].contains(l).then_some(l))
    {
        bail!("{}: panel {:?} lists {lb} twice", fig.id, p.name);
    }
    let mut sweeps = Vec::new();
    for lb in p.lbs {
        let sub = dir.join(lb);
        std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
        let file = sub.join("sweep.toml");
        repsim_experiment::files::write_atomic(
            &file,
            panel_sweep(fig, p, scale, Some(lb))?.as_bytes(),
        )?;
        let mut sweep = Sweep::load(&file)?;
        sweep.cancel = cancel.clone();
        sweep.threads = threads.max(1);
        sweeps.push((sweep, sub));
    }
    let pool: Vec<(&Sweep, &Path)> = sweeps.iter().map(|(s, d)| (s, d.as_path())).collect();
    for (s, d) in &pool {
        unfinished(s, d)?;
    }
    repsim_experiment::sweep::run_sweeps(&pool, jobs, quiet)?;
    let csv = dir.join("sweep.csv");
    repsim_experiment::files::write_atomic(
        &csv,
        repsim_experiment::sweep::merge::sweeps_csv(&pool)?.as_bytes(),
    )?;
    Ok(csv)
}

/// The newest `result.json` of figure `id` under `results/figures/<id>/`.
fn last_result(id: &str) -> Option<FigureResult> {
    [Scale::Paper, Scale::Small]
        .iter()
        .filter_map(|s| {
            let bytes = std::fs::read(default_out(id, *s).join("result.json")).ok()?;
            serde_json::from_slice::<FigureResult>(&bytes).ok()
        })
        .max_by_key(|r| r.finished_unix_s)
}

/// One line summarising a result: its scale and each claim's ratio.
fn summary(r: &FigureResult) -> String {
    let ratios: Vec<String> = r
        .claims
        .iter()
        .map(|c| c.ratio.map_or("-".into(), |x| format!("{x:.2}")))
        .collect();
    if ratios.is_empty() {
        format!("{} scale, no stated number", r.scale)
    } else {
        format!("{} scale, ours/paper {}", r.scale, ratios.join(" "))
    }
}

/// `repsim figure list`: every figure and matrix row, one per line, in aligned columns (a
/// reason a row cannot run goes after its title, so a long one shifts no column).
fn list_table() -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "id".into(),
        "paper".into(),
        "available".into(),
        "last result".into(),
        "what".into(),
    ]];
    for f in FIGURES {
        let last = last_result(f.id).map_or("-".into(), |r| summary(&r));
        let (avail, what) = match unavailable(f) {
            None => ("yes", f.title.to_string()),
            Some(why) => ("no", format!("{} (unavailable: {why})", f.title)),
        };
        rows.push([f.id.into(), f.paper.into(), avail.into(), last, what]);
    }
    for r in rows::ROWS {
        let what = format!("{} ({})", r.title, r.status);
        rows.push([r.id.into(), r.paper.into(), "no".into(), "-".into(), what]);
    }
    aligned(&rows)
}

/// `rows` as lines of columns padded to their widest cell (the last column unpadded).
fn aligned(rows: &[[String; 5]]) -> String {
    let mut widths = [0; 4];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        for (w, cell) in widths.iter().zip(row) {
            let _ = write!(out, "{cell:<w$} ");
        }
        out += &row[4];
        out.push('\n');
    }
    out
}

/// `repsim figure`.
pub fn figure(args: &FigureRequest) -> Result<()> {
    let jobs = repsim_experiment::run::jobs_or_every_core(args.jobs.unwrap_or(0));
    let threads = args.threads.max(1);
    let reuse = args.reuse;
    match args.id.as_str() {
        "list" => {
            print!("{}", list_table());
            Ok(())
        }
        "all" => {
            for id in &args.only {
                if !FIGURES.iter().any(|f| f.id == id) {
                    bail!("--only: no figure {id}; `repsim figure list` shows them");
                }
            }
            let mut results = Vec::new();
            let mut failed = Vec::new();
            let started = Instant::now();
            for f in FIGURES
                .iter()
                .filter(|f| args.only.is_empty() || args.only.iter().any(|o| o == f.id))
            {
                let out = match &args.out {
                    Some(o) => o.join(f.id).join(args.scale.name()),
                    None => default_out(f.id, args.scale),
                };
                match run_figure(f, args.scale, &out, jobs, threads, reuse, args.quiet, None) {
                    Ok(r) => {
                        if let Some(dir) = &args.plots {
                            copy_plots(f.id, &r.plots, &out, dir)?;
                        }
                        results.push((f, Some(r)));
                    }
                    Err(e) => {
                        eprintln!("error: {}: {e:#}", f.id);
                        failed.push(f.id);
                        results.push((f, None));
                    }
                }
            }
            if let Some(t) = &args.table {
                write_table(t, &results, args.only.is_empty(), args.plots.as_deref())?;
            }
            if !args.quiet {
                eprintln!(
                    "{} figure(s) in {}",
                    results.len(),
                    wall(started.elapsed().as_secs_f64())
                );
            }
            if !failed.is_empty() {
                bail!("{} figure(s) failed: {}", failed.len(), failed.join(", "));
            }
            Ok(())
        }
        id => {
            let Some(fig) = FIGURES.iter().find(|f| f.id == id) else {
                if let Some(r) = rows::ROWS.iter().find(|r| r.id == id) {
                    bail!("{id} ({}): {}", r.paper, r.status);
                }
                bail!("no figure {id}; `repsim figure list` shows them");
            };
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| default_out(id, args.scale));
            if !args.only.is_empty() {
                bail!("--only goes with `figure all`");
            }
            let result = run_figure(
                fig, args.scale, &out, jobs, threads, reuse, args.quiet, None,
            )?;
            if let Some(dir) = &args.plots {
                copy_plots(fig.id, &result.plots, &out, dir)?;
            }
            if let Some(t) = &args.table {
                write_table(t, &[(fig, Some(result))], false, args.plots.as_deref())?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod list_tests {
    use super::*;

    /// Every line's last column starts where the header's `what` does.
    #[test]
    fn the_list_is_aligned() {
        let table = list_table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + FIGURES.len() + rows::ROWS.len());
        let at = lines[0].find("what").expect("a what column");
        for line in &lines {
            let chars: Vec<char> = line.chars().collect();
            assert!(chars.len() > at, "{line}");
            assert_eq!(chars[at - 1], ' ', "{line}");
            assert_ne!(chars[at], ' ', "{line}");
        }
        let long = "x".repeat(60);
        let row = |c: &str| [c.into(), c.into(), c.into(), c.into(), c.into()];
        let t = aligned(&[row("a"), row(&long)]);
        let first = t.lines().next().expect("a line");
        assert_eq!(first.len(), 4 * 61 + 1, "{first}");
    }
}
