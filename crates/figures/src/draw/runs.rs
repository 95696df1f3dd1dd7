//! What a figure reads from its runs' own files rather than from `sweep.csv`: the elephants'
//! FCTs (`flows.csv`), load-balancer events over time (`lb_events.csv`), counters of
//! `summary.json` and collected port series, as derived metric columns and as the plots of the
//! Reunion figures (FCT CDFs, cumulative events, queues and per-flow rates over time).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use repsim_plot::chart::{ChartGrid, LineChart};
use serde::Deserialize;

use super::super::model::{EventKind, Panel, PlotKind};
use repsim_experiment::sweep::merge::point_dir;
use repsim_plot::runs::{read_csv, PortCsv, SeriesCsv};

/// Column a panel's rows get: the directory of the row's run (its point's, or with one sweep
/// per load balancer that load balancer's point directory).
pub const RUN_DIR: &str = "run_dir";

/// Derived column: the run's `reroutes` (`summary.json`).
pub const REROUTES: &str = "reroutes";
/// Derived column: flowlets begun over the whole run, each flow's first left out.
pub const NEW_FLOWLETS: &str = "new_flowlets";
/// Derived column: flowlets begun in the first 2.5 ms, each flow's first left out (Reunion
/// Fig. 4a's window).
pub const NEW_FLOWLETS_2500US: &str = "new_flowlets_first_2500us";
/// Derived column: flowlets begun after the first 1 ms (each flow's first left out): what
/// flowlet schemes still do once flows have settled (Reunion Figs. 4a and 5).
pub const NEW_FLOWLETS_AFTER_1MS: &str = "new_flowlets_after_1ms";
/// Derived column: the time of the last reroute (ms; 0 without one).
pub const LAST_REROUTE_MS: &str = "last_reroute_ms";
/// Derived column: the share (percent) of elephants whose FCT is at least 1.5 times the run's
/// fastest (unfinished ones included): "about twice the optimal" read as closer to 2x than to
/// 1x (Reunion Fig. 9).
pub const SLOW_ELEPHANTS_PCT: &str = "slow_elephants_pct";

/// Every derived column.
const DERIVED: &[&str] = &[
    REROUTES,
    NEW_FLOWLETS,
    NEW_FLOWLETS_2500US,
    NEW_FLOWLETS_AFTER_1MS,
    LAST_REROUTE_MS,
    SLOW_ELEPHANTS_PCT,
];

/// The run directory of load balancer `lb` at point `point` of the panel swept into `dir`.
pub fn run_dir(dir: &Path, point: usize, lb: &str) -> PathBuf {
    // A panel of several schemes without series runs one sweep per scheme (`dir/<lb>/`).
    let own = point_dir(&dir.join(lb), point);
    if own.is_dir() {
        own
    } else {
        point_dir(dir, point)
    }
}

/// Adds [`RUN_DIR`] to the rows of the `sweep.csv` in `dir`.
pub fn add_run_dirs(rows: &mut [BTreeMap<String, String>], dir: &Path) {
    for r in rows.iter_mut() {
        let point = r.get("point").and_then(|p| p.parse::<usize>().ok());
        if let (Some(point), Some(lb)) = (point, r.get("lb").cloned()) {
            let d = run_dir(dir, point, &lb);
            r.insert(RUN_DIR.into(), d.display().to_string());
        }
    }
}

/// The value of derived column `column` for a row, read from its run's files: `None` if
/// `column` is not derived, `Some(None)` if the run lacks what it needs.
pub fn derived(row: &BTreeMap<String, String>, column: &str) -> Option<Option<f64>> {
    if !DERIVED.contains(&column) {
        return None;
    }
    let (Some(dir), Some(lb)) = (row.get(RUN_DIR), row.get("lb")) else {
        return Some(None);
    };
    let dir = Path::new(dir);
    Some(match column {
        REROUTES => summary_run(dir, lb).and_then(|r| r["reroutes"].as_f64()),
        NEW_FLOWLETS => new_flowlets(dir, lb).map(|t| t.len() as f64),
        NEW_FLOWLETS_2500US => new_flowlets(dir, lb).map(|t| count(&t, |x| x < 2500.0)),
        NEW_FLOWLETS_AFTER_1MS => new_flowlets(dir, lb).map(|t| count(&t, |x| x > 1000.0)),
        LAST_REROUTE_MS => events(dir, lb, EventKind::Reroutes)
            .ok()
            .map(|t| t.last().map_or(0.0, |x| x / 1000.0)),
        SLOW_ELEPHANTS_PCT => elephants(dir, lb).ok().and_then(|e| {
            let fastest = e.fcts.first()?;
            let slow = e.total - e.fcts.iter().filter(|&&f| f < 1.5 * fastest).count();
            Some(100.0 * slow as f64 / e.total as f64)
        }),
        _ => None,
    })
}

