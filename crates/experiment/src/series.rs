//! Time-series and per-flow result files (`port_series.csv`, `ports.csv`, `flow_stats.csv`,
//! `lb_events.csv`, `cwnd.csv`), `run.json` and the completion marker `run.complete`.
//! Schemas: `docs/output-schema.md`.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use repsim::engine::time::{to_us, SEC};
use repsim::engine::Time;
use repsim::sim::{FinishedFlow, Phase};
use repsim::transport::FlowStats;
use repsim::workload::FlowSpec;
use repsim::Simulation;
use serde::Serialize;

use crate::files::{json_bytes, write_atomic};

/// Name of the completion marker, written after every other file.
pub const MARKER: &str = "run.complete";

/// Output format of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// Apache Parquet (needs the `parquet` cargo feature).
    Parquet,
}

crate::named_values!(Format, "format", { Csv => "csv", Parquet => "parquet" });

impl Format {
    /// Fails early when the format is not compiled in.
    pub fn check(self) -> Result<()> {
        if self == Format::Parquet && !cfg!(feature = "parquet") {
            bail!(
                "--format parquet needs a repsim built with the `parquet` feature \
                 (cargo build --release --features parquet); this build writes CSV only"
            );
        }
        Ok(())
    }
}

/// A table being filled: column names and rows of cells, written as CSV (or Parquet).
pub struct Table {
    stem: &'static str,
    columns: Vec<&'static str>,
    rows: Rows,
}

/// Where a table's rows go: memory (written at the end), or straight to a temporary CSV file
/// renamed into place at the end (streamed runs, whose per-flow rows would not fit).
enum Rows {
    Memory(csv::Writer<Vec<u8>>),
    File {
        writer: csv::Writer<std::io::BufWriter<std::fs::File>>,
        tmp: std::path::PathBuf,
    },
}

impl Table {
    /// An empty table with these columns.
    pub fn new(stem: &'static str, columns: &[&'static str]) -> Self {
        let mut rows = csv::Writer::from_writer(Vec::new());
        rows.write_record(columns).expect("in-memory write");
        Table {
            stem,
            columns: columns.to_vec(),
            rows: Rows::Memory(rows),
        }
    }

    /// A table whose rows go to `dir/<stem>.csv.tmp` as they come, renamed to `<stem>.csv`
    /// by [`Self::finish_file`] or when the tables are written (CSV only).
    pub fn streamed(stem: &'static str, columns: &[&'static str], dir: &Path) -> Result<Self> {
        let tmp = dir.join(format!("{stem}.csv.tmp"));
        let file =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut writer = csv::Writer::from_writer(std::io::BufWriter::new(file));
        writer.write_record(columns)?;
        Ok(Table {
            stem,
            columns: columns.to_vec(),
            rows: Rows::File { writer, tmp },
        })
    }

    /// Appends one row.
    pub fn push(&mut self, cells: &[String]) -> Result<()> {
        debug_assert_eq!(cells.len(), self.columns.len());
        match &mut self.rows {
            Rows::Memory(w) => w.write_record(cells)?,
            Rows::File { writer, tmp } => writer
                .write_record(cells)
                .with_context(|| format!("writing {}", tmp.display()))?,
        }
        Ok(())
    }

    /// The CSV text of an in-memory table (header and every row so far).
    pub fn csv(&mut self) -> Result<&[u8]> {
        match &mut self.rows {
            Rows::Memory(w) => {
                w.flush()
                    .with_context(|| format!("finishing {}", self.stem))?;
                Ok(w.get_ref())
            }
            Rows::File { tmp, .. } => {
                anyhow::bail!("{} is streamed to {}", self.stem, tmp.display())
            }
        }
    }

    /// The CSV text of an in-memory table.
    pub fn into_csv(mut self) -> Result<Vec<u8>> {
        self.csv().map(<[u8]>::to_vec)
    }

    /// The file stem (`flow_stats`).
    pub fn stem(&self) -> &'static str {
        self.stem
    }

    /// The column names.
    pub fn columns(&self) -> &[&'static str] {
        &self.columns
    }

    /// Flushes a streamed table and renames it into place as `dir/<stem>.csv`; returns the
    /// file's name.
    pub fn finish_file(self, dir: &Path) -> Result<String> {
        let Rows::File { writer, tmp } = self.rows else {
            anyhow::bail!("{} is not streamed", self.stem);
        };
        let name = format!("{}.csv", self.stem);
        let file = writer
            .into_inner()
            .map_err(|e| anyhow::anyhow!("flushing {}: {}", tmp.display(), e.error()))?;
        file.into_inner()
            .map_err(|e| anyhow::anyhow!("flushing {}: {}", tmp.display(), e.error()))?
            .sync_all()
            .ok();
        std::fs::rename(&tmp, dir.join(&name))
            .with_context(|| format!("renaming {}", tmp.display()))?;
        Ok(name)
    }

    /// Writes the table into `dir` as `<stem>.csv` or `<stem>.parquet`; returns the file's
    /// name. A streamed table is renamed into place, once (it is empty afterwards).
    fn write(&mut self, dir: &Path, format: Format) -> Result<String> {
        if matches!(self.rows, Rows::File { .. }) {
            if format != Format::Csv {
                bail!(
                    "{} was streamed as CSV; it cannot be written as {format:?}",
                    self.stem
                );
            }
            let streamed = std::mem::replace(self, Table::new(self.stem, &self.columns));
            return streamed.finish_file(dir);
        }
        let (stem, columns) = (self.stem, self.columns.clone());
        let csv = self.csv()?;
        match format {
            Format::Csv => {
                let name = format!("{stem}.csv");
                write_atomic(&dir.join(&name), csv)?;
                Ok(name)
            }
            Format::Parquet => {
                let name = format!("{stem}.parquet");
                write_atomic(&dir.join(&name), &to_parquet(&columns, csv)?)?;
                Ok(name)
            }
        }
    }
}

