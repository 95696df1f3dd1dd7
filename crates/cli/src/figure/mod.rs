//! `repsim figure ID`: runs a paper figure's sweep and draws it as the paper shows it (PNG and
//! SVG), with the data as CSV and an HTML page of our numbers beside the paper's; `figure list`
//! lists every row of the reproduction matrix; `figure all --table FIGURES.md` runs them all.
mod draw;
mod model;
mod registry;
mod rows;
mod theory;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Args;
use repsim::scenario::{LoadedScenario, Override};

use crate::plots::{self, RunData};
use crate::sweep::merge::point_dir;
use crate::sweep::spec::Sweep;
use draw::{FigureResult, Rows};
use model::{Body, Figure, Panel};
pub use registry::FIGURES;

/// Arguments of `repsim figure`.
#[derive(Args)]
pub struct FigureArgs {
    /// A figure id (`reps-fig4`), `list` (every row and its state) or `all` (every available
    /// figure).
    pub id: String,
    /// `paper` (the paper's scale, the default) or `small` (reduced, under a minute on 2 cores).
    #[arg(long, value_enum, default_value = "paper")]
    pub scale: Scale,
    /// Output directory (default: results/figures/<id>/<scale>); for `all`, the parent.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simulations run at once (default or 0: every core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Write our results against the paper's into this Markdown table (`FIGURES.md`): with
    /// `all` the whole table; with one figure its rows, keeping the other figures' rows.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// With `all`: only these figures (comma-separated ids); with `--table`, only their rows
    /// are replaced.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Copy each figure's plots (SVG) into this directory (`docs/figures`), where `--table`
    /// shows them.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Only redraw from finished points: fail, running nothing, where a point has not run
    /// (with this binary's definition of the figure).
    #[arg(long, conflicts_with = "rerun")]
    pub redraw: bool,
    /// Discard earlier results of the figure first (by default finished points are kept and
    /// only the missing ones run, as for a resumed sweep).
    #[arg(long)]
    pub rerun: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Figure scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// As in the paper.
    Paper,
    /// Reduced (fewer hosts or smaller flows; the page says what).
    Small,
}

impl Scale {
    fn name(self) -> &'static str {
        match self {
            Scale::Paper => "paper",
            Scale::Small => "small",
        }
    }
}

/// The repository root: the current directory if it has `scenarios/`, else the source tree's.
fn repo_root() -> PathBuf {
    if Path::new("scenarios").is_dir() {
        PathBuf::from(".")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }
}

/// Default output directory of figure `id` at `scale`.
fn default_out(id: &str, scale: Scale) -> PathBuf {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    /// Keep finished points, run the others.
    Resume,
    /// Discard earlier results first.
    Rerun,
    /// Run nothing: fail where a point has not finished.
    RedrawOnly,
}

/// Runs figure `fig` at `scale` into `out`; returns its result.
pub fn run_figure(
    fig: &Figure,
    scale: Scale,
    out: &Path,
    jobs: usize,
    reuse: Reuse,
    quiet: bool,
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
                        let csv = run_panel(fig, p, scale, &definition, &dir, jobs, reuse, quiet)?;
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
                let (png, _svg) = draw::draw_panel(fig, p, &rows, out, &stem)?;
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
        claims,
    };
    draw::write_result(out, &result)?;
    let page = draw::write_page(fig, out, &result, &images, &data)?;
    if !quiet {
        for c in &result.claims {
            eprintln!(
                "{}: {}: paper {}, ours {}, ratio {}",
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

/// Which binaries ran a figure's simulations, read from its points' `run.json`.
#[derive(Debug, Default, PartialEq)]
struct Provenance {
    /// Runs (points) found.
    total: usize,
    /// Of them, those started by this command.
    ran_now: usize,
    /// Their binaries' commits, sorted.
    commits: std::collections::BTreeSet<String>,
    /// Runs whose `run.json` names no commit (written before it did).
    unnamed: usize,
}

/// Every `run.json` under `dir` (one per point run), with its bytes.
fn run_records(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "run.json") {
                if let Ok(bytes) = std::fs::read(&path) {
                    found.push((path, bytes));
                }
            }
        }
    }
    found.sort();
    found
}

impl Provenance {
    /// Reads every `run.json` under `dir`; those not in `earlier` (or changed) count as this
    /// command's.
    fn scan(dir: &Path, earlier: &[(PathBuf, Vec<u8>)]) -> Provenance {
        let mut p = Provenance::default();
        for (path, bytes) in run_records(dir) {
            let Ok(info) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            p.total += 1;
            if !earlier.iter().any(|(q, b)| *q == path && *b == bytes) {
                p.ran_now += 1;
            }
            match info["repsim_commit"].as_str() {
                Some(c) => {
                    p.commits.insert(c.to_string());
                }
                None => p.unnamed += 1,
            }
        }
        p
    }

