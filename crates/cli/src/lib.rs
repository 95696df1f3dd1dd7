//! The `repsim` command line: clap argument structs for each subcommand, each converted into
//! the plain options of the library that runs it (`repsim_experiment` for run, bench, check,
//! sweep and report; `repsim_figures` for figure and theory). Nothing here runs a simulation.
#![warn(missing_docs)]

pub mod figure;
pub mod limits;
pub mod report;
pub mod run;
pub mod sweep;
pub mod theory;
pub mod values;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Packet-level datacenter network simulator for multipath load balancing (REPS and friends).
#[derive(Parser)]
#[command(name = "repsim", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `repsim`.
#[derive(Subcommand)]
pub enum Command {
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
        /// Also print how the network splits into N partitions for parallel execution
        /// (hosts, switches and ports of each, links that cross, the lookahead).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        partitions: Option<u32>,
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
    Theory(theory::TheoryArgs),
    /// Run an htsim_uec command line as it is (`repsim htsim -tm m.cm -sender_cc_only`; the REPS
    /// artifact's with `--artifact reps`) and print what the reference prints that its
    /// validation reads; `--emit-scenario FILE` writes the TOML.
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

impl Command {
    /// Runs the subcommand through its library.
    pub fn execute(self) -> anyhow::Result<()> {
        match self {
            Command::Run(args) => repsim_experiment::run::run_scenario(&args.into_request())
                .map(drop)
                .map_err(Into::into),
            Command::Bench(args) => repsim_experiment::run::bench(args.into_request()),
            Command::Check {
                scenario,
                set,
                memory,
                partitions,
            } => repsim_experiment::check::check(&scenario, &set, memory, partitions),
            Command::Report(args) => repsim_experiment::report::report(&args.into_request()),
            Command::Sweep(args) => args.execute(),
            Command::Figure(args) => repsim_figures::figure(&args.into_request()),
            Command::Theory(args) => args.execute(),
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
        }
    }
}
