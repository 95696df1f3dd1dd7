//! `repsim run`, `repsim bench` and `repsim check`.
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use repsim::engine::time::{to_us, US};
use repsim::metrics::{flow_rows, summarize, RunSummary};
use repsim::scenario::LoadedScenario;
use repsim::Simulation;

use crate::output::{flows_csv, summary_json, write_atomic};

/// Arguments of `repsim run`.
#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Output directory (default: results/<scenario name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Load balancers to run, comma-separated (overrides the scenario's `lb`).
    #[arg(long, value_delimiter = ',')]
    pub lb: Option<Vec<String>>,
    /// Seed (overrides the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `repsim bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Scenario to time.
    #[arg(default_value = "scenarios/permutation-1024.toml")]
    pub scenario: PathBuf,
    /// Load balancer.
    #[arg(long, default_value = "reps")]
    pub lb: String,
    /// Repetitions (the fastest is reported).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
}

/// Runs one simulation to completion, showing progress on a terminal.
pub fn simulate(
    scn: &LoadedScenario,
    lb: &str,
    seed: Option<u64>,
    progress: bool,
) -> Result<(Simulation, f64)> {
    let built = scn.build(lb, seed)?;
    let started = Instant::now();
    let mut sim = built
        .simulation()
        .with_context(|| format!("setting up {} with {lb}", scn.path.display()))?;
    let step = 50 * US;
    let mut t = 0;
    let mut last_print = Instant::now();
    loop {
        t += step;
        let more = sim.run_until(t);
        if progress && last_print.elapsed().as_millis() > 250 {
            last_print = Instant::now();
            let done = sim.flows().iter().filter(|f| f.finish.is_some()).count();
            let secs = started.elapsed().as_secs_f64();
            eprint!(
                "\r  {lb:>6}: t = {:>10.1} us  flows {done}/{}  {:.2} M events/s   ",
                to_us(sim.now()),
                sim.flows().len(),
                sim.counters().events as f64 / secs / 1e6
            );
        }
        if !more {
            break;
        }
    }
    if progress {
        eprint!("\r{:80}\r", "");
    }
    Ok((sim, started.elapsed().as_secs_f64()))
}

fn table(runs: &[RunSummary]) -> String {
    let mut s = format!(
        "{:<8} {:>11} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>9} {:>8} {:>11} {:>7}\n",
        "lb",
        "completed",
        "fct_min",
        "fct_mean",
        "fct_p99",
        "fct_max",
        "drops",
        "trims",
        "ecn",
        "rtx",
        "events",
        "wall_s"
    );
    for r in runs {
        s += &format!(
            "{:<8} {:>11} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8} {:>8} {:>9} {:>8} {:>11} {:>7.2}\n",
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
    s + "(FCTs in microseconds)"
}

/// `repsim run`.
pub fn run(args: RunArgs) -> Result<()> {
    let scn = LoadedScenario::load(&args.scenario)?;
    let lbs = args.lb.clone().unwrap_or_else(|| scn.lbs());
    if lbs.is_empty() {
        bail!("no load balancer to run");
    }
    // Check every run's set-up before spending time on any of them.
    for lb in &lbs {
        scn.build(lb, args.seed)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(scn.name()));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let progress = !args.quiet && std::io::stderr().is_terminal();
    if !args.quiet && !args.json {
        let b = scn.build(&lbs[0], args.seed)?;
        eprintln!(
            "{}: {} flows on a {}",
            scn.name(),
            b.flows.len(),
            b.topology
        );
    }
    let mut runs = Vec::new();
    let mut rows = Vec::new();
    let mut lb_events = Vec::new();
    let mut unreachable = 0;
    let plan = {
        let b = scn.build(&lbs[0], args.seed)?;
        b.faults
    };
    if !args.quiet {
        for note in &plan.notes {
            eprintln!("note: faults: {note}");
        }
    }
    for lb in &lbs {
        let (sim, wall) = simulate(&scn, lb, args.seed, progress)?;
        let summary = summarize(&sim, wall);
        if summary.flows_completed < summary.flows_total && !args.quiet {
            eprintln!(
                "warning: {lb}: {} of {} flows did not finish by t = {:.1} us",
                summary.flows_total - summary.flows_completed,
                summary.flows_total,
                summary.sim_time_us
            );
        }
        for msg in sim.unreachable_flows() {
            eprintln!("error: {lb}: {msg}");
            unreachable += 1;
        }
        if !args.quiet {
            for msg in sim.stalled_flows() {
                eprintln!("warning: {lb}: {msg}");
            }
        }
        rows.extend(flow_rows(&sim, lb));
        lb_events.extend(repsim::fault::report::lb_event_rows(&sim, lb));
        runs.push(summary);
    }
    write_atomic(&out.join("flows.csv"), &flows_csv(&rows)?)?;
    write_atomic(&out.join("scenario.toml"), scn.resolved_toml().as_bytes())?;
    write_atomic(&out.join("summary.json"), &summary_json(&runs)?)?;
    write_atomic(
        &out.join("lb_events.csv"),
        repsim::fault::report::lb_events_csv(&lb_events).as_bytes(),
    )?;
    if !plan.chosen.is_empty() {
        let mut text = plan.chosen.join("\n");
        text.push('\n');
        write_atomic(&out.join("fault_elements.txt"), text.as_bytes())?;
    }
    if args.json {
        println!("{}", String::from_utf8_lossy(&summary_json(&runs)?));
    } else if !args.quiet {
        println!("{}", table(&runs));
        println!("results in {}", out.display());
    }
    if unreachable > 0 {
        bail!("{unreachable} flow(s) could not reach their destination (see the messages above); results in {}", out.display());
    }
    Ok(())
}

/// `repsim check`.
pub fn check(path: &Path) -> Result<()> {
    let scn = LoadedScenario::load(path)?;
    for lb in scn.lbs() {
        let b = scn.build(&lb, None)?;
        let sim = b.simulation()?;
        println!(
            "{}: {lb}: {} flows on a {}; RTO {:.3} us, max base RTT {:.3} us",
            scn.name(),
            sim.flows().len(),
            sim.topology(),
            to_us(sim.rto()),
            to_us(sim.max_base_rtt())
        );
    }
    Ok(())
}

/// Peak resident memory of this process in bytes (Linux), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `repsim bench`.
pub fn bench(args: BenchArgs) -> Result<()> {
    let scn = LoadedScenario::load(&args.scenario)?;
    let mut best: Option<(f64, u64, f64)> = None;
    for i in 0..args.repeat.max(1) {
        let (sim, wall) = simulate(&scn, &args.lb, None, false)?;
        let s = summarize(&sim, wall);
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
            best = Some((wall, s.events, s.fct_us.max));
        }
    }
    let (wall, events, _) = best.expect("at least one run");
    let rss = peak_rss()
        .map(|b| format!("{:.1} MB", b as f64 / 1e6))
        .unwrap_or_else(|| "unknown".into());
    println!(
        "bench {} ({}): wall {:.2} s, {} events, {:.2} M events/s, peak RSS {rss}",
        scn.name(),
        args.lb,
        wall,
        events,
        events as f64 / wall / 1e6
    );
    Ok(())
}