    /// The commits as one cell: `a+b` for several; runs that name none are taken to be the
    /// earlier result's (`earlier`), else this binary's when it ran them now.
    fn commit(&self, earlier: Option<&str>) -> String {
        let mut all = self.commits.clone();
        if self.unnamed > 0 {
            all.insert(match earlier {
                Some(c) if !c.is_empty() => c.to_string(),
                _ => "unknown".to_string(),
            });
        }
        if all.is_empty() {
            // A figure without simulations (a theory model) is computed by this binary.
            all.insert(env!("REPSIM_COMMIT").to_string());
        }
        all.into_iter().collect::<Vec<_>>().join("+")
    }
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
    jobs: usize,
    reuse: Reuse,
    quiet: bool,
) -> Result<PathBuf> {
    let unfinished = |sweep: &Sweep, d: &Path| -> Result<()> {
        if reuse == Reuse::RedrawOnly && !crate::sweep::all_finished(sweep, d)? {
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
    crate::output::write_atomic(&file, definition.as_bytes())?;
    let whole = Sweep::load(&file)?;
    if p.series || p.lbs.len() < 2 {
        unfinished(&whole, dir)?;
        return crate::sweep::run_sweep(&whole, dir, jobs, quiet);
    }
    if dir.join("points").exists() {
        // Runs of every scheme in one sweep (this panel's layout before it was split): reuse
        // them if complete, else drop them so that no stale point outlives its replacement.
        if crate::sweep::all_finished(&whole, dir)? {
            return crate::sweep::run_sweep(&whole, dir, jobs, quiet);
        }
        unfinished(&whole, dir)?;
        std::fs::remove_dir_all(dir.join("points"))
            .with_context(|| format!("removing {}", dir.join("points").display()))?;
        let _ = std::fs::remove_file(dir.join(crate::sweep::merge::MANIFEST));
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
        crate::output::write_atomic(&file, panel_sweep(fig, p, scale, Some(lb))?.as_bytes())?;
        sweeps.push((Sweep::load(&file)?, sub));
    }
    let pool: Vec<(&Sweep, &Path)> = sweeps.iter().map(|(s, d)| (s, d.as_path())).collect();
    for (s, d) in &pool {
        unfinished(s, d)?;
    }
    crate::sweep::run_sweeps(&pool, jobs, quiet)?;
    let csv = dir.join("sweep.csv");
    crate::output::write_atomic(&csv, crate::sweep::merge::sweeps_csv(&pool)?.as_bytes())?;
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

/// `repsim figure list`.
fn list() {
    println!(
        "{:<14} {:<14} {:<10} {:<40} what",
        "id", "paper", "available", "last result"
    );
    for f in FIGURES {
        let avail = match unavailable(f) {
            None => "yes".to_string(),
            Some(why) => format!("no ({why})"),
        };
        let last = last_result(f.id).map_or("-".into(), |r| summary(&r));
        println!(
            "{:<14} {:<14} {:<10} {:<40} {}",
            f.id, f.paper, avail, last, f.title
        );
    }
    for r in rows::ROWS {
        println!(
            "{:<14} {:<14} {:<10} {:<40} {}",
            r.id, r.paper, "no", r.status, r.title
        );
    }
}

/// The opening of `FIGURES.md`, down to its table's header.
const TABLE_HEAD: &str = "# Figures: our results against the papers'\n\n\
     Written by `repsim figure all --scale paper --table FIGURES.md --plots docs/figures` (one\n\
     figure's rows: `repsim figure ID --scale paper --table FIGURES.md --plots docs/figures`):\n\
     one row per claim with the paper's number, ours and their ratio, the scale it ran at, the\n\
     wall time of the command that ran its simulations on the machine that ran it, and the\n\
     commit of the binary. The plots follow the table. Small-scale runs (what CI checks) are\n\
     not comparable to the paper and are not listed here. Rows far from the paper's number are\n\
     set beside the reference simulators' runs of the same setup in `docs/fidelity.md`.\n\n\
     | id | figure | scale | quantity | paper | ours | ours / paper | wall | commit |\n\
     |---|---|---|---|---|---|---|---|---|\n";

/// Where the rows without a figure start.
const TABLE_TAIL: &str = "\nRows of the reproduction matrix without a figure yet:";

/// A wall time for the table: seconds, minutes or hours.
fn wall(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The table rows of figure `f` (its result `r`, if it ran).
fn figure_rows(f: &Figure, r: Option<&FigureResult>) -> String {
    let mut s = String::new();
    match r {
        None => {
            let _ = writeln!(
                s,
                "| {} | {} | - | not run at this scale | | | | | |",
                f.id, f.paper
            );
        }
        Some(r) if r.claims.is_empty() => {
            let _ = writeln!(
                s,
                "| {} | {} | {} | no number stated (shape of the curves) | | | | {} | {} |",
                f.id,
                f.paper,
                r.scale,
                wall(r.wall_s),
                r.commit
            );
        }
        Some(r) => {
            for c in &r.claims {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    f.id,
                    f.paper,
                    r.scale,
                    c.what,
                    c.paper_cell(),
                    c.ours.map_or("-".into(), draw::num),
                    c.ratio_cell(),
                    wall(r.wall_s),
                    r.commit
                );
            }
        }
    }
    s
}

/// The rows of the reproduction matrix without a figure, as the table's last section.
fn table_tail() -> String {
    let mut s = format!("{TABLE_TAIL}\n\n| id | figure | status |\n|---|---|---|\n");
    for r in rows::ROWS {
        let _ = writeln!(s, "| {} | {} | {} |", r.id, r.paper, r.status);
    }
    s
}

/// The Markdown table of every figure's result against the paper's (`FIGURES.md`).
fn table(results: &[(&Figure, Option<FigureResult>)]) -> String {
    let mut s = String::from(TABLE_HEAD);
    for (f, r) in results {
        s += &figure_rows(f, r.as_ref());
    }
    s + &table_tail()
}

/// `existing` (a `FIGURES.md`) with figure `f`'s rows replaced by those of `r`, in figure
/// order; rows of other figures are kept as they are (an older table's rows get empty wall and
/// commit cells), and a figure without any gets a "not run" row.
fn update_table(existing: &str, f: &Figure, r: &FigureResult) -> String {
    let id_of = |line: &str| -> Option<String> {
        let rest = line.strip_prefix("| ")?;
        Some(rest.split(" |").next()?.to_string())
    };
    let body = existing.split(TABLE_TAIL).next().unwrap_or("");
    let mut kept: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let Some(id) = id_of(line) else { continue };
        if id == "id" || id.starts_with("---") || id == f.id {
            continue;
        }
        let cells = line.matches(" |").count();
        let line = if cells < 9 {
            format!("{line}{}", " |".repeat(9 - cells))
        } else {
            line.to_string()
        };
        kept.push((id, line));
    }
    let mut s = String::from(TABLE_HEAD);
    for g in FIGURES {
        if g.id == f.id {
            s += &figure_rows(f, Some(r));
            continue;
        }
        let rows: Vec<&String> = kept
            .iter()
            .filter(|(id, _)| id == g.id)
            .map(|(_, l)| l)
            .collect();
        if rows.is_empty() {
            s += &figure_rows(g, None);
        }
        for line in rows {
            s += line;
            s.push('\n');
        }
    }
    // Rows of figures this binary does not know are kept, last.
    for (id, line) in &kept {
        if !FIGURES.iter().any(|g| g.id == id) {
            s += line;
            s.push('\n');
        }
    }
    s + &table_tail()
}

/// Where the plots section starts.
const PLOTS_HEAD: &str = "\n## Plots\n";

/// Where the total wall time line starts.
const TOTAL_HEAD: &str = "\nTotal wall time of the figures above: ";

/// Seconds in a wall cell written by [`wall`] (`12 s`, `34 min`, `1.5 h`).
fn parse_wall(cell: &str) -> Option<f64> {
    let (n, unit) = cell.trim().split_once(' ')?;
    let n: f64 = n.parse().ok()?;
    match unit {
        "s" => Some(n),
        "min" => Some(n * 60.0),
        "h" => Some(n * 3600.0),
        _ => None,
    }
}

/// The sum of the figures' wall times in a table's rows (each figure counted once).
fn total_wall(table: &str) -> f64 {
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0.0;
    for line in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let id = cells[0].trim_start_matches("| ");
        if cells.len() < 9 || seen.contains(&id) {
            continue;
        }
        if let Some(w) = parse_wall(cells[7]) {
            seen.push(id);
            total += w;
        }
    }
    total
}

/// The plots of figure `id` in `dir` (file names, sorted).
fn plots_of(dir: &Path, id: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_suffix(".svg")
                .is_some_and(|stem| stem == id || stem.starts_with(&format!("{id}-")))
        })
        .collect();
    names.sort();
    names
}

