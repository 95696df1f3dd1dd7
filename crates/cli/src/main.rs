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
    /// Run an htsim_uec command line as it is (`repsim htsim -tm m.cm -sender_cc_only`) and print
    /// what the reference prints that its validation reads; `--emit-scenario FILE` writes the TOML.
    Htsim {
        /// The htsim flags.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Run a uet-htsim validation plan and, with `--against`, compare it with the reference's
    /// committed output (exit status 1 when a verdict or number differs).
    ValidatePlan {
        /// The plan (`validate_*.txt`).
        plan: PathBuf,
        /// The reference's output (`validate_outputs/*.out`).
        #[arg(long)]
        against: Option<PathBuf>,
        /// Folder the plan's paths resolve against (default: the plan's, then data/uet-htsim/).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Experiments run at once (0: one per core).
        #[arg(short = 'j', long, default_value_t = 1)]
        jobs: usize,
        /// Only these experiments (positions in the plan, from 1; comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<usize>,
    },
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
        Command::Htsim { args } => repsim_htsim::run::main(&args).map_err(Into::into),
        Command::ValidatePlan {
            plan,
            against,
            root,
            jobs,
            only,
        } => repsim_htsim::validate::main(&repsim_htsim::ValidateOptions {
            plan,
            against,
            root,
            jobs,
            only,
        })
        .map_err(Into::into),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
