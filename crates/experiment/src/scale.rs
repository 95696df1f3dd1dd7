//! `repsim bench --scale`: the scale series. One 2 MB permutation with REPS per fabric size
//! (1,024 and 8,192 hosts on 2-tier fat trees, 32,768 and 131,072 on 3-tier ones; the
//! scenarios are `bench/scale-*.toml`, built into the binary), each timed `--repeat` times in
//! rounds over the steps (the fastest run is reported: on a shared machine the one-second
//! 1,024-host step varies by half from run to run, and the machine's speed drifts), reported
//! as a table on stdout and as CSV, then each step's events per second relative to the first
//! step's.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use repsim::scenario::{LoadedScenario, Override};
use repsim::Simulation;

use crate::prepared::{peak_rss, CollectMode, Prepared};
use crate::progress::Bars;

/// The steps of the series: hosts and the scenario text.
pub const STEPS: [(u32, &str); 4] = [
    (1_024, include_str!("../../../bench/scale-1024.toml")),
    (8_192, include_str!("../../../bench/scale-8192.toml")),
    (32_768, include_str!("../../../bench/scale-32768.toml")),
    (131_072, include_str!("../../../bench/scale-131072.toml")),
];

/// Columns of the CSV (and of the table, in the same order).
pub const COLUMNS: [&str; 14] = [
    "hosts",
    "tiers",
    "ports",
    "flows",
    "completed",
    "wall_s",
    "events",
    "mevents_per_s",
    "peak_packets",
    "peak_rss_mb",
    "bytes_per_host",
    "bytes_per_port",
    "bytes_per_flow",
    "fct_max_us",
];

/// Which steps to run and where the CSV goes.
pub struct ScaleOptions {
    /// Largest step to run (hosts).
    pub max_hosts: u32,
    /// Smallest step to run (hosts).
    pub min_hosts: u32,
    /// Load balancer (default `reps`).
    pub lb: String,
    /// CSV file written after every step.
    pub csv: PathBuf,
    /// `--set` overrides applied to every step.
    pub set: Vec<Override>,
    /// Runs per step; the fastest is reported.
    pub repeat: u32,
    /// Show a progress bar while a step runs (a terminal, without `--quiet`).
    pub progress: bool,
    /// Threads each step's simulation runs on.
    pub threads: u32,
}

/// One measured step.
#[derive(Clone)]
struct Row {
    values: Vec<String>,
    /// Hosts of the fabric that ran (the step's, unless `--set` resized it).
    hosts: u32,
    /// Wall-clock seconds of the simulation.
    wall: f64,
    /// Events per second.
    rate: f64,
}

/// Resets the kernel's peak-RSS mark to the current RSS, so that each step reports its own
/// peak (Linux; elsewhere the peak stays cumulative).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The scenario of one step, with the overrides applied.
fn load_step(hosts: u32, text: &str, set: &[Override]) -> Result<LoadedScenario> {
    let path = Path::new("bench").join(format!("scale-{hosts}.toml"));
    Ok(LoadedScenario::parse_with(text, &path, set)?)
}