/// Copies figure `id`'s plots (`plots`, in `from`) into `to`, named `<id>-...` where they
/// are not already.
fn copy_plots(id: &str, plots: &[String], from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for p in plots {
        let name = if p.starts_with(id) {
            p.clone()
        } else {
            format!("{id}-{p}")
        };
        std::fs::copy(from.join(p), to.join(&name))
            .with_context(|| format!("copying {} to {}", from.join(p).display(), to.display()))?;
    }
    Ok(())
}

/// `table` (rows and the list of rows without a figure) finished with the total wall time
/// and the plots found in `plots` (a directory, linked relative to the table's `base`).
fn finish_table(table: &str, plots: &Path, base: &Path) -> String {
    let body = table.split(TOTAL_HEAD).next().unwrap_or("");
    let body = body.split(TABLE_TAIL).next().unwrap_or("");
    let rest = table
        .split_once(TABLE_TAIL)
        .map_or(String::new(), |(_, r)| format!("{TABLE_TAIL}{r}"));
    let tail = rest.split(PLOTS_HEAD).next().unwrap_or("").to_string();
    let tail = if tail.is_empty() { table_tail() } else { tail };
    let mut s = body.trim_end().to_string();
    s.push('\n');
    let not_run: Vec<&str> = body
        .lines()
        .filter(|l| l.contains("| not run at this scale |"))
        .filter_map(|l| l.strip_prefix("| ")?.split(" |").next())
        .collect();
    let missing = if not_run.is_empty() {
        String::new()
    } else {
        format!("; not run at this scale: {}", not_run.join(", "))
    };
    let _ = writeln!(
        s,
        "{TOTAL_HEAD}{} (the sum of the wall column, each figure once{missing}).",
        wall(total_wall(body))
    );
    s += &tail;
    let link = plots.strip_prefix(base).unwrap_or(plots);
    let mut section = String::new();
    for f in FIGURES {
        let names = plots_of(plots, f.id);
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(section, "\n### {} ({}): {}\n", f.id, f.paper, f.title);
        for n in names {
            let _ = writeln!(section, "![{n}]({}/{n})", link.display());
        }
    }
    if !section.is_empty() {
        s += PLOTS_HEAD;
        s += &section;
    }
    s
}