#[cfg(not(feature = "parquet"))]
fn to_parquet(_columns: &[&str], _csv: &[u8]) -> Result<Vec<u8>> {
    Format::Parquet.check()?;
    unreachable!("Format::check fails without the parquet feature")
}

#[cfg(feature = "parquet")]
fn to_parquet(columns: &[&str], csv: &[u8]) -> Result<Vec<u8>> {
    crate::parquet_out::encode(columns, csv)
}

const PORT_SERIES: &[&str] = &[
    "lb",
    "link",
    "name",
    "bucket",
    "t_us",
    "tx_bytes",
    "tx_packets",
    "util_gbps",
    "drops",
    "trims",
    "ecn_marks",
    "q_samples",
    "q_above_kmin",
    "q_mean_bytes",
    "q_max_bytes",
];
const PORTS: &[&str] = &[
    "lb",
    "link",
    "name",
    "from",
    "to",
    "direction",
    "rate_gbps",
    "kmin_bytes",
    "tx_bytes",
    "tx_packets",
    "drops",
    "trims",
    "ecn_marks",
    "max_queue_bytes",
    "q_samples",
    "q_above_kmin",
    "uplink_share",
];
const FLOW_STATS: &[&str] = &[
    "lb",
    "id",
    "src",
    "dst",
    "bytes",
    "start",
    "finish",
    "fct_us",
    "data_sent",
    "retransmissions",
    "timeouts",
    "rts",
    "nacks",
    "acks",
    "ecn_acks",
    "max_reorder",
];
const LB_EVENTS: &[&str] = &["lb", "time_us", "flow", "event", "until_us"];
/// `lb_events.csv` of a scenario with a switch scheme that reports path changes (Reunion's
/// reroutes, LetFlow's and CONGA's flowlets with `events = true`): three trailing columns.
const LB_EVENTS_PATHS: &[&str] = &[
    "lb", "time_us", "flow", "event", "until_us", "old_path", "new_path", "reason",
];
const CWND: &[&str] = &["lb", "flow", "time_us", "cwnd_bytes"];

/// Every table of a `repsim run`, filled run by run.
pub struct Tables {
    port_series: Table,
    ports: Table,
    flow_stats: Table,
    lb_events: Table,
    cwnd: Table,
    collected: bool,
    cwnd_on: bool,
    /// Ids of flows streamed out of the run (by flow index), kept only when the congestion
    /// windows are traced: their samples outlive the flows.
    streamed_ids: Option<BTreeMap<u32, u64>>,
}