/// How many of `times` satisfy `keep`.
fn count(times: &[f64], keep: impl Fn(f64) -> bool) -> f64 {
    times.iter().filter(|&&t| keep(t)).count() as f64
}

/// The times of the new flowlets of `lb`'s run, if it recorded flowlet events: every flow of
/// a flowlet scheme that records them has a first one, so none at all means they were not
/// recorded (or the scheme has no flowlets), which is not a count of zero.
fn new_flowlets(dir: &Path, lb: &str) -> Option<Vec<f64>> {
    let rows = read_events(dir).ok()?;
    rows.iter()
        .any(|e| e.lb == lb && e.event == "flowlet")
        .then(|| select(rows, lb, EventKind::NewFlowlets))
}

/// `lb`'s entry of the run's `summary.json`.
fn summary_run(dir: &Path, lb: &str) -> Option<serde_json::Value> {
    let bytes = std::fs::read(dir.join("summary.json")).ok()?;
    let s: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    s["runs"]
        .as_array()?
        .iter()
        .find(|r| r["lb"].as_str() == Some(lb))
        .cloned()
}

/// A row of `lb_events.csv` (the columns the figures read).
#[derive(Deserialize)]
struct EventRow {
    lb: String,
    time_us: f64,
    flow: u64,
    event: String,
}

/// Every row of a run's `lb_events.csv`.
fn read_events(dir: &Path) -> Result<Vec<EventRow>> {
    let path = dir.join("lb_events.csv");
    read_csv(&path)?.with_context(|| format!("{} is missing", path.display()))
}

/// The times (us, in order) of `lb`'s events of kind `kind`.
pub fn events(dir: &Path, lb: &str, kind: EventKind) -> Result<Vec<f64>> {
    Ok(select(read_events(dir)?, lb, kind))
}

/// The times (us, in order) of `lb`'s events of kind `kind` among `rows`.
fn select(rows: Vec<EventRow>, lb: &str, kind: EventKind) -> Vec<f64> {
    let mut seen: Vec<u64> = Vec::new();
    let mut times = Vec::new();
    for e in rows.into_iter().filter(|e| e.lb == lb) {
        match kind {
            EventKind::Reroutes if e.event == "rerouted" => times.push(e.time_us),
            EventKind::NewFlowlets if e.event == "flowlet" => {
                // Events come in time order: a flow's first flowlet is its first event.
                match seen.binary_search(&e.flow) {
                    Ok(_) => times.push(e.time_us),
                    Err(i) => seen.insert(i, e.flow),
                }
            }
            _ => {}
        }
    }
    times.sort_by(f64::total_cmp);
    times
}

/// A row of `flows.csv` (the columns the figures read).
#[derive(Deserialize)]
struct FlowRow {
    lb: String,
    src: u64,
    dst: u64,
    start: f64,
    finish: Option<f64>,
}

/// The elephants of a run: a flow's slices (flows of one source and destination) joined.
pub struct Elephants {
    /// FCTs (us) of the finished ones, ascending.
    pub fcts: Vec<f64>,
    /// How many there are, unfinished ones included.
    pub total: usize,
}

