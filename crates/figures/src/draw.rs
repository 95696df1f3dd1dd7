//! A figure's outputs: its plot per panel (PNG and SVG), the data as CSV, `result.json` (our
//! numbers beside the paper's) and `index.html`, the page that shows them together.
mod runs;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use repsim_plot::chart::{BarChart, LineChart};
use serde::{Deserialize, Serialize};

use super::model::{Claim, Figure, Metric, Ours, Panel, PlotKind, Sel, Sign};
use repsim_experiment::files::{json_bytes, write_atomic};
use repsim_experiment::report::{esc, SELF_CHECK, STYLE};
pub use runs::{
    LAST_REROUTE_MS, NEW_FLOWLETS, NEW_FLOWLETS_2500US, NEW_FLOWLETS_AFTER_1MS, REROUTES,
    SLOW_ELEPHANTS_PCT,
};

/// Rows of one panel's `sweep.csv`, column to cell.
pub type Rows = Vec<BTreeMap<String, String>>;

/// Reads a CSV file into rows; a panel's `sweep.csv` (beside its points) also gets each row's
/// run directory, from which the derived metrics of [`runs`] are read.
pub fn read_rows(path: &Path) -> Result<Rows> {
    let mut rows = read_csv_rows(path)?;
    if let Some(dir) = path.parent() {
        runs::add_run_dirs(&mut rows, dir);
    }
    Ok(rows)
}

/// Reads a CSV file into rows, column to cell.
fn read_csv_rows(path: &Path) -> Result<Rows> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let header = r.headers()?.clone();
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.with_context(|| format!("reading {}", path.display()))?;
        out.push(
            header
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect(),
        );
    }
    Ok(out)
}

/// Column name of the completion-time metric: the largest FCT when every flow finished, else
/// the simulated time at which the run ended with flows unfinished (a lower bound, so a
/// scheme that never finishes is not judged by the flows it did finish).
pub const COMPLETION: &str = "completion_us";

/// A metric's value in one `sweep.csv` row (`completion_us` is derived, see [`COMPLETION`]).
pub fn metric_value(row: &BTreeMap<String, String>, column: &str) -> Option<f64> {
    if let Some(v) = runs::derived(row, column) {
        return v;
    }
    let num = |c: &str| row.get(c).and_then(|v| v.parse::<f64>().ok());
    if column == COMPLETION {
        let unfinished = num("flows_completed")? < num("flows_total")?;
        return if unfinished {
            num("sim_time_us")
        } else {
            num("fct_max_us")
        };
    }
    num(column)
}

/// The value `sel` picks from the panels' rows.
fn pick(panels: &[(&Panel, Rows)], sel: &Sel) -> Option<f64> {
    let (panel, rows) = panels.get(sel.panel)?;
    let key = panel.axis.as_ref().map(|a| a.key);
    rows.iter()
        .find(|r| {
            r.get("lb").map(String::as_str) == Some(sel.lb)
                && match (sel.at, key) {
                    (Some(at), Some(k)) => r.get(k).map(String::as_str) == Some(at),
                    _ => true,
                }
        })
        .and_then(|r| metric_value(r, sel.metric.column))
}

/// What a figure run at a scale other than the paper's says beside its numbers and in its plot
/// titles: they are not the paper's experiment, so a ratio to the paper's means little.
pub const NOT_COMPARABLE: &str = "small scale: not comparable";

/// A panel's plot title: the paper's figure and the panel, marked when run at small scale.
pub fn panel_title(fig: &Figure, panel: &Panel, small: bool) -> String {
    match small {
        true => format!("{}: {} ({NOT_COMPARABLE})", fig.paper, panel.title),
        false => format!("{}: {}", fig.paper, panel.title),
    }
}