/// Direction of a link: `host` (NIC uplink), `up` (towards a higher level), `down`, or
/// `across` (between switches of one level, as in a Dragonfly).
pub fn direction(sim: &Simulation, link: u32) -> &'static str {
    let topo = sim.topology();
    let l = &topo.links[link as usize];
    if l.from < topo.hosts {
        return "host";
    }
    let (from, to) = (topo.level(l.from), topo.level(l.to));
    match to.cmp(&from) {
        std::cmp::Ordering::Greater => "up",
        std::cmp::Ordering::Less => "down",
        std::cmp::Ordering::Equal => "across",
    }
}

/// A real number with six decimals, the precision of every time column.
pub fn f6(v: f64) -> String {
    format!("{v:.6}")
}

impl Default for Tables {
    fn default() -> Self {
        Self::new()
    }
}

impl Tables {
    /// Empty tables.
    pub fn new() -> Self {
        Tables {
            port_series: Table::new("port_series", PORT_SERIES),
            ports: Table::new("ports", PORTS),
            flow_stats: Table::new("flow_stats", FLOW_STATS),
            lb_events: Table::new("lb_events", LB_EVENTS),
            cwnd: Table::new("cwnd", CWND),
            collected: false,
            cwnd_on: false,
            streamed_ids: None,
        }
    }

    /// Gives `lb_events.csv` the trailing `old_path,new_path,reason` columns (scenarios with a
    /// switch scheme that reports path changes).
    pub fn with_path_columns(mut self) -> Self {
        self.lb_events = Table::new("lb_events", LB_EVENTS_PATHS);
        self
    }

    /// Keeps the ids of streamed flows, for the congestion-window samples.
    pub fn keep_streamed_ids(&mut self) {
        self.streamed_ids.get_or_insert_with(BTreeMap::new);
    }

    /// Tables for a streamed run: `flow_stats` rows go to `dir` as flows are handed to
    /// [`Self::add_finished`].
    pub fn streamed(dir: &Path) -> Result<Self> {
        Ok(Tables {
            flow_stats: Table::streamed("flow_stats", FLOW_STATS, dir)?,
            ..Self::new()
        })
    }

    /// One `flow_stats.csv` row; `start` is the flow's effective start (its dependencies
    /// done), as in `flows.csv`, and the FCT counts from it.
    fn push_flow_stats(
        &mut self,
        lb: &str,
        spec: &FlowSpec,
        start: Time,
        finish: Option<Time>,
        s: &FlowStats,
    ) -> Result<()> {
        self.flow_stats.push(&[
            lb.to_string(),
            spec.id.to_string(),
            spec.src.to_string(),
            spec.dst.to_string(),
            spec.bytes.to_string(),
            f6(to_us(start)),
            finish.map(|t| f6(to_us(t))).unwrap_or_default(),
            finish.map(|t| f6(to_us(t - start))).unwrap_or_default(),
            s.data_sent.to_string(),
            s.retransmissions.to_string(),
            s.timeouts.to_string(),
            s.rts.to_string(),
            s.nacks.to_string(),
            s.acks.to_string(),
            s.ecn_acks.to_string(),
            s.max_reorder.to_string(),
        ])
    }

    /// Adds the per-flow row of a flow streamed out of a running simulation.
    pub fn add_finished(&mut self, lb: &str, f: &FinishedFlow) -> Result<()> {
        if let Some(ids) = self.streamed_ids.as_mut() {
            ids.insert(f.index, f.spec.id);
        }
        self.push_flow_stats(lb, &f.spec, f.started_at, Some(f.finish), &f.stats)
    }