/// Writes the table `t`: every figure of `results` (`whole`: the table is only theirs, else
/// their rows replace their own in the existing table), then the total and the plots in
/// `plots` (default: `docs/figures` beside the table).
fn write_table(
    t: &Path,
    results: &[(&Figure, Option<FigureResult>)],
    whole: bool,
    plots: Option<&Path>,
) -> Result<()> {
    let mut text = if whole {
        table(results)
    } else {
        match std::fs::read_to_string(t) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", t.display())),
        }
    };
    if !whole {
        for (f, r) in results {
            if let Some(r) = r {
                text = update_table(&text, f, r);
            }
        }
    }
    let base = t.parent().unwrap_or(Path::new(""));
    let default_plots = base.join("docs").join("figures");
    let text = finish_table(&text, plots.unwrap_or(&default_plots), base);
    crate::output::write_atomic(t, text.as_bytes())
}

/// `repsim figure`.
pub fn figure(args: FigureArgs) -> Result<()> {
    let jobs = crate::run::jobs_or_every_core(args.jobs.unwrap_or(0));
    let reuse = match (args.rerun, args.redraw) {
        (true, _) => Reuse::Rerun,
        (_, true) => Reuse::RedrawOnly,
        _ => Reuse::Resume,
    };
    match args.id.as_str() {
        "list" => {
            list();
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
                match run_figure(f, args.scale, &out, jobs, reuse, args.quiet) {
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
            let result = run_figure(fig, args.scale, &out, jobs, reuse, args.quiet)?;
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
mod tests {
    use super::*;

    fn result(id: &str, ours: f64) -> FigureResult {
        FigureResult {
            id: id.into(),
            scale: "paper".into(),
            finished_unix_s: 0,
            wall_s: 4000.0,
            commit: "abc1234".into(),
            plots: vec![],
            claims: vec![draw::Checked {
                what: "a number".into(),
                paper: 2.0,
                ours: Some(ours),
                ratio: Some(ours / 2.0),
                bound: None,
            }],
        }
    }

    fn figure(id: &str) -> &'static Figure {
        FIGURES.iter().find(|f| f.id == id).unwrap()
    }

    #[test]
    fn one_figures_rows_replace_its_own_and_keep_the_others() {
        let (a, b) = (figure("reps-fig4"), figure("laps-table1"));
        let first = update_table("", b, &result(b.id, 3.0));
        assert!(first.starts_with(TABLE_HEAD) && first.contains(TABLE_TAIL));
        assert!(first.contains("| laps-table1 | LAPS Table 1 | paper | a number | 2.000 | 3.000 | 1.50 | 67 min | abc1234 |"), "{first}");
        // Another figure goes before it (figure order), and re-running the first replaces
        // its row.
        let both = update_table(&first, a, &result(a.id, 1.0));
        let again = update_table(&both, b, &result(b.id, 5.0));
        let rows: Vec<&str> = again
            .lines()
            .filter(|l| l.starts_with("| reps-fig4 |") || l.starts_with("| laps-table1 |"))
            .collect();
        assert_eq!(rows.len(), 2, "{again}");
        assert!(
            rows[0].starts_with("| reps-fig4 |") && rows[1].contains("| 5.000 |"),
            "{again}"
        );
        assert_eq!(again.matches("Rows of the reproduction matrix").count(), 1);
        // A table of the older form (no wall and commit columns) keeps its rows, padded.
        let old = "| id | figure | scale | quantity | paper | ours | ours / paper |\n|---|---|---|---|---|---|---|\n| reps-fig2 | REPS Fig. 2 | small | x | 1.0 | 1.0 | 1.00 |\n";
        let up = update_table(old, b, &result(b.id, 3.0));
        assert!(
            up.contains("| reps-fig2 | REPS Fig. 2 | small | x | 1.0 | 1.0 | 1.00 | | |\n"),
            "{up}"
        );
    }

    #[test]
    fn the_table_ends_with_its_total_and_the_plots_found() {
        let dir = std::env::temp_dir().join(format!("repsim-table-{}", std::process::id()));
        let plots = dir.join("docs").join("figures");
        std::fs::create_dir_all(&plots).unwrap();
        for name in [
            "reps-fig4.svg",
            "reps-fig12-a.svg",
            "reps-fig1.svg",
            "x.png",
        ] {
            std::fs::write(plots.join(name), "<svg/>").unwrap();
        }
        let (a, b) = (figure("reps-fig4"), figure("laps-table1"));
        let t = update_table(
            &update_table("", a, &result(a.id, 1.0)),
            b,
            &result(b.id, 3.0),
        );
        let done = finish_table(&t, &plots, &dir);
        // Each figure's wall counted once: 4000 s + 4000 s.
        assert!(
            done.contains("Total wall time of the figures above: 2.2 h"),
            "{done}"
        );
        assert!(
            done.contains("![reps-fig4.svg](docs/figures/reps-fig4.svg)"),
            "{done}"
        );
        // reps-fig1 is no figure of the registry and reps-fig12's plot is not reps-fig1's.
        assert!(
            done.contains("reps-fig12-a.svg") && !done.contains("(docs/figures/reps-fig1.svg)")
        );
        assert!(!done.contains("x.png"));
        // Finishing again changes nothing, and a row update keeps one total and one section.
        assert_eq!(finish_table(&done, &plots, &dir), done);
        let again = finish_table(&update_table(&done, a, &result(a.id, 2.0)), &plots, &dir);
        assert_eq!(again.matches("Total wall time").count(), 1, "{again}");
        assert_eq!(again.matches("## Plots").count(), 1, "{again}");
        assert_eq!(again.matches("Rows of the reproduction matrix").count(), 1);
        assert_eq!(parse_wall("1.5 h"), Some(5400.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn provenance_names_the_commits_of_the_runs() {
        let p = Provenance {
            total: 3,
            ran_now: 0,
            commits: ["b2".to_string(), "a1".to_string()].into_iter().collect(),
            unnamed: 1,
        };
        assert_eq!(p.commit(Some("c3")), "a1+b2+c3");
        assert_eq!(Provenance::default().commit(None), env!("REPSIM_COMMIT"));
    }

    #[test]
    fn a_bound_shows_as_one_and_says_whether_ours_keeps_it() {
        let c = |ours: f64, bound| draw::Checked {
            what: "x".into(),
            paper: 1.0,
            ours: Some(ours),
            ratio: Some(ours),
            bound,
        };
        let at_most = c(0.39, Some(draw::Bound::AtMost));
        assert_eq!(
            (at_most.paper_cell(), at_most.ratio_cell()),
            ("<= 1.000".into(), "0.39 (holds)".into())
        );
        let at_least = c(0.91, Some(draw::Bound::AtLeast));
        assert_eq!(
            (at_least.paper_cell(), at_least.ratio_cell()),
            (">= 1.000".into(), "0.91 (fails)".into())
        );
        assert_eq!(c(0.91, None).ratio_cell(), "0.91");
    }
}
