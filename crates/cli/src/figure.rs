//! The arguments of `repsim figure`.
use std::path::PathBuf;

use clap::Args;
use repsim_figures::{FigureRequest, Reuse, Scale};

use crate::values::named;

/// Arguments of `repsim figure`.
#[derive(Args)]
pub struct FigureArgs {
    /// A figure id (`reps-fig4`), `list` (every row and its state) or `all` (every available
    /// figure).
    pub id: String,
    /// `paper` (the paper's scale, the default) or `small` (reduced, under a minute on 2 cores).
    #[arg(long, default_value = "paper", value_parser = named::<Scale>(Scale::NAMES))]
    pub scale: Scale,
    /// Output directory (default: results/figures/<id>/<scale>); for `all`, the parent.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simulations run at once (default or 0: every core); with `--threads`, cores.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Threads each simulation runs on (see `repsim run --threads`); `-j` then counts cores,
    /// `-j / --threads` simulations at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Write our results against the paper's into this Markdown table (`FIGURES.md`): with
    /// `all` the whole table; with one figure its rows, keeping the other figures' rows.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// With `all`: only these figures (comma-separated ids); with `--table`, only their rows
    /// are replaced.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Copy each figure's plots (SVG) into this directory (`docs/figures`), where `--table`
    /// shows them.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Only redraw from finished points: fail, running nothing, where a point has not run
    /// (with this binary's definition of the figure).
    #[arg(long, conflicts_with = "rerun")]
    pub redraw: bool,
    /// Discard earlier results of the figure first (by default finished points are kept and
    /// only the missing ones run, as for a resumed sweep).
    #[arg(long)]
    pub rerun: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

impl FigureArgs {
    /// The library's request for these arguments.
    pub fn into_request(self) -> FigureRequest {
        let reuse = match (self.rerun, self.redraw) {
            (true, _) => Reuse::Rerun,
            (_, true) => Reuse::RedrawOnly,
            _ => Reuse::Resume,
        };
        FigureRequest {
            id: self.id,
            scale: self.scale,
            out: self.out,
            jobs: self.jobs,
            threads: self.threads,
            table: self.table,
            only: self.only,
            plots: self.plots,
            reuse,
            quiet: self.quiet,
        }
    }
}