    /// Adds the results of one finished simulation (per-flow rows of the flows it still
    /// holds: those streamed out went through [`Self::add_finished`]).
    pub fn add(&mut self, sim: &Simulation, lb: &str) -> Result<()> {
        let lbs = lb.to_string();
        for f in sim.flows() {
            let finish = f.finish.filter(|_| f.phase == Phase::Done);
            self.push_flow_stats(lb, &f.spec, f.start(), finish, &f.stats)?;
        }
        for r in sim.lb_records() {
            let name = r.event.name();
            let until = r.event.until.map(|t| f6(to_us(t))).unwrap_or_default();
            let mut row = vec![
                lbs.clone(),
                f6(to_us(r.time)),
                sim.flow_id(r.flow)
                    .map(|id| id.to_string())
                    .unwrap_or_default(),
                name.to_string(),
                until,
            ];
            if self.lb_events.columns.len() == LB_EVENTS_PATHS.len() {
                match r.event.path {
                    Some(m) => row.extend([m.old.to_string(), m.new.to_string(), m.reason.into()]),
                    None => row.extend([String::new(), String::new(), String::new()]),
                }
            }
            self.lb_events.push(&row)?;
        }
        let Some(c) = sim.collector() else {
            return Ok(());
        };
        self.collected = true;
        let topo = sim.topology();
        let stats = sim.port_stats();
        let bucket = c.bucket();
        let ports = c.ports();
        let dirs: Vec<&str> = ports.iter().map(|&p| direction(sim, p)).collect();
        // Up-port traffic per node, for uplink shares.
        let mut up_total = vec![0u64; (topo.hosts as usize) + topo.switches.len()];
        for (&p, &dir) in ports.iter().zip(&dirs) {
            if dir == "up" {
                up_total[topo.links[p as usize].from as usize] += stats[p as usize].tx_bytes;
            }
        }
        for (slot, (&p, &dir)) in ports.iter().zip(&dirs).enumerate() {
            let link = &topo.links[p as usize];
            let st = &stats[p as usize];
            let name = topo.link_name(p);
            let (mut samples, mut above) = (0u64, 0u64);
            for b in 0..c.buckets() {
                let cell = c.cell(b, slot);
                samples += cell.q_samples as u64;
                above += cell.q_above_kmin as u64;
                let gbps = cell.tx_bytes as f64 * 8.0 / (bucket as f64 / SEC as f64) / 1e9;
                let mean = if cell.q_samples > 0 {
                    cell.q_sum as f64 / cell.q_samples as f64
                } else {
                    0.0
                };
                self.port_series.push(&[
                    lbs.clone(),
                    p.to_string(),
                    name.clone(),
                    b.to_string(),
                    format!("{}", to_us(b as u64 * bucket)),
                    cell.tx_bytes.to_string(),
                    cell.tx_packets.to_string(),
                    format!("{gbps:.3}"),
                    cell.drops.to_string(),
                    cell.trims.to_string(),
                    cell.ecn_marks.to_string(),
                    cell.q_samples.to_string(),
                    cell.q_above_kmin.to_string(),
                    format!("{mean:.1}"),
                    cell.q_max.to_string(),
                ])?;
            }
            let share = if dir == "up" && up_total[link.from as usize] > 0 {
                f6(st.tx_bytes as f64 / up_total[link.from as usize] as f64)
            } else {
                String::new()
            };
            self.ports.push(&[
                lbs.clone(),
                p.to_string(),
                name,
                topo.node_name(link.from),
                topo.node_name(link.to),
                dir.to_string(),
                format!("{}", link.rate_bps as f64 / 1e9),
                c.kmin()[slot].to_string(),
                st.tx_bytes.to_string(),
                st.tx_packets.to_string(),
                st.drops.to_string(),
                st.trims.to_string(),
                st.ecn_marks.to_string(),
                st.max_occupancy.to_string(),
                samples.to_string(),
                above.to_string(),
                share,
            ])?;
        }
        if c.config().cwnd {
            self.cwnd_on = true;
            for s in c.cwnd_samples() {
                // A streamed-out flow's samples stay: look its id up where it went.
                let id = sim
                    .flow(s.flow)
                    .map(|f| f.spec.id)
                    .or_else(|| self.streamed_ids.as_ref()?.get(&s.flow).copied())
                    .with_context(|| format!("cwnd sample of unknown flow index {}", s.flow))?;
                self.cwnd.push(&[
                    lbs.clone(),
                    id.to_string(),
                    f6(to_us(s.time)),
                    s.cwnd.to_string(),
                ])?;
            }
        }
        // The next run's flow indices start again from 0.
        if let Some(ids) = self.streamed_ids.as_mut() {
            ids.clear();
        }
        Ok(())
    }

