//! The `repsim` command-line tool: run scenarios, benchmark the engine, explore the theory.
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use repsim_cli::{figure, heap, report, run, sweep};

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

fn main() {
    heap::heap_on_huge_pages();
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