/// Runs one step and measures it.
fn run_step(hosts: u32, text: &str, opts: &ScaleOptions) -> Result<Row> {
    let scn = load_step(hosts, text, &opts.set)?;
    let run = scn
        .select(std::slice::from_ref(&opts.lb))?
        .pop()
        .context("one load balancer, one run")?;
    let exact_peak = reset_peak_rss();
    let (sim, wall) = Prepared::new(&scn, &run, None, CollectMode::None)?.simulate_on_threads(
        &scn,
        opts.threads,
        Bars::alone_if(opts.progress),
    )?;
    let rss = peak_rss().unwrap_or(0);
    let s = sim.summary(wall);
    // The fabric that ran, not the step's name: `--set topology.hosts=...` changes it.
    let hosts = sim.topology().hosts;
    let ports = sim.topology().links.len() as u64;
    let flows = s.flows_total as u64;
    let per = |n: u64| rss.checked_div(n).unwrap_or(0);
    let tiers = tiers_of(&sim);
    eprintln!(
        "memory after the run (capacities, i.e. peaks):\n{}",
        memory_table(&sim)
    );
    if !exact_peak {
        eprintln!("note: peak RSS is cumulative over the steps (cannot reset it here)");
    }
    let rate = s.events as f64 / wall.max(1e-9);
    Ok(Row {
        hosts,
        wall,
        rate,
        values: vec![
            hosts.to_string(),
            tiers.to_string(),
            ports.to_string(),
            flows.to_string(),
            s.flows_completed.to_string(),
            format!("{wall:.2}"),
            s.events.to_string(),
            format!("{:.2}", rate / 1e6),
            s.peak_packets.to_string(),
            format!("{:.1}", rss as f64 / 1e6),
            per(hosts as u64).to_string(),
            per(ports).to_string(),
            per(flows).to_string(),
            format!("{:.2}", s.fct_us.max),
        ],
    })
}

/// Number of switch levels of the run's topology.
fn tiers_of(sim: &Simulation) -> u8 {
    sim.topology()
        .switches
        .iter()
        .map(|s| s.level)
        .max()
        .unwrap_or(0)
}

/// The table: a header line and one right-aligned line per row.
fn table(rows: &[Row]) -> String {
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .map(|r| r.values[i].len())
                .fold(c.len(), usize::max)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        cells
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = line(&mut COLUMNS.iter().copied());
    for r in rows {
        out.push('\n');
        out += &line(&mut r.values.iter().map(String::as_str));
    }
    out
}

/// Writes the CSV of the rows measured so far.
fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut text = COLUMNS.join(",");
    for r in rows {
        text.push('\n');
        text += &r.values.join(",");
    }
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `repsim bench --scale`.
pub fn scale(opts: &ScaleOptions) -> Result<()> {
    let steps: Vec<_> = STEPS
        .iter()
        .filter(|(h, _)| (opts.min_hosts..=opts.max_hosts).contains(h))
        .collect();
    if steps.is_empty() {
        bail!(
            "no step of the series ({}) lies between --min-hosts {} and --max-hosts {}",
            STEPS.map(|(h, _)| h.to_string()).join(", "),
            opts.min_hosts,
            opts.max_hosts
        );
    }
    let repeat = opts.repeat.max(1);
    // Repetitions go round the steps (1,024, 8,192, ..., then again), so that a machine whose
    // speed drifts during the series slows every step alike and the shares below stay fair.
    let mut fastest: Vec<Option<Row>> = steps.iter().map(|_| None).collect();
    for i in 1..=repeat {
        for (k, (hosts, text)) in steps.iter().enumerate() {
            eprintln!("scale: {hosts} hosts, run {i} of {repeat} ...");
            let row =
                run_step(*hosts, text, opts).with_context(|| format!("step {hosts} hosts"))?;
            eprintln!("{}", table(std::slice::from_ref(&row)));
            match &fastest[k] {
                None => fastest[k] = Some(row),
                // Memory stays that of the step's first run: later rounds start with what the
                // allocator kept from the larger steps, which the RSS counts.
                Some(f) if row.wall < f.wall => fastest[k] = Some(row.with_memory_of(f)),
                Some(_) => {}
            }
            write_csv(&opts.csv, &fastest_so_far(&fastest))?;
        }
    }
    let rows = fastest_so_far(&fastest);
    println!("{}", table(&rows));
    println!("(CSV: {})", opts.csv.display());
    if let Some(line) = relative_rates(&rows) {
        println!("{line}");
    }
    Ok(())
}

/// Columns measured from the process's memory (peak RSS and what it gives per host, port and
/// flow).
const MEMORY_COLUMNS: [&str; 4] = [
    "peak_rss_mb",
    "bytes_per_host",
    "bytes_per_port",
    "bytes_per_flow",
];

