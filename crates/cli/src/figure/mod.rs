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

/// Runs figure `fig` at `scale` into `out`; returns its result.
pub fn run_figure(
    fig: &Figure,
    scale: Scale,
    out: &Path,
    jobs: usize,
    rerun: bool,
    quiet: bool,
) -> Result<FigureResult> {
    let started = Instant::now();
    if let Some(why) = unavailable(fig) {
        bail!("{} cannot run here: {why}", fig.id);
    }
    if rerun && out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
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
                        let csv = run_panel(fig, p, scale, &definition, &dir, jobs, quiet)?;
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
    let result = FigureResult {
        id: fig.id.to_string(),
        scale: scale.name().to_string(),
        finished_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        wall_s: started.elapsed().as_secs_f64(),
        commit: env!("REPSIM_COMMIT").to_string(),
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
                draw::num(c.paper),
                c.ours.map_or("-".into(), draw::num),
                c.ratio.map_or("-".into(), |r| format!("{r:.2}"))
            );
        }
        println!("{}", page.display());
    }
    Ok(result)
}

/// Runs panel `p` (sweep file text `definition`) into `dir` and returns its `sweep.csv`.
///
/// A panel of several load balancers without time series runs one sweep per load balancer
/// (`dir/<lb>/`), all on one pool of `jobs` threads, so that a figure of few points and many
/// schemes (LAPS Table 1: 2 x 7) still uses every core; `dir/sweep.csv` then holds their rows
/// point by point in the panel's scheme order, exactly as one sweep of every scheme writes it
/// (each scheme's run does not depend on the others).
fn run_panel(
    fig: &Figure,
    p: &Panel,
    scale: Scale,
    definition: &str,
    dir: &Path,
    jobs: usize,
    quiet: bool,
) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("sweep.toml");
    crate::output::write_atomic(&file, definition.as_bytes())?;
    let whole = Sweep::load(&file)?;
    if p.series || p.lbs.len() < 2 {
        return crate::sweep::run_sweep(&whole, dir, jobs, quiet);
    }
    if dir.join("points").exists() {
        // Runs of every scheme in one sweep (this panel's layout before it was split): reuse
        // them if complete, else drop them so that no stale point outlives its replacement.
        if crate::sweep::all_finished(&whole, dir)? {
            return crate::sweep::run_sweep(&whole, dir, jobs, quiet);
        }
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
     Each figure's rows were written by `repsim figure ID --scale SCALE --table FIGURES.md`\n\
     (`repsim figure all --table FIGURES.md` rewrites them all), with the scale, the wall time of\n\
     that command and the commit of the binary that ran it. At `small` scale the numbers are not\n\
     comparable to the paper's; see each figure's page.\n\n\
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
            let _ = writeln!(s, "| {} | {} | - | not run | | | | | |", f.id, f.paper);
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
                    draw::num(c.paper),
                    c.ours.map_or("-".into(), draw::num),
                    c.ratio.map_or("-".into(), |x| format!("{x:.2}")),
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
/// commit cells).
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
    let order = |id: &str| {
        FIGURES
            .iter()
            .position(|g| g.id == id)
            .unwrap_or(usize::MAX)
    };
    let mut s = String::from(TABLE_HEAD);
    let mut placed = false;
    for (id, line) in &kept {
        if !placed && order(id) > order(f.id) {
            s += &figure_rows(f, Some(r));
            placed = true;
        }
        s += line;
        s.push('\n');
    }
    if !placed {
        s += &figure_rows(f, Some(r));
    }
    s + &table_tail()
}

/// `repsim figure`.
pub fn figure(args: FigureArgs) -> Result<()> {
    let jobs = crate::run::jobs_or_every_core(args.jobs.unwrap_or(0));
    match args.id.as_str() {
        "list" => {
            list();
            Ok(())
        }
        "all" => {
            let mut results = Vec::new();
            let mut failed = Vec::new();
            for f in FIGURES {
                let out = match &args.out {
                    Some(o) => o.join(f.id).join(args.scale.name()),
                    None => default_out(f.id, args.scale),
                };
                match run_figure(f, args.scale, &out, jobs, args.rerun, args.quiet) {
                    Ok(r) => results.push((f, Some(r))),
                    Err(e) => {
                        eprintln!("error: {}: {e:#}", f.id);
                        failed.push(f.id);
                        results.push((f, None));
                    }
                }
            }
            if let Some(t) = &args.table {
                crate::output::write_atomic(t, table(&results).as_bytes())?;
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
            let result = run_figure(fig, args.scale, &out, jobs, args.rerun, args.quiet)?;
            if let Some(t) = &args.table {
                let existing = match std::fs::read_to_string(t) {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                    Err(e) => return Err(e).with_context(|| format!("reading {}", t.display())),
                };
                let text = update_table(&existing, fig, &result);
                crate::output::write_atomic(t, text.as_bytes())?;
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
}