/// One claim with our number.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checked {
    /// What it is.
    pub what: String,
    /// The paper's number.
    pub paper: f64,
    /// Ours, if it could be computed.
    pub ours: Option<f64>,
    /// Ours over the paper's.
    pub ratio: Option<f64>,
    /// The paper's number is a bound (absent: a value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// Which values ours can take (how it is computed).
    #[serde(default)]
    pub sign: Sign,
    /// Why ours and the paper's should not be compared ([`NOT_COMPARABLE`] at small scale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A claim whose number is a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Ours should be at most the paper's number.
    AtMost,
    /// Ours should be at least the paper's number.
    AtLeast,
}

impl Checked {
    /// The paper's number as a table cell (`<= 1.000` for a bound).
    pub fn paper_cell(&self) -> String {
        match self.bound {
            Some(Bound::AtMost) => format!("<= {}", num(self.paper)),
            Some(Bound::AtLeast) => format!(">= {}", num(self.paper)),
            None => num(self.paper),
        }
    }

    /// Ours over the paper's as a table cell; for a bound, whether ours keeps it.
    pub fn ratio_cell(&self) -> String {
        let Some(r) = self.ratio else {
            return "-".into();
        };
        let holds = |ok: bool| if ok { "holds" } else { "fails" };
        match (self.bound, self.ours) {
            (Some(Bound::AtMost), Some(o)) => format!("{r:.2} ({})", holds(o <= self.paper)),
            (Some(Bound::AtLeast), Some(o)) => format!("{r:.2} ({})", holds(o >= self.paper)),
            _ => format!("{r:.2}"),
        }
    }
}

/// Our number, computed as `ours` says (a bound's inner way for a bound).
fn our_value(
    ours: &Ours,
    panels: &[(&Panel, Rows)],
    theory_dir: &Path,
    small: bool,
) -> Option<f64> {
    match ours {
        Ours::Value(s) => pick(panels, s),
        Ours::Ratio(a, b) => match (pick(panels, a), pick(panels, b)) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b),
            _ => None,
        },
        Ours::OverIdeal(s, f, (paper_size, small_size)) => {
            let size = if small { small_size } else { paper_size };
            let ideal_us = (size * 8.0 / 400e9 * 1e6 + 20.0) / (1.0 - f);
            pick(panels, s).map(|v| v / ideal_us)
        }
        Ours::Theory(f) => f(theory_dir),
        Ours::LowestOtherRatio { of, others } => {
            pick(panels, of).filter(|&d| d != 0.0).and_then(|d| {
                let values: Option<Vec<f64>> = others
                    .iter()
                    .map(|lb| pick(panels, &Sel { lb, ..*of }))
                    .collect();
                values?.into_iter().map(|v| v / d).reduce(f64::min)
            })
        }
        Ours::MaxRatio {
            panel,
            num,
            den,
            metric,
        } => panels.get(*panel).and_then(|(p, _)| {
            let labels: Vec<Option<&'static str>> = match &p.axis {
                Some(a) => a.labels.iter().map(|l| Some(*l)).collect(),
                None => vec![None],
            };
            let sel = |lb, at| Sel {
                panel: *panel,
                lb,
                at,
                metric: *metric,
            };
            labels
                .into_iter()
                .filter_map(|at| {
                    let (a, b) = (pick(panels, &sel(num, at))?, pick(panels, &sel(den, at))?);
                    (b != 0.0).then(|| a / b)
                })
                .reduce(f64::max)
        }),
        Ours::Reduction(a, b) => change(pick(panels, a), pick(panels, b)).map(|c| -c),
        Ours::Increase(a, b) => change(pick(panels, a), pick(panels, b)),
        Ours::ReductionVsBest {
            panel,
            of,
            others,
            metric,
            largest,
        } => axis_labels(panels, *panel)
            .into_iter()
            .map(|at| {
                let sel = |lb| sel_at(*panel, lb, at, *metric);
                let best = others
                    .iter()
                    .map(|lb| pick(panels, &sel(lb)))
                    .collect::<Option<Vec<f64>>>()?
                    .into_iter()
                    .reduce(f64::min)?;
                change(pick(panels, &sel(of)), Some(best)).map(|c| -c)
            })
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| {
                v.into_iter()
                    .reduce(if *largest { f64::max } else { f64::min })
            }),
        Ours::MaxIncrease {
            panel,
            base,
            lbs,
            metric,
        } => axis_labels(panels, *panel)
            .into_iter()
            .flat_map(|at| {
                lbs.iter().map(move |lb| {
                    change(
                        pick(panels, &sel_at(*panel, lb, at, *metric)),
                        pick(panels, &sel_at(*base, lb, at, *metric)),
                    )
                })
            })
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::max)),
        Ours::AtMost(o) | Ours::AtLeast(o) => our_value(o, panels, theory_dir, small),
    }
}