/// The elephants of `lb`'s run in `dir`: one per source and destination, from its first
/// slice's start to its last slice's finish (unfinished if any slice is).
pub fn elephants(dir: &Path, lb: &str) -> Result<Elephants> {
    let path = dir.join("flows.csv");
    let rows: Vec<FlowRow> =
        read_csv(&path)?.with_context(|| format!("{} is missing", path.display()))?;
    let mut joined: BTreeMap<(u64, u64), (f64, Option<f64>)> = BTreeMap::new();
    for f in rows.into_iter().filter(|f| f.lb == lb) {
        let e = joined
            .entry((f.src, f.dst))
            .or_insert((f.start, Some(f64::NEG_INFINITY)));
        e.0 = e.0.min(f.start);
        e.1 = match (e.1, f.finish) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    let mut fcts: Vec<f64> = joined
        .values()
        .filter_map(|(start, end)| end.map(|e| e - start))
        .collect();
    fcts.sort_by(f64::total_cmp);
    Ok(Elephants {
        fcts,
        total: joined.len(),
    })
}

/// A CDF's steps: (value, fraction of `total` at or below it).
fn cdf(values: &[f64], total: usize) -> Vec<(f64, f64)> {
    let n = total.max(1) as f64;
    let mut pts = Vec::with_capacity(2 * values.len());
    for (i, &x) in values.iter().enumerate() {
        pts.push((x, i as f64 / n));
        pts.push((x, (i + 1) as f64 / n));
    }
    pts
}

/// A step line of the cumulative count of events at `times` (us) against time (ms).
fn cumulative(times: &[f64]) -> Vec<(f64, f64)> {
    let mut pts = vec![(0.0, 0.0)];
    for (i, &t) in times.iter().enumerate() {
        pts.push((t / 1000.0, i as f64));
        pts.push((t / 1000.0, (i + 1) as f64));
    }
    pts
}

/// The runs of a panel, in row order: (load balancer, axis label, run directory).
fn runs<'a>(
    panel: &Panel,
    rows: &'a [BTreeMap<String, String>],
) -> Vec<(&'a str, &'a str, &'a Path)> {
    let key = panel.axis.as_ref().map(|a| a.key);
    rows.iter()
        .filter_map(|r| {
            let lb = r.get("lb")?.as_str();
            let at = key.and_then(|k| r.get(k)).map_or("", String::as_str);
            Some((lb, at, Path::new(r.get(RUN_DIR)?.as_str())))
        })
        .filter(|(lb, _, _)| panel.lbs.contains(lb))
        .collect()
}

/// A line's legend: the load balancer, the axis value, or both.
fn legend(panel: &Panel, lb: &str, at: &str) -> String {
    match (panel.axis.is_some(), panel.lbs.len() > 1) {
        (false, _) => lb.to_string(),
        (true, false) => at.to_string(),
        (true, true) => format!("{lb} {at}"),
    }
}

/// Draws a panel of one of the kinds this module knows, titled `title`; `None` for the others.
pub fn draw(
    panel: &Panel,
    rows: &[BTreeMap<String, String>],
    title: &str,
    dir: &Path,
    stem: &str,
) -> Option<Result<(PathBuf, PathBuf)>> {
    let title = title.to_string();
    let result = match panel.plot {
        PlotKind::FctCdf => fct_cdf(panel, rows, &title, dir, stem),
        PlotKind::Cumulative(kind) => cumulative_events(panel, rows, kind, &title, dir, stem),
        PlotKind::Queues => port_charts(panel, rows, Ports::Queues, &title, dir, stem),
        PlotKind::HostRates => port_charts(panel, rows, Ports::HostRates, &title, dir, stem),
        _ => return None,
    };
    Some(result)
}

/// The elephants' FCT CDFs (ms).
fn fct_cdf(
    panel: &Panel,
    rows: &[BTreeMap<String, String>],
    title: &str,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf)> {
    let line = |lb: &str, d: &Path| -> Result<Vec<(f64, f64)>> {
        let e = elephants(d, lb)?;
        let ms: Vec<f64> = e.fcts.iter().map(|f| f / 1000.0).collect();
        Ok(cdf(&ms, e.total))
    };
    let chart = |t: &str| {
        LineChart::new(t, "elephant FCT (ms)", "fraction of elephants")
            .y_range(0.0, 1.02)
            .legend_lower_right()
    };
    let runs = runs(panel, rows);
    match &panel.axis {
        Some(axis) if panel.lbs.len() > 1 => {
            let mut grid = ChartGrid::new(title, 3);
            for label in axis.labels {
                let mut c = chart(&format!("{} {label}", axis.x_label));
                for (lb, _, d) in runs.iter().filter(|r| r.1 == *label) {
                    c = c.series(lb, line(lb, d)?);
                }
                grid = grid.chart(c);
            }
            grid.write(dir, stem)
        }
        _ => {
            let mut c = chart(title);
            for (lb, at, d) in &runs {
                c = c.series(&legend(panel, lb, at), line(lb, d)?);
            }
            c.write(dir, stem)
        }
    }
}

