//! Plots of a run directory (PNG and SVG via `theory::plot`): FCT CDF per load balancer, FCT
//! bars, per-uplink utilisation and queue depth over time, uplink shares, freeze events.
use std::path::{Path, PathBuf};

use crate::chart::{BarChart, LineChart};
use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// A row of `flows.csv` (the columns the plots need).
#[derive(Debug, Deserialize)]
pub struct FlowCsv {
    /// Load balancer.
    pub lb: String,
    /// FCT in us (empty if unfinished).
    pub fct_us: Option<f64>,
}

/// A row of `ports.csv`.
#[derive(Clone, Debug, Deserialize)]
pub struct PortCsv {
    /// Load balancer.
    pub lb: String,
    /// Link id.
    pub link: u32,
    /// Link name.
    pub name: String,
    /// Upstream node.
    pub from: String,
    /// `host`, `up` or `down`.
    pub direction: String,
    /// Link rate.
    pub rate_gbps: f64,
    /// ECN marks.
    pub ecn_marks: u64,
    /// Largest queue (bytes).
    pub max_queue_bytes: u64,
    /// Uplink share (up ports only).
    pub uplink_share: Option<f64>,
}

/// A row of `port_series.csv`.
#[derive(Clone, Debug, Deserialize)]
pub struct SeriesCsv {
    /// Load balancer.
    pub lb: String,
    /// Link id.
    pub link: u32,
    /// Bucket start (us).
    pub t_us: f64,
    /// Utilisation (Gb/s).
    pub util_gbps: f64,
    /// Queue samples.
    pub q_samples: u64,
    /// Samples above Kmin.
    pub q_above_kmin: u64,
    /// Largest sample (bytes).
    pub q_max_bytes: u64,
}

/// A row of `slowdown.csv`.
#[derive(Clone, Debug, Deserialize)]
pub struct SlowdownCsv {
    /// Load balancer.
    pub lb: String,
    /// Size bucket (`all` last).
    pub bucket: String,
    /// Finished flows in it.
    pub flows: usize,
    /// Mean slowdown.
    pub mean: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// A row of `lb_events.csv`.
#[derive(Debug, Deserialize)]
pub struct EventCsv {
    /// Load balancer.
    pub lb: String,
    /// Time (us).
    pub time_us: f64,
    /// `froze`, `unfroze` or `rerouted`.
    pub event: String,
}

/// Reads a CSV file of `T` rows (None if the file does not exist).
pub fn read_csv<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<Vec<T>>> {
    if !path.exists() {
        return Ok(None);
    }
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let rows = r
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .with_context(|| format!("parsing {}", path.display()))?;
    Ok(Some(rows))
}

/// Everything the report shows, read from a run directory.
pub struct RunData {
    /// Load balancers in run order.
    pub lbs: Vec<String>,
    /// flows.csv.
    pub flows: Vec<FlowCsv>,
    /// ports.csv, if collected.
    pub ports: Vec<PortCsv>,
    /// port_series.csv, if collected.
    pub series: Vec<SeriesCsv>,
    /// lb_events.csv.
    pub events: Vec<EventCsv>,
    /// slowdown.csv (absent in older runs).
    pub slowdown: Vec<SlowdownCsv>,
}

impl RunData {
    /// Reads `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        if !dir.join("flows.csv").exists() {
            if dir.join("flow_stats.parquet").exists() {
                bail!(
                    "{}: the report reads CSV results; re-run with --format csv",
                    dir.display()
                );
            }
            bail!(
                "{}: no flows.csv here; is this a `repsim run` output directory?",
                dir.display()
            );
        }
        let flows: Vec<FlowCsv> = read_csv(&dir.join("flows.csv"))?.unwrap_or_default();
        let mut lbs: Vec<String> = Vec::new();
        for f in &flows {
            if !lbs.contains(&f.lb) {
                lbs.push(f.lb.clone());
            }
        }
        Ok(RunData {
            lbs,
            flows,
            ports: read_csv(&dir.join("ports.csv"))?.unwrap_or_default(),
            series: read_csv(&dir.join("port_series.csv"))?.unwrap_or_default(),
            events: read_csv(&dir.join("lb_events.csv"))?.unwrap_or_default(),
            slowdown: read_csv(&dir.join("slowdown.csv"))?.unwrap_or_default(),
        })
    }

    /// The switch whose uplinks the microscopic plots show: `wanted`, else `tor0` if collected,
    /// else the first collected node with up ports.
    pub fn focus_switch(&self, wanted: Option<&str>) -> Option<String> {
        if let Some(w) = wanted {
            return Some(w.to_string());
        }
        let mut ups = self.ports.iter().filter(|p| p.direction == "up");
        if ups.clone().any(|p| p.from == "tor0") {
            return Some("tor0".into());
        }
        ups.next().map(|p| p.from.clone())
    }

    /// The up ports of `switch` for `lb`, in link order.
    pub fn uplinks(&self, lb: &str, switch: &str) -> Vec<&PortCsv> {
        let mut v: Vec<&PortCsv> = self
            .ports
            .iter()
            .filter(|p| p.lb == lb && p.from == switch && p.direction == "up")
            .collect();
        v.sort_by_key(|p| p.link);
        v
    }

    /// Share of queue samples above Kmin on `switch`'s uplinks for `lb`, over buckets starting
    /// at or after `from_us` (None without samples).
    pub fn above_kmin_share(&self, lb: &str, switch: &str, from_us: f64) -> Option<f64> {
        let links: Vec<u32> = self.uplinks(lb, switch).iter().map(|p| p.link).collect();
        let (mut n, mut above) = (0u64, 0u64);
        for s in &self.series {
            if s.lb == lb && s.t_us >= from_us && links.contains(&s.link) {
                n += s.q_samples;
                above += s.q_above_kmin;
            }
        }
        (n > 0).then(|| above as f64 / n as f64)
    }
}