/// Our numbers for `claims` (simulated panels' rows, or a theory model's directory).
pub fn check_claims(
    claims: &[Claim],
    panels: &[(&Panel, Rows)],
    theory_dir: &Path,
    small: bool,
) -> Vec<Checked> {
    claims
        .iter()
        .map(|c| {
            let ours = our_value(&c.ours, panels, theory_dir, small);
            Checked {
                what: c.what.to_string(),
                paper: c.paper,
                ours,
                ratio: ours.filter(|_| c.paper != 0.0).map(|o| o / c.paper),
                bound: match c.ours {
                    Ours::AtMost(_) => Some(Bound::AtMost),
                    Ours::AtLeast(_) => Some(Bound::AtLeast),
                    _ => None,
                },
                sign: c.ours.sign(),
                note: small.then(|| NOT_COMPARABLE.to_string()),
            }
        })
        .collect()
}

/// How much higher `a` is than `b`, in percent (`None` without both or with `b` zero).
fn change(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(100.0 * (a / b - 1.0)),
        _ => None,
    }
}

/// The axis labels of panel `panel` (one `None` without an axis or panel).
fn axis_labels(panels: &[(&Panel, Rows)], panel: usize) -> Vec<Option<&'static str>> {
    match panels.get(panel).and_then(|(p, _)| p.axis.as_ref()) {
        Some(a) => a.labels.iter().map(|l| Some(*l)).collect(),
        None => vec![None],
    }
}

/// A selection at an optional axis value.
fn sel_at(panel: usize, lb: &'static str, at: Option<&'static str>, metric: Metric) -> Sel {
    Sel {
        panel,
        lb,
        at,
        metric,
    }
}

/// Draws one panel as the paper does; returns the PNG and SVG paths.
pub fn draw_panel(
    fig: &Figure,
    panel: &Panel,
    rows: &Rows,
    dir: &Path,
    stem: &str,
    small: bool,
) -> Result<(PathBuf, PathBuf)> {
    let title = panel_title(fig, panel, small);
    if let Some(drawn) = runs::draw(panel, rows, &title, dir, stem) {
        return drawn;
    }
    let value = |r: &BTreeMap<String, String>| metric_value(r, panel.metric.column);
    match (&panel.axis, panel.plot) {
        (Some(axis), PlotKind::Lines) => {
            let mut chart = LineChart::new(&title, axis.x_label, panel.metric.label);
            for lb in panel.lbs {
                let pts: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| r.get("lb").map(String::as_str) == Some(*lb))
                    .filter_map(|r| Some((r.get(axis.key)?.parse().ok()?, value(r)?)))
                    .collect();
                chart = chart.series(lb, pts);
            }
            chart.write(dir, stem)
        }
        (axis, kind) => {
            let baseline = match kind {
                PlotKind::Speedup(b) => Some(b),
                _ => None,
            };
            let categories: Vec<String> = match axis {
                Some(a) => a.labels.iter().map(|s| s.to_string()).collect(),
                None => vec![panel.metric.label.to_string()],
            };
            let x_label = axis.as_ref().map_or("", |a| a.x_label);
            let y_label = match baseline {
                Some(b) => format!("speedup of {} over {b}", panel.metric.label),
                None => panel.metric.label.to_string(),
            };
            let mut chart = BarChart::new(&title, x_label, &y_label, categories.clone());
            let find = |lb: &str, c: &String| {
                rows.iter()
                    .find(|r| {
                        r.get("lb").map(String::as_str) == Some(lb)
                            && axis.as_ref().is_none_or(|a| r.get(a.key) == Some(c))
                    })
                    .and_then(value)
            };
            for lb in panel.lbs {
                let values = categories
                    .iter()
                    .map(|c| {
                        let v = find(lb, c);
                        match baseline {
                            Some(b) => match (find(b, c), v) {
                                (Some(base), Some(v)) if v > 0.0 => base / v,
                                _ => 0.0,
                            },
                            None => v.unwrap_or(0.0),
                        }
                    })
                    .collect();
                chart = chart.series(lb, values);
            }
            if baseline.is_some() {
                chart = chart.reference("1x", 1.0);
            }
            chart.write(dir, stem)
        }
    }
}