impl Row {
    /// This run's timing with the memory columns of `first`, an earlier run of the same step.
    fn with_memory_of(mut self, first: &Row) -> Row {
        for (i, name) in COLUMNS.iter().enumerate() {
            if MEMORY_COLUMNS.contains(name) {
                self.values[i] = first.values[i].clone();
            }
        }
        self
    }
}

/// The fastest run of each step that has run so far, in step order.
fn fastest_so_far(fastest: &[Option<Row>]) -> Vec<Row> {
    fastest.iter().flatten().cloned().collect()
}

/// Each later step's events per second as a share of the first step's (the series' measure of
/// how the cost per event grows with the fabric); `None` with a single step.
fn relative_rates(rows: &[Row]) -> Option<String> {
    let (first, rest) = rows.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let shares: Vec<String> = rest
        .iter()
        .map(|r| {
            format!(
                "{} hosts {:.0} %",
                r.hosts,
                100.0 * r.rate / first.rate.max(1e-9)
            )
        })
        .collect();
    Some(format!(
        "events/s relative to {} hosts: {}",
        first.hosts,
        shares.join(", ")
    ))
}

/// A memory breakdown table (structure, count, MB) of a simulation.
pub fn memory_table(sim: &Simulation) -> String {
    let items = sim.memory_breakdown();
    let w = items.iter().map(|i| i.name.len()).max().unwrap_or(0);
    let mut out = format!("{:<w$} {:>12} {:>10}", "structure", "count", "MB");
    for i in &items {
        let count = if i.name == "total" {
            String::new()
        } else {
            i.count.to_string()
        };
        out += &format!(
            "\n{:<w$} {count:>12} {:>10.2}",
            i.name,
            i.bytes as f64 / 1e6
        );
    }
    out
}

/// `repsim check --memory`: a run's memory once set up, before the first event.
pub fn print_memory(sim: &Simulation) {
    println!("memory once set up:");
    println!("{}", memory_table(sim));
    println!(
        "each packet in flight adds {} B (its arena slot and event entry); peak RSS so far {:.1} MB",
        Simulation::bytes_per_packet_in_flight(),
        peak_rss().unwrap_or(0) as f64 / 1e6
    );
    println!(
        "heap on huge pages: {}",
        crate::heap::heap_huge_pages_state()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(hosts: u32, rate: f64) -> Row {
        Row {
            values: Vec::new(),
            hosts,
            wall: 1.0,
            rate,
        }
    }

    #[test]
    fn later_steps_are_shares_of_the_first_steps_rate() {
        assert_eq!(relative_rates(&[row(1024, 8e6)]), None, "one step");
        assert_eq!(
            relative_rates(&[row(1024, 8e6), row(8192, 4.6e6), row(32768, 2e6)]).unwrap(),
            "events/s relative to 1024 hosts: 8192 hosts 58 %, 32768 hosts 25 %"
        );
    }

    #[test]
    fn a_faster_repetition_keeps_the_first_runs_memory_columns() {
        let cells =
            |tag: &str| -> Vec<String> { COLUMNS.iter().map(|c| format!("{tag}-{c}")).collect() };
        let first = Row {
            values: cells("first"),
            ..row(1024, 8e6)
        };
        let later = Row {
            values: cells("later"),
            wall: 0.5,
            ..row(1024, 16e6)
        };
        assert!(
            MEMORY_COLUMNS.iter().all(|m| COLUMNS.contains(m)),
            "names of columns"
        );
        let kept = later.with_memory_of(&first);
        assert_eq!(
            (kept.wall, kept.rate),
            (0.5, 16e6),
            "the faster run's timing"
        );
        for (c, value) in COLUMNS.iter().zip(&kept.values) {
            let from = if MEMORY_COLUMNS.contains(c) {
                "first"
            } else {
                "later"
            };
            assert_eq!(value, &format!("{from}-{c}"));
        }
    }
}