/// One written plot.
pub struct Plot {
    /// Caption.
    pub title: String,
    /// PNG file.
    pub png: PathBuf,
    /// SVG file.
    pub svg: PathBuf,
}

/// Writes every plot the data allows into `dir`.
pub fn write_all(data: &RunData, dir: &Path, switch: Option<&str>) -> Result<Vec<Plot>> {
    let mut plots = Vec::new();
    let mut push =
        |title: String, (png, svg): (PathBuf, PathBuf)| plots.push(Plot { title, png, svg });

    // FCT CDF per load balancer.
    let mut cdf = LineChart::new("Flow completion time CDF", "FCT (us)", "fraction of flows")
        .y_range(0.0, 1.02);
    let mut stats: Vec<(f64, f64, f64)> = Vec::new();
    for lb in &data.lbs {
        let mut v: Vec<f64> = data
            .flows
            .iter()
            .filter(|f| &f.lb == lb)
            .filter_map(|f| f.fct_us)
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len().max(1) as f64;
        let mut pts = Vec::new();
        for (i, &x) in v.iter().enumerate() {
            pts.push((x, i as f64 / n));
            pts.push((x, (i + 1) as f64 / n));
        }
        cdf = cdf.series(lb, pts);
        let mean = v.iter().sum::<f64>() / n;
        let p99 = v
            .get(((0.99 * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)) - 1)
            .copied()
            .unwrap_or(0.0);
        stats.push((v.last().copied().unwrap_or(0.0), mean, p99));
    }
    push(
        "FCT CDF per load balancer".into(),
        cdf.write(dir, "fct_cdf")?,
    );
    let bars = BarChart::new(
        "FCT across load balancers",
        "load balancer",
        "FCT (us)",
        data.lbs.clone(),
    )
    .series("max", stats.iter().map(|s| s.0).collect())
    .series("mean", stats.iter().map(|s| s.1).collect())
    .series("p99", stats.iter().map(|s| s.2).collect());
    push("Max / mean / p99 FCT".into(), bars.write(dir, "fct_bars")?);

    // FCT slowdown by flow-size bucket: p99 and mean per load balancer.
    let mut buckets: Vec<String> = Vec::new();
    for r in &data.slowdown {
        if r.flows > 0 && !buckets.contains(&r.bucket) {
            buckets.push(r.bucket.clone());
        }
    }
    if !buckets.is_empty() {
        let value = |lb: &str, b: &str, p99: bool| {
            data.slowdown
                .iter()
                .find(|r| r.lb == lb && r.bucket == b)
                .map_or(0.0, |r| if p99 { r.p99 } else { r.mean })
        };
        for (stat, p99) in [("p99", true), ("mean", false)] {
            let mut chart = BarChart::new(
                &format!("FCT slowdown ({stat}) by flow size"),
                "flow size",
                "FCT / ideal FCT",
                buckets.clone(),
            );
            for lb in &data.lbs {
                chart = chart.series(lb, buckets.iter().map(|b| value(lb, b, p99)).collect());
            }
            push(
                format!("FCT slowdown by flow size ({stat})"),
                chart.write(dir, &format!("slowdown_{stat}"))?,
            );
        }
    }

    // Microscopic view of one switch's uplinks.
    if let Some(sw) = data.focus_switch(switch) {
        let prefix = format!("{sw}->");
        let label = |p: &PortCsv| p.name.trim_start_matches(&prefix).to_string();
        let mut share_names: Vec<String> = Vec::new();
        let mut shares: Vec<(String, Vec<f64>)> = Vec::new();
        let mut capacity: Vec<f64> = Vec::new();
        for lb in &data.lbs {
            let ups = data.uplinks(lb, &sw);
            if ups.is_empty() {
                continue;
            }
            if share_names.is_empty() {
                share_names = ups.iter().map(|p| label(p)).collect();
                let total: f64 = ups.iter().map(|p| p.rate_gbps).sum();
                capacity = ups.iter().map(|p| p.rate_gbps / total).collect();
            }
            shares.push((
                lb.clone(),
                ups.iter().map(|p| p.uplink_share.unwrap_or(0.0)).collect(),
            ));
            let mut util = LineChart::new(
                &format!("{lb}: utilisation of {sw} uplinks"),
                "time (us)",
                "Gb/s",
            );
            let mut queue = LineChart::new(
                &format!("{lb}: queue depth at {sw} uplinks"),
                "time (us)",
                "max queue per bucket (KB)",
            );
            for p in &ups {
                let rows: Vec<&SeriesCsv> = data
                    .series
                    .iter()
                    .filter(|s| &s.lb == lb && s.link == p.link)
                    .collect();
                let label = label(p);
                util = util.series(&label, rows.iter().map(|s| (s.t_us, s.util_gbps)).collect());
                queue = queue.series(
                    &label,
                    rows.iter()
                        .map(|s| (s.t_us, s.q_max_bytes as f64 / 1000.0))
                        .collect(),
                );
            }
            push(
                format!("{lb}: per-uplink utilisation at {sw} (Gb/s per bucket)"),
                util.write(dir, &format!("util_{sw}_{lb}"))?,
            );
            push(
                format!("{lb}: queue depth at {sw} uplinks (max per bucket)"),
                queue.write(dir, &format!("queue_{sw}_{lb}"))?,
            );
        }
        if !shares.is_empty() {
            let mut chart = BarChart::new(
                &format!("Share of {sw}'s uplink traffic per port"),
                "uplink",
                "share of bytes",
                share_names,
            );
            for (lb, v) in shares {
                chart = chart.series(&lb, v);
            }
            chart = chart.series("capacity share", capacity);
            push(
                format!("Uplink share per port at {sw}"),
                chart.write(dir, &format!("uplink_share_{sw}"))?,
            );
        }
    }

    // Load-balancer events on the time axis: connections in freezing mode.
    let mut frozen = LineChart::new(
        "REPS freezing mode over time",
        "time (us)",
        "connections frozen",
    );
    let mut any = false;
    for lb in &data.lbs {
        let ev: Vec<&EventCsv> = data.events.iter().filter(|e| &e.lb == lb).collect();
        if ev.is_empty() {
            continue;
        }
        any = true;
        let mut n = 0i64;
        let mut pts = vec![(0.0, 0.0)];
        for e in ev {
            let d = match e.event.as_str() {
                "froze" => 1,
                "unfroze" => -1,
                _ => 0,
            };
            pts.push((e.time_us, n as f64));
            n += d;
            pts.push((e.time_us, n as f64));
        }
        frozen = frozen.series(lb, pts);
    }
    if any {
        push(
            "Freeze events on the time axis".into(),
            frozen.write(dir, "lb_events")?,
        );
    }
    Ok(plots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(switches: &[&str]) -> Vec<PortCsv> {
        let mut text = String::from(
            "lb,link,name,from,direction,rate_gbps,ecn_marks,max_queue_bytes,uplink_share\n",
        );
        for (i, s) in switches.iter().enumerate() {
            text += &format!("reps,{i},{s}->up{i},{s},up,400,0,0,\n");
        }
        csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .expect("port rows")
    }

    fn run(switches: &[&str]) -> RunData {
        RunData {
            lbs: vec!["reps".into()],
            flows: Vec::new(),
            ports: ports(switches),
            series: Vec::new(),
            events: Vec::new(),
            slowdown: Vec::new(),
        }
    }

    /// `repsim report --switch` (docs/running.md): the switch asked for, else `tor0` when its
    /// ports were collected, else the first collected switch with uplinks (`leaf0` on a
    /// leaf-spine fabric).
    #[test]
    fn the_focus_switch_is_tor0_else_the_first_with_uplinks() {
        assert_eq!(
            run(&["agg1", "tor0"]).focus_switch(None).as_deref(),
            Some("tor0")
        );
        assert_eq!(
            run(&["leaf0", "leaf1"]).focus_switch(None).as_deref(),
            Some("leaf0")
        );
        assert_eq!(
            run(&["leaf0"]).focus_switch(Some("leaf1")).as_deref(),
            Some("leaf1")
        );
        assert_eq!(run(&[]).focus_switch(None), None);
    }
}