/// What `result.json` records of a figure's last run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FigureResult {
    /// Figure id.
    pub id: String,
    /// `small` or `paper`.
    pub scale: String,
    /// When it finished (Unix seconds).
    pub finished_unix_s: u64,
    /// Wall-clock seconds of the command(s) that ran its simulations: a run that reuses every
    /// finished point keeps the earlier run's time, a resumed run adds its own.
    pub wall_s: f64,
    /// The commit(s) of the binaries that ran its simulations (`a+b` when points of several
    /// were reused; `-dirty`: with uncommitted changes).
    #[serde(default)]
    pub commit: String,
    /// Its plots as SVG files in its directory, in the page's order (time series excluded).
    #[serde(default)]
    pub plots: Vec<String>,
    /// Its data files (CSV) in its directory, a panel's or a model's each.
    #[serde(default)]
    pub data: Vec<String>,
    /// The paper's numbers beside ours.
    pub claims: Vec<Checked>,
}

/// Writes `result.json`.
pub fn write_result(dir: &Path, result: &FigureResult) -> Result<()> {
    write_atomic(&dir.join("result.json"), &json_bytes(result)?)
}

/// Formats a number for the tables: up to 4 significant digits.
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
}

/// Writes `index.html`: images, the claims table, the data files and the scale note.
pub fn write_page(
    fig: &Figure,
    dir: &Path,
    result: &FigureResult,
    images: &[(String, PathBuf)],
    data: &[PathBuf],
) -> Result<PathBuf> {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{id}: {paper}</title><style>{STYLE}</style></head><body>\
         <h1>{paper}: {title}</h1><p>repsim figure <code>{id}</code>, scale <b>{scale}</b>{note}; {wall:.1} s.</p>",
        id = esc(fig.id),
        paper = esc(fig.paper),
        title = esc(fig.title),
        scale = esc(&result.scale),
        note = if result.scale == "small" {
            format!(" (reduced: {}; numbers are not comparable to the paper's)", esc(fig.small))
        } else {
            String::new()
        },
        wall = result.wall_s,
    );
    h += "<h2>Our numbers beside the paper's</h2>";
    if result.claims.is_empty() {
        h += "<p>The paper states no number for this figure (its claim is the shape of the curves).</p>";
    } else {
        h += "<table><tr><th>quantity</th><th>paper</th><th>ours</th><th>ours / paper</th></tr>";
        for c in &result.claims {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.what),
                c.paper_cell(),
                c.ours.map_or("-".into(), num),
                c.ratio_cell()
            );
        }
        h += "</table>";
    }
    h += "<h2>Figures</h2>";
    for (caption, png) in images {
        // Relative to the page, so that the directory can be moved or served as it is.
        let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
        let name = rel(png);
        let svg_name = rel(&png.with_extension("svg"));
        let _ = write!(
            h,
            "<figure><img src=\"{n}\" alt=\"{c}\"><figcaption>{c} (<a href=\"{s}\">SVG</a>)</figcaption></figure>",
            n = esc(&name),
            c = esc(caption),
            s = esc(&svg_name)
        );
    }
    h += "<h2>Data</h2><ul>";
    for d in data {
        let rel = d.strip_prefix(dir).unwrap_or(d).display().to_string();
        let _ = write!(h, "<li><a href=\"{0}\">{0}</a></li>", esc(&rel));
    }
    h += "</ul>";
    h += SELF_CHECK;
    h += "</body></html>\n";
    let path = dir.join("index.html");
    write_atomic(&path, h.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::super::model::Axis;
    use super::*;

    const M: Metric = Metric {
        column: "fct_max_us",
        label: "max",
    };

    /// A panel over loads "40" and "90" (key `load`) of schemes `a`, `b`, `c`.
    const fn panel(name: &'static str) -> Panel {
        Panel {
            name,
            title: "",
            scenario: "",
            lbs: &["a", "b", "c"],
            set: &[],
            small_set: &[],
            axis: Some(Axis {
                key: "load",
                values: &["1", "2"],
                labels: &["40", "90"],
                x_label: "load",
            }),
            metric: M,
            plot: PlotKind::Lines,
            series: false,
        }
    }

    static PFC: Panel = panel("pfc");
    static IRN: Panel = panel("irn");

    fn rows(values: &[(&str, &str, f64)]) -> Rows {
        values
            .iter()
            .map(|(lb, load, v)| {
                [("lb", *lb), ("load", *load)]
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .chain([("fct_max_us".to_string(), v.to_string())])
                    .collect()
            })
            .collect()
    }

    fn ours(ours: Ours, panels: &[(&Panel, Rows)]) -> Option<f64> {
        let claim = Claim {
            what: "",
            paper: 1.0,
            ours,
        };
        check_claims(std::slice::from_ref(&claim), panels, Path::new("."), true)[0].ours
    }

    #[test]
    fn reductions_and_increases_are_percentages_of_the_reference() {
        let pfc = rows(&[
            ("a", "40", 50.0),
            ("b", "40", 100.0),
            ("c", "40", 80.0),
            ("a", "90", 90.0),
            ("b", "90", 100.0),
            ("c", "90", 120.0),
        ]);
        let irn = rows(&[
            ("a", "40", 55.0),
            ("b", "40", 100.0),
            ("c", "40", 80.0),
            ("a", "90", 90.0),
            ("b", "90", 101.0),
            ("c", "90", 126.0),
        ]);
        let panels = [(&PFC, pfc), (&IRN, irn)];
        let sel = |panel, lb, at| Sel {
            panel,
            lb,
            at: Some(at),
            metric: M,
        };
        let close = |a: Option<f64>, b: f64| assert!((a.unwrap() - b).abs() < 1e-9, "{a:?} {b}");
        close(
            ours(
                Ours::Reduction(sel(0, "a", "40"), sel(0, "b", "40")),
                &panels,
            ),
            50.0,
        );
        close(
            ours(
                Ours::Reduction(sel(0, "c", "90"), sel(0, "b", "90")),
                &panels,
            ),
            -20.0,
        );
        close(
            ours(
                Ours::Increase(sel(0, "c", "90"), sel(0, "b", "90")),
                &panels,
            ),
            20.0,
        );
        // `a` against the better of `b` and `c`: 37.5 % below c's 80 at 40, 10 % below b's
        // 100 at 90.
        let vs_best = |largest| Ours::ReductionVsBest {
            panel: 0,
            of: "a",
            others: &["b", "c"],
            metric: M,
            largest,
        };
        close(ours(vs_best(false), &panels), 10.0);
        close(ours(vs_best(true), &panels), 37.5);
        // From PFC to IRN: a +10 % at 40, c +5 % at 90.
        let rise = |lbs| Ours::MaxIncrease {
            panel: 1,
            base: 0,
            lbs,
            metric: M,
        };
        close(ours(rise(&["a", "b", "c"]), &panels), 10.0);
        close(ours(rise(&["b", "c"]), &panels), 5.0);
        // A missing value leaves the claim without a number rather than skipping it.
        assert_eq!(ours(rise(&["a", "d"]), &panels), None);
        assert_eq!(
            ours(
                Ours::Reduction(sel(0, "a", "60"), sel(0, "b", "40")),
                &panels
            ),
            None
        );
    }
}
