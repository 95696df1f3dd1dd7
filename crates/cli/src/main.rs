//! The `repsim` command-line tool: run scenarios, benchmark the engine, explore the theory.
mod figure;
mod files;
mod limits;
mod output;
#[cfg(feature = "parquet")]
mod parquet_out;
mod plots;
mod prepared;
mod progress;
mod report;
mod run;
mod run_outputs;
mod scale;
mod series;
mod sweep;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Packet-level datacenter network simulator for multipath load balancing (REPS and friends).
#[derive(Parser)]
#[command(name = "repsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario once per load balancer and write flows.csv, summary.json and the resolved
    /// scenario.
    Run(run::RunArgs),
    /// Time a scenario (default: scenarios/permutation-1024.toml with REPS) and report wall time,
    /// events per second and peak memory.
    Bench(run::BenchArgs),
    /// Check a scenario file and print what it would run, without running it.
    Check {
        /// Scenario file.
        scenario: PathBuf,
        /// Override a scenario field (repeatable), as for `repsim run`.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = repsim::scenario::Override::parse)]
        set: Vec<repsim::scenario::Override>,
        /// Also print the memory each large structure takes once set up, and per packet in
        /// flight.
        #[arg(long)]
        memory: bool,
    },
    /// Write a self-contained HTML report (plots, tables, scenario) for a run directory.
    Report(report::ReportArgs),
    /// Run a scenario over the points of a sweep file in parallel (resumable); `merge DIR`
    /// combines a sweep's points into sweep.csv; `--emit slurm` writes a Slurm job array.
    Sweep(sweep::SweepArgs),
    /// Run a paper figure's sweep and draw it (PNG, SVG, CSV, HTML page beside the paper's
    /// numbers); `figure list` shows every figure, `figure all --table FIGURES.md` runs them.
    Figure(figure::FigureArgs),
    /// Balls-into-bins models behind REPS (paper Section 5): CSV plus PNG/SVG plots.
    Theory(theory::cli::TheoryArgs),
}

/// Lets a closed stdout (`repsim check x.toml | head`) end the process quietly, as it does for
/// other command-line tools, instead of panicking in `println!`.
fn exit_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// glibc's heap goes on transparent huge pages only if the process starts with this tunable.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_HEAP_TUNABLE: &str = "glibc.malloc.hugetlb";

/// Restarts the process once with glibc's heap on transparent huge pages. The per-flow
/// transport state and the ports' lane rings come from `malloc` in small pieces on ordinary
/// pages (84 of 179 MB resident were on huge pages a few seconds into the 8,192-host scale run,
/// 164 of 182 MB with the tunable, which took 8-18 % less CPU time; docs/performance.md). glibc
/// reads the tunable only at start-up, hence the restart; results do not change.
/// `REPSIM_HEAP_HUGE_PAGES=0` (or a `GLIBC_TUNABLES` that already names the tunable) keeps the
/// process as it is, and so does any failure to restart.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_on_huge_pages() {
    use std::os::unix::process::CommandExt;
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if tunables.contains(HUGE_HEAP_TUNABLE)
        || std::env::var_os("REPSIM_HEAP_HUGE_PAGES").is_some_and(|v| v == "0")
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    let tunables = if tunables.is_empty() {
        format!("{HUGE_HEAP_TUNABLE}=1")
    } else {
        format!("{tunables}:{HUGE_HEAP_TUNABLE}=1")
    };
    // `exec` returns only if it failed: go on as we are.
    let _failed = std::process::Command::new(exe)
        .arg0(arg0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .exec();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn heap_on_huge_pages() {}

/// Whether this process's heap asked glibc for huge pages, and why (`repsim check --memory`
/// prints it): the tunable's value as the process started.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn heap_huge_pages_state() -> String {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    let value = tunables
        .split(':')
        .find_map(|t| t.strip_prefix(HUGE_HEAP_TUNABLE)?.strip_prefix('='));
    match value {
        Some(v) if v != "0" => format!("on (GLIBC_TUNABLES {HUGE_HEAP_TUNABLE}={v})"),
        Some(_) => format!("off (GLIBC_TUNABLES {HUGE_HEAP_TUNABLE}=0)"),
        None if std::env::var_os("REPSIM_HEAP_HUGE_PAGES").is_some_and(|v| v == "0") => {
            "off (REPSIM_HEAP_HUGE_PAGES=0)".into()
        }
        None => "off (the restart with the tunable failed)".into(),
    }
}

/// Without glibc on Linux the heap stays as the allocator gives it.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn heap_huge_pages_state() -> String {
    "off (needs Linux with glibc)".into()
}

fn main() {
    heap_on_huge_pages();
    exit_quietly_on_closed_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => run::bench(args),
        Command::Check {
            scenario,
            set,
            memory,
        } => run::check(&scenario, &set, memory),
        Command::Report(args) => report::report(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Figure(args) => figure::figure(args),
        Command::Theory(args) => theory::cli::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