    /// Every table that has content, in the order they are written: `flow_stats`,
    /// `lb_events`, then `ports` and `port_series` when ports were collected, then `cwnd` when
    /// windows were traced.
    pub fn present(&mut self) -> Vec<&mut Table> {
        let mut tables = vec![&mut self.flow_stats, &mut self.lb_events];
        if self.collected {
            tables.push(&mut self.ports);
            tables.push(&mut self.port_series);
        }
        if self.cwnd_on {
            tables.push(&mut self.cwnd);
        }
        tables
    }

    /// The table of file stem `stem` (`flow_stats`, `lb_events`, `ports`, `port_series`,
    /// `cwnd`), with content or not.
    pub fn table(&mut self, stem: &str) -> Option<&mut Table> {
        [
            &mut self.flow_stats,
            &mut self.lb_events,
            &mut self.ports,
            &mut self.port_series,
            &mut self.cwnd,
        ]
        .into_iter()
        .find(|t| t.stem == stem)
    }

    /// Writes every table that has content into `dir`; returns the file names.
    pub fn write(&mut self, dir: &Path, format: Format) -> Result<Vec<String>> {
        self.present()
            .into_iter()
            .map(|t| t.write(dir, format))
            .collect()
    }
}

/// One load balancer's entry in `run.json`.
#[derive(Clone, Serialize)]
pub struct RunEntry {
    /// Load balancer.
    pub lb: String,
    /// Seed.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Simulated time at the end (us).
    pub sim_time_us: f64,
    /// Most packets the simulator held at once (on threads: the partitions' peaks added).
    pub peak_packets: usize,
    /// The partitions the network was split into, each on its own thread (1: unsplit).
    pub partitions: u32,
}

/// `run.json`: what was run, where, and how long it took.
#[derive(Serialize)]
pub struct RunInfo {
    /// `repsim` version.
    pub repsim_version: &'static str,
    /// The commit the binary was built from (`-dirty`: with uncommitted changes).
    pub repsim_commit: &'static str,
    /// The command line.
    pub command: Vec<String>,
    /// Scenario file as given.
    pub scenario_file: String,
    /// Scenario name.
    pub scenario_name: String,
    /// Seed (the override, else the scenario's).
    pub seed: u64,
    /// Unix time (s) the run started.
    pub started_unix_s: u64,
    /// Wall-clock seconds from the command's start to the end of its last run.
    pub wall_s: f64,
    /// Total events over all runs.
    pub events: u64,
    /// Per load balancer.
    pub runs: Vec<RunEntry>,
    /// Table format.
    pub format: Format,
    /// Files written (besides run.json and the marker).
    pub files: Vec<String>,
    /// Machine.
    pub host: HostInfo,
    /// The scenario with every default written out (same text as scenario.toml).
    pub scenario: String,
    /// Why a resource limit stopped the command early (`--max-events`, `--max-wall`,
    /// `--max-memory`); absent for a complete run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// The machine a run used.
#[derive(Serialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Operating system.
    pub os: &'static str,
    /// CPU architecture.
    pub arch: &'static str,
    /// Logical CPUs.
    pub cpus: usize,
}

impl HostInfo {
    /// This machine.
    pub fn current() -> Self {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| std::env::var("HOSTNAME").unwrap_or_default());
        HostInfo {
            hostname,
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        }
    }
}

/// Removes a stale completion marker before a run writes into `dir`.
pub fn clear_marker(dir: &Path) -> Result<()> {
    let m = dir.join(MARKER);
    if m.exists() {
        std::fs::remove_file(&m).with_context(|| format!("removing {}", m.display()))?;
    }
    Ok(())
}

/// Writes `run.json` alone (a partial run: no completion marker).
pub fn write_run_info(dir: &Path, info: &RunInfo) -> Result<()> {
    write_atomic(&dir.join("run.json"), &json_bytes(info)?)
}

/// Writes `run.json`, then the completion marker (last).
pub fn finish(dir: &Path, info: &RunInfo) -> Result<()> {
    write_run_info(dir, info)?;
    write_atomic(
        &dir.join(MARKER),
        format!("{}\n", info.started_unix_s).as_bytes(),
    )
}
