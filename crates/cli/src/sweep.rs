//! The arguments of `repsim sweep` and `repsim sweep merge`.
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use repsim_experiment::sweep::{self, Emit, SweepRequest};

use crate::values::named;

/// Arguments of `repsim sweep`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    /// `merge DIR`: write DIR/sweep.csv from the finished points (after a Slurm array).
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// Sweep file (TOML; see docs/sweeps.md).
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// Output directory (default: the file's `out`, else results/sweeps/<name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Threads (default or 0: every core); with fewer unfinished points than threads, each
    /// point runs its load balancers side by side on its share. With `--point`: that point's
    /// load balancers run at once (default 1).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Run only this point (0-based; what a Slurm array task does); no sweep.csv is written.
    #[arg(long)]
    pub point: Option<usize>,
    /// Threads each simulation runs on (see `repsim run --threads`). `-j` then counts cores:
    /// `-j 16 --threads 4` runs 4 points at once, each simulation on 4 threads, a point's
    /// load balancers one after another.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Instead of running, write a cluster job: `slurm` writes sweep.slurm and manifest.csv.
    #[arg(long, value_parser = named::<Emit>(Emit::NAMES))]
    pub emit: Option<Emit>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// `repsim sweep merge`.
#[derive(Subcommand)]
pub enum SweepAction {
    /// Combine the per-point outputs of a sweep directory into its sweep.csv.
    Merge {
        /// The sweep's output directory.
        dir: PathBuf,
    },
}

impl SweepArgs {
    /// Runs the sweep, or merges a sweep directory.
    pub fn execute(self) -> Result<()> {
        if let Some(SweepAction::Merge { dir }) = &self.action {
            return sweep::merge::merge(dir);
        }
        let file = self.file.context("give a sweep file")?;
        sweep::sweep(&SweepRequest {
            file,
            out: self.out,
            jobs: self.jobs,
            point: self.point,
            threads: self.threads,
            emit: self.emit,
            quiet: self.quiet,
        })
    }
}