/// Cumulative events over time.
fn cumulative_events(
    panel: &Panel,
    rows: &[BTreeMap<String, String>],
    kind: EventKind,
    title: &str,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf)> {
    let what = match kind {
        EventKind::Reroutes => "reroutes (cumulative)",
        EventKind::NewFlowlets => "new flowlets (cumulative)",
    };
    let mut c = LineChart::new(title, "time (ms)", what);
    for (lb, at, d) in runs(panel, rows) {
        c = c.series(&legend(panel, lb, at), cumulative(&events(d, lb, kind)?));
    }
    c.write(dir, stem)
}

/// Which collected ports a port chart shows.
#[derive(Clone, Copy, PartialEq)]
enum Ports {
    /// The up ports of the first collected switch with any: queue occupancy.
    Queues,
    /// Host NIC uplinks: rate.
    HostRates,
}

/// Per-port series of the panel's first point, a chart per load balancer: the queue at the
/// first collected switch's up ports (the largest and the mean over them of each bucket's
/// largest sample), or each collected host's sending rate.
fn port_charts(
    panel: &Panel,
    rows: &[BTreeMap<String, String>],
    which: Ports,
    title: &str,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf)> {
    let mut charts = Vec::new();
    for lb in panel.lbs {
        let Some((_, _, d)) = runs(panel, rows).into_iter().find(|r| r.0 == *lb) else {
            continue;
        };
        let ports: Vec<PortCsv> = read_csv(&d.join("ports.csv"))?
            .with_context(|| format!("{}: no ports.csv (nothing collected?)", d.display()))?;
        let series: Vec<SeriesCsv> = read_csv(&d.join("port_series.csv"))?.unwrap_or_default();
        let ports: Vec<&PortCsv> = ports.iter().filter(|p| p.lb == *lb).collect();
        let of_port = |p: &PortCsv| -> Vec<&SeriesCsv> {
            series
                .iter()
                .filter(|s| s.lb == *lb && s.link == p.link)
                .collect()
        };
        let chart = match which {
            Ports::Queues => {
                let sw = ports
                    .iter()
                    .find(|p| p.direction == "up")
                    .map_or("-", |p| p.from.as_str());
                let ups: Vec<&PortCsv> = ports
                    .iter()
                    .copied()
                    .filter(|p| p.direction == "up" && p.from == sw)
                    .collect();
                // Bucket start (ms) to the largest samples of the up ports in it.
                let mut buckets: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
                for p in &ups {
                    for s in of_port(p) {
                        buckets
                            .entry((s.t_us * 1000.0).round() as u64)
                            .or_default()
                            .push(s.q_max_bytes as f64 / 1000.0);
                    }
                }
                let line = |f: &dyn Fn(&[f64]) -> f64| -> Vec<(f64, f64)> {
                    buckets
                        .iter()
                        .map(|(t, v)| (*t as f64 / 1e6, f(v)))
                        .collect()
                };
                let n = ups.len().max(1) as f64;
                LineChart::new(
                    &format!("{lb}: queues at the {} uplinks of {sw}", ups.len()),
                    "time (ms)",
                    "queue (KB; each port's largest sample per bucket)",
                )
                .series("largest", line(&|v| v.iter().copied().fold(0.0, f64::max)))
                .series("mean", line(&|v| v.iter().sum::<f64>() / n))
            }
            Ports::HostRates => {
                let flows: Vec<FlowRow> = read_csv(&d.join("flows.csv"))?.unwrap_or_default();
                let mut c = LineChart::new(
                    &format!("{lb}: each flow's sending rate"),
                    "time (ms)",
                    "rate (Gb/s)",
                );
                for p in ports.iter().filter(|p| p.direction == "host") {
                    // Name the line by its flow when the host sends to one destination.
                    let mut dsts: Vec<u64> = flows
                        .iter()
                        .filter(|f| f.lb == *lb && p.from == format!("host{}", f.src))
                        .map(|f| f.dst)
                        .collect();
                    dsts.dedup();
                    let name = match dsts[..] {
                        [dst] => format!("{} -> host{dst}", p.from),
                        _ => p.from.clone(),
                    };
                    let pts = of_port(p)
                        .iter()
                        .map(|s| (s.t_us / 1000.0, s.util_gbps))
                        .collect();
                    c = c.series(&name, pts);
                }
                c
            }
        };
        charts.push((*lb, chart));
    }
    if let [(lb, c)] = &mut charts[..] {
        c.title = format!("{title}, {lb}");
        return c.write(dir, stem);
    }
    let mut grid = ChartGrid::new(title, 2);
    for (_, c) in charts {
        grid = grid.chart(c);
    }
    grid.write(dir, stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn elephants_join_slices_and_count_unfinished_ones() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "flows.csv",
            "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions\n\
             a,1,0,8,10,0,100,100,0\na,2,0,8,10,5,250,245,0\n\
             a,3,8,16,10,0,90,90,0\na,4,16,24,10,0,,,0\nb,5,0,8,10,0,1,1,0\n",
        );
        let e = elephants(dir.path(), "a").unwrap();
        assert_eq!(e.fcts, vec![90.0, 250.0]);
        assert_eq!(e.total, 3);
        let mut row = BTreeMap::new();
        row.insert("lb".to_string(), "a".to_string());
        row.insert(RUN_DIR.to_string(), dir.path().display().to_string());
        // 250 is at least 1.5 x 90, and the unfinished one counts as slow: 2 of 3.
        let v = derived(&row, SLOW_ELEPHANTS_PCT).unwrap().unwrap();
        assert!((v - 200.0 / 3.0).abs() < 1e-9, "{v}");
        assert_eq!(derived(&row, "fct_max_us"), None);
    }

    #[test]
    fn new_flowlets_leave_each_flows_first_out_and_reroutes_keep_their_times() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "lb_events.csv",
            "lb,time_us,flow,event,until_us,old_path,new_path,reason\n\
             l,1.0,7,flowlet,,2,2,\nl,1.5,9,flowlet,,3,3,\nl,1200,7,flowlet,,2,5,\n\
             l,3000,9,flowlet,,3,3,\nr,40,7,rerouted,,1,2,collision\nr,2500,9,rerouted,,0,3,collision\n",
        );
        write(
            dir.path(),
            "summary.json",
            r#"{"runs":[{"lb":"l","reroutes":1,"switch_stats":{"flowlets":4,"reroutes":1}},{"lb":"r","reroutes":2},{"lb":"e","reroutes":0,"switch_stats":{"flowlets":3,"reroutes":0}}]}"#,
        );
        let mut row = BTreeMap::new();
        row.insert(RUN_DIR.to_string(), dir.path().display().to_string());
        let get = |row: &BTreeMap<String, String>, lb: &str, c: &str| {
            let mut r = row.clone();
            r.insert("lb".into(), lb.into());
            derived(&r, c).unwrap()
        };
        assert_eq!(get(&row, "l", NEW_FLOWLETS_2500US), Some(1.0));
        assert_eq!(get(&row, "l", NEW_FLOWLETS_AFTER_1MS), Some(2.0));
        assert_eq!(get(&row, "r", LAST_REROUTE_MS), Some(2.5));
        assert_eq!(get(&row, "l", LAST_REROUTE_MS), Some(0.0));
        assert_eq!(get(&row, "r", REROUTES), Some(2.0));
        // Reunion has no flowlets to count; LetFlow without events cannot be counted.
        assert_eq!(get(&row, "r", NEW_FLOWLETS_2500US), None);
        assert_eq!(get(&row, "e", NEW_FLOWLETS_2500US), None);
        assert_eq!(
            cumulative(&[1.0, 2000.0]),
            vec![
                (0.0, 0.0),
                (0.001, 0.0),
                (0.001, 1.0),
                (2.0, 1.0),
                (2.0, 2.0)
            ]
        );
    }
}
