//! The arguments of `repsim run` and `repsim bench`.
use std::path::PathBuf;

use clap::Args;
use repsim::scenario::Override;
use repsim_experiment::prepared::CollectMode;
use repsim_experiment::run::{BenchRequest, RunOptions, RunRequest};
use repsim_experiment::series::Format;

use crate::limits::LimitArgs;
use crate::values::named;

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
    /// Time series to collect: `scenario` (its `[collect]` section), `all` (every port, queue
    /// samples and cwnd traces) or `none`.
    #[arg(long, default_value = "scenario", value_parser = named::<CollectMode>(CollectMode::NAMES))]
    pub collect: CollectMode,
    /// Format of the time-series and per-flow tables (`parquet` needs the `parquet` feature).
    #[arg(long, default_value = "csv", value_parser = named::<Format>(Format::NAMES))]
    pub format: Format,
    /// Override a scenario field (repeatable): KEY is a dotted path into the scenario, VALUE
    /// as in TOML or a bare word, e.g. `--set transport.evs_size=32 --set cc=nscc`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// Load balancers simulated at once (default 1: one after another; 0: one per core).
    /// The outputs are the same; each run's `wall_s` is its own, slowed by the others; up to
    /// 2 x N simulations are in memory at once. Trace workloads and `--max-events`,
    /// `--max-wall` and `--max-memory` run one at a time.
    #[arg(long, short = 'j', default_value_t = 1)]
    pub jobs: usize,
    /// Threads each simulation runs on: its network splits into partitions that run side by
    /// side with the same results as one thread (see docs/architecture.md). Above one, the
    /// load balancers run one after another, each on all N threads (`-j` is then unused). A
    /// run whose schemes cannot be split yet is refused. Default: the scenario's `threads`,
    /// else the environment's `REPSIM_THREADS`, else the machine's cores (one with `-j` other
    /// than 1, whose runs share the cores, and for a trace workload written as CSV, whose
    /// finished flows stream out on one thread); with a default, a run that cannot be split
    /// runs on one thread, with a note.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Resource limits and stall detection.
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl RunArgs {
    /// The library's request for these arguments.
    pub fn into_request(self) -> RunRequest {
        RunRequest {
            scenario: self.scenario,
            out: self.out,
            set: self.set,
            json: self.json,
            options: RunOptions {
                lb: self.lb,
                seed: self.seed,
                collect: self.collect,
                format: self.format,
                jobs: self.jobs,
                limits: self.limits.into(),
                quiet: self.quiet,
                header: true,
                progress: true,
                threads: self.threads,
            },
        }
    }
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
    /// Repetitions (the fastest is reported; with `--scale`, of every step); at least 1.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Time series to collect while timing (`none`, `all` or `scenario`).
    #[arg(long, default_value = "none", value_parser = named::<CollectMode>(CollectMode::NAMES))]
    pub collect: CollectMode,
    /// Override a scenario field (repeatable), as for `repsim run`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// Run the scale series instead (2 MB permutations with REPS on 1,024 to 131,072 hosts;
    /// the scenario argument is ignored); see `--max-hosts`, `--min-hosts`, `--csv`.
    #[arg(long)]
    pub scale: bool,
    /// Scale series: largest step to run (hosts).
    #[arg(long, default_value_t = 131_072)]
    pub max_hosts: u32,
    /// Scale series: smallest step to run (hosts).
    #[arg(long, default_value_t = 0)]
    pub min_hosts: u32,
    /// Scale series: CSV file (rewritten after every step).
    #[arg(long, default_value = "results/bench-scale.csv")]
    pub csv: PathBuf,
    /// Scale series: no progress bar while a step runs (it is only drawn on a terminal).
    #[arg(long, short)]
    pub quiet: bool,
    /// Threads one simulation runs on: its network splits into that many partitions (see
    /// docs/architecture.md); a run whose schemes cannot be split yet is refused.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
}

impl BenchArgs {
    /// The library's request for these arguments.
    pub fn into_request(self) -> BenchRequest {
        BenchRequest {
            scenario: self.scenario,
            lb: self.lb,
            repeat: self.repeat,
            collect: self.collect,
            set: self.set,
            scale: self.scale,
            max_hosts: self.max_hosts,
            min_hosts: self.min_hosts,
            csv: self.csv,
            quiet: self.quiet,
            threads: self.threads,
        }
    }
}
